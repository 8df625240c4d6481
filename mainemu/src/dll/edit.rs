//! The EDIT window class: a host-side window procedure (an internal
//! `EditWndProc` thunk, not exported) over the control's text, caret and
//! selection. Single- and multi-line text (lines split at CR LF), typing
//! (WM_CHAR: printable characters replace the selection, Backspace, Enter
//! in multi-line controls), caret keys (Left/Right/Home/End, Delete, with
//! Shift extending the selection), a click places the caret and takes the
//! focus, WM_SETTEXT/GETTEXT(LENGTH), and the EM_* messages programs send
//! at start-up (selection, modify flag, limit, margins, line count).
//! EN_CHANGE goes to the parent after each edit. Painting: white
//! background, the text in the control's font, the selection inverted
//! (highlight colours), a one-pixel caret while focused (no blinking:
//! blinking would be wall time). Not modelled: scrolling, word wrap, undo,
//! the clipboard, password characters.
//!
//! Owns the control's state and its message semantics. It must not keep
//! window-manager state (desktop does) or draw outside its client area.

use super::controls::dlgc;
use super::dialog::{DC_HASDEFID, DM_GETDEFID, WM_NEXTDLGCTL};
use super::gui_structs::{self as gs, read_str};
use super::{kernel32, user32, Env, Ret};
use crate::desktop::metrics::{self, color};
use crate::desktop::wm;
use crate::gdi::raster::Paint;
use crate::gdi::region::Rect;

/// One edit control's state (kept in `Desktop::edits` by window handle).
#[derive(Clone, Debug, Default)]
pub struct EditText {
    pub text: Vec<u16>,
    /// The caret (an index into `text`) and the selection's other end.
    pub caret: usize,
    pub anchor: usize,
    pub modified: bool,
    pub limit: usize,
    pub margins: (i32, i32),
    /// A dialog asked WM_GETDLGCODE with a message: the control is in a
    /// dialog, so a multi-line edit passes Tab, Escape and Enter on to it.
    pub dialog_mode: bool,
    /// EM_GETHANDLE/EM_SETHANDLE: the local memory block (process heap,
    /// fixed, so the handle is the address) that holds the text while the
    /// application may read and write it; every message reads the text
    /// back from it first and writes a changed text into it after.
    pub handle: Option<u32>,
}

impl EditText {
    fn sel(&self) -> (usize, usize) {
        (self.caret.min(self.anchor), self.caret.max(self.anchor))
    }
    fn replace_sel(&mut self, s: &[u16]) {
        let (a, b) = self.sel();
        let room = self.limit.saturating_sub(self.text.len() - (b - a));
        let s = &s[..s.len().min(room)];
        self.text.splice(a..b, s.iter().copied());
        self.caret = a + s.len();
        self.anchor = self.caret;
        self.modified = true;
    }
    /// (line, column) of a text index; lines end at LF.
    fn line_col(&self, i: usize) -> (usize, usize) {
        let before = &self.text[..i.min(self.text.len())];
        let line = before.iter().filter(|&&u| u == 10).count();
        let col = before.iter().rev().take_while(|&&u| u != 10).count();
        (line, col)
    }
}

const ES_MULTILINE: u32 = 0x4;
const ES_WANTRETURN: u32 = 0x1000;
const EN_CHANGE: u32 = 0x300;
const DEFAULT_LIMIT: usize = 30_000;

/// EM_* messages.
mod em {
    pub const GETSEL: u32 = 0xB0;
    pub const SETSEL: u32 = 0xB1;
    pub const SCROLLCARET: u32 = 0xB7;
    pub const GETMODIFY: u32 = 0xB8;
    pub const SETMODIFY: u32 = 0xB9;
    pub const GETLINECOUNT: u32 = 0xBA;
    pub const LINEINDEX: u32 = 0xBB;
    pub const LINELENGTH: u32 = 0xC1;
    pub const LINEFROMCHAR: u32 = 0xC9;
    pub const REPLACESEL: u32 = 0xC2;
    pub const LIMITTEXT: u32 = 0xC5;
    pub const CANUNDO: u32 = 0xC6;
    pub const EMPTYUNDOBUFFER: u32 = 0xCD;
    pub const GETLIMITTEXT: u32 = 0xD5;
    pub const SETHANDLE: u32 = 0xBC;
    pub const GETHANDLE: u32 = 0xBD;
    pub const SETMARGINS: u32 = 0xD3;
}

mod internal {
    crate::dll! { "user32.dll";
        stdcall fn EditWndProc(env, h: u32, msg: u32, wp: u32, lp: u32) -> super::Ret { super::edit_proc(env, h, msg, wp, lp) }
    }
}

/// The guest address of the EDIT class's window procedure.
pub fn wndproc(env: &mut Env) -> u32 {
    internal::DLL.guest_addr(env, 0)
}

fn state(env: &mut Env, h: u32) -> &mut EditText {
    env.desktop.edits.entry(h).or_insert_with(|| EditText {
        limit: DEFAULT_LIMIT,
        ..Default::default()
    })
}

fn style(env: &Env, h: u32) -> u32 {
    env.desktop.win(h).map_or(0, |w| w.style)
}

/// Redraws now and tells the parent about a change (EN_CHANGE).
fn changed(env: &mut Env, h: u32) -> Ret {
    changed_then(env, h, 0)
}

/// `changed`, answering `result` (WM_CHAR's is 1).
fn changed_then(env: &mut Env, h: u32, result: u32) -> Ret {
    paint(env, h);
    let (parent, id) = env.desktop.win(h).map_or((0, 0), |w| (w.parent, w.id));
    user32::send(
        env,
        parent,
        wm::COMMAND,
        id & 0xFFFF | EN_CHANGE << 16,
        h,
        move |_, _| Ret::Value(result),
    )
}

/// The text's bytes in a local buffer (NUL-terminated, the window's character size).
fn text_bytes(t: &[u16], wide: bool) -> Vec<u8> {
    let mut v = Vec::with_capacity(2 * t.len() + 2);
    for &u in t.iter().chain(std::iter::once(&0)) {
        if wide {
            v.extend(u.to_le_bytes());
        } else {
            v.push(u as u8);
        }
    }
    v
}

/// Stores the text into the control's local buffer, moving it to a larger
/// block when it no longer fits (as LocalReAlloc of a moveable block would).
fn store_handle(env: &mut Env, h: u32, wide: bool) {
    let Some(s) = env.desktop.edits.get(&h) else {
        return;
    };
    let (Some(mut a), b) = (s.handle, text_bytes(&s.text, wide)) else {
        return;
    };
    if (kernel32::DLL.call("LocalSize", env, &[a]).value() as usize) < b.len() {
        a = kernel32::DLL
            .call("LocalAlloc", env, &[0, b.len().max(64) as u32])
            .value();
        if a == 0 {
            return;
        }
        state(env, h).handle = Some(a);
    }
    env.mem.poke(a, &b);
}

fn edit_proc(env: &mut Env, h: u32, msg: u32, wp: u32, lp: u32) -> Ret {
    let wide = env.desktop.win(h).is_some_and(|w| w.wide);
    // The application may have written into the buffer EM_GETHANDLE gave it.
    let before = match env.desktop.edits.get(&h).and_then(|s| s.handle) {
        Some(a) if msg != wm::NCDESTROY => {
            let t = read_str(&env.mem, a, -1, wide).unwrap_or_default();
            state(env, h).text = t.clone();
            Some(t)
        }
        _ => None,
    };
    let r = edit_message(env, h, msg, wp, lp, wide);
    if let Some(t) = before {
        if env.desktop.edits.get(&h).is_some_and(|s| s.text != t) {
            store_handle(env, h, wide);
        }
    }
    r
}

fn edit_message(env: &mut Env, h: u32, msg: u32, wp: u32, lp: u32, wide: bool) -> Ret {
    match msg {
        // Only a multi-line control hands out its buffer; the block is the
        // process heap's (LocalAlloc, fixed: the handle is its address).
        em::GETHANDLE if style(env, h) & ES_MULTILINE != 0 => {
            if let Some(a) = state(env, h).handle {
                return Ret::Value(a);
            }
            let n = text_bytes(&state(env, h).text, wide).len().max(64) as u32;
            let a = kernel32::DLL.call("LocalAlloc", env, &[0, n]).value();
            if a != 0 {
                state(env, h).handle = Some(a);
                store_handle(env, h, wide);
            }
            Ret::Value(a)
        }
        em::GETHANDLE => Ret::Value(0),
        em::SETHANDLE if style(env, h) & ES_MULTILINE != 0 => {
            let t = read_str(&env.mem, wp, -1, wide).unwrap_or_default();
            let s = state(env, h);
            s.handle = (wp != 0).then_some(wp);
            s.text = t;
            s.caret = 0;
            s.anchor = 0;
            s.modified = false;
            paint(env, h);
            Ret::Value(0)
        }
        em::SETHANDLE => Ret::Value(0),
        wm::CREATE => {
            let t = env
                .desktop
                .win(h)
                .map(|w| w.title.clone())
                .unwrap_or_default();
            let s = state(env, h);
            s.text = t;
            Ret::Value(0)
        }
        wm::NCDESTROY => {
            env.desktop.edits.remove(&h);
            Ret::Value(0)
        }
        wm::SETTEXT => {
            let t = read_str(&env.mem, lp, -1, wide).unwrap_or_default();
            let s = state(env, h);
            s.text = t;
            s.caret = 0;
            s.anchor = 0;
            s.modified = false;
            paint(env, h);
            Ret::Value(1)
        }
        wm::GETTEXT => {
            let t = state(env, h).text.clone();
            Ret::Value(gs::write_str(&mut env.mem, lp, wp, &t, wide))
        }
        wm::GETTEXTLENGTH => Ret::Value(state(env, h).text.len() as u32),
        wm::PAINT => {
            paint(env, h);
            Ret::Value(0)
        }
        wm::ERASEBKGND => Ret::Value(1),
        wm::SETFOCUS | wm::KILLFOCUS => {
            paint(env, h);
            Ret::Value(0)
        }
        // Arrows, characters, EM_SETSEL; a multi-line edit wants every key
        // (DLGC_WANTALLKEYS): 0x89 or 0x8D, as Windows' edit answers.
        wm::GETDLGCODE => {
            let multi = style(env, h) & ES_MULTILINE != 0;
            if lp != 0 {
                state(env, h).dialog_mode = true;
            }
            Ret::Value(
                dlgc::WANTARROWS
                    | dlgc::WANTCHARS
                    | dlgc::HASSETSEL
                    | if multi { dlgc::WANTALLKEYS } else { 0 },
            )
        }
        // A multi-line edit in a dialog hands Tab (WM_NEXTDLGCTL), Escape
        // (WM_CLOSE) and Enter without ES_WANTRETURN (to the default
        // button) to the dialog.
        wm::KEYDOWN
            if matches!(wp, 0x09 | 0x0D | 0x1B)
                && style(env, h) & ES_MULTILINE != 0
                && state(env, h).dialog_mode =>
        {
            let parent = env.desktop.win(h).map_or(0, |w| w.parent);
            match wp {
                0x09 => {
                    let shift = (env.desktop.keys[0x10] & 0x80 != 0) as u32;
                    user32::send(env, parent, WM_NEXTDLGCTL, shift, 0, |_, _| Ret::Value(0))
                }
                0x1B => {
                    user32::post(env, parent, wm::CLOSE, 0, 0);
                    Ret::Value(0)
                }
                _ if style(env, h) & ES_WANTRETURN == 0 => {
                    user32::send(env, parent, DM_GETDEFID, 0, 0, move |env, dw| {
                        if dw >> 16 != DC_HASDEFID {
                            return Ret::Value(0);
                        }
                        let def = super::dialog::dlg_item(env, parent, dw & 0xFFFF);
                        if def == 0 {
                            return Ret::Value(0);
                        }
                        user32::send(env, parent, WM_NEXTDLGCTL, def, 1, move |env, _| {
                            user32::post(env, def, wm::KEYDOWN, 0x0D, 0);
                            Ret::Value(0)
                        })
                    })
                }
                _ => Ret::Value(0),
            }
        }
        wm::LBUTTONDOWN => {
            let (x, y) = (lp as i16 as i32, (lp >> 16) as i16 as i32);
            let i = index_at(env, h, x, y);
            let s = state(env, h);
            s.caret = i;
            s.anchor = i;
            user32::set_focus(env, h, move |env, _| {
                paint(env, h);
                Ret::Value(0)
            })
        }
        wm::CHAR => {
            let multi = style(env, h) & ES_MULTILINE != 0;
            let want_return = style(env, h) & ES_WANTRETURN != 0;
            let s = state(env, h);
            match wp {
                8 => {
                    if s.caret == s.anchor {
                        if s.caret == 0 {
                            return Ret::Value(0);
                        }
                        // CR LF goes as one.
                        let back = if s.caret >= 2 && s.text[s.caret - 2..s.caret] == [13, 10] {
                            2
                        } else {
                            1
                        };
                        s.anchor = s.caret - back;
                    }
                    s.replace_sel(&[]);
                }
                // Enter and Tab in a multi-line edit, unless a dialog takes them.
                13 if multi && (!s.dialog_mode || want_return) => s.replace_sel(&[13, 10]),
                9 if multi && !s.dialog_mode => s.replace_sel(&[9]),
                c if c >= 0x20 && c != 0x7F => s.replace_sel(&[c as u16]),
                _ => return Ret::Value(1),
            }
            // WM_CHAR answers 1, as Windows' edit does.
            changed_then(env, h, 1)
        }
        wm::KEYDOWN => {
            let shift = env.desktop.keys[0x10] & 0x80 != 0;
            let s = state(env, h);
            let n = s.text.len();
            let line_start = |s: &EditText| {
                s.text[..s.caret]
                    .iter()
                    .rposition(|&u| u == 10)
                    .map_or(0, |i| i + 1)
            };
            let line_end = |s: &EditText| {
                s.text[s.caret..]
                    .iter()
                    .position(|&u| u == 13 || u == 10)
                    .map_or(n, |i| s.caret + i)
            };
            let to = match wp {
                0x25 => s.caret.saturating_sub(
                    if s.caret >= 2 && s.text[s.caret - 2..s.caret] == [13, 10] {
                        2
                    } else {
                        1
                    },
                ),
                0x27 => (s.caret
                    + if s.text.get(s.caret) == Some(&13) {
                        2
                    } else {
                        1
                    })
                .min(n),
                0x24 => line_start(s),
                0x23 => line_end(s),
                0x2E => {
                    if s.caret == s.anchor && s.caret < n {
                        s.anchor = (s.caret + if s.text[s.caret] == 13 { 2 } else { 1 }).min(n);
                    }
                    s.replace_sel(&[]);
                    return changed(env, h);
                }
                _ => return Ret::Value(0),
            };
            s.caret = to;
            if !shift {
                s.anchor = to;
            }
            paint(env, h);
            Ret::Value(0)
        }
        em::GETSEL => {
            let (a, b) = state(env, h).sel();
            if wp != 0 {
                env.mem.poke_u32(wp, a as u32);
            }
            if lp != 0 {
                env.mem.poke_u32(lp, b as u32);
            }
            Ret::Value((a.min(0xFFFF) | b.min(0xFFFF) << 16) as u32)
        }
        em::SETSEL => {
            let s = state(env, h);
            let n = s.text.len();
            let (a, b) = (wp as i32, lp as i32);
            let (a, b) = if a == -1 {
                (s.caret, s.caret)
            } else {
                (a as usize, if b < 0 { n } else { b as usize })
            };
            s.anchor = a.min(n);
            s.caret = b.min(n);
            paint(env, h);
            Ret::Value(0)
        }
        em::REPLACESEL => {
            let t = read_str(&env.mem, lp, -1, wide).unwrap_or_default();
            state(env, h).replace_sel(&t);
            changed(env, h)
        }
        em::GETMODIFY => Ret::Value(state(env, h).modified as u32),
        em::SETMODIFY => {
            state(env, h).modified = wp != 0;
            Ret::Value(0)
        }
        em::GETLINECOUNT => {
            let s = state(env, h);
            Ret::Value(s.text.iter().filter(|&&u| u == 10).count() as u32 + 1)
        }
        // -1: the caret's line (the selection's start).
        em::LINEFROMCHAR => {
            let s = state(env, h);
            let i = if wp as i32 == -1 {
                s.sel().0
            } else {
                wp as usize
            };
            Ret::Value(s.line_col(i).0 as u32)
        }
        em::LINEINDEX => {
            let s = state(env, h);
            let line = if wp as i32 == -1 {
                s.line_col(s.caret).0
            } else {
                wp as usize
            };
            let mut start = 0;
            for _ in 0..line {
                match s.text[start..].iter().position(|&u| u == 10) {
                    Some(i) => start += i + 1,
                    None => return Ret::Value(-1i32 as u32),
                }
            }
            Ret::Value(start as u32)
        }
        em::LINELENGTH => {
            let s = state(env, h);
            let i = if wp as i32 == -1 {
                s.caret
            } else {
                (wp as usize).min(s.text.len())
            };
            let start = s.text[..i]
                .iter()
                .rposition(|&u| u == 10)
                .map_or(0, |k| k + 1);
            let end = s.text[start..]
                .iter()
                .position(|&u| u == 13 || u == 10)
                .map_or(s.text.len(), |k| start + k);
            Ret::Value((end - start) as u32)
        }
        em::LIMITTEXT => {
            state(env, h).limit = if wp == 0 { 0x7FFF_FFFE } else { wp as usize };
            Ret::Value(0)
        }
        em::GETLIMITTEXT => Ret::Value(state(env, h).limit as u32),
        em::SETMARGINS => {
            let s = state(env, h);
            if wp & 1 != 0 {
                s.margins.0 = (lp & 0xFFFF) as i16 as i32;
            }
            if wp & 2 != 0 {
                s.margins.1 = (lp >> 16) as i16 as i32;
            }
            Ret::Value(0)
        }
        em::SCROLLCARET | em::EMPTYUNDOBUFFER => Ret::Value(0),
        em::CANUNDO => Ret::Value(0),
        _ => user32::def_window_proc(env, h, msg, wp, lp, wide),
    }
}

/// The control's font face and its line height.
fn face(env: &Env, h: u32) -> crate::gdi::font::Face {
    let f = env.desktop.win(h).map_or(0, |w| w.font);
    match env.desktop.gdi.get(f) {
        Some(crate::gdi::Object::Font(lf)) => lf.face(),
        _ => crate::gdi::font::Face::new(0, 400, false, false),
    }
}

/// The text index nearest the client point (x, y).
fn index_at(env: &mut Env, h: u32, x: i32, y: i32) -> usize {
    let f = face(env, h);
    let s = state(env, h).clone();
    let line = (y.max(0) / f.height().max(1)) as usize;
    let mut start = 0;
    for _ in 0..line {
        match s.text[start..].iter().position(|&u| u == 10) {
            Some(i) => start += i + 1,
            None => break,
        }
    }
    let end = s.text[start..]
        .iter()
        .position(|&u| u == 13 || u == 10)
        .map_or(s.text.len(), |i| start + i);
    let col = ((x - s.margins.0 + f.char_width() / 2).max(0) / f.char_width().max(1)) as usize;
    (start + col).min(end)
}

/// Draws the client area: background, text, selection, caret; validates it.
fn paint(env: &mut Env, h: u32) {
    if let Some(w) = env.desktop.win_mut(h) {
        w.update = crate::gdi::region::Region::empty();
        w.erase = false;
    }
    if !env.desktop.really_visible(h) {
        return;
    }
    let f = face(env, h);
    let focused = env.desktop.focus == h;
    let s = state(env, h).clone();
    let hdc = user32::window_dc(env, h, false, None);
    let c = env.desktop.client_rect(h).unwrap_or_default();
    let (lh, cw) = (f.height(), f.char_width());
    let (sa, sb) = s.sel();
    let (cl, cc) = s.line_col(s.caret);
    env.desktop.gdi.draw(&mut env.mem, hdc, |t| {
        let (ox, oy) = t.pt(0, 0);
        let mut cv = t.canvas();
        let px =
            |cv: &crate::gdi::raster::Canvas, i: u32| cv.bits.from_color(metrics::sys_color(i));
        let bg = Paint::Solid(px(&cv, color::WINDOW));
        cv.fill_rect(Rect::new(ox, oy, ox + c.width(), oy + c.height()), &bg);
        let (fg, hl, hlt) = (
            px(&cv, color::WINDOWTEXT),
            px(&cv, color::HIGHLIGHT),
            px(&cv, color::HIGHLIGHTTEXT),
        );
        let mut start = 0;
        for (ln, line) in s.text.split(|&u| u == 10).enumerate() {
            let line_len = line.len();
            let line: Vec<u16> = line.iter().copied().filter(|&u| u != 13).collect();
            let y = oy + ln as i32 * lh;
            let x0 = ox + s.margins.0;
            for (k, &u) in line.iter().enumerate() {
                let i = start + k;
                let selected = sa <= i && i < sb;
                let (fgc, bgc) = if selected {
                    (hlt, Some(hl))
                } else {
                    (fg, None)
                };
                f.draw(&mut cv, x0 + k as i32 * cw, y, &[u], fgc, bgc);
            }
            start += line_len + 1;
        }
        if focused {
            let x = ox + s.margins.0 + cc as i32 * cw;
            let y = oy + cl as i32 * lh;
            cv.fill_rect(Rect::new(x, y, x + 1, y + lh), &Paint::Solid(fg));
        }
    });
    env.desktop.gdi.delete_dc(hdc);
}
