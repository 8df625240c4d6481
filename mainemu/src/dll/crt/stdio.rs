//! The C runtime's FILE streams over descriptors: fopen's modes, buffered
//! reads with text-mode translation, buffered writes (console streams write
//! through, so output keeps its order with direct console writes), ungetc,
//! positions, end-of-file and error flags, and the guest-visible FILE
//! fields old headers' macros read (`_flag`, `_file`, `_cnt` kept 0 so the
//! `getc`/`putc` macros always call `_filbuf`/`_flsbuf`).
//!
//! Owns the stream table (guest FILE address → stream state) and the
//! standard streams of both runtimes (msvcrt's `_iob`, ucrtbase's
//! `__acrt_iob_func`). It must not open paths itself (fd does).

use super::fd::{self, errno, oflag};
use crate::dll::Env;

/// Size of a FILE in guest memory (msvcrt's layout).
pub const FILE_SIZE: u32 = 32;
/// How many FILEs msvcrt's `_iob` holds.
pub const IOB_ENTRIES: u32 = 20;

/// `_flag` bits.
pub mod flag {
    pub const READ: u32 = 0x1;
    pub const WRITE: u32 = 0x2;
    pub const EOF: u32 = 0x10;
    pub const ERR: u32 = 0x20;
    pub const RW: u32 = 0x80;
}

/// Write buffer size of file streams.
const WBUF: usize = 4096;
/// Read-ahead of file streams.
const RBUF: u32 = 4096;

/// One stream.
#[derive(Clone, Debug, Default)]
pub struct Stream {
    pub fd: i32,
    pub read: bool,
    pub write: bool,
    pub eof: bool,
    pub err: bool,
    /// ungetc's pushed-back characters (the last pushed is read first).
    pub ungot: Vec<u8>,
    /// Raw bytes read ahead from the descriptor and not consumed yet.
    pub rbuf: Vec<u8>,
    pub rpos: usize,
    /// Bytes written and not yet passed to the descriptor (translated already).
    pub wbuf: Vec<u8>,
    /// The FILE was allocated by fopen (freed by fclose).
    pub owned: bool,
    /// A tmpfile's path, removed at fclose.
    pub tmp: Option<String>,
    /// setvbuf(_IONBF): every write goes straight through.
    pub unbuffered: bool,
}

/// The descriptor of a standard FILE (0, 1, 2), if `file` is one.
fn std_fd(env: &Env, file: u32) -> Option<i32> {
    for key in ["msvcrt.dll!_iob", "ucrtbase.dll!(iob)"] {
        if let Some(&base) = env.data.get(key) {
            let off = file.wrapping_sub(base);
            if off < 3 * FILE_SIZE && off % FILE_SIZE == 0 {
                return Some((off / FILE_SIZE) as i32);
            }
        }
    }
    None
}

/// ucrtbase's standard FILEs (stdin, stdout, stderr), allocated on first use.
pub fn ucrt_iob(env: &mut Env) -> u32 {
    if let Some(&a) = env.data.get("ucrtbase.dll!(iob)") {
        return a;
    }
    let a = env.alloc(3 * FILE_SIZE);
    env.data.insert("ucrtbase.dll!(iob)".into(), a);
    for k in 0..3 {
        mirror_new(env, a + k * FILE_SIZE, k as i32, k == 0, k != 0);
    }
    a
}

/// msvcrt's `_iob`.
pub fn msvcrt_iob(env: &mut Env) -> u32 {
    if let Some(&a) = env.data.get("msvcrt.dll!_iob") {
        return a;
    }
    let decl = crate::dll::msvcrt::DLL
        .data
        .iter()
        .find(|d| d.name == "_iob")
        .expect("_iob declared");
    crate::modules::data_export(env, "msvcrt.dll", decl)
}

fn mirror_new(env: &mut Env, file: u32, fdn: i32, r: bool, w: bool) {
    let fl = if r && w {
        flag::RW
    } else if w {
        flag::WRITE
    } else {
        flag::READ
    };
    env.mem.poke_u32(file + 12, fl);
    env.mem.poke_u32(file + 16, fdn as u32);
}

/// The stream a FILE names (the standard ones are made on first use).
pub fn stream(env: &mut Env, file: u32) -> Option<&mut Stream> {
    if !env.crt.streams.contains_key(&file) {
        let fdn = std_fd(env, file)?;
        let s = Stream {
            fd: fdn,
            read: fdn == 0,
            write: fdn != 0,
            ..Default::default()
        };
        env.crt.streams.insert(file, s);
        mirror_new(env, file, fdn, fdn == 0, fdn != 0);
    }
    env.crt.streams.get_mut(&file)
}

/// Writes the guest-visible fields after an operation.
fn mirror(env: &mut Env, file: u32) {
    let Some(s) = env.crt.streams.get(&file) else {
        return;
    };
    let mut fl = if s.read && s.write {
        flag::RW
    } else if s.write {
        flag::WRITE
    } else {
        flag::READ
    };
    if s.eof {
        fl |= flag::EOF;
    }
    if s.err {
        fl |= flag::ERR;
    }
    let fdn = s.fd;
    env.mem.poke(file, &[0u8; 12]);
    env.mem.poke_u32(file + 12, fl);
    env.mem.poke_u32(file + 16, fdn as u32);
}

fn is_device(env: &mut Env, fdn: i32) -> bool {
    fd::get(env, fdn).is_ok_and(|f| f.device)
}

/// Passes buffered output to the descriptor.
pub fn flush(env: &mut Env, file: u32) -> Result<(), i32> {
    let Some(s) = stream(env, file) else {
        return Err(errno::EBADF);
    };
    let fdn = s.fd;
    let out = std::mem::take(&mut s.wbuf);
    // Read-ahead is dropped, and the descriptor moved back to the logical position.
    let ahead = (s.rbuf.len() - s.rpos) as i64 + s.ungot.len() as i64;
    s.rbuf.clear();
    s.rpos = 0;
    s.ungot.clear();
    if ahead > 0 && !is_device(env, fdn) {
        fd::seek(env, fdn, -ahead, 1).ok();
    }
    if !out.is_empty() {
        if let Err(e) = fd::write_raw(env, fdn, &out) {
            if let Some(s) = env.crt.streams.get_mut(&file) {
                s.err = true;
            }
            mirror(env, file);
            return Err(e);
        }
    }
    Ok(())
}

/// Flushes every stream (exit, _flushall); returns how many are open.
pub fn flush_all(env: &mut Env) -> i32 {
    let files: Vec<u32> = env.crt.streams.keys().copied().collect();
    for f in &files {
        let has_out = env.crt.streams.get(f).is_some_and(|s| !s.wbuf.is_empty());
        if has_out {
            flush(env, *f).ok();
        }
    }
    files.len() as i32
}

/// fwrite's core: text translation, buffering (files) or write-through (devices).
pub fn write(env: &mut Env, file: u32, bytes: &[u8]) -> Result<usize, i32> {
    let Some(s) = stream(env, file) else {
        return Err(errno::EBADF);
    };
    if !s.write {
        s.err = true;
        mirror(env, file);
        return Err(errno::EBADF);
    }
    let fdn = s.fd;
    if s.rpos < s.rbuf.len() || !s.ungot.is_empty() {
        flush(env, file)?;
    }
    let f = fd::get(env, fdn)?;
    let data: Vec<u8> = if f.text && !f.device {
        let mut t = Vec::with_capacity(bytes.len() + 8);
        for &b in bytes {
            if b == b'\n' {
                t.push(b'\r');
            }
            t.push(b);
        }
        t
    } else {
        bytes.to_vec()
    };
    let s = env.crt.streams.get_mut(&file).expect("exists");
    s.eof = false;
    if f.device || s.unbuffered {
        if let Err(e) = fd::write_raw(env, fdn, &data) {
            env.crt.streams.get_mut(&file).expect("exists").err = true;
            mirror(env, file);
            return Err(e);
        }
    } else {
        s.wbuf.extend_from_slice(&data);
        if s.wbuf.len() >= WBUF {
            flush(env, file)?;
        }
    }
    Ok(bytes.len())
}

/// The next raw byte (refilling the read-ahead), or None at end of input.
fn raw_byte(env: &mut Env, file: u32) -> Option<u8> {
    let s = env.crt.streams.get_mut(&file)?;
    if s.rpos < s.rbuf.len() {
        s.rpos += 1;
        return Some(s.rbuf[s.rpos - 1]);
    }
    let fdn = s.fd;
    // Devices are read a line at a time as they deliver; files in blocks.
    let chunk = fd::read_raw(env, fdn, RBUF).ok()?;
    let s = env.crt.streams.get_mut(&file)?;
    s.rbuf = chunk;
    s.rpos = 0;
    if s.rbuf.is_empty() {
        return None;
    }
    s.rpos = 1;
    Some(s.rbuf[0])
}

/// fgetc's core: ungot characters first, then text-mode translated input.
pub fn getc(env: &mut Env, file: u32) -> Option<u8> {
    let s = stream(env, file)?;
    if !s.read {
        s.err = true;
        mirror(env, file);
        return None;
    }
    if let Some(c) = s.ungot.pop() {
        return Some(c);
    }
    if s.eof {
        return None;
    }
    let fdn = s.fd;
    if !s.wbuf.is_empty() {
        flush(env, file).ok()?;
    }
    let text = fd::get(env, fdn).is_ok_and(|f| f.text && !f.device);
    let c = match raw_byte(env, file) {
        Some(b'\r') if text => match raw_byte(env, file) {
            Some(b'\n') => Some(b'\n'),
            Some(other) => {
                let s = env.crt.streams.get_mut(&file).expect("exists");
                s.rpos -= 1;
                let _ = other;
                Some(b'\r')
            }
            None => Some(b'\r'),
        },
        Some(0x1A) if text => None,
        c => c,
    };
    if c.is_none() {
        env.crt.streams.get_mut(&file).expect("exists").eof = true;
        mirror(env, file);
    }
    c
}

/// ungetc.
pub fn ungetc(env: &mut Env, c: i32, file: u32) -> i32 {
    if c == -1 {
        return -1;
    }
    let Some(s) = stream(env, file) else {
        return -1;
    };
    s.ungot.push(c as u8);
    s.eof = false;
    mirror(env, file);
    c & 0xFF
}

/// ftell: the descriptor's position less what is read ahead, plus what is buffered.
pub fn tell(env: &mut Env, file: u32) -> Result<i64, i32> {
    let Some(s) = stream(env, file) else {
        return Err(errno::EBADF);
    };
    let (fdn, ahead, pending) = (s.fd, (s.rbuf.len() - s.rpos) as i64, s.wbuf.len() as i64);
    let ungot = s.ungot.len() as i64;
    let pos = fd::seek(env, fdn, 0, 1)?;
    Ok(pos - ahead - ungot + pending)
}

/// fseek.
pub fn seek(env: &mut Env, file: u32, off: i64, whence: u32) -> Result<(), i32> {
    if whence > 2 {
        return Err(errno::EINVAL);
    }
    let target = if whence == 1 {
        tell(env, file)? + off
    } else {
        off
    };
    flush(env, file)?;
    let fdn = stream(env, file).ok_or(errno::EBADF)?.fd;
    let w = if whence == 1 { 0 } else { whence };
    if target < 0 && w == 0 {
        return Err(errno::EINVAL);
    }
    fd::seek(env, fdn, target, w)?;
    let s = env.crt.streams.get_mut(&file).expect("exists");
    s.eof = false;
    mirror(env, file);
    Ok(())
}

/// Parses an fopen mode: (open flags, read, write).
pub fn parse_mode(env: &Env, mode: &str) -> Option<(u32, bool, bool)> {
    let mut chars = mode.trim_start().chars();
    let (mut fl, mut r, mut w) = match chars.next()? {
        'r' => (oflag::RDONLY, true, false),
        'w' => (oflag::WRONLY | oflag::CREAT | oflag::TRUNC, false, true),
        'a' => (oflag::WRONLY | oflag::CREAT | oflag::APPEND, false, true),
        _ => return None,
    };
    let mut text = super::fmode(env) & oflag::BINARY == 0;
    for c in chars {
        match c {
            '+' => {
                fl = (fl & !3) | oflag::RDWR;
                r = true;
                w = true;
            }
            'b' => text = false,
            't' => text = true,
            'D' => fl |= oflag::TEMPORARY,
            ',' => break,
            _ => {}
        }
    }
    fl |= if text { oflag::TEXT } else { oflag::BINARY };
    Some((fl, r, w))
}

/// Registers a stream for `fdn` at a new FILE (or `at`, for freopen); returns the FILE.
pub fn attach(env: &mut Env, fdn: i32, r: bool, w: bool, at: Option<u32>) -> u32 {
    let (file, owned) = match at {
        Some(f) => (f, env.crt.streams.get(&f).is_some_and(|s| s.owned)),
        None => (env.alloc(FILE_SIZE), true),
    };
    env.crt.streams.insert(
        file,
        Stream {
            fd: fdn,
            read: r,
            write: w,
            owned,
            ..Default::default()
        },
    );
    mirror(env, file);
    file
}

/// fopen / _wfopen: the FILE, or 0 with errno set.
pub fn fopen(env: &mut Env, name: u32, mode: u32, wide: bool) -> u32 {
    let Some(m) = env.read_str(mode, wide) else {
        fd::set_errno(env, errno::EINVAL);
        return 0;
    };
    let Some((fl, r, w)) = parse_mode(env, &m) else {
        fd::set_errno(env, errno::EINVAL);
        return 0;
    };
    if name == 0 {
        fd::set_errno(env, errno::EINVAL);
        return 0;
    }
    match fd::open(env, name, wide, fl) {
        Ok(fdn) => attach(env, fdn, r, w, None),
        Err(e) => {
            fd::set_errno(env, e);
            0
        }
    }
}

/// fclose: flush, close the descriptor, forget the stream (free an fopen'd FILE).
pub fn fclose(env: &mut Env, file: u32) -> i32 {
    if stream(env, file).is_none() {
        fd::set_errno(env, errno::EINVAL);
        return -1;
    }
    let ok = flush(env, file).is_ok();
    let s = env.crt.streams.remove(&file).expect("exists");
    let closed = fd::close(env, s.fd).is_ok();
    if let Some(t) = &s.tmp {
        if let Ok(h) = env.drives.resolve_write(t) {
            std::fs::remove_file(h).ok();
        }
    }
    if s.owned {
        let heap = env.process_heap;
        env.with_heap(heap, |h, _| h.free(file));
    } else {
        env.mem.poke(file, &[0u8; FILE_SIZE as usize]);
    }
    if ok && closed {
        0
    } else {
        -1
    }
}

/// fread: whole items read.
pub fn fread(env: &mut Env, buf: u32, size: u32, n: u32, file: u32) -> u32 {
    let Some(total) = size.checked_mul(n) else {
        return 0;
    };
    if total == 0 {
        return 0;
    }
    let mut out = Vec::with_capacity(total as usize);
    let text = stream(env, file)
        .map(|s| s.fd)
        .and_then(|fdn| fd::get(env, fdn).ok())
        .is_some_and(|f| f.text && !f.device);
    while (out.len() as u32) < total {
        // Binary file streams take whole blocks straight from the read-ahead.
        if !text {
            let s = env.crt.streams.get_mut(&file);
            if let Some(s) = s {
                if s.ungot.is_empty() && s.rpos < s.rbuf.len() {
                    let k = (s.rbuf.len() - s.rpos).min(total as usize - out.len());
                    out.extend_from_slice(&s.rbuf[s.rpos..s.rpos + k]);
                    s.rpos += k;
                    continue;
                }
            }
        }
        match getc(env, file) {
            Some(c) => out.push(c),
            None => break,
        }
    }
    env.mem.poke(buf, &out);
    mirror(env, file);
    out.len() as u32 / size
}

/// fgets: up to `n - 1` bytes through the newline.
pub fn fgets(env: &mut Env, buf: u32, n: i32, file: u32) -> u32 {
    if n <= 0 {
        return 0;
    }
    let mut out = Vec::new();
    while (out.len() as i32) < n - 1 {
        match getc(env, file) {
            Some(c) => {
                out.push(c);
                if c == b'\n' {
                    break;
                }
            }
            None => break,
        }
    }
    if out.is_empty() && n > 1 {
        return 0;
    }
    out.push(0);
    env.mem.poke(buf, &out);
    buf
}

/// printf output of a narrow format (`%s` narrow) at `f` with the va_list at `va`.
pub fn fmt_a(env: &Env, f: u32, va: u32) -> Vec<u8> {
    crate::dll::printf::format(&env.mem, f, va, false)
}

/// printf output of a wide format (`%s` wide) as UTF-16.
pub fn fmt_w(env: &Env, f: u32, va: u32) -> Vec<u16> {
    let w = env.mem.peek_wstr(f, 1 << 20).unwrap_or_default();
    let f8 = String::from_utf16_lossy(&w).into_bytes();
    let out = crate::dll::printf::format_bytes(&env.mem, &f8, va, true);
    // The engine's output is UTF-8 where it came from wide text and single
    // bytes where it came from narrow text (`%C`, `%hs`): a byte that is not
    // UTF-8 is that narrow character in the ANSI code page (1252).
    let mut w = Vec::with_capacity(out.len());
    for chunk in out.utf8_chunks() {
        w.extend(chunk.valid().encode_utf16());
        w.extend(
            chunk
                .invalid()
                .iter()
                .map(|&b| crate::dll::kernel32::codepage::ansi_to_wide(b)),
        );
    }
    w
}

/// How a bounded sprintf treats a result that does not fit.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// sprintf: no bound.
    None,
    /// msvcrt's _snprintf: fills the buffer without a NUL, returns -1
    /// (exactly full: no NUL, returns the length).
    Legacy(u32),
    /// C99 snprintf: always NUL-terminated, returns the full length.
    Standard(u32),
    /// ucrt's legacy form with NUL termination on truncation.
    LegacyNul(u32),
}

/// Stores a sprintf result of `units` (bytes or UTF-16 units) at `buf`.
pub fn store<T: Copy + Default + Into<u32>>(
    env: &mut Env,
    buf: u32,
    units: &[T],
    bound: Bound,
) -> i32 {
    let size = std::mem::size_of::<T>() as u32;
    let put = |env: &mut Env, v: &[T], nul: bool| {
        let mut b = Vec::with_capacity(v.len() * size as usize + 2);
        for &u in v.iter() {
            let x: u32 = u.into();
            b.extend_from_slice(&x.to_le_bytes()[..size as usize]);
        }
        if nul {
            b.extend(std::iter::repeat_n(0, size as usize));
        }
        env.mem.poke(buf, &b);
    };
    let len = units.len() as u32;
    match bound {
        Bound::None => {
            put(env, units, true);
            len as i32
        }
        Bound::Standard(n) => {
            if buf != 0 && n > 0 {
                let k = len.min(n - 1) as usize;
                put(env, &units[..k], true);
            }
            len as i32
        }
        Bound::Legacy(n) | Bound::LegacyNul(n) => {
            if buf == 0 && n == 0 {
                return len as i32;
            }
            if len < n {
                put(env, units, true);
                len as i32
            } else if len == n {
                put(env, units, false);
                len as i32
            } else {
                put(env, &units[..n as usize], false);
                if matches!(bound, Bound::LegacyNul(_)) && n > 0 {
                    env.mem
                        .poke(buf + (n - 1) * size, &[0u8; 2][..size as usize]);
                }
                -1
            }
        }
    }
}

/// Writes printf output to a stream; the byte count or -1.
pub fn put(env: &mut Env, file: u32, bytes: &[u8]) -> i32 {
    match write(env, file, bytes) {
        Ok(n) => n as i32,
        Err(e) => {
            fd::set_errno(env, e);
            -1
        }
    }
}

/// Writes wide printf output (as UTF-8) to a stream; the unit count or -1.
pub fn put_w(env: &mut Env, file: u32, units: &[u16]) -> i32 {
    if put(env, file, String::from_utf16_lossy(units).as_bytes()) < 0 {
        -1
    } else {
        units.len() as i32
    }
}

/// stdout's FILE for the runtime the call came through (msvcrt's _iob by default).
pub fn stdout_file(env: &mut Env) -> u32 {
    msvcrt_iob(env) + FILE_SIZE
}

pub fn stdin_file(env: &mut Env) -> u32 {
    msvcrt_iob(env)
}

/// A wide character as UTF-8 for a narrow stream.
fn wchar_bytes(c: u32) -> Vec<u8> {
    String::from_utf16_lossy(&[c as u16]).into_bytes()
}

/// fgetwc on a narrow stream: one byte (Latin-1) or a UTF-8 sequence.
fn getwc(env: &mut Env, file: u32) -> u32 {
    let Some(b0) = getc(env, file) else {
        return 0xFFFF;
    };
    let n = match b0 {
        0xC0..=0xDF => 1,
        0xE0..=0xEF => 2,
        _ => 0,
    };
    if n == 0 {
        return b0 as u32;
    }
    let mut bytes = vec![b0];
    for _ in 0..n {
        match getc(env, file) {
            Some(b) => bytes.push(b),
            None => break,
        }
    }
    match std::str::from_utf8(&bytes) {
        Ok(s) => s.encode_utf16().next().unwrap_or(0xFFFD) as u32,
        Err(_) => b0 as u32,
    }
}

fn file_arg(env: &mut Env, file: u32) -> bool {
    if stream(env, file).is_some() {
        true
    } else {
        fd::set_errno(env, errno::EINVAL);
        false
    }
}

/// fopen_s / _wfopen_s: the FILE through `out`, errno as the result.
fn fopen_s(env: &mut Env, out: u32, name: u32, mode: u32, wide: bool) -> i32 {
    if out == 0 {
        return errno::EINVAL;
    }
    let f = fopen(env, name, mode, wide);
    env.mem.poke_u32(out, f);
    if f == 0 {
        fd::get_errno(env)
    } else {
        0
    }
}

pub mod exports {
    use super::*;

    crate::dll! { "(crt stdio)";
        cdecl fn fopen(env, name: u32, mode: u32) -> u32 { fopen(env, name, mode, false) }
        cdecl fn _wfopen(env, name: u32, mode: u32) -> u32 { fopen(env, name, mode, true) }
        cdecl fn _fsopen(env, name: u32, mode: u32, share: u32) -> u32 { fopen(env, name, mode, false) }
        cdecl fn _wfsopen(env, name: u32, mode: u32, share: u32) -> u32 { fopen(env, name, mode, true) }
        cdecl fn fopen_s(env, out: u32, name: u32, mode: u32) -> i32 { fopen_s(env, out, name, mode, false) }
        cdecl fn _wfopen_s(env, out: u32, name: u32, mode: u32) -> i32 { fopen_s(env, out, name, mode, true) }
        cdecl fn _fdopen(env, fdn: i32, mode: u32) -> u32 {
            let Some((_, r, w)) = env.read_a(mode).and_then(|m| parse_mode(env, &m)) else { fd::set_errno(env, errno::EINVAL); return 0 };
            if fd::get(env, fdn).is_err() { fd::set_errno(env, errno::EBADF); return 0; }
            attach(env, fdn, r, w, None)
        }
        cdecl fn _wfdopen(env, fdn: i32, mode: u32) -> u32 {
            let Some((_, r, w)) = env.read_w(mode).and_then(|m| parse_mode(env, &m)) else { fd::set_errno(env, errno::EINVAL); return 0 };
            if fd::get(env, fdn).is_err() { fd::set_errno(env, errno::EBADF); return 0; }
            attach(env, fdn, r, w, None)
        }
        cdecl fn freopen(env, name: u32, mode: u32, file: u32) -> u32 {
            let Some((fl, r, w)) = env.read_a(mode).and_then(|m| parse_mode(env, &m)) else { fd::set_errno(env, errno::EINVAL); return 0 };
            let old_fd = stream(env, file).map(|s| s.fd);
            flush(env, file).ok();
            if let Some(o) = old_fd { fd::close(env, o).ok(); }
            match fd::open(env, name, false, fl) {
                Ok(n) => {
                    // The standard streams keep their descriptor number.
                    let n = match old_fd { Some(o) if o <= 2 && n != o => { fd::dup(env, n, Some(o)).ok(); fd::close(env, n).ok(); o } _ => n };
                    attach(env, n, r, w, Some(file))
                }
                Err(e) => { fd::set_errno(env, e); env.crt.streams.remove(&file); 0 }
            }
        }
        cdecl fn fclose(env, file: u32) -> i32 { fclose(env, file) }
        cdecl fn _fcloseall(env) -> i32 {
            let owned: Vec<u32> = env.crt.streams.iter().filter(|(_, s)| s.owned).map(|(&f, _)| f).collect();
            for f in &owned { fclose(env, *f); }
            owned.len() as i32
        }
        cdecl fn fflush(env, file: u32) -> i32 {
            if file == 0 { flush_all(env); return 0; }
            match flush(env, file) { Ok(()) => 0, Err(e) => { fd::set_errno(env, e); -1 } }
        }
        cdecl fn _flushall(env) -> i32 { flush_all(env) }
        cdecl fn fread(env, buf: u32, size: u32, n: u32, file: u32) -> u32 { fread(env, buf, size, n, file) }
        cdecl fn fwrite(env, buf: u32, size: u32, n: u32, file: u32) -> u32 {
            let Some(total) = size.checked_mul(n) else { return 0 };
            if total == 0 { return 0; }
            let Some(b) = env.read_bytes(buf, total) else { return 0 };
            match write(env, file, &b) { Ok(_) => n, Err(e) => { fd::set_errno(env, e); 0 } }
        }
        cdecl fn fgetc(env, file: u32) -> i32 { getc(env, file).map_or(-1, |c| c as i32) }
        cdecl fn getc(env, file: u32) -> i32 { getc(env, file).map_or(-1, |c| c as i32) }
        cdecl fn _fgetc_nolock(env, file: u32) -> i32 { getc(env, file).map_or(-1, |c| c as i32) }
        cdecl fn _getc_nolock(env, file: u32) -> i32 { getc(env, file).map_or(-1, |c| c as i32) }
        cdecl fn getchar(env) -> i32 { let f = stdin_file(env); getc(env, f).map_or(-1, |c| c as i32) }
        cdecl fn _fgetchar(env) -> i32 { let f = stdin_file(env); getc(env, f).map_or(-1, |c| c as i32) }
        cdecl fn _filbuf(env, file: u32) -> i32 { let c = getc(env, file).map_or(-1, |c| c as i32); mirror(env, file); c }
        cdecl fn fputc(env, c: u32, file: u32) -> i32 { if put(env, file, &[c as u8]) < 0 { -1 } else { (c & 0xFF) as i32 } }
        cdecl fn putc(env, c: u32, file: u32) -> i32 { if put(env, file, &[c as u8]) < 0 { -1 } else { (c & 0xFF) as i32 } }
        cdecl fn _fputc_nolock(env, c: u32, file: u32) -> i32 { if put(env, file, &[c as u8]) < 0 { -1 } else { (c & 0xFF) as i32 } }
        cdecl fn _putc_nolock(env, c: u32, file: u32) -> i32 { if put(env, file, &[c as u8]) < 0 { -1 } else { (c & 0xFF) as i32 } }
        cdecl fn _flsbuf(env, c: u32, file: u32) -> i32 { let r = if put(env, file, &[c as u8]) < 0 { -1 } else { (c & 0xFF) as i32 }; mirror(env, file); r }
        cdecl fn putchar(env, c: u32) -> i32 { let f = stdout_file(env); if put(env, f, &[c as u8]) < 0 { -1 } else { (c & 0xFF) as i32 } }
        cdecl fn _fputchar(env, c: u32) -> i32 { let f = stdout_file(env); if put(env, f, &[c as u8]) < 0 { -1 } else { (c & 0xFF) as i32 } }
        cdecl fn fgets(env, buf: u32, n: i32, file: u32) -> u32 { fgets(env, buf, n, file) }
        cdecl fn fputs(env, s: u32, file: u32) -> i32 {
            let b = env.mem.peek_cstr(s, 1 << 24).unwrap_or_default();
            if put(env, file, &b) < 0 { -1 } else { 0 }
        }
        cdecl fn puts(env, s: u32) -> i32 {
            let mut b = env.mem.peek_cstr(s, 1 << 24).unwrap_or_default();
            b.push(b'\n');
            let f = stdout_file(env);
            if put(env, f, &b) < 0 { -1 } else { 0 }
        }
        cdecl fn ungetc(env, c: i32, file: u32) -> i32 { ungetc(env, c, file) }
        cdecl fn fseek(env, file: u32, off: i32, whence: u32) -> i32 {
            match seek(env, file, off as i64, whence) { Ok(()) => 0, Err(e) => { fd::set_errno(env, e); -1 } }
        }
        cdecl fn _fseeki64(env, file: u32, lo: u32, hi: u32, whence: u32) -> i32 {
            match seek(env, file, ((hi as u64) << 32 | lo as u64) as i64, whence) { Ok(()) => 0, Err(e) => { fd::set_errno(env, e); -1 } }
        }
        cdecl fn ftell(env, file: u32) -> i32 {
            match tell(env, file) { Ok(p) if p <= i32::MAX as i64 => p as i32, Ok(_) => { fd::set_errno(env, errno::EINVAL); -1 } Err(e) => { fd::set_errno(env, e); -1 } }
        }
        cdecl fn _ftelli64(env, file: u32) -> u64 {
            match tell(env, file) { Ok(p) => p as u64, Err(e) => { fd::set_errno(env, e); u64::MAX } }
        }
        cdecl fn rewind(env, file: u32) {
            seek(env, file, 0, 0).ok();
            if let Some(s) = env.crt.streams.get_mut(&file) { s.err = false; }
            mirror(env, file);
        }
        cdecl fn fgetpos(env, file: u32, pos: u32) -> i32 {
            match tell(env, file) { Ok(p) => { env.mem.poke(pos, &p.to_le_bytes()); 0 } Err(e) => { fd::set_errno(env, e); -1 } }
        }
        cdecl fn fsetpos(env, file: u32, pos: u32) -> i32 {
            let mut b = [0u8; 8];
            if env.mem.peek(pos, &mut b).is_none() { return -1; }
            match seek(env, file, i64::from_le_bytes(b), 0) { Ok(()) => 0, Err(e) => { fd::set_errno(env, e); -1 } }
        }
        cdecl fn feof(env, file: u32) -> i32 { stream(env, file).map_or(0, |s| if s.eof { 0x10 } else { 0 }) }
        cdecl fn ferror(env, file: u32) -> i32 { stream(env, file).map_or(0, |s| if s.err { 0x20 } else { 0 }) }
        cdecl fn clearerr(env, file: u32) {
            if let Some(s) = stream(env, file) { s.eof = false; s.err = false; }
            mirror(env, file);
        }
        cdecl fn _fileno(env, file: u32) -> i32 {
            if !file_arg(env, file) { return -1; }
            stream(env, file).map_or(-1, |s| s.fd)
        }
        cdecl fn setvbuf(env, file: u32, buf: u32, mode: u32, size: u32) -> i32 {
            if mode > 4 || (mode != 4 && !(2..=i32::MAX as u32).contains(&size)) { fd::set_errno(env, errno::EINVAL); return -1; }
            match stream(env, file) { Some(s) => { s.unbuffered = mode == 4; 0 } None => -1 }
        }
        cdecl fn setbuf(env, file: u32, buf: u32) {
            if let Some(s) = stream(env, file) { s.unbuffered = buf == 0; }
        }
        cdecl fn tmpfile(env) -> u32 {
            let n = env.crt.tmp_counter;
            env.crt.tmp_counter += 1;
            let name = format!("{}t{:x}.tmp", crate::dll::kernel32::file::temp_path(env), n + 1);
            let a = env.alloc_cstr(name.as_bytes());
            let mode = env.alloc_cstr(b"w+bD");
            fopen(env, a, mode, false)
        }
        cdecl fn fgetwc(env, file: u32) -> u32 { getwc(env, file) }
        cdecl fn getwc(env, file: u32) -> u32 { getwc(env, file) }
        cdecl fn fputwc(env, c: u32, file: u32) -> u32 { if put(env, file, &wchar_bytes(c)) < 0 { 0xFFFF } else { c & 0xFFFF } }
        cdecl fn putwc(env, c: u32, file: u32) -> u32 { if put(env, file, &wchar_bytes(c)) < 0 { 0xFFFF } else { c & 0xFFFF } }
        cdecl fn putwchar(env, c: u32) -> u32 { let f = stdout_file(env); if put(env, f, &wchar_bytes(c)) < 0 { 0xFFFF } else { c & 0xFFFF } }
        cdecl fn fgetws(env, buf: u32, n: i32, file: u32) -> u32 {
            if n <= 0 { return 0; }
            let mut out: Vec<u16> = Vec::new();
            while (out.len() as i32) < n - 1 {
                let c = getwc(env, file);
                if c == 0xFFFF { break; }
                out.push(c as u16);
                if c == 10 { break; }
            }
            if out.is_empty() { return 0; }
            out.push(0);
            env.mem.poke(buf, &crate::dll::wbytes(&out));
            buf
        }
        cdecl fn fputws(env, s: u32, file: u32) -> i32 {
            let t = env.read_w(s).unwrap_or_default();
            if put(env, file, t.as_bytes()) < 0 { -1 } else { 0 }
        }
        cdecl fn _getw(env, file: u32) -> i32 {
            let mut b = [0u8; 4];
            for x in &mut b { match getc(env, file) { Some(c) => *x = c, None => return -1 } }
            i32::from_le_bytes(b)
        }
        cdecl fn _putw(env, v: u32, file: u32) -> i32 { if put(env, file, &v.to_le_bytes()) < 0 { -1 } else { v as i32 } }
        cdecl fn printf(env, f: u32) -> i32 { let out = fmt_a(env, f, env.arg_base + 4); let o = stdout_file(env); put(env, o, &out) }
        cdecl fn vprintf(env, f: u32, va: u32) -> i32 { let out = fmt_a(env, f, va); let o = stdout_file(env); put(env, o, &out) }
        cdecl fn fprintf(env, file: u32, f: u32) -> i32 { let out = fmt_a(env, f, env.arg_base + 8); put(env, file, &out) }
        cdecl fn vfprintf(env, file: u32, f: u32, va: u32) -> i32 { let out = fmt_a(env, f, va); put(env, file, &out) }
        cdecl fn sprintf(env, buf: u32, f: u32) -> i32 { let out = fmt_a(env, f, env.arg_base + 8); store(env, buf, &out, Bound::None) }
        cdecl fn vsprintf(env, buf: u32, f: u32, va: u32) -> i32 { let out = fmt_a(env, f, va); store(env, buf, &out, Bound::None) }
        cdecl fn _snprintf(env, buf: u32, n: u32, f: u32) -> i32 { let out = fmt_a(env, f, env.arg_base + 12); store(env, buf, &out, Bound::Legacy(n)) }
        cdecl fn _vsnprintf(env, buf: u32, n: u32, f: u32, va: u32) -> i32 { let out = fmt_a(env, f, va); store(env, buf, &out, Bound::Legacy(n)) }
        cdecl fn snprintf(env, buf: u32, n: u32, f: u32) -> i32 { let out = fmt_a(env, f, env.arg_base + 12); store(env, buf, &out, Bound::Standard(n)) }
        cdecl fn vsnprintf(env, buf: u32, n: u32, f: u32, va: u32) -> i32 { let out = fmt_a(env, f, va); store(env, buf, &out, Bound::Standard(n)) }
        cdecl fn _scprintf(env, f: u32) -> i32 { fmt_a(env, f, env.arg_base + 4).len() as i32 }
        cdecl fn _vscprintf(env, f: u32, va: u32) -> i32 { fmt_a(env, f, va).len() as i32 }
        cdecl fn wprintf(env, f: u32) -> i32 { let out = fmt_w(env, f, env.arg_base + 4); let o = stdout_file(env); put_w(env, o, &out) }
        cdecl fn vwprintf(env, f: u32, va: u32) -> i32 { let out = fmt_w(env, f, va); let o = stdout_file(env); put_w(env, o, &out) }
        cdecl fn fwprintf(env, file: u32, f: u32) -> i32 { let out = fmt_w(env, f, env.arg_base + 8); put_w(env, file, &out) }
        cdecl fn vfwprintf(env, file: u32, f: u32, va: u32) -> i32 { let out = fmt_w(env, f, va); put_w(env, file, &out) }
        cdecl fn swprintf(env, buf: u32, f: u32) -> i32 { let out = fmt_w(env, f, env.arg_base + 8); store(env, buf, &out, Bound::None) }
        cdecl fn vswprintf(env, buf: u32, f: u32, va: u32) -> i32 { let out = fmt_w(env, f, va); store(env, buf, &out, Bound::None) }
        cdecl fn _swprintf(env, buf: u32, f: u32) -> i32 { let out = fmt_w(env, f, env.arg_base + 8); store(env, buf, &out, Bound::None) }
        cdecl fn _snwprintf(env, buf: u32, n: u32, f: u32) -> i32 { let out = fmt_w(env, f, env.arg_base + 12); store(env, buf, &out, Bound::Legacy(n)) }
        cdecl fn _vsnwprintf(env, buf: u32, n: u32, f: u32, va: u32) -> i32 { let out = fmt_w(env, f, va); store(env, buf, &out, Bound::Legacy(n)) }
        cdecl fn _scwprintf(env, f: u32) -> i32 { fmt_w(env, f, env.arg_base + 4).len() as i32 }
        cdecl fn _vscwprintf(env, f: u32, va: u32) -> i32 { fmt_w(env, f, va).len() as i32 }
        cdecl fn perror(env, s: u32) {
            let e = fd::get_errno(env);
            let mut msg = env.read_a(s).filter(|s| !s.is_empty()).map(|s| format!("{s}: ")).unwrap_or_default();
            msg.push_str(super::super::misc::strerror_text(e));
            msg.push('\n');
            let f = msvcrt_iob(env) + 2 * FILE_SIZE;
            put(env, f, msg.as_bytes());
        }
        cdecl fn __iob_func(env) -> u32 { msvcrt_iob(env) }
        cdecl fn _get_stream_buffer_pointers(env, file: u32, base: u32, ptr: u32, cnt: u32) -> i32 { 0 }
        cdecl fn _lock_file(env, file: u32) {}
        cdecl fn _unlock_file(env, file: u32) {}
        cdecl fn _getmaxstdio(env) -> i32 { 2048 }
        cdecl fn _setmaxstdio(env, n: i32) -> i32 { if (20..=2048).contains(&n) { n } else { -1 } }
        cdecl fn _rmtmp(env) -> i32 { 0 }
        cdecl fn gets(env, buf: u32) -> u32 {
            let f = stdin_file(env);
            let mut out = Vec::new();
            loop { match getc(env, f) { Some(b'\n') => break, Some(c) => out.push(c), None if out.is_empty() => return 0, None => break } }
            out.push(0);
            env.mem.poke(buf, &out);
            buf
        }
    }
}
