//! Flat 32-bit user mode: how a user-mode engine (mainemu) sets the CPU up and
//! steps it with its own bus.
//!
//! Owns the flat setup (CS/DS/ES/SS flat 4 GiB, FS = the TEB, CPL 3, the
//! Pentium instruction set with SSE2), the step that reports exceptions to the engine
//! instead of delivering them (there is no IDT in user mode: the engine turns
//! an [`Event`] into an SEH exception or a system call), and the instruction
//! fetch that faults only on the bytes the instruction really has. The
//! instruction semantics are the same handlers toyvm runs; this module must
//! not contain any of its own.

use crate::bus::{Access, Bus, MemFault};
use crate::decode::{self, Mode, MAX_LEN};
use crate::exec::{self, next_ip};
use crate::l0::{StepOutcome, StopReason};
use crate::op::{Flow, Op};
use crate::{cr0, seg, Cpu, Exception, Isa, FLAT_SEG_END};

/// What a user-mode engine chooses when it creates a thread's CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlatSetup {
    pub eip: u32,
    pub esp: u32,
    /// Linear address of the thread's TEB (FS base).
    pub fs_base: u32,
    /// FS limit (Windows NT uses 0xFFF: one page of TEB).
    pub fs_limit: u32,
}

/// The selectors Windows NT uses for user mode (RPL 3).
pub mod selector {
    pub const CODE: u16 = 0x1B;
    pub const DATA: u16 = 0x23;
    pub const TEB: u16 = 0x3B;
}

impl Cpu {
    /// A CPU in flat 32-bit user mode: CS = 1Bh, DS = ES = SS = 23h (base 0,
    /// limit 4 GiB - 1, 32-bit), FS = 3Bh at the TEB, GS null, CPL 3, IOPL 0,
    /// EFLAGS = 202h (IF set), CR0 = PE MP ET NE PG, x87 as after FNINIT,
    /// clock 0, the Pentium instruction set with SSE and SSE2, MXCSR = 1F80h.
    pub fn new_flat32(s: &FlatSetup) -> Cpu {
        let mut cpu = Cpu::new();
        cpu.pmode = true;
        cpu.flat_user = true;
        cpu.cpl = 3;
        cpu.code32 = true;
        cpu.stack32 = true;
        cpu.isa = Isa::PentiumSse2;
        cpu.cr0 = cr0::PE | cr0::MP | cr0::ET | cr0::NE | 0x8000_0000;
        for sreg in [seg::ES, seg::CS, seg::SS, seg::DS] {
            cpu.sregs[sreg] = if sreg == seg::CS {
                selector::CODE
            } else {
                selector::DATA
            };
            cpu.sbase[sreg] = 0;
            cpu.seg_end[sreg] = FLAT_SEG_END;
            cpu.slimit[sreg] = u32::MAX;
            // Present, DPL 3, accessed; code readable or data writable;
            // 32-bit, page granular.
            cpu.sattr[sreg] = if sreg == seg::CS { 0xCFB } else { 0xCF3 };
            cpu.seg_wend[sreg] = if sreg == seg::CS { 0 } else { FLAT_SEG_END };
        }
        cpu.sregs[seg::FS] = selector::TEB;
        cpu.sbase[seg::FS] = s.fs_base;
        cpu.seg_end[seg::FS] = s.fs_limit as u64 + 1;
        cpu.seg_wend[seg::FS] = s.fs_limit as u64 + 1;
        cpu.slimit[seg::FS] = s.fs_limit;
        cpu.sattr[seg::FS] = 0x4F3;
        crate::segs::set_null(&mut cpu, seg::GS, 0);
        cpu.regs[crate::reg::ESP] = s.esp;
        cpu.eip = s.eip;
        cpu.set_eflags(0x202);
        cpu
    }
}

/// Whether an event is a fault (the CPU is as before the instruction, EIP on
/// it) or a trap (the instruction retired, EIP past it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    Fault,
    /// INT n, INT3, INTO with OF set, INT1, or the single-step trap.
    Trap,
}

/// An exception the CPU raised in user mode, for the engine to handle. The
/// dispatch has been charged (invariant 1: a faulting instruction costs one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Event {
    /// The vector: 0 #DE, 1 #DB / single step, 3 INT3, 4 INTO, 5 #BR, 6 #UD,
    /// 7 #NM, 12 #SS, 13 #GP, 14 #PF (with [`Event::mem`]); for INT n, n.
    pub vector: u8,
    pub kind: EventKind,
    /// EIP of the instruction that raised it.
    pub eip: u32,
    /// EIP after it (the return address a trap frame would hold).
    pub next_eip: u32,
    /// The refused access of a #PF: linear address and kind.
    pub mem: Option<MemFault>,
}

/// What one user-mode step did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UserOutcome {
    /// One dispatch: an instruction retired or one REP element ran.
    Ok,
    /// An exception for the engine (see [`Event`]).
    Exception(Event),
    /// Execution cannot go on (an inexpressible instruction); nothing changed.
    Stop(StopReason),
}

/// Reads the instruction at CS:EIP. A fetch the bus refuses faults only if
/// the instruction needs the refused byte (its bytes after the last good one
/// are zero-filled, and decoding from them must not reach the refused one).
#[inline]
fn fetch_decode<B: Bus>(cpu: &Cpu, bus: &mut B, mode: Mode) -> Result<Op<B>, MemFault> {
    let bytes = crate::l0::fetch(cpu, bus);
    let op = decode::decode_in::<B>(&bytes, cpu.eip, mode);
    if let Some(f) = bus.take_fault() {
        let start = cpu.linear(seg::CS, cpu.eip);
        let good = f.addr.wrapping_sub(start) as usize;
        if good < MAX_LEN && op.len as usize > good {
            return Err(MemFault {
                addr: f.addr,
                access: Access::Execute,
            });
        }
        if good >= MAX_LEN {
            // The fault is not the fetch's (it was pending before the step).
            return Err(f);
        }
    }
    Ok(op)
}

/// Executes exactly one instruction (or one REP element) at CS:EIP in the
/// CPU's current mode, reporting exceptions instead of delivering them.
pub fn step<B: Bus>(cpu: &mut Cpu, bus: &mut B) -> UserOutcome {
    cpu.shadow = false;
    let mode = Mode::of(cpu);
    let op = match fetch_decode(cpu, bus, mode) {
        Ok(op) => op,
        Err(f) => {
            cpu.clock += 1;
            return UserOutcome::Exception(Event {
                vector: Exception::PF.0,
                kind: EventKind::Fault,
                eip: cpu.eip,
                next_eip: cpu.eip,
                mem: Some(f),
            });
        }
    };
    run_op(cpu, bus, &op)
}

/// Whether an op's opcode byte (past its prefixes) is a software interrupt:
/// INT3 (CC), INT n (CD), INTO (CE), INT1 (F1).
fn is_soft_int<B>(op: &Op<B>) -> bool {
    let b = &op.bytes[..op.len as usize];
    let first = b.iter().copied().find(|x| {
        !matches!(
            x,
            0x26 | 0x2E | 0x36 | 0x3E | 0x64 | 0x65 | 0x66 | 0x67 | 0xF0 | 0xF2 | 0xF3
        )
    });
    matches!(first, Some(0xCC | 0xCD | 0xCE | 0xF1))
}

/// Runs one Op as one dispatch in user mode: the same dispatch as toyvm's
/// `exec::run_op` (handlers, undo, clock), with exceptions and the
/// single-step trap returned as [`Event`]s. An engine with its own block
/// cache calls this with its cached Ops.
pub fn run_op<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> UserOutcome {
    let trap = cpu.flags.tf();
    let eip = cpu.eip;
    let r = exec::dispatch::<B, true>(cpu, bus, op);
    outcome(cpu, op, trap, eip, r)
}

/// [`run_op`] without the register snapshot that undoes a fault, for an Op
/// whose instruction [`crate::flow::Facts::no_undo`] says touches no memory
/// and changes nothing before its last possible fault: the outcome, the
/// state and the clock are `run_op`'s. A threaded tier calls this for such
/// ops (the snapshot is most of a simple op's dispatch cost).
#[inline(always)]
pub fn run_op_no_undo<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> UserOutcome {
    let trap = cpu.flags.tf();
    let eip = cpu.eip;
    let r = (op.handler)(cpu, bus, op);
    if retired_in_line(cpu, bus, op, trap, &r) {
        return UserOutcome::Ok;
    }
    no_undo_rest(cpu, bus, op, trap, eip, r)
}

/// [`run_op`] with a snapshot of the general registers, EIP and the flags
/// only, for an Op whose instruction [`crate::flow::Facts::light`] says
/// writes no segment state (selector, base, limit): the rest of what
/// `run_op`'s snapshot restores. Outcome, state and clock are `run_op`'s.
#[inline(always)]
pub fn run_op_light<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> UserOutcome {
    let trap = cpu.flags.tf();
    let eip = cpu.eip;
    let regs = cpu.regs;
    let flags = cpu.flags;
    let r = (op.handler)(cpu, bus, op);
    if retired_in_line(cpu, bus, op, trap, &r) {
        return UserOutcome::Ok;
    }
    light_rest(cpu, bus, op, trap, eip, regs, flags, r)
}

/// The common case of the snapshot-light dispatches, in line: the handler
/// answered `r` and the op retired without a fault or a trap (what
/// `exec::complete` does for `Next`, `Jump` and `Repeat`). False leaves
/// the dispatch to the `_rest` functions, untouched.
#[inline(always)]
fn retired_in_line<B: Bus>(
    cpu: &mut Cpu,
    bus: &B,
    op: &Op<B>,
    trap: bool,
    r: &Result<Flow, Exception>,
) -> bool {
    if trap || bus.fault_pending() {
        return false;
    }
    match r {
        Ok(Flow::Next) => cpu.eip = next_ip(cpu, op),
        Ok(Flow::Jump | Flow::Repeat) => {}
        _ => return false,
    }
    cpu.clock += 1;
    true
}

/// The rest of [`run_op_light`] after the handler answered `r`, for a tier
/// that runs the handler itself and handles a retirement (no pending fault,
/// `Next`, `Jump` or `Repeat`, TF clear) in line: `exec::dispatch`'s undo
/// with the small snapshot (`eip`, `regs`, `flags`: before the handler),
/// then `run_op`'s outcome (`trap`: TF before the handler).
#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub fn light_rest<B: Bus>(
    cpu: &mut Cpu,
    bus: &mut B,
    op: &Op<B>,
    trap: bool,
    eip: u32,
    regs: [u32; 8],
    flags: shared_ir::flags::LazyFlags,
    r: Result<Flow, Exception>,
) -> UserOutcome {
    rest(cpu, bus, op, trap, eip, Some((regs, flags)), r)
}

/// The rest of [`run_op_no_undo`]: faults, stops, the trap, other flows
/// (for a tier that runs the handler itself, as [`light_rest`]).
#[cold]
#[inline(never)]
pub fn no_undo_rest<B: Bus>(
    cpu: &mut Cpu,
    bus: &mut B,
    op: &Op<B>,
    trap: bool,
    eip: u32,
    r: Result<Flow, Exception>,
) -> UserOutcome {
    rest(cpu, bus, op, trap, eip, None, r)
}

/// Both `_rest` functions: a fault, an exception or a stop restores the
/// small snapshot `undo` if there is one (a no-undo op changed nothing
/// before its fault), other flows complete; then `run_op`'s outcome.
#[inline(always)]
fn rest<B: Bus>(
    cpu: &mut Cpu,
    bus: &mut B,
    op: &Op<B>,
    trap: bool,
    eip: u32,
    undo: Option<([u32; 8], shared_ir::flags::LazyFlags)>,
    r: Result<Flow, Exception>,
) -> UserOutcome {
    let restore = |cpu: &mut Cpu| {
        if let Some((regs, flags)) = undo {
            cpu.regs = regs;
            cpu.eip = eip;
            cpu.flags = flags;
        }
    };
    let r = if let Some(f) = bus.take_fault() {
        restore(cpu);
        cpu.clock += 1;
        Err(exec::Raised {
            e: Exception::PF,
            mem: Some(f),
        })
    } else {
        match r {
            Ok(Flow::Stop(what)) => {
                restore(cpu);
                Ok(StepOutcome::Stop(exec::stop_reason(cpu, op, what)))
            }
            Err(e) => {
                restore(cpu);
                cpu.clock += 1;
                Err(exec::Raised { e, mem: None })
            }
            Ok(flow) => {
                let out = exec::complete(cpu, op, flow);
                cpu.clock += 1;
                Ok(out)
            }
        }
    };
    outcome(cpu, op, trap, eip, r)
}

/// The user-mode outcome of one dispatch (`eip` and `trap`: EIP and TF
/// before it).
#[inline(always)]
fn outcome<B>(
    cpu: &mut Cpu,
    op: &Op<B>,
    trap: bool,
    eip: u32,
    r: Result<StepOutcome, exec::Raised>,
) -> UserOutcome {
    match r {
        Ok(StepOutcome::Ok) => {
            if trap && !cpu.shadow {
                return UserOutcome::Exception(Event {
                    vector: Exception::DB.0,
                    kind: EventKind::Trap,
                    eip,
                    next_eip: cpu.eip,
                    mem: None,
                });
            }
            UserOutcome::Ok
        }
        Ok(StepOutcome::Stop(r)) => UserOutcome::Stop(r),
        // HLT is #GP at CPL 3 and the host-service op is real mode's: neither
        // retires here, but a CPU set up by hand at CPL 0 could.
        Ok(StepOutcome::Halt) | Ok(StepOutcome::HostCall(_)) => UserOutcome::Ok,
        Err(r) => {
            let next = next_ip(cpu, op);
            let kind = if r.mem.is_none() && is_soft_int(op) {
                cpu.eip = next;
                EventKind::Trap
            } else {
                EventKind::Fault
            };
            UserOutcome::Exception(Event {
                vector: r.e.0,
                kind,
                eip,
                next_eip: next,
                mem: r.mem,
            })
        }
    }
}
