//! user32's text layout: DrawText / DrawTextEx (lines, word breaks,
//! prefixes, alignment, DT_CALCRECT, DRAWTEXTPARAMS margins) and
//! GetTabbedTextExtent (left- and right-aligned tab stops), with the
//! answers Windows XP gives for the edge cases Wine's text tests pin:
//! a zero count draws nothing and answers 0 (DrawTextA/ExA); an empty
//! string (or NULL with -1) under DT_CALCRECT gives an empty rectangle but
//! a line's height; DT_BOTTOM / DT_VCENTER answer the offset from the
//! rectangle's top to the text's bottom, 1 when that is 0.
//!
//! The exports are declared in `dll::user32`; this module owns the layout
//! only. It must not draw anything but text (frames, edges: `user32`) nor
//! know fonts beyond `gdi`'s face metrics.

use super::gui_structs::{self as gs, read_rect, read_str, write_rect};
use super::Env;

/// DT_* formats used here.
mod dt {
    pub const CENTER: u32 = 0x1;
    pub const RIGHT: u32 = 0x2;
    pub const VCENTER: u32 = 0x4;
    pub const BOTTOM: u32 = 0x8;
    pub const WORDBREAK: u32 = 0x10;
    pub const SINGLELINE: u32 = 0x20;
    pub const EXPANDTABS: u32 = 0x40;
    pub const TABSTOP: u32 = 0x80;
    pub const NOCLIP: u32 = 0x100;
    pub const CALCRECT: u32 = 0x400;
    pub const NOPREFIX: u32 = 0x800;
    pub const EDITCONTROL: u32 = 0x2000;
}

/// DRAWTEXTPARAMS: cbSize, iTabLength, iLeftMargin, iRightMargin, uiLengthDrawn.
const DRAWTEXTPARAMS_SIZE: u32 = 20;

/// DrawText(A/W) and DrawTextEx(A/W): `params` is DRAWTEXTPARAMS' address
/// (Ex only; 0 for none).
pub fn draw_text_call(
    env: &mut Env,
    hdc: u32,
    s: u32,
    n: i32,
    r: u32,
    fmt: u32,
    params: u32,
    wide: bool,
) -> i32 {
    if env.desktop.gdi.dc(hdc).is_none() {
        // An invalid DC: nothing else is looked at (the A call reports it).
        if !wide {
            env.last_error = crate::files::err::INVALID_HANDLE;
        }
        return 0;
    }
    let line = env.desktop.gdi.face(hdc).height();
    // The W calls: NULL draws nothing; a zero count of a non-empty string
    // answers a line's height before DRAWTEXTPARAMS is looked at.
    if wide {
        if s == 0 {
            return 0;
        }
        let mut unit = [0u8; 2];
        let nonempty = env.mem.peek(s, &mut unit).is_some() && unit != [0, 0];
        if n == 0 && nonempty {
            return line;
        }
    }
    let mut tab_length = 8;
    let margins = if params != 0 {
        // A DRAWTEXTPARAMS of the wrong size fails the call untouched.
        if env.mem.peek_u32(params) != Some(DRAWTEXTPARAMS_SIZE) {
            return 0;
        }
        let g = |o: u32| gs::read_i32(&env.mem, params + o).unwrap_or(0);
        if g(4) > 0 {
            tab_length = g(4);
        }
        (g(8), g(12))
    } else {
        (0, 0)
    };
    if n == 0 {
        return if wide { line } else { 0 };
    }
    // NULL with a count draws nothing; NULL with -1 is the empty string.
    if s == 0 && n > 0 {
        return 0;
    }
    let t = if s == 0 {
        vec![]
    } else {
        read_str(&env.mem, s, n.max(-1), wide).unwrap_or_default()
    };
    let mut fmt = fmt;
    if fmt & dt::TABSTOP != 0 && params == 0 {
        // DrawText's DT_TABSTOP: bits 8-15 are the tab length, not formats.
        tab_length = ((fmt >> 8) & 0xFF).max(1) as i32;
        fmt &= !0xFF00;
    }
    let h = draw_text(env, hdc, &t, r, fmt, margins, tab_length);
    if params != 0 && h != 0 {
        let _ = env.mem.poke_u32(params + 16, t.len() as u32);
    }
    h
}

/// DrawText's layout of `s` in the rectangle at `r` (DT_CALCRECT: only
/// measured); `margins` (left, right) from DRAWTEXTPARAMS; DT_EXPANDTABS
/// expands tabs to every `tab_length` characters.
pub fn draw_text(
    env: &mut Env,
    hdc: u32,
    s: &[u16],
    r: u32,
    fmt: u32,
    margins: (i32, i32),
    tab_length: i32,
) -> i32 {
    let Some(mut rect) = read_rect(&env.mem, r) else {
        return 0;
    };
    let face = env.desktop.gdi.face(hdc);
    let prefix = fmt & dt::NOPREFIX == 0;
    let strip = |l: &[u16]| -> Vec<u16> {
        if !prefix {
            return l.to_vec();
        }
        let mut v = Vec::new();
        let mut i = 0;
        while i < l.len() {
            if l[i] == b'&' as u16 && i + 1 < l.len() {
                i += 1;
            }
            v.push(l[i]);
            i += 1;
        }
        v
    };
    let single = fmt & dt::SINGLELINE != 0;
    let mut lines: Vec<Vec<u16>> = if single {
        vec![strip(
            &s.iter()
                .copied()
                .filter(|&c| c != 10 && c != 13)
                .collect::<Vec<_>>(),
        )]
    } else if s.is_empty() {
        // An empty text has no line (its rectangle is empty) but answers
        // a line's height.
        vec![]
    } else {
        s.split(|&c| c == 10)
            .map(|l| strip(&l.iter().copied().filter(|&c| c != 13).collect::<Vec<_>>()))
            .collect()
    };
    if fmt & dt::EXPANDTABS != 0 {
        let n = tab_length.max(1) as usize;
        for l in &mut lines {
            let mut out = Vec::with_capacity(l.len());
            for &c in l.iter() {
                if c == 9 {
                    let to = (out.len() / n + 1) * n;
                    out.resize(to, 32);
                } else {
                    out.push(c);
                }
            }
            *l = out;
        }
    }
    let (ml, mr) = margins;
    if fmt & dt::WORDBREAK != 0 {
        // DT_WORDBREAK: wrap at spaces to the rectangle's width;
        // DT_EDITCONTROL also breaks a word that does not fit a line.
        let maxc = ((rect.width() - ml - mr) / face.char_width()).max(1) as usize;
        let split_words = fmt & dt::EDITCONTROL != 0;
        let mut out = Vec::new();
        for l in lines {
            let mut cur: Vec<u16> = Vec::new();
            for word in l.split(|&c| c == 32) {
                if !cur.is_empty() && cur.len() + 1 + word.len() > maxc {
                    out.push(std::mem::take(&mut cur));
                }
                if !cur.is_empty() {
                    cur.push(32);
                }
                let mut word = word;
                while split_words && cur.len() + word.len() > maxc && word.len() > 1 {
                    let take = maxc.saturating_sub(cur.len()).max(1).min(word.len());
                    cur.extend_from_slice(&word[..take]);
                    out.push(std::mem::take(&mut cur));
                    word = &word[take..];
                }
                cur.extend_from_slice(word);
            }
            out.push(cur);
        }
        lines = out;
    }
    let lh = face.height();
    let total = lh * lines.len() as i32;
    let answer = total.max(lh);
    // DT_VCENTER / DT_BOTTOM (single line): the offset from the top to the
    // text's bottom, 1 when it is 0.
    let offset = |top: i32, y: i32| {
        let o = y + lh - top;
        if o == 0 {
            1
        } else {
            o
        }
    };
    let y = if single && fmt & dt::VCENTER != 0 {
        rect.top + (rect.height() - lh) / 2
    } else if single && fmt & dt::BOTTOM != 0 {
        rect.bottom - lh
    } else {
        rect.top
    };
    let returned = if single && fmt & (dt::VCENTER | dt::BOTTOM) != 0 {
        offset(rect.top, y)
    } else {
        answer
    };
    if fmt & dt::CALCRECT != 0 {
        let w = lines.iter().map(|l| face.width(l.len())).max().unwrap_or(0);
        rect.right = rect.left + ml + w + mr;
        rect.bottom = rect.top + total;
        write_rect(&mut env.mem, r, rect);
        return returned;
    }
    let mut y = y;
    let (g, m) = (&mut env.desktop.gdi, &mut env.mem);
    g.draw(m, hdc, |t| {
        if fmt & dt::NOCLIP == 0 {
            // Clip to the rectangle unless DT_NOCLIP.
            let tr = t.dc.rect_to_target(rect);
            t.clip = t.clip.intersect_rect(tr);
        }
        for l in &lines {
            let w = face.width(l.len());
            let x = match fmt & (dt::CENTER | dt::RIGHT) {
                dt::CENTER => rect.left + ml + (rect.width() - ml - mr - w) / 2,
                dt::RIGHT => rect.right - mr - w,
                _ => rect.left + ml,
            };
            t.text(x, y, l, face);
            y += lh;
        }
    });
    returned
}

/// GetTabbedTextExtent: the string's width with tabs expanded and the cell
/// height, as MAKELONG(width, height); 0 for an empty count. Tab stops:
/// none, every 8 average characters; one, every that many pixels; more,
/// those positions. A negative stop is a right-aligned one: the text after
/// the tab ends at the first such stop it fits before without touching
/// what came before.
pub fn tabbed_extent(
    env: &mut Env,
    hdc: u32,
    s: u32,
    n: i32,
    ntabs: i32,
    tabs: u32,
    wide: bool,
) -> u32 {
    if n <= 0 {
        return 0;
    }
    let t = read_str(&env.mem, s, n, wide).unwrap_or_default();
    let face = env.desktop.gdi.face(hdc);
    let cw = face.char_width();
    let stops: Vec<i32> = (0..ntabs.clamp(0, 256) as u32)
        .filter_map(|i| gs::read_i32(&env.mem, tabs + 4 * i))
        .collect();
    let width = extent_of(&t, cw, &stops);
    (width as u32 & 0xFFFF) | (face.height() as u32) << 16
}

/// The tab layout of `t` in cells `cw` wide (see [`tabbed_extent`]).
fn extent_of(t: &[u16], cw: i32, stops: &[i32]) -> i32 {
    // The k-th stop (k = 0, 1, ...) and whether it right-aligns.
    let stop = |k: usize| -> Option<(i32, bool)> {
        match stops {
            [] => Some(((k as i32 + 1) * 8 * cw, false)),
            [d] if *d != 0 => Some(((k as i32 + 1) * d.abs(), *d < 0)),
            [_] => None,
            _ => stops.get(k).map(|&p| (p.abs(), p < 0)),
        }
    };
    let mut segs = t.split(|&c| c == 9);
    let mut x = segs.next().map_or(0, |s| s.len() as i32 * cw);
    for seg in segs {
        let w = seg.len() as i32 * cw;
        let mut k = 0;
        x = loop {
            match stop(k) {
                // Past the last stop a tab is one cell.
                None => break x + cw + w,
                Some((p, true)) if p - w > x => break p,
                Some((p, false)) if p > x => break p + w,
                Some(_) => k += 1,
            }
        };
    }
    x
}

#[cfg(test)]
mod tests {
    use super::extent_of;

    /// Wine's text.c TABTEST table, cx = 6: the stops every `tab` pixels
    /// (one stop, or eight multiples), left- and right-aligned.
    #[test]
    fn tab_stops_as_windows_lays_them_out() {
        let cx = 6;
        let u = |s: &str| s.encode_utf16().collect::<Vec<u16>>();
        for t in -1..=1 {
            let tab = cx * 4 + t;
            for count in [1usize, 8] {
                let right: Vec<i32> = (1..=count as i32).map(|i| -i * tab).collect();
                let left: Vec<i32> = (1..=count as i32).map(|i| i * tab).collect();
                let cases_right = [
                    ("\t", tab),
                    ("xxx\t", tab),
                    ("\tx", tab),
                    ("\t\t", 2 * tab),
                    ("\tx\t", 2 * tab),
                    ("x\tx", tab),
                    ("xx\tx", tab),
                    ("xxx\tx", if 4 * cx >= tab { 2 * tab } else { tab }),
                    ("xxxx\tx", 2 * tab),
                    ("xxxxx\tx", 2 * tab),
                ];
                for (s, want) in cases_right {
                    assert_eq!(
                        extent_of(&u(s), cx, &right),
                        want,
                        "{s:?} tab -{tab} x{count}"
                    );
                }
                let cases_left = [
                    ("\t", tab),
                    ("xxx\t", tab),
                    ("\tx", tab + cx),
                    ("\t\t", 2 * tab),
                    ("xx\tx", tab + cx),
                    ("xxx\tx", tab + cx),
                    ("xxxx\tx", if t > 0 { tab + cx } else { 2 * tab + cx }),
                    ("xxxxx\tx", 2 * tab + cx),
                ];
                for (s, want) in cases_left {
                    assert_eq!(
                        extent_of(&u(s), cx, &left),
                        want,
                        "{s:?} tab {tab} x{count}"
                    );
                }
            }
        }
    }
}
