//! USER32.dll: window classes and windows, the message queue and loop,
//! painting, timers on the guest clock, input state, menus and
//! accelerators from resources, system metrics and colours, rectangles,
//! text drawing, resources (strings, bitmaps, icons, cursors), and the
//! part console programs use: the character helpers (CharUpper/Lower(Buff),
//! CharNext/Prev, IsChar*; UTF-16 through Rust's simple one-to-one case
//! mapping, ANSI as Latin-1) and wsprintf over the C runtime's formatting.
//!
//! Window procedures are guest code: a body that sends a message returns
//! [`Ret::call`] and continues in the closure with the procedure's result
//! (CreateWindowEx sends WM_NCCREATE, WM_CREATE, WM_SIZE, WM_MOVE in
//! turn). GetMessage with nothing to deliver blocks the thread until the
//! next timer or scripted input on the guest clock.
//!
//! Owns the user32 calling surface and message semantics. It must not
//! draw pixels itself (desktop::nc and gdi do) or hold window-manager
//! state (desktop does).

use super::crt::stdio::{fmt_a, fmt_w, store, Bound};
use super::gui_structs::{self as gs, read_rect, read_str, units, write_pair, write_rect};
use super::msgqueue;
use super::{Env, Ret};
use crate::desktop::input::{self, ht};
use crate::desktop::metrics::{self, ws};
use crate::desktop::{wm, Class, Desktop, Msg, Timer, UserObject, Window};
use crate::gdi::raster::Paint;
use crate::gdi::region::{Op, Rect, Region};
use crate::pe::resources::{self as res, ResId};

/// ERROR_RESOURCE_NAME_NOT_FOUND / ERROR_RESOURCE_DATA_NOT_FOUND.
const RESOURCE_NAME_NOT_FOUND: u32 = 1814;
const RESOURCE_DATA_NOT_FOUND: u32 = 1812;
/// wsprintf's output limit (characters, without the NUL).
const WSPRINTF_MAX: u32 = 1024;

pub(crate) fn desk(env: &mut Env) -> &mut Desktop {
    &mut env.desktop
}

/// The handle GetDesktopWindow returns.
pub const DESKTOP_HWND: u32 = 0x0001_0010;
const CW_USEDEFAULT: i32 = 0x8000_0000u32 as i32;

/// A resource name argument: MAKEINTRESOURCE (< 0x10000) or a string pointer.
pub(crate) fn res_name(env: &Env, v: u32, wide: bool) -> ResId {
    if v < 0x1_0000 {
        ResId::Id(v as u16)
    } else {
        let s = read_str(&env.mem, v, -1, wide).unwrap_or_default();
        let s = String::from_utf16_lossy(&s);
        match s.strip_prefix('#').and_then(|n| n.parse::<u16>().ok()) {
            Some(id) => ResId::Id(id),
            None => ResId::Name(s.to_ascii_uppercase()),
        }
    }
}

/// The guest address of one of our exports (its thunk), e.g. DefWindowProcW
/// as the window procedure of the built-in classes.
fn export_addr(env: &mut Env, name: &str) -> u32 {
    let Some(e) = DLL.all_exports().into_iter().find(|e| e.name == name) else {
        return 0;
    };
    env.thunks
        .slot(&mut env.mem, crate::thunks::Thunk::Api(e, &DLL))
        .unwrap_or(0)
}

/// Sends `msg` to `hwnd`'s window procedure, then continues with its result.
pub fn send(
    env: &mut Env,
    hwnd: u32,
    msg: u32,
    wp: u32,
    lp: u32,
    then: impl FnOnce(&mut Env, u32) -> Ret + 'static,
) -> Ret {
    match desk(env).win(hwnd).map(|w| w.wndproc) {
        Some(p) if p != 0 => Ret::call(p, vec![hwnd, msg, wp, lp], then),
        _ => then(env, 0),
    }
}

/// Sends a list of messages in order, ignoring results, then `last`.
pub(crate) fn send_all(
    env: &mut Env,
    mut msgs: std::collections::VecDeque<(u32, u32, u32, u32)>,
    last: Box<dyn FnOnce(&mut Env) -> Ret>,
) -> Ret {
    match msgs.pop_front() {
        None => last(env),
        Some((h, m, w, l)) => send(env, h, m, w, l, move |env, _| send_all(env, msgs, last)),
    }
}

/// A scratch block in guest memory for structures passed to window procedures.
pub(crate) fn scratch(env: &mut Env, size: u32) -> u32 {
    let size = (size + 15) & !15;
    if env.desktop.scratch.is_none() {
        let a = env
            .mem
            .virtual_alloc(
                0,
                0x1_0000,
                crate::memory::mem::RESERVE | crate::memory::mem::COMMIT,
                crate::memory::prot::READWRITE,
            )
            .unwrap_or(0);
        env.desktop.scratch = Some((a, 0x1_0000));
        env.desktop.scratch_top = 0;
    }
    let (base, cap) = env.desktop.scratch.unwrap_or((0, 0));
    if env.desktop.scratch_top + size > cap {
        env.desktop.scratch_top = 0;
    }
    let a = base + env.desktop.scratch_top;
    env.desktop.scratch_top += size;
    a
}

pub(crate) fn scratch_release(env: &mut Env, size: u32) {
    let size = (size + 15) & !15;
    env.desktop.scratch_top = env.desktop.scratch_top.saturating_sub(size);
}

pub(crate) fn write_msg(env: &mut Env, a: u32, m: &Msg) -> bool {
    let mut b = Vec::with_capacity(28);
    for v in [
        m.hwnd,
        m.message,
        m.wparam,
        m.lparam,
        m.time,
        m.pt.0 as u32,
        m.pt.1 as u32,
    ] {
        b.extend(v.to_le_bytes());
    }
    env.mem.poke(a, &b).is_some()
}

pub(crate) fn read_msg(env: &Env, a: u32) -> Option<Msg> {
    let r = |o: u32| env.mem.peek_u32(a + o);
    Some(Msg {
        hwnd: r(0)?,
        message: r(4)?,
        wparam: r(8)?,
        lparam: r(12)?,
        time: r(16)?,
        pt: (r(20)? as i32, r(24)? as i32),
    })
}

pub(crate) use super::msgqueue::{next_message, post};

/// What a modal loop (a dialog's, the file dialog's, the menu's) takes
/// next from the thread's queue.
pub(crate) enum ModalNext {
    Msg(Msg),
    /// Nothing to deliver: return this wait (the call is made again).
    Wait(Ret),
    /// WM_QUIT: kept for the caller's own loop; the modal loop ends.
    Quit,
}

/// The next message in GetMessage's order for a modal loop.
pub(crate) fn modal_next(env: &mut Env) -> ModalNext {
    let Some(m) = next_message(env, 0, 0, 0, true) else {
        let deadline = desk(env).next_event();
        desk(env).waiting_for_input = deadline.is_none();
        return ModalNext::Wait(Ret::Block { deadline });
    };
    desk(env).waiting_for_input = false;
    if m.message == wm::QUIT {
        super::msgqueue::post_quit(env, m.wparam);
        return ModalNext::Quit;
    }
    ModalNext::Msg(m)
}

fn register_class(env: &mut Env, a: u32, ex: bool, wide: bool) -> u32 {
    let o = if ex { 4 } else { 0 };
    let r = |k: u32| env.mem.peek_u32(a + o + 4 * k).unwrap_or(0);
    let (style, proc_, cls, wnd, inst, icon, cursor, bg, menu, name) =
        (r(0), r(1), r(2), r(3), r(4), r(5), r(6), r(7), r(8), r(9));
    let name_id = res_name(env, name, wide);
    let (name_units, atom_req) = match &name_id {
        ResId::Id(a) => (Vec::new(), *a),
        ResId::Name(s) => (units(s), 0),
    };
    let menu = (menu != 0).then(|| res_name(env, menu, wide));
    let d = desk(env);
    if d.class_index(&name_units, atom_req).is_some() {
        env.last_error = 1410; // ERROR_CLASS_ALREADY_EXISTS
        return 0;
    }
    let atom = 0xC000 + d.classes.len() as u16;
    d.classes.push(Class {
        name: crate::desktop::upper(&name_units),
        given: match &name_id {
            ResId::Id(a) => units(&format!("#{a}")),
            ResId::Name(_) => name_units.clone(),
        },
        atom,
        style,
        wndproc: proc_,
        cls_extra: cls as i32,
        wnd_extra: wnd as i32,
        instance: inst,
        icon,
        cursor,
        background: bg,
        menu,
        wide,
        extra: vec![0; (cls as usize).min(4096)],
    });
    atom as u32
}

/// GetClassInfo(Ex)(A/W): a registered or built-in class's WNDCLASS(EX),
/// `lpszClassName` the caller's name, `lpszMenuName` 0 (the name given to
/// RegisterClass is not kept); the class atom, or 0 with
/// ERROR_CLASS_DOES_NOT_EXIST.
fn get_class_info(env: &mut Env, name: u32, out: u32, ex: bool, wide: bool) -> u32 {
    let (units_, atom) = match res_name(env, name, wide) {
        ResId::Id(a) => (Vec::new(), a),
        ResId::Name(s) => (units(&s), 0),
    };
    let found = find_class(env, &units_, atom);
    let Some(i) = found else {
        env.last_error = 1411;
        return 0;
    };
    let c = desk(env).classes[i].clone();
    let o = if ex { 4 } else { 0 };
    let vals = [
        c.style,
        c.wndproc,
        c.cls_extra as u32,
        c.wnd_extra as u32,
        c.instance,
        c.icon,
        c.cursor,
        c.background,
        0,
        name,
    ];
    for (k, v) in vals.into_iter().enumerate() {
        env.mem.poke_u32(out + o + 4 * k as u32, v);
    }
    if ex {
        env.mem.poke_u32(out + 44, c.icon);
    }
    c.atom as u32
}

/// A class by name or atom: registered, or a system class made on first
/// use (the `#3276x` system classes are also their integer atoms).
fn find_class(env: &mut Env, name: &[u16], atom: u16) -> Option<usize> {
    if let Some(i) = desk(env).class_index(name, atom) {
        return Some(i);
    }
    match atom {
        0 => ensure_builtin(env, name),
        32768..=32772 => ensure_builtin(env, &units(&format!("#{atom}"))),
        _ => None,
    }
}

/// The built-in classes (window procedure: DefWindowProcW for now).
/// An existing class of that name is answered as it is.
pub(crate) fn ensure_builtin(env: &mut Env, name: &[u16]) -> Option<usize> {
    if let Some(i) = desk(env).class_index(name, 0) {
        return Some(i);
    }
    let up = crate::desktop::upper(name);
    let known = [
        "BUTTON",
        "STATIC",
        "EDIT",
        "LISTBOX",
        "COMBOBOX",
        "SCROLLBAR",
        "#32770",
        "#32768",
        "MSCTLS_STATUSBAR32",
        "COMBOLBOX",
        "MDICLIENT",
        "#32769",
        "#32771",
        "#32772",
    ];
    let s = String::from_utf16_lossy(&up);
    if !known.contains(&s.as_str()) {
        return None;
    }
    let proc_ = if s == "EDIT" {
        super::edit::wndproc(env)
    } else if s == "MSCTLS_STATUSBAR32" {
        super::comctl32::status_wndproc(env)
    } else if s == "#32770" {
        // The dialog class's procedure is DefDlgProc.
        export_addr(env, "DefDlgProcW")
    } else if let Some(p) = super::controls::wndproc(env, &s) {
        p
    } else {
        export_addr(env, "DefWindowProcW")
    };
    // The names Windows gives its system classes.
    let given = [
        ("BUTTON", "Button"),
        ("STATIC", "Static"),
        ("EDIT", "Edit"),
        ("LISTBOX", "ListBox"),
        ("COMBOBOX", "ComboBox"),
        ("SCROLLBAR", "ScrollBar"),
        ("MSCTLS_STATUSBAR32", "msctls_statusbar32"),
        ("COMBOLBOX", "ComboLBox"),
        ("MDICLIENT", "MDIClient"),
    ]
    .iter()
    .find(|g| g.0 == s)
    .map_or(s.clone(), |g| g.1.to_string());
    let d = desk(env);
    let atom = match s.strip_prefix('#').and_then(|n| n.parse::<u16>().ok()) {
        Some(n) => n,
        None => 0xC000 + d.classes.len() as u16,
    };
    d.classes.push(Class {
        given: units(&given),
        name: up,
        atom,
        style: 0,
        wndproc: proc_,
        cls_extra: 0,
        wnd_extra: if s == "#32770" { 30 } else { 0 },
        instance: 0,
        icon: 0,
        cursor: 0,
        background: if s == "EDIT" { 6 } else { 16 },
        menu: None,
        wide: true,
        extra: Vec::new(),
    });
    Some(d.classes.len() - 1)
}

/// Shows a window (frame drawn, client invalidated) or hides it (area exposed).
fn set_visible(env: &mut Env, h: u32, show: bool) {
    let d = desk(env);
    let Some(w) = d.win_mut(h) else { return };
    let was = w.visible();
    if show == was {
        return;
    }
    if show {
        w.style |= ws::VISIBLE;
        d.draw_frame(h);
        let area = Region::rect(d.win(h).map(|w| w.rect).unwrap_or_default());
        d.invalidate_screen_area(h, &area);
        // Frames of visible children.
        for c in d.win(h).map(|w| w.children.clone()).unwrap_or_default() {
            if d.win(c).is_some_and(|w| w.visible()) {
                d.draw_frame(c);
            }
        }
    } else {
        let r = w.rect;
        w.style &= !ws::VISIBLE;
        d.expose(Region::rect(r));
        if let Some(p) = d.win(h).filter(|w| w.is_child()).map(|w| w.parent) {
            d.invalidate_screen_area(p, &Region::rect(r));
        }
    }
}

/// Moves/resizes a window to `r` (screen coordinates): the old area is
/// exposed, the new one drawn and invalidated.
fn set_rect(env: &mut Env, h: u32, r: Rect) {
    let d = desk(env);
    let Some(w) = d.win(h).cloned() else { return };
    if w.rect == r {
        return;
    }
    let old = w.rect;
    let (dx, dy) = (r.left - old.left, r.top - old.top);
    // Children move with their parent.
    fn shift(d: &mut Desktop, h: u32, dx: i32, dy: i32) {
        for c in d.win(h).map(|w| w.children.clone()).unwrap_or_default() {
            if let Some(cw) = d.win_mut(c) {
                cw.rect = cw.rect.offset(dx, dy);
            }
            shift(d, c, dx, dy);
        }
    }
    if let Some(wm_) = d.win_mut(h) {
        wm_.rect = r;
    }
    shift(d, h, dx, dy);
    if w.visible() {
        let uncovered = Region::rect(old).combine(&Region::rect(r), Op::Diff);
        d.expose(uncovered.clone());
        if w.is_child() {
            d.invalidate_screen_area(w.parent, &uncovered);
        }
        d.draw_frame(h);
        d.invalidate(h, None, true);
        for c in d.win(h).map(|w| w.children.clone()).unwrap_or_default() {
            if d.win(c).is_some_and(|x| x.visible()) {
                d.draw_frame(c);
                d.invalidate(c, None, true);
            }
        }
    }
}

/// Parent client origin in screen coordinates (0,0 for top-level windows).
fn parent_origin(env: &mut Env, h: u32) -> (i32, i32) {
    let d = desk(env);
    match d.win(h).filter(|w| w.is_child()).map(|w| w.parent) {
        Some(p) => d.client_rect(p).map_or((0, 0), |c| (c.left, c.top)),
        None => (0, 0),
    }
}

/// Sends WM_SIZE and WM_MOVE with the current client geometry.
fn size_move_msgs(env: &mut Env, h: u32) -> Vec<(u32, u32, u32, u32)> {
    let (ox, oy) = parent_origin(env, h);
    let Some(c) = desk(env).client_rect(h) else {
        return vec![];
    };
    let pack = |a: i32, b: i32| (a as u16 as u32) | (b as u16 as u32) << 16;
    vec![
        (h, wm::SIZE, 0, pack(c.width(), c.height())),
        (h, wm::MOVE, 0, pack(c.left - ox, c.top - oy)),
    ]
}

#[allow(clippy::too_many_arguments)]
fn create_window(
    env: &mut Env,
    ex: u32,
    class: u32,
    title: u32,
    style: u32,
    x: i32,
    y: i32,
    w: i32,
    h: i32,
    parent: u32,
    menu: u32,
    inst: u32,
    param: u32,
    wide: bool,
) -> Ret {
    let cname = res_name(env, class, wide);
    let title_units = if title == 0 {
        Vec::new()
    } else {
        read_str(&env.mem, title, -1, wide).unwrap_or_default()
    };
    let args = NewWindow {
        ex,
        class: cname,
        title: title_units,
        cs_names: (class, title),
        style,
        pos: (x, y, w, h),
        parent,
        menu,
        inst,
        param,
        wide,
    };
    create_window_then(env, args, Box::new(|_, h| Ret::Value(h)))
}

/// CreateWindowEx's arguments with the class name and title already read
/// (the dialog manager builds them from a template).
pub(crate) struct NewWindow {
    pub ex: u32,
    pub class: ResId,
    pub title: Vec<u16>,
    /// lpszClass and lpszName as CREATESTRUCT shows them (0: none).
    pub cs_names: (u32, u32),
    pub style: u32,
    /// x, y, width, height (CW_USEDEFAULT as in CreateWindowEx).
    pub pos: (i32, i32, i32, i32),
    pub parent: u32,
    pub menu: u32,
    pub inst: u32,
    pub param: u32,
    pub wide: bool,
}

/// CreateWindowEx, then `then` with the new window (0: it failed).
pub(crate) fn create_window_then(
    env: &mut Env,
    a: NewWindow,
    then: Box<dyn FnOnce(&mut Env, u32) -> Ret>,
) -> Ret {
    let (x, y, w, h) = a.pos;
    let (class, title) = a.cs_names;
    let (ex, style, parent, menu) = (a.ex, a.style, a.parent, a.menu);
    let (inst, param, wide) = (a.inst, a.param, a.wide);
    let (cname, title_units) = (a.class, a.title);
    let (cunits, catom) = match &cname {
        ResId::Id(a) => (Vec::new(), *a),
        ResId::Name(s) => (units(s), 0),
    };
    let Some(ci) = find_class(env, &cunits, catom) else {
        env.last_error = 1407; // ERROR_CANNOT_FIND_WND_CLASS
        return then(env, 0);
    };
    let cls = desk(env).classes[ci].clone();
    let child = style & ws::CHILD != 0;
    // A child of the desktop window is placed among the top-level windows.
    let parent = if child && parent == DESKTOP_HWND {
        0
    } else {
        parent
    };
    if child && parent != 0 && desk(env).win(parent).is_none() {
        env.last_error = 1406;
        return then(env, 0);
    }
    // Top-level windows without WS_POPUP/WS_CHILD are overlapped: caption and border.
    let style = if !child && style & ws::POPUP == 0 {
        style | ws::CAPTION
    } else {
        style
    };
    // The menu of a top-level window: the given one, or the class's.
    let hmenu = if child {
        menu
    } else if menu != 0 {
        menu
    } else if let Some(m) = &cls.menu {
        let base = if cls.instance != 0 {
            cls.instance
        } else {
            env.image_base
        };
        load_menu(env, base, m)
    } else {
        0
    };
    let tid = env.thread_id();
    let d = desk(env);
    let n = d.top.len() as i32;
    let (sw, sh) = (d.gdi.screen.width, d.gdi.screen.height);
    let (ox, oy) = if child {
        d.client_rect(parent).map_or((0, 0), |c| (c.left, c.top))
    } else {
        (0, 0)
    };
    let (x, y) = if x == CW_USEDEFAULT {
        (16 + 24 * (n % 8), 16 + 24 * (n % 8))
    } else {
        (x, y)
    };
    let (w, h) = if w == CW_USEDEFAULT {
        (sw * 3 / 4, sh * 3 / 4)
    } else {
        (w, h)
    };
    let rect = Rect::new(ox + x, oy + y, ox + x + w.max(0), oy + y + h.max(0));
    let visible = style & ws::VISIBLE != 0;
    let win = Window {
        instance: inst,
        extra: vec![0; (cls.wnd_extra.clamp(0, 4096)) as usize],
        wide,
        ..Window::new(
            ci,
            if child { parent } else { 0 },
            if child { 0 } else { parent },
            style & !ws::VISIBLE,
            ex,
            rect,
            title_units,
            cls.wndproc,
            hmenu,
        )
    };
    let hwnd = d.add_window(Window { thread: tid, ..win });
    // CREATESTRUCT for WM_NCCREATE / WM_CREATE.
    let cs = scratch(env, 48);
    let mut b = Vec::new();
    for v in [
        param, inst, hmenu, parent, h as u32, w as u32, y as u32, x as u32, style, title, class, ex,
    ] {
        b.extend(v.to_le_bytes());
    }
    env.mem.poke(cs, &b);
    send(env, hwnd, wm::NCCREATE, 0, cs, move |env, ok| {
        if ok == 0 {
            scratch_release(env, 48);
            desk(env).remove_window(hwnd);
            return then(env, 0);
        }
        send(env, hwnd, wm::CREATE, 0, cs, move |env, r| {
            scratch_release(env, 48);
            if r as i32 == -1 {
                desk(env).remove_window(hwnd);
                return then(env, 0);
            }
            let msgs = size_move_msgs(env, hwnd).into();
            send_all(
                env,
                msgs,
                Box::new(move |env| {
                    if visible {
                        show_window(env, hwnd, 5, Box::new(move |env| then(env, hwnd)))
                    } else {
                        then(env, hwnd)
                    }
                }),
            )
        })
    })
}

/// ShowWindow: WM_SHOWWINDOW, visibility, activation of a top-level window.
pub(crate) fn show_window(
    env: &mut Env,
    h: u32,
    cmd: u32,
    then: Box<dyn FnOnce(&mut Env) -> Ret>,
) -> Ret {
    let Some(was) = desk(env).win(h).map(|w| w.visible()) else {
        return then(env);
    };
    let show = cmd != 0;
    if show == was {
        return then(env);
    }
    send(env, h, wm::SHOWWINDOW, show as u32, 0, move |env, _| {
        set_visible(env, h, show);
        let top_level = desk(env).win(h).is_some_and(|w| !w.is_child());
        // SW_SHOWNOACTIVATE 4, SW_SHOWNA 8, SW_SHOWMINNOACTIVE 7 do not activate.
        if show && top_level && !matches!(cmd, 4 | 7 | 8) {
            activate(env, h, then)
        } else {
            then(env)
        }
    })
}

/// Makes `h` the active window: frames redrawn, WM_ACTIVATE (whose default
/// handling gives it the focus).
pub(crate) fn activate(env: &mut Env, h: u32, then: Box<dyn FnOnce(&mut Env) -> Ret>) -> Ret {
    let d = desk(env);
    let old = d.active;
    if old == h {
        return then(env);
    }
    d.active = h;
    // Bring it to the top of the Z order.
    d.top.retain(|&t| t != h);
    d.top.insert(0, h);
    if old != 0 {
        d.draw_frame(old);
    }
    d.draw_frame(h);
    let mut msgs = std::collections::VecDeque::new();
    if old != 0 && d.win(old).is_some() {
        msgs.push_back((old, wm::NCACTIVATE, 0, 0));
        msgs.push_back((old, wm::ACTIVATE, 0, h));
    }
    msgs.push_back((h, wm::NCACTIVATE, 1, 0));
    msgs.push_back((h, wm::ACTIVATE, 1, old));
    send_all(env, msgs, then)
}

/// SetFocus: WM_KILLFOCUS to the old focus, WM_SETFOCUS to the new one.
pub(crate) fn set_focus(
    env: &mut Env,
    h: u32,
    then: impl FnOnce(&mut Env, u32) -> Ret + 'static,
) -> Ret {
    let d = desk(env);
    let old = d.focus;
    if old == h {
        return then(env, old);
    }
    if h != 0 && d.win(h).is_none() {
        return then(env, 0);
    }
    d.focus = h;
    send(env, old, wm::KILLFOCUS, h, 0, move |env, _| {
        send(env, h, wm::SETFOCUS, old, 0, move |env, _| then(env, old))
    })
}

/// DestroyWindow: WM_DESTROY and WM_NCDESTROY to the window and its
/// children (parent first), then it is gone and its area exposed.
fn destroy_window(env: &mut Env, h: u32) -> Ret {
    destroy_then(env, h, Box::new(|_| Ret::Value(1)))
}

/// DestroyWindow, then `then` (with the window gone).
pub(crate) fn destroy_then(env: &mut Env, h: u32, then: Box<dyn FnOnce(&mut Env) -> Ret>) -> Ret {
    if desk(env).win(h).is_none() {
        env.last_error = 1400;
        return Ret::Value(0);
    }
    let mut all = vec![h];
    let mut i = 0;
    while i < all.len() {
        let kids = desk(env)
            .win(all[i])
            .map(|w| w.children.clone())
            .unwrap_or_default();
        all.extend(kids);
        i += 1;
    }
    let mut msgs: std::collections::VecDeque<_> =
        all.iter().map(|&x| (x, wm::DESTROY, 0, 0)).collect();
    msgs.extend(all.iter().rev().map(|&x| (x, wm::NCDESTROY, 0, 0)));
    if desk(env).active == h {
        desk(env).active = 0;
    }
    send_all(
        env,
        msgs,
        Box::new(move |env| {
            desk(env).remove_window(h);
            then(env)
        }),
    )
}

/// DefWindowProc.
pub(crate) fn def_window_proc(
    env: &mut Env,
    h: u32,
    msg: u32,
    wp: u32,
    lp: u32,
    wide: bool,
) -> Ret {
    if (0xE0..=0xEA).contains(&msg) && is_scroll_bar(env, h) {
        return Ret::Value(scroll_bar_message(env, h, msg, wp, lp));
    }
    match msg {
        wm::NCCREATE => Ret::Value(1),
        wm::PAINT => {
            if let Some(w) = desk(env).win_mut(h) {
                w.update = Region::empty();
                w.erase = false;
            }
            Ret::Value(0)
        }
        wm::ERASEBKGND => {
            let Some(w) = desk(env).win(h).cloned() else {
                return Ret::Value(0);
            };
            let bg = desk(env).classes.get(w.class).map_or(0, |c| c.background);
            if bg == 0 {
                return Ret::Value(0);
            }
            let Some(c) = desk(env).client_rect(h) else {
                return Ret::Value(0);
            };
            fill_rect(env, wp, Rect::new(0, 0, c.width(), c.height()), bg);
            Ret::Value(1)
        }
        wm::CLOSE => destroy_window(env, h).map_value(|_| 0),
        wm::SYSCOMMAND => match wp & 0xFFF0 {
            0xF060 => send(env, h, wm::CLOSE, 0, 0, |_, _| Ret::Value(0)),
            _ => Ret::Value(0),
        },
        wm::NCLBUTTONDOWN => match wp {
            ht::CLOSE => send(env, h, wm::SYSCOMMAND, 0xF060, lp, |_, _| Ret::Value(0)),
            ht::MENU => super::menu::track_bar(env, h, lp as i16 as i32, (lp >> 16) as i16 as i32),
            _ => Ret::Value(0),
        },
        wm::ACTIVATE => {
            if wp & 0xFFFF != 0 {
                set_focus(env, h, |_, _| Ret::Value(0))
            } else {
                Ret::Value(0)
            }
        }
        wm::NCACTIVATE => Ret::Value(1),
        wm::SETTEXT => {
            let t = read_str(&env.mem, lp, -1, wide).unwrap_or_default();
            if let Some(w) = desk(env).win_mut(h) {
                w.title = t;
            }
            desk(env).draw_frame(h);
            Ret::Value(1)
        }
        wm::GETTEXT => {
            let t = desk(env)
                .win(h)
                .map(|w| w.title.clone())
                .unwrap_or_default();
            Ret::Value(gs::write_str(&mut env.mem, lp, wp, &t, wide))
        }
        wm::GETTEXTLENGTH => Ret::Value(desk(env).win(h).map_or(0, |w| w.title.len() as u32)),
        wm::NCHITTEST => {
            let (x, y) = (lp as i16 as i32, (lp >> 16) as i16 as i32);
            Ret::Value(input::hit_test(desk(env), h, x, y))
        }
        wm::SETFONT => {
            if let Some(w) = desk(env).win_mut(h) {
                w.font = wp;
            }
            Ret::Value(0)
        }
        wm::GETFONT => Ret::Value(desk(env).win(h).map_or(0, |w| w.font)),
        wm::SYSKEYDOWN if wp == 0x73 && lp & (1 << 29) != 0 => {
            // Alt+F4.
            send(env, h, wm::SYSCOMMAND, 0xF060, 0, |_, _| Ret::Value(0))
        }
        _ => Ret::Value(0),
    }
}

trait MapValue {
    fn map_value(self, f: impl FnOnce(u32) -> u32) -> Ret;
}
impl MapValue for Ret {
    fn map_value(self, f: impl FnOnce(u32) -> u32) -> Ret {
        match self {
            Ret::Value(v) => Ret::Value(f(v)),
            r => r,
        }
    }
}

/// FillRect with a brush handle or a system colour index + 1.
pub(crate) fn fill_rect(env: &mut Env, hdc: u32, r: Rect, brush: u32) -> bool {
    let brush = sys_brush(env, brush);
    let (g, m) = (&mut env.desktop.gdi, &mut env.mem);
    g.draw_with_brush(m, hdc, brush, |t, p| t.fill(r, p))
        .is_some()
}

/// A system colour index + 1 becomes its solid brush (cached); other values pass.
fn sys_brush(env: &mut Env, b: u32) -> u32 {
    if (1..=31).contains(&b) {
        let c = metrics::sys_color(b - 1);
        let key = 0xFFFF_0000 | b;
        if let Some(&h) = env.desktop.sys_brushes.get(&key) {
            return h;
        }
        let h = env
            .desktop
            .gdi
            .add(crate::gdi::Object::Brush(crate::gdi::BrushObj {
                style: crate::gdi::bs::SOLID,
                color: c,
                hatch: 0,
                pattern: None,
                pal_colors: false,
            }));
        env.desktop.sys_brushes.insert(key, h);
        h
    } else {
        b
    }
}

/// A DC for a window's client area (or the whole window), clipped to what the screen shows.
pub(crate) fn window_dc(env: &mut Env, h: u32, whole: bool, extra: Option<&Region>) -> u32 {
    let d = desk(env);
    if h == 0 || h == DESKTOP_HWND {
        let r = d.screen_rect();
        return d.gdi.create_dc(Some((0, (0, 0), Region::rect(r))));
    }
    let Some(w) = d.win(h).cloned() else { return 0 };
    let area = if whole {
        w.rect
    } else {
        d.client_rect(h).unwrap_or_default()
    };
    let mut vis = d.visible_part(h, area, w.style & ws::CLIPCHILDREN != 0 || true);
    if let Some(e) = extra {
        vis = vis.combine(e, Op::And);
    }
    d.gdi.create_dc(Some((h, (area.left, area.top), vis)))
}

fn begin_paint(env: &mut Env, h: u32, ps: u32) -> Ret {
    let d = desk(env);
    let Some(w) = d.win(h).cloned() else {
        return Ret::Value(0);
    };
    let Some(c) = d.client_rect(h) else {
        return Ret::Value(0);
    };
    let mut upd = w.update.clone();
    let bounds = upd.bounds();
    upd.offset(c.left, c.top);
    let erase = w.erase;
    if let Some(wm_) = d.win_mut(h) {
        wm_.update = Region::empty();
        wm_.erase = false;
    }
    let hdc = window_dc(env, h, false, Some(&upd));
    let finish = move |env: &mut Env, erased: u32| {
        let mut b = Vec::new();
        b.extend(hdc.to_le_bytes());
        b.extend(((erase && erased == 0) as u32).to_le_bytes());
        for v in [bounds.left, bounds.top, bounds.right, bounds.bottom] {
            b.extend(v.to_le_bytes());
        }
        b.extend([0u8; 40]);
        env.mem.poke(ps, &b);
        Ret::Value(hdc)
    };
    if erase {
        send(env, h, wm::ERASEBKGND, hdc, 0, finish)
    } else {
        finish(env, 1)
    }
}

pub(crate) fn load_menu(env: &mut Env, base: u32, name: &ResId) -> u32 {
    let Some(data) = desk_res(env, base, res::RT_MENU, name) else {
        return 0;
    };
    match res::menu(&data) {
        Ok(items) => desk(env).menu_from_template(&items),
        Err(_) => 0,
    }
}

fn desk_res(env: &mut Env, base: u32, kind: u16, name: &ResId) -> Option<Vec<u8>> {
    let base = if base == 0 { env.image_base } else { base };
    env.desktop
        .resource_data(&env.mem, base, &ResId::Id(kind), name)
}

fn load_bitmap(env: &mut Env, inst: u32, name: &ResId) -> u32 {
    if inst == 0 {
        return 0; // OBM_* system bitmaps are not modelled
    }
    let Some(data) = desk_res(env, inst, res::RT_BITMAP, name) else {
        env.last_error = 1814; // ERROR_RESOURCE_NAME_NOT_FOUND
        return 0;
    };
    let Ok(info) = crate::gdi::dib::DibInfo::parse(&data, false, &[]) else {
        return 0;
    };
    let Ok(bits) = info.decode(data.get(info.header_bytes..).unwrap_or(&[])) else {
        return 0;
    };
    // A device-dependent bitmap in the screen's format (monochrome stays monochrome).
    let ddb = if info.bpp == 1 {
        let mut b = crate::gdi::bits::Bits::new(bits.width, bits.height, 1);
        for y in 0..bits.height {
            for x in 0..bits.width {
                let c = bits.color_at(x, y);
                b.set(x, y, b.from_color(c));
            }
        }
        b
    } else {
        crate::gdi::dib::convert(
            &bits,
            &crate::gdi::dib::DibInfo {
                width: bits.width,
                height: bits.height,
                top_down: true,
                bpp: 32,
                compression: 0,
                masks: crate::gdi::bits::MASKS_888,
                palette: vec![],
                header_bytes: 0,
                size_image: 0,
            },
        )
    };
    env.desktop
        .gdi
        .add(crate::gdi::Object::Bitmap(crate::gdi::BitmapObj::ddb(ddb)))
}

/// String `id` of module `hinst` (0: the program): its guest address and length.
fn string_resource(env: &mut Env, hinst: u32, id: u32) -> Option<(u32, u32)> {
    let base = if hinst == 0 { env.image_base } else { hinst };
    let Some(pe) = env.modules.by_base(base).and_then(|m| m.pe.clone()) else {
        return env.fail(RESOURCE_DATA_NOT_FOUND, None);
    };
    match res::find_string(&pe, id & 0xFFFF) {
        Ok(Some((rva, len))) => Some((base + rva, len)),
        _ => env.fail(RESOURCE_NAME_NOT_FOUND, None),
    }
}

fn load_string(env: &mut Env, hinst: u32, id: u32, buf: u32, cap: i32, wide: bool) -> u32 {
    let found = string_resource(env, hinst, id);
    if buf == 0 {
        return 0;
    }
    // LoadStringW with cap 0 hands out a read-only pointer to the resource text.
    if wide && cap == 0 {
        let (addr, len) = found.unwrap_or((0, 0));
        env.mem.poke_u32(buf, addr);
        return len;
    }
    if cap <= 0 {
        return 0;
    }
    let Some((addr, len)) = found else {
        env.mem.poke(buf, if wide { &[0, 0][..] } else { &[0][..] });
        return 0;
    };
    let n = len.min(cap as u32 - 1);
    let units = env.mem.peek_wstr(addr, n as usize).unwrap_or_default();
    let units = &units[..units.len().min(n as usize)];
    let text = String::from_utf16_lossy(units);
    env.put_str(buf, &text, wide);
    units.len() as u32
}

fn translate_accel(env: &mut Env, hwnd: u32, haccel: u32, msg: u32) -> Ret {
    let Some(m) = read_msg(env, msg) else {
        return Ret::Value(0);
    };
    if m.message != wm::KEYDOWN && m.message != wm::SYSKEYDOWN {
        return Ret::Value(0);
    }
    let Some(UserObject::Accel(list)) = desk(env).objects.get(&haccel).cloned() else {
        return Ret::Value(0);
    };
    let k = &desk(env).keys;
    let down = |vk: usize| k[vk] & 0x80 != 0;
    let (ctrl, shift, alt) = (down(0x11), down(0x10), down(0x12));
    for a in list {
        if a.flags & 1 == 0 || a.key as u32 != m.wparam {
            continue;
        }
        if (a.flags & 8 != 0) != ctrl || (a.flags & 4 != 0) != shift || (a.flags & 0x10 != 0) != alt
        {
            continue;
        }
        let cmd = a.cmd as u32 | 1 << 16;
        return send(env, hwnd, wm::COMMAND, cmd, 0, |_, _| Ret::Value(1));
    }
    Ret::Value(0)
}

fn translate_message(env: &mut Env, msg: u32) -> bool {
    match read_msg(env, msg) {
        Some(m) => translate(env, &m),
        None => false,
    }
}

/// TranslateMessage on a message: a key that types a character queues
/// WM_CHAR (WM_SYSCHAR with Alt) in front of the queue.
pub(crate) fn translate(env: &mut Env, m: &Msg) -> bool {
    let m = *m;
    if m.message != wm::KEYDOWN && m.message != wm::SYSKEYDOWN {
        return false;
    }
    let d = desk(env);
    let shift = d.keys[0x10] & 0x80 != 0;
    let ctrl = d.keys[0x11] & 0x80 != 0;
    if let Some(c) = input::char_of(m.wparam as u8, shift, ctrl) {
        let message = if m.message == wm::SYSKEYDOWN {
            wm::SYSCHAR
        } else {
            wm::CHAR
        };
        super::msgqueue::push_front(
            env,
            Msg {
                message,
                wparam: c as u32,
                ..m
            },
        );
    }
    true
}

fn dispatch(env: &mut Env, msg: u32) -> Ret {
    let Some(m) = read_msg(env, msg) else {
        return Ret::Value(0);
    };
    dispatch_msg(env, &m, |_, r| Ret::Value(r))
}

/// DispatchMessage on a message, then `then` with the procedure's result.
pub(crate) fn dispatch_msg(
    env: &mut Env,
    m: &Msg,
    then: impl FnOnce(&mut Env, u32) -> Ret + 'static,
) -> Ret {
    if m.message == wm::TIMER && m.lparam != 0 {
        // A timer callback runs under an exception guard (an exception
        // nothing inside takes ends it), as Windows' DispatchMessage does.
        return crate::seh::guarded_call(
            env,
            m.lparam,
            vec![m.hwnd, m.message, m.wparam, m.time],
            then,
        );
    }
    send(env, m.hwnd, m.message, m.wparam, m.lparam, then)
}

/// Timers a process may have: timers are user objects, and Windows gives a
/// process 10,000 of those (ERROR_NO_MORE_USER_HANDLES past them).
const MAX_TIMERS: usize = 10_000;

fn set_timer(env: &mut Env, hwnd: u32, id: u32, ms: u32, proc_: u32) -> u32 {
    let clock = env.clock;
    let me = env.thread_id();
    let d = desk(env);
    if hwnd != 0 && d.win(hwnd).is_none() {
        return 0;
    }
    // A thread timer (no window) keeps its id when the caller names one of
    // its own; otherwise it gets the next id from 0x7FF0 on.
    let replaces =
        |t: &Timer, id: u32| t.hwnd == hwnd && t.id == id && (hwnd != 0 || t.thread == me);
    let id = if hwnd == 0 && !(id != 0 && d.timers.iter().any(|t| replaces(t, id))) {
        d.timers
            .iter()
            .filter(|t| t.hwnd == 0)
            .map(|t| t.id + 1)
            .max()
            .unwrap_or(0)
            .max(0x7FF0)
    } else {
        id
    };
    if !d.timers.iter().any(|t| replaces(t, id)) && d.timers.len() >= MAX_TIMERS {
        env.last_error = 1158; // ERROR_NO_MORE_USER_HANDLES
        return 0;
    }
    let period = ms.clamp(10, 0x7FFF_FFFF) as u64 * (crate::dll::DISPATCHES_PER_SECOND / 1000);
    d.timers.retain(|t| !replaces(t, id));
    let thread = if hwnd == 0 {
        me
    } else {
        d.thread_of(hwnd).unwrap_or(me)
    };
    d.timers.push(Timer {
        hwnd,
        id,
        period,
        due: clock + period,
        proc_,
        thread,
    });
    if hwnd == 0 {
        id
    } else {
        id.max(1)
    }
}

/// SystemParametersInfo: SPI_GETWORKAREA (the screen); other actions FALSE.
fn system_parameters(env: &mut Env, action: u32, out: u32) -> bool {
    match action {
        0x30 => {
            let r = desk(env).screen_rect();
            write_rect(&mut env.mem, out, r)
        }
        _ => false,
    }
}

fn menu_entry_mut<'a>(
    d: &'a mut Desktop,
    hmenu: u32,
    item: u32,
    by_pos: bool,
) -> Option<&'a mut crate::desktop::MenuEntry> {
    // Search this menu, then its popups (by command id).
    let loc = {
        fn find(d: &Desktop, h: u32, item: u32, by_pos: bool, depth: u32) -> Option<(u32, usize)> {
            let m = d.menus.get(&h)?;
            if by_pos {
                return (item < m.items.len() as u32).then_some((h, item as usize));
            }
            if let Some(i) = m.items.iter().position(|e| e.sub == 0 && e.id == item) {
                return Some((h, i));
            }
            if depth > 8 {
                return None;
            }
            m.items
                .iter()
                .filter(|e| e.sub != 0)
                .find_map(|e| find(d, e.sub, item, false, depth + 1))
        }
        find(d, hmenu, item, by_pos, 0)
    }?;
    d.menus.get_mut(&loc.0)?.items.get_mut(loc.1)
}

fn window_long(env: &mut Env, h: u32, i: i32) -> u32 {
    let d = desk(env);
    let Some(w) = d.win(h) else {
        env.last_error = 1400;
        return 0;
    };
    match i {
        -4 => w.wndproc,
        -6 => w.instance,
        -8 => {
            if w.is_child() {
                w.parent
            } else {
                w.owner
            }
        }
        -12 => w.id,
        -16 => w.style,
        -20 => w.ex_style,
        -21 => w.user_data,
        k if k >= 0 && (k as usize + 4) <= w.extra.len() => {
            let o = k as usize;
            u32::from_le_bytes([w.extra[o], w.extra[o + 1], w.extra[o + 2], w.extra[o + 3]])
        }
        _ => {
            env.last_error = 1413;
            0
        }
    }
}

fn set_window_long(env: &mut Env, h: u32, i: i32, v: u32) -> u32 {
    let old = window_long(env, h, i);
    let d = desk(env);
    let Some(w) = d.win_mut(h) else { return 0 };
    match i {
        -4 => w.wndproc = v,
        -6 => w.instance = v,
        -12 => w.id = v,
        -16 => w.style = (w.style & ws::VISIBLE) | (v & !ws::VISIBLE),
        -20 => w.ex_style = v,
        -21 => w.user_data = v,
        k if k >= 0 && (k as usize + 4) <= w.extra.len() => {
            w.extra[k as usize..k as usize + 4].copy_from_slice(&v.to_le_bytes());
        }
        _ => return 0,
    }
    old
}

pub(crate) fn set_window_pos(
    env: &mut Env,
    h: u32,
    x: i32,
    y: i32,
    cx: i32,
    cy: i32,
    flags: u32,
) -> Ret {
    let Some(w) = desk(env).win(h).cloned() else {
        return Ret::Value(0);
    };
    let (ox, oy) = parent_origin(env, h);
    let mut r = w.rect;
    if flags & 2 == 0 {
        // !SWP_NOMOVE
        r = Rect::new(ox + x, oy + y, ox + x + r.width(), oy + y + r.height());
    }
    if flags & 1 == 0 {
        // !SWP_NOSIZE
        r.right = r.left + cx.max(0);
        r.bottom = r.top + cy.max(0);
    }
    let moved = (r.left, r.top) != (w.rect.left, w.rect.top);
    let sized = (r.width(), r.height()) != (w.rect.width(), w.rect.height());
    set_rect(env, h, r);
    let show = flags & 0x40 != 0;
    let hide = flags & 0x80 != 0;
    let mut msgs = size_move_msgs(env, h);
    if !sized {
        msgs.retain(|m| m.1 != wm::SIZE);
    }
    if !moved {
        msgs.retain(|m| m.1 != wm::MOVE);
    }
    send_all(
        env,
        msgs.into(),
        Box::new(move |env| {
            if show {
                show_window(env, h, 5, Box::new(|_| Ret::Value(1)))
            } else if hide {
                show_window(env, h, 0, Box::new(|_| Ret::Value(1)))
            } else {
                Ret::Value(1)
            }
        }),
    )
}

fn update_window(env: &mut Env, h: u32) -> Ret {
    // WM_PAINT to the window and then its children, each while its update region is not empty.
    let mut list = vec![h];
    let mut i = 0;
    while i < list.len() {
        let kids = desk(env)
            .win(list[i])
            .map(|w| w.children.clone())
            .unwrap_or_default();
        list.extend(kids);
        i += 1;
    }
    fn step(env: &mut Env, mut list: std::collections::VecDeque<u32>) -> Ret {
        while let Some(h) = list.pop_front() {
            if desk(env)
                .win(h)
                .is_some_and(|w| w.visible() && !w.update.is_empty())
            {
                return send(env, h, wm::PAINT, 0, 0, move |env, _| step(env, list));
            }
        }
        Ret::Value(1)
    }
    step(env, list.into())
}

fn monitor_info(env: &mut Env, out: u32) -> bool {
    let r = desk(env).screen_rect();
    write_rect(&mut env.mem, out + 4, r)
        && write_rect(&mut env.mem, out + 20, r)
        && env.mem.poke_u32(out + 36, 1).is_some()
}

fn rect_op(env: &mut Env, dst: u32, a: u32, b: u32, f: impl FnOnce(Rect, Rect) -> Rect) -> bool {
    let (Some(ra), Some(rb)) = (read_rect(&env.mem, a), read_rect(&env.mem, b)) else {
        return false;
    };
    let r = f(ra, rb);
    let r = if r.is_empty() { Rect::default() } else { r };
    write_rect(&mut env.mem, dst, r);
    !r.is_empty()
}

fn message_box(env: &mut Env, _hwnd: u32, text: u32, caption: u32, kind: u32, wide: bool) -> u32 {
    let t = String::from_utf16_lossy(&read_str(&env.mem, text, -1, wide).unwrap_or_default());
    let c = String::from_utf16_lossy(&read_str(&env.mem, caption, -1, wide).unwrap_or_default());
    desk(env).message_boxes.push((c, t));
    // No modal loop yet: the box is answered at once with its default button.
    match kind & 0xF {
        1 | 4 => 1, // OK of OK/Cancel; IDYES is 6 for YES/NO below
        3 | 5 => {
            if kind & 0xF == 3 {
                6
            } else {
                4
            }
        }
        _ => 1,
    }
}

/// GetClassLong (value None) or SetClassLong: GCL_HBRBACKGROUND -10,
/// GCL_HCURSOR -12, GCL_HICON -14, GCL_WNDPROC -24, GCL_STYLE -26,
/// GCL_CBWNDEXTRA -18, GCL_CBCLSEXTRA -20, GCW_ATOM -32 (read only), and
/// the class extra bytes; the old value.
fn class_long(env: &mut Env, h: u32, i: i32, value: Option<u32>) -> u32 {
    let d = desk(env);
    let Some(ci) = d.win(h).map(|w| w.class) else {
        env.last_error = 1400;
        return 0;
    };
    let Some(c) = d.classes.get_mut(ci) else {
        return 0;
    };
    let slot: Option<&mut u32> = match i {
        -10 => Some(&mut c.background),
        -12 => Some(&mut c.cursor),
        -14 | -34 => Some(&mut c.icon),
        -24 => Some(&mut c.wndproc),
        -26 => Some(&mut c.style),
        -32 => return c.atom as u32,
        -18 => return c.wnd_extra as u32,
        -20 => return c.cls_extra as u32,
        k if k >= 0 && (k as usize + 4) <= c.extra.len() => {
            let o = k as usize;
            let old =
                u32::from_le_bytes([c.extra[o], c.extra[o + 1], c.extra[o + 2], c.extra[o + 3]]);
            if let Some(v) = value {
                c.extra[o..o + 4].copy_from_slice(&v.to_le_bytes());
            }
            return old;
        }
        _ => None,
    };
    match slot {
        Some(s) => {
            let old = *s;
            if let Some(v) = value {
                *s = v;
            }
            old
        }
        None => {
            env.last_error = 1413; // ERROR_INVALID_INDEX
            0
        }
    }
}

/// UnregisterClass: a class of this program with no windows left is
/// forgotten (its slot stays, nameless, so class indexes do not move).
fn unregister_class(env: &mut Env, name: u32, inst: u32, wide: bool) -> bool {
    let (u, atom) = match res_name(env, name, wide) {
        ResId::Id(a) => (Vec::new(), a),
        ResId::Name(s) => (units(&s), 0),
    };
    let d = desk(env);
    let Some(i) = d
        .class_index(&u, atom)
        .filter(|&i| d.classes[i].instance != 0)
    else {
        env.last_error = 1411; // ERROR_CLASS_DOES_NOT_EXIST
        return false;
    };
    let _ = inst;
    if d.windows.values().any(|w| !w.destroyed && w.class == i) {
        env.last_error = 1412; // ERROR_CLASS_HAS_WINDOWS
        return false;
    }
    d.classes[i].name = vec![0];
    d.classes[i].atom = 0;
    true
}

/// A window's scroll bar (SB_HORZ 0, SB_VERT 1, SB_CTL 2): min, max, page,
/// pos. Standard bars start at 0..100, a scroll bar control at 0..0.
fn scroll(env: &mut Env, h: u32, bar: i32) -> Option<(i32, i32, u32, i32)> {
    let w = desk(env).win(h)?;
    let b = bar.clamp(0, 2) as usize;
    Some(w.scroll[b].unwrap_or(if b == 2 { (0, 0, 0, 0) } else { (0, 100, 0, 0) }))
}

/// Stores a bar's state with the page clamped to the range and the
/// position to [min, max - page + 1] (SetScrollInfo's rules).
fn set_scroll(env: &mut Env, h: u32, bar: i32, (min, max, page, pos): (i32, i32, u32, i32)) {
    let span = (max as i64 - min as i64 + 1).max(0) as u32;
    let page = page.min(span);
    let top = (max as i64 - (page as i64 - 1).max(0)).max(min as i64) as i32;
    let pos = pos.clamp(min, top.max(min));
    if let Some(w) = desk(env).win_mut(h) {
        w.scroll[bar.clamp(0, 2) as usize] = Some((min, max, page, pos));
    }
}

/// GetScrollInfo (`set` false: TRUE/FALSE) or SetScrollInfo (the new
/// position) through a SCROLLINFO: cbSize, fMask (SIF_RANGE 1, SIF_PAGE 2,
/// SIF_POS 4, SIF_TRACKPOS 0x10), nMin, nMax, nPage, nPos, nTrackPos.
fn scroll_info(env: &mut Env, h: u32, bar: i32, si: u32, set: bool) -> u32 {
    let Some(cur) = scroll(env, h, bar) else {
        env.last_error = 1400;
        return 0;
    };
    let r = |k: u32| env.mem.peek_u32(si + 4 * k).unwrap_or(0);
    let (size, mask) = (r(0), r(1));
    if size != 28 && size != 24 {
        env.last_error = 87;
        return 0;
    }
    if set {
        let (mut min, mut max, mut page, mut pos) = cur;
        if mask & 1 != 0 {
            (min, max) = (r(2) as i32, r(3) as i32);
        }
        if mask & 2 != 0 {
            page = r(4);
        }
        if mask & 4 != 0 {
            pos = r(5) as i32;
        }
        set_scroll(env, h, bar, (min, max, page, pos));
        return scroll(env, h, bar).map_or(0, |s| s.3 as u32);
    }
    if mask & 0x17 == 0 {
        return 0;
    }
    let (min, max, page, pos) = cur;
    if mask & 1 != 0 {
        env.mem.poke_u32(si + 8, min as u32);
        env.mem.poke_u32(si + 12, max as u32);
    }
    if mask & 2 != 0 {
        env.mem.poke_u32(si + 16, page);
    }
    if mask & 4 != 0 {
        env.mem.poke_u32(si + 20, pos as u32);
    }
    if mask & 0x10 != 0 && size >= 28 {
        env.mem.poke_u32(si + 24, pos as u32);
    }
    1
}

/// Whether `h` is a scroll bar control (the ScrollBar class, whose
/// procedure is DefWindowProc with the SBM_* messages).
fn is_scroll_bar(env: &mut Env, h: u32) -> bool {
    let d = desk(env);
    d.win(h)
        .and_then(|w| d.classes.get(w.class))
        .is_some_and(|c| c.name == units("SCROLLBAR"))
}

/// The scroll bar control's SBM_* messages over its SB_CTL state:
/// SBM_SETPOS 0xE0 (old position), SBM_GETPOS 0xE1, SBM_SETRANGE 0xE2 and
/// SBM_SETRANGEREDRAW 0xE6 (the old position), SBM_GETRANGE 0xE3 (into
/// `*wp`, `*lp`), SBM_SETSCROLLINFO 0xE9 (the new position) and
/// SBM_GETSCROLLINFO 0xEA through a SCROLLINFO at `lp`.
fn scroll_bar_message(env: &mut Env, h: u32, msg: u32, wp: u32, lp: u32) -> u32 {
    let Some((min, max, page, pos)) = scroll(env, h, 2) else {
        return 0;
    };
    match msg {
        0xE0 => {
            set_scroll(env, h, 2, (min, max, page, wp as i32));
            pos as u32
        }
        0xE1 => pos as u32,
        0xE2 | 0xE6 => {
            set_scroll(env, h, 2, (wp as i32, lp as i32, page, pos));
            pos as u32
        }
        0xE3 => {
            if wp != 0 {
                env.mem.poke_u32(wp, min as u32);
            }
            if lp != 0 {
                env.mem.poke_u32(lp, max as u32);
            }
            0
        }
        0xE9 => scroll_info(env, h, 2, lp, true),
        0xEA => scroll_info(env, h, 2, lp, false),
        _ => 0,
    }
}

/// The SB_CTL forms of the scroll calls: the SBM_* message goes to the
/// control (`si`: a SCROLLINFO built in scratch memory for the Set forms
/// that take none), then `then` with its answer.
fn scroll_ctl(
    env: &mut Env,
    h: u32,
    msg: u32,
    wp: u32,
    lp: u32,
    then: fn(&mut Env, u32, u32) -> Ret,
    arg: u32,
) -> Ret {
    if desk(env).win(h).is_none() {
        env.last_error = 1400;
        return then(env, 0, arg);
    }
    send(env, h, msg, wp, lp, move |env, r| then(env, r, arg))
}

/// A SCROLLINFO in scratch memory: mask, min, max, page, pos.
fn scratch_scrollinfo(env: &mut Env, mask: u32, min: i32, max: i32, pos: i32) -> u32 {
    let a = scratch(env, 28);
    let mut b = Vec::new();
    for v in [28, mask, min as u32, max as u32, 0, pos as u32, 0] {
        b.extend(v.to_le_bytes());
    }
    env.mem.poke(a, &b);
    a
}

/// EnumDisplaySettings: one mode, the screen (32 bits per pixel, 60 Hz),
/// for mode 0 and ENUM_CURRENT/REGISTRY_SETTINGS (-1, -2); DEVMODE's
/// fields at their A or W offsets (the W name fields are twice as long).
fn display_settings(env: &mut Env, mode: i32, dm: u32, wide: bool) -> bool {
    if !(-2..=0).contains(&mode) {
        return false;
    }
    let o = if wide { 64 } else { 0 };
    let s = &env.desktop.gdi.screen;
    let (w, h) = (s.width as u32, s.height as u32);
    let m = &mut env.mem;
    m.poke(
        dm + 32 + if wide { 32 } else { 0 },
        &0x0401u16.to_le_bytes(),
    ); // dmSpecVersion
    m.poke(
        dm + 36 + if wide { 32 } else { 0 },
        &(if wide { 220u16 } else { 156u16 }).to_le_bytes(),
    ); // dmSize
    m.poke_u32(dm + 40 + if wide { 32 } else { 0 }, 0x5C_0000); // bits, width, height, flags, frequency
    for (off, v) in [(104, 32), (108, w), (112, h), (116, 0), (120, 60)] {
        m.poke_u32(dm + off + o, v);
    }
    true
}

/// GetClassName: the class's name as registered, truncated to `n - 1`.
fn class_name(env: &mut Env, h: u32, buf: u32, n: i32, wide: bool) -> u32 {
    let d = desk(env);
    let Some(c) = d.win(h).and_then(|w| d.classes.get(w.class)) else {
        env.last_error = 1400;
        return 0;
    };
    let name = c.given.clone();
    if n <= 0 {
        return 0;
    }
    gs::write_str(&mut env.mem, buf, n as u32, &name, wide)
}

/// A window's siblings, topmost first (top-level windows: the Z order).
fn siblings(d: &Desktop, h: u32) -> Vec<u32> {
    match d.win(h) {
        Some(w) if w.is_child() => d
            .win(w.parent)
            .map(|p| p.children.clone())
            .unwrap_or_default(),
        _ => d.top.clone(),
    }
}

/// GetWindow: GW_HWNDFIRST 0, GW_HWNDLAST 1, GW_HWNDNEXT 2, GW_HWNDPREV 3,
/// GW_OWNER 4, GW_CHILD 5, GW_ENABLEDPOPUP 6 (none here).
fn get_window(env: &mut Env, h: u32, cmd: u32) -> u32 {
    let d = desk(env);
    if h == DESKTOP_HWND && cmd == 5 {
        return d.top.first().copied().unwrap_or(0);
    }
    let Some(w) = d.win(h) else {
        env.last_error = 1400;
        return 0;
    };
    let sib = siblings(d, h);
    let at = sib.iter().position(|&x| x == h);
    match cmd {
        0 => sib.first().copied().unwrap_or(0),
        1 => sib.last().copied().unwrap_or(0),
        2 => at.and_then(|i| sib.get(i + 1)).copied().unwrap_or(0),
        3 => at.filter(|&i| i > 0).map_or(0, |i| sib[i - 1]),
        4 => {
            if w.is_child() {
                0
            } else {
                w.owner
            }
        }
        5 => w.children.first().copied().unwrap_or(0),
        6 => 0,
        _ => {
            env.last_error = 87;
            0
        }
    }
}

/// GetAncestor: GA_PARENT 1 (the desktop window for a top-level one),
/// GA_ROOT 2 (the top-level window), GA_ROOTOWNER 3 (then its owners).
fn ancestor(env: &mut Env, h: u32, flags: u32) -> u32 {
    let d = desk(env);
    let Some(w) = d.win(h) else { return 0 };
    match flags {
        1 => {
            if w.is_child() {
                w.parent
            } else {
                DESKTOP_HWND
            }
        }
        2 | 3 => {
            let mut r = d.top_level(h);
            if flags == 3 {
                for _ in 0..64 {
                    match d
                        .win(r)
                        .map(|w| w.owner)
                        .filter(|&o| o != 0 && d.win(o).is_some())
                    {
                        Some(o) => r = o,
                        None => break,
                    }
                }
            }
            r
        }
        _ => 0,
    }
}

/// FindWindow(Ex): the first window after `after` among `parent`'s
/// children (0 or the desktop: the top-level windows) whose class (name or
/// atom) and title match the ones given.
fn find_window(env: &mut Env, parent: u32, after: u32, class: u32, title: u32, wide: bool) -> u32 {
    let cls = (class != 0).then(|| res_name(env, class, wide));
    let ttl = (title != 0).then(|| read_str(&env.mem, title, -1, wide).unwrap_or_default());
    let d = desk(env);
    let list = if parent == 0 || parent == DESKTOP_HWND {
        d.top.clone()
    } else {
        d.win(parent)
            .map(|w| w.children.clone())
            .unwrap_or_default()
    };
    let start = if after == 0 {
        0
    } else {
        match list.iter().position(|&x| x == after) {
            Some(i) => i + 1,
            None => return 0,
        }
    };
    let found = list[start..].iter().copied().find(|&h| {
        let Some(w) = d.win(h) else { return false };
        let Some(c) = d.classes.get(w.class) else {
            return false;
        };
        let class_ok = match &cls {
            None => true,
            Some(ResId::Id(a)) => c.atom == *a,
            Some(ResId::Name(n)) => c.name == crate::desktop::upper(&units(n)),
        };
        class_ok && ttl.as_ref().is_none_or(|t| *t == w.title)
    });
    if found.is_none() {
        env.last_error = 1400; // ERROR_INVALID_WINDOW_HANDLE, as Windows reports a miss
    }
    found.unwrap_or(0)
}

/// EnumDisplayDevices: adapter 0 is the screen (DISPLAY_DEVICE: cb,
/// DeviceName[32], DeviceString[128], StateFlags, DeviceID[128],
/// DeviceKey[128], in A or W characters); a monitor under it likewise.
fn display_device(env: &mut Env, dev: u32, i: u32, dd: u32, wide: bool) -> bool {
    if i != 0 {
        return false;
    }
    let c = if wide { 2 } else { 1 };
    let (name, string) = if dev == 0 {
        ("\\\\.\\DISPLAY1", "mainemu display")
    } else {
        ("\\\\.\\DISPLAY1\\Monitor0", "mainemu monitor")
    };
    let m = &mut env.mem;
    gs::write_str(m, dd + 4, 32, &units(name), wide);
    gs::write_str(m, dd + 4 + 32 * c, 128, &units(string), wide);
    // DISPLAY_DEVICE_ATTACHED_TO_DESKTOP | DISPLAY_DEVICE_PRIMARY_DEVICE (adapters).
    let flags = if dev == 0 { 5 } else { 3 };
    m.poke_u32(dd + 4 + 160 * c, flags);
    gs::write_str(m, dd + 8 + 160 * c, 128, &[], wide);
    gs::write_str(m, dd + 8 + 288 * c, 128, &[], wide);
    true
}

/// CharToOem / OemToChar (and the Buff forms over `n` characters): the
/// ANSI code page is 1252 and the OEM one is modelled as Latin-1 (as
/// kernel32's code pages are); a character the target lacks becomes `?`.
/// The W forms take (CharToOem) or give (OemToChar) UTF-16.
fn oem_convert(env: &mut Env, s: u32, d: u32, n: Option<u32>, to_oem: bool, wide: bool) -> bool {
    if s == 0 || d == 0 {
        return false;
    }
    let src_wide = wide && to_oem;
    let len = n.map_or(-1, |n| n.min(1 << 20) as i32);
    let Some(u) = read_str(&env.mem, s, len, src_wide) else {
        return false;
    };
    use super::kernel32::codepage::{ansi_to_wide, wide_to_ansi};
    let out: Vec<u16> = u
        .iter()
        .map(|&c| {
            if to_oem {
                let w = if src_wide { c } else { ansi_to_wide(c as u8) };
                if w < 256 {
                    w
                } else {
                    b'?' as u16
                }
            } else if wide {
                c
            } else {
                wide_to_ansi(c) as u16
            }
        })
        .collect();
    let dst_wide = wide && !to_oem;
    let size = if dst_wide { 2 } else { 1 };
    let mut b = Vec::with_capacity(out.len() * size + size);
    for &c in &out {
        if dst_wide {
            b.extend(c.to_le_bytes());
        } else {
            b.push(c as u8);
        }
    }
    if n.is_none() {
        b.extend(std::iter::repeat_n(0, size));
    }
    env.mem.poke(d, &b).is_some()
}

/// DrawState: DST_TEXT and DST_PREFIXTEXT draw the string (length 0: up to
/// its NUL) in the rectangle, DSS_DISABLED embossed (highlight then shadow
/// one pixel up-left); DST_COMPLEX calls the program's function with
/// (hdc, lData, wData, cx, cy); icons and bitmaps are not drawn (they are
/// not modelled), which still succeeds.
#[allow(clippy::too_many_arguments)]
fn draw_state(
    env: &mut Env,
    hdc: u32,
    func: u32,
    l: u32,
    w: u32,
    (x, y, cx, cy): (i32, i32, i32, i32),
    flags: u32,
    wide: bool,
) -> Ret {
    match flags & 0xF {
        0 => {
            if func == 0 {
                return Ret::Value(0);
            }
            Ret::call(func, vec![hdc, l, w, cx as u32, cy as u32], |_, r| {
                Ret::Value(r)
            })
        }
        1 | 2 => {
            if l == 0 {
                return Ret::Value(0);
            }
            let n = if w == 0 { -1 } else { w as i32 };
            let t = read_str(&env.mem, l, n, wide).unwrap_or_default();
            let fmt = if flags & 0xF == 1 {
                0x800 | 0x100
            } else {
                0x100
            };
            let at = scratch(env, 16);
            let draw = |env: &mut Env, dx: i32, color: Option<u32>| {
                let old = color.and_then(|c| {
                    let dc = env.desktop.gdi.dc_mut(hdc)?;
                    Some(std::mem::replace(&mut dc.s.text_color, c))
                });
                write_rect(
                    &mut env.mem,
                    at,
                    Rect::new(x + dx, y + dx, x + dx + cx.max(0), y + dx + cy.max(0)),
                );
                super::drawtext::draw_text(env, hdc, &t, at, fmt, (0, 0), 8);
                if let (Some(o), Some(dc)) = (old, env.desktop.gdi.dc_mut(hdc)) {
                    dc.s.text_color = o;
                }
            };
            if flags & 0x20 != 0 {
                // DSS_DISABLED
                draw(
                    env,
                    1,
                    Some(metrics::sys_color(metrics::color::BTNHIGHLIGHT)),
                );
                draw(env, 0, Some(metrics::sys_color(metrics::color::BTNSHADOW)));
            } else {
                draw(env, 0, None);
            }
            scratch_release(env, 16);
            Ret::Value(1)
        }
        _ => Ret::Value(1),
    }
}

/// GetClipboardFormatName: the name behind a string atom of the session
/// table (0xC000 and up), which class names and registered window messages
/// share with clipboard formats; 0 for anything else (predefined formats
/// have no name).
fn atom_name(env: &mut Env, id: u32, buf: u32, n: i32, wide: bool) -> u32 {
    let d = desk(env);
    let name = d
        .classes
        .iter()
        .find(|c| c.atom as u32 == id && id >= 0xC000 && c.name != [0])
        .map(|c| c.given.clone())
        .or_else(|| {
            id.checked_sub(0xC100)
                .and_then(|i| d.registered.get(i as usize).cloned())
        });
    match name {
        Some(t) if n > 0 => gs::write_str(&mut env.mem, buf, n as u32, &t, wide),
        _ => {
            env.last_error = 87;
            0
        }
    }
}

/// LoadImage: bitmaps from the module's resources; icons and cursors as
/// handles of the requested size (their pixels are not modelled).
fn load_image(env: &mut Env, inst: u32, name: u32, kind: u32, cx: i32, cy: i32, wide: bool) -> u32 {
    match kind {
        0 => {
            let n = res_name(env, name, wide);
            load_bitmap(env, inst, &n)
        }
        1 => desk(env).add_object(UserObject::Icon {
            width: if cx == 0 { 32 } else { cx },
            height: if cy == 0 { 32 } else { cy },
        }),
        2 => desk(env).add_object(UserObject::Cursor),
        _ => 0,
    }
}

/// ChangeDisplaySettings: DISP_CHANGE_SUCCESSFUL (0) for NULL or the
/// current mode (the fields dmFields names among bits, width, height,
/// frequency), DISP_CHANGE_BADMODE (-2) for any other.
fn change_display(env: &mut Env, dm: u32, wide: bool) -> i32 {
    if dm == 0 {
        return 0;
    }
    let o = if wide { 64 } else { 0 };
    let r = |k: u32| env.mem.peek_u32(dm + k).unwrap_or(0);
    let fields = r(40 + if wide { 32 } else { 0 });
    let s = &env.desktop.gdi.screen;
    let want = [
        (0x4_0000, r(104 + o), 32),
        (0x8_0000, r(108 + o), s.width as u32),
        (0x10_0000, r(112 + o), s.height as u32),
        (0x40_0000, r(120 + o), 60),
    ];
    if want
        .iter()
        .all(|&(bit, v, cur)| fields & bit == 0 || v == cur || bit == 0x40_0000 && v <= 1)
    {
        0
    } else {
        -2
    }
}

/// A property name: an atom (`#n`) or the upper-cased string.
fn prop_key(env: &Env, name: u32, wide: bool) -> Vec<u16> {
    if name < 0x1_0000 {
        return units(&format!("#{name}"));
    }
    crate::desktop::upper(&read_str(&env.mem, name, -1, wide).unwrap_or_default())
}

/// SetProp (value Some: 1 when set) or GetProp (None: the value, 0 when absent).
fn set_prop(env: &mut Env, h: u32, name: u32, value: Option<u32>, wide: bool) -> u32 {
    let key = prop_key(env, name, wide);
    let Some(w) = desk(env).win_mut(h) else {
        return 0;
    };
    let at = w.props.iter().position(|p| p.0 == key);
    match (value, at) {
        (None, Some(i)) => w.props[i].1,
        (None, None) => 0,
        (Some(v), Some(i)) => {
            w.props[i].1 = v;
            1
        }
        (Some(v), None) => {
            w.props.push((key, v));
            1
        }
    }
}

fn remove_prop(env: &mut Env, h: u32, name: u32, wide: bool) -> u32 {
    let key = prop_key(env, name, wide);
    let Some(w) = desk(env).win_mut(h) else {
        return 0;
    };
    match w.props.iter().position(|p| p.0 == key) {
        Some(i) => w.props.remove(i).1,
        None => 0,
    }
}

/// One UTF-16 unit's simple case mapping (unchanged when it has none or it
/// maps to more than one unit).
fn map_w(u: u16, upper: bool) -> u16 {
    let Some(c) = char::from_u32(u as u32) else {
        return u;
    };
    let mut m: Vec<char> = if upper {
        c.to_uppercase().collect()
    } else {
        c.to_lowercase().collect()
    };
    match (m.pop(), m.is_empty()) {
        (Some(r), true) if (r as u32) < 0x10000 => r as u16,
        _ => u,
    }
}

/// One Latin-1 byte's case mapping (ÿ and µ have no Latin-1 uppercase).
fn map_a(b: u8, upper: bool) -> u8 {
    let m = map_w(b as u16, upper);
    if m < 256 {
        m as u8
    } else {
        b
    }
}

/// Maps `len` units (None: up to the NUL) in place; returns the count mapped.
fn map_buf(env: &mut Env, s: u32, len: Option<u32>, upper: bool, wide: bool) -> u32 {
    let size = if wide { 2 } else { 1 };
    let mut n = 0u32;
    loop {
        if len.is_some_and(|l| n >= l) {
            break;
        }
        let a = s.wrapping_add(n * size);
        let Some(b) = env.read_bytes(a, size) else {
            break;
        };
        if wide {
            let u = u16::from_le_bytes([b[0], b[1]]);
            if len.is_none() && u == 0 {
                break;
            }
            env.mem.poke(a, &map_w(u, upper).to_le_bytes());
        } else {
            if len.is_none() && b[0] == 0 {
                break;
            }
            env.mem.poke(a, &[map_a(b[0], upper)]);
        }
        n += 1;
    }
    n
}

/// CharUpper/CharLower: a pointer whose high word is 0 is one character.
fn char_case(env: &mut Env, s: u32, upper: bool, wide: bool) -> u32 {
    if s >> 16 == 0 {
        return if wide {
            map_w(s as u16, upper) as u32
        } else {
            map_a(s as u8, upper) as u32
        };
    }
    map_buf(env, s, None, upper, wide);
    s
}

fn is_char(u: u32, test: fn(char) -> bool) -> bool {
    char::from_u32(u & 0xFFFF).is_some_and(test)
}

crate::dll! { "user32.dll";
    @also super::dialog::DLL;
    stdcall fn RegisterClassW(env, wc: u32) -> u32 { register_class(env, wc, false, true) }
    stdcall fn GetClassInfoA(env, _inst: u32, name: u32, out: u32) -> u32 { get_class_info(env, name, out, false, false) }
    stdcall fn GetClassInfoW(env, _inst: u32, name: u32, out: u32) -> u32 { get_class_info(env, name, out, false, true) }
    stdcall fn GetClassInfoExA(env, _inst: u32, name: u32, out: u32) -> u32 { get_class_info(env, name, out, true, false) }
    stdcall fn GetClassInfoExW(env, _inst: u32, name: u32, out: u32) -> u32 { get_class_info(env, name, out, true, true) }
    stdcall fn RegisterClassA(env, wc: u32) -> u32 { register_class(env, wc, false, false) }
    stdcall fn RegisterClassExW(env, wc: u32) -> u32 { register_class(env, wc, true, true) }
    stdcall fn RegisterClassExA(env, wc: u32) -> u32 { register_class(env, wc, true, false) }
    stdcall fn UnregisterClassW(env, name: u32, inst: u32) -> bool { unregister_class(env, name, inst, true) }
    stdcall fn CreateWindowExW(env, ex: u32, class: u32, title: u32, style: u32, x: i32, y: i32, w: i32, h: i32, parent: u32, menu: u32, inst: u32, param: u32) -> Ret {
        create_window(env, ex, class, title, style, x, y, w, h, parent, menu, inst, param, true)
    }
    stdcall fn CreateWindowExA(env, ex: u32, class: u32, title: u32, style: u32, x: i32, y: i32, w: i32, h: i32, parent: u32, menu: u32, inst: u32, param: u32) -> Ret {
        create_window(env, ex, class, title, style, x, y, w, h, parent, menu, inst, param, false)
    }
    // Only the thread that made a window may destroy it (ERROR_ACCESS_DENIED).
    stdcall fn DestroyWindow(env, h: u32) -> Ret {
        if desk(env).thread_of(h).is_some_and(|t| t != env.thread_id()) { return Ret::Value(env.fail(5, 0)); }
        destroy_window(env, h)
    }
    // Made again after a wait: only the menu loop (WM_NCLBUTTONDOWN on the menu bar) waits here.
    stdcall fn DefWindowProcW(env, h: u32, msg: u32, wp: u32, lp: u32) -> Ret {
        if env.retrying && env.desktop.menu_track.is_some() { return super::menu::resume(env); }
        def_window_proc(env, h, msg, wp, lp, true)
    }
    stdcall fn DefWindowProcA(env, h: u32, msg: u32, wp: u32, lp: u32) -> Ret {
        if env.retrying && env.desktop.menu_track.is_some() { return super::menu::resume(env); }
        def_window_proc(env, h, msg, wp, lp, false)
    }
    stdcall fn CallWindowProcW(env, p: u32, h: u32, msg: u32, wp: u32, lp: u32) -> Ret { Ret::call(p, vec![h, msg, wp, lp], |_, r| Ret::Value(r)) }
    stdcall fn CallWindowProcA(env, p: u32, h: u32, msg: u32, wp: u32, lp: u32) -> Ret { Ret::call(p, vec![h, msg, wp, lp], |_, r| Ret::Value(r)) }
    stdcall fn ShowWindow(env, h: u32, cmd: u32) -> Ret {
        let was = desk(env).win(h).is_some_and(|w| w.visible());
        show_window(env, h, cmd, Box::new(move |_| Ret::Value(was as u32)))
    }
    stdcall fn UpdateWindow(env, h: u32) -> Ret { update_window(env, h) }
    stdcall fn GetMessageW(env, msg: u32, h: u32, min: u32, max: u32) -> Ret { msgqueue::get_message(env, msg, h, min, max) }
    stdcall fn GetMessageA(env, msg: u32, h: u32, min: u32, max: u32) -> Ret { msgqueue::get_message(env, msg, h, min, max) }
    stdcall fn PeekMessageW(env, msg: u32, h: u32, min: u32, max: u32, flags: u32) -> Ret { msgqueue::peek_message(env, msg, h, min, max, flags) }
    stdcall fn PeekMessageA(env, msg: u32, h: u32, min: u32, max: u32, flags: u32) -> Ret { msgqueue::peek_message(env, msg, h, min, max, flags) }
    stdcall fn WaitMessage(env) -> Ret { msgqueue::wait_message(env) }
    stdcall fn TranslateMessage(env, msg: u32) -> bool { translate_message(env, msg) }
    stdcall fn DispatchMessageW(env, msg: u32) -> Ret { dispatch(env, msg) }
    stdcall fn DispatchMessageA(env, msg: u32) -> Ret { dispatch(env, msg) }
    stdcall fn PostMessageW(env, h: u32, msg: u32, wp: u32, lp: u32) -> bool { post(env, h, msg, wp, lp) }
    stdcall fn PostMessageA(env, h: u32, msg: u32, wp: u32, lp: u32) -> bool { post(env, h, msg, wp, lp) }
    stdcall fn PostThreadMessageW(env, tid: u32, msg: u32, wp: u32, lp: u32) -> bool { msgqueue::post_thread(env, tid, msg, wp, lp) }
    stdcall fn PostThreadMessageA(env, tid: u32, msg: u32, wp: u32, lp: u32) -> bool { msgqueue::post_thread(env, tid, msg, wp, lp) }
    stdcall fn PostQuitMessage(env, code: u32) { msgqueue::post_quit(env, code) }
    stdcall fn InSendMessage(env) -> bool { msgqueue::in_send_ex(env) != 0 }
    stdcall fn InSendMessageEx(env, _r: u32) -> u32 { msgqueue::in_send_ex(env) }
    stdcall fn ReplyMessage(env, r: u32) -> bool { msgqueue::reply_message(env, r) }
    stdcall fn SendMessageTimeoutA(env, h: u32, msg: u32, wp: u32, lp: u32, flags: u32, timeout: u32, result: u32) -> Ret {
        msgqueue::send_message(env, (h, msg, wp, lp), Some(timeout), msgqueue::done_timeout, result)
    }
    stdcall fn SendMessageTimeoutW(env, h: u32, msg: u32, wp: u32, lp: u32, flags: u32, timeout: u32, result: u32) -> Ret {
        msgqueue::send_message(env, (h, msg, wp, lp), Some(timeout), msgqueue::done_timeout, result)
    }
    stdcall fn SendNotifyMessageA(env, h: u32, msg: u32, wp: u32, lp: u32) -> Ret { msgqueue::send_notify(env, (h, msg, wp, lp), None) }
    stdcall fn SendNotifyMessageW(env, h: u32, msg: u32, wp: u32, lp: u32) -> Ret { msgqueue::send_notify(env, (h, msg, wp, lp), None) }
    stdcall fn SendMessageCallbackA(env, h: u32, msg: u32, wp: u32, lp: u32, cb: u32, data: u32) -> Ret { msgqueue::send_notify(env, (h, msg, wp, lp), Some((cb, data))) }
    stdcall fn SendMessageCallbackW(env, h: u32, msg: u32, wp: u32, lp: u32, cb: u32, data: u32) -> Ret { msgqueue::send_notify(env, (h, msg, wp, lp), Some((cb, data))) }
    stdcall fn GetQueueStatus(env, flags: u32) -> u32 { msgqueue::queue_status(env, flags) }
    stdcall fn MsgWaitForMultipleObjects(env, n: u32, handles: u32, all: u32, timeout: u32, mask: u32) -> Ret { msgqueue::msg_wait(env, n, handles, all != 0, timeout, mask, 0) }
    stdcall fn MsgWaitForMultipleObjectsEx(env, n: u32, handles: u32, timeout: u32, mask: u32, flags: u32) -> Ret { msgqueue::msg_wait(env, n, handles, flags & 1 != 0, timeout, mask, flags) }
    // One keyboard layout (US English); every thread already shares one input queue.
    stdcall fn GetKeyboardLayout(env, _tid: u32) -> u32 { HKL_US }
    stdcall fn ActivateKeyboardLayout(env, _hkl: u32, _flags: u32) -> u32 { HKL_US }
    stdcall fn LoadKeyboardLayoutA(env, _name: u32, _flags: u32) -> u32 { HKL_US }
    stdcall fn LoadKeyboardLayoutW(env, _name: u32, _flags: u32) -> u32 { HKL_US }
    stdcall fn UnloadKeyboardLayout(env, _hkl: u32) -> bool { true }
    stdcall fn AttachThreadInput(env, _a: u32, _b: u32, _attach: u32) -> bool { true }
    stdcall fn SetKeyboardState(env, inp: u32) -> bool {
        let mut k = [0u8; 256];
        if env.mem.peek(inp, &mut k).is_none() { return false; }
        desk(env).keys = k;
        true
    }
    // Hot keys never fire (no key reaches the system); registering succeeds.
    stdcall fn RegisterHotKey(env, _h: u32, _id: u32, _mods: u32, _vk: u32) -> bool { true }
    stdcall fn UnregisterHotKey(env, _h: u32, _id: u32) -> bool { true }
    // A child process runs inside CreateProcess: one still there waits for
    // input (idle, 0); one that ended answers WAIT_FAILED.
    stdcall fn WaitForInputIdle(env, process: u32, _ms: u32) -> u32 {
        match env.handles.get(process) {
            Some(crate::handles::Object::Process(c)) if *c == crate::threads::STILL_ACTIVE => 0,
            Some(crate::handles::Object::Process(_)) => u32::MAX,
            _ if process == crate::handles::CURRENT_PROCESS => 0,
            _ => { env.last_error = 6; u32::MAX }
        }
    }
    // DeferWindowPos moves at once (the positions are the same at the end).
    stdcall fn BeginDeferWindowPos(env, _n: i32) -> u32 { HDWP }
    stdcall fn DeferWindowPos(env, hdwp: u32, h: u32, after: u32, x: i32, y: i32, cx: i32, cy: i32, flags: u32) -> Ret {
        if hdwp != HDWP { return Ret::Value(0); }
        then_value(set_window_pos(env, h, x, y, cx, cy, flags), HDWP)
    }
    stdcall fn EndDeferWindowPos(env, hdwp: u32) -> bool { hdwp == HDWP }
    stdcall fn SetParent(env, h: u32, parent: u32) -> u32 { set_parent(env, h, parent) }
    // The window keeps its rectangle (regions do not clip windows here); the system owns the region.
    stdcall fn SetWindowRgn(env, h: u32, rgn: u32, _redraw: u32) -> i32 {
        if desk(env).win(h).is_none() { return 0; }
        if rgn != 0 { let (g, m) = (&mut env.desktop.gdi, &mut env.mem); g.delete(m, rgn); }
        1
    }
    stdcall fn ValidateRgn(env, h: u32, rgn: u32) -> bool {
        let r = match env.desktop.gdi.get(rgn) { Some(crate::gdi::Object::Region(r)) => Some(r.clone()), _ => None };
        if let Some(w) = desk(env).win_mut(h) {
            match r { None => w.update = Region::empty(), Some(r) => w.update = w.update.combine(&r, Op::Diff) }
        }
        true
    }
    // Scrolling repaints: the whole client area is invalidated.
    stdcall fn ScrollWindow(env, h: u32, dx: i32, dy: i32, r: u32, clip: u32) -> bool { desk(env).invalidate(h, None, true); true }
    stdcall fn ScrollWindowEx(env, h: u32, dx: i32, dy: i32, r: u32, clip: u32, rgn: u32, upd: u32, flags: u32) -> i32 {
        desk(env).invalidate(h, None, flags & 4 != 0);
        if upd != 0 { write_rect(&mut env.mem, upd, Rect::default()); }
        2
    }
    stdcall fn DestroyAcceleratorTable(env, h: u32) -> bool { matches!(desk(env).objects.remove(&h), Some(UserObject::Accel(_))) }
    stdcall fn CreateIconIndirect(env, info: u32) -> u32 {
        // ICONINFO: fIcon, hotspot, mask bitmap, colour bitmap; the icon keeps the mask's size.
        let mask = env.mem.peek_u32(info + 12).unwrap_or(0);
        let color = env.mem.peek_u32(info + 16).unwrap_or(0);
        let bm = env.desktop.gdi.bitmap(if color != 0 { color } else { mask }).map(|b| (b.bits.width, b.bits.height));
        let Some((w, mut hh)) = bm else { env.last_error = 87; return 0 };
        if color == 0 { hh /= 2; }
        desk(env).add_object(UserObject::Icon { width: w, height: hh })
    }
    // The clipboard viewer chain: one viewer, kept; no WM_DRAWCLIPBOARD is sent.
    stdcall fn SetClipboardViewer(env, h: u32) -> u32 { std::mem::replace(&mut desk(env).clipboard_viewer, h) }
    stdcall fn GetClipboardViewer(env) -> u32 { desk(env).clipboard_viewer }
    stdcall fn ChangeClipboardChain(env, h: u32, next: u32) -> bool {
        let d = desk(env);
        if d.clipboard_viewer == h { d.clipboard_viewer = next; }
        true
    }
    stdcall fn DefFrameProcA(env, h: u32, client: u32, msg: u32, wp: u32, lp: u32) -> Ret { def_window_proc(env, h, msg, wp, lp, false) }
    stdcall fn DefMDIChildProcA(env, h: u32, msg: u32, wp: u32, lp: u32) -> Ret { def_window_proc(env, h, msg, wp, lp, false) }
    // No menu is ever tracked modally outside the menu bar: nothing to end, nothing chosen.
    stdcall fn EndMenu(env) -> bool { true }
    stdcall fn TrackPopupMenu(env, m: u32, flags: u32, x: i32, y: i32, _r: i32, h: u32, _rc: u32) -> bool { false }
    stdcall fn GetMenuItemID(env, m: u32, pos: i32) -> u32 {
        desk(env).menus.get(&m).and_then(|x| x.items.get(pos.max(0) as usize)).map_or(u32::MAX, |e| if e.sub != 0 { u32::MAX } else { e.id })
    }
    stdcall fn GetMenuInfo(env, m: u32, out: u32) -> bool {
        // MENUINFO past cbSize and fMask: style, cyMax, background brush, help id, data: all 0.
        if !desk(env).menus.contains_key(&m) { env.last_error = 1401; return false; }
        env.mem.poke(out + 8, &[0u8; 20]);
        true
    }
    stdcall fn SetMenuInfo(env, m: u32, _inp: u32) -> bool { desk(env).menus.contains_key(&m) }
    stdcall fn GetSystemMenu(env, h: u32, revert: u32) -> u32 {
        if desk(env).win(h).is_none_or(|w| w.style & 0x0008_0000 == 0) { return 0; }
        if let Some(&m) = desk(env).system_menus.get(&h) { return if revert != 0 { 0 } else { m }; }
        let m = desk(env).add_menu(Default::default());
        desk(env).system_menus.insert(h, m);
        if revert != 0 { 0 } else { m }
    }
    stdcall fn AppendMenuA(env, m: u32, flags: u32, id: u32, text: u32) -> bool { insert_menu(env, m, u32::MAX, flags | 0x400, id, text, false) }
    stdcall fn InsertMenuA(env, m: u32, pos: u32, flags: u32, id: u32, text: u32) -> bool { insert_menu(env, m, pos, flags, id, text, false) }
    stdcall fn InsertMenuW(env, m: u32, pos: u32, flags: u32, id: u32, text: u32) -> bool { insert_menu(env, m, pos, flags, id, text, true) }
    // Synthesized input goes to the queue as the scripted input does.
    stdcall fn keybd_event(env, vk: u32, scan: u32, flags: u32, _extra: u32) { synth_key(env, vk as u8, scan as u8, flags & 2 != 0) }
    stdcall fn mouse_event(env, flags: u32, dx: u32, dy: u32, data: u32, _extra: u32) { synth_mouse(env, flags, dx as i32, dy as i32) }
    stdcall fn SendInput(env, n: u32, inputs: u32, size: u32) -> u32 { send_input(env, n, inputs, size) }
    stdcall fn SendMessageW(env, h: u32, msg: u32, wp: u32, lp: u32) -> Ret { super::msgconv::send_message(env, (h, msg, wp, lp), true) }
    stdcall fn SendMessageA(env, h: u32, msg: u32, wp: u32, lp: u32) -> Ret { super::msgconv::send_message(env, (h, msg, wp, lp), false) }
    stdcall fn GetMessageTime(env) -> u32 { Desktop::ms(env.clock) }
    stdcall fn GetMessagePos(env) -> u32 { let c = desk(env).cursor; (c.0 as u16 as u32) | (c.1 as u16 as u32) << 16 }
    stdcall fn RegisterWindowMessageW(env, name: u32) -> u32 {
        let n = read_str(&env.mem, name, -1, true).unwrap_or_default();
        let d = desk(env);
        let i = match d.registered.iter().position(|x| *x == n) { Some(i) => i, None => { d.registered.push(n); d.registered.len() - 1 } };
        0xC100 + i as u32
    }
    stdcall fn BeginPaint(env, h: u32, ps: u32) -> Ret { begin_paint(env, h, ps) }
    stdcall fn EndPaint(env, h: u32, ps: u32) -> bool {
        let hdc = env.mem.peek_u32(ps).unwrap_or(0);
        env.desktop.gdi.delete_dc(hdc);
        true
    }
    stdcall fn GetDC(env, h: u32) -> u32 { window_dc(env, h, false, None) }
    stdcall fn GetDCEx(env, h: u32, rgn: u32, flags: u32) -> u32 { window_dc(env, h, flags & 1 != 0, None) }
    stdcall fn GetWindowDC(env, h: u32) -> u32 { window_dc(env, h, true, None) }
    stdcall fn ReleaseDC(env, h: u32, hdc: u32) -> bool { env.desktop.gdi.delete_dc(hdc) }
    stdcall fn InvalidateRect(env, h: u32, r: u32, erase: bool) -> bool {
        let rect = if r == 0 { None } else { read_rect(&env.mem, r) };
        if h == 0 {
            let all: Vec<u32> = desk(env).windows.keys().copied().collect();
            for w in all { desk(env).invalidate(w, None, erase); }
        } else {
            desk(env).invalidate(h, rect, erase);
        }
        true
    }
    stdcall fn InvalidateRgn(env, h: u32, rgn: u32, erase: bool) -> bool {
        let r = match env.desktop.gdi.get(rgn) { Some(crate::gdi::Object::Region(r)) => Some(r.clone()), _ => None };
        match r {
            Some(r) => for x in r.rects { desk(env).invalidate(h, Some(x), erase); },
            None => desk(env).invalidate(h, None, erase),
        }
        true
    }
    stdcall fn ValidateRect(env, h: u32, r: u32) -> bool {
        let rect = if r == 0 { None } else { read_rect(&env.mem, r) };
        if let Some(w) = desk(env).win_mut(h) {
            match rect { None => w.update = Region::empty(), Some(r) => w.update = w.update.combine(&Region::rect(r), Op::Diff) }
        }
        true
    }
    stdcall fn GetUpdateRect(env, h: u32, r: u32, erase: bool) -> bool {
        let b = desk(env).win(h).map(|w| w.update.bounds()).unwrap_or_default();
        if r != 0 { write_rect(&mut env.mem, r, b); }
        !b.is_empty()
    }
    stdcall fn RedrawWindow(env, h: u32, r: u32, rgn: u32, flags: u32) -> Ret {
        let h = if h == 0 { desk(env).top.first().copied().unwrap_or(0) } else { h };
        if flags & 0x400 != 0 { desk(env).draw_frame(h); }
        if flags & 1 != 0 {
            let rect = if r == 0 { None } else { read_rect(&env.mem, r) };
            desk(env).invalidate(h, rect, flags & 4 != 0);
        }
        if flags & 0x100 != 0 { update_window(env, h) } else { Ret::Value(1) }
    }
    stdcall fn SetTimer(env, h: u32, id: u32, ms: u32, proc_: u32) -> u32 { set_timer(env, h, id, ms, proc_) }
    stdcall fn KillTimer(env, h: u32, id: u32) -> bool {
        let d = desk(env);
        let n = d.timers.len();
        d.timers.retain(|t| !(t.hwnd == h && t.id == id));
        n != d.timers.len()
    }
    stdcall fn GetClientRect(env, h: u32, r: u32) -> bool {
        let Some(c) = desk(env).client_rect(h) else { env.last_error = 1400; return false };
        write_rect(&mut env.mem, r, Rect::new(0, 0, c.width(), c.height()))
    }
    // COMBOBOXINFO (52 bytes): rcItem, rcButton (the drop button, 16
    // wide, inside the 2-pixel edge), stateButton 0, the combo as
    // hwndCombo and hwndItem; no list window exists (hwndList 0).
    stdcall fn GetComboBoxInfo(env, h: u32, info: u32) -> bool {
        let is_combo = { let d = desk(env); d.win(h).and_then(|w| d.classes.get(w.class)).is_some_and(|c| c.name == units("COMBOBOX")) };
        if !is_combo { return env.fail(1400, false); }
        if env.mem.peek_u32(info) != Some(52) { return env.fail(87, false); }
        let c = desk(env).client_rect(h).unwrap_or_default();
        let (w, hh) = (c.width(), c.height());
        let button = Rect::new((w - 2 - 16).max(0), 2, (w - 2).max(0), (hh - 2).max(0));
        let item = Rect::new(3, 3, (button.left - 1).max(3), (hh - 3).max(3));
        let ok = gs::write_rect(&mut env.mem, info + 4, item) && gs::write_rect(&mut env.mem, info + 20, button);
        for (o, v) in [(36, 0), (40, h), (44, h), (48, 0)] { env.mem.poke_u32(info + o, v); }
        ok
    }
    stdcall fn GetWindowRect(env, h: u32, r: u32) -> bool {
        let rect = if h == DESKTOP_HWND { Some(desk(env).screen_rect()) } else { desk(env).win(h).map(|w| w.rect) };
        match rect { Some(x) => write_rect(&mut env.mem, r, x), None => { env.last_error = 1400; false } }
    }
    stdcall fn ClientToScreen(env, h: u32, p: u32) -> bool {
        let Some(c) = desk(env).client_rect(h) else { return false };
        let Some((x, y)) = gs::read_point(&env.mem, p) else { return false };
        write_pair(&mut env.mem, p, (x + c.left, y + c.top))
    }
    stdcall fn ScreenToClient(env, h: u32, p: u32) -> bool {
        let Some(c) = desk(env).client_rect(h) else { return false };
        let Some((x, y)) = gs::read_point(&env.mem, p) else { return false };
        write_pair(&mut env.mem, p, (x - c.left, y - c.top))
    }
    stdcall fn MapWindowPoints(env, from: u32, to: u32, pts: u32, n: u32) -> i32 {
        let o = |env: &mut Env, h: u32| if h == 0 || h == DESKTOP_HWND { (0, 0) } else { desk(env).client_rect(h).map_or((0, 0), |c| (c.left, c.top)) };
        let (fx, fy) = o(env, from);
        let (tx, ty) = o(env, to);
        let (dx, dy) = (fx - tx, fy - ty);
        for i in 0..n.min(4096) {
            if let Some((x, y)) = gs::read_point(&env.mem, pts + 8 * i) { write_pair(&mut env.mem, pts + 8 * i, (x + dx, y + dy)); }
        }
        (dx as u16 as u32 | (dy as u16 as u32) << 16) as i32
    }
    stdcall fn MoveWindow(env, h: u32, x: i32, y: i32, w: i32, hh: i32, repaint: bool) -> Ret { set_window_pos(env, h, x, y, w, hh, 0) }
    stdcall fn SetWindowPos(env, h: u32, after: u32, x: i32, y: i32, cx: i32, cy: i32, flags: u32) -> Ret { set_window_pos(env, h, x, y, cx, cy, flags) }
    stdcall fn AdjustWindowRect(env, r: u32, style: u32, menu: bool) -> bool {
        let Some(x) = read_rect(&env.mem, r) else { return false };
        write_rect(&mut env.mem, r, metrics::adjust(x, style, 0, menu))
    }
    stdcall fn AdjustWindowRectEx(env, r: u32, style: u32, menu: bool, ex: u32) -> bool {
        let Some(x) = read_rect(&env.mem, r) else { return false };
        write_rect(&mut env.mem, r, metrics::adjust(x, style, ex, menu))
    }
    stdcall fn GetSystemMetrics(env, i: i32) -> i32 {
        let s = &env.desktop.gdi.screen;
        metrics::system_metric(i, s.width, s.height)
    }
    stdcall fn GetSysColor(env, i: u32) -> u32 { metrics::sys_color(i) }
    stdcall fn GetSysColorBrush(env, i: u32) -> u32 { if i < 31 { sys_brush(env, i + 1) } else { 0 } }
    stdcall fn FillRect(env, hdc: u32, r: u32, brush: u32) -> bool {
        let Some(rect) = read_rect(&env.mem, r) else { return false };
        fill_rect(env, hdc, rect, brush)
    }
    stdcall fn FrameRect(env, hdc: u32, r: u32, brush: u32) -> bool {
        let Some(rc) = read_rect(&env.mem, r) else { return false };
        let b = sys_brush(env, brush);
        let (g, m) = (&mut env.desktop.gdi, &mut env.mem);
        g.draw_with_brush(m, hdc, b, |t, p| {
            for e in [Rect::new(rc.left, rc.top, rc.right, rc.top + 1), Rect::new(rc.left, rc.bottom - 1, rc.right, rc.bottom),
                      Rect::new(rc.left, rc.top, rc.left + 1, rc.bottom), Rect::new(rc.right - 1, rc.top, rc.right, rc.bottom)] {
                t.fill(e, p);
            }
        }).is_some()
    }
    stdcall fn InvertRect(env, hdc: u32, r: u32) -> bool {
        let Some(rc) = read_rect(&env.mem, r) else { return false };
        let (g, m) = (&mut env.desktop.gdi, &mut env.mem);
        g.draw(m, hdc, |t| { t.dc.rop2 = 6; t.fill(rc, &Paint::Solid(0)); }).is_some()
    }
    stdcall fn DrawFocusRect(env, hdc: u32, r: u32) -> bool {
        let Some(rc) = read_rect(&env.mem, r) else { return false };
        let (g, m) = (&mut env.desktop.gdi, &mut env.mem);
        g.draw(m, hdc, |t| {
            t.dc.rop2 = 7; // R2_XORPEN with white: a dotted inverting frame
            let p = Paint::Pattern { w: 2, h: 2, px: vec![Some(0xFFFFFF), None, None, Some(0xFFFFFF)], org: (0, 0) };
            for e in [Rect::new(rc.left, rc.top, rc.right, rc.top + 1), Rect::new(rc.left, rc.bottom - 1, rc.right, rc.bottom),
                      Rect::new(rc.left, rc.top + 1, rc.left + 1, rc.bottom - 1), Rect::new(rc.right - 1, rc.top + 1, rc.right, rc.bottom - 1)] {
                t.fill(e, &p);
            }
        }).is_some()
    }
    stdcall fn DrawEdge(env, hdc: u32, r: u32, edge: u32, flags: u32) -> bool {
        let Some(rc) = read_rect(&env.mem, r) else { return false };
        let (g, m) = (&mut env.desktop.gdi, &mut env.mem);
        g.draw(m, hdc, |t| {
            let tr = t.dc.rect_to_target(rc);
            let mut c = t.canvas();
            if edge & 0x5 != 0 { crate::desktop::nc::raised(&mut c, tr) } else { crate::desktop::nc::sunken(&mut c, tr) }
        }).is_some()
    }
    stdcall fn DrawTextW(env, hdc: u32, s: u32, n: i32, r: u32, fmt: u32) -> i32 { super::drawtext::draw_text_call(env, hdc, s, n, r, fmt, 0, true) }
    // DrawTextEx: DrawText's formats and DRAWTEXTPARAMS' margins (the tab length is not applied).
    stdcall fn DrawTextExA(env, hdc: u32, s: u32, n: i32, r: u32, fmt: u32, params: u32) -> i32 { super::drawtext::draw_text_call(env, hdc, s, n, r, fmt, params, false) }
    stdcall fn DrawTextExW(env, hdc: u32, s: u32, n: i32, r: u32, fmt: u32, params: u32) -> i32 { super::drawtext::draw_text_call(env, hdc, s, n, r, fmt, params, true) }
    stdcall fn EnumDisplaySettingsA(env, dev: u32, mode: i32, dm: u32) -> bool { display_settings(env, mode, dm, false) }
    stdcall fn EnumDisplaySettingsW(env, dev: u32, mode: i32, dm: u32) -> bool { display_settings(env, mode, dm, true) }
    stdcall fn DrawTextA(env, hdc: u32, s: u32, n: i32, r: u32, fmt: u32) -> i32 { super::drawtext::draw_text_call(env, hdc, s, n, r, fmt, 0, false) }
    stdcall fn SetCapture(env, h: u32) -> u32 { std::mem::replace(&mut desk(env).capture, h) }
    stdcall fn ReleaseCapture(env) -> bool { desk(env).capture = 0; true }
    stdcall fn GetCapture(env) -> u32 { desk(env).capture }
    stdcall fn SetFocus(env, h: u32) -> Ret { set_focus(env, h, |_, old| Ret::Value(old)) }
    stdcall fn GetFocus(env) -> u32 { desk(env).focus }
    stdcall fn GetActiveWindow(env) -> u32 { desk(env).active }
    stdcall fn GetForegroundWindow(env) -> u32 { desk(env).active }
    stdcall fn SetActiveWindow(env, h: u32) -> Ret { let old = desk(env).active; activate(env, h, Box::new(move |_| Ret::Value(old))) }
    stdcall fn SetForegroundWindow(env, h: u32) -> Ret { activate(env, h, Box::new(|_| Ret::Value(1))) }
    stdcall fn BringWindowToTop(env, h: u32) -> Ret { activate(env, h, Box::new(|_| Ret::Value(1))) }
    stdcall fn GetDesktopWindow(env) -> u32 { DESKTOP_HWND }
    stdcall fn IsWindow(env, h: u32) -> bool { desk(env).win(h).is_some() || h == DESKTOP_HWND }
    stdcall fn IsWindowVisible(env, h: u32) -> bool { desk(env).really_visible(h) }
    stdcall fn IsWindowEnabled(env, h: u32) -> bool { desk(env).win(h).is_some_and(|w| w.style & ws::DISABLED == 0) }
    stdcall fn EnableWindow(env, h: u32, on: bool) -> bool {
        let Some(w) = desk(env).win_mut(h) else { return false };
        let was = w.style & ws::DISABLED != 0;
        if on { w.style &= !ws::DISABLED } else { w.style |= ws::DISABLED }
        was
    }
    stdcall fn IsIconic(env, h: u32) -> bool { false }
    stdcall fn IsZoomed(env, h: u32) -> bool { false }
    stdcall fn IsChild(env, parent: u32, h: u32) -> bool {
        let d = desk(env);
        let mut cur = h;
        for _ in 0..64 {
            match d.win(cur) { Some(w) if w.is_child() => { if w.parent == parent { return true; } cur = w.parent; } _ => return false }
        }
        false
    }
    stdcall fn GetParent(env, h: u32) -> u32 { desk(env).win(h).map_or(0, |w| if w.is_child() { w.parent } else { w.owner }) }
    stdcall fn GetWindowLongW(env, h: u32, i: i32) -> u32 { window_long(env, h, i) }
    stdcall fn GetWindowLongA(env, h: u32, i: i32) -> u32 { window_long(env, h, i) }
    stdcall fn SetWindowLongW(env, h: u32, i: i32, v: u32) -> u32 { set_window_long(env, h, i, v) }
    stdcall fn SetWindowLongA(env, h: u32, i: i32, v: u32) -> u32 { set_window_long(env, h, i, v) }
    stdcall fn UnregisterClassA(env, name: u32, inst: u32) -> bool { unregister_class(env, name, inst, false) }
    stdcall fn GetScrollPos(env, h: u32, bar: i32) -> Ret {
        if bar == 2 { return scroll_ctl(env, h, 0xE1, 0, 0, |_, r, _| Ret::Value(r), 0); }
        Ret::Value(scroll(env, h, bar).map_or(0, |s| s.3) as u32)
    }
    stdcall fn SetScrollPos(env, h: u32, bar: i32, pos: i32, redraw: bool) -> Ret {
        let Some((min, max, page, old)) = scroll(env, h, bar) else { env.last_error = 1400; return Ret::Value(0) };
        if bar == 2 {
            // The control gets SBM_SETSCROLLINFO (SIF_POS); the answer is the old position.
            let si = scratch_scrollinfo(env, 4, 0, 0, pos);
            return scroll_ctl(env, h, 0xE9, redraw as u32, si, |env, _, old| { scratch_release(env, 28); Ret::Value(old) }, old as u32);
        }
        set_scroll(env, h, bar, (min, max, page, pos));
        Ret::Value(old as u32)
    }
    stdcall fn GetScrollRange(env, h: u32, bar: i32, min: u32, max: u32) -> Ret {
        if bar == 2 { return scroll_ctl(env, h, 0xE3, min, max, |_, _, _| Ret::Value(1), 0); }
        let s = scroll(env, h, bar).unwrap_or_default();
        env.mem.poke_u32(min, s.0 as u32);
        env.mem.poke_u32(max, s.1 as u32);
        Ret::Value(1)
    }
    stdcall fn SetScrollRange(env, h: u32, bar: i32, min: i32, max: i32, redraw: bool) -> Ret {
        let Some((_, _, page, pos)) = scroll(env, h, bar) else { env.last_error = 1400; return Ret::Value(0) };
        if bar == 2 {
            // The control gets SBM_SETSCROLLINFO (SIF_RANGE).
            let si = scratch_scrollinfo(env, 1, min, max, 0);
            return scroll_ctl(env, h, 0xE9, redraw as u32, si, |env, _, _| { scratch_release(env, 28); Ret::Value(1) }, 0);
        }
        set_scroll(env, h, bar, (min, max, page, pos));
        Ret::Value(1)
    }
    stdcall fn GetScrollInfo(env, h: u32, bar: i32, si: u32) -> Ret {
        if bar == 2 { return scroll_ctl(env, h, 0xEA, 0, si, |_, r, _| Ret::Value((r != 0) as u32), 0); }
        Ret::Value((scroll_info(env, h, bar, si, false) != 0) as u32)
    }
    stdcall fn SetScrollInfo(env, h: u32, bar: i32, si: u32, redraw: bool) -> Ret {
        if bar == 2 { return scroll_ctl(env, h, 0xE9, redraw as u32, si, |_, r, _| Ret::Value(r), 0); }
        Ret::Value(scroll_info(env, h, bar, si, true))
    }
    // Scroll bars are not drawn: showing and enabling them changes nothing visible.
    stdcall fn ShowScrollBar(env, h: u32, bar: i32, show: bool) -> bool { desk(env).win(h).is_some() }
    stdcall fn EnableScrollBar(env, h: u32, bar: u32, arrows: u32) -> bool { desk(env).win(h).is_some() }
    stdcall fn GetTabbedTextExtentA(env, hdc: u32, s: u32, n: i32, ntabs: i32, tabs: u32) -> u32 { super::drawtext::tabbed_extent(env, hdc, s, n, ntabs, tabs, false) }
    stdcall fn GetTabbedTextExtentW(env, hdc: u32, s: u32, n: i32, ntabs: i32, tabs: u32) -> u32 { super::drawtext::tabbed_extent(env, hdc, s, n, ntabs, tabs, true) }
    stdcall fn GetClassNameA(env, h: u32, buf: u32, n: i32) -> u32 { class_name(env, h, buf, n, false) }
    stdcall fn GetClassNameW(env, h: u32, buf: u32, n: i32) -> u32 { class_name(env, h, buf, n, true) }
    stdcall fn GetWindow(env, h: u32, cmd: u32) -> u32 { get_window(env, h, cmd) }
    stdcall fn GetAncestor(env, h: u32, flags: u32) -> u32 { ancestor(env, h, flags) }
    stdcall fn FindWindowA(env, class: u32, title: u32) -> u32 { find_window(env, 0, 0, class, title, false) }
    stdcall fn FindWindowW(env, class: u32, title: u32) -> u32 { find_window(env, 0, 0, class, title, true) }
    stdcall fn FindWindowExA(env, parent: u32, after: u32, class: u32, title: u32) -> u32 { find_window(env, parent, after, class, title, false) }
    stdcall fn FindWindowExW(env, parent: u32, after: u32, class: u32, title: u32) -> u32 { find_window(env, parent, after, class, title, true) }
    stdcall fn GetWindowPlacement(env, h: u32, wp: u32) -> bool {
        let Some(w) = desk(env).win(h).cloned() else { env.last_error = 1400; return false };
        let (ox, oy) = parent_origin(env, h);
        let r = w.rect.offset(-ox, -oy);
        let vals = [44u32, 0, if w.visible() { 1 } else { 0 }, u32::MAX, u32::MAX, u32::MAX, u32::MAX];
        for (k, v) in vals.into_iter().enumerate() { env.mem.poke_u32(wp + 4 * k as u32, v); }
        write_rect(&mut env.mem, wp + 28, r)
    }
    stdcall fn GetUpdateRgn(env, h: u32, rgn: u32, erase: bool) -> i32 {
        let Some(u) = desk(env).win(h).map(|w| w.update.clone()) else { return 0 };
        let kind = match u.rects.len() { 0 => 1, 1 => 2, _ => 3 }; // NULLREGION, SIMPLEREGION, COMPLEXREGION
        match env.desktop.gdi.get_mut(rgn) { Some(crate::gdi::Object::Region(r)) => { *r = u; kind } _ => 0 }
    }
    stdcall fn EnumDisplaySettingsExA(env, dev: u32, mode: i32, dm: u32, flags: u32) -> bool { display_settings(env, mode, dm, false) }
    stdcall fn EnumDisplaySettingsExW(env, dev: u32, mode: i32, dm: u32, flags: u32) -> bool { display_settings(env, mode, dm, true) }
    stdcall fn EnumDisplayDevicesA(env, dev: u32, i: u32, dd: u32, flags: u32) -> bool { display_device(env, dev, i, dd, false) }
    stdcall fn EnumDisplayDevicesW(env, dev: u32, i: u32, dd: u32, flags: u32) -> bool { display_device(env, dev, i, dd, true) }
    // One monitor, the screen: the callback once with its rectangle.
    stdcall fn EnumDisplayMonitors(env, hdc: u32, clip: u32, proc_: u32, lp: u32) -> Ret {
        let r = desk(env).screen_rect();
        let at = scratch(env, 16);
        write_rect(&mut env.mem, at, r);
        Ret::call(proc_, vec![0x0001_0001, hdc, at, lp], |env, _| { scratch_release(env, 16); Ret::Value(1) })
    }
    stdcall fn CharToOemA(env, s: u32, d: u32) -> bool { oem_convert(env, s, d, None, true, false) }
    stdcall fn CharToOemW(env, s: u32, d: u32) -> bool { oem_convert(env, s, d, None, true, true) }
    stdcall fn CharToOemBuffA(env, s: u32, d: u32, n: u32) -> bool { oem_convert(env, s, d, Some(n), true, false) }
    stdcall fn CharToOemBuffW(env, s: u32, d: u32, n: u32) -> bool { oem_convert(env, s, d, Some(n), true, true) }
    stdcall fn OemToCharA(env, s: u32, d: u32) -> bool { oem_convert(env, s, d, None, false, false) }
    stdcall fn OemToCharW(env, s: u32, d: u32) -> bool { oem_convert(env, s, d, None, false, true) }
    stdcall fn OemToCharBuffA(env, s: u32, d: u32, n: u32) -> bool { oem_convert(env, s, d, Some(n), false, false) }
    stdcall fn OemToCharBuffW(env, s: u32, d: u32, n: u32) -> bool { oem_convert(env, s, d, Some(n), false, true) }
    stdcall fn DrawStateA(env, hdc: u32, br: u32, f: u32, l: u32, w: u32, x: i32, y: i32, cx: i32, cy: i32, flags: u32) -> Ret { draw_state(env, hdc, f, l, w, (x, y, cx, cy), flags, false) }
    stdcall fn DrawStateW(env, hdc: u32, br: u32, f: u32, l: u32, w: u32, x: i32, y: i32, cx: i32, cy: i32, flags: u32) -> Ret { draw_state(env, hdc, f, l, w, (x, y, cx, cy), flags, true) }
    stdcall fn GetClipboardFormatNameA(env, id: u32, buf: u32, n: i32) -> u32 { atom_name(env, id, buf, n, false) }
    stdcall fn GetClipboardFormatNameW(env, id: u32, buf: u32, n: i32) -> u32 { atom_name(env, id, buf, n, true) }
    // GetIconInfo: icons keep only their size, so the masks and colours are blank bitmaps of it.
    stdcall fn GetIconInfo(env, h: u32, out: u32) -> bool {
        let (icon, w, hh) = match desk(env).objects.get(&h) {
            Some(UserObject::Icon { width, height }) => (true, *width, *height),
            Some(UserObject::Cursor) => (false, 32, 32),
            _ => { env.last_error = 1402; return false; } // ERROR_INVALID_CURSOR_HANDLE
        };
        let bits = |bpp| crate::gdi::Object::Bitmap(crate::gdi::BitmapObj::ddb(crate::gdi::bits::Bits::new(w, hh, bpp)));
        let mask = env.desktop.gdi.add(bits(1));
        let color = env.desktop.gdi.add(bits(32));
        let hot = if icon { (w / 2, hh / 2) } else { (0, 0) };
        for (k, v) in [icon as u32, hot.0 as u32, hot.1 as u32, mask, color].into_iter().enumerate() {
            env.mem.poke_u32(out + 4 * k as u32, v);
        }
        true
    }
    // The screen's mode cannot change: NULL (back to the registry mode) or the current mode succeed, others are DISP_CHANGE_BADMODE.
    stdcall fn ChangeDisplaySettingsA(env, dm: u32, flags: u32) -> i32 { change_display(env, dm, false) }
    stdcall fn ChangeDisplaySettingsW(env, dm: u32, flags: u32) -> i32 { change_display(env, dm, true) }
    stdcall fn ChangeDisplaySettingsExA(env, dev: u32, dm: u32, h: u32, flags: u32, lp: u32) -> i32 { change_display(env, dm, false) }
    stdcall fn ChangeDisplaySettingsExW(env, dev: u32, dm: u32, h: u32, flags: u32, lp: u32) -> i32 { change_display(env, dm, true) }
    stdcall fn GetClassLongA(env, h: u32, i: i32) -> u32 { class_long(env, h, i, None) }
    stdcall fn SetClassLongA(env, h: u32, i: i32, v: u32) -> u32 { class_long(env, h, i, Some(v)) }
    stdcall fn SetClassLongW(env, h: u32, i: i32, v: u32) -> u32 { class_long(env, h, i, Some(v)) }
    stdcall fn IsWindowUnicode(env, h: u32) -> bool { desk(env).win(h).is_some_and(|w| w.wide) }
    stdcall fn GetTopWindow(env, h: u32) -> u32 {
        let d = desk(env);
        if h == 0 || h == DESKTOP_HWND { d.top.first().copied().unwrap_or(0) } else { d.win(h).and_then(|w| w.children.first().copied()).unwrap_or(0) }
    }
    stdcall fn SetPropA(env, h: u32, name: u32, v: u32) -> bool { set_prop(env, h, name, Some(v), false) != 0 }
    stdcall fn SetPropW(env, h: u32, name: u32, v: u32) -> bool { set_prop(env, h, name, Some(v), true) != 0 }
    stdcall fn GetPropA(env, h: u32, name: u32) -> u32 { set_prop(env, h, name, None, false) }
    stdcall fn GetPropW(env, h: u32, name: u32) -> u32 { set_prop(env, h, name, None, true) }
    stdcall fn RemovePropA(env, h: u32, name: u32) -> u32 { remove_prop(env, h, name, false) }
    stdcall fn RemovePropW(env, h: u32, name: u32) -> u32 { remove_prop(env, h, name, true) }
    // Hooks are kept (so Unhook succeeds) but never called: no hook chain is modelled.
    stdcall fn SetWindowsHookExA(env, id: i32, proc_: u32, inst: u32, tid: u32) -> u32 { desk(env).add_object(UserObject::Hook { id, proc_ }) }
    stdcall fn SetWindowsHookExW(env, id: i32, proc_: u32, inst: u32, tid: u32) -> u32 { desk(env).add_object(UserObject::Hook { id, proc_ }) }
    stdcall fn UnhookWindowsHookEx(env, h: u32) -> bool { matches!(desk(env).objects.remove(&h), Some(UserObject::Hook { .. })) }
    stdcall fn CallNextHookEx(env, h: u32, code: i32, wp: u32, lp: u32) -> u32 { 0 }
    stdcall fn GetClassLongW(env, h: u32, i: i32) -> u32 {
        let d = desk(env);
        let Some(c) = d.win(h).and_then(|w| d.classes.get(w.class)) else { return 0 };
        match i { -10 => c.background, -12 => c.cursor, -14 => c.icon, -24 => c.wndproc, -26 => c.style, -32 => c.atom as u32, _ => 0 }
    }
    // Every window is this process's: the text comes from WM_GETTEXT /
    // WM_GETTEXTLENGTH (an EDIT control answers with its contents).
    stdcall fn GetWindowTextW(env, h: u32, buf: u32, n: i32) -> Ret {
        if n <= 0 || desk(env).win(h).is_none() {
            return Ret::Value(0);
        }
        super::dialog::get_text(env, h, buf, n as u32, true, |_, r| Ret::Value(r))
    }
    stdcall fn GetWindowTextA(env, h: u32, buf: u32, n: i32) -> Ret {
        if n <= 0 || desk(env).win(h).is_none() {
            return Ret::Value(0);
        }
        super::dialog::get_text(env, h, buf, n as u32, false, |_, r| Ret::Value(r))
    }
    stdcall fn GetWindowTextLengthW(env, h: u32) -> Ret { send(env, h, wm::GETTEXTLENGTH, 0, 0, |_, r| Ret::Value(r)) }
    stdcall fn SetWindowTextW(env, h: u32, s: u32) -> Ret { super::dialog::set_text(env, h, s, true, |_, r| Ret::Value(r)) }
    stdcall fn SetWindowTextA(env, h: u32, s: u32) -> Ret { super::dialog::set_text(env, h, s, false, |_, r| Ret::Value(r)) }
    stdcall fn GetKeyState(env, vk: u32) -> u32 {
        let b = desk(env).keys[(vk & 0xFF) as usize];
        (if b & 0x80 != 0 { 0xFF80u32 } else { 0 }) | (b & 1) as u32
    }
    stdcall fn GetAsyncKeyState(env, vk: u32) -> u32 { if desk(env).keys[(vk & 0xFF) as usize] & 0x80 != 0 { 0x8000 } else { 0 } }
    stdcall fn GetKeyboardState(env, out: u32) -> bool { let k = desk(env).keys; env.mem.poke(out, &k).is_some() }
    stdcall fn GetCursorPos(env, p: u32) -> bool { let c = desk(env).cursor; write_pair(&mut env.mem, p, c) }
    stdcall fn SetCursorPos(env, x: i32, y: i32) -> bool { desk(env).cursor = (x, y); true }
    stdcall fn SetCursor(env, c: u32) -> u32 { 0 }
    stdcall fn ShowCursor(env, show: bool) -> i32 { if show { 0 } else { -1 } }
    stdcall fn LoadCursorW(env, inst: u32, name: u32) -> u32 { desk(env).add_object(UserObject::Cursor) }
    stdcall fn LoadCursorA(env, inst: u32, name: u32) -> u32 { desk(env).add_object(UserObject::Cursor) }
    stdcall fn LoadIconW(env, inst: u32, name: u32) -> u32 { desk(env).add_object(UserObject::Icon { width: 32, height: 32 }) }
    stdcall fn LoadIconA(env, inst: u32, name: u32) -> u32 { desk(env).add_object(UserObject::Icon { width: 32, height: 32 }) }
    stdcall fn LoadImageW(env, inst: u32, name: u32, kind: u32, cx: i32, cy: i32, flags: u32) -> u32 { load_image(env, inst, name, kind, cx, cy, true) }
    stdcall fn LoadImageA(env, inst: u32, name: u32, kind: u32, cx: i32, cy: i32, flags: u32) -> u32 { load_image(env, inst, name, kind, cx, cy, false) }
    // CopyImage: a bitmap's pixels copied into a new bitmap; icons and cursors (sizes only here) as new handles.
    stdcall fn CopyImage(env, h: u32, kind: u32, cx: i32, cy: i32, flags: u32) -> u32 {
        match kind {
            0 => match env.desktop.gdi.get(h).cloned() { Some(o @ crate::gdi::Object::Bitmap(_)) => env.desktop.gdi.add(o), _ => 0 },
            1 | 2 => match desk(env).objects.get(&h).cloned() {
                Some(UserObject::Icon { width, height }) => desk(env).add_object(UserObject::Icon { width: if cx == 0 { width } else { cx }, height: if cy == 0 { height } else { cy } }),
                Some(UserObject::Cursor) => desk(env).add_object(UserObject::Cursor),
                _ => 0,
            },
            _ => 0,
        }
    }
    stdcall fn LoadBitmapW(env, inst: u32, name: u32) -> u32 { let n = res_name(env, name, true); load_bitmap(env, inst, &n) }
    stdcall fn LoadBitmapA(env, inst: u32, name: u32) -> u32 { let n = res_name(env, name, false); load_bitmap(env, inst, &n) }
    stdcall fn LoadStringW(env, inst: u32, id: u32, buf: u32, n: i32) -> u32 { load_string(env, inst, id, buf, n, true) }
    stdcall fn LoadStringA(env, inst: u32, id: u32, buf: u32, n: i32) -> u32 { load_string(env, inst, id, buf, n, false) }
    stdcall fn DestroyIcon(env, h: u32) -> bool { desk(env).objects.remove(&h).is_some() }
    stdcall fn DestroyCursor(env, h: u32) -> bool { desk(env).objects.remove(&h).is_some() }
    stdcall fn DrawIcon(env, hdc: u32, x: i32, y: i32, icon: u32) -> bool { desk(env).objects.contains_key(&icon) }
    stdcall fn LoadAcceleratorsW(env, inst: u32, name: u32) -> u32 {
        let n = res_name(env, name, true);
        let Some(data) = desk_res(env, inst, res::RT_ACCELERATOR, &n) else { return 0 };
        match res::accelerators(&data) { Ok(a) => desk(env).add_object(UserObject::Accel(a)), Err(_) => 0 }
    }
    stdcall fn LoadAcceleratorsA(env, inst: u32, name: u32) -> u32 {
        let n = res_name(env, name, false);
        let Some(data) = desk_res(env, inst, res::RT_ACCELERATOR, &n) else { return 0 };
        match res::accelerators(&data) { Ok(a) => desk(env).add_object(UserObject::Accel(a)), Err(_) => 0 }
    }
    stdcall fn TranslateAcceleratorW(env, h: u32, acc: u32, msg: u32) -> Ret { translate_accel(env, h, acc, msg) }
    stdcall fn TranslateAcceleratorA(env, h: u32, acc: u32, msg: u32) -> Ret { translate_accel(env, h, acc, msg) }
    stdcall fn LoadMenuW(env, inst: u32, name: u32) -> u32 { let n = res_name(env, name, true); load_menu(env, inst, &n) }
    stdcall fn LoadMenuA(env, inst: u32, name: u32) -> u32 { let n = res_name(env, name, false); load_menu(env, inst, &n) }
    // The clipboard is this process's (no other program shares it): data
    // handles are kept by format as given; CF_TEXT and CF_UNICODETEXT are
    // not converted into each other.
    stdcall fn IsClipboardFormatAvailable(env, format: u32) -> bool { desk(env).clipboard.iter().any(|c| c.0 == format) }
    stdcall fn OpenClipboard(env, h: u32) -> bool {
        let d = desk(env);
        if d.clipboard_open.is_some_and(|o| o != h) { env.last_error = 5; return false; } // ERROR_ACCESS_DENIED
        d.clipboard_open = Some(h);
        true
    }
    stdcall fn CloseClipboard(env) -> bool {
        let d = desk(env);
        if d.clipboard_open.take().is_none() { env.last_error = 1418; return false; } // ERROR_CLIPBOARD_NOT_OPEN
        true
    }
    stdcall fn EmptyClipboard(env) -> bool {
        let d = desk(env);
        let Some(h) = d.clipboard_open else { env.last_error = 1418; return false };
        d.clipboard.clear();
        d.clipboard_owner = h;
        true
    }
    stdcall fn SetClipboardData(env, format: u32, data: u32) -> u32 {
        let d = desk(env);
        if d.clipboard_open.is_none() { env.last_error = 1418; return 0; }
        d.clipboard.retain(|c| c.0 != format);
        d.clipboard.push((format, data));
        data
    }
    stdcall fn GetClipboardData(env, format: u32) -> u32 {
        let d = desk(env);
        if d.clipboard_open.is_none() { env.last_error = 1418; return 0; }
        d.clipboard.iter().find(|c| c.0 == format).map_or(0, |c| c.1)
    }
    stdcall fn CountClipboardFormats(env) -> i32 { desk(env).clipboard.len() as i32 }
    stdcall fn EnumClipboardFormats(env, format: u32) -> u32 {
        let d = desk(env);
        let i = if format == 0 { 0 } else { d.clipboard.iter().position(|c| c.0 == format).map_or(usize::MAX, |i| i + 1) };
        d.clipboard.get(i).map_or(0, |c| c.0)
    }
    stdcall fn GetOpenClipboardWindow(env) -> u32 { desk(env).clipboard_open.unwrap_or(0) }
    stdcall fn GetClipboardOwner(env) -> u32 { desk(env).clipboard_owner }
    stdcall fn GetMenu(env, h: u32) -> u32 { desk(env).win(h).map_or(0, |w| w.menu()) }
    stdcall fn SetMenu(env, h: u32, m: u32) -> bool {
        let Some(w) = desk(env).win_mut(h) else { return false };
        if w.is_child() { return false; }
        w.id = m;
        desk(env).draw_frame(h);
        true
    }
    stdcall fn DrawMenuBar(env, h: u32) -> bool { desk(env).draw_frame(h); true }
    stdcall fn GetSubMenu(env, m: u32, pos: i32) -> u32 {
        desk(env).menus.get(&m).and_then(|x| x.items.get(pos.max(0) as usize)).map_or(0, |e| e.sub)
    }
    stdcall fn GetMenuItemCount(env, m: u32) -> i32 { desk(env).menus.get(&m).map_or(-1, |x| x.items.len() as i32) }
    stdcall fn CheckMenuItem(env, m: u32, item: u32, flags: u32) -> u32 {
        let Some(e) = menu_entry_mut(desk(env), m, item, flags & 0x400 != 0) else { return u32::MAX };
        let old = e.flags & 8;
        e.flags = (e.flags & !8) | (flags & 8);
        old
    }
    stdcall fn EnableMenuItem(env, m: u32, item: u32, flags: u32) -> u32 {
        let Some(e) = menu_entry_mut(desk(env), m, item, flags & 0x400 != 0) else { return u32::MAX };
        let old = e.flags & 3;
        e.flags = (e.flags & !3) | (flags & 3);
        old
    }
    stdcall fn GetMenuState(env, m: u32, item: u32, flags: u32) -> u32 {
        menu_entry_mut(desk(env), m, item, flags & 0x400 != 0).map_or(u32::MAX, |e| e.flags)
    }
    stdcall fn CreateMenu(env) -> u32 { desk(env).add_menu(Default::default()) }
    stdcall fn CreatePopupMenu(env) -> u32 { desk(env).add_menu(Default::default()) }
    stdcall fn DestroyMenu(env, m: u32) -> bool { desk(env).menus.remove(&m).is_some() }
    stdcall fn AppendMenuW(env, m: u32, flags: u32, id: u32, text: u32) -> bool {
        let t = if flags & 0x800 == 0 && text != 0 { read_str(&env.mem, text, -1, true).unwrap_or_default() } else { vec![] };
        let popup = flags & 0x10 != 0;
        let Some(menu) = desk(env).menus.get_mut(&m) else { return false };
        menu.items.push(crate::desktop::MenuEntry { flags, id: if popup { 0 } else { id }, text: t, sub: if popup { id } else { 0 } });
        true
    }
    stdcall fn GetMonitorInfoW(env, mon: u32, out: u32) -> bool { monitor_info(env, out) }
    stdcall fn GetMonitorInfoA(env, mon: u32, out: u32) -> bool { monitor_info(env, out) }
    stdcall fn MonitorFromRect(env, r: u32, flags: u32) -> u32 { 0x0001_0001 }
    stdcall fn MonitorFromWindow(env, h: u32, flags: u32) -> u32 { 0x0001_0001 }
    stdcall fn MonitorFromPoint(env, x: i32, y: i32, flags: u32) -> u32 { 0x0001_0001 }
    stdcall fn CreateCaret(env, hwnd: u32, _bitmap: u32, w: i32, h: i32) -> bool {
        desk(env).caret = Some(crate::desktop::Caret { hwnd, size: (w, h), pos: (0, 0), shown: 0 });
        true
    }
    stdcall fn DestroyCaret(env) -> bool { desk(env).caret.take().is_some() }
    stdcall fn ShowCaret(env, _hwnd: u32) -> bool { desk(env).caret.as_mut().map(|c| c.shown += 1).is_some() }
    stdcall fn HideCaret(env, _hwnd: u32) -> bool { desk(env).caret.as_mut().map(|c| c.shown -= 1).is_some() }
    stdcall fn SetCaretPos(env, x: i32, y: i32) -> bool { desk(env).caret.as_mut().map(|c| c.pos = (x, y)).is_some() }
    stdcall fn GetCaretPos(env, out: u32) -> bool {
        let p = desk(env).caret.as_ref().map_or((0, 0), |c| c.pos);
        write_pair(&mut env.mem, out, p)
    }
    stdcall fn GetCaretBlinkTime(env) -> u32 { 500 }
    stdcall fn SetCaretBlinkTime(env, _ms: u32) -> bool { true }
    // SystemParametersInfoA: the same actions (SPI_GETWORKAREA's RECT has no strings).
    stdcall fn SystemParametersInfoA(env, action: u32, p: u32, out: u32, ini: u32) -> bool { system_parameters(env, action, out) }
    stdcall fn SystemParametersInfoW(env, action: u32, p: u32, out: u32, ini: u32) -> bool { system_parameters(env, action, out) }
    stdcall fn MessageBoxW(env, h: u32, text: u32, caption: u32, kind: u32) -> u32 { message_box(env, h, text, caption, kind, true) }
    stdcall fn MessageBoxA(env, h: u32, text: u32, caption: u32, kind: u32) -> u32 { message_box(env, h, text, caption, kind, false) }
    stdcall fn MessageBeep(env, kind: u32) -> bool { true }
    stdcall fn GetDoubleClickTime(env) -> u32 { 500 }
    stdcall fn SetRect(env, r: u32, l: i32, t: i32, rr: i32, b: i32) -> bool { write_rect(&mut env.mem, r, Rect::new(l, t, rr, b)) }
    stdcall fn SetRectEmpty(env, r: u32) -> bool { write_rect(&mut env.mem, r, Rect::default()) }
    stdcall fn CopyRect(env, d: u32, s: u32) -> bool { match read_rect(&env.mem, s) { Some(x) => write_rect(&mut env.mem, d, x), None => false } }
    stdcall fn InflateRect(env, r: u32, dx: i32, dy: i32) -> bool {
        let Some(x) = read_rect(&env.mem, r) else { return false };
        write_rect(&mut env.mem, r, Rect::new(x.left - dx, x.top - dy, x.right + dx, x.bottom + dy))
    }
    stdcall fn OffsetRect(env, r: u32, dx: i32, dy: i32) -> bool {
        let Some(x) = read_rect(&env.mem, r) else { return false };
        write_rect(&mut env.mem, r, x.offset(dx, dy))
    }
    stdcall fn IntersectRect(env, d: u32, a: u32, b: u32) -> bool { rect_op(env, d, a, b, |a, b| a.intersect(&b)) }
    stdcall fn UnionRect(env, d: u32, a: u32, b: u32) -> bool { rect_op(env, d, a, b, |a, b| a.union(&b)) }
    stdcall fn SubtractRect(env, d: u32, a: u32, b: u32) -> bool {
        rect_op(env, d, a, b, |a, b| {
            let r = Region::rect(a).combine(&Region::rect(b), Op::Diff);
            if r.rects.len() == 1 { r.rects[0] } else { a }
        })
    }
    stdcall fn EqualRect(env, a: u32, b: u32) -> bool { read_rect(&env.mem, a).is_some() && read_rect(&env.mem, a) == read_rect(&env.mem, b) }
    stdcall fn IsRectEmpty(env, r: u32) -> bool { read_rect(&env.mem, r).is_none_or(|x| x.is_empty()) }
    stdcall fn PtInRect(env, r: u32, x: i32, y: i32) -> bool { read_rect(&env.mem, r).is_some_and(|rc| rc.contains(x, y)) }
    stdcall fn CharUpperA(env, s: u32) -> u32 { char_case(env, s, true, false) }
    stdcall fn CharUpperW(env, s: u32) -> u32 { char_case(env, s, true, true) }
    stdcall fn CharLowerA(env, s: u32) -> u32 { char_case(env, s, false, false) }
    stdcall fn CharLowerW(env, s: u32) -> u32 { char_case(env, s, false, true) }
    stdcall fn CharUpperBuffA(env, s: u32, n: u32) -> u32 { map_buf(env, s, Some(n), true, false) }
    stdcall fn CharUpperBuffW(env, s: u32, n: u32) -> u32 { map_buf(env, s, Some(n), true, true) }
    stdcall fn CharLowerBuffA(env, s: u32, n: u32) -> u32 { map_buf(env, s, Some(n), false, false) }
    stdcall fn CharLowerBuffW(env, s: u32, n: u32) -> u32 { map_buf(env, s, Some(n), false, true) }
    // Code page 1252 has no lead bytes: every character is one unit.
    stdcall fn CharNextA(env, s: u32) -> u32 { if env.read_bytes(s, 1).is_some_and(|b| b[0] != 0) { s + 1 } else { s } }
    stdcall fn CharNextW(env, s: u32) -> u32 { if env.read_bytes(s, 2).is_some_and(|b| b != [0, 0]) { s + 2 } else { s } }
    stdcall fn CharPrevA(env, start: u32, cur: u32) -> u32 { if cur > start { cur - 1 } else { start } }
    stdcall fn CharPrevW(env, start: u32, cur: u32) -> u32 { if cur > start + 1 { cur - 2 } else { start } }
    stdcall fn CharPrevExA(env, code_page: u32, start: u32, cur: u32, flags: u32) -> u32 { if cur > start { cur - 1 } else { start } }
    stdcall fn IsCharAlphaA(env, c: u32) -> bool { is_char(c & 0xFF, char::is_alphabetic) }
    stdcall fn IsCharAlphaW(env, c: u32) -> bool { is_char(c, char::is_alphabetic) }
    stdcall fn IsCharAlphaNumericA(env, c: u32) -> bool { is_char(c & 0xFF, char::is_alphanumeric) }
    stdcall fn IsCharAlphaNumericW(env, c: u32) -> bool { is_char(c, char::is_alphanumeric) }
    stdcall fn IsCharUpperA(env, c: u32) -> bool { is_char(c & 0xFF, char::is_uppercase) }
    stdcall fn IsCharUpperW(env, c: u32) -> bool { is_char(c, char::is_uppercase) }
    stdcall fn IsCharLowerA(env, c: u32) -> bool { is_char(c & 0xFF, char::is_lowercase) }
    stdcall fn IsCharLowerW(env, c: u32) -> bool { is_char(c, char::is_lowercase) }
    // wsprintf: the C runtime's formatting, at most 1024 characters and a NUL.
    cdecl fn wsprintfA(env, buf: u32, f: u32) -> i32 { let out = fmt_a(env, f, env.arg_base + 8); store(env, buf, &out[..out.len().min(WSPRINTF_MAX as usize)], Bound::None) }
    cdecl fn wsprintfW(env, buf: u32, f: u32) -> i32 { let out = fmt_w(env, f, env.arg_base + 8); store(env, buf, &out[..out.len().min(WSPRINTF_MAX as usize)], Bound::None) }
    stdcall fn wvsprintfA(env, buf: u32, f: u32, va: u32) -> i32 { let out = fmt_a(env, f, va); store(env, buf, &out[..out.len().min(WSPRINTF_MAX as usize)], Bound::None) }
    stdcall fn wvsprintfW(env, buf: u32, f: u32, va: u32) -> i32 { let out = fmt_w(env, f, va); store(env, buf, &out[..out.len().min(WSPRINTF_MAX as usize)], Bound::None) }
}

/// The one keyboard layout: US English.
const HKL_US: u32 = 0x0409_0409;
/// BeginDeferWindowPos's handle (each DeferWindowPos moves at once).
const HDWP: u32 = 0x00DE_F001;

/// `r`, with its final value replaced by `v` (after any guest calls it makes).
fn then_value(r: Ret, v: u32) -> Ret {
    match r {
        Ret::Value(_) => Ret::Value(v),
        Ret::Call(mut g) => {
            let then = g.then;
            g.then = Box::new(move |env, x| then_value(then(env, x), v));
            Ret::Call(g)
        }
        other => other,
    }
}

/// SetParent: the window moves under `parent` (0: the desktop) keeping its
/// screen position; answers the old parent.
fn set_parent(env: &mut Env, h: u32, parent: u32) -> u32 {
    let d = desk(env);
    let Some(old) = d.win(h).map(|w| w.parent) else {
        env.last_error = 1400;
        return 0;
    };
    let parent = if parent == DESKTOP_HWND { 0 } else { parent };
    if parent != 0 && d.win(parent).is_none() {
        env.last_error = 1400;
        return 0;
    }
    // A window cannot go under itself or one of its descendants.
    let mut up = parent;
    for _ in 0..64 {
        if up == 0 {
            break;
        }
        if up == h {
            env.last_error = 87; // ERROR_INVALID_PARAMETER
            return 0;
        }
        up = d.win(up).map_or(0, |w| w.parent);
    }
    if let Some(p) = d.win_mut(old) {
        p.children.retain(|&c| c != h);
    }
    d.top.retain(|&c| c != h);
    if parent == 0 {
        d.top.insert(0, h);
    } else if let Some(p) = d.win_mut(parent) {
        p.children.push(h);
    }
    if let Some(w) = d.win_mut(h) {
        w.parent = parent;
    }
    old
}

/// InsertMenu/AppendMenu: `pos` is a position with MF_BYPOSITION (0x400),
/// else the command id of the item to insert before (the end if none).
fn insert_menu(
    env: &mut Env,
    m: u32,
    pos: u32,
    flags: u32,
    id: u32,
    text: u32,
    wide: bool,
) -> bool {
    let t = if flags & 0x900 == 0 && text != 0 {
        read_str(&env.mem, text, -1, wide).unwrap_or_default()
    } else {
        vec![]
    };
    let popup = flags & 0x10 != 0;
    let Some(menu) = desk(env).menus.get_mut(&m) else {
        env.last_error = 1401;
        return false;
    };
    let at = if flags & 0x400 != 0 {
        (pos as usize).min(menu.items.len())
    } else {
        menu.items
            .iter()
            .position(|e| e.sub == 0 && e.id == pos)
            .unwrap_or(menu.items.len())
    };
    let e = crate::desktop::MenuEntry {
        flags: flags & !0x400,
        id: if popup { 0 } else { id },
        text: t,
        sub: if popup { id } else { 0 },
    };
    menu.items.insert(at, e);
    true
}

/// keybd_event: WM_KEYDOWN/WM_KEYUP (WM_SYSKEY* with Alt down) to the focus window.
fn synth_key(env: &mut Env, vk: u8, scan: u8, up: bool) {
    let d = desk(env);
    let alt = d.keys[0x12] & 0x80 != 0 && vk != 0x12;
    let was = d.keys[vk as usize] & 0x80 != 0;
    let msg = match (up, alt) {
        (false, false) => wm::KEYDOWN,
        (true, false) => wm::KEYUP,
        (false, true) => 0x104,
        (true, true) => 0x105,
    };
    if up {
        d.keys[vk as usize] &= !0x80;
    } else {
        d.keys[vk as usize] = (d.keys[vk as usize] | 0x80) ^ if was { 0 } else { 1 };
    }
    let lp = 1 | (scan as u32) << 16 | (was as u32) << 30 | if up { 0xC000_0000 } else { 0 };
    let focus = d.focus;
    post(env, focus, msg, vk as u32, lp);
}

/// mouse_event: moves (MOUSEEVENTF_MOVE, absolute in 0..65535 or relative)
/// and button messages to the window under the cursor (or the capture).
fn synth_mouse(env: &mut Env, flags: u32, dx: i32, dy: i32) {
    let (w, h) = (env.desktop.gdi.screen.width, env.desktop.gdi.screen.height);
    let d = desk(env);
    if flags & 1 != 0 {
        d.cursor = if flags & 0x8000 != 0 {
            (dx * w / 65536, dy * h / 65536)
        } else {
            (d.cursor.0 + dx, d.cursor.1 + dy)
        };
    }
    let target = if d.capture != 0 {
        d.capture
    } else {
        d.window_at(d.cursor.0, d.cursor.1)
    };
    let pt = d.cursor;
    let mut msgs = Vec::new();
    if flags & 1 != 0 {
        msgs.push(0x200);
    }
    for (bit, m) in [
        (2, 0x201),
        (4, 0x202),
        (8, 0x204),
        (0x10, 0x205),
        (0x20, 0x207),
        (0x40, 0x208),
    ] {
        if flags & bit != 0 {
            msgs.push(m);
        }
    }
    if target == 0 {
        return;
    }
    let org = desk(env)
        .client_rect(target)
        .map_or((0, 0), |c| (c.left, c.top));
    for m in msgs {
        let lp = ((pt.0 - org.0) as u16 as u32) | ((pt.1 - org.1) as u16 as u32) << 16;
        post(env, target, m, 0, lp);
    }
}

/// SendInput: INPUT records (28 bytes: type, then a MOUSEINPUT or KEYBDINPUT).
fn send_input(env: &mut Env, n: u32, inputs: u32, size: u32) -> u32 {
    if size != 28 {
        env.last_error = 87;
        return 0;
    }
    for i in 0..n {
        let a = inputs + i * 28;
        let r = |k: u32| env.mem.peek_u32(a + 4 * k).unwrap_or(0);
        match r(0) {
            0 => {
                let (dx, dy, flags) = (r(1) as i32, r(2) as i32, r(4));
                synth_mouse(env, flags, dx, dy);
            }
            1 => {
                let (vk, flags) = (r(1) & 0xFFFF, r(2));
                synth_key(env, vk as u8, (r(1) >> 16) as u8, flags & 2 != 0);
            }
            _ => {}
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dll::Ret;

    fn env() -> Env {
        let mut e = Env::new(crate::memory::Memory::new());
        e.process_heap = e.new_heap();
        e
    }

    #[test]
    fn case_mapping_in_place_and_by_value() {
        let mut e = env();
        let w = e.alloc_wstr(&"straße Ωmega".encode_utf16().collect::<Vec<_>>());
        assert_eq!(DLL.call("CharUpperW", &mut e, &[w]), Ret::Value(w));
        // ß has no one-unit uppercase: kept, as Windows keeps it.
        assert_eq!(e.read_w(w).as_deref(), Some("STRAßE ΩMEGA"));
        assert_eq!(DLL.call("CharLowerBuffW", &mut e, &[w, 3]), Ret::Value(3));
        assert_eq!(e.read_w(w).as_deref(), Some("strAßE ΩMEGA"));
        assert_eq!(DLL.call("CharUpperW", &mut e, &[0xE9]), Ret::Value(0xC9));
        let a = e.alloc_cstr(b"abc\xe9\xff");
        assert_eq!(DLL.call("CharUpperA", &mut e, &[a]), Ret::Value(a));
        assert_eq!(e.read_bytes(a, 6), Some(b"ABC\xc9\xff\0".to_vec()));
        assert_eq!(
            DLL.call("CharPrevExA", &mut e, &[0, a, a, 0]),
            Ret::Value(a)
        );
        assert_eq!(
            DLL.call("CharPrevExA", &mut e, &[0, a, a + 2, 0]),
            Ret::Value(a + 1)
        );
        assert_eq!(DLL.call("CharNextA", &mut e, &[a + 5]), Ret::Value(a + 5));
    }

    #[test]
    fn load_string_without_a_module_fails_cleanly() {
        let mut e = env();
        let buf = e.alloc(16);
        e.mem.poke(buf, b"xx");
        assert_eq!(
            DLL.call("LoadStringW", &mut e, &[0, 1, buf, 8]),
            Ret::Value(0)
        );
        assert_eq!(e.read_bytes(buf, 2), Some(vec![0, 0]));
        assert_eq!(e.last_error, RESOURCE_DATA_NOT_FOUND);
    }
}
