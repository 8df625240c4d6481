//! The SingleStepTests hardware vectors through L1 (`toyvm conformance
//! --engine l1`): the same passes, failures and skips as L0, file by file.
//! Skips (with a message) when the shared cpu-tests folder is absent. The
//! full 286 set runs from the CLI (docs/l1.md); here the first 60 tests of
//! every 286 file and the whole 386EX sample.

use std::path::PathBuf;
use toyvm::conformance::runner::{self, Engine, Options};

fn data_dir() -> Option<PathBuf> {
    corpus_dos::shared_data_or_skip("CPU_TESTS_DIR", "cpu-tests", "FORMAT.md")
}

fn run(dir: &std::path::Path, engine: Engine, limit: Option<usize>) -> runner::Summary {
    let opts = Options {
        limit,
        verbose: 5,
        engine,
        ..Options::default()
    };
    runner::run(dir, &opts, &mut std::io::sink()).unwrap()
}

#[test]
fn l1_matches_l0_on_the_286_vectors() {
    let Some(d) = data_dir() else { return };
    let a = run(&d.join("80286"), Engine::L0, Some(60));
    let b = run(&d.join("80286"), Engine::L1, Some(60));
    assert_eq!(b.failed(), 0, "{}\n{}", b.line(), b.failures.join("\n"));
    assert_eq!(a.files.len(), b.files.len());
    for (x, y) in a.files.iter().zip(&b.files) {
        assert_eq!(
            (x.passed, x.failed, x.skipped),
            (y.passed, y.failed, y.skipped),
            "{}",
            x.name
        );
    }
    assert!(b.passed() > 18_000, "{}", b.line());
}

#[test]
fn l1_passes_the_386ex_sample() {
    let Some(d) = data_dir() else { return };
    let s = run(&d.join("80386-sample"), Engine::L1, None);
    assert_eq!(s.failed(), 0, "{}\n{}", s.line(), s.failures.join("\n"));
    assert_eq!(s.passed(), 500);
}
