//! The E1 engine: ONE fixed function that runs encoded programs.
//!
//! Why one function, on purpose: a µop transition must cost a handful of host
//! instructions (the seed measured ~11 for E1 against ~33 for a threaded
//! handler). In one loop over one `match`, the compiler turns the match into
//! a single jump table and keeps the loop-carried state (pc, budget left,
//! the flag record, the pending stop) in registers across every arm; nothing
//! is saved or restored per µop. Splitting arms into functions (threaded
//! style) would pay a call, a return and a state spill per transition, and a
//! per-program function would be runtime code generation, which the lab
//! forbids. The same shape compiles to one wasm function with one `br_table`.
//!
//! The fast path makes no host calls: operands are word indices resolved by
//! the encoder, memory goes through the machine's page view inline, and only
//! the explicit service ops (checked memory, ports, services, helpers, x87
//! instructions) call out, through out-of-line functions so the hot arms
//! stay small.
//!
//! Every index into the word memory is masked ([`MEM_MASK`]; destinations
//! with [`VREG_MASK`]), so safe Rust needs no bounds checks and no word
//! content can make the engine panic or write outside the vreg file.
//!
//! It must not allocate, chain through the driver, or know about IR types
//! beyond the value semantics in [`crate::ir::sem`].

use super::arena::{E1Arena, LinkSlot, ProgId, LOOKUP_ENTRIES};
use super::{op, MEM_ALLOC, MEM_MASK, VREG_MASK};
use crate::exit::{Exit, ExitReason};
use crate::flags::{FlagKind, LazyFlags, Width};
use crate::ir::strsem::{self, ElemMem, ElemOpnd};
use crate::ir::{code_key, sem, AddrSize, ArithOp, Helper, RepCond, ShiftOp, StrOp};
use crate::machine::{
    MachineRuntime, Refused, ServiceCtx, ServiceOutcome, StoreOutcome, X87Call, X87Done, X87Mem,
};

/// The engine's view of guest state besides the vregs (which live in the
/// arena's vreg file for the whole call: the resident register model).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct E1State {
    pub flags: LazyFlags,
    /// The guest clock in dispatches.
    pub clock: u64,
}

/// An exit from [`run`]: the common exit, plus the link word to patch when a
/// static exit was not linked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct E1Exit {
    pub exit: Exit,
    pub link: Option<LinkSlot>,
}

const KEEP: [u32; 4] = [0, 0xFFFF_0000, 0xFFFF_FF00, 0xFFFF_00FF];
const LMASK: [u32; 4] = [0xFFFF_FFFF, 0xFFFF, 0xFF, 0xFF];
const LSHIFT: [u32; 4] = [0, 0, 0, 8];

/// ArithOp by its discriminant (the encoder's `kind / 3`).
const ARITH_OPS: [ArithOp; 10] = [
    ArithOp::Add,
    ArithOp::Adc,
    ArithOp::Sub,
    ArithOp::Sbb,
    ArithOp::And,
    ArithOp::Or,
    ArithOp::Xor,
    ArithOp::Inc,
    ArithOp::Dec,
    ArithOp::Neg,
];

const SHIFT_OPS: [ShiftOp; 7] = [
    ShiftOp::Rol,
    ShiftOp::Ror,
    ShiftOp::Rcl,
    ShiftOp::Rcr,
    ShiftOp::Shl,
    ShiftOp::Shr,
    ShiftOp::Sar,
];

#[inline(always)]
const fn width_of(i: u32) -> Width {
    match i {
        0 => Width::W8,
        1 => Width::W16,
        _ => Width::W32,
    }
}

/// Hash of a program key into the arena's indirect lookup table.
#[inline(always)]
pub(crate) fn key_hash(key: u64) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as usize
}

#[cold]
#[inline(never)]
fn slow_read<M: MachineRuntime>(m: &mut M, lin: u32, w: Width, now: u64) -> Result<u32, Refused> {
    m.read(lin, w, now).map(|v| v & w.mask())
}

#[cold]
#[inline(never)]
fn slow_write<M: MachineRuntime>(m: &mut M, lin: u32, w: Width, v: u32, now: u64) -> StoreOutcome {
    m.write(lin, w, v, now)
}

#[inline(never)]
fn x87_call<M: MachineRuntime>(m: &mut M, c: X87Call<'_>, now: u64) -> Result<X87Done, Refused> {
    m.x87(c, now)
}

#[cold]
#[inline(never)]
fn shift_slow(kind: u32, a: u32, c: u32, fl: &mut LazyFlags) -> u32 {
    let op = SHIFT_OPS[(kind / 3) as usize % 7];
    sem::shift(op, width_of(kind % 3), a, c, fl)
}

/// Reads operand word `o` through its lane (zero-extended).
#[inline(always)]
fn lane_read(mem: &[u32; MEM_ALLOC], o: u32) -> u32 {
    let l = ((o >> 24) & 3) as usize;
    (mem[(o as usize) & MEM_MASK] >> LSHIFT[l]) & LMASK[l]
}

/// Writes `v` through destination operand word `o`'s lane.
#[inline(always)]
fn lane_write(mem: &mut [u32; MEM_ALLOC], o: u32, v: u32) {
    let l = ((o >> 24) & 3) as usize;
    let d = (o as usize) & VREG_MASK;
    mem[d] = (mem[d] & KEEP[l]) | ((v & LMASK[l]) << LSHIFT[l]);
}

/// The machine as a REP element sees it: the page view first, then the
/// checked path at dispatch `now` (the LD / ST ops' order).
struct PagedMem<'a, M> {
    m: &'a mut M,
    now: u64,
}

impl<M: MachineRuntime> ElemMem for PagedMem<'_, M> {
    fn read(&mut self, lin: u32, w: Width) -> Option<u32> {
        match self.m.fast_mem().read(lin, w, M::PAGE_SHIFT) {
            Some(v) => Some(v),
            None => slow_read(self.m, lin, w, self.now).ok(),
        }
    }
    fn write(&mut self, lin: u32, w: Width, v: u32) -> Option<bool> {
        if self.m.fast_mem().write(lin, w, v, M::PAGE_SHIFT) {
            return Some(false);
        }
        match slow_write(self.m, lin, w, v, self.now) {
            StoreOutcome::Done => Some(false),
            StoreOutcome::HitCode => Some(true),
            StoreOutcome::Refused => None,
        }
    }
}

/// The REP op at `pc` with a nonzero count: the element (`strsem`), the
/// index steps, the count. `Some((hit_code, again))`, or `None` when the
/// element refused (nothing written). Out of line: the engine's hot arms
/// stay small.
#[inline(never)]
fn rep_element<M: MachineRuntime>(
    m: &mut M,
    mem: &mut [u32; MEM_ALLOC],
    fl: &mut LazyFlags,
    pc: usize,
    now: u64,
) -> Option<(bool, bool)> {
    let word = |k: usize| mem[(pc + k) & MEM_MASK];
    let kind = word(1);
    let op = StrOp::ALL[((kind & 15) / 3) as usize % 5];
    let w = width_of((kind & 15) % 3);
    let cond = RepCond::ALL[((kind >> 4) & 3) as usize % 3];
    let asize = if kind & 64 != 0 {
        AddrSize::A32
    } else {
        AddrSize::A16
    };
    let (acc_o, sbase_o, dbase_o, count_o) = (word(2), word(4), word(7), word(9));
    let opnd = |k: usize| ElemOpnd {
        base: mem[(word(k) as usize) & MEM_MASK],
        off: mem[(word(k + 1) as usize) & MEM_MASK] & asize.mask(),
        limit: word(k + 2),
    };
    let (src, dst) = (opnd(3), opnd(6));
    let acc = lane_read(mem, acc_o);
    let mut pm = PagedMem { m, now };
    let done = strsem::element(op, w, src, dst, acc, fl, &mut pm).ok()?;
    if let Some(v) = done.acc {
        lane_write(mem, acc_o, v);
    }
    let df = fl.df();
    for (o, on) in [(sbase_o, op.reads_src()), (dbase_o, op.uses_dst())] {
        if on {
            let r = (o as usize) & VREG_MASK;
            mem[r] = strsem::step_index(mem[r], w, df, asize);
        }
    }
    let n = lane_read(mem, count_o).wrapping_sub(1);
    lane_write(mem, count_o, n);
    Some((
        done.hit_code,
        strsem::again(cond, lane_read(mem, count_o), fl),
    ))
}

/// Runs from program `entry` until an exit. `limit` is the clock value the
/// run may reach and not pass: a block whose `clock.check` would pass it exits
/// (budget) before starting, so the run can stop at any exact dispatch.
pub fn run<M: MachineRuntime>(
    arena: &mut E1Arena,
    m: &mut M,
    st: &mut E1State,
    entry: ProgId,
    limit: u64,
) -> Option<E1Exit> {
    let pc = arena.entry(entry)? as usize;
    let (mem, lookup) = arena.engine_parts();
    let mut uops = 0;
    Some(engine::<M, false, false>(
        mem, lookup, m, st, pc, limit, &mut uops, None,
    ))
}

/// As [`run`], and adds to `uops` the engine ops executed (every transition
/// of the loop, links and jumps included): the census figure. A separate
/// monomorphization, so [`run`] pays nothing for it.
pub fn run_counting<M: MachineRuntime>(
    arena: &mut E1Arena,
    m: &mut M,
    st: &mut E1State,
    entry: ProgId,
    limit: u64,
    uops: &mut u64,
) -> Option<E1Exit> {
    let pc = arena.entry(entry)? as usize;
    let (mem, lookup) = arena.engine_parts();
    Some(engine::<M, true, false>(
        mem, lookup, m, st, pc, limit, uops, None,
    ))
}

/// Ops executed by kind: slot `k` counts executions of E1 op number `k`
/// (see [`super::op_name`] and [`super::op_class`]). The census's breakdown.
pub type OpProfile = [u64; super::OP_SLOTS];

/// As [`run_counting`], and also adds one to `profile[op]` for every op it
/// executes (the census's breakdown by kind). A third monomorphization:
/// [`run`] and [`run_counting`] pay nothing for it.
pub fn run_profiling<M: MachineRuntime>(
    arena: &mut E1Arena,
    m: &mut M,
    st: &mut E1State,
    entry: ProgId,
    limit: u64,
    uops: &mut u64,
    profile: &mut OpProfile,
) -> Option<E1Exit> {
    let pc = arena.entry(entry)? as usize;
    let (mem, lookup) = arena.engine_parts();
    Some(engine::<M, true, true>(
        mem,
        lookup,
        m,
        st,
        pc,
        limit,
        uops,
        Some(profile),
    ))
}

/// The engine proper: the one function.
#[allow(clippy::too_many_lines)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn engine<M: MachineRuntime, const COUNT: bool, const PROFILE: bool>(
    mem: &mut [u32; MEM_ALLOC],
    lookup: &[(u64, u32); LOOKUP_ENTRIES],
    m: &mut M,
    st: &mut E1State,
    mut pc: usize,
    limit: u64,
    uops_out: &mut u64,
    mut profile: Option<&mut OpProfile>,
) -> E1Exit {
    const M: usize = MEM_MASK;
    // Dispatches the budget still covers. Signed: an unchecked `clock` may
    // bill past the limit, and the next `clock.check` must still stop.
    let start_left = limit.saturating_sub(st.clock).min(i64::MAX as u64) as i64;
    let mut left = start_left;
    let mut fl = st.flags;
    // 0: nothing owed; 1: a store hit code; 2: a device/service asked to stop.
    let mut pending = 0u32;
    // Engine ops executed (only when COUNT; flushed into `uops_out` at exit).
    let mut uops = 0u64;

    // Operand word k of the current op. `pc` is masked at the loop head and
    // k < MEM_SLACK, so this index is in bounds without a mask of its own.
    macro_rules! w {
        ($k:expr) => {
            mem[pc + $k]
        };
    }
    // Whole-word value of source operand k (32-bit arms: lane D).
    macro_rules! rd32 {
        ($k:expr) => {
            mem[(w!($k) as usize) & M]
        };
    }
    macro_rules! rd16 {
        ($k:expr) => {
            rd32!($k) & 0xFFFF
        };
    }
    // 8-bit read honouring the H lane's shift.
    macro_rules! rd8 {
        ($k:expr) => {{
            let o = w!($k);
            (mem[(o as usize) & M] >> ((o >> 24) & 8)) & 0xFF
        }};
    }
    // Any lane, zero-extended.
    macro_rules! rdl {
        ($k:expr) => {{
            let o = w!($k);
            let l = ((o >> 24) & 3) as usize;
            (mem[(o as usize) & M] >> LSHIFT[l]) & LMASK[l]
        }};
    }
    macro_rules! wr32 {
        ($k:expr, $v:expr) => {{
            let v = $v;
            mem[(w!($k) as usize) & VREG_MASK] = v;
        }};
    }
    // Write through the destination's lane (merge for W, B, H).
    macro_rules! wrl {
        ($k:expr, $v:expr) => {{
            let v = $v;
            let o = w!($k);
            let l = ((o >> 24) & 3) as usize;
            let d = (o as usize) & VREG_MASK;
            mem[d] = (mem[d] & KEEP[l]) | ((v & LMASK[l]) << LSHIFT[l]);
        }};
    }
    macro_rules! unbill {
        ($site:expr) => {
            mem[(($site as usize) + 1) & M] as u64
        };
    }
    // The exact dispatch of the instruction owning `site`.
    macro_rules! now {
        ($site:expr) => {
            st.clock
                .wrapping_add(start_left.wrapping_sub(left) as u64)
                .wrapping_sub(unbill!($site))
        };
    }
    macro_rules! leave_at {
        ($reason:expr, $site:expr, $ip:expr, $link:expr) => {{
            let s = $site;
            st.flags = fl;
            st.clock = now!(s);
            if COUNT {
                *uops_out += uops;
            }
            return E1Exit {
                exit: Exit {
                    reason: $reason,
                    ip: $ip,
                },
                link: $link,
            };
        }};
    }
    macro_rules! leave {
        ($reason:expr, $site:expr) => {{
            let s = $site;
            leave_at!($reason, s, mem[(s as usize) & M], None)
        }};
    }
    macro_rules! owed {
        () => {
            if pending == 1 {
                ExitReason::Smc
            } else {
                ExitReason::Service
            }
        };
    }
    macro_rules! alu {
        (8, $f:expr) => {{
            let (a, b) = (rd8!(2), rd8!(3));
            let f: fn(u32, u32) -> u32 = $f;
            wrl!(1, f(a, b) & 0xFF);
            pc += const { op::words(op::ALU_BASE) };
        }};
        (16, $f:expr) => {{
            let (a, b) = (rd16!(2), rd16!(3));
            let f: fn(u32, u32) -> u32 = $f;
            wrl!(1, f(a, b) & 0xFFFF);
            pc += const { op::words(op::ALU_BASE) };
        }};
        (32, $f:expr) => {{
            let (a, b) = (rd32!(2), rd32!(3));
            let f: fn(u32, u32) -> u32 = $f;
            wr32!(1, f(a, b));
            pc += const { op::words(op::ALU_BASE) };
        }};
    }
    macro_rules! arith {
        ($k:expr, 8) => {{
            let (a, b) = (rd8!(2), rd8!(3));
            let r = sem::arith($k, Width::W8, a, b, &mut fl);
            wrl!(1, r);
            pc += const { op::words(op::ARITH_BASE) };
        }};
        ($k:expr, 16) => {{
            let (a, b) = (rd16!(2), rd16!(3));
            let r = sem::arith($k, Width::W16, a, b, &mut fl);
            wrl!(1, r);
            pc += const { op::words(op::ARITH_BASE) };
        }};
        ($k:expr, 32) => {{
            let (a, b) = (rd32!(2), rd32!(3));
            let r = sem::arith($k, Width::W32, a, b, &mut fl);
            wr32!(1, r);
            pc += const { op::words(op::ARITH_BASE) };
        }};
    }
    // Effective offset of a memory op: words 3 (base), 4 (index|scale),
    // 5 (disp), 6 (address-size mask).
    macro_rules! ea {
        () => {{
            let io = w!(4);
            let idx = mem[(io as usize) & M] << ((io >> 24) & 3);
            rd32!(3).wrapping_add(idx).wrapping_add(w!(5)) & w!(6)
        }};
    }
    macro_rules! load {
        ($w:expr, $checked:expr) => {{
            let site = w!(8);
            let ea = ea!();
            if ea > w!(7) {
                leave!(ExitReason::Fallback, site);
            }
            let lin = rd32!(2).wrapping_add(ea);
            let fast = if $checked {
                None
            } else {
                m.fast_mem().read(lin, $w, M::PAGE_SHIFT)
            };
            let v = match fast {
                Some(v) => v,
                None => match slow_read(m, lin, $w, now!(site)) {
                    Ok(v) => v,
                    Err(_) => leave!(ExitReason::Fallback, site),
                },
            };
            // A 32-bit load's destination is a D lane (the verifier's
            // `check_dst`): the whole word, no lane merge.
            if matches!($w, Width::W32) {
                wr32!(1, v);
            } else {
                wrl!(1, v);
            }
            pc += const { op::words(op::LD) };
        }};
    }
    macro_rules! store {
        ($w:expr, $checked:expr) => {{
            let site = w!(8);
            let v = match $w {
                Width::W8 => rd8!(1),
                Width::W16 => rd16!(1),
                Width::W32 => rd32!(1),
            };
            let ea = ea!();
            if ea > w!(7) {
                leave!(ExitReason::Fallback, site);
            }
            let lin = rd32!(2).wrapping_add(ea);
            let done = !$checked && m.fast_mem().write(lin, $w, v, M::PAGE_SHIFT);
            if !done {
                match slow_write(m, lin, $w, v, now!(site)) {
                    StoreOutcome::Done => {}
                    StoreOutcome::HitCode => {
                        if pending == 0 {
                            pending = 1;
                        }
                        let after = w!(9);
                        if after != 0 {
                            leave!(owed!(), after);
                        }
                    }
                    StoreOutcome::Refused => leave!(ExitReason::Fallback, site),
                }
            }
            pc += const { op::words(op::ST) };
        }};
    }
    macro_rules! branch {
        ($cmp:tt) => {{
            let mask = w!(3);
            let x = w!(4);
            let a = (rdl!(1) & mask) ^ x;
            let b = (rdl!(2) & mask) ^ x;
            if a $cmp b {
                pc = w!(5) as usize;
            } else {
                pc += const { op::words(op::BREQ) };
            }
        }};
    }

    loop {
        pc &= M;
        if COUNT {
            uops += 1;
        }
        if PROFILE {
            if let Some(h) = profile.as_deref_mut() {
                h[(mem[pc] as usize) & (super::OP_SLOTS - 1)] += 1;
            }
        }
        match mem[pc] {
            op::MOV32 => {
                let v = rd32!(2);
                wr32!(1, v);
                pc += const { op::words(op::MOV32) };
            }
            op::MOVL => {
                let v = rdl!(2);
                wrl!(1, v);
                pc += const { op::words(op::MOVL) };
            }
            op::SEXT8 => {
                let v = sem::sext(rdl!(2) & 0xFF, Width::W8);
                wrl!(1, v);
                pc += const { op::words(op::SEXT8) };
            }
            op::SEXT16 => {
                let v = sem::sext(rdl!(2) & 0xFFFF, Width::W16);
                wrl!(1, v);
                pc += const { op::words(op::SEXT16) };
            }
            op::ADD8 => alu!(8, |a, b| a.wrapping_add(b)),
            op::ADD16 => alu!(16, |a, b| a.wrapping_add(b)),
            op::ADD32 => alu!(32, |a, b| a.wrapping_add(b)),
            op::SUB8 => alu!(8, |a, b| a.wrapping_sub(b)),
            op::SUB16 => alu!(16, |a, b| a.wrapping_sub(b)),
            op::SUB32 => alu!(32, |a, b| a.wrapping_sub(b)),
            op::AND8 => alu!(8, |a, b| a & b),
            op::AND16 => alu!(16, |a, b| a & b),
            op::AND32 => alu!(32, |a, b| a & b),
            op::OR8 => alu!(8, |a, b| a | b),
            op::OR16 => alu!(16, |a, b| a | b),
            op::OR32 => alu!(32, |a, b| a | b),
            op::XOR8 => alu!(8, |a, b| a ^ b),
            op::XOR16 => alu!(16, |a, b| a ^ b),
            op::XOR32 => alu!(32, |a, b| a ^ b),
            op::SHL8 => alu!(8, |a, b| a.wrapping_shl(b & 31)),
            op::SHL16 => alu!(16, |a, b| a.wrapping_shl(b & 31)),
            op::SHL32 => alu!(32, |a, b| a.wrapping_shl(b & 31)),
            op::SHR8 => alu!(8, |a, b| a >> (b & 31)),
            op::SHR16 => alu!(16, |a, b| a >> (b & 31)),
            op::SHR32 => alu!(32, |a, b| a >> (b & 31)),
            op::SAR8 => alu!(8, |a, b| ((a as u8 as i8 as i32) >> (b & 31)) as u32),
            op::SAR16 => alu!(16, |a, b| ((a as u16 as i16 as i32) >> (b & 31)) as u32),
            op::SAR32 => alu!(32, |a, b| ((a as i32) >> (b & 31)) as u32),
            op::MUL8 => alu!(8, |a, b| a.wrapping_mul(b)),
            op::MUL16 => alu!(16, |a, b| a.wrapping_mul(b)),
            op::MUL32 => alu!(32, |a, b| a.wrapping_mul(b)),
            op::ADDF8 => arith!(ArithOp::Add, 8),
            op::ADDF16 => arith!(ArithOp::Add, 16),
            op::ADDF32 => arith!(ArithOp::Add, 32),
            op::ADCF8 => arith!(ArithOp::Adc, 8),
            op::ADCF16 => arith!(ArithOp::Adc, 16),
            op::ADCF32 => arith!(ArithOp::Adc, 32),
            op::SUBF8 => arith!(ArithOp::Sub, 8),
            op::SUBF16 => arith!(ArithOp::Sub, 16),
            op::SUBF32 => arith!(ArithOp::Sub, 32),
            op::SBBF8 => arith!(ArithOp::Sbb, 8),
            op::SBBF16 => arith!(ArithOp::Sbb, 16),
            op::SBBF32 => arith!(ArithOp::Sbb, 32),
            op::ANDF8 => arith!(ArithOp::And, 8),
            op::ANDF16 => arith!(ArithOp::And, 16),
            op::ANDF32 => arith!(ArithOp::And, 32),
            op::ORF8 => arith!(ArithOp::Or, 8),
            op::ORF16 => arith!(ArithOp::Or, 16),
            op::ORF32 => arith!(ArithOp::Or, 32),
            op::XORF8 => arith!(ArithOp::Xor, 8),
            op::XORF16 => arith!(ArithOp::Xor, 16),
            op::XORF32 => arith!(ArithOp::Xor, 32),
            op::INCF8 => arith!(ArithOp::Inc, 8),
            op::INCF16 => arith!(ArithOp::Inc, 16),
            op::INCF32 => arith!(ArithOp::Inc, 32),
            op::DECF8 => arith!(ArithOp::Dec, 8),
            op::DECF16 => arith!(ArithOp::Dec, 16),
            op::DECF32 => arith!(ArithOp::Dec, 32),
            op::NEGF8 => arith!(ArithOp::Neg, 8),
            op::NEGF16 => arith!(ArithOp::Neg, 16),
            op::NEGF32 => arith!(ArithOp::Neg, 32),
            op::SHIFT => {
                let kind = w!(1);
                let (a, c) = (rdl!(3), rdl!(4));
                let r = shift_slow(kind, a, c, &mut fl);
                wrl!(2, r);
                pc += const { op::words(op::SHIFT) };
            }
            op::FLAGSREC => {
                let kind = FlagKind::from_u8(w!(1) as u8).unwrap_or(FlagKind::Eager);
                let (a, b, r) = (rdl!(2), rdl!(3), rdl!(4));
                fl.record(kind, a, b, r);
                pc += const { op::words(op::FLAGSREC) };
            }
            op::FLAGSGET => {
                wrl!(1, fl.bits());
                pc += const { op::words(op::FLAGSGET) };
            }
            op::FLAGSSET => {
                let mask = w!(2);
                let v = (fl.bits() & !mask) | (rdl!(1) & mask);
                fl.set_bits(v);
                pc += const { op::words(op::FLAGSSET) };
            }
            op::GETCC => {
                wrl!(1, fl.cond(w!(2) as u8) as u32);
                pc += const { op::words(op::GETCC) };
            }
            op::LD8 => load!(Width::W8, false),
            op::LD16 => load!(Width::W16, false),
            op::LD32 => load!(Width::W32, false),
            op::LDC8 => load!(Width::W8, true),
            op::LDC16 => load!(Width::W16, true),
            op::LDC32 => load!(Width::W32, true),
            op::ST8 => store!(Width::W8, false),
            op::ST16 => store!(Width::W16, false),
            op::ST32 => store!(Width::W32, false),
            op::STC8 => store!(Width::W8, true),
            op::STC16 => store!(Width::W16, true),
            op::STC32 => store!(Width::W32, true),
            op::IN => {
                let w = width_of(w!(1));
                let site = w!(4);
                let port = rdl!(3) as u16;
                match m.port_read(port, w, now!(site)) {
                    Ok((v, stop)) => {
                        wrl!(2, v & w.mask());
                        if stop && pending == 0 {
                            pending = 2;
                        }
                    }
                    Err(_) => leave!(ExitReason::Fallback, site),
                }
                pc += const { op::words(op::IN) };
            }
            op::OUT => {
                let w = width_of(w!(1));
                let site = w!(4);
                let port = rdl!(2) as u16;
                let v = rdl!(3) & w.mask();
                match m.port_out(port, w, v, now!(site)) {
                    ServiceOutcome::Continue => {}
                    ServiceOutcome::StopAfter => {
                        if pending == 0 {
                            pending = 2;
                        }
                        let after = w!(5);
                        if after != 0 {
                            leave!(owed!(), after);
                        }
                    }
                    ServiceOutcome::Refused => leave!(ExitReason::Fallback, site),
                }
                pc += const { op::words(op::OUT) };
            }
            op::SERVICE => {
                let id = w!(1) as u16;
                let guest = (w!(2) as usize).min(VREG_MASK);
                let site = w!(3);
                let t = now!(site);
                let ctx = ServiceCtx {
                    vregs: &mut mem[..guest],
                    flags: &mut fl,
                };
                match m.service(id, ctx, t) {
                    ServiceOutcome::Continue => {}
                    ServiceOutcome::StopAfter => {
                        if pending == 0 {
                            pending = 2;
                        }
                        let after = w!(4);
                        if after != 0 {
                            leave!(owed!(), after);
                        }
                    }
                    ServiceOutcome::Refused => leave!(ExitReason::Fallback, site),
                }
                pc += const { op::words(op::SERVICE) };
            }
            op::CALL => {
                let site = w!(7);
                let Some(&h) = Helper::ALL.get(w!(1) as usize) else {
                    leave!(ExitReason::Fallback, site);
                };
                let args = [rdl!(4), rdl!(5), rdl!(6)];
                // The helpers hot in fixed-point and bitmap loops (IMUL,
                // SHRD/SHLD, BT) run inline: a constant helper is one arm of
                // `sem::helper_inline`, with no call and no second table;
                // the rest go through `sem::helper`. Same semantics either
                // way. BMAND: the IMUL/SHRD calls were a quarter of the
                // arm's host instructions.
                let r = match h {
                    Helper::Imul16 => sem::helper_inline(Helper::Imul16, args, &mut fl),
                    Helper::Imul32 => sem::helper_inline(Helper::Imul32, args, &mut fl),
                    Helper::ImulTrunc16 => sem::helper_inline(Helper::ImulTrunc16, args, &mut fl),
                    Helper::ImulTrunc32 => sem::helper_inline(Helper::ImulTrunc32, args, &mut fl),
                    Helper::Mul32 => sem::helper_inline(Helper::Mul32, args, &mut fl),
                    Helper::Shrd16 => sem::helper_inline(Helper::Shrd16, args, &mut fl),
                    Helper::Shrd32 => sem::helper_inline(Helper::Shrd32, args, &mut fl),
                    Helper::Shld32 => sem::helper_inline(Helper::Shld32, args, &mut fl),
                    Helper::Bt32 => sem::helper_inline(Helper::Bt32, args, &mut fl),
                    _ => sem::helper(h, args, &mut fl),
                };
                match r {
                    Ok([r0, r1]) => {
                        wrl!(2, r0);
                        wrl!(3, r1);
                    }
                    Err(_) => leave!(ExitReason::Fallback, site),
                }
                pc += const { op::words(op::CALL) };
            }
            op::CLOCK => {
                left = left.wrapping_sub(w!(1) as i32 as i64);
                pc += const { op::words(op::CLOCK) };
            }
            op::CLOCKCHECK => {
                let n = w!(1) as i64;
                if pending != 0 {
                    leave!(owed!(), w!(2));
                }
                if left < n {
                    leave!(ExitReason::Budget, w!(2));
                }
                left -= n;
                pc += const { op::words(op::CLOCKCHECK) };
            }
            op::COUNT => {
                let c = (w!(1) as usize) & M;
                mem[c] = mem[c].wrapping_add(1);
                pc += const { op::words(op::COUNT) };
            }
            op::CHK => {
                if ea!() > w!(7) {
                    leave!(ExitReason::Fallback, w!(8));
                }
                pc += const { op::words(op::CHK) };
            }
            op::X87 => {
                let site = w!(8);
                let blob = (w!(12) as usize) & M;
                let hdr = mem[blob];
                let mut bytes = [0u8; 16];
                for i in 0..4 {
                    bytes[4 * i..4 * i + 4].copy_from_slice(&mem[(blob + 1 + i) & M].to_le_bytes());
                }
                let len = (hdr as usize & 0xFF).min(15);
                let x87mem = if hdr & 0x100 != 0 {
                    Some(X87Mem {
                        base: rd32!(2),
                        off: ea!(),
                        limit: w!(7),
                        sel: rdl!(11) as u16,
                    })
                } else {
                    None
                };
                let call = X87Call {
                    insn: &bytes[..len],
                    ip: mem[(site as usize) & M],
                    cs: rdl!(10) as u16,
                    mem: x87mem,
                };
                match x87_call(m, call, now!(site)) {
                    Ok(done) => {
                        if let Some(v) = done.result {
                            wrl!(1, v as u32);
                        }
                        if done.hit_code {
                            if pending == 0 {
                                pending = 1;
                            }
                            let after = w!(9);
                            if after != 0 {
                                leave!(owed!(), after);
                            }
                        }
                    }
                    Err(_) => leave!(ExitReason::Fallback, site),
                }
                pc += const { op::words(op::X87) };
            }
            op::ARITHBR => {
                let kind = w!(1);
                let w = width_of(kind % 3);
                let (a, b) = (rdl!(3), rdl!(4));
                let r = sem::arith(ARITH_OPS[(kind / 3) as usize % 10], w, a, b, &mut fl);
                wrl!(2, r);
                if fl.cond(w!(5) as u8) {
                    pc = w!(6) as usize;
                } else {
                    pc += const { op::words(op::ARITHBR) };
                }
            }
            op::JMPA => {
                left = left.wrapping_sub(w!(2) as i32 as i64);
                pc = w!(1) as usize;
            }
            op::BRCCA => {
                let k = if fl.cond(w!(1) as u8) { 2 } else { 4 };
                left = left.wrapping_sub(w!(k + 1) as i32 as i64);
                pc = w!(k) as usize;
            }
            op::ARITHBRA => {
                let kind = w!(1);
                let w = width_of(kind % 3);
                let (a, b) = (rdl!(3), rdl!(4));
                let r = sem::arith(ARITH_OPS[(kind / 3) as usize % 10], w, a, b, &mut fl);
                wrl!(2, r);
                let k = if fl.cond(w!(5) as u8) { 6 } else { 8 };
                left = left.wrapping_sub(w!(k + 1) as i32 as i64);
                pc = w!(k) as usize;
            }
            op::BRCMPA => {
                let mask = w!(4);
                let x = w!(5);
                let a = (rdl!(2) & mask) ^ x;
                let b = (rdl!(3) & mask) ^ x;
                let c = match w!(1) {
                    0 => a == b,
                    1 => a != b,
                    2 => a < b,
                    _ => a <= b,
                };
                let k = if c { 6 } else { 8 };
                left = left.wrapping_sub(w!(k + 1) as i32 as i64);
                pc = w!(k) as usize;
            }
            op::STRSTEP => {
                let n = w!(2);
                wrl!(1, if fl.df() { n.wrapping_neg() } else { n });
                pc += const { op::words(op::STRSTEP) };
            }
            op::REP => {
                // One element of a REP string instruction (`Term::Rep`).
                let site = w!(10);
                if pending != 0 {
                    leave!(owed!(), site);
                }
                if left < 1 {
                    leave!(ExitReason::Budget, site);
                }
                if rdl!(9) == 0 {
                    left -= 1;
                    pc = w!(12) as usize;
                    continue;
                }
                let now = now!(site);
                let Some((hit, go)) = rep_element(m, mem, &mut fl, pc, now) else {
                    leave!(ExitReason::Fallback, site);
                };
                if hit && pending == 0 {
                    pending = 1;
                }
                left -= 1;
                pc = w!(if go { 11 } else { 12 }) as usize;
            }
            op::STOPIF => {
                let s = rdl!(1);
                if s != 0 && pending == 0 && m.stop_if_needed(s) {
                    pending = 2;
                }
                pc += const { op::words(op::STOPIF) };
            }
            op::EXITPEND => {
                if pending != 0 {
                    leave!(owed!(), w!(1));
                }
                pc += const { op::words(op::EXITPEND) };
            }
            op::JMP => pc = w!(1) as usize,
            op::BRCC => {
                if fl.cond(w!(1) as u8) {
                    pc = w!(2) as usize;
                } else {
                    pc += const { op::words(op::BRCC) };
                }
            }
            op::BREQ => branch!(==),
            op::BRNE => branch!(!=),
            op::BRLT => branch!(<),
            op::BRLE => branch!(<=),
            op::EXIT => {
                let site = w!(2);
                if pending != 0 {
                    leave!(owed!(), site);
                }
                match w!(1) {
                    0 => leave!(ExitReason::Fallback, site),
                    1 => leave!(ExitReason::Stop, site),
                    _ => leave!(ExitReason::Shadow, site),
                }
            }
            op::LINK => {
                let t = w!(1);
                let site = w!(2);
                if pending != 0 {
                    leave!(owed!(), site);
                }
                if t != 0 {
                    pc = t as usize;
                    continue;
                }
                let key = w!(3) as u64 | (w!(4) as u64) << 32;
                let slot = LinkSlot((pc + 1) as u32);
                leave_at!(
                    ExitReason::Link { key },
                    site,
                    mem[(site as usize) & M],
                    Some(slot)
                );
            }
            op::INDIRECT => {
                let ip = rdl!(1);
                let key = code_key(rdl!(2), ip);
                let site = w!(3);
                if pending != 0 {
                    leave_at!(owed!(), site, ip, None);
                }
                let (k, e) = lookup[key_hash(key) & (LOOKUP_ENTRIES - 1)];
                if e != 0 && k == key {
                    pc = e as usize;
                    continue;
                }
                leave_at!(ExitReason::Indirect { key }, site, ip, None);
            }
            op::DIVERT => {
                // The program runs elsewhere: hand its id (the header word
                // before the entry) to the caller, clock exact at its entry.
                st.flags = fl;
                st.clock = st.clock.wrapping_add(start_left.wrapping_sub(left) as u64);
                if COUNT {
                    *uops_out += uops;
                }
                return E1Exit {
                    exit: Exit {
                        reason: ExitReason::Divert,
                        ip: mem[pc.wrapping_sub(1) & M],
                    },
                    link: None,
                };
            }
            _ => {
                // Not an op: only a corrupted arena gets here.
                st.flags = fl;
                st.clock = st.clock.wrapping_add(start_left.wrapping_sub(left) as u64);
                if COUNT {
                    *uops_out += uops;
                }
                return E1Exit {
                    exit: Exit {
                        reason: ExitReason::Invalid,
                        ip: pc as u32,
                    },
                    link: None,
                };
            }
        }
    }
}
