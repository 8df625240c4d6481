//! kernel32's volume enumeration: FindFirstVolume/FindNextVolume/
//! FindVolumeClose, GetVolumePathNamesForVolumeName, GetVolumeInformationByHandleW,
//! and the parsing of volume names (`\\?\Volume{GUID}\`, `\\?\C:\`,
//! `\\.\C:\`) into the drive they name.
//!
//! Owns the naming rule: every mapped drive is one volume whose GUID is
//! `4d454d55-0000-0000-0000-0000000000XX` (XX the letter's code), so names are
//! stable across runs and hosts. It must not touch host files: drives come
//! from `Env::drives`; file handles from `Env::handles`.

use crate::dll::Env;
use crate::files::err;
use crate::handles::Object;

/// The volume GUID path of drive `letter`, as GetVolumeNameForVolumeMountPoint gives it.
pub fn guid_name(letter: char) -> String {
    format!(
        "\\\\?\\Volume{{4d454d55-0000-0000-0000-0000000000{:02x}}}\\",
        letter as u32
    )
}

/// The mapped drive a volume root names: `X:\`, `\\?\X:\`, `\\.\X:\` or a
/// volume GUID path (each with its trailing backslash). `Err` is the Win32
/// error: ERROR_INVALID_NAME without the backslash, ERROR_PATH_NOT_FOUND
/// for an unknown drive or volume.
pub fn root_drive(env: &Env, root: &str) -> Result<char, u32> {
    let rest = root
        .strip_prefix("\\\\?\\")
        .or_else(|| root.strip_prefix("\\\\.\\"))
        .unwrap_or(root);
    let letter = if rest.len() >= 7 && rest[..7].eq_ignore_ascii_case("Volume{") {
        env.drives
            .letters()
            .into_iter()
            .find(|&l| guid_name(l).eq_ignore_ascii_case(root))
            .ok_or(err::PATH_NOT_FOUND)?
    } else {
        let b = rest.as_bytes();
        if b.len() < 2 || b[1] != b':' || !b[0].is_ascii_alphabetic() {
            return Err(err::PATH_NOT_FOUND);
        }
        let l = (b[0] as char).to_ascii_uppercase();
        if !env.drives.letters().contains(&l) {
            return Err(err::PATH_NOT_FOUND);
        }
        if b.len() == 2 {
            return Err(err::INVALID_NAME);
        }
        l
    };
    if !root.ends_with('\\') {
        return Err(err::INVALID_NAME);
    }
    Ok(letter)
}

/// Writes volume `i`'s GUID name for FindFirstVolume/FindNextVolume.
fn put_volume(env: &mut Env, i: usize, buf: u32, cap: u32, wide: bool) -> Result<(), u32> {
    let letters = env.drives.letters();
    let l = *letters.get(i).ok_or(18u32)?; // ERROR_NO_MORE_FILES
    let name = guid_name(l);
    if (cap as usize) < name.len() + 1 {
        return Err(206); // ERROR_FILENAME_EXCED_RANGE
    }
    env.put_str(buf, &name, wide).ok_or(998u32)
}

fn find_first(env: &mut Env, buf: u32, cap: u32, wide: bool) -> u32 {
    match put_volume(env, 0, buf, cap, wide) {
        Ok(()) => {
            let h = env.handles.add(Object::Other("volume enumeration"));
            env.k32.volume_finds.insert(h, 1);
            h
        }
        Err(e) => env.fail(e, crate::handles::INVALID),
    }
}

/// The next volume index of an enumeration handle.
fn find_pos(env: &Env, h: u32) -> Option<usize> {
    match env.handles.get(h) {
        Some(Object::Other("volume enumeration")) => env.k32.volume_finds.get(&h).copied(),
        _ => None,
    }
}

fn find_next(env: &mut Env, h: u32, buf: u32, cap: u32, wide: bool) -> bool {
    let Some(i) = find_pos(env, h) else {
        return env.fail(err::INVALID_HANDLE, false);
    };
    match put_volume(env, i, buf, cap, wide) {
        Ok(()) => {
            env.k32.volume_finds.insert(h, i + 1);
            true
        }
        Err(e) => env.fail(e, false),
    }
}

/// GetVolumePathNamesForVolumeName: the drive root of a volume GUID path as a
/// double-NUL-terminated list; `need` gets the length with both NULs.
fn path_names(env: &mut Env, vol: u32, buf: u32, cap: u32, need: u32, wide: bool) -> bool {
    let Some(v) = env.read_str(vol, wide) else {
        return env.fail(err::INVALID_PARAMETER, false);
    };
    let is_guid = v.len() > 10 && v[4..].to_ascii_lowercase().starts_with("volume{");
    if !v.starts_with("\\\\?\\") || !is_guid {
        return env.fail(err::INVALID_NAME, false);
    }
    let Some(l) = env
        .drives
        .letters()
        .into_iter()
        .find(|&l| guid_name(l).eq_ignore_ascii_case(&v))
    else {
        return env.fail(err::FILE_NOT_FOUND, false);
    };
    let list = format!("{l}:\\\0");
    let n = list.len() as u32 + 1;
    if need != 0 {
        env.mem.poke_u32(need, n);
    }
    if cap < n {
        return env.fail(234, false); // ERROR_MORE_DATA
    }
    env.put_str(buf, &list, wide).is_some()
}

crate::dll! { "(kernel32 volumes)";
    stdcall fn FindFirstVolumeA(env, buf: u32, cap: u32) -> u32 { find_first(env, buf, cap, false) }
    stdcall fn FindFirstVolumeW(env, buf: u32, cap: u32) -> u32 { find_first(env, buf, cap, true) }
    stdcall fn FindNextVolumeA(env, h: u32, buf: u32, cap: u32) -> bool { find_next(env, h, buf, cap, false) }
    stdcall fn FindNextVolumeW(env, h: u32, buf: u32, cap: u32) -> bool { find_next(env, h, buf, cap, true) }
    stdcall fn FindVolumeClose(env, h: u32) -> bool {
        if find_pos(env, h).is_none() { return env.fail(err::INVALID_HANDLE, false); }
        env.handles.close(h);
        env.k32.volume_finds.remove(&h);
        true
    }
    stdcall fn GetVolumePathNamesForVolumeNameA(env, vol: u32, buf: u32, cap: u32, need: u32) -> bool { path_names(env, vol, buf, cap, need, false) }
    stdcall fn GetVolumePathNamesForVolumeNameW(env, vol: u32, buf: u32, cap: u32, need: u32) -> bool { path_names(env, vol, buf, cap, need, true) }
    // Drives are fixed (--drive): no volume is mounted on a folder.
    stdcall fn SetVolumeMountPointA(env, mount: u32, vol: u32) -> bool { env.fail(err::ACCESS_DENIED, false) }
    stdcall fn SetVolumeMountPointW(env, mount: u32, vol: u32) -> bool { env.fail(err::ACCESS_DENIED, false) }
    stdcall fn DeleteVolumeMountPointA(env, mount: u32) -> bool { env.fail(4390, false) } // ERROR_NOT_A_REPARSE_POINT
    stdcall fn DeleteVolumeMountPointW(env, mount: u32) -> bool { env.fail(4390, false) }
    // The volume of an open file: its drive's answers (GetVolumeInformationW).
    stdcall fn GetVolumeInformationByHandleW(env, h: u32, name: u32, ncap: u32, serial: u32, maxc: u32, flags: u32, fs: u32, fscap: u32) -> bool {
        if !matches!(env.handles.get(h), Some(Object::File(_))) { return env.fail(err::INVALID_HANDLE, false); }
        super::file::volume_info(env, 0, true, name, ncap, serial, maxc, flags, fs, fscap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Memory;

    /// Volume roots name their drive; malformed or unknown ones give Windows' errors.
    #[test]
    fn volume_roots() {
        let dir = std::env::temp_dir();
        let mut env = Env::new(Memory::new());
        env.drives.map('C', &dir).unwrap();
        let c_guid = "\\\\?\\Volume{4d454d55-0000-0000-0000-000000000043}\\";
        assert_eq!(guid_name('C'), c_guid);
        let cases: &[(&str, Result<char, u32>)] = &[
            ("C:\\", Ok('C')),
            ("c:\\", Ok('C')),
            ("\\\\?\\C:\\", Ok('C')),
            ("\\\\.\\C:\\", Ok('C')),
            (c_guid, Ok('C')),
            ("C:", Err(err::INVALID_NAME)),
            (
                "\\\\?\\Volume{4d454d55-0000-0000-0000-000000000043}",
                Err(err::PATH_NOT_FOUND),
            ),
            ("D:\\", Err(err::PATH_NOT_FOUND)),
            (
                "\\\\?\\Volume{00000000-0000-0000-0000-000000000000}\\",
                Err(err::PATH_NOT_FOUND),
            ),
            ("C:\\windows\\", Ok('C')),
        ];
        for (root, want) in cases {
            assert_eq!(root_drive(&env, root), *want, "{root}");
        }
    }
}
