//! L1's protected-mode blocks (`l1::pm`) on real DPMI programs: the cached
//! path is the one taken (almost no uncached steps, most dispatches from
//! protected-mode blocks) and the run is L0's, snapshot for snapshot
//! (dispatches, CS:IP, registers, flags, RAM, devices, frame). Skipped with
//! a message when `shared/dos-real` is absent. Each program runs 3M
//! dispatches (seconds under L0).

use toyvm::session::{Config, Program, Session};

const BUDGET: u64 = 3_000_000;

/// `path` under CWSDPMI, under `arm`.
fn config(dir: &std::path::Path, path: &str, arm: &str) -> Config {
    let mut cfg = Config::new(dir.join(path));
    cfg.budget = BUDGET;
    cfg.arm = arm.into();
    cfg.companions.push(Program {
        path: dir.join("_support").join("CWSDPMI.EXE"),
        args: "-p".into(),
    });
    cfg
}

fn counter(s: &Session, k: &str) -> u64 {
    s.counters()
        .and_then(|c| c.get(k).and_then(|v| v.as_u64()))
        .unwrap_or(0)
}

/// Runs `path` under L0 and L1 side by side (snapshots equal at every
/// 500K dispatches and at the end) and returns the L1 session.
fn equal_to_l0(dir: &std::path::Path, path: &str) -> Session {
    let mut s0 = Session::new(&config(dir, path, "l0")).expect("l0 session");
    let mut s1 = Session::new(&config(dir, path, "l1")).expect("l1 session");
    let mut t = 0;
    while t < BUDGET {
        t += 500_000;
        let (g0, g1) = (s0.run_until(t), s1.run_until(t));
        assert_eq!(s0.snapshot(), s1.snapshot(), "{path} at {t}");
        assert_eq!(g0, g1, "{path}: one arm ended at {t}");
        if !g0 {
            break;
        }
    }
    s0.run();
    s1.run();
    assert_eq!(s0.end, s1.end, "{path}");
    assert_eq!(s0.snapshot(), s1.snapshot(), "{path} at the end");
    s1
}

#[test]
fn dpmi_clients_run_from_protected_mode_blocks_as_l0_runs_them() {
    let Some(dir) = corpus_dos::shared_data_or_skip("DOS_REAL", "dos-real", "MANIFEST.tsv") else {
        return;
    };
    for path in [
        "efliks-demoscene-legacy/asm32/plasma32/PLASMA32.EXE",
        "efliks-demoscene-legacy/asm32/naag11/naag.exe",
        "efliks-demoscene-legacy/asm32/3dfontz/3DFONTZ.EXE",
    ] {
        let s = equal_to_l0(&dir, path);
        let total = counter(&s, "dispatches");
        let pm = counter(&s, "pm_dispatches");
        let uncached = counter(&s, "uncached_steps");
        assert_eq!(total, BUDGET, "{path}: ran to the budget");
        // Protected-mode code runs from blocks: nearly all of it (CWSDPMI's
        // real-mode start-up and the real-mode INT reflections are the
        // rest), and almost nothing per instruction.
        assert!(pm * 2 > total, "{path}: {pm} of {total} from pm blocks");
        assert!(uncached * 1000 < total, "{path}: {uncached} uncached steps");
        assert!(counter(&s, "pm_blocks") > 0, "{path}");
    }
}
