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
pub mod sse;
pub mod sse_fp;
pub mod sse_int;
pub mod sysprot;
pub mod system;

use super::interrupt;
use super::l0::{StepOutcome, StopReason};
use super::op::{Flow, Op};
use super::{ea, seg, Cpu, Exception};
use crate::bus::{Bus, MemFault, Width};
use shared_ir::flags::LazyFlags;

/// Register state saved before a handler runs, so a fault leaves the CPU as it
/// was before the instruction (faults are restartable). Memory is not saved:
/// handlers check every access before their first write, and a bus that
/// refuses an access drops every later write (see `bus`).
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

/// An exception raised by one dispatch, registers already restored to their
/// state before the instruction and the dispatch charged; not yet delivered.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Raised {
    pub e: Exception,
    /// Set when the bus refused an access (`e` is then #PF).
    pub mem: Option<MemFault>,
}

/// The mode-independent part of one dispatch: runs the handler, takes a
/// pending bus fault (which wins over whatever the handler answered: the
/// refused access came first), moves IP, charges the clock. With `PMODE` the
/// segment limits are part of the undo too (protected-mode segment loads
/// change them; real-mode loads never do).
#[inline(always)]
pub(crate) fn dispatch<B: Bus, const PMODE: bool>(
    cpu: &mut Cpu,
    bus: &mut B,
    op: &Op<B>,
) -> Result<StepOutcome, Raised> {
    let snap = Snapshot::take(cpu);
    let seg_end = if PMODE { cpu.seg_end } else { [0; 6] };
    // Handlers see the clock before this dispatch is charged: that value is
    // "the dispatch of this instruction" for device reads (invariant 3).
    let r = (op.handler)(cpu, bus, op);
    if let Some(f) = bus.take_fault() {
        snap.restore(cpu);
        if PMODE {
            cpu.seg_end = seg_end;
        }
        cpu.clock += 1;
        return Err(Raised {
            e: Exception::PF,
            mem: Some(f),
        });
    }
    let out = match r {
        Ok(Flow::Stop(what)) => {
            snap.restore(cpu);
            if PMODE {
                cpu.seg_end = seg_end;
            }
            return Ok(StepOutcome::Stop(stop_reason(cpu, op, what)));
        }
        Err(e) => {
            snap.restore(cpu);
            if PMODE {
                cpu.seg_end = seg_end;
            }
            cpu.clock += 1;
            return Err(Raised { e, mem: None });
        }
        Ok(flow) => complete(cpu, op, flow),
    };
    cpu.clock += 1;
    Ok(out)
}

/// Executes one Op as one dispatch: charges the clock, runs the handler, moves
/// IP, delivers a fault or the single-step trap through the IVT. L0 and L1
/// both call this (toyvm's real mode; flat user mode uses `user::run_op`).
#[inline]
pub fn run_op<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> StepOutcome {
    let trap = cpu.flags.tf();
    let if_before = cpu.flags.if_();
    let out = match dispatch::<B, false>(cpu, bus, op) {
        Ok(out) => out,
        Err(r) => {
            if let Some(f) = r.mem {
                // Paging's #PF names the address in CR2 (real mode cannot
                // fault this way; a paging bus can).
                cpu.cr2 = f.addr;
            }
            return fault(cpu, bus, r.e, &op.bytes[..op.len as usize]);
        }
    };
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
pub fn stop_reason<B>(cpu: &Cpu, op: &Op<B>, code: u8) -> StopReason {
    StopReason {
        cs: cpu.sregs[seg::CS],
        ip: cpu.eip,
        bytes: op.bytes[..op.len as usize].to_vec(),
        what: Flow::stop_message(code).to_string(),
    }
}

/// Where an instruction that completed with `flow` leaves the CPU: IP
/// past it unless it jumped or repeats (a REP element), halted after HLT,
/// the host service to run after the host-call op. The callers handle
/// `Flow::Stop` (and faults) themselves, before this.
#[inline(always)]
pub fn complete<B>(cpu: &mut Cpu, op: &Op<B>, flow: Flow) -> StepOutcome {
    match flow {
        Flow::Jump | Flow::Repeat => StepOutcome::Ok,
        Flow::Halt => {
            cpu.eip = next_ip(cpu, op);
            cpu.halted = true;
            StepOutcome::Halt
        }
        Flow::HostCall(n) => {
            cpu.eip = next_ip(cpu, op);
            StepOutcome::HostCall(n)
        }
        Flow::Next | Flow::Stop(_) => {
            cpu.eip = next_ip(cpu, op);
            StepOutcome::Ok
        }
    }
}

/// IP of the next instruction (IP wraps at 64 KiB in a 16-bit code segment).
#[inline(always)]
pub fn next_ip<B>(cpu: &Cpu, op: &Op<B>) -> u32 {
    cpu.eip.wrapping_add(op.len as u32) & cpu.ip_mask()
}

/// #GP unless the CPU runs at privilege level 0 (real mode always does).
#[inline(always)]
pub fn privileged(cpu: &Cpu) -> Result<(), Exception> {
    if cpu.cpl != 0 {
        return Err(Exception::GP);
    }
    Ok(())
}

/// #GP for an IOPL-sensitive instruction (CLI, STI) in protected mode when
/// CPL > IOPL (V86 mode runs at CPL 3, so there IOPL must be 3); real mode
/// always allows them.
#[inline(always)]
pub fn io_privileged(cpu: &Cpu) -> Result<(), Exception> {
    if cpu.pmode && cpu.cpl > cpu.iopl() {
        return Err(Exception::GP);
    }
    Ok(())
}

/// Whether a port access (IN, OUT, INS, OUTS) of `w` at `port` is allowed:
/// always in real mode and at CPL <= IOPL; otherwise (and always in V86
/// mode) the TSS's I/O permission bitmap decides (`task::io_bitmap`). Flat
/// user mode has no TSS: #GP.
#[inline(always)]
pub fn io_allowed<B: Bus>(cpu: &Cpu, bus: &mut B, port: u16, w: Width) -> Result<(), Exception> {
    if !cpu.pmode || (!cpu.v86 && cpu.cpl <= cpu.iopl()) {
        return Ok(());
    }
    if cpu.flat_user {
        return Err(Exception::GP);
    }
    crate::task::io_bitmap(cpu, bus, port, w.bytes())
}

/// Pushes a word or dword (by `o32`) on SS:(E)SP. SP wraps at 16 bits on a
/// 16-bit stack; a slot past the limit faults before anything is written.
#[inline]
pub fn push<B: Bus>(cpu: &mut Cpu, bus: &mut B, o32: bool, v: u32) -> Result<(), Exception> {
    let n: u32 = if o32 { 4 } else { 2 };
    let sp = cpu.stack_ptr_plus(n.wrapping_neg());
    let lin = ea::check(cpu, seg::SS, sp, n)?;
    if o32 {
        bus.write32(lin, v);
    } else {
        bus.write16(lin, v as u16);
    }
    cpu.set_stack_ptr(sp);
    Ok(())
}

/// Reads the stack slot `depth` bytes above (E)SP without popping.
#[inline]
pub fn peek<B: Bus>(cpu: &Cpu, bus: &mut B, o32: bool, depth: u32) -> Result<u32, Exception> {
    let sp = cpu.stack_ptr_plus(depth);
    if o32 {
        Ok(bus.read32(ea::check(cpu, seg::SS, sp, 4)?))
    } else {
        Ok(bus.read16(ea::check(cpu, seg::SS, sp, 2)?) as u32)
    }
}

/// Pops a word or dword (by `o32`) from SS:(E)SP.
#[inline]
pub fn pop<B: Bus>(cpu: &mut Cpu, bus: &mut B, o32: bool) -> Result<u32, Exception> {
    let v = peek(cpu, bus, o32, 0)?;
    let n = if o32 { 4 } else { 2 };
    cpu.set_stack_ptr(cpu.stack_ptr_plus(n));
    Ok(v)
}

/// Sets IP for a near branch: truncated to 16 bits with a 16-bit operand size;
/// a target past the CS limit is #GP at the branch.
#[inline(always)]
pub fn branch(cpu: &mut Cpu, o32: bool, target: u32) -> Result<Flow, Exception> {
    let t = if o32 { target } else { target & 0xFFFF };
    if t as u64 >= cpu.seg_end[seg::CS] {
        return Err(Exception::GP);
    }
    cpu.eip = t;
    Ok(Flow::Jump)
}
