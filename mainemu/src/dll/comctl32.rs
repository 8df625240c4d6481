//! COMCTL32.dll: the common controls' registration calls and window
//! subclassing (SetWindowSubclass, DefSubclassProc, RemoveWindowSubclass).
//! The standard controls (button, static, edit, listbox) are user32's here,
//! so InitCommonControls(Ex) has nothing to register; the comctl32 classes
//! themselves (toolbar, status bar, list view, ...) are not modelled, and
//! every other export stays a named stub.
//!
//! A subclassed window's procedure is our internal `SubclassWndProc`
//! thunk: it calls the newest subclass with (hwnd, msg, wp, lp, id, data);
//! DefSubclassProc calls the one below it, the last the original procedure.
//!
//! Owns these calls' conventions and the subclass chain's calling order; it
//! must not hold window logic (user32 and desktop do).

use super::{Env, Ret};

/// The internal window procedures (not exported): subclassed windows and
/// the status bar class.
mod internal {
    crate::dll! { "comctl32.dll";
        stdcall fn SubclassWndProc(env, h: u32, msg: u32, wp: u32, lp: u32) -> super::Ret {
            let top = env.desktop.win(h).map_or(0, |w| w.subclasses.len());
            super::call_level(env, h, top, msg, wp, lp)
        }
        stdcall fn StatusWndProc(env, h: u32, msg: u32, wp: u32, lp: u32) -> super::Ret { super::status_proc(env, h, msg, wp, lp) }
    }
}

fn internal_addr(env: &mut Env, i: usize) -> u32 {
    internal::DLL.guest_addr(env, i)
}

/// The window procedure of the status bar class (`msctls_statusbar32`).
pub fn status_wndproc(env: &mut Env) -> u32 {
    internal_addr(env, 1)
}

/// The status bar's height (Windows 98: the 8-point font plus borders).
const STATUS_HEIGHT: i32 = 20;
const SB_SETTEXTW: u32 = 0x40B;
const SB_SETTEXTA: u32 = 0x401;
const SB_SETPARTS: u32 = 0x404;
const SB_SIMPLE: u32 = 0x409;

/// A status bar: along the bottom of its parent's client area, the text of
/// its first part in a sunken panel (parts, icons and the size grip are
/// not modelled).
fn status_proc(env: &mut Env, h: u32, msg: u32, wp: u32, lp: u32) -> Ret {
    use crate::desktop::wm;
    let wide = env.desktop.win(h).is_some_and(|w| w.wide);
    match msg {
        wm::CREATE | wm::SIZE if msg == wm::CREATE || lp == 0 => {
            let parent = env.desktop.win(h).map_or(0, |w| w.parent);
            let Some(c) = env.desktop.client_rect(parent) else {
                return Ret::Value(0);
            };
            let (cw, ch) = (c.width(), c.height());
            super::user32::set_window_pos(env, h, 0, ch - STATUS_HEIGHT, cw, STATUS_HEIGHT, 4)
        }
        SB_SETTEXTW | SB_SETTEXTA if wp & 0xFF == 0 || wp & 0xFF == 0xFF => {
            let t = super::gui_structs::read_str(&env.mem, lp, -1, msg == SB_SETTEXTW)
                .unwrap_or_default();
            if let Some(w) = env.desktop.win_mut(h) {
                w.title = t;
            }
            status_paint(env, h);
            Ret::Value(1)
        }
        SB_SETTEXTW | SB_SETTEXTA | SB_SETPARTS => Ret::Value(1),
        SB_SIMPLE => Ret::Value(0),
        wm::PAINT => {
            status_paint(env, h);
            Ret::Value(0)
        }
        wm::ERASEBKGND => Ret::Value(1),
        _ => super::user32::def_window_proc(env, h, msg, wp, lp, wide),
    }
}

fn status_paint(env: &mut Env, h: u32) {
    use crate::desktop::metrics::{color, sys_color};
    use crate::gdi::raster::Paint;
    use crate::gdi::region::Rect;
    if let Some(w) = env.desktop.win_mut(h) {
        w.update = crate::gdi::region::Region::empty();
        w.erase = false;
    }
    if !env.desktop.really_visible(h) {
        return;
    }
    let text = env
        .desktop
        .win(h)
        .map(|w| w.title.clone())
        .unwrap_or_default();
    let c = env.desktop.client_rect(h).unwrap_or_default();
    let hdc = super::user32::window_dc(env, h, false, None);
    env.desktop.gdi.draw(&mut env.mem, hdc, |t| {
        let (ox, oy) = t.pt(0, 0);
        let mut cv = t.canvas();
        let face = Paint::Solid(cv.bits.from_color(sys_color(color::BTNFACE)));
        let r = Rect::new(ox, oy, ox + c.width(), oy + c.height());
        cv.fill_rect(r, &face);
        let panel = Rect::new(r.left, r.top + 2, r.right, r.bottom);
        crate::desktop::nc::edge(
            &mut cv,
            panel,
            sys_color(color::BTNSHADOW),
            sys_color(color::BTNHIGHLIGHT),
        );
        crate::desktop::nc::label(
            &mut cv,
            panel.left + 4,
            panel.top + 2,
            &text,
            sys_color(color::BTNTEXT),
            false,
        );
    });
    env.desktop.gdi.delete_dc(hdc);
}

/// Calls subclass `level` (1-based; 0 = the original procedure) of `h`.
fn call_level(env: &mut Env, h: u32, level: usize, msg: u32, wp: u32, lp: u32) -> Ret {
    let Some(w) = env.desktop.win_mut(h) else {
        return Ret::Value(0);
    };
    if level == 0 || level > w.subclasses.len() {
        let p = w.subclass_orig;
        return Ret::call(p, vec![h, msg, wp, lp], |_, r| Ret::Value(r));
    }
    let (p, id, data) = w.subclasses[level - 1];
    let saved = std::mem::replace(&mut w.subclass_level, level);
    Ret::call(p, vec![h, msg, wp, lp, id, data], move |env, r| {
        if let Some(w) = env.desktop.win_mut(h) {
            w.subclass_level = saved;
        }
        Ret::Value(r)
    })
}

fn set_subclass(env: &mut Env, h: u32, p: u32, id: u32, data: u32) -> bool {
    let thunk = internal_addr(env, 0);
    let Some(w) = env.desktop.win_mut(h) else {
        return false;
    };
    if let Some(s) = w.subclasses.iter_mut().find(|s| (s.0, s.1) == (p, id)) {
        s.2 = data;
        return true;
    }
    if w.subclasses.is_empty() {
        w.subclass_orig = w.wndproc;
        w.wndproc = thunk;
    }
    w.subclasses.push((p, id, data));
    true
}

fn remove_subclass(env: &mut Env, h: u32, p: u32, id: u32) -> bool {
    let Some(w) = env.desktop.win_mut(h) else {
        return false;
    };
    let Some(i) = w.subclasses.iter().position(|s| (s.0, s.1) == (p, id)) else {
        return false;
    };
    w.subclasses.remove(i);
    if w.subclasses.is_empty() {
        w.wndproc = w.subclass_orig;
    }
    true
}

crate::dll! { "comctl32.dll";
    stdcall fn InitCommonControls(env) {}
    stdcall fn InitCommonControlsEx(env, _icc: u32) -> bool { true }
    stdcall fn SetWindowSubclass @410 (env, h: u32, p: u32, id: u32, data: u32) -> bool { set_subclass(env, h, p, id, data) }
    stdcall fn RemoveWindowSubclass @412 (env, h: u32, p: u32, id: u32) -> bool { remove_subclass(env, h, p, id) }
    stdcall fn DefSubclassProc @413 (env, h: u32, msg: u32, wp: u32, lp: u32) -> Ret {
        let level = env.desktop.win(h).map_or(0, |w| w.subclass_level);
        call_level(env, h, level.saturating_sub(1), msg, wp, lp)
    }
}
