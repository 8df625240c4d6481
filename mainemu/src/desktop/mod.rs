//! The desktop: the screen's GDI state and the window manager (classes,
//! windows with their tree, Z order and owning thread, visible regions,
//! update regions, the threads' message queues (`queue`), timers on the
//! guest clock, scripted input, focus, capture, key state, menus), and the
//! frame (the screen's pixels).
//!
//! Windows draw straight into the screen through their visible regions,
//! as in Windows 98; when a window appears, moves or goes away the area it
//! uncovers is repainted: the desktop colour and non-client frames by the
//! host at once, client areas through WM_PAINT.
//!
//! Owns the per-process GUI state user32 and gdi32 work on. It must not
//! read guest structures (the DLL modules marshal) nor run guest code
//! (window procedures are called by user32 through the engine).

pub mod input;
pub mod metrics;
pub mod nc;
pub mod queue;

use crate::gdi::bits::rgb;
use crate::gdi::raster::{Canvas, Paint};
use crate::gdi::region::{Op, Rect, Region};
use crate::gdi::Gdi;
use crate::pe::resources::{Accel, MenuItem, ResId};
use metrics::ws;
use std::collections::BTreeMap;

/// Default screen size (`--screen WxH` changes it).
pub const DEFAULT_SCREEN: (i32, i32) = (640, 480);

/// The Windows 98 default desktop colour (COLOR_DESKTOP).
pub const DESKTOP_COLOR: u32 = rgb(0, 128, 128);

/// The first guest thread's id (the owner of host-made windows and of
/// input for no window).
pub const MAIN_THREAD: u32 = 0x104;

/// First window handle given out.
pub const HWND_BASE: u32 = 0x0001_0020;

/// Window messages used by the host.
pub mod wm {
    pub const CREATE: u32 = 0x0001;
    pub const DESTROY: u32 = 0x0002;
    pub const MOVE: u32 = 0x0003;
    pub const SIZE: u32 = 0x0005;
    pub const ACTIVATE: u32 = 0x0006;
    pub const SETFOCUS: u32 = 0x0007;
    pub const KILLFOCUS: u32 = 0x0008;
    pub const ENABLE: u32 = 0x000A;
    pub const SETTEXT: u32 = 0x000C;
    pub const GETTEXT: u32 = 0x000D;
    pub const GETTEXTLENGTH: u32 = 0x000E;
    pub const PAINT: u32 = 0x000F;
    pub const CLOSE: u32 = 0x0010;
    pub const QUIT: u32 = 0x0012;
    pub const ERASEBKGND: u32 = 0x0014;
    pub const SHOWWINDOW: u32 = 0x0018;
    pub const SETCURSOR: u32 = 0x0020;
    pub const GETMINMAXINFO: u32 = 0x0024;
    pub const SETFONT: u32 = 0x0030;
    pub const GETFONT: u32 = 0x0031;
    pub const WINDOWPOSCHANGED: u32 = 0x0047;
    pub const NCCREATE: u32 = 0x0081;
    pub const NCDESTROY: u32 = 0x0082;
    pub const NCHITTEST: u32 = 0x0084;
    pub const NCACTIVATE: u32 = 0x0086;
    pub const GETDLGCODE: u32 = 0x0087;
    pub const NCLBUTTONDOWN: u32 = 0x00A1;
    pub const KEYDOWN: u32 = 0x0100;
    pub const KEYUP: u32 = 0x0101;
    pub const CHAR: u32 = 0x0102;
    pub const SYSKEYDOWN: u32 = 0x0104;
    pub const SYSKEYUP: u32 = 0x0105;
    pub const SYSCHAR: u32 = 0x0106;
    pub const INITDIALOG: u32 = 0x0110;
    pub const COMMAND: u32 = 0x0111;
    pub const SYSCOMMAND: u32 = 0x0112;
    pub const TIMER: u32 = 0x0113;
    pub const INITMENU: u32 = 0x0116;
    pub const INITMENUPOPUP: u32 = 0x0117;
    pub const MOUSEMOVE: u32 = 0x0200;
    pub const LBUTTONDOWN: u32 = 0x0201;
    pub const LBUTTONUP: u32 = 0x0202;
    pub const LBUTTONDBLCLK: u32 = 0x0203;
    pub const RBUTTONDOWN: u32 = 0x0204;
    pub const RBUTTONUP: u32 = 0x0205;
    pub const MBUTTONDOWN: u32 = 0x0207;
    pub const MBUTTONUP: u32 = 0x0208;
    pub const CAPTURECHANGED: u32 = 0x0215;
    pub const USER: u32 = 0x0400;
}

/// A registered window class.
#[derive(Clone, Debug)]
pub struct Class {
    /// Upper-cased name (class names compare case-insensitively).
    pub name: Vec<u16>,
    /// The name as registered (GetClassName answers it).
    pub given: Vec<u16>,
    pub atom: u16,
    pub style: u32,
    pub wndproc: u32,
    pub cls_extra: i32,
    pub wnd_extra: i32,
    pub instance: u32,
    pub icon: u32,
    pub cursor: u32,
    /// A brush handle, or COLOR_* + 1.
    pub background: u32,
    pub menu: Option<ResId>,
    pub wide: bool,
    pub extra: Vec<u8>,
}

/// A window.
#[derive(Clone, Debug)]
pub struct Window {
    pub hwnd: u32,
    pub class: usize,
    pub parent: u32,
    pub owner: u32,
    pub style: u32,
    pub ex_style: u32,
    /// Window rectangle, screen coordinates.
    pub rect: Rect,
    pub title: Vec<u16>,
    pub wndproc: u32,
    /// Child id, or the menu handle of a top-level window.
    pub id: u32,
    pub instance: u32,
    pub extra: Vec<u8>,
    pub user_data: u32,
    /// Invalid part of the client area, client coordinates.
    pub update: Region,
    /// WM_ERASEBKGND is due at the next BeginPaint.
    pub erase: bool,
    /// Children, topmost first.
    pub children: Vec<u32>,
    /// Created by a W function (messages carry UTF-16 strings).
    pub wide: bool,
    pub font: u32,
    pub destroyed: bool,
    /// comctl32 subclasses (procedure, id, reference data), installed last
    /// at the end, and the procedure they wrap.
    pub subclasses: Vec<(u32, u32, u32)>,
    pub subclass_orig: u32,
    /// The subclass level running now (DefSubclassProc calls the one below).
    pub subclass_level: usize,
    /// Window properties (SetProp): upper-cased name or `#atom`, value.
    pub props: Vec<(Vec<u16>, u32)>,
    /// Scroll bar state (min, max, page, pos) of SB_HORZ, SB_VERT and
    /// SB_CTL; None: never set (the bar's default range).
    pub scroll: [Option<(i32, i32, u32, i32)>; 3],
    /// The thread that created it (its messages go to that thread's queue).
    pub thread: u32,
}

impl Window {
    /// A window not yet added to the desktop (`hwnd` 0), with no extra
    /// bytes, instance, font, paint state or subclasses: what
    /// CreateWindowEx, menu popups and the file dialog share. Callers set
    /// the rest with struct update syntax.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        class: usize,
        parent: u32,
        owner: u32,
        style: u32,
        ex_style: u32,
        rect: Rect,
        title: Vec<u16>,
        wndproc: u32,
        id: u32,
    ) -> Window {
        Window {
            hwnd: 0,
            class,
            parent,
            owner,
            style,
            ex_style,
            rect,
            title,
            wndproc,
            id,
            instance: 0,
            extra: Vec::new(),
            user_data: 0,
            update: Region::empty(),
            erase: false,
            children: Vec::new(),
            wide: true,
            font: 0,
            destroyed: false,
            subclasses: Vec::new(),
            subclass_orig: 0,
            subclass_level: 0,
            props: Vec::new(),
            scroll: [None; 3],
            thread: MAIN_THREAD,
        }
    }

    pub fn visible(&self) -> bool {
        self.style & ws::VISIBLE != 0
    }
    pub fn is_child(&self) -> bool {
        self.style & ws::CHILD != 0
    }
    /// The menu handle of a top-level window (0 for none).
    pub fn menu(&self) -> u32 {
        if self.is_child() {
            0
        } else {
            self.id
        }
    }
}

/// A queued message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Msg {
    pub hwnd: u32,
    pub message: u32,
    pub wparam: u32,
    pub lparam: u32,
    /// Milliseconds of guest time.
    pub time: u32,
    pub pt: (i32, i32),
}

/// A timer (SetTimer) due on the guest clock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timer {
    pub hwnd: u32,
    pub id: u32,
    /// Period in dispatches.
    pub period: u64,
    /// Clock at which WM_TIMER is next due.
    pub due: u64,
    pub proc_: u32,
    /// The thread whose queue gets WM_TIMER (the window's, or SetTimer's caller for no window).
    pub thread: u32,
}

/// A menu: its items (a popup item's submenu is another menu handle).
#[derive(Clone, Debug, Default)]
pub struct Menu {
    pub items: Vec<MenuEntry>,
}

#[derive(Clone, Debug)]
pub struct MenuEntry {
    pub flags: u32,
    pub id: u32,
    pub text: Vec<u16>,
    pub sub: u32,
}

/// First menu handle given out.
pub const HMENU_BASE: u32 = 0x0003_0010;
/// First accelerator table / icon / cursor handle given out.
pub const HUSER_BASE: u32 = 0x0005_0010;

/// A user object that is not a window: icons, cursors, accelerator tables.
#[derive(Clone, Debug)]
pub enum UserObject {
    Icon {
        width: i32,
        height: i32,
    },
    Cursor,
    Accel(Vec<Accel>),
    /// SetWindowsHookEx's hook (kept, never called).
    Hook {
        id: i32,
        proc_: u32,
    },
}

/// The system caret's state (one per process here: mainemu's threads share
/// one desktop).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Caret {
    pub hwnd: u32,
    pub size: (i32, i32),
    pub pos: (i32, i32),
    /// ShowCaret minus HideCaret calls; shown when positive.
    pub shown: i32,
}

pub struct Desktop {
    pub gdi: Gdi,
    pub classes: Vec<Class>,
    pub windows: BTreeMap<u32, Window>,
    /// Top-level windows, topmost first.
    pub top: Vec<u32>,
    next_hwnd: u32,
    /// The threads' message queues.
    pub queues: queue::Queues,
    pub timers: Vec<Timer>,
    /// Scripted input, in time order, and how much was delivered.
    pub input: Vec<input::Event>,
    pub input_next: usize,
    pub focus: u32,
    pub active: u32,
    pub capture: u32,
    /// Key state: bit 7 down, bit 0 toggled (GetKeyState).
    pub keys: [u8; 256],
    pub cursor: (i32, i32),
    pub menus: BTreeMap<u32, Menu>,
    next_menu: u32,
    pub objects: BTreeMap<u32, UserObject>,
    next_obj: u32,
    /// Copies of loaded modules' resource sections: base → (image bytes, resource rva).
    pub images: BTreeMap<u32, (Vec<u8>, u32)>,
    /// Scratch memory for structures passed to window procedures (a stack).
    pub scratch: Option<(u32, u32)>,
    pub scratch_top: u32,
    /// MessageBox calls, in order (title, text): what a modal box showed.
    pub message_boxes: Vec<(String, String)>,
    /// Registered window message names → ids (RegisterWindowMessage).
    pub registered: Vec<Vec<u16>>,
    /// Solid brushes of the system colours (GetSysColorBrush, COLOR_* + 1).
    pub sys_brushes: BTreeMap<u32, u32>,
    /// GetMessage blocked with nothing that could ever come (no timer, no
    /// scripted input left): if every thread waits, the run ends idle.
    pub waiting_for_input: bool,
    /// EDIT controls' text, caret and selection, by window.
    pub edits: BTreeMap<u32, crate::dll::edit::EditText>,
    /// comdlg32's Open dialog while it is up (its modal loop's state).
    pub file_dialog: Option<crate::dll::filedlg::FileDialog>,
    /// A popup menu open from the menu bar (the menu loop's state).
    pub menu_track: Option<crate::dll::menu::MenuTrack>,
    /// comdlg32's CommDlgExtendedError.
    pub comdlg_error: u32,
    /// The system caret (CreateCaret ... DestroyCaret): owner window,
    /// size, client position, show count. Not drawn: a blinking caret
    /// would be wall time; EDIT draws its own.
    pub caret: Option<Caret>,
    /// BUTTON, STATIC, LISTBOX and COMBOBOX controls' state, by window.
    pub controls: BTreeMap<u32, crate::dll::controls::Control>,
    /// Dialogs made by the dialog manager, by window.
    pub dialogs: BTreeMap<u32, crate::dll::dialog::DlgInfo>,
    /// The modal dialogs whose loops are running, innermost last.
    pub modal: Vec<u32>,
    /// Why dialog calls failed (malformed templates, controls not made), in order.
    pub dialog_errors: Vec<String>,
    /// The clipboard: the window that has it open (None: closed), its
    /// owner (the last to empty it) and the data, by format, in the order set.
    pub clipboard_open: Option<u32>,
    pub clipboard_owner: u32,
    pub clipboard: Vec<(u32, u32)>,
    /// SetClipboardViewer's window (the chain's head).
    pub clipboard_viewer: u32,
    /// GetSystemMenu's menus, by window.
    pub system_menus: BTreeMap<u32, u32>,
}

impl Desktop {
    pub fn new(width: i32, height: i32) -> Desktop {
        Desktop {
            gdi: Gdi::new(width, height, DESKTOP_COLOR),
            classes: Vec::new(),
            windows: BTreeMap::new(),
            top: Vec::new(),
            next_hwnd: HWND_BASE,
            queues: Default::default(),
            timers: Vec::new(),
            input: Vec::new(),
            input_next: 0,
            focus: 0,
            active: 0,
            capture: 0,
            keys: [0; 256],
            cursor: (width / 2, height / 2),
            menus: BTreeMap::new(),
            next_menu: HMENU_BASE,
            objects: BTreeMap::new(),
            next_obj: HUSER_BASE,
            images: BTreeMap::new(),
            scratch: None,
            scratch_top: 0,
            message_boxes: Vec::new(),
            registered: Vec::new(),
            sys_brushes: BTreeMap::new(),
            waiting_for_input: false,
            edits: BTreeMap::new(),
            caret: None,
            file_dialog: None,
            comdlg_error: 0,
            menu_track: None,
            controls: BTreeMap::new(),
            dialogs: BTreeMap::new(),
            modal: Vec::new(),
            dialog_errors: Vec::new(),
            clipboard_open: None,
            clipboard_owner: 0,
            clipboard: Vec::new(),
            clipboard_viewer: 0,
            system_menus: BTreeMap::new(),
        }
    }

    /// Changes the screen size (before the program starts).
    pub fn resize(&mut self, width: i32, height: i32) {
        *self = Desktop::new(width, height);
    }

    /// The frame: the screen as 8-bit RGB rows, with its size.
    pub fn frame(&self) -> (u32, u32, Vec<u8>) {
        let s = &self.gdi.screen;
        (s.width as u32, s.height as u32, self.gdi.screen_rgb())
    }

    pub fn screen_rect(&self) -> Rect {
        Rect::new(0, 0, self.gdi.screen.width, self.gdi.screen.height)
    }

    pub fn add_object(&mut self, o: UserObject) -> u32 {
        let h = self.next_obj;
        self.next_obj += 4;
        self.objects.insert(h, o);
        h
    }

    pub fn add_menu(&mut self, m: Menu) -> u32 {
        let h = self.next_menu;
        self.next_menu += 4;
        self.menus.insert(h, m);
        h
    }

    /// A menu (and its popups) from a template.
    pub fn menu_from_template(&mut self, items: &[MenuItem]) -> u32 {
        let mut m = Menu::default();
        for it in items {
            let sub = match &it.popup {
                Some(p) => self.menu_from_template(p),
                None => 0,
            };
            m.items.push(MenuEntry {
                flags: it.flags as u32,
                id: it.id as u32,
                text: it.text.clone(),
                sub,
            });
        }
        self.add_menu(m)
    }

    /// The top-level labels of a menu bar.
    pub fn menu_labels(&self, hmenu: u32) -> Option<Vec<Vec<u16>>> {
        self.menus
            .get(&hmenu)
            .map(|m| m.items.iter().map(|e| e.text.clone()).collect())
    }

    /// Finds a class by name (case-insensitive) or atom.
    pub fn class_index(&self, name: &[u16], atom: u16) -> Option<usize> {
        if atom != 0 {
            return self.classes.iter().position(|c| c.atom == atom);
        }
        let up = upper(name);
        self.classes.iter().position(|c| c.name == up)
    }

    pub fn win(&self, h: u32) -> Option<&Window> {
        self.windows.get(&h).filter(|w| !w.destroyed)
    }

    pub fn win_mut(&mut self, h: u32) -> Option<&mut Window> {
        self.windows.get_mut(&h).filter(|w| !w.destroyed)
    }

    /// Client rectangle of a window, screen coordinates.
    pub fn client_rect(&self, h: u32) -> Option<Rect> {
        let w = self.win(h)?;
        Some(metrics::client_of(
            w.rect,
            w.style,
            w.ex_style,
            w.menu() != 0,
        ))
    }

    /// Adds a window (not yet shown) and returns its handle.
    pub fn add_window(&mut self, w: Window) -> u32 {
        let h = self.next_hwnd;
        self.next_hwnd += 4;
        let parent = w.parent;
        // A child of the desktop (parent 0) is among the top-level windows.
        let child = w.is_child() && parent != 0;
        let mut w = w;
        w.hwnd = h;
        self.windows.insert(h, w);
        if child {
            if let Some(p) = self.windows.get_mut(&parent) {
                // New children go to the bottom of their siblings (HWND_BOTTOM-like,
                // as CreateWindow places them after existing siblings).
                p.children.push(h);
            }
        } else {
            self.top.insert(0, h);
        }
        h
    }

    /// Whether `h` and all its ancestors are visible.
    pub fn really_visible(&self, h: u32) -> bool {
        let mut cur = h;
        for _ in 0..64 {
            let Some(w) = self.win(cur) else { return false };
            if !w.visible() {
                return false;
            }
            if !w.is_child() || w.parent == 0 {
                return true;
            }
            cur = w.parent;
        }
        false
    }

    /// The windows above `h` among its siblings (topmost first) and its ancestors' chain.
    fn siblings_above(&self, h: u32) -> Vec<u32> {
        let Some(w) = self.win(h) else { return vec![] };
        let list = if w.is_child() && w.parent != 0 {
            self.win(w.parent)
                .map(|p| p.children.clone())
                .unwrap_or_default()
        } else {
            self.top.clone()
        };
        list.into_iter().take_while(|&x| x != h).collect()
    }

    /// What of `area` (screen coordinates, part of window `h`) the screen shows:
    /// clipped by the ancestors' client areas and by visible windows above
    /// `h` and above each ancestor; `clip_children` removes `h`'s visible children.
    pub fn visible_part(&self, h: u32, area: Rect, clip_children: bool) -> Region {
        if !self.really_visible(h) {
            return Region::empty();
        }
        let mut r = Region::rect(area.intersect(&self.screen_rect()));
        let mut cur = h;
        for _ in 0..64 {
            for s in self.siblings_above(cur) {
                if let Some(sw) = self.win(s).filter(|x| x.visible()) {
                    r = r.combine(&Region::rect(sw.rect), Op::Diff);
                }
            }
            let Some(w) = self.win(cur) else { break };
            if !w.is_child() || w.parent == 0 {
                break;
            }
            cur = w.parent;
            if let Some(pc) = self.client_rect(cur) {
                r = r.intersect_rect(pc);
            }
        }
        if clip_children {
            if let Some(w) = self.win(h) {
                for c in &w.children {
                    if let Some(cw) = self.win(*c).filter(|x| x.visible()) {
                        r = r.combine(&Region::rect(cw.rect), Op::Diff);
                    }
                }
            }
        }
        r
    }

    /// Adds `r` (client coordinates; `None` = the whole client area) to the
    /// update region; `erase` asks for WM_ERASEBKGND.
    pub fn invalidate(&mut self, h: u32, r: Option<Rect>, erase: bool) {
        let Some(cr) = self.client_rect(h) else {
            return;
        };
        let full = Rect::new(0, 0, cr.width(), cr.height());
        let r = r.map_or(full, |r| r.normalized().intersect(&full));
        if let Some(w) = self.win_mut(h) {
            w.update = w.update.combine(&Region::rect(r), Op::Or);
            w.erase |= erase && !r.is_empty();
        }
    }

    /// Invalidates `h` and its children in a screen-coordinate area.
    pub fn invalidate_screen_area(&mut self, h: u32, area: &Region) {
        let Some(cr) = self.client_rect(h) else {
            return;
        };
        let mut part = area.intersect_rect(cr);
        if !part.is_empty() {
            part.offset(-cr.left, -cr.top);
            for r in part.rects.clone() {
                self.invalidate(h, Some(r), true);
            }
        }
        let kids = self.win(h).map(|w| w.children.clone()).unwrap_or_default();
        for c in kids {
            if self.win(c).is_some_and(|w| w.visible()) {
                self.invalidate_screen_area(c, area);
            }
        }
    }

    /// Draws a window's non-client area (clipped to what the screen shows of it).
    pub fn draw_frame(&mut self, h: u32) {
        let Some(w) = self.win(h).cloned() else {
            return;
        };
        if !self.really_visible(h) {
            return;
        }
        let client = self.client_rect(h).unwrap_or_default();
        let vis = self
            .visible_part(h, w.rect, false)
            .combine(&Region::rect(client), Op::Diff);
        if vis.is_empty() {
            return;
        }
        let labels = self.menu_labels(w.menu());
        let active = self.active == h || w.is_child();
        let screen = &mut self.gdi.screen;
        let mut c = Canvas {
            bits: screen,
            clip: &vis,
            rop2: 13,
        };
        if w.is_child() && w.ex_style & ws::EX_CLIENTEDGE != 0 {
            nc::sunken(&mut c, w.rect);
        }
        if !w.is_child() || metrics::has_caption(w.style) || w.style & ws::BORDER != 0 {
            nc::draw(
                &mut c,
                w.rect,
                w.style,
                w.ex_style,
                &w.title,
                active,
                labels.as_deref(),
            );
        }
    }

    /// Repaints an uncovered screen area: the desktop colour where no
    /// window is, frames at once, client areas invalidated (WM_PAINT follows).
    pub fn expose(&mut self, area: Region) {
        let mut bare = area.clone();
        for &t in &self.top {
            if let Some(w) = self.win(t).filter(|w| w.visible()) {
                bare = bare.combine(&Region::rect(w.rect), Op::Diff);
            }
        }
        let v = self.gdi.screen.from_color(DESKTOP_COLOR);
        let full = Region::rect(self.screen_rect());
        Canvas {
            bits: &mut self.gdi.screen,
            clip: &bare,
            rop2: 13,
        }
        .fill_region(&full, &Paint::Solid(v));
        for t in self.top.clone() {
            if self
                .win(t)
                .is_some_and(|w| w.visible() && !area.intersect_rect(w.rect).is_empty())
            {
                self.redraw_frames(t, &area);
                self.invalidate_screen_area(t, &area);
            }
        }
    }

    fn redraw_frames(&mut self, h: u32, area: &Region) {
        if self
            .win(h)
            .is_some_and(|w| !area.intersect_rect(w.rect).is_empty())
        {
            self.draw_frame(h);
        }
        for c in self.win(h).map(|w| w.children.clone()).unwrap_or_default() {
            if self.win(c).is_some_and(|w| w.visible()) {
                self.redraw_frames(c, area);
            }
        }
    }

    /// The window under a screen point: topmost visible top-level, then its
    /// deepest visible enabled child.
    pub fn window_at(&self, x: i32, y: i32) -> u32 {
        let mut found = 0;
        for &t in &self.top {
            if self
                .win(t)
                .is_some_and(|w| w.visible() && w.rect.contains(x, y))
            {
                found = t;
                break;
            }
        }
        let mut cur = found;
        'down: while cur != 0 {
            let kids = self
                .win(cur)
                .map(|w| w.children.clone())
                .unwrap_or_default();
            for c in kids {
                if self.win(c).is_some_and(|w| {
                    w.visible() && w.style & ws::DISABLED == 0 && w.rect.contains(x, y)
                }) {
                    cur = c;
                    continue 'down;
                }
            }
            break;
        }
        cur
    }

    /// The top-level ancestor of a window.
    pub fn top_level(&self, h: u32) -> u32 {
        let mut cur = h;
        for _ in 0..64 {
            match self.win(cur) {
                Some(w) if w.is_child() && w.parent != 0 => cur = w.parent,
                _ => break,
            }
        }
        cur
    }

    /// The window of thread `tid` whose WM_PAINT is due (a visible window
    /// with a non-empty update region; top-level windows in Z order,
    /// parents before children).
    pub fn paint_due(&self, tid: u32) -> Option<u32> {
        fn walk(d: &Desktop, h: u32, tid: u32) -> Option<u32> {
            let w = d.win(h)?;
            if !w.visible() {
                return None;
            }
            if !w.update.is_empty() && w.thread == tid {
                return Some(h);
            }
            w.children.iter().find_map(|&c| walk(d, c, tid))
        }
        self.top.iter().find_map(|&t| walk(self, t, tid))
    }

    /// The thread owning window `h` (None: no such window).
    pub fn thread_of(&self, h: u32) -> Option<u32> {
        self.win(h).map(|w| w.thread)
    }

    /// The state bits (QS_TIMER, QS_PAINT) of thread `tid` at `clock`.
    pub fn state_bits(&self, tid: u32, clock: u64) -> u32 {
        let mut b = 0;
        if self
            .timers
            .iter()
            .any(|t| t.thread == tid && t.due <= clock)
        {
            b |= queue::qs::TIMER;
        }
        if self.paint_due(tid).is_some() {
            b |= queue::qs::PAINT;
        }
        b
    }

    /// Everything thread `tid` has to receive at `clock` (QS_* bits: what is
    /// queued, timers due, windows to paint).
    pub fn queue_bits(&mut self, tid: u32, clock: u64) -> u32 {
        self.state_bits(tid, clock) | self.queues.of(tid).wake_bits()
    }

    /// Milliseconds of guest time at `clock`.
    pub fn ms(clock: u64) -> u32 {
        (clock / (crate::dll::DISPATCHES_PER_SECOND / 1000)) as u32
    }

    /// Moves scripted input due at `clock` into the queue as messages.
    pub fn deliver_input(&mut self, clock: u64) {
        while let Some(ev) = self.input.get(self.input_next).cloned() {
            if ev.at > clock {
                break;
            }
            self.input_next += 1;
            let t = Desktop::ms(ev.at);
            for m in input::expand(self, &ev) {
                let mut m = m;
                m.time = t;
                let tid = self.input_thread(m.hwnd);
                self.queues.post(tid, m);
            }
        }
    }

    /// The thread whose queue gets input for window `h`: its owner, or for
    /// no window the active window's (else the first thread).
    pub fn input_thread(&self, h: u32) -> u32 {
        self.thread_of(h)
            .or_else(|| self.thread_of(self.active))
            .unwrap_or(MAIN_THREAD)
    }

    /// The next clock at which something can arrive without the program
    /// doing anything (a timer or scripted input), for a blocked GetMessage.
    pub fn next_event(&self) -> Option<u64> {
        let t = self.timers.iter().map(|t| t.due).min();
        let i = self.input.get(self.input_next).map(|e| e.at);
        match (t, i) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Removes a window and its children (the caller sent WM_DESTROY).
    pub fn remove_window(&mut self, h: u32) -> Vec<u32> {
        let mut gone = vec![h];
        let mut i = 0;
        while i < gone.len() {
            let kids = self
                .windows
                .get(&gone[i])
                .map(|w| w.children.clone())
                .unwrap_or_default();
            gone.extend(kids);
            i += 1;
        }
        let area = self.win(h).filter(|w| w.visible()).map(|w| w.rect);
        let parent = self.win(h).map(|w| (w.is_child(), w.parent));
        for g in &gone {
            if let Some(w) = self.windows.get_mut(g) {
                w.destroyed = true;
                w.style &= !ws::VISIBLE;
            }
        }
        match parent {
            Some((true, p)) if p != 0 => {
                if let Some(pw) = self.windows.get_mut(&p) {
                    pw.children.retain(|&c| c != h);
                }
            }
            _ => self.top.retain(|&t| t != h),
        }
        self.timers.retain(|t| !gone.contains(&t.hwnd));
        self.queues.forget_windows(&gone);
        for s in [&mut self.focus, &mut self.active, &mut self.capture] {
            if gone.contains(s) {
                *s = 0;
            }
        }
        if let Some(a) = area {
            self.expose(Region::rect(a));
        }
        gone
    }

    /// A module's resources (the image copied out of guest memory once).
    pub fn resources(
        &mut self,
        mem: &crate::memory::Memory,
        base: u32,
    ) -> Option<Vec<crate::pe::resources::Resource>> {
        if !self.images.contains_key(&base) {
            let lfanew = mem.peek_u32(base + 0x3C)?;
            let opt = base + lfanew + 24;
            let rva = mem.peek_u32(opt + 112)?;
            let size = mem.peek_u32(opt + 116)?;
            if rva == 0 || size > 64 << 20 {
                return None;
            }
            let mut img = vec![0u8; (rva + size) as usize];
            mem.peek(base + rva, &mut img[rva as usize..])?;
            self.images.insert(base, (img, rva));
        }
        let (img, rva) = self.images.get(&base)?;
        crate::pe::resources::walk_image(img, *rva).ok()
    }

    /// The bytes of a resource of module `base`.
    pub fn resource_data(
        &mut self,
        mem: &crate::memory::Memory,
        base: u32,
        kind: &ResId,
        name: &ResId,
    ) -> Option<Vec<u8>> {
        let list = self.resources(mem, base)?;
        let r = crate::pe::resources::find(&list, kind, name)?.clone();
        let (img, _) = self.images.get(&base)?;
        img.get(r.data_rva as usize..(r.data_rva + r.size) as usize)
            .map(|s| s.to_vec())
            .or_else(|| {
                let mut v = vec![0u8; r.size as usize];
                mem.peek(base + r.data_rva, &mut v).map(|_| v)
            })
    }
}

/// ASCII upper case of UTF-16 units (class names).
pub fn upper(s: &[u16]) -> Vec<u16> {
    s.iter()
        .map(|&u| {
            if (b'a' as u16..=b'z' as u16).contains(&u) {
                u - 32
            } else {
                u
            }
        })
        .collect()
}

impl Default for Desktop {
    fn default() -> Desktop {
        Desktop::new(DEFAULT_SCREEN.0, DEFAULT_SCREEN.1)
    }
}
