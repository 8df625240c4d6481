//! Far transfers in protected mode: JMP, CALL and RET far through code
//! segment descriptors, call gates (with the stack switch and parameter
//! copy of a call to an inner ring), task gates and TSS descriptors.
//!
//! Owns the privilege rules of far transfers (conforming and non-conforming
//! code, RPL, gate DPL), the inner-ring stack a call gate switches to, and
//! the return to an outer ring (its stack, the nulling of data segments the
//! outer ring may not hold). Real, V86 and flat user mode keep their own
//! simple far transfers in `exec::control`. It must not deliver interrupts
//! (`pmint`) or switch tasks itself (`task`).

use crate::bus::Bus;
use crate::desc::{self, sys, Desc};
use crate::exec::{peek, push};
use crate::op::Flow;
use crate::task::{self, Source};
use crate::{ea, reg, seg, segs, Cpu, Exception};

type R = Result<Flow, Exception>;

/// The rules for a code segment a far JMP or CALL names directly: #GP(sel)
/// unless it is code this CPL may enter without a gate, #NP(sel) when not
/// present.
fn check_direct_code(cpu: &Cpu, sel: u16, d: &Desc) -> Result<(), Exception> {
    if !d.is_code() {
        return Err(Exception::gp(sel & 0xFFFC));
    }
    let ok = if d.conforming() {
        d.dpl() <= cpu.cpl
    } else {
        desc::rpl(sel) <= cpu.cpl && d.dpl() == cpu.cpl
    };
    if !ok {
        return Err(Exception::gp(sel & 0xFFFC));
    }
    if !d.present() {
        return Err(Exception::np(sel & 0xFFFC));
    }
    Ok(())
}

/// Loads CS from a checked descriptor at privilege `cpl` (the selector's
/// RPL becomes the CPL), setting the accessed bit.
pub fn load_cs<B: Bus>(cpu: &mut Cpu, bus: &mut B, sel: u16, d: &mut Desc, a: u32, cpl: u8) {
    desc::set_accessed(bus, a, d);
    segs::set_cache(cpu, seg::CS, (sel & !3) | cpl as u16, d);
    segs::set_cpl(cpu, bus, cpl);
}

/// A gate used by a far JMP or CALL: DPL >= CPL and >= RPL (#GP(gate)),
/// present (#NP(gate)).
fn check_gate(cpu: &Cpu, sel: u16, d: &Desc) -> Result<(), Exception> {
    if d.dpl() < cpu.cpl || d.dpl() < desc::rpl(sel) {
        return Err(Exception::gp(sel & 0xFFFC));
    }
    if !d.present() {
        return Err(Exception::np(sel & 0xFFFC));
    }
    Ok(())
}

/// The TSS a far JMP or CALL switches to, through a task gate or directly;
/// it must be an available TSS in the GDT.
fn task_target<B: Bus>(
    cpu: &Cpu,
    bus: &mut B,
    sel: u16,
    d: &Desc,
) -> Result<(u16, Desc), Exception> {
    check_gate(cpu, sel, d)?;
    if d.typ() != sys::TASK {
        return Ok((sel, *d));
    }
    let tss = d.gate_sel();
    if tss & desc::TI != 0 {
        return Err(Exception::gp(tss & 0xFFFC));
    }
    let (t, _) = desc::read(cpu, bus, tss, Exception::GP)?;
    if !matches!(t.sys_type(), Some(sys::TSS16) | Some(sys::TSS32)) {
        return Err(Exception::gp(tss & 0xFFFC));
    }
    if !t.present() {
        return Err(Exception::np(tss & 0xFFFC));
    }
    Ok((tss, t))
}

/// The code segment a call gate leads to: not null (#GP(0)), code with DPL
/// <= CPL (#GP(target)), present (#NP(target)).
fn gate_target<B: Bus>(cpu: &Cpu, bus: &mut B, gate: &Desc) -> Result<(u16, Desc, u32), Exception> {
    let t = gate.gate_sel();
    if desc::is_null(t) {
        return Err(Exception::gp(0));
    }
    let (d, a) = desc::read(cpu, bus, t, Exception::GP)?;
    if !d.is_code() || d.dpl() > cpu.cpl {
        return Err(Exception::gp(t & 0xFFFC));
    }
    if !d.present() {
        return Err(Exception::np(t & 0xFFFC));
    }
    Ok((t, d, a))
}

/// JMP ptr16:16/32 and JMP m16:16/32 in protected mode. `next` is the
/// instruction after the JMP (saved in the old TSS by a task switch).
pub fn jmp_far<B: Bus>(cpu: &mut Cpu, bus: &mut B, sel: u16, off: u32, next: u32) -> R {
    if desc::is_null(sel) {
        return Err(Exception::gp(0));
    }
    let (mut d, a) = desc::read(cpu, bus, sel, Exception::GP)?;
    if d.s() {
        check_direct_code(cpu, sel, &d)?;
        if off > d.limit() {
            return Err(Exception::gp(0));
        }
        let cpl = cpu.cpl;
        load_cs(cpu, bus, sel, &mut d, a, cpl);
        cpu.eip = off;
        return Ok(Flow::Jump);
    }
    match d.typ() {
        sys::CALL16 | sys::CALL32 => {
            check_gate(cpu, sel, &d)?;
            let (t, mut td, ta) = gate_target(cpu, bus, &d)?;
            // A JMP through a call gate never changes privilege.
            if !td.conforming() && td.dpl() != cpu.cpl {
                return Err(Exception::gp(t & 0xFFFC));
            }
            let off = d.gate_off();
            if off > td.limit() {
                return Err(Exception::gp(0));
            }
            let cpl = cpu.cpl;
            load_cs(cpu, bus, t, &mut td, ta, cpl);
            cpu.eip = off;
            Ok(Flow::Jump)
        }
        sys::TASK | sys::TSS16 | sys::TSS32 => {
            let (tss, td) = task_target(cpu, bus, sel, &d)?;
            task::switch(cpu, bus, tss, td, Source::Jmp, next)?;
            Ok(Flow::Jump)
        }
        _ => Err(Exception::gp(sel & 0xFFFC)),
    }
}

/// The stack an inner ring `dpl` gets from the TSS, checked: (selector,
/// descriptor, its address, ESP). Bad selectors are #TS, a stack not
/// present is #SS (error codes with `ext`).
pub fn inner_stack<B: Bus>(
    cpu: &Cpu,
    bus: &mut B,
    dpl: u8,
    ext: u16,
) -> Result<(u16, Desc, u32, u32), Exception> {
    let (ss, esp) = task::ring_stack(cpu, bus, dpl, ext)?;
    if desc::is_null(ss) {
        return Err(Exception::ts(ext));
    }
    let (d, a) = desc::read(cpu, bus, ss, Exception::TS).map_err(|e| Exception(e.0, e.1 | ext))?;
    if desc::rpl(ss) != dpl || d.dpl() != dpl || !d.writable() {
        return Err(Exception::ts(ss & 0xFFFC | ext));
    }
    if !d.present() {
        return Err(Exception::ss(ss & 0xFFFC | ext));
    }
    Ok((ss, d, a, esp))
}

/// Switches SS:ESP to a checked inner stack and checks that `need` bytes
/// fit below ESP (#SS(new SS) otherwise).
pub fn switch_stack<B: Bus>(
    cpu: &mut Cpu,
    bus: &mut B,
    ss: u16,
    mut d: Desc,
    a: u32,
    esp: u32,
    need: u32,
    ext: u16,
) -> Result<(), Exception> {
    desc::set_accessed(bus, a, &mut d);
    segs::set_cache(cpu, seg::SS, ss, &d);
    cpu.regs[reg::ESP] = esp;
    room(cpu, need).map_err(|_| Exception::ss(ss & 0xFFFC | ext))
}

/// Whether `need` bytes fit below the current stack pointer.
pub fn room(cpu: &Cpu, need: u32) -> Result<(), Exception> {
    let low = cpu.stack_ptr_plus(need.wrapping_neg());
    if !cpu.stack32 && low > cpu.stack_ptr() {
        // A 16-bit SP would wrap below 0.
        return Err(ea::overrun(cpu, seg::SS));
    }
    ea::check_w(cpu, seg::SS, low, need).map(|_| ())
}

/// CALL ptr16:16/32 and CALL m16:16/32 in protected mode; `ret` is the
/// return offset.
pub fn call_far<B: Bus>(cpu: &mut Cpu, bus: &mut B, sel: u16, off: u32, o32: bool, ret: u32) -> R {
    if desc::is_null(sel) {
        return Err(Exception::gp(0));
    }
    let (mut d, a) = desc::read(cpu, bus, sel, Exception::GP)?;
    if d.s() {
        check_direct_code(cpu, sel, &d)?;
        return call_same_level(cpu, bus, sel, &mut d, a, off, o32, ret);
    }
    match d.typ() {
        sys::CALL16 | sys::CALL32 => call_gate(cpu, bus, sel, &d, ret),
        sys::TASK | sys::TSS16 | sys::TSS32 => {
            let (tss, td) = task_target(cpu, bus, sel, &d)?;
            task::switch(cpu, bus, tss, td, Source::Call, ret)?;
            Ok(Flow::Jump)
        }
        _ => Err(Exception::gp(sel & 0xFFFC)),
    }
}

/// A far CALL through a call gate. The gate's size (286 or 386) decides the
/// width of every slot pushed; a non-conforming target more privileged than
/// the CPL switches to the TSS's stack for its ring and copies the gate's
/// parameter count of words or dwords from the old stack.
fn call_gate<B: Bus>(cpu: &mut Cpu, bus: &mut B, sel: u16, gate: &Desc, ret: u32) -> R {
    check_gate(cpu, sel, gate)?;
    let (t, mut td, ta) = gate_target(cpu, bus, gate)?;
    let g32 = gate.typ() == sys::CALL32;
    let n: u32 = if g32 { 4 } else { 2 };
    let off = gate.gate_off();
    if !td.conforming() && td.dpl() < cpu.cpl {
        let dpl = td.dpl();
        let (nss, sd, sa, nesp) = inner_stack(cpu, bus, dpl, 0)?;
        let params = gate.gate_params();
        if off > td.limit() {
            return Err(Exception::gp(0));
        }
        // Parameters from the old stack (lowest address first).
        let mut vals = Vec::with_capacity(params as usize);
        for i in 0..params {
            vals.push(peek(cpu, bus, g32, i * n)?);
        }
        let (old_ss, old_esp, old_cs) =
            (cpu.sregs[seg::SS], cpu.regs[reg::ESP], cpu.sregs[seg::CS]);
        switch_stack(cpu, bus, nss, sd, sa, nesp, (4 + params) * n, 0)?;
        // The inner stack is written at the new privilege.
        segs::set_cpl(cpu, bus, dpl);
        push(cpu, bus, g32, old_ss as u32)?;
        push(cpu, bus, g32, old_esp)?;
        for v in vals.iter().rev() {
            push(cpu, bus, g32, *v)?;
        }
        push(cpu, bus, g32, old_cs as u32)?;
        push(cpu, bus, g32, ret)?;
        load_cs(cpu, bus, t, &mut td, ta, dpl);
        cpu.eip = off;
        return Ok(Flow::Jump);
    }
    if !td.conforming() && td.dpl() != cpu.cpl {
        return Err(Exception::gp(t & 0xFFFC));
    }
    call_same_level(cpu, bus, t, &mut td, ta, off, g32, ret)
}

/// The far CALL's transfer without a privilege change (a direct call, or a
/// gate to a conforming or same-level target): room for CS and the return
/// offset on the current stack, the offset within the target's limit
/// (#GP(0)), both pushed at `wide` (32-bit slots for a 386 gate or an
/// o32 call), CS loaded at the current CPL.
#[allow(clippy::too_many_arguments)]
fn call_same_level<B: Bus>(
    cpu: &mut Cpu,
    bus: &mut B,
    sel: u16,
    d: &mut Desc,
    a: u32,
    off: u32,
    wide: bool,
    ret: u32,
) -> R {
    let n: u32 = if wide { 4 } else { 2 };
    room(cpu, 2 * n)?;
    if off > d.limit() {
        return Err(Exception::gp(0));
    }
    push(cpu, bus, wide, cpu.sregs[seg::CS] as u32)?;
    push(cpu, bus, wide, ret)?;
    let cpl = cpu.cpl;
    load_cs(cpu, bus, sel, d, a, cpl);
    cpu.eip = off;
    Ok(Flow::Jump)
}

/// Checks the CS a far return (RETF, IRET) pops: not null (#GP(0)), RPL >=
/// CPL, code whose DPL fits the RPL (#GP(cs)), present (#NP(cs)).
pub fn check_return_cs<B: Bus>(cpu: &Cpu, bus: &mut B, cs: u16) -> Result<(Desc, u32), Exception> {
    if desc::is_null(cs) {
        return Err(Exception::gp(0));
    }
    let (d, a) = desc::read(cpu, bus, cs, Exception::GP)?;
    let rpl = desc::rpl(cs);
    if rpl < cpu.cpl || !d.is_code() {
        return Err(Exception::gp(cs & 0xFFFC));
    }
    if (d.conforming() && d.dpl() > rpl) || (!d.conforming() && d.dpl() != rpl) {
        return Err(Exception::gp(cs & 0xFFFC));
    }
    if !d.present() {
        return Err(Exception::np(cs & 0xFFFC));
    }
    Ok((d, a))
}

/// Checks the SS a return to an outer ring `rpl` pops.
pub fn check_return_ss<B: Bus>(
    cpu: &Cpu,
    bus: &mut B,
    ss: u16,
    rpl: u8,
) -> Result<(Desc, u32), Exception> {
    if desc::is_null(ss) {
        return Err(Exception::gp(0));
    }
    let (d, a) = desc::read(cpu, bus, ss, Exception::GP)?;
    if desc::rpl(ss) != rpl || !d.writable() || d.dpl() != rpl {
        return Err(Exception::gp(ss & 0xFFFC));
    }
    if !d.present() {
        return Err(Exception::ss(ss & 0xFFFC));
    }
    Ok((d, a))
}

/// Loads SS:ESP for a return to an outer ring: a stack pointer popped from
/// a word slot (`wide` false) sets SP only.
pub fn load_outer_stack<B: Bus>(
    cpu: &mut Cpu,
    bus: &mut B,
    ss: u16,
    mut d: Desc,
    a: u32,
    esp: u32,
    wide: bool,
) {
    desc::set_accessed(bus, a, &mut d);
    segs::set_cache(cpu, seg::SS, ss, &d);
    if wide {
        cpu.regs[reg::ESP] = esp;
    } else {
        cpu.set_r16(reg::ESP as u8, esp as u16);
    }
}

/// RETF [imm16] in protected mode: to the same ring, or to an outer ring
/// with its SS:ESP popped after the parameters.
pub fn ret_far<B: Bus>(cpu: &mut Cpu, bus: &mut B, o32: bool, imm: u32) -> R {
    let n: u32 = if o32 { 4 } else { 2 };
    let ip = peek(cpu, bus, o32, 0)?;
    let cs = peek(cpu, bus, o32, n)? as u16;
    let ip = if o32 { ip } else { ip & 0xFFFF };
    let (mut d, a) = check_return_cs(cpu, bus, cs)?;
    let rpl = desc::rpl(cs);
    if rpl == cpu.cpl {
        if ip > d.limit() {
            return Err(Exception::gp(0));
        }
        cpu.set_stack_ptr(cpu.stack_ptr_plus(2 * n + imm));
        load_cs(cpu, bus, cs, &mut d, a, rpl);
        cpu.eip = ip;
        return Ok(Flow::Jump);
    }
    let esp = peek(cpu, bus, o32, 2 * n + imm)?;
    let ss = peek(cpu, bus, o32, 3 * n + imm)? as u16;
    let (sd, sa) = check_return_ss(cpu, bus, ss, rpl)?;
    if ip > d.limit() {
        return Err(Exception::gp(0));
    }
    load_cs(cpu, bus, cs, &mut d, a, rpl);
    load_outer_stack(cpu, bus, ss, sd, sa, esp, o32);
    cpu.set_stack_ptr(cpu.stack_ptr_plus(imm));
    cpu.eip = ip;
    segs::drop_inner_data(cpu);
    Ok(Flow::Jump)
}
