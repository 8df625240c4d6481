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
        ("seh.exe", 7440, "exit 3221225477"),
    ];
    for (name, dispatches, ending) in cases {
        let prog = Program {
            exe: dir.join(name),
            args: vec![],
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
