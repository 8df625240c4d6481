//! Reads, writes, seeks and closes on a guest handle, whatever it names:
//! a host file, a console buffer (host stdout/stderr, the guest's stdin
//! source), the null device, or an anonymous pipe.
//!
//! Owns the dispatch by object kind and the Win32 error codes of each case,
//! and the deterministic times of written files (a write stamps the file
//! with the guest clock; a change to a directory's entries stamps the
//! directory). Used by kernel32 (ReadFile, WriteFile, ...), the C runtime's
//! descriptors and ntdll. It must not resolve paths (vfs) or parse flags of
//! the API it serves.

use crate::dll::Env;
use crate::files::{self, err};
use crate::handles::{ConsoleKind, Handle, Object};
use std::io::{Read, Seek, SeekFrom, Write};

/// FILE_TYPE_* values GetFileType reports.
pub mod file_type {
    pub const UNKNOWN: u32 = 0;
    pub const DISK: u32 = 1;
    pub const CHAR: u32 = 2;
    pub const PIPE: u32 = 3;
}

/// Reads up to `n` bytes. A console or pipe read returns what is there
/// (an empty result is end of input); a file read stops at its end.
pub fn read(env: &mut Env, h: Handle, n: u32) -> Result<Vec<u8>, u32> {
    let n = n as usize;
    match env.handles.get_mut(h) {
        None => Err(err::INVALID_HANDLE),
        Some(Object::Console(ConsoleKind::Input)) => {
            let mut buf = vec![0u8; n];
            let got = read_stdin(env, &mut buf);
            buf.truncate(got);
            Ok(buf)
        }
        Some(Object::Console(_)) => Err(err::ACCESS_DENIED),
        Some(Object::Null) => Ok(Vec::new()),
        Some(Object::File(f)) => {
            if !f.read {
                return Err(err::ACCESS_DENIED);
            }
            let Some(file) = f.file.as_mut() else {
                return Err(err::INVALID_PARAMETER);
            };
            let mut buf = vec![0u8; n];
            let mut got = 0;
            while got < n {
                match file.read(&mut buf[got..]) {
                    Ok(0) => break,
                    Ok(k) => got += k,
                    Err(e) => return Err(files::io_error(&e)),
                }
            }
            buf.truncate(got);
            Ok(buf)
        }
        Some(Object::PipeEnd { buf, write: false }) => {
            let id = *buf;
            match env.handles.by_id_mut(id) {
                Some(Object::PipeBuf(p)) => {
                    if p.data.is_empty() && p.writers == 0 {
                        return Err(err::BROKEN_PIPE);
                    }
                    let k = n.min(p.data.len());
                    Ok(p.data.drain(..k).collect())
                }
                _ => Err(err::BROKEN_PIPE),
            }
        }
        Some(_) => Err(err::INVALID_HANDLE),
    }
}

/// Reads host input into `buf` (0 at end of input).
fn read_stdin(env: &mut Env, buf: &mut [u8]) -> usize {
    loop {
        match env.stdin.read(buf) {
            Ok(k) => return k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return 0,
        }
    }
}

/// Whether a pipe read on `h` would wait (empty buffer, a writer still open).
pub fn would_block(env: &Env, h: Handle) -> bool {
    match env.handles.get(h) {
        Some(Object::PipeEnd { buf, write: false }) => matches!(
            env.handles.by_id(*buf),
            Some(Object::PipeBuf(p)) if p.data.is_empty() && p.writers > 0
        ),
        _ => false,
    }
}

/// Writes `bytes`; returns the count written.
pub fn write(env: &mut Env, h: Handle, bytes: &[u8]) -> Result<u32, u32> {
    let now = env.guest_filetime();
    match env.handles.get_mut(h) {
        None => Err(err::INVALID_HANDLE),
        // The host gets the text as written; the screen buffer the handle
        // names gets it too (kernel32::console_buffer).
        Some(Object::Console(ConsoleKind::Output | ConsoleKind::Buffer(_))) => {
            env.write_console(1, bytes);
            crate::dll::kernel32::console_buffer::on_write(env, h, bytes);
            Ok(bytes.len() as u32)
        }
        Some(Object::Console(ConsoleKind::Error)) => {
            env.write_console(2, bytes);
            crate::dll::kernel32::console_buffer::on_write(env, h, bytes);
            Ok(bytes.len() as u32)
        }
        Some(Object::Console(ConsoleKind::Input)) => Err(err::ACCESS_DENIED),
        Some(Object::Null) => Ok(bytes.len() as u32),
        Some(Object::File(f)) => {
            if !f.write {
                return Err(err::ACCESS_DENIED);
            }
            let append = f.append;
            let Some(file) = f.file.as_mut() else {
                return Err(err::INVALID_PARAMETER);
            };
            if append {
                file.seek(SeekFrom::End(0))
                    .map_err(|e| files::io_error(&e))?;
            }
            file.write_all(bytes).map_err(|e| files::io_error(&e))?;
            // The host stamps writes with its own clock: the guest's replaces it.
            file.set_modified(files::systime(now)).ok();
            f.dirty = true;
            Ok(bytes.len() as u32)
        }
        Some(Object::PipeEnd { buf, write: true }) => {
            let id = *buf;
            match env.handles.by_id_mut(id) {
                Some(Object::PipeBuf(p)) if p.readers > 0 => {
                    p.data.extend(bytes);
                    env.threads.epoch += 1;
                    Ok(bytes.len() as u32)
                }
                _ => Err(err::BROKEN_PIPE),
            }
        }
        Some(_) => Err(err::INVALID_HANDLE),
    }
}

/// Moves a file's position (`whence`: 0 begin, 1 current, 2 end); returns the new one.
pub fn seek(env: &mut Env, h: Handle, off: i64, whence: u32) -> Result<u64, u32> {
    match env.handles.get_mut(h) {
        None => Err(err::INVALID_HANDLE),
        Some(Object::File(f)) => {
            let Some(file) = f.file.as_mut() else {
                return Err(err::INVALID_PARAMETER);
            };
            let cur = file.stream_position().map_err(|e| files::io_error(&e))? as i64;
            let end = file.metadata().map_err(|e| files::io_error(&e))?.len() as i64;
            let to = match whence {
                0 => off,
                1 => cur.saturating_add(off),
                2 => end.saturating_add(off),
                _ => return Err(err::INVALID_PARAMETER),
            };
            if to < 0 {
                return Err(err::NEGATIVE_SEEK);
            }
            file.seek(SeekFrom::Start(to as u64))
                .map_err(|e| files::io_error(&e))
        }
        // Seeking a console or pipe is accepted and means nothing.
        Some(Object::Console(_)) | Some(Object::Null) | Some(Object::PipeEnd { .. }) => Ok(0),
        Some(_) => Err(err::INVALID_HANDLE),
    }
}

/// A file's size.
pub fn size(env: &mut Env, h: Handle) -> Result<u64, u32> {
    match env.handles.get(h) {
        Some(Object::File(f)) => match &f.file {
            Some(file) => file
                .metadata()
                .map(|m| m.len())
                .map_err(|e| files::io_error(&e)),
            None => Ok(0),
        },
        Some(Object::Console(_)) | Some(Object::Null) | Some(Object::PipeEnd { .. }) => Ok(0),
        _ => Err(err::INVALID_HANDLE),
    }
}

/// SetEndOfFile: truncates or extends the file at its position.
pub fn set_end(env: &mut Env, h: Handle) -> Result<(), u32> {
    let now = env.guest_filetime();
    match env.handles.get_mut(h) {
        Some(Object::File(f)) => {
            if !f.write {
                return Err(err::ACCESS_DENIED);
            }
            let Some(file) = f.file.as_mut() else {
                return Err(err::INVALID_PARAMETER);
            };
            let pos = file.stream_position().map_err(|e| files::io_error(&e))?;
            file.set_len(pos).map_err(|e| files::io_error(&e))?;
            file.set_modified(files::systime(now)).ok();
            f.dirty = true;
            Ok(())
        }
        _ => Err(err::INVALID_HANDLE),
    }
}

/// GetFileType.
pub fn kind(env: &Env, h: Handle) -> Result<u32, u32> {
    match env.handles.get(h) {
        Some(Object::File(_)) => Ok(file_type::DISK),
        Some(Object::Console(_)) | Some(Object::Null) => Ok(file_type::CHAR),
        Some(Object::PipeEnd { .. }) => Ok(file_type::PIPE),
        Some(_) => Ok(file_type::UNKNOWN),
        None => Err(err::INVALID_HANDLE),
    }
}

/// CloseHandle: the last handle to a file stamps it (if written) and
/// deletes it if asked; the last handle of a pipe end updates the buffer.
pub fn close(env: &mut Env, h: Handle) -> Result<(), u32> {
    let now = env.guest_filetime();
    let id = env.handles.id_of(h);
    let closed = env.handles.close(h).ok_or(err::INVALID_HANDLE)?;
    if let (Some(id), Some(_)) = (id, &closed) {
        crate::dll::kernel32::pipe::forget(env, id);
    }
    match closed {
        Some(Object::File(f)) => {
            let (host, del) = (f.host.clone(), f.delete_on_close);
            files::close(f, now);
            if del {
                touch_parent(&host, now);
            }
        }
        Some(Object::PipeEnd { buf, write }) => {
            if let Some(Object::PipeBuf(p)) = env.handles.by_id_mut(buf) {
                if write {
                    p.writers -= 1;
                } else {
                    p.readers -= 1;
                }
                if p.readers == 0 && p.writers == 0 {
                    env.handles.drop_object(buf);
                }
            }
            crate::dll::kernel32::pipe::after_io(env, buf);
            env.threads.epoch += 1;
        }
        _ => {}
    }
    Ok(())
}

/// Stamps the directory holding `host` with the guest time (its entries changed).
pub fn touch_parent(host: &std::path::Path, now: u64) {
    if let Some(dir) = host.parent() {
        if let Ok(d) = std::fs::File::open(dir) {
            d.set_modified(files::systime(now)).ok();
        }
    }
}
