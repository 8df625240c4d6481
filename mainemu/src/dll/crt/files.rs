//! The C runtime's descriptor and file-system calls: `_open` to `_close`,
//! the `stat` family (each struct layout), `_access`, `_chmod`, `remove`,
//! `rename`, directories, `_findfirst` (each data layout), `_getcwd`,
//! `_fullpath`, `_splitpath`/`_makepath`, temporary names. Shared by msvcrt
//! and ucrtbase; A and W forms share one body.
//!
//! Owns these calls' C conventions (return -1 and errno). Paths go through
//! kernel32's bodies (and so vfs); descriptors through [`super::fd`].

use super::fd::{self, errno};
use crate::dll::kernel32::file as k32;
use crate::dll::Env;
use crate::files::{self, attr, DirEntry};

/// FILETIME → Unix seconds.
pub fn unix_time(ft: u64) -> i64 {
    (ft as i64 - crate::civil::UNIX_EPOCH as i64).div_euclid(crate::civil::TICKS as i64)
}

/// What the stat calls report about one file.
#[derive(Clone, Debug, Default)]
pub struct Stat {
    pub dev: u32,
    pub mode: u16,
    pub size: u64,
    pub mtime: i64,
}

fn mode_of(attrs: u32, name: &str) -> u16 {
    let mut m: u16 = if attrs & attr::DIRECTORY != 0 {
        0x4000 | 0x40
    } else {
        0x8000
    };
    m |= 0x100; // read
    if attrs & attr::READONLY == 0 {
        m |= 0x80;
    }
    let ext = name.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
    if matches!(ext.as_str(), "exe" | "com" | "bat" | "cmd") {
        m |= 0x40;
    }
    m | (m & 0x1C0) >> 3 | (m & 0x1C0) >> 6
}

fn stat_path(env: &mut Env, path: u32, wide: bool) -> Result<Stat, i32> {
    let Some(p) = env.read_str(path, wide) else {
        return Err(errno::EINVAL);
    };
    // A trailing separator is only allowed on a root ("C:\").
    let trimmed = p.trim_end_matches(['\\', '/']);
    if trimmed.len() != p.len()
        && !(trimmed.len() == 2 && trimmed.ends_with(':'))
        && !trimmed.is_empty()
    {
        return Err(errno::ENOENT);
    }
    let host = k32::resolve(env, &p).map_err(fd::errno_of)?;
    let name = host
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let e = files::stat_entry(&host, &name).map_err(fd::errno_of)?;
    let full = env.drives.lexical_full(&p);
    let dev = (full.as_bytes()[0].to_ascii_uppercase() - b'A') as u32;
    Ok(Stat {
        dev,
        mode: mode_of(e.attrs, &name),
        size: e.size,
        mtime: unix_time(e.mtime),
    })
}

fn stat_fd(env: &mut Env, fdn: i32) -> Result<Stat, i32> {
    let f = fd::get(env, fdn)?;
    if f.device {
        return Ok(Stat {
            dev: fdn as u32,
            mode: 0x2000 | 0x180 | 0x30 | 0x6,
            ..Default::default()
        });
    }
    match env.handles.get(f.handle) {
        Some(crate::handles::Object::File(fo)) => {
            let host = fo.host.clone();
            let name = host
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let e = files::stat_entry(&host, &name).map_err(fd::errno_of)?;
            Ok(Stat {
                dev: 2,
                mode: mode_of(e.attrs, &name),
                size: e.size,
                mtime: unix_time(e.mtime),
            })
        }
        Some(crate::handles::Object::PipeEnd { .. }) => Ok(Stat {
            mode: 0x1000 | 0x180 | 0x30 | 0x6,
            ..Default::default()
        }),
        _ => Err(errno::EBADF),
    }
}

/// The stat layouts: (64-bit size, 64-bit times).
#[derive(Clone, Copy)]
pub enum Layout {
    /// `_stat32`: size 32, times 32 (36 bytes).
    S32,
    /// `_stat32i64` / `_stati64`: size 64, times 32 (48 bytes).
    S32i64,
    /// `_stat64i32`: size 32, times 64 (48 bytes).
    S64i32,
    /// `_stat64`: size 64, times 64 (56 bytes).
    S64,
}

fn put_stat(env: &mut Env, out: u32, s: &Stat, l: Layout) -> bool {
    let mut b = [0u8; 56];
    b[0..4].copy_from_slice(&s.dev.to_le_bytes());
    b[6..8].copy_from_slice(&s.mode.to_le_bytes());
    b[8..10].copy_from_slice(&1u16.to_le_bytes());
    b[16..20].copy_from_slice(&s.dev.to_le_bytes());
    let len = match l {
        Layout::S32 => {
            b[20..24].copy_from_slice(&(s.size as u32).to_le_bytes());
            for o in [24, 28, 32] {
                b[o..o + 4].copy_from_slice(&(s.mtime as i32).to_le_bytes());
            }
            36
        }
        Layout::S32i64 => {
            b[24..32].copy_from_slice(&s.size.to_le_bytes());
            for o in [32, 36, 40] {
                b[o..o + 4].copy_from_slice(&(s.mtime as i32).to_le_bytes());
            }
            48
        }
        Layout::S64i32 => {
            b[20..24].copy_from_slice(&(s.size as u32).to_le_bytes());
            for o in [24, 32, 40] {
                b[o..o + 8].copy_from_slice(&s.mtime.to_le_bytes());
            }
            48
        }
        Layout::S64 => {
            b[24..32].copy_from_slice(&s.size.to_le_bytes());
            for o in [32, 40, 48] {
                b[o..o + 8].copy_from_slice(&s.mtime.to_le_bytes());
            }
            56
        }
    };
    env.mem.poke(out, &b[..len]).is_some()
}

/// stat(path, out) in a layout: 0 or -1 with errno.
pub fn stat(env: &mut Env, path: u32, out: u32, wide: bool, l: Layout) -> i32 {
    match stat_path(env, path, wide) {
        Ok(s) => {
            put_stat(env, out, &s, l);
            0
        }
        Err(e) => {
            fd::set_errno(env, e);
            -1
        }
    }
}

pub fn fstat(env: &mut Env, fdn: i32, out: u32, l: Layout) -> i32 {
    match stat_fd(env, fdn) {
        Ok(s) => {
            put_stat(env, out, &s, l);
            0
        }
        Err(e) => {
            fd::set_errno(env, e);
            -1
        }
    }
}

/// `_access`: 0 if the file exists and allows `mode` (2 = write).
fn access(env: &mut Env, path: u32, mode: u32, wide: bool) -> i32 {
    if mode & !6 != 0 {
        fd::set_errno(env, errno::EINVAL);
        return -1;
    }
    let a = k32::get_attributes(env, path, wide);
    if a == attr::INVALID {
        fd::set_errno(env, errno::ENOENT);
        return -1;
    }
    if mode & 2 != 0 && a & attr::READONLY != 0 && a & attr::DIRECTORY == 0 {
        fd::set_errno(env, errno::EACCES);
        return -1;
    }
    0
}

/// Runs a kernel32 body that returns success and maps its error to errno.
fn c_result(env: &mut Env, ok: bool) -> i32 {
    if ok {
        0
    } else {
        let e = env.last_error;
        fd::set_dos_error(env, e);
        -1
    }
}

/// `_getcwd(buf, n)`: NULL buf allocates.
fn getcwd(env: &mut Env, buf: u32, n: i32, wide: bool) -> u32 {
    let c = env.drives.cwd();
    let units = if wide {
        c.encode_utf16().count()
    } else {
        c.len()
    } as i32;
    let unit = if wide { 2 } else { 1 };
    let buf = if buf == 0 {
        env.alloc(((units + 1).max(n)) as u32 * unit)
    } else {
        if units + 1 > n {
            fd::set_errno(env, errno::ERANGE);
            return 0;
        }
        buf
    };
    env.put_str(buf, &c, wide);
    buf
}

fn fullpath(env: &mut Env, buf: u32, p: u32, n: u32, wide: bool) -> u32 {
    let rel = env
        .read_str(p, wide)
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| ".".into());
    let full = env.drives.lexical_full(&rel);
    let units = if wide {
        full.encode_utf16().count()
    } else {
        full.len()
    } as u32;
    let buf = if buf == 0 {
        env.alloc((units + 1).max(n) * if wide { 2 } else { 1 })
    } else {
        if units + 1 > n {
            fd::set_errno(env, errno::ERANGE);
            return 0;
        }
        buf
    };
    env.put_str(buf, &full, wide);
    buf
}

/// `_splitpath(path, drive, dir, fname, ext)`.
fn splitpath(env: &mut Env, p: u32, drive: u32, dir: u32, fname: u32, ext: u32, wide: bool) {
    let s = env.read_str(p, wide).unwrap_or_default();
    let (d, rest) = if s.len() >= 2 && s.as_bytes()[1] == b':' {
        s.split_at(2)
    } else {
        ("", s.as_str())
    };
    let cut = rest.rfind(['\\', '/']).map_or(0, |i| i + 1);
    let (di, file) = rest.split_at(cut);
    let (f, e) = match file.rfind('.') {
        Some(i) => file.split_at(i),
        None => (file, ""),
    };
    for (out, v) in [(drive, d), (dir, di), (fname, f), (ext, e)] {
        if out != 0 {
            env.put_str(out, v, wide);
        }
    }
}

/// `_makepath(out, drive, dir, fname, ext)`.
fn makepath(env: &mut Env, out: u32, drive: u32, dir: u32, fname: u32, ext: u32, wide: bool) {
    let mut s = String::new();
    if let Some(d) = env.read_str(drive, wide).filter(|d| !d.is_empty()) {
        s.push_str(&d[..1]);
        s.push(':');
    }
    if let Some(d) = env.read_str(dir, wide).filter(|d| !d.is_empty()) {
        s.push_str(&d);
        if !d.ends_with(['\\', '/']) {
            s.push('\\');
        }
    }
    if let Some(f) = env.read_str(fname, wide) {
        s.push_str(&f);
    }
    if let Some(e) = env.read_str(ext, wide).filter(|e| !e.is_empty()) {
        if !e.starts_with('.') {
            s.push('.');
        }
        s.push_str(&e);
    }
    env.put_str(out, &s, wide);
}

/// The `_finddata` layouts: (64-bit times, 64-bit size).
#[derive(Clone, Copy)]
pub enum FindLayout {
    /// `_finddata32_t`: 32-bit times and size.
    F32,
    /// `_finddata32i64_t` / `_finddatai64_t`.
    F32i64,
    /// `_finddata64i32_t`.
    F64i32,
    /// `__finddata64_t`.
    F64,
}

fn put_finddata(env: &mut Env, out: u32, e: &DirEntry, l: FindLayout, wide: bool) {
    let t = unix_time(e.mtime);
    let mut b = Vec::new();
    b.extend(e.attrs.to_le_bytes());
    match l {
        FindLayout::F32 | FindLayout::F32i64 => {
            for _ in 0..3 {
                b.extend((t as i32).to_le_bytes());
            }
        }
        FindLayout::F64 | FindLayout::F64i32 => {
            b.extend([0u8; 4]);
            for _ in 0..3 {
                b.extend(t.to_le_bytes());
            }
        }
    }
    match l {
        FindLayout::F32 | FindLayout::F64i32 => b.extend((e.size as u32).to_le_bytes()),
        FindLayout::F32i64 | FindLayout::F64 => {
            while b.len() % 8 != 0 {
                b.push(0);
            }
            b.extend(e.size.to_le_bytes());
        }
    }
    if wide {
        let mut w: Vec<u16> = e.name.encode_utf16().take(259).collect();
        w.resize(260, 0);
        b.extend(crate::dll::wbytes(&w));
    } else {
        let mut n: Vec<u8> = e
            .name
            .chars()
            .take(259)
            .map(|c| if (c as u32) < 256 { c as u8 } else { b'?' })
            .collect();
        n.resize(260, 0);
        b.extend(n);
    }
    env.mem.poke(out, &b);
}

/// `_findfirst`: a search handle or -1 (ENOENT).
fn findfirst(env: &mut Env, spec: u32, out: u32, l: FindLayout, wide: bool) -> i32 {
    let scratch = env.alloc(600);
    let h = k32::find_first(env, spec, scratch, wide);
    let heap = env.process_heap;
    if h == crate::handles::INVALID {
        env.with_heap(heap, |hp, _| hp.free(scratch));
        let e = env.last_error;
        fd::set_errno(
            env,
            if e == 3 || e == 2 {
                errno::ENOENT
            } else {
                fd::errno_of(e)
            },
        );
        return -1;
    }
    env.with_heap(heap, |hp, _| hp.free(scratch));
    let first = match env.handles.get(h) {
        Some(crate::handles::Object::Find(f)) => f.entries.first().cloned(),
        _ => None,
    };
    if let Some(e) = first {
        put_finddata(env, out, &e, l, wide);
    }
    h as i32
}

fn findnext(env: &mut Env, h: i32, out: u32, l: FindLayout, wide: bool) -> i32 {
    let e = match env.handles.get_mut(h as u32) {
        Some(crate::handles::Object::Find(f)) => {
            let e = f.entries.get(f.next).cloned();
            if e.is_some() {
                f.next += 1;
            }
            e
        }
        _ => {
            fd::set_errno(env, errno::EINVAL);
            return -1;
        }
    };
    match e {
        Some(e) => {
            put_finddata(env, out, &e, l, wide);
            0
        }
        None => {
            fd::set_errno(env, errno::ENOENT);
            -1
        }
    }
}

/// `_mktemp`: replaces the trailing XXXXXX with a letter and the process id.
fn mktemp(env: &mut Env, t: u32, wide: bool) -> u32 {
    let Some(s) = env.read_str(t, wide) else {
        return 0;
    };
    if !s.ends_with("XXXXXX") {
        fd::set_errno(env, errno::EINVAL);
        return 0;
    }
    let base = &s[..s.len() - 6];
    for letter in 'a'..='z' {
        let cand = format!("{base}{letter}{:05}", crate::process::PROCESS_ID % 100_000);
        let exists = k32::resolve(env, &cand).is_ok_and(|h| h.exists());
        if !exists {
            env.put_str(t, &cand, wide);
            return t;
        }
    }
    0
}

fn tmpnam(env: &mut Env, buf: u32) -> u32 {
    let n = env.crt.tmp_counter;
    env.crt.tmp_counter += 1;
    let name = format!("\\s{:x}.", n + 1);
    let buf = if buf == 0 {
        if let Some(&a) = env.data.get("crt!(tmpnam)") {
            a
        } else {
            let a = env.alloc(260);
            env.data.insert("crt!(tmpnam)".into(), a);
            a
        }
    } else {
        buf
    };
    env.put_str(buf, &name, false);
    buf
}

fn tempnam(env: &mut Env, dir: u32, prefix: u32, wide: bool) -> u32 {
    let d = env
        .read_str(dir, wide)
        .filter(|d| k32::resolve(env, d).is_ok_and(|h| h.is_dir()))
        .unwrap_or_else(|| k32::temp_path(env));
    let pre = env.read_str(prefix, wide).unwrap_or_default();
    loop {
        let n = env.crt.tmp_counter;
        env.crt.tmp_counter += 1;
        let cand = format!("{}\\{pre}{:x}", d.trim_end_matches('\\'), n + 1);
        if !k32::resolve(env, &cand).is_ok_and(|h| h.exists()) {
            let w: Vec<u16> = cand.encode_utf16().collect();
            return if wide {
                env.alloc_wstr(&w)
            } else {
                env.alloc_cstr(cand.as_bytes())
            };
        }
    }
}

fn chmod(env: &mut Env, p: u32, mode: u32, wide: bool) -> i32 {
    let a = k32::get_attributes(env, p, wide);
    if a == attr::INVALID {
        fd::set_errno(env, errno::ENOENT);
        return -1;
    }
    let na = if mode & 0x80 != 0 {
        a & !attr::READONLY
    } else {
        a | attr::READONLY
    };
    let ok = k32::set_attributes(env, p, wide, na);
    c_result(env, ok)
}

fn rename(env: &mut Env, from: u32, to: u32, wide: bool) -> i32 {
    // rename never replaces an existing file.
    let ok = k32::move_file(env, from, to, wide, 2);
    c_result(env, ok)
}

fn fd_result<T>(env: &mut Env, r: Result<T, i32>, fail: T) -> T {
    match r {
        Ok(v) => v,
        Err(e) => {
            fd::set_errno(env, e);
            fail
        }
    }
}

crate::dll! { "(crt files)";
    cdecl fn _open(env, path: u32, flags: u32, pmode: u32) -> i32 { let r = fd::open(env, path, false, flags); fd_result(env, r, -1) }
    cdecl fn _wopen(env, path: u32, flags: u32, pmode: u32) -> i32 { let r = fd::open(env, path, true, flags); fd_result(env, r, -1) }
    cdecl fn _sopen(env, path: u32, flags: u32, share: u32, pmode: u32) -> i32 { let r = fd::open(env, path, false, flags); fd_result(env, r, -1) }
    cdecl fn _wsopen(env, path: u32, flags: u32, share: u32, pmode: u32) -> i32 { let r = fd::open(env, path, true, flags); fd_result(env, r, -1) }
    cdecl fn _sopen_s(env, out: u32, path: u32, flags: u32, share: u32, pmode: u32) -> i32 {
        match fd::open(env, path, false, flags) { Ok(n) => { env.mem.poke_u32(out, n as u32); 0 } Err(e) => { env.mem.poke_u32(out, u32::MAX); fd::set_errno(env, e); e } }
    }
    cdecl fn _wsopen_s(env, out: u32, path: u32, flags: u32, share: u32, pmode: u32) -> i32 {
        match fd::open(env, path, true, flags) { Ok(n) => { env.mem.poke_u32(out, n as u32); 0 } Err(e) => { env.mem.poke_u32(out, u32::MAX); fd::set_errno(env, e); e } }
    }
    cdecl fn _sopen_dispatch(env, path: u32, flags: u32, share: u32, pmode: u32, out: u32, secure: u32) -> i32 {
        match fd::open(env, path, false, flags) { Ok(n) => { env.mem.poke_u32(out, n as u32); 0 } Err(e) => { env.mem.poke_u32(out, u32::MAX); fd::set_errno(env, e); e } }
    }
    cdecl fn _wsopen_dispatch(env, path: u32, flags: u32, share: u32, pmode: u32, out: u32, secure: u32) -> i32 {
        match fd::open(env, path, true, flags) { Ok(n) => { env.mem.poke_u32(out, n as u32); 0 } Err(e) => { env.mem.poke_u32(out, u32::MAX); fd::set_errno(env, e); e } }
    }
    cdecl fn _creat(env, path: u32, pmode: u32) -> i32 { let r = fd::open(env, path, false, 0x301); fd_result(env, r, -1) }
    cdecl fn _wcreat(env, path: u32, pmode: u32) -> i32 { let r = fd::open(env, path, true, 0x301); fd_result(env, r, -1) }
    cdecl fn _close(env, f: i32) -> i32 { let r = fd::close(env, f).map(|_| 0); fd_result(env, r, -1) }
    cdecl fn _read(env, f: i32, buf: u32, n: u32) -> i32 {
        match fd::read(env, f, n) { Ok(b) => { env.mem.poke(buf, &b); b.len() as i32 } Err(e) => { fd::set_errno(env, e); -1 } }
    }
    cdecl fn _write(env, f: i32, buf: u32, n: u32) -> i32 {
        let Some(b) = env.read_bytes(buf, n) else { fd::set_errno(env, errno::EINVAL); return -1 };
        let r = fd::write(env, f, &b).map(|k| k as i32);
        fd_result(env, r, -1)
    }
    cdecl fn _lseek(env, f: i32, off: i32, whence: u32) -> i32 {
        let r = fd::seek(env, f, off as i64, whence).map(|p| p as i32);
        fd_result(env, r, -1)
    }
    cdecl fn _lseeki64(env, f: i32, lo: u32, hi: u32, whence: u32) -> u64 {
        let r = fd::seek(env, f, ((hi as u64) << 32 | lo as u64) as i64, whence).map(|p| p as u64);
        fd_result(env, r, u64::MAX)
    }
    cdecl fn _tell(env, f: i32) -> i32 { let r = fd::seek(env, f, 0, 1).map(|p| p as i32); fd_result(env, r, -1) }
    cdecl fn _telli64(env, f: i32) -> u64 { let r = fd::seek(env, f, 0, 1).map(|p| p as u64); fd_result(env, r, u64::MAX) }
    cdecl fn _eof(env, f: i32) -> i32 {
        let Ok(h) = fd::get(env, f).map(|x| x.handle) else { fd::set_errno(env, errno::EBADF); return -1 };
        let pos = crate::io::seek(env, h, 0, 1).unwrap_or(0);
        let size = crate::io::size(env, h).unwrap_or(0);
        (pos >= size) as i32
    }
    cdecl fn _commit(env, f: i32) -> i32 { if fd::get(env, f).is_ok() { 0 } else { fd::set_errno(env, errno::EBADF); -1 } }
    cdecl fn _filelength(env, f: i32) -> i32 {
        let r = fd::get(env, f).map(|x| x.handle);
        match r { Ok(h) => crate::io::size(env, h).map_or(-1, |s| s as i32), Err(e) => { fd::set_errno(env, e); -1 } }
    }
    cdecl fn _filelengthi64(env, f: i32) -> u64 {
        let r = fd::get(env, f).map(|x| x.handle);
        match r { Ok(h) => crate::io::size(env, h).unwrap_or(u64::MAX), Err(e) => { fd::set_errno(env, e); u64::MAX } }
    }
    cdecl fn _chsize(env, f: i32, size: i32) -> i32 { chsize(env, f, size as i64) }
    cdecl fn _chsize_s(env, f: i32, lo: u32, hi: u32) -> i32 { let r = chsize(env, f, ((hi as u64) << 32 | lo as u64) as i64); if r == 0 { 0 } else { fd::get_errno(env) } }
    cdecl fn _dup(env, f: i32) -> i32 { let r = fd::dup(env, f, None); fd_result(env, r, -1) }
    cdecl fn _dup2(env, f: i32, to: i32) -> i32 { let r = fd::dup(env, f, Some(to)); fd_result(env, r, -1) }
    cdecl fn _isatty(env, f: i32) -> i32 { fd::get(env, f).map_or(0, |x| if x.device { 0x40 } else { 0 }) }
    cdecl fn _get_osfhandle(env, f: i32) -> u32 {
        match fd::get(env, f) { Ok(x) => x.handle, Err(e) => { fd::set_errno(env, e); u32::MAX } }
    }
    cdecl fn _open_osfhandle(env, h: u32, flags: u32) -> i32 {
        // Windows asks GetFileType first: a handle that names nothing is EBADF.
        if !matches!(crate::io::kind(env, h), Ok(t) if t != crate::io::file_type::UNKNOWN) {
            fd::set_errno(env, fd::errno::EBADF);
            return -1;
        }
        let r = fd::alloc(env, h, flags); fd_result(env, r, -1)
    }
    cdecl fn _setmode(env, f: i32, mode: u32) -> i32 { let r = fd::set_mode(env, f, mode).map(|m| m as i32); fd_result(env, r, -1) }
    cdecl fn _stat(env, p: u32, out: u32) -> i32 { stat(env, p, out, false, Layout::S32) }
    cdecl fn _stat32(env, p: u32, out: u32) -> i32 { stat(env, p, out, false, Layout::S32) }
    cdecl fn _stati64(env, p: u32, out: u32) -> i32 { stat(env, p, out, false, Layout::S32i64) }
    cdecl fn _stat32i64(env, p: u32, out: u32) -> i32 { stat(env, p, out, false, Layout::S32i64) }
    cdecl fn _stat64i32(env, p: u32, out: u32) -> i32 { stat(env, p, out, false, Layout::S64i32) }
    cdecl fn _stat64(env, p: u32, out: u32) -> i32 { stat(env, p, out, false, Layout::S64) }
    cdecl fn _wstat(env, p: u32, out: u32) -> i32 { stat(env, p, out, true, Layout::S32) }
    cdecl fn _wstat32(env, p: u32, out: u32) -> i32 { stat(env, p, out, true, Layout::S32) }
    cdecl fn _wstati64(env, p: u32, out: u32) -> i32 { stat(env, p, out, true, Layout::S32i64) }
    cdecl fn _wstat32i64(env, p: u32, out: u32) -> i32 { stat(env, p, out, true, Layout::S32i64) }
    cdecl fn _wstat64i32(env, p: u32, out: u32) -> i32 { stat(env, p, out, true, Layout::S64i32) }
    cdecl fn _wstat64(env, p: u32, out: u32) -> i32 { stat(env, p, out, true, Layout::S64) }
    cdecl fn _fstat(env, f: i32, out: u32) -> i32 { fstat(env, f, out, Layout::S32) }
    cdecl fn _fstat32(env, f: i32, out: u32) -> i32 { fstat(env, f, out, Layout::S32) }
    cdecl fn _fstati64(env, f: i32, out: u32) -> i32 { fstat(env, f, out, Layout::S32i64) }
    cdecl fn _fstat32i64(env, f: i32, out: u32) -> i32 { fstat(env, f, out, Layout::S32i64) }
    cdecl fn _fstat64i32(env, f: i32, out: u32) -> i32 { fstat(env, f, out, Layout::S64i32) }
    cdecl fn _fstat64(env, f: i32, out: u32) -> i32 { fstat(env, f, out, Layout::S64) }
    cdecl fn _access(env, p: u32, mode: u32) -> i32 { access(env, p, mode, false) }
    cdecl fn _waccess(env, p: u32, mode: u32) -> i32 { access(env, p, mode, true) }
    cdecl fn _access_s(env, p: u32, mode: u32) -> i32 { if access(env, p, mode, false) == 0 { 0 } else { fd::get_errno(env) } }
    cdecl fn _waccess_s(env, p: u32, mode: u32) -> i32 { if access(env, p, mode, true) == 0 { 0 } else { fd::get_errno(env) } }
    cdecl fn _chmod(env, p: u32, mode: u32) -> i32 { chmod(env, p, mode, false) }
    cdecl fn _wchmod(env, p: u32, mode: u32) -> i32 { chmod(env, p, mode, true) }
    cdecl fn _unlink(env, p: u32) -> i32 { let ok = k32::delete_file(env, p, false); c_result(env, ok) }
    cdecl fn _wunlink(env, p: u32) -> i32 { let ok = k32::delete_file(env, p, true); c_result(env, ok) }
    cdecl fn remove(env, p: u32) -> i32 { let ok = k32::delete_file(env, p, false); c_result(env, ok) }
    cdecl fn _wremove(env, p: u32) -> i32 { let ok = k32::delete_file(env, p, true); c_result(env, ok) }
    cdecl fn rename(env, from: u32, to: u32) -> i32 { rename(env, from, to, false) }
    cdecl fn _wrename(env, from: u32, to: u32) -> i32 { rename(env, from, to, true) }
    cdecl fn _mkdir(env, p: u32) -> i32 { let ok = k32::create_directory(env, p, false); c_result(env, ok) }
    cdecl fn _wmkdir(env, p: u32) -> i32 { let ok = k32::create_directory(env, p, true); c_result(env, ok) }
    cdecl fn _rmdir(env, p: u32) -> i32 { let ok = k32::remove_directory(env, p, false); c_result(env, ok) }
    cdecl fn _wrmdir(env, p: u32) -> i32 { let ok = k32::remove_directory(env, p, true); c_result(env, ok) }
    cdecl fn _chdir(env, p: u32) -> i32 {
        let Some(s) = env.read_a(p) else { fd::set_errno(env, errno::EINVAL); return -1 };
        match env.drives.set_cwd(&s) { Ok(()) => 0, Err(_) => { fd::set_errno(env, errno::ENOENT); -1 } }
    }
    cdecl fn _wchdir(env, p: u32) -> i32 {
        let Some(s) = env.read_w(p) else { fd::set_errno(env, errno::EINVAL); return -1 };
        match env.drives.set_cwd(&s) { Ok(()) => 0, Err(_) => { fd::set_errno(env, errno::ENOENT); -1 } }
    }
    cdecl fn _chdrive(env, d: i32) -> i32 {
        let l = (b'A' + (d - 1).clamp(0, 25) as u8) as char;
        match env.drives.set_cwd(&format!("{l}:\\")) { Ok(()) => 0, Err(_) => { fd::set_errno(env, errno::EACCES); -1 } }
    }
    cdecl fn _getdrive(env) -> i32 { (env.drives.cwd_drive() as u8 - b'A' + 1) as i32 }
    cdecl fn _getcwd(env, buf: u32, n: i32) -> u32 { getcwd(env, buf, n, false) }
    cdecl fn _wgetcwd(env, buf: u32, n: i32) -> u32 { getcwd(env, buf, n, true) }
    cdecl fn _getdcwd(env, drive: i32, buf: u32, n: i32) -> u32 { getcwd(env, buf, n, false) }
    cdecl fn _wgetdcwd(env, drive: i32, buf: u32, n: i32) -> u32 { getcwd(env, buf, n, true) }
    cdecl fn _fullpath(env, buf: u32, p: u32, n: u32) -> u32 { fullpath(env, buf, p, n, false) }
    cdecl fn _wfullpath(env, buf: u32, p: u32, n: u32) -> u32 { fullpath(env, buf, p, n, true) }
    cdecl fn _splitpath(env, p: u32, d: u32, dir: u32, f: u32, e: u32) { splitpath(env, p, d, dir, f, e, false) }
    cdecl fn _wsplitpath(env, p: u32, d: u32, dir: u32, f: u32, e: u32) { splitpath(env, p, d, dir, f, e, true) }
    cdecl fn _makepath(env, out: u32, d: u32, dir: u32, f: u32, e: u32) { makepath(env, out, d, dir, f, e, false) }
    cdecl fn _wmakepath(env, out: u32, d: u32, dir: u32, f: u32, e: u32) { makepath(env, out, d, dir, f, e, true) }
    cdecl fn _findfirst(env, spec: u32, out: u32) -> i32 { findfirst(env, spec, out, FindLayout::F32, false) }
    cdecl fn _findfirst32(env, spec: u32, out: u32) -> i32 { findfirst(env, spec, out, FindLayout::F32, false) }
    cdecl fn _findfirsti64(env, spec: u32, out: u32) -> i32 { findfirst(env, spec, out, FindLayout::F32i64, false) }
    cdecl fn _findfirst64i32(env, spec: u32, out: u32) -> i32 { findfirst(env, spec, out, FindLayout::F64i32, false) }
    cdecl fn _findfirst64(env, spec: u32, out: u32) -> i32 { findfirst(env, spec, out, FindLayout::F64, false) }
    cdecl fn _wfindfirst(env, spec: u32, out: u32) -> i32 { findfirst(env, spec, out, FindLayout::F32, true) }
    cdecl fn _wfindfirst32(env, spec: u32, out: u32) -> i32 { findfirst(env, spec, out, FindLayout::F32, true) }
    cdecl fn _wfindfirsti64(env, spec: u32, out: u32) -> i32 { findfirst(env, spec, out, FindLayout::F32i64, true) }
    cdecl fn _wfindfirst64i32(env, spec: u32, out: u32) -> i32 { findfirst(env, spec, out, FindLayout::F64i32, true) }
    cdecl fn _wfindfirst64(env, spec: u32, out: u32) -> i32 { findfirst(env, spec, out, FindLayout::F64, true) }
    cdecl fn _findnext(env, h: i32, out: u32) -> i32 { findnext(env, h, out, FindLayout::F32, false) }
    cdecl fn _findnext32(env, h: i32, out: u32) -> i32 { findnext(env, h, out, FindLayout::F32, false) }
    cdecl fn _findnexti64(env, h: i32, out: u32) -> i32 { findnext(env, h, out, FindLayout::F32i64, false) }
    cdecl fn _findnext64i32(env, h: i32, out: u32) -> i32 { findnext(env, h, out, FindLayout::F64i32, false) }
    cdecl fn _findnext64(env, h: i32, out: u32) -> i32 { findnext(env, h, out, FindLayout::F64, false) }
    cdecl fn _wfindnext(env, h: i32, out: u32) -> i32 { findnext(env, h, out, FindLayout::F32, true) }
    cdecl fn _wfindnext32(env, h: i32, out: u32) -> i32 { findnext(env, h, out, FindLayout::F32, true) }
    cdecl fn _wfindnexti64(env, h: i32, out: u32) -> i32 { findnext(env, h, out, FindLayout::F32i64, true) }
    cdecl fn _wfindnext64i32(env, h: i32, out: u32) -> i32 { findnext(env, h, out, FindLayout::F64i32, true) }
    cdecl fn _wfindnext64(env, h: i32, out: u32) -> i32 { findnext(env, h, out, FindLayout::F64, true) }
    cdecl fn _findclose(env, h: i32) -> i32 {
        match env.handles.get(h as u32) { Some(crate::handles::Object::Find(_)) => { env.handles.close(h as u32); 0 } _ => { fd::set_errno(env, errno::EINVAL); -1 } }
    }
    cdecl fn _mktemp(env, t: u32) -> u32 { mktemp(env, t, false) }
    cdecl fn _wmktemp(env, t: u32) -> u32 { mktemp(env, t, true) }
    cdecl fn tmpnam(env, buf: u32) -> u32 { tmpnam(env, buf) }
    cdecl fn _tempnam(env, dir: u32, prefix: u32) -> u32 { tempnam(env, dir, prefix, false) }
    cdecl fn _wtempnam(env, dir: u32, prefix: u32) -> u32 { tempnam(env, dir, prefix, true) }
    cdecl fn _umask(env, mask: u32) -> u32 { std::mem::replace(&mut env.crt.umask, mask) }
}

fn chsize(env: &mut Env, f: i32, size: i64) -> i32 {
    let Ok(h) = fd::get(env, f).map(|x| x.handle) else {
        fd::set_errno(env, errno::EBADF);
        return -1;
    };
    let pos = crate::io::seek(env, h, 0, 1).unwrap_or(0);
    if crate::io::seek(env, h, size, 0).is_err() || crate::io::set_end(env, h).is_err() {
        fd::set_errno(env, errno::EACCES);
        return -1;
    }
    crate::io::seek(env, h, pos as i64, 0).ok();
    0
}
