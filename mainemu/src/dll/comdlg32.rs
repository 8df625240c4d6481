//! COMDLG32.dll: the common dialogs. GetFileTitle, GetOpenFileName and
//! GetSaveFileName (W and A) are modelled: the latter two read OPENFILENAME (owner, title,
//! filter and filter index, initial file and directory, OFN_FILEMUSTEXIST,
//! default extension), run the Open/Save As dialog (`dll::filedlg`) and write
//! the chosen path back (lpstrFile, nFileOffset, nFileExtension,
//! lpstrFileTitle); CommDlgExtendedError reports the last failure. The
//! other dialogs (PrintDlg, ChooseFont, FindText, ReplaceText) are named
//! stubs: a call stops the run.
//!
//! Owns these calls' conventions and the OPENFILENAME layout; must not
//! touch host state or draw (filedlg owns the dialog).

use super::filedlg::{self, Request};
use super::gui_structs::{read_str, write_str};
use super::{Env, Ret};

/// GetFileTitleW: the name after the last '\\', '/' or ':'; 0 on success,
/// the size needed (with the NUL) when `cap` is too small, -1 for a bad name.
fn file_title(env: &mut Env, file: u32, buf: u32, cap: u16) -> i16 {
    let Some(s) = read_str(&env.mem, file, -1, true) else {
        return -1;
    };
    let cut = s
        .iter()
        .rposition(|&u| u == b'\\' as u16 || u == b'/' as u16 || u == b':' as u16);
    let name = &s[cut.map_or(0, |i| i + 1)..];
    if name.is_empty() {
        return -1;
    }
    if (cap as usize) < name.len() + 1 {
        return (name.len() + 1) as i16;
    }
    write_str(&mut env.mem, buf, cap as u32, name, true);
    0
}

/// OPENFILENAME offsets (the same for W and A; 76 bytes without the
/// Windows 2000 tail, 88 with it).
mod ofn {
    pub const OWNER: u32 = 4;
    pub const FILTER: u32 = 12;
    pub const FILTER_INDEX: u32 = 24;
    pub const FILE: u32 = 28;
    pub const MAX_FILE: u32 = 32;
    pub const FILE_TITLE: u32 = 36;
    pub const MAX_FILE_TITLE: u32 = 40;
    pub const INITIAL_DIR: u32 = 44;
    pub const TITLE: u32 = 48;
    pub const FLAGS: u32 = 52;
    pub const FILE_OFFSET: u32 = 56;
    pub const FILE_EXTENSION: u32 = 58;
    pub const DEF_EXT: u32 = 60;
    pub const OFN_FILEMUSTEXIST: u32 = 0x1000;
}

/// CDERR_STRUCTSIZE, FNERR_BUFFERTOOSMALL (CommDlgExtendedError).
const CDERR_STRUCTSIZE: u32 = 0x0001;
const FNERR_BUFFERTOOSMALL: u32 = 0x3003;

/// The selected filter's pattern: lpstrFilter is pairs of NUL-terminated
/// (description, pattern) strings ending with an empty one; nFilterIndex
/// counts from 1 (0: the first).
fn filter_pattern(env: &Env, a: u32, index: u32, wide: bool) -> String {
    let mut at = a;
    let unit = if wide { 2 } else { 1 };
    let mut k = 0;
    while at != 0 && k < 64 {
        let Some(desc) = read_str(&env.mem, at, -1, wide) else {
            break;
        };
        if desc.is_empty() {
            break;
        }
        at += (desc.len() as u32 + 1) * unit;
        let Some(pat) = read_str(&env.mem, at, -1, wide) else {
            break;
        };
        at += (pat.len() as u32 + 1) * unit;
        k += 1;
        if k == index.max(1) {
            return String::from_utf16_lossy(&pat);
        }
    }
    "*.*".to_string()
}

/// GetOpenFileName (`save` false) and GetSaveFileName.
fn get_file_name(env: &mut Env, a: u32, wide: bool, save: bool) -> Ret {
    let r = move |env: &Env, o: u32| env.mem.peek_u32(a + o).unwrap_or(0);
    if env.desktop.file_dialog.is_none() && !matches!(r(env, 0), 76 | 88) {
        env.desktop.comdlg_error = CDERR_STRUCTSIZE;
        return Ret::Value(0);
    }
    let request = move |env: &mut Env| {
        let s = |env: &Env, o: u32| {
            read_str(&env.mem, r(env, o), -1, wide)
                .map(|v| String::from_utf16_lossy(&v))
                .unwrap_or_default()
        };
        Request {
            owner: r(env, ofn::OWNER),
            title: read_str(&env.mem, r(env, ofn::TITLE), -1, wide).unwrap_or_default(),
            file: read_str(&env.mem, r(env, ofn::FILE), -1, wide).unwrap_or_default(),
            filter: filter_pattern(env, r(env, ofn::FILTER), r(env, ofn::FILTER_INDEX), wide),
            dir: s(env, ofn::INITIAL_DIR),
            must_exist: r(env, ofn::FLAGS) & ofn::OFN_FILEMUSTEXIST != 0,
            def_ext: Some(s(env, ofn::DEF_EXT)).filter(|e| !e.is_empty()),
            save,
        }
    };
    let done = Box::new(move |env: &mut Env, path: Option<String>| {
        let Some(path) = path else {
            env.desktop.comdlg_error = 0;
            return Ret::Value(0);
        };
        let p: Vec<u16> = path.encode_utf16().collect();
        let (file, cap) = (r(env, ofn::FILE), r(env, ofn::MAX_FILE));
        if (cap as usize) < p.len() + 1 {
            // The size needed goes in the first two bytes (GetOpenFileName documentation).
            env.mem.poke(file, &((p.len() + 1) as u16).to_le_bytes());
            env.desktop.comdlg_error = FNERR_BUFFERTOOSMALL;
            return Ret::Value(0);
        }
        write_str(&mut env.mem, file, cap, &p, wide);
        let name_at = p
            .iter()
            .rposition(|&u| u == b'\\' as u16 || u == b'/' as u16)
            .map_or(0, |i| i + 1);
        let ext_at = p[name_at..]
            .iter()
            .rposition(|&u| u == b'.' as u16)
            .map_or(0, |i| name_at + i + 1);
        env.mem
            .poke(a + ofn::FILE_OFFSET, &(name_at as u16).to_le_bytes());
        env.mem
            .poke(a + ofn::FILE_EXTENSION, &(ext_at as u16).to_le_bytes());
        let title = r(env, ofn::FILE_TITLE);
        if title != 0 {
            let cap = r(env, ofn::MAX_FILE_TITLE);
            write_str(&mut env.mem, title, cap, &p[name_at..], wide);
        }
        env.desktop.comdlg_error = 0;
        Ret::Value(1)
    });
    filedlg::run(env, request, done)
}

crate::dll! { "comdlg32.dll";
    stdcall fn GetFileTitleW(env, file: u32, buf: u32, cap: u32) -> i32 { file_title(env, file, buf, cap as u16) as i32 }
    stdcall fn GetOpenFileNameW(env, ofn: u32) -> Ret { get_file_name(env, ofn, true, false) }
    stdcall fn GetOpenFileNameA(env, ofn: u32) -> Ret { get_file_name(env, ofn, false, false) }
    stdcall fn GetSaveFileNameW(env, ofn: u32) -> Ret { get_file_name(env, ofn, true, true) }
    stdcall fn GetSaveFileNameA(env, ofn: u32) -> Ret { get_file_name(env, ofn, false, true) }
    stdcall fn CommDlgExtendedError(env) -> u32 { env.desktop.comdlg_error }
}
