//! The one bitmap font every GDI font is drawn with: X11's misc-fixed 6x13
//! (public domain), regular and bold, ISO 8859-1, taken from the
//! `embedded-graphics` crate's font tables and scaled by whole multiples
//! for larger requested heights.
//!
//! Owns: glyph bitmaps, the metrics GetTextMetrics and GetTextExtentPoint
//! report, and drawing a string onto a [`Canvas`]. It must not know about
//! DCs or text alignment (the dc module positions the string).

use super::raster::{Canvas, Paint};
use embedded_graphics::{
    mono_font::{iso_8859_1, MonoFont, MonoTextStyle},
    pixelcolor::BinaryColor,
    prelude::*,
    text::{Baseline, Text},
};

/// Cell size of the base font.
pub const CELL_W: i32 = 6;
pub const CELL_H: i32 = 13;

/// Glyph bitmaps of one weight: 256 cells of `CELL_W x CELL_H` booleans.
pub struct Glyphs {
    cells: Vec<[bool; (CELL_W * CELL_H) as usize]>,
    /// Rows from the cell top to the baseline row (inclusive count).
    pub ascent: i32,
}

struct Grid {
    px: [bool; (CELL_W * CELL_H) as usize],
}

impl OriginDimensions for Grid {
    fn size(&self) -> Size {
        Size::new(CELL_W as u32, CELL_H as u32)
    }
}

impl DrawTarget for Grid {
    type Color = BinaryColor;
    type Error = std::convert::Infallible;
    fn draw_iter<I: IntoIterator<Item = Pixel<BinaryColor>>>(
        &mut self,
        it: I,
    ) -> Result<(), Self::Error> {
        for Pixel(p, c) in it {
            if c.is_on() && p.x >= 0 && p.y >= 0 && p.x < CELL_W && p.y < CELL_H {
                self.px[(p.y * CELL_W + p.x) as usize] = true;
            }
        }
        Ok(())
    }
}

fn build(font: &MonoFont) -> Glyphs {
    let style = MonoTextStyle::new(font, BinaryColor::On);
    let mut cells = Vec::with_capacity(256);
    for code in 0u32..256 {
        let mut g = Grid {
            px: [false; (CELL_W * CELL_H) as usize],
        };
        if code >= 0x20 && code != 0x7F {
            let s = char::from_u32(code).unwrap_or('?').to_string();
            let _ = Text::with_baseline(&s, Point::zero(), style, Baseline::Top).draw(&mut g);
        }
        cells.push(g.px);
    }
    Glyphs {
        cells,
        ascent: font.baseline as i32 + 1,
    }
}

/// The regular and bold glyph sets, built once.
pub fn glyphs(bold: bool) -> &'static Glyphs {
    static REG: std::sync::OnceLock<Glyphs> = std::sync::OnceLock::new();
    static BOLD: std::sync::OnceLock<Glyphs> = std::sync::OnceLock::new();
    if bold {
        BOLD.get_or_init(|| build(&iso_8859_1::FONT_6X13_BOLD))
    } else {
        REG.get_or_init(|| build(&iso_8859_1::FONT_6X13))
    }
}

/// A realized font: weight, scale and decorations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Face {
    pub bold: bool,
    /// Whole-pixel magnification (1 for heights up to 19 pixels).
    pub scale: i32,
    pub underline: bool,
    pub strikeout: bool,
}

impl Face {
    /// The face for a LOGFONT height (negative: character height, positive:
    /// cell height, 0: default) and weight.
    pub fn new(height: i32, weight: i32, underline: bool, strikeout: bool) -> Face {
        let h = height.abs();
        let scale = if h == 0 {
            1
        } else {
            ((h + CELL_H / 2) / CELL_H).max(1)
        };
        Face {
            bold: weight >= 600,
            scale,
            underline,
            strikeout,
        }
    }

    pub fn height(&self) -> i32 {
        CELL_H * self.scale
    }
    pub fn ascent(&self) -> i32 {
        glyphs(self.bold).ascent * self.scale
    }
    pub fn descent(&self) -> i32 {
        self.height() - self.ascent()
    }
    pub fn char_width(&self) -> i32 {
        CELL_W * self.scale
    }
    /// The average character width as Windows computes it for dialog base
    /// units and GdiGetCharDimensions: the extent of "A".."Z" "a".."z",
    /// `(cx / 26 + 1) / 2` (Microsoft KB 125681).
    pub fn average_width(&self) -> i32 {
        (self.width(52) / 26 + 1) / 2
    }
    /// Width of `n` characters.
    pub fn width(&self, n: usize) -> i32 {
        self.char_width() * n as i32
    }

    /// Draws `text` (Latin-1 codes; others as '?') with its cell's top-left
    /// at (x, y) in device space: `bg` fills each cell first (OPAQUE), then
    /// the glyph pixels take `fg`.
    pub fn draw(&self, c: &mut Canvas, x: i32, y: i32, text: &[u16], fg: u32, bg: Option<u32>) {
        let g = glyphs(self.bold);
        let k = self.scale;
        if let Some(b) = bg {
            c.fill_rect(
                super::region::Rect::new(x, y, x + self.width(text.len()), y + self.height()),
                &Paint::Solid(b),
            );
        }
        let fgp = Paint::Solid(fg);
        for (i, &ch) in text.iter().enumerate() {
            let code = if ch < 256 { ch as usize } else { b'?' as usize };
            let cell = &g.cells[code];
            let cx = x + i as i32 * self.char_width();
            for row in 0..CELL_H {
                let mut run: Option<i32> = None;
                for col in 0..=CELL_W {
                    let on = col < CELL_W && cell[(row * CELL_W + col) as usize];
                    match (on, run) {
                        (true, None) => run = Some(col),
                        (false, Some(s)) => {
                            for dy in 0..k {
                                c.span(cy(y, row, k, dy), cx + s * k, cx + col * k, &fgp);
                            }
                            run = None;
                        }
                        _ => {}
                    }
                }
            }
            if self.underline {
                let uy = y + self.ascent() + k - 1;
                c.span(uy, cx, cx + self.char_width(), &fgp);
            }
            if self.strikeout {
                let sy = y + self.ascent() * 2 / 3;
                c.span(sy, cx, cx + self.char_width(), &fgp);
            }
        }
    }
}

fn cy(y: i32, row: i32, k: i32, dy: i32) -> i32 {
    y + row * k + dy
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glyphs_have_ink_and_metrics() {
        let g = glyphs(false);
        let ink = |c: u8| g.cells[c as usize].iter().filter(|&&b| b).count();
        assert_eq!(ink(b' '), 0);
        assert!(ink(b'A') > 10, "{}", ink(b'A'));
        assert!(ink(b'W') > ink(b'.'));
        assert!(
            glyphs(true).cells[b'l' as usize]
                .iter()
                .filter(|&&b| b)
                .count()
                > ink(b'l')
        );
        let f = Face::new(0, 400, false, false);
        assert_eq!(
            (f.height(), f.char_width(), f.ascent() + f.descent()),
            (13, 6, 13)
        );
        assert_eq!(Face::new(-26, 700, false, false).scale, 2);
    }
}
