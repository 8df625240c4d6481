//! The DOS service dispatcher: INT 21h by function, INT 20h/27h, the CP/M
//! `CALL 5` entry, and the multiplex interrupt INT 2Fh (XMS, DPMI and
//! Windows presence checks).
//!
//! Owns the register conventions of each function and routes to the module
//! that owns the mechanism (files, handles, memory, exec, console, find,
//! FCBs). A function it does not know stops the run naming it; functions
//! that exist but answer "not supported" by design are recorded as declined.

use super::console;
use super::exec::{self, End, ExecError, Mode, Request};
use super::files::ATTR_DIRECTORY;
use super::handles::{self, Target};
use super::layout::{self, DOS_SEG};
use super::memory::{self, Strategy};
use super::path::{self, Device, DosError, Resolved, *};
use super::psp;
use super::{fcb, find, Dos};
use crate::bios::hostcall::{self, fail, ok, Outcome, Regs};
use crate::bios::rom::BIOS_SEG;
use crate::bios::{timer, Bios};
use crate::cpu::{seg, Cpu};
use crate::machine::{lin, Machine};
use shared_ir::flags;

/// Longest ASCIIZ path DOS accepts.
const MAX_PATH: usize = 128;

fn caller(cpu: &Cpu, m: &mut Machine) -> (u16, u16) {
    let f = hostcall::frame(cpu, m);
    (f.cs, f.ip.wrapping_sub(2))
}

/// Stops the run for a function this DOS does not implement.
pub fn missing(cpu: &Cpu, m: &mut Machine, what: String) -> Outcome {
    let (cs, ip) = caller(cpu, m);
    Outcome::Stop {
        what: format!("unimplemented: {what} at {cs:04X}:{ip:04X}"),
        missing: Some(what),
    }
}

fn error(cpu: &mut Cpu, m: &mut Machine, dos: &mut Dos, code: DosError) {
    dos.last_error = (
        code,
        match code {
            ERR_FILE_NOT_FOUND | ERR_PATH_NOT_FOUND | ERR_NO_MORE_FILES => 8,
            ERR_NO_MEMORY | ERR_TOO_MANY_FILES => 1,
            ERR_ACCESS_DENIED => 3,
            _ => 7,
        },
        if code == ERR_NO_MEMORY { 4 } else { 3 },
        if matches!(code, ERR_FILE_NOT_FOUND | ERR_PATH_NOT_FOUND) {
            2
        } else {
            1
        },
    );
    fail(cpu, m, code);
}

fn asciiz(m: &mut Machine, seg: u16, off: u16) -> Vec<u8> {
    m.read_asciiz(seg, off, MAX_PATH)
}

fn resolve_at(
    dos: &Dos,
    m: &mut Machine,
    seg: u16,
    off: u16,
    wild: bool,
) -> Result<Resolved, DosError> {
    let raw = asciiz(m, seg, off);
    path::resolve(&dos.cwd, &raw, wild)
}

fn resolve_path(dos: &Dos, m: &mut Machine, seg: u16, off: u16) -> Result<Vec<String>, DosError> {
    match resolve_at(dos, m, seg, off, false)? {
        Resolved::Path(c) => Ok(c),
        Resolved::Device(_) => Err(ERR_ACCESS_DENIED),
    }
}

fn stamp(bios: &Bios, now: u64) -> (u16, u16) {
    timer::dos_stamp(&timer::now(bios, now))
}

/// Opens (or creates) a name and gives the current process a handle.
fn open_handle(
    cpu: &Cpu,
    m: &mut Machine,
    dos: &mut Dos,
    bios: &Bios,
    name: Resolved,
    mode: u8,
    create: Option<u8>,
) -> Result<u16, DosError> {
    let target = match name {
        Resolved::Device(d) => Target::Device(d),
        Resolved::Path(comps) => {
            let node = match create {
                Some(attr) => dos.fs.create(&comps, attr, stamp(bios, cpu.clock))?,
                None => {
                    let n = dos.fs.open(&comps)?;
                    if mode & 7 != 0 && dos.fs.node(n).attr & super::files::ATTR_READONLY != 0 {
                        return Err(ERR_ACCESS_DENIED);
                    }
                    n
                }
            };
            Target::File {
                node,
                key: path::key(&comps),
            }
        }
    };
    if mode & 7 > 2 {
        return Err(ERR_INVALID_ACCESS);
    }
    let i = dos.handles.open(target, mode)?;
    match handles::assign(&mut m.mem, dos.current_psp, i) {
        Ok(h) => Ok(h),
        Err(e) => {
            dos.handles.release(i);
            Err(e)
        }
    }
}

/// INT 21h.
pub fn int21(cpu: &mut Cpu, m: &mut Machine, dos: &mut Dos, bios: &mut Bios) -> Outcome {
    let ah = cpu.ah();
    match ah {
        0x00 => {
            exec::terminate(cpu, m, dos, 0, End::Normal);
            return Outcome::Continue;
        }
        0x01 | 0x07 | 0x08 => match console::read_char(m, &mut dos.console) {
            Some(c) => {
                if ah == 0x01 {
                    console::out(m, bios, c);
                }
                cpu.set_al(c);
            }
            None => {
                hostcall::retry(cpu);
                return Outcome::Wait { until: None };
            }
        },
        0x02 => {
            console::out(m, bios, cpu.dl());
            cpu.set_al(cpu.dl());
        }
        0x03 => cpu.set_al(0),
        0x04 | 0x05 => {}
        0x06 => {
            if cpu.dl() == 0xFF {
                match console::read_char(m, &mut dos.console) {
                    Some(c) => {
                        cpu.set_al(c);
                        hostcall::set_zf(cpu, m, false);
                    }
                    None => {
                        cpu.set_al(0);
                        hostcall::set_zf(cpu, m, true);
                    }
                }
            } else {
                console::out(m, bios, cpu.dl());
                cpu.set_al(cpu.dl());
            }
        }
        0x09 => {
            let (ds, dx) = (cpu.ds(), cpu.dx());
            for i in 0..0xFFFFu16 {
                let c = m.rd8(ds, dx.wrapping_add(i));
                if c == b'$' {
                    break;
                }
                console::out(m, bios, c);
            }
            cpu.set_al(b'$');
        }
        0x0A => {
            let (ds, dx) = (cpu.ds(), cpu.dx());
            let max = m.rd8(ds, dx) as usize;
            if max == 0 {
                return Outcome::Continue;
            }
            match console::edit_line(m, bios, &mut dos.console, max - 1) {
                Some(line) => {
                    m.wr8(ds, dx.wrapping_add(1), line.len() as u8);
                    for (i, &c) in line.iter().enumerate() {
                        m.wr8(ds, dx.wrapping_add(2 + i as u16), c);
                    }
                    m.wr8(ds, dx.wrapping_add(2 + line.len() as u16), 0x0D);
                }
                None => {
                    hostcall::retry(cpu);
                    return Outcome::Wait { until: None };
                }
            }
        }
        0x0B => cpu.set_al(if console::char_ready(m, &dos.console) {
            0xFF
        } else {
            0
        }),
        0x0C => {
            // Flush the type-ahead buffer once, then run the input function.
            let f = cpu.al();
            if !matches!(f, 0x01 | 0x06 | 0x07 | 0x08 | 0x0A) {
                while crate::bios::keyboard::pop_key(m).is_some() {}
                dos.console.ext = None;
                cpu.set_al(0);
                return Outcome::Continue;
            }
            // Rewrite the call as the input function itself (so a wait
            // retries the input, not the flush).
            while crate::bios::keyboard::pop_key(m).is_some() {}
            dos.console.ext = None;
            cpu.set_ah(f);
            let r = int21(cpu, m, dos, bios);
            if !matches!(r, Outcome::Wait { .. }) {
                return r;
            }
            return r;
        }
        0x0D => {
            let _ = dos.fs.flush();
        }
        0x0E => cpu.set_al(layout::DRIVES as u8),
        0x0F..=0x17 | 0x21..=0x24 | 0x27 | 0x28 => {
            fcb::service(cpu, m, dos, bios);
        }
        0x18 | 0x1D | 0x1E | 0x20 => cpu.set_al(0),
        0x19 => cpu.set_al(path::DRIVE_C),
        0x1A => dos.dta = (cpu.ds(), cpu.dx()),
        0x1B | 0x1C => {
            if ah == 0x1C && cpu.dl() != 0 && cpu.dl() != path::DRIVE_C + 1 {
                cpu.set_al(0xFF);
            } else {
                cpu.set_al(64);
                cpu.set_cx(512);
                cpu.set_dx(65000);
                cpu.set_seg(seg::DS, DOS_SEG);
                cpu.set_bx(layout::DPB + 0x16);
            }
        }
        0x25 => {
            let v = cpu.al() as u16;
            m.wr16(0, v * 4, cpu.dx());
            m.wr16(0, v * 4 + 2, cpu.ds());
        }
        0x26 => {
            let (src, dst) = (dos.current_psp, cpu.dx());
            let b = m.read_lin(lin(src, 0), 0x100);
            m.write_lin(lin(dst, 0), &b);
            let top = psp::rd16(&m.mem, src, psp::off::MEM_TOP);
            psp::wr16(&mut m.mem, dst, psp::off::MEM_TOP, top);
        }
        0x29 => {
            let (ds, si) = (cpu.ds(), cpu.si());
            let s: Vec<u8> = (0..128).map(|i| m.rd8(ds, si.wrapping_add(i))).collect();
            let (n, f, r) = psp::parse_fcb_name(&s, cpu.al());
            let (es, di) = (cpu.es(), cpu.di());
            // Bits 1-3 keep the old drive/name/extension when none is given.
            let al = cpu.al();
            let mut out: Vec<u8> = (0..16).map(|i| m.rd8(es, di.wrapping_add(i))).collect();
            if f[0] != 0 || al & 2 == 0 {
                out[0] = f[0];
            }
            if f[1] != b' ' || al & 4 == 0 {
                out[1..9].copy_from_slice(&f[1..9]);
            }
            if f[9] != b' ' || al & 8 == 0 {
                out[9..12].copy_from_slice(&f[9..12]);
            }
            for (i, &b) in out.iter().enumerate().take(12) {
                m.wr8(es, di.wrapping_add(i as u16), b);
            }
            for i in 12..16 {
                m.wr8(es, di.wrapping_add(i), 0);
            }
            cpu.set_si(si.wrapping_add(n as u16));
            cpu.set_al(r);
        }
        0x2A => {
            let t = timer::now(bios, cpu.clock);
            cpu.set_cx(t.year);
            cpu.set_dh(t.month);
            cpu.set_dl(t.day);
            cpu.set_al(t.weekday);
        }
        0x2B => match timer::days_of(cpu.cx(), cpu.dh(), cpu.dl()) {
            Some(d) => {
                let cur = timer::now(bios, cpu.clock);
                let tod = (cur.hour as i64 * 3600 + cur.minute as i64 * 60 + cur.second as i64)
                    * 100
                    + cur.hundredths as i64;
                timer::set(bios, cpu.clock, d * 8_640_000 + tod);
                cpu.set_al(0);
            }
            None => cpu.set_al(0xFF),
        },
        0x2C => {
            let t = timer::now(bios, cpu.clock);
            cpu.set_ch(t.hour);
            cpu.set_cl(t.minute);
            cpu.set_dh(t.second);
            cpu.set_dl(t.hundredths);
        }
        0x2D => {
            let (h, mi, s, hs) = (cpu.ch(), cpu.cl(), cpu.dh(), cpu.dl());
            if h < 24 && mi < 60 && s < 60 && hs < 100 {
                let cur = timer::now(bios, cpu.clock);
                let d = timer::days_of(cur.year, cur.month, cur.day).unwrap_or(0);
                let tod = (h as i64 * 3600 + mi as i64 * 60 + s as i64) * 100 + hs as i64;
                timer::set(bios, cpu.clock, d * 8_640_000 + tod);
                cpu.set_al(0);
            } else {
                cpu.set_al(0xFF);
            }
        }
        0x2E => dos.verify = cpu.al() != 0,
        0x2F => {
            cpu.set_seg(seg::ES, dos.dta.0);
            cpu.set_bx(dos.dta.1);
        }
        0x30 => {
            // DOS 5+ keeps a per-process version in the PSP (SETVER).
            cpu.set_al(dos.version.0);
            cpu.set_ah(dos.version.1);
            // BH = OEM (00h IBM), BL:CX = user serial number.
            cpu.set_bx(0);
            cpu.set_cx(0);
        }
        0x31 => {
            let paras = cpu.dx();
            let code = cpu.al();
            exec::terminate(cpu, m, dos, code, End::Resident(paras));
            return Outcome::Continue;
        }
        0x32 => {
            if cpu.dl() == 0 || cpu.dl() == path::DRIVE_C + 1 {
                cpu.set_al(0);
                cpu.set_seg(seg::DS, DOS_SEG);
                cpu.set_bx(layout::DPB);
            } else {
                cpu.set_al(0xFF);
            }
        }
        0x33 => match cpu.al() {
            0x00 => cpu.set_dl(dos.ctrl_break as u8),
            0x01 => dos.ctrl_break = cpu.dl() != 0,
            0x02 => {
                let old = dos.ctrl_break as u8;
                dos.ctrl_break = cpu.dl() != 0;
                cpu.set_dl(old);
            }
            0x05 => cpu.set_dl(path::DRIVE_C + 1),
            0x06 => {
                cpu.set_bl(dos.version.0);
                cpu.set_bh(dos.version.1);
                cpu.set_dx(0);
            }
            _ => cpu.set_al(0xFF),
        },
        0x34 => {
            cpu.set_seg(seg::ES, DOS_SEG);
            cpu.set_bx(layout::INDOS);
        }
        0x35 => {
            let v = cpu.al() as u16;
            let off = m.rd16(0, v * 4);
            let sg = m.rd16(0, v * 4 + 2);
            cpu.set_bx(off);
            cpu.set_seg(seg::ES, sg);
        }
        0x36 => {
            if cpu.dl() == 0 || cpu.dl() == path::DRIVE_C + 1 {
                cpu.set_ax(64);
                cpu.set_bx(32000);
                cpu.set_cx(512);
                cpu.set_dx(65000);
            } else {
                cpu.set_ax(0xFFFF);
            }
        }
        0x37 => match cpu.al() {
            0 => {
                cpu.set_al(0);
                cpu.set_dl(b'/');
            }
            1 => cpu.set_al(0),
            _ => cpu.set_al(0xFF),
        },
        0x38 => {
            if cpu.dx() != 0xFFFF {
                let (ds, dx) = (cpu.ds(), cpu.dx());
                for (i, b) in layout::country_info().into_iter().enumerate() {
                    m.wr8(ds, dx.wrapping_add(i as u16), b);
                }
            }
            cpu.set_bx(1);
            cpu.set_ax(1);
            ok(cpu, m);
        }
        0x39..=0x3B => {
            let r = resolve_path(dos, m, cpu.ds(), cpu.dx()).and_then(|c| match ah {
                0x39 => dos.fs.mkdir(&c),
                0x3A => {
                    if c == dos.cwd {
                        Err(ERR_REMOVE_CWD)
                    } else {
                        dos.fs.rmdir(&c)
                    }
                }
                _ => {
                    if dos.fs.is_dir(&c) {
                        dos.cwd = c;
                        layout::set_cds_path(&mut m.mem, &dos.cwd);
                        Ok(())
                    } else {
                        Err(ERR_PATH_NOT_FOUND)
                    }
                }
            });
            match r {
                Ok(()) => ok(cpu, m),
                Err(e) => error(
                    cpu,
                    m,
                    dos,
                    if ah == 0x39 && e == ERR_FILE_NOT_FOUND {
                        ERR_PATH_NOT_FOUND
                    } else {
                        e
                    },
                ),
            }
        }
        0x3C | 0x3D | 0x5B => {
            let r = resolve_at(dos, m, cpu.ds(), cpu.dx(), false).and_then(|name| {
                if ah == 0x5B {
                    if let Resolved::Path(c) = &name {
                        if dos.fs.attributes(c).is_ok() {
                            return Err(ERR_FILE_EXISTS);
                        }
                    }
                }
                let (mode, create) = if ah == 0x3D {
                    (cpu.al(), None)
                } else {
                    (2, Some(cpu.cl()))
                };
                open_handle(cpu, m, dos, bios, name, mode, create)
            });
            match r {
                Ok(h) => {
                    cpu.set_ax(h);
                    ok(cpu, m);
                }
                Err(e) => error(cpu, m, dos, e),
            }
        }
        0x3E => match handles::resolve(&m.mem, &dos.handles, dos.current_psp, cpu.bx()) {
            Ok(i) => {
                dos.handles.release(i);
                let _ = handles::set(&mut m.mem, dos.current_psp, cpu.bx(), 0xFF);
                let _ = dos.fs.flush();
                ok(cpu, m);
            }
            Err(e) => error(cpu, m, dos, e),
        },
        0x3F => return read_handle(cpu, m, dos, bios),
        0x40 => write_handle(cpu, m, dos, bios),
        0x41 => match resolve_path(dos, m, cpu.ds(), cpu.dx()).and_then(|c| dos.fs.delete(&c)) {
            Ok(()) => ok(cpu, m),
            Err(e) => error(cpu, m, dos, e),
        },
        0x42 => {
            let r =
                handles::resolve(&m.mem, &dos.handles, dos.current_psp, cpu.bx()).and_then(|i| {
                    let e = dos.handles.get_mut(i).unwrap();
                    let offs = ((cpu.cx() as u32) << 16 | cpu.dx() as u32) as i32;
                    handles::seek(&dos.fs, e, cpu.al(), offs)
                });
            match r {
                Ok(p) => {
                    cpu.set_ax(p as u16);
                    cpu.set_dx((p >> 16) as u16);
                    ok(cpu, m);
                }
                Err(e) => error(cpu, m, dos, e),
            }
        }
        0x43 => {
            let r = resolve_at(dos, m, cpu.ds(), cpu.dx(), false).and_then(|n| match n {
                Resolved::Device(_) => Ok(0),
                Resolved::Path(c) => match cpu.al() {
                    0 => dos.fs.attributes(&c).map(|a| a as u16),
                    1 => dos.fs.set_attributes(&c, cpu.cl()).map(|_| cpu.cx()),
                    _ => Err(ERR_INVALID_FUNCTION),
                },
            });
            match r {
                Ok(a) => {
                    cpu.set_cx(a);
                    ok(cpu, m);
                }
                Err(e) => error(cpu, m, dos, e),
            }
        }
        0x44 => return ioctl(cpu, m, dos),
        0x45 | 0x46 => {
            let r =
                handles::resolve(&m.mem, &dos.handles, dos.current_psp, cpu.bx()).and_then(|i| {
                    if ah == 0x45 {
                        let h = handles::assign(&mut m.mem, dos.current_psp, i)?;
                        dos.handles.add_ref(i);
                        Ok(h)
                    } else {
                        let target = cpu.cx();
                        if let Ok(old) =
                            handles::resolve(&m.mem, &dos.handles, dos.current_psp, target)
                        {
                            dos.handles.release(old);
                        }
                        handles::set(&mut m.mem, dos.current_psp, target, i)?;
                        dos.handles.add_ref(i);
                        Ok(target)
                    }
                });
            match r {
                Ok(h) => {
                    if ah == 0x45 {
                        cpu.set_ax(h);
                    }
                    ok(cpu, m);
                }
                Err(e) => error(cpu, m, dos, e),
            }
        }
        0x47 => {
            if cpu.dl() != 0 && cpu.dl() != path::DRIVE_C + 1 {
                error(cpu, m, dos, ERR_INVALID_DRIVE);
            } else {
                let p = path::key(&dos.cwd);
                let (ds, si) = (cpu.ds(), cpu.si());
                for (i, &b) in p.as_bytes().iter().chain([0u8].iter()).enumerate() {
                    m.wr8(ds, si.wrapping_add(i as u16), b);
                }
                cpu.set_ax(0x0100);
                ok(cpu, m);
            }
        }
        0x48 => match memory::alloc(
            &mut m.mem,
            layout::FIRST_MCB,
            cpu.bx(),
            dos.current_psp,
            dos.strategy,
        ) {
            Ok(s) => {
                cpu.set_ax(s);
                ok(cpu, m);
            }
            Err((e, largest)) => {
                cpu.set_bx(largest);
                error(cpu, m, dos, e);
            }
        },
        0x49 => match memory::free(&mut m.mem, layout::FIRST_MCB, cpu.es()) {
            Ok(()) => ok(cpu, m),
            Err(e) => error(cpu, m, dos, e),
        },
        0x4A => match memory::resize(&mut m.mem, layout::FIRST_MCB, cpu.es(), cpu.bx()) {
            Ok(()) => ok(cpu, m),
            Err((e, max)) => {
                cpu.set_bx(max);
                error(cpu, m, dos, e);
            }
        },
        0x4B => return exec_call(cpu, m, dos, bios),
        0x4C => {
            let code = cpu.al();
            exec::terminate(cpu, m, dos, code, End::Normal);
            return Outcome::Continue;
        }
        0x4D => {
            cpu.set_ax(dos.return_code);
            dos.return_code = 0;
            ok(cpu, m);
        }
        0x4E => {
            let raw = asciiz(m, cpu.ds(), cpu.dx());
            let attr = cpu.cl();
            match dos
                .searches
                .first(&mut dos.fs, &dos.cwd.clone(), &raw, attr, dos.current_psp)
            {
                Ok((id, e)) => {
                    let rec = find::dta_record(id, attr, &e);
                    m.write_lin(lin(dos.dta.0, dos.dta.1), &rec);
                    cpu.set_ax(0);
                    ok(cpu, m);
                }
                Err(e) => error(cpu, m, dos, e),
            }
        }
        0x4F => {
            let dta = m.read_lin(lin(dos.dta.0, dos.dta.1), 43);
            let r = find::dta_id(&dta)
                .ok_or(ERR_NO_MORE_FILES)
                .and_then(|id| dos.searches.next(id).map(|e| (id, e)));
            match r {
                Ok((id, e)) => {
                    let rec = find::dta_record(id, dta[12], &e);
                    m.write_lin(lin(dos.dta.0, dos.dta.1), &rec);
                    cpu.set_ax(0);
                    ok(cpu, m);
                }
                Err(e) => error(cpu, m, dos, e),
            }
        }
        0x50 => dos.current_psp = cpu.bx(),
        0x51 | 0x62 => cpu.set_bx(dos.current_psp),
        0x52 => {
            cpu.set_seg(seg::ES, DOS_SEG);
            cpu.set_bx(layout::LOL);
        }
        0x54 => cpu.set_al(dos.verify as u8),
        0x55 => {
            let (src, dst) = (dos.current_psp, cpu.dx());
            let b = m.read_lin(lin(src, 0), 0x100);
            m.write_lin(lin(dst, 0), &b);
            psp::wr16(&mut m.mem, dst, psp::off::MEM_TOP, cpu.si());
            psp::wr16(&mut m.mem, dst, psp::off::PARENT, src);
            psp::wr16(&mut m.mem, dst, psp::off::JFT_PTR, psp::off::JFT);
            psp::wr16(&mut m.mem, dst, psp::off::JFT_PTR + 2, dst);
            let jft = handles::inherit(&m.mem, &mut dos.handles, src);
            psp::wr_bytes(&mut m.mem, dst, psp::off::JFT, &jft);
            dos.current_psp = dst;
        }
        0x56 => {
            let from = resolve_path(dos, m, cpu.ds(), cpu.dx());
            let to = resolve_path(dos, m, cpu.es(), cpu.di());
            match from.and_then(|f| to.and_then(|t| dos.fs.rename(&f, &t))) {
                Ok(()) => ok(cpu, m),
                Err(e) => error(cpu, m, dos, e),
            }
        }
        0x57 => {
            let r =
                handles::resolve(&m.mem, &dos.handles, dos.current_psp, cpu.bx()).and_then(|i| {
                    match dos.handles.get(i).unwrap().target.clone() {
                        Target::File { node, .. } => match cpu.al() {
                            0 => {
                                let n = dos.fs.node(node);
                                Ok((n.time, n.date))
                            }
                            1 => {
                                let n = dos.fs.node_mut(node);
                                n.time = cpu.cx();
                                n.date = cpu.dx();
                                Ok((cpu.cx(), cpu.dx()))
                            }
                            _ => Err(ERR_INVALID_FUNCTION),
                        },
                        Target::Device(_) => Ok(stamp(bios, cpu.clock)),
                    }
                });
            match r {
                Ok((t, d)) => {
                    cpu.set_cx(t);
                    cpu.set_dx(d);
                    ok(cpu, m);
                }
                Err(e) => error(cpu, m, dos, e),
            }
        }
        0x58 => match cpu.al() {
            0 => {
                cpu.set_ax(dos.strategy.code());
                ok(cpu, m);
            }
            1 => match Strategy::from_code(cpu.bx()) {
                Some(s) => {
                    dos.strategy = s;
                    ok(cpu, m);
                }
                None => error(cpu, m, dos, ERR_INVALID_FUNCTION),
            },
            2 => {
                cpu.set_al(memory::upper_linked(&m.mem, layout::FIRST_MCB) as u8);
                ok(cpu, m);
            }
            3 => match memory::link_upper(
                &mut m.mem,
                layout::FIRST_MCB,
                layout::MEM_TOP,
                cpu.bx() & 1 != 0,
            ) {
                Ok(()) => ok(cpu, m),
                Err(e) => error(cpu, m, dos, e),
            },
            _ => error(cpu, m, dos, ERR_INVALID_FUNCTION),
        },
        0x59 => {
            let (code, class, action, locus) = dos.last_error;
            cpu.set_ax(code);
            cpu.set_bh(class);
            cpu.set_bl(action);
            cpu.set_ch(locus);
        }
        0x5A => {
            let (ds, dx) = (cpu.ds(), cpu.dx());
            let mut dir = asciiz(m, ds, dx);
            if !dir.is_empty() && !matches!(dir.last(), Some(b'\\') | Some(b'/') | Some(b':')) {
                dir.push(b'\\');
            }
            let mut made = Err(ERR_ACCESS_DENIED);
            for n in 0..10000u32 {
                let mut name = dir.clone();
                name.extend_from_slice(format!("TMP{n:05}.$$$").as_bytes());
                if let Ok(Resolved::Path(c)) = path::resolve(&dos.cwd, &name, false) {
                    if dos.fs.attributes(&c).is_ok() {
                        continue;
                    }
                    made = open_handle(cpu, m, dos, bios, Resolved::Path(c), 2, Some(cpu.cl()))
                        .map(|h| (h, name));
                } else {
                    made = Err(ERR_PATH_NOT_FOUND);
                }
                break;
            }
            match made {
                Ok((h, name)) => {
                    for (i, &b) in name.iter().chain([0u8].iter()).enumerate() {
                        m.wr8(ds, dx.wrapping_add(i as u16), b);
                    }
                    cpu.set_ax(h);
                    ok(cpu, m);
                }
                Err(e) => error(cpu, m, dos, e),
            }
        }
        0x5C | 0x68 | 0x6A => ok(cpu, m),
        0x5E | 0x5F => {
            dos.decline(format!("INT 21h AH={ah:02X}h"));
            error(cpu, m, dos, ERR_INVALID_FUNCTION);
        }
        0x60 => {
            let (ds, si) = (cpu.ds(), cpu.si());
            let raw = asciiz(m, ds, si);
            match path::resolve(&dos.cwd, &raw, true) {
                Ok(r) => {
                    let s = match r {
                        Resolved::Path(c) => format!("C:\\{}", path::key(&c)),
                        Resolved::Device(d) => format!("C:/{}", d.name()),
                    };
                    let (es, di) = (cpu.es(), cpu.di());
                    for (i, &b) in s.as_bytes().iter().chain([0u8].iter()).enumerate() {
                        m.wr8(es, di.wrapping_add(i as u16), b);
                    }
                    ok(cpu, m);
                }
                Err(e) => error(cpu, m, dos, e),
            }
        }
        0x63 => {
            if cpu.al() == 0 {
                cpu.set_seg(seg::DS, DOS_SEG);
                cpu.set_si(layout::DBCS);
                cpu.set_al(0);
            } else {
                cpu.set_al(0xFF);
            }
        }
        0x65 => {
            let (es, di) = (cpu.es(), cpu.di());
            match cpu.al() {
                0x01 => {
                    let mut b = vec![0x01u8];
                    b.extend_from_slice(&38u16.to_le_bytes());
                    b.extend_from_slice(&1u16.to_le_bytes());
                    b.extend_from_slice(&437u16.to_le_bytes());
                    b.extend_from_slice(&layout::country_info());
                    let n = (cpu.cx() as usize).min(b.len());
                    for (i, &v) in b.iter().take(n).enumerate() {
                        m.wr8(es, di.wrapping_add(i as u16), v);
                    }
                    cpu.set_cx(n as u16);
                    ok(cpu, m);
                }
                0x02 | 0x04 | 0x06 | 0x07 => {
                    m.wr8(es, di, cpu.al());
                    m.wr16(es, di.wrapping_add(1), layout::UPCASE);
                    m.wr16(es, di.wrapping_add(3), DOS_SEG);
                    cpu.set_cx(5);
                    ok(cpu, m);
                }
                0x20 => {
                    let c = cpu.dl();
                    cpu.set_dl(c.to_ascii_uppercase());
                    ok(cpu, m);
                }
                0x21 | 0x22 => {
                    let (ds, dx) = (cpu.ds(), cpu.dx());
                    let n = if cpu.al() == 0x21 { cpu.cx() } else { 0xFFFF };
                    for i in 0..n {
                        let c = m.rd8(ds, dx.wrapping_add(i));
                        if cpu.al() == 0x22 && c == 0 {
                            break;
                        }
                        m.wr8(ds, dx.wrapping_add(i), c.to_ascii_uppercase());
                    }
                    ok(cpu, m);
                }
                _ => error(cpu, m, dos, ERR_INVALID_FUNCTION),
            }
        }
        0x66 => {
            cpu.set_bx(437);
            cpu.set_dx(437);
            ok(cpu, m);
        }
        0x67 => {
            // More handles: a new table in the process's own memory.
            let n = cpu.bx();
            let cur = dos.current_psp;
            if n <= psp::JFT_LEN {
                ok(cpu, m);
            } else {
                match memory::alloc(
                    &mut m.mem,
                    layout::FIRST_MCB,
                    n.div_ceil(16),
                    cur,
                    dos.strategy,
                ) {
                    Ok(s) => {
                        let old_size = psp::rd16(&m.mem, cur, psp::off::JFT_SIZE);
                        let o = psp::rd16(&m.mem, cur, psp::off::JFT_PTR);
                        let sg = psp::rd16(&m.mem, cur, psp::off::JFT_PTR + 2);
                        let mut t = m.read_lin(lin(sg, o), old_size as usize);
                        t.resize(n as usize, 0xFF);
                        m.write_lin(lin(s, 0), &t);
                        psp::wr16(&mut m.mem, cur, psp::off::JFT_SIZE, n);
                        psp::wr16(&mut m.mem, cur, psp::off::JFT_PTR, 0);
                        psp::wr16(&mut m.mem, cur, psp::off::JFT_PTR + 2, s);
                        ok(cpu, m);
                    }
                    Err((e, _)) => error(cpu, m, dos, e),
                }
            }
        }
        0x69 => {
            if cpu.al() == 0 {
                let (ds, dx) = (cpu.ds(), cpu.dx());
                let mut b = vec![0u8, 0];
                b.extend_from_slice(&0x1994_0101u32.to_le_bytes());
                b.extend_from_slice(b"TOYVM      FAT16   ");
                m.write_lin(lin(ds, dx), &b);
            }
            ok(cpu, m);
        }
        0x6C => {
            let (ds, si) = (cpu.ds(), cpu.si());
            let (mode, attr, action) = (cpu.bl(), cpu.cl(), cpu.dl());
            let r = resolve_at(dos, m, ds, si, false).and_then(|name| {
                let exists = match &name {
                    Resolved::Path(c) => dos.fs.attributes(c).is_ok(),
                    Resolved::Device(_) => true,
                };
                match (exists, action & 0x0F, action >> 4) {
                    (true, 1, _) => {
                        open_handle(cpu, m, dos, bios, name, mode, None).map(|h| (h, 1))
                    }
                    (true, 2, _) => {
                        open_handle(cpu, m, dos, bios, name, mode, Some(attr)).map(|h| (h, 3))
                    }
                    (false, _, 1) => {
                        open_handle(cpu, m, dos, bios, name, mode, Some(attr)).map(|h| (h, 2))
                    }
                    (true, _, _) => Err(ERR_FILE_EXISTS),
                    (false, _, _) => Err(ERR_FILE_NOT_FOUND),
                }
            });
            match r {
                Ok((h, act)) => {
                    cpu.set_ax(h);
                    cpu.set_cx(act);
                    ok(cpu, m);
                }
                Err(e) => error(cpu, m, dos, e),
            }
        }
        // Long file names (Windows 95 DOS): not present.
        0x71 => {
            dos.decline(format!("INT 21h AX={:04X}h", cpu.ax()));
            fail(cpu, m, 0x7100);
        }
        0x53 | 0x5D | 0x61 | 0x64 | 0x6B | 0x6D..=0x70 | 0x72..=0xFF => {
            dos.decline(format!("INT 21h AH={ah:02X}h"));
            error(cpu, m, dos, ERR_INVALID_FUNCTION);
            cpu.set_al(0);
        }
        _ => return missing(cpu, m, format!("INT 21h AH={ah:02X}h")),
    }
    Outcome::Continue
}

fn read_handle(cpu: &mut Cpu, m: &mut Machine, dos: &mut Dos, bios: &mut Bios) -> Outcome {
    let i = match handles::resolve(&m.mem, &dos.handles, dos.current_psp, cpu.bx()) {
        Ok(i) => i,
        Err(e) => {
            error(cpu, m, dos, e);
            return Outcome::Continue;
        }
    };
    let n = cpu.cx() as usize;
    let e = dos.handles.get_mut(i).unwrap();
    let data = match e.target.clone() {
        Target::Device(Device::Con) => match console::read_cooked(m, bios, &mut dos.console, n) {
            Some(d) => d,
            None => {
                hostcall::retry(cpu);
                return Outcome::Wait { until: None };
            }
        },
        Target::Device(_) => Vec::new(),
        Target::File { .. } => match handles::read_file(&dos.fs, e, n) {
            Ok(d) => d,
            Err(code) => {
                error(cpu, m, dos, code);
                return Outcome::Continue;
            }
        },
    };
    let base = lin(cpu.ds(), cpu.dx());
    m.write_lin(base, &data);
    cpu.set_ax(data.len() as u16);
    ok(cpu, m);
    Outcome::Continue
}

fn write_handle(cpu: &mut Cpu, m: &mut Machine, dos: &mut Dos, bios: &mut Bios) {
    let i = match handles::resolve(&m.mem, &dos.handles, dos.current_psp, cpu.bx()) {
        Ok(i) => i,
        Err(e) => return error(cpu, m, dos, e),
    };
    let n = cpu.cx() as usize;
    let data = m.read_lin(lin(cpu.ds(), cpu.dx()), n);
    let e = dos.handles.get_mut(i).unwrap();
    let r = match e.target.clone() {
        Target::Device(Device::Con) => {
            console::out_bytes(m, bios, &data);
            Ok(n)
        }
        Target::Device(_) => Ok(n),
        Target::File { .. } => handles::write_file(&mut dos.fs, e, &data),
    };
    match r {
        Ok(k) => {
            cpu.set_ax(k as u16);
            ok(cpu, m);
        }
        Err(code) => error(cpu, m, dos, code),
    }
}

fn ioctl(cpu: &mut Cpu, m: &mut Machine, dos: &mut Dos) -> Outcome {
    let al = cpu.al();
    let handle_fn = matches!(
        al,
        0x00 | 0x01 | 0x02 | 0x03 | 0x06 | 0x07 | 0x0A | 0x0C | 0x10
    );
    let sft = if handle_fn {
        match handles::resolve(&m.mem, &dos.handles, dos.current_psp, cpu.bx()) {
            Ok(i) => Some(i),
            Err(e) => {
                error(cpu, m, dos, e);
                return Outcome::Continue;
            }
        }
    } else {
        None
    };
    let entry = sft.and_then(|i| dos.handles.get(i)).cloned();
    match al {
        0x00 => {
            let info = entry.unwrap().info;
            cpu.set_dx(info);
            cpu.set_ax(info);
            ok(cpu, m);
        }
        0x01 => {
            let e = dos.handles.get_mut(sft.unwrap()).unwrap();
            if e.info & 0x80 != 0 {
                e.info = (e.info & 0xFF00) | (cpu.dl() as u16 & 0xFF) | 0x80;
            }
            ok(cpu, m);
        }
        0x06 => {
            let e = entry.unwrap();
            let ready = match &e.target {
                Target::Device(Device::Con) => console::char_ready(m, &dos.console),
                Target::Device(_) => true,
                Target::File { node, .. } => (e.pos as usize) < dos.fs.node(*node).data.len(),
            };
            cpu.set_al(if ready { 0xFF } else { 0 });
            ok(cpu, m);
        }
        0x07 => {
            cpu.set_al(0xFF);
            ok(cpu, m);
        }
        0x02 | 0x03 | 0x0C => {
            // Device control strings: only EMMXXXX0 answers (EMS drivers
            // report their entry when asked with subfunction 0).
            if matches!(entry.map(|e| e.target), Some(Target::Device(Device::Emm))) && al == 0x02 {
                let (ds, dx) = (cpu.ds(), cpu.dx());
                m.wr8(ds, dx, 0x25);
                m.wr16(ds, dx.wrapping_add(1), crate::bios::rom::EMS_ENTRY);
                m.wr16(ds, dx.wrapping_add(3), crate::bios::rom::EMS_SEG);
                cpu.set_ax(6);
                ok(cpu, m);
            } else {
                error(cpu, m, dos, ERR_INVALID_FUNCTION);
            }
        }
        0x08 => {
            if cpu.bl() == 0 || cpu.bl() == path::DRIVE_C + 1 {
                cpu.set_ax(1);
                ok(cpu, m);
            } else {
                error(cpu, m, dos, ERR_INVALID_DRIVE);
            }
        }
        0x09 => {
            if cpu.bl() == 0 || cpu.bl() == path::DRIVE_C + 1 {
                cpu.set_dx(0x0000);
                ok(cpu, m);
            } else {
                error(cpu, m, dos, ERR_INVALID_DRIVE);
            }
        }
        0x0A => {
            cpu.set_dx(0);
            ok(cpu, m);
        }
        0x0B => ok(cpu, m),
        0x0E => {
            cpu.set_al(0);
            ok(cpu, m);
        }
        0x0D | 0x0F | 0x10 | 0x11 => {
            dos.decline(format!("INT 21h AX=44{al:02X}h"));
            error(cpu, m, dos, ERR_INVALID_FUNCTION);
        }
        _ => return missing(cpu, m, format!("INT 21h AX=44{al:02X}h")),
    }
    Outcome::Continue
}

fn exec_call(cpu: &mut Cpu, m: &mut Machine, dos: &mut Dos, bios: &mut Bios) -> Outcome {
    let al = cpu.al();
    let (es, bx) = (cpu.es(), cpu.bx());
    let name = asciiz(m, cpu.ds(), cpu.dx());
    let comps = match path::resolve(&dos.cwd, &name, false) {
        Ok(Resolved::Path(c)) => c,
        Ok(Resolved::Device(_)) => {
            error(cpu, m, dos, ERR_FILE_NOT_FOUND);
            return Outcome::Continue;
        }
        Err(e) => {
            error(cpu, m, dos, e);
            return Outcome::Continue;
        }
    };
    let mode = match al {
        0x00 => Mode::Run,
        0x01 => Mode::Load { block: (es, bx) },
        0x03 => Mode::Overlay {
            seg: m.rd16(es, bx),
            reloc: m.rd16(es, bx.wrapping_add(2)),
        },
        _ => {
            error(cpu, m, dos, ERR_INVALID_FUNCTION);
            return Outcome::Continue;
        }
    };
    let (env_seg, tail, fcbs) = if matches!(mode, Mode::Overlay { .. }) {
        (0, Vec::new(), None)
    } else {
        let env = m.rd16(es, bx);
        let t_off = m.rd16(es, bx.wrapping_add(2));
        let t_seg = m.rd16(es, bx.wrapping_add(4));
        let len = m.rd8(t_seg, t_off).min(126) as u16;
        let tail: Vec<u8> = (0..len)
            .map(|i| m.rd8(t_seg, t_off.wrapping_add(1 + i)))
            .collect();
        let f1 = (
            m.rd16(es, bx.wrapping_add(8)),
            m.rd16(es, bx.wrapping_add(6)),
        );
        let f2 = (
            m.rd16(es, bx.wrapping_add(12)),
            m.rd16(es, bx.wrapping_add(10)),
        );
        (env, tail, Some((f1, f2)))
    };
    // COMMAND.COM /C: run the command itself (there is no COMMAND.COM).
    let mut comps = comps;
    let mut tail = tail;
    let mut fcbs = fcbs;
    if comps.last().map(String::as_str) == Some("COMMAND.COM") && mode == Mode::Run {
        match exec::command_c(&tail) {
            Some((cmd, rest)) => match exec::find_command(dos, &cmd) {
                Some(c) => {
                    comps = c;
                    tail = rest;
                    fcbs = None;
                }
                None => {
                    console::out_bytes(m, bios, b"Bad command or file name\r\n");
                    dos.return_code = 0;
                    ok(cpu, m);
                    return Outcome::Continue;
                }
            },
            None => {
                error(cpu, m, dos, ERR_FILE_NOT_FOUND);
                return Outcome::Continue;
            }
        }
    }
    let req = Request {
        comps,
        tail: &tail,
        env_seg,
        fcbs,
        mode,
    };
    match exec::exec(cpu, m, dos, req) {
        Ok(()) => {
            if mode != Mode::Run {
                ok(cpu, m);
            }
        }
        Err(ExecError::Dos(e)) => error(cpu, m, dos, e),
        Err(ExecError::Unsupported(what)) => {
            return Outcome::Stop {
                what: format!("EXEC of {what}"),
                missing: None,
            }
        }
    }
    Outcome::Continue
}

/// INT 20h: terminate (CS must be the PSP; we end the current process).
pub fn int20(cpu: &mut Cpu, m: &mut Machine, dos: &mut Dos) -> Outcome {
    exec::terminate(cpu, m, dos, 0, End::Normal);
    Outcome::Continue
}

/// INT 27h: terminate and stay resident keeping DX bytes.
pub fn int27(cpu: &mut Cpu, m: &mut Machine, dos: &mut Dos) -> Outcome {
    let paras = (cpu.dx() as u32).div_ceil(16) as u16;
    exec::terminate(cpu, m, dos, 0, End::Resident(paras));
    Outcome::Continue
}

/// The CP/M entry (`CALL 5`, function in CL). The service runs inside a
/// scratch interrupt frame so functions that return flags have one.
pub fn cpm_call(cpu: &mut Cpu, m: &mut Machine, dos: &mut Dos, bios: &mut Bios) -> Outcome {
    let f = cpu.cl();
    if f > 0x24 {
        cpu.set_al(0);
        return Outcome::Continue;
    }
    let (ss, sp) = (cpu.ss(), cpu.sp());
    let fsp = sp.wrapping_sub(6);
    m.wr16(ss, fsp, 0);
    m.wr16(ss, fsp.wrapping_add(2), 0);
    m.wr16(ss, fsp.wrapping_add(4), cpu.flags.bits() as u16);
    cpu.set_sp(fsp);
    cpu.set_ah(f);
    let r = int21(cpu, m, dos, bios);
    if matches!(r, Outcome::Wait { .. }) {
        // Retry from the CP/M stub with the original stack and CL intact.
        cpu.set_sp(sp);
        return r;
    }
    if cpu.ss() == ss && cpu.sp() == fsp {
        cpu.set_sp(sp);
    }
    r
}

/// INT 2Fh: the multiplex interrupt.
pub fn int2f(cpu: &mut Cpu, m: &mut Machine, dos: &mut Dos) -> Outcome {
    match cpu.ax() {
        // XMS driver present, and its entry point.
        0x4300 => cpu.set_al(0x80),
        0x4310 => {
            cpu.set_seg(seg::ES, BIOS_SEG);
            cpu.set_bx(dos.rom.xms_entry);
        }
        // No Windows, no DPMI host, no DOS extender services.
        0x1600 | 0x160A | 0x1680 | 0x1687 | 0x168F => {
            if cpu.ax() == 0x1687 {
                // AX stays nonzero: no DPMI host.
            } else if cpu.ax() == 0x1600 {
                cpu.set_al(0);
            }
            dos.decline(format!("INT 2Fh AX={:04X}h", cpu.ax()));
        }
        // Everything else: the install check answers "not installed"
        // (AL=0), other subfunctions leave registers alone, as when no
        // resident program claims the multiplex number.
        _ => {
            dos.decline(format!("INT 2Fh AH={:02X}h", cpu.ah()));
            if cpu.al() == 0 {
                cpu.set_al(0);
            }
        }
    }
    let _ = m;
    Outcome::Continue
}

/// Sets CF in the live flags only (services called without a frame).
pub fn set_live_cf(cpu: &mut Cpu, on: bool) {
    cpu.flags.set_mask(flags::CF, on);
}

#[allow(dead_code)]
fn unused(_: &Cpu) -> u16 {
    ATTR_DIRECTORY as u16
}
