//! The CPU's view of the outside world: physical memory and I/O ports.
//!
//! Engines are generic over [`Bus`] so that a conformance harness (flat RAM),
//! the DOS machine (RAM, VGA windows, code bits, devices) and a user-mode
//! engine's paged address space plug in without a virtual call on the hot
//! path. Addresses are physical (after segmentation); the A20 gate, device
//! memory and code-write detection are the bus's business, not this crate's.
pub use shared_ir::flags::Width;

/// Physical memory and port space as the CPU sees it.
pub trait Bus {
    /// Reads one byte at a physical address.
    fn read8(&mut self, addr: u32) -> u8;
    /// Writes one byte at a physical address.
    fn write8(&mut self, addr: u32, v: u8);

    /// Reads a little-endian word. The CPU has already checked segment limits.
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

    /// Reads a port. `now` is the guest clock (dispatches) of the instruction
    /// making the read, so devices answer for exactly that moment.
    fn io_read(&mut self, port: u16, w: Width, now: u64) -> u32;
    /// Writes a port at guest time `now`.
    fn io_write(&mut self, port: u16, w: Width, v: u32, now: u64);
}
