//! The C runtime's low-level I/O: file descriptors over kernel handles, text
//! mode (CR LF ↔ LF, Ctrl-Z as end of file), `errno` and `_doserrno`, and
//! opening a path the way `_open`/`_sopen` do. Shared by msvcrt and ucrtbase.
//!
//! Owns the descriptor table and errno conventions. Console descriptors are
//! not translated: the host sees the program's own newlines. It must not
//! resolve paths itself (kernel32's `create_file` does, through vfs) nor
//! know about FILE streams (stdio does, on top of this).

use crate::dll::Env;
use crate::handles::Object;

/// errno values.
pub mod errno {
    pub const EPERM: i32 = 1;
    pub const ENOENT: i32 = 2;
    pub const EBADF: i32 = 9;
    pub const EAGAIN: i32 = 11;
    pub const ENOMEM: i32 = 12;
    pub const EACCES: i32 = 13;
    pub const EEXIST: i32 = 17;
    pub const EXDEV: i32 = 18;
    pub const ENOTDIR: i32 = 20;
    pub const EISDIR: i32 = 21;
    pub const EINVAL: i32 = 22;
    pub const EMFILE: i32 = 24;
    pub const ENOSPC: i32 = 28;
    pub const ESPIPE: i32 = 29;
    pub const EPIPE: i32 = 32;
    pub const EDOM: i32 = 33;
    pub const ERANGE: i32 = 34;
    pub const ENOTEMPTY: i32 = 41;
    pub const EILSEQ: i32 = 42;
}

/// `_open` flags.
pub mod oflag {
    pub const RDONLY: u32 = 0;
    pub const WRONLY: u32 = 1;
    pub const RDWR: u32 = 2;
    pub const APPEND: u32 = 8;
    pub const TEMPORARY: u32 = 0x40;
    pub const CREAT: u32 = 0x100;
    pub const TRUNC: u32 = 0x200;
    pub const EXCL: u32 = 0x400;
    pub const TEXT: u32 = 0x4000;
    pub const BINARY: u32 = 0x8000;
    pub const WTEXT: u32 = 0x1_0000;
    pub const U16TEXT: u32 = 0x2_0000;
    pub const U8TEXT: u32 = 0x4_0000;
}

/// The most descriptors a process may have open.
pub const MAX_FDS: usize = 2048;

/// One open descriptor.
#[derive(Clone, Debug)]
pub struct Fd {
    pub handle: u32,
    pub text: bool,
    pub append: bool,
    /// A console or the null device: `_isatty` says so and no translation happens.
    pub device: bool,
    /// A CR read at the end of the last text-mode buffer, waiting for its LF.
    pub pending_cr: bool,
    /// Ctrl-Z was seen in text mode: reads end here.
    pub eof: bool,
}

/// The Win32 error → errno mapping of the C runtime's `_dosmaperr`.
pub fn errno_of(win32: u32) -> i32 {
    use errno::*;
    match win32 {
        2 | 3 | 15 | 18 | 53 | 123 | 161 | 206 => ENOENT,
        4 => EMFILE,
        5 | 19 | 32 | 33 | 65 | 82 | 108 | 267 => EACCES,
        6 => EBADF,
        8 | 14 => ENOMEM,
        17 => EXDEV,
        80 | 183 => EEXIST,
        109 => EPIPE,
        112 => ENOSPC,
        145 => ENOTEMPTY,
        _ => EINVAL,
    }
}

/// The current thread's errno block: [errno, _doserrno].
pub fn errno_addr(env: &mut Env) -> u32 {
    let tid = env.thread_id();
    if let Some(&a) = env.crt.errno_blocks.get(&tid) {
        return a;
    }
    let a = env.alloc(16);
    env.crt.errno_blocks.insert(tid, a);
    a
}

pub fn set_errno(env: &mut Env, e: i32) {
    let a = errno_addr(env);
    env.mem.poke_u32(a, e as u32);
}

pub fn get_errno(env: &mut Env) -> i32 {
    let a = errno_addr(env);
    env.mem.peek_u32(a).unwrap_or(0) as i32
}

/// Sets errno (and _doserrno) from a Win32 error.
pub fn set_dos_error(env: &mut Env, win32: u32) {
    let a = errno_addr(env);
    env.mem.poke_u32(a, errno_of(win32) as u32);
    env.mem.poke_u32(a + 4, win32);
}

/// The descriptor table, created on first use with 0, 1, 2 on the standard handles.
pub fn table(env: &mut Env) -> &mut Vec<Option<Fd>> {
    if env.crt.fds.is_empty() {
        let std = env.std_handles;
        for h in std {
            let device = matches!(
                env.handles.get(h),
                Some(Object::Console(_)) | Some(Object::Null)
            );
            env.crt.fds.push(Some(Fd {
                handle: h,
                text: true,
                append: false,
                device,
                pending_cr: false,
                eof: false,
            }));
        }
    }
    &mut env.crt.fds
}

/// msvcrt's `ioinfo` as `__pioinfo` shows it: handle, wxflag, lookahead[3],
/// exflag, CRITICAL_SECTION (36 bytes), in blocks of 32 descriptors.
const IOINFO_SIZE: u32 = 36;
const IOINFO_BLOCK: usize = 32;

/// The `wxflag` byte Windows keeps per descriptor: WX_OPEN 0x01, WX_ATEOF
/// 0x02, WX_PIPE 0x08, WX_APPEND 0x20, WX_TTY 0x40, WX_TEXT 0x80.
fn wxflag(env: &Env, f: &Fd) -> u8 {
    let mut w = 0x01;
    if f.eof {
        w |= 0x02;
    }
    if matches!(env.handles.get(f.handle), Some(Object::PipeEnd { .. })) {
        w |= 0x08;
    }
    if f.append {
        w |= 0x20;
    }
    if f.device {
        w |= 0x40;
    }
    if f.text {
        w |= 0x80;
    }
    w
}

/// Copies descriptor `fd`'s handle and flags into the guest's `__pioinfo`
/// blocks when the program bound that export (the table itself stays
/// here: the guest copy is written, never read back). A closed slot shows
/// INVALID_HANDLE_VALUE and no flags, as Windows leaves it.
pub fn mirror(env: &mut Env, fd: usize) {
    let Some(&arr) = env.data.get("msvcrt.dll!__pioinfo") else {
        return;
    };
    if fd >= MAX_FDS {
        return;
    }
    let slot = arr + 4 * (fd / IOINFO_BLOCK) as u32;
    let mut block = env.mem.peek_u32(slot).unwrap_or(0);
    if block == 0 {
        block = env.alloc(IOINFO_SIZE * IOINFO_BLOCK as u32);
        let mut b = vec![0u8; (IOINFO_SIZE as usize) * IOINFO_BLOCK];
        for e in b.chunks_mut(IOINFO_SIZE as usize) {
            e[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        }
        env.mem.poke(block, &b);
        env.mem.poke_u32(slot, block);
    }
    let entry = block + IOINFO_SIZE * (fd % IOINFO_BLOCK) as u32;
    let cur = table(env).get(fd).cloned().flatten();
    let (h, w) = match cur {
        Some(f) => (f.handle, wxflag(env, &f)),
        None => (u32::MAX, 0),
    };
    env.mem.poke_u32(entry, h);
    env.mem.poke(entry + 4, &[w]);
}

/// Reads descriptor `fd` back from the guest's `__pioinfo` entry when the
/// program bound that export: programs (Wine's tests among them) write a
/// handle or flags there and expect `_close`, `_get_osfhandle` and the
/// rest to act on them, so the guest copy wins over this table. An entry
/// without WX_OPEN is a closed descriptor.
fn reconcile(env: &mut Env, fd: usize) {
    let Some(&arr) = env.data.get("msvcrt.dll!__pioinfo") else {
        return;
    };
    if fd >= MAX_FDS {
        return;
    }
    let block = env
        .mem
        .peek_u32(arr + 4 * (fd / IOINFO_BLOCK) as u32)
        .unwrap_or(0);
    if block == 0 {
        return;
    }
    let entry = block + IOINFO_SIZE * (fd % IOINFO_BLOCK) as u32;
    let h = env.mem.peek_u32(entry).unwrap_or(u32::MAX);
    let w = env.read_bytes(entry + 4, 1).map_or(0, |b| b[0]);
    let t = table(env);
    if t.len() <= fd {
        if w & 1 == 0 {
            return;
        }
        t.resize(fd + 1, None);
    }
    t[fd] = if w & 1 == 0 {
        None
    } else {
        let old = t[fd].take();
        Some(Fd {
            handle: h,
            text: w & 0x80 != 0,
            append: w & 0x20 != 0,
            device: w & 0x40 != 0,
            pending_cr: old.as_ref().is_some_and(|f| f.pending_cr),
            eof: w & 0x02 != 0,
        })
    };
}

/// `__pioinfo`'s fill: every descriptor open so far.
pub fn mirror_all(env: &mut Env) {
    let n = table(env).len().max(IOINFO_BLOCK);
    for fd in 0..n {
        mirror(env, fd);
    }
}

/// A descriptor (EBADF when not open).
pub fn get(env: &mut Env, fd: i32) -> Result<Fd, i32> {
    if fd < 0 {
        return Err(errno::EBADF);
    }
    reconcile(env, fd as usize);
    table(env)
        .get(fd as usize)
        .and_then(|f| f.clone())
        .ok_or(errno::EBADF)
}

fn get_mut(env: &mut Env, fd: i32) -> Result<&mut Fd, i32> {
    if fd < 0 {
        return Err(errno::EBADF);
    }
    reconcile(env, fd as usize);
    table(env)
        .get_mut(fd as usize)
        .and_then(|f| f.as_mut())
        .ok_or(errno::EBADF)
}

/// `_open_osfhandle`: the lowest free descriptor for `h`.
pub fn alloc(env: &mut Env, h: u32, flags: u32) -> Result<i32, i32> {
    let device = matches!(
        env.handles.get(h),
        Some(Object::Console(_)) | Some(Object::Null)
    );
    let text = if flags & oflag::BINARY != 0 {
        false
    } else if flags & oflag::TEXT != 0 {
        true
    } else {
        super::fmode(env) & oflag::BINARY == 0
    };
    let fd = Fd {
        handle: h,
        text,
        append: flags & oflag::APPEND != 0,
        device,
        pending_cr: false,
        eof: false,
    };
    if env.data.contains_key("msvcrt.dll!__pioinfo") {
        for i in 0..table(env).len() {
            reconcile(env, i);
        }
    }
    let t = table(env);
    let i = match t.iter().position(Option::is_none) {
        Some(i) => {
            t[i] = Some(fd);
            i
        }
        None if t.len() < MAX_FDS => {
            t.push(Some(fd));
            t.len() - 1
        }
        None => return Err(errno::EMFILE),
    };
    mirror(env, i);
    Ok(i as i32)
}

/// `_open`/`_sopen`/`_wopen`: CreateFile with the flags' access and
/// disposition; returns the descriptor.
pub fn open(env: &mut Env, path: u32, wide: bool, flags: u32) -> Result<i32, i32> {
    use crate::files::{access, disp};
    let acc = match flags & 3 {
        oflag::WRONLY => access::GENERIC_WRITE,
        oflag::RDWR => access::GENERIC_READ | access::GENERIC_WRITE,
        _ => access::GENERIC_READ,
    };
    let d = match flags & (oflag::CREAT | oflag::EXCL | oflag::TRUNC) {
        f if f & oflag::CREAT != 0 && f & oflag::EXCL != 0 => disp::CREATE_NEW,
        f if f & oflag::CREAT != 0 && f & oflag::TRUNC != 0 => disp::CREATE_ALWAYS,
        f if f & oflag::CREAT != 0 => disp::OPEN_ALWAYS,
        f if f & oflag::TRUNC != 0 => disp::TRUNCATE_EXISTING,
        _ => disp::OPEN_EXISTING,
    };
    let fl = if flags & oflag::TEMPORARY != 0 {
        crate::files::FLAG_DELETE_ON_CLOSE
    } else {
        0
    };
    let h = crate::dll::kernel32::file::create_file(env, path, wide, acc, d, fl);
    if h == crate::handles::INVALID {
        let e = env.last_error;
        set_dos_error(env, e);
        return Err(errno_of(e));
    }
    match alloc(env, h, flags) {
        Ok(fd) => Ok(fd),
        Err(e) => {
            crate::io::close(env, h).ok();
            Err(e)
        }
    }
}

/// Raw bytes from the descriptor (no translation).
pub fn read_raw(env: &mut Env, fd: i32, n: u32) -> Result<Vec<u8>, i32> {
    let f = get(env, fd)?;
    match crate::io::read(env, f.handle, n) {
        Ok(b) => Ok(b),
        Err(109) => Ok(Vec::new()), // a closed pipe is end of file
        Err(e) => {
            set_dos_error(env, e);
            Err(errno_of(e))
        }
    }
}

/// `_read`: text mode drops the CR of CR LF and stops at Ctrl-Z.
pub fn read(env: &mut Env, fd: i32, n: u32) -> Result<Vec<u8>, i32> {
    let f = get(env, fd)?;
    if !f.text || f.device {
        return read_raw(env, fd, n);
    }
    if f.eof || n == 0 {
        return Ok(Vec::new());
    }
    let raw = read_raw(env, fd, n)?;
    let mut out = Vec::with_capacity(raw.len());
    let mut pending = f.pending_cr;
    let mut eof = false;
    for &b in &raw {
        if pending {
            pending = false;
            if b != b'\n' {
                out.push(b'\r');
            }
        }
        match b {
            0x1A => {
                eof = true;
                break;
            }
            b'\r' => pending = true,
            _ => out.push(b),
        }
    }
    if pending && raw.len() < n as usize {
        // A CR at end of file is kept.
        out.push(b'\r');
        pending = false;
    }
    let m = get_mut(env, fd)?;
    m.pending_cr = pending;
    m.eof = eof;
    Ok(out)
}

/// Raw bytes to the descriptor.
pub fn write_raw(env: &mut Env, fd: i32, bytes: &[u8]) -> Result<u32, i32> {
    let f = get(env, fd)?;
    if f.append {
        crate::io::seek(env, f.handle, 0, 2).ok();
    }
    match crate::io::write(env, f.handle, bytes) {
        Ok(k) => Ok(k),
        Err(e) => {
            set_dos_error(env, e);
            Err(errno_of(e))
        }
    }
}

/// `_write`: text mode writes LF as CR LF; returns the caller's byte count.
pub fn write(env: &mut Env, fd: i32, bytes: &[u8]) -> Result<u32, i32> {
    let f = get(env, fd)?;
    if f.text && !f.device {
        let mut t = Vec::with_capacity(bytes.len() + bytes.len() / 16);
        for &b in bytes {
            if b == b'\n' {
                t.push(b'\r');
            }
            t.push(b);
        }
        write_raw(env, fd, &t)?;
        Ok(bytes.len() as u32)
    } else {
        write_raw(env, fd, bytes)
    }
}

/// `_lseeki64`.
pub fn seek(env: &mut Env, fd: i32, off: i64, whence: u32) -> Result<i64, i32> {
    let f = get(env, fd)?;
    if whence > 2 {
        return Err(errno::EINVAL);
    }
    match crate::io::seek(env, f.handle, off, whence) {
        Ok(p) => {
            let m = get_mut(env, fd)?;
            m.eof = false;
            m.pending_cr = false;
            Ok(p as i64)
        }
        Err(e) => {
            set_dos_error(env, e);
            Err(errno_of(e))
        }
    }
}

/// `_close`.
pub fn close(env: &mut Env, fd: i32) -> Result<(), i32> {
    let f = get(env, fd)?;
    table(env)[fd as usize] = None;
    mirror(env, fd as usize);
    // The console handles stay open for the process (Windows closes them
    // too, but nothing after would reach them), and, as in Windows, closing
    // stdout or stderr leaves a handle the other one still uses.
    let shared_std = match fd {
        1 | 2 => get(env, 3 - fd).is_ok_and(|o| o.handle == f.handle),
        _ => false,
    };
    let console = matches!(env.handles.get(f.handle), Some(Object::Console(_)));
    if !console && !shared_std {
        if let Err(e) = crate::io::close(env, f.handle) {
            set_dos_error(env, e);
            return Err(errno_of(e));
        }
    }
    Ok(())
}

/// `_setmode`: returns the previous mode.
pub fn set_mode(env: &mut Env, fd: i32, mode: u32) -> Result<u32, i32> {
    let m = get_mut(env, fd)?;
    let old = if m.text { oflag::TEXT } else { oflag::BINARY };
    match mode {
        oflag::TEXT | oflag::WTEXT | oflag::U16TEXT | oflag::U8TEXT => m.text = true,
        oflag::BINARY => m.text = false,
        _ => return Err(errno::EINVAL),
    }
    mirror(env, fd as usize);
    Ok(old)
}

/// `_dup`/`_dup2`.
pub fn dup(env: &mut Env, fd: i32, to: Option<i32>) -> Result<i32, i32> {
    let f = get(env, fd)?;
    let h = env.handles.duplicate(f.handle).unwrap_or(f.handle);
    match to {
        None => {
            let nfd = alloc(env, h, if f.text { oflag::TEXT } else { oflag::BINARY })?;
            Ok(nfd)
        }
        Some(t) => {
            if t < 0 || t as usize >= MAX_FDS {
                return Err(errno::EBADF);
            }
            if get(env, t).is_ok() {
                close(env, t).ok();
            }
            let tab = table(env);
            if tab.len() <= t as usize {
                tab.resize(t as usize + 1, None);
            }
            tab[t as usize] = Some(Fd { handle: h, ..f });
            mirror(env, t as usize);
            if t <= 2 {
                env.std_handles[t as usize] = h;
            }
            Ok(0)
        }
    }
}
