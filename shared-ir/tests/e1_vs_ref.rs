//! E1 against the reference interpreter on generated programs: straight-line,
//! branching and looping programs, single and linked, over a fake machine with
//! plain RAM, device memory, code pages, refusing regions, ports and services.
//! Registers, flags, clock, memory, the device event log, entry counters and
//! the exit (reason and IP) must be identical. E1 also runs with every page
//! forced onto the checked path, which must change nothing.

use proptest::prelude::*;
use shared_ir::e1::{self, E1Arena, E1State};
use shared_ir::exit::{Exit, ExitReason};
use shared_ir::flags::LazyFlags;
use shared_ir::ir::{print::print_program, Program};
use shared_ir::refinterp::{run_chain, RefState};
use shared_ir::testkit::*;
use std::collections::BTreeMap;

#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    exit: Exit,
    guest: Vec<u32>,
    flags: u32,
    clock: u64,
    counts: BTreeMap<u64, u64>,
}

fn run_ref(
    progs: &[Program],
    init: &(Vec<u32>, LazyFlags),
    clock: u64,
    limit: u64,
) -> (Outcome, FakeMachine) {
    let map: BTreeMap<u64, Program> = progs.iter().map(|p| (p.key, p.clone())).collect();
    let mut m = FakeMachine::new();
    let mut st = RefState {
        vregs: init.0.clone(),
        flags: init.1,
        clock,
        ..Default::default()
    };
    let exit = run_chain(&map, progs[0].key, &mut st, &mut m, limit);
    (
        Outcome {
            exit,
            guest: st.vregs[..GEN_GUEST as usize].to_vec(),
            flags: st.flags.bits(),
            clock: st.clock,
            counts: st.counts,
        },
        m,
    )
}

fn run_e1(
    progs: &[Program],
    init: &(Vec<u32>, LazyFlags),
    clock: u64,
    limit: u64,
    slow: bool,
) -> (Outcome, FakeMachine) {
    let mut arena = E1Arena::new(1 << 16);
    let mut ids = Vec::new();
    for p in progs {
        let id = arena
            .install(p)
            .unwrap_or_else(|e| panic!("{e}\n{}", print_program(p)));
        arena.set_head(id);
        ids.push(id);
    }
    arena.link_all();
    arena.check_links().unwrap();
    let mut m = FakeMachine::new();
    if slow {
        m.all_slow();
    }
    arena.vregs_mut()[..init.0.len()].copy_from_slice(&init.0);
    let mut st = E1State {
        flags: init.1,
        clock,
    };
    let ex = e1::run(&mut arena, &mut m, &mut st, ids[0], limit).unwrap();
    let mut counts = BTreeMap::new();
    for (p, id) in progs.iter().zip(&ids) {
        let c = arena.count(*id).unwrap();
        if c != 0 {
            counts.insert(p.key, c as u64);
        }
    }
    (
        Outcome {
            exit: ex.exit,
            guest: arena.vregs()[..GEN_GUEST as usize].to_vec(),
            flags: st.flags.bits(),
            clock: st.clock,
            counts,
        },
        m,
    )
}

fn compare(progs: &[Program], init: &(Vec<u32>, LazyFlags), clock: u64, limit: u64) -> Outcome {
    let (want, wm) = run_ref(progs, init, clock, limit);
    for slow in [false, true] {
        let (got, gm) = run_e1(progs, init, clock, limit, slow);
        let text: String = progs.iter().map(print_program).collect();
        assert_eq!(got, want, "slow={slow}\n{text}");
        assert_eq!(gm.log, wm.log, "device log, slow={slow}\n{text}");
        assert_eq!(gm.latch, wm.latch);
        assert_eq!(gm.fpu, wm.fpu);
        assert!(gm.ram == wm.ram, "RAM differs, slow={slow}\n{text}");
    }
    want
}

const KEYS: &[u64] = &[0x10, 0x20, 0x30];

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    #[test]
    fn straight_line_programs_agree(seed in any::<u64>(), budget in 0u64..8) {
        let mut r = Rng(seed | 1);
        let opts = GenOptions { max_ops: 24, looping: false, link_keys: &[] };
        let p = gen_program(&mut r, 0x10, &opts);
        let init = gen_state(&mut r);
        compare(&[p], &init, 1000, 1000 + budget);
    }

    #[test]
    fn looping_programs_agree(seed in any::<u64>(), budget in 0u64..200) {
        let mut r = Rng(seed | 1);
        let opts = GenOptions { max_ops: 10, looping: true, link_keys: &[] };
        let p = gen_program(&mut r, 0x10, &opts);
        let init = gen_state(&mut r);
        compare(&[p], &init, 50, 50 + budget);
    }

    #[test]
    fn linked_programs_agree(seed in any::<u64>(), budget in 0u64..300) {
        let mut r = Rng(seed | 1);
        let progs: Vec<Program> = KEYS
            .iter()
            .map(|&k| {
                let looping = r.chance(1, 2);
                let opts = GenOptions { max_ops: 8, looping, link_keys: KEYS };
                gen_program(&mut r, k, &opts)
            })
            .collect();
        let init = gen_state(&mut r);
        compare(&progs, &init, 0, budget);
    }
}

/// Every generated program verifies, prints, parses back to itself.
#[test]
fn generated_programs_round_trip_through_text() {
    let mut r = Rng(7);
    for i in 0..500 {
        let opts = GenOptions {
            max_ops: 20,
            looping: i % 2 == 0,
            link_keys: KEYS,
        };
        let p = gen_program(&mut r, 0x10 + i, &opts);
        shared_ir::ir::verify::verify(&p).unwrap();
        let text = print_program(&p);
        let q =
            shared_ir::ir::parse::parse_program(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        for (bp, bq) in p.blocks.iter().zip(&q.blocks) {
            for (a, b) in bp.ops.iter().zip(&bq.ops) {
                assert_eq!(a, b, "{text}");
            }
            assert_eq!(bp.term, bq.term, "{text}");
        }
        assert_eq!(p, q, "{text}");
    }
}

/// A budget stop lands on every exact clock value: for each limit the run
/// ends at min(limit rounded down to a block boundary, natural end).
#[test]
fn budget_stops_are_exact_at_every_limit() {
    let mut r = Rng(99);
    for _ in 0..40 {
        let opts = GenOptions {
            max_ops: 6,
            looping: true,
            link_keys: &[],
        };
        let mut p = gen_program(&mut r, 0x10, &opts);
        // Unchecked `clock` ops may bill past a limit by design; keep only
        // the checked billing here.
        for b in &mut p.blocks {
            b.ops
                .retain(|o| !matches!(o, shared_ir::ir::Op::Clock { .. }));
        }
        let init = gen_state(&mut r);
        let mut last_clock = 0;
        for limit in 0..120u64 {
            let out = compare(std::slice::from_ref(&p), &init, 0, limit);
            assert!(
                out.clock <= limit,
                "clock {} passed limit {}",
                out.clock,
                limit
            );
            if out.exit.reason == ExitReason::Budget {
                // A budget exit never leaves a covered dispatch unused by more
                // than one block's bill.
                assert!(limit - out.clock < 4, "{} {}", out.clock, limit);
            }
            assert!(out.clock >= last_clock || out.exit.reason != ExitReason::Budget);
            last_clock = out.clock;
        }
    }
}
