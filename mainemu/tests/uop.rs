//! The µop arms against L1 (docs/port.md): every mingw test program under
//! `l1`, `only-naive`, `only-baseline` and `only-all` with identical
//! summaries (ending, dispatches, API calls), output, thread registers and
//! address-space hash; budget stops landing at N exactly with equal state
//! (threads, faults, self-modifying code); the self-modifying program's
//! stores retiring µop programs; and 7-Zip's benchmark to a budget.
mod common;

use common::arms::{diff, go, run_7za_b, End, BUDGETS, PROGRAMS};
use mainemu::run::{Arm, Ending};

fn arm(name: &str) -> Arm {
    name.parse().unwrap()
}

const UOP_ARMS: &[&str] = &["only-naive", "only-baseline", "only-all"];

/// The tier's counter `k` of a µop run (0 when absent).
fn counter(e: &End, k: &str) -> u64 {
    e.s.uop
        .as_ref()
        .expect("µop counters")
        .get(k)
        .copied()
        .unwrap_or(0)
}

#[test]
fn every_program_is_the_same_under_l1_and_every_uop_arm() {
    let mut failures = Vec::new();
    let noaccess: &[(&str, &[&str])] = &[("smc.exe", &["noaccess"])];
    for &(name, args) in PROGRAMS.iter().chain(noaccess) {
        let Some(a) = go(name, args, Arm::L1, 50_000_000) else {
            return;
        };
        assert!(
            matches!(a.s.ending, Ending::Exit { .. } | Ending::Stop { .. }),
            "{name}: {:?}",
            a.s.ending
        );
        for &u in UOP_ARMS {
            let b = go(name, args, arm(u), 50_000_000).unwrap();
            assert_eq!(b.s.arm, u);
            // Most guest dispatches run inside µop programs.
            let inside = counter(&b, "uop_insns");
            if inside < counter(&b, "stepped") {
                failures.push(format!("{name} {u}: only {inside} dispatches in programs"));
            }
            for d in diff(&a, &b) {
                failures.push(format!("{name} {u}: {d}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn budget_stops_land_at_n_with_equal_state() {
    let mut failures = Vec::new();
    for &(name, budgets) in BUDGETS {
        for &n in budgets {
            let Some(a) = go(name, &[], Arm::L1, n) else {
                return;
            };
            assert_eq!(
                (&a.s.ending, a.s.dispatches),
                (&Ending::Budget, n),
                "{name} @{n}"
            );
            for &u in UOP_ARMS {
                let b = go(name, &[], arm(u), n).unwrap();
                for d in diff(&a, &b) {
                    failures.push(format!("{name} {u} @{n}: {d}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_budget_in_the_self_patching_loop_stops_exactly() {
    // smc.exe's loop patches its own ADD immediate: stops at every
    // instruction around a store into the running program.
    let mut failures = Vec::new();
    for n in 1_900..2_000 {
        let Some(a) = go("smc.exe", &[], Arm::L1, n) else {
            return;
        };
        let b = go("smc.exe", &[], arm("only-naive"), n).unwrap();
        for d in diff(&a, &b) {
            failures.push(format!("smc.exe @{n}: {d}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn self_modifying_code_retires_programs() {
    let Some(b) = go("smc.exe", &[], arm("only-naive"), 50_000_000) else {
        return;
    };
    assert_eq!(
        b.out,
        "loop sum=500500 imm=1001\ninline sum=1275\nwindow acc=1801789955\ndata t=486094 f1=8 f2=9\n"
    );
    assert_eq!(
        (&b.s.ending, b.s.dispatches),
        (&Ending::Exit { code: 0 }, 34_064)
    );
    // Every patch of the loop's immediate retires the program holding it.
    assert!(counter(&b, "retired") >= 1000, "{:?}", b.s.uop);
    assert!(counter(&b, "handbacks.smc") >= 1000, "{:?}", b.s.uop);
}

#[test]
fn bad_arm_names_are_clear_errors() {
    let e = "only-nosuchpass".parse::<Arm>().unwrap_err();
    assert!(e.contains("only-nosuchpass"), "{e}");
    let e = "fast".parse::<Arm>().unwrap_err();
    assert!(e.contains("only-naive"), "{e}");
}

#[test]
fn real_7za_benchmark_runs_the_same_under_l1_and_only_naive() {
    let Some(a) = run_7za_b(Arm::L1, 5_000_000) else {
        return;
    };
    let b = run_7za_b(arm("only-naive"), 5_000_000).unwrap();
    assert_eq!((&a.s.ending, a.s.dispatches), (&Ending::Budget, 5_000_000));
    assert_eq!(diff(&a, &b), Vec::<String>::new());
    assert!(
        counter(&b, "uop_insns") * 10 > 9 * 5_000_000,
        "{:?}",
        b.s.uop
    );
}
