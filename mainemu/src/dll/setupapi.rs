//! SETUPAPI.dll: the file-decompression calls console tools use.
//! SetupGetFileCompressionInfoExA finds a source file (the name, then the
//! name with its last character replaced by `_`) and names its compression
//! from its first bytes: "SZDD" is FILE_COMPRESSION_WINLZA, a cabinet
//! ("MSCF") whose first folder is stored or MSZIP is FILE_COMPRESSION_MSZIP
//! (LZX and Quantum: FILE_COMPRESSION_NTCAB), anything else
//! FILE_COMPRESSION_NONE. SetupIterateCabinetA walks a cabinet's files with
//! the caller's handler (a guest stdcall function): SPFILENOTIFY_CABINETINFO,
//! then per file SPFILENOTIFY_FILEINCABINET (FILEOP_DOIT extracts to the
//! FullTargetName the handler wrote, FILEOP_SKIP skips, FILEOP_ABORT stops
//! with the handler's Win32Error) and SPFILENOTIFY_FILEEXTRACTED.
//!
//! Cabinets are MS-CAB: one cabinet (no spanning), folders stored or MSZIP
//! ("CK" then a deflate stream per 32K block, each block seeing the
//! previous ones' 32K history); LZX and Quantum folders fail with
//! ERROR_INVALID_DATA when a file in them is extracted.
//!
//! Owns the cabinet reader. It must not resolve paths (kernel32's file
//! calls do) or keep state between calls.

use super::kernel32::{file, lzexpand};
use super::{u16_at, u32_at, Env, Ret};
use crate::files::{access, disp, err};
use crate::io;

/// FILE_COMPRESSION_*.
const NONE: u32 = 0;
const WINLZA: u32 = 1;
const MSZIP: u32 = 2;
const NTCAB: u32 = 3;
/// SPFILENOTIFY_* and FILEOP_*.
const CABINETINFO: u32 = 0x10;
const FILEINCABINET: u32 = 0x11;
const FILEEXTRACTED: u32 = 0x13;
const FILEOP_ABORT: u32 = 0;
const FILEOP_DOIT: u32 = 1;
const ERROR_INVALID_DATA: u32 = 13;
const MAX_PATH: u32 = 260;

/// One file of a cabinet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CabFile {
    pub name: String,
    pub size: u32,
    pub offset: u32,
    pub folder: u16,
    pub date: u16,
    pub time: u16,
    pub attribs: u16,
}

/// A parsed cabinet: its folders {first CFDATA offset, block count,
/// compression}, files, the per-block reserve size, set id and number.
#[derive(Debug)]
pub struct Cabinet {
    pub folders: Vec<(u32, u16, u16)>,
    pub files: Vec<CabFile>,
    data_reserve: usize,
    pub set_id: u16,
    pub number: u16,
}

fn cstr_at(b: &[u8], o: usize) -> Option<(String, usize)> {
    let rest = b.get(o..)?;
    let n = rest.iter().position(|&c| c == 0)?;
    Some((String::from_utf8_lossy(&rest[..n]).into_owned(), o + n + 1))
}

/// Parses an MS-CAB header, folder and file tables.
pub fn parse(b: &[u8]) -> Option<Cabinet> {
    if b.get(..4)? != b"MSCF" {
        return None;
    }
    let coff_files = u32_at(b, 16)? as usize;
    let n_folders = u16_at(b, 26)? as usize;
    let n_files = u16_at(b, 28)? as usize;
    let flags = u16_at(b, 30)?;
    let set_id = u16_at(b, 32)?;
    let number = u16_at(b, 34)?;
    let mut at = 36;
    let (mut folder_reserve, mut data_reserve) = (0, 0);
    if flags & 4 != 0 {
        let header_reserve = u16_at(b, at)? as usize;
        folder_reserve = *b.get(at + 2)? as usize;
        data_reserve = *b.get(at + 3)? as usize;
        at += 4 + header_reserve;
    }
    // Previous and next cabinet names (spanning is not followed).
    for bit in [1, 2] {
        if flags & bit != 0 {
            at = cstr_at(b, at)?.1;
            at = cstr_at(b, at)?.1;
        }
    }
    let mut folders = Vec::new();
    for _ in 0..n_folders {
        folders.push((u32_at(b, at)?, u16_at(b, at + 4)?, u16_at(b, at + 6)?));
        at += 8 + folder_reserve;
    }
    let mut files = Vec::new();
    let mut at = coff_files;
    for _ in 0..n_files {
        let (name, next) = cstr_at(b, at + 16)?;
        files.push(CabFile {
            name,
            size: u32_at(b, at)?,
            offset: u32_at(b, at + 4)?,
            folder: u16_at(b, at + 8)?,
            date: u16_at(b, at + 10)?,
            time: u16_at(b, at + 12)?,
            attribs: u16_at(b, at + 14)?,
        });
        at = next;
    }
    Some(Cabinet {
        folders,
        files,
        data_reserve,
        set_id,
        number,
    })
}

/// One block of MSZIP: a raw deflate stream that may refer back into the
/// 32K of output before it.
fn inflate_block(out: &mut Vec<u8>, data: &[u8], size: usize) -> Option<()> {
    use miniz_oxide::inflate::core::{decompress, inflate_flags, DecompressorOxide};
    use miniz_oxide::inflate::TINFLStatus;
    let start = out.len().saturating_sub(32768);
    let mut buf = out[start..].to_vec();
    let hist = buf.len();
    buf.resize(hist + size, 0);
    let mut r = DecompressorOxide::new();
    let (st, _, n) = decompress(
        &mut r,
        data,
        &mut buf,
        hist,
        inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF,
    );
    if st != TINFLStatus::Done || n != size {
        return None;
    }
    out.extend_from_slice(&buf[hist..]);
    Some(())
}

impl Cabinet {
    /// A folder's bytes, all blocks expanded; None for a damaged block or
    /// an unsupported method (LZX, Quantum).
    pub fn folder_data(&self, b: &[u8], folder: usize) -> Option<Vec<u8>> {
        let &(start, blocks, kind) = self.folders.get(folder)?;
        let mut at = start as usize;
        let mut out = Vec::new();
        for _ in 0..blocks {
            let n = u16_at(b, at + 4)? as usize;
            let unc = u16_at(b, at + 6)? as usize;
            let d0 = at + 8 + self.data_reserve;
            let data = b.get(d0..d0 + n)?;
            match kind & 0xF {
                0 => out.extend_from_slice(data),
                1 if data.starts_with(b"CK") => inflate_block(&mut out, &data[2..], unc)?,
                _ => return None,
            }
            at = d0 + n;
        }
        Some(out)
    }

    /// What SetupGetFileCompressionInfoEx calls the cabinet.
    fn compression(&self) -> u32 {
        match self.folders.first().map(|f| f.2 & 0xF) {
            Some(0 | 1) | None => MSZIP,
            _ => NTCAB,
        }
    }
}

/// The whole file at a guest path; Err(code) when it cannot be read.
fn read_path(env: &mut Env, path: &str) -> Result<Vec<u8>, u32> {
    let h = file::open_path(
        env,
        path.to_string(),
        access::GENERIC_READ,
        disp::OPEN_EXISTING,
        0,
    );
    if h == u32::MAX {
        return Err(env.last_error);
    }
    let r = lzexpand::read_all(env, h);
    let _ = io::close(env, h);
    r
}

fn write_path(env: &mut Env, path: &str, bytes: &[u8]) -> Result<(), u32> {
    let h = file::open_path(
        env,
        path.to_string(),
        access::GENERIC_WRITE,
        disp::CREATE_ALWAYS,
        0,
    );
    if h == u32::MAX {
        return Err(env.last_error);
    }
    let r = io::write(env, h, bytes).map(|_| ());
    let _ = io::close(env, h);
    r
}

/// The source as found (itself or its `_` name) and its bytes.
fn find_source(env: &mut Env, name: &str) -> Result<(String, Vec<u8>), u32> {
    match read_path(env, name) {
        Ok(b) => Ok((name.to_string(), b)),
        Err(e) => match lzexpand::mangled(name) {
            Some(m) => read_path(env, &m).map(|b| (m, b)).map_err(|_| e),
            None => Err(e),
        },
    }
}

#[allow(clippy::too_many_arguments)]
fn compression_info(
    env: &mut Env,
    src: u32,
    actual: u32,
    cap: u32,
    required: u32,
    src_size: u32,
    target_size: u32,
    kind: u32,
) -> bool {
    let Some(name) = env.read_a(src) else {
        return env.fail(err::INVALID_PARAMETER, false);
    };
    let (found, bytes) = match find_source(env, &name) {
        Ok(x) => x,
        Err(e) => return env.fail(e, false),
    };
    let (k, target) = if let Some(size) = lzexpand::expanded_size(&bytes) {
        (WINLZA, size)
    } else if let Some(cab) = parse(&bytes) {
        (cab.compression(), cab.files.first().map_or(0, |f| f.size))
    } else {
        (NONE, bytes.len() as u32)
    };
    let need = found.len() as u32 + 1;
    if required != 0 {
        env.mem.poke_u32(required, need);
    }
    if actual != 0 {
        if cap < need {
            return env.fail(err::INSUFFICIENT_BUFFER, false);
        }
        let mut b = found.into_bytes();
        b.push(0);
        env.mem.poke(actual, &b);
    }
    for (p, v) in [
        (src_size, bytes.len() as u32),
        (target_size, target),
        (kind, k),
    ] {
        if p != 0 {
            env.mem.poke_u32(p, v);
        }
    }
    env.last_error = 0;
    true
}

/// What SetupIterateCabinet works through.
struct Walk {
    handler: u32,
    context: u32,
    cab_path: u32,
    bytes: std::rc::Rc<Vec<u8>>,
    cab: std::rc::Rc<Cabinet>,
}

fn iterate_cabinet(env: &mut Env, path: u32, handler: u32, context: u32) -> Ret {
    let Some(name) = env.read_a(path) else {
        return Ret::Value(env.fail(err::INVALID_PARAMETER, 0));
    };
    let bytes = match read_path(env, &name) {
        Ok(b) => b,
        Err(e) => return Ret::Value(env.fail(e, 0)),
    };
    let Some(cab) = parse(&bytes) else {
        return Ret::Value(env.fail(ERROR_INVALID_DATA, 0));
    };
    // CABINET_INFO_A {CabinetPath, CabinetFile, DiskName, SetId, CabinetNumber}.
    let full = env.drives.lexical_full(&name);
    let (dir, file_name) = match full.rfind('\\') {
        Some(i) => (full[..=i].to_string(), full[i + 1..].to_string()),
        None => (String::new(), full.clone()),
    };
    let cab_path = env.alloc_cstr(full.as_bytes());
    let info = env.alloc(16);
    let (d, f, disk) = (
        env.alloc_cstr(dir.as_bytes()),
        env.alloc_cstr(file_name.as_bytes()),
        env.alloc_cstr(b""),
    );
    for (i, v) in [d, f, disk].into_iter().enumerate() {
        env.mem.poke_u32(info + 4 * i as u32, v);
    }
    env.mem.poke(info + 12, &cab.set_id.to_le_bytes());
    env.mem.poke(info + 14, &cab.number.to_le_bytes());
    let w = std::rc::Rc::new(Walk {
        handler,
        context,
        cab_path,
        bytes: std::rc::Rc::new(bytes),
        cab: std::rc::Rc::new(cab),
    });
    Ret::call(
        handler,
        vec![context, CABINETINFO, info, 0],
        move |env, r| {
            if r != 0 {
                return Ret::Value(env.fail(r, 0));
            }
            next_file(env, w, 0)
        },
    )
}

/// SPFILENOTIFY_FILEINCABINET for file `i`, then its extraction.
fn next_file(env: &mut Env, w: std::rc::Rc<Walk>, i: usize) -> Ret {
    let Some(f) = w.cab.files.get(i).cloned() else {
        env.last_error = 0;
        return Ret::Value(1);
    };
    // FILE_IN_CABINET_INFO_A {NameInCabinet, FileSize, Win32Error, DosDate,
    // DosTime, DosAttribs, FullTargetName[MAX_PATH]}.
    let fici = env.alloc(20 + MAX_PATH);
    let name = env.alloc_cstr(f.name.as_bytes());
    env.mem.poke_u32(fici, name);
    env.mem.poke_u32(fici + 4, f.size);
    env.mem.poke_u32(fici + 8, 0);
    env.mem.poke(fici + 12, &f.date.to_le_bytes());
    env.mem.poke(fici + 14, &f.time.to_le_bytes());
    env.mem.poke(fici + 16, &f.attribs.to_le_bytes());
    let args = vec![w.context, FILEINCABINET, fici, w.cab_path];
    Ret::call(w.handler, args, move |env, op| match op {
        FILEOP_DOIT => extract(env, w, i, fici),
        FILEOP_ABORT => {
            let e = env.mem.peek_u32(fici + 8).unwrap_or(0);
            Ret::Value(env.fail(e, 0))
        }
        _ => next_file(env, w, i + 1),
    })
}

fn extract(env: &mut Env, w: std::rc::Rc<Walk>, i: usize, fici: u32) -> Ret {
    let f = &w.cab.files[i];
    let target = env
        .mem
        .peek_cstr(fici + 20, MAX_PATH as usize)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let data = w
        .cab
        .folder_data(&w.bytes, f.folder as usize)
        .and_then(|d| {
            d.get(f.offset as usize..(f.offset + f.size) as usize)
                .map(<[u8]>::to_vec)
        });
    let Some(data) = data else {
        return Ret::Value(env.fail(ERROR_INVALID_DATA, 0));
    };
    let status = match write_path(env, &target, &data) {
        Ok(()) => 0,
        Err(e) => e,
    };
    // FILEPATHS_A {Target, Source, Win32Error, Flags}.
    let fp = env.alloc(16);
    let t = env.alloc_cstr(target.as_bytes());
    let s = env.alloc_cstr(f.name.as_bytes());
    for (k, v) in [t, s, status, 0].into_iter().enumerate() {
        env.mem.poke_u32(fp + 4 * k as u32, v);
    }
    Ret::call(
        w.handler,
        vec![w.context, FILEEXTRACTED, fp, 0],
        move |env, r| {
            if r != 0 {
                return Ret::Value(env.fail(r, 0));
            }
            next_file(env, w, i + 1)
        },
    )
}

crate::dll! { "setupapi.dll";
    stdcall fn SetupGetFileCompressionInfoExA(env, src: u32, actual: u32, cap: u32, required: u32, src_size: u32, target_size: u32, kind: u32) -> bool {
        compression_info(env, src, actual, cap, required, src_size, target_size, kind)
    }
    stdcall fn SetupIterateCabinetA(env, path: u32, reserved: u32, handler: u32, context: u32) -> Ret {
        iterate_cabinet(env, path, handler, context)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stored cabinet with one file, laid out by hand.
    fn stored(name: &str, body: &[u8]) -> Vec<u8> {
        let files_at = 36 + 8;
        let data_at = files_at + 16 + name.len() + 1;
        let total = data_at + 8 + body.len();
        let mut b = Vec::new();
        b.extend(b"MSCF");
        b.extend(0u32.to_le_bytes());
        b.extend((total as u32).to_le_bytes());
        b.extend(0u32.to_le_bytes());
        b.extend((files_at as u32).to_le_bytes());
        b.extend(0u32.to_le_bytes());
        b.extend([3, 1]);
        b.extend(1u16.to_le_bytes()); // folders
        b.extend(1u16.to_le_bytes()); // files
        b.extend(0u16.to_le_bytes()); // flags
        b.extend(7u16.to_le_bytes()); // set id
        b.extend(0u16.to_le_bytes());
        b.extend((data_at as u32).to_le_bytes());
        b.extend(1u16.to_le_bytes());
        b.extend(0u16.to_le_bytes()); // stored
        b.extend((body.len() as u32).to_le_bytes());
        b.extend(0u32.to_le_bytes());
        b.extend(0u16.to_le_bytes());
        b.extend([0x21, 0x52, 0, 0x60, 0x20, 0]);
        b.extend(name.as_bytes());
        b.push(0);
        b.extend(0u32.to_le_bytes());
        b.extend((body.len() as u16).to_le_bytes());
        b.extend((body.len() as u16).to_le_bytes());
        b.extend(body);
        b
    }

    #[test]
    fn stored_cabinet() {
        let b = stored("a.txt", b"hello\n");
        let c = parse(&b).unwrap();
        assert_eq!(c.set_id, 7);
        assert_eq!(c.files.len(), 1);
        assert_eq!(c.files[0].name, "a.txt");
        assert_eq!(c.compression(), MSZIP);
        assert_eq!(c.folder_data(&b, 0).unwrap(), b"hello\n");
        assert!(parse(b"MSCX").is_none());
    }

    #[test]
    fn mszip_blocks_share_history() {
        // Two blocks: the second is one back-reference into the first.
        let first = b"abcdefghijklmnop".repeat(4);
        let mut out = Vec::new();
        // Block 1: a stored deflate block (BFINAL, BTYPE 00).
        let mut d1 = vec![1, first.len() as u8, 0, !(first.len() as u8), 0xFF];
        d1.extend(&first);
        inflate_block(&mut out, &d1, first.len()).unwrap();
        // Block 2: fixed Huffman, length 16 at distance 64, end of block.
        let d2 = miniz_oxide_fixed_match();
        inflate_block(&mut out, &d2, 16).unwrap();
        assert_eq!(&out[64..], b"abcdefghijklmnop");
    }

    /// A fixed-Huffman deflate block holding one match (length 16,
    /// distance 64) and the end of block, bits packed low first.
    fn miniz_oxide_fixed_match() -> Vec<u8> {
        let mut bits: Vec<u8> = Vec::new();
        let mut put = |v: u32, n: u32, rev: bool| {
            for k in 0..n {
                let bit = if rev {
                    v >> (n - 1 - k) & 1
                } else {
                    v >> k & 1
                };
                bits.push(bit as u8);
            }
        };
        put(1, 1, false); // BFINAL
        put(1, 2, false); // BTYPE = 01 (fixed)
                          // Length 16: code 267 (lengths 15-16, 1 extra bit = 1); 7-bit code 267-256 = 11.
        put(11, 7, true);
        put(1, 1, false);
        // Distance 64: code 11 (49-64, 4 extra bits = 15), 5-bit code.
        put(11, 5, true);
        put(15, 4, false);
        put(0, 7, true); // end of block (256)
        bits.chunks(8)
            .map(|c| c.iter().enumerate().fold(0u8, |a, (i, &b)| a | b << i))
            .collect()
    }
}
