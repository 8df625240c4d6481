//! Program segment prefixes and environments: the 256-byte PSP DOS builds in
//! front of every program, the environment block, the command tail, and the
//! filename parser (INT 21h 29h) that fills the PSP's two FCBs.
//!
//! Owns the PSP layout. It must not allocate memory or load programs
//! (`dos::exec` does) and must not touch the file system.

use super::path;
use crate::bios::rom::{at, BIOS_SEG};
use crate::machine::memory::Memory;

/// PSP field offsets.
pub mod off {
    pub const INT20: u16 = 0x00;
    pub const MEM_TOP: u16 = 0x02;
    pub const CPM_CALL: u16 = 0x05;
    pub const TERMINATE: u16 = 0x0A;
    pub const CTRL_BREAK: u16 = 0x0E;
    pub const CRIT_ERROR: u16 = 0x12;
    pub const PARENT: u16 = 0x16;
    pub const JFT: u16 = 0x18;
    pub const ENV: u16 = 0x2C;
    pub const SAVED_SSSP: u16 = 0x2E;
    pub const JFT_SIZE: u16 = 0x32;
    pub const JFT_PTR: u16 = 0x34;
    pub const PREV_PSP: u16 = 0x38;
    pub const VERSION: u16 = 0x40;
    pub const DOS_CALL: u16 = 0x50;
    pub const FCB1: u16 = 0x5C;
    pub const FCB2: u16 = 0x6C;
    pub const TAIL: u16 = 0x80;
}

/// Default number of handles in a PSP's own table.
pub const JFT_LEN: u16 = 20;

fn a(seg: u16, o: u16) -> u32 {
    ((seg as u32) << 4) + o as u32
}

pub fn rd16(mem: &Memory, seg: u16, o: u16) -> u16 {
    mem.read8(a(seg, o)) as u16 | (mem.read8(a(seg, o + 1)) as u16) << 8
}

pub fn wr16(mem: &mut Memory, seg: u16, o: u16, v: u16) {
    mem.write8(a(seg, o), v as u8);
    mem.write8(a(seg, o + 1), (v >> 8) as u8);
}

pub fn wr_bytes(mem: &mut Memory, seg: u16, o: u16, b: &[u8]) {
    for (i, &v) in b.iter().enumerate() {
        mem.write8(a(seg, o.wrapping_add(i as u16)), v);
    }
}

/// What a new PSP inherits and starts with.
pub struct PspInit<'a> {
    pub seg: u16,
    /// Segment just past the program's memory block.
    pub mem_top: u16,
    pub parent: u16,
    pub env: u16,
    /// The handle table to start from (the parent's, with non-inheritable
    /// entries already replaced by FFh).
    pub jft: [u8; JFT_LEN as usize],
    /// INT 22h/23h/24h at creation time.
    pub terminate: (u16, u16),
    pub ctrl_break: (u16, u16),
    pub crit_error: (u16, u16),
    /// The command tail without the count byte and CR (at most 126 bytes).
    pub tail: &'a [u8],
    pub version: (u8, u8),
}

/// Builds a PSP in guest memory.
pub fn build(mem: &mut Memory, p: &PspInit) {
    let s = p.seg;
    for i in 0..0x100 {
        mem.write8(a(s, i), 0);
    }
    wr_bytes(mem, s, off::INT20, &[0xCD, 0x20]);
    wr16(mem, s, off::MEM_TOP, p.mem_top);
    // CALL FAR F000:FEF0 (the CP/M entry); the word at 06h doubles as the
    // "bytes available in the segment" CP/M programs read (FEF0h as in DOS).
    mem.write8(a(s, off::CPM_CALL), 0x9A);
    wr16(mem, s, off::CPM_CALL + 1, at::CPM_ENTRY);
    wr16(mem, s, off::CPM_CALL + 3, BIOS_SEG);
    for (o, (vs, vo)) in [
        (off::TERMINATE, p.terminate),
        (off::CTRL_BREAK, p.ctrl_break),
        (off::CRIT_ERROR, p.crit_error),
    ] {
        wr16(mem, s, o, vo);
        wr16(mem, s, o + 2, vs);
    }
    wr16(mem, s, off::PARENT, p.parent);
    wr_bytes(mem, s, off::JFT, &p.jft);
    wr16(mem, s, off::ENV, p.env);
    wr16(mem, s, off::JFT_SIZE, JFT_LEN);
    wr16(mem, s, off::JFT_PTR, off::JFT);
    wr16(mem, s, off::JFT_PTR + 2, s);
    wr16(mem, s, off::PREV_PSP, 0xFFFF);
    wr16(mem, s, off::PREV_PSP + 2, 0xFFFF);
    mem.write8(a(s, off::VERSION), p.version.0);
    mem.write8(a(s, off::VERSION + 1), p.version.1);
    wr_bytes(mem, s, off::DOS_CALL, &[0xCD, 0x21, 0xCB]);
    set_tail(mem, s, p.tail);
    // FCBs from the first two arguments, as COMMAND.COM does.
    let mut args = p
        .tail
        .split(|&c| c == b' ' || c == b'\t')
        .filter(|a| !a.is_empty());
    let mut fcb = |o: u16, arg: Option<&[u8]>| {
        let (_, f, _) = parse_fcb_name(arg.unwrap_or(b""), 0x01);
        wr_bytes(mem, s, o, &f);
    };
    fcb(off::FCB1, args.next());
    fcb(off::FCB2, args.next());
}

/// Writes the command tail at PSP:80h (count, text, CR).
pub fn set_tail(mem: &mut Memory, seg: u16, tail: &[u8]) {
    let t = &tail[..tail.len().min(126)];
    mem.write8(a(seg, off::TAIL), t.len() as u8);
    wr_bytes(mem, seg, off::TAIL + 1, t);
    mem.write8(a(seg, off::TAIL + 1 + t.len() as u16), 0x0D);
}

/// Builds an environment block: `VAR=value` strings, an empty string, the
/// word 1 and the program's full name. Returns the bytes.
pub fn env_block(vars: &[(String, String)], program: &str) -> Vec<u8> {
    let mut b = Vec::new();
    for (k, v) in vars {
        b.extend_from_slice(k.as_bytes());
        b.push(b'=');
        b.extend_from_slice(v.as_bytes());
        b.push(0);
    }
    if vars.is_empty() {
        b.push(0);
    }
    b.push(0);
    b.extend_from_slice(&1u16.to_le_bytes());
    b.extend_from_slice(program.as_bytes());
    b.push(0);
    b
}

/// The variable part of an existing environment (up to and including the
/// double NUL), read from guest memory, at most 32 KiB.
pub fn read_env_vars(mem: &Memory, seg: u16) -> Vec<u8> {
    let mut v = Vec::new();
    let base = (seg as u32) << 4;
    for i in 0..0x8000u32 {
        let c = mem.read8(base + i);
        v.push(c);
        if c == 0 && (i == 0 || v[v.len() - 2] == 0) {
            break;
        }
    }
    if v.len() == 1 {
        v.push(0);
    }
    v
}

/// The filename parser of INT 21h 29h / COMMAND.COM. `flags` bits: 0 skip
/// leading separators, 1 keep drive if none given, 2 keep name if none,
/// 3 keep extension if none (the "keep" bits apply to an existing FCB, here
/// a blank one). Returns (bytes consumed, 12-byte drive+name FCB head plus
/// zeroed rest to 16 bytes, AL result: 0 no wildcards, 1 wildcards, FFh bad
/// drive).
pub fn parse_fcb_name(s: &[u8], flags: u8) -> (usize, [u8; 16], u8) {
    let mut fcb = [0u8; 16];
    fcb[1..12].fill(b' ');
    let mut i = 0;
    let is_sep = |c: u8| b":.;,=+ \t".contains(&c);
    let is_term = |c: u8| c < 0x20 || b"\"/[]<>|:.;,=+ \t\\".contains(&c);
    if flags & 1 != 0 {
        while i < s.len() && is_sep(s[i]) {
            i += 1;
        }
    }
    while i < s.len() && (s[i] == b' ' || s[i] == b'\t') {
        i += 1;
    }
    let mut result = 0u8;
    if i + 1 < s.len() && s[i + 1] == b':' && s[i].is_ascii_alphabetic() {
        let d = s[i].to_ascii_uppercase() - b'A' + 1;
        fcb[0] = d;
        if d != path::DRIVE_C + 1 {
            result = 0xFF;
        }
        i += 2;
    }
    let mut wild = false;
    let mut field = |i: &mut usize, out: &mut [u8]| {
        let mut n = 0;
        while *i < s.len() && !is_term(s[*i]) {
            let c = s[*i].to_ascii_uppercase();
            if c == b'*' {
                wild = true;
                while n < out.len() {
                    out[n] = b'?';
                    n += 1;
                }
            } else if n < out.len() {
                if c == b'?' {
                    wild = true;
                }
                out[n] = c;
                n += 1;
            }
            *i += 1;
        }
    };
    let (name, ext) = fcb[1..12].split_at_mut(8);
    field(&mut i, name);
    if i < s.len() && s[i] == b'.' {
        i += 1;
        field(&mut i, ext);
    }
    if result == 0 && wild {
        result = 1;
    }
    (i, fcb, result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fcb_parsing() {
        let (n, f, r) = parse_fcb_name(b"  foo.bar rest", 1);
        assert_eq!(n, 9);
        assert_eq!(&f[..12], b"\0FOO     BAR");
        assert_eq!(r, 0);
        let (_, f, r) = parse_fcb_name(b"c:*.PCX", 1);
        assert_eq!(&f[..12], b"\x03????????PCX");
        assert_eq!(r, 1);
        let (_, _, r) = parse_fcb_name(b"d:x", 1);
        assert_eq!(r, 0xFF);
    }

    #[test]
    fn psp_layout() {
        let mut mem = Memory::new();
        build(
            &mut mem,
            &PspInit {
                seg: 0x200,
                mem_top: 0x9FFF,
                parent: 0x101,
                env: 0x1F0,
                jft: [
                    1, 1, 1, 0, 2, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                    0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                ],
                terminate: (0xF000, 0x1234),
                ctrl_break: (0, 0),
                crit_error: (0, 0),
                tail: b" a.txt b.dat",
                version: (5, 0),
            },
        );
        assert_eq!(rd16(&mem, 0x200, 0), 0x20CD);
        assert_eq!(rd16(&mem, 0x200, 2), 0x9FFF);
        assert_eq!(rd16(&mem, 0x200, 6), 0xFEF0);
        assert_eq!(rd16(&mem, 0x200, 0x0A), 0x1234);
        assert_eq!(rd16(&mem, 0x200, 0x2C), 0x1F0);
        assert_eq!(mem.read8(0x2080), 12);
        assert_eq!(mem.read8(0x2080 + 13), 0x0D);
        assert_eq!(mem.read8(0x205D), b'A');
        assert_eq!(mem.read8(0x206D), b'B');
        assert_eq!(
            env_block(&[("A".into(), "1".into())], "C:\\X.COM"),
            b"A=1\0\0\x01\0C:\\X.COM\0"
        );
    }
}
