//! Real Win32 programs from `../shared/win32-real` (7-Zip's 7za, Wine's
//! console tools and one of Wine's conformance tests, re2c) under mainemu:
//! the table is `mainemu/survey/win32-real.toml`, the same manifest `mainemu
//! survey` runs (declared once; the format and the runner are
//! `mainemu::survey`). The rows run in order in one scratch directory mapped
//! as C: (a row may read what an earlier row wrote: `7za l` lists the archive
//! `7za a` made); the whole table runs twice, in two fresh directories, and
//! every row must pass (exit, dispatches, stdout, output files) and the two
//! passes' summaries (also stderr and API call counts) be byte-identical
//! (invariant 7). re2c.exe's lexers must equal the native re2c 4.0's
//! (`tests/programs/expected`) with CRLF line ends. When the host has `/usr/bin/7zz`, it extracts the archives
//! mainemu's 7za made and must get the inputs back.
//!
//! A third pass runs the table under `l1`: every row's summary (ending,
//! dispatches, stdout, stderr, API call counts, file hashes) must equal the
//! `l0` pass's. `wine_tests_sample_under_l0_and_l1` runs the rows of
//! `mainemu/survey/wine-tests.toml` that take at most 1M dispatches (the
//! full table is a docs/mainemu.md command: three exes take 60M-170M) under
//! both arms: each row must pass (its exact Wine summary counts or stop) and
//! the arms agree.
//!
//! Skips with a printed line when `../shared/win32-real` is absent. Nothing
//! from there is copied: the programs run from where they are.
mod common;

use mainemu::run::Arm;
use mainemu::survey::{run_manifest, Verdict};
use std::path::{Path, PathBuf};

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("survey/win32-real.toml")
}

#[test]
fn real_programs_run_exactly_and_twice_the_same() {
    let Some(real) = common::win32_real() else {
        return;
    };
    let mut passes = Vec::new();
    let mut failures = Vec::new();
    for pass in 0..2 {
        // The second pass runs deeper, under a longer host path: nothing the
        // guest sees may depend on where its drive is mapped (a FindFirstFile
        // of the root once answered with the host directory's name).
        let top = tempfile::tempdir().unwrap();
        let scratch = if pass == 0 {
            top.path().to_path_buf()
        } else {
            top.path()
                .join("a-much-longer-host-directory-name-for-the-second-pass")
        };
        std::fs::create_dir_all(&scratch).unwrap();
        let r = run_manifest(
            &manifest(),
            Some(&real),
            Arm::L0,
            &scratch,
            &mut |_, c, g| {
                if let Ok(g) = g {
                    eprintln!("pass {pass}: {} {:?}: {:?}", c.program, c.args, g.verdict);
                }
            },
        )
        .unwrap();
        let mut summaries = Vec::new();
        for (c, g) in &r.rows {
            match g {
                Ok(g) => {
                    if pass == 0 && g.verdict != Verdict::Passed {
                        failures.push(format!(
                            "{} {:?}: {}",
                            c.program,
                            c.args,
                            g.complaints.join("; ")
                        ));
                    }
                    summaries.push(g.summary.clone());
                }
                Err(e) => failures.push(format!("{} {:?}: {e}", c.program, c.args)),
            }
        }
        if pass == 0 {
            assert_eq!(
                r.count(Verdict::Passed),
                r.rows.len(),
                "{}",
                failures.join("\n")
            );
            host_7zz_agrees(&scratch);
            re2c_matches_native(&scratch);
        }
        passes.push(summaries);
    }
    for (a, b) in passes[0].iter().zip(&passes[1]) {
        if a != b {
            failures.push(format!("second pass differs:\n  {a}\n  {b}"));
        }
    }
    // The threaded tier: the same summaries, dispatches included.
    let top = tempfile::tempdir().unwrap();
    let r = run_manifest(
        &manifest(),
        Some(&real),
        Arm::L1,
        top.path(),
        &mut |_, _, _| {},
    )
    .unwrap();
    for ((c, g), l0) in r.rows.iter().zip(&passes[0]) {
        match g {
            Ok(g) if g.summary == *l0 => {}
            Ok(g) => failures.push(format!("l1 differs from l0:\n  {l0}\n  {}", g.summary)),
            Err(e) => failures.push(format!("l1 {} {:?}: {e}", c.program, c.args)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Rows of the Wine table cheap enough for a test (the rest: docs command).
const WINE_SAMPLE_MAX_DISPATCHES: u64 = 1_000_000;

#[test]
fn wine_tests_sample_under_l0_and_l1() {
    let Some((sampled, failures)) =
        common::wine_sample("wine-tests.toml", WINE_SAMPLE_MAX_DISPATCHES)
    else {
        return;
    };
    // 14 since kernel32_console runs to its summary (324M dispatches, was
    // a stop at 3315).
    assert!(sampled >= 14, "the sample shrank to {sampled} exes");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// re2c.exe's outputs equal the native re2c 4.0's for the same commands
/// (`tests/programs/expected/re2c-*.c`, made by PyPI's manylinux re2c 4.0)
/// with each LF written as CRLF: re2c writes its output through a text-mode
/// `FILE` (`_fdopen(fd, "w")`), which on Windows ends lines with CRLF.
fn re2c_matches_native(dir: &Path) {
    let expected = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/expected");
    for (out, native) in [
        ("lexer.c", "re2c-lexer.c"),
        ("lexer-gb.c", "re2c-lexer-gb.c"),
        ("cond.c", "re2c-cond.c"),
    ] {
        let native = std::fs::read(expected.join(native)).unwrap();
        assert!(!native.contains(&b'\r'));
        let mut want = Vec::new();
        for &b in &native {
            if b == b'\n' {
                want.push(b'\r');
            }
            want.push(b);
        }
        let got = std::fs::read(dir.join(out)).unwrap();
        assert!(
            got == want,
            "re2c.exe's {out} differs from the native re2c 4.0's"
        );
    }
}

/// Extracts t.7z and t.zip with the host's `7zz` and compares with the inputs.
fn host_7zz_agrees(dir: &Path) {
    let host = Path::new("/usr/bin/7zz");
    if !host.exists() {
        eprintln!("skip: /usr/bin/7zz not installed (the host cross-check of the archives)");
        return;
    }
    for a in ["t.7z", "t.zip"] {
        let out = dir.join(format!("host-{a}"));
        let st = std::process::Command::new(host)
            .arg("x")
            .arg(format!("-o{}", out.display()))
            .arg(dir.join(a))
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(st.success(), "host 7zz x {a} failed");
        for f in ["in/a.txt", "in/b.txt"] {
            assert_eq!(
                std::fs::read(out.join(f)).unwrap(),
                std::fs::read(dir.join(f)).unwrap(),
                "host 7zz extracts {f} from {a} differently"
            );
        }
    }
}
