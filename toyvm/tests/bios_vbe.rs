//! VESA BIOS Extensions: one small COM program asks for the controller and
//! mode information, sets mode 10Eh (320x200, 5:6:5), writes pixels through
//! window A in two banks (bank switch by INT 10h 4F05h and by a far call to
//! the mode's WinFuncPtr), reads one back and queries the mode; the test
//! checks the information blocks, the status words and the frame's pixels
//! byte for byte, under every arm (same dispatches, same frame hash).

use iced_x86::code_asm::*;
use std::path::PathBuf;
use toyvm::session::{engine, Config, End, Session, ARMS};

/// Where DOS puts the COM program's PSP in this machine.
const PSP: usize = 0x0130 << 4;

fn vbe_program() -> Vec<u8> {
    let mut a = CodeAssembler::new(16).unwrap();
    let f = |a: &mut CodeAssembler| -> Result<(), IcedError> {
        a.mov(ax, 0x4F00u32)?;
        a.mov(di, 0x400u32)?;
        a.int(0x10)?;
        a.mov(word_ptr(0x300), ax)?;
        a.mov(ax, 0x4F01u32)?;
        a.mov(cx, 0x10Eu32)?;
        a.mov(di, 0x500u32)?;
        a.int(0x10)?;
        a.mov(word_ptr(0x302), ax)?;
        a.mov(ax, 0x4F02u32)?;
        a.mov(bx, 0x10Eu32)?;
        a.int(0x10)?;
        a.mov(word_ptr(0x304), ax)?;
        a.mov(ax, 0xA000u32)?;
        a.mov(es, ax)?;
        // Pixel (0,0) red.
        a.mov(word_ptr(0).es(), 0xF800u32)?;
        // Bank 1 by INT 10h: byte 0 of bank 1 is pixel 32768 = (128, 102).
        a.mov(ax, 0x4F05u32)?;
        a.xor(bx, bx)?;
        a.mov(dx, 1u32)?;
        a.int(0x10)?;
        a.mov(word_ptr(0x306), ax)?;
        a.mov(word_ptr(0).es(), 0x07E0u32)?;
        // Back to bank 0 by the window function; AX must survive it.
        a.mov(ax, 0x1234u32)?;
        a.xor(bx, bx)?;
        a.xor(dx, dx)?;
        a.call(dword_ptr(0x50C))?;
        a.mov(word_ptr(0x308), ax)?;
        // Pixel (1,0) blue, read back.
        a.mov(word_ptr(2).es(), 0x001Fu32)?;
        a.mov(ax, word_ptr(2).es())?;
        a.mov(word_ptr(0x30E), ax)?;
        a.mov(ax, 0x4F05u32)?;
        a.mov(bx, 0x0100u32)?;
        a.int(0x10)?;
        a.mov(word_ptr(0x30A), dx)?;
        a.mov(ax, 0x4F03u32)?;
        a.int(0x10)?;
        a.mov(word_ptr(0x30C), bx)?;
        // The VBE 2.0 linear frame buffer is refused; the mode stays.
        a.mov(ax, 0x4F02u32)?;
        a.mov(bx, 0x4111u32)?;
        a.int(0x10)?;
        a.mov(word_ptr(0x310), ax)?;
        a.mov(ax, 0x4C00u32)?;
        a.int(0x21)
    };
    f(&mut a).unwrap();
    a.assemble(0x100).unwrap()
}

fn dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("toyvm-vbe-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("VBE.COM"), vbe_program()).unwrap();
    d
}

#[test]
fn vbe_mode_10e_banks_and_information_blocks() {
    let d = dir();
    let mut cfg = Config::new(d.join("VBE.COM"));
    cfg.budget = 1_000_000;
    let mut reference: Option<(u64, u64)> = None;
    for &arm in ARMS {
        let mut s = Session::with_engine(&cfg, engine(arm).unwrap()).unwrap();
        s.run();
        assert_eq!(s.end, Some(End::Exited { code: 0 }), "{arm}");
        let ram = s.machine.mem.ram();
        let w = |a: usize| u16::from_le_bytes([ram[a], ram[a + 1]]);
        let status: Vec<u16> = [
            0x300, 0x302, 0x304, 0x306, 0x308, 0x30A, 0x30C, 0x30E, 0x310,
        ]
        .iter()
        .map(|&o| w(PSP + o))
        .collect();
        assert_eq!(
            status,
            [0x004F, 0x004F, 0x004F, 0x004F, 0x1234, 0x0000, 0x010E, 0x001F, 0x014F],
            "{arm}: 4F00 4F01 4F02 4F05 winfn-AX get-bank 4F03 readback LFB"
        );
        // VbeInfoBlock: signature, version 1.2, 16 x 64K, mode list in ROM.
        let info = PSP + 0x400;
        assert_eq!(&ram[info..info + 4], b"VESA", "{arm}");
        assert_eq!(w(info + 4), 0x0102);
        assert_eq!(w(info + 18), 16);
        let list = ((w(info + 16) as usize) << 4) + w(info + 14) as usize;
        assert_eq!((w(list), w(list + 2)), (0x100, 0x101));
        let oem = ((w(info + 8) as usize) << 4) + w(info + 6) as usize;
        assert_eq!(&ram[oem..oem + 14], b"toyvm VBE 1.2\0");
        // ModeInfoBlock of 10Eh.
        let mi = PSP + 0x500;
        assert_eq!(w(mi), 0x001B, "mode attributes");
        assert_eq!(
            (ram[mi + 2], w(mi + 4), w(mi + 6), w(mi + 8)),
            (7, 64, 64, 0xA000)
        );
        assert_eq!((w(mi + 0x10), w(mi + 0x12), w(mi + 0x14)), (640, 320, 200));
        assert_eq!(
            (ram[mi + 0x19], ram[mi + 0x1B], ram[mi + 0x1D]),
            (16, 6, 7),
            "bpp, direct colour, 8 image pages"
        );
        assert_eq!(&ram[mi + 0x1F..mi + 0x25], &[5, 11, 6, 5, 5, 0]);
        // The frame: 320x200 with the three pixels written.
        let f = s.frame();
        assert_eq!((f.width, f.height), (320, 200), "{arm}");
        assert_eq!(f.pixel(0, 0), [255, 0, 0]);
        assert_eq!(f.pixel(1, 0), [0, 0, 255]);
        assert_eq!(f.pixel(128, 102), [0, 255, 0]);
        assert_eq!(f.pixel(2, 0), [0, 0, 0]);
        let got = (s.clock(), f.hash());
        match reference {
            None => reference = Some(got),
            Some(r) => assert_eq!(got, r, "{arm} against {}", ARMS[0]),
        }
    }
}
