//! The PC: memory, devices and the rules that join them into one [`Bus`].
//!
//! `Machine` owns guest physical memory (RAM, ROM, the A20 gate mask applied
//! on every access, the VGA window routed to the devices, the EMS frame and
//! extended memory managers) and the device set. It must not know about DOS
//! or BIOS services (those live in `dos` and `bios` and act on a `Machine`),
//! nor about engines: any engine drives it through the [`Bus`] trait.

pub mod devices;
pub mod ems;
/// L1 integration point: the machine as an `EngineBus` (owned by the L1 tier).
pub mod engine_bus;
pub mod memory;
pub mod scheduler;
pub mod xms;

pub use crate::frame::Frame;
pub use devices::Devices;

use crate::bus::{Bus, Width};
use memory::{Memory, VGA_END, VGA_START};
use std::collections::BTreeMap;

/// Ports whose writes can move the A20 gate (fast A20 and the 8042).
const A20_PORTS: [u16; 3] = [0x60, 0x64, 0x92];

/// The PC as the CPU sees it.
pub struct Machine {
    pub mem: Memory,
    pub dev: Devices,
    pub xms: xms::Xms,
    pub ems: ems::Ems,
    /// Set by every port write: an IRQ may have become deliverable (PIC mask
    /// or EOI), so an engine running a batch must return to the session.
    pub attention: bool,
    /// Port accesses no device claimed, by port: (reads, writes). Filled by
    /// the devices' report when they provide one.
    pub unclaimed: BTreeMap<u16, (u64, u64)>,
}

impl Default for Machine {
    fn default() -> Self {
        Self::new()
    }
}

impl Machine {
    /// A powered-on machine with empty memory; the BIOS fills the ROM.
    pub fn new() -> Machine {
        let mut m = Machine {
            mem: Memory::new(),
            dev: Devices::new(),
            xms: xms::Xms::new(),
            ems: ems::Ems::new(),
            attention: false,
            unclaimed: BTreeMap::new(),
        };
        m.sync_a20();
        m
    }

    /// Copies the devices' A20 gate into the address mask.
    pub fn sync_a20(&mut self) {
        let on = self.dev.a20_enabled();
        self.mem.set_a20(on);
    }

    /// Reads a byte at a real-mode segment:offset (offset wraps in 64 KiB).
    pub fn rd8(&mut self, seg: u16, off: u16) -> u8 {
        self.read8(lin(seg, off))
    }
    pub fn rd16(&mut self, seg: u16, off: u16) -> u16 {
        self.rd8(seg, off) as u16 | (self.rd8(seg, off.wrapping_add(1)) as u16) << 8
    }
    pub fn wr8(&mut self, seg: u16, off: u16, v: u8) {
        self.write8(lin(seg, off), v)
    }
    pub fn wr16(&mut self, seg: u16, off: u16, v: u16) {
        self.wr8(seg, off, v as u8);
        self.wr8(seg, off.wrapping_add(1), (v >> 8) as u8);
    }
    /// A byte as the CPU would read it, without side effects (the VGA latches
    /// stay as they are): for observers such as console text and reports.
    pub fn peek8(&self, addr: u32) -> u8 {
        let a = self.mem.mask(addr);
        if (VGA_START..VGA_END).contains(&a) {
            self.dev.vga.peek_mem(a)
        } else {
            self.mem.read8(a)
        }
    }
    /// Reads `n` bytes at a linear address through the bus (VGA included).
    pub fn read_lin(&mut self, addr: u32, n: usize) -> Vec<u8> {
        (0..n as u32)
            .map(|i| self.read8(addr.wrapping_add(i)))
            .collect()
    }
    /// Writes bytes at a linear address through the bus (VGA included, ROM
    /// protected).
    pub fn write_lin(&mut self, addr: u32, bytes: &[u8]) {
        for (i, &b) in bytes.iter().enumerate() {
            self.write8(addr.wrapping_add(i as u32), b);
        }
    }
    /// Reads an ASCIIZ string at seg:off (at most `max` bytes, without the NUL).
    pub fn read_asciiz(&mut self, seg: u16, off: u16, max: usize) -> Vec<u8> {
        let mut v = Vec::new();
        for i in 0..max {
            let c = self.rd8(seg, off.wrapping_add(i as u16));
            if c == 0 {
                break;
            }
            v.push(c);
        }
        v
    }
}

impl Machine {
    /// A read at (A20-masked) `a >= VGA_START`: the VGA window or memory.
    #[inline(never)]
    fn read8_high(&mut self, a: u32) -> u8 {
        if a < VGA_END {
            return self.dev.vga_read(a);
        }
        self.mem.read8(a)
    }

    /// A write at (A20-masked) `a >= VGA_START`.
    #[inline(never)]
    fn write8_high(&mut self, a: u32, v: u8) {
        if a < VGA_END {
            self.dev.vga_write(a, v);
        } else {
            self.mem.write8(a, v);
        }
    }

    // Wide accesses off the conventional-RAM path, out of line like the
    // byte ones: extended memory (DPMI programs' code, data and stacks,
    // VBE linear frame buffers) in one go when every byte is RAM above
    // 1 MiB and the A20 mask keeps them contiguous; anything else byte by
    // byte, ascending, as the trait's defaults do.

    /// A word read at `addr` (A20-masked `a`) not below the VGA window.
    #[inline(never)]
    fn read16_high(&mut self, addr: u32, a: u32) -> u16 {
        if self.mem.mask(addr.wrapping_add(1)) == a.wrapping_add(1) {
            if let Some(b) = self.mem.read_ext::<2>(a) {
                return u16::from_le_bytes(b);
            }
        }
        self.read8(addr) as u16 | (self.read8(addr.wrapping_add(1)) as u16) << 8
    }

    /// A dword read at `addr` (A20-masked `a`) not below the VGA window.
    #[inline(never)]
    fn read32_high(&mut self, addr: u32, a: u32) -> u32 {
        if self.mem.mask(addr.wrapping_add(3)) == a.wrapping_add(3) {
            if let Some(b) = self.mem.read_ext::<4>(a) {
                return u32::from_le_bytes(b);
            }
        }
        self.read16(addr) as u32 | (self.read16(addr.wrapping_add(2)) as u32) << 16
    }

    /// A word write at `addr` (A20-masked `a`) not below the VGA window.
    #[inline(never)]
    fn write16_high(&mut self, addr: u32, a: u32, v: u16) {
        if self.mem.mask(addr.wrapping_add(1)) == a.wrapping_add(1)
            && self.mem.write_ext(a, v.to_le_bytes())
        {
            return;
        }
        self.write8(addr, v as u8);
        self.write8(addr.wrapping_add(1), (v >> 8) as u8);
    }

    /// A dword write at `addr` (A20-masked `a`) not below the VGA window.
    #[inline(never)]
    fn write32_high(&mut self, addr: u32, a: u32, v: u32) {
        if self.mem.mask(addr.wrapping_add(3)) == a.wrapping_add(3)
            && self.mem.write_ext(a, v.to_le_bytes())
        {
            return;
        }
        self.write16(addr, v as u16);
        self.write16(addr.wrapping_add(2), (v >> 16) as u16);
    }
}

/// Linear address of a real-mode segment:offset.
#[inline(always)]
pub fn lin(seg: u16, off: u16) -> u32 {
    ((seg as u32) << 4) + off as u32
}

impl Bus for Machine {
    // Conventional RAM inline; the VGA window, ROM and memory above 1 MiB
    // out of line, so the handlers the CPU instantiates for this bus stay
    // small (the VGA's write pipeline inlined into every one of them made
    // each 5-8 KiB).
    #[inline(always)]
    fn read8(&mut self, addr: u32) -> u8 {
        let a = self.mem.mask(addr);
        if a < VGA_START {
            return self.mem.read8_low(a);
        }
        self.read8_high(a)
    }

    #[inline(always)]
    fn write8(&mut self, addr: u32, v: u8) {
        let a = self.mem.mask(addr);
        if a < VGA_START {
            self.mem.write8_low(a, v);
        } else {
            self.write8_high(a, v);
        }
    }

    // Wide accesses: conventional RAM below the VGA window in one go (the
    // A20 mask cannot split them there: `mask(addr + k) == mask(addr) + k`
    // whenever `mask(addr) + k < 0xA0000`); anything else byte by byte,
    // exactly as the trait's defaults do.
    #[inline(always)]
    fn read16(&mut self, addr: u32) -> u16 {
        let a = self.mem.mask(addr);
        if a < VGA_START - 1 {
            return self.mem.read16_low(a);
        }
        self.read16_high(addr, a)
    }

    #[inline(always)]
    fn read32(&mut self, addr: u32) -> u32 {
        let a = self.mem.mask(addr);
        if a < VGA_START - 3 {
            return self.mem.read32_low(a);
        }
        self.read32_high(addr, a)
    }

    #[inline(always)]
    fn write16(&mut self, addr: u32, v: u16) {
        let a = self.mem.mask(addr);
        if a < VGA_START - 1 {
            self.mem.write16_low(a, v);
            return;
        }
        self.write16_high(addr, a, v);
    }

    #[inline(always)]
    fn write32(&mut self, addr: u32, v: u32) {
        let a = self.mem.mask(addr);
        if a < VGA_START - 3 {
            self.mem.write32_low(a, v);
            return;
        }
        self.write32_high(addr, a, v);
    }

    fn io_read(&mut self, port: u16, w: Width, now: u64) -> u32 {
        self.dev.io_read(port, w, now, self.mem.ram_mut())
    }

    fn io_write(&mut self, port: u16, w: Width, v: u32, now: u64) {
        self.dev.io_write(port, w, v, now, self.mem.ram_mut());
        self.attention = true;
        if A20_PORTS.contains(&port) {
            self.sync_a20();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memory::RAM_SIZE;

    /// The wide accesses above the conventional-RAM fast path (extended
    /// memory in one go, anything else byte by byte) read, write and log
    /// code-page bytes exactly as the byte accesses do: at the VGA window,
    /// ROM, the 1 MiB line under both A20 states, the end of RAM and the
    /// top of the address space.
    #[test]
    fn wide_accesses_above_conventional_ram_equal_bytes() {
        let addrs = [
            0x9_FFFE,
            0xB_FFFE,
            0xE_FFFE,
            0xF_FFFD,
            0xF_FFFE,
            0x10_0000,
            0x10_0FFE,
            0x1F_FFFE,
            0x1F_FFFD,
            0x20_0001,
            0x2F_FFFE,
            RAM_SIZE as u32 - 4,
            RAM_SIZE as u32 - 2,
            RAM_SIZE as u32 - 1,
            0xFFFF_FFFE,
        ];
        for a20 in [false, true] {
            for &addr in &addrs {
                let mut wide = Machine::new();
                let mut bytes = Machine::new();
                for m in [&mut wide, &mut bytes] {
                    m.mem.set_a20(a20);
                    for page in [0x9F, 0xFF, 0x100, 0x1FF, 0x200, 0xFFF] {
                        m.mem.set_code_page(page, true);
                    }
                }
                let v = 0x8765_4321u32 ^ addr;
                wide.write32(addr, v);
                wide.write16(addr.wrapping_add(5), v as u16);
                for i in 0..4 {
                    bytes.write8(addr.wrapping_add(i), (v >> (8 * i)) as u8);
                }
                bytes.write8(addr.wrapping_add(5), v as u8);
                bytes.write8(addr.wrapping_add(6), (v >> 8) as u8);
                let r32 = (0..4).fold(0u32, |x, i| {
                    x | (bytes.read8(addr.wrapping_add(i)) as u32) << (8 * i)
                });
                let r16 = bytes.read8(addr.wrapping_add(5)) as u16
                    | (bytes.read8(addr.wrapping_add(6)) as u16) << 8;
                assert_eq!(wide.read32(addr), r32, "read32 {addr:#X} a20 {a20}");
                assert_eq!(wide.read16(addr.wrapping_add(5)), r16, "read16 {addr:#X}");
                assert_eq!(
                    wide.mem.take_code_writes(),
                    bytes.mem.take_code_writes(),
                    "code-page log {addr:#X} a20 {a20}"
                );
                assert!(wide.mem.ram() == bytes.mem.ram(), "RAM {addr:#X} a20 {a20}");
            }
        }
    }
}
