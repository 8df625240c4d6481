//! The ROMs: the system BIOS segment F000 (service stubs, default interrupt
//! handlers written in x86, the configuration table, the 8x8 font at its
//! IBM address, the reset vector and model byte), the video BIOS at C000
//! (fonts), the EMS driver's device header, and the interrupt vector table
//! that points into them.
//!
//! Owns the ROM layout and the host-service numbering. It must not implement
//! services on the host side: a stub is `FE 38 lo hi` (one dispatch, then
//! the session runs service `lo | hi << 8`) plus the x86 a real BIOS would
//! run around it. Three hot cases run wholly in x86, as in a real BIOS
//! (INT 1Ah AH=00h, INT 16h AH=01h/11h with nothing typed, INT 10h AH=0Ch
//! in mode 13h): programs call them in loops, and a host call would take
//! each call out of the engine.

use crate::bios::bda::{KB_HEAD, KB_TAIL, MIDNIGHT, TICKS, VIDEO_MODE};
use crate::machine::devices::vga::font::{font_8x16, font_8x8};
use crate::machine::lin;
use crate::machine::memory::Memory;
use iced_x86::code_asm::{
    ah, al, bp, bx, byte_ptr, cx, di, ds, dx, es, sp, word_ptr, CodeAssembler, CodeLabel,
};
use iced_x86::IcedError;

/// Segment of the system BIOS.
pub const BIOS_SEG: u16 = 0xF000;
/// Segment of the video BIOS.
pub const VIDEO_SEG: u16 = 0xC000;
/// Segment of the EMS driver's device header (F100:0000 = F000:1000).
pub const EMS_SEG: u16 = 0xF100;
/// Offset of the INT 67h entry in `EMS_SEG`.
pub const EMS_ENTRY: u16 = 0x0012;

/// Host services, numbered `group << 8 | n`.
pub mod svc {
    /// `0x00nn`: the service behind INT nn.
    pub const fn int(n: u8) -> u16 {
        n as u16
    }
    /// The XMS driver entry (far call).
    pub const XMS: u16 = 0x0100;
    /// The CP/M-style `CALL 5` entry of every PSP.
    pub const CPM_CALL: u16 = 0x0101;
    /// Where the top-level shell regains control when a program ends.
    pub const SHELL_RETURN: u16 = 0x0102;
    /// INT 08h's tick bookkeeping (BDA tick count, midnight flag).
    pub const TIMER_TICK: u16 = 0x0108;
    /// INT 09h's scan-code translation (AL = byte read from port 60h).
    pub const KEYBOARD_BYTE: u16 = 0x0109;
    /// The reset vector and POST entry: a reboot request.
    pub const RESET: u16 = 0x0110;
    /// The VBE window function (a mode's `WinFuncPtr`, far-called).
    pub const VBE_WINDOW: u16 = 0x0111;
    /// `0x02nn`: the default handler of exception vector nn (stops the run).
    pub const fn exception(n: u8) -> u16 {
        0x0200 | n as u16
    }
    /// `0x03nn`: an interrupt this BIOS/DOS does not implement (stops the run).
    pub const fn unimplemented(n: u8) -> u16 {
        0x0300 | n as u16
    }
}

/// Fixed offsets in the F000 segment (the IBM-compatible ones).
pub mod at {
    pub const POST: u16 = 0xE05B;
    pub const CONFIG_TABLE: u16 = 0xE6F5;
    pub const DISKETTE_PARAMS: u16 = 0xEFC7;
    pub const FONT_8X8: u16 = 0xFA6E;
    pub const CPM_ENTRY: u16 = 0xFEF0;
    /// The VBE window function every mode's `WinFuncPtr` points at (after
    /// the EMS header at F000:1000; host calls run only in F000).
    pub const VBE_WINDOW_FN: u16 = 0x1100;
    pub const RESET: u16 = 0xFFF0;
    pub const DATE: u16 = 0xFFF5;
    pub const MODEL: u16 = 0xFFFE;
}

/// Fixed offsets in the C000 segment.
pub mod vat {
    pub const FONT_8X16: u16 = 0x0100;
    pub const FONT_8X8: u16 = 0x1100;
    pub const FONT_8X14: u16 = 0x1900;
    pub const VIDEO_PARAMS: u16 = 0x2700;
    pub const STATIC_FUNCS: u16 = 0x2800;
    /// VBE 4F00h's mode list (FFFFh-terminated).
    pub const VBE_MODES: u16 = 0x2900;
    /// VBE 4F00h's OEM string.
    pub const VBE_OEM: u16 = 0x2980;
}

/// Where the interesting entry points landed.
#[derive(Clone, Debug, Default)]
pub struct RomMap {
    /// Offset (in F000) of the stub each vector points at; 0 for none.
    pub vectors: Vec<(u8, u16, u16)>,
    pub xms_entry: u16,
    pub shell_return: u16,
}

fn hostcall(n: u16) -> [u8; 4] {
    [0xFE, 0x38, n as u8, (n >> 8) as u8]
}

const IRET: u8 = 0xCF;
const RETF: u8 = 0xCB;

/// A service stub's host part: STI; host call `n`; then `ret` (IRET, or
/// RETF for INT 25h/26h).
fn service_tail(n: u16, ret: u8) -> [u8; 6] {
    let h = hostcall(n);
    [0xFB, h[0], h[1], h[2], h[3], ret]
}

struct Builder<'a> {
    mem: &'a mut Memory,
    at: u16,
}

impl Builder<'_> {
    fn emit(&mut self, code: &[u8]) -> u16 {
        let start = self.at;
        assert!(
            (start as usize + code.len()) <= 0x1000,
            "BIOS stub area overflow"
        );
        self.mem.load(lin(BIOS_SEG, start), code);
        self.at += code.len() as u16;
        start
    }
    /// STI; host call; IRET. Services that may wait need interrupts on, as a
    /// real BIOS/DOS enables them on entry.
    fn service(&mut self, n: u16) -> u16 {
        self.emit(&service_tail(n, IRET))
    }
    /// STI; host call; RETF: for INT 25h/26h, which return with the
    /// caller's FLAGS still on the stack (DOS's documented convention).
    fn service_retf(&mut self, n: u16) -> u16 {
        self.emit(&service_tail(n, RETF))
    }
    /// A service whose hot case runs in x86 before the host call,
    /// as a real BIOS runs it (`fast` assembles that case at the stub's
    /// address and jumps to its label argument for everything else, which
    /// is [`Builder::service`]'s STI; host call; IRET). A program that polls
    /// such a call in a loop then never leaves the engine that runs it.
    fn service_with_fast_path(
        &mut self,
        n: u16,
        fast: impl FnOnce(&mut CodeAssembler, CodeLabel) -> Result<(), IcedError>,
    ) -> u16 {
        let assemble = || -> Result<Vec<u8>, IcedError> {
            let mut a = CodeAssembler::new(16)?;
            let mut host = a.create_label();
            fast(&mut a, host)?;
            a.set_label(&mut host)?;
            a.db(&service_tail(n, IRET))?;
            a.assemble(self.at as u64)
        };
        // The stubs are fixed code: an error here is a bug in this file.
        let code = assemble().expect("the BIOS fast-path stubs assemble");
        self.emit(&code)
    }
    fn stop(&mut self, n: u16) -> u16 {
        let mut c = hostcall(n).to_vec();
        c.push(0xCF);
        self.emit(&c)
    }
}

/// BDA offsets as DS=0040h sees them.
const fn bda_off(linear: u32) -> u64 {
    (linear - 0x400) as u64
}

/// INT 1Ah AH=00h (read the tick count) in x86, as the IBM BIOS runs it:
/// CX:DX = ticks since midnight, AL = the midnight flag, which the read
/// clears. Interrupts stay off from the INT to the IRET, so the read is
/// atomic against INT 08h. Games wait for the next tick by calling it in a
/// loop (the w84death BIOS games: one call every 6 dispatches, each a
/// return to the session when it was a host call). Other functions: the
/// host.
fn int1a_read_ticks(a: &mut CodeAssembler, host: CodeLabel) -> Result<(), IcedError> {
    a.test(ah, ah)?;
    a.jne(host)?;
    a.push(ds)?;
    a.mov(cx, 0x40)?;
    a.mov(ds, cx)?;
    a.mov(al, byte_ptr(bda_off(MIDNIGHT)))?;
    a.mov(byte_ptr(bda_off(MIDNIGHT)), 0)?;
    a.mov(cx, word_ptr(bda_off(TICKS) + 2))?;
    a.mov(dx, word_ptr(bda_off(TICKS)))?;
    a.pop(ds)?;
    a.iret()
}

/// INT 16h AH=01h/11h (is a key waiting?) with an empty type-ahead buffer,
/// in x86: ZF set in the caller's FLAGS, AX unchanged, as the host call
/// answers it. A waiting key goes to the host (AH=01h drops keys the
/// classic interface cannot report, `keyboard::int16`). Other functions:
/// the host.
fn int16_check_empty(a: &mut CodeAssembler, host: CodeLabel) -> Result<(), IcedError> {
    let mut check = a.create_label();
    a.cmp(ah, 0x01)?;
    a.je(check)?;
    a.cmp(ah, 0x11)?;
    a.jne(host)?;
    a.set_label(&mut check)?;
    a.push(ds)?;
    a.push(bx)?;
    a.mov(bx, 0x40)?;
    a.mov(ds, bx)?;
    a.mov(bx, word_ptr(bda_off(KB_HEAD)))?;
    a.cmp(bx, word_ptr(bda_off(KB_TAIL)))?;
    a.pop(bx)?;
    a.pop(ds)?;
    a.jne(host)?;
    // FLAGS of the INT frame: [BP+6] after PUSH BP.
    a.push(bp)?;
    a.mov(bp, sp)?;
    a.or(byte_ptr(bp + 6), 0x40)?;
    a.pop(bp)?;
    a.iret()
}

/// INT 10h AH=0Ch (write a pixel) in mode 13h, in x86 as a VGA BIOS runs
/// it: the byte AL at A000:(DX*320+CX) mod 64K (no XOR in 256-colour
/// modes, BH ignored), the host call's `video::put_pixel` for `Vga256`.
/// Programs that draw pixel by pixel call it in a loop (memph32: one call
/// every 17 dispatches). Other modes and functions: the host.
fn int10_pixel_mode13(a: &mut CodeAssembler, host: CodeLabel) -> Result<(), IcedError> {
    a.cmp(ah, 0x0C)?;
    a.jne(host)?;
    a.push(ds)?;
    a.push(0x40)?;
    a.pop(ds)?;
    a.cmp(byte_ptr(bda_off(VIDEO_MODE)), 0x13)?;
    a.pop(ds)?;
    a.jne(host)?;
    a.push(es)?;
    a.push(di)?;
    a.imul_3(di, dx, 320)?;
    a.add(di, cx)?;
    a.push(0xA000)?;
    a.pop(es)?;
    a.mov(byte_ptr(di).es(), al)?;
    a.pop(di)?;
    a.pop(es)?;
    a.iret()
}

/// Builds both ROMs and the interrupt vector table.
pub fn install(mem: &mut Memory) -> RomMap {
    let mut map = RomMap::default();
    let mut b = Builder { mem, at: 0x0100 };
    let iret = b.emit(&[0xCF]);
    let crit_err = b.emit(&[0xB0, 0x03, 0xCF]); // INT 24h: AL=3 "fail"
    let irq_master = b.emit(&[0x50, 0xB0, 0x20, 0xE6, 0x20, 0x58, 0xCF]);
    let irq_slave = b.emit(&[0x50, 0xB0, 0x20, 0xE6, 0xA0, 0xE6, 0x20, 0x58, 0xCF]);
    // INT 70h: read RTC register C so a periodic/alarm source is re-armed.
    let irq_rtc = b.emit(&[
        0x50, 0xB0, 0x0C, 0xE6, 0x70, 0xE4, 0x71, 0xB0, 0x20, 0xE6, 0xA0, 0xE6, 0x20, 0x58, 0xCF,
    ]);
    // INT 08h: tick bookkeeping, user hook INT 1Ch, then EOI (IBM order).
    let mut t = hostcall(svc::TIMER_TICK).to_vec();
    t.extend_from_slice(&[0xCD, 0x1C, 0x50, 0xB0, 0x20, 0xE6, 0x20, 0x58, 0xCF]);
    let int08 = b.emit(&t);
    // INT 09h: read the scan code from the controller, translate, EOI.
    let mut k = vec![0x50, 0xE4, 0x60];
    k.extend_from_slice(&hostcall(svc::KEYBOARD_BYTE));
    k.extend_from_slice(&[0xB0, 0x20, 0xE6, 0x20, 0x58, 0xCF]);
    let int09 = b.emit(&k);
    // XMS entry: the short jump lets others hook it (XMS 3.0 convention).
    let mut x = vec![0xEB, 0x03, 0x90, 0x90, 0x90];
    x.extend_from_slice(&hostcall(svc::XMS));
    x.push(0xCB);
    map.xms_entry = b.emit(&x);
    map.shell_return = b.stop(svc::SHELL_RETURN);

    let mut vectors: Vec<(u8, u16, u16)> = Vec::new();
    let mut set = |v: u8, seg: u16, off: u16| vectors.push((v, seg, off));
    for v in 0u8..=0xFF {
        let off = match v {
            0x00 | 0x06 | 0x07 => b.stop(svc::exception(v)),
            0x01..=0x05 => iret,
            0x08 => int08,
            0x09 => int09,
            0x0A..=0x0F => irq_master,
            0x1A => b.service_with_fast_path(svc::int(v), int1a_read_ticks),
            0x16 => b.service_with_fast_path(svc::int(v), int16_check_empty),
            0x10 => b.service_with_fast_path(svc::int(v), int10_pixel_mode13),
            0x11..=0x13 | 0x15 => b.service(svc::int(v)),
            0x25 | 0x26 => b.service_retf(svc::int(v)),
            0x14 | 0x17 | 0x18 | 0x19 | 0x2E | 0x40 => b.stop(svc::unimplemented(v)),
            0x1B | 0x1C | 0x23 | 0x28 | 0x2A..=0x2D | 0x4A => iret,
            0x20 | 0x21 | 0x27 | 0x29 | 0x2F | 0x33 => b.service(svc::int(v)),
            0x24 => crit_err,
            0x70 => irq_rtc,
            0x71..=0x77 => irq_slave,
            0x67 => {
                set(v, EMS_SEG, EMS_ENTRY);
                continue;
            }
            0x1D => {
                set(v, VIDEO_SEG, vat::VIDEO_PARAMS);
                continue;
            }
            0x1E => {
                set(v, BIOS_SEG, at::DISKETTE_PARAMS);
                continue;
            }
            0x1F => {
                set(v, VIDEO_SEG, vat::FONT_8X8 + 0x400);
                continue;
            }
            0x43 => {
                set(v, VIDEO_SEG, vat::FONT_8X8);
                continue;
            }
            // Everything else is zero, as on a real PC: programs test
            // vectors for zero to see whether a driver is present.
            _ => continue,
        };
        set(v, BIOS_SEG, off);
    }
    let mem = b.mem;
    for &(v, seg, off) in &vectors {
        mem.load(v as u32 * 4, &off.to_le_bytes());
        mem.load(v as u32 * 4 + 2, &seg.to_le_bytes());
    }
    map.vectors = vectors;

    // EMS device header at F100:0000: next = FFFF:FFFF, character device,
    // name EMMXXXX0 at offset 0Ah; the INT 67h stub follows it.
    let mut hdr = vec![0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0xC0, 0x00, 0x00, 0x00, 0x00];
    hdr.extend_from_slice(b"EMMXXXX0");
    hdr.extend_from_slice(&hostcall(svc::int(0x67)));
    hdr.push(0xCF);
    mem.load(lin(EMS_SEG, 0), &hdr);

    // The CP/M entry that PSP:0005 calls (function number in CL).
    let mut cpm = hostcall(svc::CPM_CALL).to_vec();
    cpm.push(0xCB);
    mem.load(lin(BIOS_SEG, at::CPM_ENTRY), &cpm);
    // POST entry and reset vector: JMP F000:E05B, which asks for a reboot.
    mem.load(lin(BIOS_SEG, at::POST), &hostcall(svc::RESET));
    mem.load(
        lin(BIOS_SEG, at::RESET),
        &[0xEA, at::POST as u8, (at::POST >> 8) as u8, 0x00, 0xF0],
    );
    mem.load(lin(BIOS_SEG, at::DATE), b"01/01/92");
    mem.load(lin(BIOS_SEG, at::MODEL), &[0xFC, 0x00]);
    // INT 15h C0h configuration table: AT model FC/01, second PIC, RTC,
    // INT 15h/4Fh keyboard intercept, extended BIOS data area absent.
    mem.load(
        lin(BIOS_SEG, at::CONFIG_TABLE),
        &[0x08, 0x00, 0xFC, 0x01, 0x00, 0x70, 0x40, 0x00, 0x00, 0x00],
    );
    // 1.44 MB diskette parameter table (INT 1Eh).
    mem.load(
        lin(BIOS_SEG, at::DISKETTE_PARAMS),
        &[
            0xAF, 0x02, 0x25, 0x02, 0x12, 0x1B, 0xFF, 0x6C, 0xF6, 0x0F, 0x08,
        ],
    );

    // Fonts.
    let f16 = font_8x16();
    let f8 = font_8x8();
    mem.load(lin(BIOS_SEG, at::FONT_8X8), &f8[..f8.len().min(1024)]);
    mem.load(lin(VIDEO_SEG, 0), &[0x55, 0xAA, 0x40, 0xCB]);
    mem.load(lin(VIDEO_SEG, vat::FONT_8X16), f16);
    mem.load(lin(VIDEO_SEG, vat::FONT_8X8), f8);
    mem.load(lin(VIDEO_SEG, vat::FONT_8X14), &font_8x14(f16));
    // Static functionality table (INT 10h AH=1Bh points at it): modes 0-7,
    // 0Dh-13h supported, 200/350/400 scan lines, 8 blocks, features.
    mem.load(
        lin(VIDEO_SEG, vat::STATIC_FUNCS),
        &[
            0xFF, 0xE0, 0x0F, 0x00, 0x00, 0x00, 0x00, 0x07, 0x02, 0x08, 0xFF, 0x0E, 0x00, 0x00,
            0x3F, 0x00,
        ],
    );
    // VESA BIOS Extensions: the mode list and OEM string 4F00h points at,
    // and the window function (host call, RETF) of 4F01h's WinFuncPtr.
    mem.load(
        lin(VIDEO_SEG, vat::VBE_MODES),
        &crate::bios::vbe::mode_list(),
    );
    mem.load(lin(VIDEO_SEG, vat::VBE_OEM), crate::bios::vbe::OEM_STRING);
    let mut winfn = hostcall(svc::VBE_WINDOW).to_vec();
    winfn.push(0xCB);
    mem.load(lin(BIOS_SEG, at::VBE_WINDOW_FN), &winfn);
    map
}

/// An 8x14 font made from the 8x16 one by dropping the first and last rows
/// (the VGA BIOS keeps a separate 8x14 set; the devices ship 8x16 and 8x8).
pub fn font_8x14(f16: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(256 * 14);
    for ch in f16.chunks(16).take(256) {
        out.extend_from_slice(&ch[1..15.min(ch.len())]);
    }
    out
}
