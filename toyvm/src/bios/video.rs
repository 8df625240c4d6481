//! The video BIOS (INT 10h): mode sets through the VGA's own mode tables,
//! cursor and page state in the BIOS data area, text output in every mode
//! (glyphs drawn from the INT 43h font in graphics modes), scrolling,
//! pixels, palette and DAC functions, fonts, and the VGA information calls;
//! AH=4Fh (VESA) goes to `bios::vbe`.
//!
//! Owns the BIOS's view of the screen. Text-mode and CGA-mode memory is
//! written through the bus (the VGA's own addressing decides where bytes
//! land); planar modes are drawn into the planes directly, as the BIOS would
//! with write mode 0 and the map mask. It must not render frames or keep
//! device state of its own.

use super::bda::{self, *};
use super::hostcall::{Outcome, Regs};
use super::rom::{vat, VIDEO_SEG};
use super::Bios;
use crate::bus::Bus;
use crate::cpu::{seg, Cpu};
use crate::machine::devices::vga::PLANE_SIZE;
use crate::machine::{lin, Machine};

/// How a mode lays out its memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Text,
    /// CGA 320x200, 2 bits per pixel, interleaved banks at B800.
    Cga4,
    /// CGA 640x200, 1 bit per pixel.
    Cga2,
    /// EGA/VGA 16-colour planar at A000.
    Planar,
    /// VGA 320x200x256, one byte per pixel.
    Vga256,
}

/// The geometry of a BIOS mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModeInfo {
    pub kind: Kind,
    pub cols: u16,
    pub rows: u16,
    pub char_h: u16,
    pub width: u16,
    pub height: u16,
    pub seg: u16,
    pub page_size: u16,
    pub colours: u16,
    pub pages: u8,
}

/// Geometry of the supported modes.
pub fn mode_info(mode: u8) -> Option<ModeInfo> {
    let i = |kind, cols, rows, char_h, width, height, seg, page_size, colours, pages| ModeInfo {
        kind,
        cols,
        rows,
        char_h,
        width,
        height,
        seg,
        page_size,
        colours,
        pages,
    };
    Some(match mode & 0x7F {
        0 | 1 => i(Kind::Text, 40, 25, 16, 360, 400, 0xB800, 0x800, 16, 8),
        2 | 3 => i(Kind::Text, 80, 25, 16, 720, 400, 0xB800, 0x1000, 16, 8),
        7 => i(Kind::Text, 80, 25, 16, 720, 400, 0xB000, 0x1000, 2, 8),
        4 | 5 => i(Kind::Cga4, 40, 25, 8, 320, 200, 0xB800, 0x4000, 4, 1),
        6 => i(Kind::Cga2, 80, 25, 8, 640, 200, 0xB800, 0x4000, 2, 1),
        0x0D => i(Kind::Planar, 40, 25, 8, 320, 200, 0xA000, 0x2000, 16, 8),
        0x0E => i(Kind::Planar, 80, 25, 8, 640, 200, 0xA000, 0x4000, 16, 4),
        0x0F => i(Kind::Planar, 80, 25, 14, 640, 350, 0xA000, 0x8000, 2, 2),
        0x10 => i(Kind::Planar, 80, 25, 14, 640, 350, 0xA000, 0x8000, 16, 2),
        0x11 => i(Kind::Planar, 80, 30, 16, 640, 480, 0xA000, 0xA000, 2, 1),
        0x12 => i(Kind::Planar, 80, 30, 16, 640, 480, 0xA000, 0xA000, 16, 1),
        0x13 => i(Kind::Vga256, 40, 25, 8, 320, 200, 0xA000, 0xFA00, 256, 1),
        _ => return None,
    })
}

/// The current mode's geometry (from the BIOS data area, as the BIOS reads
/// it), with the row count the data area states.
pub fn current(m: &Machine) -> ModeInfo {
    let mode = bda::rd8(&m.mem, VIDEO_MODE);
    let mut info = mode_info(mode).unwrap_or(mode_info(3).unwrap());
    if info.kind == Kind::Text {
        info.cols = bda::rd16(&m.mem, COLUMNS).clamp(1, 132);
        info.rows = bda::rd8(&m.mem, ROWS_MINUS_1) as u16 + 1;
    }
    info
}

pub fn cursor(m: &Machine, page: u8) -> (u16, u16) {
    let v = bda::rd16(&m.mem, CURSOR_POS + (page as u32 & 7) * 2);
    (v >> 8, v & 0xFF)
}

pub fn set_cursor(m: &mut Machine, page: u8, row: u16, col: u16) {
    let page = page & 7;
    bda::wr16(
        &mut m.mem,
        CURSOR_POS + page as u32 * 2,
        (row << 8) | (col & 0xFF),
    );
    if page == bda::rd8(&m.mem, ACTIVE_PAGE) {
        let info = current(m);
        let start = bda::rd16(&m.mem, PAGE_START) / 2;
        let loc = start.wrapping_add(row.wrapping_mul(info.cols).wrapping_add(col));
        m.dev.vga.crtc[0x0E] = (loc >> 8) as u8;
        m.dev.vga.crtc[0x0F] = loc as u8;
    }
}

fn text_addr(info: &ModeInfo, page: u8, row: u16, col: u16) -> u32 {
    lin(info.seg, 0)
        + (page as u32 & 7) * info.page_size as u32
        + (row as u32 * info.cols as u32 + col as u32) * 2
}

/// The INT 43h font (graphics-mode glyphs) and its height.
fn glyph_rows(m: &mut Machine, ch: u8, char_h: u16) -> Vec<u8> {
    let off = m.rd16(0, 0x43 * 4);
    let sg = m.rd16(0, 0x43 * 4 + 2);
    let base = lin(sg, off) + ch as u32 * char_h as u32;
    (0..char_h as u32).map(|r| m.read8(base + r)).collect()
}

/// Writes one pixel (colour bit 7 = XOR, except in 256-colour mode). As
/// in the VGA BIOS there is no clipping: the offset is computed in 16 bits
/// and wraps inside the mode's segment.
pub fn put_pixel(m: &mut Machine, info: &ModeInfo, page: u8, x: u16, y: u16, c: u8) {
    let xor = c & 0x80 != 0 && info.kind != Kind::Vga256;
    match info.kind {
        Kind::Text => {}
        Kind::Vga256 => {
            let off = (y as u32 * 320 + x as u32) & 0xFFFF;
            m.write8(0xA0000 + off, c)
        }
        Kind::Cga4 | Kind::Cga2 => {
            let (ppb, bits) = if info.kind == Kind::Cga4 {
                (4, 2)
            } else {
                (8, 1)
            };
            let a = cga_addr(y, x / ppb);
            let shift = (ppb - 1 - x % ppb) * bits;
            let mask = (((1u16 << bits) - 1) << shift) as u8;
            let v = ((c as u16 & ((1 << bits) - 1)) << shift) as u8;
            let old = m.read8(a);
            m.write8(a, if xor { old ^ v } else { (old & !mask) | v });
        }
        Kind::Planar => {
            let off = planar_off(info, page, x, y);
            let bit = 0x80u8 >> (x % 8);
            for p in 0..4 {
                let b = &mut m.dev.vga.planes[p * PLANE_SIZE + off];
                let on = c & (1 << p) != 0;
                if xor {
                    if on {
                        *b ^= bit;
                    }
                } else if on {
                    *b |= bit;
                } else {
                    *b &= !bit;
                }
            }
        }
    }
}

fn cga_addr(y: u16, xbyte: u16) -> u32 {
    0xB8000 + (((y as u32 & 1) * 0x2000 + ((y as u32 >> 1) * 80 + xbyte as u32)) & 0x1FFF)
}

fn planar_off(info: &ModeInfo, page: u8, x: u16, y: u16) -> usize {
    (page as usize * info.page_size as usize
        + y as usize * (info.width as usize / 8)
        + x as usize / 8)
        & 0xFFFF
}

/// Reads one pixel (same addressing as [`put_pixel`]).
pub fn get_pixel(m: &mut Machine, info: &ModeInfo, page: u8, x: u16, y: u16) -> u8 {
    match info.kind {
        Kind::Text => 0,
        Kind::Vga256 => m.read8(0xA0000 + ((y as u32 * 320 + x as u32) & 0xFFFF)),
        Kind::Cga4 | Kind::Cga2 => {
            let (ppb, bits) = if info.kind == Kind::Cga4 {
                (4, 2)
            } else {
                (8, 1)
            };
            let v = m.read8(cga_addr(y, x / ppb));
            (v >> ((ppb - 1 - x % ppb) * bits)) & ((1 << bits) - 1) as u8
        }
        Kind::Planar => {
            let off = planar_off(info, page, x, y);
            let bit = 0x80u8 >> (x % 8);
            (0..4).fold(0, |acc, p| {
                acc | (((m.dev.vga.planes[p * PLANE_SIZE + off] & bit) != 0) as u8) << p
            })
        }
    }
}

/// Draws a character cell in a graphics mode: glyph bits in colour `c`,
/// background 0 (or XOR when bit 7 of `c` is set).
fn draw_glyph(m: &mut Machine, info: &ModeInfo, page: u8, row: u16, col: u16, ch: u8, c: u8) {
    let rows = glyph_rows(m, ch, info.char_h);
    let xor = c & 0x80 != 0 && info.kind != Kind::Vga256;
    for (r, bits) in rows.iter().enumerate() {
        let y = row * info.char_h + r as u16;
        for b in 0..8u16 {
            let x = col * 8 + b;
            let on = bits & (0x80 >> b) != 0;
            if xor {
                if on {
                    put_pixel(m, info, page, x, y, c);
                }
            } else {
                put_pixel(m, info, page, x, y, if on { c } else { 0 });
            }
        }
    }
}

/// Writes `count` copies of a character (and attribute, unless `attr` is
/// None) at the cursor without moving it.
fn write_chars(m: &mut Machine, page: u8, ch: u8, attr: Option<u8>, colour: u8, count: u16) {
    let info = current(m);
    let (row, col) = cursor(m, page);
    for i in 0..count {
        let pos = col as u32 + i as u32;
        let (r, c) = (row as u32 + pos / info.cols as u32, pos % info.cols as u32);
        if r >= info.rows as u32 {
            break;
        }
        if info.kind == Kind::Text {
            let a = text_addr(&info, page, r as u16, c as u16);
            m.write8(a, ch);
            if let Some(at) = attr {
                m.write8(a + 1, at);
            }
        } else {
            draw_glyph(m, &info, page, r as u16, c as u16, ch, colour);
        }
    }
}

/// Scrolls a window up (`up`) or down by `lines` (0 = clear), filling with
/// `attr` (text) or colour `attr` (graphics).
#[allow(clippy::too_many_arguments)]
pub fn scroll(
    m: &mut Machine,
    page: u8,
    up: bool,
    lines: u16,
    attr: u8,
    r0: u16,
    c0: u16,
    r1: u16,
    c1: u16,
) {
    let info = current(m);
    let r1 = r1.min(info.rows - 1);
    let c1 = c1.min(info.cols - 1);
    if r0 > r1 || c0 > c1 {
        return;
    }
    let height = r1 - r0 + 1;
    let lines = if lines == 0 || lines > height {
        height
    } else {
        lines
    };
    let copy_row = |m: &mut Machine, dst: u16, src: Option<u16>| {
        for c in c0..=c1 {
            copy_cell(m, &info, page, dst, c, src, attr);
        }
    };
    if up {
        for r in r0..=r1 {
            let src = r + lines;
            copy_row(m, r, (src <= r1).then_some(src));
        }
    } else {
        for r in (r0..=r1).rev() {
            let src = r.checked_sub(lines).filter(|&s| s >= r0);
            copy_row(m, r, src);
        }
    }
}

/// Copies one character cell from row `src` (or blanks it) in any mode.
fn copy_cell(
    m: &mut Machine,
    info: &ModeInfo,
    page: u8,
    dst: u16,
    col: u16,
    src: Option<u16>,
    attr: u8,
) {
    match info.kind {
        Kind::Text => {
            let d = text_addr(info, page, dst, col);
            let (ch, at) = match src {
                Some(s) => {
                    let a = text_addr(info, page, s, col);
                    (m.read8(a), m.read8(a + 1))
                }
                None => (b' ', attr),
            };
            m.write8(d, ch);
            m.write8(d + 1, at);
        }
        _ => {
            for r in 0..info.char_h {
                let y = dst * info.char_h + r;
                for b in 0..8 {
                    let x = col * 8 + b;
                    let v = match src {
                        Some(s) => get_pixel(m, info, page, x, s * info.char_h + r),
                        None => attr,
                    };
                    put_pixel(
                        m,
                        info,
                        page,
                        x,
                        y,
                        v & 0x7F
                            | if info.kind == Kind::Vga256 {
                                v & 0x80
                            } else {
                                0
                            },
                    );
                }
            }
        }
    }
}

/// Teletype output of one byte on `page` (BEL, BS, LF, CR interpreted).
pub fn teletype(m: &mut Machine, page: u8, ch: u8, colour: u8) {
    let info = current(m);
    let (mut row, mut col) = cursor(m, page);
    match ch {
        0x07 => return,
        0x08 => col = col.saturating_sub(1),
        0x0A => row += 1,
        0x0D => col = 0,
        _ => {
            if info.kind == Kind::Text {
                let a = text_addr(&info, page, row.min(info.rows - 1), col.min(info.cols - 1));
                m.write8(a, ch);
            } else {
                draw_glyph(
                    m,
                    &info,
                    page,
                    row.min(info.rows - 1),
                    col.min(info.cols - 1),
                    ch,
                    colour,
                );
            }
            col += 1;
        }
    }
    if col >= info.cols {
        col = 0;
        row += 1;
    }
    if row >= info.rows {
        // The new line takes the attribute of the character at the cursor.
        let attr = if info.kind == Kind::Text {
            m.read8(text_addr(&info, page, info.rows - 1, col) + 1)
        } else {
            0
        };
        scroll(m, page, true, 1, attr, 0, 0, info.rows - 1, info.cols - 1);
        row = info.rows - 1;
    }
    set_cursor(m, page, row, col);
}

/// Sets a BIOS video mode (INT 10h AH=00h). False for an unknown mode.
pub fn set_mode(m: &mut Machine, mode: u8) -> bool {
    let Some(info) = mode_info(mode) else {
        return false;
    };
    if !m.dev.vga.set_mode(mode) {
        return false;
    }
    let mem = &mut m.mem;
    bda::wr8(mem, VIDEO_MODE, mode & 0x7F);
    bda::wr16(mem, COLUMNS, info.cols);
    bda::wr16(mem, PAGE_SIZE, info.page_size);
    bda::wr16(mem, PAGE_START, 0);
    for p in 0..8 {
        bda::wr16(mem, CURSOR_POS + p * 2, 0);
    }
    bda::wr8(mem, ACTIVE_PAGE, 0);
    bda::wr16(mem, CRTC_BASE, if mode & 0x7F == 7 { 0x3B4 } else { 0x3D4 });
    bda::wr8(mem, ROWS_MINUS_1, (info.rows - 1) as u8);
    bda::wr16(mem, CHAR_HEIGHT, info.char_h);
    bda::wr16(
        mem,
        CURSOR_SHAPE,
        if info.kind == Kind::Text { 0x0607 } else { 0 },
    );
    let misc = bda::rd8(mem, EGA_MISC);
    bda::wr8(mem, EGA_MISC, (misc & 0x7F) | (mode & 0x80));
    bda::wr8(
        mem,
        MODE_CTRL,
        match mode & 0x7F {
            0 => 0x2C,
            1 => 0x28,
            2 => 0x2D,
            3 => 0x29,
            4 => 0x2A,
            5 => 0x2E,
            6 => 0x1E,
            7 => 0x29,
            _ => 0x29,
        },
    );
    bda::wr8(mem, CGA_PALETTE, if mode & 0x7F == 6 { 0x3F } else { 0x30 });
    // Graphics glyphs: INT 43h points at the font of the mode's cell height.
    let font = match info.char_h {
        16 => vat::FONT_8X16,
        14 => vat::FONT_8X14,
        _ => vat::FONT_8X8,
    };
    mem.load(0x43 * 4, &font.to_le_bytes());
    mem.load(0x43 * 4 + 2, &VIDEO_SEG.to_le_bytes());
    true
}

fn rd_es_di(m: &mut Machine, cpu: &Cpu, n: u16) -> Vec<u8> {
    let (es, dx) = (cpu.es(), cpu.dx());
    (0..n).map(|i| m.rd8(es, dx.wrapping_add(i))).collect()
}

/// AH=10h: palette registers and the DAC.
fn palette(cpu: &mut Cpu, m: &mut Machine) -> bool {
    let vga = &mut m.dev.vga;
    match cpu.al() {
        0x00 => {
            if cpu.bl() < 0x15 {
                vga.attr[cpu.bl() as usize] = cpu.bh() & 0x3F;
            }
        }
        0x01 => vga.attr[0x11] = cpu.bh(),
        0x02 => {
            let b = rd_es_di(m, cpu, 17);
            let vga = &mut m.dev.vga;
            for (i, &v) in b.iter().take(16).enumerate() {
                vga.attr[i] = v & 0x3F;
            }
            vga.attr[0x11] = b[16];
        }
        0x03 => {
            let mc = &mut vga.attr[0x10];
            *mc = if cpu.bl() & 1 != 0 {
                *mc | 0x08
            } else {
                *mc & !0x08
            };
        }
        0x07 => {
            let v = vga.attr[(cpu.bl() & 0x1F) as usize];
            cpu.set_bh(v);
        }
        0x08 => {
            let v = vga.attr[0x11];
            cpu.set_bh(v);
        }
        0x09 => {
            let regs: Vec<u8> = (0..16)
                .map(|i| vga.attr[i])
                .chain([vga.attr[0x11]])
                .collect();
            let (es, dx) = (cpu.es(), cpu.dx());
            for (i, v) in regs.into_iter().enumerate() {
                m.wr8(es, dx.wrapping_add(i as u16), v);
            }
        }
        0x10 => vga.dac[cpu.bx() as u8 as usize] = [cpu.dh() & 63, cpu.ch() & 63, cpu.cl() & 63],
        0x12 => {
            let (start, count) = (cpu.bx(), cpu.cx());
            let (es, dx) = (cpu.es(), cpu.dx());
            for i in 0..count {
                let o = dx.wrapping_add(i.wrapping_mul(3));
                let rgb = [
                    m.rd8(es, o) & 63,
                    m.rd8(es, o.wrapping_add(1)) & 63,
                    m.rd8(es, o.wrapping_add(2)) & 63,
                ];
                m.dev.vga.dac[(start.wrapping_add(i) & 0xFF) as usize] = rgb;
            }
        }
        0x13 => {}
        0x15 => {
            let [r, g, b] = vga.dac[cpu.bx() as u8 as usize];
            cpu.set_dh(r);
            cpu.set_ch(g);
            cpu.set_cl(b);
        }
        0x17 => {
            let (start, count) = (cpu.bx(), cpu.cx());
            let (es, dx) = (cpu.es(), cpu.dx());
            for i in 0..count {
                let rgb = m.dev.vga.dac[(start.wrapping_add(i) & 0xFF) as usize];
                let o = dx.wrapping_add(i.wrapping_mul(3));
                for (k, &v) in rgb.iter().enumerate() {
                    m.wr8(es, o.wrapping_add(k as u16), v);
                }
            }
        }
        0x18 => vga.dac_mask = cpu.bl(),
        0x19 => {
            let v = vga.dac_mask;
            cpu.set_bl(v);
        }
        0x1A => cpu.set_bx(0),
        0x1B => {
            for i in 0..cpu.cx() {
                let idx = (cpu.bx().wrapping_add(i) & 0xFF) as usize;
                let [r, g, b] = m.dev.vga.dac[idx];
                let grey =
                    ((r as u32 * 30 + g as u32 * 59 + b as u32 * 11 + 50) / 100).min(63) as u8;
                m.dev.vga.dac[idx] = [grey; 3];
            }
        }
        _ => return false,
    }
    true
}

/// AH=11h: the character generator.
fn fonts(cpu: &mut Cpu, m: &mut Machine) -> bool {
    let rom = |m: &mut Machine, off: u16, n: usize| m.read_lin(lin(VIDEO_SEG, off), n);
    let text_rows = |m: &mut Machine, h: u16| {
        let rows = (400 / h.max(1)).clamp(1, 60);
        bda::wr8(&mut m.mem, ROWS_MINUS_1, (rows - 1) as u8);
        bda::wr16(&mut m.mem, CHAR_HEIGHT, h);
        let cols = bda::rd16(&m.mem, COLUMNS);
        bda::wr16(&mut m.mem, PAGE_SIZE, (rows * cols * 2 + 0xFF) & !0xFF);
    };
    match cpu.al() {
        0x00 | 0x10 => {
            let h = cpu.bh().max(1) as usize;
            let (count, first) = (cpu.cx() as usize, cpu.dx() as usize);
            let (es, bp) = (cpu.es(), cpu.bp());
            // Merge the user glyphs into the block's current contents.
            let base = block_base(cpu.bl());
            for i in 0..count.min(256) {
                let ch = (first + i) & 0xFF;
                for r in 0..32 {
                    let v = if r < h {
                        m.rd8(es, bp.wrapping_add((i * h + r) as u16))
                    } else {
                        0
                    };
                    m.dev.vga.planes[2 * PLANE_SIZE + ((base + ch * 32 + r) & 0xFFFF)] = v;
                }
            }
            if cpu.al() == 0x10 {
                m.dev.vga.set_char_height(h as u8);
                text_rows(m, h as u16);
            }
        }
        0x01 | 0x11 | 0x02 | 0x12 | 0x04 | 0x14 => {
            let (off, h) = match cpu.al() & 0x0F {
                1 => (vat::FONT_8X14, 14),
                2 => (vat::FONT_8X8, 8),
                _ => (vat::FONT_8X16, 16),
            };
            let f = rom(m, off, 256 * h);
            m.dev.vga.load_font(&f, h, cpu.bl());
            if cpu.al() & 0x10 != 0 {
                m.dev.vga.set_char_height(h as u8);
                text_rows(m, h as u16);
            }
        }
        0x03 => m.dev.vga.seq[3] = cpu.bl(),
        0x20 => {
            m.wr16(0, 0x1F * 4, cpu.bp());
            m.wr16(0, 0x1F * 4 + 2, cpu.es());
        }
        0x21..=0x24 => {
            let (off, sg, h) = match cpu.al() {
                0x21 => (cpu.bp(), cpu.es(), cpu.cx()),
                0x22 => (vat::FONT_8X14, VIDEO_SEG, 14),
                0x23 => (vat::FONT_8X8, VIDEO_SEG, 8),
                _ => (vat::FONT_8X16, VIDEO_SEG, 16),
            };
            m.wr16(0, 0x43 * 4, off);
            m.wr16(0, 0x43 * 4 + 2, sg);
            let info = current(m);
            let rows = match cpu.bl() {
                0 => cpu.dl() as u16,
                1 => 14,
                2 => 25,
                _ => 43,
            };
            bda::wr16(&mut m.mem, CHAR_HEIGHT, h);
            bda::wr8(
                &mut m.mem,
                ROWS_MINUS_1,
                rows.max(1).min(info.height / h.max(1)).saturating_sub(1) as u8,
            );
        }
        0x30 => {
            let (sg, off) = match cpu.bh() {
                0 => (m.rd16(0, 0x1F * 4 + 2), m.rd16(0, 0x1F * 4)),
                1 => (m.rd16(0, 0x43 * 4 + 2), m.rd16(0, 0x43 * 4)),
                2 | 5 => (VIDEO_SEG, vat::FONT_8X14),
                3 => (VIDEO_SEG, vat::FONT_8X8),
                4 => (VIDEO_SEG, vat::FONT_8X8 + 0x400),
                _ => (VIDEO_SEG, vat::FONT_8X16),
            };
            cpu.set_seg(seg::ES, sg);
            cpu.set_bp(off);
            cpu.set_cx(bda::rd16(&m.mem, CHAR_HEIGHT));
            cpu.set_dl(bda::rd8(&m.mem, ROWS_MINUS_1));
        }
        _ => return false,
    }
    true
}

fn block_base(block: u8) -> usize {
    (((block & 3) as usize) * 2 + ((block >> 2) & 1) as usize) * 0x2000
}

/// AH=1Bh: the 64-byte functionality/state record at ES:DI.
fn state_info(cpu: &mut Cpu, m: &mut Machine) {
    let info = current(m);
    let mem = &m.mem;
    let mut b = vec![0u8; 64];
    b[0..2].copy_from_slice(&vat::STATIC_FUNCS.to_le_bytes());
    b[2..4].copy_from_slice(&VIDEO_SEG.to_le_bytes());
    b[4] = bda::rd8(mem, VIDEO_MODE);
    b[5..7].copy_from_slice(&bda::rd16(mem, COLUMNS).to_le_bytes());
    b[7..9].copy_from_slice(&bda::rd16(mem, PAGE_SIZE).to_le_bytes());
    b[9..11].copy_from_slice(&bda::rd16(mem, PAGE_START).to_le_bytes());
    for p in 0..8 {
        let v = bda::rd16(mem, CURSOR_POS + p * 2);
        b[0x0B + p as usize * 2..0x0D + p as usize * 2].copy_from_slice(&v.to_le_bytes());
    }
    b[0x1B..0x1D].copy_from_slice(&bda::rd16(mem, CURSOR_SHAPE).to_le_bytes());
    b[0x1D] = bda::rd8(mem, ACTIVE_PAGE);
    b[0x1E..0x20].copy_from_slice(&bda::rd16(mem, CRTC_BASE).to_le_bytes());
    b[0x20] = bda::rd8(mem, MODE_CTRL);
    b[0x21] = bda::rd8(mem, CGA_PALETTE);
    b[0x22] = bda::rd8(mem, ROWS_MINUS_1) + 1;
    b[0x23..0x25].copy_from_slice(&bda::rd16(mem, CHAR_HEIGHT).to_le_bytes());
    b[0x25] = 0x08;
    b[0x27..0x29].copy_from_slice(&info.colours.to_le_bytes());
    b[0x29] = info.pages;
    b[0x2A] = match info.height {
        200 => 0,
        350 => 1,
        400 => 2,
        _ => 3,
    };
    b[0x2D] = 0x21;
    b[0x31] = 0x03;
    let (es, di) = (cpu.es(), cpu.di());
    for (i, v) in b.into_iter().enumerate() {
        m.wr8(es, di.wrapping_add(i as u16), v);
    }
    cpu.set_al(0x1B);
}

/// INT 10h. `None` for an unknown function.
pub fn int10(cpu: &mut Cpu, m: &mut Machine, bios: &mut Bios) -> Option<Outcome> {
    match cpu.ah() {
        0x00 => {
            if set_mode(m, cpu.al()) {
                let md = cpu.al() & 0x7F;
                cpu.set_al(if md > 7 {
                    0x20
                } else if md == 6 {
                    0x3F
                } else {
                    0x30
                });
            } else {
                bios.decline(format!("INT 10h AH=00h mode {:02X}h", cpu.al()));
            }
        }
        0x01 => {
            bda::wr16(&mut m.mem, CURSOR_SHAPE, cpu.cx());
            m.dev.vga.crtc[0x0A] = cpu.ch();
            m.dev.vga.crtc[0x0B] = cpu.cl();
        }
        0x02 => set_cursor(m, cpu.bh(), cpu.dh() as u16, cpu.dl() as u16),
        0x03 => {
            let (r, c) = cursor(m, cpu.bh());
            cpu.set_dx((r << 8) | c);
            cpu.set_cx(bda::rd16(&m.mem, CURSOR_SHAPE));
            cpu.set_ax(0);
        }
        0x04 => cpu.set_ah(0),
        0x05 => {
            let info = current(m);
            let page = cpu.al() & 7;
            if page < info.pages {
                bda::wr8(&mut m.mem, ACTIVE_PAGE, page);
                let start = page as u16 * info.page_size;
                bda::wr16(&mut m.mem, PAGE_START, start);
                let addr = if info.kind == Kind::Text {
                    start / 2
                } else {
                    start
                };
                m.dev.vga.crtc[0x0C] = (addr >> 8) as u8;
                m.dev.vga.crtc[0x0D] = addr as u8;
                let (r, c) = cursor(m, page);
                set_cursor(m, page, r, c);
            }
        }
        0x06 | 0x07 => {
            let page = bda::rd8(&m.mem, ACTIVE_PAGE);
            scroll(
                m,
                page,
                cpu.ah() == 0x06,
                cpu.al() as u16,
                cpu.bh(),
                cpu.ch() as u16,
                cpu.cl() as u16,
                cpu.dh() as u16,
                cpu.dl() as u16,
            );
        }
        0x08 => {
            let info = current(m);
            let page = cpu.bh();
            let (r, c) = cursor(m, page);
            if info.kind == Kind::Text {
                let a = text_addr(&info, page, r, c);
                let v = m.read8(a) as u16 | (m.read8(a + 1) as u16) << 8;
                cpu.set_ax(v);
            } else {
                cpu.set_ax(0);
            }
        }
        0x09 => write_chars(m, cpu.bh(), cpu.al(), Some(cpu.bl()), cpu.bl(), cpu.cx()),
        0x0A => write_chars(m, cpu.bh(), cpu.al(), None, cpu.bl(), cpu.cx()),
        0x0B => {
            let vga = &mut m.dev.vga;
            match cpu.bh() {
                0 => {
                    let c = cpu.bl();
                    let bg = (c & 0x07) | if c & 0x10 != 0 { 0x10 } else { 0 } | (c & 0x08) << 1;
                    vga.attr[0x11] = bg;
                    let mode = bda::rd8(&m.mem, VIDEO_MODE);
                    if matches!(mode, 4 | 5) {
                        m.dev.vga.attr[0] = bg;
                    }
                }
                _ => {
                    let base = if cpu.bl() & 1 != 0 { 3 } else { 2 };
                    for i in 1..4 {
                        vga.attr[i] = base + (i as u8 - 1) * 2 + 0x10;
                    }
                }
            }
        }
        0x0C => {
            let info = current(m);
            put_pixel(m, &info, cpu.bh(), cpu.cx(), cpu.dx(), cpu.al());
        }
        0x0D => {
            let info = current(m);
            let v = get_pixel(m, &info, cpu.bh(), cpu.cx(), cpu.dx());
            cpu.set_al(v);
        }
        0x0E => {
            let page = bda::rd8(&m.mem, ACTIVE_PAGE);
            bios.console.push(cpu.al());
            teletype(m, page, cpu.al(), cpu.bl());
        }
        0x0F => {
            let mode = bda::rd8(&m.mem, VIDEO_MODE) | (bda::rd8(&m.mem, EGA_MISC) & 0x80);
            cpu.set_al(mode);
            cpu.set_ah(bda::rd16(&m.mem, COLUMNS) as u8);
            cpu.set_bh(bda::rd8(&m.mem, ACTIVE_PAGE));
        }
        0x10 => {
            if !palette(cpu, m) {
                return None;
            }
        }
        0x11 => {
            if !fonts(cpu, m) {
                return None;
            }
        }
        0x12 => match cpu.bl() {
            0x10 => {
                cpu.set_bh(0);
                cpu.set_bl(3);
                cpu.set_cx(0x0009);
            }
            0x30 => {
                bios.scanlines = cpu.al();
                cpu.set_al(0x12);
            }
            0x31..=0x36 => {
                if cpu.bl() == 0x36 {
                    let s = &mut m.dev.vga.seq[1];
                    *s = if cpu.al() == 1 { *s | 0x20 } else { *s & !0x20 };
                }
                cpu.set_al(0x12);
            }
            _ => {
                bios.decline(format!("INT 10h AH=12h BL={:02X}h", cpu.bl()));
            }
        },
        0x13 => {
            let (mode, page, attr) = (cpu.al(), cpu.bh(), cpu.bl());
            let saved = cursor(m, page);
            set_cursor(m, page, cpu.dh() as u16, cpu.dl() as u16);
            let (es, bp) = (cpu.es(), cpu.bp());
            let info = current(m);
            let mut o = bp;
            for _ in 0..cpu.cx() {
                let ch = m.rd8(es, o);
                o = o.wrapping_add(1);
                let at = if mode & 2 != 0 {
                    let a = m.rd8(es, o);
                    o = o.wrapping_add(1);
                    a
                } else {
                    attr
                };
                bios.console.push(ch);
                if matches!(ch, 7 | 8 | 10 | 13) {
                    teletype(m, page, ch, at);
                } else {
                    let (r, c) = cursor(m, page);
                    if info.kind == Kind::Text {
                        let a = text_addr(&info, page, r, c);
                        m.write8(a, ch);
                        m.write8(a + 1, at);
                        // Advance as teletype does (wrap and scroll).
                        teletype_advance(m, page, r, c);
                    } else {
                        teletype(m, page, ch, at);
                    }
                }
            }
            if mode & 1 == 0 {
                set_cursor(m, page, saved.0, saved.1);
            }
        }
        0x1A => {
            if cpu.al() <= 1 {
                if cpu.al() == 0 {
                    cpu.set_bx(0x0008);
                }
                cpu.set_al(0x1A);
            }
        }
        0x1B => state_info(cpu, m),
        0x4F => super::vbe::int10_4f(cpu, m, bios),
        // TopView, save/restore state and vendor extensions: a plain VGA
        // BIOS returns with registers unchanged, which callers read as
        // "unsupported".
        0x1C..=0xFF => {
            bios.decline(format!("INT 10h AH={:02X}h", cpu.ah()));
        }
        _ => return None,
    }
    Some(Outcome::Continue)
}

fn teletype_advance(m: &mut Machine, page: u8, row: u16, col: u16) {
    let info = current(m);
    let (mut row, mut col) = (row, col + 1);
    if col >= info.cols {
        col = 0;
        row += 1;
    }
    if row >= info.rows {
        let attr = m.read8(text_addr(&info, page, info.rows - 1, 0) + 1);
        scroll(m, page, true, 1, attr, 0, 0, info.rows - 1, info.cols - 1);
        row = info.rows - 1;
    }
    set_cursor(m, page, row, col);
}

/// The text a text mode shows (rows joined with newlines, trailing blanks
/// trimmed), or None in a graphics mode.
pub fn screen_text(m: &Machine) -> Option<String> {
    let info = current(m);
    if info.kind != Kind::Text {
        return None;
    }
    let page = bda::rd8(&m.mem, ACTIVE_PAGE);
    let mut out = String::new();
    for r in 0..info.rows {
        let mut line = String::new();
        for c in 0..info.cols {
            let ch = m.peek8(text_addr(&info, page, r, c));
            line.push(cp437(ch));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    Some(out.trim_end_matches('\n').to_string() + "\n")
}

/// A printable rendering of a code page 437 byte (ASCII as is, others as
/// their Unicode equivalents for the common box and block characters).
pub fn cp437(b: u8) -> char {
    const HI: &str = "ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u{a0}";
    match b {
        0 => ' ',
        0x20..=0x7E => b as char,
        0x80..=0xFF => HI.chars().nth(b as usize - 0x80).unwrap_or('?'),
        _ => '.',
    }
}

/// Puts the VGA and the data area in the power-on text mode.
pub fn init(m: &mut Machine) {
    set_mode(m, 3);
}
