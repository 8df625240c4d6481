//! `toyvm run` as a user runs it: the summary lines and, for a µop arm, the
//! counters block whose dispatch accounting must close (every dispatch ran in
//! a µop program, as an L1 fallback, a single step, a spin fold or a tail
//! step).

use std::process::Command;

fn run(arm: &str) -> String {
    let prog = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../corpus-dos/programs/bignum/FACT32.COM"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_toyvm"))
        .args(["run", prog, "--arm", arm])
        .output()
        .expect("toyvm runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// The value after `name ` in the flat counter lines.
fn counter(text: &str, name: &str) -> u64 {
    text.lines()
        .filter(|l| l.starts_with("  ") && !l.contains(':'))
        .flat_map(|l| l.trim().split(", "))
        .find_map(|kv| kv.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("counter {name} missing in:\n{text}"))
}

#[test]
fn only_naive_run_prints_counters_whose_dispatches_add_up() {
    let t = run("only-naive");
    assert!(
        t.contains("exited with code 0 after 184124 dispatches"),
        "{t}"
    );
    assert!(t.contains("CHECKSUM 28452515"), "{t}");
    assert!(t.contains("counters (only-naive):"), "{t}");
    assert!(t.contains("µops per instruction"), "{t}");
    assert!(t.contains("programs built"), "{t}");
    assert!(t.contains("handbacks by reason"), "{t}");
    let parts = [
        "uop_insns",
        "fallback_dispatches",
        "single_steps",
        "spin_dispatches",
        "tail_steps",
    ];
    let sum: u64 = parts.iter().map(|p| counter(&t, p)).sum();
    assert_eq!(sum, 184124, "dispatch accounting: {t}");
    assert_eq!(counter(&t, "dispatches"), 184124);
}

#[test]
fn l1_run_prints_the_same_result_and_its_own_counters() {
    let t = run("l1");
    assert!(
        t.contains("exited with code 0 after 184124 dispatches"),
        "{t}"
    );
    assert!(t.contains("CHECKSUM 28452515"), "{t}");
    assert!(t.contains("counters (l1):"), "{t}");
    assert_eq!(counter(&t, "dispatches"), 184124);
}
