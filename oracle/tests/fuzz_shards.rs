//! Scale-out as docs/oracle.md shows it: four `oracle fuzz` shards run
//! through GNU parallel, joined by `oracle merge`, give the unsharded
//! run's report byte for byte (JSON and HTML); a shard picked from a Slurm
//! job array's environment is the same shard as `--shard`.

use std::path::Path;
use std::process::Command;

const ORACLE: &str = env!("CARGO_BIN_EXE_oracle");

/// The fuzz run every invocation here shares (shards add their own flags).
fn fuzz_args(dir: &Path, name: &str) -> Vec<String> {
    let p = |f: &str| dir.join(f).display().to_string();
    [
        "fuzz",
        "--seed",
        "9",
        "--count",
        "24",
        "--shape",
        "mixed",
        "--arms",
        "l1,l0",
        "--dispatches",
        "30000",
        "--out",
        &p("out"),
        "--json",
        &p(&format!("{name}.json")),
        "--html",
        &p(&format!("{name}.html")),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn ok(c: &mut Command) -> String {
    let out = c.output().unwrap_or_else(|e| panic!("{c:?}: {e}"));
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{c:?} failed:\n{text}");
    text
}

#[test]
fn four_shards_through_gnu_parallel_merge_to_the_unsharded_report() {
    if Command::new("parallel").arg("--version").output().is_err() {
        println!("SKIPPED: GNU parallel is not installed (Debian package `parallel`)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let whole = ok(Command::new(ORACLE).args(fuzz_args(d, "whole")));
    assert!(
        whole.contains("fuzz: 24 programs, 24 exact, 0 diverged, 0 failed"),
        "{whole}"
    );
    // parallel ORACLE fuzz ... --shard {}/4 --json s{}.json ... ::: 0 1 2 3
    let mut args: Vec<String> = vec!["--will-cite".into(), "--halt".into(), "now,fail=1".into()];
    args.push(ORACLE.into());
    for a in fuzz_args(d, "s{}") {
        args.push(a);
    }
    args.extend(["--shard".into(), "{}/4".into(), ":::".into()]);
    args.extend(["0", "1", "2", "3"].map(String::from));
    let shards = ok(Command::new("parallel").args(&args));
    assert_eq!(shards.matches("fuzz: 6 programs").count(), 4, "{shards}");
    let mut merge = vec!["merge".to_string()];
    for k in 0..4 {
        merge.push(d.join(format!("s{k}.json")).display().to_string());
    }
    merge.extend([
        "--json".into(),
        d.join("merged.json").display().to_string(),
        "--html".into(),
        d.join("merged.html").display().to_string(),
    ]);
    let merged = ok(Command::new(ORACLE).args(&merge));
    assert!(
        merged.contains("fuzz: 24 programs, 24 exact, 0 diverged, 0 failed"),
        "{merged}"
    );
    for ext in ["json", "html"] {
        let a = std::fs::read(d.join(format!("whole.{ext}"))).unwrap();
        let b = std::fs::read(d.join(format!("merged.{ext}"))).unwrap();
        assert!(a == b, "merged {ext} differs from the unsharded one");
    }
    // The same shard from a Slurm job array's environment (ids 1..4).
    let mut c = Command::new(ORACLE);
    c.args(fuzz_args(d, "slurm"))
        .env("SLURM_ARRAY_TASK_ID", "3")
        .env("SLURM_ARRAY_TASK_MIN", "1")
        .env("SLURM_ARRAY_TASK_COUNT", "4");
    let text = ok(&mut c);
    assert!(
        text.contains("shard 2/4 from SLURM_ARRAY_TASK_ID"),
        "{text}"
    );
    assert_eq!(
        std::fs::read(d.join("slurm.json")).unwrap(),
        std::fs::read(d.join("s2.json")).unwrap()
    );
}
