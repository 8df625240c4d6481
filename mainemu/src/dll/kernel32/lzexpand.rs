//! kernel32's LZ expansion calls (the lzexpand API): files compressed by
//! Microsoft's COMPRESS.EXE, the "SZDD" format (header `SZDD 88 F0 27 33`,
//! method `A`, the name's replaced last character, the expanded size, then
//! LZSS: a flag byte whose bits, low first, say literal (1) or a 12-bit
//! window position and a 4-bit length - 3 (0), over a 4096-byte window of
//! spaces written from 4096 - 16). LZOpenFileA opens a file (trying the
//! name with its last character replaced by `_` when it is absent) and, when
//! reading a compressed one, answers an LZ handle (0x400 + n) whose data is
//! expanded at once; other files get their plain file handle. LZCopy writes
//! what an LZ handle expands to (or copies a plain file), LZClose closes
//! either, GetExpandedNameA names the file the expansion restores.
//!
//! Owns the SZDD decoder and the LZ handle table. It must not resolve paths
//! (the file calls do).

use super::file;
use crate::dll::Env;
use crate::files::{access, disp};
use crate::io;

/// The SZDD signature.
const MAGIC: [u8; 8] = *b"SZDD\x88\xf0\x27\x33";
const HEADER: usize = 14;
/// LZ handles start here (LZ_MIN_HANDLE); at most 16 are open.
const LZ_MIN_HANDLE: u32 = 0x400;
const LZ_MAX_HANDLES: u32 = 16;
/// LZERROR_* results.
const BADINHANDLE: i32 = -1;
const BADOUTHANDLE: i32 = -2;
const READ: i32 = -3;
const WRITE: i32 = -4;
const BADVALUE: i32 = -7;
/// OpenFile styles.
const OF_READWRITE: u32 = 2;
const OF_WRITE: u32 = 1;
const OF_CREATE: u32 = 0x1000;
/// HFILE_ERROR.
const HFILE_ERROR: i32 = -1;

/// Whether `head` starts with a whole SZDD header.
fn is_szdd(head: &[u8]) -> bool {
    head.len() >= HEADER && head[..8] == MAGIC
}

/// The expanded size an SZDD header records (None: no SZDD header).
pub fn expanded_size(head: &[u8]) -> Option<u32> {
    is_szdd(head).then(|| u32::from_le_bytes([head[10], head[11], head[12], head[13]]))
}

/// An open LZ handle: the file it reads and what it expands to.
pub struct LzFile {
    file: u32,
    data: Vec<u8>,
    pos: usize,
}

/// Expands an SZDD file; None when it is not one (or uses another method).
pub fn expand(src: &[u8]) -> Option<Vec<u8>> {
    let size = expanded_size(src).filter(|_| src[8] == b'A')? as usize;
    let mut window = [b' '; 4096];
    let mut wpos = 4096 - 16;
    let mut out = Vec::with_capacity(size);
    let mut i = HEADER;
    'blocks: while i < src.len() {
        let flags = src[i];
        i += 1;
        for bit in 0..8 {
            if i >= src.len() {
                break 'blocks;
            }
            if flags >> bit & 1 == 1 {
                let c = src[i];
                i += 1;
                out.push(c);
                window[wpos] = c;
                wpos = (wpos + 1) & 4095;
            } else {
                if i + 1 >= src.len() {
                    break 'blocks;
                }
                let (b0, b1) = (src[i] as usize, src[i + 1] as usize);
                i += 2;
                let mut pos = b0 | (b1 & 0xF0) << 4;
                for _ in 0..(b1 & 0x0F) + 3 {
                    let c = window[pos];
                    pos = (pos + 1) & 4095;
                    out.push(c);
                    window[wpos] = c;
                    wpos = (wpos + 1) & 4095;
                }
            }
        }
    }
    out.truncate(size);
    Some(out)
}

/// The name an SZDD file expands to: a trailing `_` becomes the stored
/// character (upper case when the name is), or is dropped when none is stored.
pub fn expanded_name(name: &str, last: u8) -> String {
    let Some(stem) = name.strip_suffix('_') else {
        return name.to_string();
    };
    if last == 0 {
        return stem.to_string();
    }
    let base = stem.rsplit(['\\', '/']).next().unwrap_or(stem);
    let upper = base.chars().any(|c| c.is_ascii_uppercase())
        && !base.chars().any(|c| c.is_ascii_lowercase());
    let c = if upper {
        last.to_ascii_uppercase()
    } else {
        last
    } as char;
    format!("{stem}{c}")
}

/// The name with its last character replaced by `_` (COMPRESS.EXE's name).
pub fn mangled(name: &str) -> Option<String> {
    let mut s = name.to_string();
    let last = s.pop()?;
    if matches!(last, '\\' | '/' | '.') {
        return None;
    }
    s.push('_');
    Some(s)
}

/// Opens for OpenFile's style; the handle or the error code.
fn open(env: &mut Env, name: &str, style: u32) -> Result<u32, u32> {
    let (desired, disposition) = if style & OF_CREATE != 0 {
        let rw = if style & 3 == OF_READWRITE {
            access::GENERIC_READ
        } else {
            0
        };
        (access::GENERIC_WRITE | rw, disp::CREATE_ALWAYS)
    } else {
        match style & 3 {
            OF_WRITE => (access::GENERIC_WRITE, disp::OPEN_EXISTING),
            OF_READWRITE => (
                access::GENERIC_READ | access::GENERIC_WRITE,
                disp::OPEN_EXISTING,
            ),
            _ => (access::GENERIC_READ, disp::OPEN_EXISTING),
        }
    };
    let h = file::open_path(env, name.to_string(), desired, disposition, 0);
    if h == u32::MAX {
        Err(env.last_error)
    } else {
        Ok(h)
    }
}

/// OFSTRUCT {cBytes, fFixedDisk, nErrCode, reserved x2, szPathName[128]}.
fn fill_ofstruct(env: &mut Env, ofs: u32, path: &str, code: u32) {
    if ofs == 0 {
        return;
    }
    let mut b = vec![0u8; 136];
    b[0] = 136;
    b[1] = 1;
    b[2..4].copy_from_slice(&(code as u16).to_le_bytes());
    let p = path.as_bytes();
    let n = p.len().min(127);
    b[8..8 + n].copy_from_slice(&p[..n]);
    env.mem.poke(ofs, &b);
}

/// Everything left in a file handle.
pub fn read_all(env: &mut Env, h: u32) -> Result<Vec<u8>, u32> {
    let mut v = Vec::new();
    loop {
        let chunk = io::read(env, h, 1 << 16)?;
        if chunk.is_empty() {
            return Ok(v);
        }
        v.extend(chunk);
    }
}

fn lz_open(env: &mut Env, name: u32, ofs: u32, style: u32) -> i32 {
    let Some(n) = env.read_a(name) else {
        return HFILE_ERROR;
    };
    let (path, h) = match open(env, &n, style) {
        Ok(h) => (n, h),
        Err(e) => match mangled(&n).map(|m| (open(env, &m, style), m)) {
            Some((Ok(h), m)) => (m, h),
            _ => {
                fill_ofstruct(env, ofs, &n, e);
                return HFILE_ERROR;
            }
        },
    };
    let full = env.drives.lexical_full(&path);
    fill_ofstruct(env, ofs, &full, 0);
    if style & !0x70 != 0 {
        return h as i32;
    }
    let Ok(head) = io::read(env, h, HEADER as u32) else {
        return h as i32;
    };
    if !is_szdd(&head) {
        let _ = io::seek(env, h, 0, 0);
        return h as i32;
    }
    let Some(slot) = (0..LZ_MAX_HANDLES).find(|i| !env.k32.lz.contains_key(&(LZ_MIN_HANDLE + i)))
    else {
        let _ = io::seek(env, h, 0, 0);
        return h as i32;
    };
    let mut all = head;
    match read_all(env, h) {
        Ok(rest) => all.extend(rest),
        Err(_) => return READ,
    }
    let Some(data) = expand(&all) else {
        return BADVALUE;
    };
    let lz = LZ_MIN_HANDLE + slot;
    env.k32.lz.insert(
        lz,
        LzFile {
            file: h,
            data,
            pos: 0,
        },
    );
    lz as i32
}

/// The underlying file handle of an LZ or plain handle.
fn file_of(env: &Env, h: u32) -> u32 {
    env.k32.lz.get(&h).map_or(h, |f| f.file)
}

fn lz_copy(env: &mut Env, src: u32, dst: u32) -> i32 {
    let data = match env.k32.lz.get_mut(&src) {
        Some(f) => {
            let d = f.data[f.pos..].to_vec();
            f.pos = f.data.len();
            d
        }
        None => match read_all(env, src) {
            Ok(d) => d,
            Err(_) => return BADINHANDLE,
        },
    };
    let out = file_of(env, dst);
    if env.handles.get(out).is_none() {
        return BADOUTHANDLE;
    }
    match io::write(env, out, &data) {
        Ok(n) if n as usize == data.len() => n as i32,
        _ => WRITE,
    }
}

fn lz_close(env: &mut Env, h: u32) {
    let f = match env.k32.lz.remove(&h) {
        Some(lz) => lz.file,
        None => h,
    };
    let _ = io::close(env, f);
}

fn get_expanded_name(env: &mut Env, name: u32, out: u32) -> i32 {
    let Some(n) = env.read_a(name) else {
        return BADINHANDLE;
    };
    let Ok(h) = open(env, &n, 0) else {
        return BADINHANDLE;
    };
    let head = io::read(env, h, HEADER as u32).unwrap_or_default();
    let _ = io::close(env, h);
    let result = if is_szdd(&head) {
        expanded_name(&n, head[9])
    } else {
        n
    };
    let mut b = result.into_bytes();
    b.push(0);
    env.mem.poke(out, &b);
    1
}

crate::dll! { "kernel32.dll";
    stdcall fn LZOpenFileA(env, name: u32, ofs: u32, style: u32) -> i32 { lz_open(env, name, ofs, style) }
    stdcall fn LZCopy(env, src: u32, dst: u32) -> i32 { lz_copy(env, src, dst) }
    stdcall fn LZClose(env, h: u32) { lz_close(env, h) }
    stdcall fn GetExpandedNameA(env, name: u32, out: u32) -> i32 { get_expanded_name(env, name, out) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn szdd_literals_and_matches() {
        // "abcabcabc!": 3 literals, a match of 6 from window 0xFF0, a literal.
        let mut f = MAGIC.to_vec();
        f.extend([b'A', b'x', 10, 0, 0, 0]);
        f.extend([0x17, b'a', b'b', b'c', 0xF0, 0xF3, b'!']);
        assert_eq!(expand(&f).unwrap(), b"abcabcabc!");
        assert_eq!(expand(b"not szdd"), None);
        assert_eq!(expanded_name("C:\\d\\big.tx_", b't'), "C:\\d\\big.txt");
        assert_eq!(expanded_name("BIG.TX_", b't'), "BIG.TXT");
        assert_eq!(expanded_name("big.tx_", 0), "big.tx");
        assert_eq!(expanded_name("big.txt", b'q'), "big.txt");
    }
}
