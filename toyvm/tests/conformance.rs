//! Hardware vectors in `cargo test`: the first 40 tests of every 286 opcode
//! file and the whole 386EX sample must pass under the runner's named classes;
//! the MOO and JSON loaders must agree on the 8086 sample; a corrupted test
//! must be caught by its SHA-1.
//!
//! Skips (with a message) when the shared cpu-tests folder is absent.

use std::path::PathBuf;
use toyvm::conformance::moo;
use toyvm::conformance::runner::{self, Options};

fn data_dir() -> Option<PathBuf> {
    corpus_dos::shared_data_or_skip("CPU_TESTS_DIR", "cpu-tests", "FORMAT.md")
}

#[test]
fn first_40_tests_of_every_286_file_pass() {
    let Some(d) = data_dir() else { return };
    let opts = Options {
        limit: Some(40),
        verbose: 5,
        ..Options::default()
    };
    let sum = runner::run(&d.join("80286"), &opts, &mut std::io::sink()).unwrap();
    assert_eq!(sum.files.len(), 325, "every 286 opcode file is run");
    assert_eq!(
        sum.failed(),
        0,
        "{}\n{}",
        sum.line(),
        sum.failures.join("\n")
    );
    // 325 files x 40 tests; skips are the named 286-vs-386 classes only.
    assert_eq!(sum.passed() + sum.skipped(), 325 * 40);
    assert!(sum.skipped() * 20 < sum.passed(), "{}", sum.line());
}

#[test]
fn the_386ex_sample_passes_completely() {
    let Some(d) = data_dir() else { return };
    let opts = Options {
        verbose: 5,
        ..Options::default()
    };
    let sum = runner::run(&d.join("80386-sample/00.MOO"), &opts, &mut std::io::sink()).unwrap();
    assert_eq!(
        (sum.passed(), sum.failed(), sum.skipped()),
        (500, 0, 0),
        "{}",
        sum.failures.join("\n")
    );
}

#[test]
fn moo_and_json_loaders_agree_on_the_8086_sample() {
    let Some(d) = data_dir() else { return };
    for name in ["00", "F6.6"] {
        let m = moo::load(&d.join(format!("8086-sample/v1_binary/{name}.MOO.gz"))).unwrap();
        let raw = moo::read_bytes(&d.join(format!("8086-sample/v1/{name}.json.gz"))).unwrap();
        let j = moo::parse_json(&raw).unwrap();
        assert_eq!(m.cpu, "8086");
        assert_eq!(m.tests.len(), 2000);
        assert_eq!(j.len(), 2000);
        for (a, b) in m.tests.iter().zip(&j) {
            assert_eq!(a.name, b.name);
            assert_eq!(a.bytes, b.bytes, "{}", a.name);
            assert_eq!(a.init.regs.r, b.init.regs.r, "{}", a.name);
            assert_eq!(a.init.ram, b.init.ram, "{}", a.name);
            assert_eq!(a.fina.regs.r, b.fina.regs.r, "{}", a.name);
            assert_eq!(a.fina.ram, b.fina.ram, "{}", a.name);
        }
    }
}

#[test]
fn a_corrupted_test_fails_its_sha1() {
    let Some(d) = data_dir() else { return };
    let mut raw = moo::read_bytes(&d.join("80386-sample/00.MOO")).unwrap();
    let good = moo::parse(&raw).unwrap();
    assert_eq!(good.cpu, "386E");
    assert!(good.tests.iter().all(|t| t.hash.is_some()));
    // Flip one byte inside the first test's NAME text.
    let pos = raw.windows(4).position(|w| w == b"NAME").unwrap() + 12;
    raw[pos] ^= 0x20;
    let err = moo::parse(&raw).unwrap_err();
    assert!(err.contains("SHA-1 mismatch"), "{err}");
}

#[test]
fn truncated_and_foreign_files_are_clear_errors() {
    assert!(moo::parse(b"RIFF\x04\x00\x00\x00abcd")
        .unwrap_err()
        .contains("not a MOO file"));
    assert!(moo::parse(b"MOO \x0c\x00\x00\x00\x01\x00")
        .unwrap_err()
        .contains("truncated"));
}

#[test]
fn test386_reaches_post_ff_with_the_reference_output() {
    use toyvm::conformance::test386;
    let Some(d) = data_dir() else { return };
    let dir = d.join("test386");
    let rom = test386::rom(&dir).unwrap();
    let out = test386::run(&rom.bytes, test386::Engine::L1, 200_000_000);
    assert_eq!(
        (out.post(), out.end.as_str(), out.dispatches),
        (0xFF, "halted", 79_686_568),
        "POSTs {:02X?}",
        out.posts
    );
    if rom.prints {
        let reference = std::fs::read(dir.join("test386-EE-reference.txt")).unwrap();
        let (n, first) = test386::compare(&out.output, &reference, 5);
        assert_eq!(n, 0, "{}", first.join("\n"));
        assert!(out.output.len() > 1000, "the 0xEE series printed");
    }
}
