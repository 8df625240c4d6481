//! The kernel object table: what a guest HANDLE names.
//!
//! Owns: objects (open files and directories, directory searches, console
//! buffers, events, mutexes, semaphores, threads, file mappings, pipes) with
//! reference counts so duplicated handles share one object, and the handle
//! values: small multiples of four handed out lowest-free first, so the same
//! program gets the same handles on every run (invariant 7). Pseudo handles
//! (the current process -1 and thread -2) are resolved by the callers.
//!
//! It must not resolve guest paths (`vfs`) or do file I/O beyond holding the
//! host `File` (the `files` module does), nor decide wait semantics (the
//! kernel32 wait functions do, over [`Object::signaled`]).

use std::collections::BTreeMap;

/// A guest handle value.
pub type Handle = u32;

/// INVALID_HANDLE_VALUE.
pub const INVALID: Handle = 0xFFFF_FFFF;
/// GetCurrentProcess() and GetCurrentThread().
pub const CURRENT_PROCESS: Handle = 0xFFFF_FFFF;
pub const CURRENT_THREAD: Handle = 0xFFFF_FFFE;

/// Which console buffer a console handle names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConsoleKind {
    Input,
    Output,
    Error,
    /// A screen buffer from CreateConsoleScreenBuffer (its number in
    /// `kernel32::console_buffer`).
    Buffer(u32),
}

/// An open host file or directory.
#[derive(Debug)]
pub struct FileObj {
    /// `None` for a directory handle (FILE_FLAG_BACKUP_SEMANTICS).
    pub file: Option<std::fs::File>,
    pub host: std::path::PathBuf,
    /// The guest's full path (for GetFinalPathNameByHandle and reports).
    pub guest: String,
    pub read: bool,
    pub write: bool,
    /// FILE_APPEND_DATA without FILE_WRITE_DATA: every write goes to the end.
    pub append: bool,
    pub delete_on_close: bool,
    /// Something was written: the host mtime is set to guest time on close.
    pub dirty: bool,
    /// CreateFile's attributes, flags and share mode (reported back by queries).
    pub flags: u32,
}

/// A directory search (FindFirstFile).
#[derive(Clone, Debug)]
pub struct FindObj {
    /// The matching entries, already sorted, with their attributes.
    pub entries: Vec<crate::files::DirEntry>,
    pub next: usize,
}

/// An anonymous pipe's shared buffer (both ends name the same object id).
#[derive(Clone, Debug, Default)]
pub struct PipeBuf {
    pub data: std::collections::VecDeque<u8>,
    pub readers: u32,
    pub writers: u32,
}

/// A completion packet (GetQueuedCompletionStatus hands these out in order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    pub bytes: u32,
    pub key: u32,
    pub ov: u32,
    /// The NTSTATUS of the operation (0: success).
    pub status: u32,
}

/// A kernel object.
#[derive(Debug)]
pub enum Object {
    File(FileObj),
    /// The NUL device: reads end at once, writes vanish.
    Null,
    Console(ConsoleKind),
    Find(FindObj),
    Event {
        manual: bool,
        signaled: bool,
    },
    Mutex {
        /// Owning thread id and recursion count.
        owner: Option<(u32, u32)>,
        abandoned: bool,
    },
    Semaphore {
        count: u32,
        max: u32,
    },
    /// A thread, by id.
    Thread(u32),
    /// A file mapping: its size and, for a file-backed one, the file object.
    Mapping {
        size: u64,
        protect: u32,
        file: Option<Box<Object>>,
    },
    /// One end of an anonymous pipe (the buffer is the object with id `buf`).
    PipeEnd {
        buf: u32,
        write: bool,
    },
    PipeBuf(PipeBuf),
    /// A child process that ran inside CreateProcess: its exit code, or
    /// STILL_ACTIVE for a child that ran until it waited for input that
    /// can never come (it stays blocked until TerminateProcess).
    Process(u32),
    /// An I/O completion port: its queued packets, oldest first.
    Port(std::collections::VecDeque<Packet>),
    /// A registry key (the registry module owns the tree; this is its path).
    Key(String),
    /// Anything else a program may hold and close (tokens, activation contexts).
    Other(&'static str),
}

impl Object {
    /// The name of the object's type, for reports.
    pub fn kind(&self) -> &'static str {
        match self {
            Object::File(_) => "file",
            Object::Null => "null device",
            Object::Console(_) => "console",
            Object::Find(_) => "find",
            Object::Event { .. } => "event",
            Object::Mutex { .. } => "mutex",
            Object::Semaphore { .. } => "semaphore",
            Object::Thread(_) => "thread",
            Object::Mapping { .. } => "mapping",
            Object::PipeEnd { .. } => "pipe",
            Object::PipeBuf(_) => "pipe buffer",
            Object::Port(_) => "completion port",
            Object::Process(_) => "process",
            Object::Key(_) => "key",
            Object::Other(k) => k,
        }
    }
}

struct Slot {
    obj: Object,
    refs: u32,
    /// The name it was created with (named events, mutexes, semaphores, mappings).
    name: Option<String>,
}

/// The handle table.
pub struct Handles {
    /// Handle → object id.
    handles: BTreeMap<Handle, u32>,
    objects: BTreeMap<u32, Slot>,
    next_obj: u32,
    /// Get/SetHandleInformation's flags per handle (HANDLE_FLAG_INHERIT 1,
    /// HANDLE_FLAG_PROTECT_FROM_CLOSE 2); absent means 0.
    info: BTreeMap<Handle, u32>,
}

/// The first ordinary handle value (below it: the console handles).
pub const FIRST: Handle = 0x40;

impl Default for Handles {
    fn default() -> Self {
        Handles::new()
    }
}

impl Handles {
    pub fn new() -> Handles {
        Handles {
            handles: BTreeMap::new(),
            objects: BTreeMap::new(),
            next_obj: 1,
            info: BTreeMap::new(),
        }
    }

    fn free_handle(&self) -> Handle {
        let mut h = FIRST;
        for (&k, _) in self.handles.range(FIRST..) {
            if k != h {
                break;
            }
            h += 4;
        }
        h
    }

    /// Adds an object and returns a new handle to it.
    pub fn add(&mut self, obj: Object) -> Handle {
        self.add_named(obj, None)
    }

    /// Adds an object with a name (looked up by [`Handles::find_named`]).
    pub fn add_named(&mut self, obj: Object, name: Option<String>) -> Handle {
        let id = self.add_object(obj, name);
        self.open_id(id)
    }

    /// Adds an object with no handle yet (pipe buffers); returns its id.
    pub fn add_object(&mut self, obj: Object, name: Option<String>) -> u32 {
        let id = self.next_obj;
        self.next_obj += 1;
        self.objects.insert(id, Slot { obj, refs: 0, name });
        id
    }

    /// A new handle to object `id`.
    pub fn open_id(&mut self, id: u32) -> Handle {
        let h = self.free_handle();
        self.handles.insert(h, id);
        if let Some(s) = self.objects.get_mut(&id) {
            s.refs += 1;
        }
        h
    }

    /// Places an object at a fixed handle value (the console handles).
    pub fn add_at(&mut self, h: Handle, obj: Object) {
        let id = self.add_object(obj, None);
        self.handles.insert(h, id);
        self.objects.get_mut(&id).expect("just added").refs += 1;
    }

    /// The object id a handle names.
    pub fn id_of(&self, h: Handle) -> Option<u32> {
        self.handles.get(&h).copied()
    }

    pub fn get(&self, h: Handle) -> Option<&Object> {
        self.objects.get(self.handles.get(&h)?).map(|s| &s.obj)
    }

    pub fn get_mut(&mut self, h: Handle) -> Option<&mut Object> {
        let id = *self.handles.get(&h)?;
        self.objects.get_mut(&id).map(|s| &mut s.obj)
    }

    pub fn by_id(&self, id: u32) -> Option<&Object> {
        self.objects.get(&id).map(|s| &s.obj)
    }

    pub fn by_id_mut(&mut self, id: u32) -> Option<&mut Object> {
        self.objects.get_mut(&id).map(|s| &mut s.obj)
    }

    /// A named object's id (named events, mutexes, semaphores, mappings).
    pub fn find_named(&self, name: &str) -> Option<u32> {
        self.objects
            .iter()
            .find(|(_, s)| s.name.as_deref() == Some(name) && s.refs > 0)
            .map(|(&id, _)| id)
    }

    /// DuplicateHandle: a second handle to the same object.
    pub fn duplicate(&mut self, h: Handle) -> Option<Handle> {
        let id = self.id_of(h)?;
        Some(self.open_id(id))
    }

    /// GetHandleInformation's flags (None for a handle that is not open).
    pub fn info(&self, h: Handle) -> Option<u32> {
        self.handles
            .contains_key(&h)
            .then(|| self.info.get(&h).copied().unwrap_or(0))
    }

    /// SetHandleInformation: the bits of `mask` take those of `flags`.
    pub fn set_info(&mut self, h: Handle, mask: u32, flags: u32) -> bool {
        let Some(old) = self.info(h) else {
            return false;
        };
        let new = (old & !mask) | (flags & mask & 3);
        if new == 0 {
            self.info.remove(&h);
        } else {
            self.info.insert(h, new);
        }
        true
    }

    /// CloseHandle: drops the handle; returns the object when it was the last reference.
    pub fn close(&mut self, h: Handle) -> Option<Option<Object>> {
        self.info.remove(&h);
        let id = self.handles.remove(&h)?;
        let slot = self.objects.get_mut(&id)?;
        slot.refs -= 1;
        if slot.refs == 0 {
            return Some(self.objects.remove(&id).map(|s| s.obj));
        }
        Some(None)
    }

    /// Removes an object that has no handles (a pipe buffer both ends closed).
    pub fn drop_object(&mut self, id: u32) -> Option<Object> {
        self.objects.remove(&id).map(|s| s.obj)
    }

    /// Every open handle in order (for reports and leak checks).
    pub fn list(&self) -> impl Iterator<Item = (Handle, &Object)> {
        self.handles
            .iter()
            .filter_map(|(&h, id)| self.objects.get(id).map(|s| (h, &s.obj)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_lowest_free_and_shared_by_duplicates() {
        let mut t = Handles::new();
        let a = t.add(Object::Event {
            manual: true,
            signaled: false,
        });
        let b = t.add(Object::Other("token"));
        assert_eq!((a, b), (0x40, 0x44));
        let c = t.duplicate(a).unwrap();
        assert_eq!(c, 0x48);
        assert!(matches!(t.close(a), Some(None)), "still referenced by c");
        let d = t.add(Object::Other("x"));
        assert_eq!(d, 0x40, "lowest free value reused");
        if let Some(Object::Event { signaled, .. }) = t.get_mut(c) {
            *signaled = true;
        }
        assert!(matches!(
            t.close(c),
            Some(Some(Object::Event { signaled: true, .. }))
        ));
        assert!(t.close(c).is_none(), "closed twice");
    }
}
