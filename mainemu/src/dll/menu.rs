//! Menus on a click: a click on a window's menu bar (WM_NCLBUTTONDOWN with
//! HTMENU reaching DefWindowProc) opens the item's popup under it as a
//! host-side popup window (an internal `PopupMenuWndProc` thunk) in the
//! Windows 98 classic look: raised edge, items with their mnemonic
//! underlined and the shortcut text after the tab right-aligned, grey
//! embossed text for disabled items, a check mark for checked ones,
//! separators, the highlighted item in the selection colours. The owner
//! gets WM_INITMENU and WM_INITMENUPOPUP first (so it can check and
//! enable items).
//!
//! The menu loop runs inside that DefWindowProc call, on the guest clock
//! like GetMessage (the call blocks with nothing to deliver and is made
//! again on wake-up, `Env::retrying`): a button press on an item
//! highlights it, its release on an enabled command item closes the menu
//! and posts WM_COMMAND (the item's id) to the owner; Up/Down move the
//! highlight, Enter chooses it; Escape or a press anywhere else closes the
//! menu (that press is used up). Other messages are dispatched as usual.
//!
//! Not modelled: keyboard access from the bar (Alt, F10, mnemonics),
//! moving between the bar's popups while one is open, cascading submenus,
//! the bar item drawn pushed in, WM_MENUSELECT, TrackPopupMenu.
//!
//! Owns the popup's layout, pixels and loop. It must not hold
//! window-manager state (desktop does) or change menus (user32 does).

use super::{user32, Env, Ret};
use crate::desktop::metrics::{color, sys_color, ws};
use crate::desktop::{nc, wm, MenuEntry, Window};
use crate::gdi::raster::Paint;
use crate::gdi::region::{Rect, Region};

/// An open popup menu.
#[derive(Clone, Debug)]
pub struct MenuTrack {
    pub owner: u32,
    pub popup: u32,
    /// The popup's menu handle and its items when it opened.
    pub menu: u32,
    pub items: Vec<MenuEntry>,
    pub hot: Option<usize>,
    /// Set when the loop ends: the command chosen, or None.
    pub result: Option<Option<u32>>,
}

const MF_GRAYED: u32 = 0x1;
const MF_DISABLED: u32 = 0x2;
const MF_CHECKED: u32 = 0x8;
const MF_POPUP: u32 = 0x10;
const MF_SEPARATOR: u32 = 0x800;
/// Item and separator heights, the popup's border, text inset.
const ITEM: i32 = 17;
const SEPARATOR: i32 = 9;
const BORDER: i32 = 3;
const INSET: i32 = 18;

mod internal {
    crate::dll! { "user32.dll";
        stdcall fn PopupMenuWndProc(env, h: u32, msg: u32, wp: u32, lp: u32) -> super::Ret { super::popup_proc(env, h, msg, wp, lp) }
    }
}

fn wndproc(env: &mut Env) -> u32 {
    internal::DLL.guest_addr(env, 0)
}

fn is_separator(e: &MenuEntry) -> bool {
    e.flags & MF_SEPARATOR != 0 || (e.text.is_empty() && e.id == 0 && e.sub == 0)
}

fn enabled(e: &MenuEntry) -> bool {
    e.flags & (MF_GRAYED | MF_DISABLED) == 0 && !is_separator(e)
}

fn height(e: &MenuEntry) -> i32 {
    if is_separator(e) {
        SEPARATOR
    } else {
        ITEM
    }
}

/// The label before the tab and the shortcut text after it.
fn split_tab(t: &[u16]) -> (&[u16], &[u16]) {
    match t.iter().position(|&u| u == 9) {
        Some(i) => (&t[..i], &t[i + 1..]),
        None => (t, &[]),
    }
}

/// The popup's size for these items.
fn size(items: &[MenuEntry]) -> (i32, i32) {
    let mut label = 0;
    let mut keys = 0;
    for e in items {
        let (l, k) = split_tab(&e.text);
        label = label.max(nc::label_width(l));
        keys = keys.max(nc::label_width(k));
    }
    let w = INSET + label + if keys > 0 { 24 + keys } else { 0 } + INSET + 2 * BORDER;
    let h = items.iter().map(height).sum::<i32>() + 2 * BORDER;
    (w, h)
}

/// The item at a client y, if any.
fn item_at(items: &[MenuEntry], y: i32) -> Option<usize> {
    let mut top = BORDER;
    for (i, e) in items.iter().enumerate() {
        let h = height(e);
        if y >= top && y < top + h {
            return Some(i);
        }
        top += h;
    }
    None
}

/// A press on the menu bar of `owner` at screen (x, y): opens the item's popup.
pub fn track_bar(env: &mut Env, owner: u32, x: i32, y: i32) -> Ret {
    let Some(w) = env.desktop.win(owner).cloned() else {
        return Ret::Value(0);
    };
    let hmenu = w.menu();
    let Some(labels) = env.desktop.menu_labels(hmenu) else {
        return Ret::Value(0);
    };
    let Some(bar) = nc::layout(w.rect, w.style, w.ex_style, true).menu else {
        return Ret::Value(0);
    };
    if !bar.contains(x, y) {
        return Ret::Value(0);
    }
    let Some((i, r)) = nc::menu_item_at(bar, &labels, x) else {
        return Ret::Value(0);
    };
    let Some(entry) = env
        .desktop
        .menus
        .get(&hmenu)
        .and_then(|m| m.items.get(i))
        .cloned()
    else {
        return Ret::Value(0);
    };
    if entry.sub == 0 {
        // A command on the bar itself.
        if enabled(&entry) {
            user32::post(env, owner, wm::COMMAND, entry.id & 0xFFFF, 0);
        }
        return Ret::Value(0);
    }
    let sub = entry.sub;
    user32::send(env, owner, wm::INITMENU, hmenu, 0, move |env, _| {
        user32::send(
            env,
            owner,
            wm::INITMENUPOPUP,
            sub,
            i as u32,
            move |env, _| open(env, owner, sub, r.left, r.bottom),
        )
    })
}

/// Shows the popup of `menu` with its top-left at (x, y) and runs the loop.
fn open(env: &mut Env, owner: u32, menu: u32, x: i32, y: i32) -> Ret {
    let items = env
        .desktop
        .menus
        .get(&menu)
        .map(|m| m.items.clone())
        .unwrap_or_default();
    let (w, h) = size(&items);
    let sr = env.desktop.screen_rect();
    let x = x.min(sr.right - w).max(0);
    let y = if y + h > sr.bottom { (y - h).max(0) } else { y };
    let class =
        user32::ensure_builtin(env, &"#32768".encode_utf16().collect::<Vec<_>>()).unwrap_or(0);
    let proc_ = wndproc(env);
    let popup = env.desktop.add_window(Window::new(
        class,
        0,
        owner,
        ws::POPUP,
        ws::EX_TOOLWINDOW,
        Rect::new(x, y, x + w, y + h),
        Vec::new(),
        proc_,
        0,
    ));
    // The popup belongs to the thread tracking the menu.
    let tid = env.thread_id();
    if let Some(w) = env.desktop.win_mut(popup) {
        w.thread = tid;
    }
    env.desktop.menu_track = Some(MenuTrack {
        owner,
        popup,
        menu,
        items,
        hot: None,
        result: None,
    });
    // SW_SHOWNOACTIVATE: the owner stays the active window.
    user32::show_window(env, popup, 4, Box::new(step))
}

/// The blocked DefWindowProc call made again: the loop continues.
pub fn resume(env: &mut Env) -> Ret {
    step(env)
}

fn set_hot(env: &mut Env, hot: Option<usize>) {
    if let Some(t) = env.desktop.menu_track.as_mut() {
        if t.hot != hot {
            t.hot = hot;
            let p = t.popup;
            env.desktop.invalidate(p, None, false);
        }
    }
}

/// Moves the highlight to the next enabled item in direction `dir`.
fn move_hot(env: &mut Env, dir: i32) {
    let Some(t) = env.desktop.menu_track.as_ref() else {
        return;
    };
    let n = t.items.len() as i32;
    if n == 0 {
        return;
    }
    let mut i = t.hot.map_or(if dir > 0 { -1 } else { n }, |h| h as i32);
    for _ in 0..n {
        i = (i + dir).rem_euclid(n);
        if !is_separator(&t.items[i as usize]) {
            set_hot(env, Some(i as usize));
            return;
        }
    }
}

fn choose(env: &mut Env, i: Option<usize>) {
    let Some(t) = env.desktop.menu_track.as_mut() else {
        return;
    };
    if let Some(e) = i.and_then(|i| t.items.get(i)) {
        if enabled(e) && e.flags & MF_POPUP == 0 && e.sub == 0 {
            t.result = Some(Some(e.id & 0xFFFF));
        }
    }
}

fn close(env: &mut Env) {
    if let Some(t) = env.desktop.menu_track.as_mut() {
        t.result = Some(None);
    }
}

/// One turn of the menu loop (see the module header).
fn step(env: &mut Env) -> Ret {
    loop {
        let Some(t) = env.desktop.menu_track.clone() else {
            return Ret::Value(0);
        };
        if let Some(r) = t.result {
            env.desktop.menu_track = None;
            let owner = t.owner;
            return user32::destroy_then(
                env,
                t.popup,
                Box::new(move |env| {
                    if let Some(id) = r {
                        user32::post(env, owner, wm::COMMAND, id, 0);
                    }
                    Ret::Value(0)
                }),
            );
        }
        let m = match user32::modal_next(env) {
            user32::ModalNext::Msg(m) => m,
            user32::ModalNext::Wait(r) => return r,
            user32::ModalNext::Quit => {
                close(env);
                continue;
            }
        };
        let on_popup = m.hwnd == t.popup;
        match m.message {
            wm::LBUTTONDOWN | wm::LBUTTONUP if on_popup => {
                let i = item_at(&t.items, (m.lparam >> 16) as i16 as i32);
                let i = i.filter(|&i| !is_separator(&t.items[i]));
                set_hot(env, i);
                if m.message == wm::LBUTTONUP {
                    choose(env, i);
                }
                continue;
            }
            // A press anywhere else closes the menu and is used up.
            wm::LBUTTONDOWN | wm::RBUTTONDOWN | wm::MBUTTONDOWN | 0xA1 | 0xA4 | 0xA7 => {
                close(env);
                continue;
            }
            wm::KEYDOWN | wm::SYSKEYDOWN => {
                match m.wparam {
                    0x1B | 0x12 => close(env),
                    0x26 => move_hot(env, -1),
                    0x28 => move_hot(env, 1),
                    0x0D => choose(env, t.hot),
                    _ => {}
                }
                continue;
            }
            // Other input (moves, releases, key ups, characters) is used up.
            x if (wm::KEYDOWN..=0x108).contains(&x)
                || (wm::MOUSEMOVE..=0x20E).contains(&x)
                || (0xA0..=0xAD).contains(&x) =>
            {
                continue
            }
            _ => return user32::dispatch_msg(env, &m, |env, _| step(env)),
        }
    }
}

fn popup_proc(env: &mut Env, h: u32, msg: u32, wp: u32, lp: u32) -> Ret {
    match msg {
        wm::PAINT => {
            paint(env, h);
            Ret::Value(0)
        }
        wm::ERASEBKGND => Ret::Value(1),
        _ => user32::def_window_proc(env, h, msg, wp, lp, true),
    }
}

/// Draws the popup: face, raised edge, the items.
fn paint(env: &mut Env, h: u32) {
    if let Some(w) = env.desktop.win_mut(h) {
        w.update = Region::empty();
        w.erase = false;
    }
    let Some(t) = env.desktop.menu_track.clone().filter(|t| t.popup == h) else {
        return;
    };
    if !env.desktop.really_visible(h) {
        return;
    }
    let c = env.desktop.client_rect(h).unwrap_or_default();
    let hdc = user32::window_dc(env, h, false, None);
    env.desktop.gdi.draw(&mut env.mem, hdc, |dc| {
        let (ox, oy) = dc.pt(0, 0);
        let mut cv = dc.canvas();
        let all = Rect::new(ox, oy, ox + c.width(), oy + c.height());
        let px = |cv: &crate::gdi::raster::Canvas, i: u32| {
            Paint::Solid(cv.bits.from_color(sys_color(i)))
        };
        let face = px(&cv, color::MENU);
        cv.fill_rect(all, &face);
        nc::raised(&mut cv, all);
        let mut top = oy + BORDER;
        for (i, e) in t.items.iter().enumerate() {
            let hgt = height(e);
            let row = Rect::new(ox + BORDER, top, ox + c.width() - BORDER, top + hgt);
            top += hgt;
            if is_separator(e) {
                let mid = row.top + hgt / 2 - 1;
                let r = Rect::new(row.left + 1, mid, row.right - 1, mid + 2);
                nc::edge(
                    &mut cv,
                    r,
                    sys_color(color::BTNSHADOW),
                    sys_color(color::BTNHIGHLIGHT),
                );
                continue;
            }
            let hot = t.hot == Some(i);
            if hot {
                let hl = px(&cv, color::HIGHLIGHT);
                cv.fill_rect(row, &hl);
            }
            let ty = row.top + (hgt - 13) / 2;
            let (label, keys) = split_tab(&e.text);
            let kx = row.right - INSET - nc::label_width(keys);
            let ink = |col| {
                move |cv: &mut crate::gdi::raster::Canvas, dx: i32, dy: i32| {
                    nc::label(cv, row.left + INSET + dx, ty + dy, label, col, false);
                    if !keys.is_empty() {
                        nc::label(cv, kx + dx, ty + dy, keys, col, false);
                    }
                }
            };
            if !enabled(e) {
                // Disabled: embossed (highlight one pixel down-right, then shadow).
                if !hot {
                    ink(sys_color(color::BTNHIGHLIGHT))(&mut cv, 1, 1);
                }
                ink(sys_color(color::GRAYTEXT))(&mut cv, 0, 0);
            } else if hot {
                ink(sys_color(color::HIGHLIGHTTEXT))(&mut cv, 0, 0);
            } else {
                ink(sys_color(color::MENUTEXT))(&mut cv, 0, 0);
            }
            if e.flags & MF_CHECKED != 0 {
                let col = sys_color(if hot {
                    color::HIGHLIGHTTEXT
                } else {
                    color::MENUTEXT
                });
                let p = Paint::Solid(cv.bits.from_color(col));
                // A 7 x 7 check mark, three pixels thick.
                let (x, y) = (row.left + 6, row.top + (hgt - 7) / 2);
                for k in 0..7 {
                    let dy = if k <= 2 { 2 + k } else { 6 - k };
                    cv.fill_rect(Rect::new(x + k, y + dy, x + k + 1, y + dy + 3), &p);
                }
            }
        }
    });
    env.desktop.gdi.delete_dc(hdc);
}
