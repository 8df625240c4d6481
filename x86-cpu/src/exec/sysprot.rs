//! Handlers for the protected-mode system instructions: SLDT, STR, LLDT,
//! LTR, VERR, VERW, LAR, LSL and ARPL (all #UD in real and V86 mode).
//!
//! Owns what these instructions read from descriptors and which flags they
//! set. The descriptor layout is `desc`'s, LDTR/TR loading `task`'s; this
//! module must not load segment registers.

use super::privileged;
use crate::bus::Bus;
use crate::desc::{self, sys, Desc};
use crate::op::{get, put, Flow, Op, Opnd};
use crate::{task, Cpu, Exception};
use shared_ir::flags::ZF;

type R = Result<Flow, Exception>;

/// #UD outside protected mode (real and V86 mode do not have these).
#[inline]
fn protected(cpu: &Cpu) -> Result<(), Exception> {
    if !cpu.pmode || cpu.v86 {
        return Err(Exception::UD);
    }
    Ok(())
}

/// SLDT (0) STR (1): the selector to r/m16 (zero-extended into a 32-bit
/// register); LLDT (2) LTR (3) from r/m16, at CPL 0.
pub fn h_sysreg<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    protected(cpu)?;
    match op.sub {
        0 | 1 => {
            let v = if op.sub == 0 {
                cpu.ldtr.sel
            } else {
                cpu.tr.sel
            };
            let d = op.loc_w(cpu, op.dst)?;
            put(cpu, bus, d, v as u32);
        }
        2 => {
            privileged(cpu)?;
            let sel = op.read(cpu, bus, op.dst)? as u16;
            task::load_ldt(cpu, bus, sel, Exception::GP)?;
        }
        _ => {
            privileged(cpu)?;
            let sel = op.read(cpu, bus, op.dst)? as u16;
            task::load_tr(cpu, bus, sel)?;
        }
    }
    Ok(Flow::Next)
}

/// The descriptor a selector names, if it lies inside its table (no fault:
/// these instructions answer with ZF).
fn lookup<B: Bus>(cpu: &Cpu, bus: &mut B, sel: u16) -> Option<Desc> {
    if desc::is_null(sel) {
        return None;
    }
    desc::entry_addr(cpu, sel).map(|a| desc::read_at(bus, a))
}

/// Whether the CPL and the selector's RPL may see the descriptor
/// (conforming code: always).
fn visible(cpu: &Cpu, sel: u16, d: &Desc) -> bool {
    d.conforming() || (d.dpl() >= cpu.cpl && d.dpl() >= desc::rpl(sel))
}

/// VERR (0) / VERW (1): ZF = the segment is readable / writable at the CPL.
pub fn h_verify<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    protected(cpu)?;
    let sel = op.read(cpu, bus, op.dst)? as u16;
    let ok = lookup(cpu, bus, sel).is_some_and(|d| {
        d.s()
            && visible(cpu, sel, &d)
            && if op.sub == 0 {
                d.readable()
            } else {
                d.writable()
            }
    });
    cpu.flags.set_mask(ZF, ok);
    Ok(Flow::Next)
}

/// LAR (0) / LSL (1): ZF = the descriptor is visible and of a type the
/// instruction accepts; then the access rights (masked 00FxFF00h) or the
/// byte limit go to the register.
pub fn h_larlsl<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    protected(cpu)?;
    let sel = op.read(cpu, bus, op.src)? as u16;
    let found = lookup(cpu, bus, sel).filter(|d| {
        let typ_ok = match d.sys_type() {
            None => true,
            Some(t) if op.sub == 0 => matches!(
                t,
                sys::TSS16
                    | sys::LDT
                    | sys::TSS16_BUSY
                    | sys::CALL16
                    | sys::TASK
                    | sys::TSS32
                    | sys::TSS32_BUSY
                    | sys::CALL32
            ),
            Some(t) => matches!(
                t,
                sys::TSS16 | sys::LDT | sys::TSS16_BUSY | sys::TSS32 | sys::TSS32_BUSY
            ),
        };
        typ_ok && visible(cpu, sel, d)
    });
    cpu.flags.set_mask(ZF, found.is_some());
    if let Some(d) = found {
        let v = if op.sub == 0 {
            d.hi & 0x00FF_FF00
        } else {
            d.limit()
        };
        let dst = op.loc(cpu, op.dst)?;
        let v = match op.dst {
            Opnd::R16(_) => v & 0xFFFF,
            _ => v,
        };
        put(cpu, bus, dst, v);
    }
    Ok(Flow::Next)
}

/// ARPL r/m16, r16: raises the destination's RPL to the source's (ZF = 1)
/// or leaves it (ZF = 0). Only a raise writes: an unchanged destination in
/// a read-only segment does not fault (the 386 reads, compares, and writes
/// only when it must).
pub fn h_arpl<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    protected(cpu)?;
    let d = op.loc(cpu, op.dst)?;
    let a = get(cpu, bus, d) as u16;
    let b = op.read(cpu, bus, op.src)? as u16;
    let raise = a & 3 < b & 3;
    if raise {
        let d = op.loc_w(cpu, op.dst)?;
        put(cpu, bus, d, ((a & !3) | (b & 3)) as u32);
    }
    cpu.flags.set_mask(ZF, raise);
    Ok(Flow::Next)
}
