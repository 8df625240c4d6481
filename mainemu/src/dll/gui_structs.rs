//! Guest layouts of the structures the GUI DLLs read and write: RECT,
//! POINT, SIZE, LOGFONT (A/W), TEXTMETRIC (A/W), and ANSI/wide strings as
//! UTF-16 units (the ANSI code page is Latin-1 here, as in kernel32's
//! conversions).
//!
//! Owns byte offsets and string marshalling. It must not hold API logic.

use crate::gdi::region::Rect;
use crate::gdi::LogFont;
use crate::memory::Memory;

pub fn read_i32(m: &Memory, a: u32) -> Option<i32> {
    m.peek_u32(a).map(|v| v as i32)
}

pub fn read_rect(m: &Memory, a: u32) -> Option<Rect> {
    Some(Rect::new(
        read_i32(m, a)?,
        read_i32(m, a + 4)?,
        read_i32(m, a + 8)?,
        read_i32(m, a + 12)?,
    ))
}

pub fn write_rect(m: &mut Memory, a: u32, r: Rect) -> bool {
    let mut b = Vec::with_capacity(16);
    for v in [r.left, r.top, r.right, r.bottom] {
        b.extend(v.to_le_bytes());
    }
    m.poke(a, &b).is_some()
}

pub fn read_point(m: &Memory, a: u32) -> Option<(i32, i32)> {
    Some((read_i32(m, a)?, read_i32(m, a + 4)?))
}

/// Writes two LONGs (POINT or SIZE); nothing for a NULL pointer.
pub fn write_pair(m: &mut Memory, a: u32, (x, y): (i32, i32)) -> bool {
    if a == 0 {
        return true;
    }
    let mut b = x.to_le_bytes().to_vec();
    b.extend(y.to_le_bytes());
    m.poke(a, &b).is_some()
}

/// `n` points (POINT arrays).
pub fn read_points(m: &Memory, a: u32, n: u32) -> Option<Vec<(i32, i32)>> {
    if n > 1 << 20 {
        return None;
    }
    (0..n).map(|i| read_point(m, a + 8 * i)).collect()
}

/// A string as UTF-16 units: `n` units/bytes, or up to the NUL when `n` is negative.
pub fn read_str(m: &Memory, a: u32, n: i32, wide: bool) -> Option<Vec<u16>> {
    if a == 0 {
        return None;
    }
    if n < 0 {
        return if wide {
            m.peek_wstr(a, 1 << 20)
        } else {
            m.peek_cstr(a, 1 << 20)
                .map(|v| v.into_iter().map(|b| b as u16).collect())
        };
    }
    let n = n as u32;
    if n > 1 << 20 {
        return None;
    }
    if wide {
        let mut b = vec![0u8; 2 * n as usize];
        m.peek(a, &mut b)?;
        Some(
            b.chunks(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect(),
        )
    } else {
        let mut b = vec![0u8; n as usize];
        m.peek(a, &mut b)?;
        Some(b.into_iter().map(|c| c as u16).collect())
    }
}

/// Writes `s` and a NUL into a buffer of `cap` units, truncating; returns
/// the units written without the NUL (0 if `cap` is 0).
pub fn write_str(m: &mut Memory, a: u32, cap: u32, s: &[u16], wide: bool) -> u32 {
    if cap == 0 || a == 0 {
        return 0;
    }
    let n = s.len().min(cap as usize - 1);
    let mut b = Vec::with_capacity(2 * (n + 1));
    for &u in &s[..n] {
        if wide {
            b.extend(u.to_le_bytes());
        } else {
            b.push(if u < 256 { u as u8 } else { b'?' });
        }
    }
    b.extend(if wide { &[0u8, 0][..] } else { &[0u8][..] });
    if m.poke(a, &b).is_none() {
        return 0;
    }
    n as u32
}

pub fn units(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
}

/// Reads a LOGFONTA (60 bytes) or LOGFONTW (92 bytes).
pub fn read_logfont(m: &Memory, a: u32, wide: bool) -> Option<LogFont> {
    let mut b = vec![0u8; if wide { 92 } else { 60 }];
    m.peek(a, &mut b)?;
    let l = |o: usize| i32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
    let face: Vec<u16> = if wide {
        b[28..92]
            .chunks(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .take_while(|&u| u != 0)
            .collect()
    } else {
        b[28..60]
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u16)
            .collect()
    };
    Some(LogFont {
        height: l(0),
        width: l(4),
        escapement: l(8),
        orientation: l(12),
        weight: l(16),
        italic: b[20],
        underline: b[21],
        strikeout: b[22],
        charset: b[23],
        out_precision: b[24],
        clip_precision: b[25],
        quality: b[26],
        pitch_family: b[27],
        face,
    })
}

/// The LOGFONT bytes (A or W), for GetObject.
pub fn logfont_bytes(f: &LogFont, wide: bool) -> Vec<u8> {
    let mut b = Vec::new();
    for v in [f.height, f.width, f.escapement, f.orientation, f.weight] {
        b.extend(v.to_le_bytes());
    }
    b.extend([
        f.italic,
        f.underline,
        f.strikeout,
        f.charset,
        f.out_precision,
        f.clip_precision,
        f.quality,
        f.pitch_family,
    ]);
    for i in 0..32 {
        let u = f.face.get(i).copied().unwrap_or(0);
        let u = if i == 31 { 0 } else { u };
        if wide {
            b.extend(u.to_le_bytes());
        } else {
            b.push(u as u8);
        }
    }
    b
}

/// TEXTMETRICA (56 bytes) or TEXTMETRICW (60 bytes) of a face.
pub fn textmetric_bytes(f: &crate::gdi::font::Face, lf: &LogFont, wide: bool) -> Vec<u8> {
    let mut b = Vec::new();
    let weight = if f.bold { 700 } else { 400 };
    for v in [
        f.height(),
        f.ascent(),
        f.descent(),
        0, // internal leading
        0, // external leading
        f.char_width(),
        f.char_width(),
        weight,
        0,
        96,
        96,
    ] {
        b.extend(v.to_le_bytes());
    }
    // first, last, default, break characters
    let chars: [u16; 4] = [0x20, 0xFF, b'?' as u16, 0x20];
    for c in chars {
        if wide {
            b.extend(c.to_le_bytes());
        } else {
            b.push(c as u8);
        }
    }
    // italic, underlined, struck out, pitch and family (TMPF_FIXED_PITCH clear = fixed), charset
    b.extend([lf.italic, lf.underline, lf.strikeout, 0x30, lf.charset]);
    while b.len() % 4 != 0 {
        b.push(0);
    }
    b
}
