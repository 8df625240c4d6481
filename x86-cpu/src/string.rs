//! String instructions (MOVS CMPS SCAS LODS STOS INS OUTS) with REP, REPE and
//! REPNE, one element per dispatch.
//!
//! Owns the element step and the REP bookkeeping: a zero count retires the
//! instruction at once; otherwise one element runs, the count drops, and IP
//! stays on the instruction (prefixes included) until the count or the
//! CMPS/SCAS condition ends it, so an interrupt can land between elements as
//! on hardware. It must not loop over elements inside one dispatch.

use super::op::{Flow, Op, Rep};
use super::{ea, reg, seg, Cpu, Exception};
use crate::bus::{Bus, Width};
use shared_ir::alu;

type R = Result<Flow, Exception>;

#[inline(always)]
fn index(cpu: &Cpu, r: usize, a32: bool) -> u32 {
    if a32 {
        cpu.regs[r]
    } else {
        cpu.regs[r] & 0xFFFF
    }
}

#[inline(always)]
fn advance(cpu: &mut Cpu, r: usize, a32: bool, delta: u32) {
    if a32 {
        cpu.regs[r] = cpu.regs[r].wrapping_add(delta);
    } else {
        let v = (cpu.regs[r] as u16).wrapping_add(delta as u16);
        cpu.set_r16(r as u8, v);
    }
}

#[inline(always)]
fn load<B: Bus>(bus: &mut B, lin: u32, w: Width) -> u32 {
    match w {
        Width::W8 => bus.read8(lin) as u32,
        Width::W16 => bus.read16(lin) as u32,
        Width::W32 => bus.read32(lin),
    }
}

#[inline(always)]
fn store<B: Bus>(bus: &mut B, lin: u32, w: Width, v: u32) {
    match w {
        Width::W8 => bus.write8(lin, v as u8),
        Width::W16 => bus.write16(lin, v as u16),
        Width::W32 => bus.write32(lin, v),
    }
}

#[inline(always)]
fn acc(cpu: &Cpu, w: Width) -> u32 {
    cpu.regs[reg::EAX] & w.mask()
}

/// One element of string op `sub` (MOVS 0, CMPS 1, SCAS 2, LODS 3, STOS 4,
/// INS 5, OUTS 6). Every access is checked before anything is written.
fn element<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> Result<(), Exception> {
    let (w, a32) = (op.w, op.ea.a32);
    let n = w.bytes();
    let delta = if cpu.flags.df() { n.wrapping_neg() } else { n };
    let src_seg = op.ea.seg as usize;
    let si = index(cpu, reg::ESI, a32);
    let di = index(cpu, reg::EDI, a32);
    match op.sub {
        0 => {
            let s = ea::check(cpu, src_seg, si, n)?;
            let d = ea::check_w(cpu, seg::ES, di, n)?;
            let v = load(bus, s, w);
            store(bus, d, w, v);
            advance(cpu, reg::ESI, a32, delta);
            advance(cpu, reg::EDI, a32, delta);
        }
        1 => {
            let s = ea::check(cpu, src_seg, si, n)?;
            let d = ea::check(cpu, seg::ES, di, n)?;
            let (a, b) = (load(bus, s, w), load(bus, d, w));
            alu::sub(w, a, b, false).1.apply(&mut cpu.flags);
            advance(cpu, reg::ESI, a32, delta);
            advance(cpu, reg::EDI, a32, delta);
        }
        2 => {
            let d = ea::check(cpu, seg::ES, di, n)?;
            let b = load(bus, d, w);
            alu::sub(w, acc(cpu, w), b, false).1.apply(&mut cpu.flags);
            advance(cpu, reg::EDI, a32, delta);
        }
        3 => {
            let s = ea::check(cpu, src_seg, si, n)?;
            let v = load(bus, s, w);
            match w {
                Width::W8 => cpu.set_r8(0, v as u8),
                Width::W16 => cpu.set_r16(0, v as u16),
                Width::W32 => cpu.regs[reg::EAX] = v,
            }
            advance(cpu, reg::ESI, a32, delta);
        }
        4 => {
            let d = ea::check_w(cpu, seg::ES, di, n)?;
            store(bus, d, w, acc(cpu, w));
            advance(cpu, reg::EDI, a32, delta);
        }
        5 => {
            super::exec::io_allowed(cpu, bus, cpu.r16(reg::EDX as u8), w)?;
            let d = ea::check_w(cpu, seg::ES, di, n)?;
            let v = bus.io_read(cpu.r16(reg::EDX as u8), w, cpu.clock) & w.mask();
            store(bus, d, w, v);
            advance(cpu, reg::EDI, a32, delta);
        }
        _ => {
            super::exec::io_allowed(cpu, bus, cpu.r16(reg::EDX as u8), w)?;
            let s = ea::check(cpu, src_seg, si, n)?;
            let v = load(bus, s, w);
            if bus.fault_pending() {
                return Err(Exception::PF);
            }
            bus.io_write(cpu.r16(reg::EDX as u8), w, v, cpu.clock);
            advance(cpu, reg::ESI, a32, delta);
        }
    }
    Ok(())
}

/// A string instruction, with or without a REP prefix: one element per call.
pub fn h_string<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    if op.rep == Rep::None {
        element(cpu, bus, op)?;
        return Ok(Flow::Next);
    }
    let a32 = op.ea.a32;
    let count = index(cpu, reg::ECX, a32);
    if count == 0 {
        return Ok(Flow::Next);
    }
    element(cpu, bus, op)?;
    advance(cpu, reg::ECX, a32, u32::MAX);
    if count == 1 {
        return Ok(Flow::Next);
    }
    // CMPS and SCAS also end on the REPE/REPNE condition.
    if op.sub == 1 || op.sub == 2 {
        let zf = cpu.flags.zf();
        if (op.rep == Rep::RepE && !zf) || (op.rep == Rep::RepNe && zf) {
            return Ok(Flow::Next);
        }
    }
    Ok(Flow::Repeat)
}
