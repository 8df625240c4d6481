//! Real-mode interrupt and exception delivery through the IVT.
//!
//! Owns the frame push (FLAGS, CS, IP), the IVT lookup with its limit check,
//! and the escalation rule: a fault while delivering becomes a double fault
//! (vector 8); a fault while delivering that is a triple fault, reported as a
//! stop, never a panic. It must not decode or execute instructions.

use super::l0::StopReason;
use super::{reg, seg, Cpu, Exception};
use crate::bus::Bus;
use shared_ir::flags::{IF, TF};

/// Pushes FLAGS, CS and `ret_ip`, clears IF and TF, and loads CS:IP from IVT
/// entry `vector`. All-or-nothing for registers: on a fault nothing changed
/// (the stack checks happen before the first write).
pub fn push_frame<B: Bus>(
    cpu: &mut Cpu,
    bus: &mut B,
    vector: u8,
    ret_ip: u32,
) -> Result<(), Exception> {
    let entry = vector as u32 * 4;
    if entry + 3 > cpu.idt_limit as u32 {
        return Err(Exception::GP);
    }
    let sp = cpu.r16(reg::ESP as u8);
    let mut slots = [0u32; 3];
    for (k, slot) in slots.iter_mut().enumerate() {
        let off = sp.wrapping_sub(2 * (k as u16 + 1));
        *slot = super::ea::check(cpu, seg::SS, off as u32, 2)?;
    }
    let vec_addr = cpu.idt_base.wrapping_add(entry);
    let new_ip = bus.read16(vec_addr);
    let new_cs = bus.read16(vec_addr.wrapping_add(2));
    bus.write16(slots[0], cpu.flags.bits() as u16);
    bus.write16(slots[1], cpu.sregs[seg::CS]);
    bus.write16(slots[2], ret_ip as u16);
    cpu.set_r16(reg::ESP as u8, sp.wrapping_sub(6));
    cpu.flags.set_mask(IF | TF, false);
    cpu.load_seg_real(seg::CS, new_cs);
    cpu.eip = new_ip as u32;
    Ok(())
}

/// Delivers a fault raised by the instruction at CS:`fault_ip` (registers are
/// already as before that instruction), escalating to #DF and triple fault.
pub fn deliver_fault<B: Bus>(
    cpu: &mut Cpu,
    bus: &mut B,
    e: Exception,
    fault_ip: u32,
) -> Result<(), StopReason> {
    let first = match push_frame(cpu, bus, e.0, fault_ip) {
        Ok(()) => return Ok(()),
        Err(e2) => e2,
    };
    if e != Exception::DF && push_frame(cpu, bus, Exception::DF.0, fault_ip).is_ok() {
        return Ok(());
    }
    Err(StopReason {
        cs: cpu.sregs[seg::CS],
        ip: fault_ip,
        bytes: Vec::new(),
        what: format!(
            "triple fault: vector {} could not be delivered (#{} while pushing the frame, SS:SP {:04X}:{:04X}, IVT limit {:#X})",
            e.0,
            first.0,
            cpu.sregs[seg::SS],
            cpu.r16(reg::ESP as u8),
            cpu.idt_limit
        ),
    })
}

/// Delivers an event (external interrupt, software INT, trap) whose return
/// address is `ret_ip`; a failure to push escalates as a fault at `ret_ip`.
pub fn deliver_event<B: Bus>(
    cpu: &mut Cpu,
    bus: &mut B,
    vector: u8,
    ret_ip: u32,
) -> Result<(), StopReason> {
    match push_frame(cpu, bus, vector, ret_ip) {
        Ok(()) => Ok(()),
        Err(e) => deliver_fault(cpu, bus, e, ret_ip),
    }
}
