//! Running one pre-decoded [`Op`]: the per-dispatch contract every engine shares.
//!
//! Owns the dispatch accounting (one clock tick per dispatch), the undo of a
//! faulting instruction's register effects, fault delivery, the single-step
//! trap, and the helpers handlers share (stack slots, IP arithmetic). The
//! handler families live in the submodules; this module must not contain
//! instruction semantics of its own.

pub mod alu;
pub mod control;
pub mod data;
pub mod system;

use super::interrupt;
use super::l0::{StepOutcome, StopReason};
use super::op::{Flow, Op};
use super::{ea, reg, seg, Cpu, Exception};
use crate::bus::Bus;
use shared_ir::flags::LazyFlags;

/// Register state saved before a handler runs, so a fault leaves the CPU as it
/// was before the instruction (faults are restartable). Memory is not saved:
/// handlers check every access before their first write.
#[derive(Clone, Copy)]
struct Snapshot {
    regs: [u32; 8],
    sregs: [u16; 6],
    sbase: [u32; 6],
    eip: u32,
    flags: LazyFlags,
}

impl Snapshot {
    #[inline(always)]
    fn take(cpu: &Cpu) -> Snapshot {
        Snapshot {
            regs: cpu.regs,
            sregs: cpu.sregs,
            sbase: cpu.sbase,
            eip: cpu.eip,
            flags: cpu.flags,
        }
    }
    #[inline(always)]
    fn restore(&self, cpu: &mut Cpu) {
        cpu.regs = self.regs;
        cpu.sregs = self.sregs;
        cpu.sbase = self.sbase;
        cpu.eip = self.eip;
        cpu.flags = self.flags;
    }
}

/// Executes one Op as one dispatch: charges the clock, runs the handler, moves
/// IP, delivers a fault or the single-step trap. L0 and L1 both call this.
#[inline]
pub fn run_op<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> StepOutcome {
    let snap = Snapshot::take(cpu);
    let trap = cpu.flags.tf();
    let if_before = cpu.flags.if_();
    // Handlers see the clock before this dispatch is charged: that value is
    // "the dispatch of this instruction" for device reads (invariant 3).
    let out = match (op.handler)(cpu, bus, op) {
        Ok(Flow::Next) => {
            cpu.eip = next_ip(cpu, op);
            StepOutcome::Ok
        }
        Ok(Flow::Jump) | Ok(Flow::Repeat) => StepOutcome::Ok,
        Ok(Flow::Halt) => {
            cpu.eip = next_ip(cpu, op);
            cpu.halted = true;
            StepOutcome::Halt
        }
        Ok(Flow::HostCall(n)) => {
            cpu.eip = next_ip(cpu, op);
            StepOutcome::HostCall(n)
        }
        Ok(Flow::Stop(what)) => {
            snap.restore(cpu);
            return StepOutcome::Stop(stop_reason(cpu, op, what));
        }
        Err(e) => {
            snap.restore(cpu);
            cpu.clock += 1;
            return fault(cpu, bus, e, &op.bytes[..op.len as usize]);
        }
    };
    cpu.clock += 1;
    // The single-step trap follows the instruction within the same dispatch,
    // except after MOV SS / POP SS, whose shadow also covers debug traps.
    // STI's shadow (the only one that turns IF on) covers interrupts only.
    let sti_shadow = cpu.shadow && !if_before && cpu.flags.if_();
    if trap && (!cpu.shadow || sti_shadow) && out == StepOutcome::Ok {
        let ip = cpu.eip;
        if let Err(s) = interrupt::deliver_event(cpu, bus, Exception::DB.0, ip) {
            return StepOutcome::Stop(s);
        }
    }
    out
}

/// Delivers a fault of the instruction at CS:IP (registers already restored).
pub fn fault<B: Bus>(cpu: &mut Cpu, bus: &mut B, e: Exception, bytes: &[u8]) -> StepOutcome {
    let ip = cpu.eip;
    match interrupt::deliver_fault(cpu, bus, e, ip) {
        Ok(()) => StepOutcome::Ok,
        Err(mut s) => {
            s.bytes = bytes.to_vec();
            StepOutcome::Stop(s)
        }
    }
}

/// A stop report for the Op at CS:IP.
pub fn stop_reason<B>(cpu: &Cpu, op: &Op<B>, what: String) -> StopReason {
    StopReason {
        cs: cpu.sregs[seg::CS],
        ip: cpu.eip,
        bytes: op.bytes[..op.len as usize].to_vec(),
        what,
    }
}

/// IP of the next instruction (real-mode IP wraps at 64 KiB).
#[inline(always)]
pub fn next_ip<B>(cpu: &Cpu, op: &Op<B>) -> u32 {
    cpu.eip.wrapping_add(op.len as u32) & 0xFFFF
}

/// Pushes a word or dword (by `o32`) on SS:SP. SP wraps at 16 bits; a slot
/// straddling offset 0xFFFF faults before anything is written.
#[inline]
pub fn push<B: Bus>(cpu: &mut Cpu, bus: &mut B, o32: bool, v: u32) -> Result<(), Exception> {
    let n = if o32 { 4 } else { 2 };
    let sp = cpu.r16(reg::ESP as u8).wrapping_sub(n);
    let lin = ea::check(cpu, seg::SS, sp as u32, n as u32)?;
    if o32 {
        bus.write32(lin, v);
    } else {
        bus.write16(lin, v as u16);
    }
    cpu.set_r16(reg::ESP as u8, sp);
    Ok(())
}

/// Reads the stack slot `depth` bytes above SP without popping.
#[inline]
pub fn peek<B: Bus>(cpu: &Cpu, bus: &mut B, o32: bool, depth: u16) -> Result<u32, Exception> {
    let sp = cpu.r16(reg::ESP as u8).wrapping_add(depth);
    if o32 {
        Ok(bus.read32(ea::check(cpu, seg::SS, sp as u32, 4)?))
    } else {
        Ok(bus.read16(ea::check(cpu, seg::SS, sp as u32, 2)?) as u32)
    }
}

/// Pops a word or dword (by `o32`) from SS:SP.
#[inline]
pub fn pop<B: Bus>(cpu: &mut Cpu, bus: &mut B, o32: bool) -> Result<u32, Exception> {
    let v = peek(cpu, bus, o32, 0)?;
    let n = if o32 { 4 } else { 2 };
    let sp = cpu.r16(reg::ESP as u8).wrapping_add(n);
    cpu.set_r16(reg::ESP as u8, sp);
    Ok(v)
}

/// Sets IP for a near branch: truncated to 16 bits with a 16-bit operand size;
/// with a 32-bit one a target past the CS limit is #GP at the branch.
#[inline(always)]
pub fn branch(cpu: &mut Cpu, o32: bool, target: u32) -> Result<Flow, Exception> {
    let t = if o32 { target } else { target & 0xFFFF };
    if t > 0xFFFF {
        return Err(Exception::GP);
    }
    cpu.eip = t;
    Ok(Flow::Jump)
}
