//! The designs registry: every default-on design has a passing `oracle gate`
//! record for the current contents of its gate file (docs/gates.md). Today
//! no design is on (no µop tier yet), so the mechanism is also checked on a
//! synthetic case table.

use mainemu::designs::{self, check_default_on, gate_hash, Design, DESIGNS};
use std::path::Path;

fn repo_gates() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../gates")
}

#[test]
fn every_default_on_design_has_a_passing_record_for_its_gate_file() {
    let bad = check_default_on(DESIGNS, &repo_gates()).unwrap();
    assert!(bad.is_empty(), "{bad:#?}");
    // Every design the registry knows has a gate file in the repo.
    for d in DESIGNS {
        let p = repo_gates().join(format!("{}.toml", d.name));
        assert!(p.is_file(), "{} has no gate file {}", d.name, p.display());
    }
}

#[test]
fn no_design_is_on_and_the_uop_arms_are_listed() {
    // Issue 18: the µop arms run, but no gate has passed, so nothing is on.
    assert!(designs::default_on(DESIGNS).is_empty());
    assert_eq!(
        designs::UOP_ARMS,
        ["only-naive", "only-baseline", "only-all"]
    );
    assert!(designs::has_arm("l0"));
    assert!(designs::has_arm("only-baseline"));
    assert!(!designs::has_arm("uop"));
    // Every listed arm parses as a mainemu arm.
    for a in designs::UOP_ARMS {
        assert_eq!(a.parse::<mainemu::run::Arm>().unwrap().name(), *a);
    }
}

#[test]
fn gate_hash_is_sha1_hex() {
    assert_eq!(
        gate_hash(b"abc"),
        "a9993e364706816aba3e25717850c26c9cd0d89d"
    );
}

fn record(dir: &Path, file: &str, design: &str, gate: &str, verdict: &str) {
    let r = serde_json::json!({
        "design": design,
        "gate_sha1": gate_hash(gate.as_bytes()),
        "verdict": verdict,
        "commit": "0123456789ab",
        "criteria": [],
    });
    std::fs::write(dir.join("results").join(file), r.to_string()).unwrap();
}

#[test]
fn default_on_rule_on_a_synthetic_case_table() {
    let dir = tempfile::tempdir().unwrap();
    let g = dir.path();
    std::fs::create_dir_all(g.join("results")).unwrap();
    let gate_a = "design = \"a\"\n";
    let gate_b = "design = \"b\"\n";
    let gate_c = "design = \"c\"\n";
    std::fs::write(g.join("a.toml"), gate_a).unwrap();
    std::fs::write(g.join("b.toml"), gate_b).unwrap();
    std::fs::write(g.join("c.toml"), gate_c).unwrap();
    // a: a failing record, then a passing one for the same gate file.
    record(g, "a-111.json", "a", gate_a, "FAIL");
    record(g, "a-222.json", "a", gate_a, "PASS");
    // b: only a failing record.
    record(g, "b-111.json", "b", gate_b, "FAIL");
    // c: passed, but against an older gate file.
    record(g, "c-111.json", "c", "design = \"c\"\n# old\n", "PASS");
    let d = |name: &'static str, on: bool| Design {
        name,
        what: "test",
        default_on: on,
    };
    // (designs, expected complaints)
    let cases: Vec<(Vec<Design>, Vec<&str>)> = vec![
        (vec![d("a", true)], vec![]),
        (vec![d("a", false), d("b", false), d("c", false)], vec![]),
        (
            vec![d("b", true)],
            vec!["b: on by default without a passing record (its records for this gate file fail; run `oracle gate b`)"],
        ),
        (
            vec![d("c", true)],
            vec!["c: on by default without a passing record (no record for the current gate file (it changed since); run `oracle gate c`)"],
        ),
        (
            vec![d("e", true)],
            vec![],
        ),
    ];
    for (i, (ds, want)) in cases.iter().enumerate() {
        let got = check_default_on(ds, g).unwrap();
        if ds[0].name == "e" {
            // No gate file at all.
            assert_eq!(got.len(), 1, "case {i}");
            assert!(got[0].starts_with("e: on by default but "), "{got:?}");
            assert!(got[0].ends_with("e.toml is missing"), "{got:?}");
            continue;
        }
        assert_eq!(&got, want, "case {i}");
    }
    // A passing record that is not for the current gate text does not count.
    let records = designs::read_records(&g.join("results")).unwrap();
    assert_eq!(records.len(), 4);
    assert!(designs::passing_record("a", gate_a.as_bytes(), &records));
    assert!(!designs::passing_record("b", gate_b.as_bytes(), &records));
    assert!(!designs::passing_record("c", gate_c.as_bytes(), &records));
    // A stray non-record file is an error, not silently skipped.
    std::fs::write(g.join("results/junk.json"), "[1,2]").unwrap();
    assert!(check_default_on(&[d("a", true)], g)
        .unwrap_err()
        .contains("not a gate record"));
}
