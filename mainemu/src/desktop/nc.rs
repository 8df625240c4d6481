//! The non-client area drawn as Windows 98's classic look: raised 3D
//! frame edges, the sizing or dialog frame, the caption bar (navy to blue
//! gradient when active, greys when not) with bold title text, the caption
//! buttons (minimize, maximize, close), and the menu bar.
//!
//! Owns the pixels of a window's frame, from its rectangles, style and
//! title. It must not decide when to draw (the window manager does) or
//! touch the client area.

use super::metrics::{self, color, has_caption, sys_color, ws};
use crate::gdi::bits::Colorref;
use crate::gdi::font::Face;
use crate::gdi::raster::{Canvas, Paint};
use crate::gdi::region::Rect;

fn solid(c: &Canvas, col: Colorref) -> Paint {
    Paint::Solid(c.bits.from_color(col))
}

/// Lines of one pixel along the top/left (`tl`) and bottom/right (`br`) of `r`.
pub fn edge(c: &mut Canvas, r: Rect, tl: Colorref, br: Colorref) {
    let (a, b) = (solid(c, tl), solid(c, br));
    c.fill_rect(Rect::new(r.left, r.top, r.right - 1, r.top + 1), &a);
    c.fill_rect(Rect::new(r.left, r.top, r.left + 1, r.bottom - 1), &a);
    c.fill_rect(Rect::new(r.left, r.bottom - 1, r.right, r.bottom), &b);
    c.fill_rect(Rect::new(r.right - 1, r.top, r.right, r.bottom), &b);
}

fn shrink(r: Rect, n: i32) -> Rect {
    Rect::new(r.left + n, r.top + n, r.right - n, r.bottom - n)
}

/// DrawEdge EDGE_RAISED (outer: 3D light / dark shadow, inner: highlight / shadow).
pub fn raised(c: &mut Canvas, r: Rect) {
    edge(
        c,
        r,
        sys_color(color::LIGHT3D),
        sys_color(color::DKSHADOW3D),
    );
    edge(
        c,
        shrink(r, 1),
        sys_color(color::BTNHIGHLIGHT),
        sys_color(color::BTNSHADOW),
    );
}

/// DrawEdge EDGE_SUNKEN.
pub fn sunken(c: &mut Canvas, r: Rect) {
    edge(
        c,
        r,
        sys_color(color::BTNSHADOW),
        sys_color(color::BTNHIGHLIGHT),
    );
    edge(
        c,
        shrink(r, 1),
        sys_color(color::DKSHADOW3D),
        sys_color(color::LIGHT3D),
    );
}

/// A push button face: raised edge and button-face fill (pressed: sunken).
pub fn button(c: &mut Canvas, r: Rect, pressed: bool) {
    let f = solid(c, sys_color(color::BTNFACE));
    c.fill_rect(r, &f);
    if pressed {
        edge(
            c,
            r,
            sys_color(color::DKSHADOW3D),
            sys_color(color::BTNHIGHLIGHT),
        );
        edge(
            c,
            shrink(r, 1),
            sys_color(color::BTNSHADOW),
            sys_color(color::LIGHT3D),
        );
    } else {
        raised(c, r);
    }
}

/// Which caption button.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CapButton {
    Close,
    Minimize,
    Maximize,
}

/// A caption button with its glyph.
pub fn caption_button(c: &mut Canvas, r: Rect, which: CapButton, enabled: bool) {
    button(c, r, false);
    let ink = solid(
        c,
        sys_color(if enabled {
            color::BTNTEXT
        } else {
            color::BTNSHADOW
        }),
    );
    let (x, y) = (r.left + (r.width() - 8) / 2, r.top + (r.height() - 7) / 2);
    match which {
        CapButton::Close => {
            // An X of two-pixel-wide diagonals, 8 x 7.
            for i in 0..7 {
                c.fill_rect(Rect::new(x + i, y + i, x + i + 2, y + i + 1), &ink);
                c.fill_rect(Rect::new(x + 6 - i, y + i, x + 8 - i, y + i + 1), &ink);
            }
        }
        CapButton::Minimize => {
            c.fill_rect(Rect::new(x + 1, y + 5, x + 7, y + 7), &ink);
        }
        CapButton::Maximize => {
            c.fill_rect(Rect::new(x, y - 1, x + 9, y + 1), &ink);
            c.fill_rect(Rect::new(x, y - 1, x + 1, y + 8), &ink);
            c.fill_rect(Rect::new(x + 8, y - 1, x + 9, y + 8), &ink);
            c.fill_rect(Rect::new(x, y + 7, x + 9, y + 8), &ink);
        }
    }
}

/// Text in the 6x13 font with the cell's top-left at (x, y), transparent background.
/// `&` marks the next character as the mnemonic (underlined; `&&` is a literal `&`).
pub fn label(c: &mut Canvas, x: i32, y: i32, text: &[u16], col: Colorref, bold: bool) {
    let face = Face::new(0, if bold { 700 } else { 400 }, false, false);
    let fg = c.bits.from_color(col);
    let mut shown = Vec::new();
    let mut underline = None;
    let mut i = 0;
    while i < text.len() {
        if text[i] == b'&' as u16 && i + 1 < text.len() {
            if text[i + 1] != b'&' as u16 {
                underline = Some(shown.len());
            }
            shown.push(text[i + 1]);
            i += 2;
            continue;
        }
        if text[i] == b'\t' as u16 {
            break;
        }
        shown.push(text[i]);
        i += 1;
    }
    face.draw(c, x, y, &shown, fg, None);
    if let Some(u) = underline {
        let ux = x + face.char_width() * u as i32;
        c.fill_rect(
            Rect::new(
                ux,
                y + face.ascent() + 1,
                ux + face.char_width(),
                y + face.ascent() + 2,
            ),
            &Paint::Solid(fg),
        );
    }
}

/// Width of a menu or button label (mnemonic markers not counted).
pub fn label_width(text: &[u16]) -> i32 {
    let mut n = 0;
    let mut i = 0;
    while i < text.len() {
        if text[i] == b'\t' as u16 {
            break;
        }
        if text[i] == b'&' as u16 && i + 1 < text.len() {
            i += 1;
        }
        n += 1;
        i += 1;
    }
    Face::new(0, 400, false, false).width(n)
}

/// The rectangles of a top-level window's parts, screen coordinates.
pub struct Layout {
    pub caption: Option<Rect>,
    pub menu: Option<Rect>,
    pub close: Option<Rect>,
    pub max: Option<Rect>,
    pub min: Option<Rect>,
}

pub fn layout(win: Rect, style: u32, ex: u32, menu: bool) -> Layout {
    let f = metrics::frame_width(style, ex & !(ws::EX_CLIENTEDGE | ws::EX_STATICEDGE));
    let inner = Rect::new(win.left + f, win.top + f, win.right - f, win.bottom - f);
    let caption = has_caption(style).then(|| {
        Rect::new(
            inner.left,
            inner.top,
            inner.right,
            inner.top + metrics::CAPTION - 1,
        )
    });
    let menu_top = inner.top
        + if caption.is_some() {
            metrics::CAPTION
        } else {
            0
        };
    let menu = menu.then(|| {
        Rect::new(
            inner.left,
            menu_top,
            inner.right,
            menu_top + metrics::MENU_BAR,
        )
    });
    let (mut close, mut max, mut min) = (None, None, None);
    if let (Some(cap), true) = (caption, style & ws::SYSMENU != 0) {
        let (bw, bh) = (16, 14);
        let y = cap.top + 2;
        let cl = Rect::new(cap.right - 2 - bw, y, cap.right - 2, y + bh);
        close = Some(cl);
        if style & (ws::MINIMIZEBOX | ws::MAXIMIZEBOX) != 0 {
            let mx = Rect::new(cl.left - 2 - bw, y, cl.left - 2, y + bh);
            max = Some(mx);
            min = Some(Rect::new(mx.left - bw, y, mx.left, y + bh));
        }
    }
    Layout {
        caption,
        menu,
        close,
        max,
        min,
    }
}

/// Draws a window's frame, caption and menu bar (`menu`: the top-level item labels).
#[allow(clippy::too_many_arguments)]
pub fn draw(
    c: &mut Canvas,
    win: Rect,
    style: u32,
    ex: u32,
    title: &[u16],
    active: bool,
    menu: Option<&[Vec<u16>]>,
) {
    let plain_ex = ex & !(ws::EX_CLIENTEDGE | ws::EX_STATICEDGE);
    let f = metrics::frame_width(style, plain_ex);
    if f == 1 {
        edge(
            c,
            win,
            sys_color(color::WINDOWFRAME),
            sys_color(color::WINDOWFRAME),
        );
    } else if f >= 2 {
        raised(c, win);
        let border = solid(c, sys_color(color::ACTIVEBORDER));
        for k in 2..f {
            let r = shrink(win, k);
            c.fill_rect(Rect::new(r.left, r.top, r.right, r.top + 1), &border);
            c.fill_rect(Rect::new(r.left, r.bottom - 1, r.right, r.bottom), &border);
            c.fill_rect(Rect::new(r.left, r.top, r.left + 1, r.bottom), &border);
            c.fill_rect(Rect::new(r.right - 1, r.top, r.right, r.bottom), &border);
        }
    }
    let l = layout(win, style, ex, menu.is_some());
    if let Some(cap) = l.caption {
        // Gradient from the caption colour to the gradient colour, left to right.
        let (a, b) = if active {
            (
                sys_color(color::ACTIVECAPTION),
                sys_color(color::GRADIENTACTIVECAPTION),
            )
        } else {
            (
                sys_color(color::INACTIVECAPTION),
                sys_color(color::GRADIENTINACTIVECAPTION),
            )
        };
        let w = cap.width().max(1);
        for x in cap.left..cap.right {
            let t = (x - cap.left) as i64;
            let mix = |s: u32| -> u32 {
                let (ca, cb) = ((a >> s) & 0xFF, (b >> s) & 0xFF);
                ((ca as i64 + (cb as i64 - ca as i64) * t / w as i64) as u32) << s
            };
            let col = mix(0) | mix(8) | mix(16);
            let p = solid(c, col);
            c.fill_rect(Rect::new(x, cap.top, x + 1, cap.bottom), &p);
        }
        // The line under the caption.
        let face = solid(c, sys_color(color::BTNFACE));
        c.fill_rect(
            Rect::new(cap.left, cap.bottom, cap.right, cap.bottom + 1),
            &face,
        );
        let tc = sys_color(if active {
            color::CAPTIONTEXT
        } else {
            color::INACTIVECAPTIONTEXT
        });
        let text_right = l.min.or(l.close).map_or(cap.right, |r| r.left - 2);
        let clip = c
            .clip
            .intersect_rect(Rect::new(cap.left, cap.top, text_right, cap.bottom));
        let mut sub = Canvas {
            bits: &mut *c.bits,
            clip: &clip,
            rop2: 13,
        };
        label(&mut sub, cap.left + 3, cap.top + 2, title, tc, true);
        for (r, which, on) in [
            (l.min, CapButton::Minimize, style & ws::MINIMIZEBOX != 0),
            (l.max, CapButton::Maximize, style & ws::MAXIMIZEBOX != 0),
            (l.close, CapButton::Close, true),
        ] {
            if let Some(r) = r {
                caption_button(c, r, which, on);
            }
        }
    }
    if let (Some(mr), Some(items)) = (l.menu, menu) {
        let face = solid(c, sys_color(color::MENU));
        c.fill_rect(mr, &face);
        let mut x = mr.left;
        for it in items {
            let w = label_width(it) + 12;
            label(c, x + 6, mr.top + 3, it, sys_color(color::MENUTEXT), false);
            x += w;
        }
    }
}

/// The menu bar item under x (screen), with its rectangle.
pub fn menu_item_at(mr: Rect, items: &[Vec<u16>], x: i32) -> Option<(usize, Rect)> {
    let mut left = mr.left;
    for (i, it) in items.iter().enumerate() {
        let w = label_width(it) + 12;
        if x >= left && x < left + w {
            return Some((i, Rect::new(left, mr.top, left + w, mr.bottom)));
        }
        left += w;
    }
    None
}
