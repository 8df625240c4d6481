//! File mappings: CreateFileMappingA/W, OpenFileMappingA/W,
//! MapViewOfFile(Ex), UnmapViewOfFile, FlushViewOfFile.
//!
//! Owns the mapping objects and their views. A mapping backed by the
//! paging file is one block of guest memory made when it is created: every
//! view of it points into that block, so views alias as on Windows. A view
//! of a file is a copy of the file's bytes in fresh guest memory, written
//! back by FlushViewOfFile and by UnmapViewOfFile when mapped for writing
//! (two views of one file do not see each other's stores before that). It
//! must not reach the host except through the mapped file's own handle.

use crate::dll::Env;
use crate::files::err;
use crate::handles::{FileObj, Object};
use crate::memory::{mem, prot};
use std::io::{Read, Seek, SeekFrom, Write};

/// A view: where it is, which mapping object, the file range it copies.
#[derive(Clone, Debug)]
pub struct View {
    pub object: u32,
    pub offset: u64,
    pub len: u32,
    pub write: bool,
    /// A handle a file view holds on its mapping (closing the mapping's own
    /// handles leaves a mapped file writable until the view goes); 0 for a
    /// view into a paging-file mapping's block, which owns nothing.
    pub keep: u32,
}

impl View {
    /// Whether the view owns its memory (a file view's copy).
    fn owned(&self) -> bool {
        self.keep != 0
    }
}

/// FILE_MAP_WRITE / FILE_MAP_COPY: the view may be written.
const FILE_MAP_WRITE: u32 = 2;
const FILE_MAP_COPY: u32 = 1;
const ERROR_FILE_INVALID: u32 = 1006;
const ERROR_INVALID_ADDRESS: u32 = 487;

fn create(env: &mut Env, file: u32, protect: u32, hi: u32, lo: u32, name: u32, wide: bool) -> u32 {
    let name = env.read_str(name, wide).filter(|s| !s.is_empty());
    if let Some(n) = &name {
        if let Some(id) = env.handles.find_named(n) {
            if !matches!(env.handles.by_id(id), Some(Object::Mapping { .. })) {
                return env.fail(err::INVALID_HANDLE, 0);
            }
            env.last_error = err::ALREADY_EXISTS;
            return env.handles.open_id(id);
        }
    }
    let want = (hi as u64) << 32 | lo as u64;
    let (size, backing) = if file == u32::MAX {
        if want == 0 || want > 0x7FFF_0000 {
            return env.fail(err::INVALID_PARAMETER, 0);
        }
        (want, None)
    } else {
        let Some(Object::File(f)) = env.handles.get(file) else {
            return env.fail(err::INVALID_HANDLE, 0);
        };
        let Some(host) = f.file.as_ref().and_then(|h| h.try_clone().ok()) else {
            return env.fail(err::ACCESS_DENIED, 0);
        };
        let len = host.metadata().map(|m| m.len()).unwrap_or(0);
        let size = if want == 0 { len } else { want };
        if size == 0 {
            return env.fail(ERROR_FILE_INVALID, 0);
        }
        let obj = FileObj {
            file: Some(host),
            host: f.host.clone(),
            guest: f.guest.clone(),
            read: f.read,
            write: f.write,
            append: false,
            delete_on_close: false,
            dirty: false,
            flags: f.flags,
        };
        (size, Some(Box::new(Object::File(obj))))
    };
    let pagefile = backing.is_none();
    let h = env.handles.add_named(
        Object::Mapping {
            size,
            protect,
            file: backing,
        },
        name,
    );
    if pagefile {
        let Ok(block) =
            env.mem
                .virtual_alloc(0, size as u32, mem::RESERVE | mem::COMMIT, prot::READWRITE)
        else {
            crate::io::close(env, h).ok();
            return env.fail(8, 0);
        };
        let id = env.handles.id_of(h).expect("just made");
        env.k32.mapping_blocks.insert(id, block);
    }
    env.last_error = 0;
    h
}

/// Records a view at `a` (`keep`: [`View::keep`]).
fn add_view(env: &mut Env, a: u32, object: u32, offset: u64, len: u32, write: bool, keep: u32) {
    let v = View {
        object,
        offset,
        len,
        write,
        keep,
    };
    env.k32.views.insert(a, v);
}

fn map_view(env: &mut Env, h: u32, access: u32, hi: u32, lo: u32, n: u32) -> u32 {
    let Some(id) = env.handles.id_of(h) else {
        return env.fail(err::INVALID_HANDLE, 0);
    };
    let Some(Object::Mapping { size, .. }) = env.handles.get(h) else {
        return env.fail(err::INVALID_HANDLE, 0);
    };
    let size = *size;
    let offset = (hi as u64) << 32 | lo as u64;
    // Offsets are multiples of the allocation granularity.
    if !offset.is_multiple_of(0x1_0000) || offset > size {
        return env.fail(err::INVALID_PARAMETER, 0);
    }
    let len = if n == 0 { size - offset } else { n as u64 };
    if offset + len > size {
        return env.fail(err::ACCESS_DENIED, 0);
    }
    let write = access & (FILE_MAP_WRITE | FILE_MAP_COPY) != 0;
    if let Some(&block) = env.k32.mapping_blocks.get(&id) {
        let a = block + offset as u32;
        add_view(env, a, id, offset, len as u32, write, 0);
        return a;
    }
    let mut bytes = vec![0u8; len as usize];
    if let Some(Object::Mapping { file: Some(f), .. }) = env.handles.by_id_mut(id) {
        if let Object::File(FileObj {
            file: Some(file), ..
        }) = f.as_mut()
        {
            if file.seek(SeekFrom::Start(offset)).is_ok() {
                let mut got = 0;
                while got < bytes.len() {
                    match file.read(&mut bytes[got..]) {
                        Ok(0) | Err(_) => break,
                        Ok(k) => got += k,
                    }
                }
            }
        }
    }
    let Ok(a) = env.mem.virtual_alloc(
        0,
        len.max(1) as u32,
        mem::RESERVE | mem::COMMIT,
        prot::READWRITE,
    ) else {
        return env.fail(8, 0);
    };
    env.mem.poke(a, &bytes);
    let keep = env.handles.open_id(id);
    add_view(env, a, id, offset, len as u32, write, keep);
    a
}

/// Writes a file view's bytes back to its file.
fn flush(env: &mut Env, v: &View, a: u32) -> bool {
    if !v.owned() || !v.write {
        return true;
    }
    let mut bytes = vec![0u8; v.len as usize];
    env.mem.peek(a, &mut bytes);
    if let Some(Object::Mapping { file: Some(f), .. }) = env.handles.by_id_mut(v.object) {
        if let Object::File(FileObj {
            file: Some(file), ..
        }) = f.as_mut()
        {
            let ok = file.seek(SeekFrom::Start(v.offset)).is_ok() && file.write_all(&bytes).is_ok();
            return ok;
        }
    }
    true
}

fn unmap(env: &mut Env, a: u32) -> bool {
    let Some((&base, v)) = env
        .k32
        .views
        .range(..=a)
        .next_back()
        .filter(|(b, v)| a < *b + v.len.max(1))
        .map(|(b, v)| (b, v.clone()))
    else {
        return env.fail(ERROR_INVALID_ADDRESS, false);
    };
    flush(env, &v, base);
    env.k32.views.remove(&base);
    if v.owned() {
        env.mem.virtual_free(base, 0, mem::RELEASE).ok();
        crate::io::close(env, v.keep).ok();
    }
    true
}

crate::dll! { "(kernel32 file mappings)";
    stdcall fn CreateFileMappingA(env, file: u32, sa: u32, protect: u32, hi: u32, lo: u32, name: u32) -> u32 { create(env, file, protect, hi, lo, name, false) }
    stdcall fn CreateFileMappingW(env, file: u32, sa: u32, protect: u32, hi: u32, lo: u32, name: u32) -> u32 { create(env, file, protect, hi, lo, name, true) }
    stdcall fn OpenFileMappingA(env, access: u32, inherit: bool, name: u32) -> u32 { open(env, name, false) }
    stdcall fn OpenFileMappingW(env, access: u32, inherit: bool, name: u32) -> u32 { open(env, name, true) }
    stdcall fn MapViewOfFile(env, h: u32, access: u32, hi: u32, lo: u32, n: u32) -> u32 { map_view(env, h, access, hi, lo, n) }
    stdcall fn MapViewOfFileEx(env, h: u32, access: u32, hi: u32, lo: u32, n: u32, at: u32) -> u32 {
        // A requested address is not honoured: only "anywhere" is.
        if at != 0 { return env.fail(ERROR_INVALID_ADDRESS, 0); }
        map_view(env, h, access, hi, lo, n)
    }
    stdcall fn UnmapViewOfFile(env, a: u32) -> bool { unmap(env, a) }
    stdcall fn FlushViewOfFile(env, a: u32, n: u32) -> bool {
        let found = env.k32.views.range(..=a).next_back().filter(|(b, v)| a < *b + v.len.max(1)).map(|(b, v)| (*b, v.clone()));
        match found { Some((b, v)) => flush(env, &v, b), None => env.fail(ERROR_INVALID_ADDRESS, false) }
    }
}

fn open(env: &mut Env, name: u32, wide: bool) -> u32 {
    let Some(n) = env.read_str(name, wide) else {
        return env.fail(err::INVALID_PARAMETER, 0);
    };
    match env.handles.find_named(&n) {
        Some(id) if matches!(env.handles.by_id(id), Some(Object::Mapping { .. })) => {
            env.handles.open_id(id)
        }
        Some(_) => env.fail(err::INVALID_HANDLE, 0),
        None => env.fail(err::FILE_NOT_FOUND, 0),
    }
}
