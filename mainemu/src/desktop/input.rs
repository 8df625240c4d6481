//! Scripted input: the `--input` language (`click 120,80 @ 5000000; key
//! F2 @ 9000000; text hello @ 12000000`, times in dispatches), and how an
//! event becomes hardware messages when the guest clock reaches it: mouse
//! messages to the capture window or the window under the point (client or
//! non-client, with a hit-test code), key messages to the focus window,
//! the key state updated, text as key strokes on a US layout.
//!
//! Owns parsing and expansion. It must not deliver (the desktop queues
//! what this returns) nor read the clock.

use super::{wm, Desktop, Msg};
use crate::gdi::region::Rect;

/// What happens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Left click (down and up) at a screen point.
    Click(i32, i32),
    RightClick(i32, i32),
    Move(i32, i32),
    Down(i32, i32),
    Up(i32, i32),
    /// A key with modifiers (virtual-key code; ctrl, shift, alt).
    Key {
        vk: u8,
        ctrl: bool,
        shift: bool,
        alt: bool,
    },
    /// Characters typed as key strokes.
    Text(String),
}

/// One scripted event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// Guest clock (dispatches) at which it arrives.
    pub at: u64,
    pub action: Action,
}

/// Virtual-key code of a key name (F1-F12, Enter, Esc, Tab, Space, Back,
/// Delete, Insert, Home, End, PgUp, PgDn, arrows, letters, digits).
pub fn vk_of(name: &str) -> Option<u8> {
    let n = name.to_ascii_lowercase();
    let named = [
        ("enter", 0x0D),
        ("return", 0x0D),
        ("esc", 0x1B),
        ("escape", 0x1B),
        ("tab", 0x09),
        ("space", 0x20),
        ("back", 0x08),
        ("backspace", 0x08),
        ("delete", 0x2E),
        ("del", 0x2E),
        ("insert", 0x2D),
        ("home", 0x24),
        ("end", 0x23),
        ("pgup", 0x21),
        ("pgdn", 0x22),
        ("left", 0x25),
        ("up", 0x26),
        ("right", 0x27),
        ("down", 0x28),
    ];
    if let Some((_, v)) = named.iter().find(|(k, _)| *k == n) {
        return Some(*v);
    }
    if let Some(f) = n.strip_prefix('f') {
        if let Ok(k) = f.parse::<u8>() {
            if (1..=12).contains(&k) {
                return Some(0x6F + k);
            }
        }
    }
    let b = n.as_bytes();
    if b.len() == 1 && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit()) {
        return Some(b[0].to_ascii_uppercase());
    }
    None
}

/// The key stroke that types `c` on a US layout: (virtual key, shift).
pub fn stroke_of(c: char) -> Option<(u8, bool)> {
    const SHIFTED_DIGITS: &str = ")!@#$%^&*(";
    const PUNCT: [(char, char, u8); 11] = [
        ('-', '_', 0xBD),
        ('=', '+', 0xBB),
        ('[', '{', 0xDB),
        (']', '}', 0xDD),
        ('\\', '|', 0xDC),
        (';', ':', 0xBA),
        ('\'', '"', 0xDE),
        (',', '<', 0xBC),
        ('.', '>', 0xBE),
        ('/', '?', 0xBF),
        ('`', '~', 0xC0),
    ];
    match c {
        'a'..='z' => Some((c.to_ascii_uppercase() as u8, false)),
        'A'..='Z' => Some((c as u8, true)),
        '0'..='9' => Some((c as u8, false)),
        ' ' => Some((0x20, false)),
        '\n' => Some((0x0D, false)),
        '\t' => Some((0x09, false)),
        _ => {
            if let Some(i) = SHIFTED_DIGITS.find(c) {
                return Some((b'0' + i as u8, true));
            }
            PUNCT.iter().find_map(|&(a, b, vk)| {
                (c == a)
                    .then_some((vk, false))
                    .or((c == b).then_some((vk, true)))
            })
        }
    }
}

/// The character a key stroke types (TranslateMessage), US layout; control
/// characters for Enter, Tab, Backspace, Escape; Ctrl+letter gives 1..26.
pub fn char_of(vk: u8, shift: bool, ctrl: bool) -> Option<u16> {
    if ctrl && vk.is_ascii_uppercase() {
        return Some((vk - b'A' + 1) as u16);
    }
    match vk {
        0x08 | 0x09 | 0x0D | 0x1B | 0x20 => Some(vk as u16),
        b'A'..=b'Z' => Some(if shift { vk } else { vk.to_ascii_lowercase() } as u16),
        b'0'..=b'9' => Some(if shift {
            b")!@#$%^&*("[(vk - b'0') as usize]
        } else {
            vk
        } as u16),
        _ => (32u8..127)
            .map(|c| c as char)
            .find(|&c| stroke_of(c) == Some((vk, shift)))
            .map(|c| c as u16),
    }
}

fn point(s: &str) -> Result<(i32, i32), String> {
    let (x, y) = s
        .split_once(',')
        .ok_or_else(|| format!("expected X,Y, got {s:?}"))?;
    let p = |v: &str| {
        v.trim()
            .parse::<i32>()
            .map_err(|_| format!("bad coordinate {v:?}"))
    };
    Ok((p(x)?, p(y)?))
}

/// Parses a script: events separated by `;`, each `ACTION ARGS @ TIME`.
/// Events are kept in time order (stable for equal times).
pub fn parse(script: &str) -> Result<Vec<Event>, String> {
    let mut out = Vec::new();
    for part in script.split(';') {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let (what, at) = part
            .rsplit_once('@')
            .ok_or_else(|| format!("input event {part:?} has no '@ TIME'"))?;
        let at: u64 = at
            .trim()
            .replace('_', "")
            .parse()
            .map_err(|_| format!("bad time in {part:?}"))?;
        let what = what.trim();
        let (verb, arg) = what.split_once(char::is_whitespace).unwrap_or((what, ""));
        let arg = arg.trim();
        let action = match verb.to_ascii_lowercase().as_str() {
            "click" => {
                let (x, y) = point(arg)?;
                Action::Click(x, y)
            }
            "rclick" => {
                let (x, y) = point(arg)?;
                Action::RightClick(x, y)
            }
            "move" => {
                let (x, y) = point(arg)?;
                Action::Move(x, y)
            }
            "down" => {
                let (x, y) = point(arg)?;
                Action::Down(x, y)
            }
            "up" => {
                let (x, y) = point(arg)?;
                Action::Up(x, y)
            }
            "key" => {
                let mut ctrl = false;
                let mut shift = false;
                let mut alt = false;
                let mut vk = None;
                for k in arg.split('+') {
                    match k.trim().to_ascii_lowercase().as_str() {
                        "ctrl" => ctrl = true,
                        "shift" => shift = true,
                        "alt" => alt = true,
                        name => {
                            vk = Some(vk_of(name).ok_or_else(|| format!("unknown key {name:?}"))?)
                        }
                    }
                }
                Action::Key {
                    vk: vk.ok_or_else(|| format!("no key in {part:?}"))?,
                    ctrl,
                    shift,
                    alt,
                }
            }
            "text" => {
                if let Some(c) = arg.chars().find(|&c| stroke_of(c).is_none()) {
                    return Err(format!("cannot type {c:?}"));
                }
                Action::Text(arg.to_string())
            }
            v => {
                return Err(format!(
                    "unknown input action {v:?} (click, rclick, move, down, up, key, text)"
                ))
            }
        };
        out.push(Event { at, action });
    }
    out.sort_by_key(|e| e.at);
    Ok(out)
}

/// Hit-test codes.
pub mod ht {
    pub const CLIENT: u32 = 1;
    pub const CAPTION: u32 = 2;
    pub const SYSMENU: u32 = 3;
    pub const MENU: u32 = 5;
    pub const MINBUTTON: u32 = 8;
    pub const MAXBUTTON: u32 = 9;
    pub const BORDER: u32 = 18;
    pub const CLOSE: u32 = 20;
}

/// What part of window `h` a screen point is on.
pub fn hit_test(d: &Desktop, h: u32, x: i32, y: i32) -> u32 {
    let Some(w) = d.win(h) else { return 0 };
    if d.client_rect(h).is_some_and(|c| c.contains(x, y)) {
        return ht::CLIENT;
    }
    let l = super::nc::layout(w.rect, w.style, w.ex_style, w.menu() != 0);
    let inr = |r: Option<Rect>| r.is_some_and(|r| r.contains(x, y));
    if inr(l.close) {
        ht::CLOSE
    } else if inr(l.min) {
        ht::MINBUTTON
    } else if inr(l.max) {
        ht::MAXBUTTON
    } else if inr(l.caption) {
        ht::CAPTION
    } else if inr(l.menu) {
        ht::MENU
    } else {
        ht::BORDER
    }
}

fn mouse(d: &mut Desktop, x: i32, y: i32, msg: u32) -> Option<Msg> {
    d.cursor = (x, y);
    let h = if d.capture != 0 {
        d.capture
    } else {
        d.window_at(x, y)
    };
    if h == 0 {
        return None;
    }
    let mk = |d: &Desktop| -> u32 {
        (d.keys[1] >> 7) as u32
            | ((d.keys[2] >> 7) as u32) << 1
            | ((d.keys[0x10] >> 7) as u32) << 2
            | ((d.keys[0x11] >> 7) as u32) << 3
    };
    let hit = if d.capture != 0 {
        ht::CLIENT
    } else {
        hit_test(d, h, x, y)
    };
    if hit == ht::CLIENT {
        let c = d.client_rect(h)?;
        let (cx, cy) = (x - c.left, y - c.top);
        Some(Msg {
            hwnd: h,
            message: msg,
            wparam: mk(d),
            lparam: (cx as u16 as u32) | (cy as u16 as u32) << 16,
            time: 0,
            pt: (x, y),
        })
    } else {
        // Non-client: WM_NCMOUSEMOVE (0xA0) .. WM_NCRBUTTONUP, screen coordinates.
        Some(Msg {
            hwnd: h,
            message: msg - wm::MOUSEMOVE + 0xA0,
            wparam: hit,
            lparam: (x as u16 as u32) | (y as u16 as u32) << 16,
            time: 0,
            pt: (x, y),
        })
    }
}

/// A key message (its state change is applied when the program removes it
/// from the queue: [`key_state_on_removal`]).
fn key(d: &mut Desktop, vk: u8, down: bool, alt: bool) -> Msg {
    let h = if d.focus != 0 { d.focus } else { d.active };
    let sys = alt || vk == 0x12;
    let message = match (down, sys) {
        (true, false) => wm::KEYDOWN,
        (false, false) => wm::KEYUP,
        (true, true) => wm::SYSKEYDOWN,
        (false, true) => wm::SYSKEYUP,
    };
    let lparam = 1 | (vk as u32) << 16 | (alt as u32) << 29 | if down { 0 } else { 0xC000_0000 };
    Msg {
        hwnd: h,
        message,
        wparam: vk as u32,
        lparam,
        time: 0,
        pt: d.cursor,
    }
}

/// The messages an event produces now (the key state and cursor updated as it goes).
pub fn expand(d: &mut Desktop, ev: &Event) -> Vec<Msg> {
    let mut out = Vec::new();
    let mut push = |m: Option<Msg>| out.extend(m);
    match &ev.action {
        Action::Move(x, y) => push(mouse(d, *x, *y, wm::MOUSEMOVE)),
        Action::Click(x, y) | Action::Down(x, y) | Action::Up(x, y) => {
            let (down, up) = (
                !matches!(ev.action, Action::Up(..)),
                !matches!(ev.action, Action::Down(..)),
            );
            push(mouse(d, *x, *y, wm::MOUSEMOVE));
            if down {
                d.keys[1] |= 0x80;
                push(mouse(d, *x, *y, wm::LBUTTONDOWN));
            }
            if up {
                d.keys[1] &= !0x80;
                push(mouse(d, *x, *y, wm::LBUTTONUP));
            }
        }
        Action::RightClick(x, y) => {
            push(mouse(d, *x, *y, wm::MOUSEMOVE));
            d.keys[2] |= 0x80;
            push(mouse(d, *x, *y, wm::RBUTTONDOWN));
            d.keys[2] &= !0x80;
            push(mouse(d, *x, *y, wm::RBUTTONUP));
        }
        Action::Key {
            vk,
            ctrl,
            shift,
            alt,
        } => {
            let mods: Vec<u8> = [(*ctrl, 0x11u8), (*shift, 0x10), (*alt, 0x12)]
                .iter()
                .filter(|m| m.0)
                .map(|m| m.1)
                .collect();
            for &m in &mods {
                push(Some(key(d, m, true, *alt && m != 0x12)));
            }
            push(Some(key(d, *vk, true, *alt)));
            push(Some(key(d, *vk, false, *alt)));
            for &m in mods.iter().rev() {
                push(Some(key(d, m, false, *alt && m != 0x12)));
            }
        }
        Action::Text(s) => {
            for c in s.chars() {
                let Some((vk, shift)) = stroke_of(c) else {
                    continue;
                };
                if shift {
                    push(Some(key(d, 0x10, true, false)));
                }
                push(Some(key(d, vk, true, false)));
                push(Some(key(d, vk, false, false)));
                if shift {
                    push(Some(key(d, 0x10, false, false)));
                }
            }
        }
    }
    out
}

/// The key state as the program sees it follows the messages it has taken
/// from its queue, not the ones still waiting (Windows' synchronous key
/// state): a scripted Ctrl+Q queues Ctrl down, Q down, Q up, Ctrl up at
/// once, and TranslateAccelerator must see Ctrl down while it handles Q.
/// Down sets bit 7 and flips the toggle bit 0; up clears bit 7.
pub fn key_state_on_removal(d: &mut Desktop, m: &Msg) {
    let down = matches!(m.message, wm::KEYDOWN | wm::SYSKEYDOWN);
    let up = matches!(m.message, wm::KEYUP | wm::SYSKEYUP);
    let vk = (m.wparam & 0xFF) as usize;
    if down {
        d.keys[vk] = (d.keys[vk] | 0x80) ^ 1;
    } else if up {
        d.keys[vk] &= !0x80;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_language() {
        let ev =
            parse("key F2 @ 9000000; click 120,80 @ 5_000_000; text Hi! @ 10; key ctrl+o @ 11")
                .unwrap();
        assert_eq!(
            ev[0],
            Event {
                at: 10,
                action: Action::Text("Hi!".into())
            }
        );
        assert_eq!(
            ev[1].action,
            Action::Key {
                vk: b'O',
                ctrl: true,
                shift: false,
                alt: false
            }
        );
        assert_eq!(
            ev[2],
            Event {
                at: 5_000_000,
                action: Action::Click(120, 80)
            }
        );
        assert_eq!(
            ev[3].action,
            Action::Key {
                vk: 0x71,
                ctrl: false,
                shift: false,
                alt: false
            }
        );
        for bad in [
            "click 1 @ 5",
            "key F99 @ 1",
            "jump 1,2 @ 3",
            "click 1,2",
            "text \u{e9} @ 1",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        for c in "Hello, World! 0-9 ~_+{}|:\"<>?".chars() {
            let (vk, sh) = stroke_of(c).unwrap();
            assert_eq!(char_of(vk, sh, false), Some(c as u16), "{c:?}");
        }
    }
}
