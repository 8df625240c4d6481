//! The CPU's contract with the machine, checked on real values: the guest
//! clock rules (docs/cpu.md), REP interruptibility, real-mode exception
//! delivery, the interrupt shadow, the host-service instruction, triple
//! faults, CPUID/EFLAGS identity, and the 486 whitelist.

use toyvm::bus::{Bus, Width};
use toyvm::cpu::{l0, Cpu, StepOutcome};

struct Ram(Vec<u8>);

impl Bus for Ram {
    fn read8(&mut self, a: u32) -> u8 {
        self.0[(a & 0x1F_FFFF) as usize]
    }
    fn write8(&mut self, a: u32, v: u8) {
        self.0[(a & 0x1F_FFFF) as usize] = v;
    }
    fn io_read(&mut self, port: u16, _w: Width, now: u64) -> u32 {
        // Answers with the clock it was asked at, so tests can see it.
        if port == 0x40 {
            now as u32
        } else {
            0xFFFF_FFFF
        }
    }
    fn io_write(&mut self, _p: u16, _w: Width, _v: u32, _n: u64) {}
}

/// A CPU at 1000:0100 with SS:SP = 2000:1000 and the IVT pointing vector v at
/// F000:(v * 4), where the handler bytes are `CF` (IRET) unless a test
/// overrides them.
fn machine(code: &[u8]) -> (Cpu, Ram) {
    let mut ram = Ram(vec![0; 0x20_0000]);
    for v in 0..256u32 {
        let e = (v * 4) as usize;
        ram.0[e..e + 4].copy_from_slice(&[(v * 4) as u8, ((v * 4) >> 8) as u8, 0x00, 0xF0]);
        ram.0[0xF_0000 + (v * 4) as usize] = 0xF4; // HLT
    }
    ram.0[0x10100..0x10100 + code.len()].copy_from_slice(code);
    let mut cpu = Cpu::new();
    cpu.set_cs_ip(0x1000, 0x0100);
    cpu.load_seg_real(2, 0x2000);
    cpu.regs[4] = 0x1000;
    (cpu, ram)
}

fn vector_taken(cpu: &Cpu) -> Option<u8> {
    (cpu.sregs[1] == 0xF000).then_some((cpu.eip / 4) as u8)
}

fn stack_word(cpu: &Cpu, ram: &Ram, depth: u32) -> u16 {
    let a = cpu.sbase[2] + ((cpu.regs[4] + depth) & 0xFFFF);
    ram.0[a as usize] as u16 | (ram.0[a as usize + 1] as u16) << 8
}

#[test]
fn one_instruction_costs_one_dispatch_prefixes_included() {
    let (mut cpu, mut ram) = machine(&[0x2E, 0x3E, 0x90, 0x40]);
    assert_eq!(l0::step(&mut cpu, &mut ram), StepOutcome::Ok);
    assert_eq!((cpu.clock, cpu.eip), (1, 0x0103));
    assert_eq!(l0::step(&mut cpu, &mut ram), StepOutcome::Ok);
    assert_eq!((cpu.clock, cpu.regs[0]), (2, 1));
}

#[test]
fn rep_costs_one_per_element_and_one_for_a_zero_count() {
    // REP MOVSB with CX = 3, then REP STOSB with CX = 0, then HLT.
    let (mut cpu, mut ram) = machine(&[0xF3, 0xA4, 0xF3, 0xAA, 0xF4]);
    cpu.regs[1] = 3;
    cpu.load_seg_real(3, 0x3000);
    cpu.load_seg_real(0, 0x4000);
    ram.0[0x30000..0x30003].copy_from_slice(b"abc");
    for n in 1..=2u64 {
        assert_eq!(l0::step(&mut cpu, &mut ram), StepOutcome::Ok);
        assert_eq!((cpu.clock, cpu.eip, cpu.regs[1]), (n, 0x0100, 3 - n as u32));
    }
    assert_eq!(l0::step(&mut cpu, &mut ram), StepOutcome::Ok);
    assert_eq!((cpu.clock, cpu.eip, cpu.regs[1]), (3, 0x0102, 0));
    assert_eq!(&ram.0[0x40000..0x40003], b"abc");
    assert_eq!(l0::step(&mut cpu, &mut ram), StepOutcome::Ok);
    assert_eq!((cpu.clock, cpu.eip), (4, 0x0104));
    assert_eq!(l0::step(&mut cpu, &mut ram), StepOutcome::Halt);
    assert_eq!((cpu.clock, cpu.eip, cpu.halted), (5, 0x0105, true));
    // A halted CPU spends nothing until the machine wakes it.
    assert_eq!(l0::step(&mut cpu, &mut ram), StepOutcome::Halt);
    assert_eq!(cpu.clock, 5);
}

#[test]
fn an_interrupt_between_rep_elements_returns_to_the_prefix() {
    // ES: REP STOSW with CX = 4; the handler is IRET.
    let (mut cpu, mut ram) = machine(&[0x26, 0xF3, 0xAB, 0xF4]);
    ram.0[0xF_0000 + 0x20] = 0xCF;
    cpu.regs[1] = 4;
    cpu.regs[0] = 0xBEEF;
    cpu.load_seg_real(0, 0x4000);
    cpu.flags.set_bits(0x0202);
    l0::step(&mut cpu, &mut ram);
    let clock = cpu.clock;
    cpu.interrupt(&mut ram, 8).unwrap();
    assert_eq!(cpu.clock, clock, "taking an interrupt costs nothing");
    assert_eq!((cpu.sregs[1], cpu.eip), (0xF000, 0x20));
    assert_eq!(stack_word(&cpu, &ram, 0), 0x0100, "IP of the first prefix");
    assert_eq!(stack_word(&cpu, &ram, 2), 0x1000);
    assert_eq!(stack_word(&cpu, &ram, 4), 0x0202);
    assert!(!cpu.flags.if_());
    l0::step(&mut cpu, &mut ram); // IRET
    assert_eq!(
        (cpu.sregs[1], cpu.eip, cpu.regs[4]),
        (0x1000, 0x0100, 0x1000)
    );
    while l0::step(&mut cpu, &mut ram) == StepOutcome::Ok {}
    assert_eq!(cpu.regs[1], 0);
    assert_eq!(
        &ram.0[0x40000..0x40008],
        &[0xEF, 0xBE, 0xEF, 0xBE, 0xEF, 0xBE, 0xEF, 0xBE]
    );
    // 4 elements + IRET + HLT.
    assert_eq!(cpu.clock, 6);
}

#[test]
fn a_fault_costs_one_dispatch_and_pushes_the_faulting_ip() {
    // DIV BL with BL = 0 behind a segment prefix.
    let (mut cpu, mut ram) = machine(&[0x2E, 0xF6, 0xF3]);
    cpu.regs[0] = 0x1234;
    assert_eq!(l0::step(&mut cpu, &mut ram), StepOutcome::Ok);
    assert_eq!(cpu.clock, 1);
    assert_eq!(vector_taken(&cpu), Some(0));
    assert_eq!(stack_word(&cpu, &ram, 0), 0x0100);
    assert_eq!(cpu.regs[0], 0x1234, "registers as before the instruction");
    assert_eq!(cpu.regs[4], 0x1000 - 6);
}

#[test]
fn aam_zero_bound_and_undefined_opcodes_fault_at_their_own_ip() {
    let (mut cpu, mut ram) = machine(&[0xD4, 0x00]);
    l0::step(&mut cpu, &mut ram);
    assert_eq!(vector_taken(&cpu), Some(0));
    assert_eq!(stack_word(&cpu, &ram, 0), 0x0100);

    // BOUND AX, [0x0200] with bounds 10..20 and AX = 21.
    let (mut cpu, mut ram) = machine(&[0x62, 0x06, 0x00, 0x02]);
    cpu.load_seg_real(3, 0x3000);
    ram.0[0x30200..0x30204].copy_from_slice(&[10, 0, 20, 0]);
    cpu.regs[0] = 21;
    l0::step(&mut cpu, &mut ram);
    assert_eq!(vector_taken(&cpu), Some(5));
    assert_eq!(stack_word(&cpu, &ram, 0), 0x0100);
    let (mut cpu, mut ram) = machine(&[0x62, 0x06, 0x00, 0x02]);
    cpu.load_seg_real(3, 0x3000);
    ram.0[0x30200..0x30204].copy_from_slice(&[10, 0, 20, 0]);
    cpu.regs[0] = 20;
    l0::step(&mut cpu, &mut ram);
    assert_eq!((vector_taken(&cpu), cpu.eip), (None, 0x0104));

    // CMOVZ, RDTSC, POPCNT, LOCK on a register destination, MOV CS: #UD on a 486.
    for code in [
        &[0x0F, 0x44, 0xC0][..],
        &[0x0F, 0x31],
        &[0xF3, 0x0F, 0xB8, 0xC0],
        &[0xF0, 0x01, 0xC0],
        &[0x8E, 0xC8],
        &[0xFE, 0x38, 0x00, 0x00],
    ] {
        let (mut cpu, mut ram) = machine(code);
        assert_eq!(l0::step(&mut cpu, &mut ram), StepOutcome::Ok);
        assert_eq!(vector_taken(&cpu), Some(6), "{code:02X?}");
        assert_eq!(stack_word(&cpu, &ram, 0), 0x0100);
        assert_eq!(cpu.clock, 1);
    }
}

#[test]
fn lock_on_a_memory_read_modify_write_is_accepted() {
    let (mut cpu, mut ram) = machine(&[0xF0, 0x01, 0x06, 0x00, 0x02]);
    cpu.load_seg_real(3, 0x3000);
    ram.0[0x30200] = 5;
    cpu.regs[0] = 7;
    l0::step(&mut cpu, &mut ram);
    assert_eq!(
        (vector_taken(&cpu), ram.0[0x30200], cpu.eip),
        (None, 12, 0x0105)
    );
}

#[test]
fn instructions_longer_than_15_bytes_raise_gp() {
    let mut code = vec![0x2E; 15];
    code.push(0x90);
    let (mut cpu, mut ram) = machine(&code);
    l0::step(&mut cpu, &mut ram);
    assert_eq!(vector_taken(&cpu), Some(13));
    let mut code = vec![0x2E; 14];
    code.push(0x90);
    let (mut cpu, mut ram) = machine(&code);
    l0::step(&mut cpu, &mut ram);
    assert_eq!((vector_taken(&cpu), cpu.eip), (None, 0x010F));
}

#[test]
fn segment_overruns_fault_gp_or_ss() {
    // MOV AX, [0xFFFF]: a word straddling the end of DS.
    let (mut cpu, mut ram) = machine(&[0x8B, 0x06, 0xFF, 0xFF]);
    l0::step(&mut cpu, &mut ram);
    assert_eq!(vector_taken(&cpu), Some(13));
    // MOV AX, [BP+0xFFFF] with BP = 0: the same through SS is #SS.
    let (mut cpu, mut ram) = machine(&[0x8B, 0x86, 0xFF, 0xFF]);
    l0::step(&mut cpu, &mut ram);
    assert_eq!(vector_taken(&cpu), Some(12));
    // 32-bit addressing past 64 KiB: MOV AL, [EAX] with EAX = 0x10000.
    let (mut cpu, mut ram) = machine(&[0x67, 0x8A, 0x00]);
    cpu.regs[0] = 0x1_0000;
    l0::step(&mut cpu, &mut ram);
    assert_eq!(vector_taken(&cpu), Some(13));
    // A byte at 0xFFFF is fine.
    let (mut cpu, mut ram) = machine(&[0x8A, 0x06, 0xFF, 0xFF]);
    ram.0[0xFFFF] = 0x5A;
    l0::step(&mut cpu, &mut ram);
    assert_eq!((vector_taken(&cpu), cpu.regs[0] & 0xFF), (None, 0x5A));
}

#[test]
fn fetch_wraps_at_the_end_of_the_code_segment() {
    let (mut cpu, mut ram) = machine(&[]);
    cpu.eip = 0xFFFF;
    ram.0[0x1FFFF] = 0xB0; // MOV AL, imm8 ...
    ram.0[0x10000] = 0x42; // ... whose immediate is at offset 0.
    l0::step(&mut cpu, &mut ram);
    assert_eq!((cpu.regs[0] & 0xFF, cpu.eip), (0x42, 0x0001));
}

#[test]
fn host_service_instruction_only_inside_the_rom_window() {
    let (mut cpu, mut ram) = machine(&[]);
    cpu.set_cs_ip(0xF000, 0x1000);
    ram.0[0xF1000..0xF1004].copy_from_slice(&[0xFE, 0x38, 0x34, 0x12]);
    assert_eq!(l0::step(&mut cpu, &mut ram), StepOutcome::HostCall(0x1234));
    assert_eq!((cpu.eip, cpu.clock), (0x1004, 1));
    // Same bytes in conventional memory: FE /7 is undefined.
    let (mut cpu, mut ram) = machine(&[0xFE, 0x38, 0x34, 0x12]);
    assert_eq!(l0::step(&mut cpu, &mut ram), StepOutcome::Ok);
    assert_eq!(vector_taken(&cpu), Some(6));
}

#[test]
fn a_fault_that_cannot_be_delivered_is_a_triple_fault_stop() {
    // IVT limit 0 (LIDT from [0x0200]) then INT3: #GP, #DF, then shutdown.
    let (mut cpu, mut ram) = machine(&[0x0F, 0x01, 0x1E, 0x00, 0x02, 0xCC]);
    cpu.load_seg_real(3, 0x3000);
    ram.0[0x30200..0x30206].copy_from_slice(&[0, 0, 0, 0, 0, 0]);
    assert_eq!(l0::step(&mut cpu, &mut ram), StepOutcome::Ok);
    assert_eq!(cpu.idt_limit, 0);
    match l0::step(&mut cpu, &mut ram) {
        StepOutcome::Stop(s) => {
            assert!(s.what.starts_with("triple fault"), "{}", s.what);
            assert_eq!(
                (s.cs, s.ip, s.bytes.as_slice()),
                (0x1000, 0x0105, &[0xCC][..])
            );
        }
        other => panic!("expected a stop, got {other:?}"),
    }
    // A push at SP = 1 straddles the stack segment: #SS, and delivering it
    // needs the same straddling push.
    let (mut cpu, mut ram) = machine(&[0x50]);
    cpu.regs[4] = 1;
    assert!(
        matches!(l0::step(&mut cpu, &mut ram), StepOutcome::Stop(s) if s.what.contains("triple fault"))
    );
}

#[test]
fn sti_mov_ss_and_pop_ss_open_the_interrupt_shadow() {
    let (mut cpu, mut ram) = machine(&[0xFA, 0xFB, 0x90, 0x8E, 0xD0, 0x90, 0x17, 0x90, 0xFB]);
    cpu.regs[0] = 0x2000;
    l0::step(&mut cpu, &mut ram); // CLI
    assert!(!cpu.shadow);
    l0::step(&mut cpu, &mut ram); // STI
    assert!(cpu.shadow && cpu.flags.if_());
    l0::step(&mut cpu, &mut ram); // NOP
    assert!(!cpu.shadow);
    l0::step(&mut cpu, &mut ram); // MOV SS, AX
    assert!(cpu.shadow);
    l0::step(&mut cpu, &mut ram);
    assert!(!cpu.shadow);
    l0::step(&mut cpu, &mut ram); // POP SS
    assert!(cpu.shadow);
    l0::step(&mut cpu, &mut ram);
    l0::step(&mut cpu, &mut ram); // STI with IF already set: no shadow
    assert!(!cpu.shadow);
}

#[test]
fn interrupt_pushes_a_frame_and_wakes_a_halted_cpu() {
    let (mut cpu, mut ram) = machine(&[0xF4]);
    cpu.flags.set_bits(0x0302);
    assert_eq!(l0::step(&mut cpu, &mut ram), StepOutcome::Halt);
    cpu.interrupt(&mut ram, 0x21).unwrap();
    assert!(!cpu.halted);
    assert_eq!((cpu.sregs[1], cpu.eip, cpu.regs[4]), (0xF000, 0x84, 0x0FFA));
    assert_eq!(stack_word(&cpu, &ram, 0), 0x0101);
    assert_eq!(stack_word(&cpu, &ram, 4), 0x0302);
    assert_eq!(cpu.flags.bits() & 0x0300, 0, "IF and TF cleared");
    assert_eq!(cpu.clock, 1);
}

#[test]
fn device_reads_see_the_clock_of_their_own_dispatch() {
    // NOP; IN AL, 40h: the port sees clock 1 (one dispatch retired before it).
    let (mut cpu, mut ram) = machine(&[0x90, 0xE4, 0x40]);
    l0::step(&mut cpu, &mut ram);
    l0::step(&mut cpu, &mut ram);
    assert_eq!((cpu.regs[0] & 0xFF, cpu.clock), (1, 2));
}

#[test]
fn cpuid_reports_a_486_with_fpu_and_eflags_id_ac_toggle() {
    let (mut cpu, mut ram) = machine(&[0x0F, 0xA2]);
    l0::step(&mut cpu, &mut ram);
    let vendor: Vec<u8> = [cpu.regs[3], cpu.regs[2], cpu.regs[1]]
        .iter()
        .flat_map(|r| r.to_le_bytes())
        .collect();
    assert_eq!((cpu.regs[0], &vendor[..]), (1, &b"GenuineIntel"[..]));
    let (mut cpu, mut ram) = machine(&[0x0F, 0xA2]);
    cpu.regs[0] = 1;
    l0::step(&mut cpu, &mut ram);
    assert_eq!((cpu.regs[0] >> 8) & 0xF, 4, "family 4");
    assert_eq!(cpu.regs[2] & 1, 1, "FPU on chip");
    assert_eq!(cpu.regs[2] & (1 << 15), 0, "no CMOV");
    // PUSHFD; POP EAX; XOR EAX, 0x240000; PUSH EAX; POPFD; PUSHFD; POP EBX
    let (mut cpu, mut ram) = machine(&[
        0x66, 0x9C, 0x66, 0x58, 0x66, 0x35, 0x00, 0x00, 0x24, 0x00, 0x66, 0x50, 0x66, 0x9D, 0x66,
        0x9C, 0x66, 0x5B,
    ]);
    for _ in 0..7 {
        l0::step(&mut cpu, &mut ram);
    }
    assert_eq!(cpu.regs[3] & 0x24_0000, 0x24_0000, "ID and AC toggled");
}

#[test]
fn setting_cr0_pe_enters_protected_mode_and_loadall_stops() {
    // MOV EAX, 1; MOV CR0, EAX; NOP: protected mode with the real-mode caches
    // until CS is reloaded (the NOP still runs from CS base << 4, CPL 0).
    let (mut cpu, mut ram) = machine(&[0x66, 0xB8, 1, 0, 0, 0, 0x0F, 0x22, 0xC0, 0x90]);
    for _ in 0..3 {
        assert_eq!(l0::step(&mut cpu, &mut ram), StepOutcome::Ok);
    }
    assert_eq!(
        (
            cpu.clock,
            cpu.eip,
            cpu.cr0 & 1,
            cpu.pmode,
            cpu.cpl,
            cpu.code32
        ),
        (3, 0x010A, 1, true, 0, false)
    );
    let (mut cpu, mut ram) = machine(&[0x0F, 0x07]);
    assert!(
        matches!(l0::step(&mut cpu, &mut ram), StepOutcome::Stop(s) if s.what.contains("LOADALL"))
    );
}

#[test]
fn x87_escapes_honour_cr0_em_and_fwait_is_a_no_op() {
    // FWAIT; SMSW AX; OR AL, 4; LMSW AX; FLD1
    let (mut cpu, mut ram) = machine(&[
        0x9B, 0x0F, 0x01, 0xE0, 0x0C, 0x04, 0x0F, 0x01, 0xF0, 0xD9, 0xE8,
    ]);
    for _ in 0..4 {
        l0::step(&mut cpu, &mut ram);
    }
    assert_eq!((cpu.eip, cpu.cr0 & 4), (0x0109, 4));
    l0::step(&mut cpu, &mut ram);
    assert_eq!(vector_taken(&cpu), Some(7));
    assert_eq!(stack_word(&cpu, &ram, 0), 0x0109);
}

#[test]
fn bit_string_addressing_moves_the_operand() {
    // BTS [0x0200], AX with AX = 17 sets bit 1 of the word at 0x0202;
    // with AX = -1 it sets bit 15 of the word at 0x01FE.
    let (mut cpu, mut ram) = machine(&[0x0F, 0xAB, 0x06, 0x00, 0x02]);
    cpu.load_seg_real(3, 0x3000);
    cpu.regs[0] = 17;
    l0::step(&mut cpu, &mut ram);
    assert_eq!(ram.0[0x30202], 0x02);
    let (mut cpu, mut ram) = machine(&[0x0F, 0xAB, 0x06, 0x00, 0x02]);
    cpu.load_seg_real(3, 0x3000);
    cpu.regs[0] = 0xFFFF;
    l0::step(&mut cpu, &mut ram);
    assert_eq!(ram.0[0x301FF], 0x80);
}

#[test]
fn stack_helpers_wrap_sp() {
    let (mut cpu, mut ram) = machine(&[]);
    cpu.regs[4] = 0xFFFF_0000;
    cpu.push16(&mut ram, 0xABCD).unwrap();
    assert_eq!(
        cpu.regs[4], 0xFFFF_FFFE,
        "only SP moves; ESP's upper half is kept"
    );
    assert_eq!(cpu.pop16(&mut ram).unwrap(), 0xABCD);
    assert_eq!(cpu.regs[4], 0xFFFF_0000);
    assert_eq!(cpu.linear(2, 0x10), 0x20010);
    cpu.set_r8(4, 0x12);
    cpu.set_r16(3, 0x3456);
    assert_eq!(
        (cpu.r8(4), cpu.r16(0) >> 8, cpu.r16(3)),
        (0x12, 0x12, 0x3456)
    );
}

#[test]
fn single_step_traps_in_the_same_dispatch_except_after_mov_ss() {
    // TF set: NOP traps to vector 1 with the next IP; MOV SS, AX does not.
    let (mut cpu, mut ram) = machine(&[0x90]);
    cpu.flags.set_bits(0x0102);
    l0::step(&mut cpu, &mut ram);
    assert_eq!((vector_taken(&cpu), cpu.clock), (Some(1), 1));
    assert_eq!(stack_word(&cpu, &ram, 0), 0x0101);
    assert_eq!(
        stack_word(&cpu, &ram, 4),
        0x0102,
        "pushed FLAGS still has TF"
    );
    let (mut cpu, mut ram) = machine(&[0x8E, 0xD0, 0x90]);
    cpu.regs[0] = 0x2000;
    cpu.flags.set_bits(0x0102);
    l0::step(&mut cpu, &mut ram);
    assert_eq!((vector_taken(&cpu), cpu.eip), (None, 0x0102));
    // STI (IF was 0) still traps.
    let (mut cpu, mut ram) = machine(&[0xFB]);
    cpu.flags.set_bits(0x0102);
    l0::step(&mut cpu, &mut ram);
    assert_eq!(vector_taken(&cpu), Some(1));
}

#[test]
fn x87_runs_through_the_cpu_with_memory_operands_and_fnstsw() {
    // FLD1; FADD ST0,ST0; FLDPI; FMULP ST1; FISTP WORD [0x0200]; FNSTSW AX;
    // FLD DWORD [0x0204] (3.5f); FISTP WORD [0x0206] (round to nearest even: 4)
    let (mut cpu, mut ram) = machine(&[
        0xD9, 0xE8, 0xD8, 0xC0, 0xD9, 0xEB, 0xDE, 0xC9, 0xDF, 0x1E, 0x00, 0x02, 0xDF, 0xE0, 0xD9,
        0x06, 0x04, 0x02, 0xDF, 0x1E, 0x06, 0x02,
    ]);
    cpu.load_seg_real(3, 0x3000);
    ram.0[0x30204..0x30208].copy_from_slice(&3.5f32.to_le_bytes());
    cpu.regs[0] = 0xFFFF_FFFF;
    for _ in 0..8 {
        assert_eq!(l0::step(&mut cpu, &mut ram), StepOutcome::Ok);
    }
    assert_eq!(cpu.clock, 8);
    assert_eq!(&ram.0[0x30200..0x30202], &[6, 0], "round(2*pi) = 6");
    assert_eq!(&ram.0[0x30206..0x30208], &[4, 0], "3.5 rounds to even");
    // FNSTSW AX after the pops: TOP = 0, no exception bits except PE (inexact 2*pi).
    assert_eq!(cpu.regs[0] & 0xFFFF_0000, 0xFFFF_0000, "only AX is written");
    assert_eq!(cpu.regs[0] & 0x3800, 0, "TOP back to 0");
    assert_eq!(cpu.regs[0] & 0x0020, 0x0020, "precision exception recorded");
}
