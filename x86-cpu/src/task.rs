//! The task state segment: task switches (JMP, CALL, INT through a task
//! gate, IRET with NT), the inner-ring stacks a privilege change takes from
//! the TSS, the I/O permission bitmap, and LDTR/TR loads.
//!
//! Owns the 286 (44-byte) and 386 (104-byte) TSS layouts, the busy bits and
//! the back link, the order of a switch (checks, save the old state, commit,
//! load the new state, then the segment checks whose faults belong to the
//! new task: [`Cpu::committed`]), and the I/O bitmap rule. It must not
//! deliver interrupts or decide gate privileges (`pmint`, `xfer`).

use crate::bus::{Bus, Mmu};
use crate::desc::{self, sys, Desc};
use crate::{cr0, seg, segs, Cpu, Exception, SysSeg, EFLAGS_VM, EFLAGS_WRITABLE};
use shared_ir::flags::NT;

/// What started a task switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Jmp,
    Call,
    /// An interrupt or exception through a task gate.
    Int,
    /// IRET with NT set: back to the task in the back link.
    Iret,
}

/// Whether TR holds a 386 TSS (type 9 or 11).
fn tr_is_32(cpu: &Cpu) -> bool {
    cpu.tr.attr & 8 != 0
}

/// The stack (SS, ESP) the TSS holds for privilege level `dpl`. A TSS too
/// short for it is #TS(TR selector).
pub fn ring_stack<B: Bus>(
    cpu: &Cpu,
    bus: &mut B,
    dpl: u8,
    ext: u16,
) -> Result<(u16, u32), Exception> {
    let base = cpu.tr.base;
    if tr_is_32(cpu) {
        let off = 4 + dpl as u32 * 8;
        if off + 5 > cpu.tr.limit {
            return Err(Exception::ts(cpu.tr.sel & 0xFFFC | ext));
        }
        let esp = desc::sys_read32(bus, base.wrapping_add(off));
        let ss = desc::sys_read16(bus, base.wrapping_add(off + 4));
        Ok((ss, esp))
    } else {
        let off = 2 + dpl as u32 * 4;
        if off + 3 > cpu.tr.limit {
            return Err(Exception::ts(cpu.tr.sel & 0xFFFC | ext));
        }
        let sp = desc::sys_read16(bus, base.wrapping_add(off));
        let ss = desc::sys_read16(bus, base.wrapping_add(off + 2));
        Ok((ss, sp as u32))
    }
}

/// The I/O permission check of a port access of `n` bytes when CPL > IOPL
/// or in V86 mode: the 386 TSS's bitmap must have every bit of the accessed
/// ports clear (and lie inside the TSS limit); otherwise #GP(0).
pub fn io_bitmap<B: Bus>(cpu: &Cpu, bus: &mut B, port: u16, n: u32) -> Result<(), Exception> {
    if !tr_is_32(cpu) || cpu.tr.limit < 0x67 {
        return Err(Exception::gp(0));
    }
    let map = desc::sys_read16(bus, cpu.tr.base.wrapping_add(0x66)) as u32;
    let byte = map + (port as u32 >> 3);
    if byte + 1 > cpu.tr.limit {
        return Err(Exception::gp(0));
    }
    let bits = desc::sys_read16(bus, cpu.tr.base.wrapping_add(byte)) as u32;
    let mask = ((1u32 << n) - 1) << (port & 7);
    if bits & mask != 0 {
        return Err(Exception::gp(0));
    }
    Ok(())
}

/// Loads LDTR (LLDT and task switches): a null selector leaves no LDT; any
/// other must name an LDT descriptor in the GDT. `err` is the fault for a
/// bad selector (#GP for LLDT, #TS in a task switch).
pub fn load_ldt<B: Bus>(
    cpu: &mut Cpu,
    bus: &mut B,
    sel: u16,
    err: Exception,
) -> Result<(), Exception> {
    if desc::is_null(sel) {
        cpu.ldtr = SysSeg {
            sel,
            ..SysSeg::default()
        };
        return Ok(());
    }
    if sel & desc::TI != 0 {
        return Err(err.for_sel(sel));
    }
    let (d, _) = desc::read(cpu, bus, sel, err)?;
    if d.sys_type() != Some(sys::LDT) {
        return Err(err.for_sel(sel));
    }
    if !d.present() {
        return Err(Exception::np(sel & 0xFFFC));
    }
    cpu.ldtr = SysSeg {
        sel,
        base: d.base(),
        limit: d.limit(),
        attr: d.attr(),
    };
    Ok(())
}

/// LTR: the selector must name an available TSS in the GDT, which becomes
/// busy.
pub fn load_tr<B: Bus>(cpu: &mut Cpu, bus: &mut B, sel: u16) -> Result<(), Exception> {
    if desc::is_null(sel) {
        return Err(Exception::gp(0));
    }
    if sel & desc::TI != 0 {
        return Err(Exception::gp(sel & 0xFFFC));
    }
    let (d, _) = desc::read(cpu, bus, sel, Exception::GP)?;
    if !matches!(d.sys_type(), Some(sys::TSS16) | Some(sys::TSS32)) {
        return Err(Exception::gp(sel & 0xFFFC));
    }
    if !d.present() {
        return Err(Exception::np(sel & 0xFFFC));
    }
    desc::set_busy(cpu, bus, sel, true);
    cpu.tr = SysSeg {
        sel,
        base: d.base(),
        limit: d.limit(),
        attr: d.attr() | 2,
    };
    Ok(())
}

/// The checks every switch makes on the TSS it goes to: present (#NP) and
/// long enough for its kind (#TS).
pub fn check_target(sel: u16, d: &Desc) -> Result<(), Exception> {
    if !d.present() {
        return Err(Exception::np(sel & 0xFFFC));
    }
    let min = if d.typ() & 8 != 0 { 0x67 } else { 0x2B };
    if d.limit() < min {
        return Err(Exception::ts(sel & 0xFFFC));
    }
    Ok(())
}

/// Switches to the task whose TSS descriptor `d` the selector `sel` names.
/// `ret_eip` is the EIP saved in the outgoing task (the next instruction for
/// JMP, CALL, IRET and software interrupts; the faulting one for faults).
/// The caller checked the descriptor's type, privilege and presence.
pub fn switch<B: Bus>(
    cpu: &mut Cpu,
    bus: &mut B,
    sel: u16,
    d: Desc,
    src: Source,
    ret_eip: u32,
) -> Result<(), Exception> {
    check_target(sel, &d)?;
    let new32 = d.typ() & 8 != 0;
    let nb = d.base();

    // The outgoing task.
    let mut flags = cpu.eflags();
    if src == Source::Iret {
        flags &= !NT;
    }
    if matches!(src, Source::Jmp | Source::Iret) {
        desc::set_busy(cpu, bus, cpu.tr.sel, false);
    }
    let ob = cpu.tr.base;
    bus.mmu(Mmu::System(true));
    if tr_is_32(cpu) {
        bus.write32(ob.wrapping_add(0x20), ret_eip);
        bus.write32(ob.wrapping_add(0x24), flags);
        for r in 0..8 {
            bus.write32(ob.wrapping_add(0x28 + 4 * r as u32), cpu.regs[r]);
        }
        for s in 0..6 {
            bus.write16(ob.wrapping_add(0x48 + 4 * s as u32), cpu.sregs[s]);
        }
    } else {
        bus.write16(ob.wrapping_add(0x0E), ret_eip as u16);
        bus.write16(ob.wrapping_add(0x10), flags as u16);
        for r in 0..8 {
            bus.write16(ob.wrapping_add(0x12 + 2 * r as u32), cpu.regs[r] as u16);
        }
        for s in 0..4 {
            bus.write16(ob.wrapping_add(0x22 + 2 * s as u32), cpu.sregs[s]);
        }
    }
    if matches!(src, Source::Call | Source::Int) {
        bus.write16(nb, cpu.tr.sel);
    }
    bus.mmu(Mmu::System(false));
    if src != Source::Iret {
        desc::set_busy(cpu, bus, sel, true);
    }
    cpu.tr = SysSeg {
        sel,
        base: nb,
        limit: d.limit(),
        attr: d.attr() | 2,
    };
    cpu.cr0 |= cr0::TS;
    // From here on a fault belongs to the new task.
    cpu.committed = true;

    // The incoming task.
    bus.mmu(Mmu::System(true));
    let (eip, eflags, sels, ldt) = if new32 {
        let cr3 = bus.read32(nb.wrapping_add(0x1C));
        let eip = bus.read32(nb.wrapping_add(0x20));
        let fl = bus.read32(nb.wrapping_add(0x24));
        for r in 0..8 {
            cpu.regs[r] = bus.read32(nb.wrapping_add(0x28 + 4 * r as u32));
        }
        let mut sels = [0u16; 6];
        for (s, v) in sels.iter_mut().enumerate() {
            *v = bus.read16(nb.wrapping_add(0x48 + 4 * s as u32));
        }
        let ldt = bus.read16(nb.wrapping_add(0x60));
        if cpu.paging() {
            cpu.cr3 = cr3 & 0xFFFF_F018;
            bus.mmu(Mmu::Reload {
                cr0: cpu.cr0,
                cr3: cpu.cr3,
            });
        }
        (eip, fl, sels, ldt)
    } else {
        let eip = bus.read16(nb.wrapping_add(0x0E)) as u32;
        let fl = bus.read16(nb.wrapping_add(0x10)) as u32;
        for r in 0..8 {
            let v = bus.read16(nb.wrapping_add(0x12 + 2 * r as u32));
            cpu.set_r16(r as u8, v);
        }
        let mut sels = [0u16; 6];
        for (s, v) in sels.iter_mut().take(4).enumerate() {
            *v = bus.read16(nb.wrapping_add(0x22 + 2 * s as u32));
        }
        let ldt = bus.read16(nb.wrapping_add(0x2A));
        (eip, fl, sels, ldt)
    };
    bus.mmu(Mmu::System(false));
    cpu.eip = eip;
    let mut fl = eflags;
    if matches!(src, Source::Call | Source::Int) {
        fl |= NT;
    }
    cpu.flags.set_bits((fl & EFLAGS_WRITABLE) | 2);
    cpu.v86 = new32 && eflags & EFLAGS_VM != 0;
    // The selectors first, with unusable caches: a fault while loading the
    // descriptors shows the new task's selectors.
    for (s, &v) in sels.iter().enumerate() {
        segs::set_null(cpu, s, v);
    }
    load_ldt(cpu, bus, ldt, Exception::TS)?;
    if cpu.v86 {
        for (s, &v) in sels.iter().enumerate() {
            segs::set_v86(cpu, s, v);
        }
        segs::set_cpl(cpu, bus, 3);
    } else {
        load_task_segments(cpu, bus, &sels)?;
    }
    let ip = if cpu.code32 {
        cpu.eip
    } else {
        cpu.eip & 0xFFFF
    };
    cpu.eip = ip;
    if ip as u64 >= cpu.seg_end[seg::CS] {
        return Err(Exception::gp(0));
    }
    Ok(())
}

/// CS, SS, DS, ES, FS, GS of the incoming task, with the #TS/#NP/#SS rules.
fn load_task_segments<B: Bus>(
    cpu: &mut Cpu,
    bus: &mut B,
    sels: &[u16; 6],
) -> Result<(), Exception> {
    let cs = sels[seg::CS];
    if desc::is_null(cs) {
        return Err(Exception::ts(0));
    }
    let (mut d, a) = desc::read(cpu, bus, cs, Exception::TS)?;
    let rpl = desc::rpl(cs);
    if !d.is_code() || (d.conforming() && d.dpl() > rpl) || (!d.conforming() && d.dpl() != rpl) {
        return Err(Exception::ts(cs & 0xFFFC));
    }
    if !d.present() {
        return Err(Exception::np(cs & 0xFFFC));
    }
    desc::set_accessed(bus, a, &mut d);
    segs::set_cache(cpu, seg::CS, cs, &d);
    segs::set_cpl(cpu, bus, rpl);

    let ss = sels[seg::SS];
    if desc::is_null(ss) {
        return Err(Exception::ts(0));
    }
    let (mut d, a) = desc::read(cpu, bus, ss, Exception::TS)?;
    if desc::rpl(ss) != cpu.cpl || d.dpl() != cpu.cpl || !d.writable() {
        return Err(Exception::ts(ss & 0xFFFC));
    }
    if !d.present() {
        return Err(Exception::ss(ss & 0xFFFC));
    }
    desc::set_accessed(bus, a, &mut d);
    segs::set_cache(cpu, seg::SS, ss, &d);

    for s in [seg::DS, seg::ES, seg::FS, seg::GS] {
        let v = sels[s];
        if desc::is_null(v) {
            segs::set_null(cpu, s, v);
            continue;
        }
        let (mut d, a) = desc::read(cpu, bus, v, Exception::TS)?;
        if !d.s() || !d.readable() {
            return Err(Exception::ts(v & 0xFFFC));
        }
        if (d.is_data() || !d.conforming()) && (d.dpl() < cpu.cpl || d.dpl() < desc::rpl(v)) {
            return Err(Exception::ts(v & 0xFFFC));
        }
        if !d.present() {
            return Err(Exception::np(v & 0xFFFC));
        }
        desc::set_accessed(bus, a, &mut d);
        segs::set_cache(cpu, s, v, &d);
    }
    Ok(())
}

/// The back link of the current TSS (the task IRET returns to under NT).
pub fn back_link<B: Bus>(cpu: &Cpu, bus: &mut B) -> u16 {
    desc::sys_read16(bus, cpu.tr.base)
}
