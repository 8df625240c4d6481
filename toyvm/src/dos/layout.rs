//! The DOS kernel's data in guest memory: the list of lists (INT 21h 52h),
//! device driver headers, the drive parameter block and current directory
//! structure for C:, the InDOS flag, country and DBCS tables, and where the
//! memory arena begins.
//!
//! Owns addresses and the initial contents of these structures so programs
//! that walk them find something plausible. It must not implement services.

use super::path;
use crate::bios::rom::EMS_SEG;
use crate::machine::memory::Memory;

/// Segment of the DOS data area (linear 600h-FFFh).
pub const DOS_SEG: u16 = 0x0060;
/// Critical error flag, then InDOS (34h returns the address of InDOS).
pub const CRIT_ERR: u16 = 0x0010;
pub const INDOS: u16 = 0x0011;
/// The word before the list of lists: first MCB segment.
pub const FIRST_MCB_WORD: u16 = 0x0024;
/// The list of lists (52h returns DOS_SEG:LOL).
pub const LOL: u16 = 0x0026;
pub const NUL_HDR: u16 = LOL + 0x22;
pub const CON_HDR: u16 = 0x00C0;
pub const CLOCK_HDR: u16 = 0x00E0;
pub const DPB: u16 = 0x0100;
pub const SFT_HDR: u16 = 0x0140;
pub const COUNTRY: u16 = 0x0150;
pub const DBCS: u16 = 0x0180;
pub const UPCASE: u16 = 0x0190;
pub const CDS: u16 = 0x0200;
pub const CDS_ENTRY: u16 = 0x58;
pub const DRIVES: u16 = 3;
/// The first memory control block (linear 1000h).
pub const FIRST_MCB: u16 = 0x0100;
/// End of the conventional arena (the paragraph at 9FFFh holds the MCB
/// that bridges to upper memory, as DOS=UMB makes it).
pub const MEM_TOP: u16 = 0x9FFF;
/// Upper memory blocks (DOS=UMB): D000h-DFFFh.
pub const UMB_START: u16 = 0xD000;
pub const UMB_END: u16 = 0xE000;

fn a(o: u16) -> u32 {
    ((DOS_SEG as u32) << 4) + o as u32
}

fn put(mem: &mut Memory, o: u16, b: &[u8]) {
    mem.load(a(o), b);
}

fn far(off: u16, seg: u16) -> [u8; 4] {
    let o = off.to_le_bytes();
    let s = seg.to_le_bytes();
    [o[0], o[1], s[0], s[1]]
}

fn device(mem: &mut Memory, at: u16, next: [u8; 4], attr: u16, name: &[u8; 8]) {
    let mut h = next.to_vec();
    h.extend_from_slice(&attr.to_le_bytes());
    h.extend_from_slice(&[0, 0, 0, 0]);
    h.extend_from_slice(name);
    put(mem, at, &h);
}

/// Writes the DOS data area.
pub fn install(mem: &mut Memory) {
    for o in 0..0xA00u16 {
        mem.write8(a(o), 0);
    }
    put(mem, FIRST_MCB_WORD, &FIRST_MCB.to_le_bytes());
    let mut lol = Vec::new();
    lol.extend_from_slice(&far(DPB, DOS_SEG));
    lol.extend_from_slice(&far(SFT_HDR, DOS_SEG));
    lol.extend_from_slice(&far(CLOCK_HDR, DOS_SEG));
    lol.extend_from_slice(&far(CON_HDR, DOS_SEG));
    lol.extend_from_slice(&512u16.to_le_bytes());
    lol.extend_from_slice(&[0, 0, 0, 0]); // disk buffers
    lol.extend_from_slice(&far(CDS, DOS_SEG));
    lol.extend_from_slice(&[0xFF, 0xFF, 0xFF, 0xFF]); // FCB table
    lol.extend_from_slice(&0u16.to_le_bytes());
    lol.push(DRIVES as u8); // block devices
    lol.push(DRIVES as u8); // LASTDRIVE
    put(mem, LOL, &lol);
    // NUL -> CON -> CLOCK$ -> EMMXXXX0 (in the EMS driver's ROM) -> end.
    device(mem, NUL_HDR, far(CON_HDR, DOS_SEG), 0x8004, b"NUL     ");
    device(mem, CON_HDR, far(CLOCK_HDR, DOS_SEG), 0x8013, b"CON     ");
    device(mem, CLOCK_HDR, far(0, EMS_SEG), 0x8008, b"CLOCK$  ");
    // Drive parameter block of C: (a 2 GB-class FAT16 volume).
    let mut dpb = vec![
        path::DRIVE_C, // drive
        0,             // unit
    ];
    dpb.extend_from_slice(&512u16.to_le_bytes()); // bytes per sector
    dpb.extend_from_slice(&[63, 6]); // sectors per cluster - 1, shift
    dpb.extend_from_slice(&1u16.to_le_bytes()); // reserved sectors
    dpb.push(2); // FATs
    dpb.extend_from_slice(&512u16.to_le_bytes()); // root entries
    dpb.extend_from_slice(&545u16.to_le_bytes()); // first data sector
    dpb.extend_from_slice(&65000u16.to_le_bytes()); // highest cluster + 1
    dpb.extend_from_slice(&254u16.to_le_bytes()); // sectors per FAT
    dpb.extend_from_slice(&509u16.to_le_bytes()); // first directory sector
    dpb.extend_from_slice(&[0, 0, 0, 0]); // driver
    dpb.push(0xF8); // media
    dpb.push(0); // accessed
    dpb.extend_from_slice(&[0xFF, 0xFF, 0xFF, 0xFF]); // next DPB
    dpb.extend_from_slice(&2u16.to_le_bytes()); // next free cluster
    dpb.extend_from_slice(&32000u16.to_le_bytes()); // free clusters
    put(mem, DPB, &dpb);
    put(mem, SFT_HDR, &[0xFF, 0xFF, 0xFF, 0xFF, 0, 0]);
    put(mem, COUNTRY, &country_info());
    put(mem, DBCS, &[0, 0]);
    // Upper-case table for 80h-FFh (identity): size word then 128 bytes.
    let mut up = 128u16.to_le_bytes().to_vec();
    up.extend(0x80..=0xFFu8);
    put(mem, UPCASE, &up);
    for d in 0..DRIVES {
        let mut e = vec![0u8; CDS_ENTRY as usize];
        e[0] = b'A' + d as u8;
        e[1] = b':';
        e[2] = b'\\';
        let flags: u16 = if d == path::DRIVE_C as u16 { 0x4000 } else { 0 };
        e[0x43..0x45].copy_from_slice(&flags.to_le_bytes());
        if d == path::DRIVE_C as u16 {
            e[0x45..0x49].copy_from_slice(&far(DPB, DOS_SEG));
        }
        e[0x4F..0x51].copy_from_slice(&2u16.to_le_bytes());
        put(mem, CDS + d * CDS_ENTRY, &e);
    }
}

/// Keeps the CDS entry of C: in step with the current directory.
pub fn set_cds_path(mem: &mut Memory, cwd: &[String]) {
    let mut p = b"C:\\".to_vec();
    p.extend_from_slice(path::key(cwd).as_bytes());
    p.truncate(66);
    let base = CDS + path::DRIVE_C as u16 * CDS_ENTRY;
    for i in 0..67u16 {
        mem.write8(a(base + i), p.get(i as usize).copied().unwrap_or(0));
    }
}

/// The 34-byte country information record (United States).
pub fn country_info() -> Vec<u8> {
    let mut c = vec![0u8; 34];
    c[0] = 0; // date format: m d y
    c[2] = b'$';
    c[7] = b',';
    c[9] = b'.';
    c[11] = b'-';
    c[13] = b':';
    c[15] = 0; // currency format
    c[16] = 2; // digits after decimal
    c[17] = 0; // 12-hour clock
    c[22] = b',';
    c
}
