//! The CPU's view of the outside world: physical memory and I/O ports.
//!
//! Engines are generic over [`Bus`] so that a conformance harness (flat RAM),
//! the DOS machine (RAM, VGA windows, code bits, devices) and a user-mode
//! engine's paged address space plug in without a virtual call on the hot
//! path. Addresses are physical (after segmentation); the A20 gate, device
//! memory and code-write detection are the bus's business, not this crate's.
//!
//! Memory faults (an access violation in a user-mode engine, a page fault
//! under paging) are the bus's to detect and the CPU's to report: a bus that
//! refuses an access records a [`MemFault`] (the first one wins), returns 0
//! for reads and drops every write from then on, until the CPU takes the fault
//! with [`Bus::take_fault`] after the handler ran. The CPU then undoes the
//! instruction's register effects and reports the fault instead of retiring
//! it, so a faulting instruction has no architectural effect. The defaults
//! say "never faults" and compile away, so a bus that cannot fault (toyvm's
//! real-mode machine) pays nothing.
pub use shared_ir::flags::Width;

/// What kind of access faulted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    Read,
    Write,
    /// An instruction fetch (the CPU turns a fetch's read fault into this).
    Execute,
}

/// A memory access the bus refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MemFault {
    /// The first linear address of the access that could not be made.
    pub addr: u32,
    pub access: Access,
}

/// What the CPU tells a paging adapter ([`crate::paging::Paged`]) in the
/// middle of an instruction: privilege changes, implicit supervisor accesses
/// (descriptor tables, the TSS, the IDT), and new paging state. Buses that
/// do not translate ignore all of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mmu {
    /// The current privilege level changed (user accesses are CPL 3 ones).
    Cpl(u8),
    /// Implicit supervisor accesses begin (`true`) or end (`false`): the
    /// CPU reads descriptors, the TSS or the IDT whatever the CPL.
    System(bool),
    /// CR0 or CR3 were written (a task switch loads CR3 too): translations
    /// made under the old values are dropped.
    Reload { cr0: u32, cr3: u32 },
    /// INVLPG of the page holding this linear address.
    Invlpg(u32),
}

/// Physical memory and port space as the CPU sees it.
pub trait Bus {
    /// Reads one byte at a physical address.
    fn read8(&mut self, addr: u32) -> u8;
    /// Writes one byte at a physical address.
    fn write8(&mut self, addr: u32, v: u8);

    /// Reads a little-endian word. The CPU has already checked segment limits.
    /// A bus that can fault implements the wide accesses itself, all or
    /// nothing: a write that straddles a refused page writes no byte.
    #[inline]
    fn read16(&mut self, addr: u32) -> u16 {
        self.read8(addr) as u16 | (self.read8(addr.wrapping_add(1)) as u16) << 8
    }
    /// Reads a little-endian dword.
    #[inline]
    fn read32(&mut self, addr: u32) -> u32 {
        self.read16(addr) as u32 | (self.read16(addr.wrapping_add(2)) as u32) << 16
    }
    /// Writes a little-endian word.
    #[inline]
    fn write16(&mut self, addr: u32, v: u16) {
        self.write8(addr, v as u8);
        self.write8(addr.wrapping_add(1), (v >> 8) as u8);
    }
    /// Writes a little-endian dword.
    #[inline]
    fn write32(&mut self, addr: u32, v: u32) {
        self.write16(addr, v as u16);
        self.write16(addr.wrapping_add(2), (v >> 16) as u16);
    }

    /// Takes the pending memory fault, if an access since the last call was
    /// refused (see the module header for the contract).
    #[inline(always)]
    fn take_fault(&mut self) -> Option<MemFault> {
        None
    }
    /// Whether a fault is pending (without taking it): handlers whose effects
    /// the register snapshot does not cover (x87 state, port writes, LGDT)
    /// check it between their reads and their effects.
    #[inline(always)]
    fn fault_pending(&self) -> bool {
        false
    }
    /// Records a write fault if any of the `len` bytes at `addr` could not be
    /// written, writing nothing. Instructions that write more than one
    /// location (PUSHA, ENTER, far CALL, CMPXCHG8B, FSAVE) probe the whole span
    /// first, so a fault leaves memory as it was.
    #[inline(always)]
    fn probe_write(&mut self, addr: u32, len: u32) {
        let _ = (addr, len);
    }

    /// Paging control (see [`Mmu`]); a bus that does not translate ignores it.
    #[inline(always)]
    fn mmu(&mut self, c: Mmu) {
        let _ = c;
    }
    /// The page-fault error code bits of the fault last taken with
    /// [`Bus::take_fault`] (bit 0: protection violation rather than a page
    /// not present, bit 1: write, bit 2: user access); 0 for a bus that does
    /// not page.
    #[inline(always)]
    fn fault_code(&self) -> u16 {
        0
    }

    /// Reads a port. `now` is the guest clock (dispatches) of the instruction
    /// making the read, so devices answer for exactly that moment.
    fn io_read(&mut self, port: u16, w: Width, now: u64) -> u32;
    /// Writes a port at guest time `now`.
    fn io_write(&mut self, port: u16, w: Width, v: u32, now: u64);
}

/// A borrowed bus is a bus (the paging adapter wraps `&mut B` for L0's
/// step).
impl<T: Bus + ?Sized> Bus for &mut T {
    #[inline(always)]
    fn read8(&mut self, addr: u32) -> u8 {
        (**self).read8(addr)
    }
    #[inline(always)]
    fn write8(&mut self, addr: u32, v: u8) {
        (**self).write8(addr, v)
    }
    #[inline(always)]
    fn read16(&mut self, addr: u32) -> u16 {
        (**self).read16(addr)
    }
    #[inline(always)]
    fn read32(&mut self, addr: u32) -> u32 {
        (**self).read32(addr)
    }
    #[inline(always)]
    fn write16(&mut self, addr: u32, v: u16) {
        (**self).write16(addr, v)
    }
    #[inline(always)]
    fn write32(&mut self, addr: u32, v: u32) {
        (**self).write32(addr, v)
    }
    #[inline(always)]
    fn take_fault(&mut self) -> Option<MemFault> {
        (**self).take_fault()
    }
    #[inline(always)]
    fn fault_pending(&self) -> bool {
        (**self).fault_pending()
    }
    #[inline(always)]
    fn probe_write(&mut self, addr: u32, len: u32) {
        (**self).probe_write(addr, len)
    }
    #[inline(always)]
    fn mmu(&mut self, c: Mmu) {
        (**self).mmu(c)
    }
    #[inline(always)]
    fn fault_code(&self) -> u16 {
        (**self).fault_code()
    }
    #[inline(always)]
    fn io_read(&mut self, port: u16, w: Width, now: u64) -> u32 {
        (**self).io_read(port, w, now)
    }
    #[inline(always)]
    fn io_write(&mut self, port: u16, w: Width, v: u32, now: u64) {
        (**self).io_write(port, w, v, now)
    }
}
