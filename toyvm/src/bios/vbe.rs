//! VESA BIOS Extensions 1.2 (INT 10h AH=4Fh): controller information
//! (4F00h), mode information (4F01h), mode set and query (4F02h/4F03h),
//! the window A bank (4F05h, also reached by a far call to the mode's
//! `WinFuncPtr`), the logical scan line (4F06h) and the display start
//! (4F07h).
//!
//! Owns the calling convention and the information blocks' layout. The
//! adapter itself (modes, video memory, scanout) is
//! `machine::devices::vga::vbe`; the ROM bytes the blocks point at (mode
//! list, OEM string, the window function) are laid out by `bios::rom`. It
//! must not render or keep device state.
//!
//! Status in AX as the standard says: 004Fh success, 014Fh failed (also for
//! a sub-function this BIOS does not have: save/restore state 4F04h, the
//! VBE 2.0+ calls, window B).

use super::hostcall::Regs;
use super::rom::{at, vat, BIOS_SEG, VIDEO_SEG};
use super::video;
use super::Bios;
use crate::cpu::Cpu;
use crate::machine::devices::vga::vbe::{self, Pixels, VbeMode, VRAM_SIZE, WINDOW};
use crate::machine::Machine;

const OK: u16 = 0x004F;
const FAILED: u16 = 0x014F;

/// The OEM string 4F00h points at (in the video ROM).
pub const OEM_STRING: &[u8] = b"toyvm VBE 1.2\0";

/// The mode list 4F00h points at: every mode number, then FFFFh.
pub fn mode_list() -> Vec<u8> {
    let mut v: Vec<u8> = vbe::MODES
        .iter()
        .flat_map(|m| m.number.to_le_bytes())
        .collect();
    v.extend_from_slice(&0xFFFFu16.to_le_bytes());
    v
}

/// INT 10h AH=4Fh.
pub fn int10_4f(cpu: &mut Cpu, m: &mut Machine, bios: &mut Bios) {
    let status = match cpu.al() {
        0x00 => controller_info(cpu, m),
        0x01 => mode_info(cpu, m),
        0x02 => set_mode(cpu, m),
        0x03 => {
            let v = &m.dev.vga;
            cpu.set_bx(v.vbe.mode.map_or(v.mode as u16, |md| md.number));
            OK
        }
        0x05 => window(cpu, m),
        0x06 => scan_line(cpu, m),
        0x07 => display_start(cpu, m),
        _ => {
            bios.decline(format!("INT 10h AX={:04X}h", cpu.ax()));
            FAILED
        }
    };
    cpu.set_ax(status);
}

/// The far-call window function (`WinFuncPtr`): BH=00h sets window BL to
/// DX, BH=01h returns it in DX, as 4F05h does without touching AX.
pub fn window_call(cpu: &mut Cpu, m: &mut Machine) {
    let ax = cpu.ax();
    window(cpu, m);
    cpu.set_ax(ax);
}

fn write_block(cpu: &Cpu, m: &mut Machine, bytes: &[u8]) {
    let (es, di) = (cpu.es(), cpu.di());
    for (i, &b) in bytes.iter().enumerate() {
        m.wr8(es, di.wrapping_add(i as u16), b);
    }
}

/// 4F00h: the 256-byte VbeInfoBlock of VBE 1.2 at ES:DI.
fn controller_info(cpu: &mut Cpu, m: &mut Machine) -> u16 {
    let mut b = vec![0u8; 256];
    b[0..4].copy_from_slice(b"VESA");
    b[4..6].copy_from_slice(&0x0102u16.to_le_bytes());
    b[6..8].copy_from_slice(&vat::VBE_OEM.to_le_bytes());
    b[8..10].copy_from_slice(&VIDEO_SEG.to_le_bytes());
    // Capabilities 0: a fixed 6-bit DAC, VGA compatible.
    b[14..16].copy_from_slice(&vat::VBE_MODES.to_le_bytes());
    b[16..18].copy_from_slice(&VIDEO_SEG.to_le_bytes());
    b[18..20].copy_from_slice(&((VRAM_SIZE / WINDOW as usize) as u16).to_le_bytes());
    write_block(cpu, m, &b);
    OK
}

/// The 256-byte ModeInfoBlock of `md`.
pub fn mode_info_block(md: &VbeMode) -> Vec<u8> {
    let mut b = vec![0u8; 256];
    let w16 = |b: &mut Vec<u8>, at: usize, v: u16| b[at..at + 2].copy_from_slice(&v.to_le_bytes());
    // Supported, extended information, colour, graphics; no TTY output.
    w16(&mut b, 0x00, 0x001B);
    b[0x02] = 0x07; // window A: exists, readable, writable
    b[0x03] = 0x00; // no window B
    w16(&mut b, 0x04, (WINDOW / 1024) as u16); // granularity in KiB
    w16(&mut b, 0x06, (WINDOW / 1024) as u16); // size in KiB
    w16(&mut b, 0x08, 0xA000);
    w16(&mut b, 0x0A, 0x0000);
    w16(&mut b, 0x0C, at::VBE_WINDOW_FN);
    w16(&mut b, 0x0E, BIOS_SEG);
    w16(&mut b, 0x10, md.pitch() as u16);
    w16(&mut b, 0x12, md.width as u16);
    w16(&mut b, 0x14, md.height as u16);
    b[0x16] = 8; // character cell
    b[0x17] = 16;
    b[0x18] = 1; // planes
    b[0x19] = md.pixels.bits();
    b[0x1A] = 1; // banks (of scan lines; packed modes are not banked that way)
    b[0x1B] = if md.pixels == Pixels::Packed8 { 4 } else { 6 };
    b[0x1C] = 0;
    let pages = VRAM_SIZE as u32 / (md.pitch() * md.height);
    b[0x1D] = (pages - 1).min(255) as u8;
    b[0x1E] = 1;
    // Direct colour field sizes and positions: red, green, blue, reserved.
    let fields: [u8; 8] = match md.pixels {
        Pixels::Packed8 => [0; 8],
        Pixels::Rgb555 => [5, 10, 5, 5, 5, 0, 1, 15],
        Pixels::Rgb565 => [5, 11, 6, 5, 5, 0, 0, 0],
        Pixels::Rgb888 => [8, 16, 8, 8, 8, 0, 0, 0],
    };
    b[0x1F..0x27].copy_from_slice(&fields);
    b
}

/// 4F01h: mode information for CX at ES:DI.
fn mode_info(cpu: &mut Cpu, m: &mut Machine) -> u16 {
    let Some(md) = vbe::find(cpu.cx()) else {
        return FAILED;
    };
    write_block(cpu, m, &mode_info_block(&md));
    OK
}

/// 4F02h: BX = mode (bit 15: keep video memory; bit 14, the VBE 2.0 linear
/// frame buffer, is refused). Numbers below 100h are standard VGA modes.
fn set_mode(cpu: &mut Cpu, m: &mut Machine) -> u16 {
    let bx = cpu.bx();
    let keep = bx & 0x8000 != 0;
    if bx & 0x4000 != 0 {
        return FAILED;
    }
    let n = bx & 0x1FF;
    if n < 0x100 {
        let mode = n as u8 | if keep { 0x80 } else { 0 };
        return if n < 0x80 && video::set_mode(m, mode) {
            OK
        } else {
            FAILED
        };
    }
    let Some(md) = vbe::find(n) else {
        return FAILED;
    };
    // Under the VBE mode the VGA sits in mode 13h's register state (graphics,
    // 256-colour DAC), as SVGA BIOSes start from a standard mode; the BIOS
    // data area says 13h too, so BIOS text calls draw into nothing visible.
    if !video::set_mode(m, 0x13 | 0x80) {
        return FAILED;
    }
    m.dev.vga.vbe.set(md, keep);
    OK
}

/// 4F05h: BH=00h set window BL's position to DX, BH=01h get it.
fn window(cpu: &mut Cpu, m: &mut Machine) -> u16 {
    let v = &mut m.dev.vga.vbe;
    if !v.on() || cpu.bl() != 0 {
        return FAILED;
    }
    match cpu.bh() {
        0x00 => {
            if v.set_bank(cpu.dx()) {
                OK
            } else {
                FAILED
            }
        }
        0x01 => {
            cpu.set_dx(v.bank);
            OK
        }
        _ => FAILED,
    }
}

/// 4F06h: BL=00h set the logical line to CX pixels, BL=01h get, BL=03h
/// maximum. Returns BX = bytes per line, CX = pixels, DX = lines.
fn scan_line(cpu: &mut Cpu, m: &mut Machine) -> u16 {
    let v = &mut m.dev.vga.vbe;
    let Some(md) = v.mode else {
        return FAILED;
    };
    let bytes = md.pixels.bytes();
    match cpu.bl() {
        0x00 => {
            if v.set_line_pixels(cpu.cx() as u32).is_none() {
                return FAILED;
            }
        }
        0x01 => {}
        0x03 => {
            let max = (VRAM_SIZE as u32 / md.height).min(0xFFFF) / bytes * bytes;
            cpu.set_bx(max as u16);
            cpu.set_cx((max / bytes) as u16);
            cpu.set_dx(md.height as u16);
            return OK;
        }
        _ => return FAILED,
    }
    cpu.set_bx(v.pitch as u16);
    cpu.set_cx((v.pitch / bytes) as u16);
    cpu.set_dx(v.lines().min(0xFFFF) as u16);
    OK
}

/// 4F07h: BL=00h/80h set the display start to pixel CX of line DX, BL=01h
/// get it (BH = 0).
fn display_start(cpu: &mut Cpu, m: &mut Machine) -> u16 {
    let v = &mut m.dev.vga.vbe;
    let Some(md) = v.mode else {
        return FAILED;
    };
    match cpu.bl() {
        0x00 | 0x80 => {
            let (x, y) = (cpu.cx() as u32, cpu.dx() as u32);
            let end = (y as u64 + md.height as u64) * v.pitch as u64
                + x as u64 * md.pixels.bytes() as u64;
            if end > VRAM_SIZE as u64 {
                return FAILED;
            }
            v.start_x = x;
            v.start_y = y;
        }
        0x01 => {
            cpu.set_bh(0);
            cpu.set_cx(v.start_x as u16);
            cpu.set_dx(v.start_y as u16);
        }
        _ => return FAILED,
    }
    OK
}
