//! File handles: the system file table (SFT, host side) and each process's
//! job file table (JFT, in its PSP, where programs can see and move it).
//!
//! Owns open-file state (position, access mode, sharing of one SFT entry by
//! duplicated and inherited handles) and the byte-level read/write/seek on
//! files. It must not write guest memory other than JFT bytes, and must not
//! do console I/O (the caller routes CON to `dos::console`).

use super::files::GuestFs;
use super::path::{Device, DosError, ERR_ACCESS_DENIED, ERR_INVALID_HANDLE, ERR_TOO_MANY_FILES};
use super::psp::{self, off, JFT_LEN};
use crate::machine::memory::Memory;

/// SFT entries available (FILES=).
pub const MAX_SFT: usize = 64;

/// What an SFT entry refers to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    File { node: usize, key: String },
    Device(Device),
}

/// One system file table entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sft {
    pub target: Target,
    pub pos: u32,
    /// Access mode byte as opened (bits 0-2: 0 read, 1 write, 2 both; bit 7
    /// no-inherit).
    pub mode: u8,
    pub refs: u16,
    /// IOCTL device-information word.
    pub info: u16,
}

impl Sft {
    pub fn can_read(&self) -> bool {
        self.mode & 7 != 1
    }
    pub fn can_write(&self) -> bool {
        self.mode & 7 != 0
    }
}

/// The system file table.
#[derive(Clone, Debug)]
pub struct Handles {
    pub sft: Vec<Option<Sft>>,
}

impl Default for Handles {
    fn default() -> Self {
        Self::new()
    }
}

/// IOCTL info word of a device.
pub fn device_info(d: Device) -> u16 {
    match d {
        Device::Con => 0x80D3,
        Device::Nul => 0x8084,
        Device::Clock => 0x8088,
        Device::Aux | Device::Prn => 0x80C0,
        Device::Emm => 0xC080,
    }
}

/// The JFT every top-level process starts with: stdin/out/err on CON (SFT
/// 1), stdaux on AUX (0), stdprn on PRN (2).
pub const DEFAULT_JFT: [u8; JFT_LEN as usize] = [
    1, 1, 1, 0, 2, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
    0xFF, 0xFF,
];

impl Handles {
    pub fn new() -> Handles {
        let dev = |d: Device| {
            Some(Sft {
                target: Target::Device(d),
                pos: 0,
                mode: 2,
                refs: 1,
                info: device_info(d),
            })
        };
        let mut sft = vec![dev(Device::Aux), dev(Device::Con), dev(Device::Prn)];
        sft.resize(MAX_SFT, None);
        Handles { sft }
    }

    pub fn get(&self, i: u8) -> Option<&Sft> {
        self.sft.get(i as usize).and_then(Option::as_ref)
    }
    pub fn get_mut(&mut self, i: u8) -> Option<&mut Sft> {
        self.sft.get_mut(i as usize).and_then(Option::as_mut)
    }

    /// Creates an SFT entry.
    pub fn open(&mut self, target: Target, mode: u8) -> Result<u8, DosError> {
        let slot = self
            .sft
            .iter()
            .position(Option::is_none)
            .ok_or(ERR_TOO_MANY_FILES)?;
        let info = match &target {
            Target::Device(d) => device_info(*d),
            Target::File { .. } => 0x0002, // drive C:, written-to bit clear
        };
        self.sft[slot] = Some(Sft {
            target,
            pos: 0,
            mode,
            refs: 1,
            info,
        });
        Ok(slot as u8)
    }

    /// Drops one reference to an SFT entry.
    pub fn release(&mut self, i: u8) {
        if let Some(e) = self.get_mut(i) {
            e.refs = e.refs.saturating_sub(1);
            if e.refs == 0 && i > 2 {
                self.sft[i as usize] = None;
            }
        }
    }

    pub fn add_ref(&mut self, i: u8) {
        if let Some(e) = self.get_mut(i) {
            e.refs += 1;
        }
    }
}

/// The (size, far address) of a process's JFT.
fn jft(mem: &Memory, psp_seg: u16) -> (u16, u32) {
    let size = psp::rd16(mem, psp_seg, off::JFT_SIZE);
    let o = psp::rd16(mem, psp_seg, off::JFT_PTR);
    let s = psp::rd16(mem, psp_seg, off::JFT_PTR + 2);
    (size.min(255), ((s as u32) << 4) + o as u32)
}

/// The SFT index behind a handle of process `psp_seg`.
pub fn lookup(mem: &Memory, psp_seg: u16, h: u16) -> Option<u8> {
    let (size, base) = jft(mem, psp_seg);
    if h >= size {
        return None;
    }
    let v = mem.read8(base + h as u32);
    (v != 0xFF).then_some(v)
}

/// Resolves a handle to its SFT entry index, checking it is open.
pub fn resolve(mem: &Memory, hs: &Handles, psp_seg: u16, h: u16) -> Result<u8, DosError> {
    let i = lookup(mem, psp_seg, h).ok_or(ERR_INVALID_HANDLE)?;
    hs.get(i).map(|_| i).ok_or(ERR_INVALID_HANDLE)
}

/// Puts an SFT index in the process's lowest free handle.
pub fn assign(mem: &mut Memory, psp_seg: u16, sft: u8) -> Result<u16, DosError> {
    let (size, base) = jft(mem, psp_seg);
    for h in 0..size {
        if mem.read8(base + h as u32) == 0xFF {
            mem.write8(base + h as u32, sft);
            return Ok(h);
        }
    }
    Err(ERR_TOO_MANY_FILES)
}

/// Sets handle `h` to `sft` (0xFF closes it).
pub fn set(mem: &mut Memory, psp_seg: u16, h: u16, sft: u8) -> Result<(), DosError> {
    let (size, base) = jft(mem, psp_seg);
    if h >= size {
        return Err(ERR_INVALID_HANDLE);
    }
    mem.write8(base + h as u32, sft);
    Ok(())
}

/// The handle table a child inherits: open entries without the no-inherit
/// bit, each taking a reference.
pub fn inherit(mem: &Memory, hs: &mut Handles, parent: u16) -> [u8; JFT_LEN as usize] {
    let mut out = [0xFF; JFT_LEN as usize];
    for (h, slot) in out.iter_mut().enumerate() {
        if let Some(i) = lookup(mem, parent, h as u16) {
            if let Some(e) = hs.get(i) {
                if e.mode & 0x80 == 0 {
                    *slot = i;
                    hs.add_ref(i);
                }
            }
        }
    }
    out
}

/// Closes every handle of a process (termination).
pub fn close_all(mem: &mut Memory, hs: &mut Handles, psp_seg: u16) {
    let (size, base) = jft(mem, psp_seg);
    for h in 0..size {
        let v = mem.read8(base + h as u32);
        if v != 0xFF {
            hs.release(v);
            mem.write8(base + h as u32, 0xFF);
        }
    }
}

/// Reads up to `n` bytes of a file entry, advancing its position.
pub fn read_file(fs: &GuestFs, e: &mut Sft, n: usize) -> Result<Vec<u8>, DosError> {
    if !e.can_read() {
        return Err(ERR_ACCESS_DENIED);
    }
    let Target::File { node, .. } = e.target else {
        return Ok(Vec::new());
    };
    let data = &fs.node(node).data;
    let start = (e.pos as usize).min(data.len());
    let end = start.saturating_add(n).min(data.len());
    e.pos = end as u32;
    Ok(data[start..end].to_vec())
}

/// Writes bytes to a file entry at its position (an empty write truncates
/// or extends the file to the position, as DOS does).
pub fn write_file(fs: &mut GuestFs, e: &mut Sft, bytes: &[u8]) -> Result<usize, DosError> {
    if !e.can_write() {
        return Err(ERR_ACCESS_DENIED);
    }
    let Target::File { node, .. } = e.target else {
        return Ok(bytes.len());
    };
    let n = fs.node_mut(node);
    let pos = e.pos as usize;
    if bytes.is_empty() {
        n.data.resize(pos, 0);
    } else {
        if n.data.len() < pos {
            n.data.resize(pos, 0);
        }
        let end = pos + bytes.len();
        if n.data.len() < end {
            n.data.resize(end, 0);
        }
        n.data[pos..end].copy_from_slice(bytes);
    }
    n.dirty = true;
    e.pos += bytes.len() as u32;
    e.info |= 0x40; // written to
    Ok(bytes.len())
}

/// Moves a file pointer (42h): origin 0 start, 1 current, 2 end.
pub fn seek(fs: &GuestFs, e: &mut Sft, origin: u8, offset: i32) -> Result<u32, DosError> {
    let len = match e.target {
        Target::File { node, .. } => fs.node(node).data.len() as i64,
        Target::Device(_) => 0,
    };
    let base = match origin {
        0 => 0,
        1 => e.pos as i64,
        2 => len,
        _ => return Err(super::path::ERR_INVALID_FUNCTION),
    };
    let p = if origin == 0 {
        offset as u32 as i64
    } else {
        base + offset as i64
    };
    // DOS accepts positions before the start as huge unsigned ones.
    e.pos = p as u32;
    Ok(e.pos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jft_assign_and_inherit() {
        let mut mem = Memory::new();
        let mut hs = Handles::new();
        psp::build(
            &mut mem,
            &psp::PspInit {
                seg: 0x200,
                mem_top: 0x9FFF,
                parent: 0x200,
                env: 0,
                jft: DEFAULT_JFT,
                terminate: (0, 0),
                ctrl_break: (0, 0),
                crit_error: (0, 0),
                tail: b"",
                version: (5, 0),
            },
        );
        assert_eq!(lookup(&mem, 0x200, 1), Some(1));
        assert_eq!(resolve(&mem, &hs, 0x200, 7), Err(ERR_INVALID_HANDLE));
        let i = hs.open(Target::Device(Device::Nul), 0x80).unwrap();
        assert_eq!(i, 3);
        assert_eq!(assign(&mut mem, 0x200, i).unwrap(), 5);
        let child = inherit(&mem, &mut hs, 0x200);
        assert_eq!(&child[..6], &[1, 1, 1, 0, 2, 0xFF]);
        assert_eq!(hs.get(1).unwrap().refs, 4);
        close_all(&mut mem, &mut hs, 0x200);
        assert!(hs.get(3).is_none());
        assert_eq!(hs.get(1).unwrap().refs, 1);
    }

    #[test]
    fn file_read_write_seek() {
        let mut fs = GuestFs::empty();
        let c = vec!["A.TXT".to_string()];
        // An empty GuestFs has no root directory on the host but its root exists.
        let node = fs.create(&c, 0, (0, 0)).unwrap();
        let mut hs = Handles::new();
        let i = hs
            .open(
                Target::File {
                    node,
                    key: "A.TXT".into(),
                },
                2,
            )
            .unwrap();
        let e = hs.get_mut(i).unwrap();
        assert_eq!(write_file(&mut fs, e, b"hello").unwrap(), 5);
        assert_eq!(seek(&fs, e, 0, 1).unwrap(), 1);
        assert_eq!(read_file(&fs, e, 10).unwrap(), b"ello");
        assert_eq!(seek(&fs, e, 2, 3).unwrap(), 8);
        write_file(&mut fs, e, b"!").unwrap();
        assert_eq!(fs.node(node).data, b"hello\0\0\0!");
        seek(&fs, e, 0, 2).unwrap();
        write_file(&mut fs, e, b"").unwrap();
        assert_eq!(fs.node(node).data, b"he");
    }
}
