//! Guest drives mapped to host directories, and the confinement rule: a
//! guest path resolves to a host path inside one mapped drive or is refused.
//!
//! Owns: the drive table (`--drive C=DIR`), the current directory, and path
//! resolution: drive letters, drive-relative and root-relative forms, `.` and
//! `..` resolved lexically and refused when they climb above the drive root,
//! Windows name rules (trailing dots and spaces dropped, invalid characters
//! refused), case-insensitive matching against existing host entries, and a
//! final check that the host path (symlinks resolved) is still under the
//! drive root. UNC and device-namespace paths (`\\server\share`, `\\?\`,
//! `\\.\`), device names (CON, NUL, COM1, ...), and alternate data streams
//! (`file:stream`) are refused.
//!
//! It must not open or create files (the kernel32 file calls do, with the
//! path this gives them) or know about handles.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why a guest path was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathError {
    /// `\\server\share`, `\\?\...`, `\\.\...`.
    Unc,
    /// CON, PRN, AUX, NUL, COM1-9, LPT1-9, CONIN$, CONOUT$ (any extension).
    Device(String),
    /// `name:stream` or a colon anywhere but after the drive letter.
    Stream,
    /// `..` above the drive root, or a host symlink leading outside it.
    Escapes,
    /// The drive letter is not mapped.
    NoDrive(char),
    /// A character Windows refuses in names (`<>"|?*`, control characters).
    InvalidName,
    /// SetCurrentDirectory to something that is not a directory.
    NotADirectory,
    /// A write to a drive mapped read-only (the program's own directory).
    ReadOnly,
}

impl PathError {
    /// The Win32 error a file call reports for this refusal.
    pub fn win32_code(&self) -> u32 {
        match self {
            PathError::NoDrive(_) | PathError::NotADirectory => 3, // ERROR_PATH_NOT_FOUND
            PathError::InvalidName | PathError::Stream => 123,     // ERROR_INVALID_NAME
            PathError::ReadOnly => 19,                             // ERROR_WRITE_PROTECT
            _ => 5,                                                // ERROR_ACCESS_DENIED
        }
    }
}

impl std::fmt::Display for PathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PathError::Unc => write!(f, "UNC and device-namespace paths are refused"),
            PathError::Device(d) => write!(f, "device name {d} is refused"),
            PathError::Stream => write!(f, "alternate data streams are refused"),
            PathError::Escapes => write!(f, "path leaves its drive"),
            PathError::NoDrive(c) => write!(f, "drive {c}: is not mapped"),
            PathError::InvalidName => write!(f, "invalid character in a name"),
            PathError::NotADirectory => write!(f, "not a directory"),
            PathError::ReadOnly => write!(f, "the drive is read-only"),
        }
    }
}

/// The drive table and current directory.
#[derive(Clone, Debug)]
pub struct Drives {
    /// Uppercase letter → host root (canonicalized).
    roots: BTreeMap<char, PathBuf>,
    /// Drives mapped read-only.
    readonly: std::collections::BTreeSet<char>,
    /// Current drive and directory components below its root.
    cwd: (char, Vec<String>),
}

fn is_device(component: &str) -> bool {
    let stem = component
        .split('.')
        .next()
        .unwrap_or("")
        .trim_end()
        .to_ascii_uppercase();
    matches!(
        stem.as_str(),
        "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$"
    ) || ((stem.starts_with("COM") || stem.starts_with("LPT"))
        && stem.len() == 4
        && matches!(stem.as_bytes()[3], b'1'..=b'9'))
}

impl Drives {
    /// No drives; add them with [`Drives::map`].
    pub fn new() -> Drives {
        Drives {
            roots: BTreeMap::new(),
            readonly: Default::default(),
            cwd: ('C', Vec::new()),
        }
    }

    /// Maps `letter:` to the host directory `dir` (which must exist).
    pub fn map(&mut self, letter: char, dir: &Path) -> std::io::Result<()> {
        let root = dir.canonicalize()?;
        if !root.is_dir() {
            return Err(std::io::Error::other(format!(
                "{} is not a directory",
                dir.display()
            )));
        }
        self.roots.insert(letter.to_ascii_uppercase(), root);
        Ok(())
    }

    /// Maps `letter:` read-only (writes, creates and deletes are refused).
    pub fn map_readonly(&mut self, letter: char, dir: &Path) -> std::io::Result<()> {
        self.map(letter, dir)?;
        self.readonly.insert(letter.to_ascii_uppercase());
        Ok(())
    }

    /// The mapped drive letters, in order.
    pub fn letters(&self) -> Vec<char> {
        self.roots.keys().copied().collect()
    }

    /// Whether `letter:` is mapped read-only.
    pub fn is_readonly(&self, letter: char) -> bool {
        self.readonly.contains(&letter.to_ascii_uppercase())
    }

    /// The first letter from `from` on that is not mapped.
    pub fn free_letter(&self, from: char) -> Option<char> {
        (from as u8..=b'Z')
            .map(|b| b as char)
            .find(|c| !self.roots.contains_key(c))
    }

    /// The guest path of a host path inside a mapped drive (the first drive
    /// whose root holds it), e.g. the program's own path.
    pub fn guest_of_host(&self, host: &Path) -> Option<String> {
        let host = host.canonicalize().ok()?;
        self.roots.iter().find_map(|(l, r)| {
            let rest = host.strip_prefix(r).ok()?;
            let comps: Vec<String> = rest
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            Some(format!("{l}:\\{}", comps.join("\\")))
        })
    }

    /// GetFullPathName: the normalized guest path (`C:\a\b`), lexically.
    pub fn full_path(&self, guest: &str) -> Result<String, PathError> {
        let (d, comps) = self.normalize(guest)?;
        Ok(format!("{d}:\\{}", comps.join("\\")))
    }

    /// GetFullPathName's answer: lexical only (nothing is looked up or
    /// refused), `..` stops at the root, `/` becomes `\\`, each name loses
    /// trailing dots and spaces, UNC and `\\?\\` paths pass through, a
    /// trailing separator is kept.
    pub fn lexical_full(&self, guest: &str) -> String {
        let p = guest.replace('/', "\\");
        if p.starts_with("\\\\") {
            return p;
        }
        let b = p.as_bytes();
        let (drive, rest) = if b.len() >= 2 && b[1] == b':' && b[0].is_ascii_alphabetic() {
            ((b[0] as char).to_ascii_uppercase(), &p[2..])
        } else {
            (self.cwd.0, &p[..])
        };
        let mut comps: Vec<String> = if rest.starts_with('\\') || drive != self.cwd.0 {
            Vec::new()
        } else {
            self.cwd.1.clone()
        };
        let trailing = rest.ends_with('\\') && !rest.trim_end_matches('\\').is_empty();
        for raw in rest.split('\\') {
            match raw {
                "" | "." => {}
                ".." => {
                    comps.pop();
                }
                _ => {
                    let c = raw.trim_end_matches(['.', ' ']);
                    if !c.is_empty() {
                        comps.push(c.to_string());
                    }
                }
            }
        }
        let mut out = format!("{drive}:\\{}", comps.join("\\"));
        if trailing && !comps.is_empty() {
            out.push('\\');
        }
        out
    }

    /// The current drive letter.
    pub fn cwd_drive(&self) -> char {
        self.cwd.0
    }

    /// Resolves a path the call will create, write, rename or delete:
    /// refused on a read-only drive.
    pub fn resolve_write(&self, guest: &str) -> Result<PathBuf, PathError> {
        let (drive, comps) = self.normalize(guest)?;
        if self.readonly.contains(&drive) {
            return Err(PathError::ReadOnly);
        }
        self.host_path(drive, &comps)
    }

    /// Whether a guest path names a drive's root directory.
    pub fn is_root(&self, guest: &str) -> bool {
        self.normalize(guest).is_ok_and(|(_, c)| c.is_empty())
    }

    /// The current directory as the guest sees it (`C:\sub`).
    pub fn cwd(&self) -> String {
        format!("{}:\\{}", self.cwd.0, self.cwd.1.join("\\"))
    }

    /// Sets the current directory (must resolve to an existing directory).
    pub fn set_cwd(&mut self, guest: &str) -> Result<(), PathError> {
        let (drive, comps) = self.normalize(guest)?;
        let host = self.host_path(drive, &comps)?;
        if !host.is_dir() {
            return Err(PathError::NotADirectory);
        }
        self.cwd = (drive, comps);
        Ok(())
    }

    /// The guest path as (drive, components below the root), lexically.
    pub fn normalize(&self, guest: &str) -> Result<(char, Vec<String>), PathError> {
        let p = guest.replace('/', "\\");
        if p.starts_with("\\\\") {
            return Err(PathError::Unc);
        }
        let b = p.as_bytes();
        let (drive, rest) = if b.len() >= 2 && b[1] == b':' && b[0].is_ascii_alphabetic() {
            (Some((b[0] as char).to_ascii_uppercase()), &p[2..])
        } else {
            (None, &p[..])
        };
        if rest.contains(':') {
            return Err(PathError::Stream);
        }
        let drive_letter = drive.unwrap_or(self.cwd.0);
        let mut comps: Vec<String> = if rest.starts_with('\\') {
            Vec::new()
        } else if drive_letter == self.cwd.0 {
            self.cwd.1.clone()
        } else {
            Vec::new()
        };
        for raw in rest.split('\\') {
            match raw {
                "" | "." => continue,
                ".." => {
                    if comps.pop().is_none() {
                        return Err(PathError::Escapes);
                    }
                    continue;
                }
                _ => {}
            }
            // Windows drops trailing dots and spaces from each name.
            let c = raw.trim_end_matches(['.', ' ']);
            if c.is_empty() {
                continue;
            }
            if c.chars()
                .any(|ch| (ch as u32) < 32 || "<>\"|?*".contains(ch))
            {
                return Err(PathError::InvalidName);
            }
            if is_device(c) {
                return Err(PathError::Device(c.to_string()));
            }
            comps.push(c.to_string());
        }
        Ok((drive_letter, comps))
    }

    /// Host path for normalized components: each matched case-insensitively
    /// against existing entries, then checked to stay under the root.
    fn host_path(&self, drive: char, comps: &[String]) -> Result<PathBuf, PathError> {
        let root = self.roots.get(&drive).ok_or(PathError::NoDrive(drive))?;
        let mut host = root.clone();
        for c in comps {
            let exact = host.join(c);
            if exact.exists() {
                host = exact;
                continue;
            }
            let found = std::fs::read_dir(&host).ok().and_then(|rd| {
                rd.filter_map(Result::ok)
                    .map(|e| e.file_name())
                    .filter(|n| n.to_string_lossy().eq_ignore_ascii_case(c))
                    .min()
            });
            host = host.join(found.map_or_else(|| c.into(), PathBuf::from));
        }
        // Symlinks: the deepest existing ancestor must resolve under the root.
        let mut probe = host.as_path();
        loop {
            if let Ok(real) = probe.canonicalize() {
                if !real.starts_with(root) {
                    return Err(PathError::Escapes);
                }
                break;
            }
            match probe.parent() {
                Some(p) => probe = p,
                None => break,
            }
        }
        Ok(host)
    }

    /// Resolves a guest path to a host path inside a mapped drive.
    pub fn resolve(&self, guest: &str) -> Result<PathBuf, PathError> {
        let (drive, comps) = self.normalize(guest)?;
        self.host_path(drive, &comps)
    }
}

impl Default for Drives {
    fn default() -> Self {
        Drives::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confinement_case_table() {
        let tmp = std::env::temp_dir().join(format!("mainemu-vfs-{}", std::process::id()));
        let root = tmp.join("c");
        std::fs::create_dir_all(root.join("Sub/Deep")).unwrap();
        std::fs::write(root.join("Sub/File.TXT"), b"x").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("/etc", root.join("out")).ok();
        let mut d = Drives::new();
        d.map('c', &root).unwrap();
        let r = root.canonicalize().unwrap();
        let ok = |p: &str| d.resolve(p);
        let cases: Vec<(&str, Result<PathBuf, PathError>)> = vec![
            ("C:\\sub\\file.txt", Ok(r.join("Sub/File.TXT"))),
            ("c:/SUB/deep/../File.txt", Ok(r.join("Sub/File.TXT"))),
            ("\\sub\\new.txt", Ok(r.join("Sub/new.txt"))),
            ("file.txt.  ", Ok(r.join("file.txt"))),
            ("/etc/passwd", Ok(r.join("etc/passwd"))), // root-relative on C:, not the host's /etc
            ("..\\x", Err(PathError::Escapes)),
            ("C:\\sub\\..\\..\\x", Err(PathError::Escapes)),
            ("\\\\server\\share\\x", Err(PathError::Unc)),
            ("\\\\?\\C:\\x", Err(PathError::Unc)),
            ("\\\\.\\PhysicalDrive0", Err(PathError::Unc)),
            ("NUL", Err(PathError::Device("NUL".into()))),
            ("sub\\com1.txt", Err(PathError::Device("com1.txt".into()))),
            ("C:\\con", Err(PathError::Device("con".into()))),
            ("file.txt:secret", Err(PathError::Stream)),
            ("D:\\x", Err(PathError::NoDrive('D'))),
            ("a?b", Err(PathError::InvalidName)),
        ];
        for (p, want) in cases {
            assert_eq!(ok(p), want, "{p}");
        }
        #[cfg(unix)]
        assert_eq!(
            ok("out\\passwd"),
            Err(PathError::Escapes),
            "symlink out of the drive"
        );
        // COM10 and CONSOLE are ordinary names.
        assert_eq!(ok("com10"), Ok(r.join("com10")));
        assert_eq!(ok("console.log"), Ok(r.join("console.log")));
        d.set_cwd("C:\\Sub").unwrap();
        assert_eq!(d.cwd(), "C:\\Sub");
        assert_eq!(
            d.set_cwd("C:\\Sub\\File.txt"),
            Err(PathError::NotADirectory)
        );
        let ok = |p: &str| d.resolve(p);
        assert_eq!(ok("file.txt"), Ok(r.join("Sub/File.TXT")));
        assert_eq!(ok("C:deep"), Ok(r.join("Sub/Deep")), "drive-relative");
        std::fs::remove_dir_all(&tmp).ok();
    }
}
