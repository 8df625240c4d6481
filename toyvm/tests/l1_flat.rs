//! L1 against L0 on the flat test bus: every program must end in the same
//! state, with the same dispatch count, the same interrupt landings (dispatch
//! and CS:IP), the same observable port accesses and the same RAM, whatever
//! the budget and wherever interrupts fall. Plus the targeted cases of the
//! brief: SMC in the running block, REP interrupted by an IRQ, spin folds
//! landing on the exact dispatch, blocks that do not fit the budget,
//! interrupts mid-block, host writes, device windows, single-step mode.
//!
//! Programs are NASM sources in `l1_progs/` (rebuild with `build.sh`),
//! loaded at 1000:0100.

use toyvm::l1::flat::Port;
use toyvm::l1::harness::{End, Event, FlatSession, Outcome};
use toyvm::l1::{Config, Counters, L0, L1};

fn session(code: &[u8], budget: u64) -> FlatSession {
    FlatSession::new(0x1000, 0x100, code, budget)
}

/// Runs `s` under L0 and L1, asserts they agree, returns L1's outcome and
/// counters.
fn both(s: FlatSession) -> (Outcome, Counters) {
    both_cfg(s, Config::default())
}

fn both_cfg(s: FlatSession, cfg: Config) -> (Outcome, Counters) {
    let o0 = s.clone().outcome(&mut L0);
    let mut l1 = L1::with_config(cfg);
    let o1 = s.outcome(&mut l1);
    assert_eq!(o0, o1, "L1 disagrees with L0");
    (o1, l1.counters)
}

/// Offset (from 0100h) of the first occurrence of `pat` in `code`.
fn find(code: &[u8], pat: &[u8]) -> u32 {
    0x100
        + code
            .windows(pat.len())
            .position(|w| w == pat)
            .expect("pattern") as u32
}

const SMCSELF: &[u8] = include_bytes!("l1_progs/smcself.bin");
const SMCLOOP: &[u8] = include_bytes!("l1_progs/smcloop.bin");
const REPIRQ: &[u8] = include_bytes!("l1_progs/repirq.bin");
const SPINJMP: &[u8] = include_bytes!("l1_progs/spinjmp.bin");
const SPINPORT: &[u8] = include_bytes!("l1_progs/spinport.bin");
const FPEMU: &[u8] = include_bytes!("l1_progs/fpemu.bin");
const DECRYPT: &[u8] = include_bytes!("l1_progs/decrypt.bin");
const TFSTEP: &[u8] = include_bytes!("l1_progs/tfstep.bin");
const SHADOW: &[u8] = include_bytes!("l1_progs/shadow.bin");
const STRAIGHT: &[u8] = include_bytes!("l1_progs/straight.bin");

#[test]
fn smc_store_into_the_running_block() {
    let (o, c) = both(session(SMCSELF, 10_000));
    assert_eq!(o.end, End::Exit);
    assert_eq!(o.regs[3] & 0xFF, 15, "BL sums the patched immediates");
    assert_eq!(o.regs[2] & 0xFFFF, 0, "INC DX was patched into NOP ahead");
    assert_eq!(o.regs[6] & 0xFFFF, 7);
    assert_eq!(o.dispatches, 30);
    assert!(c.smc_retired >= 6, "{c:?}");
}

fn smcloop_expected() -> u16 {
    let mut dx = 0u16;
    for i in (1..=2000u16).rev() {
        dx = dx.wrapping_add(i.wrapping_mul(3));
    }
    dx
}

#[test]
fn self_patching_loop_settles_into_volatile_code() {
    let (o, c) = both(session(SMCLOOP, 100_000));
    assert_eq!(o.end, End::Exit);
    assert_eq!(o.regs[2] as u16, smcloop_expected());
    assert_eq!(o.regs[5] & 0xFFFF, 2000);
    // Three hits make the patched bytes volatile: a handful of compiles, then
    // the patched instruction runs uncached and the rest stays compiled.
    assert!(c.blocks_compiled < 20, "{c:?}");
    assert!(c.uncached_steps >= 1990, "{c:?}");
    // Without the volatile rule every iteration recompiles its block.
    let cfg = Config {
        volatile_hits: 0,
        ..Config::default()
    };
    let (o2, c2) = both_cfg(session(SMCLOOP, 100_000), cfg);
    assert_eq!(o2, o);
    assert!(c2.blocks_compiled >= 2000, "{c2:?}");
}

#[test]
fn rep_string_interrupted_between_elements() {
    let rep_ip = find(REPIRQ, &[0xF3, 0xA4]);
    let mut s = session(REPIRQ, 100_000);
    for at in [1000, 1001, 3333, 5000, 6005, 6100, 6290] {
        s.irq_at(at, 0x40);
    }
    let (o, _) = both(s);
    assert_eq!(o.end, End::Exit);
    let landed: Vec<_> = o
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Irq { at, ip, .. } => Some((*at, *ip)),
            _ => None,
        })
        .collect();
    assert_eq!(landed.len(), 7);
    // The first interrupts land inside REP MOVSB, on the exact dispatch.
    assert_eq!(landed[0], (1000, rep_ip));
    assert!(
        landed[..4].iter().all(|&(_, ip)| ip == rep_ip),
        "{landed:?}"
    );
    // Every position in a window around an element boundary.
    for at in 990..1010 {
        let mut s = session(REPIRQ, 100_000);
        s.irq_at(at, 0x40);
        both(s);
    }
}

#[test]
fn jmp_dollar_and_memory_poll_fold_to_the_interrupt() {
    let mut s = session(SPINJMP, 10_000_000);
    for at in [10_000, 50_000, 123_457] {
        s.irq_at(at, 0x41);
    }
    let (o, c) = both(s);
    assert_eq!(o.end, End::Exit);
    let ats: Vec<u64> = o
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Irq { at, .. } => Some(*at),
            _ => None,
        })
        .collect();
    assert_eq!(ats, vec![10_000, 50_000, 123_457]);
    assert_eq!(o.regs[3] & 0xFFFF, 0x1234);
    assert!(c.spin_dispatches > 110_000, "{c:?}");
    assert!(c.spin_folds >= 3, "{c:?}");
    // With IF=0 a JMP $ folds to the budget.
    let code = [0xFA, 0xEB, 0xFE];
    let (o, c) = both(session(&code, 5_000_000));
    assert_eq!(o.end, End::Budget);
    assert_eq!(o.dispatches, 5_000_000);
    assert!(c.spin_dispatches >= 4_999_990, "{c:?}");
}

fn port_session(budget: u64) -> FlatSession {
    let mut s = session(SPINPORT, budget);
    s.bus.ports.insert(
        0x3DA,
        Port::Wave {
            period: 10_000,
            high: 600,
            phase: 9_000,
            bits: 8,
            base: 0,
            noise: 1,
        },
    );
    s.bus.ports.insert(0x40, Port::Counter(0));
    s
}

#[test]
fn port_poll_folds_to_the_dispatch_the_port_changes() {
    let (o, c) = both(port_session(1_000_000));
    assert_eq!(o.end, End::Exit);
    assert_eq!(o.regs[3] & 0xFFFF, 6, "six frames counted");
    assert!(c.spin_dispatches > 40_000, "{c:?}");
    // Whatever the budget, the state matches L0 at that dispatch.
    for budget in [9_000, 9_001, 9_002, 9_600, 9_601, 19_003, 33_333, 60_601] {
        both(port_session(budget));
    }
}

#[test]
fn block_cut_by_the_budget_at_every_dispatch() {
    for budget in 0..=420 {
        both(session(STRAIGHT, budget));
    }
}

#[test]
fn interrupt_at_every_dispatch_of_a_block() {
    for at in 0..=400 {
        let mut s = session(STRAIGHT, 5_000);
        s.irq_at(at, 0x43);
        both(s);
    }
}

#[test]
fn fp_emulator_sites_patched_once() {
    let (o, c) = both(session(FPEMU, 200_000));
    assert_eq!(o.end, End::Exit);
    assert_eq!(o.regs[2] & 0xFFFF, 200);
    // Four sites, each trapping once; no recompiling afterwards.
    assert!(c.smc_retired <= 8, "{c:?}");
    assert!(c.blocks_compiled < 40, "{c:?}");
}

#[test]
fn self_decrypting_payload_over_compiled_code() {
    let (o, c) = both(session(DECRYPT, 100_000));
    assert_eq!(o.end, End::Exit);
    assert_eq!(o.regs[2] & 0xFFFF, 0x1111 + 2 * 0x0222);
    assert!(c.smc_retired >= 2, "{c:?}");
}

#[test]
fn single_step_mode_traps_like_l0() {
    let (o, c) = both(session(TFSTEP, 100_000));
    assert_eq!(o.end, End::Exit);
    assert!(c.uncached_steps >= 20, "{c:?}");
}

#[test]
fn interrupt_shadows_and_hlt() {
    for at in (0..400).chain([1_000, 5_000]) {
        let mut s = session(SHADOW, 20_000);
        s.irq_at(at, 0x42);
        s.irq_at(at + 7, 0x42);
        s.irq_at(3_000, 0x42);
        s.irq_at(4_000, 0x42);
        both(s);
    }
}

#[test]
fn code_in_a_device_window_runs_uncached() {
    let mut s = session(STRAIGHT, 2_000);
    s.bus.device = Some((0x10100, 0x10200));
    s.irq_at(150, 0x43);
    let (o, c) = both(s);
    assert!(o.device_reads > 0);
    assert!(c.uncached_steps > 0, "{c:?}");
}

#[test]
fn host_write_between_runs_retires_blocks() {
    let patch_at = find(STRAIGHT, &[0x01, 0xD8]) + 4 * 7; // an ADD AX,BX ahead
    let run = |e: &mut dyn FnMut(&mut FlatSession)| {
        let mut s = session(STRAIGHT, 100);
        e(&mut s);
        s.bus.host_write(0x10000 + patch_at, &[0x29]); // ADD -> SUB
        s.budget = 5_000;
        e(&mut s);
        (s.cpu.regs, s.cpu.clock, s.bus.ram_hash())
    };
    let r0 = run(&mut |s: &mut FlatSession| {
        s.run(&mut L0);
    });
    let mut l1 = L1::new();
    let r1 = run(&mut |s: &mut FlatSession| {
        s.run(&mut l1);
    });
    assert_eq!(r0, r1);
    assert!(l1.counters.host_retired >= 1, "{:?}", l1.counters);
}

#[test]
fn a20_flip_retires_hma_code() {
    // The same code bytes at 0x10100 and (A20 off) FFFF:0110 -> 0x100100
    // aliasing 0x000100: put a different program at 0x000100.
    let code_hi = [0xB8, 0x11, 0x11, 0x40, 0x40, 0xEB, 0xFC]; // mov ax,1111; inc ax; inc ax; jmp -4
    let code_lo = [0xB8, 0x22, 0x22, 0x48, 0x48, 0xEB, 0xFC]; // mov ax,2222; dec ax; dec ax; jmp -4
    let go = |e: &mut dyn FnMut(&mut FlatSession)| {
        let mut s = FlatSession::new(0xFFFF, 0x110, &code_hi, 50);
        s.bus.mem[0x100..0x107].copy_from_slice(&code_lo);
        e(&mut s);
        s.bus.set_a20(false);
        s.budget = 100;
        e(&mut s);
        s.cpu.regs[0]
    };
    let a0 = go(&mut |s: &mut FlatSession| {
        s.run(&mut L0);
    });
    let mut l1 = L1::new();
    let a1 = go(&mut |s: &mut FlatSession| {
        s.run(&mut l1);
    });
    assert_eq!(a0, a1);
    // The block at FFFF:0110 came from a CPU address with bit 20 set: it is
    // kept for the open gate, and the closed gate gets its own block there
    // (no whole-cache flush any more).
    assert!(l1.counters.a20_blocks >= 2, "{:?}", l1.counters);
    assert_eq!(l1.counters.flushes, 0, "{:?}", l1.counters);
}

/// xorshift64*
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// Random bytes as code, data, stack and interrupt table: faults, far jumps,
/// stores into code, HLT, port I/O, all of it, with interrupts at random
/// dispatches. L1 must not be distinguishable from L0.
#[test]
fn random_bytes_agree() {
    let mut total = Counters::default();
    for seed in 1..=120u64 {
        let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut code = vec![0u8; 0x400];
        for b in code.iter_mut() {
            *b = r.next() as u8;
        }
        let mut s = session(&code, 30_000);
        // Random interrupt table and low memory, a data area, some ports.
        for a in 0..0x400 {
            s.bus.mem[a] = r.next() as u8;
        }
        for a in 0x10000..0x10100 {
            s.bus.mem[a] = r.next() as u8;
        }
        s.bus.ports.insert(
            0x3DA,
            Port::Wave {
                period: 1_000,
                high: 60,
                phase: 10,
                bits: 8,
                base: 0,
                noise: 1,
            },
        );
        s.bus.ports.insert(0x60, Port::Counter(3));
        s.cpu.flags.set_bits(0x0202);
        for _ in 0..6 {
            let at = r.next() % 30_000;
            let v = r.next() as u8;
            s.irq_at(at, v);
        }
        let (_, c) = both(s);
        total.threaded_ops += c.threaded_ops;
        total.smc_retired += c.smc_retired;
        total.uncached_steps += c.uncached_steps;
    }
    // The fuzz must actually exercise compiled code and SMC.
    assert!(total.threaded_ops > 100_000, "{total:?}");
    assert!(total.smc_retired > 0, "{total:?}");
}

/// One random instruction from templates that keep the stack sane (SP is
/// never a destination) but otherwise go everywhere: ALU, memory through BX
/// and SI (stores land anywhere in the segment, code included), short
/// branches back and forth, LOOP, port I/O, CLI/STI/PUSHF/POPF, INT, REP
/// string moves, HLT, MOV SS, x87.
fn random_insn(r: &mut Rng, out: &mut Vec<u8>) {
    let reg = |r: &mut Rng| -> u8 {
        let x = (r.next() % 7) as u8;
        if x >= 4 {
            x + 1
        } else {
            x
        }
    };
    match r.next() % 30 {
        0..=5 => {
            let op =
                [0x01u8, 0x29, 0x31, 0x21, 0x09, 0x39, 0x85, 0x11, 0x19][(r.next() % 9) as usize];
            out.extend([op, 0xC0 | reg(r) << 3 | reg(r)]);
        }
        6..=7 => {
            out.extend([
                0x83,
                0xC0 | ((r.next() % 8) as u8) << 3 | reg(r),
                r.next() as u8,
            ]);
        }
        8 => out.extend([0xB8 + reg(r), r.next() as u8, r.next() as u8]),
        9 => out.push(0x40 + reg(r)),
        10 => out.push(0x48 + reg(r)),
        11 => out.extend([0x89, 0x07 | reg(r) << 3]), // mov [bx], r
        12 => out.extend([0x88, 0x44 | reg(r) << 3, r.next() as u8]), // mov [si+d8], r8
        13 => out.extend([0x8B, 0x07 | reg(r) << 3]),
        14 => out.extend([0x50 + reg(r), 0x58 + reg(r)]),
        15..=17 => {
            let cc = (r.next() % 16) as u8;
            let d = (r.next() % 24) as i8 - 16;
            out.extend([0x70 + cc, d as u8]);
        }
        18 => out.extend([
            0xE2,
            [0xFE, ((r.next() % 20) as i8 - 18) as u8][(r.next() % 2) as usize],
        ]),
        19 => out.extend([0xE4, [0x60, 0xFF][(r.next() % 2) as usize]]),
        20 => out.extend([0xEC]),
        21 => out.extend([0xE6, r.next() as u8]),
        22 => out.push([0xFA, 0xFB, 0x9C, 0x9D][(r.next() % 4) as usize]),
        23 => out.extend([0xCD, 0x40 + (r.next() % 4) as u8]),
        24 => out.extend([0xF3, [0xA4, 0xAA, 0xA5, 0xAB][(r.next() % 4) as usize]]),
        25 => out.push(0xF4),
        26 => out.extend([0x8C, 0xD0, 0x8E, 0xD0]), // mov ax, ss; mov ss, ax
        27 => out.extend([0xD9, 0xE8, 0xDE, 0xC1]), // fld1; faddp
        28 => out.extend([0xB9, (r.next() % 40) as u8, 0]), // mov cx, small
        _ => out.extend([0xC6, 0x44, r.next() as u8, r.next() as u8]), // mov byte [si+d8], imm8
    }
}

/// Random but structured programs (see `random_insn`) that loop forever,
/// with interrupts at random dispatches into an IRET handler, under several
/// L1 configurations.
#[test]
fn structured_random_programs_agree() {
    let cfgs = [
        Config::default(),
        Config {
            max_ops: 3,
            ..Config::default()
        },
        Config {
            links: false,
            spin: false,
            volatile_hits: 1,
            ..Config::default()
        },
        Config {
            direct_calls: false,
            max_live: 8,
            ..Config::default()
        },
        Config {
            fuse: false,
            max_ops: 2,
            ..Config::default()
        },
    ];
    let mut total = Counters::default();
    for seed in 1..=200u64 {
        let mut r = Rng(seed.wrapping_mul(0xD1B5_4A32_D192_ED03) | 1);
        let mut code = Vec::new();
        while code.len() < 600 {
            random_insn(&mut r, &mut code);
        }
        // Loop back to the start (near JMP).
        let back = -(code.len() as i32 + 3) as i16;
        code.push(0xE9);
        code.extend(back.to_le_bytes());
        // The interrupt handler: IRET at 1000:0F00.
        let mut s = session(&code, 40_000);
        s.bus.mem[0x10F00] = 0xCF;
        for v in 0..=255u8 {
            if v != 0x20 {
                s.set_vector(v, 0x1000, 0x0F00);
            }
        }
        s.bus.ports.insert(
            0x60,
            Port::Wave {
                period: 700,
                high: 50,
                phase: 3,
                bits: 0x21,
                base: 0x10,
                noise: 0,
            },
        );
        s.bus.ports.insert(
            0xFF,
            Port::Step {
                at: 9_000,
                before: 1,
                after: 2,
            },
        );
        s.cpu.regs[6] = (r.next() % 0x700) as u32; // SI somewhere in the code
        s.cpu.regs[3] = 0x2000 + (r.next() % 0x1000) as u32; // BX in data
        s.cpu.flags.set_bits(0x0202);
        for _ in 0..8 {
            s.irq_at(r.next() % 40_000, 0x50 + (r.next() % 4) as u8);
        }
        let cfg = cfgs[(seed % cfgs.len() as u64) as usize].clone();
        let (_, c) = both_cfg(s, cfg);
        total.threaded_ops += c.threaded_ops;
        total.smc_retired += c.smc_retired;
        total.spin_dispatches += c.spin_dispatches;
        total.uncached_steps += c.uncached_steps;
    }
    eprintln!("{total:?}");
    assert!(total.threaded_ops > 1_000_000, "{total:?}");
    assert!(total.smc_retired > 50, "{total:?}");
}

/// `LOOP $` delay loops (CX, CX = 0 meaning 65536, ECX with 67h) fold to
/// their end, or to the interrupt that lands inside them, exactly.
#[test]
fn loop_dollar_folds_exactly() {
    let code = [
        0xFB, // sti
        0xB9, 0x50, 0xC3, // mov cx, 50000
        0xE2, 0xFE, // loop $
        0x31, 0xC9, // xor cx, cx
        0xE2, 0xFE, // loop $ (65536)
        0x66, 0xB9, 0x00, 0x00, 0x02, 0x00, // mov ecx, 20000h
        0x67, 0xE2, 0xFD, // loop $ on ECX
        0xCD, 0x20,
    ];
    let mut s = session(&code, 1_000_000);
    s.set_vector(0x44, 0x1000, 0x0F00);
    s.bus.mem[0x10F00] = 0xCF;
    let (o, c) = both(s.clone());
    assert_eq!(o.end, End::Exit);
    assert_eq!(
        o.dispatches,
        1 + 1 + 50_000 + 1 + 65_536 + 1 + 0x20000 + 1 + 1
    );
    assert!(c.spin_dispatches > 240_000, "{c:?}");
    for at in [
        3, 4, 5, 6, 7, 1000, 49_999, 50_001, 50_002, 50_003, 120_000, 200_000,
    ] {
        let mut s2 = s.clone();
        s2.irq_at(at, 0x44);
        both(s2);
    }
}
