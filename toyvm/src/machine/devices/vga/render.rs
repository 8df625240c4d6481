//! Scanout: what the monitor shows for the current register state and
//! video memory, as a [`Frame`] of RGB pixels.
//!
//! One generic CRTC-driven pass covers every mode, standard or tweaked:
//! for each displayed scanline it runs the row-scan and memory-address
//! counters (start address, byte panning, preset row scan, offset, max scan
//! line, double scan, line compare), translates the address like the CRTC
//! (byte / word / doubleword mode, count by 2 / 4, CGA row-scan
//! substitution into A13/A14), fetches the four planes, and shifts pixels
//! out as the graphics controller and attribute controller say (text with
//! the font in plane 2, planar 16 colours, CGA interleaved 4 colours,
//! 256-colour), through the attribute palette, colour plane enable, colour
//! select and pel mask to the DAC. Pixel panning shifts each line.
//!
//! Frame size is the physical raster's active area: (CRTC horizontal display
//! end + 1) × character width (8 or 9 dots, ×2 when the sequencer halves
//! the dot clock) by the vertical display end. So mode 13h renders 640x400
//! (each pixel doubled both ways, as the monitor shows it), mode 12h and
//! mode X 640x480, text 720x400, CGA modes 640x400.
//!
//! Text: the attribute mode control's blink bit is honoured: with blink
//! enabled (the BIOS default), attribute bit 7 selects blinking, not a
//! bright background, and the frame shows the blink "on" phase (characters
//! visible). The cursor is drawn (its "on" phase) when enabled. It must not
//! read the clock: a frame depends on registers and memory only.

use super::Vga;
use crate::frame::Frame;

/// Largest frame dimensions rendered (hostile CRTC values are clamped).
const MAX_W: u32 = 2048;
const MAX_H: u32 = 1024;

impl Vga {
    /// The DAC colour of entry `i` (after the pel mask), 8 bits per channel.
    pub fn dac_rgb(&self, i: u8) -> [u8; 3] {
        let c = self.dac[(i & self.dac_mask) as usize];
        let x = |v: u8| {
            let v = v & 0x3F;
            (v << 2) | (v >> 4)
        };
        [x(c[0]), x(c[1]), x(c[2])]
    }

    /// Every DAC entry as RGB (after the pel mask).
    fn dac_lut(&self) -> [[u8; 3]; 256] {
        let mut lut = [[0u8; 3]; 256];
        for (i, e) in lut.iter_mut().enumerate() {
            *e = self.dac_rgb(i as u8);
        }
        lut
    }

    /// DAC index of a 4-bit attribute value through the palette registers,
    /// colour plane enable and colour select.
    #[inline]
    fn attr_to_dac(&self, v: u8) -> u8 {
        let pal = self.attr[(v & self.attr[0x12] & 0x0F) as usize];
        let mut d = if self.attr[0x10] & 0x80 != 0 {
            (pal & 0x0F) | ((self.attr[0x14] & 0x03) << 4)
        } else {
            pal & 0x3F
        };
        d |= (self.attr[0x14] & 0x0C) << 4;
        d
    }

    /// Renders the visible screen.
    pub fn render(&self) -> Frame {
        if self.vbe.on() {
            if let Some(f) = self.vbe.render(&self.dac_lut()) {
                return f;
            }
        }
        let graphics = self.graphics();
        let seq1 = self.seq[1];
        let char_w: u32 = if graphics || seq1 & 0x01 != 0 { 8 } else { 9 };
        let div: u32 = if seq1 & 0x08 != 0 { 2 } else { 1 };
        let c = &self.crtc;
        let hchars = c[1] as u32 + 1;
        let width = (hchars * char_w * div).min(MAX_W);
        let height = self.display_lines().min(MAX_H);

        if seq1 & 0x20 != 0 {
            // Screen off (sequencer clocking mode bit 5).
            return Frame::filled(width, height, [0, 0, 0]);
        }
        if !self.attr_pas {
            // Palette address source: the host owns the palette, the
            // display shows the overscan colour.
            return Frame::filled(width, height, self.dac_rgb(self.attr[0x11]));
        }

        // DAC index → RGB, computed once.
        let lut = self.dac_lut();
        // 4-bit attribute value → DAC index.
        let mut pal16 = [0u8; 16];
        for (i, e) in pal16.iter_mut().enumerate() {
            *e = self.attr_to_dac(i as u8);
        }

        let offset = c[0x13] as u32 * 2;
        let dword = c[0x14] & 0x40 != 0;
        let count4 = c[0x14] & 0x20 != 0;
        let byte_mode = c[0x17] & 0x40 != 0;
        let count2 = c[0x17] & 0x08 != 0;
        let aw = c[0x17] & 0x20 != 0;
        let cms = c[0x17] & 0x01 == 0;
        let srs = c[0x17] & 0x02 == 0;
        let max_scan = (c[9] & 0x1F) as u32;
        let dscan = c[9] & 0x80 != 0;
        let line_compare =
            c[0x18] as u32 | ((c[7] as u32 >> 4) & 1) << 8 | ((c[9] as u32 >> 6) & 1) << 9;
        let preset = (c[8] & 0x1F) as u32;
        let byte_pan = ((c[8] >> 5) & 3) as u32;

        let mode_ctl = self.attr[0x10];
        let bit8 = mode_ctl & 0x40 != 0;
        let pan_reg = (self.attr[0x13] & 0x0F) as u32;
        let mut pan = if !graphics && char_w == 9 {
            if pan_reg >= 8 {
                0
            } else {
                pan_reg + 1
            }
        } else if pan_reg >= 8 {
            0
        } else {
            pan_reg
        } * div;

        // Text-mode parameters.
        let s3 = self.seq[3];
        let map_a = ((s3 >> 5) & 1) << 2 | ((s3 >> 2) & 3);
        let map_b = ((s3 >> 4) & 1) << 2 | (s3 & 3);
        let map_base = |n: u8| (((n & 3) as u32) * 2 + ((n >> 2) & 1) as u32) * 0x2000;
        let (font_a, font_b) = (map_base(map_a), map_base(map_b));
        let blink = mode_ctl & 0x08 != 0;
        let lge = mode_ctl & 0x04 != 0;
        let cursor_on = c[0x0A] & 0x20 == 0;
        let cur_s = (c[0x0A] & 0x1F) as u32;
        let cur_e = (c[0x0B] & 0x1F) as u32;
        let cur_loc = self.cursor_location() as u32;
        let underline = (c[0x14] & 0x1F) as u32;

        let gc_mode = self.gc[5];
        let shift256 = gc_mode & 0x40 != 0;
        let interleave = gc_mode & 0x20 != 0;

        let chars = hchars + 1; // one extra for panning
        let line_len = (chars * char_w * div) as usize;
        let mut line = vec![0u8; line_len];
        let mut out = Vec::with_capacity(width as usize * height as usize * 3);

        let mut ma_row = (self.start_address() as u32 + byte_pan) & 0xFFFF;
        let mut row_scan = preset;
        let mut dbl_phase = false;

        for y in 0..height {
            if y == line_compare {
                ma_row = 0;
                row_scan = 0;
                dbl_phase = false;
                if mode_ctl & 0x20 != 0 {
                    pan = 0;
                }
            }
            let mut x = 0usize;
            for ch in 0..chars {
                let step = if count4 {
                    ch / 4
                } else if count2 {
                    ch / 2
                } else {
                    ch
                };
                let ma = (ma_row + step) & 0xFFFF;
                let mut a = if dword {
                    ma << 2
                } else if !byte_mode {
                    let low = if aw { (ma >> 15) & 1 } else { (ma >> 13) & 1 };
                    (ma << 1) | low
                } else {
                    ma
                };
                if cms {
                    a = (a & !0x2000) | (row_scan & 1) << 13;
                }
                if srs {
                    a = (a & !0x4000) | ((row_scan >> 1) & 1) << 14;
                }
                let a = a & 0xFFFF;
                let p = [
                    self.plane(0, a),
                    self.plane(1, a),
                    self.plane(2, a),
                    self.plane(3, a),
                ];
                let mut dots = [0u8; 9];
                if graphics {
                    let mut nib = [0u8; 8];
                    if shift256 {
                        for k in 0..4 {
                            nib[2 * k] = p[k] >> 4;
                            nib[2 * k + 1] = p[k] & 0x0F;
                        }
                    } else if interleave {
                        for (i, n) in nib.iter_mut().enumerate() {
                            let (lo, hi) = if i < 4 { (p[0], p[2]) } else { (p[1], p[3]) };
                            let s = 6 - 2 * (i as u32 & 3);
                            *n = ((lo >> s) & 3) | ((hi >> s) & 3) << 2;
                        }
                    } else {
                        for (i, n) in nib.iter_mut().enumerate() {
                            let s = 7 - i as u32;
                            *n = ((p[0] >> s) & 1)
                                | ((p[1] >> s) & 1) << 1
                                | ((p[2] >> s) & 1) << 2
                                | ((p[3] >> s) & 1) << 3;
                        }
                    }
                    if bit8 {
                        // 8-bit pixel mode: two 4-bit values make one DAC
                        // index, shown for two dots (the palette is bypassed).
                        for k in 0..4 {
                            let v = nib[2 * k] << 4 | nib[2 * k + 1];
                            dots[2 * k] = v;
                            dots[2 * k + 1] = v;
                        }
                    } else {
                        for i in 0..8 {
                            dots[i] = pal16[nib[i] as usize];
                        }
                    }
                } else {
                    let code = p[0];
                    let at = p[1];
                    let font = if at & 0x08 != 0 { font_a } else { font_b };
                    let mut glyph = self.plane(2, font + code as u32 * 32 + row_scan.min(31));
                    let fg = at & 0x0F;
                    let bg = if blink { (at >> 4) & 0x07 } else { at >> 4 };
                    if (at & 0x77) == 0x01 && row_scan == underline {
                        glyph = 0xFF;
                    }
                    if cursor_on
                        && ma == cur_loc
                        && cur_s <= cur_e
                        && row_scan >= cur_s
                        && row_scan <= cur_e
                    {
                        glyph = 0xFF;
                    }
                    let (f, b) = (pal16[fg as usize], pal16[bg as usize]);
                    for (i, dot) in dots.iter_mut().take(8).enumerate() {
                        *dot = if glyph & (0x80 >> i) != 0 { f } else { b };
                    }
                    dots[8] = if lge && (0xC0..=0xDF).contains(&code) && glyph & 1 != 0 {
                        f
                    } else {
                        b
                    };
                }
                for &d in dots.iter().take(char_w as usize) {
                    for _ in 0..div {
                        line[x] = d;
                        x += 1;
                    }
                }
            }
            let p0 = (pan as usize).min(line_len - width as usize);
            for &d in &line[p0..p0 + width as usize] {
                out.extend_from_slice(&lut[d as usize]);
            }

            // Next scanline.
            let advance = if dscan {
                let adv = dbl_phase;
                dbl_phase = !dbl_phase;
                adv
            } else {
                true
            };
            if advance {
                if row_scan >= max_scan {
                    row_scan = 0;
                    ma_row = (ma_row + offset) & 0xFFFF;
                } else {
                    row_scan += 1;
                }
            }
        }
        Frame {
            width,
            height,
            rgb: out,
        }
    }
}
