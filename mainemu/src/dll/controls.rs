//! The BUTTON, STATIC, LISTBOX and COMBOBOX window classes the dialog
//! manager's templates name (EDIT is `dll::edit`): host-side window
//! procedures (internal `ButtonWndProc`, `StaticWndProc`, `ListBoxWndProc`,
//! `ComboBoxWndProc` thunks) in the Windows 98 classic look.
//!
//! - BUTTON: push buttons (BS_DEFPUSHBUTTON with the black frame), check
//!   boxes and radio buttons (auto and manual, 3-state), group boxes.
//!   A click (press and release inside) or Space sends BN_CLICKED to the
//!   parent; auto check boxes toggle, auto radio buttons check themselves
//!   and clear the auto radio buttons of their group first. BM_GETCHECK,
//!   BM_SETCHECK, BM_GETSTATE, BM_SETSTATE, BM_SETSTYLE, BM_CLICK,
//!   WM_GETDLGCODE as the dialog manager asks it.
//! - STATIC: text (SS_LEFT/CENTER/RIGHT, word wrap, SS_NOPREFIX), the
//!   filled and framed rectangles; icons and bitmaps draw nothing.
//! - LISTBOX / COMBOBOX: `dll::listbox` (the list model, its messages and
//!   pixels); a combo box shows its selection in a field with a drop
//!   button, the list never drops down.
//!
//! Not modelled: owner draw, bitmaps and icons on buttons, colours asked
//! from the parent (WM_CTLCOLOR*), combo drop-downs, mnemonics.
//!
//! Owns the controls' state (in `Desktop::controls`) and their message
//! semantics and pixels. It must not run a modal loop or move focus between
//! controls (the dialog manager, `dll::dialog`, does).

use super::{user32, Env, Ret};
use crate::desktop::metrics::{self, color, ws};
use crate::desktop::{nc, wm};
use crate::gdi::raster::{Canvas, Paint};
use crate::gdi::region::Rect;

/// One control's state, by window handle.
#[derive(Clone, Debug, Default)]
pub struct Control {
    /// BST_UNCHECKED 0, BST_CHECKED 1, BST_INDETERMINATE 2.
    pub check: u32,
    /// BST_PUSHED: the button is held down.
    pub pushed: bool,
    /// The list of a list or combo box (`dll::listbox`).
    pub list: super::listbox::List,
}

/// Button styles (BS_*, the low four bits) and messages.
pub mod bs {
    pub const PUSHBUTTON: u32 = 0;
    pub const DEFPUSHBUTTON: u32 = 1;
    pub const CHECKBOX: u32 = 2;
    pub const AUTOCHECKBOX: u32 = 3;
    pub const RADIOBUTTON: u32 = 4;
    pub const THREESTATE: u32 = 5;
    pub const AUTO3STATE: u32 = 6;
    pub const GROUPBOX: u32 = 7;
    pub const AUTORADIOBUTTON: u32 = 9;
    pub const TYPEMASK: u32 = 0xF;
}

pub mod bm {
    pub const GETCHECK: u32 = 0xF0;
    pub const SETCHECK: u32 = 0xF1;
    pub const GETSTATE: u32 = 0xF2;
    pub const SETSTATE: u32 = 0xF3;
    pub const SETSTYLE: u32 = 0xF4;
    pub const CLICK: u32 = 0xF5;
}

/// WM_GETDLGCODE answers (DLGC_*).
pub mod dlgc {
    pub const WANTARROWS: u32 = 0x1;
    pub const WANTTAB: u32 = 0x2;
    pub const WANTALLKEYS: u32 = 0x4;
    pub const WANTMESSAGE: u32 = 0x4;
    pub const HASSETSEL: u32 = 0x8;
    pub const DEFPUSHBUTTON: u32 = 0x10;
    pub const UNDEFPUSHBUTTON: u32 = 0x20;
    pub const RADIOBUTTON: u32 = 0x40;
    pub const WANTCHARS: u32 = 0x80;
    pub const STATIC: u32 = 0x100;
    pub const BUTTON: u32 = 0x2000;
}

const BN_CLICKED: u32 = 0;
use super::listbox::list_proc;

mod internal {
    crate::dll! { "user32.dll";
        stdcall fn ButtonWndProc(env, h: u32, msg: u32, wp: u32, lp: u32) -> super::Ret { super::button_proc(env, h, msg, wp, lp) }
        stdcall fn StaticWndProc(env, h: u32, msg: u32, wp: u32, lp: u32) -> super::Ret { super::static_proc(env, h, msg, wp, lp) }
        stdcall fn ListBoxWndProc(env, h: u32, msg: u32, wp: u32, lp: u32) -> super::Ret { super::list_proc(env, h, msg, wp, lp, false) }
        stdcall fn ComboBoxWndProc(env, h: u32, msg: u32, wp: u32, lp: u32) -> super::Ret { super::list_proc(env, h, msg, wp, lp, true) }
    }
}

/// The window procedure of built-in class `name` (upper case) if it is one
/// of this module's.
pub fn wndproc(env: &mut Env, name: &str) -> Option<u32> {
    // A combo box's drop-down list (ComboLBox) is a list box.
    let name = if name == "COMBOLBOX" { "LISTBOX" } else { name };
    let i = ["BUTTON", "STATIC", "LISTBOX", "COMBOBOX"]
        .iter()
        .position(|&n| n == name)?;
    Some(internal::DLL.guest_addr(env, i))
}

pub(crate) fn state(env: &mut Env, h: u32) -> &mut Control {
    env.desktop.controls.entry(h).or_default()
}

pub(crate) fn style(env: &Env, h: u32) -> u32 {
    env.desktop.win(h).map_or(0, |w| w.style)
}

/// Sends WM_COMMAND(id, code, h) to the control's parent.
pub(crate) fn notify(env: &mut Env, h: u32, code: u32) -> Ret {
    let (parent, id) = env.desktop.win(h).map_or((0, 0), |w| (w.parent, w.id));
    user32::send(
        env,
        parent,
        wm::COMMAND,
        id & 0xFFFF | code << 16,
        h,
        |_, _| Ret::Value(0),
    )
}

/// Draws the control's client area through a window DC: `f` gets the
/// canvas, the client rectangle in device pixels and the window.
pub(crate) fn draw(
    env: &mut Env,
    h: u32,
    f: impl FnOnce(&mut Canvas, Rect, &crate::desktop::Window),
) {
    if let Some(w) = env.desktop.win_mut(h) {
        w.update = crate::gdi::region::Region::empty();
        w.erase = false;
    }
    if !env.desktop.really_visible(h) {
        return;
    }
    let Some(w) = env.desktop.win(h).cloned() else {
        return;
    };
    let Some(c) = env.desktop.client_rect(h) else {
        return;
    };
    let hdc = user32::window_dc(env, h, false, None);
    env.desktop.gdi.draw(&mut env.mem, hdc, |t| {
        let (ox, oy) = t.pt(0, 0);
        let mut cv = t.canvas();
        f(
            &mut cv,
            Rect::new(ox, oy, ox + c.width(), oy + c.height()),
            &w,
        );
    });
    env.desktop.gdi.delete_dc(hdc);
}

pub(crate) fn solid(cv: &Canvas, i: u32) -> Paint {
    Paint::Solid(cv.bits.from_color(metrics::sys_color(i)))
}

/// The dotted focus frame (DrawFocusRect's look, drawn not inverted).
fn focus_frame(cv: &mut Canvas, r: Rect) {
    let ink = cv.bits.from_color(metrics::sys_color(color::BTNTEXT));
    for x in (r.left..r.right).step_by(2) {
        cv.plot(x, r.top, ink);
        cv.plot(x, r.bottom - 1, ink);
    }
    for y in (r.top..r.bottom).step_by(2) {
        cv.plot(r.left, y, ink);
        cv.plot(r.right - 1, y, ink);
    }
}

/// Text lines of `text` wrapped at spaces to `width` pixels (6 per
/// character) and split at line breaks.
fn wrap(text: &[u16], width: i32, wrap: bool) -> Vec<Vec<u16>> {
    let maxc = (width / 6).max(1) as usize;
    let mut out = Vec::new();
    for line in text.split(|&c| c == 10) {
        let line: Vec<u16> = line.iter().copied().filter(|&c| c != 13).collect();
        if !wrap {
            out.push(line);
            continue;
        }
        let mut cur: Vec<u16> = Vec::new();
        for word in line.split(|&c| c == 32) {
            if !cur.is_empty() && (nc::label_width(&cur) / 6) as usize + 1 + word.len() > maxc {
                out.push(std::mem::take(&mut cur));
            }
            if !cur.is_empty() {
                cur.push(32);
            }
            cur.extend_from_slice(word);
        }
        out.push(cur);
    }
    out
}

fn text_color(w: &crate::desktop::Window) -> u32 {
    metrics::sys_color(if w.style & ws::DISABLED != 0 {
        color::GRAYTEXT
    } else {
        color::BTNTEXT
    })
}

/// BM_SETCHECK: a radio button is a tab stop while it is checked (so Tab
/// reaches a group at its checked button), as Windows' button does.
fn set_check(env: &mut Env, h: u32, v: u32) {
    if matches!(button_kind(env, h), bs::RADIOBUTTON | bs::AUTORADIOBUTTON) {
        if let Some(w) = env.desktop.win_mut(h) {
            if v != 0 {
                w.style |= ws::TABSTOP;
            } else {
                w.style &= !ws::TABSTOP;
            }
        }
    }
    state(env, h).check = v;
}

/// WM_PAINT, WM_ERASEBKGND (the paint covers the background), and
/// WM_SETTEXT / WM_ENABLE (the default handling, then a repaint).
fn repaints(env: &mut Env, h: u32, msg: u32, wp: u32, lp: u32, paint: fn(&mut Env, u32)) -> Ret {
    match msg {
        wm::PAINT => {
            paint(env, h);
            Ret::Value(0)
        }
        wm::ERASEBKGND => Ret::Value(1),
        _ => {
            let r = user32::def_window_proc(env, h, msg, wp, lp, true);
            paint(env, h);
            r
        }
    }
}

fn button_kind(env: &Env, h: u32) -> u32 {
    style(env, h) & bs::TYPEMASK
}

/// A click: auto buttons change their check, the parent hears BN_CLICKED.
fn click(env: &mut Env, h: u32) -> Ret {
    match button_kind(env, h) {
        bs::AUTOCHECKBOX => {
            let s = state(env, h);
            s.check = (s.check == 0) as u32;
        }
        bs::AUTO3STATE => {
            let s = state(env, h);
            s.check = (s.check + 1) % 3;
        }
        bs::AUTORADIOBUTTON => {
            // The auto radio buttons of the group are cleared, this one checked.
            for b in group_of(env, h) {
                if button_kind(env, b) == bs::AUTORADIOBUTTON && b != h {
                    set_check(env, b, 0);
                    paint_button(env, b);
                }
            }
            set_check(env, h, 1);
        }
        _ => {}
    }
    paint_button(env, h);
    notify(env, h, BN_CLICKED)
}

/// The siblings in `h`'s group: from the WS_GROUP control at or before
/// it up to the next WS_GROUP control, in creation order. The order is a
/// ring: the controls before the first WS_GROUP control belong to the last
/// group (a group wraps around the end of the dialog).
pub fn group_of(env: &Env, h: u32) -> Vec<u32> {
    let d = &env.desktop;
    let Some(p) = d.win(h).map(|w| w.parent) else {
        return vec![];
    };
    let kids = d.win(p).map(|w| w.children.clone()).unwrap_or_default();
    group_in(env, &kids, h)
}

/// `h`'s group within the ring `order` (the dialog manager passes its
/// navigation order, nested control parents flattened).
pub fn group_in(env: &Env, order: &[u32], h: u32) -> Vec<u32> {
    let d = &env.desktop;
    let Some(at) = order.iter().position(|&k| k == h) else {
        return vec![h];
    };
    let n = order.len();
    let group = |k: u32| d.win(k).is_some_and(|w| w.style & ws::GROUP != 0);
    let start = (0..n)
        .map(|k| (at + n - k) % n)
        .find(|&i| group(order[i]))
        .unwrap_or(0);
    let mut out = vec![order[start]];
    for k in 1..n {
        let i = (start + k) % n;
        if group(order[i]) {
            break;
        }
        out.push(order[i]);
    }
    out
}

fn button_proc(env: &mut Env, h: u32, msg: u32, wp: u32, lp: u32) -> Ret {
    match msg {
        wm::NCDESTROY => {
            env.desktop.controls.remove(&h);
            Ret::Value(0)
        }
        wm::PAINT | wm::ERASEBKGND | wm::SETTEXT | wm::ENABLE => {
            repaints(env, h, msg, wp, lp, paint_button)
        }
        wm::SETFOCUS | wm::KILLFOCUS => {
            paint_button(env, h);
            Ret::Value(0)
        }
        wm::GETDLGCODE => Ret::Value(match button_kind(env, h) {
            bs::DEFPUSHBUTTON => dlgc::BUTTON | dlgc::DEFPUSHBUTTON,
            bs::PUSHBUTTON => dlgc::BUTTON | dlgc::UNDEFPUSHBUTTON,
            bs::RADIOBUTTON | bs::AUTORADIOBUTTON => dlgc::BUTTON | dlgc::RADIOBUTTON,
            bs::GROUPBOX => dlgc::STATIC,
            _ => dlgc::BUTTON,
        }),
        bm::GETCHECK => Ret::Value(state(env, h).check),
        bm::SETCHECK => {
            set_check(env, h, wp.min(2));
            paint_button(env, h);
            Ret::Value(0)
        }
        bm::GETSTATE => {
            let s = state(env, h).clone();
            let focus = env.desktop.focus == h;
            Ret::Value(s.check | (s.pushed as u32) << 2 | (focus as u32) << 3)
        }
        bm::SETSTATE => {
            state(env, h).pushed = wp != 0;
            paint_button(env, h);
            Ret::Value(0)
        }
        bm::SETSTYLE => {
            if let Some(w) = env.desktop.win_mut(h) {
                w.style = (w.style & !0xFFFF) | (wp & 0xFFFF);
            }
            if lp != 0 {
                paint_button(env, h);
            }
            Ret::Value(0)
        }
        bm::CLICK => click(env, h),
        wm::LBUTTONDOWN if button_kind(env, h) != bs::GROUPBOX => {
            state(env, h).pushed = true;
            env.desktop.capture = h;
            user32::set_focus(env, h, move |env, _| {
                paint_button(env, h);
                Ret::Value(0)
            })
        }
        wm::LBUTTONUP => {
            let was = std::mem::take(&mut state(env, h).pushed);
            if env.desktop.capture == h {
                env.desktop.capture = 0;
            }
            let (x, y) = (lp as i16 as i32, (lp >> 16) as i16 as i32);
            let inside = env
                .desktop
                .client_rect(h)
                .is_some_and(|c| x >= 0 && y >= 0 && x < c.width() && y < c.height());
            if was && inside {
                click(env, h)
            } else {
                paint_button(env, h);
                Ret::Value(0)
            }
        }
        wm::KEYDOWN if wp == 0x20 => {
            state(env, h).pushed = true;
            paint_button(env, h);
            Ret::Value(0)
        }
        wm::KEYUP if wp == 0x20 => {
            if std::mem::take(&mut state(env, h).pushed) {
                click(env, h)
            } else {
                Ret::Value(0)
            }
        }
        _ => user32::def_window_proc(env, h, msg, wp, lp, true),
    }
}

/// A radio button's 12x12 circle: dark ring ('d'), shadow ('s'), light
/// ('l'), highlight ('h'), white inside ('w').
const RADIO: [&str; 12] = [
    "....ssss....",
    "..ssddddss..",
    ".sddwwwwddh.",
    ".sdwwwwwwlh.",
    "sdwwwwwwwwlh",
    "sdwwwwwwwwlh",
    "sdwwwwwwwwlh",
    "sdwwwwwwwwlh",
    ".sdwwwwwwlh.",
    ".sllwwwwllh.",
    "..hhllllhh..",
    "....hhhh....",
];

fn paint_button(env: &mut Env, h: u32) {
    let s = state(env, h).clone();
    let focused = env.desktop.focus == h;
    draw(env, h, |cv, r, w| {
        let kind = w.style & bs::TYPEMASK;
        let ink = text_color(w);
        let text = &w.title;
        let face = solid(cv, color::BTNFACE);
        let tw = nc::label_width(text);
        match kind {
            bs::PUSHBUTTON | bs::DEFPUSHBUTTON => {
                let mut b = r;
                if kind == bs::DEFPUSHBUTTON {
                    let black = solid(cv, color::WINDOWFRAME);
                    cv.fill_rect(r, &black);
                    b = Rect::new(r.left + 1, r.top + 1, r.right - 1, r.bottom - 1);
                }
                nc::button(cv, b, s.pushed);
                let d = s.pushed as i32;
                let (tx, ty) = (
                    b.left + (b.width() - tw) / 2 + d,
                    b.top + (b.height() - 13) / 2 + d,
                );
                nc::label(cv, tx, ty, text, ink, false);
                if focused {
                    focus_frame(
                        cv,
                        Rect::new(b.left + 3, b.top + 3, b.right - 3, b.bottom - 3),
                    );
                }
            }
            bs::GROUPBOX => {
                cv.fill_rect(r, &face);
                let top = r.top + 6;
                let frame = Rect::new(r.left, top, r.right, r.bottom);
                // The etched frame: a shadow line with a highlight line inside and below it.
                for (i, o) in [(color::BTNSHADOW, 0), (color::BTNHIGHLIGHT, 1)] {
                    let f = Rect::new(
                        frame.left + o,
                        frame.top + o,
                        frame.right - 1 + o,
                        frame.bottom - 1 + o,
                    );
                    let c = metrics::sys_color(i);
                    nc::edge(cv, f, c, c);
                }
                if !text.is_empty() {
                    cv.fill_rect(
                        Rect::new(r.left + 8, r.top, r.left + 12 + tw, r.top + 13),
                        &face,
                    );
                    nc::label(cv, r.left + 10, r.top, text, ink, false);
                }
            }
            _ => {
                // Check boxes and radio buttons: the mark at the left, centred vertically.
                cv.fill_rect(r, &face);
                let by = r.top + (r.height() - 13) / 2;
                let radio = matches!(kind, bs::RADIOBUTTON | bs::AUTORADIOBUTTON);
                let bx = r.left;
                if radio {
                    let pick = |c: u8| match c {
                        b'd' => Some(color::DKSHADOW3D),
                        b's' => Some(color::BTNSHADOW),
                        b'l' => Some(color::LIGHT3D),
                        b'h' => Some(color::BTNHIGHLIGHT),
                        b'w' => Some(color::WINDOW),
                        _ => None,
                    };
                    for (y, row) in RADIO.iter().enumerate() {
                        for (x, c) in row.bytes().enumerate() {
                            if let Some(i) = pick(c) {
                                let v = cv.bits.from_color(metrics::sys_color(i));
                                cv.plot(bx + x as i32, by + y as i32, v);
                            }
                        }
                    }
                    if s.check != 0 {
                        let dot = solid(cv, color::BTNTEXT);
                        cv.fill_rect(Rect::new(bx + 4, by + 5, bx + 8, by + 7), &dot);
                        cv.fill_rect(Rect::new(bx + 5, by + 4, bx + 7, by + 8), &dot);
                    }
                } else {
                    let b = Rect::new(bx, by, bx + 13, by + 13);
                    let fill = solid(
                        cv,
                        if s.check == 2 {
                            color::BTNFACE
                        } else {
                            color::WINDOW
                        },
                    );
                    cv.fill_rect(b, &fill);
                    nc::sunken(cv, b);
                    if s.check != 0 {
                        // The check mark: a 7-pixel tick, three rows thick.
                        let v = cv.bits.from_color(metrics::sys_color(if s.check == 2 {
                            color::BTNSHADOW
                        } else {
                            color::BTNTEXT
                        }));
                        let pts = [(3, 5), (4, 6), (5, 7), (6, 6), (7, 5), (8, 4), (9, 3)];
                        for (x, y) in pts {
                            for k in 0..3 {
                                cv.plot(bx + x, by + y + k, v);
                            }
                        }
                    }
                }
                let tx = bx + 16;
                nc::label(cv, tx, by, text, ink, false);
                if focused && !text.is_empty() {
                    focus_frame(cv, Rect::new(tx - 1, by - 1, tx + tw + 1, by + 14));
                }
            }
        }
    });
}

/// STATIC's styles (the low five bits select the kind).
const SS_TYPEMASK: u32 = 0x1F;
const SS_NOPREFIX: u32 = 0x80;

fn static_proc(env: &mut Env, h: u32, msg: u32, wp: u32, lp: u32) -> Ret {
    match msg {
        wm::PAINT | wm::ERASEBKGND | wm::SETTEXT | wm::ENABLE => {
            repaints(env, h, msg, wp, lp, paint_static)
        }
        wm::GETDLGCODE => Ret::Value(dlgc::STATIC),
        _ => user32::def_window_proc(env, h, msg, wp, lp, true),
    }
}

fn paint_static(env: &mut Env, h: u32) {
    draw(env, h, |cv, r, w| {
        let kind = w.style & SS_TYPEMASK;
        let face = solid(cv, color::BTNFACE);
        match kind {
            // SS_BLACKRECT, SS_GRAYRECT, SS_WHITERECT and their frames.
            4..=9 => {
                let i = [color::WINDOWFRAME, color::BTNSHADOW, color::WINDOW]
                    [((kind - 4) % 3) as usize];
                if kind <= 6 {
                    cv.fill_rect(r, &solid(cv, i));
                } else {
                    cv.fill_rect(r, &face);
                    let c = metrics::sys_color(i);
                    nc::edge(cv, r, c, c);
                }
            }
            // SS_ICON, SS_BITMAP, SS_ENHMETAFILE, SS_OWNERDRAW: not drawn.
            3 | 0xD | 0xE | 0xF => {}
            // SS_ETCHEDHORZ / VERT / FRAME.
            0x10..=0x12 => {
                cv.fill_rect(r, &face);
                nc::sunken(
                    cv,
                    Rect::new(
                        r.left,
                        r.top,
                        r.right.max(r.left + 2),
                        r.bottom.max(r.top + 2),
                    ),
                );
            }
            _ => {
                cv.fill_rect(r, &face);
                let text: Vec<u16> = if w.style & SS_NOPREFIX != 0 {
                    w.title
                        .iter()
                        .flat_map(|&c| {
                            if c == b'&' as u16 {
                                vec![c, c]
                            } else {
                                vec![c]
                            }
                        })
                        .collect()
                } else {
                    w.title.clone()
                };
                // SS_LEFTNOWORDWRAP (0xC) and SS_SIMPLE (0xB) do not wrap.
                let lines = wrap(&text, r.width(), !matches!(kind, 0xB | 0xC));
                let ink = text_color(w);
                for (i, l) in lines.iter().enumerate() {
                    let lw = nc::label_width(l);
                    let x = match kind {
                        1 => r.left + (r.width() - lw) / 2,
                        2 => r.right - lw,
                        _ => r.left,
                    };
                    nc::label(cv, x, r.top + 13 * i as i32, l, ink, false);
                }
            }
        }
    });
}
