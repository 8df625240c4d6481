//! The `jit` arm's compiler against the reference interpreter, over the
//! generators the optimizer's differential tests use (`shared_ir::testkit`:
//! generated straight-line, looping and linked programs; the naive lowering
//! of random x86 bytes), each also through every named pass set. Programs
//! run through `Jit::run` (native code, E1 for what is not compiled, and
//! both mixed: every program compiled, none, or every other one); exit
//! (reason and IP), guest registers, FLAGS, the clock, RAM and the machine's
//! event log (each effect with its exact dispatch) must equal the reference
//! interpreter's, with the page view and with every page on the checked path.

use jit::Jit;
use proptest::prelude::*;
use shared_ir::e1::{E1Arena, E1State};
use shared_ir::exit::Exit;
use shared_ir::flags::LazyFlags;
use shared_ir::ir::{print::print_program, Program};
use shared_ir::lower::lower_line;
use shared_ir::machine::RealMode16;
use shared_ir::opt::{optimize, PassSet, NAMED_SETS};
use shared_ir::refinterp::{run_chain, RefState};
use shared_ir::testkit::*;
use std::collections::BTreeMap;

#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    exit: Exit,
    guest: Vec<u32>,
    flags: u32,
    clock: u64,
}

fn no_clock() -> u64 {
    0
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
    let g = progs[0].guest as usize;
    (
        Outcome {
            exit,
            guest: st.vregs[..g].to_vec(),
            flags: st.flags.bits(),
            clock: st.clock,
        },
        m,
    )
}

/// Which programs get native code.
#[derive(Clone, Copy, Debug)]
enum Mix {
    All,
    None,
    Alternate,
}

fn run_jit(
    progs: &[Program],
    init: &(Vec<u32>, LazyFlags),
    clock: u64,
    limit: u64,
    slow: bool,
    mix: Mix,
) -> (Outcome, FakeMachine, u64) {
    let mut arena = E1Arena::new(1 << 16);
    let mut jit = Jit::new(u32::MAX, no_clock);
    let mut ids = Vec::new();
    for p in progs {
        let id = arena
            .install(p)
            .unwrap_or_else(|e| panic!("{e}\n{}", print_program(p)));
        arena.set_head(id);
        jit.offer(id, p.clone());
        ids.push(id);
    }
    arena.link_all();
    for (i, id) in ids.iter().enumerate() {
        let want = match mix {
            Mix::All => true,
            Mix::None => false,
            Mix::Alternate => i % 2 == 0,
        };
        if want {
            // A decline (x87) leaves the program on E1: still exact.
            let _ = jit.compile_now::<FakeMachine>(&mut arena, *id);
        }
    }
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
    let mut uops = 0;
    let ex = jit
        .run(&mut arena, &mut m, &mut st, ids[0], limit, &mut uops)
        .unwrap();
    let g = progs[0].guest as usize;
    (
        Outcome {
            exit: ex.exit,
            guest: arena.vregs()[..g].to_vec(),
            flags: st.flags.bits(),
            clock: st.clock,
        },
        m,
        jit.stats.native_entries,
    )
}

/// Asserts every mix and both memory paths equal the reference; returns how
/// many native entries the all-native run made.
fn compare(progs: &[Program], init: &(Vec<u32>, LazyFlags), clock: u64, limit: u64) -> u64 {
    let (want, wm) = run_ref(progs, init, clock, limit);
    let mut native = 0;
    for mix in [Mix::All, Mix::Alternate, Mix::None] {
        for slow in [false, true] {
            let (got, gm, n) = run_jit(progs, init, clock, limit, slow, mix);
            if matches!(mix, Mix::All) && !slow {
                native = n;
            }
            let text: String = progs.iter().map(print_program).collect();
            assert_eq!(got, want, "mix={mix:?} slow={slow}\n{text}");
            assert_eq!(
                gm.log, wm.log,
                "device log, mix={mix:?} slow={slow}\n{text}"
            );
            assert_eq!(gm.latch, wm.latch);
            assert_eq!(gm.fpu, wm.fpu);
            assert!(
                gm.ram == wm.ram,
                "RAM differs, mix={mix:?} slow={slow}\n{text}"
            );
        }
    }
    native
}

/// `p` and its form after every named pass set.
fn with_sets(p: &Program) -> Vec<Program> {
    let mut v = vec![p.clone()];
    for (_, ps) in NAMED_SETS {
        v.push(optimize(p, PassSet::of(ps)));
    }
    v
}

const KEYS: &[u64] = &[0x10, 0x20, 0x30];

/// Cases per property: a few dozen in CI (each case compiles up to a dozen
/// programs); `JIT_DIFF_CASES=2000` for a long run (docs/wasm.md).
fn cases() -> u32 {
    std::env::var("JIT_DIFF_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn straight_line_programs_agree(seed in any::<u64>(), budget in 0u64..8) {
        let mut r = Rng(seed | 1);
        let opts = GenOptions { max_ops: 24, looping: false, link_keys: &[] };
        let p = gen_program(&mut r, 0x10, &opts);
        let init = gen_state(&mut r);
        for q in with_sets(&p) {
            compare(&[q], &init, 1000, 1000 + budget);
        }
    }

    #[test]
    fn looping_programs_agree(seed in any::<u64>(), budget in 0u64..200) {
        let mut r = Rng(seed | 1);
        let opts = GenOptions { max_ops: 10, looping: true, link_keys: &[] };
        let p = gen_program(&mut r, 0x10, &opts);
        let init = gen_state(&mut r);
        for q in with_sets(&p) {
            compare(&[q], &init, 50, 50 + budget);
        }
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

    #[test]
    fn lowered_random_lines_agree(
        bytes in proptest::collection::vec(any::<u8>(), 1..48),
        seed in any::<u64>(),
        budget in 0u64..20,
    ) {
        if let Some(p) = lower_line(&RealMode16, 0x7000, 0x100, &bytes, 16).program {
            let mut r = Rng(seed | 1);
            let init = gen_state(&mut r);
            for q in with_sets(&p) {
                compare(&[q], &init, 100, 100 + budget);
            }
        }
    }
}

/// A self-linked loop stays in native code: one native entry for the whole
/// run, with the loop's link word filled.
#[test]
fn a_self_linked_loop_runs_in_one_native_entry() {
    // dec cx; jnz $-1 (a loop that links to its own head), lowered at 0x100.
    let bytes = [0x49, 0x75, 0xFD];
    let p = lower_line(&RealMode16, 0x7000, 0x100, &bytes, 16)
        .program
        .expect("lowers");
    let mut init = (vec![0u32; 256], LazyFlags::default());
    init.0[1] = 1000; // cx
    let native = compare(std::slice::from_ref(&p), &init, 0, 10_000);
    assert_eq!(native, 1);
}
