//! The MZ executable format: header, relocation table, load module, and the
//! recognition of extended formats (NE, LE/LX, PE, DJGPP COFF) behind an MZ
//! stub.
//!
//! Owns parsing and validation of untrusted headers. It must not touch guest
//! memory: [`ExeImage::relocated`] produces the bytes to place, and
//! `dos::exec` places them.

use super::{Format, LoadError};

/// Size of the formatted part of an MZ header.
pub const HEADER_LEN: usize = 0x1C;
/// Load modules bigger than conventional memory can never load.
const MAX_LOAD_MODULE: usize = 0xA0000;

/// The fields of an MZ header, as stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MzHeader {
    pub last_page_bytes: u16,
    pub pages: u16,
    pub reloc_count: u16,
    pub header_paragraphs: u16,
    pub min_alloc: u16,
    pub max_alloc: u16,
    pub ss: u16,
    pub sp: u16,
    pub checksum: u16,
    pub ip: u16,
    pub cs: u16,
    pub reloc_offset: u16,
    pub overlay: u16,
}

fn word(b: &[u8], off: usize) -> Option<u16> {
    Some(u16::from_le_bytes([*b.get(off)?, *b.get(off + 1)?]))
}

fn dword(b: &[u8], off: usize) -> Option<u32> {
    Some(word(b, off)? as u32 | (word(b, off + 2)? as u32) << 16)
}

impl MzHeader {
    /// Reads the header fields; fails when the file is too short to hold them.
    pub fn read(b: &[u8]) -> Result<MzHeader, LoadError> {
        if b.len() < HEADER_LEN {
            return Err(LoadError::Truncated(format!(
                "MZ header needs {HEADER_LEN} bytes, file has {}",
                b.len()
            )));
        }
        let w = |o| word(b, o).unwrap_or(0);
        Ok(MzHeader {
            last_page_bytes: w(0x02),
            pages: w(0x04),
            reloc_count: w(0x06),
            header_paragraphs: w(0x08),
            min_alloc: w(0x0A),
            max_alloc: w(0x0C),
            ss: w(0x0E),
            sp: w(0x10),
            checksum: w(0x12),
            ip: w(0x14),
            cs: w(0x16),
            reloc_offset: w(0x18),
            overlay: w(0x1A),
        })
    }

    /// Paragraphs DOS reserves for the load module: whole 512-byte pages
    /// minus the header. DOS's EXEC ignores the last-page byte count here
    /// (MS-DOS 2.0 EXEC.ASM `exec_res_len_para`), and so does DOSBox.
    pub fn resident_paragraphs(&self) -> Option<u32> {
        (self.pages as u32 * 32).checked_sub(self.header_paragraphs as u32)
    }

    /// End of the MZ image inside the file, as the header states it (the
    /// last-page count honoured; used to find what follows the image).
    pub fn stated_end(&self) -> usize {
        let pages = self.pages as usize;
        let last = (self.last_page_bytes & 0x1FF) as usize;
        if last == 0 {
            pages * 512
        } else {
            (pages * 512).saturating_sub(512 - last)
        }
    }
}

/// A parsed MZ program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExeImage {
    pub header: MzHeader,
    /// The load module: the bytes after the header up to the end of the
    /// last whole page (or of the file), as DOS reads it.
    pub load_module: Vec<u8>,
    /// Relocations as (offset, segment) pairs relative to the load segment.
    pub relocs: Vec<(u16, u16)>,
}

impl ExeImage {
    /// Paragraphs DOS reserves for the load module (whole pages).
    pub fn module_paragraphs(&self) -> u32 {
        self.header.resident_paragraphs().unwrap_or(0)
    }

    /// The load module with every relocation applied for `load_seg`
    /// (`reloc_factor` is normally equal to it; EXEC AL=03 lets them differ).
    /// A relocation whose word straddles the module end patches what exists.
    pub fn relocated(&self, reloc_factor: u16) -> Vec<u8> {
        let mut m = self.load_module.clone();
        for &(off, seg) in &self.relocs {
            let at = (seg as usize) * 16 + off as usize;
            if at + 1 < m.len() {
                let v = u16::from_le_bytes([m[at], m[at + 1]]).wrapping_add(reloc_factor);
                m[at..at + 2].copy_from_slice(&v.to_le_bytes());
            }
        }
        m
    }
}

/// Parses an MZ executable (the real-mode part of it).
pub fn parse(b: &[u8]) -> Result<ExeImage, LoadError> {
    if !super::has_mz_signature(b) {
        return Err(LoadError::BadHeader("no MZ signature".into()));
    }
    let h = MzHeader::read(b)?;
    let hdr_len = h.header_paragraphs as usize * 16;
    if hdr_len < HEADER_LEN {
        return Err(LoadError::BadHeader(format!(
            "header of {} paragraphs is smaller than the MZ header itself",
            h.header_paragraphs
        )));
    }
    if hdr_len > b.len() {
        return Err(LoadError::Truncated(format!(
            "header claims {hdr_len} bytes, file has {}",
            b.len()
        )));
    }
    if h.resident_paragraphs().is_none() || h.stated_end() < hdr_len {
        return Err(LoadError::BadHeader(format!(
            "image ends at byte {} before its {hdr_len}-byte header",
            h.stated_end()
        )));
    }
    // DOS reads whole pages (the last one past its byte count too, when the
    // file holds those bytes).
    let end = (h.pages as usize * 512).min(b.len());
    let module = &b[hdr_len..end];
    if module.len() > MAX_LOAD_MODULE {
        return Err(LoadError::TooBig(format!(
            "load module of {} bytes exceeds conventional memory",
            module.len()
        )));
    }
    let count = h.reloc_count as usize;
    let table = h.reloc_offset as usize;
    if count > 0 && table + count * 4 > b.len() {
        return Err(LoadError::Truncated(format!(
            "relocation table ({count} entries at byte {table}) runs past the end of the file ({} bytes)",
            b.len()
        )));
    }
    let relocs = (0..count)
        .map(|i| {
            let o = table + i * 4;
            (word(b, o).unwrap_or(0), word(b, o + 2).unwrap_or(0))
        })
        .collect();
    Ok(ExeImage {
        header: h,
        load_module: module.to_vec(),
        relocs,
    })
}

/// Looks behind the MZ stub for a protected-mode or foreign image. `None`
/// means a plain real-mode MZ program.
pub fn detect_extended(b: &[u8]) -> Option<Format> {
    let h = MzHeader::read(b).ok()?;
    // DJGPP go32 stubs (and UPX-packed DJGPP programs) put a COFF image right
    // after the MZ image; its magic is 0x014C (i386).
    let end = h.stated_end();
    if end >= 0x20 && word(b, end) == Some(0x014C) {
        return Some(Format::MzStub("COFF (DJGPP)".into()));
    }
    if contains(&b[..b.len().min(4096)], b"go32stub") {
        return Some(Format::MzStub("COFF (DJGPP go32 stub)".into()));
    }
    // New-style executables keep the offset of their header at 3Ch.
    let lfanew = dword(b, 0x3C)? as usize;
    if lfanew < 0x40 || lfanew + 4 > b.len() {
        return None;
    }
    let sig = &b[lfanew..lfanew + 4];
    if sig == b"PE\0\0" {
        return Some(Format::Foreign("PE (Win32)".into()));
    }
    match &sig[..2] {
        b"LE" => Some(Format::MzStub("LE (DOS/4G or VxD)".into())),
        b"LX" => Some(Format::Foreign("LX (OS/2 2.x)".into())),
        b"NE" => {
            // A bound OS/2 family-API program runs under DOS through its
            // stub, which then is the whole real-mode program: target OS 1
            // (OS/2) with the FAPI application flag (bit 3 of byte 0Dh), or a
            // stub far bigger than a "this program needs OS/2" message.
            let os = *b.get(lfanew + 0x36)?;
            let flags = *b.get(lfanew + 0x0D)?;
            if os == 1 && (flags & 0x08 != 0 || h.stated_end() >= 0x800) {
                Some(Format::MzNeFamily)
            } else {
                Some(Format::Foreign(
                    if os == 2 { "NE (Windows)" } else { "NE (OS/2)" }.into(),
                ))
            }
        }
        _ => None,
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(pages: u16, last: u16, hdr_paras: u16, relocs: &[(u16, u16)]) -> Vec<u8> {
        let mut b = vec![0u8; hdr_paras as usize * 16];
        b[0] = b'M';
        b[1] = b'Z';
        b[2..4].copy_from_slice(&last.to_le_bytes());
        b[4..6].copy_from_slice(&pages.to_le_bytes());
        b[6..8].copy_from_slice(&(relocs.len() as u16).to_le_bytes());
        b[8..10].copy_from_slice(&hdr_paras.to_le_bytes());
        b[0x18..0x1A].copy_from_slice(&0x1Cu16.to_le_bytes());
        for (i, (o, s)) in relocs.iter().enumerate() {
            b[0x1C + i * 4..0x1E + i * 4].copy_from_slice(&o.to_le_bytes());
            b[0x1E + i * 4..0x20 + i * 4].copy_from_slice(&s.to_le_bytes());
        }
        b
    }

    #[test]
    fn parses_and_relocates() {
        let mut b = header(1, 0x40, 3, &[(2, 0), (0x10, 1)]);
        b.extend_from_slice(&[0u8; 0x10]);
        b[0x30 + 2] = 0x34; // word 0x1234 at module offset 2
        b[0x30 + 3] = 0x12;
        let img = parse(&b).unwrap();
        assert_eq!(img.load_module.len(), 0x10);
        assert_eq!(img.relocs, vec![(2, 0), (0x10, 1)]);
        let r = img.relocated(0x1000);
        assert_eq!(&r[2..4], &0x2234u16.to_le_bytes());
    }

    #[test]
    fn truncated_relocation_table_is_an_error() {
        let mut b = header(1, 0, 2, &[]);
        b[6] = 200;
        assert!(matches!(parse(&b), Err(LoadError::Truncated(_))));
    }

    #[test]
    fn header_bigger_than_file_is_an_error() {
        let mut b = header(1, 0, 2, &[]);
        b[8] = 0xFF;
        assert!(matches!(parse(&b), Err(LoadError::Truncated(_))));
    }

    #[test]
    fn recognises_pe_and_le() {
        let mut b = header(1, 0, 4, &[]);
        b.resize(0x100, 0);
        b[0x3C] = 0x80;
        b[0x80..0x84].copy_from_slice(b"PE\0\0");
        assert_eq!(
            detect_extended(&b),
            Some(Format::Foreign("PE (Win32)".into()))
        );
        b[0x80..0x84].copy_from_slice(b"LE\0\0");
        assert!(matches!(detect_extended(&b), Some(Format::MzStub(s)) if s.starts_with("LE")));
    }
}
