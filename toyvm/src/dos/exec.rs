//! Processes: EXEC (INT 21h 4Bh: load and run, load only, overlay), the
//! COMMAND.COM /C shim, and termination (00h, 4Ch, INT 20h, TSR 31h and
//! INT 27h) returning to the parent.
//!
//! Owns placing a load image in memory (environment, PSP, relocation, the
//! registers a program starts with) and unwinding to the parent. It must
//! not parse executable formats (`loader` does) or manage MCBs itself
//! (`dos::memory` does).

use super::handles;
use super::layout;
use super::memory::{self, Strategy};
use super::path::{self, DosError, Resolved};
use super::psp::{self, off};
use super::{Dos, ExecFrame};
use crate::bios::hostcall::Regs;
use crate::cpu::{seg, Cpu};
use crate::loader::{self, Image, LoadError};
use crate::machine::Machine;
use shared_ir::flags;

/// What to do with a loaded program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// AL=00h: run it now.
    Run,
    /// AL=01h: load it and return its entry registers (debuggers).
    Load { block: (u16, u16) },
    /// AL=03h: load an overlay at a segment with a relocation factor.
    Overlay { seg: u16, reloc: u16 },
}

/// Why an EXEC failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExecError {
    /// A DOS error code for the caller.
    Dos(DosError),
    /// The program cannot run on this machine at all (a stop, not an error
    /// a program could handle).
    Unsupported(String),
}

impl From<DosError> for ExecError {
    fn from(e: DosError) -> Self {
        ExecError::Dos(e)
    }
}

/// A program to EXEC.
pub struct Request<'a> {
    pub comps: Vec<String>,
    pub tail: &'a [u8],
    /// Environment segment to copy (0: the parent's).
    pub env_seg: u16,
    /// The caller's FCB pointers (None: parse them from the tail).
    pub fcbs: Option<((u16, u16), (u16, u16))>,
    pub mode: Mode,
}

fn full_name(comps: &[String]) -> String {
    format!("C:\\{}", path::key(comps))
}

/// Reads a program's bytes from drive C:.
fn read_program(dos: &mut Dos, comps: &[String]) -> Result<Vec<u8>, DosError> {
    let node = dos.fs.open(comps)?;
    Ok(dos.fs.node(node).data.clone())
}

/// Loads (and for `Mode::Run` starts) a program as a child of the current
/// process. The caller's interrupt frame is at SS:SP.
pub fn exec(cpu: &mut Cpu, m: &mut Machine, dos: &mut Dos, req: Request) -> Result<(), ExecError> {
    let bytes = read_program(dos, &req.comps)?;
    let image = match loader::parse(&bytes) {
        Ok(i) => i,
        Err(LoadError::Unsupported(what)) => {
            return Err(ExecError::Unsupported(format!(
                "{}: {what}",
                full_name(&req.comps)
            )))
        }
        Err(LoadError::TooBig(_)) => return Err(ExecError::Dos(path::ERR_NO_MEMORY)),
        Err(_) => return Err(ExecError::Dos(path::ERR_BAD_FORMAT)),
    };
    if let Mode::Overlay { seg: load, reloc } = req.mode {
        let data = match &image {
            Image::Com(c) => c.bytes.clone(),
            Image::Exe(e) => e.relocated(reloc),
        };
        m.write_lin((load as u32) << 4, &data);
        return Ok(());
    }
    let first = layout::FIRST_MCB;
    let parent = dos.current_psp;

    // Environment: the given block or the parent's, plus the program name.
    let src_env = if req.env_seg != 0 {
        req.env_seg
    } else {
        psp::rd16(&m.mem, parent, off::ENV)
    };
    let mut env = if src_env != 0 {
        psp::read_env_vars(&m.mem, src_env)
    } else {
        vec![0, 0]
    };
    env.extend_from_slice(&1u16.to_le_bytes());
    env.extend_from_slice(full_name(&req.comps).as_bytes());
    env.push(0);
    let env_paras = (env.len() as u16).div_ceil(16);
    let env_seg =
        memory::alloc(&mut m.mem, first, env_paras, parent, Strategy::FIRST).map_err(|(e, _)| e)?;

    // The program's block, sized as MS-DOS's EXEC does: a COM program gets
    // the largest block; an EXE needs its image plus the PSP plus its
    // minimum allocation and gets up to its maximum; a maximum of zero
    // means "load high": the largest block, the image at its top.
    let largest = memory::largest_free(&mut m.mem, first) as u32;
    let image_paras = image.image_paragraphs() + 0x10;
    let (size, load_high) = match &image {
        Image::Com(_) => (largest, false),
        Image::Exe(e) => {
            let h = e.header;
            if largest < 0x11 || image_paras > largest {
                (0, false)
            } else if h.max_alloc == 0 {
                (largest, true)
            } else if image_paras + h.min_alloc as u32 > largest {
                (0, false)
            } else {
                ((image_paras + h.max_alloc as u32).min(largest), false)
            }
        }
    };
    if size == 0 || (matches!(image, Image::Com(_)) && size < image_paras) {
        let _ = memory::free(&mut m.mem, first, env_seg);
        return Err(ExecError::Dos(path::ERR_NO_MEMORY));
    }
    let size = size.min(0xFFFF) as u16;
    let psp_seg = match memory::alloc(&mut m.mem, first, size, parent, Strategy::FIRST) {
        Ok(s) => s,
        Err((e, _)) => {
            let _ = memory::free(&mut m.mem, first, env_seg);
            return Err(ExecError::Dos(e));
        }
    };
    // Both blocks belong to the child, named after it (DOS 4+).
    let name = req
        .comps
        .last()
        .map(|n| n.split('.').next().unwrap_or("").as_bytes().to_vec())
        .unwrap_or_default();
    for blk in [env_seg, psp_seg] {
        let mut mcb = memory::read(&m.mem, blk - 1).expect("just allocated");
        mcb.owner = psp_seg;
        memory::write(&mut m.mem, &mcb);
    }
    memory::set_name(&mut m.mem, psp_seg - 1, &name);
    m.mem.load((env_seg as u32) << 4, &env);

    // The PSP.
    let (ss, sp) = (cpu.ss(), cpu.sp());
    let ret_ip = m.rd16(ss, sp);
    let ret_cs = m.rd16(ss, sp.wrapping_add(2));
    let vec = |m: &mut Machine, v: u16| (m.rd16(0, v * 4 + 2), m.rd16(0, v * 4));
    let ctrl_break = vec(m, 0x23);
    let crit_error = vec(m, 0x24);
    let jft = handles::inherit(&m.mem, &mut dos.handles, parent);
    psp::build(
        &mut m.mem,
        &psp::PspInit {
            seg: psp_seg,
            mem_top: psp_seg + size,
            parent,
            env: env_seg,
            jft,
            terminate: (ret_cs, ret_ip),
            ctrl_break,
            crit_error,
            tail: req.tail,
            version: dos.version,
        },
    );
    if let Some((f1, f2)) = req.fcbs {
        for (src, dst) in [(f1, off::FCB1), (f2, off::FCB2)] {
            if src.0 != 0 || src.1 != 0 {
                let b: Vec<u8> = (0..16)
                    .map(|i| m.rd8(src.0, src.1.wrapping_add(i)))
                    .collect();
                psp::wr_bytes(&mut m.mem, psp_seg, dst, &b);
            }
        }
    }
    let fcb_ok = |m: &Machine, o: u16| {
        let d = m.mem.read8(((psp_seg as u32) << 4) + o as u32);
        if d == 0 || d == path::DRIVE_C + 1 {
            0u16
        } else {
            0xFF
        }
    };
    let ax = fcb_ok(m, off::FCB1) | fcb_ok(m, off::FCB2) << 8;

    // The image.
    let load_seg = if load_high {
        psp_seg + size - (image_paras as u16 - 0x10)
    } else {
        psp_seg + 0x10
    };
    let (cs, ip, new_ss, new_sp) = match &image {
        Image::Com(c) => {
            m.mem.load(((psp_seg as u32) << 4) + 0x100, &c.bytes);
            let top = (size as u32 * 16).min(0x10000) - 2;
            psp::wr16(&mut m.mem, psp_seg, top as u16, 0);
            (psp_seg, 0x100u16, psp_seg, top as u16)
        }
        Image::Exe(e) => {
            m.mem.load((load_seg as u32) << 4, &e.relocated(load_seg));
            let h = e.header;
            (
                load_seg.wrapping_add(h.cs),
                h.ip,
                load_seg.wrapping_add(h.ss),
                h.sp,
            )
        }
    };

    // Parent bookkeeping: its stack, INT 22h, the new current process.
    psp::wr16(&mut m.mem, parent, off::SAVED_SSSP, sp);
    psp::wr16(&mut m.mem, parent, off::SAVED_SSSP + 2, ss);
    m.wr16(0, 0x22 * 4, ret_ip);
    m.wr16(0, 0x22 * 4 + 2, ret_cs);
    dos.current_psp = psp_seg;
    dos.dta = (psp_seg, 0x80);

    match req.mode {
        Mode::Load { block } => {
            // Initial SS:SP (with AX pushed) and CS:IP into the block.
            let sp2 = new_sp.wrapping_sub(2);
            m.wr16(new_ss, sp2, ax);
            m.wr16(block.0, block.1.wrapping_add(0x0E), sp2);
            m.wr16(block.0, block.1.wrapping_add(0x10), new_ss);
            m.wr16(block.0, block.1.wrapping_add(0x12), ip);
            m.wr16(block.0, block.1.wrapping_add(0x14), cs);
            cpu.set_ax(0);
        }
        _ => {
            dos.exec_stack.push(ExecFrame {
                child: psp_seg,
                parent,
                regs: cpu.regs,
                sregs: cpu.sregs,
            });
            for (s, v) in [
                (seg::CS, cs),
                (seg::SS, new_ss),
                (seg::DS, psp_seg),
                (seg::ES, psp_seg),
            ] {
                cpu.set_seg(s, v);
            }
            cpu.regs = [0; 8];
            cpu.set_ax(ax);
            cpu.set_cx(0x00FF);
            cpu.set_dx(psp_seg);
            cpu.set_si(ip);
            cpu.set_di(new_sp);
            cpu.set_bp(0x091C);
            cpu.set_sp(new_sp);
            cpu.eip = ip as u32;
            cpu.flags.set_bits(flags::IF | 0x0002);
        }
    }
    Ok(())
}

/// How a process ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Normal,
    /// Stay resident keeping this many paragraphs of the PSP block.
    Resident(u16),
}

/// Ends the current process with `code` and resumes its parent at the
/// terminate address (PSP:0Ah) on the stack it EXECed from, with CF clear.
pub fn terminate(cpu: &mut Cpu, m: &mut Machine, dos: &mut Dos, code: u8, how: End) {
    let first = layout::FIRST_MCB;
    let child = dos.current_psp;
    let parent = psp::rd16(&m.mem, child, off::PARENT);
    // INT 22h-24h as they were when the child started.
    for (v, o) in [
        (0x22u16, off::TERMINATE),
        (0x23, off::CTRL_BREAK),
        (0x24, off::CRIT_ERROR),
    ] {
        let ip = psp::rd16(&m.mem, child, o);
        let cs = psp::rd16(&m.mem, child, o + 2);
        m.wr16(0, v * 4, ip);
        m.wr16(0, v * 4 + 2, cs);
    }
    let term_ip = psp::rd16(&m.mem, child, off::TERMINATE);
    let term_cs = psp::rd16(&m.mem, child, off::TERMINATE + 2);
    match how {
        End::Normal => {
            handles::close_all(&mut m.mem, &mut dos.handles, child);
            memory::free_owned(&mut m.mem, first, child);
            dos.return_code = code as u16;
        }
        End::Resident(paras) => {
            let _ = memory::resize(&mut m.mem, first, child, paras.max(6));
            dos.return_code = 0x0300 | code as u16;
        }
    }
    let _ = dos.fs.flush();
    dos.searches.forget_owner(child);
    dos.current_psp = parent;
    dos.dta = (parent, 0x80);
    // The parent's registers (AX is the caller's business after EXEC).
    if let Some(pos) = dos.exec_stack.iter().rposition(|f| f.child == child) {
        let f = dos.exec_stack.remove(pos);
        dos.exec_stack.truncate(pos);
        cpu.regs = f.regs;
        for (s, &v) in f.sregs.iter().enumerate() {
            cpu.set_seg(s, v);
        }
    }
    let sp = psp::rd16(&m.mem, parent, off::SAVED_SSSP);
    let ss = psp::rd16(&m.mem, parent, off::SAVED_SSSP + 2);
    // Perform the parent's IRET here: CS:IP = terminate address, FLAGS from
    // the frame with CF clear.
    let fl = m.rd16(ss, sp.wrapping_add(4));
    cpu.set_seg(seg::SS, ss);
    cpu.set_sp(sp.wrapping_add(6));
    cpu.set_seg(seg::CS, term_cs);
    cpu.eip = term_ip as u32;
    cpu.flags.set_bits((fl & !(flags::CF as u16)) as u32);
    cpu.set_ax(dos.return_code);
}

/// Splits `COMMAND.COM /C PROG ARGS` into (PROG, " ARGS"); None when the
/// tail is not a /C command.
pub fn command_c(tail: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    let t: Vec<u8> = tail.to_vec();
    let s = t.iter().position(|&c| c != b' ' && c != b'\t')?;
    let rest = &t[s..];
    if rest.len() < 2 || rest[0] != b'/' || !rest[1].eq_ignore_ascii_case(&b'c') {
        return None;
    }
    let rest = &rest[2..];
    let s = rest.iter().position(|&c| c != b' ' && c != b'\t')?;
    let rest = &rest[s..];
    let e = rest
        .iter()
        .position(|&c| c == b' ' || c == b'\t' || c == b'/')
        .unwrap_or(rest.len());
    Some((rest[..e].to_vec(), rest[e..].to_vec()))
}

/// Finds a command's program on C: as COMMAND.COM would: the name as given,
/// then with .COM and .EXE, in the current directory and then the root.
pub fn find_command(dos: &mut Dos, name: &[u8]) -> Option<Vec<String>> {
    let has_ext = name
        .rsplit(|&c| c == b'\\' || c == b'/')
        .next()
        .is_some_and(|n| n.contains(&b'.'));
    let exts: &[&[u8]] = if has_ext { &[b""] } else { &[b".COM", b".EXE"] };
    let cwd = dos.cwd.clone();
    for dir in [cwd, Vec::new()] {
        for ext in exts {
            let mut n = name.to_vec();
            n.extend_from_slice(ext);
            if let Ok(Resolved::Path(c)) = path::resolve(&dir, &n, false) {
                if dos.fs.open(&c).is_ok() {
                    return Some(c);
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_c_splits() {
        assert_eq!(
            command_c(b" /c prog.exe a b"),
            Some((b"prog.exe".to_vec(), b" a b".to_vec()))
        );
        assert_eq!(
            command_c(b"/Cfoo/x"),
            Some((b"foo".to_vec(), b"/x".to_vec()))
        );
        assert_eq!(command_c(b" x"), None);
    }
}
