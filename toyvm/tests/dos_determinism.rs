//! Determinism (ARCHITECTURE.md invariant 7): the same command twice gives
//! byte-identical JSON reports, for a synthetic program that uses the timer,
//! keys, files and the clock, and for a real program when dos-real exists.

use iced_x86::code_asm::*;
use std::path::PathBuf;
use toyvm::session::{Config, Session};

fn report_json(cfg: &Config) -> String {
    let mut s = Session::new(cfg).unwrap();
    s.run();
    serde_json::to_string_pretty(&s.report(cfg)).unwrap()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("toyvm-det-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn synthetic_program_reports_are_byte_identical() {
    let d = tmp("synthetic");
    let mut a = CodeAssembler::new(16).unwrap();
    let mut lp = a.create_label();
    // Mode 13h, then forever: read the time, plot it, poll a key.
    a.mov(ax, 0x13u32).unwrap();
    a.int(0x10).unwrap();
    a.sti().unwrap();
    a.set_label(&mut lp).unwrap();
    a.mov(ah, 0x2C).unwrap();
    a.int(0x21).unwrap();
    a.mov(al, dl).unwrap();
    a.mov(ah, 0x0C).unwrap();
    a.int(0x10).unwrap();
    a.inc(cx).unwrap();
    a.mov(ah, 0x01).unwrap();
    a.int(0x16).unwrap();
    a.hlt().unwrap();
    a.jmp(lp).unwrap();
    std::fs::write(d.join("DET.COM"), a.assemble(0x100).unwrap()).unwrap();
    let mut cfg = Config::new(d.join("DET.COM"));
    cfg.budget = 3_000_000;
    cfg.keys = Some("space@500000,esc@1200000".into());
    let one = report_json(&cfg);
    let two = report_json(&cfg);
    assert_eq!(one, two);
    assert!(one.contains("\"end\": \"budget\""), "{one}");
    assert!(one.contains("\"09h\": 4"), "{one}");
}

#[test]
fn real_program_reports_are_byte_identical() {
    let Some(dir) = corpus_dos::shared_data_or_skip("DOS_REAL", "dos-real", "MANIFEST.tsv") else {
        return;
    };
    let prog = dir.join("efliks-demoscene-legacy/asm/plasma/PLASMA.COM");
    if !prog.exists() {
        eprintln!(
            "skipped: {} is absent (the dos-real corpus is not on this machine)",
            prog.display()
        );
        return;
    }
    let mut cfg = Config::new(prog);
    cfg.budget = 3_000_000;
    assert_eq!(report_json(&cfg), report_json(&cfg));
}

#[test]
fn slicing_the_run_does_not_change_the_state() {
    // A timer-hooking program: INT 1Ch counts into a word, the main loop
    // mixes that count into the screen. Interrupts land on exact dispatches,
    // so stopping every 7919 dispatches must give the state of one long run.
    let d = tmp("slices");
    let mut a = CodeAssembler::new(16).unwrap();
    let mut isr = a.create_label();
    let mut lp = a.create_label();
    a.mov(ax, 0x13u32).unwrap();
    a.int(0x10).unwrap();
    a.mov(ax, 0x251Cu32).unwrap();
    a.mov(dx, 0x180u32).unwrap(); // the ISR is placed at 0180h below
    a.int(0x21).unwrap();
    a.push(0xA000u32).unwrap();
    a.pop(es).unwrap();
    a.xor(di, di).unwrap();
    a.set_label(&mut lp).unwrap();
    a.mov(al, byte_ptr(0x1F0)).unwrap();
    a.stosb().unwrap();
    a.jmp(lp).unwrap();
    let mut code = a.assemble(0x100).unwrap();
    code.resize(0x80, 0x90);
    let mut b = CodeAssembler::new(16).unwrap();
    b.set_label(&mut isr).unwrap();
    b.inc(byte_ptr(0x1F0).cs()).unwrap();
    b.iret().unwrap();
    code.extend(b.assemble(0x180).unwrap());
    std::fs::write(d.join("SLICE.COM"), &code).unwrap();
    let mut cfg = Config::new(d.join("SLICE.COM"));
    cfg.budget = 1_500_000;
    cfg.keys = Some("a@300000".into());
    let mut one = Session::new(&cfg).unwrap();
    one.run_until(1_500_000);
    let mut many = Session::new(&cfg).unwrap();
    let mut t = 0;
    while t < 1_500_000 {
        t = (t + 7919).min(1_500_000);
        many.run_until(t);
    }
    let (a, b) = (one.snapshot(), many.snapshot());
    assert_eq!(a, b);
    assert_eq!(a.dispatches, 1_500_000);
    assert_eq!(one.interrupts, many.interrupts);
    assert_eq!(one.interrupts.get(&8).copied(), Some(6));
}

#[test]
fn console_text_does_not_touch_the_vga_latches() {
    // Text mode: write "AB" at B800:0000, then read B800:0002 so the latches
    // hold 'B' and its attribute plane byte. Reading the console (an
    // observer) must leave them exactly so: they are guest-visible state.
    let d = tmp("latches");
    let mut a = CodeAssembler::new(16).unwrap();
    let mut spin = a.create_label();
    a.push(0xB800u32).unwrap();
    a.pop(es).unwrap();
    a.mov(byte_ptr(0).es(), b'A' as u32).unwrap();
    a.mov(byte_ptr(2).es(), b'B' as u32).unwrap();
    a.mov(byte_ptr(160).es(), b'Z' as u32).unwrap();
    a.mov(al, byte_ptr(2).es()).unwrap();
    a.set_label(&mut spin).unwrap();
    a.jmp(spin).unwrap();
    std::fs::write(d.join("LATCH.COM"), a.assemble(0x100).unwrap()).unwrap();
    let mut cfg = Config::new(d.join("LATCH.COM"));
    cfg.budget = 50_000;
    let mut s = Session::new(&cfg).unwrap();
    s.run();
    let before = s.machine.dev.vga.latch;
    assert_eq!(before[0], b'B', "the guest's read latched 'B' from plane 0");
    let (_, screen) = s.console_text();
    assert!(screen.unwrap().starts_with("AB\nZ"));
    assert_eq!(s.machine.dev.vga.latch, before);
}
