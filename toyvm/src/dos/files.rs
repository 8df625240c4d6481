//! The guest's drive C:: the program's host directory seen read-only and
//! case-insensitively, with every change kept in an in-memory overlay.
//!
//! Owns file and directory contents, names and the host boundary. Writes never
//! touch the host, except when the user names an output directory, and then
//! only inside it (file names reaching here are validated 8.3 components from
//! `dos::path`, so they carry no separators or `..`). It must not know about
//! handles, PSPs or guest memory: `dos::handles` builds on it.

use super::path::{self, DosError, ERR_ACCESS_DENIED, ERR_FILE_NOT_FOUND, ERR_PATH_NOT_FOUND};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Host files bigger than this are refused (no DOS program needs more, and a
/// runaway read must not exhaust the host).
const MAX_HOST_FILE: u64 = 64 << 20;

/// DOS attribute bits.
pub const ATTR_READONLY: u8 = 0x01;
pub const ATTR_HIDDEN: u8 = 0x02;
pub const ATTR_SYSTEM: u8 = 0x04;
pub const ATTR_VOLUME: u8 = 0x08;
pub const ATTR_DIRECTORY: u8 = 0x10;
pub const ATTR_ARCHIVE: u8 = 0x20;

/// One file's contents and metadata.
#[derive(Clone, Debug)]
pub struct FileNode {
    pub data: Vec<u8>,
    /// Changed since it was loaded (overlay content).
    pub dirty: bool,
    pub attr: u8,
    /// DOS packed time and date.
    pub time: u16,
    pub date: u16,
}

/// What a name maps to in the overlay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Entry {
    File(usize),
    Dir,
    /// Deleted or renamed away: hides a host entry of the same name.
    Gone,
}

/// What a lookup finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Found {
    File(usize),
    Dir,
}

/// A directory entry as FindFirst reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntry {
    pub name: String,
    pub attr: u8,
    pub size: u32,
    pub time: u16,
    pub date: u16,
}

/// The guest file system.
pub struct GuestFs {
    root: PathBuf,
    out_dir: Option<PathBuf>,
    names: BTreeMap<String, Entry>,
    nodes: Vec<FileNode>,
    /// Packed DOS time/date given to host files (host mtimes would make runs
    /// depend on the checkout).
    pub host_stamp: (u16, u16),
}

/// A host path's canonical form; where the host cannot canonicalize (WASI
/// has no `realpath`) an existing path's absolute form. That loses no
/// safety: under WASI the only directories reachable are the preopened
/// ones, which the wasm host makes exactly the root and the output
/// directory, and WASI resolves no symlink out of a preopen.
fn host_real(d: &Path) -> std::io::Result<PathBuf> {
    match d.canonicalize() {
        Ok(p) => Ok(p),
        Err(e) if !d.exists() => Err(e),
        Err(_) => std::path::absolute(d),
    }
}

impl GuestFs {
    /// C:\ is `root` (read-only). `out_dir`, when given, receives the files the
    /// guest writes.
    pub fn new(root: &Path, out_dir: Option<&Path>) -> std::io::Result<GuestFs> {
        let root = host_real(root)?;
        let out_dir = match out_dir {
            Some(d) => {
                std::fs::create_dir_all(d)?;
                Some(host_real(d)?)
            }
            None => None,
        };
        Ok(GuestFs {
            root,
            out_dir,
            names: BTreeMap::new(),
            nodes: Vec::new(),
            host_stamp: (0, (14 << 9) | (1 << 5) | 1),
        })
    }

    /// A file system with no host directory at all (tests, pure overlays).
    pub fn empty() -> GuestFs {
        GuestFs {
            root: PathBuf::new(),
            out_dir: None,
            names: BTreeMap::new(),
            nodes: Vec::new(),
            host_stamp: (0, (14 << 9) | (1 << 5) | 1),
        }
    }

    /// The host directory behind C:\.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Finds the host path of a component list, matching each component
    /// case-insensitively, and never leaving the root (symlinks pointing
    /// outside are invisible).
    fn host_path(&self, comps: &[String]) -> Option<PathBuf> {
        if self.root.as_os_str().is_empty() {
            return None;
        }
        let mut cur = self.root.clone();
        for c in comps {
            let mut best: Option<String> = None;
            for e in std::fs::read_dir(&cur).ok()?.flatten() {
                let n = e.file_name();
                let Some(n) = n.to_str() else { continue };
                if path::host_name_83(n).as_deref() == Some(c.as_str())
                    && best.as_deref().is_none_or(|b| n < b)
                {
                    best = Some(n.to_owned());
                }
            }
            cur.push(best?);
        }
        let canon = host_real(&cur).ok()?;
        canon.starts_with(&self.root).then_some(canon)
    }

    fn lookup(&mut self, comps: &[String]) -> Option<Found> {
        let k = path::key(comps);
        if comps.is_empty() {
            return Some(Found::Dir);
        }
        if let Some(&e) = self.names.get(&k) {
            return match e {
                Entry::File(id) => Some(Found::File(id)),
                Entry::Dir => Some(Found::Dir),
                Entry::Gone => None,
            };
        }
        // A parent removed or replaced in the overlay hides the host subtree.
        for i in 1..comps.len() {
            match self.names.get(&path::key(&comps[..i])) {
                Some(Entry::Gone) | Some(Entry::File(_)) => return None,
                _ => {}
            }
        }
        let hp = self.host_path(comps)?;
        let md = std::fs::metadata(&hp).ok()?;
        let e = if md.is_dir() {
            Entry::Dir
        } else {
            if md.len() > MAX_HOST_FILE {
                return None;
            }
            let data = std::fs::read(&hp).ok()?;
            self.nodes.push(FileNode {
                data,
                dirty: false,
                attr: ATTR_ARCHIVE,
                time: self.host_stamp.0,
                date: self.host_stamp.1,
            });
            Entry::File(self.nodes.len() - 1)
        };
        self.names.insert(k, e);
        Some(match e {
            Entry::File(id) => Found::File(id),
            _ => Found::Dir,
        })
    }

    /// True when the components name an existing directory.
    pub fn is_dir(&mut self, comps: &[String]) -> bool {
        self.lookup(comps) == Some(Found::Dir)
    }

    /// Opens an existing file: its node id.
    pub fn open(&mut self, comps: &[String]) -> Result<usize, DosError> {
        match self.lookup(comps) {
            Some(Found::File(id)) => Ok(id),
            Some(Found::Dir) => Err(ERR_ACCESS_DENIED),
            None => Err(self.missing_error(comps)),
        }
    }

    /// "File not found" when the directory exists, else "path not found".
    fn missing_error(&mut self, comps: &[String]) -> DosError {
        if comps.len() <= 1 || self.is_dir(&comps[..comps.len() - 1]) {
            ERR_FILE_NOT_FOUND
        } else {
            ERR_PATH_NOT_FOUND
        }
    }

    /// Creates (or truncates) a file in the overlay.
    pub fn create(
        &mut self,
        comps: &[String],
        attr: u8,
        stamp: (u16, u16),
    ) -> Result<usize, DosError> {
        if comps.is_empty() {
            return Err(ERR_ACCESS_DENIED);
        }
        if !self.is_dir(&comps[..comps.len() - 1]) {
            return Err(ERR_PATH_NOT_FOUND);
        }
        match self.lookup(comps) {
            Some(Found::Dir) => Err(ERR_ACCESS_DENIED),
            Some(Found::File(id)) => {
                let n = &mut self.nodes[id];
                if n.attr & ATTR_READONLY != 0 {
                    return Err(ERR_ACCESS_DENIED);
                }
                n.data.clear();
                n.dirty = true;
                (n.time, n.date) = stamp;
                Ok(id)
            }
            None => {
                self.nodes.push(FileNode {
                    data: Vec::new(),
                    dirty: true,
                    attr: (attr & !(ATTR_DIRECTORY | ATTR_VOLUME)) | ATTR_ARCHIVE,
                    time: stamp.0,
                    date: stamp.1,
                });
                let id = self.nodes.len() - 1;
                self.names.insert(path::key(comps), Entry::File(id));
                Ok(id)
            }
        }
    }

    pub fn node(&self, id: usize) -> &FileNode {
        &self.nodes[id]
    }
    pub fn node_mut(&mut self, id: usize) -> &mut FileNode {
        &mut self.nodes[id]
    }

    /// Puts a read-only file the user supplied (a companion program) in the
    /// root. It is never written to the output directory.
    pub fn inject(&mut self, name: &str, data: Vec<u8>) {
        self.nodes.push(FileNode {
            data,
            dirty: false,
            attr: ATTR_ARCHIVE,
            time: self.host_stamp.0,
            date: self.host_stamp.1,
        });
        self.names
            .insert(name.to_ascii_uppercase(), Entry::File(self.nodes.len() - 1));
    }

    /// Deletes a file (41h).
    pub fn delete(&mut self, comps: &[String]) -> Result<(), DosError> {
        match self.lookup(comps) {
            Some(Found::File(id)) => {
                if self.nodes[id].attr & ATTR_READONLY != 0 {
                    return Err(ERR_ACCESS_DENIED);
                }
                self.names.insert(path::key(comps), Entry::Gone);
                Ok(())
            }
            Some(Found::Dir) => Err(ERR_ACCESS_DENIED),
            None => Err(self.missing_error(comps)),
        }
    }

    /// Creates a directory (39h).
    pub fn mkdir(&mut self, comps: &[String]) -> Result<(), DosError> {
        if comps.is_empty() || !self.is_dir(&comps[..comps.len() - 1]) {
            return Err(ERR_PATH_NOT_FOUND);
        }
        if self.lookup(comps).is_some() {
            return Err(ERR_ACCESS_DENIED);
        }
        self.names.insert(path::key(comps), Entry::Dir);
        Ok(())
    }

    /// Removes an empty directory (3Ah).
    pub fn rmdir(&mut self, comps: &[String]) -> Result<(), DosError> {
        if comps.is_empty() || !self.is_dir(comps) {
            return Err(ERR_PATH_NOT_FOUND);
        }
        if !self.list(comps).is_empty() {
            return Err(ERR_ACCESS_DENIED);
        }
        self.names.insert(path::key(comps), Entry::Gone);
        Ok(())
    }

    /// Renames a file (56h) inside the drive.
    pub fn rename(&mut self, from: &[String], to: &[String]) -> Result<(), DosError> {
        let e = match self.lookup(from) {
            Some(Found::File(id)) => Entry::File(id),
            Some(Found::Dir) => return Err(ERR_ACCESS_DENIED),
            None => return Err(self.missing_error(from)),
        };
        if to.is_empty() || !self.is_dir(&to[..to.len() - 1]) {
            return Err(ERR_PATH_NOT_FOUND);
        }
        if self.lookup(to).is_some() {
            return Err(ERR_ACCESS_DENIED);
        }
        if let Entry::File(id) = e {
            self.nodes[id].dirty = true;
        }
        self.names.insert(path::key(from), Entry::Gone);
        self.names.insert(path::key(to), e);
        Ok(())
    }

    /// Attributes of a name (43h get).
    pub fn attributes(&mut self, comps: &[String]) -> Result<u8, DosError> {
        match self.lookup(comps) {
            Some(Found::File(id)) => Ok(self.nodes[id].attr),
            Some(Found::Dir) => Ok(ATTR_DIRECTORY),
            None => Err(self.missing_error(comps)),
        }
    }

    /// Sets a file's attributes (43h set).
    pub fn set_attributes(&mut self, comps: &[String], attr: u8) -> Result<(), DosError> {
        match self.lookup(comps) {
            Some(Found::File(id)) => {
                self.nodes[id].attr = attr & 0x27;
                Ok(())
            }
            Some(Found::Dir) => Err(ERR_ACCESS_DENIED),
            None => Err(self.missing_error(comps)),
        }
    }

    /// The entries of a directory, sorted by name (deterministic FindFirst).
    pub fn list(&mut self, dir: &[String]) -> Vec<DirEntry> {
        let mut names: BTreeMap<String, ()> = BTreeMap::new();
        if let Some(hp) = self.host_path(dir) {
            if let Ok(rd) = std::fs::read_dir(hp) {
                for e in rd.flatten() {
                    if let Some(n) = e.file_name().to_str().and_then(path::host_name_83) {
                        names.insert(n, ());
                    }
                }
            }
        }
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            path::key(dir) + "\\"
        };
        for k in self.names.keys() {
            if let Some(rest) = k.strip_prefix(&prefix) {
                if !rest.is_empty() && !rest.contains('\\') {
                    names.insert(rest.to_owned(), ());
                }
            }
        }
        let mut out = Vec::new();
        for name in names.into_keys() {
            let mut comps = dir.to_vec();
            comps.push(name.clone());
            match self.lookup(&comps) {
                Some(Found::File(id)) => {
                    let n = &self.nodes[id];
                    out.push(DirEntry {
                        name,
                        attr: n.attr,
                        size: n.data.len().min(u32::MAX as usize) as u32,
                        time: n.time,
                        date: n.date,
                    })
                }
                Some(Found::Dir) => out.push(DirEntry {
                    name,
                    attr: ATTR_DIRECTORY,
                    size: 0,
                    time: self.host_stamp.0,
                    date: self.host_stamp.1,
                }),
                _ => {}
            }
        }
        out
    }

    /// Writes the guest's changed files into the output directory (if one
    /// was given). Only files under it are ever created.
    pub fn flush(&mut self) -> std::io::Result<usize> {
        let Some(out) = self.out_dir.clone() else {
            return Ok(0);
        };
        let mut written = 0;
        for (k, e) in &self.names {
            let Entry::File(id) = *e else { continue };
            if !self.nodes[id].dirty {
                continue;
            }
            let comps = path::split_key(k);
            // Components are validated 8.3 names: no separators, no `..`.
            if comps
                .iter()
                .any(|c| c.contains(['/', '\\']) || c.starts_with('.'))
            {
                continue;
            }
            let mut p = out.clone();
            for c in &comps {
                p.push(c);
            }
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent)?;
                // A symlink planted inside the output directory must not
                // redirect the write outside it.
                if !host_real(parent)?.starts_with(&out) {
                    continue;
                }
            }
            if p.symlink_metadata()
                .is_ok_and(|m| m.file_type().is_symlink())
            {
                continue;
            }
            std::fs::write(&p, &self.nodes[id].data)?;
            self.nodes[id].dirty = false;
            written += 1;
        }
        Ok(written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("toyvm-files-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn host_is_case_insensitive_and_overlay_never_touches_it() {
        let d = tmp("ci");
        std::fs::create_dir_all(d.join("Data")).unwrap();
        std::fs::write(d.join("Data/pic.PCX"), b"abc").unwrap();
        let mut fs = GuestFs::new(&d, None).unwrap();
        let id = fs.open(&c(&["DATA", "PIC.PCX"])).unwrap();
        assert_eq!(fs.node(id).data, b"abc");
        fs.node_mut(id).data.push(b'd');
        fs.node_mut(id).dirty = true;
        fs.create(&c(&["NEW.TXT"]), 0, (0, 0)).unwrap();
        fs.delete(&c(&["DATA", "PIC.PCX"])).unwrap();
        assert_eq!(fs.open(&c(&["DATA", "PIC.PCX"])), Err(ERR_FILE_NOT_FOUND));
        assert_eq!(fs.open(&c(&["NOPE", "X"])), Err(ERR_PATH_NOT_FOUND));
        assert_eq!(fs.flush().unwrap(), 0);
        assert_eq!(std::fs::read(d.join("Data/pic.PCX")).unwrap(), b"abc");
        assert!(!d.join("NEW.TXT").exists());
        let names: Vec<_> = fs.list(&[]).into_iter().map(|e| e.name).collect();
        assert_eq!(names, vec!["DATA", "NEW.TXT"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn output_directory_receives_writes_only_inside() {
        let d = tmp("out-root");
        let o = tmp("out-dir");
        let mut fs = GuestFs::new(&d, Some(&o)).unwrap();
        fs.mkdir(&c(&["SUB"])).unwrap();
        let id = fs.create(&c(&["SUB", "A.TXT"]), 0, (0, 0)).unwrap();
        fs.node_mut(id).data.extend_from_slice(b"hi");
        assert_eq!(fs.flush().unwrap(), 1);
        assert_eq!(std::fs::read(o.join("SUB/A.TXT")).unwrap(), b"hi");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0);
        std::fs::remove_dir_all(&d).unwrap();
        std::fs::remove_dir_all(&o).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_out_of_the_root_are_invisible() {
        let d = tmp("sym");
        let outside = tmp("sym-outside");
        std::fs::write(outside.join("SECRET.TXT"), b"s").unwrap();
        std::os::unix::fs::symlink(outside.join("SECRET.TXT"), d.join("LINK.TXT")).unwrap();
        let mut fs = GuestFs::new(&d, None).unwrap();
        assert_eq!(fs.open(&c(&["LINK.TXT"])), Err(ERR_FILE_NOT_FOUND));
        std::fs::remove_dir_all(&d).unwrap();
        std::fs::remove_dir_all(&outside).unwrap();
    }
}
