//! Pixel buffers in the formats GDI draws on: 1, 4, 8 bpp with a colour
//! table, 16 and 32 bpp with channel masks, 24 bpp BGR. Rows are kept
//! top-down and DWORD-aligned (the DIB stride rule), whatever the guest's
//! orientation; [`Bits::load_guest`] and [`Bits::store_guest`] convert.
//!
//! Owns: raw pixel access, the colour conversions between a raw value and
//! a COLORREF (`0x00BBGGRR`), and nearest-colour matching for palettes. It
//! must not know about DCs, clipping or raster operations.

use crate::memory::Memory;

/// A COLORREF: `0x00BBGGRR`.
pub type Colorref = u32;

/// Builds a COLORREF.
pub const fn rgb(r: u8, g: u8, b: u8) -> Colorref {
    r as u32 | (g as u32) << 8 | (b as u32) << 16
}

/// Red, green and blue of a COLORREF.
pub fn channels(c: Colorref) -> [u8; 3] {
    [c as u8, (c >> 8) as u8, (c >> 16) as u8]
}

/// Default channel masks of the 16 bpp (5-5-5) and 32 bpp (8-8-8) BI_RGB formats.
pub const MASKS_555: [u32; 3] = [0x7C00, 0x03E0, 0x001F];
pub const MASKS_888: [u32; 3] = [0xFF_0000, 0x00_FF00, 0x00_00FF];

/// A pixel buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bits {
    pub width: i32,
    pub height: i32,
    pub bpp: u16,
    /// Bytes per row (a multiple of 4).
    pub stride: usize,
    /// Top-down rows.
    pub data: Vec<u8>,
    /// Colour table (COLORREFs) for 1, 4 and 8 bpp.
    pub palette: Vec<Colorref>,
    /// Red, green, blue masks for 16 and 32 bpp.
    pub masks: [u32; 3],
}

/// The DIB stride: bytes per row rounded up to a DWORD.
pub fn stride(width: i32, bpp: u16) -> usize {
    ((width.max(0) as usize * bpp as usize).div_ceil(32)) * 4
}

impl Bits {
    /// A zeroed buffer; 1 bpp gets the black/white table, other palette
    /// depths a zeroed table of their size.
    pub fn new(width: i32, height: i32, bpp: u16) -> Bits {
        let width = width.max(0);
        let height = height.max(0);
        let stride = stride(width, bpp);
        let palette = match bpp {
            1 => vec![rgb(0, 0, 0), rgb(255, 255, 255)],
            4 | 8 => vec![0; 1 << bpp],
            _ => Vec::new(),
        };
        let masks = if bpp == 16 { MASKS_555 } else { MASKS_888 };
        Bits {
            width,
            height,
            bpp,
            stride,
            data: vec![0; stride * height as usize],
            palette,
            masks,
        }
    }

    /// Mask of the meaningful bits of a raw pixel.
    pub fn raw_mask(&self) -> u32 {
        // 16 and 32 bpp: the channel bits only (a 32 bpp pixel's top byte stays 0).
        match self.bpp {
            16 | 32 => self.masks[0] | self.masks[1] | self.masks[2],
            b => (1u32 << b) - 1,
        }
    }

    pub fn contains(&self, x: i32, y: i32) -> bool {
        x >= 0 && y >= 0 && x < self.width && y < self.height
    }

    /// The raw value at (x, y); 0 outside.
    pub fn get(&self, x: i32, y: i32) -> u32 {
        if !self.contains(x, y) {
            return 0;
        }
        let row = y as usize * self.stride;
        let x = x as usize;
        let d = &self.data;
        match self.bpp {
            1 => (d[row + x / 8] >> (7 - x % 8)) as u32 & 1,
            4 => (d[row + x / 2] >> if x.is_multiple_of(2) { 4 } else { 0 }) as u32 & 0xF,
            8 => d[row + x] as u32,
            16 => u16::from_le_bytes([d[row + 2 * x], d[row + 2 * x + 1]]) as u32,
            24 => {
                let o = row + 3 * x;
                d[o] as u32 | (d[o + 1] as u32) << 8 | (d[o + 2] as u32) << 16
            }
            _ => {
                let o = row + 4 * x;
                u32::from_le_bytes([d[o], d[o + 1], d[o + 2], d[o + 3]])
            }
        }
    }

    /// Stores a raw value at (x, y); nothing outside.
    pub fn set(&mut self, x: i32, y: i32, v: u32) {
        if !self.contains(x, y) {
            return;
        }
        let row = y as usize * self.stride;
        let x = x as usize;
        let d = &mut self.data;
        match self.bpp {
            1 => {
                let b = &mut d[row + x / 8];
                let m = 0x80u8 >> (x % 8);
                *b = if v & 1 != 0 { *b | m } else { *b & !m };
            }
            4 => {
                let b = &mut d[row + x / 2];
                *b = if x.is_multiple_of(2) {
                    (*b & 0x0F) | ((v as u8 & 0xF) << 4)
                } else {
                    (*b & 0xF0) | (v as u8 & 0xF)
                };
            }
            8 => d[row + x] = v as u8,
            16 => d[row + 2 * x..row + 2 * x + 2].copy_from_slice(&(v as u16).to_le_bytes()),
            24 => d[row + 3 * x..row + 3 * x + 3].copy_from_slice(&v.to_le_bytes()[..3]),
            _ => d[row + 4 * x..row + 4 * x + 4].copy_from_slice(&v.to_le_bytes()),
        }
    }

    /// The colour a raw value stands for.
    pub fn to_color(&self, v: u32) -> Colorref {
        match self.bpp {
            1 | 4 | 8 => self.palette.get(v as usize).copied().unwrap_or(0),
            24 => rgb((v >> 16) as u8, (v >> 8) as u8, v as u8),
            _ => {
                let ch = |m: u32| -> u8 {
                    if m == 0 {
                        return 0;
                    }
                    let shift = m.trailing_zeros();
                    let bits = (m >> shift).count_ones();
                    let x = (v & m) >> shift;
                    // Widen to 8 bits by replicating the top bits: 5-bit 31 reads 0xFF.
                    if bits >= 8 {
                        (x >> (bits - 8)) as u8
                    } else {
                        let mut v = x << (8 - bits);
                        let mut s = bits;
                        while s < 8 {
                            v |= v >> s;
                            s *= 2;
                        }
                        v as u8
                    }
                };
                rgb(ch(self.masks[0]), ch(self.masks[1]), ch(self.masks[2]))
            }
        }
    }

    /// The raw value that shows colour `c`: the nearest colour-table entry
    /// (the first of equals) for palette depths, the channels truncated to
    /// the masks otherwise.
    pub fn from_color(&self, c: Colorref) -> u32 {
        let [r, g, b] = channels(c);
        match self.bpp {
            1 | 4 | 8 => nearest(&self.palette, c),
            24 => (r as u32) << 16 | (g as u32) << 8 | b as u32,
            _ => {
                let put = |m: u32, x: u8| -> u32 {
                    if m == 0 {
                        return 0;
                    }
                    let shift = m.trailing_zeros();
                    let bits = (m >> shift).count_ones();
                    let v = if bits >= 8 {
                        (x as u32) << (bits - 8)
                    } else {
                        x as u32 >> (8 - bits)
                    };
                    (v << shift) & m
                };
                put(self.masks[0], r) | put(self.masks[1], g) | put(self.masks[2], b)
            }
        }
    }

    /// The colour at (x, y).
    pub fn color_at(&self, x: i32, y: i32) -> Colorref {
        self.to_color(self.get(x, y))
    }

    /// Reads guest bits at `addr` laid out as a DIB (bottom-up unless
    /// `top_down`) into this buffer; false if the memory is not readable.
    pub fn load_guest(&mut self, mem: &Memory, addr: u32, top_down: bool) -> bool {
        let n = self.stride;
        let h = self.height as usize;
        for row in 0..h {
            let src = if top_down { row } else { h - 1 - row };
            let a = addr.wrapping_add((src * n) as u32);
            if mem
                .peek(a, &mut self.data[row * n..(row + 1) * n])
                .is_none()
            {
                return false;
            }
        }
        true
    }

    /// Writes this buffer back to guest bits at `addr` (see [`Bits::load_guest`]).
    pub fn store_guest(&self, mem: &mut Memory, addr: u32, top_down: bool) -> bool {
        let n = self.stride;
        let h = self.height as usize;
        for row in 0..h {
            let dst = if top_down { row } else { h - 1 - row };
            let a = addr.wrapping_add((dst * n) as u32);
            if mem.poke(a, &self.data[row * n..(row + 1) * n]).is_none() {
                return false;
            }
        }
        true
    }
}

/// Index of the table entry nearest to `c` (squared RGB distance; the first of equals).
pub fn nearest(table: &[Colorref], c: Colorref) -> u32 {
    let [r, g, b] = channels(c);
    let mut best = (u32::MAX, 0u32);
    for (i, &e) in table.iter().enumerate() {
        let [er, eg, eb] = channels(e);
        let d = |a: u8, b: u8| (a as i32 - b as i32).pow(2) as u32;
        let dist = d(r, er) + d(g, eg) + d(b, eb);
        if dist < best.0 {
            best = (dist, i as u32);
            if dist == 0 {
                break;
            }
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_access_and_colours_at_every_depth() {
        // (bpp, colour written, raw value expected, colour read back)
        let mut b4 = Bits::new(3, 2, 4);
        b4.palette[5] = rgb(0, 0, 128);
        let cases: [(Bits, Colorref, u32, Colorref); 6] = [
            (
                Bits::new(9, 2, 1),
                rgb(200, 200, 200),
                1,
                rgb(255, 255, 255),
            ),
            (b4, rgb(0, 0, 120), 5, rgb(0, 0, 128)),
            (Bits::new(3, 2, 8), rgb(1, 1, 1), 0, 0),
            (
                Bits::new(3, 2, 16),
                rgb(255, 128, 7),
                0x7C00 | 16 << 5,
                rgb(0xFF, 0x84, 0),
            ),
            (Bits::new(3, 2, 24), rgb(1, 2, 3), 0x010203, rgb(1, 2, 3)),
            (Bits::new(3, 2, 32), rgb(1, 2, 3), 0x010203, rgb(1, 2, 3)),
        ];
        for (mut b, c, raw, back) in cases {
            let v = b.from_color(c);
            assert_eq!(v, raw, "{} bpp", b.bpp);
            let x = b.width - 1;
            b.set(x, 1, v);
            assert_eq!(b.get(x, 1), raw, "{} bpp", b.bpp);
            assert_eq!(b.get(x - 1, 1), 0, "{} bpp: neighbour untouched", b.bpp);
            assert_eq!(b.color_at(x, 1), back, "{} bpp", b.bpp);
        }
        assert_eq!(stride(9, 1), 4);
        assert_eq!(stride(3, 24), 12);
        assert_eq!(stride(5, 8), 8);
    }
}
