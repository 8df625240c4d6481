//! File control blocks: the CP/M-style file interface of DOS 1 (INT 21h
//! 0Fh-17h, 21h-24h, 27h/28h) that MS-DOS 1.x programs still use.
//!
//! An opened FCB remembers its system file table entry in its reserved
//! bytes (18h: index, 19h: a marker), as DOS keeps its own state there.
//! Owns FCB field conventions; file contents go through `dos::handles`.

use super::files::ATTR_DIRECTORY;
use super::find::Searches;
use super::handles::{self, Target};
use super::path::{self, Resolved};
use super::Dos;
use crate::bios::hostcall::Regs;
use crate::bios::timer;
use crate::bios::Bios;
use crate::bus::Bus;
use crate::cpu::Cpu;
use crate::machine::{lin, Machine};

const MARK: u8 = 0xA5;

/// The FCB proper at DS:DX (skipping an extended FCB's 7-byte header) and
/// the extended header's attribute, if any.
pub fn locate(cpu: &Cpu, m: &mut Machine) -> (u32, Option<u8>) {
    let a = lin(cpu.ds(), cpu.dx());
    if m.mem.read8(a) == 0xFF {
        (a + 7, Some(m.mem.read8(a + 6)))
    } else {
        (a, None)
    }
}

fn rd(m: &mut Machine, a: u32, n: usize) -> Vec<u8> {
    m.read_lin(a, n)
}
fn rd16(m: &mut Machine, a: u32) -> u16 {
    let b = rd(m, a, 2);
    u16::from_le_bytes([b[0], b[1]])
}
fn wr16(m: &mut Machine, a: u32, v: u16) {
    m.write_lin(a, &v.to_le_bytes());
}
fn rd32(m: &mut Machine, a: u32) -> u32 {
    let b = rd(m, a, 4);
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}
fn wr32(m: &mut Machine, a: u32, v: u32) {
    m.write_lin(a, &v.to_le_bytes());
}

/// The guest path an FCB names (drive byte checked: only C: or default).
fn fcb_path(dos: &Dos, m: &mut Machine, a: u32) -> Option<Vec<String>> {
    let drive = m.mem.read8(a);
    if drive != 0 && drive != path::DRIVE_C + 1 {
        return None;
    }
    let raw = rd(m, a + 1, 11);
    let name = path::from_fcb_name(&raw);
    match path::resolve(&dos.cwd, name.as_bytes(), false) {
        Ok(Resolved::Path(c)) => Some(c),
        _ => None,
    }
}

fn open_common(dos: &mut Dos, m: &mut Machine, a: u32, create: bool, bios: &Bios, now: u64) -> u8 {
    let Some(comps) = fcb_path(dos, m, a) else {
        return 0xFF;
    };
    let node = if create {
        let stamp = timer::dos_stamp(&timer::now(bios, now));
        dos.fs.create(&comps, 0, stamp)
    } else {
        dos.fs.open(&comps)
    };
    let Ok(node) = node else { return 0xFF };
    let Ok(i) = dos.handles.open(
        Target::File {
            node,
            key: path::key(&comps),
        },
        2,
    ) else {
        return 0xFF;
    };
    let n = dos.fs.node(node);
    let (size, date, time) = (n.data.len() as u32, n.date, n.time);
    if m.mem.read8(a) == 0 {
        m.write8(a, path::DRIVE_C + 1);
    }
    wr16(m, a + 0x0C, 0);
    wr16(m, a + 0x0E, 128);
    wr32(m, a + 0x10, size);
    wr16(m, a + 0x14, date);
    wr16(m, a + 0x16, time);
    m.write_lin(a + 0x18, &[i, MARK]);
    m.write8(a + 0x20, 0);
    0
}

fn sft_of(m: &mut Machine, dos: &Dos, a: u32) -> Option<u8> {
    let b = rd(m, a + 0x18, 2);
    (b[1] == MARK && dos.handles.get(b[0]).is_some()).then_some(b[0])
}

/// Reads or writes one record at `rec` for an opened FCB. Returns the AL
/// status: 0 ok, 1 end of file, 2 segment wrap (not produced), 3 partial.
fn transfer(dos: &mut Dos, m: &mut Machine, a: u32, rec: u32, write: bool) -> u8 {
    let Some(i) = sft_of(m, dos, a) else { return 1 };
    let size = rd16(m, a + 0x0E).max(1) as u32;
    let dta = lin(dos.dta.0, dos.dta.1);
    let e = dos.handles.get_mut(i).unwrap();
    e.pos = rec * size;
    if write {
        let data = m.read_lin(dta, size as usize);
        let e = dos.handles.get_mut(i).unwrap();
        let _ = handles::write_file(&mut dos.fs, e, &data);
        let Target::File { node, .. } = e.target else {
            return 0;
        };
        let len = dos.fs.node(node).data.len() as u32;
        wr32(m, a + 0x10, len);
        0
    } else {
        let got = handles::read_file(&dos.fs, e, size as usize).unwrap_or_default();
        if got.is_empty() {
            return 1;
        }
        let mut buf = got.clone();
        buf.resize(size as usize, 0);
        m.write_lin(dta, &buf);
        if got.len() < size as usize {
            3
        } else {
            0
        }
    }
}

fn current_record(m: &mut Machine, a: u32) -> u32 {
    rd16(m, a + 0x0C) as u32 * 128 + m.mem.read8(a + 0x20) as u32
}

fn set_current(m: &mut Machine, a: u32, rec: u32) {
    wr16(m, a + 0x0C, (rec / 128) as u16);
    m.write8(a + 0x20, (rec % 128) as u8);
}

fn random_record(m: &mut Machine, a: u32) -> u32 {
    let r = rd32(m, a + 0x21);
    if rd16(m, a + 0x0E) >= 64 {
        r & 0xFF_FFFF
    } else {
        r
    }
}

fn dir_entry_fcb(drive: u8, e: &super::files::DirEntry) -> [u8; 33] {
    let mut d = [0u8; 33];
    d[0] = drive;
    let name = if e.name.starts_with('.') {
        let mut n = [b' '; 11];
        n[..e.name.len()].copy_from_slice(e.name.as_bytes());
        n
    } else {
        path::to_fcb_name(&e.name)
    };
    d[1..12].copy_from_slice(&name);
    d[12] = e.attr;
    d[0x17..0x19].copy_from_slice(&e.time.to_le_bytes());
    d[0x19..0x1B].copy_from_slice(&e.date.to_le_bytes());
    d[0x1D..0x21].copy_from_slice(&e.size.to_le_bytes());
    d
}

/// The FCB functions. Returns false for a function number it does not own.
pub fn service(cpu: &mut Cpu, m: &mut Machine, dos: &mut Dos, bios: &Bios) -> bool {
    let (a, ext) = locate(cpu, m);
    let al = match cpu.ah() {
        0x0F => open_common(dos, m, a, false, bios, cpu.clock),
        0x16 => open_common(dos, m, a, true, bios, cpu.clock),
        0x10 => match sft_of(m, dos, a) {
            Some(i) => {
                dos.handles.release(i);
                m.write_lin(a + 0x18, &[0, 0]);
                let _ = dos.fs.flush();
                0
            }
            None => 0xFF,
        },
        0x11 | 0x12 => {
            let found = if cpu.ah() == 0x11 {
                let drive = m.mem.read8(a);
                let raw = rd(m, a + 1, 11);
                let mut pat = path::from_fcb_name(&raw).into_bytes();
                if pat.is_empty() {
                    pat = b"????????.???".to_vec();
                }
                let attr = ext.unwrap_or(0);
                if drive != 0 && drive != path::DRIVE_C + 1 {
                    None
                } else {
                    match dos.searches.first(
                        &mut dos.fs,
                        &dos.cwd.clone(),
                        &pat,
                        attr,
                        dos.current_psp,
                    ) {
                        Ok((id, e)) => {
                            m.write_lin(a + 0x0C, &id.to_le_bytes());
                            Some(e)
                        }
                        Err(_) => None,
                    }
                }
            } else {
                let id = rd32(m, a + 0x0C);
                dos.searches.next(id).ok()
            };
            match found {
                Some(e) => {
                    let dta = lin(dos.dta.0, dos.dta.1);
                    let mut out = Vec::new();
                    if let Some(at) = ext {
                        out.extend_from_slice(&[0xFF, 0, 0, 0, 0, 0, at]);
                    }
                    out.extend_from_slice(&dir_entry_fcb(path::DRIVE_C + 1, &e));
                    m.write_lin(dta, &out);
                    0
                }
                None => 0xFF,
            }
        }
        0x13 => {
            let raw = rd(m, a + 1, 11);
            let pat = path::from_fcb_name(&raw);
            let mut n = 0;
            let mut s = Searches::default();
            if let Ok((id, first)) = s.first(&mut dos.fs, &dos.cwd.clone(), pat.as_bytes(), 0, 0) {
                let mut e = Some(first);
                while let Some(x) = e {
                    if x.attr & ATTR_DIRECTORY == 0 {
                        let mut c = dos.cwd.clone();
                        c.push(x.name);
                        if dos.fs.delete(&c).is_ok() {
                            n += 1;
                        }
                    }
                    e = s.next(id).ok();
                }
            }
            if n > 0 {
                0
            } else {
                0xFF
            }
        }
        0x14 | 0x15 => {
            let rec = current_record(m, a);
            let r = transfer(dos, m, a, rec, cpu.ah() == 0x15);
            if r != 1 {
                set_current(m, a, rec + 1);
            }
            r
        }
        0x17 => {
            let from = fcb_path(dos, m, a);
            let raw = rd(m, a + 0x11, 11);
            let to = path::from_fcb_name(&raw);
            match (from, path::resolve(&dos.cwd, to.as_bytes(), false)) {
                (Some(f), Ok(Resolved::Path(t))) if dos.fs.rename(&f, &t).is_ok() => 0,
                _ => 0xFF,
            }
        }
        0x21 | 0x22 => {
            let rec = random_record(m, a);
            set_current(m, a, rec);
            transfer(dos, m, a, rec, cpu.ah() == 0x22)
        }
        0x23 => match fcb_path(dos, m, a).map(|c| dos.fs.open(&c)) {
            Some(Ok(node)) => {
                let size = rd16(m, a + 0x0E).max(1) as u32;
                let len = dos.fs.node(node).data.len() as u32;
                wr32(m, a + 0x21, len.div_ceil(size));
                0
            }
            _ => 0xFF,
        },
        0x24 => {
            let rec = current_record(m, a);
            wr32(m, a + 0x21, rec);
            cpu.al()
        }
        0x27 | 0x28 => {
            let mut rec = random_record(m, a);
            let count = cpu.cx();
            let size = rd16(m, a + 0x0E).max(1) as u32;
            let dta0 = dos.dta;
            let mut status = 0;
            let mut done = 0u16;
            for k in 0..count {
                dos.dta = (dta0.0, dta0.1.wrapping_add((k as u32 * size) as u16));
                status = transfer(dos, m, a, rec, cpu.ah() == 0x28);
                if status == 1 {
                    break;
                }
                rec += 1;
                done += 1;
                if status == 3 {
                    break;
                }
            }
            if cpu.ah() == 0x28 && count == 0 {
                // A zero-record write sets the file size to the record position.
                if let Some(i) = sft_of(m, dos, a) {
                    let e = dos.handles.get_mut(i).unwrap();
                    e.pos = rec * size;
                    let _ = handles::write_file(&mut dos.fs, e, &[]);
                }
            }
            dos.dta = dta0;
            cpu.set_cx(done);
            wr32(m, a + 0x21, rec);
            set_current(m, a, rec);
            status
        }
        _ => return false,
    };
    cpu.set_al(al);
    true
}
