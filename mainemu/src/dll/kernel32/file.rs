//! kernel32's file, directory, path and drive calls over `vfs`, `files` and
//! `io`, each declared once (A and W forms share one body).
//!
//! Owns the Win32 argument and result conventions of these calls (buffer
//! sizes, what a failure returns, which error code). It must not touch the
//! host file system except through `files`/`io` on paths `vfs` resolved.

use crate::dll::{wbytes, Env, Ret};
use crate::files::{self, access, attr, disp, err, DirEntry};
use crate::handles::{ConsoleKind, Object, INVALID};
use crate::io;

/// A path argument; `None` (ERROR_PATH_NOT_FOUND) when NULL or unreadable.
pub fn path_arg(env: &mut Env, addr: u32, wide: bool) -> Option<String> {
    match env.read_str(addr, wide) {
        Some(s) => Some(s),
        None => env.fail(err::PATH_NOT_FOUND, None),
    }
}

/// A guest path resolved for reading, or the Win32 error.
pub fn resolve(env: &Env, guest: &str) -> Result<std::path::PathBuf, u32> {
    env.drives.resolve(guest).map_err(|e| e.win32_code())
}

/// A guest path resolved for creating, writing or deleting.
pub fn resolve_write(env: &Env, guest: &str) -> Result<std::path::PathBuf, u32> {
    env.drives.resolve_write(guest).map_err(|e| e.win32_code())
}

/// A path argument resolved for a change (create, write, delete); `None`
/// with the last error set when it is unreadable or refused.
fn write_target(env: &mut Env, name: u32, wide: bool) -> Option<(String, std::path::PathBuf)> {
    let p = path_arg(env, name, wide)?;
    match resolve_write(env, &p) {
        Ok(h) => Some((p, h)),
        Err(e) => env.fail(e, None),
    }
}

/// A host change to a directory's entries: stamps the parent on success.
fn changed(env: &mut Env, host: &std::path::Path, r: std::io::Result<()>) -> bool {
    match r {
        Ok(()) => {
            io::touch_parent(host, env.guest_filetime());
            true
        }
        Err(e) => env.fail(files::io_error(&e), false),
    }
}

/// The console and null device names CreateFile opens as devices.
fn device(path: &str) -> Option<&'static str> {
    let last = path
        .trim_start_matches("\\\\.\\")
        .rsplit(['\\', '/'])
        .next()
        .unwrap_or("");
    let stem = last
        .split('.')
        .next()
        .unwrap_or("")
        .trim_end()
        .to_ascii_uppercase();
    match stem.as_str() {
        "CONIN$" => Some("CONIN$"),
        "CONOUT$" => Some("CONOUT$"),
        "CON" => Some("CON"),
        "NUL" => Some("NUL"),
        _ => None,
    }
}

pub fn create_file(
    env: &mut Env,
    name: u32,
    wide: bool,
    desired: u32,
    disposition: u32,
    flags: u32,
) -> u32 {
    let Some(p) = path_arg(env, name, wide) else {
        return INVALID;
    };
    open_path(env, p, desired, disposition, flags)
}

/// CreateFile of a path already read (ntdll's NtCreateFile comes here too).
pub fn open_path(env: &mut Env, p: String, desired: u32, disposition: u32, flags: u32) -> u32 {
    if p.is_empty() {
        return env.fail(err::PATH_NOT_FOUND, INVALID);
    }
    if p.eq_ignore_ascii_case("\\\\.\\MountPointManager") {
        env.last_error = 0;
        return env
            .handles
            .add(Object::Other(crate::dll::ntfile::MOUNT_MANAGER));
    }
    if p.to_ascii_lowercase().starts_with("\\\\.\\pipe\\") {
        return super::pipe::open_client(env, &p, desired);
    }
    if let Some(d) = device(&p) {
        let write = desired & (access::GENERIC_WRITE | access::FILE_WRITE_DATA) != 0;
        let read = desired & (access::GENERIC_READ | access::FILE_READ_DATA) != 0;
        // CON is the input or the output by the access asked: not both.
        if d == "CON" && read && write {
            return env.fail(err::FILE_NOT_FOUND, u32::MAX);
        }
        let obj = match d {
            "CONIN$" => Object::Console(ConsoleKind::Input),
            // CONOUT$ opens the active screen buffer.
            "CONOUT$" => match env.con.buffers.active {
                super::console_buffer::MAIN => Object::Console(ConsoleKind::Output),
                id => Object::Console(ConsoleKind::Buffer(id)),
            },
            "CON" if write => Object::Console(ConsoleKind::Output),
            "CON" => Object::Console(ConsoleKind::Input),
            _ => Object::Null,
        };
        env.last_error = 0;
        return env.handles.add(obj);
    }
    let writes = desired
        & (access::GENERIC_WRITE
            | access::GENERIC_ALL
            | access::FILE_WRITE_DATA
            | access::FILE_APPEND_DATA
            | access::DELETE)
        != 0
        || disposition != disp::OPEN_EXISTING
        || flags & files::FLAG_DELETE_ON_CLOSE != 0;
    let host = if writes {
        resolve_write(env, &p)
    } else {
        resolve(env, &p)
    };
    let host = match host {
        Ok(h) => h,
        Err(e) => return env.fail(e, INVALID),
    };
    let guest = env.drives.lexical_full(&p);
    match files::open(&host, &guest, desired, disposition, flags) {
        Ok((obj, existed)) => {
            if !existed {
                io::touch_parent(&host, env.guest_filetime());
            }
            env.last_error =
                if existed && matches!(disposition, disp::CREATE_ALWAYS | disp::OPEN_ALWAYS) {
                    err::ALREADY_EXISTS
                } else {
                    0
                };
            env.handles.add(Object::File(obj))
        }
        Err(e) => env.fail(e, INVALID),
    }
}

/// OVERLAPPED: positions the file at its offset (a synchronous emulation).
fn overlapped_seek(env: &mut Env, h: u32, ov: u32) {
    if ov == 0 {
        return;
    }
    if let (Some(lo), Some(hi)) = (env.mem.peek_u32(ov + 8), env.mem.peek_u32(ov + 12)) {
        io::seek(env, h, ((hi as u64) << 32 | lo as u64) as i64, 0).ok();
    }
}

fn overlapped_done(env: &mut Env, ov: u32, n: u32) {
    if ov != 0 {
        env.mem.poke_u32(ov, 0);
        env.mem.poke_u32(ov + 4, n);
        if let Some(ev) = env.mem.peek_u32(ov + 16) {
            if let Some(Object::Event { signaled, .. }) = env.handles.get_mut(ev) {
                *signaled = true;
                env.threads.epoch += 1;
            }
        }
    }
}

pub fn read_file(env: &mut Env, h: u32, buf: u32, n: u32, got: u32, ov: u32) -> Ret {
    if ov != 0 {
        if let Some(r) = super::pipe::read_overlapped(env, h, buf, n, got, ov) {
            return r;
        }
    }
    if io::would_block(env, h) {
        return Ret::Block { deadline: None };
    }
    if got != 0 {
        env.mem.poke_u32(got, 0);
    }
    overlapped_seek(env, h, ov);
    match io::read(env, h, n) {
        Ok(b) => {
            if env.mem.poke(buf, &b).is_none() {
                return Ret::Value(env.fail(998, 0)); // ERROR_NOACCESS
            }
            if got != 0 {
                env.mem.poke_u32(got, b.len() as u32);
            }
            overlapped_done(env, ov, b.len() as u32);
            if ov != 0 && b.is_empty() && n > 0 {
                return Ret::Value(env.fail(err::HANDLE_EOF, 0));
            }
            Ret::Value(1)
        }
        Err(e) => Ret::Value(env.fail(e, 0)),
    }
}

pub fn write_file(env: &mut Env, h: u32, buf: u32, n: u32, put: u32, ov: u32) -> bool {
    if put != 0 {
        env.mem.poke_u32(put, 0);
    }
    let Some(b) = env.read_bytes(buf, n) else {
        return env.fail(998, false);
    };
    overlapped_seek(env, h, ov);
    match io::write(env, h, &b) {
        Ok(k) => {
            if put != 0 {
                env.mem.poke_u32(put, k);
            }
            overlapped_done(env, ov, k);
            if let Some(Object::PipeEnd { buf, .. }) = env.handles.get(h) {
                let b = *buf;
                super::pipe::after_io(env, b);
            }
            true
        }
        Err(e) => env.fail(e, false),
    }
}

fn set_pointer(env: &mut Env, h: u32, dist: i64, method: u32) -> Result<u64, u32> {
    if method > 2 {
        return Err(err::INVALID_PARAMETER);
    }
    io::seek(env, h, dist, method)
}

/// Writes a FILETIME (two dwords) if `out` is not NULL.
fn put_ft(env: &mut Env, out: u32, ft: u64) {
    if out != 0 {
        env.mem.poke(out, &ft.to_le_bytes());
    }
}

pub fn entry_of_host(host: &std::path::Path) -> Result<DirEntry, u32> {
    let name = host
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    files::stat_entry(host, &name)
}

/// WIN32_FILE_ATTRIBUTE_DATA / the head of WIN32_FIND_DATA.
fn attr_data(e: &DirEntry) -> Vec<u8> {
    let mut b = Vec::with_capacity(36);
    b.extend(e.attrs.to_le_bytes());
    for _ in 0..3 {
        b.extend(e.mtime.to_le_bytes());
    }
    b.extend(((e.size >> 32) as u32).to_le_bytes());
    b.extend((e.size as u32).to_le_bytes());
    b
}

/// Writes WIN32_FIND_DATAA (320 bytes) or WIN32_FIND_DATAW (592 bytes).
fn put_find_data(env: &mut Env, out: u32, e: &DirEntry, wide: bool) -> bool {
    let mut b = attr_data(e);
    b.extend([0u8; 8]); // reserved
    if wide {
        let mut name: Vec<u16> = e.name.encode_utf16().take(259).collect();
        name.resize(260, 0);
        b.extend(wbytes(&name));
        b.extend([0u8; 28]);
    } else {
        let mut name: Vec<u8> = e
            .name
            .chars()
            .take(259)
            .map(|c| if (c as u32) < 256 { c as u8 } else { b'?' })
            .collect();
        name.resize(260, 0);
        b.extend(name);
        b.extend([0u8; 16]);
    }
    env.mem.poke(out, &b).is_some()
}

/// Splits `dir\pattern` (the directory part as given, the pattern).
fn split_pattern(p: &str) -> (String, String) {
    let p = p.replace('/', "\\");
    match p.rfind('\\') {
        Some(i) => (p[..=i].to_string(), p[i + 1..].to_string()),
        None => match p.find(':') {
            Some(1) => (p[..2].to_string(), p[2..].to_string()),
            _ => (String::new(), p),
        },
    }
}

pub fn find_first(env: &mut Env, pat: u32, data: u32, wide: bool) -> u32 {
    let Some(p) = path_arg(env, pat, wide) else {
        return INVALID;
    };
    let (dir, pattern) = split_pattern(&p);
    if pattern.is_empty() {
        return env.fail(err::FILE_NOT_FOUND, INVALID);
    }
    let dir_guest = if dir.is_empty() {
        ".".to_string()
    } else {
        dir.clone()
    };
    let host_dir = match resolve(env, &dir_guest) {
        Ok(h) => h,
        Err(e) => return env.fail(e, INVALID),
    };
    if !host_dir.is_dir() {
        return env.fail(err::PATH_NOT_FOUND, INVALID);
    }
    let entries = if pattern.contains(['*', '?']) {
        let root = env.drives.is_root(&dir_guest);
        match files::list(&host_dir, &pattern, !root) {
            Ok(v) => v,
            Err(e) => return env.fail(e, INVALID),
        }
    } else if env.drives.is_root(&p) {
        // A root directory has no directory entry (Windows documents that
        // FindFirstFile cannot take one); answering with the host directory's
        // own name leaked where the drive is mapped into the guest.
        return env.fail(err::FILE_NOT_FOUND, INVALID);
    } else {
        match resolve(env, &p).and_then(|h| entry_of_host(&h)) {
            Ok(e) => vec![e],
            Err(e) => return env.fail(e, INVALID),
        }
    };
    let Some(first) = entries.first().cloned() else {
        return env.fail(err::FILE_NOT_FOUND, INVALID);
    };
    if !put_find_data(env, data, &first, wide) {
        return env.fail(998, INVALID);
    }
    env.last_error = 0;
    env.handles
        .add(Object::Find(crate::handles::FindObj { entries, next: 1 }))
}

pub fn find_next(env: &mut Env, h: u32, data: u32, wide: bool) -> bool {
    let e = match env.handles.get_mut(h) {
        Some(Object::Find(f)) => {
            let e = f.entries.get(f.next).cloned();
            if e.is_some() {
                f.next += 1;
            }
            e
        }
        _ => return env.fail(err::INVALID_HANDLE, false),
    };
    match e {
        Some(e) => put_find_data(env, data, &e, wide),
        None => env.fail(err::NO_MORE_FILES, false),
    }
}

pub fn get_attributes(env: &mut Env, name: u32, wide: bool) -> u32 {
    let Some(p) = path_arg(env, name, wide) else {
        return attr::INVALID;
    };
    if device(&p).is_some() {
        return attr::ARCHIVE;
    }
    match resolve(env, &p).and_then(|h| files::attributes(&h)) {
        Ok(a) => a,
        Err(e) => env.fail(e, attr::INVALID),
    }
}

pub fn get_attributes_ex(env: &mut Env, name: u32, wide: bool, out: u32) -> bool {
    let Some(p) = path_arg(env, name, wide) else {
        return false;
    };
    match resolve(env, &p).and_then(|h| entry_of_host(&h)) {
        Ok(e) => {
            let b = attr_data(&e);
            env.mem.poke(out, &b).is_some()
        }
        Err(e) => env.fail(e, false),
    }
}

pub fn set_attributes(env: &mut Env, name: u32, wide: bool, a: u32) -> bool {
    let Some((_, host)) = write_target(env, name, wide) else {
        return false;
    };
    match std::fs::metadata(&host) {
        Ok(m) => {
            let mut perm = m.permissions();
            perm.set_readonly(a & attr::READONLY != 0);
            std::fs::set_permissions(&host, perm).is_ok() || env.fail(err::ACCESS_DENIED, false)
        }
        Err(_) => env.fail(files::missing_code(&host), false),
    }
}

pub fn delete_file(env: &mut Env, name: u32, wide: bool) -> bool {
    let Some((_, host)) = write_target(env, name, wide) else {
        return false;
    };
    match std::fs::metadata(&host) {
        Err(_) => env.fail(files::missing_code(&host), false),
        Ok(m) if m.is_dir() || m.permissions().readonly() => env.fail(err::ACCESS_DENIED, false),
        Ok(_) => {
            let r = std::fs::remove_file(&host);
            changed(env, &host, r)
        }
    }
}

pub fn create_directory(env: &mut Env, name: u32, wide: bool) -> bool {
    let Some((_, host)) = write_target(env, name, wide) else {
        return false;
    };
    if host.exists() {
        return env.fail(err::ALREADY_EXISTS, false);
    }
    match std::fs::create_dir(&host) {
        Ok(()) => {
            let now = env.guest_filetime();
            if let Ok(d) = std::fs::File::open(&host) {
                d.set_modified(files::systime(now)).ok();
            }
            io::touch_parent(&host, now);
            true
        }
        Err(_) => env.fail(err::PATH_NOT_FOUND, false),
    }
}

pub fn remove_directory(env: &mut Env, name: u32, wide: bool) -> bool {
    let Some((p, host)) = write_target(env, name, wide) else {
        return false;
    };
    if env.drives.is_root(&p) {
        return env.fail(err::ACCESS_DENIED, false);
    }
    match std::fs::metadata(&host) {
        Err(_) => env.fail(files::missing_code(&host), false),
        Ok(m) if !m.is_dir() => env.fail(err::DIRECTORY, false),
        Ok(_) => {
            let r = std::fs::remove_dir(&host);
            changed(env, &host, r)
        }
    }
}

pub fn move_file(env: &mut Env, from: u32, to: u32, wide: bool, flags: u32) -> bool {
    let Some(f) = path_arg(env, from, wide) else {
        return false;
    };
    let hf = match resolve_write(env, &f) {
        Ok(h) => h,
        Err(e) => return env.fail(e, false),
    };
    if to == 0 {
        // MOVEFILE_DELAY_UNTIL_REBOOT with no target: delete at "reboot" (never).
        return flags & 4 != 0 || env.fail(err::INVALID_PARAMETER, false);
    }
    let Some(t) = path_arg(env, to, wide) else {
        return false;
    };
    let ht = match resolve_write(env, &t) {
        Ok(h) => h,
        Err(e) => return env.fail(e, false),
    };
    if !hf.exists() {
        return env.fail(files::missing_code(&hf), false);
    }
    if ht.exists() && hf.canonicalize().ok() != ht.canonicalize().ok() {
        if flags & 1 == 0 || ht.is_dir() {
            return env.fail(err::ALREADY_EXISTS, false);
        }
        if std::fs::metadata(&ht).is_ok_and(|m| m.permissions().readonly()) {
            return env.fail(err::ACCESS_DENIED, false);
        }
    }
    if ht.parent().is_some_and(|p| !p.is_dir()) {
        return env.fail(err::PATH_NOT_FOUND, false);
    }
    match std::fs::rename(&hf, &ht) {
        Ok(()) => {
            let now = env.guest_filetime();
            io::touch_parent(&hf, now);
            io::touch_parent(&ht, now);
            true
        }
        Err(e) => env.fail(files::io_error(&e), false),
    }
}

pub fn copy_file(env: &mut Env, from: u32, to: u32, wide: bool, fail_if_exists: bool) -> bool {
    let (Some(f), Some(t)) = (path_arg(env, from, wide), path_arg(env, to, wide)) else {
        return false;
    };
    let hf = match resolve(env, &f) {
        Ok(h) => h,
        Err(e) => return env.fail(e, false),
    };
    let ht = match resolve_write(env, &t) {
        Ok(h) => h,
        Err(e) => return env.fail(e, false),
    };
    let Ok(m) = std::fs::metadata(&hf) else {
        return env.fail(files::missing_code(&hf), false);
    };
    if m.is_dir() {
        return env.fail(err::ACCESS_DENIED, false);
    }
    if ht.exists() {
        if fail_if_exists {
            return env.fail(err::FILE_EXISTS, false);
        }
        if std::fs::metadata(&ht).is_ok_and(|m| m.permissions().readonly() || m.is_dir()) {
            return env.fail(err::ACCESS_DENIED, false);
        }
    }
    match std::fs::copy(&hf, &ht) {
        Ok(_) => {
            // CopyFile keeps the source's last write time.
            if let (Ok(mt), Ok(f)) = (
                m.modified(),
                std::fs::OpenOptions::new().write(true).open(&ht),
            ) {
                f.set_modified(mt).ok();
            }
            io::touch_parent(&ht, env.guest_filetime());
            true
        }
        Err(e) => env.fail(files::io_error(&e), false),
    }
}

/// CreateHardLink(new, existing): a second name for a file on the same
/// drive (the host's hard link).
pub fn hard_link(env: &mut Env, new: u32, existing: u32, wide: bool) -> bool {
    let (Some(n), Some(e)) = (path_arg(env, new, wide), path_arg(env, existing, wide)) else {
        return false;
    };
    let he = match resolve(env, &e) {
        Ok(h) => h,
        Err(c) => return env.fail(c, false),
    };
    let hn = match resolve_write(env, &n) {
        Ok(h) => h,
        Err(c) => return env.fail(c, false),
    };
    let drive = |p: &str| {
        env.drives
            .lexical_full(p)
            .chars()
            .next()
            .map(|c| c.to_ascii_uppercase())
    };
    if drive(&n) != drive(&e) {
        return env.fail(err::NOT_SAME_DEVICE, false);
    }
    match std::fs::metadata(&he) {
        Err(_) => return env.fail(files::missing_code(&he), false),
        Ok(m) if m.is_dir() => return env.fail(err::ACCESS_DENIED, false),
        Ok(_) => {}
    }
    if hn.exists() {
        return env.fail(err::ALREADY_EXISTS, false);
    }
    match std::fs::hard_link(&he, &hn) {
        Ok(()) => {
            io::touch_parent(&hn, env.guest_filetime());
            true
        }
        Err(e) => env.fail(files::io_error(&e), false),
    }
}

/// GetFullPathName(name, cap, buf, &filepart).
pub fn full_path_name(env: &mut Env, name: u32, wide: bool, cap: u32, buf: u32, part: u32) -> u32 {
    let Some(p) = path_arg(env, name, wide) else {
        return 0;
    };
    if p.is_empty() {
        return env.fail(err::INVALID_NAME, 0);
    }
    let full = if let Some(d) = device(&p).filter(|_| !p.contains(['\\', '/', ':'])) {
        format!("\\\\.\\{d}")
    } else {
        env.drives.lexical_full(&p)
    };
    let n = env.put_str_buf(&full, buf, cap, wide);
    if n < cap && part != 0 {
        let unit = if wide { 2 } else { 1 };
        let fp = if full.ends_with('\\') {
            0
        } else {
            let idx = full.rfind('\\').map_or(0, |i| i + 1);
            let units = if wide {
                full[..idx].encode_utf16().count()
            } else {
                full[..idx].chars().count()
            };
            buf + unit * units as u32
        };
        env.mem.poke_u32(part, fp);
    }
    n
}

/// The current directory as GetCurrentDirectory reports it.
pub fn cwd(env: &Env) -> String {
    env.drives.cwd()
}

/// GetTempPath: %TMP%, %TEMP%, %USERPROFILE% or the Windows directory, with a trailing `\`.
/// GetTempPathW: as Windows (since Vista) the rest of a large enough buffer
/// is zeroed up to 32767 characters, and a buffer too short is zeroed
/// whole (Wine's kernel32 path tests check both).
fn temp_path_w(env: &mut Env, cap: u32, buf: u32) -> u32 {
    let t = temp_path(env);
    let n = env.put_str_buf(&t, buf, cap, true);
    if buf != 0 {
        let (from, to) = if n < cap {
            (n + 1, cap.min(32767))
        } else {
            (0, cap)
        };
        if to > from {
            env.mem
                .poke(buf + 2 * from, &vec![0u8; 2 * (to - from) as usize]);
        }
    }
    n
}

pub fn temp_path(env: &Env) -> String {
    let base = env
        .var("TMP")
        .or_else(|| env.var("TEMP"))
        .or_else(|| env.var("USERPROFILE"))
        .unwrap_or("C:\\windows")
        .to_string();
    let mut full = env.drives.lexical_full(&base);
    if !full.ends_with('\\') {
        full.push('\\');
    }
    full
}

pub fn temp_file_name(
    env: &mut Env,
    dir: u32,
    prefix: u32,
    unique: u32,
    out: u32,
    wide: bool,
) -> u32 {
    let Some(d) = path_arg(env, dir, wide) else {
        return 0;
    };
    let pre: String = env
        .read_str(prefix, wide)
        .unwrap_or_default()
        .chars()
        .take(3)
        .collect();
    let dir = d.trim_end_matches('\\').to_string();
    let name = |u: u32| format!("{dir}\\{pre}{:X}.TMP", u & 0xFFFF);
    if unique != 0 {
        env.put_str(out, &name(unique), wide);
        return unique & 0xFFFF;
    }
    // Start from the guest clock (deterministic) and take the first free name.
    let start = ((env.guest_ms() as u32) & 0xFFFF).max(1);
    for k in 0..0xFFFFu32 {
        let u = ((start - 1 + k) % 0xFFFF) + 1;
        let n = name(u);
        let host = match resolve_write(env, &n) {
            Ok(h) => h,
            Err(e) => return env.fail(e, 0),
        };
        if host.exists() {
            continue;
        }
        if host.parent().is_some_and(|p| !p.is_dir()) {
            return env.fail(err::DIRECTORY, 0);
        }
        if std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&host)
            .is_err()
        {
            return env.fail(err::ACCESS_DENIED, 0);
        }
        let now = env.guest_filetime();
        files::set_mtime(&host, now);
        io::touch_parent(&host, now);
        env.put_str(out, &n, wide);
        return u;
    }
    env.fail(80, 0)
}

/// GetDriveType: DRIVE_FIXED (3) for mapped drives, DRIVE_NO_ROOT_DIR (1) otherwise.
pub fn drive_type(env: &mut Env, root: u32, wide: bool) -> u32 {
    let letter = if root == 0 {
        Some(env.drives.cwd_drive())
    } else {
        env.read_str(root, wide).and_then(|s| {
            let b = s.as_bytes();
            (b.len() >= 2 && b[1] == b':').then(|| (b[0] as char).to_ascii_uppercase())
        })
    };
    match letter {
        Some(l) if env.drives.letters().contains(&l) => 3,
        _ => 1,
    }
}

/// QueryDosDevice: a mapped drive `X:` is `\\Device\\HarddiskVolumeN` (N counts
/// the mapped letters from 1); no name lists the drives. Answers are
/// NUL-separated with a final second NUL.
fn query_dos_device(env: &mut Env, name: u32, buf: u32, cap: u32, wide: bool) -> u32 {
    let letters = env.drives.letters();
    let list: Vec<String> = if name == 0 {
        letters.iter().map(|l| format!("{l}:")).collect()
    } else {
        let n = env
            .read_str(name, wide)
            .unwrap_or_default()
            .to_ascii_uppercase();
        match letters.iter().position(|l| n == format!("{l}:")) {
            Some(k) => vec![format!("\\Device\\HarddiskVolume{}", k + 1)],
            None => return env.fail(err::FILE_NOT_FOUND, 0),
        }
    };
    let mut text = list.join("\0");
    text.push_str("\0\0");
    let len = text.chars().count() as u32;
    if cap < len {
        return env.fail(err::INSUFFICIENT_BUFFER, 0);
    }
    let units: Vec<u16> = text.encode_utf16().collect();
    let bytes = if wide {
        crate::dll::wbytes(&units)
    } else {
        text.into_bytes()
    };
    env.mem.poke(buf, &bytes);
    len
}

/// GetVolumeNameForVolumeMountPoint: `X:\` of a mapped drive is
/// `\\?\Volume{4d454d55-0000-0000-0000-0000000000NN}\` (NN its letter).
fn volume_guid_name(env: &mut Env, mount: u32, buf: u32, cap: u32, wide: bool) -> bool {
    let m = env
        .read_str(mount, wide)
        .unwrap_or_default()
        .to_ascii_uppercase();
    let b = m.as_bytes();
    if b.len() != 3 || b[1] != b':' || b[2] != b'\\' {
        return env.fail(err::INVALID_NAME, false);
    }
    if !env.drives.letters().contains(&(b[0] as char)) {
        return env.fail(err::FILE_NOT_FOUND, false);
    }
    let name = super::volume::guid_name(b[0] as char);
    if (cap as usize) < name.len() + 1 {
        return env.fail(206, false); // ERROR_FILENAME_EXCED_RANGE
    }
    env.put_str(buf, &name, wide).is_some()
}

/// GetVolumePathName: the root (`X:\\`) of the volume holding `path`: its
/// drive letter's, or the current drive's for a path without one (every
/// mapped drive is one volume; no mount points inside).
fn volume_path_name(env: &mut Env, path: u32, buf: u32, cap: u32, wide: bool) -> bool {
    let p = env.read_str(path, wide).unwrap_or_default();
    if p.is_empty() {
        return env.fail(err::INVALID_PARAMETER, false);
    }
    let b = p.as_bytes();
    let letter = if b.len() >= 2 && b[1] == b':' && b[0].is_ascii_alphabetic() {
        b[0].to_ascii_uppercase() as char
    } else {
        env.drives.cwd_drive()
    };
    let root = format!("{letter}:\\");
    if (cap as usize) < root.len() + 1 {
        return env.fail(206, false); // ERROR_FILENAME_EXCED_RANGE
    }
    env.put_str(buf, &root, wide).is_some()
}

/// GetVolumeInformation's fixed answers: label MAINEMU, serial 4D454D55, NTFS.
#[allow(clippy::too_many_arguments)]
pub fn volume_info(
    env: &mut Env,
    root: u32,
    wide: bool,
    name: u32,
    ncap: u32,
    serial: u32,
    maxc: u32,
    flags: u32,
    fs: u32,
    fscap: u32,
) -> bool {
    if root != 0 {
        let r = env.read_str(root, wide).unwrap_or_default();
        if let Err(e) = super::volume::root_drive(env, &r) {
            return env.fail(e, false);
        }
    }
    if name != 0 && env.put_str_buf("MAINEMU", name, ncap, wide) >= ncap {
        return env.fail(err::INSUFFICIENT_BUFFER, false);
    }
    if serial != 0 {
        env.mem.poke_u32(serial, 0x4D45_4D55);
    }
    if maxc != 0 {
        env.mem.poke_u32(maxc, 255);
    }
    if flags != 0 {
        env.mem.poke_u32(flags, 0x0000_00FF);
    }
    if fs != 0 && env.put_str_buf("NTFS", fs, fscap, wide) >= fscap {
        return env.fail(err::INSUFFICIENT_BUFFER, false);
    }
    true
}

/// Windows' default search order for a bare file name (SearchPath with no
/// path, CreateProcess): the program's folder, the current directory, the
/// system folders, then each PATH entry (empty entries included, as given).
pub fn default_search_dirs(env: &Env) -> Vec<String> {
    let exe_dir = env
        .exe_path
        .rsplit_once('\\')
        .map(|(d, _)| d.to_string())
        .unwrap_or_default();
    let mut v = vec![
        exe_dir,
        env.drives.cwd(),
        "C:\\windows\\system32".into(),
        "C:\\windows".into(),
    ];
    v.extend(env.var("PATH").unwrap_or("").split(';').map(str::to_string));
    v
}

/// SearchPath(path, file, ext, cap, buf, &part): the first existing match.
#[allow(clippy::too_many_arguments)]
pub fn search_path(
    env: &mut Env,
    path: u32,
    file: u32,
    ext: u32,
    cap: u32,
    buf: u32,
    part: u32,
    wide: bool,
) -> u32 {
    let Some(f) = path_arg(env, file, wide) else {
        return 0;
    };
    let ext = env.read_str(ext, wide).unwrap_or_default();
    let name = if !ext.is_empty() && !f.rsplit('\\').next().unwrap_or("").contains('.') {
        format!("{f}{ext}")
    } else {
        f.clone()
    };
    let dirs: Vec<String> = if name.contains(['\\', '/', ':']) {
        vec![String::new()]
    } else if let Some(p) = env.read_str(path, wide) {
        p.split(';').map(str::to_string).collect()
    } else {
        default_search_dirs(env)
    };
    for d in dirs {
        let cand = if d.is_empty() {
            name.clone()
        } else {
            format!("{}\\{}", d.trim_end_matches('\\'), name)
        };
        if let Ok(h) = resolve(env, &cand) {
            if h.exists() {
                let full = env.drives.lexical_full(&cand);
                let n = env.put_str_buf(&full, buf, cap, wide);
                if n < cap && part != 0 {
                    let idx = full.rfind('\\').map_or(0, |i| i + 1);
                    let units = if wide {
                        full[..idx].encode_utf16().count()
                    } else {
                        idx
                    };
                    env.mem
                        .poke_u32(part, buf + (if wide { 2 } else { 1 }) * units as u32);
                }
                return n;
            }
        }
    }
    env.fail(err::FILE_NOT_FOUND, 0)
}

/// BY_HANDLE_FILE_INFORMATION of an open file.
pub fn file_information(env: &mut Env, h: u32, out: u32) -> bool {
    let host = match env.handles.get(h) {
        Some(Object::File(f)) => f.host.clone(),
        Some(Object::Console(_)) | Some(Object::Null) => {
            return env.fail(err::INVALID_HANDLE, false);
        }
        _ => return env.fail(err::INVALID_HANDLE, false),
    };
    match entry_of_host(&host) {
        Ok(e) => {
            let mut b = Vec::with_capacity(52);
            b.extend(e.attrs.to_le_bytes());
            for _ in 0..3 {
                b.extend(e.mtime.to_le_bytes());
            }
            b.extend(0x4D45_4D55u32.to_le_bytes());
            b.extend(((e.size >> 32) as u32).to_le_bytes());
            b.extend((e.size as u32).to_le_bytes());
            b.extend(1u32.to_le_bytes());
            // A stable file index: a hash of the guest path (upper-cased, as
            // Windows names are case-insensitive), never of the host path or
            // an inode number: those depend on where the drive is mapped, and
            // 7-Zip's hard-link table then allocated differently (the run's
            // dispatches changed with the host directory's name length).
            let guest = env
                .drives
                .guest_of_host(&host)
                .unwrap_or_default()
                .to_uppercase();
            let idx = guest.bytes().fold(0xcbf2_9ce4_8422_2325u64, |a, c| {
                (a ^ c as u64).wrapping_mul(0x100_0000_01b3)
            });
            b.extend(((idx >> 32) as u32).to_le_bytes());
            b.extend((idx as u32).to_le_bytes());
            env.mem.poke(out, &b).is_some()
        }
        Err(e) => env.fail(e, false),
    }
}

pub fn file_time(env: &mut Env, h: u32, c: u32, a: u32, w: u32) -> bool {
    let host = match env.handles.get(h) {
        Some(Object::File(f)) => f.host.clone(),
        _ => return env.fail(err::INVALID_HANDLE, false),
    };
    match entry_of_host(&host) {
        Ok(e) => {
            put_ft(env, c, e.mtime);
            put_ft(env, a, e.mtime);
            put_ft(env, w, e.mtime);
            true
        }
        Err(e) => env.fail(e, false),
    }
}

pub fn set_file_time(env: &mut Env, h: u32, w: u32) -> bool {
    let ft = if w != 0 {
        let mut b = [0u8; 8];
        env.mem.peek(w, &mut b).map(|_| u64::from_le_bytes(b))
    } else {
        None
    };
    match env.handles.get_mut(h) {
        Some(Object::File(f)) => {
            if let (Some(ft), Some(file)) = (ft, f.file.as_ref()) {
                file.set_modified(files::systime(ft)).ok();
                // The guest's own time sticks: no stamping at close.
                f.dirty = false;
            }
            true
        }
        _ => env.fail(err::INVALID_HANDLE, false),
    }
}

/// Writes a string result the GetCurrentDirectory way (length, or size needed with NUL).
fn put_dir(env: &mut Env, s: &str, cap: u32, buf: u32, wide: bool) -> u32 {
    env.put_str_buf(s, buf, cap, wide)
}

crate::dll! { "(kernel32 files)";
    stdcall fn CreateFileA(env, name: u32, desired: u32, share: u32, sa: u32, disposition: u32, flags: u32, template: u32) -> u32 {
        create_file(env, name, false, desired, disposition, flags)
    }
    stdcall fn CreateFileW(env, name: u32, desired: u32, share: u32, sa: u32, disposition: u32, flags: u32, template: u32) -> u32 {
        create_file(env, name, true, desired, disposition, flags)
    }
    stdcall fn ReadFile(env, h: u32, buf: u32, n: u32, got: u32, ov: u32) -> Ret { read_file(env, h, buf, n, got, ov) }
    stdcall fn WriteFile(env, h: u32, buf: u32, n: u32, put: u32, ov: u32) -> bool { write_file(env, h, buf, n, put, ov) }
    stdcall fn CloseHandle(env, h: u32) -> bool {
        if h == crate::handles::CURRENT_PROCESS || h == crate::handles::CURRENT_THREAD { return true; }
        match io::close(env, h) { Ok(()) => true, Err(e) => env.fail(e, false) }
    }
    stdcall fn SetFilePointer(env, h: u32, lo: i32, hi_ptr: u32, method: u32) -> u32 {
        let dist = if hi_ptr != 0 {
            let hi = env.mem.peek_u32(hi_ptr).unwrap_or(0);
            ((hi as u64) << 32 | lo as u32 as u64) as i64
        } else {
            lo as i64
        };
        match set_pointer(env, h, dist, method) {
            Ok(p) => {
                if hi_ptr != 0 { env.mem.poke_u32(hi_ptr, (p >> 32) as u32); }
                else if p > u32::MAX as u64 { return env.fail(err::INVALID_PARAMETER, 0xFFFF_FFFF); }
                env.last_error = 0;
                p as u32
            }
            Err(e) => env.fail(e, 0xFFFF_FFFF),
        }
    }
    stdcall fn SetFilePointerEx(env, h: u32, lo: u32, hi: u32, out: u32, method: u32) -> bool {
        match set_pointer(env, h, ((hi as u64) << 32 | lo as u64) as i64, method) {
            Ok(p) => { if out != 0 { env.mem.poke(out, &p.to_le_bytes()); } true }
            Err(e) => env.fail(e, false),
        }
    }
    stdcall fn GetFileSize(env, h: u32, hi_ptr: u32) -> u32 {
        match io::size(env, h) {
            Ok(n) => { if hi_ptr != 0 { env.mem.poke_u32(hi_ptr, (n >> 32) as u32); } env.last_error = 0; n as u32 }
            Err(e) => env.fail(e, 0xFFFF_FFFF),
        }
    }
    stdcall fn GetFileSizeEx(env, h: u32, out: u32) -> bool {
        match io::size(env, h) {
            Ok(n) => env.mem.poke(out, &n.to_le_bytes()).is_some(),
            Err(e) => env.fail(e, false),
        }
    }
    stdcall fn SetEndOfFile(env, h: u32) -> bool {
        match io::set_end(env, h) { Ok(()) => true, Err(e) => env.fail(e, false) }
    }
    stdcall fn FlushFileBuffers(env, h: u32) -> bool {
        // On a console, it empties the input queue; output has nothing to flush.
        match env.handles.get(h) {
            Some(Object::Console(ConsoleKind::Input)) => { env.con.buffers.input.clear(); true }
            Some(Object::Console(_)) => env.fail(err::INVALID_HANDLE, false),
            Some(_) => true,
            None => env.fail(err::INVALID_HANDLE, false),
        }
    }
    stdcall fn GetFileType(env, h: u32) -> u32 {
        match io::kind(env, h) { Ok(t) => { env.last_error = 0; t } Err(e) => env.fail(e, 0) }
    }
    stdcall fn LockFile(env, h: u32, lo: u32, hi: u32, nlo: u32, nhi: u32) -> bool { true }
    stdcall fn UnlockFile(env, h: u32, lo: u32, hi: u32, nlo: u32, nhi: u32) -> bool { true }
    stdcall fn LockFileEx(env, h: u32, flags: u32, res: u32, nlo: u32, nhi: u32, ov: u32) -> bool { true }
    stdcall fn UnlockFileEx(env, h: u32, res: u32, nlo: u32, nhi: u32, ov: u32) -> bool { true }
    stdcall fn GetFileAttributesA(env, name: u32) -> u32 { get_attributes(env, name, false) }
    stdcall fn GetFileAttributesW(env, name: u32) -> u32 { get_attributes(env, name, true) }
    stdcall fn GetFileAttributesExA(env, name: u32, level: u32, out: u32) -> bool { get_attributes_ex(env, name, false, out) }
    stdcall fn GetFileAttributesExW(env, name: u32, level: u32, out: u32) -> bool { get_attributes_ex(env, name, true, out) }
    stdcall fn SetFileAttributesA(env, name: u32, a: u32) -> bool { set_attributes(env, name, false, a) }
    stdcall fn SetFileAttributesW(env, name: u32, a: u32) -> bool { set_attributes(env, name, true, a) }
    stdcall fn DeleteFileA(env, name: u32) -> bool { delete_file(env, name, false) }
    stdcall fn DeleteFileW(env, name: u32) -> bool { delete_file(env, name, true) }
    stdcall fn CreateDirectoryA(env, name: u32, sa: u32) -> bool { create_directory(env, name, false) }
    stdcall fn CreateDirectoryW(env, name: u32, sa: u32) -> bool { create_directory(env, name, true) }
    stdcall fn RemoveDirectoryA(env, name: u32) -> bool { remove_directory(env, name, false) }
    stdcall fn RemoveDirectoryW(env, name: u32) -> bool { remove_directory(env, name, true) }
    stdcall fn MoveFileA(env, from: u32, to: u32) -> bool { move_file(env, from, to, false, 2) }
    stdcall fn MoveFileW(env, from: u32, to: u32) -> bool { move_file(env, from, to, true, 2) }
    stdcall fn MoveFileExA(env, from: u32, to: u32, flags: u32) -> bool { move_file(env, from, to, false, flags) }
    stdcall fn MoveFileExW(env, from: u32, to: u32, flags: u32) -> bool { move_file(env, from, to, true, flags) }
    stdcall fn CopyFileA(env, from: u32, to: u32, fail: bool) -> bool { copy_file(env, from, to, false, fail) }
    stdcall fn CreateHardLinkA(env, new: u32, existing: u32, sa: u32) -> bool { hard_link(env, new, existing, false) }
    stdcall fn CreateHardLinkW(env, new: u32, existing: u32, sa: u32) -> bool { hard_link(env, new, existing, true) }
    stdcall fn CopyFileW(env, from: u32, to: u32, fail: bool) -> bool { copy_file(env, from, to, true, fail) }
    stdcall fn GetFullPathNameA(env, name: u32, cap: u32, buf: u32, part: u32) -> u32 { full_path_name(env, name, false, cap, buf, part) }
    stdcall fn GetFullPathNameW(env, name: u32, cap: u32, buf: u32, part: u32) -> u32 { full_path_name(env, name, true, cap, buf, part) }
    stdcall fn GetCurrentDirectoryA(env, cap: u32, buf: u32) -> u32 { let c = cwd(env); put_dir(env, &c, cap, buf, false) }
    stdcall fn GetCurrentDirectoryW(env, cap: u32, buf: u32) -> u32 { let c = cwd(env); put_dir(env, &c, cap, buf, true) }
    stdcall fn SetCurrentDirectoryA(env, name: u32) -> bool {
        let Some(p) = path_arg(env, name, false) else { return false };
        match env.drives.set_cwd(&p) { Ok(()) => true, Err(e) => env.fail(if e == crate::vfs::PathError::NotADirectory { 2 } else { e.win32_code() }, false) }
    }
    stdcall fn SetCurrentDirectoryW(env, name: u32) -> bool {
        let Some(p) = path_arg(env, name, true) else { return false };
        match env.drives.set_cwd(&p) { Ok(()) => true, Err(e) => env.fail(if e == crate::vfs::PathError::NotADirectory { 2 } else { e.win32_code() }, false) }
    }
    stdcall fn FindFirstFileA(env, pat: u32, data: u32) -> u32 { find_first(env, pat, data, false) }
    stdcall fn FindFirstFileW(env, pat: u32, data: u32) -> u32 { find_first(env, pat, data, true) }
    stdcall fn FindFirstFileExA(env, pat: u32, level: u32, data: u32, op: u32, filter: u32, flags: u32) -> u32 { find_first(env, pat, data, false) }
    stdcall fn FindFirstFileExW(env, pat: u32, level: u32, data: u32, op: u32, filter: u32, flags: u32) -> u32 { find_first(env, pat, data, true) }
    stdcall fn FindNextFileA(env, h: u32, data: u32) -> bool { find_next(env, h, data, false) }
    stdcall fn FindNextFileW(env, h: u32, data: u32) -> bool { find_next(env, h, data, true) }
    stdcall fn FindClose(env, h: u32) -> bool {
        match env.handles.get(h) {
            Some(Object::Find(_)) => { env.handles.close(h); true }
            _ => env.fail(err::INVALID_HANDLE, false),
        }
    }
    stdcall fn GetFileTime(env, h: u32, c: u32, a: u32, w: u32) -> bool { file_time(env, h, c, a, w) }
    stdcall fn SetFileTime(env, h: u32, c: u32, a: u32, w: u32) -> bool { set_file_time(env, h, w) }
    stdcall fn GetFileInformationByHandle(env, h: u32, out: u32) -> bool { file_information(env, h, out) }
    stdcall fn GetTempPathA(env, cap: u32, buf: u32) -> u32 { let t = temp_path(env); env.put_str_buf(&t, buf, cap, false) }
    stdcall fn GetTempPathW(env, cap: u32, buf: u32) -> u32 { temp_path_w(env, cap, buf) }
    stdcall fn GetTempFileNameA(env, dir: u32, prefix: u32, unique: u32, out: u32) -> u32 { temp_file_name(env, dir, prefix, unique, out, false) }
    stdcall fn GetTempFileNameW(env, dir: u32, prefix: u32, unique: u32, out: u32) -> u32 { temp_file_name(env, dir, prefix, unique, out, true) }
    stdcall fn GetLongPathNameA(env, short: u32, buf: u32, cap: u32) -> u32 { long_path(env, short, buf, cap, false) }
    stdcall fn GetLongPathNameW(env, short: u32, buf: u32, cap: u32) -> u32 { long_path(env, short, buf, cap, true) }
    stdcall fn GetShortPathNameA(env, long: u32, buf: u32, cap: u32) -> u32 { long_path(env, long, buf, cap, false) }
    stdcall fn GetShortPathNameW(env, long: u32, buf: u32, cap: u32) -> u32 { long_path(env, long, buf, cap, true) }
    stdcall fn GetDriveTypeA(env, root: u32) -> u32 { drive_type(env, root, false) }
    stdcall fn GetDriveTypeW(env, root: u32) -> u32 { drive_type(env, root, true) }
    // The device namespace is fixed (drives come from --drive): redefining is refused.
    stdcall fn DefineDosDeviceA(env, flags: u32, name: u32, target: u32) -> bool { env.fail(err::ACCESS_DENIED, false) }
    stdcall fn DefineDosDeviceW(env, flags: u32, name: u32, target: u32) -> bool { env.fail(err::ACCESS_DENIED, false) }
    stdcall fn GetVolumePathNameA(env, path: u32, buf: u32, cap: u32) -> bool { volume_path_name(env, path, buf, cap, false) }
    stdcall fn GetVolumePathNameW(env, path: u32, buf: u32, cap: u32) -> bool { volume_path_name(env, path, buf, cap, true) }
    stdcall fn QueryDosDeviceA(env, name: u32, buf: u32, cap: u32) -> u32 { query_dos_device(env, name, buf, cap, false) }
    stdcall fn QueryDosDeviceW(env, name: u32, buf: u32, cap: u32) -> u32 { query_dos_device(env, name, buf, cap, true) }
    stdcall fn GetVolumeNameForVolumeMountPointA(env, mount: u32, buf: u32, cap: u32) -> bool { volume_guid_name(env, mount, buf, cap, false) }
    stdcall fn GetVolumeNameForVolumeMountPointW(env, mount: u32, buf: u32, cap: u32) -> bool { volume_guid_name(env, mount, buf, cap, true) }
    stdcall fn GetLogicalDrives(env) -> u32 {
        env.drives.letters().iter().fold(0, |m, &l| m | 1 << (l as u32 - 'A' as u32))
    }
    stdcall fn GetLogicalDriveStringsA(env, cap: u32, buf: u32) -> u32 { drive_strings(env, cap, buf, false) }
    stdcall fn GetLogicalDriveStringsW(env, cap: u32, buf: u32) -> u32 { drive_strings(env, cap, buf, true) }
    stdcall fn GetDiskFreeSpaceA(env, root: u32, spc: u32, bps: u32, free: u32, total: u32) -> bool { disk_free(env, spc, bps, free, total) }
    stdcall fn GetDiskFreeSpaceW(env, root: u32, spc: u32, bps: u32, free: u32, total: u32) -> bool { disk_free(env, spc, bps, free, total) }
    stdcall fn GetDiskFreeSpaceExA(env, dir: u32, avail: u32, total: u32, free: u32) -> bool { disk_free_ex(env, avail, total, free) }
    stdcall fn GetDiskFreeSpaceExW(env, dir: u32, avail: u32, total: u32, free: u32) -> bool { disk_free_ex(env, avail, total, free) }
    stdcall fn GetVolumeInformationA(env, root: u32, name: u32, ncap: u32, serial: u32, maxc: u32, flags: u32, fs: u32, fscap: u32) -> bool {
        volume_info(env, root, false, name, ncap, serial, maxc, flags, fs, fscap)
    }
    stdcall fn GetVolumeInformationW(env, root: u32, name: u32, ncap: u32, serial: u32, maxc: u32, flags: u32, fs: u32, fscap: u32) -> bool {
        volume_info(env, root, true, name, ncap, serial, maxc, flags, fs, fscap)
    }
    stdcall fn SearchPathA(env, path: u32, file: u32, ext: u32, cap: u32, buf: u32, part: u32) -> u32 { search_path(env, path, file, ext, cap, buf, part, false) }
    stdcall fn SearchPathW(env, path: u32, file: u32, ext: u32, cap: u32, buf: u32, part: u32) -> u32 { search_path(env, path, file, ext, cap, buf, part, true) }
    stdcall fn GetWindowsDirectoryA(env, buf: u32, cap: u32) -> u32 { env.put_str_buf("C:\\windows", buf, cap, false) }
    stdcall fn GetWindowsDirectoryW(env, buf: u32, cap: u32) -> u32 { env.put_str_buf("C:\\windows", buf, cap, true) }
    stdcall fn GetSystemWindowsDirectoryA(env, buf: u32, cap: u32) -> u32 { env.put_str_buf("C:\\windows", buf, cap, false) }
    stdcall fn GetSystemWindowsDirectoryW(env, buf: u32, cap: u32) -> u32 { env.put_str_buf("C:\\windows", buf, cap, true) }
    stdcall fn GetSystemDirectoryA(env, buf: u32, cap: u32) -> u32 { env.put_str_buf("C:\\windows\\system32", buf, cap, false) }
    stdcall fn GetSystemDirectoryW(env, buf: u32, cap: u32) -> u32 { env.put_str_buf("C:\\windows\\system32", buf, cap, true) }
    stdcall fn SetFileApisToOEM(env) {}
    stdcall fn SetFileApisToANSI(env) {}
    stdcall fn AreFileApisANSI(env) -> bool { true }
}

fn long_path(env: &mut Env, p: u32, buf: u32, cap: u32, wide: bool) -> u32 {
    let Some(s) = path_arg(env, p, wide) else {
        return 0;
    };
    match resolve(env, &s) {
        Ok(h) if h.exists() => env.put_str_buf(&s, buf, cap, wide),
        Ok(h) => env.fail(files::missing_code(&h), 0),
        Err(e) => env.fail(e, 0),
    }
}

fn drive_strings(env: &mut Env, cap: u32, buf: u32, wide: bool) -> u32 {
    let mut s: Vec<u16> = Vec::new();
    for l in env.drives.letters() {
        s.extend(format!("{l}:\\").encode_utf16());
        s.push(0);
    }
    let need = s.len() as u32;
    if need + 1 > cap {
        return need + 1;
    }
    s.push(0);
    if wide {
        env.mem.poke(buf, &wbytes(&s));
    } else {
        let b: Vec<u8> = s.iter().map(|&u| u as u8).collect();
        env.mem.poke(buf, &b);
    }
    need
}

fn disk_free(env: &mut Env, spc: u32, bps: u32, free: u32, total: u32) -> bool {
    for (p, v) in [(spc, 8), (bps, 512), (free, 0x4_0000), (total, 0x8_0000)] {
        if p != 0 {
            env.mem.poke_u32(p, v);
        }
    }
    true
}

fn disk_free_ex(env: &mut Env, avail: u32, total: u32, free: u32) -> bool {
    for (p, v) in [(avail, 1u64 << 30), (total, 2u64 << 30), (free, 1u64 << 30)] {
        if p != 0 {
            env.mem.poke(p, &v.to_le_bytes());
        }
    }
    true
}
