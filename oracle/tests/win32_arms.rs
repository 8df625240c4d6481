//! `oracle diff/sweep --engine mainemu`: mainemu's mingw test programs under
//! l0 and l1, compared at sample budgets by fresh runs (exact dispatch
//! counts and endings asserted), and PE detection. Skips with a line when
//! mingw-w64 is absent (CI installs it).

use oracle::win32::{compare, corpus, is_pe, parse_arms, Program};
use std::path::PathBuf;

fn programs() -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = root.join("target/mainemu-programs");
    if std::process::Command::new("i686-w64-mingw32-gcc")
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(
            std::env::var("CI").is_err(),
            "CI must install gcc-mingw-w64-i686"
        );
        eprintln!("skip: i686-w64-mingw32-gcc not installed");
        return None;
    }
    let st = std::process::Command::new("bash")
        .arg(root.join("mainemu/tests/programs/build.sh"))
        .arg(&out)
        .status()
        .unwrap();
    assert!(st.success());
    Some(out)
}

#[test]
fn mainemu_arms_agree_on_the_test_programs() {
    let Some(dir) = programs() else { return };
    let arms = parse_arms("l0,l1").unwrap();
    // (program, dispatches at the end, ending)
    let cases = [
        ("hello.exe", 959, "exit 3"),
        ("threads.exe", 6_010_930, "exit 0"),
        ("seh.exe", 70872, "exit 3221225477"),
    ];
    for (name, dispatches, ending) in cases {
        let prog = Program {
            exe: dir.join(name),
            args: vec![],
            input: None,
        };
        let v = compare(&prog, &arms, 20_000_000, 4).unwrap();
        assert!(v.exact(), "{name}: {:?}", v.first_difference);
        assert_eq!(
            (v.end.dispatches, v.end.ending.as_str()),
            (dispatches, ending),
            "{name}"
        );
        assert_eq!(v.samples.len(), 5, "{name}");
        assert!(v.samples.iter().all(|s| s.1));
    }
    let all = corpus(&dir, None);
    assert!(all.iter().all(|p| is_pe(p)));
    assert!(all.iter().any(|p| p.ends_with("smc.exe")));
    assert!(!is_pe(&dir.join("gui_window.res.o")));
}

/// Wine's winemine (../shared/win32-real) under scripted input: l0 and l1
/// show the same frame (and registers, memory, ...) at every sample and
/// at the end; the end frame is the opened board that
/// mainemu/tests/gui_real.rs pins. Skips without win32-real.
#[test]
fn winemine_frames_agree_under_l0_and_l1() {
    let exe = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/win32-real/wine-8.0/winemine.exe");
    let exe = if exe.exists() {
        exe
    } else {
        PathBuf::from("/work/shared/win32-real/wine-8.0/winemine.exe")
    };
    if !exe.exists() {
        eprintln!("skip: ../shared/win32-real not present");
        return;
    }
    let prog = Program {
        exe,
        args: vec![],
        input: Some("click 24,200 @ 3000000".into()),
    };
    let v = compare(&prog, &parse_arms("l0,l1").unwrap(), 6_000_000, 6).unwrap();
    assert!(v.exact(), "{:?}", v.first_difference);
    assert_eq!(v.end.ending, "budget");
    assert_eq!(v.end.frame, 0xb83a_2fba_857b_4a66);
    assert_eq!(v.samples.len(), 7);
    // Both arms' end frames, embedded once in the HTML page.
    let frames: Vec<_> = v
        .frames
        .iter()
        .map(|f| (f.arm.as_str(), f.dispatches, f.hash.as_str()))
        .collect();
    assert_eq!(
        frames,
        [
            ("l0", 6_000_000, "b83a2fba857b4a66"),
            ("l1", 6_000_000, "b83a2fba857b4a66")
        ]
    );
    assert_eq!(v.pngs.len(), 1);
    let page = oracle::report::win32::render(
        "oracle diff",
        "winemine.exe",
        &["l0".into(), "l1".into()],
        std::slice::from_ref(&v),
        &[],
    );
    assert_eq!(
        page.matches(".fb83a2fba857b4a66{background-image:url(data:image/png;base64,iVBORw0KGgo")
            .count(),
        1
    );
    assert_eq!(page.matches("class=\"fr fb83a2fba857b4a66\"").count(), 2);
    assert!(page.contains("1 programs, 1 exact, 0 diverged, 0 failed"));
}
