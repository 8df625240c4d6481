//! Selectors and descriptors: the 8-byte GDT/LDT/IDT entries and how the CPU
//! reads them.
//!
//! Owns the descriptor layout (base, limit with granularity, access byte,
//! gates' selector, offset and parameter count), the table lookup of a
//! selector (GDT or LDT, limit-checked), and the accessed and busy bits the
//! CPU sets in memory. Every read and write here is an implicit supervisor
//! access ([`Mmu::System`]), whatever the CPL. It must not decide what a
//! descriptor may be used for: the privilege and type rules of each use live
//! with that use (`segs`, `xfer`, `pmint`, `task`).

use crate::bus::{Bus, Mmu};
use crate::{Cpu, Exception};

/// Selector table indicator: the LDT.
pub const TI: u16 = 4;

/// Requested privilege level of a selector.
#[inline(always)]
pub fn rpl(sel: u16) -> u8 {
    (sel & 3) as u8
}

/// A null selector (index 0 in the GDT, any RPL).
#[inline(always)]
pub fn is_null(sel: u16) -> bool {
    sel & !3 == 0
}

/// System descriptor types (S = 0).
pub mod sys {
    pub const TSS16: u8 = 1;
    pub const LDT: u8 = 2;
    pub const TSS16_BUSY: u8 = 3;
    pub const CALL16: u8 = 4;
    pub const TASK: u8 = 5;
    pub const INT16: u8 = 6;
    pub const TRAP16: u8 = 7;
    pub const TSS32: u8 = 9;
    pub const TSS32_BUSY: u8 = 11;
    pub const CALL32: u8 = 12;
    pub const INT32: u8 = 14;
    pub const TRAP32: u8 = 15;
}

/// One 8-byte descriptor as two little-endian dwords.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Desc {
    pub lo: u32,
    pub hi: u32,
}

impl Desc {
    pub fn base(&self) -> u32 {
        (self.lo >> 16) | (self.hi & 0xFF) << 16 | (self.hi & 0xFF00_0000)
    }
    /// The 20-bit limit field.
    pub fn raw_limit(&self) -> u32 {
        (self.lo & 0xFFFF) | (self.hi & 0x000F_0000)
    }
    /// Granularity: the limit counts 4 KiB pages.
    pub fn g(&self) -> bool {
        self.hi & (1 << 23) != 0
    }
    /// The byte limit (granularity applied).
    pub fn limit(&self) -> u32 {
        if self.g() {
            self.raw_limit() << 12 | 0xFFF
        } else {
            self.raw_limit()
        }
    }
    /// The access byte (P, DPL, S, type).
    pub fn access(&self) -> u8 {
        (self.hi >> 8) as u8
    }
    pub fn typ(&self) -> u8 {
        ((self.hi >> 8) & 0xF) as u8
    }
    /// A code or data segment (S = 1) rather than a system descriptor.
    pub fn s(&self) -> bool {
        self.hi & (1 << 12) != 0
    }
    pub fn dpl(&self) -> u8 {
        ((self.hi >> 13) & 3) as u8
    }
    pub fn present(&self) -> bool {
        self.hi & (1 << 15) != 0
    }
    /// D/B: 32-bit code, a 32-bit stack, or an expand-down limit of 4 GiB.
    pub fn db(&self) -> bool {
        self.hi & (1 << 22) != 0
    }
    pub fn is_code(&self) -> bool {
        self.s() && self.typ() & 8 != 0
    }
    pub fn is_data(&self) -> bool {
        self.s() && self.typ() & 8 == 0
    }
    /// Code: conforming.
    pub fn conforming(&self) -> bool {
        self.is_code() && self.typ() & 4 != 0
    }
    /// Code: readable.
    pub fn readable(&self) -> bool {
        self.is_data() || self.typ() & 2 != 0
    }
    /// Data: writable.
    pub fn writable(&self) -> bool {
        self.is_data() && self.typ() & 2 != 0
    }
    /// The system type, or `None` for a code/data segment.
    pub fn sys_type(&self) -> Option<u8> {
        if self.s() {
            None
        } else {
            Some(self.typ())
        }
    }
    /// Gates: the target selector.
    pub fn gate_sel(&self) -> u16 {
        (self.lo >> 16) as u16
    }
    /// Gates: the target offset (16 bits in a 286 gate).
    pub fn gate_off(&self) -> u32 {
        let off = (self.lo & 0xFFFF) | (self.hi & 0xFFFF_0000);
        if self.typ() & 8 == 0 {
            off & 0xFFFF
        } else {
            off
        }
    }
    /// Call gates: the parameter count.
    pub fn gate_params(&self) -> u32 {
        self.hi & 0x1F
    }
    /// The cache attribute word: access byte, flags nibble in bits 8-11.
    pub fn attr(&self) -> u16 {
        (((self.hi >> 8) & 0xFF) | ((self.hi >> 12) & 0xF00)) as u16
    }
}

/// Reads a dword with supervisor rights.
pub fn sys_read32<B: Bus>(bus: &mut B, lin: u32) -> u32 {
    bus.mmu(Mmu::System(true));
    let v = bus.read32(lin);
    bus.mmu(Mmu::System(false));
    v
}

/// Reads a word with supervisor rights.
pub fn sys_read16<B: Bus>(bus: &mut B, lin: u32) -> u16 {
    bus.mmu(Mmu::System(true));
    let v = bus.read16(lin);
    bus.mmu(Mmu::System(false));
    v
}

/// Writes a word with supervisor rights.
pub fn sys_write16<B: Bus>(bus: &mut B, lin: u32, v: u16) {
    bus.mmu(Mmu::System(true));
    bus.write16(lin, v);
    bus.mmu(Mmu::System(false));
}

/// Writes a dword with supervisor rights.
pub fn sys_write32<B: Bus>(bus: &mut B, lin: u32, v: u32) {
    bus.mmu(Mmu::System(true));
    bus.write32(lin, v);
    bus.mmu(Mmu::System(false));
}

/// The linear address of the descriptor `sel` names, or `None` when it lies
/// past its table's limit (or names the LDT while none is loaded).
pub fn entry_addr(cpu: &Cpu, sel: u16) -> Option<u32> {
    let off = (sel & !7) as u32;
    if sel & TI != 0 {
        if cpu.ldtr.attr & 0x80 == 0 || off + 7 > cpu.ldtr.limit {
            return None;
        }
        Some(cpu.ldtr.base.wrapping_add(off))
    } else {
        if off + 7 > cpu.gdt_limit as u32 {
            return None;
        }
        Some(cpu.gdt_base.wrapping_add(off))
    }
}

/// Reads the descriptor a selector names. `err` is the exception raised
/// (with the selector as error code) when it lies past its table.
pub fn read<B: Bus>(
    cpu: &Cpu,
    bus: &mut B,
    sel: u16,
    err: Exception,
) -> Result<(Desc, u32), Exception> {
    let Some(a) = entry_addr(cpu, sel) else {
        return Err(err.for_sel(sel));
    };
    Ok((read_at(bus, a), a))
}

/// Reads the descriptor at a linear address.
pub fn read_at<B: Bus>(bus: &mut B, a: u32) -> Desc {
    bus.mmu(Mmu::System(true));
    let lo = bus.read32(a);
    let hi = bus.read32(a.wrapping_add(4));
    bus.mmu(Mmu::System(false));
    Desc { lo, hi }
}

/// Sets the accessed bit of a code or data descriptor at `a` (in memory and
/// in `d`), as a segment load does.
pub fn set_accessed<B: Bus>(bus: &mut B, a: u32, d: &mut Desc) {
    if d.s() && d.hi & (1 << 8) == 0 {
        d.hi |= 1 << 8;
        bus.mmu(Mmu::System(true));
        bus.write8(a.wrapping_add(5), (d.hi >> 8) as u8);
        bus.mmu(Mmu::System(false));
    }
}

/// Sets or clears the busy bit of a TSS descriptor in the GDT.
pub fn set_busy<B: Bus>(cpu: &Cpu, bus: &mut B, sel: u16, busy: bool) {
    if let Some(a) = entry_addr(cpu, sel & !TI) {
        bus.mmu(Mmu::System(true));
        let b = bus.read8(a.wrapping_add(5));
        let nb = if busy { b | 2 } else { b & !2 };
        bus.write8(a.wrapping_add(5), nb);
        bus.mmu(Mmu::System(false));
    }
}
