//! The µop IR: one vocabulary, defined once, for every tier that runs x86 as
//! µops (the naive lowering, optimizer passes, the reference interpreter, the
//! E1 encoder).
//!
//! A [`Program`] is a list of [`Block`]s (entry = block 0); a block is a list of
//! [`Op`]s and one [`Term`]inator. Values live in virtual registers ([`VReg`]);
//! under the resident register model the machine model's guest registers are
//! the first vregs (EAX..EDI = v0..v7, then whatever the model needs), and
//! temporaries sit above them. Every vreg holds 32 bits; an operand names a
//! [`Lane`] of it (all 32 bits, the low 16, the low 8, or bits 8..15 as AH does)
//! so narrow reads and merge-writes are part of the operand, not extra µops.
//!
//! Flags are the lab's one lazy-flag record ([`crate::flags::LazyFlags`]); the
//! guest clock is billed by explicit [`Op::ClockCheck`]/[`Op::Clock`] ops and
//! given back (`unbill`) by exits that leave in the middle of a billed block.
//!
//! This module owns the types and their meaning in words. The executable
//! definition of each µop is [`crate::refinterp`]; [`verify`] rejects malformed
//! programs; [`print`] and [`parse`] are the textual form. It must not know
//! about x86 decoding, machines' devices or E1's encoding.

#![forbid(unsafe_code)]

pub mod parse;
pub mod print;
pub mod sem;
pub mod strsem;
pub mod verify;

pub use crate::flags::{FlagKind, Width};

/// Number of vreg names a program may use (v0..v254). v255 is reserved by the
/// engines as a write sink for results nobody reads.
pub const VREG_NAMES: u16 = 255;

/// A virtual register: 32 bits of state. Below the program's `guest` count it is
/// a guest register (resident for the whole engine call); above, a temporary
/// that is dead at every exit (engines share temporaries between programs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VReg(pub u16);

/// Which bits of a vreg an operand reads or writes.
///
/// A read yields the lane's bits zero-extended. A write of a `D` lane replaces
/// all 32 bits; a write of `W`, `B` or `H` merges into those bits and keeps the
/// rest, as x86 writes AX, AL or AH inside EAX.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lane {
    /// All 32 bits.
    D,
    /// Bits 0..15.
    W,
    /// Bits 0..7.
    B,
    /// Bits 8..15 (AH, CH, DH, BH).
    H,
}

impl Lane {
    /// The low lane of width `w` (`.b`, `.w`, D).
    #[inline(always)]
    pub const fn for_width(w: Width) -> Lane {
        match w {
            Width::W8 => Lane::B,
            Width::W16 => Lane::W,
            Width::W32 => Lane::D,
        }
    }
    /// Position of the lane's lowest bit.
    #[inline(always)]
    pub const fn shift(self) -> u32 {
        match self {
            Lane::H => 8,
            _ => 0,
        }
    }
    /// Mask of the lane's value (after shifting down).
    #[inline(always)]
    pub const fn mask(self) -> u32 {
        match self {
            Lane::D => 0xFFFF_FFFF,
            Lane::W => 0xFFFF,
            Lane::B | Lane::H => 0xFF,
        }
    }
    /// Width of the lane.
    pub const fn width(self) -> Width {
        match self {
            Lane::D => Width::W32,
            Lane::W => Width::W16,
            Lane::B | Lane::H => Width::W8,
        }
    }
    /// Numbering used by encoders (D=0, W=1, B=2, H=3).
    pub const fn index(self) -> u32 {
        self as u32
    }
    /// Reads this lane of a 32-bit value, zero-extended.
    #[inline(always)]
    pub const fn read(self, v: u32) -> u32 {
        (v >> self.shift()) & self.mask()
    }
    /// Merges `x` into this lane of `old` (a `D` lane replaces `old`).
    #[inline(always)]
    pub const fn merge(self, old: u32, x: u32) -> u32 {
        let m = self.mask() << self.shift();
        (old & !m) | ((x << self.shift()) & m)
    }
}

/// A lane of a vreg: the unit every operand names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reg {
    pub v: VReg,
    pub lane: Lane,
}

impl Reg {
    pub const fn d(v: u16) -> Reg {
        Reg {
            v: VReg(v),
            lane: Lane::D,
        }
    }
    pub const fn w(v: u16) -> Reg {
        Reg {
            v: VReg(v),
            lane: Lane::W,
        }
    }
    pub const fn b(v: u16) -> Reg {
        Reg {
            v: VReg(v),
            lane: Lane::B,
        }
    }
    pub const fn h(v: u16) -> Reg {
        Reg {
            v: VReg(v),
            lane: Lane::H,
        }
    }
}

/// A source operand: a lane of a vreg, or a 32-bit constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Src {
    Reg(Reg),
    Imm(u32),
}

impl From<Reg> for Src {
    fn from(r: Reg) -> Src {
        Src::Reg(r)
    }
}

/// Where a program stands in guest terms when something leaves through this
/// point: the guest instruction pointer to report, and how many dispatches the
/// current block billed ahead that have not happened (given back on exit, and
/// subtracted from the clock to form the exact dispatch a device sees).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Site {
    pub ip: u32,
    pub unbill: u32,
}

impl Site {
    pub const fn new(ip: u32, unbill: u32) -> Site {
        Site { ip, unbill }
    }
}

/// Address size of an effective-address computation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddrSize {
    /// The offset wraps at 64 KiB (16-bit addressing).
    A16,
    /// 32-bit offsets.
    A32,
}

impl AddrSize {
    pub const fn mask(self) -> u32 {
        match self {
            AddrSize::A16 => 0xFFFF,
            AddrSize::A32 => 0xFFFF_FFFF,
        }
    }
}

/// A guest memory operand: `seg + ((base + (index << scale) + disp) & asize)`.
///
/// The offset is checked against `limit`: an access whose last byte lies past
/// it does not happen, and the program exits at the op's site so that a finer
/// tier runs the instruction and raises the architectural fault. The sum of
/// segment base and offset is a linear address handed to the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Addr {
    /// Vreg holding the segment base (`None`: base 0, the flat model).
    pub seg: Option<VReg>,
    pub base: Option<VReg>,
    pub index: Option<VReg>,
    /// Shift applied to the index (0..=3).
    pub scale: u8,
    pub disp: u32,
    pub asize: AddrSize,
    /// Highest valid offset of the segment.
    pub limit: u32,
}

/// How an engine should reach memory for an access. Both paths have the same
/// meaning; the hint only says which one to try first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemPath {
    /// Try the machine's plain-RAM page view first, then the checked path.
    Fast,
    /// Go straight to the machine's checked access (device memory expected).
    Checked,
}

/// Pure arithmetic at a width: no flags. The result is masked to the width.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AluOp {
    Add,
    Sub,
    And,
    Or,
    Xor,
    /// Shifts take the count from `b & 31` and shift the width-masked value.
    Shl,
    Shr,
    /// Arithmetic right shift of the value sign-extended from the width.
    Sar,
    /// Low bits of the product.
    Mul,
}

/// x86 arithmetic that writes the lazy-flag record, exactly as the
/// architecture (and [`crate::alu`]) defines it. `Adc`/`Sbb` read CF first.
/// `Inc`/`Dec`/`Neg` ignore `b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArithOp {
    Add,
    Adc,
    Sub,
    Sbb,
    And,
    Or,
    Xor,
    Inc,
    Dec,
    Neg,
}

/// x86 shifts and rotates with their flag semantics (count masked to 5 bits;
/// a zero count changes nothing; RCL/RCR rotate through CF).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShiftOp {
    Rol,
    Ror,
    Rcl,
    Rcr,
    Shl,
    Shr,
    Sar,
}

/// Comparison of two values at a width, for compare-and-branch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    Ne,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Lts,
    Les,
    Gts,
    Ges,
}

/// The string instruction a [`Term::Rep`] repeats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StrOp {
    /// `[dst] <- [src]`: probes the destination, loads, stores.
    Movs,
    /// `[dst] <- acc`.
    Stos,
    /// `acc <- [src]`.
    Lods,
    /// Flags of `[src] - [dst]`: probes the destination, loads both.
    Cmps,
    /// Flags of `acc - [dst]`.
    Scas,
}

impl StrOp {
    pub const ALL: [StrOp; 5] = [
        StrOp::Movs,
        StrOp::Stos,
        StrOp::Lods,
        StrOp::Cmps,
        StrOp::Scas,
    ];
    /// The text form's name.
    pub const fn name(self) -> &'static str {
        match self {
            StrOp::Movs => "movs",
            StrOp::Stos => "stos",
            StrOp::Lods => "lods",
            StrOp::Cmps => "cmps",
            StrOp::Scas => "scas",
        }
    }
    /// Reads the source operand (`[src]`).
    pub const fn reads_src(self) -> bool {
        matches!(self, StrOp::Movs | StrOp::Lods | StrOp::Cmps)
    }
    /// Touches the destination operand (`[dst]`).
    pub const fn uses_dst(self) -> bool {
        !matches!(self, StrOp::Lods)
    }
    /// Compares (writes the flag record; REPE/REPNE apply).
    pub const fn compares(self) -> bool {
        matches!(self, StrOp::Cmps | StrOp::Scas)
    }
}

/// When a [`Term::Rep`] loop goes on after an element whose count did not
/// reach zero: always (REP), while ZF (REPE), while not ZF (REPNE).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RepCond {
    Rep,
    Repe,
    Repne,
}

impl RepCond {
    pub const ALL: [RepCond; 3] = [RepCond::Rep, RepCond::Repe, RepCond::Repne];
    pub const fn name(self) -> &'static str {
        match self {
            RepCond::Rep => "rep",
            RepCond::Repe => "repe",
            RepCond::Repne => "repne",
        }
    }
}

/// Out-of-line semantics reached through [`Op::Call`]: pure functions of their
/// arguments and the flag record, which may refuse (divide error), in which
/// case the program exits at the call's site and a finer tier raises the fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Helper {
    /// (al, src) -> (ax): MUL r/m8.
    Mul8,
    /// (ax, src) -> (ax, dx): MUL r/m16.
    Mul16,
    /// (eax, src) -> (eax, edx): MUL r/m32.
    Mul32,
    /// (al, src) -> (ax): IMUL r/m8.
    Imul8,
    /// (ax, src) -> (ax, dx): IMUL r/m16.
    Imul16,
    /// (eax, src) -> (eax, edx): IMUL r/m32.
    Imul32,
    /// (a, b) -> (low 16 of a*b): IMUL r16, r/m16[, imm] with CF=OF=overflow.
    ImulTrunc16,
    /// (a, b) -> (low 32 of a*b): IMUL r32, r/m32[, imm].
    ImulTrunc32,
    /// (ax, src) -> (al quotient, ah remainder): DIV r/m8.
    Div8,
    /// (dx, ax, src) -> (ax, dx): DIV r/m16.
    Div16,
    /// (edx, eax, src) -> (eax, edx): DIV r/m32.
    Div32,
    /// IDIV counterparts.
    Idiv8,
    Idiv16,
    Idiv32,
    /// (a, b, count) -> (r): SHLD / SHRD (count masked to 5 bits; 0 changes
    /// nothing), flags as `alu::shld` / `alu::shrd`.
    Shld16,
    Shld32,
    Shrd16,
    Shrd32,
    /// (v, bit, op) -> (r): BT (op 0) BTS (1) BTR (2) BTC (3) on `v` at `bit`
    /// modulo the width; only CF changes.
    Bt16,
    Bt32,
    /// (al) -> (al): DAA / DAS (read CF and AF).
    Daa,
    Das,
    /// (ax) -> (ax): AAA / AAS (read AF).
    Aaa,
    Aas,
    /// (al, base) -> (ax): AAM (base 0 refuses: #DE).
    Aam,
    /// (ax, base) -> (ax): AAD.
    Aad,
}

impl Helper {
    /// Every helper, in encoding order.
    pub const ALL: [Helper; 26] = [
        Helper::Mul8,
        Helper::Mul16,
        Helper::Mul32,
        Helper::Imul8,
        Helper::Imul16,
        Helper::Imul32,
        Helper::ImulTrunc16,
        Helper::ImulTrunc32,
        Helper::Div8,
        Helper::Div16,
        Helper::Div32,
        Helper::Idiv8,
        Helper::Idiv16,
        Helper::Idiv32,
        Helper::Shld16,
        Helper::Shld32,
        Helper::Shrd16,
        Helper::Shrd32,
        Helper::Bt16,
        Helper::Bt32,
        Helper::Daa,
        Helper::Das,
        Helper::Aaa,
        Helper::Aas,
        Helper::Aam,
        Helper::Aad,
    ];
    /// Number of arguments and results it uses.
    pub const fn arity(self) -> (usize, usize) {
        match self {
            Helper::Mul8 | Helper::Imul8 | Helper::ImulTrunc16 | Helper::ImulTrunc32 => (2, 1),
            Helper::Mul16 | Helper::Mul32 | Helper::Imul16 | Helper::Imul32 => (2, 2),
            Helper::Div8 | Helper::Idiv8 => (2, 2),
            Helper::Div16 | Helper::Div32 | Helper::Idiv16 | Helper::Idiv32 => (3, 2),
            Helper::Shld16
            | Helper::Shld32
            | Helper::Shrd16
            | Helper::Shrd32
            | Helper::Bt16
            | Helper::Bt32 => (3, 1),
            Helper::Daa | Helper::Das | Helper::Aaa | Helper::Aas => (1, 1),
            Helper::Aam | Helper::Aad => (2, 1),
        }
    }
}

/// The encoding of one x87 instruction (an escape opcode D8-DF with its
/// prefixes and operand bytes), which the machine's FPU decodes and runs
/// ([`Op::X87`]). At most 15 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct X87Insn {
    len: u8,
    bytes: [u8; 15],
}

impl X87Insn {
    /// `None` when `b` is empty or longer than 15 bytes.
    pub fn new(b: &[u8]) -> Option<X87Insn> {
        if b.is_empty() || b.len() > 15 {
            return None;
        }
        let mut bytes = [0u8; 15];
        bytes[..b.len()].copy_from_slice(b);
        Some(X87Insn {
            len: b.len() as u8,
            bytes,
        })
    }
    /// The instruction's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

/// How a program ends when it ends by itself (engines add their own reasons).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExitKind {
    /// Let a finer tier (L1) run exactly the instruction at the site.
    Fallback,
    /// Return to the driver with the guest at the site (nothing owed).
    Stop,
    /// An STI just opened the interrupt shadow: a finer tier runs exactly
    /// the instruction at the site with no interrupt before it, then the
    /// driver looks (`ExitReason::Shadow`).
    Shadow,
}

/// One µop. Widths are explicit; operands name lanes (see [`Lane`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `dst ← src`: the source lane zero-extended, written through `dst`'s lane.
    /// Covers register copies, constants, zero extension and AH-style moves.
    Mov { dst: Reg, src: Src },
    /// `dst ← sign_extend(src, from)`, written through `dst`'s lane.
    Sext { dst: Reg, src: Reg, from: Width },
    /// Pure arithmetic at width `w`, no flags.
    Alu {
        op: AluOp,
        w: Width,
        dst: Reg,
        a: Src,
        b: Src,
    },
    /// x86 arithmetic at width `w` writing the whole flag record in one µop
    /// (the fused form). `dst: None` is CMP (Sub) or TEST (And).
    Arith {
        op: ArithOp,
        w: Width,
        dst: Option<Reg>,
        a: Src,
        b: Src,
    },
    /// x86 shift or rotate of `a` by `count`, flags included.
    Shift {
        op: ShiftOp,
        w: Width,
        dst: Reg,
        a: Src,
        count: Src,
    },
    /// Writes a whole `(kind, a, b, r)` record (values already masked).
    FlagsRec {
        kind: FlagKind,
        a: Src,
        b: Src,
        r: Src,
    },
    /// `dst ← FLAGS` (every bit, as PUSHF sees it).
    FlagsGet { dst: Reg },
    /// Replaces the FLAGS bits in `mask` with `src`'s, keeps the rest.
    FlagsSet { src: Src, mask: u32 },
    /// `dst ← 1` if x86 condition `cc` (0..15) holds, else 0.
    GetCond { dst: Reg, cc: u8 },
    /// `dst ← DF ? -n : n` (32 bits, through `dst`'s lane): the step of a
    /// string instruction over `n`-byte elements. The lowering spells it
    /// as four ops from `flags.get`; `fuse` folds those into this one.
    StrStep { dst: Reg, n: u32 },
    /// Load of width `w` into `dst`'s lane (zero-extended for a `D` lane).
    Load {
        w: Width,
        dst: Reg,
        addr: Addr,
        path: MemPath,
        site: Site,
    },
    /// Store of width `w`. If it lands on code the store happens and a stop is
    /// owed at the next instruction boundary: at `after` at once when the
    /// store is its instruction's last effect, else at an [`Op::ExitIfPending`]
    /// or the terminator.
    Store {
        w: Width,
        src: Src,
        addr: Addr,
        path: MemPath,
        site: Site,
        after: Option<Site>,
    },
    /// Port read (the device sees the site's exact dispatch).
    In {
        w: Width,
        dst: Reg,
        port: Src,
        site: Site,
    },
    /// Port write; the device may ask for a stop after the instruction.
    Out {
        w: Width,
        port: Src,
        val: Src,
        site: Site,
        after: Option<Site>,
    },
    /// A machine service (e.g. a host call) with access to the guest registers
    /// and flags.
    Service {
        id: u16,
        site: Site,
        after: Option<Site>,
    },
    /// An out-of-line helper; unused results are `None`, unused args ignored.
    Call {
        helper: Helper,
        outs: [Option<Reg>; 2],
        args: [Src; 3],
        site: Site,
    },
    /// Add `n` dispatches to the guest clock; `n` is read as a signed
    /// 32-bit count, so a negative one gives dispatches back (what a path
    /// billed ahead by `clock.check` does not run: `opt::clock`).
    Clock { n: u32 },
    /// If a stop is owed (a store into code, a device request), exit with it
    /// at `site`: a block head is an instruction boundary. Else, if fewer
    /// than `n` dispatches remain in the budget, exit (budget) at `site`
    /// before anything of this block happened; else bill `n`.
    ClockCheck { n: u32, site: Site },
    /// Bump this program's entry counter (tier-up).
    Count,
    /// If a stop is owed (store into code, device request), exit at `site`.
    ExitIfPending { site: Site },
    /// Owe a stop (as a device request does) when `src` is nonzero and the
    /// machine says the stop is needed
    /// ([`crate::machine::MachineRuntime::stop_if_needed`]; an engine may
    /// also owe it without asking: a stop is always exact); it is
    /// reported at the next instruction boundary (`exit.pending`,
    /// `clock.check`, a link or lookup exit). POPF and IRET use it when IF
    /// goes from 0 to 1 or TF is set, so the driver looks before the next
    /// instruction.
    StopIf { src: Src },
    /// Segment-limit probe: exit at `site` if an access of width `w` at
    /// `addr` would fault; no access happens. Lets an instruction with two
    /// memory operands (MOVS) check its store before its load has an effect.
    Check { w: Width, addr: Addr, site: Site },
    /// One x87 instruction, run by the machine's FPU without leaving the
    /// engine (`MachineRuntime::x87`). The memory operand's offset is
    /// computed as a load's (`(base + index << scale + disp) & asize`, no
    /// limit test here: the machine checks every byte the instruction
    /// touches against `mem.limit`). `cs` and `ds` are the selectors the FPU
    /// records as its instruction and data pointers (with `site.ip`);
    /// `dst` takes the instruction's 16-bit register result (FNSTSW AX)
    /// when the machine gives one. The machine refuses (the program exits
    /// at `site`, nothing happened) whatever it cannot run exactly: a fault,
    /// an FPU state that forbids it. A store into code owes a stop at
    /// `after` (as a store's).
    X87 {
        insn: X87Insn,
        mem: Option<Addr>,
        cs: Src,
        ds: Src,
        dst: Option<Reg>,
        site: Site,
        after: Option<Site>,
    },
}

/// Index of a block within its program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockId(pub u32);

/// How a block ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Term {
    Jmp(BlockId),
    /// Branch on x86 condition `cc` of the flag record.
    BrCc {
        cc: u8,
        t: BlockId,
        f: BlockId,
    },
    /// Compare-and-branch on values, flags untouched (LOOP, JCXZ, REP).
    BrCmp {
        op: CmpOp,
        w: Width,
        a: Src,
        b: Src,
        t: BlockId,
        f: BlockId,
    },
    /// x86 arithmetic as [`Op::Arith`] (the flag record written, `dst`
    /// written when given) and a branch on x86 condition `cc` of the record
    /// it just wrote: CMP / TEST / SUB / DEC / INC followed by Jcc in one
    /// µop (flag forwarding, `opt::flagfwd`). `dst` is a guest register or
    /// none, never a temporary (so liveness of temporaries never looks at
    /// a terminator's writes).
    BrArith {
        op: ArithOp,
        w: Width,
        dst: Option<Reg>,
        a: Src,
        b: Src,
        cc: u8,
        t: BlockId,
        f: BlockId,
    },
    /// One element of a REP string instruction: the whole of one dispatch
    /// (ARCHITECTURE.md invariant 1: each element costs one, a zero count
    /// costs one). In order: a stop owed exits (owed) at `site`; no
    /// dispatch left exits (budget) at `site`; a zero `count` bills one
    /// and goes to `f`. Otherwise the element's accesses (MOVS and CMPS
    /// probe the destination first; an access past its limit or refused
    /// exits fallback at `site` with no effect of its own, nothing billed),
    /// with the accumulator `v0` in the lane of `w`; then the index
    /// registers (`src.base`, `dst.base`) step by `DF ? -w : w` bytes,
    /// wrapping at the address size (A16: the low 16 bits change, bits
    /// 16..31 are kept; A32: all 32), `count` (its lane: CX `.w` or ECX)
    /// drops by one, one dispatch is billed, and the loop goes on to `t`
    /// when the count is not zero and `cond` holds on the record a compare
    /// just wrote, else to `f`. A store into code owes a stop, taken at the
    /// next element or instruction boundary. `site` has unbill 0 (nothing
    /// is billed ahead in the term's block); `src` and `dst` are plain
    /// `[seg: base]` operands of one address size.
    Rep {
        op: StrOp,
        w: Width,
        cond: RepCond,
        src: Addr,
        dst: Addr,
        count: Reg,
        site: Site,
        t: BlockId,
        f: BlockId,
    },
    /// Leave the program.
    Exit {
        kind: ExitKind,
        site: Site,
    },
    /// Static exit to the program whose key is `key`; engines may continue
    /// there directly when nothing is owed.
    Link {
        key: u64,
        site: Site,
    },
    /// Computed exit: the target key is `code_key(base, ip)`; engines look it
    /// up without leaving when they can. The exit reports `ip` as the guest IP.
    Indirect {
        ip: Src,
        base: Src,
        site: Site,
    },
}

/// The program key of guest code at `ip` with code-segment base `base`
/// (the flat model passes base 0). One formula for links and lookups.
#[inline(always)]
pub const fn code_key(base: u32, ip: u32) -> u64 {
    ((base as u64) << 32) | ip as u64
}

/// A basic block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    pub ops: Vec<Op>,
    pub term: Term,
}

/// A µop program: blocks, entry = block 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// Name of the machine model it was lowered for (register names, repro files).
    pub model: String,
    /// Its key (see [`code_key`]).
    pub key: u64,
    /// Number of guest vregs; temporaries are `guest..VREG_NAMES`.
    pub guest: u16,
    /// Guest linear byte ranges `[lo, hi)` whose bytes it was built from; a
    /// store into them invalidates it.
    pub code: Vec<(u32, u32)>,
    pub blocks: Vec<Block>,
}

impl Op {
    /// The site this op exits at, if it can exit.
    pub fn site(&self) -> Option<Site> {
        match *self {
            Op::Load { site, .. }
            | Op::Store { site, .. }
            | Op::In { site, .. }
            | Op::Out { site, .. }
            | Op::Service { site, .. }
            | Op::Call { site, .. }
            | Op::ClockCheck { site, .. }
            | Op::ExitIfPending { site }
            | Op::Check { site, .. }
            | Op::X87 { site, .. } => Some(site),
            _ => None,
        }
    }

    /// Calls `f` on every source operand.
    pub fn for_each_src(&self, mut f: impl FnMut(Src)) {
        let addr = |a: &Addr, f: &mut dyn FnMut(Src)| {
            for v in [a.seg, a.base, a.index].into_iter().flatten() {
                f(Src::Reg(Reg { v, lane: Lane::D }));
            }
        };
        match self {
            Op::Mov { src, .. } => f(*src),
            Op::Sext { src, .. } => f(Src::Reg(*src)),
            Op::Alu { a, b, .. } | Op::Arith { a, b, .. } => {
                f(*a);
                f(*b)
            }
            Op::Shift { a, count, .. } => {
                f(*a);
                f(*count)
            }
            Op::FlagsRec { a, b, r, .. } => {
                f(*a);
                f(*b);
                f(*r)
            }
            Op::FlagsSet { src, .. } | Op::StopIf { src } => f(*src),
            Op::Load { addr: ad, .. } | Op::Check { addr: ad, .. } => addr(ad, &mut f),
            Op::Store { src, addr: ad, .. } => {
                f(*src);
                addr(ad, &mut f)
            }
            Op::In { port, .. } => f(*port),
            Op::Out { port, val, .. } => {
                f(*port);
                f(*val)
            }
            Op::Call { helper, args, .. } => {
                for a in &args[..helper.arity().0] {
                    f(*a)
                }
            }
            Op::X87 { mem, cs, ds, .. } => {
                if let Some(ad) = mem {
                    addr(ad, &mut f);
                }
                f(*cs);
                f(*ds)
            }
            Op::FlagsGet { .. }
            | Op::GetCond { .. }
            | Op::StrStep { .. }
            | Op::Service { .. }
            | Op::Clock { .. }
            | Op::ClockCheck { .. }
            | Op::Count
            | Op::ExitIfPending { .. } => {}
        }
    }

    /// Calls `f` on every destination.
    pub fn for_each_dst(&self, mut f: impl FnMut(Reg)) {
        match self {
            Op::Mov { dst, .. }
            | Op::Sext { dst, .. }
            | Op::Alu { dst, .. }
            | Op::Shift { dst, .. }
            | Op::FlagsGet { dst }
            | Op::GetCond { dst, .. }
            | Op::StrStep { dst, .. }
            | Op::Load { dst, .. }
            | Op::In { dst, .. } => f(*dst),
            Op::Arith { dst: Some(d), .. } | Op::X87 { dst: Some(d), .. } => f(*d),
            Op::Call { helper, outs, .. } => {
                for o in outs[..helper.arity().1].iter().flatten() {
                    f(*o)
                }
            }
            _ => {}
        }
    }
}

impl Term {
    /// Successor blocks inside the program.
    pub fn succs(&self) -> impl Iterator<Item = BlockId> {
        let (a, b) = match *self {
            Term::Jmp(t) => (Some(t), None),
            Term::BrCc { t, f, .. }
            | Term::BrCmp { t, f, .. }
            | Term::BrArith { t, f, .. }
            | Term::Rep { t, f, .. } => (Some(t), Some(f)),
            _ => (None, None),
        };
        a.into_iter().chain(b)
    }

    /// The same terminator with every successor block mapped through `g`.
    pub fn map_targets(self, mut g: impl FnMut(BlockId) -> BlockId) -> Term {
        let mut t = self;
        match &mut t {
            Term::Jmp(x) => *x = g(*x),
            Term::BrCc { t, f, .. }
            | Term::BrCmp { t, f, .. }
            | Term::BrArith { t, f, .. }
            | Term::Rep { t, f, .. } => {
                *t = g(*t);
                *f = g(*f);
            }
            Term::Exit { .. } | Term::Link { .. } | Term::Indirect { .. } => {}
        }
        t
    }

    /// The accumulator of a [`Term::Rep`] of width `w` (`v0`'s lane).
    pub const fn rep_acc(w: Width) -> Reg {
        Reg {
            v: VReg(0),
            lane: Lane::for_width(w),
        }
    }

    /// The guest registers a [`Term::Rep`] reads and writes (accumulator,
    /// index registers, count; flags aside); empty for every other term.
    pub fn rep_regs(&self) -> Vec<VReg> {
        match *self {
            Term::Rep {
                src, dst, count, ..
            } => [Some(VReg(0)), src.base, dst.base, Some(count.v)]
                .into_iter()
                .flatten()
                .chain(src.seg)
                .chain(dst.seg)
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Calls `f` on every source operand.
    pub fn for_each_src(&self, mut f: impl FnMut(Src)) {
        match self {
            Term::BrCmp { a, b, .. } | Term::BrArith { a, b, .. } => {
                f(*a);
                f(*b)
            }
            Term::Indirect { ip, base, .. } => {
                f(*ip);
                f(*base)
            }
            Term::Rep { .. } => {
                for v in self.rep_regs() {
                    f(Src::Reg(Reg::d(v.0)))
                }
            }
            _ => {}
        }
    }
}

impl Program {
    /// Number of µops, counting each terminator as one.
    pub fn uop_count(&self) -> usize {
        self.blocks.iter().map(|b| b.ops.len() + 1).sum()
    }
}
