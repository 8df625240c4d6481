//! L1 against L0 (docs/mainemu.md, "L1"): every mingw test program under both
//! arms with identical summaries (dispatches, ending, API calls, GetProcAddress
//! misses), output, thread registers and address-space hash; budget stops at
//! several N landing at N exactly with equal state; and the self-modifying
//! program's retirements counted exactly (smc.c says what each phase does).
mod common;

use common::arms::{diff, go, run_7za_b, BUDGETS, PROGRAMS};
use mainemu::run::{Arm, Ending};

#[test]
fn every_program_is_the_same_under_l0_and_l1() {
    let mut failures = Vec::new();
    for &(name, args) in PROGRAMS {
        let Some(a) = go(name, args, Arm::L0, 50_000_000) else {
            return;
        };
        let b = go(name, args, Arm::L1, 50_000_000).unwrap();
        assert!(
            matches!(a.s.ending, Ending::Exit { .. }),
            "{name}: {:?}",
            a.s.ending
        );
        assert_eq!((a.s.arm, b.s.arm), ("l0", "l1"));
        assert!(a.s.l1.is_none());
        let c = b.s.l1.expect("l1 counters");
        // Every instruction ran from a block (none of them fetches from an
        // unreadable window or leaves flat code). Dispatches also count guest
        // time skipped while every thread waits, so they are not compared.
        assert!(
            c.uncached_steps == 0 && c.block_dispatches > 0,
            "{name}: {c:?}"
        );
        for d in diff(&a, &b) {
            failures.push(format!("{name}: {d}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn budget_stops_land_at_n_with_equal_state() {
    let mut failures = Vec::new();
    for &(name, budgets) in BUDGETS {
        for &n in budgets {
            let Some(a) = go(name, &[], Arm::L0, n) else {
                return;
            };
            let b = go(name, &[], Arm::L1, n).unwrap();
            if a.s.ending != Ending::Budget || a.s.dispatches != n {
                failures.push(format!(
                    "{name} @{n}: l0 {:?} after {}",
                    a.s.ending, a.s.dispatches
                ));
            }
            for d in diff(&a, &b) {
                failures.push(format!("{name} @{n}: {d}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn self_modifying_code_retires_exactly_the_overwritten_blocks() {
    let Some(b) = go("smc.exe", &[], Arm::L1, 50_000_000) else {
        return;
    };
    assert_eq!(
        b.out,
        "loop sum=500500 imm=1001\ninline sum=1275\nwindow acc=1801789955\ndata t=486094 f1=8 f2=9\n"
    );
    assert_eq!(b.s.ending, Ending::Exit { code: 0 });
    assert_eq!(b.s.dispatches, 34_064);
    let c = b.s.l1.unwrap();
    // loop: the entry block, then the loop block once per further iteration
    // (1000); inline: the first call retires its block, every later call
    // both blocks the patch overlaps (1 + 2 * 49); window: every rewrite
    // after the first call (9); data: the 1000 stores next to the code
    // retire nothing, the patch of f1 retires f1 alone (1).
    assert_eq!(c.cache.smc_retired, 1000 + 99 + 9 + 1);
    assert_eq!(c.uncached_steps, 0);
}

#[test]
fn every_budget_in_a_window_stops_exactly() {
    // 150 consecutive budgets in smc.exe's self-patching loop: stops at
    // every op of its blocks, between a store into the running block and
    // the fresh lookup after it.
    let mut failures = Vec::new();
    for n in 1_900..2_050 {
        let Some(a) = go("smc.exe", &[], Arm::L0, n) else {
            return;
        };
        let b = go("smc.exe", &[], Arm::L1, n).unwrap();
        assert_eq!(a.s.dispatches, n);
        for d in diff(&a, &b) {
            failures.push(format!("smc.exe @{n}: {d}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn real_7za_benchmark_runs_the_same_under_both_arms() {
    // 7-Zip's `b` (benchmark): 40M dispatches of real code (CRC tables,
    // LZMA set-up, its timing loop, compression), stopped by the budget at
    // the same state under both arms.
    let Some(a) = run_7za_b(Arm::L0, 40_000_000) else {
        return;
    };
    let b = run_7za_b(Arm::L1, 40_000_000).unwrap();
    assert_eq!(a.s.dispatches, 40_000_000);
    assert!(matches!(&a.s.ending, Ending::Budget), "{:?}", a.s.ending);
    assert_eq!(diff(&a, &b), Vec::<String>::new());
    let c = b.s.l1.unwrap();
    assert_eq!((c.uncached_steps, c.cache.smc_retired), (0, 0));
}

#[test]
fn a_code_page_made_unreadable_faults_like_l0() {
    // smc.exe noaccess: after its phases the page holding f1 and f2 (both
    // compiled) becomes PAGE_NOACCESS and f2 is called: the protection
    // change is a whole-page code write that retires both blocks, so the
    // call fetches (uncached) and faults exactly as under l0.
    let Some(a) = go("smc.exe", &["noaccess"], Arm::L0, 50_000_000) else {
        return;
    };
    let b = go("smc.exe", &["noaccess"], Arm::L1, 50_000_000).unwrap();
    assert!(a.out.ends_with("f1=8 f2=9\nprotect old=40\n"), "{}", a.out);
    assert!(
        matches!(&a.s.ending, Ending::Stop { report } if report.contains("access violation executing")),
        "{:?}",
        a.s.ending
    );
    assert_eq!(a.s.dispatches, 34_790);
    assert_eq!(diff(&a, &b), Vec::<String>::new());
    let c = b.s.l1.unwrap();
    assert_eq!((c.cache.smc_retired, c.uncached_steps), (1109 + 2, 1));
}
