//! The null band: the reference arm listed again (`--arms l1,only-naive,l1`)
//! is its own column (`l1#2`), compared for exactness like any other arm,
//! and its CPU ratios to the reference are the noise band. Also the timing
//! summary's arithmetic (CPU, build and exec totals; geomeans over exact
//! programs with enough reference CPU) on a hand-made set, and merging.

mod common;
use common::*;
use oracle::report::{self, markdown, ArmResult, ArmTiming, ProgramResult, Status, SweepReport};
use oracle::state::State;
use oracle::sweep::{self, CorpusSel, Quiet, Shard, SweepOptions};
use std::collections::BTreeMap;

#[test]
fn labels_number_repeated_arms() {
    assert_eq!(
        report::arm_labels(&arms("l1,only-naive,l1")),
        ["l1", "only-naive", "l1#2"]
    );
    assert_eq!(
        report::arm_labels(&arms("l0,l0,l1,l0")),
        ["l0", "l0#2", "l1", "l0#3"]
    );
}

#[test]
fn repeated_reference_is_an_exact_column_of_its_own() {
    let mut o = SweepOptions::new(CorpusSel::Builtin, arms("l1,only-naive,l1"));
    o.filter = Some("alu".into());
    let r = sweep::run(&o, &Quiet).unwrap();
    assert_eq!(
        r.summary.line(),
        "sweep: 4 programs, 4 exact, 0 diverged, 0 failed"
    );
    // The settings keep the list as given (merge compares them).
    assert_eq!(r.arms, ["l1", "only-naive", "l1"]);
    for p in &r.programs {
        let names: Vec<&str> = p.arms.iter().map(|a| a.arm.as_str()).collect();
        assert_eq!(names, ["l1", "only-naive", "l1#2"], "{}", p.name);
        let (a, b) = (&p.arms[0], &p.arms[2]);
        // Compared like any arm: no divergence, the same final state.
        assert!(b.divergence.is_none(), "{}", p.name);
        assert_eq!(a.last, b.last, "{}", p.name);
        assert_eq!(a.last.dispatches, p.arms[1].last.dispatches);
        let t = b.timing.as_ref().unwrap();
        assert!(t.cpu_ns > 0 && t.ratio.unwrap() > 0.0, "{}", p.name);
        // L1 reports no build time: everything is execution.
        assert_eq!(t.build_ns, None);
        // only-naive does, and its execution time is CPU minus builds
        // (0 when the arm's wall-clock build time exceeds the thread's CPU
        // time, which happens on a loaded machine: docs/uop-arm.md).
        let n = p.arms[1].timing.as_ref().unwrap();
        let build = n.build_ns.unwrap();
        assert!(build > 0, "{}", p.name);
        assert_eq!(n.exec_ns, Some(n.cpu_ns.saturating_sub(build)));
    }
    let d: Vec<u64> = r
        .programs
        .iter()
        .map(|p| p.arms[2].last.dispatches)
        .collect();
    assert_eq!(d, [400_608, 400_608, 400_607, 331_746]);

    // In the JSON under its own name, in the programs and the summary.
    let j: serde_json::Value = serde_json::from_str(&r.to_json().unwrap()).unwrap();
    assert_eq!(j["arms"], serde_json::json!(["l1", "only-naive", "l1"]));
    assert_eq!(j["programs"][0]["arms"][2]["arm"], "l1#2");
    let t = &j["timings"]["arms"];
    assert_eq!(t[2]["arm"], "l1#2");
    assert_eq!(t[2]["null_band"], true);
    assert!(t[1].get("null_band").is_none());
    let (cpu, build, exec) = (
        t[1]["cpu_ns"].as_u64().unwrap(),
        t[1]["build_ns"].as_u64().unwrap(),
        t[1]["exec_ns"].as_u64().unwrap(),
    );
    assert!(build > 0);
    assert!(exec <= cpu && exec >= cpu.saturating_sub(build), "{t}");
    assert_eq!(t[0]["exec_ns"], t[0]["cpu_ns"]);

    let md = markdown::render(&r);
    assert!(md.contains("| only-naive | l1#2 |"), "{md}");
    assert!(md.contains("| l1#2 (null band) |"), "{md}");
    let html = report::html::render(&r);
    assert!(html.contains("<i>l1#2 (null band)</i>"));
}

#[test]
fn a_repeated_arm_that_breaks_is_caught_under_its_label() {
    // A repeated arm is compared, not assumed equal to its first listing:
    // a broken arm listed twice diverges in both columns, each bisected and
    // with its own repro file.
    let mut o = SweepOptions::new(CorpusSel::Builtin, arms("l0,l0+skip@100000,l0+skip@100000"));
    o.filter = Some("alu16".into());
    o.timings = false;
    let dir = tempfile::tempdir().unwrap();
    o.repro_dir = Some(dir.path().to_path_buf());
    let r = sweep::run(&o, &Quiet).unwrap();
    let p = &r.programs[0];
    assert_eq!(p.status, Status::Diverged);
    assert_eq!(p.arms[2].arm, "l0+skip@100000#2");
    for a in &p.arms[1..] {
        let dv = a.divergence.as_ref().unwrap();
        assert_eq!(dv.first.as_ref().unwrap().dispatch, 100_000, "{}", a.arm);
    }
    // One repro per column, not one overwriting the other.
    let r1 = p.arms[1]
        .divergence
        .as_ref()
        .unwrap()
        .repro
        .clone()
        .unwrap();
    let r2 = p.arms[2]
        .divergence
        .as_ref()
        .unwrap()
        .repro
        .clone()
        .unwrap();
    assert_ne!(r1, r2);
    // The repro names the real arm, so it re-runs.
    assert_eq!(
        oracle::repro::load(&r2).unwrap().arms,
        ["l0", "l0+skip@100000"]
    );
}

fn timing(cpu_ms: f64, build_ms: Option<f64>, ref_cpu_ms: f64, ref_exec_ms: f64) -> ArmTiming {
    let ns = |ms: f64| (ms * 1e6).round() as u64;
    let exec = build_ms.map(|b| ns(cpu_ms) - ns(b));
    ArmTiming {
        cpu_ns: ns(cpu_ms),
        build_ns: build_ms.map(ns),
        exec_ns: exec,
        ratio: Some(cpu_ms / ref_cpu_ms),
        exec_ratio: exec.map(|e| e as f64 / ns(ref_exec_ms) as f64),
        counters_ns: BTreeMap::new(),
    }
}

fn arm(label: &str, t: ArmTiming) -> ArmResult {
    ArmResult {
        arm: label.into(),
        last: State::default(),
        divergence: None,
        counters: BTreeMap::new(),
        uops_per_insn: None,
        fallbacks: None,
        handbacks: None,
        timing: Some(t),
    }
}

/// A program whose reference took `r` ms, `naive` ms (of which `build` ms
/// building) and `again` ms on the repeated reference.
fn program(
    name: &str,
    status: Status,
    r: f64,
    naive: f64,
    build: f64,
    again: f64,
) -> ProgramResult {
    ProgramResult {
        name: name.into(),
        family: "hand".into(),
        binary: format!("{name}.COM"),
        budget: 1,
        keys: String::new(),
        status,
        error: None,
        samples: 2,
        arms: vec![
            arm("l1", timing(r, None, r, r)),
            arm("only-naive", timing(naive, Some(build), r, r)),
            arm("l1#2", timing(again, None, r, r)),
        ],
    }
}

fn hand_made() -> SweepReport {
    let mut r = SweepReport {
        format: report::FORMAT.into(),
        corpus: "hand".into(),
        arms: arms("l1,only-naive,l1"),
        dispatches: None,
        interval: 1_000_000,
        frame_edges: true,
        bisect: true,
        shard: None,
        summary: Default::default(),
        programs: vec![
            // Timed: CPU ratios 2 and 0.5, exec ratios 16/10 and 18/40,
            // null-band ratios 1.05 and 0.95.
            program("a", Status::Exact, 10.0, 20.0, 4.0, 10.5),
            program("b", Status::Exact, 40.0, 20.0, 2.0, 38.0),
            // Under MIN_TIMED_NS on the reference: totals only.
            program("c", Status::Exact, 1.0, 9.0, 1.0, 1.0),
            // Diverged: totals only.
            program("d", Status::Diverged, 100.0, 50.0, 5.0, 100.0),
        ],
        timings: None,
        frames: BTreeMap::new(),
    };
    r.finish();
    r
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn timing_summary_arithmetic_on_a_hand_made_set() {
    let r = hand_made();
    let t = r.timings.as_ref().unwrap();
    let labels: Vec<&str> = t.arms.iter().map(|a| a.arm.as_str()).collect();
    assert_eq!(labels, ["l1", "only-naive", "l1#2"]);

    let l1 = &t.arms[0];
    assert_eq!(l1.cpu_ns, 151_000_000);
    assert_eq!(l1.build_ns, None);
    assert_eq!(l1.exec_ns, 151_000_000);
    assert_eq!(l1.programs, 2);
    assert!(close(l1.geomean_ratio.unwrap(), 1.0));
    assert!(!l1.null_band);

    let n = &t.arms[1];
    assert_eq!(n.cpu_ns, 99_000_000);
    assert_eq!(n.build_ns, Some(12_000_000));
    assert_eq!(n.exec_ns, 87_000_000);
    assert_eq!(n.programs, 2);
    // sqrt(2 * 0.5) and sqrt(1.6 * 0.45).
    assert!(close(n.geomean_ratio.unwrap(), 1.0), "{n:?}");
    assert!(
        close(n.geomean_exec_ratio.unwrap(), 0.72f64.sqrt()),
        "{n:?}"
    );
    assert!(!n.null_band);

    let again = &t.arms[2];
    assert!(again.null_band);
    assert_eq!(again.cpu_ns, 149_500_000);
    assert!(close(again.geomean_ratio.unwrap(), (1.05f64 * 0.95).sqrt()));
    // No builds: the exec ratio is the CPU ratio.
    assert!(close(
        again.geomean_exec_ratio.unwrap(),
        (1.05f64 * 0.95).sqrt()
    ));

    let nb = t.null_band.as_ref().unwrap();
    assert_eq!((nb.arm.as_str(), nb.column.as_str()), ("l1", "l1#2"));
    assert_eq!(nb.programs, 2);
    assert!(close(nb.min, 0.95) && close(nb.max, 1.05));
    assert!(close(nb.geomean, 0.9975f64.sqrt()));

    let md = markdown::render(&r);
    for want in [
        "| arm | CPU total | build | exec | geomean CPU ratio (exact programs) | geomean exec ratio |",
        "| l1 | 151.0 ms | - | 151.0 ms | x1.000 over 2 | x1.000 |",
        "| only-naive | 99.0 ms | 12.0 ms | 87.0 ms | x1.000 over 2 | x0.849 |",
        "| l1#2 (null band) | 149.5 ms | - | 149.5 ms | x0.999 over 2 | x0.999 |",
        "null band (l1#2 = l1 against itself, 2 programs): x0.950 .. x1.050, geomean x0.999",
    ] {
        assert!(md.contains(want), "missing {want:?} in\n{md}");
    }

    // Without the repeated reference there is no null band.
    let mut two = r.clone();
    two.arms.pop();
    for p in &mut two.programs {
        p.arms.pop();
    }
    two.finish();
    assert!(two.timings.as_ref().unwrap().null_band.is_none());
    assert!(!markdown::render(&two).contains("null band"));
}

#[test]
fn merged_shards_give_the_same_summary_and_round_trip() {
    let whole = hand_made();
    let mut a = whole.clone();
    let mut b = whole.clone();
    a.programs.retain(|p| p.name == "a" || p.name == "c");
    b.programs.retain(|p| p.name == "b" || p.name == "d");
    a.shard = Some("0/2".into());
    b.shard = Some("1/2".into());
    a.finish();
    b.finish();
    let m = report::merge(vec![("b".into(), b), ("a".into(), a)]).unwrap();
    assert_eq!(m, whole);
    assert_eq!(markdown::render(&m), markdown::render(&whole));
    // Through the file format, every ratio bit for bit.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("w.json");
    whole.write_json(&f).unwrap();
    assert_eq!(report::read(&f).unwrap(), whole);
}

#[test]
fn sharded_null_band_sweep_merges_into_the_whole() {
    let mut base = SweepOptions::new(CorpusSel::Builtin, arms("l1,only-naive,l1"));
    base.filter = Some("bcd".into());
    base.timings = false;
    let whole = sweep::run(&base, &Quiet).unwrap();
    assert_eq!(whole.summary.exact, whole.summary.programs);
    let parts: Vec<(String, SweepReport)> = (0..2)
        .map(|i| {
            let mut o = base.clone();
            o.shard = Some(Shard { index: i, count: 2 });
            (format!("shard {i}"), sweep::run(&o, &Quiet).unwrap())
        })
        .collect();
    let merged = report::merge(parts).unwrap();
    assert_eq!(merged.to_json().unwrap(), whole.to_json().unwrap());
    assert!(merged
        .programs
        .iter()
        .all(|p| p.arms[2].arm == "l1#2" && p.arms[2].divergence.is_none()));
}
