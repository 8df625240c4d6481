//! Shared test helpers: the mingw-built test programs and the real-program folder.
#![allow(dead_code)]
use std::path::PathBuf;

/// Builds `tests/programs` (once per test binary) and returns the output folder,
/// or `None` with a skip line when mingw-w64 is not installed (CI installs it,
/// so under CI=true a missing compiler fails).
pub fn programs() -> Option<PathBuf> {
    static DIR: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let out = root.join("../target/mainemu-programs");
        if std::process::Command::new("i686-w64-mingw32-gcc")
            .arg("--version")
            .output()
            .is_err()
        {
            assert!(
                std::env::var("CI").is_err(),
                "CI must install gcc-mingw-w64-i686"
            );
            eprintln!("skip: i686-w64-mingw32-gcc not installed (apt install gcc-mingw-w64-i686)");
            return None;
        }
        let st = std::process::Command::new("bash")
            .arg(root.join("tests/programs/build.sh"))
            .arg(&out)
            .status()
            .expect("run build.sh");
        assert!(st.success(), "tests/programs/build.sh failed");
        Some(out)
    })
    .clone()
}

/// `../shared/win32-real`, or `None` with a skip line.
pub fn win32_real() -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/win32-real");
    let p = if p.exists() {
        p
    } else {
        PathBuf::from("/work/shared/win32-real")
    };
    if p.join("MANIFEST.tsv").exists() {
        Some(p)
    } else {
        eprintln!("skip: ../shared/win32-real not present");
        None
    }
}
