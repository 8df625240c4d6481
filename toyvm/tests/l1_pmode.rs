//! L1's protected-mode blocks (`l1::pm`) on real DPMI programs: the cached
//! path is the one taken (almost no uncached steps, most dispatches from
//! protected-mode blocks) and the run is L0's, snapshot for snapshot
//! (dispatches, CS:IP, registers, flags, RAM, devices, frame). Skipped with
//! a message when `shared/dos-real` is absent. Each program runs 3M
//! dispatches (seconds under L0). Plus a minimized program for the A20
//! gate (`l1_progs/a20alias.asm`), which needs no corpus.

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

/// `l1_progs/a20alias.asm`: the same CPU address runs code A (bit 20 set:
/// the HMA, the first odd megabyte, with and without paging) while the gate
/// is open and its alias B while it is closed, 40 times each per part,
/// each patched halfway through that address; part 3 also runs code whose
/// fetch window reaches an odd-megabyte page that aliases the VGA window
/// while the gate is closed. L1 keeps the blocks that do not depend on the
/// gate across its moves and must still run exactly what L0 runs.
#[test]
fn a20_moves_switch_code_aliases_as_l0() {
    let dir = std::env::temp_dir().join(format!("toyvm-a20alias-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prog = dir.join("A20ALIAS.COM");
    std::fs::write(&prog, include_bytes!("l1_progs/a20alias.bin")).unwrap();
    let session = |arm: &str| {
        let mut cfg = Config::new(&prog);
        cfg.budget = 600_000;
        cfg.arm = arm.into();
        Session::new(&cfg).expect("session")
    };
    let (mut s0, mut s1) = (session("l0"), session("l1"));
    let mut t = 0;
    while t < 600_000 {
        t += 50_000;
        s0.run_until(t);
        s1.run_until(t);
        assert_eq!(s0.snapshot(), s1.snapshot(), "at {t}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    // Per part: AX=N, BX=3*N/2+4*N/2, CX=N, DX=5*N/2+7*N/2 (N=40); part 3
    // also ESI=2*N*13 (code C, run from the VGA alias's neighbour page).
    let results = |s: &Session| -> Vec<u32> {
        let ram = s.machine.mem.ram();
        (0..11)
            .map(|i| u32::from_le_bytes(ram[0x500 + 4 * i..0x504 + 4 * i].try_into().unwrap()))
            .collect()
    };
    let part1 = |r: &[u32]| [r[0] & 0xFFFF, r[0] >> 16, r[1] & 0xFFFF, r[1] >> 16];
    let (r0, r1) = (results(&s0), results(&s1));
    assert_eq!(part1(&r0), [40, 140, 40, 240], "L0 part 1 (HMA): {r0:?}");
    assert_eq!(
        r0[2..6],
        [40, 140, 40, 240],
        "L0 part 2 (no paging): {r0:?}"
    );
    assert_eq!(
        r0[6..11],
        [40, 140, 40, 240, 1040],
        "L0 part 3 (paging): {r0:?}"
    );
    assert_eq!(r0, r1, "L1 results");
    // L1 saw the gate move and kept what does not depend on it.
    let moves = counter(&s1, "a20_moves");
    assert!(moves > 200, "a20_moves {moves}");
    assert_eq!(counter(&s1, "flushes"), 0);
    assert!(
        counter(&s1, "pm_dispatches") * 2 > counter(&s1, "dispatches"),
        "{:?}",
        s1.counters()
    );
}
