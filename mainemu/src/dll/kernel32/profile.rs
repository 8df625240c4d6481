//! kernel32's INI-file calls: Get/WritePrivateProfileString, -Int,
//! -Section, -SectionNames, -Struct (A and W), and the win.ini forms
//! (GetProfileString/Int, WriteProfileString/Section).
//!
//! Owns the INI model and Windows' buffer rules: a file is read whole on
//! every call (no cache, so a file changed by the program is always seen)
//! into sections of lines; names match case-insensitively; `key=value`
//! lines have the key's trailing and the value's surrounding blanks
//! trimmed, a line without `=` is kept (listed by GetPrivateProfileSection,
//! not as a key); a write rewrites the file as `[section]` / `key=value`
//! lines ending in CRLF (ANSI, or UTF-16 with its BOM when the file had
//! one). A bare file name lives in C:\windows. It must not reach host files
//! except through `kernel32::file`'s resolution (the guest's drives).

use super::file::{resolve, resolve_write};
use crate::dll::{wbytes, Env};

const ERROR_FILE_NOT_FOUND: u32 = 2;
const ERROR_INVALID_PARAMETER: u32 = 87;

/// One line of a section: a key with its value, or a line without `=`.
#[derive(Clone, Debug, PartialEq)]
struct Line {
    key: String,
    value: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
struct Section {
    /// Empty for the lines before the first `[section]`.
    name: String,
    lines: Vec<Line>,
}

#[derive(Debug, Default, PartialEq)]
struct Ini {
    sections: Vec<Section>,
    utf16: bool,
}

/// Blanks as the INI parser trims them (space, tab, CR, LF, VT, FF).
fn blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n' | '\x0b' | '\x0c')
}

fn parse(bytes: &[u8]) -> Ini {
    let (text, utf16) = if bytes.starts_with(&[0xFF, 0xFE]) {
        let w: Vec<u16> = bytes[2..]
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        (String::from_utf16_lossy(&w), true)
    } else {
        let b = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(bytes);
        (b.iter().map(|&c| c as char).collect::<String>(), false)
    };
    let mut ini = Ini {
        sections: vec![Section {
            name: String::new(),
            lines: vec![],
        }],
        utf16,
    };
    for raw in text.split(['\n', '\r']) {
        let line = raw.trim_matches(blank).trim_end_matches('\0');
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            if let Some(end) = rest.rfind(']') {
                ini.sections.push(Section {
                    name: rest[..end].trim_matches(blank).to_string(),
                    lines: vec![],
                });
                continue;
            }
        }
        let l = match line.split_once('=') {
            Some((k, v)) => Line {
                key: k.trim_matches(blank).to_string(),
                value: Some(v.trim_matches(blank).to_string()),
            },
            None => Line {
                key: line.to_string(),
                value: None,
            },
        };
        ini.sections.last_mut().unwrap().lines.push(l);
    }
    ini
}

fn serialize(ini: &Ini) -> Vec<u8> {
    let mut s = String::new();
    for sec in &ini.sections {
        if !sec.name.is_empty() {
            s.push_str(&format!("[{}]\r\n", sec.name));
        }
        for l in &sec.lines {
            s.push_str(&l.key);
            if let Some(v) = &l.value {
                s.push('=');
                s.push_str(v);
            }
            s.push_str("\r\n");
        }
    }
    if ini.utf16 {
        let w: Vec<u16> = [0xFEFF].into_iter().chain(s.encode_utf16()).collect();
        wbytes(&w)
    } else {
        s.chars()
            .map(|c| if (c as u32) < 256 { c as u8 } else { b'?' })
            .collect()
    }
}

impl Ini {
    fn section(&self, name: &str) -> Option<&Section> {
        self.sections
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case(name))
    }
    fn section_mut(&mut self, name: &str) -> &mut Section {
        let i = match self
            .sections
            .iter()
            .position(|s| s.name.eq_ignore_ascii_case(name))
        {
            Some(i) => i,
            None => {
                self.sections.push(Section {
                    name: name.to_string(),
                    lines: vec![],
                });
                self.sections.len() - 1
            }
        };
        &mut self.sections[i]
    }
}

/// The guest path of a profile file: a bare name is in the Windows directory.
fn profile_path(name: &str) -> String {
    if name.contains(['\\', '/']) || name.contains(':') {
        name.to_string()
    } else {
        format!("C:\\windows\\{name}")
    }
}

/// The file's contents, or `None` when it does not exist (or is refused).
fn load(env: &Env, file: &str) -> Option<Ini> {
    let host = resolve(env, &profile_path(file)).ok()?;
    std::fs::read(host).ok().map(|b| parse(&b))
}

/// Writes the file back (creating it); the host mtime is the guest's time.
fn store(env: &mut Env, file: &str, ini: &Ini) -> bool {
    let guest = profile_path(file);
    let host = match resolve_write(env, &guest) {
        Ok(h) => h,
        Err(e) => return env.fail(e, false),
    };
    let existed = host.exists();
    match std::fs::write(&host, serialize(ini)) {
        Ok(()) => {
            if let Ok(f) = std::fs::File::options().write(true).open(&host) {
                f.set_modified(crate::files::systime(env.guest_filetime()))
                    .ok();
            }
            if !existed {
                crate::io::touch_parent(&host, env.guest_filetime());
            }
            true
        }
        Err(e) => env.fail(crate::files::io_error(&e), false),
    }
}

/// Copies a list of NUL-terminated strings (double-NUL terminated) into a
/// buffer of `cap` units: when it does not fit with room to spare, it is
/// cut and ends in two NULs and the answer is `cap - 2` (Windows' rule).
fn put_list(env: &mut Env, items: &[String], buf: u32, cap: u32, wide: bool) -> u32 {
    let mut u: Vec<u16> = Vec::new();
    for s in items {
        u.extend(s.encode_utf16());
        u.push(0);
    }
    let total = u.len() as u32;
    let (mut out, ret) = if total + 1 < cap || (total == 0 && cap >= 1) {
        (u, total)
    } else if cap >= 2 {
        let mut v = u[..cap as usize - 2].to_vec();
        v.push(0);
        (v, cap - 2)
    } else {
        (vec![], 0)
    };
    out.push(0);
    out.truncate(cap as usize);
    write_units(env, buf, &out, wide);
    ret
}

fn write_units(env: &mut Env, buf: u32, u: &[u16], wide: bool) {
    if wide {
        env.mem.poke(buf, &wbytes(u));
    } else {
        let b: Vec<u8> = u
            .iter()
            .map(|&c| if c < 256 { c as u8 } else { b'?' })
            .collect();
        env.mem.poke(buf, &b);
    }
}

/// Copies one string truncated to `cap - 1` units plus NUL; the length written.
fn put_string(env: &mut Env, s: &str, buf: u32, cap: u32, wide: bool) -> u32 {
    let mut u: Vec<u16> = s.encode_utf16().collect();
    u.truncate(cap as usize - 1);
    let n = u.len() as u32;
    u.push(0);
    write_units(env, buf, &u, wide);
    n
}

/// A value with one pair of matching surrounding quotes removed.
fn unquote(v: &str) -> &str {
    let b = v.as_bytes();
    if b.len() >= 2 && (b[0] == b'"' || b[0] == b'\'') && b[b.len() - 1] == b[0] {
        &v[1..v.len() - 1]
    } else {
        v
    }
}

#[allow(clippy::too_many_arguments)]
fn get_string(
    env: &mut Env,
    sec: u32,
    key: u32,
    def: u32,
    buf: u32,
    cap: u32,
    file: u32,
    wide: bool,
) -> u32 {
    if buf == 0 || cap == 0 {
        return 0;
    }
    let file = env.read_str(file, wide).unwrap_or_else(|| "win.ini".into());
    let def = env.read_str(def, wide).unwrap_or_default();
    let def = def.trim_end_matches(' ').to_string();
    let ini = load(env, &file);
    let Some(sec) = env.read_str(sec, wide) else {
        let names: Vec<String> = ini
            .map(|i| {
                i.sections
                    .iter()
                    .filter(|s| !s.name.is_empty())
                    .map(|s| s.name.clone())
                    .collect()
            })
            .unwrap_or_default();
        return put_list(env, &names, buf, cap, wide);
    };
    let Some(key) = env.read_str(key, wide) else {
        let keys: Vec<String> = ini
            .as_ref()
            .and_then(|i| i.section(&sec))
            .map(|s| {
                s.lines
                    .iter()
                    .filter(|l| l.value.is_some())
                    .map(|l| l.key.clone())
                    .collect()
            })
            .unwrap_or_default();
        return put_list(env, &keys, buf, cap, wide);
    };
    let found = ini.as_ref().and_then(|i| {
        i.section(&sec)?
            .lines
            .iter()
            .find(|l| l.value.is_some() && l.key.eq_ignore_ascii_case(&key))
            .and_then(|l| l.value.clone())
    });
    let v = match (&ini, found) {
        (_, Some(v)) => {
            env.last_error = 0;
            unquote(&v).to_string()
        }
        (None, None) => {
            env.last_error = ERROR_FILE_NOT_FOUND;
            def
        }
        (Some(_), None) => {
            env.last_error = ERROR_FILE_NOT_FOUND;
            def
        }
    };
    put_string(env, &v, buf, cap, wide)
}

/// GetPrivateProfileInt: the value read as a signed decimal with 32-bit
/// wrap-around (leading blanks and one sign allowed, stops at the first
/// non-digit); an absent or empty value gives the default.
fn get_int(env: &mut Env, sec: u32, key: u32, def: i32, file: u32, wide: bool) -> u32 {
    let file = env.read_str(file, wide).unwrap_or_else(|| "win.ini".into());
    let ini = load(env, &file);
    let (sec, key) = (env.read_str(sec, wide), env.read_str(key, wide));
    // What GetPrivateProfileString would give (its first list item for a
    // NULL section or key).
    let v: Option<String> = ini.as_ref().and_then(|i| match (&sec, &key) {
        (None, _) => i
            .sections
            .iter()
            .find(|s| !s.name.is_empty())
            .map(|s| s.name.clone()),
        (Some(sec), None) => i
            .section(sec)?
            .lines
            .iter()
            .find(|l| l.value.is_some())
            .map(|l| l.key.clone()),
        (Some(sec), Some(key)) => i
            .section(sec)?
            .lines
            .iter()
            .find(|l| l.value.is_some() && l.key.eq_ignore_ascii_case(key))
            .and_then(|l| l.value.as_deref().map(|v| unquote(v).to_string())),
    });
    match v.filter(|v| !v.is_empty()) {
        None => def as u32,
        Some(v) => parse_int(&v),
    }
}

fn parse_int(v: &str) -> u32 {
    let t = v.trim_start_matches(blank);
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut acc: u32 = 0;
    for c in digits.bytes().take_while(u8::is_ascii_digit) {
        acc = acc.wrapping_mul(10).wrapping_add((c - b'0') as u32);
    }
    if neg {
        acc.wrapping_neg()
    } else {
        acc
    }
}

fn write_string(env: &mut Env, sec: u32, key: u32, val: u32, file: u32, wide: bool) -> bool {
    let file = env.read_str(file, wide).unwrap_or_else(|| "win.ini".into());
    let (sec, key, val) = (
        env.read_str(sec, wide),
        env.read_str(key, wide),
        env.read_str(val, wide),
    );
    write_value(env, &file, sec, key, val)
}

/// Sets `key` of `sec` to `val`; a `None` value deletes the key, a `None`
/// key the section.
fn write_value(
    env: &mut Env,
    file: &str,
    sec: Option<String>,
    key: Option<String>,
    val: Option<String>,
) -> bool {
    let Some(sec) = sec else {
        // All NULL: "flush the cache" (there is none).
        return key.is_none() && val.is_none() || env.fail(ERROR_FILE_NOT_FOUND, false);
    };
    let mut ini = load(env, file).unwrap_or_default();
    match key {
        None => ini.sections.retain(|s| !s.name.eq_ignore_ascii_case(&sec)),
        Some(k) => {
            let k = k.trim_matches(blank).to_string();
            match val {
                None => {
                    if let Some(i) = ini
                        .sections
                        .iter()
                        .position(|s| s.name.eq_ignore_ascii_case(&sec))
                    {
                        ini.sections[i]
                            .lines
                            .retain(|l| !(l.value.is_some() && l.key.eq_ignore_ascii_case(&k)));
                    }
                }
                Some(v) => {
                    let v = v.trim_start_matches(blank).to_string();
                    let s = ini.section_mut(&sec);
                    match s
                        .lines
                        .iter_mut()
                        .find(|l| l.value.is_some() && l.key.eq_ignore_ascii_case(&k))
                    {
                        Some(l) => l.value = Some(v),
                        None => s.lines.push(Line {
                            key: k,
                            value: Some(v),
                        }),
                    }
                }
            }
        }
    }
    if ini.sections.is_empty() {
        ini.sections.push(Section {
            name: String::new(),
            lines: vec![],
        });
    }
    store(env, file, &ini)
}

fn get_section(env: &mut Env, sec: u32, buf: u32, cap: u32, file: u32, wide: bool) -> u32 {
    let Some(sec) = env.read_str(sec, wide) else {
        return env.fail(ERROR_INVALID_PARAMETER, 0);
    };
    if buf == 0 || cap == 0 {
        return env.fail(ERROR_INVALID_PARAMETER, 0);
    }
    let Some(file) = env.read_str(file, wide) else {
        write_units(env, buf, &[0, 0][..cap.min(2) as usize], wide);
        return env.fail(ERROR_FILE_NOT_FOUND, 0);
    };
    let lines: Vec<String> = load(env, &file)
        .as_ref()
        .and_then(|i| i.section(&sec))
        .map(|s| {
            s.lines
                .iter()
                .map(|l| match &l.value {
                    Some(v) => format!("{}={}", l.key, v),
                    None => l.key.clone(),
                })
                .collect()
        })
        .unwrap_or_default();
    env.last_error = 0;
    put_list(env, &lines, buf, cap, wide)
}

fn section_names(env: &mut Env, buf: u32, cap: u32, file: u32, wide: bool) -> u32 {
    if buf == 0 || cap == 0 {
        return 0;
    }
    let file = env.read_str(file, wide).unwrap_or_else(|| "win.ini".into());
    let Some(ini) = load(env, &file) else {
        write_units(env, buf, &[0], wide);
        return 0;
    };
    let names: Vec<String> = ini
        .sections
        .iter()
        .filter(|s| !s.name.is_empty())
        .map(|s| s.name.clone())
        .collect();
    put_list(env, &names, buf, cap, wide)
}

/// WritePrivateProfileSection: replaces the section's lines with the
/// double-NUL-terminated `k=v` list; a NULL list deletes the section.
fn write_section(env: &mut Env, sec: u32, list: u32, file: u32, wide: bool) -> bool {
    let file = env.read_str(file, wide).unwrap_or_else(|| "win.ini".into());
    let Some(sec) = env.read_str(sec, wide) else {
        return env.fail(ERROR_INVALID_PARAMETER, false);
    };
    let mut ini = load(env, &file).unwrap_or_default();
    if list == 0 {
        ini.sections.retain(|s| !s.name.eq_ignore_ascii_case(&sec));
    } else {
        let mut lines = vec![];
        let mut p = list;
        let unit = if wide { 2 } else { 1 };
        while let Some(s) = env.read_str(p, wide) {
            if s.is_empty() {
                break;
            }
            p += unit * (s.encode_utf16().count() as u32 + 1);
            lines.push(match s.split_once('=') {
                Some((k, v)) => Line {
                    key: k.trim_matches(blank).into(),
                    value: Some(v.trim_matches(blank).into()),
                },
                None => Line {
                    key: s.trim_matches(blank).into(),
                    value: None,
                },
            });
        }
        ini.section_mut(&sec).lines = lines;
    }
    store(env, &file, &ini)
}

/// Get/WritePrivateProfileStruct: the bytes as upper-case hex plus a
/// checksum byte (their sum modulo 256).
fn get_struct(
    env: &mut Env,
    sec: u32,
    key: u32,
    buf: u32,
    len: u32,
    file: u32,
    wide: bool,
) -> bool {
    let (Some(file), Some(sec), Some(key)) = (
        env.read_str(file, wide),
        env.read_str(sec, wide),
        env.read_str(key, wide),
    ) else {
        return env.fail(ERROR_INVALID_PARAMETER, false);
    };
    let v = load(env, &file).and_then(|i| {
        i.section(&sec)?
            .lines
            .iter()
            .find(|l| l.value.is_some() && l.key.eq_ignore_ascii_case(&key))
            .and_then(|l| l.value.clone())
    });
    let Some(v) = v else {
        return env.fail(ERROR_FILE_NOT_FOUND, false);
    };
    let hex: Option<Vec<u8>> = (0..v.len() / 2)
        .map(|i| u8::from_str_radix(v.get(2 * i..2 * i + 2)?, 16).ok())
        .collect();
    let Some(bytes) = hex.filter(|b| v.len() % 2 == 0 && b.len() == len as usize + 1) else {
        return env.fail(ERROR_INVALID_PARAMETER, false);
    };
    let sum = bytes[..len as usize]
        .iter()
        .fold(0u8, |a, &b| a.wrapping_add(b));
    if sum != bytes[len as usize] {
        return env.fail(ERROR_INVALID_PARAMETER, false);
    }
    env.mem.poke(buf, &bytes[..len as usize]).is_some()
}

fn write_struct(
    env: &mut Env,
    sec: u32,
    key: u32,
    buf: u32,
    len: u32,
    file: u32,
    wide: bool,
) -> bool {
    let file = env.read_str(file, wide).unwrap_or_else(|| "win.ini".into());
    let (sec, key) = (env.read_str(sec, wide), env.read_str(key, wide));
    if buf == 0 {
        return write_value(env, &file, sec, key, None);
    }
    let Some(bytes) = env.read_bytes(buf, len) else {
        return env.fail(998, false);
    };
    let sum = bytes.iter().fold(0u8, |a, &b| a.wrapping_add(b));
    let hex: String = bytes
        .iter()
        .chain([sum].iter())
        .map(|b| format!("{b:02X}"))
        .collect();
    write_value(env, &file, sec, key, Some(hex))
}

crate::dll! { "(kernel32 profiles)";
    stdcall fn GetPrivateProfileStringA(env, sec: u32, key: u32, def: u32, buf: u32, cap: u32, file: u32) -> u32 { get_string(env, sec, key, def, buf, cap, file, false) }
    stdcall fn GetPrivateProfileStringW(env, sec: u32, key: u32, def: u32, buf: u32, cap: u32, file: u32) -> u32 { get_string(env, sec, key, def, buf, cap, file, true) }
    stdcall fn GetProfileStringA(env, sec: u32, key: u32, def: u32, buf: u32, cap: u32) -> u32 { get_string(env, sec, key, def, buf, cap, 0, false) }
    stdcall fn GetProfileStringW(env, sec: u32, key: u32, def: u32, buf: u32, cap: u32) -> u32 { get_string(env, sec, key, def, buf, cap, 0, true) }
    stdcall fn GetPrivateProfileIntA(env, sec: u32, key: u32, def: i32, file: u32) -> u32 { get_int(env, sec, key, def, file, false) }
    stdcall fn GetPrivateProfileIntW(env, sec: u32, key: u32, def: i32, file: u32) -> u32 { get_int(env, sec, key, def, file, true) }
    stdcall fn GetProfileIntA(env, sec: u32, key: u32, def: i32) -> u32 { get_int(env, sec, key, def, 0, false) }
    stdcall fn GetProfileIntW(env, sec: u32, key: u32, def: i32) -> u32 { get_int(env, sec, key, def, 0, true) }
    stdcall fn WritePrivateProfileStringA(env, sec: u32, key: u32, val: u32, file: u32) -> bool { write_string(env, sec, key, val, file, false) }
    stdcall fn WritePrivateProfileStringW(env, sec: u32, key: u32, val: u32, file: u32) -> bool { write_string(env, sec, key, val, file, true) }
    stdcall fn WriteProfileStringA(env, sec: u32, key: u32, val: u32) -> bool { write_string(env, sec, key, val, 0, false) }
    stdcall fn WriteProfileStringW(env, sec: u32, key: u32, val: u32) -> bool { write_string(env, sec, key, val, 0, true) }
    stdcall fn GetPrivateProfileSectionA(env, sec: u32, buf: u32, cap: u32, file: u32) -> u32 { get_section(env, sec, buf, cap, file, false) }
    stdcall fn GetPrivateProfileSectionW(env, sec: u32, buf: u32, cap: u32, file: u32) -> u32 { get_section(env, sec, buf, cap, file, true) }
    stdcall fn GetPrivateProfileSectionNamesA(env, buf: u32, cap: u32, file: u32) -> u32 { section_names(env, buf, cap, file, false) }
    stdcall fn GetPrivateProfileSectionNamesW(env, buf: u32, cap: u32, file: u32) -> u32 { section_names(env, buf, cap, file, true) }
    stdcall fn WritePrivateProfileSectionA(env, sec: u32, list: u32, file: u32) -> bool { write_section(env, sec, list, file, false) }
    stdcall fn WritePrivateProfileSectionW(env, sec: u32, list: u32, file: u32) -> bool { write_section(env, sec, list, file, true) }
    stdcall fn GetPrivateProfileStructA(env, sec: u32, key: u32, buf: u32, len: u32, file: u32) -> bool { get_struct(env, sec, key, buf, len, file, false) }
    stdcall fn GetPrivateProfileStructW(env, sec: u32, key: u32, buf: u32, len: u32, file: u32) -> bool { get_struct(env, sec, key, buf, len, file, true) }
    stdcall fn WritePrivateProfileStructA(env, sec: u32, key: u32, buf: u32, len: u32, file: u32) -> bool { write_struct(env, sec, key, buf, len, file, false) }
    stdcall fn WritePrivateProfileStructW(env, sec: u32, key: u32, buf: u32, len: u32, file: u32) -> bool { write_struct(env, sec, key, buf, len, file, true) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{mem, prot, Memory};

    fn call(env: &mut Env, name: &str, args: &[u32]) -> u32 {
        let e = DLL.exports.iter().find(|e| e.name == name).unwrap();
        match (e.imp)(env, args) {
            crate::dll::Ret::Value(v) => v,
            r => panic!("{name}: {r:?}"),
        }
    }

    /// Writes and reads through the exports on a real file of a mapped drive:
    /// Windows' answers for lists, truncation, defaults and Int parsing.
    #[test]
    fn profile_calls() {
        let dir = std::env::temp_dir().join(format!("mainemu-profile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut env = Env::new(Memory::new());
        env.drives.map('C', &dir).unwrap();
        env.mem
            .virtual_alloc(
                0x10_0000,
                0x1_0000,
                mem::RESERVE | mem::COMMIT,
                prot::READWRITE,
            )
            .unwrap();
        let s = |env: &mut Env, at: u32, v: &str| {
            env.put_str(at, v, false);
            at
        };
        let file = s(&mut env, 0x10_0000, "C:\\t.ini");
        let (sec, key, val) = (
            s(&mut env, 0x10_0100, "s"),
            s(&mut env, 0x10_0200, "k"),
            s(&mut env, 0x10_0300, " 42x"),
        );
        assert_eq!(
            call(
                &mut env,
                "WritePrivateProfileStringA",
                &[sec, key, val, file]
            ),
            1
        );
        let key2 = s(&mut env, 0x10_0400, "name2");
        let val2 = s(&mut env, 0x10_0500, "\"quoted\"");
        assert_eq!(
            call(
                &mut env,
                "WritePrivateProfileStringA",
                &[sec, key2, val2, file]
            ),
            1
        );
        assert_eq!(
            std::fs::read(dir.join("t.ini")).unwrap(),
            b"[s]\r\nk=42x\r\nname2=\"quoted\"\r\n"
        );
        let buf = 0x10_1000;
        let read = |env: &mut Env, k: u32, cap: u32| {
            let n = call(
                env,
                "GetPrivateProfileStringA",
                &[sec, k, 0, buf, cap, file],
            );
            (n, env.read_bytes(buf, n + 1).unwrap())
        };
        let cases: &[(u32, u32, u32, &[u8])] = &[
            (key, 100, 3, b"42x\0"),
            (key2, 100, 6, b"quoted\0"),
            (key2, 4, 3, b"quo\0"),
            (0, 100, 8, b"k\0name2\0\0"),
            (0, 6, 4, b"k\0na\0"),
        ];
        for &(k, cap, n, want) in cases {
            assert_eq!(
                read(&mut env, k, cap),
                (n, want.to_vec()),
                "key {k:#x} cap {cap}"
            );
        }
        assert_eq!(
            call(&mut env, "GetPrivateProfileIntA", &[sec, key, 7, file]),
            42
        );
        assert_eq!(
            call(
                &mut env,
                "GetPrivateProfileIntA",
                &[sec, 0x10_0600, 7, file]
            ),
            7
        );
        assert_eq!(
            call(
                &mut env,
                "GetPrivateProfileSectionNamesA",
                &[buf, 100, file]
            ),
            2
        );
        // Deleting the key, then the section.
        assert_eq!(
            call(&mut env, "WritePrivateProfileStringA", &[sec, key, 0, file]),
            1
        );
        assert_eq!(
            std::fs::read(dir.join("t.ini")).unwrap(),
            b"[s]\r\nname2=\"quoted\"\r\n"
        );
        assert_eq!(
            call(&mut env, "WritePrivateProfileStringA", &[sec, 0, 0, file]),
            1
        );
        assert_eq!(std::fs::read(dir.join("t.ini")).unwrap(), b"");
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Parsing keeps key lines, lines without `=`, and trims blanks; writing
    /// gives CRLF lines back.
    #[test]
    fn ini_round_trip() {
        let cases: &[(&[u8], &str)] = &[
            (
                b"[s]\r\nname1=val1\r\nname2=\r\nname3\r\n",
                "[s]\r\nname1=val1\r\nname2=\r\nname3\r\n",
            ),
            (
                b"  [ a ]  \n k = v \n\n[b]\nx=\"q\"\n",
                "[a]\r\nk=v\r\n[b]\r\nx=\"q\"\r\n",
            ),
            (b"top=1\n[s]\n", "top=1\r\n[s]\r\n"),
        ];
        for (input, want) in cases {
            let ini = parse(input);
            assert_eq!(String::from_utf8(serialize(&ini)).unwrap(), *want);
        }
        let ini = parse(b"[S]\nKey=\"v\"\nbare\n");
        let s = ini.section("s").unwrap();
        assert_eq!(s.lines[0].value.as_deref().map(unquote), Some("v"));
        assert_eq!(
            s.lines[1],
            Line {
                key: "bare".into(),
                value: None
            }
        );
        assert_eq!(profile_path("x.ini"), "C:\\windows\\x.ini");
        assert_eq!(profile_path(".\\x.ini"), ".\\x.ini");
        // GetPrivateProfileInt's reading (Wine's kernel32 profile cases).
        for (v, want) in [
            ("-1", u32::MAX),
            ("+1", 1),
            ("4294967296", 0),
            ("4294967297", 1),
            ("-4294967297", u32::MAX),
            ("42A9", 42),
            ("B42", 0),
        ] {
            assert_eq!(parse_int(v), want, "{v}");
        }
    }
}
