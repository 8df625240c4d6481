//! The `@wasm` arms: toyvm compiled to wasm32-wasip1 under wasmtime
//! (Cranelift and Winch) is exact against the native arms at every sample,
//! its counters equal the native engine's, it works as the reference of a
//! bisection, and bad wasm arm names are clear errors.
//!
//! Needs the module (`cargo build --profile wasm-release --target
//! wasm32-wasip1 -p toyvm-wasm`, which CI runs first); without it the tests say so and skip,
//! except under CI, where a missing module fails them.
#![cfg(feature = "wasm")]

mod common;
use common::*;
use oracle::compare::{lockstep, Options};
use oracle::diff::diff;

fn module_or_skip(test: &str) -> bool {
    let p = wasm_host::compiler::module_path();
    if p.is_file() {
        return true;
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "{test}: {} missing under CI (build it with `{}`)",
            p.display(),
            wasm_host::compiler::BUILD_COMMAND
        );
    }
    eprintln!(
        "{test}: skipped: {} not built (`{}`)",
        p.display(),
        wasm_host::compiler::BUILD_COMMAND
    );
    false
}

#[test]
fn wasm_arms_are_exact_against_native_with_the_same_counters() {
    if !module_or_skip("wasm_arms_are_exact") {
        return;
    }
    // (program, budget cap, expected end, dispatches, final frame hash):
    // the values of the native arms (tests/self_diff.rs); IRQs, HLT, keys,
    // Sound Blaster DMA, mode 13h, EXEC, TSR companions, REP.
    let cases: &[(&str, u64, &str, u64, &str)] = &[
        ("alu16", 3_000_000, "exited 0", 400_608, "6528e78eb11e735b"),
        ("plasma", 1_000_000, "budget", 1_000_000, ""),
        ("hlt5", 3_000_000, "exited 0", 1_098_542, "2cd1df161f58d18c"),
        (
            "autoinit",
            3_000_000,
            "exited 0",
            2_058_652,
            "6a76439cf8a1b4b6",
        ),
        ("tsruse", 3_000_000, "exited 0", 13_030, "ea4874d106800abe"),
        ("parent", 3_000_000, "exited 0", 26_679, "6629edc133568fe5"),
        ("nextrep", 3_000_000, "exited 0", 14_677, "c13b548d50c5164a"),
    ];
    let list = "l1,l1@wasm,l1@wasm-winch,only-naive,only-naive@wasm,only-naive@wasm-winch";
    for &(name, cap, end, disp, frame) in cases {
        let spec = corpus_spec(name, cap);
        let opts = Options {
            interval: 100_000,
            ..Options::default()
        };
        let ls = lockstep(&spec, &arms(list), &opts, &mut |_| {}).unwrap();
        for a in &ls.arms {
            assert!(a.diff.is_none(), "{name}: {} diverged from l1", a.arm);
            assert_eq!(a.last, ls.arms[0].last, "{name}: {}", a.arm);
        }
        let last = &ls.arms[0].last;
        assert_eq!((last.end.as_str(), last.dispatches), (end, disp), "{name}");
        if !frame.is_empty() {
            assert_eq!(last.frame_hash, frame, "{name}");
        }
        assert!(
            ls.samples > disp / 100_000,
            "{name}: {} samples",
            ls.samples
        );
        // The engine inside the module counts exactly what the native one
        // does (deterministic counters; host timings left out).
        let det = |i: usize| {
            let mut c = ls.arms[i].counters.clone();
            c.retain(|k, _| !k.ends_with("_ns"));
            c
        };
        assert!(det(0).get("dispatches").copied().unwrap_or(0) > 0, "{name}");
        for (native, wasm) in [(0, 1), (0, 2), (3, 4), (3, 5)] {
            assert_eq!(det(native), det(wasm), "{name}: {}", ls.arms[wasm].arm);
        }
    }
}

#[test]
fn a_wasm_arm_is_a_reference_bisection_works_against() {
    if !module_or_skip("a_wasm_arm_is_a_reference") {
        return;
    }
    // A native arm broken at one dispatch is caught against l1@wasm, and
    // bisected to exactly that dispatch.
    let spec = corpus_spec("sievebit", 3_000_000);
    let r = diff(
        &spec,
        &arms("l1@wasm,l1+flipdf@1234567"),
        &Options::default(),
        2,
        &mut |_| {},
    )
    .unwrap();
    assert!(!r.lockstep.exact());
    let (arm, d) = &r.divergences[0];
    let d = d.as_ref().unwrap();
    assert_eq!(arm, "l1+flipdf@1234567");
    assert_eq!(d.dispatch, 1_234_567);
    assert_eq!(d.fields, ["flags"]);
    assert!(d.instruction.is_some());
}

#[test]
fn bad_wasm_arm_names_are_clear_errors() {
    for (name, says) in [
        ("l1+skip@5@wasm", "test arms run natively only"),
        ("nosuch@wasm", "unknown or not yet built arm `nosuch`"),
        ("l1@wasm-v8", "unknown or not yet built arm `l1@wasm-v8`"),
    ] {
        let e = oracle::arms::check(name).unwrap_err();
        assert!(e.contains(says), "{name}: {e}");
    }
}
