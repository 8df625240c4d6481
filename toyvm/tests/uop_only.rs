//! The `only-naive` arm against `l1` on small hand-assembled DOS programs:
//! every divergence the corpus sweeps found, minimized, plus the shapes the
//! drive loop must get exactly right (interrupt shadows, HLT, self-modifying
//! code, spin loops, budget tails, x87 instructions run inside µop
//! programs). Each case runs both arms in lockstep, compares
//! `Session::snapshot()` (dispatches, CS:IP, registers, flags, RAM,
//! devices, frame) and the x87 state at many points and at the end, and the
//! console, and checks the program's own result (exit code / output).

use std::path::PathBuf;
use toyvm::session::{Config, End, Session, Snapshot};

/// Writes `code` as a .COM file in a fresh directory.
fn com(name: &str, code: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("uop_only_{}_{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{}.COM", name.to_uppercase()));
    std::fs::write(&p, code).unwrap();
    p
}

fn session(p: &PathBuf, arm: &str, budget: u64) -> Session {
    let mut c = Config::new(p);
    c.arm = arm.into();
    c.budget = budget;
    Session::new(&c).unwrap()
}

/// The µop arms every case runs against `l1`: the naive lowering, the
/// block-local and region passes, tier-up after 2 entries (so almost
/// every program is swapped while the case runs), and the `uop` arm with a
/// heat threshold of 2 (L1 blocks first, hot heads built as µop programs
/// while the case runs).
const UOP_ARMS: &[&str] = &["only-naive", "only-baseline", "only-t2", "uop2"];

/// Runs `l1` and every µop arm in lockstep (snapshots every `step`
/// dispatches) and returns the end and console of the last µop arm.
fn lockstep(p: &PathBuf, budget: u64, step: u64) -> (End, String, Snapshot) {
    let mut last = None;
    for arm in UOP_ARMS {
        last = Some(lockstep_arm(p, arm, budget, step));
    }
    last.expect("at least one arm")
}

fn lockstep_arm(p: &PathBuf, arm: &str, budget: u64, step: u64) -> (End, String, Snapshot) {
    let mut a = session(p, "l1", budget);
    let mut b = session(p, arm, budget);
    let mut t = 0;
    loop {
        t = (t + step).min(budget);
        let ga = a.run_until(t);
        let gb = b.run_until(t);
        let (sa, sb) = (a.snapshot(), b.snapshot());
        assert_eq!(sa, sb, "l1 and {arm} differ at {t}");
        assert_eq!(a.cpu.fpu, b.cpu.fpu, "x87 state differs at {t}");
        assert_eq!(ga, gb, "one arm ended at {t}");
        if !ga || t >= budget {
            break;
        }
    }
    let ea = a.run().clone();
    let eb = b.run().clone();
    assert_eq!(ea, eb);
    assert_eq!(a.console_text(), b.console_text());
    assert_eq!(a.cpu.fpu, b.cpu.fpu);
    let snap = b.snapshot();
    assert_eq!(a.snapshot(), snap);
    (eb, b.console_text().0, snap)
}

/// Found by the dos-real sweep (DOS4GW.EXE at 32394, PAM.EXE at 4248209):
/// a near CALL whose return-address push stores into code bytes (the stack
/// over code a program was built from). The push's owed-stop test exited
/// at the fall-through IP instead of the call target, so the µop arm went
/// on after the CALL instead of inside the callee.
#[test]
fn call_push_into_code_lands_in_the_callee() {
    let mut c = vec![0x90u8; 0x40];
    // 100: jmp 118h
    c[0x00..0x02].copy_from_slice(&[0xEB, 0x16]);
    // 118: mov sp, 11Ch        (the push writes 11Ah..11Bh: this line's bytes)
    c[0x18..0x1B].copy_from_slice(&[0xBC, 0x1C, 0x01]);
    // 11B: call 130h
    c[0x1B..0x1E].copy_from_slice(&[0xE8, 0x12, 0x00]);
    // 11E: mov ax, 4C01h ; int 21h   (reached only by the bug)
    c[0x1E..0x23].copy_from_slice(&[0xB8, 0x01, 0x4C, 0xCD, 0x21]);
    // 130: mov ax, 4C00h ; int 21h
    c[0x30..0x35].copy_from_slice(&[0xB8, 0x00, 0x4C, 0xCD, 0x21]);
    let p = com("callpush", &c);
    let (end, _, _) = lockstep(&p, 200_000, 1);
    assert_eq!(end, End::Exited { code: 0 });
}

/// Found by the first built-in corpus sweep (25 programs, most at dispatch
/// 219703, the first timer interrupt; HLTFAST at 3449): after `STI` the
/// next instruction runs alone on the L1 side, and `exec::run_op` does not
/// clear the interrupt shadow (`l0::step` does). A `HLT` there kept the
/// shadow, so the session never delivered the interrupt that should wake it.
#[test]
fn sti_hlt_wakes_on_the_timer_interrupt() {
    // cli ; sti ; hlt ; mov ax,4C00h ; int 21h
    let c = [0xFA, 0xFB, 0xF4, 0xB8, 0x00, 0x4C, 0xCD, 0x21];
    let p = com("stihlt", &c);
    let (end, _, snap) = lockstep(&p, 1_000_000, 997);
    assert_eq!(end, End::Exited { code: 0 });
    // The first timer tick wakes it (IRQ 0 every 219702.5 dispatches).
    assert!(
        snap.dispatches > 219_702 && snap.dispatches < 220_000,
        "{snap:?}"
    );
}

/// STI with IF already set is a NOP inside µop programs; STI with IF clear
/// sets IF and leaves with a shadow exit, after which the driver runs
/// exactly the next instruction and looks. The loop keeps IF clear for most
/// of its dispatches, so the timer ticks (IRQ 0 every 219702.5 dispatches)
/// arrive with IF clear and must be taken exactly after the instruction that
/// follows the STI (`inc bx`, or the host call of the BIOS INT 1Ah stub,
/// which starts with STI and is entered with IF clear). The program's own
/// IRQ 0 handler adds each interrupted IP into memory, so a tick taken one
/// instruction early or late stays visible. Slices are long (so the STI
/// runs inside a µop program, not as a budget tail), and around the first
/// tick a fresh pair of runs stops at every dispatch, so some slice ends
/// right after the STI (the shadow must survive the slice boundary).
#[test]
fn sti_with_if_set_is_a_nop_and_with_if_clear_opens_the_shadow() {
    // 100: mov ax,2508h / mov dx,isr / int 21h
    // 108: cli / mov cx,60 / 10C: inc ax / loop 10C
    // 10F: sti / inc bx / sti / inc dx / mov ah,0 / int 1Ah / jmp 108
    // isr: push bp / mov bp,sp / push ax / mov ax,[bp+2] / add [cs:sum],ax
    //   inc word [cs:cnt] / mov al,20h / out 20h,al / pop ax / pop bp / iret
    let c = [
        0xb8, 0x08, 0x25, 0xba, 0x19, 0x01, 0xcd, 0x21, 0xfa, 0xb9, 0x3c, 0x00, 0x40, 0xe2, 0xfd,
        0xfb, 0x43, 0xfb, 0x42, 0xb4, 0x00, 0xcd, 0x1a, 0xeb, 0xef, 0x55, 0x89, 0xe5, 0x50, 0x8b,
        0x46, 0x02, 0x2e, 0x01, 0x06, 0x31, 0x01, 0x2e, 0xff, 0x06, 0x33, 0x01, 0xb0, 0x20, 0xe6,
        0x20, 0x58, 0x5d, 0xcf, 0x00, 0x00, 0x00, 0x00,
    ];
    let p = com("stinop", &c);
    let (_, _, snap) = lockstep(&p, 1_150_000, 9_973);
    assert_eq!(snap.dispatches, 1_150_000);
    let tick = 219_702;
    for d in tick..tick + 140 {
        let mut a = session(&p, "l1", 1_150_000);
        let mut b = session(&p, "only-naive", 1_150_000);
        for t in [d, d + 1, d + 400] {
            a.run_until(t);
            b.run_until(t);
            assert_eq!(a.snapshot(), b.snapshot(), "stopped at {d}, then at {t}");
        }
    }
}

/// Found on dos-real (Second Reality's U2.EXE running through 64 KiB of
/// zeroes, `add [bx+si],al`): straight code entered at a new offset (an
/// interrupt return, a computed jump) built a new 32-instruction line from
/// there, and every later line followed that phase, so each new entry
/// lowered the whole run again (97,571 programs, 96,210 evictions in 20M
/// dispatches). A line now ends where a program already starts, so a new
/// entry costs one short program that links into the existing ones.
#[test]
fn a_line_entered_mid_run_joins_the_existing_programs() {
    // 100: mov bx, 200h ; mov si, <entry table> ; mov cx, 12
    // 109: call [si] ; add si, 2 ; loop 109 ; mov ax,4C00h ; int 21h
    // 200..: 960 x inc ax, then ret
    let mut c = vec![0x90u8; 0x100 + 960 + 1 + 0x40];
    let prog = [
        0xBE, 0x00, 0x06, // 100: mov si, 600h (entry table)
        0xB9, 0x0C, 0x00, // 103: mov cx, 12
        0xFF, 0x14, // 106: call [si]
        0x83, 0xC6, 0x02, // 108: add si, 2
        0xE2, 0xF9, // 10B: loop 106
        0xB8, 0x00, 0x4C, // 10D: mov ax, 4C00h
        0xCD, 0x21, // 110: int 21h
    ];
    c[..prog.len()].copy_from_slice(&prog);
    for i in 0..960 {
        c[0x100 + i] = 0x40; // inc ax at 200h..
    }
    c[0x100 + 960] = 0xC3; // ret
                           // Entry table at 600h (file offset 500h): 12 different phases.
    c.resize(0x500 + 24, 0x90);
    for (k, off) in [0u16, 5, 7, 13, 1, 30, 2, 17, 9, 31, 3, 22]
        .iter()
        .enumerate()
    {
        let t = 0x200 + off;
        c[0x500 + 2 * k..0x500 + 2 * k + 2].copy_from_slice(&t.to_le_bytes());
    }
    let p = com("midrun", &c);
    let (end, _, _) = lockstep(&p, 200_000, 997);
    assert_eq!(end, End::Exited { code: 0 });
    let mut s = session(&p, "only-naive", 200_000);
    s.run();
    let ctr = s.counters().expect("counters");
    let lowered = ctr["instructions_lowered"].as_u64().unwrap();
    let built = ctr["programs_built"].as_u64().unwrap();
    // One pass of 32-instruction lines over the run (30 programs), plus one
    // short joining program per other phase; without the rule each phase
    // lowered the whole run again (~11,000 instructions).
    assert!(
        lowered < 1400,
        "{lowered} instructions lowered in {built} programs"
    );
}

/// x87 instructions run inside µop programs (`Op::X87` through the CPU's
/// FPU): FILD/FLD m16/m32/m64/m80, FMUL, FADD m64, FST/FISTP, FCOMP with
/// FNSTSW AX + SAHF, FNSTCW/FLDCW, 300 times; each iteration also loads a
/// qword at ES:FFFEh, which overruns the segment (#GP: the machine refuses,
/// L1 delivers it, the INT 0Dh handler skips the instruction); then an FSTP
/// stores over the next instruction of its own line (mov ax,4C34h
/// replaces four NOPs), which must run as stored. Every dispatch agrees
/// with L1, the x87 state included, and no x87 instruction but the
/// overrunning one (and the folded FINIT) leaves the engine.
#[test]
fn x87_instructions_run_in_the_engine_exactly() {
    // nasm source (org 100h):
    //   mov ax,250Dh / mov dx,gp_isr / int 21h / finit / mov cx,300
    // lp: fild word [n] / fld dword [f32] / fmul st1 / fadd qword [f64]
    //   fst qword [out64] / fistp dword [out32] / fld tword [f80] / fcomp st1
    //   fnstsw ax / sahf / jc skip / inc word [cnt]
    // skip: fstp st0 / fnstcw [cw] / fldcw [cw] / inc word [n]
    //   fld qword [es:0FFFEh] / loop lp
    //   mov ax,4C01h / fld dword [patchval] / fstp dword [patch]
    // patch: nop x4 / int 21h
    // gp_isr: push bp / mov bp,sp / add word [bp+2],5 / inc word [cs:gpcount]
    //   pop bp / iret
    // data: n dw 3, cnt dw 0, gpcount dw 0, cw dw 0, f32 dd 1.5,
    //   f64 dq -100.25, f80 dt 250.0, out64 dq 0, out32 dd 0,
    //   patchval db B8h,34h,4Ch,90h   (mov ax,4C34h / nop)
    let c: [u8; 150] = [
        0xb8, 0x0d, 0x25, 0xba, 0x59, 0x01, 0xcd, 0x21, 0x9b, 0xdb, 0xe3, 0xb9, 0x2c, 0x01, 0xdf,
        0x06, 0x68, 0x01, 0xd9, 0x06, 0x70, 0x01, 0xd8, 0xc9, 0xdc, 0x06, 0x74, 0x01, 0xdd, 0x16,
        0x86, 0x01, 0xdb, 0x1e, 0x8e, 0x01, 0xdb, 0x2e, 0x7c, 0x01, 0xd8, 0xd9, 0xdf, 0xe0, 0x9e,
        0x72, 0x04, 0xff, 0x06, 0x6a, 0x01, 0xdd, 0xd8, 0xd9, 0x3e, 0x6e, 0x01, 0xd9, 0x2e, 0x6e,
        0x01, 0xff, 0x06, 0x68, 0x01, 0x26, 0xdd, 0x06, 0xfe, 0xff, 0xe2, 0xc6, 0xb8, 0x01, 0x4c,
        0xd9, 0x06, 0x92, 0x01, 0xd9, 0x1e, 0x53, 0x01, 0x90, 0x90, 0x90, 0x90, 0xcd, 0x21, 0x55,
        0x89, 0xe5, 0x83, 0x46, 0x02, 0x05, 0x2e, 0xff, 0x06, 0x6c, 0x01, 0x5d, 0xcf, 0x90, 0x03,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc0, 0x3f, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x10, 0x59, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xfa, 0x06, 0x40, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xb8, 0x34, 0x4c, 0x90,
    ];
    let p = com("x87mix", &c);
    let (end, _, _) = lockstep(&p, 400_000, 97);
    assert_eq!(end, End::Exited { code: 0x34 }, "the FSTP patch ran");
    let mut s = session(&p, "only-naive", 400_000);
    let cs = s.cpu.sregs[1];
    s.run();
    assert_eq!(s.machine.rd16(cs, 0x16C), 300, "#GP taken 300 times");
    let ctr = s.counters().expect("counters");
    let fb = &ctr["fallbacks_by_form"];
    let x87_fallbacks: u64 = [
        "fild", "fld", "fmul", "fadd", "fst", "fistp", "fcomp", "fnstsw", "fstp", "fnstcw", "fldcw",
    ]
    .iter()
    .filter_map(|f| fb.get(*f).and_then(|v| v.as_u64()))
    .sum();
    assert_eq!(x87_fallbacks, 0, "{fb}");
    let refused = ctr["refusals_by_form"]["fld"].as_u64().unwrap_or(0);
    assert_eq!(refused, 300, "only the overrunning FLD is refused");
}

/// CR0.EM set under running x87 code: the programs built with x87 ops go
/// (the lowering's assumption is lost) and the next x87 instruction raises
/// #NM on the L1 side (the BIOS's INT 07h stub stops the run), at the same
/// dispatch in both arms.
#[test]
fn cr0_em_takes_x87_out_of_the_engine() {
    // fninit / fld1 / mov cx,50 / lp: fadd st0,st0 / fist word [v] / loop lp
    // mov eax,cr0 / or al,4 / mov cr0,eax / fadd st0,st0 / mov ax,4C00h / int 21h
    let c = [
        0xdb, 0xe3, 0xd9, 0xe8, 0xb9, 0x32, 0x00, 0xdc, 0xc0, 0xdf, 0x16, 0x1e, 0x01, 0xe2, 0xf8,
        0x0f, 0x20, 0xc0, 0x0c, 0x04, 0x0f, 0x22, 0xc0, 0xdc, 0xc0, 0xb8, 0x00, 0x4c, 0xcd, 0x21,
        0x00, 0x00,
    ];
    let p = com("x87em", &c);
    let (end, _, _) = lockstep(&p, 100_000, 7);
    let End::Stopped(stop) = end else {
        panic!("{end:?}")
    };
    assert_eq!(stop.ip, 0x117, "stopped at the FADD after CR0.EM: {stop:?}");
}

/// REP string elements (`Term::Rep`, one element per execution) with both
/// address sizes: a 16-bit REP counts CX and leaves ECX's upper half, a
/// 67h REP counts ECX and steps ESI/EDI by 32 bits; REPE CMPSB and REPNE
/// SCASB end on ZF. Lockstep with `l1` at every dispatch (so every budget
/// stop between elements), and the program's own result: REPNE SCASB
/// finds the zero after the three bytes REP STOSB wrote, with CL = 12.
#[test]
fn rep_strings_with_cx_and_ecx_counts_agree_at_every_dispatch() {
    let code: &[u8] = &[
        0x66, 0x31, 0xFF, // xor edi, edi
        0x66, 0x31, 0xF6, // xor esi, esi
        0x66, 0xB9, 0x03, 0x00, 0x01, 0x00, // mov ecx, 10003h
        0xBF, 0x00, 0x80, // mov di, 8000h
        0xB0, 0xAA, // mov al, 0AAh
        0xF3, 0xAA, // rep stosb (CX = 3: ECX ends 10000h)
        0x66, 0xB9, 0x05, 0x00, 0x00, 0x00, // mov ecx, 5
        0xBE, 0x00, 0x80, // mov si, 8000h
        0xBF, 0x00, 0x90, // mov di, 9000h
        0x67, 0xF3, 0xA4, // rep movsb, 32-bit addressing (ECX)
        0xB9, 0x08, 0x00, // mov cx, 8
        0xBE, 0x00, 0x80, // mov si, 8000h
        0xBF, 0x00, 0x90, // mov di, 9000h
        0xF3, 0xA6, // repe cmpsb
        0xB0, 0x00, // mov al, 0
        0xB9, 0x10, 0x00, // mov cx, 16
        0xBF, 0x00, 0x80, // mov di, 8000h
        0xF2, 0xAE, // repne scasb
        0x88, 0xC8, // mov al, cl
        0xB4, 0x4C, // mov ah, 4Ch
        0xCD, 0x21, // int 21h
    ];
    let p = com("repstr", code);
    let (end, _, _) = lockstep(&p, 200_000, 1);
    assert_eq!(end, End::Exited { code: 12 });
}

/// The `uop` arm's two tiers, counted: a `LOOP $` (an L1 spin block) runs
/// 5000 times and is folded as L1 folds it; a three-instruction loop runs
/// 1000 times, cold on the L1 side for its first 8 entries, then as a µop
/// program built once. Lockstep with `l1` at every 50 dispatches, and the
/// counters say which tier ran what (an arm that never tiers up, or never
/// folds, fails here while still agreeing with `l1`).
#[test]
fn uop_arm_folds_spins_and_builds_hot_heads() {
    let c: [u8; 17] = [
        0xB9, 0x88, 0x13, // 100: mov cx, 5000
        0xE2, 0xFE, // 103: loop 103 (a spin: LOOP $)
        0xB9, 0xE8, 0x03, // 105: mov cx, 1000
        0x40, // 108: inc ax
        0x4B, // 109: dec bx
        0xE2, 0xFC, // 10A: loop 108
        0xB8, 0x00, 0x4C, // 10C: mov ax, 4C00h
        0xCD, 0x21, // 10F: int 21h
    ];
    let p = com("uoptiers", &c);
    let (end, _, _) = lockstep_arm(&p, "uop", 100_000, 50);
    assert_eq!(end, End::Exited { code: 0 });
    let mut s = session(&p, "uop", 100_000);
    s.run();
    let ctr = s.counters().expect("counters");
    let n = |k: &str| {
        ctr[k]
            .as_u64()
            .unwrap_or_else(|| panic!("counter {k}: {ctr}"))
    };
    assert!(n("spin_folds") >= 1, "LOOP $ folded: {ctr}");
    assert!(
        n("spin_dispatches") >= 4990,
        "LOOP $ ran as a spin block: {ctr}"
    );
    assert_eq!(n("hot_heads"), 1, "one head got hot: {ctr}");
    assert_eq!(n("programs_built"), 1, "built once: {ctr}");
    // 8 cold passes over the 3-instruction loop, plus the straight-line
    // blocks around it.
    assert!(n("cold_dispatches") <= 8 * 3 + 8, "cold: {ctr}");
    assert!(n("uop_insns") >= 3 * 990, "the hot loop ran in µops: {ctr}");
}

/// A self-loop of pure ops whose state changes every iteration (`add dx,
/// cx; ror dx, 1; dec cx; jnz`) has L1's memory-spin shape but never folds:
/// every µop arm first runs it as an L1 spin block, and after
/// `SPIN_DEMOTE` back edges without a fold builds it as a µop program
/// (loopnest's 70,000-trip loop and crctab's table loop ran op by op on
/// the L1 side before). Lockstep with `l1` at every 50 dispatches (each
/// slice enters the spin block again: the back edges add up across
/// entries), and at every 7 up to 1,003 (inside the loop, demoted on the way).
#[test]
fn memory_spin_that_never_folds_becomes_a_program() {
    let c: [u8; 15] = [
        0xB9, 0x88, 0x13, // 100: mov cx, 5000
        0x01, 0xCA, // 103: add dx, cx
        0xD1, 0xCA, // 105: ror dx, 1
        0x49, // 107: dec cx
        0x75, 0xF9, // 108: jnz 103
        0xB8, 0x00, 0x4C, // 10A: mov ax, 4C00h
        0xCD, 0x21, // 10D: int 21h
    ];
    let p = com("memspin", &c);
    for arm in UOP_ARMS.iter().chain(&["uop"]) {
        let (end, _, _) = lockstep_arm(&p, arm, 100_000, 50);
        assert_eq!(end, End::Exited { code: 0 }, "{arm}");
        let (end, _, _) = lockstep_arm(&p, arm, 1_003, 7);
        assert_eq!(end, End::Budget, "{arm}");
        let mut s = session(&p, arm, 100_000);
        s.run();
        let ctr = s.counters().expect("counters");
        let n = |k: &str| {
            ctr[k]
                .as_u64()
                .unwrap_or_else(|| panic!("{arm}: counter {k}: {ctr}"))
        };
        assert_eq!(n("spin_demoted"), 1, "{arm}: demoted once: {ctr}");
        assert!(n("spin_dispatches") <= 4 * 70, "{arm}: {ctr}");
        assert!(
            n("uop_insns") >= 4 * 4900,
            "{arm}: the loop ran in µops: {ctr}"
        );
    }
}

/// `l1_progs/modeswap.asm`: each µop arm runs real-mode code itself and
/// hands protected-mode code to an L1 engine of its own; 30 rounds patch
/// a real-mode routine from protected mode (a store L1 makes) and a
/// protected-mode routine from real mode (a store a µop program makes
/// through E1's page view). Each engine must see the other's stores: the
/// results are the program's own sums, the run l1's at every 500
/// dispatches, and every hand-over back from L1 moved the driver's epoch.
#[test]
fn modeswap_stores_across_modes_are_seen() {
    let p = com("modeswap", include_bytes!("l1_progs/modeswap.bin"));
    let budget = 60_000;
    let results = |s: &Session| {
        let ram = s.machine.mem.ram();
        let w = |a: usize| u32::from_le_bytes(ram[a..a + 4].try_into().unwrap());
        (w(0x500) & 0xFFFF, w(0x504))
    };
    let mut l0 = session(&p, "l0", budget);
    l0.run();
    assert_eq!(results(&l0), (1393, 1395), "l0: BX, EDX");
    for arm in UOP_ARMS.iter().chain(&["uop"]) {
        lockstep_arm(&p, arm, budget, 500);
        let mut s = session(&p, arm, budget);
        s.run();
        assert_eq!(results(&s), (1393, 1395), "{arm}: BX, EDX");
        let ctr = s.counters().expect("counters");
        let n = |k: &str| ctr[k].as_u64().unwrap_or_else(|| panic!("{k}: {ctr}"));
        // Several L1 runs per round (MOV SS opens a shadow: the session
        // looks), and the driver's epoch moved once per round, at its first
        // real-mode run after protected mode.
        assert!(n("pm_runs") >= 30, "{arm}: {ctr}");
        assert_eq!(n("foreign_epochs"), 30, "{arm}: {ctr}");
        // R was found patched (by L1) in 29 rounds, P in 29: each engine
        // caught the other's stores, by the epoch (stale) or, for a store
        // an L1-side block made through the machine, by the code-write log
        // (host_retired: the `uop` arm's cold rounds).
        assert!(n("stale_retired") + n("host_retired") >= 29, "{arm}: {ctr}");
        let l1 = &ctr["pm_l1"];
        let m = |k: &str| l1[k].as_u64().unwrap_or(0);
        assert!(m("foreign_epochs") >= 29, "{arm}: {l1}");
        assert!(m("stale_retired") + m("host_retired") >= 29, "{arm}: {l1}");
        assert!(l1["pm_blocks"].as_u64().unwrap_or(0) > 0, "{arm}: {l1}");
    }
}

/// `l1_progs/vgacode.asm`: a routine copied into the VGA window (mode 13h)
/// and called from there 40 times, its immediate patched through the
/// window between calls by code the µop programs run. The µop arms run
/// window code in slices on their own L1 engine (device blocks); a patch
/// must reach that engine's blocks (its epoch: device blocks compared
/// through the VGA's peek) before the routine runs again. The window
/// routine in turn patches a RAM routine the µop programs run: that store,
/// made by L1 in a slice, must reach the driver through the log.
#[test]
fn vga_window_code_runs_in_l1_slices() {
    let p = com("vgacode", include_bytes!("l1_progs/vgacode.bin"));
    let budget = 400_000;
    // BX, and DI: the sum of BL after each call, added by a RAM routine
    // the window routine patches (sign-extended imm8).
    let bx = |s: &Session| {
        let ram = s.machine.mem.ram();
        (
            u16::from_le_bytes([ram[0x500], ram[0x501]]),
            u16::from_le_bytes([ram[0x502], ram[0x503]]),
        )
    };
    let mut l0 = session(&p, "l0", budget);
    assert_eq!(l0.run(), &End::Exited { code: 0 });
    assert_eq!(bx(&l0), (140, 1816), "l0: BX, DI");
    for arm in UOP_ARMS.iter().chain(&["uop"]) {
        let (end, _, _) = lockstep_arm(&p, arm, budget, 997);
        assert_eq!(end, End::Exited { code: 0 }, "{arm}");
        let mut s = session(&p, arm, budget);
        s.run();
        assert_eq!(bx(&s), (140, 1816), "{arm}: BX, DI");
        let ctr = s.counters().expect("counters");
        let n = |k: &str| ctr[k].as_u64().unwrap_or_else(|| panic!("{k}: {ctr}"));
        // A slice runs on past the routine into the loop (about 900
        // dispatches a round), so about one slice per four calls.
        assert!(n("device_slices") >= 8, "{arm}: {ctr}");
        let l1 = &ctr["pm_l1"];
        let m = |k: &str| l1[k].as_u64().unwrap_or(0);
        assert!(m("device_blocks") > 0, "{arm}: {l1}");
        assert!(m("foreign_epochs") >= 7, "{arm}: {l1}");
        // 39 patches, each seen by the epoch's compare (stale) or retired
        // as a store into the window (device_retired).
        assert!(
            m("stale_retired") + m("device_retired") >= 39,
            "{arm}: {l1}"
        );
    }
}

/// `l1_progs/a20alias.asm` under every µop arm: part 1 runs real-mode code
/// at FFFF:xxxx (the HMA with the gate open, its alias in conventional
/// memory with it closed), patched through each; parts 2 and 3 the same in
/// protected mode. On a gate move the driver drops only what was fetched
/// from a segment reaching past 1 MiB and keeps the rest (it used to flush
/// everything); the results are l0's and the run l1's.
#[test]
fn a20_moves_keep_low_code_and_retire_hma_code() {
    let p = com("a20alias", include_bytes!("l1_progs/a20alias.bin"));
    let budget = 600_000;
    let results = |s: &Session| -> Vec<u32> {
        let ram = s.machine.mem.ram();
        (0..11)
            .map(|i| u32::from_le_bytes(ram[0x500 + 4 * i..0x504 + 4 * i].try_into().unwrap()))
            .collect()
    };
    let mut l0 = session(&p, "l0", budget);
    l0.run();
    let want = results(&l0);
    assert_eq!(&want[..2], &[40 | 140 << 16, 40 | 240 << 16], "l0 part 1");
    for arm in UOP_ARMS.iter().chain(&["uop"]) {
        lockstep_arm(&p, arm, budget, 5_000);
        let mut s = session(&p, arm, budget);
        s.run();
        assert_eq!(results(&s), want, "{arm}");
        let ctr = s.counters().expect("counters");
        let n = |k: &str| ctr[k].as_u64().unwrap_or_else(|| panic!("{k}: {ctr}"));
        assert!(n("a20_moves") >= 40, "{arm}: {ctr}");
        assert_eq!(n("flushes"), 0, "{arm}: {ctr}");
    }
}

/// Handbacks by reason, one row per program and arm: each reason lands in
/// its own slot and the slots add up to the handback count. KBDCHAIN polls
/// INT 16h AH=01h with nothing typed: the BIOS answers in x86 and returns
/// through IRET, which raises IF. Under `only-baseline` E1 asks the machine
/// (`stop_if_needed`: no interrupt requested) and goes on, so the 20M
/// dispatches take 182 handbacks (before the x86 fast path each poll was a
/// `shadow` handback to the stub's host call: 1,186,350). The `jit` arm's
/// native code owes that stop without asking, and the driver resumes it in
/// the same call (`if_rose`, one per poll). EXEPATCH adds the `fallback`
/// and `smc` slots (its self-modifying code).
#[test]
fn handbacks_are_counted_by_reason() {
    let corpus = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../corpus-dos/programs"
    ));
    let cases: &[(&str, &str, u64, &[(&str, u64)])] = &[
        (
            "kbdisr/KBDCHAIN.COM",
            "only-baseline",
            20_000_000,
            &[
                ("attention", 93),
                ("budget", 54),
                ("indirect", 12),
                ("link", 19),
                ("shadow", 4),
            ],
        ),
        (
            "kbdisr/KBDCHAIN.COM",
            "jit",
            20_000_000,
            &[
                ("attention", 93),
                ("budget", 56),
                ("if_rose", 420_248),
                ("indirect", 12),
                ("link", 18),
                ("shadow", 4),
            ],
        ),
        (
            "mzexe/EXEPATCH.EXE",
            "only-baseline",
            15_000,
            &[
                ("fallback", 81),
                ("indirect", 35),
                ("link", 124),
                ("shadow", 4),
                ("smc", 15),
            ],
        ),
        (
            "fpemu/FPSUM.COM",
            "only-baseline",
            16_000,
            &[("indirect", 22), ("link", 11), ("shadow", 25), ("smc", 6)],
        ),
    ];
    for &(prog, arm, budget, want) in cases {
        let mut s = session(&corpus.join(prog), arm, budget);
        s.run();
        let ctr = s.counters().expect("counters");
        let got: Vec<(String, u64)> = ctr["handbacks_by_reason"]
            .as_object()
            .unwrap_or_else(|| panic!("{prog}: no handbacks_by_reason: {ctr}"))
            .iter()
            .map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(u64::MAX)))
            .collect();
        let want: Vec<(String, u64)> = want.iter().map(|&(k, n)| (k.to_string(), n)).collect();
        assert_eq!(got, want, "{prog} {arm}");
        let total: u64 = want.iter().map(|w| w.1).sum();
        assert_eq!(ctr["handbacks"].as_u64(), Some(total), "{prog} {arm}");
    }
}
