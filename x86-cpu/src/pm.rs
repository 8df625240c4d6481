//! The protected-mode step: one instruction (or REP element) in protected
//! or V86 mode, through the paging adapter, with protected-mode fault
//! delivery.
//!
//! Owns the per-dispatch contract of protected mode, which is real mode's
//! (`exec::run_op`) with more state to undo (descriptor caches, CPL, LDTR,
//! TR, V86; a task switch that committed is not undone), the instruction
//! fetch through paging that faults only on bytes the instruction needs,
//! the CS limit of the fetch, exception delivery through the IDT with the
//! double- and triple-fault rules, and external interrupts in protected
//! mode. It must not hold instruction semantics (the handlers are the ones
//! real mode runs) nor gate or task rules (`pmint`, `task`).

use crate::bus::{Bus, Mmu};
use crate::decode::{self, Mode, MAX_LEN};
use crate::exec::{complete, stop_reason};
use crate::l0::{self, StepOutcome, StopReason};
use crate::op::{Flow, Op};
use crate::paging::Paged;
use crate::pmint::{self, Event};
use crate::{seg, Cpu, Exception, SysSeg};
use shared_ir::flags::LazyFlags;

/// Everything an instruction may change before it faults, besides memory.
#[derive(Clone, Copy)]
struct Snapshot {
    regs: [u32; 8],
    sregs: [u16; 6],
    sbase: [u32; 6],
    seg_end: [u64; 6],
    seg_wend: [u64; 6],
    sattr: [u16; 6],
    slimit: [u32; 6],
    eip: u32,
    flags: LazyFlags,
    code32: bool,
    stack32: bool,
    cpl: u8,
    v86: bool,
    ldtr: SysSeg,
    tr: SysSeg,
}

impl Snapshot {
    fn take(cpu: &Cpu) -> Snapshot {
        Snapshot {
            regs: cpu.regs,
            sregs: cpu.sregs,
            sbase: cpu.sbase,
            seg_end: cpu.seg_end,
            seg_wend: cpu.seg_wend,
            sattr: cpu.sattr,
            slimit: cpu.slimit,
            eip: cpu.eip,
            flags: cpu.flags,
            code32: cpu.code32,
            stack32: cpu.stack32,
            cpl: cpu.cpl,
            v86: cpu.v86,
            ldtr: cpu.ldtr,
            tr: cpu.tr,
        }
    }

    fn restore<B: Bus>(&self, cpu: &mut Cpu, bus: &mut B) {
        cpu.regs = self.regs;
        cpu.sregs = self.sregs;
        cpu.sbase = self.sbase;
        cpu.seg_end = self.seg_end;
        cpu.seg_wend = self.seg_wend;
        cpu.sattr = self.sattr;
        cpu.slimit = self.slimit;
        cpu.eip = self.eip;
        cpu.flags = self.flags;
        cpu.code32 = self.code32;
        cpu.stack32 = self.stack32;
        cpu.cpl = self.cpl;
        cpu.v86 = self.v86;
        cpu.ldtr = self.ldtr;
        cpu.tr = self.tr;
        bus.mmu(Mmu::Cpl(cpu.cpl));
        bus.mmu(Mmu::System(false));
    }
}

/// Runs `f` with the CPU's bus seen through the paging adapter (the
/// translation cache travels with the CPU between steps).
#[inline]
fn with_paging<'b, B: Bus, T>(
    cpu: &mut Cpu,
    bus: &'b mut B,
    f: impl FnOnce(&mut Cpu, &mut Paged<&'b mut B>) -> T,
) -> T {
    let tlb = std::mem::take(&mut cpu.tlb);
    let mut pb = Paged::new(bus, tlb, cpu);
    let out = f(cpu, &mut pb);
    cpu.tlb = pb.into_parts().1;
    out
}

/// One step in protected or V86 mode (L0's step there).
pub fn step<B: Bus>(cpu: &mut Cpu, bus: &mut B) -> StepOutcome {
    with_paging(cpu, bus, |cpu, pb| step_paged(cpu, pb))
}

/// [`step`] on an adapter the caller keeps (in sync with the CPU, see
/// [`Paged::sync`]).
pub fn step_paged<B: Bus>(cpu: &mut Cpu, bus: &mut Paged<B>) -> StepOutcome {
    cpu.shadow = false;
    let bytes = l0::fetch(cpu, bus);
    let op = decode::decode_in::<Paged<B>>(&bytes, cpu.eip, Mode::of(cpu));
    if let Some(f) = bus.take_fault() {
        // The fetch ran into a page it may not read: a fault only if the
        // instruction needs that byte.
        let start = cpu.linear(seg::CS, cpu.eip);
        let good = f.addr.wrapping_sub(start) as usize;
        if good >= MAX_LEN || op.len as usize > good {
            cpu.clock += 1;
            let code = bus.fault_code();
            cpu.cr2 = f.addr;
            return fault(cpu, bus, Exception(14, code), &op);
        }
    }
    if cpu.eip as u64 + op.len as u64 > cpu.seg_end[seg::CS] {
        // The instruction runs past the CS limit.
        cpu.clock += 1;
        return fault(cpu, bus, Exception::gp(0), &op);
    }
    run_op(cpu, bus, &op)
}

/// One Op as one dispatch in protected or V86 mode (the bus is the paging
/// adapter or a bus that never faults).
pub fn run_op<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> StepOutcome {
    let trap = cpu.flags.tf();
    let if_before = cpu.flags.if_();
    let snap = Snapshot::take(cpu);
    cpu.committed = false;
    let r = (op.handler)(cpu, bus, op);
    if let Some(f) = bus.take_fault() {
        if !cpu.committed {
            snap.restore(cpu, bus);
        }
        cpu.clock += 1;
        cpu.cr2 = f.addr;
        let code = bus.fault_code();
        return fault(cpu, bus, Exception(14, code), op);
    }
    let out = match r {
        Ok(Flow::Stop(what)) => {
            snap.restore(cpu, bus);
            return StepOutcome::Stop(stop_reason(cpu, op, what));
        }
        Err(e) => {
            if !cpu.committed {
                snap.restore(cpu, bus);
            }
            cpu.clock += 1;
            return fault(cpu, bus, e, op);
        }
        Ok(flow) => complete(cpu, op, flow),
    };
    cpu.clock += 1;
    let sti_shadow = cpu.shadow && !if_before && cpu.flags.if_();
    if trap && (!cpu.shadow || sti_shadow) && out == StepOutcome::Ok {
        if let Err(mut s) = exception(cpu, bus, Exception::DB, false, None) {
            s.bytes = op.bytes[..op.len as usize].to_vec();
            return StepOutcome::Stop(s);
        }
    }
    out
}

/// Delivers fault `e` of `op` (registers as before it; the dispatch is
/// already charged): `Ok`, or the triple-fault stop.
pub fn fault<B: Bus, O>(cpu: &mut Cpu, bus: &mut B, e: Exception, op: &Op<O>) -> StepOutcome {
    match exception(cpu, bus, e, false, None) {
        Ok(()) => StepOutcome::Ok,
        Err(mut s) => {
            s.bytes = op.bytes[..op.len as usize].to_vec();
            StepOutcome::Stop(s)
        }
    }
}

/// Faults that combine into a double fault (Intel's contributory class).
fn contributory(v: u8) -> bool {
    matches!(v, 0 | 10..=13)
}

/// Whether a fault `second` raised while delivering `first` is a double
/// fault (otherwise the second is delivered on its own).
fn is_double(first: u8, second: u8) -> bool {
    (contributory(first) && contributory(second))
        || (first == 14 && (second == 14 || contributory(second)))
}

/// Delivers exception `e` of the instruction at CS:EIP (registers as before
/// it; `ret` overrides the EIP the frame saves, for traps), escalating a
/// failed delivery to the fault it raised, a double fault, or a triple
/// fault (a stop report).
pub fn exception<B: Bus>(
    cpu: &mut Cpu,
    bus: &mut B,
    e: Exception,
    ext: bool,
    ret: Option<u32>,
) -> Result<(), StopReason> {
    let mut cur = e;
    let first = e;
    for _ in 0..4 {
        let snap = Snapshot::take(cpu);
        cpu.committed = false;
        let ev = Event {
            vector: cur.0,
            eip: ret.unwrap_or(cpu.eip),
            code: if Exception::pushes_code(cur.0) {
                Some(cur.1 | if ext && cur.0 != 8 { 1 } else { 0 })
            } else {
                None
            },
            ext,
            soft: false,
        };
        match pmint::deliver(cpu, bus, &ev) {
            Ok(()) => return Ok(()),
            Err(e2) => {
                if !cpu.committed {
                    snap.restore(cpu, bus);
                }
                if cur.0 == 8 {
                    break;
                }
                cur = if is_double(cur.0, e2.0) {
                    Exception::DF
                } else {
                    e2
                };
            }
        }
    }
    Err(StopReason {
        cs: cpu.sregs[seg::CS],
        ip: cpu.eip,
        bytes: Vec::new(),
        what: format!(
            "triple fault: exception {} (error code {:#06X}) could not be delivered through the IDT (base {:#010X}, limit {:#X}; CPL {}, SS:ESP {:04X}:{:08X})",
            first.0,
            first.1,
            cpu.idt_base,
            cpu.idt_limit,
            cpu.cpl,
            cpu.sregs[seg::SS],
            cpu.regs[crate::reg::ESP]
        ),
    })
}

/// An external (hardware or host-requested) interrupt in protected or V86
/// mode: through the IDT, EXT set in any error code its delivery raises.
pub fn external_interrupt<B: Bus>(
    cpu: &mut Cpu,
    bus: &mut B,
    vector: u8,
) -> Result<(), StopReason> {
    with_paging(cpu, bus, |cpu, pb| {
        let snap = Snapshot::take(cpu);
        cpu.committed = false;
        let ev = Event {
            vector,
            eip: cpu.eip,
            code: None,
            ext: true,
            soft: false,
        };
        match pmint::deliver(cpu, pb, &ev) {
            Ok(()) => Ok(()),
            Err(e2) => {
                if !cpu.committed {
                    snap.restore(cpu, pb);
                }
                exception(cpu, pb, e2, true, None)
            }
        }
    })
}
