//! ntdll's native file calls over kernel32's file objects:
//! NtCreateFile/NtOpenFile (NT paths `\??\X:\...` onto CreateFile's path),
//! NtQueryInformationFile (basic, standard, position, name, attribute-tag
//! classes), NtQueryVolumeInformationFile (FileFsVolumeInformation,
//! FileFsAttributeInformation), NtDeviceIoControlFile (no device answers).
//!
//! Owns the NT conventions of these calls: NTSTATUS results, the
//! IO_STATUS_BLOCK, NT create dispositions and options. It must not open host
//! files itself: paths go through `kernel32::file` (and so `vfs`), whose
//! confinement to the guest's drives applies unchanged.

use crate::dll::{wbytes, Env};
use crate::handles::Object;

const STATUS_SUCCESS: u32 = 0;
const STATUS_INVALID_HANDLE: u32 = 0xC000_0008;
const STATUS_INVALID_PARAMETER: u32 = 0xC000_000D;
const STATUS_INFO_LENGTH_MISMATCH: u32 = 0xC000_0004;
const STATUS_INVALID_INFO_CLASS: u32 = 0xC000_0003;
const STATUS_BUFFER_OVERFLOW: u32 = 0x8000_0005;
const STATUS_ACCESS_VIOLATION: u32 = 0xC000_0005;
const STATUS_OBJECT_NAME_NOT_FOUND: u32 = 0xC000_0034;
const STATUS_OBJECT_PATH_NOT_FOUND: u32 = 0xC000_003A;
const STATUS_OBJECT_NAME_INVALID: u32 = 0xC000_0033;
const STATUS_OBJECT_NAME_COLLISION: u32 = 0xC000_0035;
const STATUS_ACCESS_DENIED: u32 = 0xC000_0022;
const STATUS_SHARING_VIOLATION: u32 = 0xC000_0043;
const STATUS_NOT_A_DIRECTORY: u32 = 0xC000_0103;
const STATUS_FILE_IS_A_DIRECTORY: u32 = 0xC000_00BA;

/// FILE_DIRECTORY_FILE / FILE_NON_DIRECTORY_FILE / FILE_DELETE_ON_CLOSE options.
const FILE_DIRECTORY_FILE: u32 = 1;
const FILE_NON_DIRECTORY_FILE: u32 = 0x40;
const FILE_DELETE_ON_CLOSE: u32 = 0x1000;

/// The NTSTATUS of a Win32 error from the file layer.
fn status_of(win32: u32) -> u32 {
    match win32 {
        2 => STATUS_OBJECT_NAME_NOT_FOUND,
        3 => STATUS_OBJECT_PATH_NOT_FOUND,
        5 => STATUS_ACCESS_DENIED,
        32 => STATUS_SHARING_VIOLATION,
        80 | 183 => STATUS_OBJECT_NAME_COLLISION,
        123 | 161 => STATUS_OBJECT_NAME_INVALID,
        267 => STATUS_NOT_A_DIRECTORY,
        _ => STATUS_INVALID_PARAMETER,
    }
}

/// The Win32 path of an NT path: `\??\X:\...` and `\DosDevices\X:\...`
/// become `X:\...`; anything else (devices, `\Device\...`) is not a file here.
fn win32_path(nt: &str) -> Option<String> {
    for p in ["\\??\\", "\\DosDevices\\", "\\GLOBAL??\\"] {
        if let Some(rest) = nt.strip_prefix(p) {
            let b = rest.as_bytes();
            if b.len() >= 2 && b[1] == b':' && b[0].is_ascii_alphabetic() {
                return Some(rest.to_string());
            }
        }
    }
    None
}

fn set_iosb(env: &mut Env, io: u32, status: u32, info: u32) {
    if io != 0 {
        env.mem.poke_u32(io, status);
        env.mem.poke_u32(io + 4, info);
    }
}

/// NtCreateFile/NtOpenFile. The OBJECT_ATTRIBUTES' name must be a full NT
/// path (a RootDirectory-relative name is STATUS_INVALID_PARAMETER here).
#[allow(clippy::too_many_arguments)]
fn create(
    env: &mut Env,
    out: u32,
    access: u32,
    attrs: u32,
    io: u32,
    disposition: u32,
    options: u32,
) -> u32 {
    let (Some(root), Some(us)) = (env.mem.peek_u32(attrs + 4), env.mem.peek_u32(attrs + 8)) else {
        return STATUS_ACCESS_VIOLATION;
    };
    if attrs == 0 || us == 0 || root != 0 {
        return STATUS_INVALID_PARAMETER;
    }
    let (Some(len), Some(buf)) = (env.mem.peek_u32(us), env.mem.peek_u32(us + 4)) else {
        return STATUS_ACCESS_VIOLATION;
    };
    let n = (len & 0xFFFF) as usize / 2;
    let Some(units) = env.read_bytes(buf, 2 * n as u32) else {
        return STATUS_ACCESS_VIOLATION;
    };
    let w: Vec<u16> = units
        .chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    let nt = String::from_utf16_lossy(&w);
    let Some(path) = win32_path(&nt) else {
        return STATUS_OBJECT_PATH_NOT_FOUND;
    };
    // NT dispositions onto CreateFile's: supersede/overwrite-if → CREATE_ALWAYS,
    // open → OPEN_EXISTING, create → CREATE_NEW, open-if → OPEN_ALWAYS,
    // overwrite → TRUNCATE_EXISTING.
    let win_disp = match disposition {
        0 | 5 => 2,
        1 => 3,
        2 => 1,
        3 => 4,
        4 => 5,
        _ => return STATUS_INVALID_PARAMETER,
    };
    let mut flags = 0;
    if options & FILE_DIRECTORY_FILE != 0 {
        flags |= crate::files::FLAG_BACKUP_SEMANTICS;
    }
    if options & FILE_DELETE_ON_CLOSE != 0 {
        flags |= crate::files::FLAG_DELETE_ON_CLOSE;
    }
    let saved = env.last_error;
    let h = crate::dll::kernel32::file::open_path(env, path, access, win_disp, flags);
    let code = env.last_error;
    env.last_error = saved;
    if h == crate::handles::INVALID {
        let st = status_of(code);
        set_iosb(env, io, st, 0);
        return st;
    }
    let is_dir = matches!(env.handles.get(h), Some(Object::File(f)) if f.file.is_none());
    let wrong = if options & FILE_NON_DIRECTORY_FILE != 0 && is_dir {
        Some(STATUS_FILE_IS_A_DIRECTORY)
    } else if options & FILE_DIRECTORY_FILE != 0 && !is_dir {
        Some(STATUS_NOT_A_DIRECTORY)
    } else {
        None
    };
    if let Some(st) = wrong {
        crate::io::close(env, h).ok();
        set_iosb(env, io, st, 0);
        return st;
    }
    // IO_STATUS_BLOCK.Information: FILE_OPENED 1, FILE_CREATED 2.
    let info = if code == 183 || win_disp == 3 || win_disp == 5 {
        1
    } else {
        2
    };
    set_iosb(env, io, STATUS_SUCCESS, info);
    env.mem.poke_u32(out, h);
    STATUS_SUCCESS
}

/// What NtQueryInformationFile reads of an open file.
struct Info {
    guest: String,
    attrs: u32,
    size: u64,
    mtime: u64,
    dir: bool,
}

fn info_of(env: &Env, h: u32) -> Option<Info> {
    let Some(Object::File(f)) = env.handles.get(h) else {
        return None;
    };
    let e = crate::dll::kernel32::file::entry_of_host(&f.host).ok()?;
    Some(Info {
        guest: f.guest.clone(),
        attrs: e.attrs,
        size: e.size,
        mtime: e.mtime,
        dir: e.attrs & 0x10 != 0,
    })
}

fn query_info(env: &mut Env, h: u32, io: u32, buf: u32, len: u32, class: u32) -> u32 {
    let Some(i) = info_of(env, h) else {
        return STATUS_INVALID_HANDLE;
    };
    let mut b: Vec<u8> = Vec::new();
    let mut fixed = 0usize; // the part that must fit (the rest may be cut: overflow)
    match class {
        // FileBasicInformation: four times and the attributes (40 bytes).
        4 => {
            for _ in 0..4 {
                b.extend(i.mtime.to_le_bytes());
            }
            b.extend(i.attrs.to_le_bytes());
            b.extend(0u32.to_le_bytes());
        }
        // FileStandardInformation: allocation, end of file, links, delete pending, directory.
        5 => {
            let alloc = i.size.div_ceil(4096) * 4096;
            b.extend(alloc.to_le_bytes());
            b.extend(i.size.to_le_bytes());
            b.extend(1u32.to_le_bytes());
            b.push(0);
            b.push(i.dir as u8);
            b.extend([0, 0]);
        }
        // FileNameInformation: the path without the drive, in bytes.
        9 => {
            let name = i.guest.get(2..).unwrap_or("").to_string();
            let w: Vec<u16> = name.encode_utf16().collect();
            b.extend((2 * w.len() as u32).to_le_bytes());
            b.extend(wbytes(&w));
            fixed = 4;
        }
        // FilePositionInformation.
        14 => {
            let pos = crate::io::seek(env, h, 0, 1).unwrap_or(0);
            b.extend(pos.to_le_bytes());
        }
        // FileAttributeTagInformation.
        35 => {
            b.extend(i.attrs.to_le_bytes());
            b.extend(0u32.to_le_bytes());
        }
        _ => return STATUS_INVALID_INFO_CLASS,
    }
    let need_fixed = if fixed == 0 { b.len() } else { fixed };
    if (len as usize) < need_fixed {
        return STATUS_INFO_LENGTH_MISMATCH;
    }
    let n = b.len().min(len as usize);
    if env.mem.poke(buf, &b[..n]).is_none() {
        return STATUS_ACCESS_VIOLATION;
    }
    let st = if n < b.len() {
        STATUS_BUFFER_OVERFLOW
    } else {
        STATUS_SUCCESS
    };
    set_iosb(env, io, st, n as u32);
    st
}

/// FileFsVolumeInformation (1) and FileFsAttributeInformation (5), the
/// answers GetVolumeInformation gives (label MAINEMU, serial, NTFS, 255).
fn query_volume(env: &mut Env, h: u32, io: u32, buf: u32, len: u32, class: u32) -> u32 {
    if !matches!(env.handles.get(h), Some(Object::File(_))) {
        return STATUS_INVALID_HANDLE;
    }
    let mut b: Vec<u8> = Vec::new();
    let (name, head) = match class {
        1 => {
            b.extend(0u64.to_le_bytes()); // VolumeCreationTime
            b.extend(0x4D45_4D55u32.to_le_bytes());
            ("MAINEMU", 18)
        }
        5 => {
            b.extend(0xFFu32.to_le_bytes());
            b.extend(255u32.to_le_bytes());
            ("NTFS", 12)
        }
        _ => return STATUS_INVALID_INFO_CLASS,
    };
    let w: Vec<u16> = name.encode_utf16().collect();
    b.extend((2 * w.len() as u32).to_le_bytes());
    if class == 1 {
        b.extend([0u8, 0]); // SupportsObjects, padding
    }
    b.extend(wbytes(&w));
    if (len as usize) < head {
        return STATUS_INFO_LENGTH_MISMATCH;
    }
    let n = b.len().min(len as usize);
    if env.mem.poke(buf, &b[..n]).is_none() {
        return STATUS_ACCESS_VIOLATION;
    }
    let st = if n < b.len() {
        STATUS_BUFFER_OVERFLOW
    } else {
        STATUS_SUCCESS
    };
    set_iosb(env, io, st, n as u32);
    st
}

/// The handle tag of `\\.\MountPointManager` (CreateFile opens it).
pub const MOUNT_MANAGER: &str = "mount manager";
const IOCTL_MOUNTMGR_QUERY_POINTS: u32 = 0x006D_0008;

/// IOCTL_MOUNTMGR_QUERY_POINTS: one mount point per mapped drive
/// (`\DosDevices\X:`, a 4-byte unique id, `\Device\HarddiskVolumeN`).
/// The input (a MOUNTMGR_MOUNT_POINT, 24 bytes) is taken as "all"; an
/// output of only the 32-byte header gets STATUS_BUFFER_OVERFLOW with the
/// size needed and the count, as Windows answers.
fn query_points(env: &mut Env, io: u32, inb: u32, inl: u32, outb: u32, outl: u32) -> u32 {
    if inb == 0 || inl < 24 || outb == 0 || outl < 32 {
        return STATUS_INVALID_PARAMETER;
    }
    let letters = env.drives.letters();
    let n = letters.len() as u32;
    let mut head: Vec<u8> = Vec::new();
    let mut tail: Vec<u8> = Vec::new();
    let base = 8 + 24 * n;
    for (i, l) in letters.iter().enumerate() {
        let link: Vec<u16> = format!("\\DosDevices\\{l}:").encode_utf16().collect();
        let dev: Vec<u16> = format!("\\Device\\HarddiskVolume{}", i + 1)
            .encode_utf16()
            .collect();
        let id = 0x4D45_4D00u32 | *l as u32;
        let off_link = base + tail.len() as u32;
        tail.extend(wbytes(&link));
        let off_id = base + tail.len() as u32;
        tail.extend(id.to_le_bytes());
        let off_dev = base + tail.len() as u32;
        tail.extend(wbytes(&dev));
        for (off, len) in [
            (off_link, 2 * link.len() as u32),
            (off_id, 4),
            (off_dev, 2 * dev.len() as u32),
        ] {
            head.extend(off.to_le_bytes());
            head.extend((len as u16).to_le_bytes());
            head.extend([0u8, 0]);
        }
    }
    let size = base + tail.len() as u32;
    let mut b = Vec::with_capacity(size as usize);
    b.extend(size.to_le_bytes());
    b.extend(n.to_le_bytes());
    b.extend(head);
    b.extend(tail);
    if outl < size {
        env.mem.poke(outb, &b[..8]);
        set_iosb(env, io, STATUS_BUFFER_OVERFLOW, 8);
        return STATUS_BUFFER_OVERFLOW;
    }
    if env.mem.poke(outb, &b).is_none() {
        return STATUS_ACCESS_VIOLATION;
    }
    set_iosb(env, io, STATUS_SUCCESS, size);
    STATUS_SUCCESS
}

crate::dll! { "(ntdll files)";
    stdcall fn NtCreateFile(env, out: u32, access: u32, attrs: u32, io: u32, size: u32, fattrs: u32, share: u32, disposition: u32, options: u32, ea: u32, ea_len: u32) -> u32 {
        create(env, out, access, attrs, io, disposition, options)
    }
    stdcall fn NtOpenFile(env, out: u32, access: u32, attrs: u32, io: u32, share: u32, options: u32) -> u32 {
        create(env, out, access, attrs, io, 1, options)
    }
    stdcall fn NtQueryInformationFile(env, h: u32, io: u32, buf: u32, len: u32, class: u32) -> u32 { query_info(env, h, io, buf, len, class) }
    stdcall fn NtQueryVolumeInformationFile(env, h: u32, io: u32, buf: u32, len: u32, class: u32) -> u32 { query_volume(env, h, io, buf, len, class) }
    stdcall fn NtDeviceIoControlFile(env, h: u32, ev: u32, apc: u32, ctx: u32, io: u32, code: u32, inb: u32, inl: u32, outb: u32, outl: u32) -> u32 {
        match env.handles.get(h) {
            None => STATUS_INVALID_HANDLE,
            Some(Object::Other(MOUNT_MANAGER)) if code == IOCTL_MOUNTMGR_QUERY_POINTS => query_points(env, io, inb, inl, outb, outl),
            // No other device driver is modelled: every other control code is refused.
            Some(_) => STATUS_INVALID_PARAMETER,
        }
    }
    stdcall fn NtClose(env, h: u32) -> u32 {
        match crate::io::close(env, h) { Ok(()) => STATUS_SUCCESS, Err(_) => STATUS_INVALID_HANDLE }
    }
}
