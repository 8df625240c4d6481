//! `mainemu survey`: a manifest of programs with command lines, inputs and
//! expected results, run in order in one scratch directory mapped as C:,
//! each row judged passed, failed or stopped.
//!
//! Owns the manifest format (TOML, below), running a row (inputs written
//! with a fixed mtime, stdin, the arm, the budget) and judging it against
//! its expectations. `tests/real.rs` runs the same manifest, so the table of
//! real programs is declared once. It must not know any DLL.
//!
//! ```toml
//! root = "../../../shared/win32-real"   # programs are relative to it (relative to this file)
//! [[case]]
//! program = "7zip-18.01/7za.exe"
//! args = ["a", "t.7z", "in"]
//! inputs = { "in/a.txt" = "hello\n" }      # written before the row runs
//! input_files = { "lexer.re" = "../tests/programs/lexer.re" }   # copied (relative to this file)
//! stdin = ""
//! stdout = "..."                           # exact, when given
//! exit = 0                                 # or unimplemented = "..." / stop = "..." (the report, exactly)
//! dispatches = 1152769                     # exact, when given
//! outputs = { "t.7z" = { sha1 = "02ff331c3b132fdb" }, "x7/in/a.txt" = { same_as = "in/a.txt" }, "o.txt" = "missing" }
//! ```
//!
//! A row *passed* when every expectation holds; it *stopped* when the
//! program ended at an unimplemented call, an unhandled exception or the
//! budget where the row expected an exit; otherwise it *failed*.

use crate::process::{Process, Setup};
use crate::run::{run_arm, Arm, Ending};
use serde::Deserialize;
use sha1::{Digest, Sha1};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The inputs' fixed modification time, 2021-06-01 12:00 UTC (7-Zip stores
/// it in archives, so it must not be the host's clock).
pub const INPUT_MTIME_UNIX: u64 = 1_622_548_800;

/// Budget of a row unless the manifest says otherwise.
pub const DEFAULT_BUDGET: u64 = 100_000_000;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Where programs are, relative to the manifest file.
    pub root: String,
    #[serde(default)]
    pub budget: Option<u64>,
    #[serde(rename = "case")]
    pub cases: Vec<Case>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub program: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// Why the row is there (shown in reports).
    #[serde(default)]
    pub note: String,
    #[serde(default)]
    pub inputs: BTreeMap<String, String>,
    #[serde(default)]
    pub input_files: BTreeMap<String, String>,
    #[serde(default)]
    pub stdin: String,
    pub stdout: Option<String>,
    pub exit: Option<u32>,
    pub unimplemented: Option<String>,
    pub stop: Option<String>,
    pub dispatches: Option<u64>,
    #[serde(default)]
    pub outputs: BTreeMap<String, Want>,
}

/// What an output file must hold.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Want {
    /// The first 16 hex digits of its SHA-1.
    Sha1(String),
    /// The same bytes as this other file of the scratch directory.
    SameAs(String),
    /// Absent.
    Missing,
}

/// How a row came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Passed,
    Failed,
    Stopped,
}

/// What one row left.
#[derive(Clone, Debug)]
pub struct Got {
    pub ending: Ending,
    pub dispatches: u64,
    /// Everything two runs of the row must agree on, as one line.
    pub summary: String,
    pub complaints: Vec<String>,
    pub verdict: Verdict,
}

/// Reads and parses a manifest.
pub fn load(path: &Path) -> Result<Manifest, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The manifest's program root, resolved against the manifest's directory.
pub fn root_of(manifest_path: &Path, m: &Manifest) -> PathBuf {
    manifest_path
        .parent()
        .unwrap_or(Path::new("."))
        .join(&m.root)
}

/// The first 16 hex digits of the SHA-1 of `b`.
pub fn sha1_16(b: &[u8]) -> String {
    Sha1::digest(b)
        .iter()
        .take(8)
        .map(|x| format!("{x:02x}"))
        .collect()
}

fn write_input(dir: &Path, rel: &str, bytes: &[u8]) -> Result<(), String> {
    let p = dir.join(rel);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    std::fs::write(&p, bytes).map_err(|e| format!("{}: {e}", p.display()))?;
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(INPUT_MTIME_UNIX);
    // The file and each directory up to the scratch root get the fixed time.
    let mut q = Some(p.as_path());
    while let Some(x) = q.filter(|x| x.starts_with(dir) && *x != dir) {
        if let Ok(f) = std::fs::File::open(x) {
            f.set_modified(t).ok();
        }
        q = x.parent();
    }
    Ok(())
}

/// Runs row `c` with programs under `root` and C: = `dir` (inputs written
/// first), on `arm` with `budget`, and judges it.
pub fn run_case(
    manifest_dir: &Path,
    root: &Path,
    dir: &Path,
    c: &Case,
    arm: Arm,
    budget: u64,
) -> Result<Got, String> {
    for (rel, text) in &c.inputs {
        write_input(dir, rel, text.as_bytes())?;
    }
    for (rel, src) in &c.input_files {
        let from = manifest_dir.join(src);
        let b = std::fs::read(&from).map_err(|e| format!("{}: {e}", from.display()))?;
        write_input(dir, rel, &b)?;
    }
    let exe = root.join(&c.program);
    let mut setup = Setup::for_program(&exe, &c.args, &[('C', dir.to_path_buf())], &[])?;
    setup.stdin = Box::new(std::io::Cursor::new(c.stdin.clone().into_bytes()));
    let bytes = std::fs::read(&exe).map_err(|e| format!("{}: {e}", exe.display()))?;
    let mut p = Process::with_setup(&bytes, setup).map_err(|e| e.to_string())?;
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let s = run_arm(&mut p, arm, budget, &mut |stream, b| {
        if stream == 2 { &mut err } else { &mut out }.extend_from_slice(b)
    });
    let files: Vec<(String, Option<Vec<u8>>)> = c
        .outputs
        .keys()
        .map(|rel| (rel.clone(), std::fs::read(dir.join(rel)).ok()))
        .collect();
    let hashes: Vec<String> = files
        .iter()
        .map(|(r, b)| format!("{r}={}", b.as_deref().map_or("-".into(), sha1_16)))
        .collect();
    let stdout = String::from_utf8_lossy(&out).into_owned();
    let summary = format!(
        "{} {:?}: {:?} after {} dispatches; stdout {:?}; stderr {:?}; api {:?}; files {hashes:?}",
        c.program,
        c.args,
        s.ending,
        s.dispatches,
        stdout,
        String::from_utf8_lossy(&err),
        s.api_calls
    );
    let complaints = check(dir, c, &s.ending, s.dispatches, &stdout, &files);
    let expected_exit = c.unimplemented.is_none() && c.stop.is_none();
    let verdict = if complaints.is_empty() {
        Verdict::Passed
    } else if expected_exit && !matches!(s.ending, Ending::Exit { .. }) {
        Verdict::Stopped
    } else {
        Verdict::Failed
    };
    Ok(Got {
        ending: s.ending,
        dispatches: s.dispatches,
        summary,
        complaints,
        verdict,
    })
}

/// The row's complaints (empty: as expected).
fn check(
    dir: &Path,
    c: &Case,
    ending: &Ending,
    dispatches: u64,
    stdout: &str,
    files: &[(String, Option<Vec<u8>>)],
) -> Vec<String> {
    let mut bad = Vec::new();
    if let Some(w) = &c.stdout {
        if stdout != w {
            bad.push(format!("stdout {stdout:?}"));
        }
    }
    let end_ok = match ending {
        Ending::Exit { code } => c.exit == Some(*code),
        Ending::Unimplemented { report } => c.unimplemented.as_deref() == Some(report),
        Ending::Stop { report } => c.stop.as_deref() == Some(report),
        Ending::Budget | Ending::Idle => false,
    };
    if !end_ok {
        bad.push(format!("ending {ending:?}"));
    }
    if let Some(w) = c.dispatches {
        if dispatches != w {
            bad.push(format!("dispatches {dispatches}, want {w}"));
        }
    }
    for (rel, got) in files {
        let want = &c.outputs[rel];
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

/// A whole survey: every row in order in one fresh scratch directory.
pub struct Report {
    pub rows: Vec<(Case, Result<Got, String>)>,
}

impl Report {
    pub fn count(&self, v: Verdict) -> usize {
        self.rows
            .iter()
            .filter(|(_, g)| g.as_ref().map_or(v == Verdict::Failed, |g| g.verdict == v))
            .count()
    }

    /// `survey: N programs, P passed, F failed, S stopped`.
    pub fn last_line(&self) -> String {
        format!(
            "survey: {} programs, {} passed, {} failed, {} stopped",
            self.rows.len(),
            self.count(Verdict::Passed),
            self.count(Verdict::Failed),
            self.count(Verdict::Stopped)
        )
    }
}

/// Runs every row of the manifest at `path` on `arm`; `progress(i, row)` is
/// called after each row.
pub fn run_manifest(
    path: &Path,
    root: Option<&Path>,
    arm: Arm,
    scratch: &Path,
    progress: &mut dyn FnMut(usize, &Case, &Result<Got, String>),
) -> Result<Report, String> {
    let m = load(path)?;
    let root = root
        .map(Path::to_path_buf)
        .unwrap_or_else(|| root_of(path, &m));
    if !root.is_dir() {
        return Err(format!("program root {} is absent", root.display()));
    }
    let manifest_dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let budget = m.budget.unwrap_or(DEFAULT_BUDGET);
    let mut rows = Vec::new();
    for (i, c) in m.cases.iter().enumerate() {
        let g = run_case(manifest_dir, &root, scratch, c, arm, budget);
        progress(i, c, &g);
        rows.push((c.clone(), g));
    }
    Ok(Report { rows })
}
