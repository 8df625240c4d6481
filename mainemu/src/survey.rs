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
//! input_files = { "lexer.re" = "../tests/programs/lexer.re" }   # copied (relative to this file; `@root/...`: to the program root)
//! stdin = ""
//! stdout = "..."                           # exact, when given
//! exit = 0                                 # or unimplemented = "..." / stop = "..." (the report, exactly; "budget": ran out of it)
//! dispatches = 1152769                     # exact, when given
//! outputs = { "t.7z" = { sha1 = "02ff331c3b132fdb" }, "x7/in/a.txt" = { same_as = "in/a.txt" }, "o.txt" = "missing" }
//! wine = { executed = 97, todo = 0, flaky = 0, failures = 16, skipped = 3 }   # Wine test summary, exact
//! ```
//!
//! Wine's conformance tests end with `<pid>:<test>: N tests executed (M
//! marked as todo, K as flaky, F failures), S skipped.`: a row's stdout is
//! parsed for those lines (summed) and [`Report::wine_table`] gives the
//! per-exe table (reached its summary, tests, failures, pass rate, where a
//! run that did not reach it stopped).
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
    /// Every row is one of Wine's conformance tests: the Wine table lists
    /// them all (also those that print no summary).
    #[serde(default)]
    pub wine_tests: bool,
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
    /// This row's budget when it needs more than the manifest's (a test
    /// that sleeps seconds of guest time), or less (a row expected to
    /// spend it waiting: `stop = "budget"`).
    pub budget: Option<u64>,
    #[serde(default)]
    pub outputs: BTreeMap<String, Want>,
    /// The Wine test summary the run must print (exact).
    pub wine: Option<WineCounts>,
}

/// The counts of Wine test summary lines (summed over the lines printed).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct WineCounts {
    pub executed: u64,
    #[serde(default)]
    pub todo: u64,
    #[serde(default)]
    pub flaky: u64,
    pub failures: u64,
    #[serde(default)]
    pub skipped: u64,
}

/// Parses every `N tests executed (M marked as todo, [K as flaky, ]F
/// failures), S skipped.` line of `stdout`; None when there is none.
pub fn wine_counts(stdout: &str) -> Option<WineCounts> {
    let mut total: Option<WineCounts> = None;
    for line in stdout.lines() {
        let Some(at) = line.find(" tests executed (") else {
            continue;
        };
        let num = |s: &str| -> Option<u64> { s.trim().parse().ok() };
        let head = &line[..at];
        let executed = num(head.rsplit([':', ' ']).next()?)?;
        let rest = &line[at + " tests executed (".len()..];
        let (inner, tail) = rest.split_once("), ")?;
        let mut c = WineCounts {
            executed,
            ..WineCounts::default()
        };
        for part in inner.split(", ") {
            let (n, what) = part.split_once(' ')?;
            let n = num(n)?;
            match what {
                "marked as todo" => c.todo = n,
                "as flaky" => c.flaky = n,
                "failures" | "failure" => c.failures = n,
                _ => return None,
            }
        }
        c.skipped = num(tail.strip_suffix(" skipped.")?)?;
        let t = total.get_or_insert_with(WineCounts::default);
        t.executed += c.executed;
        t.todo += c.todo;
        t.flaky += c.flaky;
        t.failures += c.failures;
        t.skipped += c.skipped;
    }
    total
}

/// Where a Wine test that printed no summary stopped: the unimplemented
/// call, or the test framework's `unhandled exception` line with the last
/// test it saw.
fn wine_stop(ending: &Ending, stdout: &str) -> String {
    if let Ending::Unimplemented { report } | Ending::Stop { report } = ending {
        return report.clone();
    }
    let line = |pat: &str| stdout.lines().rev().find(|l| l.contains(pat));
    match (line("unhandled exception"), line("last test seen")) {
        (Some(e), Some(t)) => {
            let e = e.split_once(": ").map_or(e, |x| x.1);
            let t = t.split(": this is").next().unwrap_or(t);
            format!("{e} (after {t})")
        }
        (Some(e), None) => e.to_string(),
        _ => ending.to_string(),
    }
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
    /// The Wine test summary lines' counts, if any were printed.
    pub wine: Option<WineCounts>,
    /// Where a run that printed no Wine summary stopped (see [`wine_stop`]).
    pub stopped_at: String,
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
        let from = match src.strip_prefix("@root/") {
            Some(r) => root.join(r),
            None => manifest_dir.join(src),
        };
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
    // The exe's own summary counts only when it ended normally: a child
    // process (a test running itself) prints its summary into the same
    // output, and a parent that then crashes did not reach its own.
    let own_end = matches!(s.ending, Ending::Exit { code } if code < 0xC000_0000);
    let wine = wine_counts(&stdout).filter(|_| own_end);
    let mut complaints = check(dir, c, &s.ending, s.dispatches, &stdout, &files);
    if c.wine.is_some() && c.wine != wine {
        complaints.push(format!("wine summary {wine:?}, want {:?}", c.wine));
    }
    let stopped_at = wine_stop(&s.ending, &stdout);
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
        wine,
        stopped_at,
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
        // A row that spends its budget waiting (a test polling for
        // something mainemu does not model) expects `stop = "budget"`.
        Ending::Budget => c.stop.as_deref() == Some("budget"),
        Ending::Idle => false,
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
    /// The manifest's `wine_tests` flag.
    pub wine_tests: bool,
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

impl Report {
    /// The Wine conformance table of a `wine_tests` manifest (else of the
    /// rows that expect or printed a Wine summary): one row per exe, then the totals line `wine: R of N exes
    /// reached their summary; T tests executed, F failures (P% passed)`.
    pub fn wine_table(&self) -> Option<String> {
        let rows: Vec<_> = self
            .rows
            .iter()
            .filter(|(c, g)| {
                self.wine_tests || c.wine.is_some() || g.as_ref().is_ok_and(|g| g.wine.is_some())
            })
            .collect();
        if rows.is_empty() {
            return None;
        }
        let mut t = String::from(
            "| exe | summary | tests | failures | todo | skipped | pass rate | stopped at |\n|---|---|---:|---:|---:|---:|---:|---|\n",
        );
        let (mut reached, mut tests, mut fails) = (0, 0, 0);
        for (c, g) in &rows {
            let name = c.program.rsplit('/').next().unwrap_or(&c.program);
            match g.as_ref().map(|g| (g.wine, g)) {
                Ok((Some(w), _)) => {
                    reached += 1;
                    tests += w.executed;
                    fails += w.failures;
                    t += &format!(
                        "| {name} | yes | {} | {} | {} | {} | {} | |\n",
                        w.executed,
                        w.failures,
                        w.todo,
                        w.skipped,
                        pass_rate(w.executed, w.failures)
                    );
                }
                Ok((None, g)) => {
                    t += &format!(
                        "| {name} | no | | | | | | {} |\n",
                        g.stopped_at.replace('|', "\\|")
                    )
                }
                Err(e) => t += &format!("| {name} | no | | | | | | {e} |\n"),
            }
        }
        t += &format!(
            "wine: {reached} of {} exes reached their summary; {tests} tests executed, {fails} failures ({} passed)\n",
            rows.len(),
            pass_rate(tests, fails)
        );
        Some(t)
    }
}

/// `99.95%` (two decimals, rounded down so 100% means no failure).
fn pass_rate(tests: u64, failures: u64) -> String {
    if tests == 0 {
        return "-".into();
    }
    let bp = (tests.saturating_sub(failures)) * 10_000 / tests;
    format!("{}.{:02}%", bp / 100, bp % 100)
}

/// The C: of row `i`: the scratch directory, or for a `wine_tests` manifest
/// a fresh subdirectory per row (the tests are independent and create and
/// delete files of their own, so a sample of rows runs as in the full table).
pub fn row_dir(m: &Manifest, scratch: &Path, i: usize) -> Result<PathBuf, String> {
    if !m.wine_tests {
        return Ok(scratch.to_path_buf());
    }
    let d = scratch.join(format!("row{i}"));
    std::fs::create_dir_all(&d).map_err(|e| format!("{}: {e}", d.display()))?;
    Ok(d)
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
        let dir = row_dir(&m, scratch, i)?;
        let g = run_case(
            manifest_dir,
            &root,
            &dir,
            c,
            arm,
            c.budget.unwrap_or(budget),
        );
        progress(i, c, &g);
        rows.push((c.clone(), g));
    }
    Ok(Report {
        rows,
        wine_tests: m.wine_tests,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wine_summary_lines_are_parsed_and_summed() {
        let out = "x.c:1: Test failed: no\n0100:environ: 97 tests executed (0 marked as todo, 0 as flaky, 16 failures), 3 skipped.\n\
                   0104:child: 5 tests executed (2 marked as todo, 1 failure), 0 skipped.\n";
        let c = wine_counts(out).unwrap();
        assert_eq!(
            c,
            WineCounts {
                executed: 102,
                todo: 2,
                flaky: 0,
                failures: 17,
                skipped: 3
            }
        );
        assert_eq!(wine_counts("no summary\n"), None);
        assert_eq!(pass_rate(97, 16), "83.50%");
        assert_eq!(pass_rate(3, 1), "66.66%");
        let crash = "directory.c:463: this is the last test seen before the exception\n0100:directory: unhandled exception c0000005 at 00000000\n";
        assert_eq!(
            wine_stop(&Ending::Exit { code: 0xC000_0005 }, crash),
            "unhandled exception c0000005 at 00000000 (after directory.c:463)"
        );
    }
}
