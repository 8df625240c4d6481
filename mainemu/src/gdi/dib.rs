//! Device-independent bitmaps: the BITMAPINFO header forms (core 12 bytes,
//! info 40, V4 108, V5 124), the colour table (RGBQUAD / RGBTRIPLE, or
//! palette indexes for DIB_PAL_COLORS), BI_BITFIELDS masks, RLE8/RLE4, and
//! the conversion of DIB pixel rows into [`Bits`] and back.
//!
//! Owns the DIB byte layouts. It must not read guest memory (callers pass
//! byte slices) or know DCs.

use super::bits::{rgb, Bits, Colorref, MASKS_555, MASKS_888};

pub const BI_RGB: u32 = 0;
pub const BI_RLE8: u32 = 1;
pub const BI_RLE4: u32 = 2;
pub const BI_BITFIELDS: u32 = 3;

/// A parsed BITMAPINFO.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DibInfo {
    pub width: i32,
    /// Absolute height.
    pub height: i32,
    pub top_down: bool,
    pub bpp: u16,
    pub compression: u32,
    pub masks: [u32; 3],
    pub palette: Vec<Colorref>,
    /// Bytes of header, masks and colour table (where the bits start in a packed DIB).
    pub header_bytes: usize,
    /// biSizeImage (compressed size for RLE).
    pub size_image: u32,
}

fn u16_at(b: &[u8], o: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(o..o + 2)?.try_into().ok()?))
}
fn u32_at(b: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?))
}

impl DibInfo {
    /// Parses a BITMAPINFO at the start of `b`. `pal_colors`: the colour
    /// table holds u16 indexes into `dc_palette` (DIB_PAL_COLORS).
    pub fn parse(b: &[u8], pal_colors: bool, dc_palette: &[Colorref]) -> Result<DibInfo, String> {
        let size = u32_at(b, 0).ok_or("BITMAPINFO truncated")? as usize;
        let (width, height, bpp, compression, clr_used, size_image, masks_at, rgbquad) = match size
        {
            12 => (
                u16_at(b, 4).ok_or("truncated")? as i16 as i32,
                u16_at(b, 6).ok_or("truncated")? as i16 as i32,
                u16_at(b, 10).ok_or("truncated")?,
                BI_RGB,
                0,
                0,
                None,
                false,
            ),
            40 | 52 | 56 | 64 | 108 | 124 => (
                u32_at(b, 4).ok_or("truncated")? as i32,
                u32_at(b, 8).ok_or("truncated")? as i32,
                u16_at(b, 14).ok_or("truncated")?,
                u32_at(b, 16).ok_or("truncated")?,
                u32_at(b, 32).ok_or("truncated")?,
                u32_at(b, 20).ok_or("truncated")?,
                Some(40),
                true,
            ),
            s => return Err(format!("BITMAPINFO header size {s} not supported")),
        };
        if !matches!(bpp, 1 | 4 | 8 | 16 | 24 | 32) {
            return Err(format!("{bpp} bits per pixel not supported"));
        }
        if width <= 0 || width > 0x8000 || height == 0 || height.unsigned_abs() > 0x8000 {
            return Err(format!("DIB size {width}x{height} not supported"));
        }
        let mut off = size;
        let mut masks = if bpp == 16 { MASKS_555 } else { MASKS_888 };
        if compression == BI_BITFIELDS {
            if !matches!(bpp, 16 | 32) {
                return Err("BI_BITFIELDS needs 16 or 32 bits per pixel".into());
            }
            let at = if size == 40 {
                off
            } else {
                masks_at.unwrap_or(40)
            };
            masks = [
                u32_at(b, at).ok_or("masks truncated")?,
                u32_at(b, at + 4).ok_or("masks truncated")?,
                u32_at(b, at + 8).ok_or("masks truncated")?,
            ];
            if size == 40 {
                off += 12;
            }
        } else if !matches!(compression, BI_RGB | BI_RLE8 | BI_RLE4) {
            return Err(format!("DIB compression {compression} not supported"));
        }
        let n = if bpp <= 8 {
            if clr_used == 0 || clr_used > 1 << bpp {
                1usize << bpp
            } else {
                clr_used as usize
            }
        } else {
            0
        };
        let mut palette = Vec::with_capacity(n);
        for i in 0..n {
            let c = if pal_colors {
                let idx = u16_at(b, off + 2 * i).ok_or("colour table truncated")? as usize;
                // Indexes past the palette wrap around it (Windows: a
                // 37-entry palette gives entry i % 37 for index i).
                match dc_palette.len() {
                    0 => 0,
                    len => dc_palette[idx % len],
                }
            } else if rgbquad {
                let o = off + 4 * i;
                let e = b.get(o..o + 3).ok_or("colour table truncated")?;
                rgb(e[2], e[1], e[0])
            } else {
                let o = off + 3 * i;
                let e = b.get(o..o + 3).ok_or("colour table truncated")?;
                rgb(e[2], e[1], e[0])
            };
            palette.push(c);
        }
        off += if pal_colors {
            2 * n
        } else if rgbquad {
            4 * n
        } else {
            3 * n
        };
        Ok(DibInfo {
            width,
            height: height.abs(),
            top_down: height < 0,
            bpp,
            compression,
            masks,
            palette,
            header_bytes: off,
            size_image,
        })
    }

    /// Bytes of uncompressed pixel data.
    pub fn image_bytes(&self) -> usize {
        super::bits::stride(self.width, self.bpp) * self.height as usize
    }

    /// An empty buffer of this DIB's format.
    pub fn blank(&self) -> Bits {
        let mut b = Bits::new(self.width, self.height, self.bpp);
        if self.bpp <= 8 {
            b.palette = self.palette.clone();
            b.palette.resize(1 << self.bpp, 0);
        }
        b.masks = self.masks;
        b
    }

    /// Decodes pixel data (rows in the DIB's own order, or RLE) into top-down [`Bits`].
    pub fn decode(&self, data: &[u8]) -> Result<Bits, String> {
        let mut b = self.blank();
        match self.compression {
            BI_RLE8 | BI_RLE4 => {
                rle(&mut b, data, self.compression == BI_RLE4)?;
            }
            _ => {
                let n = b.stride;
                let h = self.height as usize;
                if data.len() < n * h {
                    return Err(format!(
                        "DIB bits truncated: {} of {} bytes",
                        data.len(),
                        n * h
                    ));
                }
                for row in 0..h {
                    let src = if self.top_down { row } else { h - 1 - row };
                    b.data[row * n..(row + 1) * n].copy_from_slice(&data[src * n..(src + 1) * n]);
                }
            }
        }
        Ok(b)
    }
}

/// RLE8 / RLE4 decoding (bottom-up, as the format always is), into top-down `b`.
fn rle(b: &mut Bits, d: &[u8], four: bool) -> Result<(), String> {
    let h = b.height;
    let (mut x, mut y) = (0i32, 0i32);
    let mut i = 0;
    let put = |b: &mut Bits, x: i32, y: i32, v: u32| b.set(x, h - 1 - y, v);
    while i + 1 < d.len() {
        let (n, c) = (d[i], d[i + 1]);
        i += 2;
        if n > 0 {
            for k in 0..n as i32 {
                let v = if four {
                    if k % 2 == 0 {
                        c >> 4
                    } else {
                        c & 0xF
                    }
                } else {
                    c
                };
                put(b, x + k, y, v as u32);
            }
            x += n as i32;
            continue;
        }
        match c {
            0 => {
                x = 0;
                y += 1;
            }
            1 => return Ok(()),
            2 => {
                let dx = *d.get(i).ok_or("RLE delta truncated")?;
                let dy = *d.get(i + 1).ok_or("RLE delta truncated")?;
                i += 2;
                x += dx as i32;
                y += dy as i32;
            }
            k => {
                let k = k as usize;
                let bytes = if four { k.div_ceil(2) } else { k };
                let run = d.get(i..i + bytes).ok_or("RLE run truncated")?;
                for j in 0..k {
                    let v = if four {
                        if j % 2 == 0 {
                            run[j / 2] >> 4
                        } else {
                            run[j / 2] & 0xF
                        }
                    } else {
                        run[j]
                    };
                    put(b, x + j as i32, y, v as u32);
                }
                x += k as i32;
                i += bytes.div_ceil(2) * 2;
            }
        }
    }
    Ok(())
}

/// Converts `src` to a DIB format `info` (GetDIBits): pixel values through
/// colours unless the formats match.
pub fn convert(src: &Bits, info: &DibInfo) -> Bits {
    let mut out = info.blank();
    out.width = src.width;
    out.height = src.height;
    out.stride = super::bits::stride(src.width, info.bpp);
    out.data = vec![0; out.stride * src.height as usize];
    let same = src.bpp == out.bpp && src.palette == out.palette && src.masks == out.masks;
    for y in 0..src.height {
        for x in 0..src.width {
            let v = src.get(x, y);
            out.set(
                x,
                y,
                if same {
                    v
                } else {
                    out.from_color(src.to_color(v))
                },
            );
        }
    }
    out
}

/// Rows of `b` in DIB order (bottom-up unless `top_down`), starting at DIB scan line `start`, `lines` of them.
pub fn rows_out(b: &Bits, top_down: bool, start: usize, lines: usize) -> Vec<u8> {
    let n = b.stride;
    let h = b.height as usize;
    let mut out = Vec::with_capacity(n * lines);
    for k in start..(start + lines).min(h) {
        let row = if top_down { k } else { h - 1 - k };
        out.extend_from_slice(&b.data[row * n..(row + 1) * n]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(w: i32, h: i32, bpp: u16, comp: u32) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend(40u32.to_le_bytes());
        v.extend(w.to_le_bytes());
        v.extend(h.to_le_bytes());
        v.extend(1u16.to_le_bytes());
        v.extend(bpp.to_le_bytes());
        v.extend(comp.to_le_bytes());
        v.extend([0u8; 20]);
        v
    }

    #[test]
    fn parse_and_decode() {
        let mut h = header(2, 2, 1, BI_RGB);
        h.extend([0, 0, 255, 0, 255, 0, 0, 0]); // red, blue
        let i = DibInfo::parse(&h, false, &[]).unwrap();
        assert_eq!(
            (i.width, i.height, i.top_down, i.header_bytes),
            (2, 2, false, 48)
        );
        assert_eq!(i.palette, vec![rgb(255, 0, 0), rgb(0, 0, 255)]);
        // Bottom-up: the first row in memory is the bottom one.
        let b = i.decode(&[0x40, 0, 0, 0, 0x80, 0, 0, 0]).unwrap();
        assert_eq!(
            (b.get(0, 0), b.get(1, 0), b.get(0, 1), b.get(1, 1)),
            (1, 0, 0, 1)
        );
        let mut h = header(1, -1, 16, BI_BITFIELDS);
        h.extend(0xF800u32.to_le_bytes());
        h.extend(0x07E0u32.to_le_bytes());
        h.extend(0x001Fu32.to_le_bytes());
        let i = DibInfo::parse(&h, false, &[]).unwrap();
        assert_eq!(
            (i.masks, i.top_down, i.header_bytes),
            ([0xF800, 0x7E0, 0x1F], true, 52)
        );
        let b = i.decode(&[0x00, 0xF8, 0, 0]).unwrap();
        assert_eq!(b.color_at(0, 0), rgb(0xFF, 0, 0));
        assert!(DibInfo::parse(&header(1, 1, 7, 0), false, &[]).is_err());
        assert!(DibInfo::parse(&[1, 2], false, &[]).is_err());
        // RLE8: a run of 3 of index 1, end of line, a literal 2,1,2 (padded to a word) on the top row, end.
        let mut h = header(3, 2, 8, BI_RLE8);
        h.extend([0u8; 1024]);
        let i = DibInfo::parse(&h, false, &[]).unwrap();
        let b = i.decode(&[3, 1, 0, 0, 0, 3, 2, 1, 2, 0, 0, 1]).unwrap();
        assert_eq!(
            (
                b.get(0, 1),
                b.get(2, 1),
                b.get(0, 0),
                b.get(1, 0),
                b.get(2, 0)
            ),
            (1, 1, 2, 1, 2)
        );
    }
}
