//! The dialog manager: dialogs from DLGTEMPLATE and DLGTEMPLATEEX
//! templates (RT_DIALOG resources or memory), DialogBox*/CreateDialog*,
//! the modal loop, EndDialog, IsDialogMessage's keyboard interface (Tab and
//! Shift+Tab between WS_TABSTOP controls, arrows within a group, Enter for
//! the default button, Escape for IDCANCEL), DefDlgProc, the dialog item
//! helpers (GetDlgItem, Get/SetDlgItemText/Int, CheckDlgButton,
//! CheckRadioButton, SendDlgItemMessage, GetNextDlgTab/GroupItem), dialog
//! units (GetDialogBaseUnits, MapDialogRect).
//!
//! Dialog units follow Microsoft's documentation: a horizontal unit is a
//! quarter of the dialog font's average character width, a vertical unit
//! an eighth of its height (DLGTEMPLATE, MapDialogRect); the average width
//! is computed as Windows does, from the extent of "A".."Z""a".."z"
//! (`(cx / 26 + 1) / 2`, Microsoft KB 145994 / 125681); a template without
//! DS_SETFONT uses the system font's units (GetDialogBaseUnits). Our one
//! bitmap font makes both 6 x 13 pixels at the usual 8-point size.
//!
//! The modal loop runs inside the DialogBox call on the guest clock, like
//! the file dialog's and the menu's: each turn takes the next message
//! (GetMessage's order), drops input aimed outside the dialog (its owner is
//! disabled), gives the rest to IsDialogMessage, and ends once EndDialog
//! was called. With nothing to deliver the call blocks (`Ret::Block`) and
//! is made again on wake-up (`Env::retrying`): the innermost modal dialog
//! (`Desktop::modal`'s last) continues its loop.
//!
//! Malformed templates (truncated, an item list running past the end, a
//! string without its NUL) fail the call with ERROR_INVALID_PARAMETER and
//! the reason recorded in `Desktop::dialog_errors`, never a panic.
//!
//! Owns the dialogs' state (`Desktop::dialogs`, `Desktop::modal`), template
//! parsing and the dialog messages. It must not draw controls (dll::controls
//! and dll::edit do) or keep window-manager state beyond that (desktop does).

use super::controls::{bm, bs, dlgc};
use super::gui_structs::{self as gs, read_rect, read_str, write_rect};
use super::user32::{self, NewWindow};
use super::{Env, Ret};
use crate::desktop::metrics::{color, ws};
use crate::desktop::{wm, Msg};
use crate::gdi::region::Rect;
use crate::pe::resources::{self as res, ResId};

/// DS_* template styles.
mod ds {
    pub const ABSALIGN: u32 = 0x1;
    pub const SETFONT: u32 = 0x40;
    pub const MODALFRAME: u32 = 0x80;
    pub const CONTROL: u32 = 0x400;
    pub const CENTER: u32 = 0x800;
}

/// Dialog messages and window-extra offsets.
pub(crate) const DM_GETDEFID: u32 = 0x400;
const DM_SETDEFID: u32 = 0x401;
pub(crate) const DC_HASDEFID: u32 = 0x534B;
pub(crate) const WM_NEXTDLGCTL: u32 = 0x28;
const DWLP_MSGRESULT: usize = 0;
const DWLP_DLGPROC: usize = 4;
const IDOK: u32 = 1;
const IDCANCEL: u32 = 2;
const ERROR_INVALID_PARAMETER: u32 = 87;
const ERROR_INVALID_WINDOW_HANDLE: u32 = 1400;
const ERROR_CONTROL_ID_NOT_FOUND: u32 = 1421;
const EM_SETSEL: u32 = 0xB1;
const WS_EX_CONTROLPARENT: u32 = 0x1_0000;

/// One control of a template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    pub style: u32,
    pub ex_style: u32,
    /// Position and size in dialog units.
    pub rect: (i16, i16, i16, i16),
    pub id: u32,
    /// The class: a predefined ordinal's name (BUTTON, EDIT, ...) or the named class.
    pub class: ResId,
    /// The text, or (for icons and bitmaps) a resource ordinal.
    pub title: ResId,
    pub data: Vec<u8>,
    /// Where the creation data's size word is in the template (the
    /// control's WM_CREATE gets its address as lpCreateParams).
    pub data_at: Option<usize>,
}

/// A parsed DLGTEMPLATE or DLGTEMPLATEEX.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    pub style: u32,
    pub ex_style: u32,
    pub rect: (i16, i16, i16, i16),
    pub menu: Option<ResId>,
    pub class: Option<ResId>,
    pub title: Vec<u16>,
    /// Point size, weight, italic, face name (DS_SETFONT).
    pub font: Option<(u16, u16, bool, Vec<u16>)>,
    pub items: Vec<Item>,
    /// The template's guest address (0: not known).
    pub addr: u32,
}

/// A template reader: little-endian, bounds-checked, errors name the field.
struct Reader<'a> {
    b: &'a [u8],
    p: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize, what: &str) -> Result<&[u8], String> {
        let s = self
            .b
            .get(self.p..self.p + n)
            .ok_or_else(|| format!("{what} at byte {} runs past the template's end", self.p))?;
        self.p += n;
        Ok(s)
    }
    fn u16(&mut self, what: &str) -> Result<u16, String> {
        let s = self.take(2, what)?;
        Ok(u16::from_le_bytes([s[0], s[1]]))
    }
    fn u32(&mut self, what: &str) -> Result<u32, String> {
        let s = self.take(4, what)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }
    fn rect(&mut self) -> Result<(i16, i16, i16, i16), String> {
        Ok((
            self.u16("x")? as i16,
            self.u16("y")? as i16,
            self.u16("cx")? as i16,
            self.u16("cy")? as i16,
        ))
    }
    /// A NUL-terminated UTF-16 string.
    fn sz(&mut self, what: &str) -> Result<Vec<u16>, String> {
        let mut v = Vec::new();
        loop {
            match self.u16(what)? {
                0 => return Ok(v),
                u => v.push(u),
            }
        }
    }
    /// sz_Or_Ord: 0x0000 none, 0xFFFF then an ordinal, else a string.
    fn sz_or_ord(&mut self, what: &str) -> Result<Option<ResId>, String> {
        let at = self.p;
        match self.u16(what)? {
            0 => Ok(None),
            0xFFFF => Ok(Some(ResId::Id(self.u16(what)?))),
            _ => {
                self.p = at;
                Ok(Some(ResId::Name(String::from_utf16_lossy(&self.sz(what)?))))
            }
        }
    }
    fn align4(&mut self) {
        self.p = (self.p + 3) & !3;
    }
}

/// The predefined control classes' ordinals (DLGITEMTEMPLATE documentation).
fn class_of(ord: u16) -> Option<&'static str> {
    Some(match ord {
        0x80 => "BUTTON",
        0x81 => "EDIT",
        0x82 => "STATIC",
        0x83 => "LISTBOX",
        0x84 => "SCROLLBAR",
        0x85 => "COMBOBOX",
        _ => return None,
    })
}

/// Parses a DLGTEMPLATE (DLGITEMTEMPLATE items) or a DLGTEMPLATEEX
/// (signature 0xFFFF after version 1; DLGITEMTEMPLATEEX items), as the
/// Win32 documentation lays them out; each item starts on a DWORD boundary.
pub fn parse(b: &[u8]) -> Result<Template, String> {
    let mut r = Reader { b, p: 0 };
    let ex = b.len() >= 4 && b[0..4] == [1, 0, 0xFF, 0xFF];
    let (style, ex_style) = if ex {
        r.take(4, "dlgVer and signature")?;
        r.u32("helpID")?;
        let exs = r.u32("exStyle")?;
        (r.u32("style")?, exs)
    } else {
        let s = r.u32("style")?;
        (s, r.u32("dwExtendedStyle")?)
    };
    let count = r.u16("cdit")?;
    let rect = r.rect()?;
    let menu = r.sz_or_ord("menu")?;
    let class = r.sz_or_ord("windowClass")?;
    let title = r.sz("title")?;
    // DS_SETFONT (or DS_SHELLFONT, which includes it).
    let font = if style & ds::SETFONT != 0 {
        let pt = r.u16("pointsize")?;
        let (weight, italic) = if ex {
            let w = r.u16("weight")?;
            let it = r.take(2, "italic and charset")?[0] != 0;
            (w, it)
        } else {
            (400, false)
        };
        Some((pt, weight, italic, r.sz("typeface")?))
    } else {
        None
    };
    let mut items = Vec::with_capacity(count as usize);
    for k in 0..count {
        r.align4();
        let what = |f: &str| format!("item {k}'s {f}");
        let (style, ex_style, rect, id) = if ex {
            r.u32(&what("helpID"))?;
            let exs = r.u32(&what("exStyle"))?;
            let s = r.u32(&what("style"))?;
            let rect = r.rect()?;
            (s, exs, rect, r.u32(&what("id"))?)
        } else {
            let s = r.u32(&what("style"))?;
            let exs = r.u32(&what("dwExtendedStyle"))?;
            let rect = r.rect()?;
            (s, exs, rect, r.u16(&what("id"))? as u32)
        };
        let class = match r.sz_or_ord(&what("windowClass"))? {
            Some(ResId::Id(o)) => ResId::Name(
                class_of(o)
                    .ok_or_else(|| format!("item {k}: unknown class ordinal {o:#x}"))?
                    .into(),
            ),
            Some(n) => n,
            None => return Err(format!("item {k} has no class")),
        };
        let title = r
            .sz_or_ord(&what("title"))?
            .unwrap_or(ResId::Name(String::new()));
        let at = r.p;
        let n = r.u16(&what("extra count"))? as usize;
        let data = r.take(n, &what("creation data"))?.to_vec();
        let data_at = (n > 0).then_some(at);
        items.push(Item {
            style,
            ex_style,
            rect,
            id,
            class,
            title,
            data,
            data_at,
        });
    }
    Ok(Template {
        style,
        ex_style,
        rect,
        menu,
        class,
        title,
        font,
        items,
        addr: 0,
    })
}

/// A template in guest memory: copied out in 256-byte pieces up to the
/// first unreadable one (at most 64 KiB; the parser finds its end).
fn template_bytes(env: &Env, a: u32) -> Vec<u8> {
    let mut v = Vec::new();
    let mut buf = [0u8; 256];
    while v.len() < 0x1_0000 {
        let at = a.wrapping_add(v.len() as u32);
        if env.mem.peek(at, &mut buf).is_none() {
            // The last piece may end at a page boundary: what is readable of it.
            let mut one = [0u8; 1];
            for i in 0..256u32 {
                if env.mem.peek(at.wrapping_add(i), &mut one).is_none() {
                    break;
                }
                v.push(one[0]);
            }
            break;
        }
        v.extend_from_slice(&buf);
    }
    v
}

/// One dialog's state, by window handle.
#[derive(Clone, Debug, Default)]
pub struct DlgInfo {
    /// The font made from the template (deleted with the dialog), 0 for the system font.
    pub font: u32,
    /// Base units: average character width and height in pixels.
    pub base: (i32, i32),
    /// DM_SETDEFID's control id (0: none set).
    pub def_id: u32,
    /// The control that had the focus when the dialog lost the activation.
    pub saved_focus: u32,
    /// EndDialog was called, with this result.
    pub ended: Option<u32>,
    /// The owner disabled while the modal dialog is up (0: modeless).
    pub modal_owner: u32,
    /// The modal loop has shown the dialog (once, when the queue first went empty).
    pub shown: bool,
}

/// `a * b / c` rounded to the nearest (MulDiv's rounding).
fn muldiv(a: i32, b: i32, c: i32) -> i32 {
    if c == 0 {
        return -1;
    }
    // Halves round away from zero.
    let p = a as i64 * b as i64;
    let q = (p.abs() + (c as i64).abs() / 2) / (c as i64).abs();
    (if (p < 0) != (c < 0) { -q } else { q }) as i32
}

/// Base units of a font of `height` (LOGFONT, 0: the system font) and weight.
fn base_units(height: i32, weight: i32) -> (i32, i32) {
    let f = crate::gdi::font::Face::new(height, weight, false, false);
    (f.average_width(), f.height())
}

/// Dialog units to pixels (MapDialogRect's rule).
fn to_px(base: (i32, i32), (x, y, cx, cy): (i16, i16, i16, i16)) -> (i32, i32, i32, i32) {
    (
        muldiv(x as i32, base.0, 4),
        muldiv(y as i32, base.1, 8),
        muldiv(cx as i32, base.0, 4),
        muldiv(cy as i32, base.1, 8),
    )
}

fn info(env: &Env, h: u32) -> Option<&DlgInfo> {
    env.desktop.dialogs.get(&h)
}

fn extra_u32(env: &Env, h: u32, at: usize) -> u32 {
    env.desktop
        .win(h)
        .and_then(|w| w.extra.get(at..at + 4))
        .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn set_extra_u32(env: &mut Env, h: u32, at: usize, v: u32) {
    if let Some(b) = env
        .desktop
        .win_mut(h)
        .and_then(|w| w.extra.get_mut(at..at + 4))
    {
        b.copy_from_slice(&v.to_le_bytes());
    }
}

fn fail(env: &mut Env, why: String) {
    env.last_error = ERROR_INVALID_PARAMETER;
    env.desktop.dialog_errors.push(why);
}

/// How a dialog is being made.
struct Spec {
    inst: u32,
    owner: u32,
    proc_: u32,
    param: u32,
    wide: bool,
    modal: bool,
}

/// Creates the dialog of `tpl` (see the module header), then `then` with
/// its handle (0: it failed).
fn create(
    env: &mut Env,
    tpl: Template,
    s: Spec,
    then: Box<dyn FnOnce(&mut Env, u32) -> Ret>,
) -> Ret {
    let (font, base) = match &tpl.font {
        Some((pt, weight, italic, face)) => {
            // Points to pixels at 96 dots per inch, negative: a character height.
            let height = -muldiv(*pt as i32, 96, 72);
            let lf = crate::gdi::LogFont {
                height,
                weight: *weight as i32,
                italic: *italic as u8,
                face: face.clone(),
                ..Default::default()
            };
            let f = env.desktop.gdi.add(crate::gdi::Object::Font(lf));
            (f, base_units(height, *weight as i32))
        }
        None => (0, base_units(0, 400)),
    };
    let (x, y, w, h) = to_px(base, tpl.rect);
    let mut style = tpl.style;
    let mut ex = tpl.ex_style;
    if style & ds::MODALFRAME != 0 {
        ex |= ws::EX_DLGMODALFRAME;
    }
    if style & ds::CONTROL != 0 {
        ex |= WS_EX_CONTROLPARENT;
        style &= !(ws::CAPTION | ws::SYSMENU);
    }
    let child = style & ws::CHILD != 0;
    let menu = match (&tpl.menu, child) {
        (Some(m), false) => user32::load_menu(env, s.inst, m),
        _ => 0,
    };
    let frame = crate::desktop::metrics::adjust(Rect::new(0, 0, w, h), style, ex, menu != 0);
    let (fw, fh) = (frame.width(), frame.height());
    let (px, py) = if child {
        (x, y)
    } else if style & ds::CENTER != 0 {
        let sr = env.desktop.screen_rect();
        ((sr.width() - fw) / 2, (sr.height() - fh) / 2)
    } else {
        // Relative to the owner's client area unless DS_ABSALIGN; kept on screen.
        let (ox, oy) = if style & ds::ABSALIGN == 0 {
            env.desktop
                .client_rect(s.owner)
                .map_or((0, 0), |c| (c.left, c.top))
        } else {
            (0, 0)
        };
        let sr = env.desktop.screen_rect();
        (
            (ox + x).clamp(0, (sr.right - fw).max(0)),
            (oy + y).clamp(0, (sr.bottom - fh).max(0)),
        )
    };
    let class = tpl.class.clone().unwrap_or(ResId::Name("#32770".into()));
    let visible = style & ws::VISIBLE != 0;
    let args = NewWindow {
        ex,
        class,
        title: tpl.title.clone(),
        cs_names: (0, 0),
        style: style & !ws::VISIBLE,
        pos: (px, py, fw, fh),
        parent: s.owner,
        menu,
        inst: s.inst,
        param: s.param,
        wide: s.wide,
    };
    let Spec {
        inst,
        proc_,
        param,
        modal,
        owner,
        wide,
    } = s;
    user32::create_window_then(
        env,
        args,
        Box::new(move |env, dlg| {
            if dlg == 0 {
                if font != 0 {
                    env.desktop.gdi.delete(&mut env.mem, font);
                }
                return then(env, 0);
            }
            env.desktop.dialogs.insert(
                dlg,
                DlgInfo {
                    font,
                    base,
                    // The default id starts as IDOK (DM_GETDEFID answers it
                    // until DM_SETDEFID changes it).
                    def_id: IDOK,
                    modal_owner: if modal { owner } else { 0 },
                    ..Default::default()
                },
            );
            set_extra_u32(env, dlg, DWLP_DLGPROC, proc_);
            let items: std::collections::VecDeque<Item> = tpl.items.into();
            let tpl_addr = tpl.addr;
            let after = Box::new(move |env: &mut Env, ok: bool| {
                if !ok {
                    return user32::destroy_then(env, dlg, Box::new(move |env| then(env, 0)));
                }
                init_dialog(env, dlg, param, proc_, visible, then)
            });
            let set_font = move |env: &mut Env| {
                if font != 0 && proc_ != 0 {
                    user32::send(env, dlg, wm::SETFONT, font, 0, move |env, _| {
                        create_items(env, dlg, items, inst, wide, tpl_addr, after)
                    })
                } else {
                    create_items(env, dlg, items, inst, wide, tpl_addr, after)
                }
            };
            set_font(env)
        }),
    )
}

/// Creates the template's controls in order, each given the dialog's font.
fn create_items(
    env: &mut Env,
    dlg: u32,
    mut items: std::collections::VecDeque<Item>,
    inst: u32,
    wide: bool,
    tpl_addr: u32,
    then: Box<dyn FnOnce(&mut Env, bool) -> Ret>,
) -> Ret {
    let Some(it) = items.pop_front() else {
        return then(env, true);
    };
    let Some(d) = info(env, dlg).cloned() else {
        return then(env, false);
    };
    let (x, y, w, h) = to_px(d.base, it.rect);
    let title = match &it.title {
        ResId::Name(s) => s.encode_utf16().collect(),
        ResId::Id(_) => Vec::new(),
    };
    // An ordinal title reaches WM_NCCREATE as Windows shows it: lpszName
    // points at 0xFFFF and the ordinal (W) or 0xFF and the ordinal's two
    // bytes (A), in a buffer freed once the control exists.
    let ord_name = match &it.title {
        ResId::Id(o) => {
            let [lo, hi] = o.to_le_bytes();
            let b: &[u8] = if wide {
                &[0xFF, 0xFF, lo, hi, 0, 0]
            } else {
                &[0xFF, lo, hi, 0]
            };
            let a = env.alloc(b.len() as u32);
            if a != 0 {
                env.mem.poke(a, b);
            }
            a
        }
        ResId::Name(_) => 0,
    };
    let args = NewWindow {
        ex: it.ex_style | 0x4, // WS_EX_NOPARENTNOTIFY, as the dialog manager creates controls
        class: it.class.clone(),
        title,
        cs_names: (0, ord_name),
        style: it.style | ws::CHILD,
        pos: (x, y, w, h),
        parent: dlg,
        menu: it.id,
        inst,
        param: match it.data_at {
            Some(at) if tpl_addr != 0 => tpl_addr.wrapping_add(at as u32),
            _ => 0,
        },
        wide,
    };
    let nofail = env.desktop.win(dlg).is_some_and(|w| w.style & 0x10 != 0); // DS_NOFAILCREATE
    user32::create_window_then(
        env,
        args,
        Box::new(move |env, c| {
            if ord_name != 0 {
                let h = env.process_heap;
                env.with_heap(h, |heap, _| heap.free(ord_name));
            }
            if c == 0 && !nofail {
                let name = match &it.class {
                    ResId::Name(s) => s.clone(),
                    ResId::Id(i) => format!("#{i}"),
                };
                env.desktop.dialog_errors.push(format!(
                    "control {} of class {name} could not be created",
                    it.id
                ));
                return then(env, false);
            }
            if c != 0 && d.font != 0 {
                user32::send(env, c, wm::SETFONT, d.font, 0, move |env, _| {
                    create_items(env, dlg, items, inst, wide, tpl_addr, then)
                })
            } else {
                create_items(env, dlg, items, inst, wide, tpl_addr, then)
            }
        }),
    )
}

/// WM_INITDIALOG, the initial focus, and showing a WS_VISIBLE dialog.
fn init_dialog(
    env: &mut Env,
    dlg: u32,
    param: u32,
    proc_: u32,
    visible: bool,
    then: Box<dyn FnOnce(&mut Env, u32) -> Ret>,
) -> Ret {
    let show = move |env: &mut Env| {
        if visible && env.desktop.win(dlg).is_some() {
            user32::show_window(env, dlg, 1, Box::new(move |env| then(env, dlg)))
        } else {
            then(
                env,
                if env.desktop.win(dlg).is_some() {
                    dlg
                } else {
                    0
                },
            )
        }
    };
    if proc_ == 0 {
        return show(env);
    }
    let first = first_focus(env, dlg);
    user32::send(env, dlg, wm::INITDIALOG, first, param, move |env, r| {
        if r != 0 && env.desktop.win(dlg).is_some() {
            // TRUE: the first tab stop (found again: WM_INITDIALOG may
            // have changed the controls) gets the focus.
            let f = first_focus(env, dlg);
            return focus_control(env, f, Box::new(move |env| show(env)));
        }
        show(env)
    })
}

/// The first WS_TABSTOP control, else the first control of a group.
fn first_focus(env: &Env, dlg: u32) -> u32 {
    match next_tab_item(env, dlg, 0, false) {
        0 => next_group_item(env, dlg, 0, false),
        f => f,
    }
}

/// Gives `c` the focus; an edit control's whole text is selected first
/// (DLGC_HASSETSEL), as the dialog manager does on Tab.
fn focus_control(env: &mut Env, c: u32, then: Box<dyn FnOnce(&mut Env) -> Ret>) -> Ret {
    if c == 0 {
        return then(env);
    }
    user32::send(env, c, wm::GETDLGCODE, 0, 0, move |env, code| {
        let set = move |env: &mut Env| user32::set_focus(env, c, move |env, _| then(env));
        if code & dlgc::HASSETSEL != 0 {
            user32::send(env, c, EM_SETSEL, 0, u32::MAX, move |env, _| set(env))
        } else {
            set(env)
        }
    })
}

/// Whether `c` is `dlg` or inside it.
fn inside(env: &Env, dlg: u32, c: u32) -> bool {
    if env.desktop.win(dlg).is_none() {
        return false;
    }
    let mut cur = c;
    for _ in 0..64 {
        if cur == dlg {
            return true;
        }
        match env.desktop.win(cur) {
            Some(w) if w.is_child() => cur = w.parent,
            _ => return false,
        }
    }
    false
}

/// The navigation order below `root`: its children in order, a visible,
/// enabled child with WS_EX_CONTROLPARENT replaced by its own order (a
/// nested dialog's controls take part in the parent's Tab and group
/// order, as GetNextDlgTabItem's documentation describes).
fn flat(env: &Env, root: u32, depth: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for k in controls(env, root) {
        let parent = env
            .desktop
            .win(k)
            .is_some_and(|w| w.ex_style & WS_EX_CONTROLPARENT != 0);
        if parent && usable(env, k) && depth < 16 {
            out.extend(flat(env, k, depth + 1));
        } else {
            out.push(k);
        }
    }
    out
}

/// The order `ctl` is navigated in: the dialog's, or, for a control the
/// dialog's order cannot reach (under a child without
/// WS_EX_CONTROLPARENT), that of its highest ancestor whose order holds it.
fn order_for(env: &Env, dlg: u32, ctl: u32) -> Vec<u32> {
    let top = flat(env, dlg, 0);
    if ctl == 0 || ctl == dlg || top.contains(&ctl) {
        return top;
    }
    let mut best = None;
    let mut cur = env.desktop.win(ctl).map_or(0, |w| w.parent);
    for _ in 0..64 {
        if cur == 0 || cur == dlg || !env.desktop.win(cur).is_some_and(|w| w.is_child()) {
            break;
        }
        let o = flat(env, cur, 0);
        if o.contains(&ctl) {
            best = Some(o);
        }
        cur = env.desktop.win(cur).map_or(0, |w| w.parent);
    }
    best.unwrap_or(top)
}

/// The dialog's controls (its children) in template order.
fn controls(env: &Env, dlg: u32) -> Vec<u32> {
    env.desktop
        .win(dlg)
        .map(|w| w.children.clone())
        .unwrap_or_default()
}

fn usable(env: &Env, c: u32) -> bool {
    env.desktop
        .win(c)
        .is_some_and(|w| w.visible() && w.style & ws::DISABLED == 0)
}

/// GetNextDlgTabItem: the next (or previous) visible, enabled WS_TABSTOP
/// control after `ctl` in the dialog's order, wrapping; from the start
/// (or the end) when `ctl` is 0.
pub fn next_tab_item(env: &Env, dlg: u32, ctl: u32, prev: bool) -> u32 {
    // Backwards from nothing (or the dialog itself) is nothing.
    if prev && (ctl == 0 || ctl == dlg) {
        return 0;
    }
    let kids = order_for(env, dlg, ctl);
    let stops: Vec<u32> = kids
        .iter()
        .copied()
        .filter(|&k| {
            usable(env, k)
                && env
                    .desktop
                    .win(k)
                    .is_some_and(|w| w.style & ws::TABSTOP != 0)
        })
        .collect();
    step_in(&kids, &stops, ctl, prev).unwrap_or(ctl)
}

/// The next of `among` after `from` in `order`, wrapping (the first or
/// last of `among` when `from` is not in `order`).
fn step_in(order: &[u32], among: &[u32], from: u32, prev: bool) -> Option<u32> {
    if among.is_empty() {
        return None;
    }
    let Some(at) = order.iter().position(|&k| k == from) else {
        return Some(if prev {
            among[among.len() - 1]
        } else {
            among[0]
        });
    };
    let n = order.len();
    (1..=n)
        .map(|k| {
            if prev {
                order[(at + n - k) % n]
            } else {
                order[(at + k) % n]
            }
        })
        .find(|k| among.contains(k))
}

/// GetNextDlgGroupItem: the next (or previous) visible, enabled control of
/// `ctl`'s group (see `controls::group_of`), wrapping within the group.
pub fn next_group_item(env: &Env, dlg: u32, ctl: u32, prev: bool) -> u32 {
    if prev && (ctl == 0 || ctl == dlg) {
        return 0;
    }
    let kids = order_for(env, dlg, ctl);
    let c = if ctl == 0 || ctl == dlg || !kids.contains(&ctl) {
        match kids.iter().copied().find(|&k| usable(env, k)) {
            Some(k) => return k,
            None => return 0,
        }
    } else {
        ctl
    };
    let group: Vec<u32> = super::controls::group_in(env, &kids, c)
        .into_iter()
        .filter(|&k| usable(env, k))
        .collect();
    step_in(&kids, &group, c, prev).unwrap_or(c)
}

/// GetDlgItem: the direct child with control id `id`.
pub fn dlg_item(env: &Env, dlg: u32, id: u32) -> u32 {
    let kids = controls(env, dlg);
    kids.into_iter()
        .find(|&k| {
            env.desktop
                .win(k)
                .is_some_and(|w| w.id & 0xFFFF == id & 0xFFFF)
        })
        .unwrap_or(0)
}

/// Messages whose dialog-procedure result is the answer itself, not
/// DWLP_MSGRESULT (DialogProc documentation).
fn returns_directly(msg: u32) -> bool {
    matches!(
        msg,
        0x2E | 0x2F | 0x37 | 0x39 | wm::INITDIALOG | 0x132..=0x138
    )
}

/// DefDlgProc: the dialog procedure first; what it leaves (FALSE) gets the
/// dialog's default handling.
pub fn def_dlg_proc(env: &mut Env, h: u32, msg: u32, wp: u32, lp: u32, wide: bool) -> Ret {
    let proc_ = extra_u32(env, h, DWLP_DLGPROC);
    if proc_ == 0 || env.desktop.win(h).is_none() {
        return dlg_default(env, h, msg, wp, lp, wide);
    }
    set_extra_u32(env, h, DWLP_MSGRESULT, 0);
    Ret::call(proc_, vec![h, msg, wp, lp], move |env, r| {
        if env.desktop.win(h).is_none() {
            return Ret::Value(if returns_directly(msg) { r } else { 0 });
        }
        if r != 0 {
            return Ret::Value(if returns_directly(msg) {
                r
            } else {
                extra_u32(env, h, DWLP_MSGRESULT)
            });
        }
        dlg_default(env, h, msg, wp, lp, wide)
    })
}

/// A window that uses DefDlgProc without the dialog manager having made
/// it (CreateWindow with a class whose procedure calls DefDlgProc) gets its
/// dialog state on first use, as Windows allocates it lazily.
fn info_mut(env: &mut Env, h: u32) -> Option<&mut DlgInfo> {
    env.desktop.win(h)?;
    Some(env.desktop.dialogs.entry(h).or_insert_with(|| DlgInfo {
        base: base_units(0, 400),
        ..Default::default()
    }))
}

fn dlg_default(env: &mut Env, h: u32, msg: u32, wp: u32, lp: u32, wide: bool) -> Ret {
    if matches!(
        msg,
        DM_SETDEFID | DM_GETDEFID | WM_NEXTDLGCTL | wm::ACTIVATE | wm::SETFOCUS
    ) {
        info_mut(env, h);
    }
    match msg {
        wm::ERASEBKGND => {
            let Some(c) = env.desktop.client_rect(h) else {
                return Ret::Value(0);
            };
            user32::fill_rect(
                env,
                wp,
                Rect::new(0, 0, c.width(), c.height()),
                color::BTNFACE + 1,
            );
            Ret::Value(1)
        }
        wm::PAINT => {
            // BeginPaint's erase for a dialog procedure that paints nothing.
            let erase = env.desktop.win(h).is_some_and(|w| w.erase);
            if erase {
                let hdc = user32::window_dc(env, h, false, None);
                let c = env.desktop.client_rect(h).unwrap_or_default();
                user32::fill_rect(
                    env,
                    hdc,
                    Rect::new(0, 0, c.width(), c.height()),
                    color::BTNFACE + 1,
                );
                env.desktop.gdi.delete_dc(hdc);
            }
            user32::def_window_proc(env, h, msg, wp, lp, wide)
        }
        wm::ACTIVATE => {
            if wp & 0xFFFF != 0 {
                restore_focus(env, h)
            } else {
                let f = env.desktop.focus;
                if inside(env, h, f) && f != h {
                    if let Some(d) = env.desktop.dialogs.get_mut(&h) {
                        d.saved_focus = f;
                    }
                }
                Ret::Value(0)
            }
        }
        wm::SETFOCUS => restore_focus(env, h),
        DM_SETDEFID => {
            let old = info(env, h).map_or(0, |d| d.def_id);
            if let Some(d) = env.desktop.dialogs.get_mut(&h) {
                d.def_id = wp;
            }
            // The old default push button loses BS_DEFPUSHBUTTON, the new one gets it.
            let restyle = |env: &mut Env, id: u32, def: bool| {
                let c = dlg_item(env, h, id);
                let k = env
                    .desktop
                    .win(c)
                    .map_or(u32::MAX, |w| w.style & bs::TYPEMASK);
                if id != 0 && matches!(k, bs::PUSHBUTTON | bs::DEFPUSHBUTTON) {
                    let st = if def {
                        bs::DEFPUSHBUTTON
                    } else {
                        bs::PUSHBUTTON
                    };
                    if let Some(w) = env.desktop.win_mut(c) {
                        w.style = (w.style & !bs::TYPEMASK) | st;
                    }
                    env.desktop.invalidate(c, None, true);
                }
            };
            restyle(env, old, false);
            restyle(env, wp, true);
            Ret::Value(1)
        }
        DM_GETDEFID => {
            let id = info(env, h).map_or(0, |d| d.def_id);
            if id != 0 {
                return Ret::Value(id & 0xFFFF | DC_HASDEFID << 16);
            }
            let kids = env
                .desktop
                .win(h)
                .map(|w| w.children.clone())
                .unwrap_or_default();
            let def = kids.into_iter().find_map(|k| {
                let w = env.desktop.win(k)?;
                let cls = env.desktop.classes.get(w.class)?;
                (cls.name == gs::units("BUTTON") && w.style & bs::TYPEMASK == bs::DEFPUSHBUTTON)
                    .then_some(w.id)
            });
            Ret::Value(def.map_or(0, |id| id & 0xFFFF | DC_HASDEFID << 16))
        }
        WM_NEXTDLGCTL => {
            let target = if lp & 0xFFFF != 0 {
                wp
            } else {
                let f = env.desktop.focus;
                next_tab_item(env, h, if inside(env, h, f) { f } else { 0 }, wp != 0)
            };
            focus_control(
                env,
                target,
                Box::new(move |env| {
                    set_def_style(env, h, target);
                    Ret::Value(0)
                }),
            )
        }
        wm::CLOSE => {
            // As a click on Cancel, unless that button is disabled.
            let c = dlg_item(env, h, IDCANCEL);
            if c != 0
                && env
                    .desktop
                    .win(c)
                    .is_some_and(|w| w.style & ws::DISABLED != 0)
            {
                return Ret::Value(0);
            }
            user32::post(env, h, wm::COMMAND, IDCANCEL, c);
            Ret::Value(0)
        }
        wm::NCDESTROY => {
            if let Some(d) = env.desktop.dialogs.remove(&h) {
                if d.font != 0 {
                    env.desktop.gdi.delete(&mut env.mem, d.font);
                }
            }
            user32::def_window_proc(env, h, msg, wp, lp, wide)
        }
        _ => user32::def_window_proc(env, h, msg, wp, lp, wide),
    }
}

/// A push button that takes the focus looks like the default button
/// (BS_DEFPUSHBUTTON) and the one that looked so loses it; focus on any
/// other control gives the look back to the DM_SETDEFID button. The
/// default id itself does not change.
fn set_def_style(env: &mut Env, dlg: u32, focus: u32) {
    let kids = controls(env, dlg);
    let is_push = |env: &Env, c: u32| {
        env.desktop.win(c).is_some_and(|w| {
            env.desktop
                .classes
                .get(w.class)
                .is_some_and(|k| k.name == gs::units("BUTTON"))
                && matches!(w.style & bs::TYPEMASK, bs::PUSHBUTTON | bs::DEFPUSHBUTTON)
        })
    };
    let def = if is_push(env, focus) {
        focus
    } else {
        let id = info(env, dlg).map_or(0, |d| d.def_id);
        if id == 0 {
            return;
        }
        dlg_item(env, dlg, id)
    };
    for k in kids {
        if !is_push(env, k) {
            continue;
        }
        let st = if k == def {
            bs::DEFPUSHBUTTON
        } else {
            bs::PUSHBUTTON
        };
        if let Some(w) = env.desktop.win_mut(k) {
            if w.style & bs::TYPEMASK != st {
                w.style = (w.style & !bs::TYPEMASK) | st;
                env.desktop.invalidate(k, None, true);
            }
        }
    }
}

/// The focus goes back to the control that had it, else the first tab stop.
fn restore_focus(env: &mut Env, h: u32) -> Ret {
    let f = env.desktop.focus;
    if f != h && f != 0 && inside(env, h, f) {
        return Ret::Value(0);
    }
    let saved = info(env, h).map_or(0, |d| d.saved_focus);
    if saved != 0 && inside(env, h, saved) && usable(env, saved) {
        return user32::set_focus(env, saved, |_, _| Ret::Value(0));
    }
    // No control had it yet: the first tab stop, its text selected.
    let c = first_focus(env, h);
    focus_control(env, c, Box::new(|_| Ret::Value(0)))
}

/// IsDialogMessage: the dialog keyboard interface, else TranslateMessage
/// and DispatchMessage; `then` gets whether the message was the dialog's.
pub fn is_dialog_message(
    env: &mut Env,
    dlg: u32,
    m: Msg,
    then: Box<dyn FnOnce(&mut Env, bool) -> Ret>,
) -> Ret {
    if dlg == 0 || m.hwnd == 0 || !inside(env, dlg, m.hwnd) {
        return then(env, false);
    }
    let dispatch = move |env: &mut Env, then: Box<dyn FnOnce(&mut Env, bool) -> Ret>| {
        user32::translate(env, &m);
        user32::dispatch_msg(env, &m, move |env, _| then(env, true))
    };
    if m.message != wm::KEYDOWN {
        return dispatch(env, then);
    }
    let vk = m.wparam;
    if !matches!(vk, 0x09 | 0x0D | 0x1B | 0x25..=0x28) {
        return dispatch(env, then);
    }
    // The control says which keys it keeps (WM_GETDLGCODE, lParam the message).
    let at = user32::scratch(env, 28);
    user32::write_msg(env, at, &m);
    user32::send(env, m.hwnd, wm::GETDLGCODE, vk, at, move |env, code| {
        user32::scratch_release(env, 28);
        if code & dlgc::WANTMESSAGE != 0 {
            return dispatch(env, then);
        }
        let done =
            |then: Box<dyn FnOnce(&mut Env, bool) -> Ret>| -> Box<dyn FnOnce(&mut Env) -> Ret> {
                Box::new(move |env| then(env, true))
            };
        match vk {
            0x09 if code & dlgc::WANTTAB == 0 => {
                let shift = env.desktop.keys[0x10] & 0x80 != 0;
                let f = env.desktop.focus;
                let next = next_tab_item(env, dlg, if inside(env, dlg, f) { f } else { 0 }, shift);
                focus_control(env, next, done(then))
            }
            0x25..=0x28 if code & dlgc::WANTARROWS == 0 => {
                let f = env.desktop.focus;
                let next = next_group_item(env, dlg, f, matches!(vk, 0x25 | 0x26));
                if next == 0 || next == f {
                    return then(env, true);
                }
                user32::send(env, next, wm::GETDLGCODE, 0, 0, move |env, c| {
                    let radio = c & dlgc::RADIOBUTTON != 0;
                    user32::set_focus(env, next, move |env, _| {
                        // Moving onto an auto radio button checks it (a click).
                        let auto = env
                            .desktop
                            .win(next)
                            .is_some_and(|w| w.style & bs::TYPEMASK == bs::AUTORADIOBUTTON);
                        if radio && auto {
                            user32::send(env, next, bm::CLICK, 0, 0, move |env, _| then(env, true))
                        } else {
                            then(env, true)
                        }
                    })
                })
            }
            0x1B => {
                let c = dlg_item(env, dlg, IDCANCEL);
                user32::send(env, dlg, wm::COMMAND, IDCANCEL, c, move |env, _| {
                    then(env, true)
                })
            }
            0x0D => {
                // The focused push button, else the default id (DM_GETDEFID), else IDOK.
                let f = env.desktop.focus;
                let f = if f != dlg && inside(env, dlg, f) {
                    f
                } else {
                    0
                };
                user32::send(env, f, wm::GETDLGCODE, 0, 0, move |env, fcode| {
                    let push = fcode & (dlgc::DEFPUSHBUTTON | dlgc::UNDEFPUSHBUTTON) != 0;
                    if f != 0 && push && usable(env, f) {
                        let id = env.desktop.win(f).map_or(0, |w| w.id);
                        return user32::send(
                            env,
                            dlg,
                            wm::COMMAND,
                            id & 0xFFFF,
                            f,
                            move |env, _| then(env, true),
                        );
                    }
                    user32::send(env, dlg, DM_GETDEFID, 0, 0, move |env, r| {
                        let id = if r >> 16 == DC_HASDEFID {
                            r & 0xFFFF
                        } else {
                            IDOK
                        };
                        let c = dlg_item(env, dlg, id);
                        if c != 0 && !usable(env, c) {
                            return then(env, true);
                        }
                        user32::send(env, dlg, wm::COMMAND, id, c, move |env, _| then(env, true))
                    })
                })
            }
            _ => dispatch(env, then),
        }
    })
}

/// EndDialog: the result kept for the modal loop, the owner enabled again,
/// the dialog hidden (destroyed when its loop ends).
fn end_dialog(env: &mut Env, h: u32, result: u32) -> Ret {
    let Some(d) = env.desktop.dialogs.get_mut(&h) else {
        env.last_error = ERROR_INVALID_WINDOW_HANDLE;
        return Ret::Value(0);
    };
    d.ended = Some(result);
    let owner = d.modal_owner;
    if let Some(w) = env.desktop.win_mut(owner) {
        w.style &= !ws::DISABLED;
    }
    user32::show_window(env, h, 0, Box::new(|_| Ret::Value(1)))
}

/// DialogBox*: creates the dialog, then runs the modal loop.
fn dialog_box(env: &mut Env, tpl: Result<Template, String>, s: Spec) -> Ret {
    let tpl = match tpl {
        Ok(t) => t,
        Err(e) => {
            fail(env, e);
            return Ret::Value(u32::MAX);
        }
    };
    // The owner is a top-level window; it is disabled while the dialog is up.
    let owner = if s.owner != 0 {
        env.desktop.top_level(s.owner)
    } else {
        0
    };
    let s = Spec { owner, ..s };
    let was_enabled = env
        .desktop
        .win(owner)
        .is_some_and(|w| w.style & ws::DISABLED == 0);
    if was_enabled {
        if let Some(w) = env.desktop.win_mut(owner) {
            w.style |= ws::DISABLED;
        }
    }
    create(
        env,
        tpl,
        s,
        Box::new(move |env, dlg| {
            if dlg == 0 {
                if was_enabled {
                    if let Some(w) = env.desktop.win_mut(owner) {
                        w.style &= !ws::DISABLED;
                    }
                }
                return Ret::Value(u32::MAX);
            }
            if !was_enabled {
                if let Some(d) = env.desktop.dialogs.get_mut(&dlg) {
                    d.modal_owner = 0;
                }
            }
            env.desktop.modal.push(dlg);
            modal_step(env)
        }),
    )
}

/// One turn of the innermost modal dialog's loop (see the module header).
pub fn modal_step(env: &mut Env) -> Ret {
    loop {
        let Some(&dlg) = env.desktop.modal.last() else {
            return Ret::Value(u32::MAX);
        };
        let Some(d) = info(env, dlg).cloned() else {
            // Destroyed without EndDialog.
            env.desktop.modal.pop();
            return Ret::Value(0);
        };
        if let Some(result) = d.ended {
            env.desktop.modal.pop();
            let owner = d.modal_owner;
            return user32::destroy_then(
                env,
                dlg,
                Box::new(move |env| {
                    if env.desktop.win(owner).is_some() {
                        user32::activate(env, owner, Box::new(move |_| Ret::Value(result)))
                    } else {
                        Ret::Value(result)
                    }
                }),
            );
        }
        // A modal dialog is shown when its queue first goes empty.
        if !d.shown && user32::next_message(env, 0, 0, 0, false).is_none() {
            if let Some(d) = env.desktop.dialogs.get_mut(&dlg) {
                d.shown = true;
            }
            if env.desktop.win(dlg).is_some_and(|w| !w.visible()) {
                return user32::show_window(env, dlg, 1, Box::new(modal_step));
            }
        }
        let m = match user32::modal_next(env) {
            user32::ModalNext::Msg(m) => m,
            user32::ModalNext::Wait(r) => return r,
            user32::ModalNext::Quit => {
                if let Some(d) = env.desktop.dialogs.get_mut(&dlg) {
                    d.ended.get_or_insert(0);
                }
                continue;
            }
        };
        let input = (wm::KEYDOWN..=0x108).contains(&m.message)
            || (wm::MOUSEMOVE..=0x20E).contains(&m.message)
            || (0xA0..=0xAD).contains(&m.message);
        if input && env.desktop.top_level(m.hwnd) != dlg {
            continue;
        }
        return is_dialog_message(
            env,
            dlg,
            m,
            Box::new(move |env, mine| {
                if mine {
                    return modal_step(env);
                }
                user32::translate(env, &m);
                user32::dispatch_msg(env, &m, |env, _| modal_step(env))
            }),
        );
    }
}

/// A dialog resource of module `inst` (0: the program).
fn resource_template(env: &mut Env, inst: u32, name: u32, wide: bool) -> Result<Template, String> {
    let id = user32::res_name(env, name, wide);
    let base = if inst == 0 { env.image_base } else { inst };
    let list = env.desktop.resources(&env.mem, base).unwrap_or_default();
    let r = res::find(&list, &ResId::Id(res::RT_DIALOG), &id)
        .ok_or_else(|| format!("no RT_DIALOG resource {id:?} in the module at {base:#x}"))?;
    // Read where the module has it, so creation data has a guest address.
    let addr = base.wrapping_add(r.data_rva);
    let mut data = vec![0u8; r.size.min(0x1_0000) as usize];
    env.mem
        .peek(addr, &mut data)
        .ok_or_else(|| format!("RT_DIALOG {id:?}: unreadable at {addr:#010x}"))?;
    let mut t = parse(&data).map_err(|e| format!("RT_DIALOG {id:?}: {e}"))?;
    t.addr = addr;
    Ok(t)
}

fn memory_template(env: &Env, a: u32) -> Result<Template, String> {
    if a == 0 {
        return Err("a NULL dialog template".into());
    }
    let mut t =
        parse(&template_bytes(env, a)).map_err(|e| format!("template at {a:#010x}: {e}"))?;
    t.addr = a;
    Ok(t)
}

/// CreateDialog*: the modeless dialog's handle (0 on failure).
fn create_dialog(env: &mut Env, tpl: Result<Template, String>, s: Spec) -> Ret {
    match tpl {
        Ok(t) => create(env, t, s, Box::new(|_, h| Ret::Value(h))),
        Err(e) => {
            fail(env, e);
            Ret::Value(0)
        }
    }
}

fn spec(inst: u32, owner: u32, proc_: u32, param: u32, wide: bool, modal: bool) -> Spec {
    Spec {
        inst,
        owner,
        proc_,
        param,
        wide,
        modal,
    }
}

/// SetWindowText / WM_SETTEXT with the caller's string converted to the
/// window's character set (`dll::msgconv`).
pub fn set_text(
    env: &mut Env,
    h: u32,
    s: u32,
    wide: bool,
    then: impl FnOnce(&mut Env, u32) -> Ret + 'static,
) -> Ret {
    let m = (h, wm::SETTEXT, 0, s);
    super::msgconv::send(env, m, wide, super::msgconv::by_send, Box::new(then))
}

/// GetWindowText / WM_GETTEXT into the caller's buffer and character set.
pub fn get_text(
    env: &mut Env,
    h: u32,
    buf: u32,
    cap: u32,
    wide: bool,
    then: impl FnOnce(&mut Env, u32) -> Ret + 'static,
) -> Ret {
    let m = (h, wm::GETTEXT, cap, buf);
    super::msgconv::send(env, m, wide, super::msgconv::by_send, Box::new(then))
}

/// GetDlgItemInt's parse: spaces, an optional minus sign (signed only),
/// decimal digits, trailing spaces; None when anything else is there or
/// the value does not fit.
fn parse_int(t: &[u16], signed: bool) -> Option<u32> {
    let s = String::from_utf16_lossy(t);
    let s = s.trim_matches(' ');
    let (neg, digits) = match s.strip_prefix('-') {
        Some(d) if signed => (true, d),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let v: i64 = digits.parse().ok()?;
    if signed {
        let v = if neg { -v } else { v };
        i32::try_from(v).ok().map(|v| v as u32)
    } else {
        u32::try_from(v).ok()
    }
}

fn get_item_int(env: &mut Env, dlg: u32, id: u32, ok: u32, signed: bool) -> Ret {
    let c = dlg_item(env, dlg, id);
    if ok != 0 {
        env.mem.poke_u32(ok, 0);
    }
    if c == 0 {
        return Ret::Value(0);
    }
    let cap = 64;
    let at = user32::scratch(env, cap * 2);
    get_text(env, c, at, cap, true, move |env, n| {
        let t = read_str(&env.mem, at, n as i32, true).unwrap_or_default();
        user32::scratch_release(env, cap * 2);
        match parse_int(&t, signed) {
            Some(v) => {
                if ok != 0 {
                    env.mem.poke_u32(ok, 1);
                }
                Ret::Value(v)
            }
            None => Ret::Value(0),
        }
    })
}

fn set_item_int(env: &mut Env, dlg: u32, id: u32, v: u32, signed: bool) -> Ret {
    let c = dlg_item(env, dlg, id);
    if c == 0 {
        return Ret::Value(0);
    }
    let s = if signed {
        (v as i32).to_string()
    } else {
        v.to_string()
    };
    let u: Vec<u16> = s.encode_utf16().collect();
    let size = (u.len() as u32 + 1) * 2;
    let at = user32::scratch(env, size);
    gs::write_str(&mut env.mem, at, u.len() as u32 + 1, &u, true);
    set_text(env, c, at, true, move |env, _| {
        user32::scratch_release(env, size);
        Ret::Value(1)
    })
}

fn item_or_fail(env: &mut Env, dlg: u32, id: u32) -> u32 {
    let c = dlg_item(env, dlg, id);
    if c == 0 {
        env.last_error = ERROR_CONTROL_ID_NOT_FOUND;
    }
    c
}

fn map_dialog_rect(env: &mut Env, dlg: u32, r: u32) -> bool {
    let Some(d) = info(env, dlg).cloned() else {
        env.last_error = ERROR_INVALID_WINDOW_HANDLE;
        return false;
    };
    let Some(x) = read_rect(&env.mem, r) else {
        return false;
    };
    let (bx, by) = d.base;
    write_rect(
        &mut env.mem,
        r,
        Rect::new(
            muldiv(x.left, bx, 4),
            muldiv(x.top, by, 8),
            muldiv(x.right, bx, 4),
            muldiv(x.bottom, by, 8),
        ),
    )
}

fn is_dialog_message_api(env: &mut Env, dlg: u32, msg: u32) -> Ret {
    let Some(m) = user32::read_msg(env, msg) else {
        return Ret::Value(0);
    };
    is_dialog_message(env, dlg, m, Box::new(|_, mine| Ret::Value(mine as u32)))
}

/// DlgDirList: a spec naming a directory makes it the current one; the
/// list box (if any) gets its entries (LB_DIR), the static control the
/// current directory, and the caller's buffer keeps only the pattern.
#[allow(clippy::too_many_arguments)]
fn dlg_dir_list(
    env: &mut Env,
    dlg: u32,
    spec: u32,
    list: i32,
    stat: i32,
    attrs: u32,
    wide: bool,
) -> Ret {
    let s = if spec == 0 {
        String::from("*.*")
    } else {
        String::from_utf16_lossy(&read_str(&env.mem, spec, -1, wide).unwrap_or_default())
    };
    let (dir, pattern) = match s.rfind(['\\', '/', ':']) {
        Some(i) => (Some(s[..=i].to_string()), s[i + 1..].to_string()),
        None => (None, s.clone()),
    };
    let pattern = if pattern.is_empty() {
        "*.*".to_string()
    } else {
        pattern
    };
    // A directory alone (no pattern) is also a directory to enter.
    let (dir, pattern) = match dir {
        None if env.drives.resolve(&pattern).is_ok_and(|h| h.is_dir()) => {
            (Some(pattern), "*.*".to_string())
        }
        d => (d, pattern),
    };
    if let Some(d) = dir {
        if env.drives.set_cwd(&d).is_err() {
            env.last_error = 3; // ERROR_PATH_NOT_FOUND
            return Ret::Value(0);
        }
    }
    if spec != 0 {
        let u: Vec<u16> = pattern.encode_utf16().collect();
        gs::write_str(&mut env.mem, spec, u.len() as u32 + 1, &u, wide);
    }
    let names = super::listbox::dir_entries(env, &pattern, attrs);
    let lb = if list != 0 {
        dlg_item(env, dlg, list as u32)
    } else {
        0
    };
    let st = if stat != 0 {
        dlg_item(env, dlg, stat as u32)
    } else {
        0
    };
    if lb != 0 {
        let c = env.desktop.controls.entry(lb).or_default();
        c.list.clear();
        c.list.items = names.into_iter().map(super::listbox::Item::text).collect();
        env.desktop.invalidate(lb, None, true);
    }
    if st == 0 {
        return Ret::Value(1);
    }
    let cwd: Vec<u16> = env.drives.cwd().encode_utf16().collect();
    let size = (cwd.len() as u32 + 1) * 2;
    let at = user32::scratch(env, size);
    gs::write_str(&mut env.mem, at, cwd.len() as u32 + 1, &cwd, true);
    set_text(env, st, at, true, move |env, _| {
        user32::scratch_release(env, size);
        Ret::Value(1)
    })
}

/// DlgDirSelectEx: the list box's selection into the buffer: a directory
/// `[name]` as `name\` and a drive `[-c-]` as `c:` (TRUE), a file's name
/// (FALSE).
fn dlg_dir_select(env: &mut Env, dlg: u32, buf: u32, n: i32, list: i32, wide: bool) -> bool {
    let lb = dlg_item(env, dlg, list as u32);
    let Some(c) = env.desktop.controls.get(&lb) else {
        return false;
    };
    let Some(t) = c
        .list
        .sel
        .and_then(|i| c.list.items.get(i))
        .map(|t| t.text.clone())
    else {
        return false;
    };
    let t = String::from_utf16_lossy(&t);
    let (out, is_dir) = match t.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
        Some(d) => match d.strip_prefix('-').and_then(|x| x.strip_suffix('-')) {
            Some(drive) => (format!("{drive}:"), true),
            None => (format!("{d}\\"), true),
        },
        None => (t, false),
    };
    if n > 0 {
        let u: Vec<u16> = out.encode_utf16().collect();
        gs::write_str(&mut env.mem, buf, n as u32, &u, wide);
    }
    is_dir
}

/// Whether a DialogBox call is being made again after its loop blocked.
fn resuming(env: &Env) -> bool {
    env.retrying && !env.desktop.modal.is_empty()
}

crate::dll! { "user32.dll";
    stdcall fn DialogBoxParamA(env, inst: u32, name: u32, owner: u32, proc_: u32, param: u32) -> Ret {
        if resuming(env) { return modal_step(env); }
        let t = resource_template(env, inst, name, false);
        dialog_box(env, t, spec(inst, owner, proc_, param, false, true))
    }
    stdcall fn DialogBoxParamW(env, inst: u32, name: u32, owner: u32, proc_: u32, param: u32) -> Ret {
        if resuming(env) { return modal_step(env); }
        let t = resource_template(env, inst, name, true);
        dialog_box(env, t, spec(inst, owner, proc_, param, true, true))
    }
    stdcall fn DialogBoxIndirectParamA(env, inst: u32, tpl: u32, owner: u32, proc_: u32, param: u32) -> Ret {
        if resuming(env) { return modal_step(env); }
        let t = memory_template(env, tpl);
        dialog_box(env, t, spec(inst, owner, proc_, param, false, true))
    }
    stdcall fn DialogBoxIndirectParamW(env, inst: u32, tpl: u32, owner: u32, proc_: u32, param: u32) -> Ret {
        if resuming(env) { return modal_step(env); }
        let t = memory_template(env, tpl);
        dialog_box(env, t, spec(inst, owner, proc_, param, true, true))
    }
    stdcall fn CreateDialogParamA(env, inst: u32, name: u32, owner: u32, proc_: u32, param: u32) -> Ret {
        let t = resource_template(env, inst, name, false);
        create_dialog(env, t, spec(inst, owner, proc_, param, false, false))
    }
    stdcall fn CreateDialogParamW(env, inst: u32, name: u32, owner: u32, proc_: u32, param: u32) -> Ret {
        let t = resource_template(env, inst, name, true);
        create_dialog(env, t, spec(inst, owner, proc_, param, true, false))
    }
    stdcall fn CreateDialogIndirectParamA(env, inst: u32, tpl: u32, owner: u32, proc_: u32, param: u32) -> Ret {
        let t = memory_template(env, tpl);
        create_dialog(env, t, spec(inst, owner, proc_, param, false, false))
    }
    stdcall fn CreateDialogIndirectParamW(env, inst: u32, tpl: u32, owner: u32, proc_: u32, param: u32) -> Ret {
        let t = memory_template(env, tpl);
        create_dialog(env, t, spec(inst, owner, proc_, param, true, false))
    }
    stdcall fn EndDialog(env, h: u32, result: u32) -> Ret { end_dialog(env, h, result) }
    stdcall fn DefDlgProcA(env, h: u32, msg: u32, wp: u32, lp: u32) -> Ret { def_dlg_proc(env, h, msg, wp, lp, false) }
    stdcall fn DefDlgProcW(env, h: u32, msg: u32, wp: u32, lp: u32) -> Ret { def_dlg_proc(env, h, msg, wp, lp, true) }
    stdcall fn IsDialogMessageA(env, dlg: u32, msg: u32) -> Ret { is_dialog_message_api(env, dlg, msg) }
    stdcall fn IsDialogMessageW(env, dlg: u32, msg: u32) -> Ret { is_dialog_message_api(env, dlg, msg) }
    stdcall fn IsDialogMessage(env, dlg: u32, msg: u32) -> Ret { is_dialog_message_api(env, dlg, msg) }
    stdcall fn GetDlgItem(env, dlg: u32, id: u32) -> u32 { item_or_fail(env, dlg, id) }
    stdcall fn GetDlgCtrlID(env, h: u32) -> u32 { env.desktop.win(h).filter(|w| w.is_child()).map_or(0, |w| w.id) }
    stdcall fn GetNextDlgTabItem(env, dlg: u32, ctl: u32, prev: bool) -> u32 { next_tab_item(env, dlg, ctl, prev) }
    stdcall fn GetNextDlgGroupItem(env, dlg: u32, ctl: u32, prev: bool) -> u32 { next_group_item(env, dlg, ctl, prev) }
    stdcall fn SetDlgItemTextA(env, dlg: u32, id: u32, s: u32) -> Ret {
        let c = item_or_fail(env, dlg, id);
        if c == 0 { return Ret::Value(0); }
        set_text(env, c, s, false, |_, r| Ret::Value(r))
    }
    stdcall fn SetDlgItemTextW(env, dlg: u32, id: u32, s: u32) -> Ret {
        let c = item_or_fail(env, dlg, id);
        if c == 0 { return Ret::Value(0); }
        set_text(env, c, s, true, |_, r| Ret::Value(r))
    }
    stdcall fn GetDlgItemTextA(env, dlg: u32, id: u32, buf: u32, n: i32) -> Ret {
        let c = item_or_fail(env, dlg, id);
        if c == 0 || n <= 0 { if n > 0 { env.mem.poke(buf, &[0]); } return Ret::Value(0); }
        get_text(env, c, buf, n as u32, false, |_, r| Ret::Value(r))
    }
    stdcall fn GetDlgItemTextW(env, dlg: u32, id: u32, buf: u32, n: i32) -> Ret {
        let c = item_or_fail(env, dlg, id);
        if c == 0 || n <= 0 { if n > 0 { env.mem.poke(buf, &[0, 0]); } return Ret::Value(0); }
        get_text(env, c, buf, n as u32, true, |_, r| Ret::Value(r))
    }
    stdcall fn GetDlgItemInt(env, dlg: u32, id: u32, ok: u32, signed: bool) -> Ret { get_item_int(env, dlg, id, ok, signed) }
    stdcall fn SetDlgItemInt(env, dlg: u32, id: u32, v: u32, signed: bool) -> Ret { set_item_int(env, dlg, id, v, signed) }
    stdcall fn CheckDlgButton(env, dlg: u32, id: u32, check: u32) -> Ret {
        let c = item_or_fail(env, dlg, id);
        if c == 0 { return Ret::Value(0); }
        user32::send(env, c, bm::SETCHECK, check, 0, |_, _| Ret::Value(1))
    }
    stdcall fn IsDlgButtonChecked(env, dlg: u32, id: u32) -> Ret {
        let c = item_or_fail(env, dlg, id);
        user32::send(env, c, bm::GETCHECK, 0, 0, |_, r| Ret::Value(r))
    }
    stdcall fn CheckRadioButton(env, dlg: u32, first: u32, last: u32, check: u32) -> Ret {
        let ids: std::collections::VecDeque<(u32, u32, u32, u32)> = (first..=last.min(first.saturating_add(1024)))
            .filter_map(|id| { let c = dlg_item(env, dlg, id); (c != 0).then_some((c, bm::SETCHECK, (id == check) as u32, 0)) })
            .collect();
        user32::send_all(env, ids, Box::new(|_| Ret::Value(1)))
    }
    stdcall fn SendDlgItemMessageA(env, dlg: u32, id: u32, msg: u32, wp: u32, lp: u32) -> Ret {
        let c = item_or_fail(env, dlg, id);
        if c == 0 { return Ret::Value(0); }
        super::msgconv::send_message(env, (c, msg, wp, lp), false)
    }
    stdcall fn SendDlgItemMessageW(env, dlg: u32, id: u32, msg: u32, wp: u32, lp: u32) -> Ret {
        let c = item_or_fail(env, dlg, id);
        if c == 0 { return Ret::Value(0); }
        super::msgconv::send_message(env, (c, msg, wp, lp), true)
    }
    stdcall fn DlgDirListA(env, dlg: u32, spec: u32, list: i32, stat: i32, attrs: u32) -> Ret { dlg_dir_list(env, dlg, spec, list, stat, attrs, false) }
    stdcall fn DlgDirListW(env, dlg: u32, spec: u32, list: i32, stat: i32, attrs: u32) -> Ret { dlg_dir_list(env, dlg, spec, list, stat, attrs, true) }
    stdcall fn DlgDirSelectExA(env, dlg: u32, buf: u32, n: i32, list: i32) -> bool { dlg_dir_select(env, dlg, buf, n, list, false) }
    stdcall fn DlgDirSelectExW(env, dlg: u32, buf: u32, n: i32, list: i32) -> bool { dlg_dir_select(env, dlg, buf, n, list, true) }
    stdcall fn GetDialogBaseUnits(env) -> u32 { let (x, y) = base_units(0, 400); (x as u32) | (y as u32) << 16 }
    stdcall fn MapDialogRect(env, dlg: u32, r: u32) -> bool { map_dialog_rect(env, dlg, r) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A DLGTEMPLATE with DS_SETFONT and two items, built as the
    /// documentation lays it out.
    fn sample() -> Vec<u8> {
        let mut b = Vec::new();
        let w16 = |b: &mut Vec<u8>, v: u16| b.extend(v.to_le_bytes());
        let sz = |b: &mut Vec<u8>, s: &str| {
            for u in s.encode_utf16() {
                b.extend(u.to_le_bytes());
            }
            b.extend([0, 0]);
        };
        b.extend((0x80C8_0040u32 | ds::MODALFRAME).to_le_bytes());
        b.extend(0u32.to_le_bytes());
        w16(&mut b, 2);
        for v in [10u16, 20, 100, 50] {
            w16(&mut b, v);
        }
        w16(&mut b, 0); // no menu
        w16(&mut b, 0); // the dialog class
        sz(&mut b, "Hi");
        w16(&mut b, 8);
        sz(&mut b, "MS Shell Dlg");
        for (id, class, text) in [(1u16, 0x80u16, "OK"), (100, 0x81, "")] {
            while b.len() % 4 != 0 {
                b.push(0);
            }
            b.extend(0x5001_0000u32.to_le_bytes());
            b.extend(0u32.to_le_bytes());
            for v in [5u16, 6, 40, 14] {
                w16(&mut b, v);
            }
            w16(&mut b, id);
            w16(&mut b, 0xFFFF);
            w16(&mut b, class);
            sz(&mut b, text);
            w16(&mut b, 0);
        }
        b
    }

    #[test]
    fn templates_parse_and_malformed_ones_are_named() {
        let b = sample();
        let t = parse(&b).unwrap();
        assert_eq!(t.title, "Hi".encode_utf16().collect::<Vec<_>>());
        assert_eq!(t.rect, (10, 20, 100, 50));
        assert_eq!(t.font.as_ref().map(|f| f.0), Some(8));
        assert_eq!(t.items.len(), 2);
        assert_eq!(t.items[0].class, ResId::Name("BUTTON".into()));
        assert_eq!(t.items[1].class, ResId::Name("EDIT".into()));
        assert_eq!(t.items[1].id, 100);
        // Every truncation is an error with a reason, never a panic.
        for n in 0..b.len() - 1 {
            assert!(parse(&b[..n]).is_err(), "{n} bytes");
        }
        let mut bad = b.clone();
        let at = bad.len() - 6; // item 2's class ordinal
        bad[at..at + 2].copy_from_slice(&0x99u16.to_le_bytes());
        assert!(parse(&bad).unwrap_err().contains("class ordinal"));
    }

    #[test]
    fn dialog_units_follow_the_font() {
        // Our 8-point font: 6 x 13 pixels, so 4 x 8 units are 6 x 13 pixels.
        assert_eq!(base_units(-11, 400), (6, 13));
        assert_eq!(to_px((6, 13), (10, 20, 100, 50)), (15, 33, 150, 81));
        assert_eq!(muldiv(7, 6, 4), 11); // 10.5 rounds up
        assert_eq!(muldiv(-7, 6, 4), -11);
        assert_eq!(parse_int(&gs::units(" 42 "), false), Some(42));
        assert_eq!(parse_int(&gs::units("-5"), true), Some(-5i32 as u32));
        assert_eq!(parse_int(&gs::units("-5"), false), None);
        assert_eq!(parse_int(&gs::units("4x"), false), None);
    }
}
