//! The item table of the real-mode generator: what one plan word becomes.
//!
//! Owns every kind of item ([`Kind`]), its weight at the top level and
//! whether it may appear inside a loop, a subroutine, a handler or an
//! aliased-CS block ("simple" items), and the exact instructions each
//! emits. Every item keeps the invariants of [`super`] (balanced stack,
//! SI/DI in the data area, data segments in the safe set, TF clear). It
//! must not decide the program layout (that is [`super`]).

use super::{fixed, load_seg, Em, DATA, PTR_SPAN, SAFE_SEGS, USER_VECTORS, WRAP_SEGS};
use crate::fuzz::rng::Rng;
use iced_x86::code_asm::*;

type R = Result<(), IcedError>;

/// What an item is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// ADD/ADC/SUB/SBB/AND/OR/XOR/CMP/TEST in 8/16/32 bits, register,
    /// immediate and memory forms, with segment overrides.
    Alu,
    /// SHL/SHR/SAR/ROL/ROR/RCL/RCR by 1, CL and immediates; SHLD/SHRD.
    Shift,
    /// INC/DEC/NEG/NOT on registers and memory.
    Unary,
    /// MUL/IMUL (1, 2, 3 operands), DIV/IDIV (faulting ones go to the
    /// program's INT 0 handler), AAM/AAD, decimal adjusts.
    MulDiv,
    /// MOV/MOVZX/MOVSX/XCHG/LEA/CBW.../XLAT/LAHF/SAHF/SETcc/BSWAP/XADD/
    /// CMPXCHG/CPUID/SMSW.
    Move,
    /// BT/BTS/BTR/BTC, BSF/BSR.
    Bits,
    /// CLC/STC/CMC/CLD/STD/CLI/STI, PUSHF/POPF and PUSHFD/POPFD with
    /// random bits.
    Flags,
    /// MOVS/STOS/LODS/SCAS/CMPS, REP/REPE/REPNE, both directions, segment
    /// overrides, 16- and 32-bit addressing, sometimes across the 64 KiB
    /// wrap of a scratch segment.
    Str,
    /// Balanced PUSH/POP of registers, immediates, memory and segment
    /// registers; PUSHA/POPA(D); ENTER/LEAVE.
    Stack,
    /// Forward Jcc/JMP/JCXZ over simple items, or over junk bytes that must
    /// never run.
    Branch,
    /// Bounded backward loops: LOOP/LOOPE/LOOPNE, DEC/JNZ, CMP/JB.
    Loop,
    /// Spin loops L1 folds: `loop $`, waiting for retrace on 3DAh, waiting
    /// for the BIOS tick.
    Spin,
    /// Near calls (direct, through a register, through memory) to the
    /// program's subroutines.
    Call,
    /// Far calls to the far subroutines: direct with a segment patched at
    /// run time, through a far pointer in memory, PUSH CS + near call, and
    /// with an aliased CS.
    Far,
    /// A block run with CS aliased (CS+k : IP-16k), entered and left by far
    /// JMP, RETF or a far pointer.
    Alias,
    /// INT to the program's own handlers, INT 3, INTO, a simulated
    /// interrupt (PUSHF + far call through the IVT).
    Int,
    /// A few simple items single-stepped (TF=1) into the program's INT 1
    /// handler.
    Trap,
    /// Deterministic INT 21h services.
    Dos,
    /// Deterministic BIOS services (INT 10h, 11h, 12h, 16h, 1Ah).
    Bios,
    /// Writes to text and graphics video memory.
    Video,
    /// IN from modelled devices (PIT, PIC, port 61h, keyboard, VGA, CMOS,
    /// OPL, game port).
    PortIn,
    /// OUT to modelled devices (PIT, speaker, palette, OPL, CMOS index, PIC).
    PortOut,
    /// x87: loads, stores, arithmetic, compares, transcendentals, control.
    X87,
    /// A patchable immediate (`mov al, imm8`, `add ax, imm16`).
    PatchImm,
    /// A patchable one-byte opcode (INC/DEC/NOP/CLC/STC/CMC/CBW/CWD).
    PatchOp,
    /// A self-modifying store through CS into a patchable immediate or
    /// opcode (ahead of or behind this point).
    Smc,
    /// Reload DS/ES/FS/GS from the safe set (MOV, POP, LDS/LES/LFS/LGS) or
    /// switch SS:SP (MOV SS shadow, LSS).
    Seg,
    /// STI; HLT: the clock jumps to the next interrupt.
    Halt,
    /// A line copied to CS:FFxx and called, running across the end of CS
    /// into CS:0000 (sometimes with an instruction that straddles it, and
    /// patched between two calls).
    Wrap,
    /// A protected-mode round trip: CLI, CR0.PE set, a few items that load
    /// no segment register and cannot fault (the segment caches stay the
    /// real-mode ones; patchable targets and CS stores among them, so code
    /// of one mode is patched from the other), CR0.PE clear, POPF. The µop
    /// arms hand this code to an L1 engine of their own.
    Pm,
}

/// Weights at the top level.
const TOP: &[(Kind, u32)] = &[
    (Kind::Alu, 14),
    (Kind::Shift, 6),
    (Kind::Unary, 4),
    (Kind::MulDiv, 5),
    (Kind::Move, 8),
    (Kind::Bits, 3),
    (Kind::Flags, 3),
    (Kind::Str, 6),
    (Kind::Stack, 4),
    (Kind::Branch, 5),
    (Kind::Loop, 4),
    (Kind::Spin, 1),
    (Kind::Call, 3),
    (Kind::Far, 3),
    (Kind::Alias, 2),
    (Kind::Int, 3),
    (Kind::Trap, 1),
    (Kind::Dos, 3),
    (Kind::Bios, 1),
    (Kind::Video, 1),
    (Kind::PortIn, 2),
    (Kind::PortOut, 2),
    (Kind::X87, 6),
    (Kind::PatchImm, 3),
    (Kind::PatchOp, 2),
    (Kind::Smc, 4),
    (Kind::Seg, 2),
    (Kind::Halt, 1),
    (Kind::Wrap, 1),
    (Kind::Pm, 2),
];

/// Items a protected-mode round trip holds: none loads a segment register
/// (a real-mode value is no selector), takes an interrupt or can fault
/// (the real-mode IVT would be read as an IDT).
const PM_SAFE: &[(Kind, u32)] = &[
    (Kind::Alu, 14),
    (Kind::Shift, 6),
    (Kind::Unary, 4),
    (Kind::Move, 8),
    (Kind::Bits, 3),
    (Kind::X87, 4),
    (Kind::PatchImm, 2),
    (Kind::PatchOp, 1),
    (Kind::Smc, 3),
];

/// Items allowed where nesting and absolute CS addresses are not: loop
/// bodies, subroutines, handlers, aliased blocks, single-stepped blocks,
/// wrap lines.
const SIMPLE: &[(Kind, u32)] = &[
    (Kind::Alu, 14),
    (Kind::Shift, 6),
    (Kind::Unary, 4),
    (Kind::MulDiv, 4),
    (Kind::Move, 8),
    (Kind::Bits, 3),
    (Kind::Flags, 2),
    (Kind::Str, 4),
    (Kind::Stack, 3),
    (Kind::PortIn, 2),
    (Kind::X87, 5),
];

/// One top-level item.
pub fn top(em: &mut Em, r: &mut Rng) -> R {
    let k = r.weighted(TOP);
    item(em, r, k)
}

/// One simple item.
pub fn simple(em: &mut Em, r: &mut Rng) -> R {
    let k = r.weighted(SIMPLE);
    item(em, r, k)
}

fn simples(em: &mut Em, r: &mut Rng, lo: u64, hi: u64) -> R {
    em.depth += 1;
    for _ in 0..r.range(lo, hi) {
        simple(em, &mut Rng::new(r.next_u64()))?;
    }
    em.depth -= 1;
    Ok(())
}

fn item(em: &mut Em, r: &mut Rng, k: Kind) -> R {
    match k {
        Kind::Alu => alu(em, r),
        Kind::Shift => shift(em, r),
        Kind::Unary => unary(em, r),
        Kind::MulDiv => muldiv(em, r),
        Kind::Move => moves(em, r),
        Kind::Bits => bits(em, r),
        Kind::Flags => flags(em, r),
        Kind::Str => strings(em, r),
        Kind::Stack => stack(em, r),
        Kind::Branch => branch(em, r),
        Kind::Loop => loops(em, r),
        Kind::Spin => spin(em, r),
        Kind::Call => call(em, r),
        Kind::Far => far(em, r),
        Kind::Alias => alias(em, r),
        Kind::Int => int(em, r),
        Kind::Trap => trap(em, r),
        Kind::Dos => dos(em, r),
        Kind::Bios => bios(em, r),
        Kind::Video => video(em, r),
        Kind::PortIn => port_in(em, r),
        Kind::PortOut => port_out(em, r),
        Kind::X87 => x87(em, r),
        Kind::PatchImm => patch_imm(em, r),
        Kind::PatchOp => patch_op(em, r),
        Kind::Smc => smc(em, r),
        Kind::Seg => segs(em, r),
        Kind::Halt => halt(em, r),
        Kind::Wrap => wrap(em, r),
        Kind::Pm => pm(em, r),
    }
}

// --- registers and operands -------------------------------------------

/// Registers an item may write freely (SP, SI, DI are not among them).
const W8: [AsmRegister8; 8] = [al, cl, dl, bl, ah, ch, dh, bh];
const W16: [AsmRegister16; 5] = [ax, cx, dx, bx, bp];
const W32: [AsmRegister32; 5] = [eax, ecx, edx, ebx, ebp];
/// Registers an item may read.
const R16: [AsmRegister16; 7] = [ax, cx, dx, bx, bp, si, di];
const R32: [AsmRegister32; 7] = [eax, ecx, edx, ebx, ebp, esi, edi];

/// A random segment override (or none) for a data-area operand.
fn seg_override(r: &mut Rng, m: AsmMemoryOperand) -> AsmMemoryOperand {
    match r.below(10) {
        0 => m.es(),
        1 => m.cs(),
        2 => m.ss(),
        3 => m.ds(),
        4 => m.fs(),
        5 => m.gs(),
        _ => m,
    }
}

/// A memory operand inside the data area (any segment register maps it
/// into memory the program owns). May emit a base register load first.
fn ea(em: &mut Em, r: &mut Rng) -> Result<AsmMemoryOperand, IcedError> {
    let d = r.below(0x78) as i32;
    let m = match r.below(10) {
        0 | 1 => si + d,
        2 | 3 => di + d,
        4 => {
            em.a.mov(bx, r.below(0x40) as u32)?;
            bx + si + d
        }
        5 => {
            em.a.mov(bp, r.below(0x40) as u32)?;
            bp + di + d
        }
        6 => {
            let a = DATA as u32 + r.below(PTR_SPAN as u64) as u32;
            return Ok(seg_override(r, AsmMemoryOperand::from(a as u64)));
        }
        7 => esi + d,
        8 => edi + d,
        _ => {
            em.a.mov(ebx, r.below(0x10) as u32)?;
            let scale = r.pick(&[1, 2, 4, 8]);
            esi + ebx * scale + d
        }
    };
    Ok(seg_override(r, m))
}

fn imm_for(r: &mut Rng, bits: u32) -> u32 {
    let v = match r.below(6) {
        0 => 0,
        1 => 1,
        2 => u32::MAX,
        3 => 1 << (bits - 1),
        _ => r.u32(),
    };
    match bits {
        8 => v & 0xFF,
        16 => v & 0xFFFF,
        _ => v,
    }
}

// --- integer -----------------------------------------------------------

#[derive(Clone, Copy)]
enum Op2 {
    Add,
    Or,
    Adc,
    Sbb,
    And,
    Sub,
    Xor,
    Cmp,
    Test,
}

const OPS2: [Op2; 9] = [
    Op2::Add,
    Op2::Or,
    Op2::Adc,
    Op2::Sbb,
    Op2::And,
    Op2::Sub,
    Op2::Xor,
    Op2::Cmp,
    Op2::Test,
];

macro_rules! op2 {
    ($a:expr, $op:expr, $d:expr, $s:expr) => {
        match $op {
            Op2::Add => $a.add($d, $s),
            Op2::Or => $a.or($d, $s),
            Op2::Adc => $a.adc($d, $s),
            Op2::Sbb => $a.sbb($d, $s),
            Op2::And => $a.and($d, $s),
            Op2::Sub => $a.sub($d, $s),
            Op2::Xor => $a.xor($d, $s),
            Op2::Cmp => $a.cmp($d, $s),
            Op2::Test => $a.test($d, $s),
        }
    };
}

/// `op reg, mem`; TEST has no such form (it is symmetric), so `test mem, reg`.
macro_rules! op2_rm {
    ($a:expr, $op:expr, $d:expr, $s:expr) => {
        match $op {
            Op2::Add => $a.add($d, $s),
            Op2::Or => $a.or($d, $s),
            Op2::Adc => $a.adc($d, $s),
            Op2::Sbb => $a.sbb($d, $s),
            Op2::And => $a.and($d, $s),
            Op2::Sub => $a.sub($d, $s),
            Op2::Xor => $a.xor($d, $s),
            Op2::Cmp => $a.cmp($d, $s),
            Op2::Test => $a.test($s, $d),
        }
    };
}

fn alu(em: &mut Em, r: &mut Rng) -> R {
    let op = r.pick(&OPS2);
    let w = r.pick(&[8u32, 16, 32]);
    let form = r.below(5);
    match (w, form) {
        (8, 0) => op2!(em.a, op, r.pick(&W8), r.pick(&W8)),
        (8, 1) => op2!(em.a, op, r.pick(&W8), imm_for(r, 8)),
        (8, 2) => {
            let m = ea(em, r)?;
            op2_rm!(em.a, op, r.pick(&W8), byte_ptr(m))
        }
        (8, 3) => {
            let m = ea(em, r)?;
            op2!(em.a, op, byte_ptr(m), r.pick(&W8))
        }
        (8, _) => {
            let m = ea(em, r)?;
            op2!(em.a, op, byte_ptr(m), imm_for(r, 8))
        }
        (16, 0) => op2!(em.a, op, r.pick(&W16), r.pick(&R16)),
        (16, 1) => op2!(em.a, op, r.pick(&W16), imm_for(r, 16)),
        (16, 2) => {
            let m = ea(em, r)?;
            op2_rm!(em.a, op, r.pick(&W16), word_ptr(m))
        }
        (16, 3) => {
            let m = ea(em, r)?;
            op2!(em.a, op, word_ptr(m), r.pick(&R16))
        }
        (16, _) => {
            let m = ea(em, r)?;
            op2!(em.a, op, word_ptr(m), imm_for(r, 16))
        }
        (_, 0) => op2!(em.a, op, r.pick(&W32), r.pick(&R32)),
        (_, 1) => op2!(em.a, op, r.pick(&W32), imm_for(r, 32)),
        (_, 2) => {
            let m = ea(em, r)?;
            op2_rm!(em.a, op, r.pick(&W32), dword_ptr(m))
        }
        (_, 3) => {
            let m = ea(em, r)?;
            op2!(em.a, op, dword_ptr(m), r.pick(&R32))
        }
        _ => {
            let m = ea(em, r)?;
            op2!(em.a, op, dword_ptr(m), imm_for(r, 32))
        }
    }
}

macro_rules! shift_op {
    ($a:expr, $k:expr, $d:expr, $n:expr) => {
        match $k {
            0 => $a.shl($d, $n),
            1 => $a.shr($d, $n),
            2 => $a.sar($d, $n),
            3 => $a.rol($d, $n),
            4 => $a.ror($d, $n),
            5 => $a.rcl($d, $n),
            _ => $a.rcr($d, $n),
        }
    };
}

fn shift(em: &mut Em, r: &mut Rng) -> R {
    let k = r.below(7);
    // The count: 1, an immediate (masked to 5 bits by the CPU, so >= 32
    // counts as well), or CL with a random value.
    let imm = match r.below(4) {
        0 => 1u32,
        1 => r.below(8) as u32,
        2 => r.below(40) as u32,
        _ => r.u8() as u32,
    };
    let by_cl = r.chance(1, 3);
    if by_cl {
        em.a.mov(cl, imm)?;
    }
    match r.below(8) {
        0 | 1 => {
            let d = r.pick(&W8);
            if by_cl {
                shift_op!(em.a, k, d, cl)
            } else {
                shift_op!(em.a, k, d, imm)
            }
        }
        2 | 3 => {
            let d = r.pick(&W16);
            if by_cl {
                shift_op!(em.a, k, d, cl)
            } else {
                shift_op!(em.a, k, d, imm)
            }
        }
        4 => {
            let d = r.pick(&W32);
            if by_cl {
                shift_op!(em.a, k, d, cl)
            } else {
                shift_op!(em.a, k, d, imm)
            }
        }
        5 => {
            let m = word_ptr(ea(em, r)?);
            if by_cl {
                shift_op!(em.a, k, m, cl)
            } else {
                shift_op!(em.a, k, m, imm)
            }
        }
        6 => {
            let m = byte_ptr(ea(em, r)?);
            if by_cl {
                shift_op!(em.a, k, m, cl)
            } else {
                shift_op!(em.a, k, m, imm)
            }
        }
        _ => {
            // Double-precision shifts (counts above the width are undefined
            // on hardware but one definition here: the shared x86-cpu's).
            let (d, s) = (r.pick(&W16), r.pick(&R16));
            match (r.below(4), by_cl) {
                (0, true) => em.a.shld(d, s, cl),
                (0, false) => em.a.shld(d, s, imm & 31),
                (1, true) => em.a.shrd(d, s, cl),
                (1, false) => em.a.shrd(d, s, imm & 31),
                (2, _) => em.a.shld(r.pick(&W32), r.pick(&R32), imm & 31),
                _ => {
                    let m = dword_ptr(ea(em, r)?);
                    em.a.shrd(m, r.pick(&R32), cl)
                }
            }
        }
    }
}

fn unary(em: &mut Em, r: &mut Rng) -> R {
    let k = r.below(4);
    macro_rules! u {
        ($d:expr) => {
            match k {
                0 => em.a.inc($d),
                1 => em.a.dec($d),
                2 => em.a.neg($d),
                _ => em.a.not($d),
            }
        };
    }
    match r.below(6) {
        0 => u!(r.pick(&W8)),
        1 | 2 => u!(r.pick(&W16)),
        3 => u!(r.pick(&W32)),
        4 => {
            let m = ea(em, r)?;
            u!(word_ptr(m))
        }
        _ => {
            let m = ea(em, r)?;
            match r.below(2) {
                0 => u!(byte_ptr(m)),
                _ => u!(dword_ptr(m)),
            }
        }
    }
}

fn muldiv(em: &mut Em, r: &mut Rng) -> R {
    match r.below(12) {
        0 => em.a.mul(r.pick(&W8)),
        1 => em.a.imul(r.pick(&W16)),
        2 => {
            let m = ea(em, r)?;
            em.a.mul(dword_ptr(m))
        }
        3 => em.a.imul_2(r.pick(&W16), r.pick(&R16)),
        4 => {
            let m = ea(em, r)?;
            em.a.imul_2(r.pick(&W32), dword_ptr(m))
        }
        5 => {
            em.a.imul_3(r.pick(&W16), r.pick(&R16), r.u16() as i16 as i32)
        }
        6 | 7 => {
            // A 2-byte DIV/IDIV r8/r16: divide errors (zero, overflow) go to
            // the program's INT 0 handler, which returns past it.
            let op = r.pick(&[0xF6u8, 0xF7]);
            let modrm = 0xC0 | (r.pick(&[6u8, 7]) << 3) | r.below(8) as u8;
            em.db(&[op, modrm])
        }
        8 => {
            // A 32-bit division that cannot fault.
            em.a.xor(edx, edx)?;
            em.a.or(ecx, 1u32)?;
            em.a.div(ecx)
        }
        9 => {
            // AAM imm8 (AAM 0 is a divide error), AAD imm8.
            let b = if r.chance(1, 4) { 0 } else { r.u8() };
            em.db(&[r.pick(&[0xD4u8, 0xD5]), b])
        }
        _ => em.db(&[r.pick(&[0x27u8, 0x2F, 0x37, 0x3F])]), // DAA DAS AAA AAS
    }
}

fn moves(em: &mut Em, r: &mut Rng) -> R {
    match r.below(20) {
        0 => em.a.mov(r.pick(&W16), r.pick(&R16)),
        1 => em.a.mov(r.pick(&W8), r.pick(&W8)),
        2 => em.a.mov(r.pick(&W32), imm_for(r, 32)),
        3 => {
            let m = ea(em, r)?;
            em.a.mov(r.pick(&W16), word_ptr(m))
        }
        4 => {
            let m = ea(em, r)?;
            em.a.mov(dword_ptr(m), r.pick(&R32))
        }
        5 => {
            let m = ea(em, r)?;
            em.a.mov(byte_ptr(m), imm_for(r, 8))
        }
        6 => {
            let m = ea(em, r)?;
            match r.below(4) {
                0 => em.a.movzx(r.pick(&W16), byte_ptr(m)),
                1 => em.a.movsx(r.pick(&W32), word_ptr(m)),
                2 => em.a.movsx(r.pick(&W16), r.pick(&W8)),
                _ => em.a.movzx(r.pick(&W32), r.pick(&W8)),
            }
        }
        7 => em.a.xchg(r.pick(&W16), r.pick(&W16)),
        8 => {
            let m = ea(em, r)?;
            em.a.xchg(byte_ptr(m), r.pick(&W8))
        }
        9 => {
            let m = ea(em, r)?;
            match r.below(2) {
                0 => em.a.lea(r.pick(&W16), m),
                _ => em.a.lea(r.pick(&W32), m),
            }
        }
        10 => em.db(&[r.pick(&[0x98u8, 0x99, 0x9E, 0x9F])]), // CBW CWD SAHF LAHF
        11 => em.db(&[0x66, r.pick(&[0x98u8, 0x99])]),       // CWDE CDQ
        12 => {
            em.a.mov(bx, si)?;
            em.a.and(bx, 0xFF80u32)?;
            em.a.xlatb()
        }
        13 => {
            // SETcc r8 / m8.
            let cc = r.below(16) as u8;
            if r.chance(1, 2) {
                em.db(&[0x0F, 0x90 | cc, 0xC0 | r.below(8) as u8])
            } else {
                em.db(&[0x0F, 0x90 | cc, 0x44, r.below(0x78) as u8]) // [si+d8]
            }
        }
        14 => em.a.bswap(r.pick(&W32)),
        15 => {
            let m = ea(em, r)?;
            match r.below(3) {
                0 => em.a.xadd(word_ptr(m), r.pick(&W16)),
                1 => em.a.cmpxchg(byte_ptr(m), r.pick(&W8)),
                _ => em.a.cmpxchg(r.pick(&W32), r.pick(&W32)),
            }
        }
        16 => {
            // CPUID: EAX 0 or 1 (the model's answer is part of the state).
            em.a.mov(eax, r.below(2) as u32)?;
            em.a.cpuid()
        }
        17 => em.a.smsw(r.pick(&W16)),
        18 => {
            // Read a segment register.
            let s = r.pick(&[es, cs, ss, ds, fs, gs]);
            let m = ea(em, r)?;
            if r.chance(1, 2) {
                em.a.mov(r.pick(&W16), s)
            } else {
                em.a.mov(word_ptr(m), s)
            }
        }
        _ => {
            let (d, s) = (r.pick(&W32), r.pick(&R32));
            em.a.mov(d, s)
        }
    }
}

fn bits(em: &mut Em, r: &mut Rng) -> R {
    let k = r.below(4);
    macro_rules! b {
        ($d:expr, $s:expr) => {
            match k {
                0 => em.a.bt($d, $s),
                1 => em.a.bts($d, $s),
                2 => em.a.btr($d, $s),
                _ => em.a.btc($d, $s),
            }
        };
    }
    match r.below(6) {
        0 => b!(r.pick(&W16), r.pick(&W16)),
        1 => b!(r.pick(&W32), r.below(64) as u32),
        2 => {
            // A bit string in memory: the offset register reaches +-4 KiB
            // around the data area, still memory the program owns.
            let m = ea(em, r)?;
            b!(word_ptr(m), r.pick(&W16))
        }
        3 => {
            let m = ea(em, r)?;
            b!(dword_ptr(m), r.below(256) as u32)
        }
        4 => em.a.bsf(r.pick(&W16), r.pick(&R16)),
        _ => {
            let m = ea(em, r)?;
            em.a.bsr(r.pick(&W32), dword_ptr(m))
        }
    }
}

fn flags(em: &mut Em, r: &mut Rng) -> R {
    match r.below(6) {
        0 => em.db(&[r.pick(&[0xF8u8, 0xF9, 0xF5, 0xFC, 0xFD, 0xFB, 0xFA])]),
        1 | 2 => {
            // Random arithmetic flags, DF, IOPL and NT; TF and IF kept.
            em.a.pushf()?;
            em.a.pop(ax)?;
            em.a.and(ax, 0x0300u32)?;
            em.a.or(ax, (r.u32() & 0x7CD5) | 2)?;
            em.a.push(ax)?;
            em.a.popf()
        }
        3 => {
            // PUSHFD/POPFD: AC (bit 18) toggles on a 486.
            em.a.pushfd()?;
            em.a.pop(eax)?;
            em.a.xor(eax, 0x0004_0000u32 | (r.u32() & 0x8D5))?;
            em.a.push(eax)?;
            em.a.popfd()
        }
        4 => {
            em.a.pushf()?;
            em.a.pop(r.pick(&W16))
        }
        _ => {
            em.a.lahf()?;
            em.a.xor(ah, r.u8() as u32 & 0xD5)?;
            em.a.sahf()
        }
    }
}

fn strings(em: &mut Em, r: &mut Rng) -> R {
    let wrap = r.chance(1, 4);
    let down = r.chance(1, 3);
    let count = match r.below(8) {
        0 => 0u32,
        1 => 1,
        _ => r.range(2, 0x1F) as u32,
    };
    let seg = if wrap {
        // Across the 64 KiB wrap: ES (and DS through an override) in a
        // scratch segment, pointers a few bytes from the end or the start.
        let k = r.pick(&WRAP_SEGS);
        em.a.push(es)?;
        load_seg(em, es, k)?;
        true
    } else {
        false
    };
    let near_wrap = |r: &mut Rng| -> u32 {
        if down {
            r.below(0x20) as u32
        } else {
            0xFFE0 + r.below(0x20) as u32
        }
    };
    let (s0, d0) = if wrap {
        (near_wrap(r), near_wrap(r))
    } else if down {
        (
            DATA as u32 + 0x300 + r.below(0x100) as u32,
            DATA as u32 + 0x300 + r.below(0x100) as u32,
        )
    } else {
        (
            DATA as u32 + r.below(0x300) as u32,
            DATA as u32 + r.below(0x300) as u32,
        )
    };
    em.a.mov(si, s0)?;
    em.a.mov(di, d0)?;
    em.a.mov(cx, count)?;
    em.db(&[if down { 0xFD } else { 0xFC }])?;
    // Prefixes: segment override (source only), 67h (32-bit addressing:
    // ESI/EDI/ECX with zero high halves, so no limit is crossed), 66h,
    // REP/REPE/REPNE.
    let a32 = !wrap && r.chance(1, 5);
    if a32 {
        em.a.movzx(esi, si)?;
        em.a.movzx(edi, di)?;
        em.a.movzx(ecx, cx)?;
    }
    let mut bytes = Vec::new();
    if wrap || r.chance(1, 3) {
        // With the wrap, DS: would read the program's own segment: fine.
        bytes.push(r.pick(&[0x26u8, 0x2E, 0x36, 0x3E, 0x64, 0x65]));
    }
    if a32 {
        bytes.push(0x67);
    }
    let (op, width) = r.pick(&[
        (0xA4u8, 1u8), // MOVSB
        (0xA5, 2),     // MOVSW
        (0xA5, 4),     // MOVSD
        (0xAA, 1),     // STOSB
        (0xAB, 2),
        (0xAB, 4),
        (0xAC, 1), // LODSB
        (0xAD, 2),
        (0xAE, 1), // SCASB
        (0xAF, 2),
        (0xA6, 1), // CMPSB
        (0xA7, 2),
        (0xA7, 4),
    ]);
    if width == 4 {
        bytes.push(0x66);
    }
    match r.below(5) {
        0 => {}
        1 | 2 => bytes.push(0xF3),
        _ => bytes.push(0xF2),
    }
    bytes.push(op);
    em.db(&bytes)?;
    em.a.cld()?;
    // SI/DI back into the data area (the item's invariant).
    em.a.mov(esi, DATA as u32 + r.below(PTR_SPAN as u64) as u32)?;
    em.a.mov(edi, DATA as u32 + r.below(PTR_SPAN as u64) as u32)?;
    if seg {
        em.a.pop(es)?;
    }
    Ok(())
}

fn stack(em: &mut Em, r: &mut Rng) -> R {
    match r.below(9) {
        0 => {
            em.a.push(r.pick(&R16))?;
            em.a.pop(r.pick(&W16))
        }
        1 => {
            em.a.push(r.pick(&R32))?;
            simple_inner(em, r)?;
            em.a.pop(r.pick(&W32))
        }
        2 => {
            // PUSH imm8/imm16, then pop into memory.
            em.a.push(imm_for(r, 16) as i16 as i32)?;
            let m = ea(em, r)?;
            em.a.pop(word_ptr(m))
        }
        3 => {
            let m = ea(em, r)?;
            em.a.push(word_ptr(m))?;
            em.a.pop(r.pick(&W16))
        }
        4 => {
            em.a.pusha()?;
            simple_inner(em, r)?;
            em.a.popa()
        }
        5 => {
            em.a.pushad()?;
            simple_inner(em, r)?;
            em.a.popad()
        }
        6 => {
            // ENTER with nesting levels (reads old frames through BP: any
            // value of BP reads memory of the stack segment).
            em.a.enter(r.range(0, 0x40) as u32 * 2, r.below(4) as u32)?;
            em.a.leave()
        }
        7 => {
            let s = r.pick(&[ds, es, fs, gs]);
            em.a.push(s)?;
            em.a.pop(s)
        }
        _ => {
            em.a.push(cs)?;
            em.a.pop(r.pick(&[ds, es, fs, gs]))
        }
    }
}

/// A simple item inside another, unless already nested deeply.
fn simple_inner(em: &mut Em, r: &mut Rng) -> R {
    if em.depth < 2 && r.chance(1, 2) {
        em.depth += 1;
        simple(em, &mut Rng::new(r.next_u64()))?;
        em.depth -= 1;
    }
    Ok(())
}

fn jcc(a: &mut CodeAssembler, cc: u64, l: CodeLabel) -> R {
    match cc {
        0 => a.jo(l),
        1 => a.jno(l),
        2 => a.jb(l),
        3 => a.jae(l),
        4 => a.je(l),
        5 => a.jne(l),
        6 => a.jbe(l),
        7 => a.ja(l),
        8 => a.js(l),
        9 => a.jns(l),
        10 => a.jp(l),
        11 => a.jnp(l),
        12 => a.jl(l),
        13 => a.jge(l),
        14 => a.jle(l),
        _ => a.jg(l),
    }
}

fn branch(em: &mut Em, r: &mut Rng) -> R {
    let mut over = em.a.create_label();
    let kind = r.below(6);
    match kind {
        0 => em.a.jmp(over)?,
        1 => em.a.jcxz(over)?,
        _ => jcc(&mut em.a, r.below(16), over)?,
    }
    // JCXZ only reaches 127 bytes: one item and short junk then.
    let short = kind == 1;
    if r.chance(1, 3) {
        // Junk that must never run (data in the code stream); sometimes
        // long enough to need a near branch.
        let n = if !short && r.chance(1, 4) {
            r.range(120, 160)
        } else {
            r.range(1, 8)
        };
        let junk: Vec<u8> = (0..n).map(|_| r.u8()).collect();
        // Unconditionally jumped over, so the junk really never runs.
        let mut past = em.a.create_label();
        em.a.jmp(past)?;
        em.db(&junk)?;
        em.a.set_label(&mut past)?;
        em.a.nop()?;
        simples(em, r, 0, 1)?;
    } else {
        simples(em, r, 1, if short { 1 } else { 3 })?;
    }
    em.a.set_label(&mut over)?;
    em.a.nop()
}

/// Closes a counted loop with LOOP/LOOPE/LOOPNE back to `top`: directly
/// when the body is one item (always within the rel8 reach), else through
/// a near JMP trampoline (`loop again; jmp out; again: jmp top`).
fn close_loop(em: &mut Em, r: &mut Rng, top: CodeLabel, direct: bool) -> R {
    let k = r.below(3);
    let lp = |a: &mut CodeAssembler, l: CodeLabel| match k {
        0 => a.loope(l),
        1 => a.loopne(l),
        _ => a.loop_(l),
    };
    if direct {
        return lp(&mut em.a, top);
    }
    let mut again = em.a.create_label();
    let mut out = em.a.create_label();
    lp(&mut em.a, again)?;
    em.a.jmp(out)?;
    em.a.set_label(&mut again)?;
    em.a.jmp(top)?;
    em.a.set_label(&mut out)?;
    em.a.nop()
}

fn loops(em: &mut Em, r: &mut Rng) -> R {
    let n = r.range(1, 12) as u32;
    let mut top = em.a.create_label();
    match r.below(5) {
        0 | 1 => {
            let direct = r.chance(1, 2);
            em.a.mov(cx, n)?;
            em.a.set_label(&mut top)?;
            em.a.push(cx)?;
            if direct {
                simples(em, r, 1, 1)?;
            } else {
                simples(em, r, 1, 3)?;
            }
            em.a.pop(cx)?;
            close_loop(em, r, top, direct)
        }
        2 => {
            em.a.mov(dx, n)?;
            em.a.set_label(&mut top)?;
            em.a.push(dx)?;
            simples(em, r, 1, 3)?;
            em.a.pop(dx)?;
            em.a.dec(dx)?;
            em.a.jnz(top)
        }
        3 => {
            // 32-bit counter with a 66h-prefixed compare, JB back.
            em.a.xor(ebp, ebp)?;
            em.a.set_label(&mut top)?;
            em.a.push(ebp)?;
            simples(em, r, 1, 3)?;
            em.a.pop(ebp)?;
            em.a.inc(ebp)?;
            em.a.cmp(ebp, n)?;
            em.a.jb(top)
        }
        _ => {
            // JCXZ guard, then a LOOP whose count may be 0 (64K turns of a
            // tiny body: the budget may end it).
            let mut out = em.a.create_label();
            em.a.mov(cx, if r.chance(1, 3) { 0 } else { n })?;
            em.a.jcxz(out)?;
            em.a.set_label(&mut top)?;
            em.a.add(ax, r.u16() as u32)?;
            em.a.loop_(top)?;
            em.a.set_label(&mut out)?;
            em.a.nop()
        }
    }
}

fn spin(em: &mut Em, r: &mut Rng) -> R {
    let mut top = em.a.create_label();
    match r.below(5) {
        0 => {
            // LOOP $ (CX = 0: 65,536 turns).
            em.a.mov(cx, if r.chance(1, 2) { 0 } else { r.u16() as u32 })?;
            em.a.set_label(&mut top)?;
            em.a.loop_(top)
        }
        1 | 2 => {
            // Wait for (the end of) vertical retrace.
            em.a.mov(dx, 0x3DAu32)?;
            em.a.set_label(&mut top)?;
            em.a.in_(al, dx)?;
            em.a.test(al, 8u32)?;
            if r.chance(1, 2) {
                em.a.jz(top)
            } else {
                em.a.jnz(top)
            }
        }
        3 => {
            // Wait for the next BIOS tick (interrupts on).
            em.a.sti()?;
            em.a.push(es)?;
            em.a.mov(ax, 0x40u32)?;
            em.a.mov(es, ax)?;
            em.a.mov(bx, word_ptr(0x6Cu32).es())?;
            em.a.set_label(&mut top)?;
            em.a.cmp(bx, word_ptr(0x6Cu32).es())?;
            em.a.je(top)?;
            em.a.pop(es)
        }
        _ => {
            em.a.mov(bx, r.range(1, 3000) as u32)?;
            em.a.set_label(&mut top)?;
            em.a.dec(bx)?;
            em.a.jnz(top)
        }
    }
}

fn call(em: &mut Em, r: &mut Rng) -> R {
    let k = r.below(2) as usize;
    let id = fixed::NEAR_SUBS + k;
    match r.below(4) {
        0 | 1 => em.a.call(em.lab(id)),
        2 => {
            let a = em.addr(id);
            em.db(&[0xBB, a as u8, (a >> 8) as u8])?; // mov bx, imm16
            em.a.call(bx)
        }
        _ => {
            // call word [si+d]: CS-relative pointer stored through DS.
            let d = r.below(0x78) as u8;
            let a = em.addr(id);
            em.db(&[0xC7, 0x44, d, a as u8, (a >> 8) as u8])?; // mov word [si+d], imm16
            em.db(&[0xFF, 0x54, d]) // call word [si+d]
        }
    }
}

/// Stores a far pointer `seg:off` (seg = CS + k paragraphs, off = label
/// address - 16k) at [si+d] through DS.
fn far_ptr(em: &mut Em, d: u8, id: usize, k: i16) -> R {
    let off = em.addr(id).wrapping_sub((k as u16).wrapping_mul(16));
    em.db(&[0xC7, 0x44, d, off as u8, (off >> 8) as u8])?; // mov word [si+d], off
    em.a.mov(ax, cs)?;
    em.a.add(ax, k as u16 as u32)?;
    em.db(&[0x89, 0x44, d + 2]) // mov [si+d+2], ax
}

/// CS aliases: CS+k with IP-16k reaches the same bytes (IP stays >= 0:
/// code starts at 100h and k*16 <= 100h).
const ALIASES: [i16; 5] = [0, 1, 2, 0x10, -1];

fn far(em: &mut Em, r: &mut Rng) -> R {
    let k = r.below(2) as usize;
    let id = fixed::FAR_SUBS + k;
    match r.below(4) {
        0 => {
            em.a.push(cs)?;
            em.a.call(em.lab(id))
        }
        1 => {
            let d = r.below(0x70) as u8;
            let alias = r.pick(&ALIASES);
            far_ptr(em, d, id, alias)?;
            // call far [si+d], with a DS: override or none.
            if r.chance(1, 2) {
                em.db(&[0x3E, 0xFF, 0x5C, d])
            } else {
                em.db(&[0xFF, 0x5C, d])
            }
        }
        2 if !em.alias && em.depth == 0 => {
            // CALL FAR ptr16:16 with the segment patched in just before
            // (a store into the next instruction of the same block).
            let alias = r.pick(&ALIASES);
            let off = em.addr(id).wrapping_sub((alias as u16).wrapping_mul(16));
            let at = em.label();
            em.a.mov(ax, cs)?;
            em.a.add(ax, alias as u16 as u32)?;
            let seg_at = em.addr(at) + 3;
            em.db(&[0x2E, 0xA3, seg_at as u8, (seg_at >> 8) as u8])?; // mov [cs:seg], ax
            em.here(at)?;
            em.db(&[0x9A, off as u8, (off >> 8) as u8, 0, 0])
        }
        _ => {
            // RETF as a call: push the return address, then the target.
            let ret = em.label();
            em.a.push(cs)?;
            let ra = em.addr(ret);
            em.db(&[0x68, ra as u8, (ra >> 8) as u8])?; // push imm16
            em.a.push(cs)?;
            let t = em.addr(id);
            em.db(&[0x68, t as u8, (t >> 8) as u8])?;
            em.a.retf()?;
            em.here(ret)?;
            em.a.nop()
        }
    }
}

fn alias(em: &mut Em, r: &mut Rng) -> R {
    if em.alias || em.depth > 0 {
        return simple(em, r);
    }
    let k = r.pick(&ALIASES[1..]);
    let inside = em.label();
    let out = em.label();
    match r.below(3) {
        0 => {
            // PUSH seg; PUSH off; RETF.
            em.a.mov(ax, cs)?;
            em.a.add(ax, k as u16 as u32)?;
            em.a.push(ax)?;
            let off = em.addr(inside).wrapping_sub((k as u16).wrapping_mul(16));
            em.db(&[0x68, off as u8, (off >> 8) as u8])?;
            em.a.retf()?;
        }
        1 => {
            let d = r.below(0x70) as u8;
            far_ptr(em, d, inside, k)?;
            em.db(&[0xFF, 0x6C, d])?; // jmp far [si+d]
        }
        _ => {
            // JMP FAR ptr16:16, segment patched just before.
            let at = em.label();
            em.a.mov(ax, cs)?;
            em.a.add(ax, k as u16 as u32)?;
            let seg_at = em.addr(at) + 3;
            em.db(&[0x2E, 0xA3, seg_at as u8, (seg_at >> 8) as u8])?;
            em.here(at)?;
            let off = em.addr(inside).wrapping_sub((k as u16).wrapping_mul(16));
            em.db(&[0xEA, off as u8, (off >> 8) as u8, 0, 0])?;
        }
    }
    em.here(inside)?;
    em.a.nop()?;
    em.alias = true;
    simples(em, r, 1, 4)?;
    em.alias = false;
    // Back to the canonical CS (CS - k).
    em.a.mov(ax, cs)?;
    em.a.sub(ax, k as u16 as u32)?;
    em.a.push(ax)?;
    let o = em.addr(out);
    em.db(&[0x68, o as u8, (o >> 8) as u8])?;
    em.a.retf()?;
    em.here(out)?;
    em.a.nop()
}

fn int(em: &mut Em, r: &mut Rng) -> R {
    match r.below(6) {
        0 | 1 => em.a.int(r.pick(&USER_VECTORS) as u32),
        // INT3 (CC), or INT 3 in its two-byte form.
        2 => em.db(if r.chance(1, 2) {
            &[0xCC]
        } else {
            &[0xCD, 0x03]
        }),
        3 => {
            // INTO after an overflow or not.
            if r.chance(1, 2) {
                em.a.mov(al, 0x7Fu32)?;
                em.a.add(al, 1u32)?;
            }
            em.db(&[0xCE])
        }
        4 => {
            // A simulated interrupt: PUSHF, far call through the IVT.
            let v = r.pick(&USER_VECTORS) as u32;
            em.a.push(es)?;
            em.a.xor(ax, ax)?;
            em.a.mov(es, ax)?;
            em.a.pushf()?;
            em.a.call(dword_ptr(v * 4).es())?;
            em.a.pop(es)
        }
        _ => {
            // PUSHF; PUSH CS; near call to the handler (IRET returns).
            if em.alias {
                return em.a.int(r.pick(&USER_VECTORS) as u32);
            }
            let h = fixed::H_USER + r.below(4) as usize;
            em.a.pushf()?;
            em.a.push(cs)?;
            em.a.call(em.lab(h))
        }
    }
}

fn trap(em: &mut Em, r: &mut Rng) -> R {
    if em.depth > 0 {
        return simple(em, r);
    }
    em.a.pushf()?;
    em.a.pop(ax)?;
    em.a.or(ax, 0x0100u32)?;
    em.a.push(ax)?;
    em.a.popf()?;
    simples(em, r, 1, 3)?;
    em.a.pushf()?;
    em.a.pop(ax)?;
    em.a.and(ax, 0xFEFFu32)?;
    em.a.push(ax)?;
    em.a.popf()
}

fn dos(em: &mut Em, r: &mut Rng) -> R {
    match r.below(12) {
        0 => {
            em.a.mov(dl, r.range(0x20, 0x7E) as u32)?;
            em.a.mov(ah, r.pick(&[2u32, 6]))?;
            em.a.int(0x21)
        }
        1 => {
            // AH=09h: a '$'-terminated string of data-area bytes.
            let n = r.range(0, 20) as i32;
            em.a.mov(byte_ptr(si + n), '$' as u32)?;
            em.a.mov(dx, si)?;
            em.a.mov(ah, 9u32)?;
            em.a.int(0x21)
        }
        2 => {
            // AH=40h to stdout or stderr.
            em.a.mov(bx, r.range(1, 2) as u32)?;
            em.a.mov(cx, r.range(0, 16) as u32)?;
            em.a.mov(dx, si)?;
            em.a.mov(ah, 0x40u32)?;
            em.a.int(0x21)
        }
        3 => {
            em.a.mov(
                ah,
                r.pick(&[0x19u32, 0x2A, 0x2C, 0x30, 0x0B, 0x62, 0x54, 0x4D, 0x0E]),
            )?;
            if r.chance(1, 4) {
                em.a.mov(al, r.u8() as u32)?;
            }
            em.a.int(0x21)
        }
        4 => {
            // AH=35h: ES:BX <- a vector (ES restored).
            em.a.push(es)?;
            em.a.mov(ax, 0x3500 | r.u8() as u32)?;
            em.a.int(0x21)?;
            em.a.pop(es)
        }
        5 if !em.alias => {
            // AH=25h: re-install one of the program's handlers.
            let k = r.below(4) as usize;
            let a = em.addr(fixed::H_USER + k);
            em.a.push(ds)?;
            em.a.push(cs)?;
            em.a.pop(ds)?;
            em.db(&[0xBA, a as u8, (a >> 8) as u8])?;
            em.a.mov(ax, 0x2500 | USER_VECTORS[k] as u32)?;
            em.a.int(0x21)?;
            em.a.pop(ds)
        }
        6 => {
            // AH=47h: current directory into [si] (64 bytes).
            em.a.mov(dl, 0u32)?;
            em.a.mov(ah, 0x47u32)?;
            em.a.int(0x21)
        }
        7 => {
            em.a.mov(ax, 0x3300u32)?;
            em.a.int(0x21)
        }
        8 => {
            // AH=36h disk free space of C:.
            em.a.mov(dl, r.range(0, 3) as u32)?;
            em.a.mov(ah, 0x36u32)?;
            em.a.int(0x21)
        }
        9 => {
            // IOCTL get device info of a standard handle.
            em.a.mov(bx, r.range(0, 2) as u32)?;
            em.a.mov(ax, 0x4400u32)?;
            em.a.int(0x21)
        }
        10 => {
            // AH=2Fh: ES:BX <- the DTA (ES restored).
            em.a.push(es)?;
            em.a.mov(ah, 0x2Fu32)?;
            em.a.int(0x21)?;
            em.a.pop(es)
        }
        _ => {
            // AH=48h with a huge request: fails with the largest block in BX.
            em.a.mov(bx, 0xFFFFu32)?;
            em.a.mov(ah, 0x48u32)?;
            em.a.int(0x21)
        }
    }
}

fn bios(em: &mut Em, r: &mut Rng) -> R {
    match r.below(8) {
        0 | 1 => {
            em.a.mov(al, r.range(0x07, 0x7E) as u32)?;
            em.a.mov(bx, r.below(16) as u32)?;
            em.a.mov(ah, 0x0Eu32)?;
            em.a.int(0x10)
        }
        2 => {
            em.a.mov(ah, r.pick(&[0x0Fu32, 0x03]))?;
            em.a.mov(bh, 0u32)?;
            em.a.int(0x10)
        }
        3 => {
            em.a.mov(dh, r.below(25) as u32)?;
            em.a.mov(dl, r.below(80) as u32)?;
            em.a.mov(bh, 0u32)?;
            em.a.mov(ah, 2u32)?;
            em.a.int(0x10)
        }
        4 => {
            // A mode set: text 3, CGA 4, EGA 0Dh or VGA 13h.
            em.a.mov(ax, r.pick(&[0x0003u32, 0x0004, 0x000D, 0x0013]))?;
            em.a.int(0x10)
        }
        5 => {
            em.a.mov(ah, 0u32)?;
            em.a.int(0x1A)
        }
        6 => em.a.int(r.pick(&[0x11u32, 0x12])),
        _ => {
            em.a.mov(ah, r.pick(&[1u32, 2]))?;
            em.a.int(0x16)
        }
    }
}

fn video(em: &mut Em, r: &mut Rng) -> R {
    let (segment, span) = if r.chance(1, 2) {
        (0xB800u32, 0xF9Eu32)
    } else {
        (0xA000, 0xFFFE)
    };
    em.a.push(es)?;
    em.a.mov(ax, segment)?;
    em.a.mov(es, ax)?;
    for _ in 0..r.range(1, 4) {
        let at = r.below(span as u64 + 1) as u32;
        match r.below(3) {
            0 => em.a.mov(word_ptr(at).es(), r.u16() as u32)?,
            1 => em.a.mov(byte_ptr(at).es(), r.u8() as u32)?,
            _ => {
                // Read back (the VGA latches load on a read in planar modes).
                em.a.mov(al, byte_ptr(at).es())?
            }
        }
    }
    em.a.pop(es)
}

fn port_in(em: &mut Em, r: &mut Rng) -> R {
    match r.below(7) {
        0 => em.a.in_(
            al,
            r.pick(&[0x40u32, 0x41, 0x42, 0x61, 0x21, 0x20, 0x60, 0x64]),
        ),
        1 => {
            // Latch the counter, read both bytes.
            em.a.mov(al, r.pick(&[0x00u32, 0x40, 0x80]))?;
            em.a.out(0x43u32, al)?;
            let p = 0x40 + (r.below(3) as u32);
            em.a.in_(al, p)?;
            em.a.mov(ah, al)?;
            em.a.in_(al, p)
        }
        2 => {
            em.a.mov(dx, r.pick(&[0x3DAu32, 0x3CC, 0x3C9, 0x388, 0x201, 0x3D5]))?;
            em.a.in_(al, dx)
        }
        3 => {
            // CMOS: index, then data (the RTC is a function of the clock).
            em.a.mov(
                al,
                r.pick(&[0u32, 2, 4, 6, 7, 8, 9, 0x0A, 0x0B, 0x0C, 0x0D, 0x10, 0x14]),
            )?;
            em.a.out(0x70u32, al)?;
            em.a.in_(al, 0x71u32)
        }
        4 => em.a.in_(ax, r.pick(&[0x40u32, 0x60])),
        5 => {
            // INSB/INSW into the data area: DI stays in it.
            em.a.mov(dx, r.pick(&[0x3DAu32, 0x40, 0x61]))?;
            em.a.cld()?;
            em.db(&[r.pick(&[0x6Cu8, 0x6D])])
        }
        _ => {
            // OUTSB: a data-area byte to a harmless port.
            em.a.mov(dx, r.pick(&[0x80u32, 0x3C8, 0x388]))?;
            em.a.cld()?;
            em.db(&[0x6E])
        }
    }
}

fn port_out(em: &mut Em, r: &mut Rng) -> R {
    match r.below(7) {
        0 => {
            // PIT channel 0 or 2 reprogrammed (channel 0: IRQ 0 rate).
            let (ctl, port) =
                r.pick(&[(0x34u32, 0x40u32), (0x36, 0x40), (0xB6, 0x42), (0xB4, 0x42)]);
            let d = r.range(0x200, 0xFFFF) as u32;
            em.a.mov(al, ctl)?;
            em.a.out(0x43u32, al)?;
            em.a.mov(al, d & 0xFF)?;
            em.a.out(port, al)?;
            em.a.mov(al, d >> 8)?;
            em.a.out(port, al)
        }
        1 => {
            // Speaker gate and data bits.
            em.a.in_(al, 0x61u32)?;
            em.a.xor(al, r.below(4) as u32)?;
            em.a.out(0x61u32, al)
        }
        2 => {
            // A DAC colour.
            em.a.mov(dx, 0x3C8u32)?;
            em.a.mov(al, r.u8() as u32)?;
            em.a.out(dx, al)?;
            em.a.inc(dx)?;
            for _ in 0..3 {
                em.a.mov(al, r.below(64) as u32)?;
                em.a.out(dx, al)?;
            }
            Ok(())
        }
        3 => {
            // OPL2: timer registers (status reads see them expire).
            em.a.mov(dx, 0x388u32)?;
            let (reg, val) = r.pick(&[(2u32, 0xF0u32), (3, 0xC0), (4, 0x21), (4, 0x42), (4, 0x80)]);
            em.a.mov(al, reg)?;
            em.a.out(dx, al)?;
            em.a.inc(dx)?;
            em.a.mov(al, val)?;
            em.a.out(dx, al)
        }
        4 => {
            // End of interrupt (possibly spurious).
            em.a.mov(al, 0x20u32)?;
            em.a.out(0x20u32, al)
        }
        5 => {
            // PIC mask: keyboard and the slave toggled (the timer stays on).
            em.a.in_(al, 0x21u32)?;
            em.a.xor(al, r.pick(&[0x02u32, 0x04, 0x10]))?;
            em.a.out(0x21u32, al)
        }
        _ => {
            // CRTC: cursor position registers.
            em.a.mov(dx, 0x3D4u32)?;
            em.a.mov(al, r.pick(&[0x0Eu32, 0x0F, 0x0A]))?;
            em.a.out(dx, al)?;
            em.a.inc(dx)?;
            em.a.mov(al, r.u8() as u32)?;
            em.a.out(dx, al)
        }
    }
}

fn x87(em: &mut Em, r: &mut Rng) -> R {
    use iced_x86::code_asm::{st0, st1, st2, st3};
    let sts = [st0, st1, st2, st3];
    match r.below(22) {
        0 => match r.below(7) {
            0 => em.a.fld1(),
            1 => em.a.fldz(),
            2 => em.a.fldpi(),
            3 => em.a.fldl2e(),
            4 => em.a.fldl2t(),
            5 => em.a.fldlg2(),
            _ => em.a.fldln2(),
        },
        1 => {
            let m = ea(em, r)?;
            match r.below(3) {
                0 => em.a.fld(dword_ptr(m)),
                1 => em.a.fld(qword_ptr(m)),
                _ => em.a.fld(tword_ptr(m)),
            }
        }
        2 => {
            let m = ea(em, r)?;
            match r.below(3) {
                0 => em.a.fild(word_ptr(m)),
                1 => em.a.fild(dword_ptr(m)),
                _ => em.a.fild(qword_ptr(m)),
            }
        }
        3 => {
            let m = ea(em, r)?;
            match r.below(6) {
                0 => em.a.fst(dword_ptr(m)),
                1 => em.a.fstp(qword_ptr(m)),
                2 => em.a.fstp(tword_ptr(m)),
                3 => em.a.fist(word_ptr(m)),
                4 => em.a.fistp(dword_ptr(m)),
                _ => em.a.fistp(qword_ptr(m)),
            }
        }
        4 => {
            let m = ea(em, r)?;
            match r.below(2) {
                0 => em.a.fbld(tword_ptr(m)),
                _ => em.a.fbstp(tword_ptr(m)),
            }
        }
        5 | 6 => {
            let (x, y) = (st0, r.pick(&sts));
            match r.below(6) {
                0 => em.a.fadd_2(x, y),
                1 => em.a.fsub_2(y, x),
                2 => em.a.fmul_2(x, y),
                3 => em.a.fdiv_2(x, y),
                4 => em.a.fsubr_2(x, y),
                _ => em.a.fdivr_2(y, x),
            }
        }
        7 => {
            let y = r.pick(&sts[1..]);
            match r.below(4) {
                0 => em.a.faddp(y, st0),
                1 => em.a.fmulp(y, st0),
                2 => em.a.fsubrp(y, st0),
                _ => em.a.fdivp(y, st0),
            }
        }
        8 => {
            let m = ea(em, r)?;
            match r.below(5) {
                0 => em.a.fadd(dword_ptr(m)),
                1 => em.a.fmul(qword_ptr(m)),
                2 => em.a.fidiv(word_ptr(m)),
                3 => em.a.fisub(dword_ptr(m)),
                _ => em.a.fdivr(dword_ptr(m)),
            }
        }
        9 => match r.below(9) {
            0 => em.a.fchs(),
            1 => em.a.fabs(),
            2 => em.a.fsqrt(),
            3 => em.a.frndint(),
            4 => em.a.fscale(),
            5 => em.a.fxtract(),
            6 => em.a.fprem(),
            7 => em.a.fprem1(),
            _ => em.a.fxam(),
        },
        10 => match r.below(8) {
            0 => em.a.f2xm1(),
            1 => em.a.fyl2x(),
            2 => em.a.fyl2xp1(),
            3 => em.a.fptan(),
            4 => em.a.fpatan(),
            5 => em.a.fsin(),
            6 => em.a.fcos(),
            _ => em.a.fsincos(),
        },
        11 => {
            let y = r.pick(&sts[1..]);
            match r.below(6) {
                0 => em.a.fcom_2(st0, y),
                1 => em.a.fcomp_2(st0, y),
                2 => em.a.fucom(st0, y),
                3 => em.a.fucompp(),
                4 => em.a.ftst(),
                _ => em.a.fcompp(),
            }
        }
        12 => {
            let m = ea(em, r)?;
            match r.below(3) {
                0 => em.a.fcom(dword_ptr(m)),
                1 => em.a.ficomp(word_ptr(m)),
                _ => em.a.fcomp(qword_ptr(m)),
            }
        }
        13 => {
            // Status word into AX, and into the flags.
            em.a.fnstsw(ax)?;
            if r.chance(1, 2) {
                em.a.sahf()?;
            }
            Ok(())
        }
        14 => {
            let m = ea(em, r)?;
            match r.below(2) {
                0 => em.a.fnstsw(word_ptr(m)),
                _ => em.a.fnstcw(word_ptr(m)),
            }
        }
        15 => {
            // A new control word: rounding and precision random, masks set.
            let cw = 0x037F | (r.below(4) as u32) << 10 | (r.pick(&[0u32, 2, 3]) << 8);
            em.a.mov(word_ptr(si + 0x40), cw)?;
            em.a.fldcw(word_ptr(si + 0x40))
        }
        16 => em.a.fxch(st0, r.pick(&sts[1..])),
        17 => match r.below(4) {
            0 => em.a.fld(r.pick(&sts)),
            1 => em.a.fst(r.pick(&sts)),
            2 => em.a.fstp(r.pick(&sts)),
            _ => em.a.ffree(r.pick(&sts)),
        },
        18 => match r.below(3) {
            0 => em.a.fincstp(),
            1 => em.a.fdecstp(),
            _ => em.a.fnclex(),
        },
        19 => {
            // Environment round trip through the data area.
            em.a.fnstenv(ptr(si))?;
            em.a.fldenv(ptr(si))
        }
        20 => {
            // FNSAVE (which re-initializes) then FRSTOR, 94 bytes at [si].
            em.a.fnsave(ptr(si))?;
            if r.chance(1, 2) {
                em.a.fld1()?;
            }
            em.a.frstor(ptr(si))
        }
        _ => em.a.fninit(),
    }
}

// --- self-modifying code ------------------------------------------------

fn patch_imm(em: &mut Em, r: &mut Rng) -> R {
    if em.alias || em.depth > 0 {
        return simple(em, r);
    }
    let id = em.label();
    em.here(id)?;
    em.imm_target(id);
    match r.below(3) {
        0 => em.db(&[0xB0, r.u8()]),         // mov al, imm8
        1 => em.db(&[0x04, r.u8()]),         // add al, imm8
        _ => em.db(&[0x05, r.u8(), r.u8()]), // add ax, imm16
    }
}

/// One-byte opcodes that may replace each other: INC/DEC of AX CX DX BX BP
/// (not SP, SI, DI), NOP, CLC, STC, CMC, CBW, CWD.
const SWAP_OPS: [u8; 16] = [
    0x40, 0x41, 0x42, 0x43, 0x45, 0x48, 0x49, 0x4A, 0x4B, 0x4D, 0x90, 0xF8, 0xF9, 0xF5, 0x98, 0x99,
];

fn patch_op(em: &mut Em, r: &mut Rng) -> R {
    if em.alias || em.depth > 0 {
        return simple(em, r);
    }
    let id = em.label();
    em.here(id)?;
    em.op_target(id);
    em.db(&[r.pick(&SWAP_OPS)])
}

fn smc(em: &mut Em, r: &mut Rng) -> R {
    if em.alias || em.depth > 0 {
        return simple(em, r);
    }
    let op = r.chance(1, 3);
    let t = em.patch_target(op);
    let (lo, hi) = (t as u8, (t >> 8) as u8);
    if op {
        // A one-byte opcode becomes another.
        em.db(&[0x2E, 0xC6, 0x06, lo, hi, r.pick(&SWAP_OPS)])
    } else {
        match r.below(4) {
            0 | 1 => em.db(&[0x2E, 0xC6, 0x06, lo, hi, r.u8()]), // mov byte [cs:t], imm8
            2 => em.db(&[0x2E, 0xFE, 0x06, lo, hi]),             // inc byte [cs:t]
            _ if em.pm => em.db(&[0x2E, 0xC6, 0x06, lo, hi, r.u8()]), // no ES load
            _ => {
                // xor byte [cs:t], al via ES = CS.
                em.a.push(es)?;
                em.a.push(cs)?;
                em.a.pop(es)?;
                em.db(&[0x26, 0x30, 0x06, lo, hi])?;
                em.a.pop(es)
            }
        }
    }
}

fn pm(em: &mut Em, r: &mut Rng) -> R {
    if em.alias || em.depth > 0 || em.pm {
        return simple(em, r);
    }
    em.a.pushf()?;
    em.a.cli()?;
    em.db(&[0x0F, 0x20, 0xC0])?; // mov eax, cr0
    em.db(&[0x0C, 0x01])?; // or al, 1
    em.db(&[0x0F, 0x22, 0xC0])?; // mov cr0, eax
    em.pm = true;
    for _ in 0..r.range(2, 9) {
        let mut ri = Rng::new(r.next_u64());
        let k = ri.weighted(PM_SAFE);
        item(em, &mut ri, k)?;
    }
    em.pm = false;
    em.db(&[0x0F, 0x20, 0xC0])?; // mov eax, cr0
    em.db(&[0x24, 0xFE])?; // and al, 0FEh
    em.db(&[0x0F, 0x22, 0xC0])?; // mov cr0, eax
    em.a.popf()
}

fn segs(em: &mut Em, r: &mut Rng) -> R {
    match r.below(5) {
        0 | 1 => {
            let s = r.pick(&[ds, es, fs, gs]);
            load_seg(em, s, r.pick(&SAFE_SEGS))
        }
        2 => {
            // LDS/LES/LFS/LGS of a pointer into the data area: the offset
            // goes to SI or DI (still a data pointer).
            let k = r.pick(&SAFE_SEGS);
            let off = DATA as u32 + r.below(PTR_SPAN as u64) as u32;
            em.a.mov(word_ptr(si + 0x60), off)?;
            em.a.mov(ax, cs)?;
            em.a.add(ax, k as u32)?;
            em.a.mov(word_ptr(si + 0x62), ax)?;
            match r.below(4) {
                0 => em.a.lds(si, dword_ptr(si + 0x60)),
                1 => em.a.les(di, dword_ptr(si + 0x60)),
                2 => em.a.lfs(di, dword_ptr(si + 0x60)),
                _ => em.a.lgs(di, dword_ptr(si + 0x60)),
            }
        }
        3 if em.depth == 0 => {
            // A new stack: MOV SS then MOV SP (interrupts shadowed) or LSS.
            let k = r.pick(&[0u16, 0x1000]);
            let new_sp = 0xE000 + r.below(0x7FF) as u32 * 2;
            if r.chance(1, 2) {
                em.a.mov(ax, cs)?;
                em.a.add(ax, k as u32)?;
                em.a.mov(ss, ax)?;
                em.a.mov(sp, new_sp)
            } else {
                em.a.mov(word_ptr(si + 0x60), new_sp)?;
                em.a.mov(ax, cs)?;
                em.a.add(ax, k as u32)?;
                em.a.mov(word_ptr(si + 0x62), ax)?;
                em.a.lss(sp, dword_ptr(si + 0x60))
            }
        }
        _ => {
            em.a.push(cs)?;
            em.a.pop(r.pick(&[ds, es]))
        }
    }
}

fn halt(em: &mut Em, r: &mut Rng) -> R {
    if em.depth > 0 {
        return simple(em, r);
    }
    em.a.sti()?;
    em.a.hlt()
}

/// The wrap line: a few simple items assembled on their own, copied so
/// that they run across CS:FFFFh into CS:0000h, ended by RET.
fn wrap(em: &mut Em, r: &mut Rng) -> R {
    if em.alias || em.depth > 0 {
        return simple(em, r);
    }
    // The line (position independent: no absolute CS addresses inside).
    let mut line = Em::sub(16)?;
    line.depth = 1;
    let mut head = Vec::new();
    for _ in 0..r.range(1, 3) {
        head.push(r.next_u64());
    }
    for &w in &head {
        simple(&mut line, &mut Rng::new(w))?;
    }
    let split = line.a.assemble(0).map(|b| b.len())?;
    for _ in 0..r.range(0, 2) {
        simple(&mut line, &mut Rng::new(r.next_u64()))?;
    }
    // A patchable immediate in the tail, then RET.
    line.db(&[0xB0, r.u8(), 0xC3])?;
    let bytes = line.a.assemble(0)?;
    let patch_at = bytes.len() - 2;
    // Where the boundary falls: exactly between two instructions, or
    // inside the last head instruction (it straddles FFFFh/0000h).
    let back = if r.chance(1, 3) && split > 1 {
        split - r.range(1, split as u64 - 1) as usize
    } else {
        split
    };
    let start = (0x1_0000 - back) as u16;
    if bytes.len() - back > 0xF0 {
        return simple(em, r);
    }
    let tail = bytes.len() - back; // bytes written at CS:0000
                                   // Save the PSP bytes the tail overwrites (words 0..tail).
    let words = tail.div_ceil(2) as u32;
    for w in 0..words {
        em.a.push(word_ptr(w * 2).cs())?;
    }
    // Copy the line from where it sits in the image (jumped over).
    let src = em.label();
    let mut past = em.a.create_label();
    em.a.jmp(past)?;
    em.here(src)?;
    em.db(&bytes)?;
    em.a.set_label(&mut past)?;
    em.a.push(es)?;
    em.a.push(cs)?;
    em.a.pop(es)?;
    let s = em.addr(src);
    em.db(&[0xBE, s as u8, (s >> 8) as u8])?; // mov si, src
    em.a.mov(di, start as u32)?;
    em.a.mov(cx, bytes.len() as u32)?;
    em.a.cld()?;
    em.db(&[0xF3, 0x2E, 0xA4])?; // rep movsb from CS: (DI wraps at FFFFh)
    em.a.pop(es)?;
    em.a.mov(esi, DATA as u32 + r.below(PTR_SPAN as u64) as u32)?;
    em.a.mov(edi, DATA as u32 + r.below(PTR_SPAN as u64) as u32)?;
    let twice = r.chance(1, 2);
    call_abs(em, start)?;
    if twice {
        // Patch the tail's immediate in place, then run the line again.
        let p = start.wrapping_add(patch_at as u16);
        em.db(&[0x2E, 0xC6, 0x06, p as u8, (p >> 8) as u8, r.u8()])?;
        call_abs(em, start)?;
    }
    for w in (0..words).rev() {
        em.a.pop(word_ptr(w * 2).cs())?;
    }
    Ok(())
}

/// `call near` to an absolute offset in CS (rel16 computed from this
/// call's own address).
fn call_abs(em: &mut Em, target: u16) -> R {
    let at = em.label();
    em.here(at)?;
    let rel = target.wrapping_sub(em.addr(at).wrapping_add(3));
    em.db(&[0xE8, rel as u8, (rel >> 8) as u8])
}

impl Em<'static> {
    /// A stand-alone emitter for code assembled separately (the wrap line):
    /// no named labels, no targets.
    fn sub(bits: u32) -> Result<Em<'static>, IcedError> {
        Ok(Em {
            a: CodeAssembler::new(bits)?,
            labels: Vec::new(),
            known: None,
            imm_targets: Vec::new(),
            op_targets: Vec::new(),
            depth: 1,
            alias: true,
            pm: false,
            patches: 0,
        })
    }
}
