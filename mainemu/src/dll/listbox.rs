//! The LISTBOX class (and the list of a COMBOBOX, whose CB_* messages map
//! onto the LB_* ones): the item list, the selection model and the LB_*
//! messages as Windows answers them, the mouse and keyboard on the list,
//! and its pixels.
//!
//! The selection model is Windows': a list box's selection mode is fixed
//! when it is created (changing LBS_MULTIPLESEL / LBS_EXTENDEDSEL later
//! does not change it, and LBS_NOSEL lists behave as single-selection
//! ones). A single-selection list has one selected item (LB_GETCURSEL), a
//! multiple- or extended-selection list a selected flag per item
//! (LB_GETSELCOUNT, LB_GETSELITEMS, LB_SELITEMRANGE, LB_SETSEL); both keep
//! a caret (the focus item, 0 at first) and an anchor (none at first),
//! which clicks, arrow keys and LB_SETSEL move. Rows are `item_height`
//! pixels (the font's 13 by default; LB_SETITEMHEIGHT takes 1..255)
//! below a 2-pixel sunken edge, from the top index on; LB_GETITEMRECT,
//! LB_ITEMFROMPOINT and the mouse use the same geometry.
//!
//! Not modelled: owner draw (WM_DRAWITEM / WM_MEASUREITEM are not sent;
//! owner-draw lists keep item data and heights), multiple columns,
//! horizontal scrolling, tab stops, locale-aware sorting (LBS_SORT orders
//! by upper-cased UTF-16 units). A list answers in its window's character
//! set; `dll::msgconv` converts for callers of the other.
//!
//! It must not move focus between controls beyond taking it on a click,
//! or run a modal loop (the dialog manager, `dll::dialog`, does).

use super::controls::{self, draw, notify, solid, state, style};
use super::gui_structs::{self as gs, read_str};
use super::{user32, Env, Ret};
use crate::desktop::metrics::{self, color, ws};
use crate::desktop::{nc, wm};
use crate::gdi::raster::Canvas;
use crate::gdi::region::Rect;

/// LB_ERR and LB_OKAY.
pub const LB_ERR: u32 = u32::MAX;
const LB_OKAY: u32 = 0;
/// LB_ERRSPACE: more items than the list will hold.
const LB_ERRSPACE: u32 = -2i32 as u32;
/// The most items a list holds (a guest cannot make the host allocate
/// without bound).
const MAX_ITEMS: u32 = 1 << 20;
const LBN_SELCHANGE: u32 = 1;
const CBN_SELCHANGE: u32 = 1;
/// The default row height: the system font's height.
pub const ROW: i32 = 13;
/// The sunken edge the rows start inside.
const EDGE: i32 = 2;

/// List box styles (LBS_*).
pub mod lbs {
    pub const NOTIFY: u32 = 0x1;
    pub const SORT: u32 = 0x2;
    pub const MULTIPLESEL: u32 = 0x8;
    pub const OWNERDRAWFIXED: u32 = 0x10;
    pub const OWNERDRAWVARIABLE: u32 = 0x20;
    pub const HASSTRINGS: u32 = 0x40;
    pub const EXTENDEDSEL: u32 = 0x800;
    pub const NODATA: u32 = 0x2000;
    pub const NOSEL: u32 = 0x4000;
}
/// CBS_SORT: a combo box's sorted list.
const CBS_SORT: u32 = 0x100;

/// CB_* messages (each the twin of an LB_ one, `combo_to_list`).
pub(crate) mod cb {
    pub const ADDSTRING: u32 = 0x143;
    pub const DELETESTRING: u32 = 0x144;
    pub const DIR: u32 = 0x145;
    pub const GETCOUNT: u32 = 0x146;
    pub const GETCURSEL: u32 = 0x147;
    pub const GETLBTEXT: u32 = 0x148;
    pub const GETLBTEXTLEN: u32 = 0x149;
    pub const INSERTSTRING: u32 = 0x14A;
    pub const RESETCONTENT: u32 = 0x14B;
    pub const FINDSTRING: u32 = 0x14C;
    pub const SELECTSTRING: u32 = 0x14D;
    pub const SETCURSEL: u32 = 0x14E;
    pub const GETITEMDATA: u32 = 0x150;
    pub const SETITEMDATA: u32 = 0x151;
    pub const FINDSTRINGEXACT: u32 = 0x158;
}

/// LB_* messages.
pub(crate) mod lb {
    pub const ADDSTRING: u32 = 0x180;
    pub const INSERTSTRING: u32 = 0x181;
    pub const DELETESTRING: u32 = 0x182;
    pub const SELITEMRANGEEX: u32 = 0x183;
    pub const RESETCONTENT: u32 = 0x184;
    pub const SETSEL: u32 = 0x185;
    pub const SETCURSEL: u32 = 0x186;
    pub const GETSEL: u32 = 0x187;
    pub const GETCURSEL: u32 = 0x188;
    pub const GETTEXT: u32 = 0x189;
    pub const GETTEXTLEN: u32 = 0x18A;
    pub const GETCOUNT: u32 = 0x18B;
    pub const SELECTSTRING: u32 = 0x18C;
    pub const DIR: u32 = 0x18D;
    pub const GETTOPINDEX: u32 = 0x18E;
    pub const FINDSTRING: u32 = 0x18F;
    pub const GETSELCOUNT: u32 = 0x190;
    pub const GETSELITEMS: u32 = 0x191;
    pub const GETHORIZONTALEXTENT: u32 = 0x193;
    pub const SETHORIZONTALEXTENT: u32 = 0x194;
    pub const SETTOPINDEX: u32 = 0x197;
    pub const GETITEMRECT: u32 = 0x198;
    pub const GETITEMDATA: u32 = 0x199;
    pub const SETITEMDATA: u32 = 0x19A;
    pub const SELITEMRANGE: u32 = 0x19B;
    pub const SETANCHORINDEX: u32 = 0x19C;
    pub const GETANCHORINDEX: u32 = 0x19D;
    pub const SETCARETINDEX: u32 = 0x19E;
    pub const GETCARETINDEX: u32 = 0x19F;
    pub const SETITEMHEIGHT: u32 = 0x1A0;
    pub const GETITEMHEIGHT: u32 = 0x1A1;
    pub const FINDSTRINGEXACT: u32 = 0x1A2;
    pub const SETCOUNT: u32 = 0x1A7;
    pub const ITEMFROMPOINT: u32 = 0x1A9;
}

/// One item: its text (empty for owner-draw lists without strings), its
/// item data (the "string" of such lists), its selected flag (multiple-
/// and extended-selection lists) and its height (LBS_OWNERDRAWVARIABLE).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Item {
    pub text: Vec<u16>,
    pub data: u32,
    pub picked: bool,
    pub height: u32,
}

impl Item {
    pub fn text(text: Vec<u16>) -> Item {
        Item {
            text,
            ..Item::default()
        }
    }
}

/// How a list selects, fixed at creation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    #[default]
    Single,
    /// LBS_MULTIPLESEL: a click toggles an item; arrows move the caret only.
    Multiple,
    /// LBS_EXTENDEDSEL: a click selects one item (Shift a range from the
    /// anchor, Ctrl toggles); arrows select the item they reach.
    Extended,
}

impl Mode {
    /// The mode a list of `style` gets at creation.
    pub fn of_style(style: u32) -> Mode {
        if style & lbs::NOSEL != 0 {
            Mode::Single
        } else if style & lbs::EXTENDEDSEL != 0 {
            Mode::Extended
        } else if style & lbs::MULTIPLESEL != 0 {
            Mode::Multiple
        } else {
            Mode::Single
        }
    }
}

/// A list box's state.
#[derive(Clone, Debug, Default)]
pub struct List {
    pub items: Vec<Item>,
    pub mode: Mode,
    /// The selected item of a single-selection list.
    pub sel: Option<usize>,
    /// The focus item (LB_GETCARETINDEX).
    pub caret: usize,
    pub anchor: Option<usize>,
    /// The first row shown (LB_GETTOPINDEX).
    pub top: usize,
    /// Row height; 0 until the list is first used (then ROW).
    pub item_height: u32,
    pub horizontal_extent: u32,
    /// The mode and height were taken from the style.
    pub made: bool,
}

impl List {
    fn multi(&self) -> bool {
        self.mode != Mode::Single
    }

    /// Inserts at `at` (<= len); indexes after it move down.
    pub fn insert(&mut self, at: usize, item: Item) -> usize {
        self.items.insert(at, item);
        if let Some(s) = self.sel.as_mut() {
            if *s >= at {
                *s += 1;
            }
        }
        if let Some(a) = self.anchor.as_mut() {
            if *a >= at {
                *a += 1;
            }
        }
        if at <= self.caret && self.items.len() > 1 {
            self.caret = (self.caret + 1).min(self.items.len() - 1);
        }
        at
    }

    /// Removes item `i` (< len); indexes after it move up.
    pub fn remove(&mut self, i: usize) {
        self.items.remove(i);
        self.sel = match self.sel {
            Some(s) if s == i => None,
            Some(s) if s > i => Some(s - 1),
            s => s,
        };
        self.anchor = match self.anchor {
            Some(a) if a == i => None,
            Some(a) if a > i => Some(a - 1),
            a => a,
        };
        if self.caret > i {
            self.caret -= 1;
        }
        self.caret = self.caret.min(self.items.len().saturating_sub(1));
        self.top = self.top.min(self.items.len().saturating_sub(1));
    }

    pub fn clear(&mut self) {
        self.items.clear();
        self.sel = None;
        self.caret = 0;
        self.anchor = None;
        self.top = 0;
    }

    pub fn is_selected(&self, i: usize) -> bool {
        if self.multi() {
            self.items.get(i).is_some_and(|t| t.picked)
        } else {
            self.sel == Some(i)
        }
    }

    /// LB_GETCURSEL: the selection of a single-selection list, the caret
    /// of the others.
    pub fn cur_sel(&self) -> u32 {
        match (self.multi(), self.sel) {
            (false, s) => s.map_or(LB_ERR, |s| s as u32),
            (true, _) if self.items.is_empty() => LB_ERR,
            (true, _) => self.caret as u32,
        }
    }

    /// Sets the selected flag of items `lo..=hi` (clamped to the list).
    pub fn pick_range(&mut self, lo: usize, hi: usize, on: bool) {
        let n = self.items.len();
        if lo >= n {
            return;
        }
        for t in &mut self.items[lo..=hi.min(n - 1)] {
            t.picked = on;
        }
    }

    /// A click (or a key reaching) item `i` with the Shift/Ctrl state.
    pub fn choose(&mut self, i: usize, shift: bool, ctrl: bool, by_key: bool) {
        match self.mode {
            Mode::Single => {
                self.sel = Some(i);
                self.anchor = Some(i);
            }
            Mode::Multiple if by_key => {}
            Mode::Multiple => {
                self.items[i].picked = !self.items[i].picked;
                self.anchor = Some(i);
            }
            Mode::Extended => {
                let from = self.anchor.unwrap_or(i);
                if !ctrl {
                    self.pick_range(0, self.items.len() - 1, false);
                }
                if shift {
                    self.pick_range(from.min(i), from.max(i), true);
                } else if ctrl && !by_key {
                    self.items[i].picked = !self.items[i].picked;
                    self.anchor = Some(i);
                } else {
                    self.items[i].picked = true;
                    self.anchor = Some(i);
                }
            }
        }
        self.caret = i;
    }

    /// The row height of item `i` (every row's, unless owner-draw variable).
    pub fn height_of(&self, i: usize, variable: bool) -> u32 {
        match self.items.get(i) {
            Some(t) if variable && t.height != 0 => t.height,
            _ => self.item_height,
        }
    }

    /// The top of row `i` relative to the first shown row (negative above it).
    fn row_top(&self, i: usize, variable: bool) -> i32 {
        let h = |k: usize| self.height_of(k, variable) as i32;
        if i >= self.top {
            (self.top..i).map(h).sum()
        } else {
            -(i..self.top).map(h).sum::<i32>()
        }
    }

    /// The item at client height `y` (rows below the edge), clamped to the list.
    fn row_at(&self, y: i32, variable: bool) -> Option<usize> {
        if self.items.is_empty() {
            return None;
        }
        let mut at = EDGE;
        for i in self.top..self.items.len() {
            at += self.height_of(i, variable) as i32;
            if y < at {
                return Some(i);
            }
        }
        Some(self.items.len() - 1)
    }
}

/// A combo box message as the list box message that does the same.
fn combo_to_list(msg: u32) -> Option<u32> {
    Some(match msg {
        cb::ADDSTRING => lb::ADDSTRING,
        cb::DIR => lb::DIR,
        cb::DELETESTRING => lb::DELETESTRING,
        cb::GETCOUNT => lb::GETCOUNT,
        cb::GETCURSEL => lb::GETCURSEL,
        cb::GETLBTEXT => lb::GETTEXT,
        cb::GETLBTEXTLEN => lb::GETTEXTLEN,
        cb::INSERTSTRING => lb::INSERTSTRING,
        cb::RESETCONTENT => lb::RESETCONTENT,
        cb::FINDSTRING => lb::FINDSTRING,
        cb::SELECTSTRING => lb::SELECTSTRING,
        cb::SETCURSEL => lb::SETCURSEL,
        cb::GETITEMDATA => lb::GETITEMDATA,
        cb::SETITEMDATA => lb::SETITEMDATA,
        cb::FINDSTRINGEXACT => lb::FINDSTRINGEXACT,
        _ => return None,
    })
}

/// Case-insensitive prefix (or whole-string) match from `start + 1`, wrapping.
fn find(items: &[Item], start: u32, s: &[u16], exact: bool) -> u32 {
    let n = items.len();
    if n == 0 {
        return LB_ERR;
    }
    let up = crate::desktop::upper;
    let want = up(s);
    let first = if start as i32 == -1 || start as usize >= n {
        0
    } else {
        start as usize + 1
    };
    (0..n)
        .map(|k| (first + k) % n)
        .find(|&i| {
            let t = up(&items[i].text);
            if exact {
                t == want
            } else {
                t.starts_with(&want)
            }
        })
        .map_or(LB_ERR, |i| i as u32)
}

/// LB_DIR / CB_DIR (DlgDirList's listing): the entries of the spec's
/// directory matching its pattern (`*.*` without one). Read-write files
/// always, unless DDL_EXCLUSIVE (0x8000) asks only for the attributes given
/// (read-only 1, hidden 2, system 4, archive 0x20); DDL_DIRECTORY (0x10)
/// adds subdirectories as `[name]` (with `[..]` below a root), DDL_DRIVES
/// (0x4000) the drives as `[-c-]`. In the directory's name order.
pub fn dir_entries(env: &Env, spec: &str, attrs: u32) -> Vec<Vec<u16>> {
    let spec = if spec.is_empty() { "*.*" } else { spec };
    let (dir, pattern) = match spec.rfind(['\\', '/', ':']) {
        Some(i) => (spec[..=i].to_string(), &spec[i + 1..]),
        None => (env.drives.cwd(), spec),
    };
    let pattern = if pattern.is_empty() { "*.*" } else { pattern };
    let exclusive = attrs & 0x8000 != 0;
    let mut out = Vec::new();
    if let Ok(host) = env.drives.resolve(&dir) {
        let root = env.drives.is_root(&dir);
        for e in crate::files::list(&host, pattern, !root).unwrap_or_default() {
            let is_dir = e.attrs & 0x10 != 0;
            if is_dir {
                if attrs & 0x10 != 0 && e.name != "." {
                    out.push(gs::units(&format!("[{}]", e.name)));
                }
                continue;
            }
            let wanted = e.attrs & attrs & 0x27 != 0;
            if (!exclusive && e.attrs & 0x7 == 0) || wanted {
                out.push(gs::units(&e.name));
            }
        }
    }
    if attrs & 0x4000 != 0 {
        for l in env.drives.letters() {
            out.push(gs::units(&format!("[-{}-]", l.to_ascii_lowercase())));
        }
    }
    out
}

/// The list's state, its mode and row height taken from the style the
/// first time.
fn list(env: &mut Env, h: u32, combo: bool) -> &mut List {
    let st = style(env, h);
    let l = &mut state(env, h).list;
    if !l.made {
        l.made = true;
        l.mode = if combo {
            Mode::Single
        } else {
            Mode::of_style(st)
        };
        l.item_height = ROW as u32;
    }
    l
}

/// Where an added string goes: in order for a sorted list, else at the end.
fn add_position(l: &List, text: &[u16], sorted: bool) -> usize {
    if !sorted {
        return l.items.len();
    }
    let up = crate::desktop::upper;
    let key = up(text);
    l.items
        .iter()
        .position(|t| up(&t.text) > key)
        .unwrap_or(l.items.len())
}

/// Rows that fit the client area, at least one.
fn visible_rows(env: &mut Env, h: u32, combo: bool) -> usize {
    let rh = list(env, h, combo).item_height.max(1) as i32;
    // Windows counts the whole client height (the edge is our look).
    let ch = env.desktop.client_rect(h).map_or(0, |c| c.height());
    (ch / rh).max(1) as usize
}

/// Scrolls so that item `i` shows, and keeps the vertical scroll bar's
/// position at the top index.
fn show_item(env: &mut Env, h: u32, i: usize, combo: bool) {
    let rows = visible_rows(env, h, combo);
    let l = list(env, h, combo);
    if i < l.top {
        l.top = i;
    } else if i >= l.top + rows {
        l.top = i + 1 - rows;
    }
    let (top, n) = (l.top as i32, l.items.len() as i32);
    if let Some(w) = env.desktop.win_mut(h) {
        if w.style & ws::VSCROLL != 0 {
            w.scroll[1] = Some((0, (n - 1).max(0), rows as u32, top));
        }
    }
}

pub fn list_proc(env: &mut Env, h: u32, msg: u32, wp: u32, lp: u32, combo: bool) -> Ret {
    let wide = env.desktop.win(h).is_some_and(|w| w.wide);
    let msg = if combo {
        combo_to_list(msg).unwrap_or(msg)
    } else {
        msg
    };
    let st = style(env, h);
    let owner = !combo && st & (lbs::OWNERDRAWFIXED | lbs::OWNERDRAWVARIABLE) != 0;
    // Owner-draw lists without LBS_HASSTRINGS keep the "string" as item data.
    let strings = !owner || st & lbs::HASSTRINGS != 0;
    let nodata = owner && st & lbs::NODATA != 0;
    let variable = owner && st & lbs::OWNERDRAWFIXED == 0;
    let sorted = if combo {
        st & CBS_SORT != 0
    } else {
        st & lbs::SORT != 0 && strings
    };
    let new_item = |env: &Env| match (strings, nodata) {
        (true, _) => Item::text(read_str(&env.mem, lp, -1, wide).unwrap_or_default()),
        (false, false) => Item {
            data: lp,
            ..Item::default()
        },
        (false, true) => Item::default(),
    };
    let text = |env: &Env| read_str(&env.mem, lp, -1, wide).unwrap_or_default();
    let r = match msg {
        wm::NCDESTROY => {
            env.desktop.controls.remove(&h);
            0
        }
        wm::PAINT => {
            paint_list(env, h, combo);
            return Ret::Value(0);
        }
        wm::ERASEBKGND => 1,
        wm::GETDLGCODE => controls::dlgc::WANTARROWS | controls::dlgc::WANTCHARS,
        wm::SETFOCUS | wm::KILLFOCUS => 0,
        lb::ADDSTRING => {
            let t = new_item(env);
            let l = list(env, h, combo);
            let at = add_position(l, &t.text, sorted);
            l.insert(at, t) as u32
        }
        lb::INSERTSTRING => {
            let t = new_item(env);
            let l = list(env, h, combo);
            let n = l.items.len();
            match wp as i32 {
                -1 => l.insert(n, t) as u32,
                i if i >= 0 && i as usize <= n => l.insert(i as usize, t) as u32,
                _ => LB_ERR,
            }
        }
        lb::DELETESTRING => {
            let l = list(env, h, combo);
            if (wp as usize) < l.items.len() {
                l.remove(wp as usize);
                l.items.len() as u32
            } else {
                LB_ERR
            }
        }
        lb::RESETCONTENT => {
            list(env, h, combo).clear();
            0
        }
        lb::SETCURSEL => {
            let l = list(env, h, combo);
            if l.multi() {
                LB_ERR
            } else if (wp as usize) < l.items.len() {
                l.sel = Some(wp as usize);
                l.caret = wp as usize;
                show_item(env, h, wp as usize, combo);
                wp
            } else {
                // Windows answers LB_ERR for -1 too (the selection is cleared).
                l.sel = None;
                LB_ERR
            }
        }
        lb::GETCURSEL => list(env, h, combo).cur_sel(),
        lb::GETSEL => {
            let l = list(env, h, combo);
            if (wp as usize) < l.items.len() {
                l.is_selected(wp as usize) as u32
            } else {
                LB_ERR
            }
        }
        lb::SETSEL => {
            let l = list(env, h, combo);
            let n = l.items.len();
            match (l.multi(), lp as i32) {
                (false, _) => LB_ERR,
                (true, -1) => {
                    if n > 0 {
                        l.pick_range(0, n - 1, wp != 0);
                    }
                    LB_OKAY
                }
                (true, i) if i >= 0 && (i as usize) < n => {
                    l.items[i as usize].picked = wp != 0;
                    if wp != 0 {
                        l.anchor = Some(i as usize);
                        l.caret = i as usize;
                    }
                    LB_OKAY
                }
                _ => LB_ERR,
            }
        }
        lb::SELITEMRANGE | lb::SELITEMRANGEEX => {
            let l = list(env, h, combo);
            let (on, a, b) = if msg == lb::SELITEMRANGE {
                (wp != 0, lp & 0xFFFF, lp >> 16)
            } else if wp as i32 <= lp as i32 {
                (true, wp, lp)
            } else {
                (false, lp, wp)
            };
            if !l.multi() {
                LB_ERR
            } else {
                l.pick_range(a.min(b) as usize, a.max(b) as usize, on);
                LB_OKAY
            }
        }
        lb::GETSELCOUNT => {
            let l = list(env, h, combo);
            if l.multi() {
                l.items.iter().filter(|t| t.picked).count() as u32
            } else {
                LB_ERR
            }
        }
        lb::GETSELITEMS => {
            let l = list(env, h, combo);
            if !l.multi() {
                LB_ERR
            } else {
                let picked: Vec<u32> = (0..l.items.len())
                    .filter(|&i| l.items[i].picked)
                    .map(|i| i as u32)
                    .take(wp as usize)
                    .collect();
                for (k, &i) in picked.iter().enumerate() {
                    let _ = env.mem.poke_u32(lp.wrapping_add(4 * k as u32), i);
                }
                picked.len() as u32
            }
        }
        lb::GETTEXT => match list(env, h, combo).items.get(wp as usize).cloned() {
            Some(t) if strings => {
                gs::write_str(&mut env.mem, lp, t.text.len() as u32 + 1, &t.text, wide);
                t.text.len() as u32
            }
            Some(t) => {
                let _ = env.mem.poke_u32(lp, t.data);
                4
            }
            None => LB_ERR,
        },
        lb::GETTEXTLEN => match list(env, h, combo).items.get(wp as usize) {
            Some(t) if strings => t.text.len() as u32,
            Some(_) => 4,
            None => LB_ERR,
        },
        lb::GETCOUNT => list(env, h, combo).items.len() as u32,
        lb::FINDSTRING | lb::FINDSTRINGEXACT | lb::SELECTSTRING if nodata => {
            env.last_error = crate::files::err::INVALID_PARAMETER;
            LB_ERR
        }
        lb::FINDSTRING | lb::FINDSTRINGEXACT | lb::SELECTSTRING => {
            let t = if strings { text(env) } else { vec![] };
            let l = list(env, h, combo);
            let i = if strings {
                find(&l.items, wp, &t, msg == lb::FINDSTRINGEXACT)
            } else {
                // Without strings an item matches by its data.
                let n = l.items.len();
                let first = if wp as i32 == -1 || wp as usize >= n {
                    0
                } else {
                    wp as usize + 1
                };
                (0..n)
                    .map(|k| (first + k) % n)
                    .find(|&i| l.items[i].data == lp)
                    .map_or(LB_ERR, |i| i as u32)
            };
            if msg == lb::SELECTSTRING && i != LB_ERR {
                let i = i as usize;
                if l.multi() {
                    l.items[i].picked = true;
                } else {
                    l.sel = Some(i);
                }
                l.caret = i;
            }
            i
        }
        lb::DIR => {
            let spec = text(env);
            let names = dir_entries(env, &String::from_utf16_lossy(&spec), wp);
            let l = list(env, h, combo);
            for n in names {
                let at = add_position(l, &n, sorted);
                l.insert(at, Item::text(n));
            }
            if l.items.is_empty() {
                LB_ERR
            } else {
                l.items.len() as u32 - 1
            }
        }
        lb::GETITEMDATA => match list(env, h, combo).items.get(wp as usize) {
            Some(_) if nodata => 0,
            Some(t) => t.data,
            None => LB_ERR,
        },
        lb::SETITEMDATA => match list(env, h, combo).items.get_mut(wp as usize) {
            Some(_) if nodata => 1,
            Some(t) => {
                t.data = lp;
                1
            }
            None => LB_ERR,
        },
        lb::GETTOPINDEX => list(env, h, combo).top as u32,
        lb::SETTOPINDEX => {
            let l = list(env, h, combo);
            if (wp as usize) < l.items.len() || wp == 0 {
                l.top = wp as usize;
                LB_OKAY
            } else {
                LB_ERR
            }
        }
        lb::GETANCHORINDEX => list(env, h, combo).anchor.map_or(LB_ERR, |a| a as u32),
        lb::SETANCHORINDEX => {
            let l = list(env, h, combo);
            if (wp as usize) < l.items.len() {
                l.anchor = Some(wp as usize);
                LB_OKAY
            } else {
                LB_ERR
            }
        }
        lb::GETCARETINDEX => list(env, h, combo).caret as u32,
        lb::SETCARETINDEX => {
            let l = list(env, h, combo);
            if (wp as usize) < l.items.len() {
                l.caret = wp as usize;
                show_item(env, h, wp as usize, combo);
                LB_OKAY
            } else {
                LB_ERR
            }
        }
        lb::GETITEMHEIGHT => list(env, h, combo).height_of(wp as usize, variable),
        lb::SETITEMHEIGHT => {
            let v = lp & 0xFFFF;
            let l = list(env, h, combo);
            if v == 0 || v > 255 {
                LB_ERR
            } else if variable {
                match l.items.get_mut(wp as usize) {
                    Some(t) => {
                        t.height = v;
                        LB_OKAY
                    }
                    None => LB_ERR,
                }
            } else {
                l.item_height = v;
                LB_OKAY
            }
        }
        lb::GETITEMRECT => {
            let cw = env.desktop.client_rect(h).map_or(0, |c| c.width());
            let l = list(env, h, combo);
            if (wp as usize) < l.items.len() || (wp == 0 && l.items.is_empty()) {
                let top = EDGE + l.row_top(wp as usize, variable);
                let bottom = top + l.height_of(wp as usize, variable) as i32;
                let r = [EDGE, top, cw - EDGE, bottom];
                for (k, v) in r.iter().enumerate() {
                    let _ = env.mem.poke_u32(lp.wrapping_add(4 * k as u32), *v as u32);
                }
                1
            } else {
                LB_ERR
            }
        }
        lb::ITEMFROMPOINT => {
            let (x, y) = (lp as i16 as i32, (lp >> 16) as i16 as i32);
            let c = env.desktop.client_rect(h);
            let (cw, ch) = c.map_or((0, 0), |c| (c.width(), c.height()));
            let l = list(env, h, combo);
            match l.row_at(y.max(0), variable) {
                None => 0x1_FFFF,
                Some(i) => {
                    let inside = x >= 0 && y >= 0 && x < cw && y < ch;
                    let below =
                        y >= EDGE + l.row_top(i, variable) + l.height_of(i, variable) as i32;
                    i as u32 | ((!inside || below) as u32) << 16
                }
            }
        }
        lb::GETHORIZONTALEXTENT => list(env, h, combo).horizontal_extent,
        lb::SETHORIZONTALEXTENT => {
            list(env, h, combo).horizontal_extent = wp;
            0
        }
        lb::SETCOUNT => {
            let l = list(env, h, combo);
            if !nodata || st & (lbs::HASSTRINGS | lbs::SORT) != 0 || (wp as i32) < 0 {
                LB_ERR
            } else if wp > MAX_ITEMS {
                LB_ERRSPACE
            } else {
                l.items.resize(wp as usize, Item::default());
                l.caret = l.caret.min(l.items.len().saturating_sub(1));
                if l.sel.is_some_and(|s| s >= l.items.len()) {
                    l.sel = None;
                }
                LB_OKAY
            }
        }
        wm::LBUTTONDOWN if !combo => {
            let y = (lp >> 16) as i16 as i32;
            let (shift, ctrl) = (wp & 4 != 0, wp & 8 != 0);
            let l = list(env, h, combo);
            let Some(i) = l.row_at(y, variable) else {
                return user32::set_focus(env, h, |_, _| Ret::Value(0));
            };
            let before = (l.sel, l.items.iter().map(|t| t.picked).collect::<Vec<_>>());
            l.choose(i, shift, ctrl, false);
            let changed = before != (l.sel, l.items.iter().map(|t| t.picked).collect());
            show_item(env, h, i, combo);
            paint_list(env, h, combo);
            let notify_on = st & lbs::NOTIFY != 0 && changed;
            return user32::set_focus(env, h, move |env, _| {
                if notify_on {
                    notify(env, h, LBN_SELCHANGE)
                } else {
                    Ret::Value(0)
                }
            });
        }
        wm::LBUTTONDOWN => return user32::set_focus(env, h, |_, _| Ret::Value(0)),
        // Up, Down, Home, End, Page Up, Page Down move the caret.
        wm::KEYDOWN if matches!(wp, 0x21..=0x24 | 0x26 | 0x28) => {
            let rows = visible_rows(env, h, combo);
            let shift = env.desktop.keys[0x10] & 0x80 != 0;
            let ctrl = env.desktop.keys[0x11] & 0x80 != 0;
            let l = list(env, h, combo);
            let n = l.items.len();
            if n == 0 {
                return Ret::Value(0);
            }
            let cur = if l.multi() {
                l.caret
            } else {
                l.sel.unwrap_or(l.caret)
            };
            let to = match wp {
                0x26 => cur.saturating_sub(1),
                0x28 => (cur + 1).min(n - 1),
                0x21 => cur.saturating_sub(rows.saturating_sub(1).max(1)),
                0x22 => (cur + rows.saturating_sub(1).max(1)).min(n - 1),
                0x24 => 0,
                _ => n - 1,
            };
            l.choose(to, shift, ctrl, true);
            show_item(env, h, to, combo);
            paint_list(env, h, combo);
            if combo {
                return notify(env, h, CBN_SELCHANGE);
            }
            if st & lbs::NOTIFY != 0 {
                return notify(env, h, LBN_SELCHANGE);
            }
            return Ret::Value(0);
        }
        // Space toggles the caret's item of a multiple-selection list.
        wm::KEYDOWN if wp == 0x20 && !combo => {
            let l = list(env, h, combo);
            if l.mode == Mode::Multiple && l.caret < l.items.len() {
                let c = l.caret;
                l.items[c].picked = !l.items[c].picked;
                l.anchor = Some(c);
                paint_list(env, h, combo);
                if st & lbs::NOTIFY != 0 {
                    return notify(env, h, LBN_SELCHANGE);
                }
            }
            return Ret::Value(0);
        }
        _ => return user32::def_window_proc(env, h, msg, wp, lp, true),
    };
    if matches!(
        msg,
        lb::DIR
            | lb::ADDSTRING
            | lb::INSERTSTRING
            | lb::DELETESTRING
            | lb::RESETCONTENT
            | lb::SETCURSEL
            | lb::SELECTSTRING
            | lb::SETSEL
            | lb::SELITEMRANGE
            | lb::SELITEMRANGEEX
            | lb::SETTOPINDEX
            | lb::SETCOUNT
    ) {
        paint_list(env, h, combo);
    }
    Ret::Value(r)
}

fn paint_list(env: &mut Env, h: u32, combo: bool) {
    let l = list(env, h, combo).clone();
    let focused = env.desktop.focus == h;
    draw(env, h, |cv, r, _w| {
        let white = solid(cv, color::WINDOW);
        let hl = solid(cv, color::HIGHLIGHT);
        let row_text = |cv: &mut Canvas, x: i32, y: i32, t: &[u16], sel: bool| {
            let col = metrics::sys_color(if sel {
                color::HIGHLIGHTTEXT
            } else {
                color::WINDOWTEXT
            });
            let ink = cv.bits.from_color(col);
            crate::gdi::font::Face::new(0, 400, false, false).draw(cv, x, y, t, ink, None);
        };
        if combo {
            // The field (one row high) with the drop button at its right.
            let field = Rect::new(r.left, r.top, r.right, r.top + ROW + 8);
            cv.fill_rect(field, &white);
            nc::sunken(cv, field);
            let bw = 16;
            nc::button(
                cv,
                Rect::new(
                    field.right - 2 - bw,
                    field.top + 2,
                    field.right - 2,
                    field.bottom - 2,
                ),
                false,
            );
            // The drop arrow: a small black triangle.
            let ink = cv.bits.from_color(metrics::sys_color(color::BTNTEXT));
            let (ax, ay) = (
                field.right - 2 - bw / 2 - 3,
                field.top + (field.height() - 4) / 2,
            );
            for k in 0..4 {
                for x in ax + k..ax + 7 - k {
                    cv.plot(x, ay + k, ink);
                }
            }
            if let Some(t) = l.sel.and_then(|i| l.items.get(i)) {
                let inner = Rect::new(
                    field.left + 3,
                    field.top + 3,
                    field.right - 3 - bw,
                    field.bottom - 3,
                );
                if focused {
                    cv.fill_rect(inner, &hl);
                }
                row_text(cv, inner.left + 1, inner.top + 1, &t.text, focused);
            }
            return;
        }
        cv.fill_rect(r, &white);
        nc::sunken(cv, r);
        let inner = Rect::new(r.left + EDGE, r.top + EDGE, r.right - EDGE, r.bottom - EDGE);
        let rh = l.item_height.max(1) as i32;
        let rows = (inner.height() / rh).max(0) as usize;
        for (k, t) in l.items.iter().skip(l.top).take(rows).enumerate() {
            let y = inner.top + k as i32 * rh;
            let sel = l.is_selected(l.top + k);
            if sel {
                cv.fill_rect(Rect::new(inner.left, y, inner.right, y + rh), &hl);
            }
            row_text(cv, inner.left + 2, y, &t.text, sel);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn four(mode: Mode) -> List {
        let mut l = List {
            mode,
            item_height: ROW as u32,
            made: true,
            ..List::default()
        };
        for k in 0..4 {
            let n = l.items.len();
            l.insert(n, Item::text(vec![b'a' as u16 + k]));
        }
        l
    }

    /// Wine's listbox.c `check` table: (selected, anchor, caret, selcount)
    /// after creation, a click on item 1 and a Down key.
    #[test]
    fn click_and_step_as_windows_reports_them() {
        let q = |l: &List| {
            let count = if l.multi() {
                l.items.iter().filter(|t| t.picked).count() as u32
            } else {
                LB_ERR
            };
            (
                l.cur_sel() as i32,
                l.anchor.map_or(-1, |a| a as i32),
                l.caret as i32,
                count as i32,
            )
        };
        for (mode, init, click, step) in [
            (Mode::Single, (-1, -1, 0, -1), (1, 1, 1, -1), (2, 2, 2, -1)),
            (Mode::Multiple, (0, -1, 0, 0), (1, 1, 1, 1), (2, 1, 2, 1)),
            (Mode::Extended, (0, -1, 0, 0), (1, 1, 1, 1), (2, 2, 2, 1)),
        ] {
            let mut l = four(mode);
            assert_eq!(q(&l), init, "{mode:?} init");
            l.choose(1, false, false, false);
            assert_eq!(q(&l), click, "{mode:?} click");
            l.choose(2, false, false, true);
            assert_eq!(q(&l), step, "{mode:?} step");
        }
    }

    #[test]
    fn styles_fix_the_mode() {
        assert_eq!(Mode::of_style(lbs::NOSEL | lbs::MULTIPLESEL), Mode::Single);
        assert_eq!(
            Mode::of_style(lbs::EXTENDEDSEL | lbs::MULTIPLESEL),
            Mode::Extended
        );
        assert_eq!(Mode::of_style(lbs::MULTIPLESEL), Mode::Multiple);
    }

    #[test]
    fn inserting_and_removing_move_the_indexes() {
        let mut l = four(Mode::Single);
        l.choose(2, false, false, false);
        l.insert(0, Item::text(vec![]));
        assert_eq!((l.sel, l.anchor, l.caret), (Some(3), Some(3), 3));
        l.remove(1);
        assert_eq!((l.sel, l.anchor, l.caret), (Some(2), Some(2), 2));
        l.remove(2);
        assert_eq!((l.sel, l.anchor, l.caret), (None, None, 2));
    }
}
