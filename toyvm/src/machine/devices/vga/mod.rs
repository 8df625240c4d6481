//! The VGA: registers, 256 KiB of planar memory and the CPU's path to it.
//!
//! Owns the sequencer (3C4h/3C5h), graphics controller (3CEh/3CFh), CRTC
//! (3D4h/3D5h or 3B4h/3B5h by misc output bit 0), attribute controller
//! (3C0h/3C1h with its flip-flop, reset by reading input status 1), DAC
//! (3C6h-3C9h), misc output (3C2h/3CCh), feature control and input status
//! 0/1, the four 64 KiB planes with the latches and the full write pipeline
//! (rotate, set/reset, ALU, bit mask, map mask; write modes 0-3) and read
//! pipeline (read map select, read modes 0-1 with colour compare / don't
//! care), and the memory map select window. Submodules: [`timing`] (retrace
//! bits and frame edges from the dispatch clock), [`render`] (scanout to a
//! [`crate::frame::Frame`]), [`modes`] (what INT 10h AH=00h programs),
//! [`font`] (the ROM fonts), [`vbe`] (the VESA modes' linear memory, bank
//! window and scanout). It must not know about the BIOS data area or
//! INT 10h services beyond [`Vga::set_mode`], and must not keep time.
//!
//! Addressing (documented in docs/machine-devices.md): in chain-4 the CPU
//! offset keeps its address bits and A0-A1 select the plane, so byte `o`
//! lives in plane `o & 3` at plane offset `o & !3`, as on real hardware
//! (the CRTC's doubleword mode fetches exactly those offsets); in odd/even
//! mode byte `o` lives in plane `o & 1` (plus 2 for odd/even read-map
//! pairs) at offset `o & !1`, and the odd/even page bit of the misc register
//! is not modelled.

pub mod font;
pub mod modes;
pub mod render;
pub mod timing;
pub mod vbe;

/// Plane size: 64 KiB each, four planes.
pub const PLANE_SIZE: usize = 0x10000;

/// Register file and memory of the VGA.
#[derive(Clone, Debug)]
pub struct Vga {
    /// Plane `p` occupies `planes[p * PLANE_SIZE .. (p + 1) * PLANE_SIZE]`.
    pub planes: Vec<u8>,
    pub latch: [u8; 4],
    pub misc: u8,
    pub feature: u8,
    pub video_enable: u8,
    pub seq_index: u8,
    pub seq: [u8; 8],
    pub gc_index: u8,
    pub gc: [u8; 16],
    pub crtc_index: u8,
    pub crtc: [u8; 64],
    pub attr_index: u8,
    /// Attribute index bit 5: palette address source (1 = display).
    pub attr_pas: bool,
    /// false = next 3C0h write is an index.
    pub attr_flip: bool,
    pub attr: [u8; 32],
    /// DAC entries, 6 bits per component.
    pub dac: [[u8; 3]; 256],
    pub dac_mask: u8,
    pub dac_write_index: u8,
    pub dac_write_sub: u8,
    pub dac_read_index: u8,
    pub dac_read_sub: u8,
    /// 3C7h read: 0 after a write-index set, 3 after a read-index set.
    pub dac_state: u8,
    /// The BIOS mode last set by [`Vga::set_mode`] (low 7 bits).
    pub mode: u8,
    /// The VESA side: while a VBE mode is on it owns the A0000h window and
    /// the display.
    pub vbe: vbe::Vbe,
}

impl Default for Vga {
    fn default() -> Self {
        Vga::new()
    }
}

impl Vga {
    /// Registers as mode 03h leaves them (the machine's BIOS init normally
    /// calls `set_mode(3)` anyway).
    pub fn new() -> Vga {
        let mut v = Vga {
            planes: vec![0; 4 * PLANE_SIZE],
            latch: [0; 4],
            misc: 0,
            feature: 0,
            video_enable: 1,
            seq_index: 0,
            seq: [0; 8],
            gc_index: 0,
            gc: [0; 16],
            crtc_index: 0,
            crtc: [0; 64],
            attr_index: 0,
            attr_pas: true,
            attr_flip: false,
            attr: [0; 32],
            dac: [[0; 3]; 256],
            dac_mask: 0xFF,
            dac_write_index: 0,
            dac_write_sub: 0,
            dac_read_index: 0,
            dac_read_sub: 0,
            dac_state: 0,
            mode: 3,
            vbe: vbe::Vbe::default(),
        };
        v.set_mode(3);
        v
    }

    /// A byte of plane `p` at plane offset `off` (wraps at 64 KiB).
    #[inline]
    pub fn plane(&self, p: usize, off: u32) -> u8 {
        self.planes[(p & 3) * PLANE_SIZE + (off as usize & 0xFFFF)]
    }

    #[inline]
    fn plane_mut(&mut self, p: usize, off: u32) -> &mut u8 {
        &mut self.planes[(p & 3) * PLANE_SIZE + (off as usize & 0xFFFF)]
    }

    /// Offset inside the memory window selected by GC misc bits 3:2 for a
    /// physical address, or None if the VGA does not decode it.
    pub fn window_offset(&self, addr: u32) -> Option<u32> {
        let (base, size) = match (self.gc[6] >> 2) & 3 {
            0 => (0xA0000, 0x20000),
            1 => (0xA0000, 0x10000),
            2 => (0xB0000, 0x8000),
            _ => (0xB8000, 0x8000),
        };
        if addr >= base && addr < base + size {
            Some(addr - base)
        } else {
            None
        }
    }

    fn chain4(&self) -> bool {
        self.seq[4] & 0x08 != 0
    }

    /// CPU read of a physical address in A0000h-BFFFFh (loads the latches).
    pub fn read_mem(&mut self, addr: u32) -> u8 {
        if self.vbe.on() {
            return self.vbe.read(addr);
        }
        let Some(off) = self.window_offset(addr) else {
            return 0xFF;
        };
        let latch = self.latches_at(off & 0xFFFF);
        self.latch = latch;
        self.read_result(&latch, off & 0xFFFF)
    }

    /// What a CPU read of `addr` would return, without loading the latches:
    /// for observers (console text, reports) that must not perturb the guest.
    pub fn peek_mem(&self, addr: u32) -> u8 {
        if self.vbe.on() {
            return self.vbe.read(addr);
        }
        let Some(off) = self.window_offset(addr) else {
            return 0xFF;
        };
        let latch = self.latches_at(off & 0xFFFF);
        self.read_result(&latch, off & 0xFFFF)
    }

    /// The four plane bytes a read at window offset `off` latches.
    fn latches_at(&self, off: u32) -> [u8; 4] {
        let pa = if self.chain4() {
            off & !3
        } else if self.gc[5] & 0x10 != 0 {
            off & !1
        } else {
            off
        };
        // Spelled out: `[0, 1, 2, 3].map(..)` stayed an out-of-line call
        // (10% of L1's time on code fetched from the VGA window).
        [
            self.plane(0, pa),
            self.plane(1, pa),
            self.plane(2, pa),
            self.plane(3, pa),
        ]
    }

    /// The byte a read returns given its latched plane bytes (read mode 0
    /// selects a plane, read mode 1 compares colours).
    fn read_result(&self, latch: &[u8; 4], off: u32) -> u8 {
        if self.gc[5] & 0x08 != 0 {
            // Read mode 1: colour compare over the planes not "don't care".
            let cc = self.gc[2] & 0x0F;
            let dc = self.gc[7] & 0x0F;
            let mut r = 0xFF;
            for (p, l) in latch.iter().enumerate() {
                if dc & (1 << p) != 0 {
                    let want = if cc & (1 << p) != 0 { 0xFF } else { 0x00 };
                    r &= !(l ^ want);
                }
            }
            r
        } else {
            let p = if self.chain4() {
                off & 3
            } else if self.gc[5] & 0x10 != 0 {
                (self.gc[4] as u32 & 2) | (off & 1)
            } else {
                self.gc[4] as u32 & 3
            };
            latch[p as usize]
        }
    }

    /// CPU write of a physical address in A0000h-BFFFFh, through the write
    /// pipeline.
    pub fn write_mem(&mut self, addr: u32, v: u8) {
        if self.vbe.on() {
            return self.vbe.write(addr, v);
        }
        let Some(off) = self.window_offset(addr) else {
            return;
        };
        let off = off & 0xFFFF;
        let (pa, mut pmask) = if self.chain4() {
            (off & !3, 1u8 << (off & 3))
        } else if self.seq[4] & 0x04 == 0 {
            (off & !1, if off & 1 != 0 { 0b1010 } else { 0b0101 })
        } else {
            (off, 0x0F)
        };
        pmask &= self.seq[2] & 0x0F;
        if pmask == 0 {
            return;
        }
        // The common state (BIOS defaults, mode 13h and most drawing): write
        // mode 0, no rotation, replace, no set/reset on the written planes,
        // every bit: each enabled plane takes the byte as it is, which is
        // what the general path below computes for it (d = data, alu = d,
        // mask = FFh). Fills of video memory (REP STOS) spend their time
        // here.
        if self.gc[5] & 3 == 0 && self.gc[3] == 0 && self.gc[1] & pmask == 0 && self.gc[8] == 0xFF {
            for p in 0..4 {
                if pmask & (1 << p) != 0 {
                    *self.plane_mut(p, pa) = v;
                }
            }
            return;
        }
        let sr = self.gc[0];
        let esr = self.gc[1];
        let rot = self.gc[3] & 7;
        let func = (self.gc[3] >> 3) & 3;
        let bitmask = self.gc[8];
        let data = v.rotate_right(rot as u32);
        let alu = |d: u8, l: u8| match func {
            0 => d,
            1 => d & l,
            2 => d | l,
            _ => d ^ l,
        };
        for p in 0..4 {
            if pmask & (1 << p) == 0 {
                continue;
            }
            let l = self.latch[p];
            let srp = if sr & (1 << p) != 0 { 0xFF } else { 0x00 };
            let (val, mask) = match self.gc[5] & 3 {
                0 => {
                    let d = if esr & (1 << p) != 0 { srp } else { data };
                    (alu(d, l), bitmask)
                }
                1 => (l, 0xFF),
                2 => {
                    let d = if v & (1 << p) != 0 { 0xFF } else { 0x00 };
                    (alu(d, l), bitmask)
                }
                _ => (alu(srp, l), bitmask & data),
            };
            *self.plane_mut(p, pa) = (val & mask) | (l & !mask);
        }
    }

    /// Whether the CRTC answers at 3Dxh (colour) rather than 3Bxh.
    pub fn color_io(&self) -> bool {
        self.misc & 0x01 != 0
    }

    /// Whether `port` is decoded by the VGA in its current I/O mapping.
    pub fn claims(&self, port: u16) -> bool {
        match port {
            0x3C0..=0x3CF => true,
            0x3D4 | 0x3D5 | 0x3DA => self.color_io(),
            0x3B4 | 0x3B5 | 0x3BA => !self.color_io(),
            // CGA mode/colour-select registers: accepted and ignored.
            0x3D8 | 0x3D9 => true,
            _ => false,
        }
    }

    /// Port read. `now` is needed for input status 1 (retrace bits).
    pub fn read_port(&mut self, port: u16, now: u64) -> u8 {
        match port {
            0x3C0 => self.attr_index | if self.attr_pas { 0x20 } else { 0 },
            0x3C1 => self
                .attr
                .get(self.attr_index as usize)
                .copied()
                .unwrap_or(0),
            0x3C2 => 0x10, // input status 0: switch sense high, no vretrace IRQ
            0x3C3 => self.video_enable,
            0x3C4 => self.seq_index,
            0x3C5 => self.seq[(self.seq_index & 7) as usize],
            0x3C6 => self.dac_mask,
            0x3C7 => self.dac_state,
            0x3C8 => self.dac_write_index,
            0x3C9 => {
                let v = self.dac[self.dac_read_index as usize][self.dac_read_sub as usize];
                self.dac_read_sub += 1;
                if self.dac_read_sub == 3 {
                    self.dac_read_sub = 0;
                    self.dac_read_index = self.dac_read_index.wrapping_add(1);
                }
                v
            }
            0x3CA => self.feature,
            0x3CC => self.misc,
            0x3CE => self.gc_index,
            0x3CF => self.gc[(self.gc_index & 0x0F) as usize],
            0x3B4 | 0x3D4 => self.crtc_index,
            0x3B5 | 0x3D5 => {
                let i = self.crtc_index & 0x3F;
                if i <= 0x18 {
                    self.crtc[i as usize]
                } else {
                    0xFF
                }
            }
            0x3BA | 0x3DA => {
                self.attr_flip = false;
                self.input_status1(now)
            }
            _ => 0xFF,
        }
    }

    /// Port write.
    pub fn write_port(&mut self, port: u16, v: u8) {
        match port {
            0x3C0 => {
                if !self.attr_flip {
                    self.attr_index = v & 0x1F;
                    self.attr_pas = v & 0x20 != 0;
                } else if (self.attr_index as usize) < 0x15 {
                    self.attr[self.attr_index as usize] = v;
                }
                self.attr_flip = !self.attr_flip;
            }
            0x3C2 => self.misc = v,
            0x3C3 => self.video_enable = v & 1,
            0x3C4 => self.seq_index = v,
            0x3C5 => {
                let i = (self.seq_index & 7) as usize;
                if i <= 4 {
                    self.seq[i] = v;
                }
            }
            0x3C6 => self.dac_mask = v,
            0x3C7 => {
                self.dac_read_index = v;
                self.dac_read_sub = 0;
                self.dac_state = 3;
            }
            0x3C8 => {
                self.dac_write_index = v;
                self.dac_write_sub = 0;
                self.dac_state = 0;
            }
            0x3C9 => {
                self.dac[self.dac_write_index as usize][self.dac_write_sub as usize] = v & 0x3F;
                self.dac_write_sub += 1;
                if self.dac_write_sub == 3 {
                    self.dac_write_sub = 0;
                    self.dac_write_index = self.dac_write_index.wrapping_add(1);
                }
            }
            0x3CE => self.gc_index = v,
            0x3CF => {
                let i = (self.gc_index & 0x0F) as usize;
                if i <= 8 {
                    self.gc[i] = v;
                }
            }
            0x3B4 | 0x3D4 => self.crtc_index = v,
            0x3B5 | 0x3D5 => self.write_crtc(self.crtc_index & 0x3F, v),
            0x3BA | 0x3DA => self.feature = v,
            _ => {}
        }
    }

    /// CRTC register write honouring the protect bit (11h bit 7), which
    /// locks registers 0-7 except the line compare bit 8 in register 7.
    pub fn write_crtc(&mut self, i: u8, v: u8) {
        let i = i as usize;
        if i > 0x18 {
            return;
        }
        if self.crtc[0x11] & 0x80 != 0 && i <= 7 {
            if i == 7 {
                self.crtc[7] = (self.crtc[7] & !0x10) | (v & 0x10);
            }
            return;
        }
        self.crtc[i] = v;
    }

    /// CRTC start address (0Ch/0Dh).
    pub fn start_address(&self) -> u16 {
        (self.crtc[0x0C] as u16) << 8 | self.crtc[0x0D] as u16
    }

    /// Sets the CRTC start address (0Ch/0Dh), as INT 10h AH=05h does for a
    /// page change.
    pub fn set_start_address(&mut self, a: u16) {
        self.crtc[0x0C] = (a >> 8) as u8;
        self.crtc[0x0D] = a as u8;
    }

    /// Sets the CRTC cursor location (0Eh/0Fh), in character cells from the
    /// start of video memory, as INT 10h AH=02h does.
    pub fn set_cursor_location(&mut self, a: u16) {
        self.crtc[0x0E] = (a >> 8) as u8;
        self.crtc[0x0F] = a as u8;
    }

    /// Sets the cursor shape (CRTC 0Ah/0Bh: start/end lines; bit 5 of the
    /// start hides it), as INT 10h AH=01h does.
    pub fn set_cursor_shape(&mut self, start: u8, end: u8) {
        self.crtc[0x0A] = start & 0x3F;
        self.crtc[0x0B] = end & 0x1F;
    }

    /// CRTC cursor location (0Eh/0Fh).
    pub fn cursor_location(&self) -> u16 {
        (self.crtc[0x0E] as u16) << 8 | self.crtc[0x0F] as u16
    }

    /// Vertical display end: displayed scanlines.
    pub fn display_lines(&self) -> u32 {
        let c = &self.crtc;
        (c[0x12] as u32 | ((c[7] as u32 >> 1) & 1) << 8 | ((c[7] as u32 >> 6) & 1) << 9) + 1
    }

    /// Whether the attribute controller is in a graphics mode.
    pub fn graphics(&self) -> bool {
        self.attr[0x10] & 0x01 != 0
    }

    /// Text columns (CRTC horizontal display end + 1).
    pub fn columns(&self) -> u32 {
        self.crtc[1] as u32 + 1
    }

    /// Scanlines per character row (max scan line + 1).
    pub fn char_height(&self) -> u32 {
        (self.crtc[9] as u32 & 0x1F) + 1
    }

    /// Text rows: displayed scanlines / character height (÷2 when double
    /// scanning).
    pub fn rows(&self) -> u32 {
        let dbl = if self.crtc[9] & 0x80 != 0 { 2 } else { 1 };
        self.display_lines() / (self.char_height() * dbl)
    }

    /// The text cell (character, attribute) at row/column of the page that
    /// starts at the CRTC start address, if in a text mode.
    pub fn text_cell(&self, row: u32, col: u32) -> Option<(u8, u8)> {
        if self.graphics() {
            return None;
        }
        let ma = self.start_address() as u32 + row * self.crtc[0x13] as u32 * 2 + col;
        let a = (ma << 1) & 0xFFFF;
        Some((self.plane(0, a), self.plane(1, a)))
    }

    /// The visible text screen, one string per row: printable ASCII as is,
    /// NUL as space, anything else as `.`. None in graphics modes.
    pub fn text_lines(&self) -> Option<Vec<String>> {
        if self.graphics() {
            return None;
        }
        let mut out = Vec::new();
        for r in 0..self.rows().min(100) {
            let mut s = String::new();
            for c in 0..self.columns().min(256) {
                let (ch, _) = self.text_cell(r, c)?;
                s.push(match ch {
                    0 => ' ',
                    0x20..=0x7E => ch as char,
                    _ => '.',
                });
            }
            out.push(s.trim_end().to_string());
        }
        Some(out)
    }
}
