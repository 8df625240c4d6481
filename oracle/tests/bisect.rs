//! Deliberately broken arms are caught by the lockstep run and bisected to
//! exactly the dispatch where they were broken; the repro file they leave
//! loads and re-runs.

mod common;
use common::*;
use oracle::compare::Options;
use oracle::diff::{diff, write_repro};
use oracle::repro::{self, Check};

fn opts() -> Options {
    Options {
        run_to_end: false,
        ..Options::default()
    }
}

/// Runs `l0` against `broken` on `program`; returns the bisected divergence.
fn find(program: &str, cap: u64, broken: &str, fanout: u64) -> oracle::bisect::Divergence {
    let spec = corpus_spec(program, cap);
    let r = diff(
        &spec,
        &arms(&format!("l0,{broken}")),
        &opts(),
        fanout,
        &mut |_| {},
    )
    .unwrap();
    assert!(!r.lockstep.exact(), "{program}: {broken} was not caught");
    assert_eq!(r.divergences.len(), 1);
    let (arm, d) = r.divergences.into_iter().next().unwrap();
    assert_eq!(arm, broken);
    d.unwrap()
}

#[test]
fn flipped_direction_flag_is_bisected_to_its_dispatch() {
    let d = find("sievebit", 3_000_000, "l0+flipdf@1234567", 2);
    assert_eq!(d.dispatch, 1_234_567);
    assert_eq!(d.fields, vec!["flags"]);
    assert_eq!(d.states[0].flags ^ d.states[1].flags, 0x400);
    // The samples around it: frame edges ~57K dispatches apart.
    assert!(d.window.0 < 1_234_567 && d.window.1 >= 1_234_567);
    assert_eq!(d.window, (1_193_814, 1_250_887));
    let i = d.instruction.as_ref().unwrap();
    assert_eq!(
        (i.cs, i.ip, i.text.as_str()),
        (0x0131, 0x0283, "add eax,ebx")
    );
    assert_eq!(d.before.dispatches, 1_234_566);
    assert_eq!((d.before.cs, d.before.ip), (0x0131, 0x0283));
    assert!(d.ram.is_empty());
    assert_eq!(d.sites[0], None);
    assert!(d.sites[1].as_deref().unwrap().contains("flipdf"));
}

#[test]
fn skipped_dispatch_is_bisected_in_interrupt_heavy_code() {
    // chain08 chains the timer interrupt: IRQ 0 lands all through the run.
    let d = find("chain08", 2_000_000, "l0+skip@777777", 2);
    assert_eq!(d.dispatch, 777_777);
    assert_eq!(d.states[0].dispatches, 777_777);
    assert_eq!(d.states[1].dispatches, 777_777);
    assert!(d.fields.contains(&"CS:IP".to_string()), "{:?}", d.fields);
}

#[test]
fn unbilled_dispatch_is_bisected_with_any_fanout() {
    for fanout in [2, 3, 16] {
        let d = find("autoinit", 2_500_000, "l0+nobill@1500001", fanout);
        assert_eq!(d.dispatch, 1_500_001, "fanout {fanout}");
    }
    // Near a scripted key press (1E@2000000).
    let d = find("kbd09", 3_000_000, "l0+skip@2000003", 2);
    assert_eq!(d.dispatch, 2_000_003);
}

#[test]
fn repro_file_loads_and_reruns() {
    let spec = corpus_spec("sievebit", 3_000_000);
    let r = diff(
        &spec,
        &arms("l0,l0+flipdf@1234567"),
        &opts(),
        2,
        &mut |_| {},
    )
    .unwrap();
    let d = r.divergences[0].1.as_ref().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sievebit.repro.json");
    write_repro(&spec, d, &path).unwrap();

    // Stored portably: the corpus path relative to the workspace.
    let raw: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        raw["run"]["program"],
        "corpus-dos/programs/sieve/SIEVEBIT.COM"
    );
    assert_eq!(raw["dispatch"], 1_234_567);
    assert_eq!(raw["arms"][1], "l0+flipdf@1234567");
    assert_eq!(raw["run"]["budget"], 3_000_000);

    let rep = repro::load(&path).unwrap();
    assert_eq!(rep.dispatch, 1_234_567);
    assert!(rep.run.program.is_file());
    match rep.check().unwrap() {
        Check::Differs {
            fields,
            same_as_recorded,
            ..
        } => {
            assert_eq!(fields, vec!["flags"]);
            assert!(same_as_recorded, "the re-run must give the recorded states");
        }
        Check::Exact => panic!("the broken arm is still broken"),
    }
    let p = path.clone();
    let caught = std::panic::catch_unwind(move || repro::assert_exact(&p));
    assert!(
        caught.is_err(),
        "assert_exact must fail while the arm is broken"
    );

    // Once "fixed" (the same arm on both sides) the repro passes.
    let mut fixed = rep.clone();
    fixed.arms[1] = "l0".into();
    assert_eq!(fixed.check().unwrap(), Check::Exact);
    let fixed_path = dir.path().join("fixed.repro.json");
    fixed.save(&fixed_path).unwrap();
    repro::assert_exact(&fixed_path);
}

#[test]
fn bad_repro_files_give_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let e = repro::load(dir.path().join("missing.json")).unwrap_err();
    assert!(e.contains("missing.json"), "{e}");
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{ not json").unwrap();
    let e = repro::load(&bad).unwrap_err();
    assert!(e.contains("not an oracle repro file"), "{e}");
    std::fs::write(&bad, r#"{"format":"other/9"}"#).unwrap();
    assert!(repro::load(&bad).is_err());
}

#[test]
fn slicing_dependent_arm_is_reported_not_guessed() {
    // DF flips only when a long slice is cut exactly at 300000: the lockstep
    // (samples every 100K, no frame edges) cuts there, bisection's finer
    // slices never do, so the divergence cannot be narrowed to a dispatch.
    let spec = corpus_spec("sievebit", 1_000_000);
    let o = Options {
        interval: 100_000,
        frame_edges: false,
        run_to_end: false,
    };
    let pair = arms("l0,l0+slicedep@300000");
    let r = diff(&spec, &pair, &o, 2, &mut |_| {}).unwrap();
    let f = r.lockstep.arms[1]
        .diff
        .as_ref()
        .expect("caught at the sample");
    assert_eq!((f.last_agree, f.sample), (200_000, 300_000));
    assert_eq!(f.fields, vec!["flags"]);
    assert_eq!(f.reference.flags ^ f.arm.flags, 0x400);
    let err = r.divergences[0].1.as_ref().unwrap_err();
    let e = err.to_string();
    assert!(e.contains("did not reproduce"), "{e}");
    assert!(e.contains("where the run is sliced"), "{e}");
    // The slice-plan check names the arm and shows both plans.
    assert!(e.contains("l0+slicedep@300000 is slice-dependent"), "{e}");
    assert!(!e.contains("l0 is slice-dependent"), "{e}");
    assert!(
        e.contains("plan A: to 299999, then to 300000 in one slice"),
        "{e}"
    );
    assert!(e.contains("plan B: straight to 300000"), "{e}");
    // ... and hands over the record: one slice-dependent arm, its two plans
    // and two states at dispatch 300000, differing in DF only.
    assert_eq!(err.slice_deps.len(), 1);
    let dep = &err.slice_deps[0];
    assert_eq!(dep.arm, "l0+slicedep@300000");
    assert_eq!(dep.plans[0].ends, vec![299_999, 300_000]);
    assert_eq!(dep.plans[1].ends, vec![300_000]);
    assert_eq!(dep.fields, vec!["flags"]);
    assert_eq!(dep.states[0].dispatches, 300_000);
    assert_eq!(dep.states[0].flags ^ dep.states[1].flags, 0x400);

    // The slice repro file re-runs the two plans and gives the verdict.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("slices.json");
    let pair2 = [pair[0].clone(), pair[1].clone()];
    oracle::diff::write_slice_repro(&spec, dep, &pair2, (200_000, 300_000), &path).unwrap();
    let loaded = match repro::load_any(&path).unwrap() {
        repro::AnyRepro::Slices(s) => s,
        other => panic!("not a slice repro: {other:?}"),
    };
    assert_eq!(loaded.format, repro::SLICE_FORMAT);
    assert_eq!(
        (loaded.dispatch, loaded.window),
        (300_000, (200_000, 300_000))
    );
    match loaded.check().unwrap() {
        repro::SliceCheck::Dependent {
            dep: again,
            same_as_recorded,
        } => {
            assert!(same_as_recorded);
            assert_eq!(again.fields, vec!["flags"]);
        }
        c => panic!("the slicedep arm is consistent? {c:?}"),
    }
    // The same plans on the healthy arm: consistent.
    let mut healthy = loaded.clone();
    healthy.arm = "l0".into();
    assert_eq!(healthy.check().unwrap(), repro::SliceCheck::Consistent);
    // `oracle repro` says so too, with the exit status of a divergence.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_oracle"))
        .args(["repro", path.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("still slice-dependent, exactly as recorded"),
        "{text}"
    );
    assert!(
        text.contains("plan A: to 299999, then to 300000 in one slice"),
        "{text}"
    );
    assert!(text.contains("plan B: straight to 300000"), "{text}");
}

#[test]
fn slice_plans_all_end_at_the_target() {
    for (lo, hi) in [(0, 1), (200_000, 300_000), (5, 6), (10, 70)] {
        for (_, p) in oracle::slicing::plans(lo, hi) {
            assert_eq!(p.last(), Some(&hi));
            assert!(p.windows(2).all(|w| w[0] <= w[1]), "{p:?}");
        }
    }
}

#[test]
fn a_run_that_fails_to_end_is_bisected_to_the_exit() {
    // alu16 exits at dispatch 400608 through INT 21h's host call; skipping
    // that dispatch leaves the arm running.
    let d = find("alu16", 2_000_000, "l0+skip@400608", 2);
    assert_eq!(d.dispatch, 400_608);
    assert_eq!(d.fields, vec!["end", "CS:IP"]);
    assert_eq!(d.states[0].end, "exited 0");
    assert_eq!(d.states[1].end, "running");
    let i = d.instruction.unwrap();
    assert_eq!(i.bytes, "FE 38 02 01");
    assert!(i.text.starts_with("host call 0102h"), "{}", i.text);
}

#[test]
fn x87_state_difference_is_bisected_to_its_dispatch() {
    // Only the FPU control word differs at first: the oracle compares the
    // x87 state itself, not just what later reaches memory.
    let d = find("sincos", 1_000_000, "l0+x87rc@20000", 2);
    assert_eq!(d.dispatch, 20_000);
    assert_eq!(d.fields, vec!["x87"]);
    assert_eq!(d.states[0].regs, d.states[1].regs);
}

#[test]
fn system_state_difference_is_bisected_to_its_dispatch() {
    // Only DR7 differs (a debug register nothing reads): the oracle compares
    // the CPU's system state (`Cpu::system_state_bytes`) itself.
    let d = find("sincos", 1_000_000, "l0+dr7@20000", 2);
    assert_eq!(d.dispatch, 20_000);
    assert_eq!(d.fields, vec!["system"]);
    assert_eq!(d.states[0].regs, d.states[1].regs);
    assert_ne!(d.states[0].system_hash, d.states[1].system_hash);
}
