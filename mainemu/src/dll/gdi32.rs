//! GDI32.dll: the exports mainemu implements over [`crate::gdi`], each
//! declared once. Bodies marshal guest structures (through
//! [`super::gui_structs`] and [`crate::gdi::dib`]) and call the GDI state;
//! drawing goes through `Gdi::draw` so DIB sections stay in sync with
//! guest memory.
//!
//! Owns the gdi32 calling surface: argument meanings, return values and
//! error values (0, CLR_INVALID, GDI_ERROR) as Windows documents them. It
//! must not rasterize (gdi::raster does) or know windows (user32 does).

use super::gui_structs::{self as gs, read_rect, read_str, write_pair, write_rect};
use super::Env;
use crate::gdi::bits::{Bits, Colorref};
use crate::gdi::dib::{self, DibInfo};
use crate::gdi::raster::{Paint, Shape};
use crate::gdi::region::{Op, Rect, Region};
use crate::gdi::{
    bs, dc::complexity, obj, ps, BitmapObj, BrushObj, ExtPen, Gdi, LogFont, Object, PenObj,
};
use crate::memory::{mem, prot, Memory};

pub const CLR_INVALID: u32 = 0xFFFF_FFFF;
pub const GDI_ERROR: u32 = 0xFFFF_FFFF;
/// DIB_PAL_COLORS.
const DIB_PAL_COLORS: u32 = 1;

fn gdi(env: &mut Env) -> &mut Gdi {
    &mut env.desktop.gdi
}

/// The GDI state and guest memory at once.
fn parts(env: &mut Env) -> (&mut Gdi, &mut Memory) {
    (&mut env.desktop.gdi, &mut env.mem)
}

/// Reads a BITMAPINFO from guest memory.
pub fn read_bmi(env: &Env, a: u32, usage: u32, hdc: u32) -> Option<DibInfo> {
    let hdr = bmi_bytes(env, a)?;
    let pal = env
        .desktop
        .gdi
        .dc(hdc)
        .and_then(|d| match env.desktop.gdi.get(d.palette) {
            Some(Object::Palette(p)) => Some(p.clone()),
            _ => None,
        })
        .unwrap_or_else(|| env.desktop.gdi.system_palette.clone());
    DibInfo::parse(&hdr, usage == DIB_PAL_COLORS, &pal).ok()
}

/// The bytes of a BITMAPINFO at `a`: the header and as much of a colour
/// table as is mapped.
fn bmi_bytes(env: &Env, a: u32) -> Option<Vec<u8>> {
    let mut hdr = vec![0u8; 124 + 12 + 1024];
    // Read what is mapped: the header first, then as much of the table as exists.
    let size = env.mem.peek_u32(a)? as usize;
    let want = (size + 12 + 1024).min(hdr.len());
    let mut got = size.max(12).min(hdr.len());
    env.mem.peek(a, &mut hdr[..got])?;
    while got < want {
        let step = (want - got).min(4);
        if env
            .mem
            .peek(a + got as u32, &mut hdr[got..got + step])
            .is_none()
        {
            break;
        }
        got += step;
    }
    hdr.truncate(got);
    Some(hdr)
}

/// BI_JPEG and BI_PNG (pass-through compressions for printers).
const BI_JPEG: u32 = 4;
const BI_PNG: u32 = 5;

/// The BITMAPINFOHEADER fields Windows' DIB functions check before they
/// look at the rest (Wine's test_dib_formats, run on Windows, pins which
/// function takes which combination).
#[derive(Clone, Copy, Debug)]
struct Hdr {
    width: i32,
    height: i32,
    planes: u16,
    bpp: u16,
    compression: u32,
    size_image: u32,
}

fn peek_hdr(env: &Env, a: u32) -> Option<Hdr> {
    let size = env.mem.peek_u32(a)?;
    let mut b = [0u8; 24];
    let u16_at = |b: &[u8], o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
    let u32_at = |b: &[u8], o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
    if size == 12 {
        env.mem.peek(a, &mut b[..12])?;
        return Some(Hdr {
            width: u16_at(&b, 4) as i16 as i32,
            height: u16_at(&b, 6) as i16 as i32,
            planes: u16_at(&b, 8),
            bpp: u16_at(&b, 10),
            compression: dib::BI_RGB,
            size_image: 0,
        });
    }
    env.mem.peek(a, &mut b)?;
    Some(Hdr {
        width: u32_at(&b, 4) as i32,
        height: u32_at(&b, 8) as i32,
        planes: u16_at(&b, 12),
        bpp: u16_at(&b, 14),
        compression: u32_at(&b, 16),
        size_image: u32_at(&b, 20),
    })
}

impl Hdr {
    /// An uncompressed format: 1, 4, 8, 24 bpp BI_RGB; 16 and 32 bpp BI_RGB or BI_BITFIELDS.
    fn format_ok(&self) -> bool {
        match self.bpp {
            1 | 4 | 8 | 24 => self.compression == dib::BI_RGB,
            16 | 32 => matches!(self.compression, dib::BI_RGB | dib::BI_BITFIELDS),
            _ => false,
        }
    }
    /// RLE4 at 4 bpp or RLE8 at 8 bpp.
    fn rle(&self) -> bool {
        matches!(
            (self.bpp, self.compression),
            (4, dib::BI_RLE4) | (8, dib::BI_RLE8)
        )
    }
    /// What SetDIBits, SetDIBitsToDevice and StretchDIBits take: an
    /// uncompressed format with planes != 0, or RLE with its size given.
    fn set_ok(&self) -> bool {
        if self.rle() {
            self.size_image != 0
        } else {
            self.format_ok() && self.planes != 0
        }
    }
}

/// A BI_BITFIELDS header whose masks have a zero (CreateDIBSection and
/// SetDIBits refuse it; the other functions do not check).
fn null_bitfields(info: &DibInfo) -> bool {
    info.compression == dib::BI_BITFIELDS && info.masks.contains(&0)
}

/// Reads DIB pixel data for `info` from guest memory (`lines` rows, or all).
fn read_bits(env: &Env, info: &DibInfo, a: u32) -> Option<Bits> {
    let n = match info.compression {
        dib::BI_RLE8 | dib::BI_RLE4 => info.size_image as usize,
        _ => info.image_bytes(),
    };
    if n > 256 << 20 {
        return None;
    }
    let mut data = vec![0u8; n];
    env.mem.peek(a, &mut data)?;
    info.decode(&data).ok()
}

fn new_pen(env: &mut Env, style: u32, width: i32, color: Colorref, ext: Option<ExtPen>) -> u32 {
    gdi(env).add(Object::Pen(PenObj {
        style,
        width: width.max(0),
        color: color & 0xFF_FFFF,
        ext,
    }))
}

/// CreatePen and CreatePenIndirect: styles past PS_INSIDEFRAME become
/// PS_SOLID, a negative width counts as positive, PS_NULL is the stock
/// NULL_PEN (what GetObject then reports; Wine's pen tests).
fn logical_pen(env: &mut Env, style: u32, width: i32, color: Colorref) -> u32 {
    let style = match style & 0xF {
        s if s > ps::INSIDEFRAME => ps::SOLID,
        s => s,
    };
    if style == ps::NULL {
        return gdi(env).stock(crate::gdi::stock::NULL_PEN);
    }
    new_pen(env, style, width.saturating_abs(), color, None)
}

/// ExtCreatePen's checks (Wine's pen tests, run on Windows): style
/// entries only with PS_USERSTYLE (1..=16 of them, not all zero, none
/// negative); cosmetic pens are 1 wide, BS_SOLID, and neither
/// PS_INSIDEFRAME nor past PS_ALTERNATE; geometric pens are not
/// PS_ALTERNATE and take solid, hatched, pattern and DIB pattern brushes;
/// a null brush or PS_NULL gives the stock NULL_PEN. Fails with
/// ERROR_INVALID_PARAMETER.
fn ext_pen(env: &mut Env, style: u32, width: u32, lb: u32, n: u32, styles: u32) -> u32 {
    let s = style & 0xF;
    let geometric = style & 0xF_0000 == ps::GEOMETRIC;
    let fail = |env: &mut Env| {
        env.last_error = 87;
        0
    };
    if (n as i32) < 0 {
        return 0; // no error code (Windows leaves it)
    }
    if style & 0xF_0000 > ps::GEOMETRIC || (s == ps::USERSTYLE) != (n != 0 && styles != 0) || n > 16
    {
        return fail(env);
    }
    let (Some(mut brush_style), Some(mut color), Some(hatch)) = (
        env.mem.peek_u32(lb),
        env.mem.peek_u32(lb + 4),
        env.mem.peek_u32(lb + 8),
    ) else {
        return fail(env);
    };
    let entries: Vec<u32> = (0..n)
        .map(|i| env.mem.peek_u32(styles + 4 * i).unwrap_or(0))
        .collect();
    if s == ps::USERSTYLE
        && (entries.iter().all(|&e| e == 0) || entries.iter().any(|&e| (e as i32) < 0))
    {
        return fail(env);
    }
    if s == ps::NULL || (geometric && brush_style == bs::NULL) {
        return gdi(env).stock(crate::gdi::stock::NULL_PEN);
    }
    let bad = if geometric {
        s >= ps::ALTERNATE
            || !matches!(
                brush_style,
                bs::SOLID | bs::HATCHED | bs::PATTERN | bs::DIBPATTERN | bs::DIBPATTERNPT
            )
    } else {
        width != 1 || s == ps::INSIDEFRAME || s > ps::ALTERNATE || brush_style != bs::SOLID
    };
    if bad {
        return fail(env);
    }
    // Pattern brushes report no colour; DIB patterns report BS_DIBPATTERNPT.
    if matches!(brush_style, bs::PATTERN | bs::DIBPATTERN | bs::DIBPATTERNPT) {
        color = 0;
        if brush_style == bs::DIBPATTERN {
            brush_style = bs::DIBPATTERNPT;
        }
    }
    let ext = ExtPen {
        brush_style,
        hatch,
        entries,
    };
    new_pen(
        env,
        style,
        (width as i32).saturating_abs(),
        color,
        Some(ext),
    )
}

/// A new brush. Hatch styles 6..=11 (up to HS_API_MAX) make a solid brush
/// and higher ones fail without an error code, as Windows does (Wine's
/// brush tests); BS_NULL is the stock NULL_BRUSH.
fn new_brush(
    env: &mut Env,
    mut style: u32,
    color: Colorref,
    mut hatch: u32,
    pattern: Option<(Bits, bool)>,
) -> u32 {
    if style == bs::HATCHED && hatch > 5 {
        if hatch >= 12 {
            return 0;
        }
        (style, hatch) = (bs::SOLID, 0);
    }
    if style == bs::NULL {
        return gdi(env).stock(crate::gdi::stock::NULL_BRUSH);
    }
    gdi(env).add(Object::Brush(BrushObj {
        style,
        color: color & 0xFF_FFFF,
        hatch,
        pattern,
        pal_colors: false,
    }))
}

fn new_dib_section(env: &mut Env, hdc: u32, bmi: u32, usage: u32, ppv: u32) -> u32 {
    // Planes: 1, or any count whose product with the depth stays within 16;
    // BI_BITFIELDS does not go with DIB_PAL_COLORS.
    let hdr_ok = peek_hdr(env, bmi).is_some_and(|h| {
        h.format_ok()
            && h.planes != 0
            && (h.planes == 1 || h.planes as u32 * h.bpp as u32 <= 16)
            && !(h.compression == dib::BI_BITFIELDS && usage == DIB_PAL_COLORS)
    });
    let info = if hdr_ok {
        read_bmi(env, bmi, usage, hdc)
    } else {
        None
    };
    let Some(info) = info.filter(|i| !null_bitfields(i)) else {
        // A compressed DIB fails without an error code (Wine's test_dibsections).
        if peek_hdr(env, bmi).is_some_and(|h| h.rle()) {
            return 0;
        }
        env.last_error = 87;
        return 0;
    };
    let size = info.image_bytes().max(1) as u32;
    let Ok(addr) = env
        .mem
        .virtual_alloc(0, size, mem::RESERVE | mem::COMMIT, prot::READWRITE)
    else {
        env.last_error = 8;
        return 0;
    };
    if ppv != 0 {
        env.mem.poke_u32(ppv, addr);
    }
    let b = BitmapObj {
        bits: info.blank(),
        guest: Some(addr),
        top_down: info.top_down,
        mono: false,
        selected: None,
        compression: info.compression,
    };
    gdi(env).add(Object::Bitmap(b))
}

/// The screen's pixel format (what compatible bitmaps get).
fn screen_bits(w: i32, h: i32) -> Bits {
    Bits::new(w, h, 32)
}

fn create_compatible_bitmap(env: &mut Env, hdc: u32, w: i32, h: i32) -> u32 {
    if w < 0 || h < 0 || (w as i64 * h as i64) > 64 << 20 {
        env.last_error = 87;
        return 0;
    }
    let g = gdi(env);
    // A memory DC's compatible bitmap has its selected bitmap's format.
    let fmt = g
        .dc(hdc)
        .filter(|d| d.memory)
        .and_then(|d| g.bitmap(d.bitmap))
        .map(|b| (b.bits.bpp, b.bits.palette.clone(), b.bits.masks, b.mono));
    if w == 0 || h == 0 {
        return g.stock(crate::gdi::stock::DEFAULT_BITMAP);
    }
    let bmp = match fmt {
        Some((1, _, _, true)) => BitmapObj::ddb(Bits::new(w, h, 1)),
        Some((bpp, pal, masks, _)) if bpp != 32 => {
            let mut b = Bits::new(w, h, bpp);
            b.palette = pal;
            b.masks = masks;
            let mut o = BitmapObj::ddb(b);
            o.mono = false;
            o
        }
        _ => BitmapObj::ddb(screen_bits(w, h)),
    };
    g.add(Object::Bitmap(bmp))
}

/// Text alignment flags.
const TA_UPDATECP: u32 = 1;
const TA_RIGHT: u32 = 2;
const TA_CENTER: u32 = 6;
const TA_BOTTOM: u32 = 8;
const TA_BASELINE: u32 = 24;
const ETO_OPAQUE: u32 = 2;
const ETO_CLIPPED: u32 = 4;

/// ExtTextOut for both string kinds: `dx` is the per-character advance array (or 0).
#[allow(clippy::too_many_arguments)]
pub fn ext_text_out(
    env: &mut Env,
    hdc: u32,
    x: i32,
    y: i32,
    opts: u32,
    rect: u32,
    s: &[u16],
    dx: u32,
) -> bool {
    let r = if rect != 0 {
        read_rect(&env.mem, rect)
    } else {
        None
    };
    let advances: Option<Vec<i32>> = if dx != 0 {
        (0..s.len() as u32)
            .map(|i| gs::read_i32(&env.mem, dx + 4 * i))
            .collect()
    } else {
        None
    };
    let face = gdi(env).face(hdc);
    let Some(d) = gdi(env).dc(hdc).cloned() else {
        return false;
    };
    let width: i32 = match &advances {
        Some(a) => a.iter().sum(),
        None => face.width(s.len()) + d.char_extra * s.len() as i32,
    };
    let (mut x, y) = if d.text_align & TA_UPDATECP != 0 {
        d.pos
    } else {
        (x, y)
    };
    let start_x = x;
    match d.text_align & TA_CENTER {
        TA_RIGHT => x -= width,
        TA_CENTER => x -= width / 2,
        _ => {}
    }
    let y = match d.text_align & TA_BASELINE {
        TA_BASELINE => y - face.ascent(),
        TA_BOTTOM => y - face.height(),
        _ => y,
    };
    let (g, m) = parts(env);
    let ok = g
        .draw(m, hdc, |t| {
            if let Some(r) = r {
                let tr = t.dc.rect_to_target(r);
                if opts & ETO_OPAQUE != 0 {
                    let bk = t.bk_px;
                    let mut c = crate::gdi::raster::Canvas {
                        bits: &mut t.bits,
                        clip: &t.clip,
                        rop2: 13,
                    };
                    c.fill_rect(tr, &Paint::Solid(bk));
                }
                if opts & ETO_CLIPPED != 0 {
                    t.clip = t.clip.intersect_rect(tr);
                }
            }
            match &advances {
                None if d.char_extra == 0 => t.text(x, y, s, face),
                _ => {
                    let mut cx = x;
                    for (i, ch) in s.iter().enumerate() {
                        t.text(cx, y, std::slice::from_ref(ch), face);
                        cx += advances
                            .as_ref()
                            .map_or(face.char_width() + d.char_extra, |a| a[i]);
                    }
                }
            }
        })
        .is_some();
    if ok && d.text_align & TA_UPDATECP != 0 {
        if let Some(dd) = gdi(env).dc_mut(hdc) {
            dd.s.pos = (
                start_x
                    + if d.text_align & TA_CENTER == TA_RIGHT {
                        -width
                    } else {
                        width
                    },
                dd.s.pos.1,
            );
        }
    }
    ok
}

fn text_extent(env: &mut Env, hdc: u32, n: usize, size: u32) -> bool {
    let Some(extra) = gdi(env).dc(hdc).map(|d| d.char_extra) else {
        return false;
    };
    let f = gdi(env).face(hdc);
    write_pair(
        &mut env.mem,
        size,
        (f.width(n) + extra * n as i32, f.height()),
    )
}

fn text_metrics(env: &mut Env, hdc: u32, out: u32, wide: bool) -> bool {
    let g = gdi(env);
    let Some(d) = g.dc(hdc) else { return false };
    let lf = match g.get(d.font) {
        Some(Object::Font(lf)) => lf.clone(),
        _ => LogFont::default(),
    };
    let b = gs::textmetric_bytes(&lf.face(), &lf, wide);
    env.mem.poke(out, &b).is_some()
}

fn create_font(env: &mut Env, lf: LogFont) -> u32 {
    gdi(env).add(Object::Font(lf))
}

#[allow(clippy::too_many_arguments)]
fn font_from_args(
    h: i32,
    w: i32,
    esc: i32,
    ori: i32,
    weight: i32,
    it: u32,
    ul: u32,
    so: u32,
    cs: u32,
    op: u32,
    cp: u32,
    q: u32,
    pf: u32,
    face: Vec<u16>,
) -> LogFont {
    LogFont {
        height: h,
        width: w,
        escapement: esc,
        orientation: ori,
        weight,
        italic: it as u8,
        underline: ul as u8,
        strikeout: so as u8,
        charset: cs as u8,
        out_precision: op as u8,
        clip_precision: cp as u8,
        quality: q as u8,
        pitch_family: pf as u8,
        face: face.into_iter().take(31).collect(),
    }
}

/// GetObject for every object kind; `wide` picks LOGFONTW over LOGFONTA.
fn get_object(env: &mut Env, h: u32, size: u32, out: u32, wide: bool) -> u32 {
    let Some(o) = gdi(env).get(h).cloned() else {
        return 0;
    };
    let is_pen = matches!(o, Object::Pen(_));
    let bytes: Vec<u8> = match o {
        Object::Pen(p) => {
            let null_stock = h == gdi(env).stock(crate::gdi::stock::NULL_PEN);
            if let Some(x) = &p.ext {
                // EXTLOGPEN: style, width, brush style, colour, hatch, entries.
                let mut b = Vec::new();
                let head = [p.style, p.width as u32, x.brush_style, p.color, x.hatch];
                for v in head
                    .into_iter()
                    .chain([x.entries.len() as u32])
                    .chain(x.entries.iter().copied())
                {
                    b.extend(v.to_le_bytes());
                }
                b
            } else if null_stock && out != 0 && size == 28 {
                // The stock NULL_PEN answers a buffer of exactly that size with an
                // EXTLOGPEN of one (zero) entry (Windows XP on; Wine's tests).
                let mut b = Vec::new();
                for v in [ps::NULL, 0, bs::SOLID, 0, 0, 0, 0] {
                    b.extend(v.to_le_bytes());
                }
                b
            } else {
                let mut b = Vec::new();
                for v in [p.style, p.width as u32, 0, p.color] {
                    b.extend(v.to_le_bytes());
                }
                b
            }
        }
        Object::Brush(b) => {
            let mut v = Vec::new();
            for x in [b.style, b.color, b.hatch] {
                v.extend(x.to_le_bytes());
            }
            v
        }
        Object::Font(f) => gs::logfont_bytes(&f, wide),
        Object::Palette(p) => (p.len() as u16).to_le_bytes().to_vec(),
        Object::Bitmap(b) => {
            let dib = b.guest.is_some();
            // DDBs report WORD-aligned rows, DIB sections DWORD-aligned ones.
            let wb = if dib {
                b.bits.stride as u32
            } else {
                ((b.bits.width as u32 * b.bits.bpp as u32).div_ceil(16)) * 2
            };
            let mut v = Vec::new();
            for x in [0u32, b.bits.width as u32, b.bits.height as u32, wb] {
                v.extend(x.to_le_bytes());
            }
            v.extend(1u16.to_le_bytes());
            v.extend(b.bits.bpp.to_le_bytes());
            v.extend(b.guest.unwrap_or(0).to_le_bytes());
            if dib && size >= 84 {
                // DIBSECTION: BITMAPINFOHEADER, bitfields, section, offset.
                let h = if b.top_down {
                    -b.bits.height
                } else {
                    b.bits.height
                };
                for x in [40u32, b.bits.width as u32, h as u32] {
                    v.extend(x.to_le_bytes());
                }
                v.extend(1u16.to_le_bytes());
                v.extend(b.bits.bpp.to_le_bytes());
                let clr = if b.bits.bpp <= 8 {
                    b.bits.palette.len() as u32
                } else {
                    0
                };
                for x in [
                    b.compression,
                    (b.bits.stride * b.bits.height as usize) as u32,
                    0,
                    0,
                    clr,
                    0,
                ] {
                    v.extend(x.to_le_bytes());
                }
                let masks = if b.compression == dib::BI_BITFIELDS {
                    b.bits.masks
                } else {
                    [0; 3]
                };
                for x in masks {
                    v.extend(x.to_le_bytes());
                }
                v.extend([0u8; 8]);
            }
            v
        }
        Object::Region(_) | Object::Dc(_) => return 0,
    };
    if out == 0 {
        return bytes.len() as u32;
    }
    // A pen does not fit a smaller buffer: GetObject fails (Wine's pen tests).
    if is_pen && (size as usize) < bytes.len() {
        return 0;
    }
    let n = bytes.len().min(size as usize);
    if env.mem.poke(out, &bytes[..n]).is_none() {
        return 0;
    }
    n as u32
}

fn region(env: &mut Env, h: u32) -> Option<Region> {
    match gdi(env).get(h) {
        Some(Object::Region(r)) => Some(r.clone()),
        _ => None,
    }
}

fn set_region(env: &mut Env, h: u32, r: Region) -> u32 {
    let cx = complexity(&r);
    match gdi(env).get_mut(h) {
        Some(Object::Region(x)) => {
            *x = r;
            cx
        }
        _ => 0,
    }
}

fn new_region(env: &mut Env, r: Region) -> u32 {
    gdi(env).add(Object::Region(r))
}

/// Updates one DC value and returns the old one (or `err` for a bad DC).
fn dc_set<T: Copy>(
    env: &mut Env,
    hdc: u32,
    err: T,
    f: impl FnOnce(&mut crate::gdi::dc::State) -> &mut T,
    v: T,
) -> T {
    match gdi(env).dc_mut(hdc) {
        Some(d) => std::mem::replace(f(&mut d.s), v),
        None => err,
    }
}

fn dc_get<T: Copy>(
    env: &mut Env,
    hdc: u32,
    err: T,
    f: impl FnOnce(&crate::gdi::dc::State) -> T,
) -> T {
    gdi(env).dc(hdc).map_or(err, |d| f(&d.s))
}

/// Sets a pair (origin or extent) and writes the old one to `out`.
fn dc_pair(
    env: &mut Env,
    hdc: u32,
    f: impl FnOnce(&mut crate::gdi::dc::State) -> &mut (i32, i32),
    v: Option<(i32, i32)>,
    out: u32,
) -> bool {
    let Some(d) = gdi(env).dc_mut(hdc) else {
        return false;
    };
    let slot = f(&mut d.s);
    let old = *slot;
    if let Some(v) = v {
        *slot = v;
    }
    write_pair(&mut env.mem, out, old)
}

fn draw_shape(env: &mut Env, hdc: u32, shape: Shape, r: Rect) -> bool {
    let (g, m) = parts(env);
    g.draw(m, hdc, |t| t.shape(shape, r)).is_some()
}

fn blt(
    env: &mut Env,
    hdc: u32,
    dst: (i32, i32, i32, i32),
    src: Option<(u32, i32, i32, i32, i32)>,
    rop: u32,
) -> bool {
    let (g, m) = parts(env);
    g.stretch_blt(m, hdc, dst, src, (rop >> 16) as u8)
}

fn clip_op(env: &mut Env, hdc: u32, r: Region, op: Op) -> u32 {
    let Some(d) = gdi(env).dc_mut(hdc) else {
        return 0;
    };
    let base = d.s.clip.clone().unwrap_or_else(|| {
        // No clip region yet: the whole device surface.
        let mut v = d.vis.clone();
        v.offset(-d.origin.0, -d.origin.1);
        v
    });
    let c = base.combine(&r, op);
    let cx = complexity(&c);
    d.s.clip = Some(c);
    cx
}

/// A logical rectangle as a device-space region of the DC.
fn device_rect(env: &mut Env, hdc: u32, r: Rect) -> Option<Region> {
    let d = gdi(env).dc(hdc)?;
    let (l, t) = d.to_device(r.left, r.top);
    let (rr, b) = d.to_device(r.right, r.bottom);
    Some(Region::rect(Rect::new(l, t, rr, b)))
}

#[allow(clippy::too_many_arguments)]
fn get_dib_bits(
    env: &mut Env,
    hdc: u32,
    hbm: u32,
    start: u32,
    lines: u32,
    bits: u32,
    bmi: u32,
    usage: u32,
) -> i32 {
    let (g, m) = parts(env);
    g.load_dib(m, hbm);
    let Some(b) = g.bitmap(hbm).cloned() else {
        return 0;
    };
    let Some(size) = env.mem.peek_u32(bmi) else {
        return 0;
    };
    let Some(hdr) = peek_hdr(env, bmi) else {
        return 0;
    };
    let bpp = hdr.bpp;
    // With no bits to write (none, or 0 lines) GetDIBits fills in the
    // header (depth 0: the bitmap's own format) or the colour table and
    // answers 1; planes are only checked when bits are written.
    let query = bits == 0 || lines == 0;
    let ok = if bits == 0 {
        // Depth 0 with no bits takes any compression.
        hdr.format_ok() || hdr.rle() || bpp == 0
    } else if lines == 0 {
        hdr.format_ok() || hdr.rle() || (bpp == 0 && !matches!(hdr.compression, BI_JPEG | BI_PNG))
    } else {
        hdr.format_ok() && hdr.planes != 0
    };
    if !ok {
        return 0;
    }
    if bpp == 0 {
        // Fill in the bitmap's own format.
        let mut v = Vec::new();
        let h = if b.guest.is_some() && b.top_down {
            -b.bits.height
        } else {
            b.bits.height
        };
        for x in [size, b.bits.width as u32, h as u32] {
            v.extend(x.to_le_bytes());
        }
        v.extend(1u16.to_le_bytes());
        v.extend(b.bits.bpp.to_le_bytes());
        let comp = if b.bits.bpp == 16 || b.bits.bpp == 32 {
            dib::BI_BITFIELDS
        } else {
            dib::BI_RGB
        };
        let comp = if b.guest.is_some() {
            b.compression
        } else {
            comp
        };
        for x in [
            comp,
            (b.bits.stride * b.bits.height as usize) as u32,
            0,
            0,
            0,
            0,
        ] {
            v.extend(x.to_le_bytes());
        }
        env.mem.poke(bmi, &v);
        if comp == dib::BI_BITFIELDS {
            let mut mm = Vec::new();
            for x in b.bits.masks {
                mm.extend(x.to_le_bytes());
            }
            env.mem.poke(bmi + 40, &mm);
        }
        return 1;
    }
    let Some(mut info) = read_bmi(env, bmi, usage, hdc) else {
        return 0;
    };
    if info.bpp <= 8 {
        // The colour table: the bitmap's own when the depths match, else a default.
        info.palette = if b.bits.bpp == info.bpp {
            b.bits.palette.clone()
        } else {
            default_palette(info.bpp)
        };
        let mut t = Vec::new();
        for &c in &info.palette {
            let [r, gg, bb] = crate::gdi::bits::channels(c);
            t.extend([bb, gg, r, 0]);
        }
        env.mem.poke(bmi + size, &t);
    }
    // Write the image size back.
    let img = (crate::gdi::bits::stride(b.bits.width, info.bpp) * b.bits.height as usize) as u32;
    env.mem.poke_u32(bmi + 20, img);
    if query {
        return 1;
    }
    let conv = dib::convert(&b.bits, &info);
    let start = start as usize;
    let lines = (lines as usize).min((b.bits.height as usize).saturating_sub(start));
    let rows = dib::rows_out(&conv, info.top_down, start, lines);
    if env.mem.poke(bits, &rows).is_none() {
        return 0;
    }
    lines as i32
}

/// The colour table GetDIBits writes when converting to a palette depth.
pub fn default_palette(bpp: u16) -> Vec<Colorref> {
    use crate::gdi::bits::rgb;
    match bpp {
        1 => vec![rgb(0, 0, 0), rgb(255, 255, 255)],
        4 => vec![
            rgb(0, 0, 0),
            rgb(128, 0, 0),
            rgb(0, 128, 0),
            rgb(128, 128, 0),
            rgb(0, 0, 128),
            rgb(128, 0, 128),
            rgb(0, 128, 128),
            rgb(128, 128, 128),
            rgb(192, 192, 192),
            rgb(255, 0, 0),
            rgb(0, 255, 0),
            rgb(255, 255, 0),
            rgb(0, 0, 255),
            rgb(255, 0, 255),
            rgb(0, 255, 255),
            rgb(255, 255, 255),
        ],
        _ => {
            // The 20 static colours at both ends; between them Windows'
            // 3-3-2 table (entry i: red (i & 7) << 5, green (i & 0x38) << 2,
            // blue i & 0xC0; Wine's bitmap.c test_GetDIBits pins it).
            let mut p = vec![0; 256];
            p[..10].copy_from_slice(&crate::gdi::STATIC_COLORS[..10]);
            p[246..].copy_from_slice(&crate::gdi::STATIC_COLORS[10..]);
            for i in 10..246u32 {
                p[i as usize] = rgb(
                    ((i & 7) << 5) as u8,
                    ((i & 0x38) << 2) as u8,
                    (i & 0xC0) as u8,
                );
            }
            p
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn set_dib_bits(
    env: &mut Env,
    hdc: u32,
    hbm: u32,
    start: u32,
    lines: u32,
    bits: u32,
    bmi: u32,
    usage: u32,
) -> i32 {
    if !peek_hdr(env, bmi).is_some_and(|h| h.set_ok()) {
        return 0;
    }
    let Some(info) = read_bmi(env, bmi, usage, hdc).filter(|i| !null_bitfields(i)) else {
        return 0;
    };
    let Some(src) = read_bits(env, &info, bits) else {
        return 0;
    };
    let (g, m) = parts(env);
    g.load_dib(m, hbm);
    let Some(b) = g.bitmap_mut(hbm) else { return 0 };
    let h = info.height;
    let lines = (lines as i32).min(h - start as i32).max(0);
    // DIB scan line k (bottom-up numbering unless top-down) maps to row.
    for k in start as i32..start as i32 + lines {
        let row = if info.top_down { k } else { h - 1 - k };
        let dst_row = if info.top_down {
            k
        } else {
            b.bits.height - 1 - k
        };
        for x in 0..info.width.min(b.bits.width) {
            let c = src.color_at(x, row);
            let v = b.bits.from_color(c);
            b.bits.set(x, dst_row, v);
        }
    }
    g.store_dib(m, hbm);
    lines
}

fn create_dib_bitmap(
    env: &mut Env,
    hdc: u32,
    header: u32,
    init: u32,
    bits: u32,
    bmi: u32,
    usage: u32,
) -> u32 {
    // No sanity checks but the compression (JPEG/PNG fail) and a negative
    // width: the header only gives the size (Wine's test_dib_formats).
    let Some(hdr) = peek_hdr(env, header) else {
        return 0;
    };
    if hdr.width < 0 || matches!(hdr.compression, BI_JPEG | BI_PNG) {
        return 0;
    }
    let (w, h) = (hdr.width, hdr.height.saturating_abs());
    let g = gdi(env);
    let mono = g.dc(hdc).is_some_and(|d| g.mono_ddb_dc(d));
    let hbm = if w == 0 || h == 0 {
        gdi(env).stock(crate::gdi::stock::DEFAULT_BITMAP)
    } else if mono || hdc == 0 {
        gdi(env).add(Object::Bitmap(BitmapObj::ddb(Bits::new(w, h, 1))))
    } else {
        gdi(env).add(Object::Bitmap(BitmapObj::ddb(screen_bits(w, h))))
    };
    const CBM_INIT: u32 = 4;
    if init & CBM_INIT != 0 && bits != 0 && bmi != 0 {
        set_dib_bits(env, hdc, hbm, 0, h as u32, bits, bmi, usage);
    }
    hbm
}

crate::dll! { "gdi32.dll";
    stdcall fn GetStockObject(env, i: u32) -> u32 {
        if i >= crate::gdi::stock::DEFAULT_BITMAP || i == 9 { 0 } else { gdi(env).stock(i) }
    }
    stdcall fn DeleteObject(env, h: u32) -> bool {
        let (g, m) = parts(env);
        g.delete(m, h)
    }
    stdcall fn SelectObject(env, hdc: u32, h: u32) -> u32 {
        let r = gdi(env).select(hdc, h);
        if r == 0 && gdi(env).get(h).is_some_and(|o| o.kind() == obj::REGION) { GDI_ERROR } else { r }
    }
    stdcall fn GetObjectType(env, h: u32) -> u32 {
        match gdi(env).get(h) { Some(o) => o.kind(), None => { env.last_error = 6; 0 } }
    }
    stdcall fn GetCurrentObject(env, hdc: u32, kind: u32) -> u32 {
        let Some(d) = gdi(env).dc(hdc) else { return 0 };
        match kind { obj::PEN | obj::EXTPEN => d.pen, obj::BRUSH => d.brush, obj::FONT => d.font, obj::BITMAP => d.bitmap, obj::PAL => d.palette, _ => 0 }
    }
    stdcall fn GetObjectA(env, h: u32, size: u32, out: u32) -> u32 { get_object(env, h, size, out, false) }
    stdcall fn GetObjectW(env, h: u32, size: u32, out: u32) -> u32 { get_object(env, h, size, out, true) }
    stdcall fn CreatePen(env, style: u32, width: i32, color: u32) -> u32 { logical_pen(env, style, width, color) }
    stdcall fn CreatePenIndirect(env, lp: u32) -> u32 {
        let (Some(style), Some(w), Some(c)) = (env.mem.peek_u32(lp), env.mem.peek_u32(lp + 4), env.mem.peek_u32(lp + 12)) else { return 0 };
        logical_pen(env, style, w as i32, c)
    }
    stdcall fn ExtCreatePen(env, style: u32, width: u32, lb: u32, n: u32, styles: u32) -> u32 { ext_pen(env, style, width, lb, n, styles) }
    stdcall fn CreateSolidBrush(env, color: u32) -> u32 { new_brush(env, bs::SOLID, color, 0, None) }
    stdcall fn CreateHatchBrush(env, hatch: u32, color: u32) -> u32 { new_brush(env, bs::HATCHED, color, hatch, None) }
    stdcall fn CreatePatternBrush(env, hbm: u32) -> u32 {
        let (g, m) = parts(env);
        g.load_dib(m, hbm);
        let Some(b) = g.bitmap(hbm).map(|b| (b.bits.clone(), b.mono)) else { return 0 };
        // lbHatch reports the bitmap, even once it is deleted.
        new_brush(env, bs::PATTERN, 0, hbm, Some(b))
    }
    stdcall fn CreateBrushIndirect(env, lb: u32) -> u32 {
        let (Some(style), Some(color), Some(hatch)) = (env.mem.peek_u32(lb), env.mem.peek_u32(lb + 4), env.mem.peek_u32(lb + 8)) else { return 0 };
        match style {
            bs::SOLID | bs::NULL | bs::HATCHED => new_brush(env, style, color, hatch, None),
            bs::PATTERN | bs::PATTERN8X8 => DLL.call("CreatePatternBrush", env, &[hatch]).value(),
            bs::DIBPATTERNPT => DLL.call("CreateDIBPatternBrushPt", env, &[hatch, color]).value(),
            _ => 0,
        }
    }
    stdcall fn CreateDIBPatternBrushPt(env, packed: u32, usage: u32) -> u32 {
        // DIB_RGB_COLORS or DIB_PAL_COLORS only, no RLE (Wine's brush tests).
        if usage > DIB_PAL_COLORS + 1 {
            return 0;
        }
        // DIB_PAL_COLORS: keep the indexes (an identity "palette"); the DC
        // the brush draws on resolves them (`Gdi::paint_of`).
        let identity: Vec<Colorref> = (0..256).collect();
        let hdr = crate::gdi::dib::DibInfo::parse(&bmi_bytes(env, packed).unwrap_or_default(), usage == DIB_PAL_COLORS, &identity);
        let Ok(info) = hdr else { return 0 };
        if matches!(info.compression, dib::BI_RLE8 | dib::BI_RLE4) {
            return 0;
        }
        let Some(b) = read_bits(env, &info, packed + info.header_bytes as u32) else { return 0 };
        // GetObject reports BS_DIBPATTERN with lbHatch the packed DIB.
        let h = new_brush(env, bs::DIBPATTERN, 0, packed, Some((b, false)));
        if let Some(Object::Brush(br)) = gdi(env).get_mut(h) {
            br.pal_colors = usage == DIB_PAL_COLORS;
        }
        h
    }
    stdcall fn CreateFontIndirectW(env, lf: u32) -> u32 {
        match gs::read_logfont(&env.mem, lf, true) { Some(f) => create_font(env, f), None => 0 }
    }
    stdcall fn CreateFontIndirectA(env, lf: u32) -> u32 {
        match gs::read_logfont(&env.mem, lf, false) { Some(f) => create_font(env, f), None => 0 }
    }
    stdcall fn CreateFontW(env, h: i32, w: i32, esc: i32, ori: i32, weight: i32, it: u32, ul: u32, so: u32, cs: u32, op: u32, cp: u32, q: u32, pf: u32, face: u32) -> u32 {
        let f = read_str(&env.mem, face, -1, true).unwrap_or_default();
        create_font(env, font_from_args(h, w, esc, ori, weight, it, ul, so, cs, op, cp, q, pf, f))
    }
    stdcall fn CreateFontA(env, h: i32, w: i32, esc: i32, ori: i32, weight: i32, it: u32, ul: u32, so: u32, cs: u32, op: u32, cp: u32, q: u32, pf: u32, face: u32) -> u32 {
        let f = read_str(&env.mem, face, -1, false).unwrap_or_default();
        create_font(env, font_from_args(h, w, esc, ori, weight, it, ul, so, cs, op, cp, q, pf, f))
    }
    // The halftone palette: our 8 bpp default palette (256 entries).
    stdcall fn CreateHalftonePalette(env, _hdc: u32) -> u32 { gdi(env).add(Object::Palette(default_palette(8))) }
    // Right-to-left layouts are not modelled: every DC keeps layout 0
    // (left to right), the value SetLayout reports as the previous one.
    // Bounds accumulation is not kept: SetBoundsRect reports it was reset
    // and disabled (DCB_RESET | DCB_DISABLE), GetBoundsRect an empty
    // rectangle (DCB_RESET).
    stdcall fn SetBoundsRect(env, hdc: u32, r: u32, flags: u32) -> u32 { if gdi(env).dc(hdc).is_some() { 1 | 8 } else { 0 } }
    stdcall fn GetBoundsRect(env, hdc: u32, r: u32, flags: u32) -> u32 {
        if gdi(env).dc(hdc).is_none() || r == 0 { return 0; }
        write_rect(&mut env.mem, r, Rect::new(0, 0, 0, 0));
        1
    }
    // No ICM colour space is ever selected (Wine's gdiobj test then skips its colour space checks).
    stdcall fn GetColorSpace(env, hdc: u32) -> u32 { if gdi(env).dc(hdc).is_some() { 0 } else { env.fail(6, 0) } }
    stdcall fn GetLayout(env, hdc: u32) -> u32 { if gdi(env).dc(hdc).is_some() { 0 } else { GDI_ERROR } }
    stdcall fn SetLayout(env, hdc: u32, _layout: u32) -> u32 { if gdi(env).dc(hdc).is_some() { 0 } else { GDI_ERROR } }
    stdcall fn CreateBitmapIndirect(env, bm: u32) -> u32 {
        // BITMAP: type, width, height, width bytes, planes (u16), bpp (u16), bits.
        let (Some(w), Some(h), Some(pb), Some(bits)) = (env.mem.peek_u32(bm + 4), env.mem.peek_u32(bm + 8), env.mem.peek_u32(bm + 16), env.mem.peek_u32(bm + 20)) else {
            env.last_error = 87;
            return 0;
        };
        DLL.call("CreateBitmap", env, &[w, h, pb & 0xFFFF, pb >> 16, bits]).value()
    }
    // Palettes are not realized into a hardware palette, so a brush has
    // nothing to reset: TRUE for any object (the documentation's success).
    stdcall fn UnrealizeObject(env, h: u32) -> bool { gdi(env).get(h).is_some() }
    stdcall fn CreateBitmap(env, w: i32, h: i32, planes: u32, bpp: u32, init: u32) -> u32 {
        if w < 0 || h < 0 || planes > 32 || bpp > 32 || (w as i64 * h as i64) > 64 << 20 { env.last_error = 87; return 0; }
        if w == 0 || h == 0 { return gdi(env).stock(crate::gdi::stock::DEFAULT_BITMAP); }
        let depth = match bpp * planes.max(1) { 1 => 1, 2..=4 => 4, 5..=8 => 8, 9..=16 => 16, 17..=24 => 24, _ => 32 };
        let mut b = Bits::new(w, h, depth);
        if depth <= 8 && depth > 1 { b.palette = default_palette(depth); }
        if init != 0 {
            // DDB rows are WORD-aligned in the caller's buffer.
            let wb = ((w as usize * depth as usize).div_ceil(16)) * 2;
            let mut row = vec![0u8; wb];
            for y in 0..h as usize {
                if env.mem.peek(init + (y * wb) as u32, &mut row).is_none() { break; }
                let n = wb.min(b.stride);
                b.data[y * b.stride..y * b.stride + n].copy_from_slice(&row[..n]);
            }
        }
        gdi(env).add(Object::Bitmap(BitmapObj::ddb(b)))
    }
    stdcall fn GetBitmapBits(env, hbm: u32, n: i32, out: u32) -> i32 {
        let (g, m) = parts(env);
        g.load_dib(m, hbm);
        let Some(b) = g.bitmap(hbm) else { return 0 };
        let wb = ((b.bits.width as usize * b.bits.bpp as usize).div_ceil(16)) * 2;
        let mut v = Vec::with_capacity(wb * b.bits.height as usize);
        for y in 0..b.bits.height as usize {
            v.extend_from_slice(&b.bits.data[y * b.bits.stride..y * b.bits.stride + wb]);
        }
        if out == 0 { return v.len() as i32; }
        let k = v.len().min(n.max(0) as usize);
        if env.mem.poke(out, &v[..k]).is_none() { return 0; }
        k as i32
    }
    stdcall fn SetBitmapBits(env, hbm: u32, n: u32, inp: u32) -> i32 {
        let (g, m) = parts(env);
        g.load_dib(m, hbm);
        let Some(b) = g.bitmap(hbm) else { return 0 };
        let wb = ((b.bits.width as usize * b.bits.bpp as usize).div_ceil(16)) * 2;
        let total = (wb * b.bits.height as usize).min(n as usize);
        let mut v = vec![0u8; total];
        if env.mem.peek(inp, &mut v).is_none() { return 0; }
        let (g, m) = parts(env);
        let b = g.bitmap_mut(hbm).expect("checked");
        for (y, row) in v.chunks(wb).enumerate() {
            let o = y * b.bits.stride;
            b.bits.data[o..o + row.len()].copy_from_slice(row);
        }
        g.store_dib(m, hbm);
        total as i32
    }
    stdcall fn CreateCompatibleBitmap(env, hdc: u32, w: i32, h: i32) -> u32 { create_compatible_bitmap(env, hdc, w, h) }
    stdcall fn CreateDiscardableBitmap(env, hdc: u32, w: i32, h: i32) -> u32 { create_compatible_bitmap(env, hdc, w, h) }
    stdcall fn CreateDIBSection(env, hdc: u32, bmi: u32, usage: u32, ppv: u32, section: u32, offset: u32) -> u32 {
        new_dib_section(env, hdc, bmi, usage, ppv)
    }
    stdcall fn CreateDIBitmap(env, hdc: u32, header: u32, init: u32, bits: u32, bmi: u32, usage: u32) -> u32 {
        create_dib_bitmap(env, hdc, header, init, bits, bmi, usage)
    }
    stdcall fn GetDIBits(env, hdc: u32, hbm: u32, start: u32, lines: u32, bits: u32, bmi: u32, usage: u32) -> i32 {
        get_dib_bits(env, hdc, hbm, start, lines, bits, bmi, usage)
    }
    stdcall fn SetDIBits(env, hdc: u32, hbm: u32, start: u32, lines: u32, bits: u32, bmi: u32, usage: u32) -> i32 {
        set_dib_bits(env, hdc, hbm, start, lines, bits, bmi, usage)
    }
    stdcall fn SetDIBitsToDevice(env, hdc: u32, x: i32, y: i32, w: u32, h: u32, sx: i32, sy: i32, start: u32, lines: u32, bits: u32, bmi: u32, usage: u32) -> i32 {
        if !peek_hdr(env, bmi).is_some_and(|h| h.set_ok()) { return 0; }
        let Some(info) = read_bmi(env, bmi, usage, hdc) else { return 0 };
        // The bits hold scan lines start..start+lines of the DIB.
        let mut part = info.clone();
        part.height = (lines as i32).min(info.height);
        let Some(src) = read_bits(env, &part, bits) else { return 0 };
        // Source y in DIB coordinates (bottom-up unless top-down) to rows of `src`.
        let (w, h) = (w as i32, h as i32);
        let top = if info.top_down { sy - start as i32 } else { (start as i32 + part.height) - (sy + h) };
        let (g, m) = parts(env);
        if g.draw_bits(m, hdc, (x, y, w, h), &src, (sx, top, w, h), 0xCC) { lines as i32 } else { 0 }
    }
    stdcall fn StretchDIBits(env, hdc: u32, x: i32, y: i32, w: i32, h: i32, sx: i32, sy: i32, sw: i32, sh: i32, bits: u32, bmi: u32, usage: u32, rop: u32) -> i32 {
        if !peek_hdr(env, bmi).is_some_and(|h| h.set_ok()) { return 0; }
        let Some(info) = read_bmi(env, bmi, usage, hdc) else { return 0 };
        let Some(src) = read_bits(env, &info, bits) else { return 0 };
        // (sx, sy) is the source's lower-left corner for bottom-up DIBs.
        let top = if info.top_down { sy } else { info.height - sy - sh };
        let (g, m) = parts(env);
        if g.draw_bits(m, hdc, (x, y, w, h), &src, (sx, top, sw, sh), (rop >> 16) as u8) { h.abs() } else { 0 }
    }
    stdcall fn GetDIBColorTable(env, hdc: u32, start: u32, n: u32, out: u32) -> u32 {
        let Some(b) = gdi(env).dc(hdc).map(|d| d.bitmap) else { return 0 };
        let pal = gdi(env).bitmap(b).filter(|b| b.guest.is_some() && b.bits.bpp <= 8).map(|b| b.bits.palette.clone()).unwrap_or_default();
        let mut k = 0;
        for (i, c) in pal.iter().enumerate().skip(start as usize).take(n as usize) {
            let [r, g, bb] = crate::gdi::bits::channels(*c);
            env.mem.poke(out + 4 * (i as u32 - start), &[bb, g, r, 0]);
            k += 1;
        }
        k
    }
    stdcall fn SetDIBColorTable(env, hdc: u32, start: u32, n: u32, inp: u32) -> u32 {
        let Some(h) = gdi(env).dc(hdc).map(|d| d.bitmap) else { return 0 };
        let mut cols = Vec::new();
        for i in 0..n.min(256) {
            let mut q = [0u8; 4];
            if env.mem.peek(inp + 4 * i, &mut q).is_none() { break; }
            cols.push(crate::gdi::bits::rgb(q[2], q[1], q[0]));
        }
        let Some(b) = gdi(env).bitmap_mut(h).filter(|b| b.guest.is_some() && b.bits.bpp <= 8) else { return 0 };
        let mut k = 0;
        for (i, c) in cols.into_iter().enumerate() {
            if let Some(e) = b.bits.palette.get_mut(start as usize + i) { *e = c; k += 1; }
        }
        k
    }
    stdcall fn CreateCompatibleDC(env, hdc: u32) -> u32 { gdi(env).create_dc(None) }
    stdcall fn CreateDCW(env, driver: u32, device: u32, output: u32, init: u32) -> u32 { screen_dc(env) }
    stdcall fn CreateDCA(env, driver: u32, device: u32, output: u32, init: u32) -> u32 { screen_dc(env) }
    // The dialog base units' average width of the DC's font; TEXTMETRICW and the height on request.
    stdcall fn GdiGetCharDimensions(env, hdc: u32, tm: u32, height: u32) -> i32 {
        let f = gdi(env).face(hdc);
        if tm != 0 && !text_metrics(env, hdc, tm, true) { return 0; }
        if height != 0 { env.mem.poke_u32(height, f.height() as u32); }
        f.average_width()
    }
    stdcall fn EnumFontFamiliesA(env, hdc: u32, family: u32, proc_: u32, lp: u32) -> super::Ret { enum_families(env, hdc, family, proc_, lp, false) }
    stdcall fn EnumFontFamiliesW(env, hdc: u32, family: u32, proc_: u32, lp: u32) -> super::Ret { enum_families(env, hdc, family, proc_, lp, true) }
    // An information context is a DC for queries: the screen's.
    stdcall fn CreateICA(env, driver: u32, device: u32, output: u32, init: u32) -> u32 { screen_dc(env) }
    stdcall fn CreateICW(env, driver: u32, device: u32, output: u32, init: u32) -> u32 { screen_dc(env) }
    stdcall fn DeleteDC(env, hdc: u32) -> bool { gdi(env).delete_dc(hdc) }
    stdcall fn SaveDC(env, hdc: u32) -> i32 {
        let Some(d) = gdi(env).dc_mut(hdc) else { return 0 };
        let s = d.s.clone();
        d.saved.push(s);
        d.saved.len() as i32
    }
    stdcall fn RestoreDC(env, hdc: u32, n: i32) -> bool {
        let Some(d) = gdi(env).dc(hdc).cloned() else { return false };
        let len = d.saved.len() as i32;
        let idx = if n < 0 { len + n } else { n - 1 };
        if idx < 0 || idx >= len { return false; }
        let s = d.saved[idx as usize].clone();
        // A saved bitmap is re-selected through the normal path.
        let bmp = s.bitmap;
        if d.memory && bmp != d.bitmap { gdi(env).select(hdc, bmp); }
        let dm = gdi(env).dc_mut(hdc).expect("checked");
        dm.s = s;
        dm.saved.truncate(idx as usize);
        true
    }
    stdcall fn GetDeviceCaps(env, hdc: u32, i: i32) -> i32 {
        let (w, h) = (gdi(env).screen.width, gdi(env).screen.height);
        match i {
            0 => 0x400, 2 => 1, 4 => w * 254 / 960, 6 => h * 254 / 960, 8 => w, 10 => h,
            12 => 32, 14 => 1, 16 | 18 | 24 => -1, 20 => 0, 22 => 0, 26 => 0,
            28 => 0xFF, 30 => 0xFE, 32 => 0xFF, 34 => 0x7807, 36 => 1, 38 => 0x7E99,
            40 | 42 => 36, 44 => 51, 88 | 90 => 96, 104 => 0, 106 => 20, 108 => 24,
            116 => 60, 117 => h, 118 => w, 119 => 1, 120 => 0,
            _ => 0,
        }
    }
    // Kept as given (PALETTEINDEX, DIBINDEX): drawing resolves them (`Gdi::pixel_of`).
    stdcall fn SetBkColor(env, hdc: u32, c: u32) -> u32 { dc_set(env, hdc, CLR_INVALID, |s| &mut s.bk_color, c) }
    stdcall fn GetBkColor(env, hdc: u32) -> u32 { dc_get(env, hdc, CLR_INVALID, |s| s.bk_color) }
    stdcall fn SetTextColor(env, hdc: u32, c: u32) -> u32 { dc_set(env, hdc, CLR_INVALID, |s| &mut s.text_color, c) }
    stdcall fn GetTextColor(env, hdc: u32) -> u32 { dc_get(env, hdc, CLR_INVALID, |s| s.text_color) }
    stdcall fn SetBkMode(env, hdc: u32, m: u32) -> u32 {
        if !(1..=2).contains(&m) { return 0; }
        dc_set(env, hdc, 0, |s| &mut s.bk_mode, m)
    }
    stdcall fn GetBkMode(env, hdc: u32) -> u32 { dc_get(env, hdc, 0, |s| s.bk_mode) }
    stdcall fn SetROP2(env, hdc: u32, r: u32) -> u32 {
        if !(1..=16).contains(&r) { return 0; }
        dc_set(env, hdc, 0, |s| &mut s.rop2, r)
    }
    stdcall fn GetROP2(env, hdc: u32) -> u32 { dc_get(env, hdc, 0, |s| s.rop2) }
    stdcall fn SetPolyFillMode(env, hdc: u32, m: u32) -> u32 {
        if !(1..=2).contains(&m) { return 0; }
        dc_set(env, hdc, 0, |s| &mut s.poly_fill, m)
    }
    stdcall fn GetPolyFillMode(env, hdc: u32) -> u32 { dc_get(env, hdc, 0, |s| s.poly_fill) }
    stdcall fn SetStretchBltMode(env, hdc: u32, m: u32) -> u32 {
        if !(1..=4).contains(&m) { return 0; }
        dc_set(env, hdc, 0, |s| &mut s.stretch_mode, m)
    }
    stdcall fn GetStretchBltMode(env, hdc: u32) -> u32 { dc_get(env, hdc, 0, |s| s.stretch_mode) }
    stdcall fn SetTextAlign(env, hdc: u32, a: u32) -> u32 { dc_set(env, hdc, GDI_ERROR, |s| &mut s.text_align, a) }
    stdcall fn GetTextAlign(env, hdc: u32) -> u32 { dc_get(env, hdc, GDI_ERROR, |s| s.text_align) }
    stdcall fn SetMapMode(env, hdc: u32, m: u32) -> u32 {
        if !(1..=8).contains(&m) { return 0; }
        let old = dc_set(env, hdc, 0, |s| &mut s.map_mode, m);
        if let Some(d) = gdi(env).dc_mut(hdc) {
            // Fixed modes: 1 logical unit = 0.1 mm (LOMETRIC) ... at 96 dpi, y up.
            let (we, ve) = match m {
                2 => ((254, 254), (96, -96)),   // MM_LOMETRIC: 0.1 mm
                3 => ((2540, 2540), (96, -96)), // MM_HIMETRIC: 0.01 mm
                4 => ((100, 100), (96, -96)),   // MM_LOENGLISH: 0.01 in
                5 => ((1000, 1000), (96, -96)), // MM_HIENGLISH: 0.001 in
                6 => ((1440, 1440), (96, -96)), // MM_TWIPS
                _ => ((1, 1), (1, 1)),
            };
            if m != 7 && m != 8 { d.s.window_ext = we; d.s.viewport_ext = ve; }
        }
        old
    }
    stdcall fn GetMapMode(env, hdc: u32) -> u32 { dc_get(env, hdc, 0, |s| s.map_mode) }
    stdcall fn SetWindowOrgEx(env, hdc: u32, x: i32, y: i32, out: u32) -> bool { dc_pair(env, hdc, |s| &mut s.window_org, Some((x, y)), out) }
    stdcall fn SetViewportOrgEx(env, hdc: u32, x: i32, y: i32, out: u32) -> bool { dc_pair(env, hdc, |s| &mut s.viewport_org, Some((x, y)), out) }
    stdcall fn GetWindowOrgEx(env, hdc: u32, out: u32) -> bool { dc_pair(env, hdc, |s| &mut s.window_org, None, out) }
    stdcall fn GetViewportOrgEx(env, hdc: u32, out: u32) -> bool { dc_pair(env, hdc, |s| &mut s.viewport_org, None, out) }
    stdcall fn SetWindowExtEx(env, hdc: u32, x: i32, y: i32, out: u32) -> bool {
        let fixed = dc_get(env, hdc, 1, |s| s.map_mode) < 7;
        dc_pair(env, hdc, |s| &mut s.window_ext, (!fixed && x != 0 && y != 0).then_some((x, y)), out)
    }
    stdcall fn SetViewportExtEx(env, hdc: u32, x: i32, y: i32, out: u32) -> bool {
        let fixed = dc_get(env, hdc, 1, |s| s.map_mode) < 7;
        dc_pair(env, hdc, |s| &mut s.viewport_ext, (!fixed && x != 0 && y != 0).then_some((x, y)), out)
    }
    stdcall fn GetWindowExtEx(env, hdc: u32, out: u32) -> bool { dc_pair(env, hdc, |s| &mut s.window_ext, None, out) }
    stdcall fn GetViewportExtEx(env, hdc: u32, out: u32) -> bool { dc_pair(env, hdc, |s| &mut s.viewport_ext, None, out) }
    stdcall fn OffsetViewportOrgEx(env, hdc: u32, dx: i32, dy: i32, out: u32) -> bool {
        let Some(o) = gdi(env).dc(hdc).map(|d| d.viewport_org) else { return false };
        dc_pair(env, hdc, |s| &mut s.viewport_org, Some((o.0 + dx, o.1 + dy)), out)
    }
    stdcall fn OffsetWindowOrgEx(env, hdc: u32, dx: i32, dy: i32, out: u32) -> bool {
        let Some(o) = gdi(env).dc(hdc).map(|d| d.window_org) else { return false };
        dc_pair(env, hdc, |s| &mut s.window_org, Some((o.0 + dx, o.1 + dy)), out)
    }
    stdcall fn SetBrushOrgEx(env, hdc: u32, x: i32, y: i32, out: u32) -> bool { dc_pair(env, hdc, |s| &mut s.brush_org, Some((x, y)), out) }
    stdcall fn GetBrushOrgEx(env, hdc: u32, out: u32) -> bool { dc_pair(env, hdc, |s| &mut s.brush_org, None, out) }
    stdcall fn MoveToEx(env, hdc: u32, x: i32, y: i32, out: u32) -> bool { dc_pair(env, hdc, |s| &mut s.pos, Some((x, y)), out) }
    stdcall fn GetCurrentPositionEx(env, hdc: u32, out: u32) -> bool { dc_pair(env, hdc, |s| &mut s.pos, None, out) }
    stdcall fn SetTextCharacterExtra(env, hdc: u32, n: i32) -> i32 { dc_set(env, hdc, i32::MIN, |s| &mut s.char_extra, n) }
    stdcall fn GetTextCharacterExtra(env, hdc: u32) -> i32 { dc_get(env, hdc, i32::MIN, |s| s.char_extra) }
    stdcall fn SetDCBrushColor(env, hdc: u32, c: u32) -> u32 { dc_set(env, hdc, CLR_INVALID, |s| &mut s.dc_brush, c & 0xFF_FFFF) }
    stdcall fn SetDCPenColor(env, hdc: u32, c: u32) -> u32 { dc_set(env, hdc, CLR_INVALID, |s| &mut s.dc_pen, c & 0xFF_FFFF) }
    stdcall fn GetDCBrushColor(env, hdc: u32) -> u32 { dc_get(env, hdc, CLR_INVALID, |s| s.dc_brush) }
    stdcall fn GetDCPenColor(env, hdc: u32) -> u32 { dc_get(env, hdc, CLR_INVALID, |s| s.dc_pen) }
    stdcall fn LPtoDP(env, hdc: u32, pts: u32, n: i32) -> bool {
        let Some(d) = gdi(env).dc(hdc).cloned() else { return false };
        let Some(p) = gs::read_points(&env.mem, pts, n.max(0) as u32) else { return false };
        for (i, (x, y)) in p.into_iter().enumerate() { write_pair(&mut env.mem, pts + 8 * i as u32, d.to_device(x, y)); }
        true
    }
    stdcall fn DPtoLP(env, hdc: u32, pts: u32, n: i32) -> bool {
        let Some(d) = gdi(env).dc(hdc).cloned() else { return false };
        let Some(p) = gs::read_points(&env.mem, pts, n.max(0) as u32) else { return false };
        for (i, (x, y)) in p.into_iter().enumerate() { write_pair(&mut env.mem, pts + 8 * i as u32, d.to_logical(x, y)); }
        true
    }
    stdcall fn LineTo(env, hdc: u32, x: i32, y: i32) -> bool {
        let Some(from) = gdi(env).dc(hdc).map(|d| d.pos) else { return false };
        let (g, m) = parts(env);
        g.draw(m, hdc, |t| t.polyline(&[from, (x, y)]));
        if let Some(d) = gdi(env).dc_mut(hdc) { d.s.pos = (x, y); }
        true
    }
    stdcall fn Polyline(env, hdc: u32, pts: u32, n: i32) -> bool {
        if n < 2 { return false; }
        let Some(p) = gs::read_points(&env.mem, pts, n as u32) else { return false };
        let (g, m) = parts(env);
        g.draw(m, hdc, |t| t.polyline(&p)).is_some()
    }
    stdcall fn PolylineTo(env, hdc: u32, pts: u32, n: u32) -> bool {
        let Some(from) = gdi(env).dc(hdc).map(|d| d.pos) else { return false };
        let Some(mut p) = gs::read_points(&env.mem, pts, n) else { return false };
        p.insert(0, from);
        let last = *p.last().expect("non-empty");
        let (g, m) = parts(env);
        g.draw(m, hdc, |t| t.polyline(&p));
        if let Some(d) = gdi(env).dc_mut(hdc) { d.s.pos = last; }
        true
    }
    stdcall fn Polygon(env, hdc: u32, pts: u32, n: i32) -> bool {
        if n < 2 { return false; }
        let Some(p) = gs::read_points(&env.mem, pts, n as u32) else { return false };
        let (g, m) = parts(env);
        g.draw(m, hdc, |t| t.polygon(&p)).is_some()
    }
    stdcall fn PolyPolygon(env, hdc: u32, pts: u32, counts: u32, n: i32) -> bool {
        let mut at = pts;
        for i in 0..n.max(0) as u32 {
            let Some(k) = env.mem.peek_u32(counts + 4 * i) else { return false };
            let Some(p) = gs::read_points(&env.mem, at, k) else { return false };
            at += 8 * k;
            let (g, m) = parts(env);
            g.draw(m, hdc, |t| t.polygon(&p));
        }
        true
    }
    stdcall fn Rectangle(env, hdc: u32, l: i32, t: i32, r: i32, b: i32) -> bool { draw_shape(env, hdc, Shape::Rectangle, Rect::new(l, t, r, b)) }
    stdcall fn Ellipse(env, hdc: u32, l: i32, t: i32, r: i32, b: i32) -> bool { draw_shape(env, hdc, Shape::Ellipse, Rect::new(l, t, r, b)) }
    stdcall fn RoundRect(env, hdc: u32, l: i32, t: i32, r: i32, b: i32, w: i32, h: i32) -> bool { draw_shape(env, hdc, Shape::RoundRect(w, h), Rect::new(l, t, r, b)) }
    stdcall fn PatBlt(env, hdc: u32, x: i32, y: i32, w: i32, h: i32, rop: u32) -> bool { blt(env, hdc, (x, y, w, h), None, rop) }
    stdcall fn BitBlt(env, hdc: u32, x: i32, y: i32, w: i32, h: i32, src: u32, sx: i32, sy: i32, rop: u32) -> bool {
        blt(env, hdc, (x, y, w, h), Some((src, sx, sy, w, h)), rop)
    }
    stdcall fn StretchBlt(env, hdc: u32, x: i32, y: i32, w: i32, h: i32, src: u32, sx: i32, sy: i32, sw: i32, sh: i32, rop: u32) -> bool {
        blt(env, hdc, (x, y, w, h), Some((src, sx, sy, sw, sh)), rop)
    }
    stdcall fn SetPixel(env, hdc: u32, x: i32, y: i32, c: u32) -> u32 {
        let (g, m) = parts(env);
        let Some(mut t) = g.begin(m, hdc) else { return CLR_INVALID };
        let (tx, ty) = t.pt(x, y);
        let r = if !t.clip.contains(tx, ty) || !t.bits.contains(tx, ty) {
            CLR_INVALID
        } else {
            // The colour the pixel got: the nearest the target shows.
            let v = g.pixel_of(&t.dc, &t.bits, c, false);
            t.bits.set(tx, ty, v);
            t.bits.to_color(v)
        };
        g.end(m, t);
        r
    }
    stdcall fn SetPixelV(env, hdc: u32, x: i32, y: i32, c: u32) -> bool {
        DLL.call("SetPixel", env, &[hdc, x as u32, y as u32, c]).value() != CLR_INVALID
    }
    stdcall fn GetPixel(env, hdc: u32, x: i32, y: i32) -> u32 {
        let (g, m) = parts(env);
        g.draw(m, hdc, |t| {
            let (tx, ty) = t.pt(x, y);
            if !t.clip.contains(tx, ty) || !t.bits.contains(tx, ty) { return CLR_INVALID; }
            t.bits.color_at(tx, ty)
        }).unwrap_or(CLR_INVALID)
    }
    stdcall fn GdiFlush(env) -> bool { true }
    stdcall fn GdiSetBatchLimit(env, n: u32) -> u32 { 1 }
    stdcall fn CreateRectRgn(env, l: i32, t: i32, r: i32, b: i32) -> u32 { new_region(env, Region::rect(Rect::new(l, t, r, b))) }
    stdcall fn CreateRectRgnIndirect(env, r: u32) -> u32 {
        match read_rect(&env.mem, r) { Some(r) => new_region(env, Region::rect(r)), None => 0 }
    }
    stdcall fn CreateEllipticRgn(env, l: i32, t: i32, r: i32, b: i32) -> u32 { new_region(env, Region::ellipse(Rect::new(l, t, r, b))) }
    stdcall fn CreateEllipticRgnIndirect(env, r: u32) -> u32 {
        match read_rect(&env.mem, r) { Some(r) => new_region(env, Region::ellipse(r)), None => 0 }
    }
    stdcall fn CreateRoundRectRgn(env, l: i32, t: i32, r: i32, b: i32, w: i32, h: i32) -> u32 {
        new_region(env, crate::gdi::raster::shape_region(Shape::RoundRect(w, h), Rect::new(l, t, r, b)))
    }
    stdcall fn CreatePolygonRgn(env, pts: u32, n: i32, mode: u32) -> u32 {
        let Some(p) = gs::read_points(&env.mem, pts, n.max(0) as u32) else { return 0 };
        new_region(env, Region::polygon(&p, mode == 2))
    }
    stdcall fn SetRectRgn(env, h: u32, l: i32, t: i32, r: i32, b: i32) -> bool { set_region(env, h, Region::rect(Rect::new(l, t, r, b))) != 0 }
    stdcall fn CombineRgn(env, dst: u32, a: u32, b: u32, mode: u32) -> u32 {
        let Some(ra) = region(env, a) else { return 0 };
        let r = match mode {
            5 => ra, // RGN_COPY
            1..=4 => {
                let Some(rb) = region(env, b) else { return 0 };
                let op = [Op::And, Op::Or, Op::Xor, Op::Diff][mode as usize - 1];
                ra.combine(&rb, op)
            }
            _ => return 0,
        };
        set_region(env, dst, r)
    }
    stdcall fn OffsetRgn(env, h: u32, dx: i32, dy: i32) -> u32 {
        let Some(mut r) = region(env, h) else { return 0 };
        r.offset(dx, dy);
        set_region(env, h, r)
    }
    // RGNDATA: a 32-byte header (size, RDH_RECTANGLES, count, bytes of
    // rectangles, bounds) then the rectangles; NULL asks for the size.
    stdcall fn GetRegionData(env, h: u32, count: u32, out: u32) -> u32 {
        let Some(r) = region(env, h) else { return 0 };
        let need = 32 + 16 * r.rects.len() as u32;
        if out == 0 { return need; }
        if count < need { return 0; }
        let mut v = Vec::with_capacity(need as usize);
        let b = r.bounds();
        for x in [32, 1, r.rects.len() as u32, 16 * r.rects.len() as u32] { v.extend(x.to_le_bytes()); }
        for x in std::iter::once(b).chain(r.rects.iter().copied()) {
            for c in [x.left, x.top, x.right, x.bottom] { v.extend(c.to_le_bytes()); }
        }
        if env.mem.poke(out, &v).is_none() { return 0; }
        need
    }
    stdcall fn GetRgnBox(env, h: u32, out: u32) -> u32 {
        let Some(r) = region(env, h) else { return 0 };
        write_rect(&mut env.mem, out, r.bounds());
        complexity(&r)
    }
    stdcall fn PtInRegion(env, h: u32, x: i32, y: i32) -> bool { region(env, h).is_some_and(|r| r.contains(x, y)) }
    stdcall fn RectInRegion(env, h: u32, rc: u32) -> bool {
        let (Some(r), Some(rc)) = (region(env, h), read_rect(&env.mem, rc)) else { return false };
        !r.intersect_rect(rc.normalized()).is_empty()
    }
    stdcall fn EqualRgn(env, a: u32, b: u32) -> bool {
        match (region(env, a), region(env, b)) { (Some(a), Some(b)) => a == b, _ => false }
    }
    stdcall fn FillRgn(env, hdc: u32, h: u32, brush: u32) -> bool {
        let Some(r) = region(env, h) else { return false };
        let (g, m) = parts(env);
        g.draw_with_brush(m, hdc, brush, |t, p| t.fill_region(&r, p)).is_some()
    }
    stdcall fn PaintRgn(env, hdc: u32, h: u32) -> bool {
        let Some(r) = region(env, h) else { return false };
        let (g, m) = parts(env);
        g.draw(m, hdc, |t| { let p = t.brush.clone(); t.fill_region(&r, &p); }).is_some()
    }
    stdcall fn InvertRgn(env, hdc: u32, h: u32) -> bool {
        let Some(r) = region(env, h) else { return false };
        let (g, m) = parts(env);
        g.draw(m, hdc, |t| { let old = t.dc.rop2; t.dc.rop2 = 6; t.fill_region(&r, &Paint::Solid(0)); t.dc.rop2 = old; }).is_some()
    }
    stdcall fn FrameRgn(env, hdc: u32, h: u32, brush: u32, w: i32, hh: i32) -> bool {
        let Some(r) = region(env, h) else { return false };
        let edge = crate::gdi::raster::border(&r, w.max(hh).max(1));
        let (g, m) = parts(env);
        g.draw_with_brush(m, hdc, brush, |t, p| t.fill_region(&edge, p)).is_some()
    }
    stdcall fn SelectClipRgn(env, hdc: u32, h: u32) -> u32 {
        let r = if h == 0 { None } else { match region(env, h) { Some(r) => Some(r), None => return 0 } };
        let Some(d) = gdi(env).dc_mut(hdc) else { return 0 };
        let cx = r.as_ref().map_or(2, complexity);
        d.s.clip = r;
        cx
    }
    stdcall fn ExtSelectClipRgn(env, hdc: u32, h: u32, mode: u32) -> u32 {
        if mode == 5 || h == 0 { return DLL.call("SelectClipRgn", env, &[hdc, h]).value(); }
        let Some(r) = region(env, h) else { return 0 };
        let op = match mode { 1 => Op::And, 2 => Op::Or, 3 => Op::Xor, 4 => Op::Diff, _ => return 0 };
        clip_op(env, hdc, r, op)
    }
    stdcall fn IntersectClipRect(env, hdc: u32, l: i32, t: i32, r: i32, b: i32) -> u32 {
        let Some(rg) = device_rect(env, hdc, Rect::new(l, t, r, b)) else { return 0 };
        clip_op(env, hdc, rg, Op::And)
    }
    stdcall fn ExcludeClipRect(env, hdc: u32, l: i32, t: i32, r: i32, b: i32) -> u32 {
        let Some(rg) = device_rect(env, hdc, Rect::new(l, t, r, b)) else { return 0 };
        clip_op(env, hdc, rg, Op::Diff)
    }
    stdcall fn OffsetClipRgn(env, hdc: u32, dx: i32, dy: i32) -> u32 {
        let Some(d) = gdi(env).dc_mut(hdc) else { return 0 };
        match &mut d.s.clip { Some(c) => { c.offset(dx, dy); complexity(c) } None => 2 }
    }
    stdcall fn GetClipBox(env, hdc: u32, out: u32) -> u32 {
        let Some(d) = gdi(env).dc(hdc).cloned() else { return 0 };
        let mut c = if d.memory {
            let b = gdi(env).bitmap(d.bitmap).map(|b| (b.bits.width, b.bits.height)).unwrap_or((1, 1));
            let full = Region::rect(Rect::new(0, 0, b.0, b.1));
            match &d.clip { Some(c) => c.combine(&full, Op::And), None => full }
        } else {
            let mut t = d.total_clip();
            t.offset(-d.origin.0, -d.origin.1);
            t
        };
        let b = c.bounds();
        let (l, t) = d.to_logical(b.left, b.top);
        let (r, bb) = d.to_logical(b.right, b.bottom);
        write_rect(&mut env.mem, out, Rect::new(l, t, r, bb).normalized());
        c.rects.truncate(2);
        complexity(&c)
    }
    stdcall fn GetClipRgn(env, hdc: u32, h: u32) -> i32 {
        let Some(c) = gdi(env).dc(hdc).map(|d| d.clip.clone()) else { return -1 };
        match c { None => 0, Some(c) => { set_region(env, h, c); 1 } }
    }
    stdcall fn TextOutW(env, hdc: u32, x: i32, y: i32, s: u32, n: i32) -> bool {
        let Some(t) = read_str(&env.mem, s, n.max(0), true) else { return n == 0 };
        ext_text_out(env, hdc, x, y, 0, 0, &t, 0)
    }
    stdcall fn TextOutA(env, hdc: u32, x: i32, y: i32, s: u32, n: i32) -> bool {
        let Some(t) = read_str(&env.mem, s, n.max(0), false) else { return n == 0 };
        ext_text_out(env, hdc, x, y, 0, 0, &t, 0)
    }
    stdcall fn ExtTextOutW(env, hdc: u32, x: i32, y: i32, opts: u32, rect: u32, s: u32, n: u32, dx: u32) -> bool {
        let t = read_str(&env.mem, s, n as i32, true).unwrap_or_default();
        ext_text_out(env, hdc, x, y, opts, rect, &t, dx)
    }
    stdcall fn ExtTextOutA(env, hdc: u32, x: i32, y: i32, opts: u32, rect: u32, s: u32, n: u32, dx: u32) -> bool {
        let t = read_str(&env.mem, s, n as i32, false).unwrap_or_default();
        ext_text_out(env, hdc, x, y, opts, rect, &t, dx)
    }
    stdcall fn GetTextExtentPoint32W(env, hdc: u32, s: u32, n: i32, size: u32) -> bool { text_extent(env, hdc, n.max(0) as usize, size) }
    stdcall fn GetTextExtentPoint32A(env, hdc: u32, s: u32, n: i32, size: u32) -> bool { text_extent(env, hdc, n.max(0) as usize, size) }
    stdcall fn GetTextExtentPointW(env, hdc: u32, s: u32, n: i32, size: u32) -> bool { text_extent(env, hdc, n.max(0) as usize, size) }
    stdcall fn GetTextExtentPointA(env, hdc: u32, s: u32, n: i32, size: u32) -> bool { text_extent(env, hdc, n.max(0) as usize, size) }
    stdcall fn GetTextExtentExPointW(env, hdc: u32, s: u32, n: i32, max: i32, fit: u32, dx: u32, size: u32) -> bool {
        let f = gdi(env).face(hdc);
        let n = n.max(0);
        let cw = f.char_width();
        if fit != 0 { env.mem.poke_u32(fit, if max < 0 { n as u32 } else { (max / cw).min(n) as u32 }); }
        if dx != 0 { for i in 0..n as u32 { env.mem.poke_u32(dx + 4 * i, cw as u32 * (i + 1)); } }
        text_extent(env, hdc, n as usize, size)
    }
    stdcall fn GetTextExtentExPointA(env, hdc: u32, s: u32, n: i32, max: i32, fit: u32, dx: u32, size: u32) -> bool {
        DLL.call("GetTextExtentExPointW", env, &[hdc, s, n as u32, max as u32, fit, dx, size]).value() != 0
    }
    stdcall fn GetTextMetricsW(env, hdc: u32, out: u32) -> bool { text_metrics(env, hdc, out, true) }
    stdcall fn GetTextMetricsA(env, hdc: u32, out: u32) -> bool { text_metrics(env, hdc, out, false) }
    stdcall fn GetTextFaceW(env, hdc: u32, n: u32, out: u32) -> u32 { text_face(env, hdc, n, out, true) }
    stdcall fn GetTextFaceA(env, hdc: u32, n: u32, out: u32) -> u32 { text_face(env, hdc, n, out, false) }
    stdcall fn GetCharWidth32W(env, hdc: u32, first: u32, last: u32, out: u32) -> bool { char_widths(env, hdc, first, last, out) }
    stdcall fn GetCharWidth32A(env, hdc: u32, first: u32, last: u32, out: u32) -> bool { char_widths(env, hdc, first, last, out) }
    stdcall fn GetCharWidthW(env, hdc: u32, first: u32, last: u32, out: u32) -> bool { char_widths(env, hdc, first, last, out) }
    stdcall fn GetCharWidthA(env, hdc: u32, first: u32, last: u32, out: u32) -> bool { char_widths(env, hdc, first, last, out) }
    stdcall fn CreatePalette(env, lp: u32) -> u32 {
        let Some(n) = env.mem.peek_u32(lp).map(|v| (v >> 16) as u16) else { return 0 };
        let mut p = Vec::new();
        for i in 0..n as u32 {
            let mut e = [0u8; 4];
            if env.mem.peek(lp + 4 + 4 * i, &mut e).is_none() { return 0; }
            p.push(crate::gdi::bits::rgb(e[0], e[1], e[2]));
        }
        gdi(env).add(Object::Palette(p))
    }
    stdcall fn SelectPalette(env, hdc: u32, h: u32, bg: bool) -> u32 {
        if !matches!(gdi(env).get(h), Some(Object::Palette(_))) { return 0; }
        gdi(env).select(hdc, h)
    }
    stdcall fn RealizePalette(env, hdc: u32) -> u32 { 0 }
    stdcall fn GetPaletteEntries(env, h: u32, start: u32, n: u32, out: u32) -> u32 {
        let Some(Object::Palette(p)) = gdi(env).get(h).cloned() else { return 0 };
        if out == 0 { return p.len() as u32; }
        let mut k = 0;
        for (i, c) in p.iter().enumerate().skip(start as usize).take(n as usize) {
            let [r, g, b] = crate::gdi::bits::channels(*c);
            env.mem.poke(out + 4 * (i as u32 - start), &[r, g, b, 0]);
            k += 1;
        }
        k
    }
    stdcall fn GetSystemPaletteEntries(env, hdc: u32, start: u32, n: u32, out: u32) -> u32 { 0 }
    stdcall fn GetNearestColor(env, hdc: u32, c: u32) -> u32 {
        // What the DC's target shows for `c` (black or white on a monochrome bitmap).
        let (g, m) = parts(env);
        let Some(t) = g.begin(m, hdc) else { return CLR_INVALID };
        let r = g.nearest_color(&t.dc, &t.bits, c);
        g.end(m, t);
        r
    }
    stdcall fn GetNearestPaletteIndex(env, h: u32, c: u32) -> u32 {
        match gdi(env).get(h) { Some(Object::Palette(p)) => crate::gdi::bits::nearest(p, c), _ => CLR_INVALID }
    }
}

fn screen_dc(env: &mut Env) -> u32 {
    let (w, h) = (gdi(env).screen.width, gdi(env).screen.height);
    gdi(env).create_dc(Some((0, (0, 0), Region::rect(Rect::new(0, 0, w, h)))))
}

/// EnumFontFamilies: every face name is drawn with our one bitmap font (a
/// LOGFONT's name is kept and GetTextFace answers it), so a named family
/// is found, as one raster font of that name; without a name the one
/// family is the DC's current face ("System" for the default font). The
/// callback gets an ENUMLOGFONT and a NEWTEXTMETRIC (A or W) and
/// RASTER_FONTTYPE; its answer is the call's.
fn enum_families(
    env: &mut Env,
    hdc: u32,
    family: u32,
    proc_: u32,
    lp: u32,
    wide: bool,
) -> super::Ret {
    let name = if family != 0 {
        read_str(&env.mem, family, -1, wide).unwrap_or_default()
    } else {
        let g = gdi(env);
        let f = g.dc(hdc).and_then(|d| match g.get(d.font) {
            Some(Object::Font(lf)) => Some(lf.face.clone()),
            _ => None,
        });
        f.filter(|f| !f.is_empty())
            .unwrap_or_else(|| gs::units("System"))
    };
    let lf = LogFont {
        height: 13,
        weight: 400,
        face: name,
        ..Default::default()
    };
    let mut elf = gs::logfont_bytes(&lf, wide);
    // elfFullName (64 chars) and elfStyle (32 chars), empty.
    elf.resize(elf.len() + if wide { 192 } else { 96 }, 0);
    let mut tm = gs::textmetric_bytes(&lf.face(), &lf, wide);
    tm.resize(tm.len() + 16, 0);
    let size = (elf.len() + tm.len()) as u32;
    let at = super::user32::scratch(env, size);
    env.mem.poke(at, &elf);
    env.mem.poke(at + elf.len() as u32, &tm);
    let tm_at = at + elf.len() as u32;
    super::Ret::call(proc_, vec![at, tm_at, 1, lp], move |env, r| {
        super::user32::scratch_release(env, size);
        super::Ret::Value(r)
    })
}

fn text_face(env: &mut Env, hdc: u32, n: u32, out: u32, wide: bool) -> u32 {
    let g = gdi(env);
    let Some(d) = g.dc(hdc) else { return 0 };
    let face = match g.get(d.font) {
        Some(Object::Font(lf)) => lf.face.clone(),
        _ => Vec::new(),
    };
    if out == 0 {
        return face.len() as u32 + 1;
    }
    gs::write_str(&mut env.mem, out, n, &face, wide)
}

fn char_widths(env: &mut Env, hdc: u32, first: u32, last: u32, out: u32) -> bool {
    if last < first || gdi(env).dc(hdc).is_none() {
        return false;
    }
    let w = gdi(env).face(hdc).char_width() as u32;
    for i in 0..=(last - first).min(0xFFFF) {
        if env.mem.poke_u32(out + 4 * i, w).is_none() {
            return false;
        }
    }
    true
}
