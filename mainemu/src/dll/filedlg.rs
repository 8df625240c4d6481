//! The Open and Save As dialog behind comdlg32's GetOpenFileName and
//! GetSaveFileName: a host-side modal
//! dialog (an internal `FileDlgWndProc` thunk, like the EDIT class's) with
//! the Windows 98 classic look: caption "Open" (or the caller's title), a
//! "File name:" EDIT control (the real `dll::edit` class, so typing,
//! Backspace and the caret work as in any edit), a list of the files in
//! the current directory matching the selected filter, OK and Cancel
//! buttons and the directory listed. Escape, a click on Cancel or the close
//! button cancel; Enter or a click on OK accepts the typed name (a click on
//! a listed file copies its name into the edit); a directory name changes
//! the directory listed; a name with wildcards becomes the filter. Save As
//! takes a name that does not exist (the default extension appended to a
//! name without one); OFN_OVERWRITEPROMPT is not asked (no message box).
//!
//! The modal loop: GetOpenFileName does not return until the dialog ends.
//! Each step takes the next message from the thread's queue (the same
//! order as GetMessage), drops input aimed at other windows (the owner is
//! disabled while a modal dialog is up), handles Escape and Enter as the
//! dialog manager does, translates keys, and dispatches; with nothing to
//! deliver the call blocks on the guest clock like GetMessage (and the run
//! ends idle when nothing can ever come) and is made again on wake-up. So
//! the dialog is driven by guest time and scripted input only.
//!
//! Not modelled: the caller's template and hook (OFN_ENABLETEMPLATE,
//! OFN_ENABLEHOOK: the hook procedure is never called), the explorer
//! layout, multiple selection, the file-type and drive combo boxes, list
//! scrolling (the first rows show), Tab between controls.
//!
//! Owns the dialog's state, layout, pixels and modal loop. It must not read
//! or write OPENFILENAME (comdlg32 does) or hold window-manager state
//! (desktop does).

use super::edit::EditText;
use super::{user32, Env, Ret};
use crate::desktop::metrics::{self, color, ws};
use crate::desktop::{nc, wm, Window};
use crate::gdi::raster::Paint;
use crate::gdi::region::{Rect, Region};

/// What the caller asked for (read from OPENFILENAME by comdlg32).
#[derive(Clone, Debug, Default)]
pub struct Request {
    pub owner: u32,
    pub title: Vec<u16>,
    /// The initial file name (a name with wildcards is the initial filter).
    pub file: Vec<u16>,
    /// The selected filter's pattern (`*.txt`), `*.*` without one.
    pub filter: String,
    /// The directory listed (guest path); empty: the current directory.
    pub dir: String,
    pub must_exist: bool,
    /// Appended (after a '.') to a name without extension that is not found
    /// (Open) or to any name without extension (Save As).
    pub def_ext: Option<String>,
    /// GetSaveFileName: caption "Save As", the name need not exist.
    pub save: bool,
}

/// An open dialog (kept in `Desktop::file_dialog` while it is up).
#[derive(Clone, Debug)]
pub struct FileDialog {
    pub hwnd: u32,
    pub edit: u32,
    pub owner: u32,
    pub filter: String,
    pub dir: String,
    pub files: Vec<Vec<u16>>,
    pub sel: Option<usize>,
    pub must_exist: bool,
    pub def_ext: Option<String>,
    pub save: bool,
    /// Set when the dialog ends: the chosen full path, or None (cancelled).
    pub result: Option<Option<String>>,
}

/// What GetOpenFileName does once the dialog is gone, with the chosen path.
pub type Done = Box<dyn FnOnce(&mut Env, Option<String>) -> Ret>;

/// Client-area layout (client coordinates).
const CLIENT: (i32, i32) = (312, 200);
const EDIT: Rect = Rect::new(8, 22, 208, 42);
const LIST: Rect = Rect::new(8, 66, 208, 174);
const ROW: i32 = 13;
const OK: Rect = Rect::new(222, 22, 302, 45);
const CANCEL: Rect = Rect::new(222, 52, 302, 75);
const STYLE: u32 = ws::POPUP | ws::CAPTION | ws::SYSMENU | 0x80; // DS_MODALFRAME
const EDIT_ID: u32 = 0x480; // edt1, the name common dialogs give it

mod internal {
    crate::dll! { "comdlg32.dll";
        stdcall fn FileDlgWndProc(env, h: u32, msg: u32, wp: u32, lp: u32) -> super::Ret { super::dlg_proc(env, h, msg, wp, lp) }
    }
}

fn wndproc(env: &mut Env) -> u32 {
    internal::DLL.guest_addr(env, 0)
}

fn units(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
}

fn has_wildcard(s: &str) -> bool {
    s.contains(['*', '?'])
}

/// The names of the files (not directories) in guest directory `dir`
/// matching `pattern`, sorted; empty when the directory cannot be read.
fn list_files(env: &Env, dir: &str, pattern: &str) -> Vec<Vec<u16>> {
    let Ok(host) = env.drives.resolve(dir) else {
        return Vec::new();
    };
    let patterns: Vec<&str> = pattern.split(';').map(str::trim).collect();
    crate::files::list(&host, "*", false)
        .unwrap_or_default()
        .into_iter()
        .filter(|e| e.attrs & 0x10 == 0)
        .filter(|e| patterns.iter().any(|p| crate::files::wildcard(p, &e.name)))
        .map(|e| units(&e.name))
        .collect()
}

/// `name` relative to `dir` (absolute names stay), lexically normalized.
fn join(env: &Env, dir: &str, name: &str) -> String {
    let full = if name.contains(':') || name.starts_with('\\') || name.starts_with('/') {
        name.to_string()
    } else if dir.ends_with('\\') {
        format!("{dir}{name}")
    } else {
        format!("{dir}\\{name}")
    };
    env.drives.full_path(&full).unwrap_or(full)
}

/// GetOpenFileName's dialog: creates and shows it on the first call, then
/// runs the modal loop; `done` gets the chosen path (None: cancelled) once
/// the dialog is gone. A call made again after a wait continues the loop.
pub fn run(env: &mut Env, req: impl FnOnce(&mut Env) -> Request, done: Done) -> Ret {
    if env.desktop.file_dialog.is_some() {
        if env.retrying {
            return step(env, done);
        }
        // A window procedure asking for a second file dialog while one is up.
        return Ret::Stop(
            "comdlg32: a file dialog opened while another is up is not modelled".into(),
        );
    }
    let req = req(env);
    let dir = if req.dir.is_empty() {
        env.drives.cwd()
    } else {
        join(env, &env.drives.cwd(), &req.dir)
    };
    let file = String::from_utf16_lossy(&req.file);
    let (filter, initial) = if has_wildcard(&file) {
        (file.clone(), Vec::new())
    } else {
        (req.filter.clone(), req.file.clone())
    };
    let files = list_files(env, &dir, &filter);
    let title = if req.title.is_empty() {
        units(if req.save { "Save As" } else { "Open" })
    } else {
        req.title.clone()
    };
    // Centred over the owner (on the screen without one), kept on screen.
    let frame = metrics::adjust(
        Rect::new(0, 0, CLIENT.0, CLIENT.1),
        STYLE,
        ws::EX_DLGMODALFRAME,
        false,
    );
    let d = &mut env.desktop;
    let over = d.win(req.owner).map_or(d.screen_rect(), |w| w.rect);
    let (w, h) = (frame.width(), frame.height());
    let sr = d.screen_rect();
    let x = (over.left + (over.width() - w) / 2).clamp(0, (sr.right - w).max(0));
    let y = (over.top + (over.height() - h) / 2).clamp(0, (sr.bottom - h).max(0));
    let rect = Rect::new(x, y, x + w, y + h);
    let dlg_class = user32::ensure_builtin(env, &units("#32770")).unwrap_or(0);
    let edit_class = user32::ensure_builtin(env, &units("EDIT")).unwrap_or(0);
    let proc_ = wndproc(env);
    let edit_proc = super::edit::wndproc(env);
    #[allow(clippy::too_many_arguments)]
    fn bare(
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
        // 30 extra bytes, as the dialog class's window extra.
        Window {
            extra: vec![0; 30],
            ..Window::new(
                class, parent, owner, style, ex_style, rect, title, wndproc, id,
            )
        }
    }
    let tid = env.thread_id();
    let d = &mut env.desktop;
    let hwnd = d.add_window(bare(
        dlg_class,
        0,
        req.owner,
        STYLE,
        ws::EX_DLGMODALFRAME,
        rect,
        title,
        proc_,
        0,
    ));
    let c = d.client_rect(hwnd).unwrap_or_default();
    let er = Rect::new(
        c.left + EDIT.left,
        c.top + EDIT.top,
        c.left + EDIT.right,
        c.top + EDIT.bottom,
    );
    let edit = d.add_window(bare(
        edit_class,
        hwnd,
        0,
        ws::CHILD | ws::VISIBLE | 0x0001_0000 | 0x80, // WS_TABSTOP | ES_AUTOHSCROLL
        ws::EX_CLIENTEDGE,
        er,
        Vec::new(),
        edit_proc,
        EDIT_ID,
    ));
    // The dialog's windows belong to the thread that asked for it.
    for h in [hwnd, edit] {
        if let Some(w) = d.win_mut(h) {
            w.thread = tid;
        }
    }
    let n = initial.len();
    d.edits.insert(
        edit,
        EditText {
            text: initial,
            caret: n,
            anchor: 0,
            limit: 260,
            ..Default::default()
        },
    );
    d.file_dialog = Some(FileDialog {
        hwnd,
        edit,
        owner: req.owner,
        filter,
        dir,
        files,
        sel: None,
        must_exist: req.must_exist,
        def_ext: req.def_ext,
        save: req.save,
        result: None,
    });
    user32::show_window(env, hwnd, 5, Box::new(move |env| step(env, done)))
}

/// Whether `h` is the dialog or one of its controls.
fn ours(env: &Env, h: u32) -> bool {
    env.desktop
        .file_dialog
        .as_ref()
        .is_some_and(|f| h != 0 && env.desktop.top_level(h) == f.hwnd)
}

/// One turn of the modal loop (see the module header).
fn step(env: &mut Env, done: Done) -> Ret {
    loop {
        let Some(f) = env.desktop.file_dialog.as_ref() else {
            return done(env, None);
        };
        if let Some(r) = f.result.clone() {
            return finish(env, r, done);
        }
        let m = match user32::modal_next(env) {
            user32::ModalNext::Msg(m) => m,
            user32::ModalNext::Wait(r) => return r,
            // The loop ends and the quit message stays for the caller's loop.
            user32::ModalNext::Quit => {
                end(env, None);
                continue;
            }
        };
        // Keys, mouse and non-client mouse messages (0xA0..0xAD).
        let input = (wm::KEYDOWN..=0x108).contains(&m.message)
            || (wm::MOUSEMOVE..=0x20E).contains(&m.message)
            || (0xA0..=0xAD).contains(&m.message);
        if input && !ours(env, m.hwnd) {
            continue;
        }
        // Alt+F4 closes the dialog (not the focused control).
        if m.message == wm::SYSKEYDOWN && m.wparam == 0x73 && m.lparam & (1 << 29) != 0 {
            end(env, None);
            continue;
        }
        if m.message == wm::KEYDOWN {
            match m.wparam {
                0x1B => {
                    end(env, None);
                    continue;
                }
                0x0D => {
                    accept(env);
                    continue;
                }
                _ => {
                    user32::translate(env, &m);
                }
            }
        }
        return user32::dispatch_msg(env, &m, move |env, _| step(env, done));
    }
}

fn end(env: &mut Env, r: Option<String>) {
    if let Some(f) = env.desktop.file_dialog.as_mut() {
        f.result = Some(r);
    }
}

/// The dialog is gone: destroy it, give the owner back its activation, then `done`.
fn finish(env: &mut Env, r: Option<String>, done: Done) -> Ret {
    let Some(f) = env.desktop.file_dialog.take() else {
        return done(env, r);
    };
    let owner = f.owner;
    user32::destroy_then(
        env,
        f.hwnd,
        Box::new(move |env| {
            if env.desktop.win(owner).is_some() {
                user32::activate(env, owner, Box::new(move |env| done(env, r)))
            } else {
                done(env, r)
            }
        }),
    )
}

/// OK (or Enter): the typed name is a file (the dialog ends with its
/// path), a directory (listed instead), or a pattern (the new filter).
fn accept(env: &mut Env) {
    let Some(f) = env.desktop.file_dialog.clone() else {
        return;
    };
    let name = env
        .desktop
        .edits
        .get(&f.edit)
        .map(|e| String::from_utf16_lossy(&e.text))
        .unwrap_or_default();
    let name = name.trim().to_string();
    if name.is_empty() {
        return;
    }
    if has_wildcard(&name) {
        let files = list_files(env, &f.dir, &name);
        relist(env, f.dir.clone(), name, files);
        return;
    }
    let full = join(env, &f.dir, &name);
    let host = env.drives.resolve(&full).ok();
    if host.as_ref().is_some_and(|h| h.is_dir()) {
        let files = list_files(env, &full, &f.filter);
        set_edit(env, f.edit, Vec::new());
        relist(env, full, f.filter.clone(), files);
        return;
    }
    let last = name.rsplit(['\\', '/']).next().unwrap_or("");
    if f.save {
        // Save As: the default extension on a name without one; the path
        // must be one the run may write (inside a writable drive).
        let chosen = match f.def_ext.as_ref().filter(|_| !last.contains('.')) {
            Some(ext) => join(env, &f.dir, &format!("{name}.{ext}")),
            None => full,
        };
        if env.drives.resolve_write(&chosen).is_ok() {
            end(env, Some(chosen));
        }
        return;
    }
    if host.as_ref().is_some_and(|h| h.is_file()) {
        end(env, Some(full));
        return;
    }
    // Not found: with the default extension, or (when it need not exist) as typed.
    if let Some(ext) = f.def_ext.as_ref().filter(|_| !last.contains('.')) {
        let with = join(env, &f.dir, &format!("{name}.{ext}"));
        if env.drives.resolve(&with).is_ok_and(|h| h.is_file()) {
            end(env, Some(with));
            return;
        }
    }
    if !f.must_exist {
        end(env, Some(full));
    }
}

fn relist(env: &mut Env, dir: String, filter: String, files: Vec<Vec<u16>>) {
    let Some(f) = env.desktop.file_dialog.as_mut() else {
        return;
    };
    f.dir = dir;
    f.filter = filter;
    f.files = files;
    f.sel = None;
    let h = f.hwnd;
    env.desktop.invalidate(h, None, true);
}

fn set_edit(env: &mut Env, edit: u32, text: Vec<u16>) {
    if let Some(e) = env.desktop.edits.get_mut(&edit) {
        e.caret = text.len();
        e.anchor = 0;
        e.text = text;
    }
    env.desktop.invalidate(edit, None, true);
}

fn dlg_proc(env: &mut Env, h: u32, msg: u32, wp: u32, lp: u32) -> Ret {
    match msg {
        wm::PAINT => {
            paint(env, h);
            Ret::Value(0)
        }
        wm::ERASEBKGND => Ret::Value(1),
        wm::ACTIVATE if wp & 0xFFFF != 0 => {
            let edit = env.desktop.file_dialog.as_ref().map_or(0, |f| f.edit);
            user32::set_focus(env, edit, |_, _| Ret::Value(0))
        }
        wm::CLOSE => {
            end(env, None);
            Ret::Value(0)
        }
        wm::LBUTTONDOWN => {
            let (x, y) = (lp as i16 as i32, (lp >> 16) as i16 as i32);
            if OK.contains(x, y) {
                accept(env);
            } else if CANCEL.contains(x, y) {
                end(env, None);
            } else if LIST.contains(x, y) {
                let Some(f) = env.desktop.file_dialog.as_mut() else {
                    return Ret::Value(0);
                };
                let row = ((y - LIST.top - 2) / ROW).max(0) as usize;
                if let Some(name) = f.files.get(row).cloned() {
                    f.sel = Some(row);
                    let edit = f.edit;
                    set_edit(env, edit, name);
                    env.desktop.invalidate(h, Some(LIST), false);
                }
            }
            Ret::Value(0)
        }
        _ => user32::def_window_proc(env, h, msg, wp, lp, true),
    }
}

/// Draws the client area: face colour, labels, the file list, the buttons.
fn paint(env: &mut Env, h: u32) {
    if let Some(w) = env.desktop.win_mut(h) {
        w.update = Region::empty();
        w.erase = false;
    }
    let Some(f) = env.desktop.file_dialog.clone() else {
        return;
    };
    if !env.desktop.really_visible(h) {
        return;
    }
    let hdc = user32::window_dc(env, h, false, None);
    env.desktop.gdi.draw(&mut env.mem, hdc, |t| {
        let (ox, oy) = t.pt(0, 0);
        let mut cv = t.canvas();
        let at = |r: Rect| Rect::new(ox + r.left, oy + r.top, ox + r.right, oy + r.bottom);
        let px = |cv: &crate::gdi::raster::Canvas, i: u32| {
            Paint::Solid(cv.bits.from_color(metrics::sys_color(i)))
        };
        let face = px(&cv, color::BTNFACE);
        cv.fill_rect(at(Rect::new(0, 0, CLIENT.0, CLIENT.1)), &face);
        let text = metrics::sys_color(color::BTNTEXT);
        nc::label(&mut cv, ox + 8, oy + 6, &units("File &name:"), text, false);
        nc::label(&mut cv, ox + 8, oy + 50, &units("&Files:"), text, false);
        let list = at(LIST);
        let white = px(&cv, color::WINDOW);
        cv.fill_rect(list, &white);
        nc::sunken(&mut cv, list);
        let inner = Rect::new(list.left + 2, list.top + 2, list.right - 2, list.bottom - 2);
        let rows = (inner.height() / ROW) as usize;
        let hl = px(&cv, color::HIGHLIGHT);
        for (i, name) in f.files.iter().take(rows).enumerate() {
            let y = inner.top + i as i32 * ROW;
            let sel = f.sel == Some(i);
            if sel {
                cv.fill_rect(Rect::new(inner.left, y, inner.right, y + ROW), &hl);
            }
            let col = metrics::sys_color(if sel {
                color::HIGHLIGHTTEXT
            } else {
                color::WINDOWTEXT
            });
            let shown: Vec<u16> = name.iter().copied().take(32).collect();
            let ink = cv.bits.from_color(col);
            crate::gdi::font::Face::new(0, 400, false, false).draw(
                &mut cv,
                inner.left + 2,
                y,
                &shown,
                ink,
                None,
            );
        }
        for (r, label, default) in [(OK, "OK", true), (CANCEL, "Cancel", false)] {
            let r = at(r);
            if default {
                // The default button: a black frame around the raised face.
                let black = px(&cv, color::WINDOWFRAME);
                cv.fill_rect(r, &black);
                nc::button(
                    &mut cv,
                    Rect::new(r.left + 1, r.top + 1, r.right - 1, r.bottom - 1),
                    false,
                );
            } else {
                nc::button(&mut cv, r, false);
            }
            let l = units(label);
            let lw = nc::label_width(&l);
            nc::label(
                &mut cv,
                r.left + (r.width() - lw) / 2,
                r.top + (r.height() - 13) / 2,
                &l,
                text,
                false,
            );
        }
        let dir: Vec<u16> = units(&f.dir).into_iter().take(48).collect();
        nc::label(&mut cv, ox + 8, oy + 182, &dir, text, false);
    });
    env.desktop.gdi.delete_dc(hdc);
}
