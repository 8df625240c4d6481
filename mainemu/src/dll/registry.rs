//! The registry advapi32's Reg* calls work on: one tree per process, built
//! at the first call from a fixed set of keys (the system's identity, as
//! kernel32 reports it: Windows 7 SP1 6.1.7601 on the machine MAINEMU) and
//! changed by the process's own writes, which last until it exits (no hive
//! is read or written: every run starts from the same tree, whatever ran
//! before).
//!
//! The process runs as a standard user: HKEY_CURRENT_USER is writable;
//! HKEY_LOCAL_MACHINE, HKEY_USERS, HKEY_CLASSES_ROOT and
//! HKEY_CURRENT_CONFIG are read-only (opening for write, creating, setting
//! or deleting there is ERROR_ACCESS_DENIED, as Windows answers a standard
//! user). HKEY_CLASSES_ROOT is its own (empty) tree, not the merged view.
//!
//! Keys are named case-insensitively and keep the case they were created
//! with; subkeys enumerate in name order (case-insensitive), values in the
//! order they were first set. Open keys are handles to `Object::Key(path)`
//! (the path from the root's full name, `\`-separated); the predefined
//! roots are their fixed handle values.
//!
//! Owns the tree and the path rules. It must not touch host state.

/// One value: name ("" is the default value), REG_* type, raw bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Value {
    pub name: String,
    pub kind: u32,
    pub data: Vec<u8>,
}

/// One key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Key {
    pub name: String,
    pub subkeys: Vec<Key>,
    pub values: Vec<Value>,
    /// Last write time (FILETIME).
    pub time: u64,
}

pub const REG_SZ: u32 = 1;
pub const REG_EXPAND_SZ: u32 = 2;
pub const REG_DWORD: u32 = 4;
pub const REG_MULTI_SZ: u32 = 7;

/// The predefined roots: handle value, full name, writable.
pub const ROOTS: [(u32, &str, bool); 5] = [
    (0x8000_0000, "HKEY_CLASSES_ROOT", false),
    (0x8000_0001, "HKEY_CURRENT_USER", true),
    (0x8000_0002, "HKEY_LOCAL_MACHINE", false),
    (0x8000_0003, "HKEY_USERS", false),
    (0x8000_0005, "HKEY_CURRENT_CONFIG", false),
];

/// The process's tree (None until the first registry call).
#[derive(Default)]
pub struct Registry {
    roots: Option<Vec<Key>>,
}

fn utf16z(s: &str) -> Vec<u8> {
    super::wbytes(&s.encode_utf16().chain([0]).collect::<Vec<_>>())
}

fn sz(name: &str, s: &str) -> Value {
    Value {
        name: name.into(),
        kind: REG_SZ,
        data: utf16z(s),
    }
}

fn dword(name: &str, v: u32) -> Value {
    Value {
        name: name.into(),
        kind: REG_DWORD,
        data: v.to_le_bytes().to_vec(),
    }
}

/// The keys every process starts with.
fn initial() -> Vec<Key> {
    let mut roots: Vec<Key> = ROOTS
        .iter()
        .map(|(_, n, _)| Key {
            name: (*n).into(),
            ..Default::default()
        })
        .collect();
    let mut put = |root: usize, path: &str, values: Vec<Value>| {
        let k = create(&mut roots[root], &split(path), 0).0;
        k.values = values;
    };
    put(1, "Software", vec![]);
    put(
        1,
        "Environment",
        vec![sz("TEMP", "C:\\"), sz("TMP", "C:\\")],
    );
    put(
        1,
        "Volatile Environment",
        vec![
            sz("USERDOMAIN", "MAINEMU"),
            sz("USERNAME", super::advapi32::USER),
        ],
    );
    put(
        2,
        "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion",
        vec![
            sz("CSDVersion", "Service Pack 1"),
            sz("CurrentBuild", "7601"),
            sz("CurrentBuildNumber", "7601"),
            sz("CurrentType", "Multiprocessor Free"),
            sz("CurrentVersion", "6.1"),
            sz("EditionID", "Professional"),
            dword("InstallDate", 1_577_836_800),
            sz("ProductName", "Windows 7 Professional"),
            sz("RegisteredOrganization", ""),
            sz("RegisteredOwner", super::advapi32::USER),
            sz("SystemRoot", "C:\\windows"),
        ],
    );
    put(
        2,
        "SOFTWARE\\Microsoft\\Windows\\CurrentVersion",
        vec![
            sz("CommonFilesDir", "C:\\Program Files\\Common Files"),
            sz("ProgramFilesDir", "C:\\Program Files"),
        ],
    );
    put(2, "SOFTWARE\\Classes", vec![]);
    put(
        2,
        "SYSTEM\\CurrentControlSet\\Control\\ComputerName\\ComputerName",
        vec![sz("ComputerName", "MAINEMU")],
    );
    put(
        2,
        "SYSTEM\\CurrentControlSet\\Control\\Nls\\CodePage",
        vec![sz("ACP", "1252"), sz("OEMCP", "437")],
    );
    put(3, ".DEFAULT", vec![]);
    put(4, "Software", vec![]);
    roots
}

/// A subkey path's components (empty ones, from doubled or trailing
/// backslashes, are dropped).
pub fn split(path: &str) -> Vec<String> {
    path.split('\\')
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

fn find<'a>(k: &'a Key, name: &str) -> Option<&'a Key> {
    k.subkeys.iter().find(|s| s.name.eq_ignore_ascii_case(name))
}

fn find_mut<'a>(k: &'a mut Key, name: &str) -> Option<&'a mut Key> {
    k.subkeys
        .iter_mut()
        .find(|s| s.name.eq_ignore_ascii_case(name))
}

/// Creates the path's missing keys under `k` (stamped `time`); answers the
/// last one and whether it was new.
fn create<'a>(k: &'a mut Key, path: &[String], time: u64) -> (&'a mut Key, bool) {
    let Some((first, rest)) = path.split_first() else {
        return (k, false);
    };
    let new = find(k, first).is_none();
    if new {
        let upper = first.to_uppercase();
        let at = k
            .subkeys
            .iter()
            .position(|s| s.name.to_uppercase() > upper)
            .unwrap_or(k.subkeys.len());
        k.subkeys.insert(
            at,
            Key {
                name: first.clone(),
                time,
                ..Default::default()
            },
        );
        k.time = time;
    }
    let child = find_mut(k, first).expect("just made");
    if rest.is_empty() {
        (child, new)
    } else {
        let (last, n) = create(child, rest, time);
        (last, new || n)
    }
}

impl Registry {
    fn roots(&mut self) -> &mut Vec<Key> {
        self.roots.get_or_insert_with(initial)
    }

    /// The root a full path starts at, and whether it is writable.
    fn root_index(path: &[String]) -> Option<(usize, bool)> {
        let first = path.first()?;
        ROOTS
            .iter()
            .position(|(_, n, _)| n.eq_ignore_ascii_case(first))
            .map(|i| (i, ROOTS[i].2))
    }

    /// The key at a full path (root name first).
    pub fn get(&mut self, path: &[String]) -> Option<&Key> {
        let (r, _) = Self::root_index(path)?;
        let mut k = &self.roots()[r];
        for c in &path[1..] {
            k = find(k, c)?;
        }
        Some(k)
    }

    pub fn get_mut(&mut self, path: &[String]) -> Option<&mut Key> {
        let (r, _) = Self::root_index(path)?;
        let mut k = &mut self.roots()[r];
        for c in &path[1..] {
            k = find_mut(k, c)?;
        }
        Some(k)
    }

    /// Whether keys under this full path may be changed.
    pub fn writable(path: &[String]) -> bool {
        Self::root_index(path).is_some_and(|(_, w)| w)
    }

    /// Creates a full path's missing keys; the path with the stored case
    /// of each component, and whether the last key is new.
    pub fn create(&mut self, path: &[String], time: u64) -> Option<(Vec<String>, bool)> {
        let (r, _) = Self::root_index(path)?;
        let root = &mut self.roots()[r];
        let new = create(root, &path[1..], time).1;
        Some((self.canonical(path)?, new))
    }

    /// A full path with each component's stored case (None if absent).
    pub fn canonical(&mut self, path: &[String]) -> Option<Vec<String>> {
        let (r, _) = Self::root_index(path)?;
        let mut k = &self.roots()[r];
        let mut out = vec![k.name.clone()];
        for c in &path[1..] {
            k = find(k, c)?;
            out.push(k.name.clone());
        }
        Some(out)
    }

    /// Removes the key at a full path (not a root); false if absent.
    pub fn remove(&mut self, path: &[String]) -> bool {
        let Some((last, parent)) = path.split_last() else {
            return false;
        };
        if parent.is_empty() {
            return false;
        }
        match self.get_mut(parent) {
            Some(p) => {
                let before = p.subkeys.len();
                p.subkeys.retain(|s| !s.name.eq_ignore_ascii_case(last));
                p.subkeys.len() != before
            }
            None => false,
        }
    }
}

impl Key {
    pub fn value(&self, name: &str) -> Option<&Value> {
        self.values
            .iter()
            .find(|v| v.name.eq_ignore_ascii_case(name))
    }

    /// Sets a value: replaced in place, or appended.
    pub fn set(&mut self, name: &str, kind: u32, data: Vec<u8>, time: u64) {
        match self
            .values
            .iter_mut()
            .find(|v| v.name.eq_ignore_ascii_case(name))
        {
            Some(v) => {
                v.kind = kind;
                v.data = data;
            }
            None => self.values.push(Value {
                name: name.into(),
                kind,
                data,
            }),
        }
        self.time = time;
    }

    pub fn delete_value(&mut self, name: &str) -> bool {
        let before = self.values.len();
        self.values.retain(|v| !v.name.eq_ignore_ascii_case(name));
        before != self.values.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_open_enumerate_remove() {
        let mut r = Registry::default();
        let p = |s: &str| split(s);
        assert!(r
            .get(&p(
                "HKEY_LOCAL_MACHINE\\software\\microsoft\\windows nt\\currentversion"
            ))
            .is_some_and(|k| k.value("productname").is_some()));
        let (c, new) = r
            .create(&p("HKEY_CURRENT_USER\\Software\\b\\x"), 7)
            .unwrap();
        assert!(new);
        assert_eq!(c.join("\\"), "HKEY_CURRENT_USER\\Software\\b\\x");
        r.create(&p("HKEY_CURRENT_USER\\software\\A"), 8).unwrap();
        assert!(!r.create(&p("HKEY_CURRENT_USER\\SOFTWARE\\a"), 9).unwrap().1);
        let names: Vec<_> = r
            .get(&p("HKEY_CURRENT_USER\\Software"))
            .unwrap()
            .subkeys
            .iter()
            .map(|k| k.name.clone())
            .collect();
        assert_eq!(names, ["A", "b"]);
        let k = r.get_mut(&p("HKEY_CURRENT_USER\\Software\\A")).unwrap();
        k.set("v", REG_DWORD, vec![1, 0, 0, 0], 10);
        k.set("", REG_SZ, utf16z("d"), 10);
        k.set("V", REG_DWORD, vec![2, 0, 0, 0], 11);
        assert_eq!(k.values.len(), 2);
        assert_eq!(k.values[0].data, [2, 0, 0, 0]);
        assert!(Registry::writable(&p("hkey_current_user\\x")));
        assert!(!Registry::writable(&p("HKEY_LOCAL_MACHINE\\SOFTWARE")));
        assert!(r.remove(&p("HKEY_CURRENT_USER\\Software\\A")));
        assert!(!r.remove(&p("HKEY_CURRENT_USER\\Software\\A")));
        assert!(!r.remove(&p("HKEY_CURRENT_USER")));
    }
}
