//! Interrupts, exceptions and IRET in protected and V86 mode: delivery
//! through the IDT's interrupt, trap and task gates, and the return.
//!
//! Owns the gate rules (IDT limit, gate type, DPL against CPL for software
//! interrupts, presence), the frame (same ring; inner ring with the stack
//! from the TSS; from V86 mode with GS FS DS ES saved and nulled), the error
//! code and its EXT/IDT bits, the flags a gate clears, and IRET in all its
//! forms (same ring, outer ring, back to V86, nested task, and within V86
//! at IOPL 3). It must not decide double or triple faults: a failure to
//! deliver is returned as the exception it raised, and `pm` escalates.

use crate::bus::Bus;
use crate::desc::{self, sys};
use crate::exec::data::set_flags_from_stack;
use crate::exec::{peek, push};
use crate::op::Flow;
use crate::task::{self, Source};
use crate::xfer;
use crate::{reg, seg, segs, Cpu, Exception, EFLAGS_VM, EFLAGS_WRITABLE};
use shared_ir::flags::{IF, NT, TF};

/// One event to deliver.
#[derive(Clone, Copy, Debug)]
pub struct Event {
    pub vector: u8,
    /// The EIP the frame saves (the faulting instruction, or the next one).
    pub eip: u32,
    /// The error code a fault pushes.
    pub code: Option<u16>,
    /// An external event (hardware interrupt): error codes get EXT set.
    pub ext: bool,
    /// A software interrupt (INT n, INT3, INTO): the gate's DPL must be >=
    /// CPL.
    pub soft: bool,
}

/// INT n / INT3 / INTO (with `dpl_check`) and INT1 in protected or V86 mode.
pub fn software<B: Bus>(
    cpu: &mut Cpu,
    bus: &mut B,
    vector: u8,
    ret: u32,
    dpl_check: bool,
) -> Result<(), Exception> {
    deliver(
        cpu,
        bus,
        &Event {
            vector,
            eip: ret,
            code: None,
            ext: false,
            soft: dpl_check,
        },
    )
}

/// Delivers an event through the IDT. On failure the registers may be
/// partly changed (the caller restores them) and the fault the delivery
/// raised is returned.
pub fn deliver<B: Bus>(cpu: &mut Cpu, bus: &mut B, ev: &Event) -> Result<(), Exception> {
    let ext = ev.ext as u16;
    let gate_err = ev.vector as u16 * 8 + 2 + ext;
    let entry = ev.vector as u32 * 8;
    if entry + 7 > cpu.idt_limit as u32 {
        return Err(Exception::gp(gate_err));
    }
    let gate = desc::read_at(bus, cpu.idt_base.wrapping_add(entry));
    let typ = gate.typ();
    if gate.s()
        || !matches!(
            typ,
            sys::TASK | sys::INT16 | sys::TRAP16 | sys::INT32 | sys::TRAP32
        )
    {
        return Err(Exception::gp(gate_err));
    }
    if ev.soft && gate.dpl() < cpu.cpl {
        return Err(Exception::gp(gate_err));
    }
    if !gate.present() {
        return Err(Exception::np(gate_err));
    }
    if typ == sys::TASK {
        return task_gate(cpu, bus, ev, gate.gate_sel(), ext);
    }

    let csel = gate.gate_sel();
    if desc::is_null(csel) {
        return Err(Exception::gp(ext));
    }
    let (mut cd, ca) =
        desc::read(cpu, bus, csel, Exception::GP).map_err(|e| Exception(e.0, e.1 | ext))?;
    if !cd.is_code() || cd.dpl() > cpu.cpl {
        return Err(Exception::gp(csel & 0xFFFC | ext));
    }
    if !cd.present() {
        return Err(Exception::np(csel & 0xFFFC | ext));
    }
    let g32 = typ & 8 != 0;
    let n: u32 = if g32 { 4 } else { 2 };
    let off = gate.gate_off();
    let flags = cpu.eflags();
    let (old_cs, old_ss, old_esp) = (cpu.sregs[seg::CS], cpu.sregs[seg::SS], cpu.regs[reg::ESP]);
    let code_slots = ev.code.is_some() as u32;

    if !cd.conforming() && cd.dpl() < cpu.cpl {
        // To an inner ring, on the stack the TSS holds for it.
        let dpl = cd.dpl();
        if cpu.v86 && dpl != 0 {
            return Err(Exception::gp(csel & 0xFFFC | ext));
        }
        let (nss, sd, sa, nesp) = xfer::inner_stack(cpu, bus, dpl, ext)?;
        let slots = if cpu.v86 { 9 } else { 5 } + code_slots;
        if off > cd.limit() {
            return Err(Exception::gp(ext));
        }
        let v86_sels = [
            cpu.sregs[seg::GS],
            cpu.sregs[seg::FS],
            cpu.sregs[seg::DS],
            cpu.sregs[seg::ES],
        ];
        let from_v86 = cpu.v86;
        xfer::switch_stack(cpu, bus, nss, sd, sa, nesp, slots * n, ext)?;
        // The inner stack is written at the new privilege.
        segs::set_cpl(cpu, bus, dpl);
        if from_v86 {
            for v in v86_sels {
                push(cpu, bus, g32, v as u32)?;
            }
            cpu.v86 = false;
            for s in [seg::ES, seg::DS, seg::FS, seg::GS] {
                segs::set_null(cpu, s, 0);
            }
        }
        push(cpu, bus, g32, old_ss as u32)?;
        push(cpu, bus, g32, old_esp)?;
        push(cpu, bus, g32, flags)?;
        push(cpu, bus, g32, old_cs as u32)?;
        push(cpu, bus, g32, ev.eip)?;
        if let Some(c) = ev.code {
            push(cpu, bus, g32, c as u32)?;
        }
        xfer::load_cs(cpu, bus, csel, &mut cd, ca, dpl);
    } else {
        if cpu.v86 {
            return Err(Exception::gp(csel & 0xFFFC | ext));
        }
        if !cd.conforming() && cd.dpl() != cpu.cpl {
            return Err(Exception::gp(csel & 0xFFFC | ext));
        }
        xfer::room(cpu, (3 + code_slots) * n).map_err(|_| Exception::ss(ext))?;
        if off > cd.limit() {
            return Err(Exception::gp(ext));
        }
        push(cpu, bus, g32, flags)?;
        push(cpu, bus, g32, old_cs as u32)?;
        push(cpu, bus, g32, ev.eip)?;
        if let Some(c) = ev.code {
            push(cpu, bus, g32, c as u32)?;
        }
        let cpl = cpu.cpl;
        xfer::load_cs(cpu, bus, csel, &mut cd, ca, cpl);
    }
    cpu.eip = off;
    let mut clear = TF | NT;
    if typ & 1 == 0 {
        // An interrupt gate (a trap gate keeps IF).
        clear |= IF;
    }
    cpu.flags.set_mask(clear, false);
    Ok(())
}

/// Delivery through a task gate: a task switch, then the error code on the
/// new task's stack.
fn task_gate<B: Bus>(
    cpu: &mut Cpu,
    bus: &mut B,
    ev: &Event,
    tss: u16,
    ext: u16,
) -> Result<(), Exception> {
    if tss & desc::TI != 0 {
        return Err(Exception::gp(tss & 0xFFFC | ext));
    }
    let (d, _) = desc::read(cpu, bus, tss, Exception::GP).map_err(|e| Exception(e.0, e.1 | ext))?;
    if !matches!(d.sys_type(), Some(sys::TSS16) | Some(sys::TSS32)) {
        return Err(Exception::gp(tss & 0xFFFC | ext));
    }
    if !d.present() {
        return Err(Exception::np(tss & 0xFFFC | ext));
    }
    task::switch(cpu, bus, tss, d, Source::Int, ev.eip)?;
    if let Some(c) = ev.code {
        push(cpu, bus, d.typ() & 8 != 0, c as u32)?;
    }
    Ok(())
}

/// IRET / IRETD in protected or V86 mode. `next` is the instruction after
/// it (saved by a nested-task return).
pub fn iret<B: Bus>(cpu: &mut Cpu, bus: &mut B, o32: bool, next: u32) -> Result<Flow, Exception> {
    let n: u32 = if o32 { 4 } else { 2 };
    if cpu.v86 {
        // V86 at IOPL 3: a real-mode IRET that keeps VM and IOPL.
        if cpu.iopl() < 3 {
            return Err(Exception::gp(0));
        }
        let ip = peek(cpu, bus, o32, 0)?;
        let cs = peek(cpu, bus, o32, n)? as u16;
        let fl = peek(cpu, bus, o32, 2 * n)?;
        let ip = if o32 { ip } else { ip & 0xFFFF };
        if ip > 0xFFFF {
            return Err(Exception::gp(0));
        }
        cpu.set_stack_ptr(cpu.stack_ptr_plus(3 * n));
        segs::set_v86(cpu, seg::CS, cs);
        cpu.eip = ip;
        set_flags_from_stack(cpu, fl, o32);
        return Ok(Flow::Jump);
    }
    if cpu.flags.bits() & NT != 0 {
        let link = task::back_link(cpu, bus);
        if link & desc::TI != 0 {
            return Err(Exception::ts(link & 0xFFFC));
        }
        let (d, _) = desc::read(cpu, bus, link, Exception::TS)?;
        if !matches!(d.sys_type(), Some(sys::TSS16_BUSY) | Some(sys::TSS32_BUSY)) {
            return Err(Exception::ts(link & 0xFFFC));
        }
        if !d.present() {
            return Err(Exception::np(link & 0xFFFC));
        }
        task::switch(cpu, bus, link, d, Source::Iret, next)?;
        return Ok(Flow::Jump);
    }
    let ip = peek(cpu, bus, o32, 0)?;
    let cs = peek(cpu, bus, o32, n)? as u16;
    let fl = peek(cpu, bus, o32, 2 * n)?;
    if o32 && fl & EFLAGS_VM != 0 && cpu.cpl == 0 {
        return iret_to_v86(cpu, bus, ip, cs, fl);
    }
    let ip = if o32 { ip } else { ip & 0xFFFF };
    let (mut d, a) = xfer::check_return_cs(cpu, bus, cs)?;
    let rpl = desc::rpl(cs);
    if rpl == cpu.cpl {
        if ip > d.limit() {
            return Err(Exception::gp(0));
        }
        cpu.set_stack_ptr(cpu.stack_ptr_plus(3 * n));
        set_flags_from_stack(cpu, fl, o32);
        xfer::load_cs(cpu, bus, cs, &mut d, a, rpl);
        cpu.eip = ip;
        return Ok(Flow::Jump);
    }
    let esp = peek(cpu, bus, o32, 3 * n)?;
    let ss = peek(cpu, bus, o32, 4 * n)? as u16;
    let (sd, sa) = xfer::check_return_ss(cpu, bus, ss, rpl)?;
    if ip > d.limit() {
        return Err(Exception::gp(0));
    }
    // The flags follow the privilege IRET runs at, before the return.
    set_flags_from_stack(cpu, fl, o32);
    xfer::load_cs(cpu, bus, cs, &mut d, a, rpl);
    xfer::load_outer_stack(cpu, bus, ss, sd, sa, esp, o32);
    cpu.eip = ip;
    segs::drop_inner_data(cpu);
    Ok(Flow::Jump)
}

/// IRETD at CPL 0 with VM set in the popped EFLAGS: back to V86 mode, with
/// ESP, SS, ES, DS, FS, GS popped after the flags.
fn iret_to_v86<B: Bus>(
    cpu: &mut Cpu,
    bus: &mut B,
    ip: u32,
    cs: u16,
    fl: u32,
) -> Result<Flow, Exception> {
    let esp = peek(cpu, bus, true, 12)?;
    let ss = peek(cpu, bus, true, 16)? as u16;
    let es = peek(cpu, bus, true, 20)? as u16;
    let ds = peek(cpu, bus, true, 24)? as u16;
    let fs = peek(cpu, bus, true, 28)? as u16;
    let gs = peek(cpu, bus, true, 32)? as u16;
    cpu.flags.set_bits((fl & EFLAGS_WRITABLE) | 2);
    cpu.v86 = true;
    for (s, v) in [
        (seg::CS, cs),
        (seg::SS, ss),
        (seg::ES, es),
        (seg::DS, ds),
        (seg::FS, fs),
        (seg::GS, gs),
    ] {
        segs::set_v86(cpu, s, v);
    }
    segs::set_cpl(cpu, bus, 3);
    cpu.regs[reg::ESP] = esp;
    cpu.eip = ip & 0xFFFF;
    Ok(Flow::Jump)
}
