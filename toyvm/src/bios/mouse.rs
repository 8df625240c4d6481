//! The mouse driver (INT 33h): present, two buttons, and still. The pointer
//! only moves when the program sets it; nothing scripts it yet.
//!
//! Owns the driver's state. It must not touch video memory (the pointer is
//! never drawn: a hidden-cursor driver is indistinguishable to programs that
//! draw their own, and drawing it would make frames depend on the driver).

use super::hostcall::Regs;
use crate::cpu::Cpu;
use crate::machine::Machine;

#[derive(Clone, Debug)]
pub struct Mouse {
    pub x: u16,
    pub y: u16,
    pub min_x: u16,
    pub max_x: u16,
    pub min_y: u16,
    pub max_y: u16,
    /// Show/hide counter: visible when 0.
    pub hidden: i16,
    pub handler: (u16, u16, u16),
}

impl Default for Mouse {
    fn default() -> Self {
        Mouse {
            x: 320,
            y: 100,
            min_x: 0,
            max_x: 639,
            min_y: 0,
            max_y: 199,
            hidden: 1,
            handler: (0, 0, 0),
        }
    }
}

fn clamp(v: u16, lo: u16, hi: u16) -> u16 {
    (v as i16).clamp(lo as i16, hi.max(lo) as i16) as u16
}

/// INT 33h. Returns false for an unknown function.
pub fn int33(cpu: &mut Cpu, m: &mut Machine, ms: &mut Mouse) -> bool {
    match cpu.ax() {
        0x0000 | 0x0021 => {
            *ms = Mouse::default();
            cpu.set_ax(0xFFFF);
            cpu.set_bx(2);
        }
        0x0001 => ms.hidden = (ms.hidden - 1).max(0),
        0x0002 => ms.hidden += 1,
        0x0003 => {
            cpu.set_bx(0);
            cpu.set_cx(ms.x);
            cpu.set_dx(ms.y);
        }
        0x0004 => {
            ms.x = clamp(cpu.cx(), ms.min_x, ms.max_x);
            ms.y = clamp(cpu.dx(), ms.min_y, ms.max_y);
        }
        0x0005 | 0x0006 => {
            cpu.set_ax(0);
            cpu.set_bx(0);
            cpu.set_cx(ms.x);
            cpu.set_dx(ms.y);
        }
        0x0007 => {
            ms.min_x = cpu.cx().min(cpu.dx());
            ms.max_x = cpu.cx().max(cpu.dx());
            ms.x = clamp(ms.x, ms.min_x, ms.max_x);
        }
        0x0008 => {
            ms.min_y = cpu.cx().min(cpu.dx());
            ms.max_y = cpu.cx().max(cpu.dx());
            ms.y = clamp(ms.y, ms.min_y, ms.max_y);
        }
        0x0009 | 0x000A | 0x000F | 0x0010 | 0x0013 | 0x001A | 0x001D | 0x0016 | 0x0017 => {}
        0x000B => {
            cpu.set_cx(0);
            cpu.set_dx(0);
        }
        0x000C => ms.handler = (cpu.cx(), cpu.es(), cpu.dx()),
        0x0014 => {
            let old = ms.handler;
            ms.handler = (cpu.cx(), cpu.es(), cpu.dx());
            cpu.set_cx(old.0);
            cpu.set_seg(crate::cpu::seg::ES, old.1);
            cpu.set_dx(old.2);
        }
        0x0015 => cpu.set_bx(64),
        0x001B => {
            cpu.set_bx(50);
            cpu.set_cx(50);
            cpu.set_dx(50);
        }
        0x001E => cpu.set_bx(0),
        0x0024 => {
            cpu.set_bx(0x0626);
            cpu.set_cx(0x0400);
        }
        _ => return false,
    }
    let _ = m;
    true
}
