//! L1 against L0 under the DOS session: every program of the built-in corpus
//! and of `shared/dos-real` (when present) must give identical snapshots
//! (dispatches, CS:IP, registers, defined flags, RAM hash, device-state
//! hash, frame hash) at several points of the run and at its end, the same
//! console text, the same end and the same interrupt counts.
//!
//! Budgets are capped (`L1_CORPUS_CAP`, default 3M dispatches per program;
//! `L1_DOS_REAL_CAP`, default 2M, for dos-real) so the test stays minutes
//! long on a shared box; the ignored `builtin_corpus_full_budgets` runs the
//! manifest budgets. `L1_DOS_REAL_FILTER` (comma-separated) keeps only the
//! dos-real programs whose path contains one of its parts (e.g. to run the
//! protected-mode ones at 20M).

use std::path::Path;
use toyvm::session::{Config, Program, Session};

fn cap() -> u64 {
    std::env::var("L1_CORPUS_CAP")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3_000_000)
}

/// Runs `cfg` under L0 and L1 in lockstep: both stop at the same sample
/// dispatches and must agree on everything the oracle compares.
fn lockstep(name: &str, cfg: &Config, samples: u64) -> Result<(), String> {
    let mut a = cfg.clone();
    a.arm = "l0".into();
    let mut b = cfg.clone();
    b.arm = "l1".into();
    let mut s0 = Session::new(&a).map_err(|e| format!("{name}: {e}"))?;
    let mut s1 = Session::new(&b).map_err(|e| format!("{name}: {e}"))?;
    let step = (cfg.budget / samples).max(1);
    let mut t = step;
    loop {
        let g0 = s0.run_until(t);
        let g1 = s1.run_until(t);
        let (x, y) = (s0.snapshot(), s1.snapshot());
        if x != y {
            return Err(format!(
                "{name}: snapshots differ at target {t}:\n  l0 {x:?}\n  l1 {y:?}"
            ));
        }
        if g0 != g1 {
            return Err(format!(
                "{name}: one arm ended at {t}: l0 {:?} l1 {:?}",
                s0.end, s1.end
            ));
        }
        if !g0 || t >= cfg.budget {
            break;
        }
        t = (t + step).min(cfg.budget);
    }
    s0.run();
    s1.run();
    if s0.end != s1.end {
        return Err(format!(
            "{name}: end differs: l0 {:?} l1 {:?}",
            s0.end, s1.end
        ));
    }
    if s0.snapshot() != s1.snapshot() {
        return Err(format!("{name}: final snapshots differ"));
    }
    if s0.console_text() != s1.console_text() {
        return Err(format!("{name}: console differs"));
    }
    if s0.interrupts != s1.interrupts {
        return Err(format!(
            "{name}: interrupts differ: {:?} vs {:?}",
            s0.interrupts, s1.interrupts
        ));
    }
    Ok(())
}

fn builtin_configs(cap: u64) -> Vec<(String, Config)> {
    let corpus = corpus_dos::builtin().expect("corpus.toml");
    let root = corpus_dos::builtin_root();
    let by_name = |n: &str| corpus.programs.iter().find(|p| p.name == n);
    corpus
        .programs
        .iter()
        .map(|p| {
            let mut cfg = Config::new(root.join(&p.binary));
            cfg.program.args = p.args.clone();
            cfg.budget = p.budget.min(cap);
            if !p.keys.is_empty() {
                cfg.keys = Some(p.keys.clone());
            }
            if let Some((a, b)) = p.dos_version.split_once('.') {
                cfg.dos_version = (a.parse().unwrap_or(5), b.parse().unwrap_or(0));
            }
            for c in &p.companions {
                if let Some(cp) = by_name(c) {
                    cfg.companions.push(Program {
                        path: root.join(&cp.binary),
                        args: cp.args.clone(),
                    });
                }
            }
            (p.name.clone(), cfg)
        })
        .collect()
}

fn check_all(cases: Vec<(String, Config)>, samples: u64) {
    let n = cases.len();
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(name, cfg)| lockstep(name, cfg, samples).err())
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {n} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{n} programs: L1 identical to L0");
}

#[test]
fn builtin_corpus_l1_equals_l0() {
    let cases = builtin_configs(cap());
    assert!(cases.len() >= 150, "{}", cases.len());
    check_all(cases, 6);
}

#[test]
#[ignore = "full manifest budgets: long (run with --ignored)"]
fn builtin_corpus_full_budgets() {
    check_all(builtin_configs(u64::MAX), 4);
}

/// The dos-real rows as the survey runs them (companions from the notes).
fn dos_real_configs(dir: &Path, cap: u64) -> Vec<(String, Config)> {
    let text = std::fs::read_to_string(dir.join("MANIFEST.tsv")).expect("MANIFEST.tsv");
    let mut out = Vec::new();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        // DOS4GW.EXE on its own is a program too (it prints its usage
        // line): it moves the A20 gate thousands of times.
        if f.len() < 11 || (f[0].starts_with("_support/") && f[0] != "_support/DOS4GW.EXE") {
            continue;
        }
        let (path, notes) = (f[0], f.get(11).copied().unwrap_or(""));
        let mut cfg = Config::new(dir.join(path));
        cfg.budget = cap;
        if notes.contains("needs DIS.EXE") {
            let top = path.split('/').next().unwrap_or("");
            let dis = dir.join(top).join("DIS").join("DIS.EXE");
            if dis.exists() {
                cfg.companions.push(Program {
                    path: dis,
                    args: String::new(),
                });
            }
        }
        if notes.contains("CWSDPMI -p") {
            cfg.companions.push(Program {
                path: dir.join("_support").join("CWSDPMI.EXE"),
                args: "-p".into(),
            });
        }
        if notes.contains("needs DOS4GW.EXE") {
            cfg.files.push(dir.join("_support").join("DOS4GW.EXE"));
        }
        if path.contains("/v2.0/") {
            cfg.dos_version = (2, 0);
        }
        if let Ok(f) = std::env::var("L1_DOS_REAL_FILTER") {
            if !f.split(',').any(|x| path.contains(x)) {
                continue;
            }
        }
        out.push((path.to_string(), cfg));
    }
    out
}

#[test]
fn dos_real_l1_equals_l0() {
    let Some(dir) = corpus_dos::shared_data_or_skip("DOS_REAL", "dos-real", "MANIFEST.tsv") else {
        return;
    };
    let cap = std::env::var("L1_DOS_REAL_CAP")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000_000);
    let cases = dos_real_configs(&dir, cap);
    let filtered = std::env::var("L1_DOS_REAL_FILTER").is_ok();
    assert!(filtered || cases.len() >= 100, "{}", cases.len());
    check_all(cases, 4);
}
