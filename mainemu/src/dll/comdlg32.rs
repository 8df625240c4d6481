//! COMDLG32.dll: the common dialogs. GetFileTitle is modelled; the dialogs
//! themselves (GetOpenFileName, GetSaveFileName, PrintDlg, ChooseFont,
//! FindText, ReplaceText) are named stubs until user32 has dialogs.
//!
//! Owns these calls' conventions; must not touch host state.

use super::gui_structs::{read_str, write_str};
use super::Env;

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

crate::dll! { "comdlg32.dll";
    stdcall fn GetFileTitleW(env, file: u32, buf: u32, cap: u32) -> i32 { file_title(env, file, buf, cap as u16) as i32 }
}
