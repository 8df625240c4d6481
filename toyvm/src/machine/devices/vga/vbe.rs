//! The SVGA side of the adapter that VESA BIOS Extensions 1.2 program: the
//! table of VBE modes, 1 MiB of linear video memory, the bank (window A
//! position), the logical scan line and display start, the CPU's path to
//! that memory through the 64 KiB window at A0000h while a VBE mode is on,
//! and the scanout of the packed-pixel and direct-colour modes.
//!
//! Owns what a VBE mode adds to the VGA. It must not know INT 10h's calling
//! convention (that is `bios::vbe`) and must not keep time; the standard VGA
//! registers and planes stay [`super::Vga`]'s and are untouched while a VBE
//! mode is on, so leaving it (a standard mode set) shows them again.
//!
//! The model is a generic VBE 1.2 adapter, as DOS programs of 1994-1998
//! expect one: a single read/write window A at A000h, 64 KiB wide with 64 KiB
//! granularity (bank `n` maps video memory `n * 64K ..`), no linear frame
//! buffer (VBE 2.0), a 6-bit DAC for the 8-bit modes.

use crate::frame::Frame;

/// Video memory a VBE mode addresses (reported as 16 x 64 KiB by 4F00h).
pub const VRAM_SIZE: usize = 0x10_0000;
/// Window size and granularity, in bytes.
pub const WINDOW: u32 = 0x1_0000;

/// How a mode's pixels are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pixels {
    /// One byte per pixel through the DAC (VBE memory model 4).
    Packed8,
    /// 16 bits: 1:5:5:5 (x, red, green, blue), memory model 6.
    Rgb555,
    /// 16 bits: 5:6:5, memory model 6.
    Rgb565,
    /// 24 bits: blue, green, red bytes, memory model 6.
    Rgb888,
}

impl Pixels {
    pub fn bits(self) -> u8 {
        match self {
            Pixels::Packed8 => 8,
            Pixels::Rgb555 => 15,
            Pixels::Rgb565 => 16,
            Pixels::Rgb888 => 24,
        }
    }
    pub fn bytes(self) -> u32 {
        match self {
            Pixels::Packed8 => 1,
            Pixels::Rgb555 | Pixels::Rgb565 => 2,
            Pixels::Rgb888 => 3,
        }
    }
}

/// One VBE mode: its number and geometry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VbeMode {
    pub number: u16,
    pub width: u32,
    pub height: u32,
    pub pixels: Pixels,
}

impl VbeMode {
    /// Bytes per scan line at the mode's own width.
    pub fn pitch(&self) -> u32 {
        self.width * self.pixels.bytes()
    }
}

/// The VESA-defined mode numbers this adapter has (each fits in 1 MiB).
pub const MODES: &[VbeMode] = &[
    mode(0x100, 640, 400, Pixels::Packed8),
    mode(0x101, 640, 480, Pixels::Packed8),
    mode(0x103, 800, 600, Pixels::Packed8),
    mode(0x105, 1024, 768, Pixels::Packed8),
    mode(0x10D, 320, 200, Pixels::Rgb555),
    mode(0x10E, 320, 200, Pixels::Rgb565),
    mode(0x10F, 320, 200, Pixels::Rgb888),
    mode(0x110, 640, 480, Pixels::Rgb555),
    mode(0x111, 640, 480, Pixels::Rgb565),
    mode(0x112, 640, 480, Pixels::Rgb888),
    mode(0x113, 800, 600, Pixels::Rgb555),
    mode(0x114, 800, 600, Pixels::Rgb565),
];

const fn mode(number: u16, width: u32, height: u32, pixels: Pixels) -> VbeMode {
    VbeMode {
        number,
        width,
        height,
        pixels,
    }
}

/// The mode with VBE number `n` (bits 0-8), if the adapter has it.
pub fn find(n: u16) -> Option<VbeMode> {
    MODES.iter().copied().find(|m| m.number == n & 0x1FF)
}

/// VBE state: off (`mode` None) until a VBE mode set.
#[derive(Clone, Debug, Default)]
pub struct Vbe {
    pub mode: Option<VbeMode>,
    /// Window A position in granularity units (64 KiB).
    pub bank: u16,
    /// Bytes per logical scan line (4F06h may widen it).
    pub pitch: u32,
    /// Display start: first displayed pixel column and scan line (4F07h).
    pub start_x: u32,
    pub start_y: u32,
    /// Video memory; empty until the first VBE mode set, so machines that
    /// never use VBE carry (and clone, and hash) nothing.
    pub vram: Vec<u8>,
}

impl Vbe {
    /// Whether a VBE mode owns the display and the A0000h window.
    #[inline]
    pub fn on(&self) -> bool {
        self.mode.is_some()
    }

    /// Enters `m`; video memory is cleared unless `keep` (mode bit 15).
    pub fn set(&mut self, m: VbeMode, keep: bool) {
        if self.vram.is_empty() {
            self.vram = vec![0; VRAM_SIZE];
        } else if !keep {
            self.vram.fill(0);
        }
        self.mode = Some(m);
        self.bank = 0;
        self.pitch = m.pitch();
        self.start_x = 0;
        self.start_y = 0;
    }

    /// Leaves VBE (a standard VGA mode was set). Video memory is kept.
    pub fn off(&mut self) {
        self.mode = None;
        self.bank = 0;
    }

    /// Sets window A's position; false (nothing changes) past video memory.
    pub fn set_bank(&mut self, bank: u16) -> bool {
        if bank as usize * WINDOW as usize >= VRAM_SIZE {
            return false;
        }
        self.bank = bank;
        true
    }

    /// Video memory index of a physical address, when window A decodes it.
    #[inline]
    fn index(&self, addr: u32) -> Option<usize> {
        let off = addr.wrapping_sub(0xA0000);
        (off < WINDOW).then(|| self.bank as usize * WINDOW as usize + off as usize)
    }

    /// CPU read through the window (FFh outside it: nothing decodes B0000h).
    #[inline]
    pub fn read(&self, addr: u32) -> u8 {
        self.index(addr)
            .and_then(|i| self.vram.get(i).copied())
            .unwrap_or(0xFF)
    }

    /// CPU write through the window.
    #[inline]
    pub fn write(&mut self, addr: u32, v: u8) {
        if let Some(i) = self.index(addr) {
            if let Some(b) = self.vram.get_mut(i) {
                *b = v;
            }
        }
    }

    /// Sets the logical scan line width in pixels (4F06h BL=00h); false when
    /// one screen no longer fits. Returns the new pitch in bytes.
    pub fn set_line_pixels(&mut self, pixels: u32) -> Option<u32> {
        let m = self.mode?;
        let pitch = pixels.max(m.width) * m.pixels.bytes();
        if pitch as u64 * m.height as u64 > VRAM_SIZE as u64 {
            return None;
        }
        self.pitch = pitch;
        Some(pitch)
    }

    /// Scan lines of the logical screen at the current pitch.
    pub fn lines(&self) -> u32 {
        VRAM_SIZE as u32 / self.pitch.max(1)
    }

    /// The visible screen of the current mode as RGB (`dac` maps the 8-bit
    /// modes' indices). None when no VBE mode is on.
    pub fn render(&self, dac: &[[u8; 3]; 256]) -> Option<Frame> {
        let m = self.mode?;
        let (w, h) = (m.width as usize, m.height as usize);
        let bpp = m.pixels.bytes() as usize;
        let mut rgb = Vec::with_capacity(w * h * 3);
        let origin = self.start_y as usize * self.pitch as usize + self.start_x as usize * bpp;
        let at = |i: usize| self.vram.get(i % VRAM_SIZE).copied().unwrap_or(0);
        let five = |v: u32| ((v << 3) | (v >> 2)) as u8;
        for y in 0..h {
            let row = origin + y * self.pitch as usize;
            for x in 0..w {
                let p = row + x * bpp;
                let px = match m.pixels {
                    Pixels::Packed8 => dac[at(p) as usize],
                    Pixels::Rgb555 | Pixels::Rgb565 => {
                        let v = at(p) as u32 | (at(p + 1) as u32) << 8;
                        if m.pixels == Pixels::Rgb555 {
                            [five((v >> 10) & 31), five((v >> 5) & 31), five(v & 31)]
                        } else {
                            let g = (v >> 5) & 63;
                            [five(v >> 11), ((g << 2) | (g >> 4)) as u8, five(v & 31)]
                        }
                    }
                    Pixels::Rgb888 => [at(p + 2), at(p + 1), at(p)],
                };
                rgb.extend_from_slice(&px);
            }
        }
        Some(Frame {
            width: m.width,
            height: m.height,
            rgb,
        })
    }

    /// Bytes the machine state hash covers (mode, window, layout, memory);
    /// nothing until the first VBE mode set, so the hashes of machines that
    /// never use VBE are what they were before VBE existed.
    pub fn state_bytes(&self, out: &mut Vec<u8>) {
        if self.vram.is_empty() {
            return;
        }
        out.extend_from_slice(&self.mode.map_or(0, |m| m.number).to_le_bytes());
        out.extend_from_slice(&self.bank.to_le_bytes());
        out.extend_from_slice(&self.pitch.to_le_bytes());
        out.extend_from_slice(&self.start_x.to_le_bytes());
        out.extend_from_slice(&self.start_y.to_le_bytes());
        out.extend_from_slice(&self.vram);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_maps_bank_times_64k() {
        let mut v = Vbe::default();
        v.set(find(0x10E).unwrap(), false);
        v.write(0xA0010, 0x12);
        assert!(v.set_bank(1));
        v.write(0xA0010, 0x34);
        v.write(0xB0000, 0x56); // outside the window: dropped
        assert_eq!(v.vram[0x10], 0x12);
        assert_eq!(v.vram[0x1_0010], 0x34);
        assert_eq!(v.read(0xA0010), 0x34);
        assert_eq!(v.read(0xB8000), 0xFF);
        assert!(!v.set_bank(16), "bank 16 is past 1 MiB");
        assert_eq!(v.bank, 1);
    }

    #[test]
    fn direct_colour_pixels_expand_to_eight_bits() {
        let dac = [[0u8; 3]; 256];
        let mut v = Vbe::default();
        v.set(find(0x10E).unwrap(), false);
        // Pixel 0: pure red 565 (F800h); pixel 1: green 07E0h; last pixel of
        // line 199: blue 001Fh.
        v.vram[..4].copy_from_slice(&[0x00, 0xF8, 0xE0, 0x07]);
        let last = (199 * 320 + 319) * 2;
        v.vram[last..last + 2].copy_from_slice(&[0x1F, 0x00]);
        let f = v.render(&dac).unwrap();
        assert_eq!((f.width, f.height), (320, 200));
        assert_eq!(f.pixel(0, 0), [255, 0, 0]);
        assert_eq!(f.pixel(1, 0), [0, 255, 0]);
        assert_eq!(f.pixel(319, 199), [0, 0, 255]);
        v.set(find(0x10D).unwrap(), false);
        v.vram[..2].copy_from_slice(&[0x10, 0x42]); // 0 10000 10000 10000
        assert_eq!(v.render(&dac).unwrap().pixel(0, 0), [132, 132, 132]);
        v.set(find(0x10F).unwrap(), false);
        v.vram[..3].copy_from_slice(&[1, 2, 3]);
        assert_eq!(v.render(&dac).unwrap().pixel(0, 0), [3, 2, 1]);
    }

    #[test]
    fn every_mode_fits_in_video_memory() {
        for m in MODES {
            assert!(
                (m.pitch() * m.height) as usize <= VRAM_SIZE,
                "{:X}",
                m.number
            );
        }
    }
}
