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

/// A descriptor (EBADF when not open).
pub fn get(env: &mut Env, fd: i32) -> Result<Fd, i32> {
    if fd < 0 {
        return Err(errno::EBADF);
    }
    table(env)
        .get(fd as usize)
        .and_then(|f| f.clone())
        .ok_or(errno::EBADF)
}

fn get_mut(env: &mut Env, fd: i32) -> Result<&mut Fd, i32> {
    if fd < 0 {
        return Err(errno::EBADF);
    }
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
    let t = table(env);
    match t.iter().position(Option::is_none) {
        Some(i) => {
            t[i] = Some(fd);
            Ok(i as i32)
        }
        None if t.len() < MAX_FDS => {
            t.push(Some(fd));
            Ok(t.len() as i32 - 1)
        }
        None => Err(errno::EMFILE),
    }
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
    // The standard handles stay open for the process (Windows closes them too,
    // but nothing after would reach them).
    if fd > 2 {
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
            if t <= 2 {
                env.std_handles[t as usize] = h;
            }
            Ok(0)
        }
    }
}
