//! Handlers for arithmetic, logic, shifts, multiply/divide, BCD and bit
//! instructions.
//!
//! Each handler fetches operands through the Op accessors, calls the pure ALU
//! helper from `shared_ir::alu` and writes the result and the flag update. The
//! arithmetic itself must not be written here: it belongs to `shared_ir::alu`,
//! so that every tier computes it the same way.

use crate::bus::{Bus, Width};
use crate::ea;
use crate::op::{get, put, Flow, Loc, Op, Opnd};
use crate::shape::{self, Shape};
use crate::{reg, Cpu, Exception};
use shared_ir::alu::{self, AluOp, BtOp, ShiftOp};

type R = Result<Flow, Exception>;

/// A handler-family selector taken from the Op's `sub` at run time (the
/// general instance); any other value is the selector itself, fixed when
/// the instance is chosen (`select`).
pub const FROM_SUB: u8 = 0xFF;

#[inline(always)]
fn sub_of<B>(fixed: u8, op: &Op<B>) -> u8 {
    if fixed == FROM_SUB {
        op.sub
    } else {
        fixed
    }
}

/// ADD OR ADC SBB AND SUB XOR CMP (`OP` = /reg order, or [`FROM_SUB`]);
/// destination shape `D`, source shape `S` (`crate::shape`).
pub fn h_alu<B: Bus, const OP: u8, const D: Shape, const S: Shape>(
    cpu: &mut Cpu,
    bus: &mut B,
    op: &Op<B>,
) -> R {
    let d = op.loc_as::<D>(cpu, op.dst)?;
    let a = get(cpu, bus, d);
    let b = op.read_as::<S>(cpu, bus, op.src)?;
    let aop = AluOp::from_index(sub_of(OP, op));
    let w = shape::width(D, op.w);
    let (r, f) = alu::binop(aop, w, a, b, cpu.flags.cf());
    f.apply(&mut cpu.flags);
    if aop != AluOp::Cmp {
        put(cpu, bus, d, r);
    }
    Ok(Flow::Next)
}

/// TEST (shapes as [`h_alu`]).
pub fn h_test<B: Bus, const D: Shape, const S: Shape>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let a = op.read_as::<D>(cpu, bus, op.dst)?;
    let b = op.read_as::<S>(cpu, bus, op.src)?;
    alu::logic(shape::width(D, op.w), a & b).apply(&mut cpu.flags);
    Ok(Flow::Next)
}

/// NOT (0), NEG (1), INC (2), DEC (3) (`U`, or [`FROM_SUB`]) on shape `D`.
pub fn h_unary<B: Bus, const U: u8, const D: Shape>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let d = op.loc_as::<D>(cpu, op.dst)?;
    let a = get(cpu, bus, d);
    let w = shape::width(D, op.w);
    let r = match sub_of(U, op) {
        0 => !a & w.mask(),
        s => {
            let (r, f) = match s {
                1 => alu::neg(w, a),
                2 => alu::inc(w, a),
                _ => alu::dec(w, a),
            };
            f.apply(&mut cpu.flags);
            r
        }
    };
    put(cpu, bus, d, r);
    Ok(Flow::Next)
}

/// ROL ROR RCL RCR SHL SHR SAL SAR (`sub` = /reg order) on shape `D`; the
/// count from `src` (shape `S`: an immediate or CL).
pub fn h_shift<B: Bus, const D: Shape, const S: Shape>(
    cpu: &mut Cpu,
    bus: &mut B,
    op: &Op<B>,
) -> R {
    let d = op.loc_as::<D>(cpu, op.dst)?;
    let a = get(cpu, bus, d);
    let count = op.read_as::<S>(cpu, bus, op.src)? & 0xFF;
    let w = shape::width(D, op.w);
    let (r, f) = alu::shift(ShiftOp::from_index(op.sub), w, a, count, cpu.flags.cf());
    f.apply(&mut cpu.flags);
    put(cpu, bus, d, r);
    Ok(Flow::Next)
}

/// SHLD (0) / SHRD (1): `dst`, fill from `src`, count from `src2`.
pub fn h_shxd<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let d = op.loc(cpu, op.dst)?;
    let a = get(cpu, bus, d);
    let b = op.read(cpu, bus, op.src)?;
    let count = op.read(cpu, bus, op.src2)? & 0xFF;
    let (r, f) = if op.sub == 0 {
        alu::shld(op.w, a, b, count)
    } else {
        alu::shrd(op.w, a, b, count)
    };
    f.apply(&mut cpu.flags);
    put(cpu, bus, d, r);
    Ok(Flow::Next)
}

/// The accumulator pair of a one-operand multiply/divide: (high, low).
fn acc_pair(cpu: &Cpu, w: Width) -> (u32, u32) {
    match w {
        Width::W8 => (cpu.r8(4) as u32, cpu.r8(0) as u32),
        Width::W16 => (cpu.r16(2) as u32, cpu.r16(0) as u32),
        Width::W32 => (cpu.regs[reg::EDX], cpu.regs[reg::EAX]),
    }
}

fn set_acc_pair(cpu: &mut Cpu, w: Width, hi: u32, lo: u32) {
    match w {
        Width::W8 => cpu.set_r16(0, (hi as u16) << 8 | lo as u16),
        Width::W16 => {
            cpu.set_r16(2, hi as u16);
            cpu.set_r16(0, lo as u16);
        }
        Width::W32 => {
            cpu.regs[reg::EDX] = hi;
            cpu.regs[reg::EAX] = lo;
        }
    }
}

/// MUL (0), IMUL (1), DIV (2), IDIV (3) on the accumulator with `dst`.
pub fn h_muldiv<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let s = op.read(cpu, bus, op.dst)?;
    let w = op.w;
    let (hi, lo) = acc_pair(cpu, w);
    match op.sub {
        0 | 1 => {
            let (l, h, f) = if op.sub == 0 {
                alu::mul(w, lo, s)
            } else {
                alu::imul(w, lo, s)
            };
            f.apply(&mut cpu.flags);
            set_acc_pair(cpu, w, h, l);
        }
        _ => {
            let res = if op.sub == 2 {
                alu::div(w, hi, lo, s)
            } else {
                alu::idiv(w, hi, lo, s)
            };
            let (q, r) = res.map_err(|_| Exception::DE)?;
            set_acc_pair(cpu, w, r, q);
        }
    }
    Ok(Flow::Next)
}

/// Two- and three-operand IMUL: `dst = src * src2` (src2 None: `dst * src`).
pub fn h_imul2<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let b = op.read(cpu, bus, op.src)?;
    let a = if op.src2 == Opnd::None {
        op.read(cpu, bus, op.dst)?
    } else {
        op.read(cpu, bus, op.src2)?
    };
    let (r, f) = alu::imul_trunc(op.w, a, b);
    f.apply(&mut cpu.flags);
    let d = op.loc(cpu, op.dst)?;
    put(cpu, bus, d, r);
    Ok(Flow::Next)
}

/// DAA (0) DAS (1) AAA (2) AAS (3) AAM (4) AAD (5) SALC (6).
pub fn h_bcd<B: Bus>(cpu: &mut Cpu, _bus: &mut B, op: &Op<B>) -> R {
    let ax = cpu.r16(0);
    let (cf, af) = (cpu.flags.cf(), cpu.flags.af());
    match op.sub {
        0 | 1 => {
            let (al, f) = if op.sub == 0 {
                alu::daa(ax as u8, cf, af)
            } else {
                alu::das(ax as u8, cf, af)
            };
            f.apply(&mut cpu.flags);
            cpu.set_r8(0, al);
        }
        2 | 3 => {
            let (v, f) = if op.sub == 2 {
                alu::aaa(ax, af)
            } else {
                alu::aas(ax, af)
            };
            f.apply(&mut cpu.flags);
            cpu.set_r16(0, v);
        }
        4 => {
            let (v, f) = alu::aam(ax as u8, op.imm as u8).map_err(|_| Exception::DE)?;
            f.apply(&mut cpu.flags);
            cpu.set_r16(0, v);
        }
        5 => {
            let (v, f) = alu::aad(ax, op.imm as u8);
            f.apply(&mut cpu.flags);
            cpu.set_r16(0, v);
        }
        _ => cpu.set_r8(0, if cf { 0xFF } else { 0 }),
    }
    Ok(Flow::Next)
}

/// CBW (0) CWDE (1) CWD (2) CDQ (3).
pub fn h_cbw<B: Bus>(cpu: &mut Cpu, _bus: &mut B, op: &Op<B>) -> R {
    match op.sub {
        0 => cpu.set_r16(0, cpu.r8(0) as i8 as i16 as u16),
        1 => cpu.regs[reg::EAX] = cpu.r16(0) as i16 as i32 as u32,
        2 => cpu.set_r16(2, if cpu.r16(0) & 0x8000 != 0 { 0xFFFF } else { 0 }),
        _ => cpu.regs[reg::EDX] = ((cpu.regs[reg::EAX] as i32) >> 31) as u32,
    }
    Ok(Flow::Next)
}

/// BT (0) BTS (1) BTR (2) BTC (3). A register bit offset with a memory operand
/// addresses a bit string: the offset's signed high part moves the address.
pub fn h_bt<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let bits = op.w.bits();
    let raw = op.read(cpu, bus, op.src)?;
    let (d, bit) = match (op.dst, op.src) {
        (Opnd::Mem(w), Opnd::R16(_) | Opnd::R32(_)) => {
            let signed = if w == Width::W16 {
                raw as u16 as i16 as i32
            } else {
                raw as i32
            };
            let delta = (signed >> (bits.trailing_zeros())) * (w.bytes() as i32);
            let mut off = op.ea_off(cpu).wrapping_add(delta as u32);
            if !op.ea.a32 {
                off &= 0xFFFF;
            }
            let lin = ea::check(cpu, op.ea.seg as usize, off, w.bytes())?;
            (Loc::Mem(lin, w), (signed as u32) & (bits - 1))
        }
        _ => (op.loc(cpu, op.dst)?, raw & (bits - 1)),
    };
    let v = get(cpu, bus, d);
    let bop = [BtOp::Bt, BtOp::Bts, BtOp::Btr, BtOp::Btc][op.sub as usize & 3];
    let (r, f) = alu::bt(bop, op.w, v, bit);
    f.apply(&mut cpu.flags);
    if bop != BtOp::Bt {
        put(cpu, bus, d, r);
    }
    Ok(Flow::Next)
}

/// BSF (0) / BSR (1): `dst` unchanged when the source is zero.
pub fn h_bscan<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let v = op.read(cpu, bus, op.src)?;
    let (r, f) = if op.sub == 0 {
        alu::bsf(op.w, v)
    } else {
        alu::bsr(op.w, v)
    };
    f.apply(&mut cpu.flags);
    if let Some(r) = r {
        let d = op.loc(cpu, op.dst)?;
        put(cpu, bus, d, r);
    }
    Ok(Flow::Next)
}

/// XADD: `tmp = dst + src; src = dst; dst = tmp`.
pub fn h_xadd<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let d = op.loc(cpu, op.dst)?;
    let a = get(cpu, bus, d);
    let s = op.loc(cpu, op.src)?;
    let b = get(cpu, bus, s);
    let (r, f) = alu::add(op.w, a, b, false);
    f.apply(&mut cpu.flags);
    put(cpu, bus, s, a);
    put(cpu, bus, d, r);
    Ok(Flow::Next)
}

/// CMPXCHG: compare the accumulator with `dst`; equal: `dst = src`, else the
/// accumulator takes `dst` (a 486 writes `dst` back either way).
pub fn h_cmpxchg<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let d = op.loc(cpu, op.dst)?;
    let a = get(cpu, bus, d);
    let acc_loc = match op.w {
        Width::W8 => Loc::R8(0),
        Width::W16 => Loc::R16(0),
        Width::W32 => Loc::R32(0),
    };
    let acc = get(cpu, bus, acc_loc);
    let (_, f) = alu::sub(op.w, acc, a, false);
    f.apply(&mut cpu.flags);
    if acc == a {
        let s = op.read(cpu, bus, op.src)?;
        put(cpu, bus, d, s);
    } else {
        put(cpu, bus, d, a);
        put(cpu, bus, acc_loc, a);
    }
    Ok(Flow::Next)
}

/// BSWAP: 32-bit byte reversal; the undefined 16-bit form clears the register's
/// low word (what 486 and later parts do).
pub fn h_bswap<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let d = op.loc(cpu, op.dst)?;
    let v = get(cpu, bus, d);
    let r = if op.w == Width::W32 {
        v.swap_bytes()
    } else {
        0
    };
    put(cpu, bus, d, r);
    Ok(Flow::Next)
}

/// CMPXCHG8B m64: EDX:EAX equal to the operand: ZF = 1 and the operand takes
/// ECX:EBX; otherwise ZF = 0 and EDX:EAX take the operand, which is written
/// back unchanged (the locked cycle writes either way). Only ZF changes.
pub fn h_cmpxchg8b<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let lin = ea::check(cpu, op.ea.seg as usize, op.ea_off(cpu), 8)?;
    let lo = bus.read32(lin);
    let hi = bus.read32(lin.wrapping_add(4));
    bus.probe_write(lin, 8);
    let equal = lo == cpu.regs[reg::EAX] && hi == cpu.regs[reg::EDX];
    let (nlo, nhi) = if equal {
        (cpu.regs[reg::EBX], cpu.regs[reg::ECX])
    } else {
        cpu.regs[reg::EAX] = lo;
        cpu.regs[reg::EDX] = hi;
        (lo, hi)
    };
    bus.write32(lin, nlo);
    bus.write32(lin.wrapping_add(4), nhi);
    cpu.flags.set_mask(shared_ir::flags::ZF, equal);
    Ok(Flow::Next)
}
