//! Guest physical memory: 16 MiB of RAM with the A20 wrap, the read-only ROM
//! areas, the open-bus holes, and the code-write hook a compiling tier needs.
//!
//! Owns the bytes of RAM and ROM and the rules of who may write where, and
//! says whether anyone may have written RAM without the code-write log
//! ([`Memory::raw_gen`]). It must not know about the VGA window (the machine routes A0000-BFFFF to the
//! devices before calling here), DOS structures or devices.

/// Physical RAM size (conventional + HMA + extended).
pub const RAM_SIZE: usize = 16 << 20;
/// Top of conventional memory (640 KiB).
pub const CONV_TOP: u32 = 0xA0000;
/// The VGA window A0000-BFFFF (routed to the devices, never stored here).
pub const VGA_START: u32 = 0xA0000;
pub const VGA_END: u32 = 0xC0000;
/// The video BIOS ROM (fonts live here).
pub const VIDEO_ROM: u32 = 0xC0000;
pub const VIDEO_ROM_END: u32 = 0xC8000;
/// Upper memory blocks DOS manages (RAM).
pub const UMB_START: u32 = 0xD0000;
/// The EMS page frame (RAM whose contents the EMS driver swaps).
pub const EMS_FRAME: u32 = 0xE0000;
pub const EMS_FRAME_END: u32 = 0xF0000;
/// The system BIOS ROM segment F000.
pub const BIOS_ROM: u32 = 0xF0000;
/// Code pages are tracked at this granularity.
pub const CODE_PAGE_SHIFT: u32 = 12;

/// Guest physical memory.
pub struct Memory {
    /// Fixed size, so indexing below the VGA window needs no bounds check.
    ram: Box<[u8; RAM_SIZE]>,
    /// `!(1 << 20)` while the A20 gate is closed, `!0` when open.
    a20_mask: u32,
    /// One byte per 4 KiB page: nonzero when a compiling tier holds code
    /// derived from that page. Writes to such a page are logged in
    /// `code_writes` so the tier can invalidate. Zero everywhere until a tier
    /// marks pages, so the hot path costs one load and a branch.
    code_pages: Box<[u8; RAM_SIZE >> CODE_PAGE_SHIFT]>,
    code_writes: Vec<u32>,
    /// While false, writes into code pages are not logged: an engine whose
    /// own store monitor sees every guest store turns the log off for the
    /// duration of its run (`EngineBus::monitor_stores`), so a long run
    /// storing into a code page does not grow the log.
    log_on: bool,
    /// Bumped every time RAM is handed out for writing past the code-write
    /// log ([`Memory::ram_mut`], [`Memory::load`]): while it stands still,
    /// every change to RAM went through [`Memory::write8`].
    raw_gen: u64,
}

impl Default for Memory {
    fn default() -> Self {
        Self::new()
    }
}

impl Memory {
    /// RAM cleared to zero, ROM areas to 0xFF until the BIOS fills them, A20
    /// closed (as after reset).
    pub fn new() -> Memory {
        let mut ram = vec![0u8; RAM_SIZE];
        ram[VIDEO_ROM as usize..UMB_START as usize].fill(0xFF);
        ram[BIOS_ROM as usize..0x100000].fill(0xFF);
        Memory {
            ram: ram.into_boxed_slice().try_into().expect("RAM_SIZE bytes"),
            a20_mask: !(1 << 20),
            code_pages: vec![0; RAM_SIZE >> CODE_PAGE_SHIFT]
                .into_boxed_slice()
                .try_into()
                .expect("one byte per page"),
            code_writes: Vec::new(),
            log_on: true,
            raw_gen: 0,
        }
    }

    /// Opens or closes the A20 gate (the devices own the gate; the machine
    /// copies its state here whenever it may have changed).
    #[inline]
    pub fn set_a20(&mut self, enabled: bool) {
        self.a20_mask = if enabled { !0 } else { !(1 << 20) };
    }

    #[inline]
    pub fn a20(&self) -> bool {
        self.a20_mask == !0
    }

    /// Applies the A20 gate to a physical address.
    #[inline(always)]
    pub fn mask(&self, addr: u32) -> u32 {
        addr & self.a20_mask
    }

    /// Reads a byte at an (already A20-masked) address outside the VGA window.
    #[inline(always)]
    pub fn read8(&self, a: u32) -> u8 {
        match self.ram.get(a as usize) {
            Some(&v) => v,
            None => 0xFF, // beyond installed memory: open bus
        }
    }

    /// Writes a byte at an (already A20-masked) address outside the VGA
    /// window. ROM and open-bus areas ignore writes.
    #[inline(always)]
    pub fn write8(&mut self, a: u32, v: u8) {
        let writable = a < VGA_START
            || (a >= 0x100000 && (a as usize) < RAM_SIZE)
            || (UMB_START..EMS_FRAME_END).contains(&a);
        if writable {
            self.ram[a as usize] = v;
            if self.code_pages[(a >> CODE_PAGE_SHIFT) as usize] != 0 && self.log_on {
                self.code_writes.push(a);
            }
        }
    }

    /// Reads a byte of conventional RAM (an A20-masked `a < VGA_START`): the
    /// machine's fast path.
    #[inline(always)]
    pub fn read8_low(&self, a: u32) -> u8 {
        debug_assert!(a < VGA_START);
        self.ram[(a & 0xF_FFFF) as usize]
    }

    /// Writes a byte of conventional RAM (`a < VGA_START`, always writable),
    /// logging it as [`Memory::write8`] does.
    #[inline(always)]
    pub fn write8_low(&mut self, a: u32, v: u8) {
        debug_assert!(a < VGA_START);
        let a = a & 0xF_FFFF;
        self.ram[a as usize] = v;
        if self.code_pages[(a >> CODE_PAGE_SHIFT) as usize] != 0 && self.log_on {
            self.code_writes.push(a);
        }
    }

    /// Reads a little-endian word at an (already A20-masked) address whose
    /// bytes both lie below the VGA window (`a < VGA_START - 1`): the fast
    /// path of the machine's 16-bit reads.
    #[inline(always)]
    pub fn read16_low(&self, a: u32) -> u16 {
        let a = (a & 0xF_FFFF) as usize;
        u16::from_le_bytes([self.ram[a], self.ram[a + 1]])
    }

    /// Reads a little-endian dword below the VGA window (`a < VGA_START - 3`).
    #[inline(always)]
    pub fn read32_low(&self, a: u32) -> u32 {
        let a = (a & 0xF_FFFF) as usize;
        u32::from_le_bytes([
            self.ram[a],
            self.ram[a + 1],
            self.ram[a + 2],
            self.ram[a + 3],
        ])
    }

    /// Writes a word below the VGA window (`a < VGA_START - 1`, always
    /// writable RAM), logging code-page bytes exactly as two [`Memory::write8`]
    /// calls would.
    #[inline(always)]
    pub fn write16_low(&mut self, a: u32, v: u16) {
        let a = a & 0xF_FFFF;
        let i = a as usize;
        self.ram[i..i + 2].copy_from_slice(&v.to_le_bytes());
        self.log_code_span(a, 2);
    }

    /// Writes a dword below the VGA window (`a < VGA_START - 3`).
    #[inline(always)]
    pub fn write32_low(&mut self, a: u32, v: u32) {
        let a = a & 0xF_FFFF;
        let i = a as usize;
        self.ram[i..i + 4].copy_from_slice(&v.to_le_bytes());
        self.log_code_span(a, 4);
    }

    /// Reads `N` bytes of extended memory at an (already A20-masked) `a`
    /// when all of them are installed RAM at and above 1 MiB, contiguous
    /// under the A20 mask (the caller checks `mask(addr + N - 1) == a + N -
    /// 1`): what `N` [`Memory::read8`] calls read. `None` otherwise.
    #[inline(always)]
    pub fn read_ext<const N: usize>(&self, a: u32) -> Option<[u8; N]> {
        let i = a as usize;
        if a >= 0x10_0000 && i + N <= RAM_SIZE {
            let mut b = [0u8; N];
            b.copy_from_slice(&self.ram[i..i + N]);
            Some(b)
        } else {
            None
        }
    }

    /// Writes `N` bytes of extended memory as [`Memory::read_ext`] reads
    /// them (all writable RAM), logging code-page bytes exactly as `N`
    /// [`Memory::write8`] calls would; false (nothing written) otherwise.
    #[inline(always)]
    pub fn write_ext<const N: usize>(&mut self, a: u32, b: [u8; N]) -> bool {
        let i = a as usize;
        if a >= 0x10_0000 && i + N <= RAM_SIZE {
            self.ram[i..i + N].copy_from_slice(&b);
            self.log_code_span(a, N as u32);
            true
        } else {
            false
        }
    }

    /// Logs the bytes `a..a + n` that lie in code pages, in address order.
    #[inline(always)]
    fn log_code_span(&mut self, a: u32, n: u32) {
        let last = a + n - 1;
        let (p0, p1) = (a >> CODE_PAGE_SHIFT, last >> CODE_PAGE_SHIFT);
        if self.code_pages[p0 as usize & 0xFFF] | self.code_pages[p1 as usize & 0xFFF] == 0
            || !self.log_on
        {
            return;
        }
        for b in a..=last {
            if self.code_pages[(b >> CODE_PAGE_SHIFT) as usize & 0xFFF] != 0 {
                self.code_writes.push(b);
            }
        }
    }

    /// The whole RAM array (devices use it for DMA; services for bulk access).
    #[inline]
    pub fn ram(&self) -> &[u8] {
        &self.ram[..]
    }
    /// The whole RAM array for writing, past the code-write log: bumps
    /// [`Memory::raw_gen`].
    #[inline]
    pub fn ram_mut(&mut self) -> &mut [u8] {
        self.raw_gen = self.raw_gen.wrapping_add(1);
        &mut self.ram[..]
    }

    /// The whole RAM array for a writer that only ever writes bytes of
    /// pages no tier holds code from (E1's page view, whose writable pages
    /// hold no code byte of its arm): does not bump [`Memory::raw_gen`].
    /// Anyone else must use [`Memory::ram_mut`].
    #[inline(always)]
    pub fn ram_mut_codeless(&mut self) -> &mut [u8] {
        &mut self.ram[..]
    }

    /// A generation that moves whenever RAM may have been written without
    /// the code-write log (bulk copies, DMA, program loads, EMS maps). A
    /// compiling tier that saw it unchanged across host code knows every
    /// write the host made into code pages is in the log.
    #[inline]
    pub fn raw_gen(&self) -> u64 {
        self.raw_gen
    }

    /// Host-side (firmware) store that ignores ROM protection: the BIOS uses
    /// it to build its ROM. Out-of-range bytes are dropped.
    pub fn load(&mut self, addr: u32, bytes: &[u8]) {
        self.raw_gen = self.raw_gen.wrapping_add(1);
        let a = addr as usize;
        if a >= RAM_SIZE {
            return;
        }
        let n = bytes.len().min(RAM_SIZE - a);
        self.ram[a..a + n].copy_from_slice(&bytes[..n]);
    }

    /// Marks or unmarks a 4 KiB page as holding compiled code.
    pub fn set_code_page(&mut self, page: u32, on: bool) {
        if let Some(p) = self.code_pages.get_mut(page as usize) {
            *p = on as u8;
        }
    }

    /// Turns the code-write log on or off (see `log_on`).
    pub fn set_code_log(&mut self, on: bool) {
        self.log_on = on;
    }

    /// Takes the addresses written inside code pages since the last call.
    pub fn take_code_writes(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.code_writes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a20_wraps_and_rom_is_read_only() {
        let mut m = Memory::new();
        m.write8(m.mask(0x100010), 0x42);
        assert_eq!(m.read8(0x10), 0x42);
        m.set_a20(true);
        m.write8(m.mask(0x100010), 0x43);
        assert_eq!(m.read8(0x10), 0x42);
        assert_eq!(m.read8(0x100010), 0x43);
        m.write8(0xF0000, 1);
        assert_eq!(m.read8(0xF0000), 0xFF);
        m.write8(0xE0000, 7);
        assert_eq!(m.read8(0xE0000), 7);
        assert_eq!(m.read8(0x2000000), 0xFF);
    }

    #[test]
    fn code_page_writes_are_logged() {
        let mut m = Memory::new();
        m.set_code_page(1, true);
        m.write8(0x0FFF, 1);
        m.write8(0x1000, 1);
        assert_eq!(m.take_code_writes(), vec![0x1000]);
        assert!(m.take_code_writes().is_empty());
    }

    #[test]
    fn raw_writes_move_the_generation() {
        let mut m = Memory::new();
        let g = m.raw_gen();
        m.write8(0x1000, 1);
        let _ = m.ram();
        let _ = m.ram_mut_codeless();
        assert_eq!(m.raw_gen(), g);
        m.ram_mut()[0x2000] = 1;
        let g2 = m.raw_gen();
        assert_ne!(g2, g);
        m.load(0x3000, &[1]);
        assert_ne!(m.raw_gen(), g2);
    }
}
