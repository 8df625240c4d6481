//! Real Win32 programs from `../shared/win32-real` (7-Zip's 7za, Wine's
//! console tools, re2c) under mainemu, one case table. The rows run in order
//! in one scratch directory mapped as C: (a row may read what an earlier row
//! wrote: `7za l` lists the archive `7za a` made); the whole table runs twice,
//! in two fresh directories, and the two passes' summaries (exit, dispatches,
//! stdout, stderr, API call counts, output file hashes) must be
//! byte-identical (invariant 7) as well as equal to the table.
//!
//! Skips with a printed line when `../shared/win32-real` is absent. Nothing
//! from there is copied: the programs run from where they are (their
//! directory mapped read-only as D:).
mod common;

use mainemu::process::{Process, Setup};
use mainemu::run::{run, Ending};
use sha1::{Digest, Sha1};
use std::path::Path;

/// How a row ends.
#[derive(Debug)]
enum End {
    Exit(u32),
    /// Stops at an unimplemented import: the report, exactly.
    Unimplemented(&'static str),
    /// Stops otherwise (an exception nobody handles): the report, exactly.
    Stop(&'static str),
}

/// What an output file must hold.
#[derive(Debug)]
enum Want {
    /// The first 16 hex digits of its SHA-1.
    Sha1(&'static str),
    /// The same bytes as this other file of the scratch directory (an
    /// extracted file against its original).
    SameAs(&'static str),
    /// Absent.
    Missing,
}

struct Case {
    /// The program, relative to `win32-real`.
    program: &'static str,
    args: &'static [&'static str],
    /// Files written (mtime 2021-06-01 12:00 UTC) before the row runs.
    inputs: &'static [(&'static str, &'static [u8])],
    /// Console input.
    stdin: &'static [u8],
    stdout: &'static str,
    end: End,
    outputs: &'static [(&'static str, Want)],
    dispatches: u64,
}

const A_TXT: &[u8] = b"hello\n";
const B_TXT: &[u8] = b"line x one\nno\nx two\n";
/// The inputs' fixed mtime (7-Zip stores it in the archive).
const MTIME_UNIX: u64 = 1_622_548_800;

const SZ: &str = "7zip-18.01/7za.exe";

fn cases() -> Vec<Case> {
    use End::*;
    use Want::*;
    vec![
        Case {
            program: SZ,
            args: &["a", "t.7z", "in"],
            inputs: &[("in/a.txt", A_TXT), ("in/b.txt", B_TXT)],
            stdin: b"",
            stdout: "\n7-Zip (a) 18.01 (x86) : Copyright (c) 1999-2018 Igor Pavlov : 2018-01-28\n\nScanning the drive:\n  0M Scan \r          \r1 folder, 2 files, 26 bytes (1 KiB)\n\nCreating archive: t.7z\n\nAdd new data to archive: 1 folder, 2 files, 26 bytes (1 KiB)\n\n  0%\r    \r\nFiles read from disk: 2\nArchive size: 190 bytes (1 KiB)\nEverything is Ok\n",
            end: Exit(0),
            outputs: &[("t.7z", Sha1("02ff331c3b132fdb"))],
            dispatches: 1152769,
        },
        Case {
            program: SZ,
            args: &["l", "t.7z"],
            inputs: &[],
            stdin: b"",
            stdout: "\n7-Zip (a) 18.01 (x86) : Copyright (c) 1999-2018 Igor Pavlov : 2018-01-28\n\nScanning the drive for archives:\n  0M Scan\r         \r1 file, 190 bytes (1 KiB)\n\nListing archive: t.7z\n\n--\nPath = t.7z\nType = 7z\nPhysical Size = 190\nHeaders Size = 160\nMethod = LZMA2:12\nSolid = +\nBlocks = 1\n\n   Date      Time    Attr         Size   Compressed  Name\n------------------- ----- ------------ ------------  ------------------------\n2021-06-01 12:00:00 D....            0            0  in\n2021-06-01 12:00:00 ....A            6           30  in\\a.txt\n2021-06-01 12:00:00 ....A           20               in\\b.txt\n------------------- ----- ------------ ------------  ------------------------\n2021-06-01 12:00:00                 26           30  2 files, 1 folders\n",
            end: Exit(0),
            outputs: &[],
            dispatches: 278851,
        },
        Case {
            program: SZ,
            args: &["t", "t.7z"],
            inputs: &[],
            stdin: b"",
            stdout: "\n7-Zip (a) 18.01 (x86) : Copyright (c) 1999-2018 Igor Pavlov : 2018-01-28\n\nScanning the drive for archives:\n  0M Scan\r         \r1 file, 190 bytes (1 KiB)\n\nTesting archive: t.7z\n--\nPath = t.7z\nType = 7z\nPhysical Size = 190\nHeaders Size = 160\nMethod = LZMA2:12\nSolid = +\nBlocks = 1\n\n  0%\r    \rEverything is Ok\n\nFolders: 1\nFiles: 2\nSize:       26\nCompressed: 190\n",
            end: Exit(0),
            outputs: &[],
            dispatches: 289353,
        },
        Case {
            program: SZ,
            args: &["x", "-ox7", "t.7z"],
            inputs: &[],
            stdin: b"",
            stdout: "\n7-Zip (a) 18.01 (x86) : Copyright (c) 1999-2018 Igor Pavlov : 2018-01-28\n\nScanning the drive for archives:\n  0M Scan\r         \r1 file, 190 bytes (1 KiB)\n\nExtracting archive: t.7z\n--\nPath = t.7z\nType = 7z\nPhysical Size = 190\nHeaders Size = 160\nMethod = LZMA2:12\nSolid = +\nBlocks = 1\n\n  0%\r    \rEverything is Ok\n\nFolders: 1\nFiles: 2\nSize:       26\nCompressed: 190\n",
            end: Exit(0),
            outputs: &[
                ("x7/in/a.txt", SameAs("in/a.txt")),
                ("x7/in/b.txt", SameAs("in/b.txt")),
            ],
            dispatches: 309688,
        },
        Case {
            program: SZ,
            args: &["a", "t.zip", "in"],
            inputs: &[],
            stdin: b"",
            stdout: "\n7-Zip (a) 18.01 (x86) : Copyright (c) 1999-2018 Igor Pavlov : 2018-01-28\n\nScanning the drive:\n  0M Scan \r          \r1 folder, 2 files, 26 bytes (1 KiB)\n\nCreating archive: t.zip\n\nAdd new data to archive: 1 folder, 2 files, 26 bytes (1 KiB)\n\n  0%\r    \r\nFiles read from disk: 2\nArchive size: 422 bytes (1 KiB)\nEverything is Ok\n",
            end: Exit(0),
            outputs: &[("t.zip", Sha1("fc190cd239835adb"))],
            dispatches: 482642,
        },
        Case {
            program: SZ,
            args: &["l", "t.zip"],
            inputs: &[],
            stdin: b"",
            stdout: "\n7-Zip (a) 18.01 (x86) : Copyright (c) 1999-2018 Igor Pavlov : 2018-01-28\n\nScanning the drive for archives:\n  0M Scan\r         \r1 file, 422 bytes (1 KiB)\n\nListing archive: t.zip\n\n--\nPath = t.zip\nType = zip\nPhysical Size = 422\n\n   Date      Time    Attr         Size   Compressed  Name\n------------------- ----- ------------ ------------  ------------------------\n2021-06-01 12:00:00 D....            0            0  in\n2021-06-01 12:00:00 ....A            6            6  in\\a.txt\n2021-06-01 12:00:00 ....A           20           20  in\\b.txt\n------------------- ----- ------------ ------------  ------------------------\n2021-06-01 12:00:00                 26           26  2 files, 1 folders\n",
            end: Exit(0),
            outputs: &[],
            dispatches: 238149,
        },
        Case {
            program: SZ,
            args: &["t", "t.zip"],
            inputs: &[],
            stdin: b"",
            stdout: "\n7-Zip (a) 18.01 (x86) : Copyright (c) 1999-2018 Igor Pavlov : 2018-01-28\n\nScanning the drive for archives:\n  0M Scan\r         \r1 file, 422 bytes (1 KiB)\n\nTesting archive: t.zip\n--\nPath = t.zip\nType = zip\nPhysical Size = 422\n\n  0%\r    \rEverything is Ok\n\nFolders: 1\nFiles: 2\nSize:       26\nCompressed: 422\n",
            end: Exit(0),
            outputs: &[],
            dispatches: 248907,
        },
        Case {
            program: SZ,
            args: &["x", "-oxz", "t.zip"],
            inputs: &[],
            stdin: b"",
            stdout: "\n7-Zip (a) 18.01 (x86) : Copyright (c) 1999-2018 Igor Pavlov : 2018-01-28\n\nScanning the drive for archives:\n  0M Scan\r         \r1 file, 422 bytes (1 KiB)\n\nExtracting archive: t.zip\n--\nPath = t.zip\nType = zip\nPhysical Size = 422\n\n  0%\r    \rEverything is Ok\n\nFolders: 1\nFiles: 2\nSize:       26\nCompressed: 422\n",
            end: Exit(0),
            outputs: &[
                ("xz/in/a.txt", SameAs("in/a.txt")),
                ("xz/in/b.txt", SameAs("in/b.txt")),
            ],
            dispatches: 270726,
        },
        Case {
            // Adding to a file that is not an archive: 7-Zip throws a C++
            // exception (CSystemException(S_FALSE)) caught in main.
            program: SZ,
            args: &["a", "e.7z", "in"],
            inputs: &[("e.7z", b"")],
            stdin: b"",
            stdout: "\n7-Zip (a) 18.01 (x86) : Copyright (c) 1999-2018 Igor Pavlov : 2018-01-28\n\nOpen archive: e.7z\n",
            end: Exit(2),
            outputs: &[("e.7z", Sha1("da39a3ee5e6b4b0d"))],
            dispatches: 199642,
        },
        Case {
            program: "wine-8.0/attrib.exe",
            args: &["in\\a.txt"],
            inputs: &[],
            stdin: b"",
            stdout: "A            C:\\in\\a.txt\n",
            end: Exit(0),
            outputs: &[],
            dispatches: 1097,
        },
        Case {
            program: "wine-8.0/find.exe",
            args: &["x", "in\\b.txt"],
            inputs: &[],
            stdin: b"",
            stdout: "\r\n---------- IN\\B.TXT\r\nline x one\r\nx two\r\n",
            end: Exit(0),
            outputs: &[],
            dispatches: 1776,
        },
        Case {
            // No file: find filters its console input.
            program: "wine-8.0/find.exe",
            args: &["x"],
            inputs: &[],
            stdin: b"ax\r\nb\r\ncx\r\n",
            stdout: "ax\r\ncx\r\n",
            end: Exit(0),
            outputs: &[],
            dispatches: 1230,
        },
        Case {
            program: "wine-8.0/xcopy.exe",
            args: &["in", "copy\\"],
            inputs: &[],
            stdin: b"",
            stdout: "in\\a.txt\nin\\b.txt\n2 file(s) copied\n",
            end: Exit(0),
            outputs: &[
                ("copy/a.txt", SameAs("in/a.txt")),
                ("copy/b.txt", SameAs("in/b.txt")),
            ],
            dispatches: 3205,
        },
        Case {
            program: "wine-8.0/whoami.exe",
            args: &[],
            inputs: &[],
            stdin: b"",
            stdout: "MAINEMU\\mainemu\r\n",
            end: Exit(0),
            outputs: &[],
            dispatches: 171,
        },
        Case {
            program: "wine-8.0/reg.exe",
            args: &["query", "HKCU\\Software\\Nope"],
            inputs: &[],
            stdin: b"",
            stdout: "reg: Unable to find the specified registry key\n",
            end: Exit(1),
            outputs: &[],
            dispatches: 1100,
        },
        Case {
            program: "wine-8.0/reg.exe",
            args: &["add", "HKCU\\Software\\X", "/v", "a", "/d", "b", "/f"],
            inputs: &[],
            stdin: b"",
            stdout: "reg: Unable to access or create the specified registry key\n",
            end: Exit(1),
            outputs: &[],
            dispatches: 1008,
        },
        Case {
            // Wine's own wsprintfA/W conformance test: all pass.
            program: "wine-tests/user32_wsprintf.exe",
            args: &[],
            inputs: &[],
            stdin: b"",
            stdout: "wsprintf.c:100: Tests skipped: Multi-byte wsprintfA test isn't available for the current codepage\n\
                     wsprintf.c:204: Tests skipped: Multi-byte wsprintfW test isn't available for the current codepage\n\
                     0100:wsprintf: 58 tests executed (0 marked as todo, 0 as flaky, 0 failures), 2 skipped.\n",
            end: Exit(0),
            outputs: &[],
            dispatches: 17607,
        },
        Case {
            // setupapi is not modelled: the run stops at its first call,
            // naming it and its caller.
            program: "wine-8.0/expand.exe",
            args: &["in\\a.txt", "o.txt"],
            inputs: &[],
            stdin: b"",
            stdout: "",
            end: Unimplemented("unimplemented SETUPAPI!SetupGetFileCompressionInfoExA called from 0x0040147d"),
            outputs: &[("o.txt", Missing)],
            dispatches: 99,
        },
        Case {
            program: "re2c-4.0/re2c.exe",
            // The goal: lexer.c equal to the native re2c 4.0's
            // (`re2c --no-generation-date -o lexer.c lexer.re`: SHA-1
            // f0125862b7d9c5a7...); today no output yet.
            args: &["--no-generation-date", "-o", "lexer.c", "lexer.re"],
            inputs: &[("lexer.re", include_bytes!("programs/lexer.re"))],
            stdin: b"",
            stdout: "",
            // Its start-up SEH and C++ frames run, its SSE code runs on the
            // shared CPU; then it constructs an iostream: msvcp140's C++
            // library is the next piece.
            end: Unimplemented("unimplemented MSVCP140!??0?$basic_ios@DU?$char_traits@D@std@@@std@@IAE@XZ called from 0x004025a1"),
            outputs: &[("lexer.c", Missing)],
            dispatches: 1004307,
        },
    ]
}

fn sha1_16(b: &[u8]) -> String {
    Sha1::digest(b)
        .iter()
        .take(8)
        .map(|x| format!("{x:02x}"))
        .collect()
}

fn write_input(dir: &Path, rel: &str, bytes: &[u8]) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, bytes).unwrap();
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(MTIME_UNIX);
    // The file and each directory up to the scratch root get the fixed time.
    let mut q = Some(p.as_path());
    while let Some(x) = q.filter(|x| x.starts_with(dir) && *x != dir) {
        std::fs::File::open(x).unwrap().set_modified(t).unwrap();
        q = x.parent();
    }
}

/// One row's result as text: what both passes must agree on, and what the
/// table is compared with.
struct Got {
    summary: String,
    stdout: String,
    ending: Ending,
    dispatches: u64,
    files: Vec<(String, Option<Vec<u8>>)>,
}

fn run_row(real: &Path, dir: &Path, c: &Case) -> Got {
    for (rel, bytes) in c.inputs {
        write_input(dir, rel, bytes);
    }
    let exe = real.join(c.program);
    let args: Vec<String> = c.args.iter().map(|s| s.to_string()).collect();
    let mut setup = Setup::for_program(&exe, &args, &[('C', dir.to_path_buf())], &[]).unwrap();
    setup.stdin = Box::new(c.stdin);
    let bytes = std::fs::read(&exe).unwrap();
    let mut p = Process::with_setup(&bytes, setup).unwrap();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let s = run(&mut p, 100_000_000, &mut |stream, b| {
        if stream == 2 { &mut err } else { &mut out }.extend_from_slice(b)
    });
    let files: Vec<(String, Option<Vec<u8>>)> = c
        .outputs
        .iter()
        .map(|(rel, _)| (rel.to_string(), std::fs::read(dir.join(rel)).ok()))
        .collect();
    let hashes: Vec<String> = files
        .iter()
        .map(|(r, b)| format!("{r}={}", b.as_deref().map_or("-".into(), sha1_16)))
        .collect();
    Got {
        summary: format!(
            "{} {:?}: {:?} after {} dispatches; stdout {:?}; stderr {:?}; api {:?}; files {hashes:?}",
            c.program, c.args, s.ending, s.dispatches, String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&err), s.api_calls
        ),
        stdout: String::from_utf8_lossy(&out).into_owned(),
        ending: s.ending,
        dispatches: s.dispatches,
        files,
    }
}

/// The table's complaints about one row (empty: as expected).
fn check(dir: &Path, c: &Case, g: &Got) -> Vec<String> {
    let mut bad = Vec::new();
    if g.stdout != c.stdout {
        bad.push(format!("stdout {:?}", g.stdout));
    }
    let end_ok = match (&c.end, &g.ending) {
        (End::Exit(w), Ending::Exit { code }) => w == code,
        (End::Unimplemented(w), Ending::Unimplemented { report }) => w == report,
        (End::Stop(w), Ending::Stop { report }) => w == report,
        _ => false,
    };
    if !end_ok {
        bad.push(format!("ending {:?}, want {:?}", g.ending, c.end));
    }
    if g.dispatches != c.dispatches {
        bad.push(format!(
            "dispatches {}, want {}",
            g.dispatches, c.dispatches
        ));
    }
    for ((rel, want), (_, got)) in c.outputs.iter().zip(&g.files) {
        let ok = match (want, got) {
            (Want::Sha1(h), Some(b)) => sha1_16(b) == *h,
            (Want::SameAs(o), Some(b)) => std::fs::read(dir.join(o)).ok().as_ref() == Some(b),
            (Want::Missing, None) => true,
            _ => false,
        };
        if !ok {
            bad.push(format!(
                "{rel}: {}, want {want:?}",
                got.as_deref().map_or("absent".into(), sha1_16)
            ));
        }
    }
    bad
}

#[test]
fn real_programs_run_exactly_and_twice_the_same() {
    let Some(real) = common::win32_real() else {
        return;
    };
    let cases = cases();
    let mut passes = Vec::new();
    let mut failures = Vec::new();
    for pass in 0..2 {
        let dir = tempfile::tempdir().unwrap();
        let mut summaries = Vec::new();
        for c in &cases {
            let t = std::time::Instant::now();
            let g = run_row(&real, dir.path(), c);
            eprintln!(
                "pass {pass}: {} {:?}: {:.2}s",
                c.program,
                c.args,
                t.elapsed().as_secs_f64()
            );
            if pass == 0 {
                for b in check(dir.path(), c, &g) {
                    failures.push(format!("{} {:?}: {b}", c.program, c.args));
                }
            }
            summaries.push(g.summary);
        }
        // The host's 7-Zip, when installed, reads the archives mainemu's 7za made.
        if pass == 0 {
            host_7zz_agrees(dir.path());
        }
        passes.push(summaries);
    }
    for (a, b) in passes[0].iter().zip(&passes[1]) {
        if a != b {
            failures.push(format!("second pass differs:\n  {a}\n  {b}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
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
