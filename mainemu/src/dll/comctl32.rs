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

/// The internal window procedure of subclassed windows (not exported).
mod internal {
    crate::dll! { "comctl32.dll";
        stdcall fn SubclassWndProc(env, h: u32, msg: u32, wp: u32, lp: u32) -> super::Ret {
            let top = env.desktop.win(h).map_or(0, |w| w.subclasses.len());
            super::call_level(env, h, top, msg, wp, lp)
        }
    }
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
    let e = &internal::DLL.exports[0];
    let thunk = env
        .thunks
        .slot(&mut env.mem, crate::thunks::Thunk::Api(e, &internal::DLL))
        .unwrap_or(0);
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
