//! Rasterization on a [`Bits`] buffer through a clip region: binary and
//! ternary raster operations, pens (cosmetic styled lines, wide solid
//! lines), brushes (solid, hatched, pattern), the filled shapes, and
//! blits with any ROP3, stretched or not.
//!
//! Geometry follows the Windows GDI documentation's rules (see
//! docs/mainemu-gui.md for each source): a line excludes its last point;
//! Rectangle, Ellipse and RoundRect cover `[left, right) x [top, bottom)`
//! and a null pen makes them one pixel smaller in each dimension; FillRect
//! and PatBlt cover `[left, right) x [top, bottom)`; a polygon fills the
//! pixels whose centres are inside, then the pen draws its edges.
//!
//! Owns pixel-level drawing in device coordinates. It must not know about
//! DCs, logical coordinates or GDI handles (the dc module maps those).

use super::bits::Bits;
use super::region::{ellipse_spans, polygon_spans, Rect, Region};

/// ROP2 (R2_BLACK = 1 .. R2_WHITE = 16) on raw values: bit (P*2 + D) of
/// `code - 1` is the result for each bit position.
pub fn rop2(code: u32, p: u32, d: u32) -> u32 {
    let t = code.wrapping_sub(1) & 0xF;
    let bit = |i: u32| if t >> i & 1 != 0 { u32::MAX } else { 0 };
    (bit(0) & !p & !d) | (bit(1) & !p & d) | (bit(2) & p & !d) | (bit(3) & p & d)
}

/// ROP3 (the index byte of a ternary raster operation) on raw values: bit
/// (P*4 + S*2 + D) of `op` is the result.
pub fn rop3(op: u8, p: u32, s: u32, d: u32) -> u32 {
    let mut out = 0;
    for i in 0..8u32 {
        if op >> i & 1 == 0 {
            continue;
        }
        let pp = if i & 4 != 0 { p } else { !p };
        let ss = if i & 2 != 0 { s } else { !s };
        let dd = if i & 1 != 0 { d } else { !d };
        out |= pp & ss & dd;
    }
    out
}

/// Whether a ROP3 reads the source (S) / the pattern (P).
pub fn rop3_uses(op: u8) -> (bool, bool) {
    let uses = |shift: u32| (0..8u32).any(|i| (op >> i & 1) != (op >> (i ^ shift) & 1));
    (uses(2), uses(4))
}

/// What fills an area: nothing, one raw value, or a pattern tiled from a
/// device-space origin (`None` pixels of a hatch on a transparent
/// background leave the destination alone).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Paint {
    None,
    Solid(u32),
    Pattern {
        w: i32,
        h: i32,
        px: Vec<Option<u32>>,
        org: (i32, i32),
    },
}

impl Paint {
    pub fn at(&self, x: i32, y: i32) -> Option<u32> {
        match self {
            Paint::None => None,
            Paint::Solid(v) => Some(*v),
            Paint::Pattern { w, h, px, org } => {
                let i = (x - org.0).rem_euclid(*w);
                let j = (y - org.1).rem_euclid(*h);
                px[(j * w + i) as usize]
            }
        }
    }
}

/// A realized pen: raw colour, width in device pixels, dash pattern
/// (alternating on/off lengths; empty = solid), gap colour when the
/// background mode is OPAQUE.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pen {
    pub color: u32,
    pub width: i32,
    pub dashes: &'static [u32],
    pub gap: Option<u32>,
    pub null: bool,
}

/// Where drawing lands: a buffer, the device-space clip, and the ROP2.
pub struct Canvas<'a> {
    pub bits: &'a mut Bits,
    pub clip: &'a Region,
    pub rop2: u32,
}

impl Canvas<'_> {
    fn visible(&self, x: i32, y: i32) -> bool {
        self.bits.contains(x, y) && self.clip.contains(x, y)
    }

    /// One pixel through the clip and the ROP2.
    pub fn plot(&mut self, x: i32, y: i32, v: u32) {
        if self.visible(x, y) {
            let d = self.bits.get(x, y);
            let m = self.bits.raw_mask();
            self.bits.set(x, y, rop2(self.rop2, v, d) & m);
        }
    }

    /// Fills `[x0, x1)` on row `y` with `paint` through the clip and the ROP2.
    pub fn span(&mut self, y: i32, x0: i32, x1: i32, paint: &Paint) {
        if y < 0 || y >= self.bits.height || matches!(paint, Paint::None) {
            return;
        }
        let m = self.bits.raw_mask();
        let w = self.bits.width;
        for r in self
            .clip
            .rects
            .iter()
            .filter(|r| r.top <= y && y < r.bottom)
        {
            let a = x0.max(r.left).max(0);
            let b = x1.min(r.right).min(w);
            for x in a..b {
                if let Some(v) = paint.at(x, y) {
                    let d = self.bits.get(x, y);
                    self.bits.set(x, y, rop2(self.rop2, v, d) & m);
                }
            }
        }
    }

    /// Fills a region.
    pub fn fill_region(&mut self, rgn: &Region, paint: &Paint) {
        for r in &rgn.rects {
            for y in r.top..r.bottom {
                self.span(y, r.left, r.right, paint);
            }
        }
    }

    pub fn fill_rect(&mut self, r: Rect, paint: &Paint) {
        let r = r.normalized();
        for y in r.top..r.bottom {
            self.span(y, r.left, r.right, paint);
        }
    }

    /// A line from (x0, y0) towards (x1, y1), the last point excluded
    /// (Bresenham, major axis stepping). `style` carries the position in the
    /// dash pattern from segment to segment of one call.
    pub fn line(&mut self, x0: i32, y0: i32, x1: i32, y1: i32, pen: &Pen, style: &mut u32) {
        if pen.null {
            return;
        }
        if pen.width > 1 {
            let mut pts = line_points(x0, y0, x1, y1);
            pts.push((x1, y1));
            let rgn = stamp(&pts, pen.width);
            self.fill_region(&rgn, &Paint::Solid(pen.color));
            return;
        }
        let period: u32 = pen.dashes.iter().sum();
        for (x, y) in line_points(x0, y0, x1, y1) {
            let on = if period == 0 {
                true
            } else {
                let mut p = *style % period;
                let mut on = true;
                for &d in pen.dashes {
                    if p < d {
                        break;
                    }
                    p -= d;
                    on = !on;
                }
                on
            };
            *style = style.wrapping_add(1);
            if on {
                self.plot(x, y, pen.color);
            } else if let Some(g) = pen.gap {
                self.plot(x, y, g);
            }
        }
    }
}

/// The points of a line, last point excluded.
pub fn line_points(x0: i32, y0: i32, x1: i32, y1: i32) -> Vec<(i32, i32)> {
    let (dx, dy) = ((x1 - x0).abs(), (y1 - y0).abs());
    let (sx, sy) = ((x1 - x0).signum(), (y1 - y0).signum());
    let n = dx.max(dy);
    let mut out = Vec::with_capacity(n as usize);
    let (mut x, mut y) = (x0, y0);
    if dx >= dy {
        let mut err = 2 * dy - dx;
        for _ in 0..n {
            out.push((x, y));
            if err > 0 || (err == 0 && sy < 0) {
                y += sy;
                err -= 2 * dx;
            }
            err += 2 * dy;
            x += sx;
        }
    } else {
        let mut err = 2 * dx - dy;
        for _ in 0..n {
            out.push((x, y));
            if err > 0 || (err == 0 && sx < 0) {
                x += sx;
                err -= 2 * dy;
            }
            err += 2 * dx;
            y += sy;
        }
    }
    out
}

/// A round brush of diameter `w` stamped at each point (wide pens: round
/// caps and joins).
fn stamp(pts: &[(i32, i32)], w: i32) -> Region {
    let lo = -(w / 2);
    let disc = ellipse_spans(Rect::new(lo, lo, lo + w, lo + w));
    let mut spans = Vec::new();
    for &(x, y) in pts {
        for &(dy, a, b) in &disc {
            spans.push((y + dy, x + a, x + b));
        }
    }
    Region::from_spans(spans)
}

/// The pixels of `rgn` at most `w` steps (4-connected) from its outside.
pub fn border(rgn: &Region, w: i32) -> Region {
    let mut inner = rgn.clone();
    for _ in 0..w.max(1) {
        let b = inner.bounds();
        let mut spans = Vec::new();
        for y in b.top..b.bottom {
            let mut run: Option<i32> = None;
            for x in b.left..=b.right {
                let keep = x < b.right
                    && inner.contains(x, y)
                    && inner.contains(x - 1, y)
                    && inner.contains(x + 1, y)
                    && inner.contains(x, y - 1)
                    && inner.contains(x, y + 1);
                match (keep, run) {
                    (true, None) => run = Some(x),
                    (false, Some(s)) => {
                        spans.push((y, s, x));
                        run = None;
                    }
                    _ => {}
                }
            }
        }
        inner = Region::from_spans(spans);
    }
    rgn.combine(&inner, super::region::Op::Diff)
}

/// The closed shapes GDI draws with a pen outline and a brush interior.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Rectangle,
    Ellipse,
    /// Corner ellipse width and height.
    RoundRect(i32, i32),
}

/// The area of `shape` over the box `r` (right and bottom excluded).
pub fn shape_region(shape: Shape, r: Rect) -> Region {
    let r = r.normalized();
    match shape {
        Shape::Rectangle => Region::rect(r),
        Shape::Ellipse => Region::ellipse(r),
        Shape::RoundRect(ew, eh) => {
            let ew = ew.abs().min(r.width());
            let eh = eh.abs().min(r.height());
            if ew < 2 || eh < 2 {
                return Region::rect(r);
            }
            let mut rg = Region::from_rects([
                Rect::new(r.left + ew / 2, r.top, r.right - ew / 2, r.bottom),
                Rect::new(r.left, r.top + eh / 2, r.right, r.bottom - eh / 2),
            ]);
            for (x, y) in [
                (r.left, r.top),
                (r.right - ew, r.top),
                (r.left, r.bottom - eh),
                (r.right - ew, r.bottom - eh),
            ] {
                rg = rg.combine(
                    &Region::ellipse(Rect::new(x, y, x + ew, y + eh)),
                    super::region::Op::Or,
                );
            }
            rg
        }
    }
}

impl Canvas<'_> {
    /// Draws a closed shape: the brush fills the inside, the pen draws the
    /// edge (`inside_frame`: the pen stays inside the box, PS_INSIDEFRAME).
    /// Styled (dashed) pens outline rectangles along their edges.
    pub fn shape(&mut self, shape: Shape, r: Rect, pen: &Pen, brush: &Paint, inside_frame: bool) {
        let r = r.normalized();
        if pen.null {
            // One pixel smaller in each dimension.
            let area = shape_region(shape, Rect::new(r.left, r.top, r.right - 1, r.bottom - 1));
            self.fill_region(&area, brush);
            return;
        }
        let w = pen.width.max(1);
        let outer = if w > 1 && !inside_frame {
            // The wide pen is centred on the box's edges.
            Rect::new(
                r.left - (w - 1) / 2,
                r.top - (w - 1) / 2,
                r.right + w / 2,
                r.bottom + w / 2,
            )
        } else {
            r
        };
        let area = shape_region(shape, outer);
        let edge = border(&area, w);
        let inside = area.combine(&edge, super::region::Op::Diff);
        self.fill_region(&inside, brush);
        if !pen.dashes.is_empty() && w == 1 && shape == Shape::Rectangle {
            let (l, t, rr, b) = (r.left, r.top, r.right - 1, r.bottom - 1);
            let mut st = 0;
            for (a, bb) in [
                ((l, t), (rr, t)),
                ((rr, t), (rr, b)),
                ((rr, b), (l, b)),
                ((l, b), (l, t)),
            ] {
                self.line(a.0, a.1, bb.0, bb.1, pen, &mut st);
            }
        } else {
            self.fill_region(&edge, &Paint::Solid(pen.color));
        }
    }

    /// Polygon: the brush fills the interior, then the pen draws the closed outline.
    pub fn polygon(&mut self, pts: &[(i32, i32)], winding: bool, pen: &Pen, brush: &Paint) {
        for (y, a, b) in polygon_spans(pts, winding) {
            self.span(y, a, b, brush);
        }
        let mut st = 0;
        for i in 0..pts.len() {
            let (a, b) = (pts[i], pts[(i + 1) % pts.len()]);
            self.line(a.0, a.1, b.0, b.1, pen, &mut st);
        }
    }
}

/// How a source pixel becomes a destination raw value.
pub enum SrcConv {
    /// Same format: raw values copy.
    Raw,
    /// Monochrome source on a colour destination: 0 is `fg`, 1 is `bg` (raw, destination format).
    MonoToColor { fg: u32, bg: u32 },
    /// Colour source on a monochrome destination: pixels equal to `bk`,
    /// the source DC's background colour realized in the source's own
    /// format (the nearest colour-table entry, the channels truncated to
    /// the masks), become 1, all others 0.
    ColorToMono { bk: u32 },
    /// Through COLORREF.
    Color,
}

/// A blit: `dst` rectangle `(x, y, w, h)` from `src` at `(sx, sy)` with
/// source size `(sw, sh)` (nearest-pixel stretching; negative sizes mirror),
/// combined by ROP3 `op` with `brush`.
pub struct Blit<'s> {
    pub x: i32,
    pub y: i32,
    pub w: i32,
    pub h: i32,
    pub src: Option<(&'s Bits, i32, i32, i32, i32, SrcConv)>,
    pub op: u8,
}

impl Canvas<'_> {
    pub fn blit(&mut self, b: &Blit, brush: &Paint) {
        let (mut x, mut w) = (b.x, b.w);
        let (mut y, mut h) = (b.y, b.h);
        let mut flip_x = false;
        let mut flip_y = false;
        if w < 0 {
            x += w;
            w = -w;
            flip_x = true;
        }
        if h < 0 {
            y += h;
            h = -h;
            flip_y = true;
        }
        // Gather converted source values first: source and destination may be the same buffer.
        let mut srcv: Vec<u32> = Vec::new();
        if let Some((s, sx, sy, sw, sh, conv)) = &b.src {
            let (mut sx, mut sw, mut sy, mut sh) = (*sx, *sw, *sy, *sh);
            if sw < 0 {
                sx += sw;
                sw = -sw;
                flip_x = !flip_x;
            }
            if sh < 0 {
                sy += sh;
                sh = -sh;
                flip_y = !flip_y;
            }
            srcv.reserve((w * h) as usize);
            for j in 0..h {
                let jj = if flip_y { h - 1 - j } else { j };
                let yy = sy
                    + if sh == h {
                        jj
                    } else {
                        (jj as i64 * sh as i64 / h.max(1) as i64) as i32
                    };
                for i in 0..w {
                    let ii = if flip_x { w - 1 - i } else { i };
                    let xx = sx
                        + if sw == w {
                            ii
                        } else {
                            (ii as i64 * sw as i64 / w.max(1) as i64) as i32
                        };
                    let raw = s.get(xx, yy);
                    srcv.push(match conv {
                        SrcConv::Raw => raw,
                        SrcConv::MonoToColor { fg, bg } => {
                            if raw & 1 == 0 {
                                *fg
                            } else {
                                *bg
                            }
                        }
                        SrcConv::ColorToMono { bk } => (raw & s.raw_mask() == *bk) as u32,
                        SrcConv::Color => self.bits.from_color(s.to_color(raw)),
                    });
                }
            }
        }
        let m = self.bits.raw_mask();
        let (_, uses_pat) = rop3_uses(b.op);
        for j in 0..h {
            let yy = y + j;
            for i in 0..w {
                let xx = x + i;
                if !self.visible(xx, yy) {
                    continue;
                }
                let d = self.bits.get(xx, yy);
                let s = srcv.get((j * w + i) as usize).copied().unwrap_or(0);
                // A pattern pixel that is None (a hatch's background in
                // TRANSPARENT mode, a null brush) leaves the destination
                // alone when the operation uses the pattern, as in Rectangle
                // (SetBkMode: the mode applies to hatched brushes; Wine's
                // dibdrv masks those pixels out of PatBlt the same way).
                let Some(p) = brush.at(xx, yy).or((!uses_pat).then_some(0)) else {
                    continue;
                };
                self.bits.set(xx, yy, rop3(b.op, p, s, d) & m);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raster_op_tables() {
        // (ROP3 name, index byte, P, S, D, result) for 4-bit values.
        let cases = [
            ("SRCCOPY", 0xCC, 0b0000, 0b1010, 0b0110, 0b1010),
            ("SRCPAINT", 0xEE, 0, 0b1010, 0b0110, 0b1110),
            ("SRCAND", 0x88, 0, 0b1010, 0b0110, 0b0010),
            ("SRCINVERT", 0x66, 0, 0b1010, 0b0110, 0b1100),
            ("SRCERASE", 0x44, 0, 0b1010, 0b0110, 0b1000),
            ("NOTSRCCOPY", 0x33, 0, 0b1010, 0, 0b0101),
            ("MERGECOPY", 0xC0, 0b1100, 0b1010, 0, 0b1000),
            ("PATCOPY", 0xF0, 0b1100, 0, 0b0110, 0b1100),
            ("PATINVERT", 0x5A, 0b1100, 0, 0b0110, 0b1010),
            ("DSTINVERT", 0x55, 0, 0, 0b0110, 0b1001),
            ("BLACKNESS", 0x00, 0b1111, 0b1111, 0b1111, 0),
            ("WHITENESS", 0xFF, 0, 0, 0, 0b1111),
        ];
        for (name, op, p, s, d, want) in cases {
            assert_eq!(rop3(op, p, s, d) & 0xF, want, "{name}");
        }
        assert_eq!(rop3_uses(0xCC), (true, false));
        assert_eq!(rop3_uses(0xF0), (false, true));
        assert_eq!(rop3_uses(0x55), (false, false));
        // ROP2: R2_COPYPEN, R2_XORPEN, R2_NOT, R2_NOP.
        assert_eq!(rop2(13, 0b1100, 0b1010) & 0xF, 0b1100);
        assert_eq!(rop2(7, 0b1100, 0b1010) & 0xF, 0b0110);
        assert_eq!(rop2(6, 0, 0b1010) & 0xF, 0b0101);
        assert_eq!(rop2(11, 0b1100, 0b1010) & 0xF, 0b1010);
    }

    #[test]
    fn lines_exclude_their_last_point() {
        assert_eq!(line_points(0, 0, 3, 0), vec![(0, 0), (1, 0), (2, 0)]);
        assert_eq!(line_points(0, 0, 0, -2), vec![(0, 0), (0, -1)]);
        assert_eq!(
            line_points(0, 0, 4, 2),
            vec![(0, 0), (1, 0), (2, 1), (3, 1)]
        );
        assert_eq!(line_points(5, 5, 5, 5), vec![]);
    }
}
