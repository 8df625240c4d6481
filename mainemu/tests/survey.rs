//! `mainemu survey` over mainemu/survey/programs.toml (the mingw test
//! programs): every row passes, on l0 and l1, with the totals line exact;
//! a manifest with an unknown field or an absent root is a clear error.
mod common;

use mainemu::run::Arm;
use mainemu::survey::{load, run_manifest, Verdict};
use std::path::PathBuf;

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("survey/programs.toml")
}

#[test]
fn programs_manifest_passes_on_both_arms() {
    let Some(_) = common::programs() else { return };
    for arm in [Arm::L0, Arm::L1] {
        let scratch = std::env::temp_dir().join(format!(
            "mainemu-survey-test-{}-{}",
            std::process::id(),
            arm.name()
        ));
        std::fs::remove_dir_all(&scratch).ok();
        let mut seen = Vec::new();
        let r = run_manifest(&manifest(), None, arm, &scratch, &mut |i, c, _| {
            seen.push((i, c.program.clone()))
        })
        .unwrap();
        std::fs::remove_dir_all(&scratch).ok();
        for (c, g) in &r.rows {
            let g = g.as_ref().unwrap();
            assert_eq!(
                g.verdict,
                Verdict::Passed,
                "{} on {}: {:?}",
                c.program,
                arm.name(),
                g.complaints
            );
        }
        assert_eq!(
            r.last_line(),
            "survey: 3 programs, 3 passed, 0 failed, 0 stopped"
        );
        assert_eq!(seen.len(), 3);
    }
}

#[test]
fn bad_manifests_are_clear_errors() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("m.toml");
    std::fs::write(
        &p,
        "root = \".\"\n[[case]]\nprogram = \"a.exe\"\nexpect = 1\n",
    )
    .unwrap();
    let e = load(&p).unwrap_err();
    assert!(e.contains("unknown field `expect`"), "{e}");
    std::fs::write(
        &p,
        "root = \"nowhere\"\n[[case]]\nprogram = \"a.exe\"\nexit = 0\n",
    )
    .unwrap();
    let e = run_manifest(&p, None, Arm::L0, &d.path().join("s"), &mut |_, _, _| {})
        .err()
        .unwrap();
    assert!(e.contains("is absent"), "{e}");
}
