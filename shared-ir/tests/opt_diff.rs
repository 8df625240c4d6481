//! Differential tests of the optimizer: every pass alone and every named
//! set, over generated IR programs and over the naive lowering of random
//! and hand-picked x86 code, run on the reference interpreter before and
//! after, from the same generated machine state. Exit (reason and IP),
//! guest registers, FLAGS, the clock, RAM and the machine's event log (each
//! effect with its exact dispatch) must be identical, at every budget, and
//! the verifier must accept the program after every pass.

use proptest::prelude::*;
use shared_ir::ir::Program;
use shared_ir::lower::lower_line;
use shared_ir::machine::RealMode16;
use shared_ir::opt::{optimize_checked, Pass, PassSet, NAMED_SETS};
use shared_ir::refinterp::{run_program, RefState};
use shared_ir::testkit::{gen_program, gen_state, FakeMachine, GenOptions, Rng};

/// Every set the tests run: each pass alone, each named set.
fn sets() -> Vec<(String, PassSet)> {
    let mut v: Vec<(String, PassSet)> = Pass::ALL
        .iter()
        .map(|p| (p.name().to_string(), PassSet::of(&[*p])))
        .collect();
    for (n, ps) in NAMED_SETS {
        v.push((n.to_string(), PassSet::of(ps)));
    }
    v
}

fn run(p: &Program, regs: &[u32], flags: shared_ir::flags::LazyFlags, limit: u64) -> String {
    let mut vregs = vec![0u32; 256];
    vregs[..regs.len()].copy_from_slice(regs);
    let mut m = FakeMachine::new();
    let mut st = RefState {
        vregs,
        flags,
        clock: 100,
        ..Default::default()
    };
    let exit = run_program(p, &mut st, &mut m, limit);
    let g = p.guest as usize;
    let ram = {
        use std::hash::{Hash, Hasher};
        let mut h = std::hash::DefaultHasher::new();
        m.ram.hash(&mut h);
        h.finish()
    };
    format!(
        "exit {exit:?}\nregs {:08X?}\nflags {:08X}\nclock {}\nram {ram:016X}\nlog {:?}",
        &st.vregs[..g],
        st.flags.bits(),
        st.clock,
        m.log
    )
}

/// Asserts every set keeps `p`'s meaning from the state of `seed`.
fn check_all(p: &Program, seed: u64, budget: u64) {
    let mut r = Rng(seed | 1);
    let (regs, flags) = gen_state(&mut r);
    let regs = &regs[..p.guest as usize];
    let want = run(p, regs, flags, 100 + budget);
    // What an exit for the budget at the entry looks like: nothing ran.
    let at_entry = run(p, regs, flags, 100);
    for (name, set) in sets() {
        let mut q = p.clone();
        optimize_checked(&mut q, set, true).unwrap_or_else(|e| panic!("{name}: {e}\n{p}\n{q}"));
        let got = run(&q, regs, flags, 100 + budget);
        // `clock` checks a longer path at the entry: where that does not fit
        // the budget it exits before anything ran, which is exact (a finer
        // engine runs the tail; shared-ir/tests/region_diff.rs continues
        // such exits instruction by instruction and compares the end).
        if set.contains(Pass::Clock)
            && got == at_entry
            && got.starts_with("exit Exit { reason: Budget")
        {
            continue;
        }
        assert_eq!(
            got, want,
            "set {name} changed the program's meaning\nbefore:\n{p}\nafter:\n{q}"
        );
    }
}

const LINK_KEYS: &[u64] = &[0x7100, 0x7200, 0x7300];

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    #[test]
    fn generated_programs_keep_their_meaning(seed in any::<u64>(), looping in any::<bool>(), budget in 0u64..40) {
        let mut r = Rng(seed | 1);
        let p = gen_program(&mut r, 0x7100, &GenOptions { max_ops: 12, looping, link_keys: LINK_KEYS });
        check_all(&p, seed.rotate_left(17), budget);
    }

    #[test]
    fn lowered_random_lines_keep_their_meaning(
        bytes in proptest::collection::vec(any::<u8>(), 1..48),
        seed in any::<u64>(),
        budget in 0u64..20,
    ) {
        if let Some(p) = lower_line(&RealMode16, 0x7000, 0x100, &bytes, 16).program {
            check_all(&p, seed, budget);
        }
    }
}

/// Hand-picked shapes every pass touches (lea with each addressing form,
/// narrow ALU into AH, push/pop, string steps, a loop): a case table, each
/// run at every budget 0..24 from three states.
#[test]
fn case_table_keeps_its_meaning() {
    const CASES: &[(&str, &[u8])] = &[
        (
            "lea ax,[bx+si+4]; lea dx,[bp+di]",
            &[0x8D, 0x40, 0x04, 0x8D, 0x13],
        ),
        (
            "lea cx,[1234h]; lea ax,[si]; lea bx,[bx+7]",
            &[0x8D, 0x0E, 0x34, 0x12, 0x8D, 0x04, 0x8D, 0x5F, 0x07],
        ),
        (
            "lea eax,[ebx+ecx*4+8]",
            &[0x66, 0x67, 0x8D, 0x44, 0x8B, 0x08],
        ),
        (
            "push ax; pop bx; push 5; pop cx",
            &[0x50, 0x5B, 0x6A, 0x05, 0x59],
        ),
        (
            "mov ah,[bx+si]; add ah,al; mov [di+2],ah",
            &[0x8A, 0x20, 0x00, 0xC4, 0x88, 0x65, 0x02],
        ),
        ("stosb; lodsw; movsb", &[0xAA, 0xAD, 0xA4]),
        (
            "l: add ax,[si+4]; inc si; dec cx; jnz l",
            &[0x03, 0x44, 0x04, 0x46, 0x49, 0x75, 0xF9],
        ),
        ("rep stosw; loop $-2", &[0xF3, 0xAB, 0xE2, 0xFC]),
        // REP string elements (`Term::Rep`): 32-bit addressing counts ECX.
        ("inc ax; rep movsb", &[0x40, 0xF3, 0xA4]),
        ("a32 rep movsw", &[0x67, 0xF3, 0xA5]),
        ("a32 rep stosd", &[0x66, 0x67, 0xF3, 0xAB]),
        ("repe cmpsb", &[0xF3, 0xA6]),
        ("repne scasw", &[0xF2, 0xAF]),
        ("rep lodsb", &[0xF3, 0xAC]),
        ("xchg [bx],ax; leave; ret", &[0x87, 0x07, 0xC9, 0xC3]),
    ];
    for (name, bytes) in CASES {
        let p = lower_line(&RealMode16, 0x7000, 0x100, bytes, 16)
            .program
            .unwrap_or_else(|| panic!("{name} does not lower"));
        for seed in [1u64, 0xDEAD_BEEF, 0x1234_5678_9ABC] {
            for budget in 0..24 {
                check_all(&p, seed, budget);
            }
        }
    }
}

/// The density effect of `baseline` on the case table (static E1-relevant
/// ops), printed with `-- --nocapture`; and an exact figure for lea.
#[test]
fn baseline_shrinks_lea_to_two_alu_ops() {
    let bytes = [0x8D, 0x40, 0x04]; // lea ax,[bx+si+4]
    let p = lower_line(&RealMode16, 0x7000, 0x100, &bytes, 1)
        .program
        .unwrap();
    let mut q = p.clone();
    optimize_checked(&mut q, PassSet::named("baseline").unwrap(), true).unwrap();
    println!("before:\n{p}\nafter:\n{q}");
    // clock.check, add.32, add.16, jmp, link (the jmp E1 lays out away): count
    // is gone, mov/shl/add/add/mov became add.32 + add.16.
    assert_eq!(p.uop_count(), 9, "{p}");
    assert_eq!(q.uop_count(), 5, "{q}");
}

#[test]
fn pass_set_parsing() {
    let b = PassSet::named("baseline").unwrap();
    let cases: &[(&str, Result<PassSet, ()>)] = &[
        ("naive", Ok(PassSet::NAIVE)),
        ("baseline", Ok(b)),
        (
            "constprop,dce",
            Ok(PassSet::of(&[Pass::ConstProp, Pass::Dce])),
        ),
        (
            "constprop.dce",
            Ok(PassSet::of(&[Pass::ConstProp, Pass::Dce])),
        ),
        ("baseline.~dce", Ok(b.without(Pass::Dce))),
        ("baseline,calls,clock", Ok(PassSet::named("all").unwrap())),
        (
            "region.flagfwd.merge",
            Ok(PassSet::of(&[Pass::Region, Pass::FlagFwd, Pass::Merge])),
        ),
        ("all,~all", Ok(PassSet::NAIVE)),
        ("bogus", Err(())),
        ("", Err(())),
    ];
    for (s, want) in cases {
        let got = PassSet::parse(s).map_err(|_| ());
        assert_eq!(&got, want, "{s}");
    }
    for s in ["naive", "baseline", "all"] {
        assert_eq!(PassSet::named(s).unwrap().canonical(), s);
    }
    assert_eq!(
        PassSet::of(&[Pass::Dce, Pass::ConstProp]).canonical(),
        "constprop.dce"
    );
}

/// Regression (found by `generated_programs_keep_their_meaning`): a call
/// writing one temporary through two lanes (`v26.w` and `v26`) merges into
/// the old value, so the `mov v26, imm` before it is not dead.
#[test]
fn dce_keeps_a_def_a_two_lane_call_merges_into() {
    let text = "program model=real16 key=0x7100 guest=20
code 0x7100..0x7110
b0:
  clock.check 1 @0x100/0
  mov v26, 0x4ba63f7c
  call imul16 v26.w, v26 <- 0x3, ecx.b @0x129/1
  exit fallback @0x205/0
";
    let p = shared_ir::ir::parse::parse_program(text).unwrap();
    for seed in [1u64, 7, 99] {
        for budget in 0..3 {
            check_all(&p, seed, budget);
        }
    }
    let mut q = p.clone();
    optimize_checked(&mut q, PassSet::of(&[Pass::Dce]), true).unwrap();
    assert_eq!(q, p, "dce must keep the mov");
}
