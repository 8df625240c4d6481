//! Shared test helpers: the mingw-built test programs and the real-program folder.
#![allow(dead_code)]
use std::path::PathBuf;

pub mod arms;

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

/// A process for test program `name` with `args`: C: mapped to a fresh
/// empty directory (`tag` keeps tests running at once apart), stdin empty.
/// Returns it and the C: directory, or `None` (with a skip line) without
/// the compiler.
pub fn process_with_c(
    name: &str,
    args: &[&str],
    tag: &str,
) -> Option<(mainemu::process::Process, PathBuf)> {
    let dir = programs()?;
    let c = std::env::temp_dir().join(format!("mainemu-{tag}-{}-{name}", std::process::id()));
    std::fs::remove_dir_all(&c).ok();
    std::fs::create_dir_all(&c).unwrap();
    let exe = dir.join(name);
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let mut setup =
        mainemu::process::Setup::for_program(&exe, &args, &[('C', c.clone())], &[]).unwrap();
    setup.stdin = Box::new(std::io::empty());
    let bytes = std::fs::read(&exe).unwrap();
    let p = mainemu::process::Process::with_setup(&bytes, setup).unwrap();
    Some((p, c))
}

/// Runs the rows of `survey/MANIFEST` whose expected run takes at most
/// `max_dispatches` under l0 and l1, each in its own C:; returns how many
/// rows ran and every complaint (a row not as expected, l1's summary not
/// l0's). `None` (with a skip line) without ../shared/win32-real.
pub fn wine_sample(manifest: &str, max_dispatches: u64) -> Option<(usize, Vec<String>)> {
    use mainemu::run::Arm;
    use mainemu::survey::{load, row_dir, run_case, Verdict};
    let real = win32_real()?;
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("survey")
        .join(manifest);
    let m = load(&path).unwrap();
    let dir = path.parent().unwrap();
    let budget = m.budget.unwrap();
    let top = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut sampled = 0;
    for (i, c) in m.cases.iter().enumerate() {
        if c.dispatches.unwrap_or(u64::MAX) > max_dispatches {
            continue;
        }
        sampled += 1;
        let mut sums = Vec::new();
        for (k, arm) in [Arm::L0, Arm::L1].into_iter().enumerate() {
            let d = row_dir(&m, &top.path().join(format!("arm{k}")), i).unwrap();
            match run_case(dir, &real, &d, c, arm, budget) {
                Ok(g) => {
                    if g.verdict != Verdict::Passed {
                        failures.push(format!(
                            "{} ({arm:?}): {}",
                            c.program,
                            g.complaints.join("; ")
                        ));
                    }
                    sums.push(g.summary);
                }
                Err(e) => failures.push(format!("{} ({arm:?}): {e}", c.program)),
            }
        }
        if sums.len() == 2 && sums[0] != sums[1] {
            failures.push(format!("l1 differs from l0:\n  {}\n  {}", sums[0], sums[1]));
        }
    }
    eprintln!(
        "{manifest} sample: {sampled} of {} exes under l0 and l1",
        m.cases.len()
    );
    Some((sampled, failures))
}
