//! What a VGA BIOS's INT 10h AH=00h programs: register tables for the
//! standard modes, the DAC palettes, the memory clear and the text font.
//!
//! Owns the mode tables (modes 00h-07h, 0Dh, 0Eh, 10h, 11h, 12h, 13h, the
//! IBM VGA parameter values), the default DAC contents (64-colour EGA table
//! for 350/400/480-line modes, the CGA-compatible table for 200-line modes,
//! the monochrome table for mode 07h, the 256-colour default for 13h) and
//! font loading into plane 2. It must not touch the BIOS data area (cursor
//! positions, columns, page size live there and belong to the machine's BIOS
//! layer); [`super::Vga::mode`] and the CRTC hold everything the hardware
//! itself knows.

use super::font::{font_8x16, font_8x8};
use super::{Vga, PLANE_SIZE};

/// One mode's register values.
struct ModeRegs {
    /// Sequencer registers 1-4.
    seq: [u8; 4],
    misc: u8,
    crtc: [u8; 25],
    attr: [u8; 21],
    gc: [u8; 9],
}

const ATTR_TEXT: [u8; 21] = [
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x14, 0x07, 0x38, 0x39, 0x3A, 0x3B, 0x3C, 0x3D, 0x3E, 0x3F,
    0x0C, 0x00, 0x0F, 0x08, 0x00,
];
const ATTR_EGA16: [u8; 21] = [
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x14, 0x07, 0x38, 0x39, 0x3A, 0x3B, 0x3C, 0x3D, 0x3E, 0x3F,
    0x01, 0x00, 0x0F, 0x00, 0x00,
];
const ATTR_CGA16: [u8; 21] = [
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
    0x01, 0x00, 0x0F, 0x00, 0x00,
];
const GC_TEXT: [u8; 9] = [0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x0E, 0x00, 0xFF];
const GC_PLANAR: [u8; 9] = [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0x0F, 0xFF];
const CRTC_40COL: [u8; 25] = [
    0x2D, 0x27, 0x28, 0x90, 0x2B, 0xA0, 0xBF, 0x1F, 0x00, 0x4F, 0x0D, 0x0E, 0x00, 0x00, 0x00, 0x00,
    0x9C, 0x8E, 0x8F, 0x14, 0x1F, 0x96, 0xB9, 0xA3, 0xFF,
];
const CRTC_80COL: [u8; 25] = [
    0x5F, 0x4F, 0x50, 0x82, 0x55, 0x81, 0xBF, 0x1F, 0x00, 0x4F, 0x0D, 0x0E, 0x00, 0x00, 0x00, 0x00,
    0x9C, 0x8E, 0x8F, 0x28, 0x1F, 0x96, 0xB9, 0xA3, 0xFF,
];
const CRTC_480: [u8; 25] = [
    0x5F, 0x4F, 0x50, 0x82, 0x54, 0x80, 0x0B, 0x3E, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0xEA, 0x8C, 0xDF, 0x28, 0x00, 0xE7, 0x04, 0xE3, 0xFF,
];

fn mode_regs(mode: u8) -> Option<ModeRegs> {
    let m = match mode {
        0x00 | 0x01 => ModeRegs {
            seq: [0x08, 0x03, 0x00, 0x02],
            misc: 0x67,
            crtc: CRTC_40COL,
            attr: ATTR_TEXT,
            gc: GC_TEXT,
        },
        0x02 | 0x03 => ModeRegs {
            seq: [0x00, 0x03, 0x00, 0x02],
            misc: 0x67,
            crtc: CRTC_80COL,
            attr: ATTR_TEXT,
            gc: GC_TEXT,
        },
        0x04 | 0x05 => ModeRegs {
            seq: [0x09, 0x03, 0x00, 0x02],
            misc: 0x63,
            crtc: [
                0x2D, 0x27, 0x28, 0x90, 0x2B, 0x80, 0xBF, 0x1F, 0x00, 0xC1, 0x00, 0x00, 0x00, 0x00,
                0x00, 0x00, 0x9C, 0x8E, 0x8F, 0x14, 0x00, 0x96, 0xB9, 0xA2, 0xFF,
            ],
            attr: [
                0x00, 0x13, 0x15, 0x17, 0x02, 0x04, 0x06, 0x07, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15,
                0x16, 0x17, 0x01, 0x00, 0x03, 0x00, 0x00,
            ],
            gc: [0x00, 0x00, 0x00, 0x00, 0x00, 0x30, 0x0F, 0x00, 0xFF],
        },
        0x06 => ModeRegs {
            seq: [0x01, 0x01, 0x00, 0x06],
            misc: 0x63,
            crtc: [
                0x5F, 0x4F, 0x50, 0x82, 0x54, 0x80, 0xBF, 0x1F, 0x00, 0xC1, 0x00, 0x00, 0x00, 0x00,
                0x00, 0x00, 0x9C, 0x8E, 0x8F, 0x28, 0x00, 0x96, 0xB9, 0xC2, 0xFF,
            ],
            attr: [
                0x00, 0x17, 0x17, 0x17, 0x17, 0x17, 0x17, 0x17, 0x17, 0x17, 0x17, 0x17, 0x17, 0x17,
                0x17, 0x17, 0x01, 0x00, 0x01, 0x00, 0x00,
            ],
            gc: [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0D, 0x00, 0xFF],
        },
        0x07 => ModeRegs {
            seq: [0x00, 0x03, 0x00, 0x02],
            misc: 0x66,
            crtc: [
                0x5F, 0x4F, 0x50, 0x82, 0x55, 0x81, 0xBF, 0x1F, 0x00, 0x4F, 0x0D, 0x0E, 0x00, 0x00,
                0x00, 0x00, 0x9C, 0x8E, 0x8F, 0x28, 0x0F, 0x96, 0xB9, 0xA3, 0xFF,
            ],
            attr: [
                0x00, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x10, 0x18, 0x18, 0x18, 0x18, 0x18,
                0x18, 0x18, 0x0E, 0x00, 0x0F, 0x08, 0x00,
            ],
            gc: [0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x0A, 0x00, 0xFF],
        },
        0x0D => ModeRegs {
            seq: [0x09, 0x0F, 0x00, 0x06],
            misc: 0x63,
            crtc: [
                0x2D, 0x27, 0x28, 0x90, 0x2B, 0x80, 0xBF, 0x1F, 0x00, 0xC0, 0x00, 0x00, 0x00, 0x00,
                0x00, 0x00, 0x9C, 0x8E, 0x8F, 0x14, 0x00, 0x96, 0xB9, 0xE3, 0xFF,
            ],
            attr: ATTR_CGA16,
            gc: GC_PLANAR,
        },
        0x0E => ModeRegs {
            seq: [0x01, 0x0F, 0x00, 0x06],
            misc: 0x63,
            crtc: [
                0x5F, 0x4F, 0x50, 0x82, 0x54, 0x80, 0xBF, 0x1F, 0x00, 0xC0, 0x00, 0x00, 0x00, 0x00,
                0x00, 0x00, 0x9C, 0x8E, 0x8F, 0x28, 0x00, 0x96, 0xB9, 0xE3, 0xFF,
            ],
            attr: ATTR_CGA16,
            gc: GC_PLANAR,
        },
        0x10 => ModeRegs {
            seq: [0x01, 0x0F, 0x00, 0x06],
            misc: 0xA3,
            crtc: [
                0x5F, 0x4F, 0x50, 0x82, 0x54, 0x80, 0xBF, 0x1F, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00,
                0x00, 0x00, 0x83, 0x85, 0x5D, 0x28, 0x0F, 0x63, 0xBA, 0xE3, 0xFF,
            ],
            attr: ATTR_EGA16,
            gc: GC_PLANAR,
        },
        0x11 => {
            let mut crtc = CRTC_480;
            crtc[0x17] = 0xC3;
            let mut attr = [0x3F; 21];
            attr[0] = 0x00;
            attr[16..].copy_from_slice(&[0x01, 0x00, 0x0F, 0x00, 0x00]);
            ModeRegs {
                seq: [0x01, 0x0F, 0x00, 0x06],
                misc: 0xE3,
                crtc,
                attr,
                gc: GC_PLANAR,
            }
        }
        0x12 => ModeRegs {
            seq: [0x01, 0x0F, 0x00, 0x06],
            misc: 0xE3,
            crtc: CRTC_480,
            attr: ATTR_EGA16,
            gc: GC_PLANAR,
        },
        0x13 => ModeRegs {
            seq: [0x01, 0x0F, 0x00, 0x0E],
            misc: 0x63,
            crtc: [
                0x5F, 0x4F, 0x50, 0x82, 0x54, 0x80, 0xBF, 0x1F, 0x00, 0x41, 0x00, 0x00, 0x00, 0x00,
                0x00, 0x00, 0x9C, 0x8E, 0x8F, 0x28, 0x40, 0x96, 0xB9, 0xA3, 0xFF,
            ],
            attr: [
                0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D,
                0x0E, 0x0F, 0x41, 0x00, 0x0F, 0x00, 0x00,
            ],
            gc: [0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x05, 0x0F, 0xFF],
        },
        _ => return None,
    };
    Some(m)
}

/// The 64-colour EGA table: index bits are `rgbRGB` (secondary, primary).
pub fn ega64(i: u8) -> [u8; 3] {
    let c = |p: u8, s: u8| ((i >> p) & 1) * 0x2A + ((i >> s) & 1) * 0x15;
    [c(2, 5), c(1, 4), c(0, 3)]
}

/// The 16 CGA colours in 6-bit DAC units (colour 6 is brown, not dark
/// yellow).
pub fn cga16(c: u8) -> [u8; 3] {
    let i = ((c >> 3) & 1) * 0x15;
    let r = ((c >> 2) & 1) * 0x2A + i;
    let mut g = ((c >> 1) & 1) * 0x2A + i;
    let b = (c & 1) * 0x2A + i;
    if c == 6 {
        g = 0x15;
    }
    [r, g, b]
}

/// The default 256-colour DAC of mode 13h: 16 CGA colours, 16 greys, then
/// 9 rings of 24 hues (3 intensities × 3 saturations), then 8 blacks.
pub fn default_256(i: u8) -> [u8; 3] {
    const GREYS: [u8; 16] = [
        0x00, 0x05, 0x08, 0x0B, 0x0E, 0x11, 0x14, 0x18, 0x1C, 0x20, 0x24, 0x28, 0x2D, 0x32, 0x38,
        0x3F,
    ];
    const LEVELS: [[u8; 5]; 9] = [
        [0x00, 0x10, 0x1F, 0x2F, 0x3F],
        [0x1F, 0x27, 0x2F, 0x37, 0x3F],
        [0x2D, 0x31, 0x36, 0x3A, 0x3F],
        [0x00, 0x07, 0x0E, 0x15, 0x1C],
        [0x0E, 0x11, 0x15, 0x18, 0x1C],
        [0x14, 0x16, 0x18, 0x1A, 0x1C],
        [0x00, 0x04, 0x08, 0x0C, 0x10],
        [0x08, 0x0A, 0x0C, 0x0E, 0x10],
        [0x0B, 0x0C, 0x0D, 0x0F, 0x10],
    ];
    match i {
        0..=15 => cga16(i),
        16..=31 => {
            let g = GREYS[(i - 16) as usize];
            [g, g, g]
        }
        32..=247 => {
            let k = (i - 32) as usize;
            let l = &LEVELS[k / 24];
            let h = k % 24;
            // Hue wheel: blue → magenta → red → yellow → green → cyan → blue.
            let (lo, hi) = (l[0], l[4]);
            let up = |s: usize| l[s];
            let down = |s: usize| l[4 - s];
            match h {
                0..=4 => [up(h), lo, hi],
                5..=8 => [hi, lo, down(h - 4)],
                9..=12 => [hi, up(h - 8), lo],
                13..=16 => [down(h - 12), hi, lo],
                17..=20 => [lo, hi, up(h - 16)],
                _ => [lo, down(h - 20), hi],
            }
        }
        _ => [0, 0, 0],
    }
}

/// Which DAC table a mode loads.
fn mode_dac(mode: u8, i: u8) -> [u8; 3] {
    match mode {
        0x13 => default_256(i),
        0x07 => {
            const MONO: [u8; 4] = [0x00, 0x2A, 0x2A, 0x3F];
            if i < 64 {
                let v = MONO[((i >> 3) & 3) as usize];
                [v, v, v]
            } else {
                [0, 0, 0]
            }
        }
        // 200-line modes: EGA 200-line monitors had 16 colours; bit 4 of
        // the attribute value acts as intensity.
        0x04..=0x06 | 0x0D | 0x0E => {
            if i < 64 {
                cga16((i & 7) | ((i & 0x10) >> 1))
            } else {
                [0, 0, 0]
            }
        }
        _ => {
            if i < 64 {
                ega64(i)
            } else {
                [0, 0, 0]
            }
        }
    }
}

impl Vga {
    /// Programs the VGA as INT 10h AH=00h does for `mode` (bit 7 set: keep
    /// video memory). Supported: 00h-07h, 0Dh, 0Eh, 10h, 11h, 12h, 13h.
    /// Returns false (and changes nothing) for any other mode.
    pub fn set_mode(&mut self, mode: u8) -> bool {
        let keep = mode & 0x80 != 0;
        let m = mode & 0x7F;
        let Some(r) = mode_regs(m) else {
            return false;
        };
        self.misc = r.misc;
        self.seq[0] = 0x03;
        self.seq[1..5].copy_from_slice(&r.seq);
        self.crtc = [0; 64];
        self.crtc[..25].copy_from_slice(&r.crtc);
        self.attr = [0; 32];
        self.attr[..21].copy_from_slice(&r.attr);
        self.gc = [0; 16];
        self.gc[..9].copy_from_slice(&r.gc);
        self.attr_flip = false;
        self.attr_index = 0;
        self.attr_pas = true;
        self.latch = [0; 4];
        self.dac_mask = 0xFF;
        self.dac_write_index = 0;
        self.dac_write_sub = 0;
        self.dac_read_index = 0;
        self.dac_read_sub = 0;
        self.dac_state = 0;
        self.feature = 0;
        self.video_enable = 1;
        for i in 0..=255u8 {
            self.dac[i as usize] = mode_dac(m, i);
        }
        self.mode = m;
        self.vbe.off();
        let text = matches!(m, 0x00..=0x03 | 0x07);
        if !keep {
            self.planes.fill(0);
            if text {
                // The BIOS fills the 32 KiB text window with 0720h words.
                for off in (0..0x8000usize).step_by(2) {
                    self.planes[off] = 0x20;
                    self.planes[PLANE_SIZE + off] = 0x07;
                }
            }
        }
        if text {
            self.load_font(font_8x16(), 16, 0);
        }
        true
    }

    /// Copies a font (`height` bytes per glyph, 256 glyphs) into plane 2 at
    /// character map `block` (0-7), as INT 10h AH=11h does. Glyph rows past
    /// `height` up to 32 are zeroed.
    pub fn load_font(&mut self, font: &[u8], height: usize, block: u8) {
        let height = height.clamp(1, 32);
        let base = (((block & 3) as usize) * 2 + ((block >> 2) & 1) as usize) * 0x2000;
        for ch in 0..256usize {
            for row in 0..32usize {
                let v = if row < height {
                    font.get(ch * height + row).copied().unwrap_or(0)
                } else {
                    0
                };
                self.planes[2 * PLANE_SIZE + ((base + ch * 32 + row) & 0xFFFF)] = v;
            }
        }
    }

    /// Sets the text character height (CRTC max scan line) and a matching
    /// underline cursor, as INT 10h AX=1111h/1112h/1114h do after loading a
    /// font: `set_char_height(8)` after loading the 8x8 font gives 50 rows.
    pub fn set_char_height(&mut self, h: u8) {
        let h = h.clamp(1, 32);
        self.crtc[9] = (self.crtc[9] & 0xE0) | (h - 1);
        let start = if h > 8 { h - 3 } else { h.saturating_sub(2) };
        self.crtc[0x0A] = start;
        self.crtc[0x0B] = (start + 1).min(h - 1);
    }

    /// Loads the 8x8 font and switches a 400-line text mode to 50 rows
    /// (INT 10h AX=1112h).
    pub fn load_8x8_text(&mut self) {
        self.load_font(font_8x8(), 8, 0);
        self.set_char_height(8);
    }
}
