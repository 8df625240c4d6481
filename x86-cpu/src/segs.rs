//! Segment registers and their descriptor caches: loading DS, ES, FS, GS and
//! SS in every mode, filling a cache from a descriptor, and the cache rules
//! the fast limit checks rely on.
//!
//! Owns [`load`] (what MOV Sreg, POP Sreg and LDS/LES/LFS/LGS/LSS do: real
//! mode `sel << 4`, V86 the same with a V86 cache, flat user mode a copy of
//! a register holding the selector, protected mode the descriptor with its
//! type, privilege and presence checks), [`set_cache`] (descriptor to
//! `sbase`/`seg_end`/`seg_wend`/`sattr`/`slimit`, `code32`, `stack32`),
//! and the nulling of data segments a return to an outer ring must do. It
//! must not load CS: code-segment loads are far transfers (`xfer`, `pmint`,
//! `task`).

use crate::bus::{Bus, Mmu};
use crate::desc::{self, Desc};
use crate::{seg, Cpu, Exception, REAL_SEG_END};

/// Access byte of a V86 segment: present, DPL 3, read/write data, accessed.
pub const V86_ATTR: u16 = 0xF3;

/// Fills segment register `s` from a descriptor: selector, base, limit,
/// attributes, and the fast-check extents (`seg_end` for reads, `seg_wend`
/// for writes; both 0 for an expand-down data segment, whose accesses the
/// slow path `ea::check_slow` decides). CS also sets the code size, SS the
/// stack size.
pub fn set_cache(cpu: &mut Cpu, s: usize, sel: u16, d: &Desc) {
    let limit = d.limit();
    let end = limit as u64 + 1;
    let (r, w) = if d.is_code() {
        (if d.readable() || s == seg::CS { end } else { 0 }, 0)
    } else if d.typ() & 4 != 0 {
        (0, 0)
    } else {
        (end, if d.writable() { end } else { 0 })
    };
    cpu.sregs[s] = sel;
    cpu.sbase[s] = d.base();
    cpu.slimit[s] = limit;
    cpu.sattr[s] = d.attr();
    cpu.seg_end[s] = r;
    cpu.seg_wend[s] = w;
    match s {
        seg::CS => cpu.code32 = d.db(),
        seg::SS => cpu.stack32 = d.db(),
        _ => {}
    }
}

/// Loads a null selector into a data segment register: every access
/// through it faults (#GP(0), `ea::check_slow`).
pub fn set_null(cpu: &mut Cpu, s: usize, sel: u16) {
    cpu.sregs[s] = sel;
    cpu.sbase[s] = 0;
    cpu.slimit[s] = 0;
    cpu.sattr[s] = 0;
    cpu.seg_end[s] = 0;
    cpu.seg_wend[s] = 0;
}

/// Loads a segment register as V86 mode does: base `sel << 4`, limit
/// 0xFFFF, read/write data at DPL 3 (CS too: V86 code is 16-bit).
pub fn set_v86(cpu: &mut Cpu, s: usize, sel: u16) {
    cpu.sregs[s] = sel;
    cpu.sbase[s] = (sel as u32) << 4;
    cpu.slimit[s] = 0xFFFF;
    cpu.sattr[s] = V86_ATTR;
    cpu.seg_end[s] = REAL_SEG_END;
    cpu.seg_wend[s] = REAL_SEG_END;
    match s {
        seg::CS => cpu.code32 = false,
        seg::SS => cpu.stack32 = false,
        _ => {}
    }
}

/// Sets the CPL (the paging adapter hears of it).
#[inline]
pub fn set_cpl<B: Bus>(cpu: &mut Cpu, bus: &mut B, cpl: u8) {
    cpu.cpl = cpl;
    bus.mmu(Mmu::Cpl(cpl));
}

/// Loads segment register `s` (not CS) with `sel` as the current mode does:
/// MOV Sreg, POP Sreg, LDS and friends.
pub fn load<B: Bus>(cpu: &mut Cpu, bus: &mut B, s: usize, sel: u16) -> Result<(), Exception> {
    if !cpu.pmode {
        cpu.load_seg_real(s, sel);
        return Ok(());
    }
    if cpu.v86 {
        set_v86(cpu, s, sel);
        return Ok(());
    }
    if cpu.flat_user {
        return load_flat(cpu, s, sel);
    }
    load_pm(cpu, bus, s, sel)
}

/// Flat user mode has no descriptor tables: a null selector makes DS, ES,
/// FS or GS unusable (#GP for CS and SS), and any other selector must be one
/// a segment register already holds, whose cache it copies (so `push ds;
/// pop es` works and an unknown selector is #GP as a bad descriptor is).
fn load_flat(cpu: &mut Cpu, s: usize, sel: u16) -> Result<(), Exception> {
    if desc::is_null(sel) {
        if s == seg::CS || s == seg::SS {
            return Err(Exception::GP);
        }
        set_null(cpu, s, sel);
        return Ok(());
    }
    let Some(from) = (0..6).find(|&i| cpu.sregs[i] == sel && (i == s || s != seg::CS)) else {
        return Err(Exception::gp(sel & 0xFFFC));
    };
    cpu.sregs[s] = sel;
    cpu.sbase[s] = cpu.sbase[from];
    cpu.seg_end[s] = cpu.seg_end[from];
    cpu.seg_wend[s] = cpu.seg_wend[from];
    cpu.sattr[s] = cpu.sattr[from];
    cpu.slimit[s] = cpu.slimit[from];
    Ok(())
}

/// The protected-mode load of a data or stack segment register.
fn load_pm<B: Bus>(cpu: &mut Cpu, bus: &mut B, s: usize, sel: u16) -> Result<(), Exception> {
    if s == seg::SS {
        if desc::is_null(sel) {
            return Err(Exception::gp(0));
        }
        let (mut d, a) = desc::read(cpu, bus, sel, Exception::GP)?;
        if desc::rpl(sel) != cpu.cpl || !d.writable() || d.dpl() != cpu.cpl {
            return Err(Exception::gp(sel & 0xFFFC));
        }
        if !d.present() {
            return Err(Exception::ss(sel & 0xFFFC));
        }
        desc::set_accessed(bus, a, &mut d);
        set_cache(cpu, s, sel, &d);
        return Ok(());
    }
    if desc::is_null(sel) {
        set_null(cpu, s, sel);
        return Ok(());
    }
    let (mut d, a) = desc::read(cpu, bus, sel, Exception::GP)?;
    if !d.s() || !d.readable() {
        return Err(Exception::gp(sel & 0xFFFC));
    }
    if (d.is_data() || !d.conforming()) && (desc::rpl(sel) > d.dpl() || cpu.cpl > d.dpl()) {
        return Err(Exception::gp(sel & 0xFFFC));
    }
    if !d.present() {
        return Err(Exception::np(sel & 0xFFFC));
    }
    desc::set_accessed(bus, a, &mut d);
    set_cache(cpu, s, sel, &d);
    Ok(())
}

/// After a return to an outer ring: DS, ES, FS and GS holding a segment the
/// new CPL may not use (data or non-conforming code with DPL < CPL) become
/// null.
pub fn drop_inner_data(cpu: &mut Cpu) {
    for s in [seg::ES, seg::DS, seg::FS, seg::GS] {
        let attr = cpu.sattr[s];
        let dpl = ((attr >> 5) & 3) as u8;
        let code = attr & 0x18 == 0x18;
        let conforming = code && attr & 4 != 0;
        if attr & 0x80 != 0 && !conforming && dpl < cpu.cpl {
            set_null(cpu, s, 0);
        }
    }
}

/// Entering real mode (CR0.PE cleared): the caches stay (unreal mode is
/// what the hardware gives), but real mode checks limits only, so the
/// write extents follow the read ones; a null cache becomes a 64 KiB data
/// segment (real-mode loads only set the base); the CPL is 0.
pub fn enter_real(cpu: &mut Cpu) {
    for s in 0..6 {
        if cpu.sattr[s] & 0x80 == 0 {
            cpu.sattr[s] = 0x93;
            cpu.slimit[s] = 0xFFFF;
        }
        if cpu.seg_end[s] == 0 {
            // Null, expand-down or unreadable: the plain limit applies.
            cpu.seg_end[s] = cpu.slimit[s] as u64 + 1;
        }
        cpu.seg_wend[s] = cpu.seg_end[s];
    }
    cpu.cpl = 0;
    cpu.v86 = false;
}
