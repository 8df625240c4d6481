//! Host file operations behind the guest's file calls, on host paths that
//! `vfs` already confined to a mapped drive.
//!
//! Owns: CreateFile's dispositions and access checks over `std::fs`, file
//! attributes and times as Win32 reports them, directory listings with
//! Windows wildcard matching in a fixed order, and the Win32 error codes
//! of host I/O failures. Times are deterministic: a file's three times are
//! its host modification time, and a file the guest wrote gets the guest
//! clock as its modification time when closed (`set_guest_mtime`), so
//! nothing depends on when the host ran the program (invariant 7).
//!
//! It must not resolve guest paths (vfs does) or hold handles (handles does).

use crate::handles::FileObj;
use std::path::Path;

/// Win32 error codes the file calls report.
pub mod err {
    pub const FILE_NOT_FOUND: u32 = 2;
    pub const PATH_NOT_FOUND: u32 = 3;
    pub const ACCESS_DENIED: u32 = 5;
    pub const INVALID_HANDLE: u32 = 6;
    pub const NOT_SAME_DEVICE: u32 = 17;
    pub const NO_MORE_FILES: u32 = 18;
    pub const SHARING_VIOLATION: u32 = 32;
    pub const HANDLE_EOF: u32 = 38;
    pub const FILE_EXISTS: u32 = 80;
    pub const INVALID_PARAMETER: u32 = 87;
    pub const BROKEN_PIPE: u32 = 109;
    pub const INSUFFICIENT_BUFFER: u32 = 122;
    pub const INVALID_NAME: u32 = 123;
    pub const NEGATIVE_SEEK: u32 = 131;
    pub const DIR_NOT_EMPTY: u32 = 145;
    pub const ALREADY_EXISTS: u32 = 183;
    pub const DIRECTORY: u32 = 267;
}

/// File attribute bits.
pub mod attr {
    pub const READONLY: u32 = 0x1;
    pub const HIDDEN: u32 = 0x2;
    pub const SYSTEM: u32 = 0x4;
    pub const DIRECTORY: u32 = 0x10;
    pub const ARCHIVE: u32 = 0x20;
    pub const NORMAL: u32 = 0x80;
    pub const TEMPORARY: u32 = 0x100;
    pub const INVALID: u32 = 0xFFFF_FFFF;
}

/// CreateFile dispositions.
pub mod disp {
    pub const CREATE_NEW: u32 = 1;
    pub const CREATE_ALWAYS: u32 = 2;
    pub const OPEN_EXISTING: u32 = 3;
    pub const OPEN_ALWAYS: u32 = 4;
    pub const TRUNCATE_EXISTING: u32 = 5;
}

/// Access rights the file calls look at.
pub mod access {
    pub const GENERIC_READ: u32 = 0x8000_0000;
    pub const GENERIC_WRITE: u32 = 0x4000_0000;
    pub const GENERIC_ALL: u32 = 0x1000_0000;
    pub const FILE_READ_DATA: u32 = 0x1;
    pub const FILE_WRITE_DATA: u32 = 0x2;
    pub const FILE_APPEND_DATA: u32 = 0x4;
    pub const DELETE: u32 = 0x1_0000;
}

/// FILE_FLAG_BACKUP_SEMANTICS (open a directory) and FILE_FLAG_DELETE_ON_CLOSE.
pub const FLAG_BACKUP_SEMANTICS: u32 = 0x0200_0000;
pub const FLAG_DELETE_ON_CLOSE: u32 = 0x0400_0000;

/// 100 ns ticks between 1601-01-01 and 1970-01-01.
pub const UNIX_EPOCH_FILETIME: u64 = 116_444_736_000_000_000;

/// The Win32 error for a host I/O error.
pub fn io_error(e: &std::io::Error) -> u32 {
    use std::io::ErrorKind::*;
    match e.kind() {
        NotFound => err::FILE_NOT_FOUND,
        PermissionDenied => err::ACCESS_DENIED,
        AlreadyExists => err::FILE_EXISTS,
        DirectoryNotEmpty => err::DIR_NOT_EMPTY,
        NotADirectory => err::PATH_NOT_FOUND,
        IsADirectory => err::ACCESS_DENIED,
        InvalidInput => err::INVALID_PARAMETER,
        _ => err::ACCESS_DENIED,
    }
}

/// A host time as a FILETIME.
pub fn filetime(t: std::time::SystemTime) -> u64 {
    match t.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => UNIX_EPOCH_FILETIME + d.as_secs() * 10_000_000 + d.subsec_nanos() as u64 / 100,
        Err(_) => UNIX_EPOCH_FILETIME,
    }
}

/// A FILETIME as a host time (clamped at 1970).
pub fn systime(ft: u64) -> std::time::SystemTime {
    let ticks = ft.saturating_sub(UNIX_EPOCH_FILETIME);
    std::time::UNIX_EPOCH
        + std::time::Duration::new(ticks / 10_000_000, (ticks % 10_000_000) as u32 * 100)
}

/// A file's attributes as Win32 reports them.
pub fn attributes_of(meta: &std::fs::Metadata) -> u32 {
    let mut a = if meta.is_dir() {
        attr::DIRECTORY
    } else {
        attr::ARCHIVE
    };
    if meta.permissions().readonly() {
        a |= attr::READONLY;
    }
    a
}

/// GetFileAttributes: `Err(code)` when the path does not exist.
pub fn attributes(host: &Path) -> Result<u32, u32> {
    match std::fs::metadata(host) {
        Ok(m) => Ok(attributes_of(&m)),
        Err(_) => Err(missing_code(host)),
    }
}

/// FILE_NOT_FOUND when the parent directory exists, else PATH_NOT_FOUND.
pub fn missing_code(host: &Path) -> u32 {
    match host.parent() {
        Some(p) if p.is_dir() => err::FILE_NOT_FOUND,
        _ => err::PATH_NOT_FOUND,
    }
}

/// One directory entry as FindFirstFile reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntry {
    pub name: String,
    pub attrs: u32,
    pub size: u64,
    /// Modification time (used for creation, access and write times).
    pub mtime: u64,
}

fn entry(name: &str, meta: &std::fs::Metadata) -> DirEntry {
    DirEntry {
        name: name.to_string(),
        attrs: attributes_of(meta),
        size: if meta.is_dir() { 0 } else { meta.len() },
        mtime: meta.modified().map(filetime).unwrap_or(UNIX_EPOCH_FILETIME),
    }
}

/// Windows wildcard matching, case-insensitive: `*` any run, `?` one
/// character (or none at the end of the name), `*.*` everything, a
/// trailing `.` matches names without an extension.
pub fn wildcard(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.to_uppercase().chars().collect();
    let n: Vec<char> = name.to_uppercase().chars().collect();
    if p == ['*', '.', '*'] || p == ['*'] {
        return true;
    }
    // "name." matches "name" (no extension).
    let (p, n) = if p.last() == Some(&'.') && !n.contains(&'.') {
        (p[..p.len() - 1].to_vec(), n)
    } else {
        (p, n)
    };
    fn m(p: &[char], n: &[char]) -> bool {
        match p.first() {
            None => n.is_empty(),
            Some('*') => (0..=n.len()).any(|k| m(&p[1..], &n[k..])),
            Some('?') => (!n.is_empty() && m(&p[1..], &n[1..])) || (n.is_empty() && m(&p[1..], n)),
            Some(c) => n.first() == Some(c) && m(&p[1..], &n[1..]),
        }
    }
    m(&p, &n)
}

/// The entries of `dir` matching `pattern`, sorted by uppercased name, with
/// `.` and `..` first when `dots` (every directory but a drive root).
pub fn list(dir: &Path, pattern: &str, dots: bool) -> Result<Vec<DirEntry>, u32> {
    let rd = std::fs::read_dir(dir).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory => err::PATH_NOT_FOUND,
        _ => io_error(&e),
    })?;
    let mut out = Vec::new();
    if dots {
        if let Ok(m) = std::fs::metadata(dir) {
            for d in [".", ".."] {
                if wildcard(pattern, d) {
                    out.push(entry(d, &m));
                }
            }
        }
    }
    let mut found: Vec<DirEntry> = rd
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if !wildcard(pattern, &name) {
                return None;
            }
            // Follow symlinks for the metadata; vfs refuses ones leading out on open.
            let m = std::fs::metadata(e.path()).ok()?;
            Some(entry(&name, &m))
        })
        .collect();
    found.sort_by(|a, b| {
        a.name
            .to_uppercase()
            .cmp(&b.name.to_uppercase())
            .then(a.name.cmp(&b.name))
    });
    out.extend(found);
    Ok(out)
}

/// The one entry for a path without wildcards (FindFirstFile("dir\\file")).
pub fn stat_entry(host: &Path, name: &str) -> Result<DirEntry, u32> {
    let m = std::fs::metadata(host).map_err(|_| missing_code(host))?;
    Ok(entry(name, &m))
}

/// CreateFile over the host file system.
pub fn open(
    host: &Path,
    guest: &str,
    desired: u32,
    disposition: u32,
    flags: u32,
) -> Result<(FileObj, bool), u32> {
    let existed = host.exists();
    let read = desired & (access::GENERIC_READ | access::GENERIC_ALL | access::FILE_READ_DATA) != 0;
    let write_data =
        desired & (access::GENERIC_WRITE | access::GENERIC_ALL | access::FILE_WRITE_DATA) != 0;
    let append = !write_data && desired & access::FILE_APPEND_DATA != 0;
    let write = write_data || append;
    if host.is_dir() {
        if flags & FLAG_BACKUP_SEMANTICS == 0 || matches!(disposition, disp::CREATE_NEW) {
            return Err(if disposition == disp::CREATE_NEW {
                err::FILE_EXISTS
            } else {
                err::ACCESS_DENIED
            });
        }
        return Ok((
            FileObj {
                file: None,
                host: host.to_path_buf(),
                guest: guest.to_string(),
                read,
                write: false,
                append: false,
                delete_on_close: flags & FLAG_DELETE_ON_CLOSE != 0,
                dirty: false,
                flags,
            },
            existed,
        ));
    }
    let mut o = std::fs::OpenOptions::new();
    o.read(read || !write).write(write);
    match disposition {
        disp::CREATE_NEW => {
            if existed {
                return Err(err::FILE_EXISTS);
            }
            o.write(true).create_new(true);
        }
        disp::CREATE_ALWAYS => {
            o.write(true).create(true).truncate(true);
        }
        disp::OPEN_EXISTING => {
            if !existed {
                return Err(missing_code(host));
            }
        }
        disp::OPEN_ALWAYS => {
            o.write(true).create(true);
        }
        disp::TRUNCATE_EXISTING => {
            if !existed {
                return Err(missing_code(host));
            }
            if !write {
                return Err(err::INVALID_PARAMETER);
            }
            o.truncate(true);
        }
        _ => return Err(err::INVALID_PARAMETER),
    }
    if !existed && host.parent().is_some_and(|p| !p.is_dir()) {
        return Err(err::PATH_NOT_FOUND);
    }
    if existed && write {
        if let Ok(m) = std::fs::metadata(host) {
            if m.permissions().readonly() {
                return Err(err::ACCESS_DENIED);
            }
        }
    }
    let f = o.open(host).map_err(|e| io_error(&e))?;
    let created_or_truncated =
        !existed || matches!(disposition, disp::CREATE_ALWAYS | disp::TRUNCATE_EXISTING);
    Ok((
        FileObj {
            file: Some(f),
            host: host.to_path_buf(),
            guest: guest.to_string(),
            read,
            write,
            append,
            delete_on_close: flags & FLAG_DELETE_ON_CLOSE != 0,
            dirty: created_or_truncated,
            flags,
        },
        existed,
    ))
}

/// Sets a host file's modification time (guest time, for files the guest wrote).
pub fn set_mtime(host: &Path, ft: u64) {
    if let Ok(f) = std::fs::OpenOptions::new().write(true).open(host) {
        f.set_modified(systime(ft)).ok();
    } else if let Ok(f) = std::fs::File::open(host) {
        f.set_modified(systime(ft)).ok();
    }
}

/// Closes a file object: a written file gets the guest time `now` as its
/// modification time; a delete-on-close file is removed.
pub fn close(f: FileObj, now: u64) {
    let FileObj {
        file,
        host,
        dirty,
        delete_on_close,
        ..
    } = f;
    if let Some(file) = file {
        if dirty {
            file.set_modified(systime(now)).ok();
        }
        drop(file);
    }
    if delete_on_close {
        if host.is_dir() {
            std::fs::remove_dir(&host).ok();
        } else {
            std::fs::remove_file(&host).ok();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_match_as_windows_does() {
        let cases = [
            ("*", "a.txt", true),
            ("*.*", "noext", true),
            ("*.txt", "A.TXT", true),
            ("*.txt", "a.txt.bak", false),
            ("a?c", "abc", true),
            ("a?c", "ac", false),
            ("ab?", "ab", true),
            ("*.", "noext", true),
            ("*.", "a.b", false),
            ("f*e*", "fileio.exe", true),
            ("x", "X", true),
        ];
        for (p, n, want) in cases {
            assert_eq!(wildcard(p, n), want, "{p} vs {n}");
        }
    }

    #[test]
    fn filetimes_round_trip() {
        let ft = crate::dll::EPOCH_FILETIME + 12_345_670;
        assert_eq!(filetime(systime(ft)), ft);
    }
}
