//! End-to-end tests of the DOS machine with small programs assembled here:
//! process life cycle, console, memory, files, interrupts, keys, budget and
//! the stop reports. Every assertion is on exact values (codes, text,
//! dispatch counts, registers).

use iced_x86::code_asm::*;
use std::path::{Path, PathBuf};
use toyvm::session::{Config, End, Session};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("toyvm-dosprog-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Assembles a COM program (origin 100h).
fn com(f: impl FnOnce(&mut CodeAssembler) -> Result<(), IcedError>) -> Vec<u8> {
    let mut a = CodeAssembler::new(16).unwrap();
    f(&mut a).unwrap();
    a.assemble(0x100).unwrap()
}

/// Assembles code followed by data; the code gets the data's address
/// (two passes: 16-bit immediates keep the code size fixed).
fn com_data(f: impl Fn(&mut CodeAssembler, u16) -> Result<(), IcedError>, data: &[u8]) -> Vec<u8> {
    let len = com(|a| f(a, 0)).len() as u16;
    let mut v = com(|a| f(a, 0x100 + len));
    assert_eq!(v.len() as u16, len);
    v.extend_from_slice(data);
    v
}

fn run(dir: &Path, prog: &str, budget: u64) -> Session {
    let mut cfg = Config::new(dir.join(prog));
    cfg.budget = budget;
    let mut s = Session::new(&cfg).unwrap();
    s.run();
    s
}

/// INT 16h AH=00h (wait for a key), then exit with AL as the code.
fn read_key_and_exit(a: &mut CodeAssembler) -> Result<(), IcedError> {
    a.mov(ah, 0x00)?;
    a.int(0x16)?;
    a.mov(ah, 0x4C)?;
    a.int(0x21)
}

/// A 2M-dispatch run of `prog` with the key `a` typed at dispatch 100,000.
fn with_key_a(prog: &Path) -> Config {
    let mut cfg = Config::new(prog.to_path_buf());
    cfg.budget = 2_000_000;
    cfg.keys = Some("a@100000".into());
    cfg
}

fn exit(a: &mut CodeAssembler, code: u8) -> Result<(), IcedError> {
    a.mov(ax, 0x4C00 | code as u32)?;
    a.int(0x21)
}

#[test]
fn entry_registers_console_and_exit_code() {
    let d = tmp("entry");
    let p = com_data(
        |a, msg| {
            // Entry state as DOS leaves it for a COM program.
            a.mov(word_ptr(0x200), ax)?;
            a.mov(word_ptr(0x202), cx)?;
            a.mov(word_ptr(0x204), sp)?;
            a.mov(ah, 0x09)?;
            a.mov(dx, msg as u32)?;
            a.int(0x21)?;
            a.mov(ah, 0x02)?;
            a.mov(dl, b'X' as u32)?;
            a.int(0x21)?;
            exit(a, 7)
        },
        b"HI\r\n$",
    );
    std::fs::write(d.join("T.COM"), p).unwrap();
    let s = run(&d, "T.COM", 1_000_000);
    assert_eq!(s.end, Some(End::Exited { code: 7 }));
    assert_eq!(s.console_text().0, "HI\nX");
    let psp = s.machine.mem.ram();
    let psp_seg = 0x0130u32; // after the shell's PSP and the two environments
    let base = (psp_seg << 4) as usize;
    assert_eq!(&psp[base..base + 2], &[0xCD, 0x20], "PSP at {psp_seg:04X}");
    let w = |o: usize| u16::from_le_bytes([psp[base + o], psp[base + o + 1]]);
    assert_eq!((w(0x200), w(0x202), w(0x204)), (0x0000, 0x00FF, 0xFFFE));
    // 3 stores, then two calls of 2 loads + INT 21h (INT, STI, host call,
    // IRET: 4 dispatches), 1 load, INT 21h 4Ch (INT, STI, host call), and
    // the shell's host call that ends the run: 3 + 2 * 6 + 1 + 3 + 1.
    assert_eq!(s.clock(), 20);
}

#[test]
fn exec_runs_a_child_and_returns_its_code() {
    let d = tmp("exec");
    let child = com(|a| {
        // Print the command tail (PSP:81h, CR-terminated) then exit 42.
        let mut lp = a.create_label();
        let mut done = a.create_label();
        a.mov(si, 0x81)?;
        a.set_label(&mut lp)?;
        a.lodsb()?;
        a.cmp(al, 0x0D)?;
        a.je(done)?;
        a.mov(dl, al)?;
        a.mov(ah, 0x02)?;
        a.int(0x21)?;
        a.jmp(lp)?;
        a.set_label(&mut done)?;
        exit(a, 42)
    });
    // Data: name at +0, parameter block at +10, tail at +24.
    let mut data = b"CHILD.COM\0".to_vec();
    data.extend_from_slice(&[0; 14]);
    data.extend_from_slice(b"\x04 abc\r");
    let parent = com_data(
        |a, base| {
            // Shrink to 4 KiB so the child fits.
            a.mov(ah, 0x4A)?;
            a.mov(bx, 0x100)?;
            a.int(0x21)?;
            a.mov(word_ptr(base as u32 + 10 + 2), base as u32 + 24)?;
            a.mov(word_ptr(base as u32 + 10 + 4), cs)?;
            a.mov(ax, 0x4B00)?;
            a.mov(dx, base as u32)?;
            a.mov(bx, base as u32 + 10)?;
            a.int(0x21)?;
            a.mov(ah, 0x4D)?;
            a.int(0x21)?;
            a.mov(ah, 0x4C)?;
            a.int(0x21)
        },
        &data,
    );
    std::fs::write(d.join("CHILD.COM"), child).unwrap();
    std::fs::write(d.join("PARENT.COM"), parent).unwrap();
    let s = run(&d, "PARENT.COM", 1_000_000);
    assert_eq!(s.end, Some(End::Exited { code: 42 }));
    assert_eq!(s.bios.console.bytes, b" abc");
    // Everything the child owned is free again: the arena is back to the
    // shell's two blocks, the parent's block, its environment, and free space.
    let chain = toyvm::dos::memory::walk(&s.machine.mem, 0x100).unwrap();
    assert!(
        chain.iter().all(|m| m.owner == 0 || m.owner == 0x101),
        "{chain:?}"
    );
}

#[test]
fn command_com_c_runs_the_command() {
    let d = tmp("comspec");
    let child = com(|a| exit(a, 5));
    let mut data = b"C:\\COMMAND.COM\0".to_vec(); // 15 bytes
    data.extend_from_slice(&[0; 14]); // parameter block at +15
    data.extend_from_slice(b"\x0B /c kid.com\r"); // tail at +29
    let parent = com_data(
        |a, base| {
            a.mov(ah, 0x4A)?;
            a.mov(bx, 0x100)?;
            a.int(0x21)?;
            a.mov(word_ptr(base as u32 + 15 + 2), base as u32 + 29)?;
            a.mov(word_ptr(base as u32 + 15 + 4), cs)?;
            a.mov(ax, 0x4B00)?;
            a.mov(dx, base as u32)?;
            a.mov(bx, base as u32 + 15)?;
            a.int(0x21)?;
            a.mov(ah, 0x4D)?;
            a.int(0x21)?;
            a.mov(ah, 0x4C)?;
            a.int(0x21)
        },
        &data,
    );
    std::fs::write(d.join("KID.COM"), child).unwrap();
    std::fs::write(d.join("P.COM"), parent).unwrap();
    let s = run(&d, "P.COM", 1_000_000);
    assert_eq!(s.end, Some(End::Exited { code: 5 }));
}

#[test]
fn timer_interrupts_and_hlt_follow_the_clock() {
    let d = tmp("timer");
    let p = com(|a| {
        let mut lp = a.create_label();
        a.sti()?;
        a.set_label(&mut lp)?;
        a.hlt()?;
        a.jmp(lp)
    });
    std::fs::write(d.join("H.COM"), p).unwrap();
    let s = run(&d, "H.COM", 4_000_000);
    assert_eq!(s.end, Some(End::Budget));
    assert_eq!(s.clock(), 4_000_000);
    // 18.2065 Hz for one guest second: 18 ticks.
    assert_eq!(s.interrupts.get(&8).copied(), Some(18));
    let ticks = toyvm::bios::bda::rd32(&s.machine.mem, toyvm::bios::bda::TICKS);
    assert_eq!(ticks, 18);
}

#[test]
fn scripted_key_reaches_int16() {
    let d = tmp("keys");
    let p = com(read_key_and_exit);
    std::fs::write(d.join("K.COM"), p).unwrap();
    let cfg = with_key_a(&d.join("K.COM"));
    let mut s = Session::new(&cfg).unwrap();
    s.run();
    assert_eq!(s.end, Some(End::Exited { code: b'a' }));
    assert_eq!(s.interrupts.get(&9).copied(), Some(1));
    // The wait advanced the clock to the key's delivery, not past it.
    assert!(s.clock() > 100_000 && s.clock() < 110_000, "{}", s.clock());
}

#[test]
fn budget_stops_exactly() {
    let d = tmp("budget");
    let p = com(|a| {
        let mut lp = a.create_label();
        a.set_label(&mut lp)?;
        a.jmp(lp)
    });
    std::fs::write(d.join("L.COM"), p).unwrap();
    let s = run(&d, "L.COM", 12_345);
    assert_eq!(s.end, Some(End::Budget));
    assert_eq!(s.clock(), 12_345);
}

#[test]
fn invalid_opcode_without_handler_stops_with_a_report() {
    let d = tmp("ud");
    let p = com(|a| {
        a.nop()?;
        a.db(&[0x0F, 0x0B])
    });
    std::fs::write(d.join("U.COM"), p).unwrap();
    let s = run(&d, "U.COM", 1_000);
    match s.end {
        Some(End::Stopped(st)) => {
            assert_eq!((st.cs, st.ip), (0x0130, 0x0101));
            assert_eq!(st.bytes, vec![0x0F, 0x0B]);
            assert!(
                st.what.contains("invalid opcode (#UD) at 0130:0101"),
                "{}",
                st.what
            );
        }
        e => panic!("{e:?}"),
    }
}

#[test]
fn divide_error_without_handler_stops() {
    let d = tmp("de");
    let p = com(|a| {
        a.xor(cx, cx)?;
        a.div(cx)
    });
    std::fs::write(d.join("D.COM"), p).unwrap();
    let s = run(&d, "D.COM", 1_000);
    match s.end {
        Some(End::Stopped(st)) => {
            assert_eq!(st.bytes, vec![0xF7, 0xF1]);
            assert!(
                st.what.starts_with("divide error (#DE) at 0130:0102"),
                "{}",
                st.what
            );
        }
        e => panic!("{e:?}"),
    }
}

#[test]
fn unimplemented_service_stops_and_is_listed() {
    let d = tmp("unimpl");
    let p = com(|a| {
        a.mov(ah, 0x00)?;
        a.int(0x14)
    });
    std::fs::write(d.join("S.COM"), p).unwrap();
    let s = run(&d, "S.COM", 1_000);
    match &s.end {
        Some(End::Stopped(st)) => {
            assert_eq!(st.what, "unimplemented: INT 14h AH=00h at 0130:0102");
            assert_eq!(st.bytes, vec![0xCD, 0x14]);
        }
        e => panic!("{e:?}"),
    }
    assert_eq!(s.missing, vec!["INT 14h AH=00h".to_string()]);
}

#[test]
fn rdtsc_is_completed_from_the_dispatch_clock() {
    let d = tmp("tsc");
    let p = com(|a| {
        a.rdtsc()?;
        a.mov(ah, 0x4C)?;
        a.int(0x21)
    });
    std::fs::write(d.join("R.COM"), p).unwrap();
    let s = run(&d, "R.COM", 1_000);
    // The #UD delivery is dispatch 1; the handler reads the clock at its
    // host call (dispatch 2 done): EAX = 2.
    assert_eq!(s.end, Some(End::Exited { code: 2 }));
}

#[test]
fn files_live_in_the_overlay() {
    let d = tmp("files");
    std::fs::write(d.join("IN.TXT"), b"hello").unwrap();
    // Data: "in.txt" at +0, "OUT.TXT" at +7, buffer at +15.
    let mut data = b"in.txt\0OUT.TXT\0".to_vec();
    data.extend_from_slice(&[0; 16]);
    let p = com_data(
        |a, base| {
            let (inn, out, buf) = (base as u32, base as u32 + 7, base as u32 + 15);
            // Read IN.TXT (opened as in.txt), write it to OUT.TXT, exit with
            // the new file's size from a seek to its end.
            a.mov(ax, 0x3D00)?;
            a.mov(dx, inn)?;
            a.int(0x21)?;
            a.mov(bx, ax)?;
            a.mov(ah, 0x3F)?;
            a.mov(cx, 100)?;
            a.mov(dx, buf)?;
            a.int(0x21)?;
            a.mov(si, ax)?;
            a.mov(ah, 0x3E)?;
            a.int(0x21)?;
            a.mov(ah, 0x3C)?;
            a.xor(cx, cx)?;
            a.mov(dx, out)?;
            a.int(0x21)?;
            a.mov(bx, ax)?;
            a.mov(ah, 0x40)?;
            a.mov(cx, si)?;
            a.mov(dx, buf)?;
            a.int(0x21)?;
            a.mov(ax, 0x4202)?;
            a.xor(cx, cx)?;
            a.xor(dx, dx)?;
            a.int(0x21)?;
            a.mov(ah, 0x4C)?;
            a.int(0x21)
        },
        &data,
    );
    std::fs::write(d.join("F.COM"), p).unwrap();
    let mut s = run(&d, "F.COM", 1_000_000);
    assert_eq!(s.end, Some(End::Exited { code: 5 }));
    let node = s.dos.fs.open(&["OUT.TXT".to_string()]).unwrap();
    assert_eq!(s.dos.fs.node(node).data, b"hello");
    assert!(!d.join("OUT.TXT").exists());
}

/// A minimal MZ program around `code` (one relocation-free page).
fn mz(code: &[u8], min_alloc: u16, max_alloc: u16) -> Vec<u8> {
    let mut b = vec![0u8; 0x20];
    b[0..2].copy_from_slice(b"MZ");
    let total = 0x20 + code.len();
    b[2..4].copy_from_slice(&((total % 512) as u16).to_le_bytes());
    b[4..6].copy_from_slice(&(total.div_ceil(512) as u16).to_le_bytes());
    b[8..10].copy_from_slice(&2u16.to_le_bytes());
    b[0x0A..0x0C].copy_from_slice(&min_alloc.to_le_bytes());
    b[0x0C..0x0E].copy_from_slice(&max_alloc.to_le_bytes());
    b[0x10..0x12].copy_from_slice(&0x200u16.to_le_bytes()); // SP (SS = load segment)
    b[0x18..0x1A].copy_from_slice(&0x1Cu16.to_le_bytes());
    b.extend_from_slice(code);
    b
}

#[test]
fn exe_allocation_follows_dos_exec() {
    let d = tmp("exealloc");
    // Exit with the high byte of CS, then of PSP:0002 (memory top).
    let code = com(|a| {
        a.mov(ax, cs)?;
        a.mov(al, ah)?;
        a.mov(ah, 0x4C)?;
        a.int(0x21)
    });
    // A maximum of zero loads high: the image sits at the top of 640 KiB.
    std::fs::write(d.join("HIGH.EXE"), mz(&code, 0x20, 0)).unwrap();
    let s = run(&d, "HIGH.EXE", 100_000);
    assert_eq!(s.end, Some(End::Exited { code: 0x9F }));
    // Otherwise it loads low, right after its PSP.
    std::fs::write(d.join("LOW.EXE"), mz(&code, 0x20, 0x40)).unwrap();
    let s = run(&d, "LOW.EXE", 100_000);
    assert_eq!(s.end, Some(End::Exited { code: 0x01 }));
    // The block is the whole pages of the image (1 page = 20h paragraphs,
    // minus the 2-paragraph header) + the PSP + the maximum allocation:
    // exit with PSP:0002 - PSP.
    let size = com(|a| {
        a.mov(ax, word_ptr(2))?;
        a.mov(bx, ds)?;
        a.sub(ax, bx)?;
        a.mov(ah, 0x4C)?;
        a.int(0x21)
    });
    std::fs::write(d.join("SIZE.EXE"), mz(&size, 0x20, 0x40)).unwrap();
    let s = run(&d, "SIZE.EXE", 100_000);
    assert_eq!(
        s.end,
        Some(End::Exited {
            code: 0x20 - 2 + 0x10 + 0x40
        })
    );
}

/// INT 1Ah AH=00h and INT 16h AH=01h/11h with nothing typed are answered by
/// x86 in the BIOS stub (`bios/rom.rs`), not by the host call: the answers
/// must be the host call's (registers, the midnight flag cleared, ZF in the
/// caller's FLAGS with every other flag kept, AX unchanged), under every
/// arm, at the same dispatch count. A key that is waiting still goes to the
/// host call (second program: a poll loop until a scripted key).
#[test]
fn polled_bios_reads_answer_in_x86_as_the_host_call_did() {
    let d = tmp("polled");
    let p = com(|a| {
        a.mov(ax, 0x40)?;
        a.mov(es, ax)?;
        a.mov(dword_ptr(0x6C).es(), 0x0012_3456)?;
        a.mov(byte_ptr(0x70).es(), 1)?;
        a.mov(ax, 0x0099)?;
        a.int(0x1A)?;
        a.mov(word_ptr(0x200), cx)?;
        a.mov(word_ptr(0x202), dx)?;
        a.mov(word_ptr(0x204), ax)?;
        a.mov(al, byte_ptr(0x70).es())?;
        a.mov(byte_ptr(0x206), al)?;
        // AH=01h with CF set before, AH=11h with CF clear: FLAGS and AX after.
        for (ax_in, carry, at) in [(0x0177u32, true, 0x208u32), (0x1166, false, 0x20C)] {
            a.mov(ax, ax_in)?;
            if carry {
                a.stc()?;
            } else {
                a.clc()?;
            }
            a.int(0x16)?;
            a.pushf()?;
            a.pop(word_ptr(at))?;
            a.mov(word_ptr(at + 2), ax)?;
        }
        exit(a, 0)
    });
    std::fs::write(d.join("P.COM"), p).unwrap();
    let cfg = {
        let mut c = Config::new(d.join("P.COM"));
        c.budget = 1_000_000;
        c
    };
    for &arm in toyvm::session::ARMS {
        let mut s = Session::with_engine(&cfg, toyvm::session::engine(arm).unwrap()).unwrap();
        s.run();
        assert_eq!(s.end, Some(End::Exited { code: 0 }), "{arm}");
        let ram = s.machine.mem.ram();
        let base = 0x1300usize; // the program's PSP segment 0130h
        let w = |o: usize| u16::from_le_bytes([ram[base + o], ram[base + o + 1]]);
        // CX:DX = the ticks, AL = the midnight flag, AH kept; the flag cleared.
        assert_eq!(
            (w(0x200), w(0x202), w(0x204)),
            (0x0012, 0x3456, 0x0001),
            "{arm}"
        );
        assert_eq!(ram[base + 0x206], 0, "{arm}: midnight flag cleared");
        // AH=01h: ZF set, CF (set before) kept, IF back on, AX unchanged.
        assert_eq!(w(0x208) & 0x0241, 0x0241, "{arm}: FLAGS {:04X}", w(0x208));
        assert_eq!(w(0x20A), 0x0177, "{arm}");
        // AH=11h: ZF set, CF (clear before) kept clear.
        assert_eq!(w(0x20C) & 0x0241, 0x0240, "{arm}: FLAGS {:04X}", w(0x20C));
        assert_eq!(w(0x20E), 0x1166, "{arm}");
        // 4 (ES, the BDA stores), 1 + INT 1Ah in x86 (INT + 11), 5, 2 +
        // INT 16h AH=01h (INT + 16), 3, 2 + INT 16h AH=11h (INT + 18), 3,
        // then 1 + INT 21h 4Ch (INT, STI, host call) and the shell's host
        // call. Through the host call INT 1Ah was 4 and INT 16h 4.
        assert_eq!(
            s.clock(),
            4 + 1 + 12 + 5 + 2 + 17 + 3 + 2 + 19 + 3 + 1 + 3 + 1,
            "{arm}"
        );
    }

    let p = com(|a| {
        let mut poll = a.create_label();
        a.set_label(&mut poll)?;
        a.mov(ah, 0x01)?;
        a.int(0x16)?;
        a.jz(poll)?;
        read_key_and_exit(a)
    });
    std::fs::write(d.join("K.COM"), p).unwrap();
    let cfg = with_key_a(&d.join("K.COM"));
    let mut clocks = Vec::new();
    for &arm in toyvm::session::ARMS {
        let mut s = Session::with_engine(&cfg, toyvm::session::engine(arm).unwrap()).unwrap();
        s.run();
        assert_eq!(s.end, Some(End::Exited { code: b'a' }), "{arm}");
        clocks.push((arm, s.clock()));
    }
    assert!(clocks.iter().all(|c| c.1 == clocks[0].1), "{clocks:?}");
    assert!(clocks[0].1 > 100_000 && clocks[0].1 < 110_000, "{clocks:?}");
}

/// INT 10h AH=0Ch in mode 13h runs in x86 in the BIOS stub (`bios/rom.rs`,
/// `int10_pixel_mode13`); in other modes it is the host call's. The pixels
/// land where the host call put them (A000:(DX*320+CX) mod 64K, AL as is,
/// no XOR), AH=0Dh (the host) reads them back, registers and flags are
/// kept, under every arm at the same dispatch count and frame.
#[test]
fn mode13_pixels_written_in_x86_as_the_host_call_wrote_them() {
    let d = tmp("pixels");
    // (x, y, colour): a corner, the last pixel, offset 64K (wraps to offset
    // 0, over the first), and a colour with bit 7 set (no XOR in 256-colour
    // modes).
    let pts: [(u16, u16, u8); 4] = [
        (0, 0, 0x11),
        (319, 199, 0x22),
        (256, 204, 0x33),
        (5, 3, 0x85),
    ];
    let p = com(|a| {
        a.mov(ax, 0x0013)?;
        a.int(0x10)?;
        a.mov(si, 0x0200u32)?;
        for (i, &(x, y, c)) in pts.iter().enumerate() {
            a.mov(cx, x as u32)?;
            a.mov(dx, y as u32)?;
            a.mov(bx, 0x0707)?;
            a.mov(ax, 0x0C00 | c as u32)?;
            a.stc()?;
            a.int(0x10)?;
            a.pushf()?;
            a.pop(word_ptr(0x200 + 8 * i as u32))?;
            a.mov(word_ptr(0x202 + 8 * i as u32), ax)?;
            a.mov(word_ptr(0x204 + 8 * i as u32), bx)?;
            // Read back through the host call (AH=0Dh).
            a.mov(ah, 0x0D)?;
            a.int(0x10)?;
            a.mov(byte_ptr(0x206 + 8 * i as u32), al)?;
        }
        a.mov(word_ptr(0x1F0), si)?;
        exit(a, 0)
    });
    std::fs::write(d.join("P.COM"), p).unwrap();
    let cfg = {
        let mut c = Config::new(d.join("P.COM"));
        c.budget = 1_000_000;
        c
    };
    let mut first: Option<(u64, Vec<u8>)> = None;
    for &arm in toyvm::session::ARMS {
        let mut s = Session::with_engine(&cfg, toyvm::session::engine(arm).unwrap()).unwrap();
        s.run();
        assert_eq!(s.end, Some(End::Exited { code: 0 }), "{arm}");
        let ram = s.machine.mem.ram();
        let base = 0x1300usize;
        let w = |o: usize| u16::from_le_bytes([ram[base + o], ram[base + o + 1]]);
        assert_eq!(w(0x1F0), 0x0200, "{arm}: SI kept");
        for (i, &(x, y, c)) in pts.iter().enumerate() {
            let o = 0x200 + 8 * i;
            assert_eq!(w(o) & 1, 1, "{arm}: CF kept at pixel {i}");
            assert_eq!(w(o + 2), 0x0C00 | c as u16, "{arm}: AX kept at pixel {i}");
            assert_eq!(w(o + 4), 0x0707, "{arm}: BX kept at pixel {i}");
            assert_eq!(ram[base + o + 6], c, "{arm}: AH=0Dh at ({x},{y})");
        }
        let rgb = s.frame().rgb;
        match &first {
            None => first = Some((s.clock(), rgb)),
            Some(x) => assert!(
                x.0 == s.clock() && x.1 == rgb,
                "{arm}: clock or frame differs"
            ),
        }
    }
}
