//! Regions as Windows keeps them: a list of non-overlapping rectangles in
//! y-x bands (sorted by top, then left; each rectangle half-open,
//! `[left, right) x [top, bottom)`). Every combination (and, or, xor,
//! diff) goes through one band sweep, so the result is canonical: equal
//! areas give equal rectangle lists.
//!
//! Owns: rectangles, region geometry and the region shapes GDI can create
//! (rectangle, ellipse, polygon). It must not know about DCs or pixels.

/// A half-open rectangle `[left, right) x [top, bottom)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rect {
    pub left: i32,
    pub top: i32,
    pub right: i32,
    pub bottom: i32,
}

impl Rect {
    pub const fn new(left: i32, top: i32, right: i32, bottom: i32) -> Rect {
        Rect {
            left,
            top,
            right,
            bottom,
        }
    }
    pub fn is_empty(&self) -> bool {
        self.left >= self.right || self.top >= self.bottom
    }
    pub fn width(&self) -> i32 {
        self.right - self.left
    }
    pub fn height(&self) -> i32 {
        self.bottom - self.top
    }
    /// The rectangle with left <= right and top <= bottom.
    pub fn normalized(&self) -> Rect {
        Rect::new(
            self.left.min(self.right),
            self.top.min(self.bottom),
            self.left.max(self.right),
            self.top.max(self.bottom),
        )
    }
    pub fn intersect(&self, o: &Rect) -> Rect {
        let r = Rect::new(
            self.left.max(o.left),
            self.top.max(o.top),
            self.right.min(o.right),
            self.bottom.min(o.bottom),
        );
        if r.is_empty() {
            Rect::default()
        } else {
            r
        }
    }
    /// The smallest rectangle holding both (an empty one counts for nothing).
    pub fn union(&self, o: &Rect) -> Rect {
        if self.is_empty() {
            return *o;
        }
        if o.is_empty() {
            return *self;
        }
        Rect::new(
            self.left.min(o.left),
            self.top.min(o.top),
            self.right.max(o.right),
            self.bottom.max(o.bottom),
        )
    }
    pub fn offset(&self, dx: i32, dy: i32) -> Rect {
        Rect::new(
            self.left + dx,
            self.top + dy,
            self.right + dx,
            self.bottom + dy,
        )
    }
    pub fn contains(&self, x: i32, y: i32) -> bool {
        x >= self.left && x < self.right && y >= self.top && y < self.bottom
    }
}

/// How two regions combine (the RGN_* values of CombineRgn).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    And = 1,
    Or = 2,
    Xor = 3,
    Diff = 4,
}

/// One band of a sweep: top, bottom, x intervals.
type Band = (i32, i32, Vec<(i32, i32)>);

/// A region.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Region {
    /// Canonical band list.
    pub rects: Vec<Rect>,
}

/// The x intervals a region covers inside band `[y0, y1)`.
fn intervals(r: &Region, y0: i32) -> Vec<(i32, i32)> {
    r.rects
        .iter()
        .filter(|b| b.top <= y0 && y0 < b.bottom)
        .map(|b| (b.left, b.right))
        .collect()
}

fn combine_intervals(a: &[(i32, i32)], b: &[(i32, i32)], op: Op) -> Vec<(i32, i32)> {
    let mut xs: Vec<i32> = a.iter().chain(b).flat_map(|&(l, r)| [l, r]).collect();
    xs.sort_unstable();
    xs.dedup();
    let inside = |v: &[(i32, i32)], x: i32| v.iter().any(|&(l, r)| l <= x && x < r);
    let mut out: Vec<(i32, i32)> = Vec::new();
    for w in xs.windows(2) {
        let (ia, ib) = (inside(a, w[0]), inside(b, w[0]));
        let on = match op {
            Op::And => ia && ib,
            Op::Or => ia || ib,
            Op::Xor => ia != ib,
            Op::Diff => ia && !ib,
        };
        if on {
            match out.last_mut() {
                Some(last) if last.1 == w[0] => last.1 = w[1],
                _ => out.push((w[0], w[1])),
            }
        }
    }
    out
}

impl Region {
    pub fn empty() -> Region {
        Region::default()
    }

    pub fn rect(r: Rect) -> Region {
        let r = r.normalized();
        Region {
            rects: if r.is_empty() { vec![] } else { vec![r] },
        }
    }

    /// A region from arbitrary (possibly overlapping) rectangles.
    pub fn from_rects(rs: impl IntoIterator<Item = Rect>) -> Region {
        let raw = Region {
            rects: rs.into_iter().filter(|r| !r.is_empty()).collect(),
        };
        raw.combine(&Region::empty(), Op::Or)
    }

    pub fn is_empty(&self) -> bool {
        self.rects.is_empty()
    }

    /// The bounding box (empty rectangle for an empty region).
    pub fn bounds(&self) -> Rect {
        self.rects
            .iter()
            .fold(Rect::default(), |acc, r| acc.union(r))
    }

    pub fn contains(&self, x: i32, y: i32) -> bool {
        self.rects.iter().any(|r| r.contains(x, y))
    }

    pub fn offset(&mut self, dx: i32, dy: i32) {
        for r in &mut self.rects {
            *r = r.offset(dx, dy);
        }
    }

    /// One band sweep over both regions' y edges.
    pub fn combine(&self, o: &Region, op: Op) -> Region {
        let mut ys: Vec<i32> = self
            .rects
            .iter()
            .chain(&o.rects)
            .flat_map(|r| [r.top, r.bottom])
            .collect();
        ys.sort_unstable();
        ys.dedup();
        let mut bands: Vec<Band> = Vec::new();
        for w in ys.windows(2) {
            let iv = combine_intervals(&intervals(self, w[0]), &intervals(o, w[0]), op);
            if iv.is_empty() {
                continue;
            }
            match bands.last_mut() {
                // Coalesce vertically adjacent bands with the same intervals.
                Some(last) if last.1 == w[0] && last.2 == iv => last.1 = w[1],
                _ => bands.push((w[0], w[1], iv)),
            }
        }
        Region {
            rects: bands
                .into_iter()
                .flat_map(|(t, b, iv)| iv.into_iter().map(move |(l, r)| Rect::new(l, t, r, b)))
                .collect(),
        }
    }

    pub fn intersect_rect(&self, r: Rect) -> Region {
        self.combine(&Region::rect(r), Op::And)
    }

    /// The region of pixel spans `(y, x0, x1)` (x1 exclusive).
    pub fn from_spans(spans: impl IntoIterator<Item = (i32, i32, i32)>) -> Region {
        Region::from_rects(
            spans
                .into_iter()
                .map(|(y, x0, x1)| Rect::new(x0, y, x1, y + 1)),
        )
    }

    /// The ellipse inscribed in `r` (CreateEllipticRgn: the pixels the
    /// Ellipse call fills, right and bottom edges excluded).
    pub fn ellipse(r: Rect) -> Region {
        Region::from_spans(ellipse_spans(r.normalized()))
    }

    /// A polygon's interior (`winding` for WINDING, else ALTERNATE).
    pub fn polygon(pts: &[(i32, i32)], winding: bool) -> Region {
        Region::from_spans(polygon_spans(pts, winding))
    }
}

/// The pixel rows of the ellipse inscribed in `[l, r) x [t, b)`: for each
/// row, the span of pixel centres inside the ellipse through the box's
/// edges (pixel centres at +0.5), as `(y, x0, x1)`.
pub fn ellipse_spans(r: Rect) -> Vec<(i32, i32, i32)> {
    let mut out = Vec::new();
    if r.is_empty() {
        return out;
    }
    let (w, h) = (r.width() as f64, r.height() as f64);
    let (cx, cy) = (r.left as f64 + w / 2.0, r.top as f64 + h / 2.0);
    let (a, b) = (w / 2.0, h / 2.0);
    for y in r.top..r.bottom {
        let dy = (y as f64 + 0.5 - cy) / b;
        let t = 1.0 - dy * dy;
        if t < 0.0 {
            continue;
        }
        let dx = a * t.sqrt();
        // Pixels whose centre x+0.5 lies within [cx-dx, cx+dx].
        let x0 = (cx - dx - 0.5).ceil() as i32;
        let x1 = (cx + dx - 0.5).floor() as i32 + 1;
        let (x0, x1) = (x0.max(r.left), x1.min(r.right));
        if x0 < x1 {
            out.push((y, x0, x1));
        }
    }
    out
}

/// Scanline fill of a polygon: the pixels whose centres are inside (rows
/// sampled at y+0.5, spans from ceil(xa-0.5) to ceil(xb-0.5)), ALTERNATE
/// (even-odd) or WINDING (non-zero).
pub fn polygon_spans(pts: &[(i32, i32)], winding: bool) -> Vec<(i32, i32, i32)> {
    let mut out = Vec::new();
    if pts.len() < 3 {
        return out;
    }
    let y0 = pts.iter().map(|p| p.1).min().unwrap_or(0);
    let y1 = pts.iter().map(|p| p.1).max().unwrap_or(0);
    for y in y0..y1 {
        let sy = y as f64 + 0.5;
        let mut xs: Vec<(f64, i32)> = Vec::new();
        for i in 0..pts.len() {
            let (ax, ay) = pts[i];
            let (bx, by) = pts[(i + 1) % pts.len()];
            if ay == by {
                continue;
            }
            let (lo, hi, dir) = if ay < by { (ay, by, 1) } else { (by, ay, -1) };
            if sy < lo as f64 || sy >= hi as f64 {
                continue;
            }
            let x = ax as f64 + (sy - ay as f64) * (bx - ax) as f64 / (by - ay) as f64;
            xs.push((x, dir));
        }
        xs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut count = 0;
        let mut start = 0.0;
        for (x, dir) in xs {
            let was = if winding { count != 0 } else { count % 2 == 1 };
            count += if winding { dir } else { 1 };
            let now = if winding { count != 0 } else { count % 2 == 1 };
            if now && !was {
                start = x;
            } else if was && !now {
                let x0 = (start - 0.5).ceil() as i32;
                let x1 = (x - 0.5).ceil() as i32;
                if x0 < x1 {
                    out.push((y, x0, x1));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combinations_are_canonical() {
        let a = Region::rect(Rect::new(0, 0, 10, 10));
        let b = Region::rect(Rect::new(5, 5, 15, 15));
        let cases = [
            (Op::And, vec![Rect::new(5, 5, 10, 10)]),
            (
                Op::Or,
                vec![
                    Rect::new(0, 0, 10, 5),
                    Rect::new(0, 5, 15, 10),
                    Rect::new(5, 10, 15, 15),
                ],
            ),
            (
                Op::Xor,
                vec![
                    Rect::new(0, 0, 10, 5),
                    Rect::new(0, 5, 5, 10),
                    Rect::new(10, 5, 15, 10),
                    Rect::new(5, 10, 15, 15),
                ],
            ),
            (
                Op::Diff,
                vec![Rect::new(0, 0, 10, 5), Rect::new(0, 5, 5, 10)],
            ),
        ];
        for (op, want) in cases {
            assert_eq!(a.combine(&b, op).rects, want, "{op:?}");
        }
        // Two halves of one rectangle coalesce into it.
        let halves = Region::from_rects([Rect::new(0, 0, 4, 2), Rect::new(0, 2, 4, 4)]);
        assert_eq!(halves.rects, vec![Rect::new(0, 0, 4, 4)]);
    }

    #[test]
    fn polygon_fill_rules() {
        // A 4x4 square: rows 0..4, columns 0..4 (right and bottom edges excluded).
        let sq = polygon_spans(&[(0, 0), (4, 0), (4, 4), (0, 4)], false);
        assert_eq!(sq, (0..4).map(|y| (y, 0, 4)).collect::<Vec<_>>());
        // A self-overlapping star: the centre is a hole under ALTERNATE, filled under WINDING.
        let star = [(5, 0), (8, 10), (0, 3), (10, 3), (2, 10)];
        let alt = Region::polygon(&star, false);
        let win = Region::polygon(&star, true);
        assert!(!alt.contains(5, 5) && win.contains(5, 5));
    }
}
