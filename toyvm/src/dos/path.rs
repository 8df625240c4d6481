//! Guest path names: parsing, normalising and matching DOS file names.
//!
//! Owns the rules that turn a guest string (`data\pic.pcx`, `C:\..\X`,
//! `*.PCX`) into a canonical key of upper-case 8.3 components under drive C:
//! rooted at the program's directory. It is pure: no host file access. Every
//! path that would leave the root (`..` past it, another drive letter) is
//! refused here, so nothing downstream can be asked to reach outside.

/// A DOS error code as returned in AX with CF set.
pub type DosError = u16;

pub const ERR_INVALID_FUNCTION: DosError = 0x01;
pub const ERR_FILE_NOT_FOUND: DosError = 0x02;
pub const ERR_PATH_NOT_FOUND: DosError = 0x03;
pub const ERR_TOO_MANY_FILES: DosError = 0x04;
pub const ERR_ACCESS_DENIED: DosError = 0x05;
pub const ERR_INVALID_HANDLE: DosError = 0x06;
pub const ERR_MCB_DESTROYED: DosError = 0x07;
pub const ERR_NO_MEMORY: DosError = 0x08;
pub const ERR_BAD_BLOCK: DosError = 0x09;
pub const ERR_BAD_ENVIRONMENT: DosError = 0x0A;
pub const ERR_BAD_FORMAT: DosError = 0x0B;
pub const ERR_INVALID_ACCESS: DosError = 0x0C;
pub const ERR_INVALID_DRIVE: DosError = 0x0F;
pub const ERR_REMOVE_CWD: DosError = 0x10;
pub const ERR_NOT_SAME_DEVICE: DosError = 0x11;
pub const ERR_NO_MORE_FILES: DosError = 0x12;
pub const ERR_FILE_EXISTS: DosError = 0x50;

/// The only drive: C:, number 2 (A=0).
pub const DRIVE_C: u8 = 2;

/// Character devices a file name can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Device {
    Con,
    Nul,
    Aux,
    Prn,
    Clock,
    /// The EMS driver's device (programs open it to detect EMS).
    Emm,
}

impl Device {
    fn from_base(base: &str) -> Option<Device> {
        Some(match base {
            "CON" => Device::Con,
            "NUL" => Device::Nul,
            "AUX" | "COM1" | "COM2" | "COM3" | "COM4" => Device::Aux,
            "PRN" | "LPT1" | "LPT2" | "LPT3" => Device::Prn,
            "CLOCK$" => Device::Clock,
            "EMMXXXX0" => Device::Emm,
            _ => return None,
        })
    }

    /// The device's name as DOS spells it.
    pub fn name(self) -> &'static str {
        match self {
            Device::Con => "CON",
            Device::Nul => "NUL",
            Device::Aux => "AUX",
            Device::Prn => "PRN",
            Device::Clock => "CLOCK$",
            Device::Emm => "EMMXXXX0",
        }
    }
}

/// A resolved guest name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resolved {
    /// A file or directory path: upper-case 8.3 components from the root.
    /// Empty means the root itself.
    Path(Vec<String>),
    /// A character device.
    Device(Device),
}

/// Joins components into the canonical key (`DATA\PIC.PCX`; the root is "").
pub fn key(components: &[String]) -> String {
    components.join("\\")
}

/// Splits a canonical key back into components.
pub fn split_key(key: &str) -> Vec<String> {
    if key.is_empty() {
        Vec::new()
    } else {
        key.split('\\').map(str::to_owned).collect()
    }
}

fn is_name_char(c: u8, wild: bool) -> bool {
    if wild && (c == b'?' || c == b'*') {
        return true;
    }
    c > 0x20 && !b"\"*+,/:;<=>?[\\]|".contains(&c)
}

/// Normalises one component to upper-case 8.3, truncating long parts as DOS
/// does (`LONGFILENAME.TEXT` -> `LONGFILE.TEX`). `wild` admits `?` and `*`.
pub fn component_83(raw: &[u8], wild: bool) -> Result<String, DosError> {
    let s: Vec<u8> = raw.iter().map(|c| c.to_ascii_uppercase()).collect();
    // Trailing spaces are insignificant in DOS names.
    let end = s.iter().rposition(|&c| c != b' ').map_or(0, |p| p + 1);
    let s = &s[..end];
    if s.is_empty() {
        return Err(ERR_PATH_NOT_FOUND);
    }
    let (base, ext) = match s.iter().position(|&c| c == b'.') {
        Some(p) => (&s[..p], &s[p + 1..]),
        None => (s, &[][..]),
    };
    if base.is_empty() || ext.contains(&b'.') {
        return Err(ERR_PATH_NOT_FOUND);
    }
    if !base
        .iter()
        .chain(ext.iter())
        .all(|&c| is_name_char(c, wild))
    {
        return Err(ERR_PATH_NOT_FOUND);
    }
    let base = &base[..base.len().min(8)];
    let ext = &ext[..ext.len().min(3)];
    let mut out = String::from_utf8_lossy(base).into_owned();
    if !ext.is_empty() {
        out.push('.');
        out.push_str(&String::from_utf8_lossy(ext));
    }
    Ok(out)
}

/// Resolves a guest path against the current directory (`cwd`, components
/// from the root). Only drive C: exists; `..` may not climb above the root.
/// With `wild`, the last component may hold `?`/`*` (FindFirst patterns).
pub fn resolve(cwd: &[String], guest: &[u8], wild: bool) -> Result<Resolved, DosError> {
    let mut p = guest;
    if let Some(z) = p.iter().position(|&c| c == 0) {
        p = &p[..z];
    }
    // Leading blanks are skipped by DOS's name parser.
    while let [b' ', rest @ ..] = p {
        p = rest;
    }
    if p.len() >= 2 && p[1] == b':' {
        if !p[0].eq_ignore_ascii_case(&b'C') {
            return Err(if p[0].is_ascii_alphabetic() {
                ERR_PATH_NOT_FOUND
            } else {
                ERR_INVALID_DRIVE
            });
        }
        p = &p[2..];
    }
    if p.is_empty() {
        return Err(ERR_PATH_NOT_FOUND);
    }
    let absolute = matches!(p[0], b'\\' | b'/');
    let mut comps: Vec<String> = if absolute { Vec::new() } else { cwd.to_vec() };
    let parts: Vec<&[u8]> = p.split(|&c| c == b'\\' || c == b'/').collect();
    let last = parts.len() - 1;
    for (i, part) in parts.iter().enumerate() {
        if part.is_empty() {
            // Leading separator, or a doubled one; a trailing one names the directory.
            if i == 0 || i == last {
                continue;
            }
            return Err(ERR_PATH_NOT_FOUND);
        }
        match *part {
            b"." => continue,
            b".." => {
                if comps.pop().is_none() {
                    return Err(ERR_PATH_NOT_FOUND);
                }
                continue;
            }
            _ => {}
        }
        if part.iter().all(|&c| c == b'.') {
            return Err(ERR_PATH_NOT_FOUND);
        }
        comps.push(component_83(part, wild && i == last)?);
    }
    // A device name anywhere as the last component (with any extension or
    // directory) names the device, as in DOS.
    if let Some(last) = comps.last() {
        let base = last.split('.').next().unwrap_or("");
        if let Some(d) = Device::from_base(base) {
            return Ok(Resolved::Device(d));
        }
    }
    Ok(Resolved::Path(comps))
}

/// Expands an 8.3 name or pattern into the 11-byte FCB form (`*` fills with `?`).
pub fn to_fcb_name(name: &str) -> [u8; 11] {
    let mut out = [b' '; 11];
    let (base, ext) = match name.split_once('.') {
        Some((b, e)) => (b, e),
        None => (name, ""),
    };
    fill_fcb(&mut out[..8], base.as_bytes());
    fill_fcb(&mut out[8..], ext.as_bytes());
    out
}

fn fill_fcb(out: &mut [u8], part: &[u8]) {
    let n = out.len();
    for (i, &c) in part.iter().enumerate().take(n) {
        if c == b'*' {
            out[i..].fill(b'?');
            return;
        }
        out[i] = c;
    }
}

/// DOS wildcard match in FCB form: `?` matches any character, including the
/// blank padding.
pub fn fcb_match(pattern: &[u8; 11], name: &[u8; 11]) -> bool {
    pattern
        .iter()
        .zip(name.iter())
        .all(|(&p, &n)| p == b'?' || p == n)
}

/// Converts an 11-byte FCB name back to `NAME.EXT`.
pub fn from_fcb_name(fcb: &[u8]) -> String {
    let base: String = fcb[..8]
        .iter()
        .take_while(|&&c| c != b' ')
        .map(|&c| c as char)
        .collect();
    let ext: String = fcb[8..11]
        .iter()
        .take_while(|&&c| c != b' ')
        .map(|&c| c as char)
        .collect();
    if ext.is_empty() {
        base
    } else {
        format!("{base}.{ext}")
    }
}

/// True when a host file name is a valid DOS 8.3 name (host files with long
/// or odd names are invisible to the guest).
pub fn host_name_83(name: &str) -> Option<String> {
    if !name.is_ascii() || name == "." || name == ".." {
        return None;
    }
    let up = component_83(name.as_bytes(), false).ok()?;
    // Truncation would make two host names collide; only exact 8.3 names show.
    if up.len() != name.len() {
        return None;
    }
    Some(up)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(cwd: &[&str], s: &str) -> Result<Resolved, DosError> {
        let cwd: Vec<String> = cwd.iter().map(|s| s.to_string()).collect();
        resolve(&cwd, s.as_bytes(), false)
    }
    fn path(v: &[&str]) -> Result<Resolved, DosError> {
        Ok(Resolved::Path(v.iter().map(|s| s.to_string()).collect()))
    }

    #[test]
    fn relative_absolute_and_drive() {
        assert_eq!(p(&[], "data\\pic.pcx"), path(&["DATA", "PIC.PCX"]));
        assert_eq!(p(&["SUB"], "x.dat"), path(&["SUB", "X.DAT"]));
        assert_eq!(p(&["SUB"], "\\x.dat"), path(&["X.DAT"]));
        assert_eq!(p(&["SUB"], "c:/x.dat"), path(&["X.DAT"]));
        assert_eq!(p(&["SUB"], "C:..\\X.DAT"), path(&["X.DAT"]));
        assert_eq!(p(&[], "longfilename.text"), path(&["LONGFILE.TEX"]));
    }

    #[test]
    fn escapes_are_refused() {
        assert_eq!(p(&[], "..\\secret"), Err(ERR_PATH_NOT_FOUND));
        assert_eq!(p(&["SUB"], "..\\..\\secret"), Err(ERR_PATH_NOT_FOUND));
        assert_eq!(p(&[], "\\..\\etc\\passwd"), Err(ERR_PATH_NOT_FOUND));
        assert_eq!(p(&[], "d:\\x"), Err(ERR_PATH_NOT_FOUND));
        assert_eq!(p(&[], "a:x"), Err(ERR_PATH_NOT_FOUND));
        assert_eq!(p(&[], "..."), Err(ERR_PATH_NOT_FOUND));
        // An absolute host path is just a guest path under the root.
        assert_eq!(p(&[], "/etc/passwd"), path(&["ETC", "PASSWD"]));
    }

    #[test]
    fn devices() {
        assert_eq!(p(&[], "con"), Ok(Resolved::Device(Device::Con)));
        assert_eq!(
            p(&["X"], "\\dev\\nul.txt"),
            Ok(Resolved::Device(Device::Nul))
        );
        assert_eq!(p(&[], "EMMXXXX0"), Ok(Resolved::Device(Device::Emm)));
    }

    #[test]
    fn wildcards() {
        let pat = to_fcb_name("*.PCX");
        assert_eq!(&pat, b"????????PCX");
        assert!(fcb_match(&pat, &to_fcb_name("PIC.PCX")));
        assert!(!fcb_match(&pat, &to_fcb_name("PIC.PC")));
        assert!(fcb_match(&to_fcb_name("*.*"), &to_fcb_name("README")));
        assert!(fcb_match(&to_fcb_name("A?.T*"), &to_fcb_name("A.TXT")));
        assert!(!fcb_match(&to_fcb_name("A?.T*"), &to_fcb_name("ABC.TXT")));
        assert_eq!(from_fcb_name(b"PIC     PCX"), "PIC.PCX");
        assert_eq!(host_name_83("pic.pcx").as_deref(), Some("PIC.PCX"));
        assert_eq!(host_name_83("longfilename.txt"), None);
    }
}
