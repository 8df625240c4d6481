//! SSE/SSE2 instructions (the [`Isa::PentiumSse2`] model): which encodings
//! the model accepts, XMM/memory operand access, and the data-movement,
//! logic, shuffle and state (LDMXCSR, STMXCSR, FXSAVE, FXRSTOR) handlers.
//!
//! Owns the SSE whitelist (`build`: legacy-encoded SSE and SSE2 forms on
//! XMM and general registers; MMX-register forms stop with a message, since
//! MMX is not modelled; SSE3+ and VEX forms are #UD, as CPUID does not offer
//! them), 16-byte alignment (#GP) and the rule that a faulting access leaves
//! the XMM state untouched (every read is checked before anything is
//! written; the dispatch undo covers only the general registers). Packed
//! integer semantics are in `sse_int`, floating point in `sse_fp`; this
//! module must not compute with floats.
//!
//! [`Isa::PentiumSse2`]: crate::Isa::PentiumSse2

use super::{data, sse_fp, sse_int, system};
use crate::bus::Bus;
use crate::ea;
use crate::op::{Flow, Op};
use crate::sse::MXCSR_MASK;
use crate::{Cpu, Exception};
use iced_x86::{CpuidFeature as CF, EncodingKind, Instruction, Mnemonic as M, OpKind, Register};

type R = Result<Flow, Exception>;

/// Index into `system::STOP_MESSAGES` for an MMX-register form.
pub const STOP_MMX: u8 = 2;
/// Index for an SSE instruction whose results are not modelled exactly.
pub const STOP_APPROX: u8 = 3;

/// Chooses the SSE handler for a decoded instruction; false = not an SSE or
/// SSE2 instruction of this model (the caller makes it #UD).
pub fn build<B: Bus>(ins: &Instruction, op: &mut Op<B>) -> bool {
    if ins.encoding() != EncodingKind::Legacy {
        return false;
    }
    let m = ins.mnemonic();
    let h: crate::op::Handler<B> = match m {
        M::Sfence | M::Lfence | M::Mfence | M::Pause => data::h_nop::<B>,
        M::Prefetchnta | M::Prefetcht0 | M::Prefetcht1 | M::Prefetcht2 => data::h_nop::<B>,
        M::Ldmxcsr | M::Stmxcsr | M::Fxsave | M::Fxrstor => h_state::<B>,
        _ if is_move(m) => h_move::<B>,
        M::Andps | M::Andpd | M::Pand | M::Andnps | M::Andnpd | M::Pandn => h_logic::<B>,
        M::Orps | M::Orpd | M::Por | M::Xorps | M::Xorpd | M::Pxor => h_logic::<B>,
        _ if is_shuffle(m) => h_shuffle::<B>,
        _ if sse_int::handles(m) => sse_int::h_int::<B>,
        _ if sse_fp::handles(m) => sse_fp::h_fp::<B>,
        M::Rcpps | M::Rcpss | M::Rsqrtps | M::Rsqrtss | M::Maskmovdqu => {
            op.sub = STOP_APPROX;
            system::h_stop::<B>
        }
        _ => return false,
    };
    // Same mnemonic, newer extension (PEXTRW r32 and m16 at 66 0F 3A 15 is
    // SSE4.1): only what CPUID offers runs.
    let offered = ins
        .cpuid_features()
        .iter()
        .all(|f| matches!(f, CF::SSE | CF::SSE2 | CF::FXSR | CF::MMX | CF::PAUSE));
    if !offered {
        return false;
    }
    let mmx = (0..ins.op_count())
        .any(|i| ins.op_kind(i) == OpKind::Register && ins.op_register(i).is_mm());
    if mmx {
        op.sub = STOP_MMX;
        op.handler = system::h_stop::<B>;
        return true;
    }
    op.handler = h;
    op.x87 = Some(Box::new(*ins));
    true
}

fn is_move(m: M) -> bool {
    matches!(
        m,
        M::Movaps
            | M::Movups
            | M::Movapd
            | M::Movupd
            | M::Movdqa
            | M::Movdqu
            | M::Movntps
            | M::Movntpd
            | M::Movntdq
            | M::Movnti
            | M::Movss
            | M::Movsd
            | M::Movd
            | M::Movq
            | M::Movlps
            | M::Movhps
            | M::Movlpd
            | M::Movhpd
            | M::Movhlps
            | M::Movlhps
            | M::Movmskps
            | M::Movmskpd
            | M::Pmovmskb
            | M::Pextrw
            | M::Pinsrw
    )
}

fn is_shuffle(m: M) -> bool {
    matches!(
        m,
        M::Shufps
            | M::Shufpd
            | M::Unpcklps
            | M::Unpckhps
            | M::Unpcklpd
            | M::Unpckhpd
            | M::Pshufd
            | M::Pshuflw
            | M::Pshufhw
            | M::Punpcklbw
            | M::Punpcklwd
            | M::Punpckldq
            | M::Punpcklqdq
            | M::Punpckhbw
            | M::Punpckhwd
            | M::Punpckhdq
            | M::Punpckhqdq
            | M::Packsswb
            | M::Packssdw
            | M::Packuswb
    )
}

/// The decoded instruction an SSE op carries.
#[inline]
pub(crate) fn insn<B>(op: &Op<B>) -> Result<&Instruction, Exception> {
    op.x87.as_deref().ok_or(Exception::UD)
}

/// XMM register number of an operand register.
#[inline]
pub(crate) fn xmm(r: Register) -> usize {
    r.number() & 7
}

/// Whether a 16-byte memory operand of this instruction must be aligned.
fn needs_align(m: M) -> bool {
    !matches!(m, M::Movups | M::Movupd | M::Movdqu)
}

/// Reads `n` bytes (1-16) of the memory operand, little-endian,
/// zero-extended. A 16-byte operand must be 16-byte aligned unless `m` is
/// an unaligned move (#GP). A refused bus access is #PF before anything
/// changed.
pub(crate) fn mem_read<B: Bus>(
    cpu: &Cpu,
    bus: &mut B,
    op: &Op<B>,
    n: u32,
    m: M,
) -> Result<u128, Exception> {
    let lin = ea::check(cpu, op.ea.seg as usize, op.ea_off(cpu), n)?;
    if n == 16 && needs_align(m) && lin & 15 != 0 {
        return Err(Exception::GP);
    }
    let mut v = 0u128;
    if n % 4 == 0 {
        for i in 0..n / 4 {
            v |= (bus.read32(lin.wrapping_add(4 * i)) as u128) << (32 * i);
        }
    } else {
        for i in 0..n {
            v |= (bus.read8(lin.wrapping_add(i)) as u128) << (8 * i);
        }
    }
    if bus.fault_pending() {
        return Err(Exception::PF);
    }
    Ok(v)
}

/// Writes the low `n` bytes of `v` to the memory operand (alignment as for
/// [`mem_read`]); nothing is written unless every byte can be.
pub(crate) fn mem_write<B: Bus>(
    cpu: &Cpu,
    bus: &mut B,
    op: &Op<B>,
    n: u32,
    v: u128,
    m: M,
) -> Result<(), Exception> {
    let lin = ea::check_w(cpu, op.ea.seg as usize, op.ea_off(cpu), n)?;
    if n == 16 && needs_align(m) && lin & 15 != 0 {
        return Err(Exception::GP);
    }
    bus.probe_write(lin, n);
    if bus.fault_pending() {
        return Err(Exception::PF);
    }
    if n % 4 == 0 {
        for i in 0..n / 4 {
            bus.write32(lin.wrapping_add(4 * i), (v >> (32 * i)) as u32);
        }
    } else {
        for i in 0..n {
            bus.write8(lin.wrapping_add(i), (v >> (8 * i)) as u8);
        }
    }
    Ok(())
}

/// Reads operand `i`: an XMM register (all 128 bits), a general register,
/// an 8-bit immediate, or memory of the instruction's memory size.
pub(crate) fn read<B: Bus>(
    cpu: &Cpu,
    bus: &mut B,
    op: &Op<B>,
    ins: &Instruction,
    i: u32,
) -> Result<u128, Exception> {
    match ins.op_kind(i) {
        OpKind::Register => {
            let r = ins.op_register(i);
            Ok(if r.is_xmm() {
                cpu.sse.xmm[xmm(r)]
            } else {
                cpu.regs[r.number() & 7] as u128
            })
        }
        OpKind::Memory => mem_read(
            cpu,
            bus,
            op,
            ins.memory_size().size() as u32,
            ins.mnemonic(),
        ),
        _ => Ok(ins.immediate(i) as u128),
    }
}

/// Whether operand `i` is memory.
#[inline]
pub(crate) fn is_mem(ins: &Instruction, i: u32) -> bool {
    ins.op_kind(i) == OpKind::Memory
}

fn lo64(v: u128) -> u128 {
    v & u64::MAX as u128
}

/// The moves (no floating-point exceptions, no flags).
pub fn h_move<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let ins = insn(op)?;
    let m = ins.mnemonic();
    let src = read(cpu, bus, op, ins, 1)?;
    // Operand 0 as a register (or None for a store).
    let dst_reg = (ins.op0_kind() == OpKind::Register).then(|| ins.op0_register());
    let Some(d) = dst_reg else {
        // A store: how many bytes of the source register go to memory.
        let n = match m {
            M::Movss | M::Movd | M::Movnti => 4,
            M::Movsd | M::Movq | M::Movlps | M::Movlpd => 8,
            M::Movhps | M::Movhpd => {
                return mem_write(cpu, bus, op, 8, src >> 64, m).map(|_| Flow::Next)
            }
            M::Pextrw => return Err(Exception::UD),
            _ => 16,
        };
        mem_write(cpu, bus, op, n, src, m)?;
        return Ok(Flow::Next);
    };
    if d.is_gpr32() {
        let v = match m {
            M::Movd => src as u32,
            M::Movmskps => (0..4)
                .map(|i| ((src >> (32 * i + 31)) as u32 & 1) << i)
                .sum(),
            M::Movmskpd => (0..2)
                .map(|i| ((src >> (64 * i + 63)) as u32 & 1) << i)
                .sum(),
            M::Pmovmskb => (0..16)
                .map(|i| ((src >> (8 * i + 7)) as u32 & 1) << i)
                .sum(),
            M::Pextrw => {
                let imm = ins.immediate(2) as u32 & 7;
                (src >> (16 * imm)) as u32 & 0xFFFF
            }
            _ => return Err(Exception::UD),
        };
        cpu.regs[d.number() & 7] = v;
        return Ok(Flow::Next);
    }
    let x = xmm(d);
    let old = cpu.sse.xmm[x];
    let mem = is_mem(ins, 1);
    cpu.sse.xmm[x] = match m {
        M::Movss if !mem => (old & !0xFFFF_FFFFu128) | (src & 0xFFFF_FFFF),
        M::Movsd if !mem => (old & !(u64::MAX as u128)) | lo64(src),
        M::Movss | M::Movd => src & 0xFFFF_FFFF,
        M::Movsd | M::Movq => lo64(src),
        M::Movlps | M::Movlpd => (old & !(u64::MAX as u128)) | lo64(src),
        M::Movhps | M::Movhpd | M::Movlhps => lo64(old) | (lo64(src) << 64),
        M::Movhlps => (old & !(u64::MAX as u128)) | (src >> 64),
        M::Pinsrw => {
            let sh = 16 * (ins.immediate(2) as u32 & 7);
            (old & !(0xFFFFu128 << sh)) | ((src & 0xFFFF) << sh)
        }
        _ => src,
    };
    Ok(Flow::Next)
}

/// AND, ANDN, OR, XOR over all 128 bits (the PS, PD and integer forms are
/// the same operation).
pub fn h_logic<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let ins = insn(op)?;
    let s = read(cpu, bus, op, ins, 1)?;
    let x = xmm(ins.op0_register());
    let d = cpu.sse.xmm[x];
    cpu.sse.xmm[x] = match ins.mnemonic() {
        M::Andps | M::Andpd | M::Pand => d & s,
        M::Andnps | M::Andnpd | M::Pandn => !d & s,
        M::Orps | M::Orpd | M::Por => d | s,
        _ => d ^ s,
    };
    Ok(Flow::Next)
}

/// Lane `i` of `size` bytes.
#[inline]
pub(crate) fn lane(v: u128, size: u32, i: u32) -> u64 {
    let bits = 8 * size;
    let m = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    (v >> (bits * i)) as u64 & m
}

/// Builds a vector from `16 / size` lanes.
#[inline]
pub(crate) fn from_lanes(size: u32, mut f: impl FnMut(u32) -> u64) -> u128 {
    let bits = 8 * size;
    let m = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    (0..16 / size).fold(0u128, |v, i| v | ((f(i) & m) as u128) << (bits * i))
}

/// Interleaves the low (`high` false) or high halves of d and s in lanes of
/// `size` bytes: d0 s0 d1 s1 ...
fn unpack(d: u128, s: u128, size: u32, high: bool) -> u128 {
    let half = 8 / size;
    let base = if high { half } else { 0 };
    from_lanes(size, |i| {
        let j = base + i / 2;
        if i % 2 == 0 {
            lane(d, size, j)
        } else {
            lane(s, size, j)
        }
    })
}

fn sat_i8(v: i64) -> u64 {
    v.clamp(-128, 127) as u8 as u64
}
fn sat_u8(v: i64) -> u64 {
    v.clamp(0, 255) as u64
}
fn sat_i16(v: i64) -> u64 {
    v.clamp(-32768, 32767) as u16 as u64
}

/// Shuffles, unpacks and packs.
pub fn h_shuffle<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let ins = insn(op)?;
    let s = read(cpu, bus, op, ins, 1)?;
    let x = xmm(ins.op0_register());
    let d = cpu.sse.xmm[x];
    let imm = if ins.op_count() > 2 {
        ins.immediate(2) as u32
    } else {
        0
    };
    let sel = |v: u128, size: u32, k: u32| lane(v, size, (imm >> (2 * k)) & 3);
    cpu.sse.xmm[x] = match ins.mnemonic() {
        M::Shufps => from_lanes(4, |i| if i < 2 { sel(d, 4, i) } else { sel(s, 4, i) }),
        M::Shufpd => from_lanes(8, |i| {
            if i == 0 {
                lane(d, 8, imm & 1)
            } else {
                lane(s, 8, (imm >> 1) & 1)
            }
        }),
        M::Pshufd => from_lanes(4, |i| sel(s, 4, i)),
        M::Pshuflw => from_lanes(2, |i| if i < 4 { sel(s, 2, i) } else { lane(s, 2, i) }),
        M::Pshufhw => from_lanes(2, |i| {
            if i < 4 {
                lane(s, 2, i)
            } else {
                lane(s, 2, 4 + ((imm >> (2 * (i - 4))) & 3))
            }
        }),
        M::Unpcklps | M::Punpckldq => unpack(d, s, 4, false),
        M::Unpckhps | M::Punpckhdq => unpack(d, s, 4, true),
        M::Unpcklpd | M::Punpcklqdq => unpack(d, s, 8, false),
        M::Unpckhpd | M::Punpckhqdq => unpack(d, s, 8, true),
        M::Punpcklbw => unpack(d, s, 1, false),
        M::Punpckhbw => unpack(d, s, 1, true),
        M::Punpcklwd => unpack(d, s, 2, false),
        M::Punpckhwd => unpack(d, s, 2, true),
        M::Packsswb => from_lanes(1, |i| {
            let v = if i < 8 {
                lane(d, 2, i)
            } else {
                lane(s, 2, i - 8)
            };
            sat_i8(v as u16 as i16 as i64)
        }),
        M::Packuswb => from_lanes(1, |i| {
            let v = if i < 8 {
                lane(d, 2, i)
            } else {
                lane(s, 2, i - 8)
            };
            sat_u8(v as u16 as i16 as i64)
        }),
        _ => from_lanes(2, |i| {
            let v = if i < 4 {
                lane(d, 4, i)
            } else {
                lane(s, 4, i - 4)
            };
            sat_i16(v as u32 as i32 as i64)
        }),
    };
    Ok(Flow::Next)
}

/// FXSAVE image offsets (the 32-bit format).
mod fx {
    pub const FCW: usize = 0;
    pub const FSW: usize = 2;
    pub const FTW: usize = 4;
    pub const FOP: usize = 6;
    pub const FIP: usize = 8;
    pub const FCS: usize = 12;
    pub const FDP: usize = 16;
    pub const FDS: usize = 20;
    pub const MXCSR: usize = 24;
    pub const MXCSR_MASK: usize = 28;
    pub const ST: usize = 32;
    pub const XMM: usize = 160;
    pub const SIZE: u32 = 512;
}

/// The 512-byte FXSAVE image of the x87 and SSE state (ST(i) in stack
/// order, the abridged tag byte: 1 = not empty; bytes 288-511 zero).
pub fn fxsave_image(cpu: &Cpu) -> [u8; 512] {
    let f = &cpu.fpu;
    let mut b = [0u8; 512];
    b[fx::FCW..fx::FCW + 2].copy_from_slice(&f.control.to_le_bytes());
    b[fx::FSW..fx::FSW + 2].copy_from_slice(&f.status_word().to_le_bytes());
    b[fx::FTW] = (0..8).fold(0u8, |t, p| {
        t | (((f.tag(p) != crate::fpu::tag::EMPTY) as u8) << p)
    });
    b[fx::FOP..fx::FOP + 2].copy_from_slice(&f.fop.to_le_bytes());
    b[fx::FIP..fx::FIP + 4].copy_from_slice(&f.fip.to_le_bytes());
    b[fx::FCS..fx::FCS + 2].copy_from_slice(&f.fcs.to_le_bytes());
    b[fx::FDP..fx::FDP + 4].copy_from_slice(&f.fdp.to_le_bytes());
    b[fx::FDS..fx::FDS + 2].copy_from_slice(&f.fds.to_le_bytes());
    b[fx::MXCSR..fx::MXCSR + 4].copy_from_slice(&cpu.sse.mxcsr.to_le_bytes());
    b[fx::MXCSR_MASK..fx::MXCSR_MASK + 4].copy_from_slice(&MXCSR_MASK.to_le_bytes());
    for i in 0..8 {
        let o = fx::ST + 16 * i;
        b[o..o + 10].copy_from_slice(&f.st(i).to_le_bytes());
    }
    for i in 0..8 {
        let o = fx::XMM + 16 * i;
        b[o..o + 16].copy_from_slice(&cpu.sse.xmm[i].to_le_bytes());
    }
    b
}

/// Loads an FXSAVE image (the caller checked MXCSR's reserved bits). Tags
/// of non-empty registers are recomputed from their contents, as FXRSTOR
/// does.
pub fn fxrstor_image(cpu: &mut Cpu, b: &[u8; 512]) {
    let w16 = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
    let w32 = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
    let f = &mut cpu.fpu;
    f.set_control(w16(fx::FCW));
    f.status = w16(fx::FSW);
    f.update_es();
    f.fop = w16(fx::FOP) & 0x7FF;
    f.fip = w32(fx::FIP);
    f.fcs = w16(fx::FCS);
    f.fdp = w32(fx::FDP);
    f.fds = w16(fx::FDS);
    let ftw = b[fx::FTW];
    for i in 0..8 {
        let o = fx::ST + 16 * i;
        let mut r = [0u8; 10];
        r.copy_from_slice(&b[o..o + 10]);
        let p = f.phys(i);
        f.regs[p] = crate::fpu::softfloat::F80::from_le_bytes(r);
    }
    for p in 0..8 {
        let t = if ftw >> p & 1 == 0 {
            crate::fpu::tag::EMPTY
        } else {
            crate::fpu::tag_of(f.regs[p])
        };
        f.set_tag(p, t);
    }
    cpu.sse.mxcsr = w32(fx::MXCSR);
    for i in 0..8 {
        let o = fx::XMM + 16 * i;
        let mut x = [0u8; 16];
        x.copy_from_slice(&b[o..o + 16]);
        cpu.sse.xmm[i] = u128::from_le_bytes(x);
    }
}

/// LDMXCSR, STMXCSR, FXSAVE, FXRSTOR. Loading a reserved MXCSR bit is #GP;
/// FXSAVE/FXRSTOR need a 16-byte aligned operand (#GP).
pub fn h_state<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let ins = insn(op)?;
    let m = ins.mnemonic();
    match m {
        M::Ldmxcsr => {
            let v = mem_read(cpu, bus, op, 4, m)? as u32;
            if v & !MXCSR_MASK != 0 {
                return Err(Exception::GP);
            }
            cpu.sse.mxcsr = v;
        }
        M::Stmxcsr => mem_write(cpu, bus, op, 4, cpu.sse.mxcsr as u128, m)?,
        M::Fxsave => {
            let lin = ea::check_w(cpu, op.ea.seg as usize, op.ea_off(cpu), fx::SIZE)?;
            if lin & 15 != 0 {
                return Err(Exception::GP);
            }
            bus.probe_write(lin, fx::SIZE);
            if bus.fault_pending() {
                return Err(Exception::PF);
            }
            for (i, v) in fxsave_image(cpu).iter().enumerate() {
                bus.write8(lin.wrapping_add(i as u32), *v);
            }
        }
        _ => {
            let lin = ea::check(cpu, op.ea.seg as usize, op.ea_off(cpu), fx::SIZE)?;
            if lin & 15 != 0 {
                return Err(Exception::GP);
            }
            let mut b = [0u8; 512];
            for (i, v) in b.iter_mut().enumerate() {
                *v = bus.read8(lin.wrapping_add(i as u32));
            }
            if bus.fault_pending() {
                return Err(Exception::PF);
            }
            let mx = u32::from_le_bytes([b[24], b[25], b[26], b[27]]);
            if mx & !MXCSR_MASK != 0 {
                return Err(Exception::GP);
            }
            fxrstor_image(cpu, &b);
        }
    }
    Ok(Flow::Next)
}
