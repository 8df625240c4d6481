//! The BIOS data area at 0040:0000: its layout and its power-on contents.
//!
//! Owns the offsets and initial values. Services keep it in step (the tick
//! count by INT 08h, the keyboard buffer by INT 09h, video state by INT 10h);
//! this module must not implement those services.

use crate::machine::memory::Memory;

/// Linear base of the BIOS data area.
pub const BDA: u32 = 0x400;

pub const EQUIPMENT: u32 = 0x410;
pub const MEMORY_KB: u32 = 0x413;
pub const KB_FLAGS1: u32 = 0x417;
pub const KB_FLAGS2: u32 = 0x418;
pub const KB_HEAD: u32 = 0x41A;
pub const KB_TAIL: u32 = 0x41C;
pub const KB_BUFFER: u16 = 0x1E;
pub const KB_BUFFER_END: u16 = 0x3E;
pub const VIDEO_MODE: u32 = 0x449;
pub const COLUMNS: u32 = 0x44A;
pub const PAGE_SIZE: u32 = 0x44C;
pub const PAGE_START: u32 = 0x44E;
pub const CURSOR_POS: u32 = 0x450;
pub const CURSOR_SHAPE: u32 = 0x460;
pub const ACTIVE_PAGE: u32 = 0x462;
pub const CRTC_BASE: u32 = 0x463;
pub const MODE_CTRL: u32 = 0x465;
pub const CGA_PALETTE: u32 = 0x466;
pub const TICKS: u32 = 0x46C;
pub const MIDNIGHT: u32 = 0x470;
pub const CTRL_BREAK: u32 = 0x471;
pub const RESET_FLAG: u32 = 0x472;
pub const KB_START: u32 = 0x480;
pub const KB_END: u32 = 0x482;
pub const ROWS_MINUS_1: u32 = 0x484;
pub const CHAR_HEIGHT: u32 = 0x485;
pub const EGA_MISC: u32 = 0x487;
pub const EGA_SWITCHES: u32 = 0x488;
pub const VGA_FLAGS: u32 = 0x489;
pub const DCC_INDEX: u32 = 0x48A;
pub const KB_FLAGS3: u32 = 0x496;
pub const KB_FLAGS4: u32 = 0x497;

/// Ticks per day of the 18.2 Hz timer (the BIOS midnight rollover value).
pub const TICKS_PER_DAY: u32 = 0x1800B0;

pub fn rd8(m: &Memory, a: u32) -> u8 {
    m.read8(a)
}
pub fn rd16(m: &Memory, a: u32) -> u16 {
    m.read8(a) as u16 | (m.read8(a + 1) as u16) << 8
}
pub fn rd32(m: &Memory, a: u32) -> u32 {
    rd16(m, a) as u32 | (rd16(m, a + 2) as u32) << 16
}
pub fn wr8(m: &mut Memory, a: u32, v: u8) {
    m.write8(a, v)
}
pub fn wr16(m: &mut Memory, a: u32, v: u16) {
    m.write8(a, v as u8);
    m.write8(a + 1, (v >> 8) as u8);
}
pub fn wr32(m: &mut Memory, a: u32, v: u32) {
    wr16(m, a, v as u16);
    wr16(m, a + 2, (v >> 16) as u16);
}

/// Power-on contents: 640 KiB, FPU present, 80x25 colour, an empty keyboard
/// buffer, text mode 3, and the tick count of the boot time of day.
pub fn init(m: &mut Memory, ticks: u32) {
    for a in BDA..BDA + 0x100 {
        m.write8(a, 0);
    }
    // Equipment: no diskette drive, x87 present, initial video 80x25 colour.
    wr16(m, EQUIPMENT, 0x0022);
    wr16(m, MEMORY_KB, 640);
    wr16(m, KB_HEAD, KB_BUFFER);
    wr16(m, KB_TAIL, KB_BUFFER);
    wr16(m, KB_START, KB_BUFFER);
    wr16(m, KB_END, KB_BUFFER_END);
    wr8(m, KB_FLAGS3, 0x10); // enhanced (101-key) keyboard
    wr8(m, KB_FLAGS4, 0x02); // num lock LED state as after POST
    wr8(m, VIDEO_MODE, 3);
    wr16(m, COLUMNS, 80);
    wr16(m, PAGE_SIZE, 0x1000);
    wr16(m, CURSOR_SHAPE, 0x0607);
    wr16(m, CRTC_BASE, 0x3D4);
    wr8(m, MODE_CTRL, 0x29);
    wr8(m, CGA_PALETTE, 0x30);
    wr8(m, ROWS_MINUS_1, 24);
    wr16(m, CHAR_HEIGHT, 16);
    wr8(m, EGA_MISC, 0x60);
    wr8(m, EGA_SWITCHES, 0xF9);
    wr8(m, VGA_FLAGS, 0x51);
    wr8(m, DCC_INDEX, 0x08);
    wr32(m, TICKS, ticks);
}
