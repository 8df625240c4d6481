//! FindFirst/FindNext (INT 21h 4Eh/4Fh, and the FCB forms 11h/12h): DOS
//! wildcard matching over a directory of the overlay drive.
//!
//! A search snapshots the sorted directory listing at FindFirst and keeps
//! its place on the host, keyed by an id stored in the DTA's reserved bytes
//! (as DOS keeps its own state there), so programs may copy DTAs around.
//! Owns that state and the match rules; it must not write guest memory
//! other than through the caller.

use super::files::{DirEntry, GuestFs, ATTR_DIRECTORY, ATTR_HIDDEN, ATTR_SYSTEM, ATTR_VOLUME};
use super::path::{self, DosError, Resolved, ERR_NO_MORE_FILES, ERR_PATH_NOT_FOUND};
use std::collections::BTreeMap;

/// Searches kept at once (older ones are forgotten, as DOS forgets nothing
/// but also keeps nothing besides the DTA).
const MAX_SEARCHES: usize = 256;

#[derive(Clone, Debug)]
pub struct Search {
    pub entries: Vec<DirEntry>,
    pub next: usize,
    pub owner: u16,
}

#[derive(Clone, Debug, Default)]
pub struct Searches {
    map: BTreeMap<u32, Search>,
    next_id: u32,
}

/// The volume label drive C: reports.
pub const VOLUME_LABEL: &str = "TOYVM";

impl Searches {
    /// Starts a search for `pattern` (a guest path with wildcards in its
    /// last component) with attribute mask `attr`. Returns the search id
    /// and the first match.
    pub fn first(
        &mut self,
        fs: &mut GuestFs,
        cwd: &[String],
        pattern: &[u8],
        attr: u8,
        owner: u16,
    ) -> Result<(u32, DirEntry), DosError> {
        let comps = match path::resolve(cwd, pattern, true)? {
            Resolved::Path(c) => c,
            Resolved::Device(d) => {
                // DOS finds devices by name, as a plain entry.
                let e = DirEntry {
                    name: d.name().to_string(),
                    attr: 0x40,
                    size: 0,
                    time: fs.host_stamp.0,
                    date: fs.host_stamp.1,
                };
                return Ok((
                    self.insert(Search {
                        entries: vec![],
                        next: 0,
                        owner,
                    }),
                    e,
                ));
            }
        };
        let (dir, pat) = match comps.split_last() {
            Some((last, dir)) => (dir.to_vec(), path::to_fcb_name(last)),
            None => (Vec::new(), path::to_fcb_name("*.*")),
        };
        if !fs.is_dir(&dir) {
            return Err(ERR_PATH_NOT_FOUND);
        }
        let mut entries = Vec::new();
        if attr == ATTR_VOLUME || (attr & ATTR_VOLUME != 0 && dir.is_empty()) {
            entries.push(DirEntry {
                name: VOLUME_LABEL.into(),
                attr: ATTR_VOLUME,
                size: 0,
                time: fs.host_stamp.0,
                date: fs.host_stamp.1,
            });
        }
        if attr != ATTR_VOLUME {
            let mut list = fs.list(&dir);
            if !dir.is_empty() {
                for dots in ["..", "."] {
                    list.insert(
                        0,
                        DirEntry {
                            name: dots.into(),
                            attr: ATTR_DIRECTORY,
                            size: 0,
                            time: fs.host_stamp.0,
                            date: fs.host_stamp.1,
                        },
                    );
                }
            }
            for e in list {
                let hidden = e.attr & (ATTR_HIDDEN | ATTR_SYSTEM | ATTR_DIRECTORY);
                if hidden & !attr != 0 {
                    continue;
                }
                let name = if e.name.starts_with('.') {
                    let mut n = [b' '; 11];
                    n[..e.name.len()].copy_from_slice(e.name.as_bytes());
                    n
                } else {
                    path::to_fcb_name(&e.name)
                };
                if path::fcb_match(&pat, &name) {
                    entries.push(e);
                }
            }
        }
        if entries.is_empty() {
            return Err(ERR_NO_MORE_FILES_FIRST);
        }
        let first = entries[0].clone();
        let id = self.insert(Search {
            entries,
            next: 1,
            owner,
        });
        Ok((id, first))
    }

    fn insert(&mut self, s: Search) -> u32 {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        self.map.insert(id, s);
        while self.map.len() > MAX_SEARCHES {
            let oldest = *self.map.keys().next().unwrap();
            self.map.remove(&oldest);
        }
        id
    }

    /// The next match of a search.
    pub fn next(&mut self, id: u32) -> Result<DirEntry, DosError> {
        let s = self.map.get_mut(&id).ok_or(ERR_NO_MORE_FILES)?;
        let e = s.entries.get(s.next).cloned().ok_or(ERR_NO_MORE_FILES)?;
        s.next += 1;
        Ok(e)
    }

    /// Drops the searches of a terminated process.
    pub fn forget_owner(&mut self, owner: u16) {
        self.map.retain(|_, s| s.owner != owner);
    }
}

/// FindFirst with no match says "file not found" (02h) in DOS 3+... except
/// that DOS reports 12h "no more files" when the pattern has wildcards; we
/// follow DOS 5, which returns 12h for both.
const ERR_NO_MORE_FILES_FIRST: DosError = ERR_NO_MORE_FILES;

/// The 43-byte DTA record of a match (search id in the reserved bytes).
pub fn dta_record(id: u32, attr_mask: u8, e: &DirEntry) -> [u8; 43] {
    let mut d = [0u8; 43];
    d[0] = path::DRIVE_C + 1;
    d[1..12].copy_from_slice(&path::to_fcb_name("????????.???"));
    d[12] = attr_mask;
    d[13..17].copy_from_slice(&id.to_le_bytes());
    d[17..21].copy_from_slice(b"TOYV");
    d[0x15] = e.attr;
    d[0x16..0x18].copy_from_slice(&e.time.to_le_bytes());
    d[0x18..0x1A].copy_from_slice(&e.date.to_le_bytes());
    d[0x1A..0x1E].copy_from_slice(&e.size.to_le_bytes());
    let n = e.name.as_bytes();
    d[0x1E..0x1E + n.len().min(12)].copy_from_slice(&n[..n.len().min(12)]);
    d
}

/// The search id a DTA holds.
pub fn dta_id(dta: &[u8]) -> Option<u32> {
    (dta.len() >= 21 && &dta[17..21] == b"TOYV")
        .then(|| u32::from_le_bytes([dta[13], dta[14], dta[15], dta[16]]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_in_overlay() {
        let mut fs = GuestFs::empty();
        for n in ["A.PCX", "B.PCX", "C.TXT"] {
            fs.create(&[n.to_string()], 0, (0, 0)).unwrap();
        }
        fs.mkdir(&["SUB".to_string()]).unwrap();
        let mut s = Searches::default();
        let (id, e) = s.first(&mut fs, &[], b"*.pcx", 0, 1).unwrap();
        assert_eq!(e.name, "A.PCX");
        assert_eq!(s.next(id).unwrap().name, "B.PCX");
        assert_eq!(s.next(id), Err(ERR_NO_MORE_FILES));
        let (id, e) = s.first(&mut fs, &[], b"*.*", ATTR_DIRECTORY, 1).unwrap();
        assert_eq!(e.name, "A.PCX");
        let rest: Vec<String> = std::iter::from_fn(|| s.next(id).ok())
            .map(|e| e.name)
            .collect();
        assert_eq!(rest, vec!["B.PCX", "C.TXT", "SUB"]);
        let (_, e) = s
            .first(&mut fs, &[], b"sub\\*.*", ATTR_DIRECTORY, 1)
            .unwrap();
        assert_eq!(e.name, ".");
        assert_eq!(
            s.first(&mut fs, &[], b"*.zzz", 0, 1).err(),
            Some(ERR_NO_MORE_FILES)
        );
        assert_eq!(
            s.first(&mut fs, &[], b"nodir\\*.*", 0, 1).err(),
            Some(ERR_PATH_NOT_FOUND)
        );
        let rec = dta_record(7, 0, &e);
        assert_eq!(dta_id(&rec), Some(7));
    }
}
