//! Device contexts: the drawing state (selected objects, colours, modes,
//! current position, mapping, clip region, saved states) and the drawing
//! calls in logical coordinates, mapped to device space and run by
//! [`super::raster`] on the DC's target (the screen for a window DC, the
//! selected bitmap for a memory DC).
//!
//! Owns: logical-to-device mapping, the clip a drawing call goes through
//! (visible region AND the application's clip region), realizing the
//! selected pen and brush for the target's pixel format, and the DIB
//! section load/store around each call. It must not read guest structures
//! or know windows beyond the origin and visible region it was given.

use super::bits::{Bits, Colorref};
use super::raster::{Blit, Canvas, Paint, Pen, Shape, SrcConv};
use super::region::{Rect, Region};
use super::{bs, ps, stock, Gdi, Object};
use crate::memory::Memory;

/// Background modes.
pub const TRANSPARENT: u32 = 1;
pub const OPAQUE: u32 = 2;

/// The state SaveDC keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct State {
    pub pen: u32,
    pub brush: u32,
    pub font: u32,
    pub bitmap: u32,
    pub palette: u32,
    pub text_color: Colorref,
    pub bk_color: Colorref,
    pub bk_mode: u32,
    pub rop2: u32,
    pub pos: (i32, i32),
    pub poly_fill: u32,
    pub stretch_mode: u32,
    pub text_align: u32,
    pub map_mode: u32,
    pub window_org: (i32, i32),
    pub window_ext: (i32, i32),
    pub viewport_org: (i32, i32),
    pub viewport_ext: (i32, i32),
    pub brush_org: (i32, i32),
    pub char_extra: i32,
    /// The application's clip region, device coordinates.
    pub clip: Option<Region>,
    pub dc_brush: Colorref,
    pub dc_pen: Colorref,
}

/// A device context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dc {
    pub memory: bool,
    pub hwnd: u32,
    /// Where device (0, 0) is on the target.
    pub origin: (i32, i32),
    /// What the target shows of this DC, in target coordinates.
    pub vis: Region,
    pub s: State,
    pub saved: Vec<State>,
}

impl std::ops::Deref for Dc {
    type Target = State;
    fn deref(&self) -> &State {
        &self.s
    }
}
impl std::ops::DerefMut for Dc {
    fn deref_mut(&mut self) -> &mut State {
        &mut self.s
    }
}

impl Dc {
    pub fn new(g: &Gdi) -> Dc {
        Dc {
            memory: false,
            hwnd: 0,
            origin: (0, 0),
            vis: Region::empty(),
            s: State {
                pen: g.stock(stock::BLACK_PEN),
                brush: g.stock(stock::WHITE_BRUSH),
                font: g.stock(stock::SYSTEM_FONT),
                bitmap: 0,
                palette: g.stock(stock::DEFAULT_PALETTE),
                text_color: 0,
                bk_color: super::bits::rgb(255, 255, 255),
                bk_mode: OPAQUE,
                rop2: 13,
                pos: (0, 0),
                poly_fill: 1,
                stretch_mode: 1,
                text_align: 0,
                map_mode: 1,
                window_org: (0, 0),
                window_ext: (1, 1),
                viewport_org: (0, 0),
                viewport_ext: (1, 1),
                brush_org: (0, 0),
                char_extra: 0,
                clip: None,
                dc_brush: super::bits::rgb(255, 255, 255),
                dc_pen: 0,
            },
            saved: Vec::new(),
        }
    }

    /// Logical to device coordinates.
    pub fn to_device(&self, x: i32, y: i32) -> (i32, i32) {
        let s = &self.s;
        if s.map_mode == 1 {
            return (
                x - s.window_org.0 + s.viewport_org.0,
                y - s.window_org.1 + s.viewport_org.1,
            );
        }
        let sc = |v: i32, wo: i32, we: i32, vo: i32, ve: i32| -> i32 {
            if we == 0 {
                return vo;
            }
            ((v - wo) as i64 * ve as i64 / we as i64) as i32 + vo
        };
        (
            sc(
                x,
                s.window_org.0,
                s.window_ext.0,
                s.viewport_org.0,
                s.viewport_ext.0,
            ),
            sc(
                y,
                s.window_org.1,
                s.window_ext.1,
                s.viewport_org.1,
                s.viewport_ext.1,
            ),
        )
    }

    /// Device to logical coordinates.
    pub fn to_logical(&self, x: i32, y: i32) -> (i32, i32) {
        let s = &self.s;
        let sc = |v: i32, wo: i32, we: i32, vo: i32, ve: i32| -> i32 {
            if ve == 0 {
                return wo;
            }
            ((v - vo) as i64 * we as i64 / ve as i64) as i32 + wo
        };
        if s.map_mode == 1 {
            return (
                x - s.viewport_org.0 + s.window_org.0,
                y - s.viewport_org.1 + s.window_org.1,
            );
        }
        (
            sc(
                x,
                s.window_org.0,
                s.window_ext.0,
                s.viewport_org.0,
                s.viewport_ext.0,
            ),
            sc(
                y,
                s.window_org.1,
                s.window_ext.1,
                s.viewport_org.1,
                s.viewport_ext.1,
            ),
        )
    }

    /// A logical size (width) in device pixels.
    pub fn scale_x(&self, w: i32) -> i32 {
        (self.to_device(w, 0).0 - self.to_device(0, 0).0).abs()
    }

    /// A logical rectangle in target coordinates.
    pub fn rect_to_target(&self, r: Rect) -> Rect {
        let (l, t) = self.to_device(r.left, r.top);
        let (rr, b) = self.to_device(r.right, r.bottom);
        Rect::new(l, t, rr, b)
            .normalized()
            .offset(self.origin.0, self.origin.1)
    }

    /// The clip every drawing call goes through, target coordinates.
    pub fn total_clip(&self) -> Region {
        match &self.s.clip {
            None => self.vis.clone(),
            Some(c) => {
                let mut c = c.clone();
                c.offset(self.origin.0, self.origin.1);
                c.combine(&self.vis, super::region::Op::And)
            }
        }
    }
}

/// Dash patterns of the cosmetic pen styles (on, off, ... in pixels), as
/// Windows NT draws them (docs/mainemu-gui.md).
pub fn dashes(style: u32) -> &'static [u32] {
    match style & 0xF {
        ps::DASH => &[18, 6],
        ps::DOT => &[3, 3],
        ps::DASHDOT => &[9, 6, 3, 6],
        ps::DASHDOTDOT => &[9, 3, 3, 3, 3, 3],
        // PS_ALTERNATE: every other pixel (cosmetic pens only).
        ps::ALTERNATE => &[1, 1],
        _ => &[],
    }
}

/// The hatch patterns (8x8, a set bit draws the hatch colour, MSB = left).
pub fn hatch_rows(h: u32) -> [u8; 8] {
    match h {
        0 => [0, 0, 0, 0xFF, 0, 0, 0, 0], // HS_HORIZONTAL
        1 => [0x08; 8],                   // HS_VERTICAL
        2 => [0x80, 0x40, 0x20, 0x10, 0x08, 0x04, 0x02, 0x01], // HS_FDIAGONAL \
        3 => [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80], // HS_BDIAGONAL /
        4 => [0x08, 0x08, 0x08, 0xFF, 0x08, 0x08, 0x08, 0x08], // HS_CROSS
        _ => [0x81, 0x42, 0x24, 0x18, 0x18, 0x24, 0x42, 0x81], // HS_DIAGCROSS
    }
}

/// What a drawing call works on: the target buffer taken out of the GDI
/// state, the DC's values, the realized pen and brush.
pub struct Target {
    pub bits: Bits,
    pub dc: Dc,
    pub clip: Region,
    pub pen: Pen,
    pub pen_style: u32,
    pub brush: Paint,
    /// The selected bitmap (0 for the screen).
    pub bitmap: u32,
    /// The DC's text and background colours as raw values of the target.
    pub text_px: u32,
    pub bk_px: u32,
}

/// PALETTEINDEX(i): `0x01000000 | i`.
pub const PALETTEINDEX: u32 = 0x0100_0000;
/// DIBINDEX(i): `0x10FF0000 | i`.
pub const DIBINDEX: u32 = 0x10FF_0000;

impl Gdi {
    /// The raw value COLORREF `c` gives on `bits` drawn from `dc`.
    /// PALETTEINDEX(i) is entry i of the DC's palette (entry 0 past its
    /// end); DIBINDEX(i) is raw value i on a colour-table target (0 past
    /// the table, or without one); any other high byte (PALETTERGB) is
    /// dropped. `mono_fixup` (pen and brush colours): on a 1 bpp target a
    /// colour that is not exactly one of its two table colours does not
    /// take the nearest entry: the DC's background colour takes its own
    /// (nearest) pixel and every other colour the other pixel (Wine's
    /// test_mono_bitmap, run on Windows: a pen of any colour but white
    /// and the background colour draws black on a black-on-white DC).
    pub fn pixel_of(&self, dc: &Dc, bits: &Bits, c: u32, mono_fixup: bool) -> u32 {
        let rgb = if c >> 16 == DIBINDEX >> 16 {
            let i = c & 0xFFFF;
            let n = if bits.bpp <= 8 { bits.palette.len() } else { 0 };
            return if (i as usize) < n { i } else { 0 };
        } else if c >> 24 == PALETTEINDEX >> 24 {
            let pal = match self.get(dc.palette) {
                Some(Object::Palette(v)) => v.as_slice(),
                _ => &self.system_palette,
            };
            let i = (c & 0xFFFF) as usize;
            pal.get(i).or(pal.first()).copied().unwrap_or(0)
        } else {
            c & 0xFF_FFFF
        };
        if bits.bpp != 1 || !mono_fixup {
            return bits.from_color(rgb);
        }
        if let Some(i) = bits.palette.iter().position(|&e| e == rgb) {
            return i as u32;
        }
        let bk = self.pixel_of(dc, bits, dc.bk_color, false);
        if c == dc.bk_color {
            bk
        } else {
            bk ^ 1
        }
    }

    /// The COLORREF `c` shows as on `bits` drawn from `dc` (GetNearestColor, SetPixel's answer).
    pub fn nearest_color(&self, dc: &Dc, bits: &Bits, c: u32) -> Colorref {
        bits.to_color(self.pixel_of(dc, bits, c, false))
    }

    /// Whether `dc` is a memory DC holding a monochrome DDB.
    pub fn mono_ddb_dc(&self, dc: &Dc) -> bool {
        dc.memory && self.bitmap(dc.bitmap).is_some_and(|b| b.mono)
    }

    /// Realizes a brush for `bits` as seen from `dc`.
    pub fn paint_of(&self, brush: u32, dc: &Dc, bits: &Bits) -> Paint {
        let org = (dc.origin.0 + dc.brush_org.0, dc.origin.1 + dc.brush_org.1);
        let b = match self.get(brush) {
            Some(Object::Brush(b)) => b.clone(),
            _ => return Paint::None,
        };
        let color = if brush == self.stock(stock::DC_BRUSH) {
            dc.dc_brush
        } else {
            b.color
        };
        match b.style {
            bs::SOLID => Paint::Solid(self.pixel_of(dc, bits, color, true)),
            bs::HATCHED => {
                let rows = hatch_rows(b.hatch);
                let fg = self.pixel_of(dc, bits, color, true);
                let bg =
                    (dc.bk_mode == OPAQUE).then(|| self.pixel_of(dc, bits, dc.bk_color, false));
                let px = (0..64)
                    .map(|i| {
                        if rows[i / 8] & (0x80 >> (i % 8)) != 0 {
                            Some(fg)
                        } else {
                            bg
                        }
                    })
                    .collect();
                Paint::Pattern {
                    w: 8,
                    h: 8,
                    px,
                    org,
                }
            }
            bs::PATTERN | bs::DIBPATTERN | bs::DIBPATTERNPT => match &b.pattern {
                Some((p, mono)) if p.width > 0 && p.height > 0 => {
                    // DIB_PAL_COLORS: the table's indexes through the DC's palette.
                    let resolved;
                    let p = if b.pal_colors {
                        let pal = match self.get(dc.palette) {
                            Some(Object::Palette(v)) => v.clone(),
                            _ => self.system_palette.clone(),
                        };
                        let mut q = p.clone();
                        for c in q.palette.iter_mut() {
                            *c = pal.get(*c as usize).copied().unwrap_or(0);
                        }
                        resolved = q;
                        &resolved
                    } else {
                        p
                    };
                    // A monochrome pattern takes the DC's text (0) and
                    // background (1) colours, except on a monochrome DDB,
                    // where its bits copy as they are (Wine's
                    // test_bitmap_colors: 0x5555 whatever the DC's colours).
                    let copy = *mono && self.mono_ddb_dc(dc);
                    let fg = self.pixel_of(dc, bits, dc.text_color, false);
                    let bg = self.pixel_of(dc, bits, dc.bk_color, false);
                    let mut px = Vec::with_capacity((p.width * p.height) as usize);
                    for y in 0..p.height {
                        for x in 0..p.width {
                            let v = p.get(x, y);
                            px.push(Some(if copy {
                                v & 1
                            } else if *mono {
                                if v & 1 == 0 {
                                    fg
                                } else {
                                    bg
                                }
                            } else {
                                bits.from_color(p.to_color(v))
                            }));
                        }
                    }
                    Paint::Pattern {
                        w: p.width,
                        h: p.height,
                        px,
                        org,
                    }
                }
                _ => Paint::None,
            },
            _ => Paint::None,
        }
    }

    /// Realizes the DC's pen for `bits`.
    pub fn pen_of(&self, dc: &Dc, bits: &Bits) -> (Pen, u32) {
        let p = match self.get(dc.pen) {
            Some(Object::Pen(p)) => p.clone(),
            _ => super::PenObj {
                style: ps::NULL,
                width: 0,
                color: 0,
                ext: None,
            },
        };
        let color = if dc.pen == self.stock(stock::DC_PEN) {
            dc.dc_pen
        } else {
            p.color
        };
        let style = p.style & 0xF;
        let width = dc.scale_x(p.width.max(1)).max(1);
        // Styles apply to cosmetic (width 1) pens; wider pens draw solid.
        let dash = if width <= 1 { dashes(style) } else { &[] };
        (
            Pen {
                color: self.pixel_of(dc, bits, color, true),
                width: if p.width <= 1 { 1 } else { width },
                dashes: dash,
                gap: (dc.bk_mode == OPAQUE).then(|| self.pixel_of(dc, bits, dc.bk_color, false)),
                null: style == ps::NULL,
            },
            style,
        )
    }

    /// Takes the DC's target out of the state (loading a DIB section from
    /// guest memory), realized for drawing; `None` for an unknown DC.
    pub fn begin(&mut self, mem: &Memory, hdc: u32) -> Option<Target> {
        let dc = self.dc(hdc)?.clone();
        let bits = if dc.memory {
            self.load_dib(mem, dc.bitmap);
            let b = self.bitmap_mut(dc.bitmap)?;
            std::mem::replace(&mut b.bits, Bits::new(0, 0, 1))
        } else {
            std::mem::replace(&mut self.screen, Bits::new(0, 0, 32))
        };
        let clip = if dc.memory {
            let full = Region::rect(Rect::new(0, 0, bits.width, bits.height));
            match &dc.clip {
                None => full,
                Some(c) => c.combine(&full, super::region::Op::And),
            }
        } else {
            dc.total_clip()
        };
        let (pen, pen_style) = self.pen_of(&dc, &bits);
        let brush = self.paint_of(dc.brush, &dc, &bits);
        let text_px = self.pixel_of(&dc, &bits, dc.text_color, false);
        let bk_px = self.pixel_of(&dc, &bits, dc.bk_color, false);
        Some(Target {
            text_px,
            bk_px,
            bitmap: if dc.memory { dc.bitmap } else { 0 },
            bits,
            dc,
            clip,
            pen,
            pen_style,
            brush,
        })
    }

    /// Puts a target back (storing a DIB section to guest memory).
    pub fn end(&mut self, mem: &mut Memory, t: Target) {
        if t.bitmap == 0 {
            self.screen = t.bits;
        } else if let Some(b) = self.bitmap_mut(t.bitmap) {
            b.bits = t.bits;
            self.store_dib(mem, t.bitmap);
        }
    }

    /// Runs `f` on the DC's target with `brush` (a handle) realized for it.
    pub fn draw_with_brush<R>(
        &mut self,
        mem: &mut Memory,
        hdc: u32,
        brush: u32,
        f: impl FnOnce(&mut Target, &Paint) -> R,
    ) -> Option<R> {
        let mut t = self.begin(mem, hdc)?;
        let p = self.paint_of(brush, &t.dc, &t.bits);
        let r = f(&mut t, &p);
        self.end(mem, t);
        Some(r)
    }

    /// Runs `f` on the DC's target; `None` for an unknown DC.
    pub fn draw<R>(
        &mut self,
        mem: &mut Memory,
        hdc: u32,
        f: impl FnOnce(&mut Target) -> R,
    ) -> Option<R> {
        let mut t = self.begin(mem, hdc)?;
        let r = f(&mut t);
        self.end(mem, t);
        Some(r)
    }
}

impl Target {
    pub fn canvas(&mut self) -> Canvas<'_> {
        Canvas {
            bits: &mut self.bits,
            clip: &self.clip,
            rop2: self.dc.rop2,
        }
    }

    /// A logical point in target coordinates.
    pub fn pt(&self, x: i32, y: i32) -> (i32, i32) {
        let (dx, dy) = self.dc.to_device(x, y);
        (dx + self.dc.origin.0, dy + self.dc.origin.1)
    }

    /// LineTo / Polyline segments from logical points.
    pub fn polyline(&mut self, pts: &[(i32, i32)]) {
        let pen = self.pen.clone();
        let tp: Vec<(i32, i32)> = pts.iter().map(|&(x, y)| self.pt(x, y)).collect();
        let mut st = 0;
        let mut c = self.canvas();
        for w in tp.windows(2) {
            c.line(w[0].0, w[0].1, w[1].0, w[1].1, &pen, &mut st);
        }
    }

    pub fn shape(&mut self, shape: Shape, r: Rect) {
        let tr = self.dc.rect_to_target(r);
        let (pen, brush) = (self.pen.clone(), self.brush.clone());
        let inside = self.pen_style == ps::INSIDEFRAME;
        self.canvas().shape(shape, tr, &pen, &brush, inside);
    }

    pub fn polygon(&mut self, pts: &[(i32, i32)]) {
        let tp: Vec<(i32, i32)> = pts.iter().map(|&(x, y)| self.pt(x, y)).collect();
        let (pen, brush) = (self.pen.clone(), self.brush.clone());
        let winding = self.dc.poly_fill == 2;
        self.canvas().polygon(&tp, winding, &pen, &brush);
    }

    /// FillRect with an explicit paint (`[left, right) x [top, bottom)`).
    pub fn fill(&mut self, r: Rect, paint: &Paint) {
        let tr = self.dc.rect_to_target(r);
        self.canvas().fill_rect(tr, paint);
    }

    /// Fills a region given in logical (MM_TEXT device) coordinates.
    pub fn fill_region(&mut self, rgn: &Region, paint: &Paint) {
        let mut r = rgn.clone();
        let (ox, oy) = self.pt(0, 0);
        r.offset(ox, oy);
        self.canvas().fill_region(&r, paint);
    }

    /// Text with the cell's top-left at the logical point (alignment done by the caller).
    pub fn text(&mut self, x: i32, y: i32, s: &[u16], face: super::font::Face) {
        let (tx, ty) = self.pt(x, y);
        let fg = self.text_px;
        let bg = (self.dc.bk_mode == OPAQUE).then_some(self.bk_px);
        let mut c = Canvas {
            bits: &mut self.bits,
            clip: &self.clip,
            rop2: 13,
        };
        face.draw(&mut c, tx, ty, s, fg, bg);
    }
}

/// A blit's source as a snapshot: pixels, whether monochrome DDB, background colour.
pub struct Source {
    pub bits: Bits,
    pub mono: bool,
    /// The source DC's background colour as a raw value of the source.
    pub bk: u32,
    pub origin: (i32, i32),
    pub dc: Dc,
}

impl Gdi {
    /// The pixels behind a source DC (a copy: source and destination may be the same).
    pub fn source(&mut self, mem: &Memory, hdc: u32) -> Option<Source> {
        let dc = self.dc(hdc)?.clone();
        if dc.memory {
            self.load_dib(mem, dc.bitmap);
            let b = self.bitmap(dc.bitmap)?;
            Some(Source {
                bk: self.pixel_of(&dc, &b.bits, dc.bk_color, false),
                bits: b.bits.clone(),
                mono: b.mono,
                origin: (0, 0),
                dc,
            })
        } else {
            Some(Source {
                bk: self.pixel_of(&dc, &self.screen, dc.bk_color, false),
                bits: self.screen.clone(),
                mono: false,
                origin: dc.origin,
                dc,
            })
        }
    }

    /// BitBlt / StretchBlt / PatBlt (no source) with ROP3 index byte `op`.
    /// Coordinates are logical in each DC.
    #[allow(clippy::too_many_arguments)]
    pub fn stretch_blt(
        &mut self,
        mem: &mut Memory,
        hdc: u32,
        (x, y, w, h): (i32, i32, i32, i32),
        src: Option<(u32, i32, i32, i32, i32)>,
        op: u8,
    ) -> bool {
        let (uses_src, _) = super::raster::rop3_uses(op);
        let source = match src {
            Some((sdc, ..)) if uses_src => match self.source(mem, sdc) {
                Some(s) => Some(s),
                None => return false,
            },
            _ => None,
        };
        let dst_mono = self
            .dc(hdc)
            .and_then(|d| d.memory.then(|| self.bitmap(d.bitmap).map(|b| b.mono)))
            .flatten()
            .unwrap_or(false);
        self.draw(mem, hdc, |t| {
            let (tx, ty) = t.pt(x, y);
            let (tx2, ty2) = t.pt(x + w, y + h);
            let brush = t.brush.clone();
            let s = source.as_ref().map(|s| {
                let (sx0, sy0) = s.dc.to_device(src.unwrap().1, src.unwrap().2);
                let (sx1, sy1) = s.dc.to_device(
                    src.unwrap().1 + src.unwrap().3,
                    src.unwrap().2 + src.unwrap().4,
                );
                let conv = if s.mono && !dst_mono {
                    SrcConv::MonoToColor {
                        fg: t.text_px,
                        bg: t.bk_px,
                    }
                } else if dst_mono && !s.mono {
                    SrcConv::ColorToMono { bk: s.bk }
                } else if s.bits.bpp == t.bits.bpp
                    && s.bits.palette == t.bits.palette
                    && s.bits.masks == t.bits.masks
                {
                    SrcConv::Raw
                } else {
                    SrcConv::Color
                };
                (
                    &s.bits,
                    sx0 + s.origin.0,
                    sy0 + s.origin.1,
                    sx1 - sx0,
                    sy1 - sy0,
                    conv,
                )
            });
            let b = Blit {
                x: tx,
                y: ty,
                w: tx2 - tx,
                h: ty2 - ty,
                src: s,
                op,
            };
            t.canvas().blit(&b, &brush);
        })
        .is_some()
    }

    /// Draws DIB pixels (already decoded into `bits`) to a DC: the source
    /// rectangle `(sx, sy, sw, sh)` of `bits` (top-down coordinates) onto the
    /// logical destination rectangle, ROP3 `op` (StretchDIBits, SetDIBitsToDevice).
    #[allow(clippy::too_many_arguments)]
    pub fn draw_bits(
        &mut self,
        mem: &mut Memory,
        hdc: u32,
        (x, y, w, h): (i32, i32, i32, i32),
        bits: &Bits,
        (sx, sy, sw, sh): (i32, i32, i32, i32),
        op: u8,
    ) -> bool {
        self.draw(mem, hdc, |t| {
            let (tx, ty) = t.pt(x, y);
            let (tx2, ty2) = t.pt(x + w, y + h);
            let brush = t.brush.clone();
            let conv = if bits.bpp == t.bits.bpp
                && bits.palette == t.bits.palette
                && bits.masks == t.bits.masks
            {
                SrcConv::Raw
            } else {
                SrcConv::Color
            };
            let b = Blit {
                x: tx,
                y: ty,
                w: tx2 - tx,
                h: ty2 - ty,
                src: Some((bits, sx, sy, sw, sh, conv)),
                op,
            };
            t.canvas().blit(&b, &brush);
        })
        .is_some()
    }

    /// SelectObject: returns the previous object of that kind (0 on error;
    /// for a region, the region's complexity).
    pub fn select(&mut self, hdc: u32, h: u32) -> u32 {
        let kind = match self.get(h) {
            Some(o) => o.kind(),
            None => return 0,
        };
        if kind == super::obj::REGION {
            let Some(Object::Region(r)) = self.get(h).cloned() else {
                return 0;
            };
            let Some(d) = self.dc_mut(hdc) else { return 0 };
            let cx = complexity(&r);
            d.s.clip = Some(r);
            return cx;
        }
        if kind == super::obj::BITMAP {
            let Some(d) = self.dc(hdc) else { return 0 };
            if !d.memory {
                return 0;
            }
            let old = d.bitmap;
            if old == h {
                return old;
            }
            if let Some(b) = self.bitmap(h) {
                if b.selected.is_some() {
                    return 0;
                }
            }
            let (w, hh) = {
                let b = self.bitmap_mut(h).expect("checked");
                b.selected = Some(hdc);
                (b.bits.width, b.bits.height)
            };
            if let Some(b) = self.bitmap_mut(old) {
                b.selected = None;
            }
            let d = self.dc_mut(hdc).expect("checked");
            d.s.bitmap = h;
            d.vis = Region::rect(Rect::new(0, 0, w, hh));
            return old;
        }
        let Some(d) = self.dc_mut(hdc) else { return 0 };
        let slot = match kind {
            super::obj::PEN | super::obj::EXTPEN => &mut d.s.pen,
            super::obj::BRUSH => &mut d.s.brush,
            super::obj::FONT => &mut d.s.font,
            super::obj::PAL => &mut d.s.palette,
            _ => return 0,
        };
        std::mem::replace(slot, h)
    }

    /// The font face selected into a DC.
    pub fn face(&self, hdc: u32) -> super::font::Face {
        let f = self.dc(hdc).map(|d| d.font).unwrap_or(0);
        match self.get(f) {
            Some(Object::Font(lf)) => lf.face(),
            _ => super::font::Face::new(0, 400, false, false),
        }
    }
}

/// NULLREGION 1, SIMPLEREGION 2, COMPLEXREGION 3.
pub fn complexity(r: &Region) -> u32 {
    match r.rects.len() {
        0 => 1,
        1 => 2,
        _ => 3,
    }
}

#[cfg(test)]
mod tests {
    use super::super::bits::rgb;
    use super::*;

    fn art(g: &Gdi, hdc: u32, w: i32, h: i32) -> Vec<String> {
        let d = g.dc(hdc).unwrap();
        let b = &g.bitmap(d.bitmap).unwrap().bits;
        (0..h)
            .map(|y| {
                (0..w)
                    .map(|x| match b.color_at(x, y) {
                        0 => '#',
                        0xFFFFFF => '.',
                        _ => 'o',
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn rectangle_and_null_pen_geometry() {
        let mut g = Gdi::new(8, 8, 0);
        let mut mem = Memory::new();
        let hdc = g.create_dc(None);
        let bmp = g.add(Object::Bitmap(super::super::BitmapObj::ddb(Bits::new(
            6, 6, 32,
        ))));
        g.select(hdc, bmp);
        g.draw(&mut mem, hdc, |t| {
            t.fill(Rect::new(0, 0, 6, 6), &Paint::Solid(0xFFFFFF))
        });
        let red = g.add(Object::Brush(super::super::BrushObj {
            style: bs::SOLID,
            color: rgb(255, 0, 0),
            hatch: 0,
            pattern: None,
            pal_colors: false,
        }));
        g.select(hdc, red);
        g.draw(&mut mem, hdc, |t| {
            t.shape(Shape::Rectangle, Rect::new(0, 0, 4, 4))
        });
        assert_eq!(
            art(&g, hdc, 6, 5),
            ["####..", "#oo#..", "#oo#..", "####..", "......"]
        );
        let np = g.stock(stock::NULL_PEN);
        g.select(hdc, np);
        g.draw(&mut mem, hdc, |t| {
            t.shape(Shape::Rectangle, Rect::new(2, 2, 6, 6))
        });
        assert_eq!(
            art(&g, hdc, 6, 6)[2..],
            ["#oooo.", "##ooo.", "..ooo.", "......"]
        );
    }

    /// A memory DC holding `bits` (a DDB when `mono`, else DIB-like).
    fn mem_dc(g: &mut Gdi, bits: Bits, mono: bool) -> (u32, u32) {
        let hdc = g.create_dc(None);
        let mut b = super::super::BitmapObj::ddb(bits);
        b.mono = mono;
        let bmp = g.add(Object::Bitmap(b));
        g.select(hdc, bmp);
        (hdc, bmp)
    }

    fn row0(g: &Gdi, bmp: u32) -> u8 {
        g.bitmap(bmp).unwrap().bits.data[0]
    }

    #[test]
    fn colours_on_a_monochrome_target() {
        // Wine's test_mono_bitmap (run on Windows): plain colours take the
        // nearest of black and white; pens and brushes take the background
        // colour's pixel for the background colour and the other pixel
        // for every colour that is neither exactly black nor white.
        let mut g = Gdi::new(8, 8, 0);
        let (hdc, _) = mem_dc(&mut g, Bits::new(16, 1, 1), true);
        let d = g.dc(hdc).unwrap().clone();
        let bits = Bits::new(16, 1, 1);
        let px = |g: &Gdi, d: &Dc, c, fix| g.pixel_of(d, &bits, c, fix);
        assert_eq!(px(&g, &d, rgb(0, 0x96, 0xF0), false), 1, "nearest: white");
        assert_eq!(px(&g, &d, rgb(0x30, 0x30, 0x30), false), 0);
        // Black text on white: any pen colour but white draws black.
        assert_eq!(px(&g, &d, rgb(0, 0x96, 0xF0), true), 0);
        assert_eq!(px(&g, &d, rgb(255, 255, 255), true), 1);
        // Background 0x808080: its own colour is its nearest (white), others black.
        let mut d2 = d.clone();
        d2.s.bk_color = rgb(0x80, 0x80, 0x80);
        assert_eq!(px(&g, &d2, rgb(0x80, 0x80, 0x80), true), 1);
        assert_eq!(px(&g, &d2, rgb(0xF0, 0xF0, 0xF0), true), 0);
        // Background black: every other colour draws white.
        d2.s.bk_color = 0;
        assert_eq!(px(&g, &d2, rgb(0x30, 0x30, 0x30), true), 1);
        assert_eq!(px(&g, &d2, 0, true), 0);
        // DIBINDEX(1) is raw 1, DIBINDEX(7) past the table raw 0;
        // PALETTEINDEX(19) is the default palette's white, PALETTEINDEX(200) entry 0.
        assert_eq!(px(&g, &d, DIBINDEX | 1, false), 1);
        assert_eq!(px(&g, &d, DIBINDEX | 7, false), 0);
        assert_eq!(
            g.nearest_color(&d, &bits, PALETTEINDEX | 19),
            rgb(255, 255, 255)
        );
        assert_eq!(g.nearest_color(&d, &bits, PALETTEINDEX | 200), 0);
        // A 32 bpp target keeps the colour.
        let b32 = Bits::new(1, 1, 32);
        assert_eq!(g.nearest_color(&d, &b32, rgb(1, 2, 3)), rgb(1, 2, 3));
    }

    #[test]
    fn blits_and_patterns_onto_a_monochrome_ddb() {
        let mut g = Gdi::new(8, 8, 0);
        let mut mem = Memory::new();
        let (dst, dst_bmp) = mem_dc(&mut g, Bits::new(8, 1, 1), true);
        // A 1 bpp DIB (colour table near-white, near-black), pixels 01010101.
        let mut src = Bits::new(8, 1, 1);
        src.palette = vec![rgb(0xFF, 0xFF, 0xF0), rgb(0x20, 0, 0)];
        src.data[0] = 0x55;
        let (sdc, sbmp) = mem_dc(&mut g, src, false);
        // The source DC's background (black) is nearest to entry 1: those pixels become 1.
        g.dc_mut(sdc).unwrap().s.bk_color = 0;
        g.stretch_blt(&mut mem, dst, (0, 0, 8, 1), Some((sdc, 0, 0, 8, 1)), 0xCC);
        assert_eq!(row0(&g, dst_bmp), 0x55);
        // Table swapped (near-black, near-white): entry 0 is now the background's.
        g.bitmap_mut(sbmp).unwrap().bits.palette = vec![rgb(0, 0, 0x10), rgb(0xFF, 0xF0, 0xFF)];
        g.stretch_blt(&mut mem, dst, (0, 0, 8, 1), Some((sdc, 0, 0, 8, 1)), 0xCC);
        assert_eq!(row0(&g, dst_bmp), 0xAA);
        // Background 240,240,240: nearest to entry 1 again.
        g.dc_mut(sdc).unwrap().s.bk_color = rgb(240, 240, 240);
        g.stretch_blt(&mut mem, dst, (0, 0, 8, 1), Some((sdc, 0, 0, 8, 1)), 0xCC);
        assert_eq!(row0(&g, dst_bmp), 0x55);
        // A 32 bpp source: only exactly the background colour becomes 1.
        let mut c = Bits::new(8, 1, 32);
        for x in 0..8 {
            c.set(x, 0, if x % 2 == 0 { 0xFF_FFFF } else { 0xFF_FFFE });
        }
        let (cdc, _) = mem_dc(&mut g, c, false);
        g.stretch_blt(&mut mem, dst, (0, 0, 8, 1), Some((cdc, 0, 0, 8, 1)), 0xCC);
        assert_eq!(row0(&g, dst_bmp), 0xAA);
        // A monochrome pattern brush copies its bits onto a monochrome DDB
        // whatever the DC's colours (white text on black here).
        let mut pat = Bits::new(8, 1, 1);
        pat.data[0] = 0x55;
        let brush = g.add(Object::Brush(super::super::BrushObj {
            style: bs::PATTERN,
            color: 0,
            hatch: 0,
            pattern: Some((pat, true)),
            pal_colors: false,
        }));
        g.select(dst, brush);
        g.dc_mut(dst).unwrap().s.text_color = rgb(255, 255, 255);
        g.dc_mut(dst).unwrap().s.bk_color = 0;
        g.stretch_blt(&mut mem, dst, (0, 0, 8, 1), None, 0xF0);
        assert_eq!(row0(&g, dst_bmp), 0x55);
        // On a 32 bpp target the same brush takes the DC's colours: 0 is the text colour.
        let (cdst, cbmp) = mem_dc(&mut g, Bits::new(8, 1, 32), false);
        g.select(cdst, brush);
        g.dc_mut(cdst).unwrap().s.text_color = rgb(255, 0, 0);
        g.stretch_blt(&mut mem, cdst, (0, 0, 8, 1), None, 0xF0);
        let b = &g.bitmap(cbmp).unwrap().bits;
        assert_eq!(
            (b.color_at(0, 0), b.color_at(1, 0)),
            (rgb(255, 0, 0), rgb(255, 255, 255))
        );
    }
}
