//! Sweeps: counts in the JSON, failures counted as failed, shards merged
//! into exactly the unsharded report, byte-identical reports across runs
//! with `--no-timings`, and clear errors for bad input.

mod common;
use common::*;
use oracle::report::{self, Status};
use oracle::sweep::{self, CorpusSel, Quiet, Shard, SweepOptions};
use std::path::Path;
use std::process::Command;

fn opts(filter: &str, list: &str) -> SweepOptions {
    let mut o = SweepOptions::new(CorpusSel::Builtin, arms(list));
    o.filter = Some(filter.into());
    o.timings = false;
    o
}

#[test]
fn sweep_counts_exact_and_diverged_programs() {
    // The alu family: four programs of 331K..401K dispatches.
    let r = sweep::run(&opts("alu", "l0,l0"), &Quiet).unwrap();
    assert_eq!(
        r.summary.line(),
        "sweep: 4 programs, 4 exact, 0 diverged, 0 failed"
    );
    let names: Vec<&str> = r.programs.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["alu16", "alu32", "alu8", "alumem"]);
    let d: Vec<u64> = r
        .programs
        .iter()
        .map(|p| p.arms[0].last.dispatches)
        .collect();
    assert_eq!(d, [400_608, 400_608, 400_607, 331_746]);
    // One PNG per distinct final frame, referenced by hash.
    for p in &r.programs {
        assert!(r.frames.contains_key(&p.arms[1].last.frame_hash));
    }

    // A broken arm diverges on all four at exactly its dispatch.
    let mut o = opts("alu", "l0,l0+skip@100000");
    let dir = tempfile::tempdir().unwrap();
    o.repro_dir = Some(dir.path().to_path_buf());
    let r = sweep::run(&o, &Quiet).unwrap();
    assert_eq!(
        r.summary.line(),
        "sweep: 4 programs, 0 exact, 4 diverged, 0 failed"
    );
    for p in &r.programs {
        assert_eq!(p.status, Status::Diverged);
        let dv = p.arms[1].divergence.as_ref().unwrap();
        assert_eq!(dv.first.as_ref().unwrap().dispatch, 100_000, "{}", p.name);
        let rp = dv.repro.as_ref().unwrap();
        assert_eq!(oracle::repro::load(rp).unwrap().dispatch, 100_000);
    }
}

#[test]
fn unloadable_programs_and_missing_files_count_as_failed() {
    let dir = tempfile::tempdir().unwrap();
    let good = corpus_dos::builtin_root().join("programs/alu/ALU8.COM");
    std::fs::copy(&good, dir.path().join("ALU8.COM")).unwrap();
    // An EXE header with nonsense sizes: DOS refuses to load it.
    let mut bad = b"MZ".to_vec();
    bad.extend_from_slice(&[0xFF; 62]);
    std::fs::write(dir.path().join("BROKEN.EXE"), bad).unwrap();
    let mut o = SweepOptions::new(CorpusSel::Dir(dir.path().to_path_buf()), arms("l0,l0"));
    o.timings = false;
    let r = sweep::run(&o, &Quiet).unwrap();
    assert_eq!(
        r.summary.line(),
        "sweep: 2 programs, 1 exact, 0 diverged, 1 failed"
    );
    let b = r.programs.iter().find(|p| p.name == "BROKEN").unwrap();
    assert_eq!(b.status, Status::Failed);
    assert!(
        b.error.as_ref().unwrap().contains("BROKEN"),
        "{:?}",
        b.error
    );

    // An arm that errors fails the program, with the arm and dispatch named.
    let r = sweep::run(&opts("alu", "l0,l0+panic@1000"), &Quiet).unwrap();
    assert_eq!(
        r.summary.line(),
        "sweep: 4 programs, 0 exact, 0 diverged, 4 failed"
    );
    let e = r.programs[0].error.as_ref().unwrap();
    assert!(e.contains("arm l0+panic@1000 panicked"), "{e}");
    assert!(e.contains("deliberate panic at dispatch 1000"), "{e}");

    let e = sweep::run(
        &SweepOptions::new(CorpusSel::Dir(dir.path().join("nope")), arms("l0,l0")),
        &Quiet,
    )
    .unwrap_err();
    assert!(e.contains("no such corpus directory"), "{e}");
    let e = sweep::run(&opts("alu", "l0,warp9"), &Quiet).unwrap_err();
    assert!(e.contains("unknown or not yet built arm `warp9`"), "{e}");
}

#[test]
fn shards_merge_into_the_unsharded_report() {
    // The dshift family (six or seven small programs), three shards.
    let mut base = opts("d", "l0,l0");
    base.filter = Some("dshift".into());
    let n = corpus_dos::builtin()
        .unwrap()
        .programs
        .iter()
        .filter(|p| p.binary.contains("dshift"))
        .count();
    assert!(n >= 4, "the dshift family shrank to {n}");
    let whole = sweep::run(&base, &Quiet).unwrap();
    assert_eq!(whole.summary.programs, n);
    assert_eq!(whole.summary.exact, n);
    let mut parts = Vec::new();
    for i in 0..3 {
        let mut o = base.clone();
        o.shard = Some(Shard { index: i, count: 3 });
        let r = sweep::run(&o, &Quiet).unwrap();
        assert_eq!(r.shard.as_deref(), Some(format!("{i}/3").as_str()));
        parts.push((format!("shard {i}"), r));
    }
    let sizes: Vec<usize> = parts.iter().map(|(_, r)| r.programs.len()).collect();
    assert_eq!(sizes.iter().sum::<usize>(), n);
    assert!(sizes.iter().all(|&k| k >= 1), "{sizes:?}");
    let merged = report::merge(parts.clone()).unwrap();
    assert_eq!(merged.to_json().unwrap(), whole.to_json().unwrap());
    assert_eq!(report::html::render(&merged), report::html::render(&whole));
    // Overlapping shards are refused.
    let twice = vec![parts[0].clone(), parts[0].clone()];
    assert!(report::merge(twice)
        .unwrap_err()
        .contains("more than one report"));
    // So are reports of other settings.
    let mut other = parts[1].clone();
    other.1.arms = arms("l0,l0+skip@5");
    assert!(report::merge(vec![parts[0].clone(), other])
        .unwrap_err()
        .contains("other settings"));
}

fn oracle_cmd() -> Command {
    Command::new(env!("CARGO_BIN_EXE_oracle"))
}

fn run_ok(args: &[&str], dir: &Path) -> String {
    let out = oracle_cmd().args(args).current_dir(dir).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.code() == Some(0),
        "oracle {args:?}: {:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn cli_reports_are_deterministic_and_shards_merge() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sweep = |json: &str, html: &str, extra: &[&str]| {
        let mut a = vec![
            "sweep",
            "--arms",
            "l0,l0",
            "--filter",
            "bcd",
            "--no-timings",
            "--json",
            json,
            "--html",
            html,
        ];
        a.extend_from_slice(extra);
        run_ok(&a, d)
    };
    let out = sweep("a.json", "a.html", &[]);
    assert_eq!(
        out.lines().last().unwrap(),
        "sweep: 4 programs, 4 exact, 0 diverged, 0 failed"
    );
    assert!(out.contains("| aaa | exact |"), "{out}");
    sweep("b.json", "b.html", &["--jobs", "2"]);
    let rd = |f: &str| std::fs::read(d.join(f)).unwrap();
    assert_eq!(rd("a.json"), rd("b.json"), "JSON differs between runs");
    assert_eq!(rd("a.html"), rd("b.html"), "HTML differs between runs");

    sweep("s0.json", "s0.html", &["--shard", "0/2"]);
    sweep("s1.json", "s1.html", &["--shard", "1/2"]);
    let out = run_ok(
        &[
            "merge", "s1.json", "s0.json", "--json", "m.json", "--html", "m.html",
        ],
        d,
    );
    assert_eq!(
        out.lines().last().unwrap(),
        "sweep: 4 programs, 4 exact, 0 diverged, 0 failed"
    );
    assert_eq!(
        rd("m.json"),
        rd("a.json"),
        "merged JSON differs from unsharded"
    );
    assert_eq!(
        rd("m.html"),
        rd("a.html"),
        "merged HTML differs from unsharded"
    );

    // With timings the timing fields are separate and everything else equal.
    let out = oracle_cmd()
        .args([
            "sweep", "--arms", "l0,l0", "--filter", "bcd", "--json", "t.json", "--html", "t.html",
        ])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut t: serde_json::Value = serde_json::from_slice(&rd("t.json")).unwrap();
    let a: serde_json::Value = serde_json::from_slice(&rd("a.json")).unwrap();
    assert_eq!(t["timings"]["arms"].as_array().unwrap().len(), 2);
    assert_eq!(t["timings"]["null_band"]["arm"], "l0");
    t.as_object_mut().unwrap().remove("timings");
    for p in t["programs"].as_array_mut().unwrap() {
        for arm in p["arms"].as_array_mut().unwrap() {
            assert!(arm["timing"]["cpu_ns"].as_u64().unwrap() > 0);
            arm.as_object_mut().unwrap().remove("timing");
        }
    }
    assert_eq!(t, a, "reports differ outside the timing fields");
}

#[test]
fn cli_bad_input_gives_clear_errors_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("corrupt.json"), "{\"format\": \"oracle-sweep/2\", ").unwrap();
    std::fs::write(
        d.join("fuzzshard.json"),
        r#"{"format":"oracle-fuzz/2","seed":1,"count":2,"shape":"mixed","arms":["l1","l0"],
            "dispatches":10,"shard":{"index":0,"count":2},"exact":1,"diverged":0,"failed":0,"cases":[]}"#,
    )
    .unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["diff", "NOSUCH.COM", "--arms", "l0,l0"],
            "NOSUCH.COM: no such program file",
        ),
        (
            &["diff", "alu16", "--arms", "l0,hyper"],
            "unknown or not yet built arm `hyper`",
        ),
        (&["diff", "alu16", "--arms", "l0"], "at least two arms"),
        (
            &["diff", "alu16", "--arms", "l0,l0+zap@4"],
            "unknown fault `zap`",
        ),
        (
            &["sweep", "--arms", "l0,nope", "--json", "x.json"],
            "unknown or not yet built arm `nope`",
        ),
        (
            &["sweep", "--shard", "2/2", "--arms", "l0,l0"],
            "need 0 <= I < N",
        ),
        (
            &["merge", "corrupt.json", "--json", "m.json"],
            "not an oracle sweep report",
        ),
        (&["merge", "absent.json", "--json", "m.json"], "absent.json"),
        (&["repro", "corrupt.json"], "not an oracle repro file"),
        (
            &["fuzz", "--shard", "4/4", "--count", "1"],
            "need 0 <= I < N",
        ),
        (
            &["fuzz", "--shape", "words", "--count", "1"],
            "unknown shape `words`",
        ),
        (
            &["fuzz", "--arms", "l1", "--count", "1"],
            "at least two arms",
        ),
        (
            &["fuzz", "--arms", "l1,warp", "--count", "1"],
            "unknown or not yet built arm `warp`",
        ),
        (
            &["merge", "fuzzshard.json", "--json", "m.json"],
            "shard 1/2 is missing",
        ),
    ];
    for (args, want) in cases {
        let out = oracle_cmd().args(*args).current_dir(d).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(want),
            "{args:?}: stderr {err:?} lacks {want:?}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
