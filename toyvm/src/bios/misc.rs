//! The small BIOS services: INT 11h (equipment), INT 12h (memory size) and
//! INT 15h (system services: waits, A20, extended memory, configuration).
//!
//! Owns only their register conventions. It must not keep the A20 state (the
//! devices own the gate; it is moved through port 92h) nor spin the host
//! while waiting: a wait returns [`Outcome::Wait`] and the session advances
//! the clock.

use super::bda::{self, EQUIPMENT};
use super::hostcall::{self, Outcome, Regs};
use super::rom::{at, BIOS_SEG};
use super::timer::DISPATCHES_PER_SECOND;
use super::Bios;
use crate::bus::{Bus, Width};
use crate::cpu::{seg, Cpu};
use crate::machine::Machine;

pub fn int11(cpu: &mut Cpu, m: &mut Machine) {
    cpu.set_ax(bda::rd16(&m.mem, EQUIPMENT));
}

pub fn int12(cpu: &mut Cpu, m: &mut Machine) {
    cpu.set_ax(bda::rd16(&m.mem, bda::MEMORY_KB));
}

fn unsupported(cpu: &mut Cpu, m: &mut Machine) {
    cpu.set_ah(0x86);
    hostcall::set_cf(cpu, m, true);
}

/// INT 15h. Returns `None` for a function that is not known at all (the
/// caller stops the run); known-but-absent features answer "unsupported"
/// (AH=86h, CF=1) and are recorded as declined.
pub fn int15(cpu: &mut Cpu, m: &mut Machine, bios: &mut Bios) -> Option<Outcome> {
    match cpu.ah() {
        // Keyboard intercept: let the BIOS process the key.
        0x4F => hostcall::set_cf(cpu, m, true),
        // Wait CX:DX microseconds (4 dispatches per microsecond). Interrupts
        // are enabled by the stub, so the timer keeps ticking meanwhile.
        0x86 => {
            let deadline = match bios.wait_until {
                Some(d) => d,
                None => {
                    let us = (cpu.cx() as u64) << 16 | cpu.dx() as u64;
                    let d = cpu.clock + us * (DISPATCHES_PER_SECOND / 1_000_000);
                    bios.wait_until = Some(d);
                    d
                }
            };
            if cpu.clock < deadline {
                hostcall::retry(cpu);
                return Some(Outcome::Wait {
                    until: Some(deadline),
                });
            }
            bios.wait_until = None;
            cpu.set_ah(0);
            hostcall::set_cf(cpu, m, false);
        }
        0x87 => {
            block_move(cpu, m);
            cpu.set_ah(0);
            hostcall::set_cf(cpu, m, false);
        }
        // Extended memory belongs to the XMS driver (as with HIMEM loaded).
        0x88 => {
            cpu.set_ax(0);
            hostcall::set_cf(cpu, m, false);
        }
        0x90 | 0x91 => {
            cpu.set_ah(0);
            hostcall::set_cf(cpu, m, false);
        }
        0xC0 => {
            cpu.set_seg(seg::ES, BIOS_SEG);
            cpu.set_bx(at::CONFIG_TABLE);
            cpu.set_ah(0);
            hostcall::set_cf(cpu, m, false);
        }
        0x24 => {
            match cpu.al() {
                0x00 | 0x01 => {
                    let v = m.io_read(0x92, Width::W8, cpu.clock) as u8;
                    let v = if cpu.al() == 1 { v | 2 } else { v & !2 };
                    m.io_write(0x92, Width::W8, (v & !1) as u32, cpu.clock);
                }
                0x02 => cpu.set_al(m.mem.a20() as u8),
                0x03 => cpu.set_bx(0x0003),
                _ => {
                    unsupported(cpu, m);
                    return Some(Outcome::Continue);
                }
            }
            cpu.set_ah(0);
            hostcall::set_cf(cpu, m, false);
        }
        0xE8 if cpu.al() == 0x01 => {
            // 1-16 MiB in KiB, above 16 MiB in 64 KiB blocks (none).
            cpu.set_ax(15 * 1024);
            cpu.set_cx(15 * 1024);
            cpu.set_bx(0);
            cpu.set_dx(0);
            hostcall::set_cf(cpu, m, false);
        }
        // Anything else (APM, PS/2 mouse, EBDA, multitasking hooks, vendor
        // probes): the AT BIOS answer for an unsupported function.
        _ => {
            bios.decline(format!("INT 15h AH={:02X}h", cpu.ah()));
            unsupported(cpu, m);
        }
    }
    Some(Outcome::Continue)
}

/// INT 13h: there are no BIOS disks (drive C: is a DOS-level overlay).
/// Every function answers as for an absent drive (the equipment word lists
/// no diskette either).
pub fn int13(cpu: &mut Cpu, m: &mut Machine, bios: &mut Bios) -> Option<Outcome> {
    match cpu.ah() {
        0x00 | 0x01 | 0x0D => {
            cpu.set_ah(0);
            hostcall::set_cf(cpu, m, false);
        }
        0x08 => {
            cpu.set_ah(0x01);
            cpu.set_dl(0);
            hostcall::set_cf(cpu, m, true);
        }
        0x15 => {
            cpu.set_ah(0);
            hostcall::set_cf(cpu, m, false);
        }
        // Sector I/O, formatting, extensions: there is no such drive.
        _ => {
            bios.decline(format!("INT 13h AH={:02X}h", cpu.ah()));
            cpu.set_ah(0x01);
            hostcall::set_cf(cpu, m, true);
        }
    }
    Some(Outcome::Continue)
}

/// INT 25h/26h (absolute disk read/write): drive C: is a directory, not a
/// disk, so DOS answers as for a redirected drive: CF=1, AX=8002h (drive
/// not ready). FLAGS stay on the stack as the convention wants; CF is
/// returned live.
pub fn int25_26(cpu: &mut Cpu, bios: &mut Bios, v: u8) -> Outcome {
    bios.decline(format!("INT {v:02X}h"));
    cpu.set_ax(0x8002);
    cpu.flags.set_mask(shared_ir::flags::CF, true);
    Outcome::Continue
}

/// AH=87h: copy CX words between the 24-bit bases of the descriptors at
/// ES:SI+10h (source) and ES:SI+18h (destination), A20 ignored as the BIOS
/// switches to protected mode to do it.
fn block_move(cpu: &Cpu, m: &mut Machine) {
    let (es, si) = (cpu.es(), cpu.si());
    let base = |m: &mut Machine, d: u16| {
        let o = si.wrapping_add(d);
        m.rd16(es, o.wrapping_add(2)) as u32
            | (m.rd8(es, o.wrapping_add(4)) as u32) << 16
            | (m.rd8(es, o.wrapping_add(7)) as u32) << 24
    };
    let src = base(m, 0x10);
    let dst = base(m, 0x18);
    for i in 0..(cpu.cx() as u32 * 2) {
        let a = src + i;
        let v = if (0xA0000..0xC0000).contains(&a) {
            m.dev.vga_read(a)
        } else {
            m.mem.read8(a)
        };
        let d = dst + i;
        if (0xA0000..0xC0000).contains(&d) {
            m.dev.vga_write(d, v)
        } else {
            m.mem.write8(d, v)
        }
    }
}
