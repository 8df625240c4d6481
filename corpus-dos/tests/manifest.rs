//! Built-in manifest checks: parse, counts, coverage, binaries present and
//! byte-identical to their sources (when nasm is installed), external loaders.

use corpus_dos::{builtin, builtin_root, load_dir, COVERAGE};
use std::collections::BTreeSet;
use std::process::Command;

#[test]
fn manifest_parses_and_counts() {
    let c = builtin().expect("corpus.toml parses");
    assert_eq!(c.programs.len(), 199, "program count");
    assert!(c.families().len() >= 40, "families: {}", c.families().len());
    let names: BTreeSet<_> = c
        .programs
        .iter()
        .map(|p| p.name.to_ascii_uppercase())
        .collect();
    assert_eq!(names.len(), c.programs.len(), "program names are unique");
    for p in &c.programs {
        assert!(p.name.len() <= 8, "{}: DOS 8.3 name", p.name);
        assert!(p.budget > 0);
        p.key_script().unwrap();
        for comp in &p.companions {
            assert!(
                c.get(comp).is_some(),
                "{}: companion {comp} missing",
                p.name
            );
        }
        if p.timing_independent {
            assert!(
                !p.expected_checksum.is_empty(),
                "{}: timing-independent programs print a checksum",
                p.name
            );
        }
    }
    assert!(c.programs.iter().filter(|p| p.is_bench()).count() >= 3);
}

#[test]
fn every_coverage_tag_is_exercised() {
    let c = builtin().unwrap();
    let used: BTreeSet<&str> = c
        .programs
        .iter()
        .flat_map(|p| p.tags.iter().map(String::as_str))
        .collect();
    let missing: Vec<_> = COVERAGE.iter().filter(|t| !used.contains(**t)).collect();
    assert!(
        missing.is_empty(),
        "coverage tags without a program: {missing:?}"
    );
    let unknown: Vec<_> = used.iter().filter(|t| !COVERAGE.contains(t)).collect();
    assert!(unknown.is_empty(), "tags not in COVERAGE: {unknown:?}");
}

#[test]
fn binaries_exist_and_match_sources() {
    let c = builtin().unwrap();
    for p in &c.programs {
        assert!(c.binary_path(p).is_file(), "{}: binary missing", p.binary);
        assert!(
            c.source_path(p).unwrap().is_file(),
            "{}: source missing",
            p.source
        );
    }
    for d in &c.data_files {
        assert!(c.root.join(d).is_file(), "{d}: data file missing");
    }
    if Command::new("nasm").arg("-v").output().is_err() {
        eprintln!("SKIP: nasm not installed; binaries not re-assembled");
        return;
    }
    let out = Command::new("bash")
        .arg(builtin_root().join("scripts/build.sh"))
        .arg("--check")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "re-assembled binaries differ:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn external_dir_with_config() {
    let dir = std::env::temp_dir().join(format!("corpusdos-ext-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("A.COM"), [0xCD, 0x20]).unwrap();
    std::fs::write(dir.join("sub/B.EXE"), b"MZ").unwrap();
    std::fs::write(dir.join("notes.txt"), b"x").unwrap();
    std::fs::write(
        dir.join("corpus.toml"),
        "[program.B]\nbudget = 5000\nkeys = \"1C@100\"\ncompanions = [\"A\"]\ndos_version = \"3.3\"\nargs = \"-x\"\n",
    )
    .unwrap();
    let c = load_dir(&dir).unwrap();
    assert_eq!(c.programs.len(), 2);
    let b = c.get("b").unwrap();
    assert_eq!(b.budget, 5000);
    assert_eq!(b.key_script().unwrap(), vec![(0x1C, 100)]);
    assert_eq!(b.companions, vec!["A".to_string()]);
    assert_eq!(b.dos_version, "3.3");
    assert_eq!(b.family, "sub");
    assert_eq!(c.get("A").unwrap().format, "com");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn external_dos_real_manifest() {
    let Some(dir) = corpus_dos::shared_data_or_skip("DOS_REAL", "dos-real", "MANIFEST.tsv") else {
        return;
    };
    let c = load_dir(&dir).unwrap();
    assert!(c.programs.len() > 100, "{} programs", c.programs.len());
    for p in &c.programs {
        assert!(c.binary_path(p).is_file(), "{}", p.binary);
    }
    // The hosts the notes name: CWSDPMI -p before the 18 DPMI clients,
    // DOS4GW.EXE in C:\ for the 4 Watcom LE programs.
    let cws: Vec<_> = c
        .programs
        .iter()
        .filter(|p| p.companions == ["CWSDPMI"])
        .collect();
    assert_eq!(cws.len(), 18);
    assert_eq!(c.get("CWSDPMI").unwrap().args, "-p");
    let le: Vec<_> = c
        .programs
        .iter()
        .filter(|p| p.files == ["_support/DOS4GW.EXE"])
        .map(|p| p.binary.as_str())
        .collect();
    assert_eq!(
        le,
        [
            "w84death-p1x-dos-demoscene/demo-01/OPENWATCOM/INTRO.EXE",
            "w84death-p1x-dos-demoscene/experiments/FIRE.EXE",
            "w84death-p1x-dos-demoscene/intro-01/FIRE.EXE",
            "w84death-p1x-dos-demoscene/intro-01/INTRO.EXE"
        ]
    );
}

/// The MZ programs: header fields consistent with the file, relocations and the
/// entry point inside the load image, SS:SP inside image + min alloc.
#[test]
fn exe_headers_are_consistent() {
    let c = builtin().unwrap();
    let exes: Vec<_> = c.programs.iter().filter(|p| p.format == "exe").collect();
    assert!(exes.len() >= 4, "{} EXE programs", exes.len());
    for p in exes {
        let d = std::fs::read(c.binary_path(p)).unwrap();
        let w = |o: usize| u16::from_le_bytes([d[o], d[o + 1]]) as usize;
        assert_eq!(&d[0..2], b"MZ", "{}", p.name);
        let (cblp, pages, nrel, hdr) = (w(2), w(4), w(6), w(8) * 16);
        let (minalloc, maxalloc, ss, sp, ip, cs, lfarlc) =
            (w(10), w(12), w(14), w(16), w(20), w(22), w(24));
        let size = if cblp == 0 {
            pages * 512
        } else {
            (pages - 1) * 512 + cblp
        };
        assert_eq!(size, d.len(), "{}: pages/cblp vs file size", p.name);
        let image = d.len() - hdr;
        assert!(lfarlc + 4 * nrel <= hdr, "{}: relocation table", p.name);
        assert!(minalloc <= maxalloc, "{}: min/max alloc", p.name);
        for i in 0..nrel {
            let (off, seg) = (w(lfarlc + 4 * i), w(lfarlc + 4 * i + 2));
            assert!(seg * 16 + off + 2 <= image, "{}: relocation {i}", p.name);
        }
        if p.tags.iter().any(|t| t == "dos.exe_reloc") {
            assert!(nrel > 0, "{}: tagged dos.exe_reloc", p.name);
        }
        assert!(cs * 16 + ip < image, "{}: entry point", p.name);
        let mem = image.div_ceil(16) * 16 + minalloc * 16;
        assert!(ss * 16 + sp <= mem && sp > 0, "{}: SS:SP", p.name);
    }
}

/// `console_record` gives what `scripts/corpus.py` computes (values from its
/// `console_record`); the recorder and toyvm's corpus test must agree.
#[test]
fn console_record_matches_corpus_py() {
    use corpus_dos::{console_record, crc32, last_line};
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    assert_eq!(console_record("CHECKSUM 1234ABCD\n"), "CHECKSUM 1234ABCD\n");
    assert_eq!(
        console_record("a\nb\nc\nd\ne\n"),
        "~5 lines crc32=FB638305 last=e"
    );
    let x = "x".repeat(101);
    assert_eq!(
        console_record(&x),
        format!("~1 lines crc32=F185866F last={x}")
    );
    assert_eq!(console_record("é☺\n  LAST \n\n"), "é☺\n  LAST \n\n");
    assert_eq!(last_line("é☺\n  LAST \n\n"), "LAST");
    assert_eq!(console_record(""), "");
    assert_eq!(last_line(""), "");
}

/// The last line a `console_record` string says the console ended with.
fn recorded_last_line(rec: &str) -> &str {
    match rec.strip_prefix('~') {
        Some(digest) => digest.split_once(" last=").map_or("", |(_, l)| l),
        None => corpus_dos::last_line(rec),
    }
}

/// The recorded toyvm results (`scripts/corpus.py record`) are complete and
/// consistent with the expectations: every program recorded, ends as the
/// schema says, inside its budget, and a program that exits does so with
/// `expected_exit` and prints `expected_checksum` last.
#[test]
fn recorded_l1_results_are_complete() {
    let c = builtin().unwrap();
    let mut bad = Vec::new();
    for p in &c.programs {
        let why = if p.l1_end.is_empty() || p.l1_frame_hash.len() != 16 || p.l1_dispatches == 0 {
            Some("not recorded".to_string())
        } else if p.l1_end == "budget" {
            (p.timing_independent || p.l1_dispatches != p.budget)
                .then(|| "runs to its budget".to_string())
        } else if p.l1_end != p.expected_end() {
            Some(format!(
                "{} but expected_exit {}",
                p.l1_end, p.expected_exit
            ))
        } else if p.l1_dispatches > p.budget {
            Some("over budget".into())
        } else if p.l1_dispatches * 5 / 4 > p.budget {
            Some(format!(
                "budget {} less than 1.25 x {} dispatches",
                p.budget, p.l1_dispatches
            ))
        } else if recorded_last_line(&p.l1_console) != p.expected_checksum {
            Some(format!("console {:?}", p.l1_console))
        } else {
            None
        };
        if let Some(w) = why {
            bad.push(format!("{}: {w}", p.name));
        }
    }
    assert!(bad.is_empty(), "recorded l1 results:\n{}", bad.join("\n"));
}
