//! A/W translation of window messages that carry text: a message sent
//! through an A call to a Unicode window (or through a W call to an ANSI
//! one) reaches the window procedure with its text in the window's
//! character set, and text the procedure writes back reaches the caller
//! in the caller's, as Windows' message thunks do.
//!
//! Text in (lParam a string): WM_SETTEXT, EM_REPLACESEL, and the string
//! messages of list and combo boxes that keep strings (LB_ADDSTRING,
//! LB_INSERTSTRING, LB_FINDSTRING(EXACT), LB_SELECTSTRING, LB_DIR and their
//! CB_ twins). Text out: WM_GETTEXT (wParam the caller's capacity),
//! LB_GETTEXT and CB_GETLBTEXT (the length asked first with LB_GETTEXTLEN /
//! CB_GETLBTEXTLEN, as the buffer's size is the caller's business). The
//! converted copies live in user32's scratch block for the call.
//! Characters are Latin-1 both ways (kernel32's ANSI code page), so lengths
//! do not change.
//!
//! Sends to another thread's window are not converted (`msgqueue` carries
//! them across the wait). It owns no state and must not deliver messages
//! itself: the caller passes the delivery (SendMessage's path) in.

use super::gui_structs::{self as gs, read_str};
use super::{msgqueue, user32};
use super::{Env, Ret};
use crate::desktop::wm;

/// The rest of a send: called with the procedure's result.
pub type Then = Box<dyn FnOnce(&mut Env, u32) -> Ret>;
/// Delivers (hwnd, msg, wp, lp) and then calls the continuation.
pub type Deliver = fn(&mut Env, (u32, u32, u32, u32), Then) -> Ret;

/// SendMessage's delivery (the window procedure called in this thread).
pub fn by_send(env: &mut Env, (h, msg, wp, lp): (u32, u32, u32, u32), then: Then) -> Ret {
    user32::send(env, h, msg, wp, lp, then)
}

/// SendMessage from an A (`wide` false) or W caller, the result returned.
/// A send to another thread's window (and the re-made call of one that
/// blocked) goes through `msgqueue` unconverted: its continuation cannot
/// carry a conversion across the wait.
pub fn send_message(env: &mut Env, m: (u32, u32, u32, u32), wide: bool) -> Ret {
    if env.retrying || msgqueue::other_owner(env, m.0).is_some() {
        return msgqueue::send_message(env, m, None, msgqueue::done_value, 0);
    }
    send(env, m, wide, by_send, Box::new(|_, r| Ret::Value(r)))
}

const EM_REPLACESEL: u32 = 0xC2;
use super::listbox::{cb, lb};

/// How a message carries text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Text {
    /// No text (or item data in a list without strings).
    No,
    /// lParam is a string for the procedure.
    In,
    /// lParam is a buffer of wParam characters the procedure fills.
    OutSized,
    /// lParam is a buffer the procedure fills with item wParam, whose
    /// length the message here gives.
    OutItem(u32),
}

/// Whether a list or combo box keeps strings (not only item data).
fn keeps_strings(style: u32, combo: bool) -> bool {
    let (owner, has) = if combo {
        (0x30, 0x200) // CBS_OWNERDRAWFIXED|VARIABLE, CBS_HASSTRINGS
    } else {
        (0x30, 0x40) // LBS_OWNERDRAWFIXED|VARIABLE, LBS_HASSTRINGS
    };
    style & owner == 0 || style & has != 0
}

fn text_of(env: &Env, h: u32, msg: u32) -> Text {
    let style = env.desktop.win(h).map_or(0, |w| w.style);
    match msg {
        wm::SETTEXT | EM_REPLACESEL => Text::In,
        wm::GETTEXT => Text::OutSized,
        lb::ADDSTRING
        | lb::INSERTSTRING
        | lb::SELECTSTRING
        | lb::FINDSTRING
        | lb::FINDSTRINGEXACT
            if keeps_strings(style, false) =>
        {
            Text::In
        }
        lb::DIR | cb::DIR => Text::In,
        lb::GETTEXT if keeps_strings(style, false) => Text::OutItem(lb::GETTEXTLEN),
        cb::ADDSTRING
        | cb::INSERTSTRING
        | cb::SELECTSTRING
        | cb::FINDSTRING
        | cb::FINDSTRINGEXACT
            if keeps_strings(style, true) =>
        {
            Text::In
        }
        cb::GETLBTEXT if keeps_strings(style, true) => Text::OutItem(cb::GETLBTEXTLEN),
        _ => Text::No,
    }
}

/// Sends (h, msg, wp, lp) from a caller using `caller_wide` strings through
/// `deliver`, converting text as the window's character set needs.
pub fn send(
    env: &mut Env,
    (h, msg, wp, lp): (u32, u32, u32, u32),
    caller_wide: bool,
    deliver: Deliver,
    then: Then,
) -> Ret {
    let window_wide = env.desktop.win(h).is_some_and(|w| w.wide);
    let kind = if window_wide == caller_wide || lp == 0 {
        Text::No
    } else {
        text_of(env, h, msg)
    };
    match kind {
        Text::No => deliver(env, (h, msg, wp, lp), then),
        Text::In => {
            let t = read_str(&env.mem, lp, -1, caller_wide).unwrap_or_default();
            let size = (t.len() as u32 + 1) * 2;
            let at = user32::scratch(env, size);
            gs::write_str(&mut env.mem, at, t.len() as u32 + 1, &t, window_wide);
            deliver(
                env,
                (h, msg, wp, at),
                Box::new(move |env, r| {
                    user32::scratch_release(env, size);
                    then(env, r)
                }),
            )
        }
        Text::OutSized => out(env, (h, msg, wp, lp), wp, window_wide, deliver, then),
        Text::OutItem(len_msg) => deliver(
            env,
            (h, len_msg, wp, 0),
            Box::new(move |env, n| {
                if n as i32 == -1 {
                    return then(env, n);
                }
                // The caller's buffer holds the item and its NUL.
                out(env, (h, msg, wp, lp), n + 1, window_wide, deliver, then)
            }),
        ),
    }
}

/// Delivers with a scratch buffer of `cap` characters in the window's
/// character set (WM_GETTEXT's wParam becomes that capacity) and copies
/// what the procedure wrote into the caller's buffer at `lp` (at most `cap`
/// characters with the NUL).
fn out(
    env: &mut Env,
    (h, msg, wp, lp): (u32, u32, u32, u32),
    cap: u32,
    window_wide: bool,
    deliver: Deliver,
    then: Then,
) -> Ret {
    if cap == 0 {
        return deliver(env, (h, msg, wp, lp), then);
    }
    let cap = cap.min(0x7FFF);
    let size = cap * 2 + 2;
    let at = user32::scratch(env, size);
    let _ = env.mem.poke(at, &[0, 0]);
    let wp = if msg == wm::GETTEXT { cap } else { wp };
    deliver(
        env,
        (h, msg, wp, at),
        Box::new(move |env, r| {
            if r as i32 == -1 {
                user32::scratch_release(env, size);
                return then(env, r);
            }
            let t = read_str(&env.mem, at, r.min(cap) as i32, window_wide).unwrap_or_default();
            user32::scratch_release(env, size);
            let n = gs::write_str(&mut env.mem, lp, cap, &t, !window_wide);
            then(env, n)
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::keeps_strings;

    #[test]
    fn owner_draw_lists_without_strings_pass_item_data() {
        assert!(keeps_strings(0, false));
        assert!(!keeps_strings(0x10, false));
        assert!(keeps_strings(0x10 | 0x40, false));
        assert!(!keeps_strings(0x20, true));
        assert!(keeps_strings(0x20 | 0x200, true));
    }
}
