//! The mainemu side of a gate: the design's mainemu arm against mainemu's
//! reference arm on mainemu's own test programs (built by
//! `mainemu/tests/programs/build.sh` with mingw-w64) and on the gate file's
//! further programs (`[[mainemu.program]]`, e.g. 7-Zip's benchmark from
//! `../shared/win32-real`).
//!
//! Owns which programs run, their numbers and the `mainemu exactness`
//! criterion. It must not run or compare arms itself: every program goes
//! through [`crate::win32::compare`] (fresh runs to sample budgets, every
//! observable compared, a difference bisected to its dispatch), the same
//! comparison as `oracle diff --engine mainemu`.

use super::eval::{Criterion, Verdict};
use super::file::GateFile;
use crate::win32::{self, Program};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One program's result on the mainemu side.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MainemuNumbers {
    /// The EXE and its arguments as run.
    pub program: String,
    /// `exact`, `diverged` or `failed`.
    pub status: String,
    /// The reference arm's dispatches at its end (0 when it failed).
    pub dispatches: u64,
    /// The reference arm's ending (`exit 0`, `budget`, a stop report).
    pub ending: String,
    /// Where the arms first differ (`at DISPATCH: ARM differs in FIELDS`),
    /// or why the program could not be compared.
    pub detail: Option<String>,
}

/// What the mainemu side measured.
pub struct MainemuSide {
    pub criterion: Criterion,
    pub programs: Vec<MainemuNumbers>,
    /// Lines about programs skipped (optional and absent).
    pub notes: Vec<String>,
}

/// `build.sh` of mainemu's test programs: under `root`, else beside the
/// oracle crate this binary was built from (a gates folder outside the
/// checkout, as in the tests).
fn build_script(root: &Path) -> PathBuf {
    let under_root = root.join("mainemu/tests/programs/build.sh");
    if under_root.exists() {
        return under_root;
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../mainemu/tests/programs/build.sh")
}

/// Builds mainemu's test programs (idempotent: build.sh rebuilds only what
/// is older than its source) and lists them.
fn test_programs(root: &Path, filter: Option<&str>) -> Result<Vec<PathBuf>, String> {
    let mingw = std::process::Command::new("i686-w64-mingw32-gcc")
        .arg("--version")
        .output();
    if !mingw.is_ok_and(|o| o.status.success()) {
        return Err(
            "i686-w64-mingw32-gcc is not installed, so mainemu's test programs cannot be built \
             (Debian: gcc-mingw-w64-i686)"
                .into(),
        );
    }
    let script = build_script(root);
    let out = script
        .parent()
        .map(|d| d.join("../../../target/mainemu-programs"))
        .ok_or("build.sh has no folder")?;
    let st = std::process::Command::new("bash")
        .arg(&script)
        .arg(&out)
        .status()
        .map_err(|e| format!("{}: {e}", script.display()))?;
    if !st.success() {
        return Err(format!("{} failed ({st})", script.display()));
    }
    // `a/b/../../..` spelled out, so the lines name the programs plainly.
    let out = out
        .canonicalize()
        .map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(win32::corpus(&out, filter))
}

/// `path` relative to `root` when it lies below it, else as given.
fn shown(path: &Path, root: &Path) -> String {
    let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let (p, r) = (canon(path), canon(root));
    p.strip_prefix(&r)
        .map(|rel| rel.display().to_string())
        .unwrap_or_else(|_| path.display().to_string())
}

/// One program compared: its numbers.
fn compare_one(
    prog: &Program,
    root: &Path,
    arms: &[mainemu::run::Arm],
    budget: u64,
    samples: u64,
) -> MainemuNumbers {
    let label = std::iter::once(shown(&prog.exe, root))
        .chain(prog.args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    match win32::compare(prog, arms, budget, samples) {
        Ok(v) => MainemuNumbers {
            program: label,
            status: if v.exact() { "exact" } else { "diverged" }.into(),
            dispatches: v.end.dispatches,
            ending: v.end.ending.clone(),
            detail: v.first_difference.map(|(at, arm, fields)| {
                format!("at {at}: {arm} differs in {}", fields.join(", "))
            }),
        },
        Err(e) => MainemuNumbers {
            program: label,
            status: "failed".into(),
            dispatches: 0,
            ending: String::new(),
            detail: Some(e),
        },
    }
}

/// Runs the mainemu side of `g`; `say` prints a line per program.
pub fn run(g: &GateFile, root: &Path, say: &dyn Fn(&str)) -> MainemuSide {
    let m = &g.mainemu;
    let threshold = format!("{} exact vs {}", m.arm, m.reference);
    let fail = |measured: String| MainemuSide {
        criterion: Criterion {
            name: "mainemu exactness".into(),
            measured,
            value: None,
            threshold: threshold.clone(),
            verdict: Verdict::Fail,
        },
        programs: Vec::new(),
        notes: Vec::new(),
    };
    if !mainemu::designs::has_arm(&m.arm) {
        return fail(format!("mainemu has no arm {}", m.arm));
    }
    let arms = match win32::parse_arms(&format!("{},{}", m.reference, m.arm)) {
        Ok(a) => a,
        Err(e) => return fail(e),
    };
    let mut runs: Vec<(Program, u64)> = Vec::new();
    let mut notes = Vec::new();
    if m.test_programs {
        match test_programs(root, m.filter.as_deref()) {
            Ok(list) => runs.extend(list.into_iter().map(|exe| {
                let p = Program {
                    exe,
                    args: Vec::new(),
                    input: None,
                };
                (p, m.dispatches)
            })),
            Err(e) => return fail(e),
        }
    }
    for p in &m.programs {
        let exe = root.join(&p.exe);
        if !exe.is_file() {
            let why = format!("{} absent", exe.display());
            if p.optional {
                let line = format!("mainemu {}: skipped ({why}; optional)", p.exe);
                say(&line);
                notes.push(line);
                continue;
            }
            return fail(why);
        }
        let prog = Program {
            exe,
            args: p.args.clone(),
            input: None,
        };
        runs.push((prog, p.dispatches.unwrap_or(m.dispatches)));
    }
    let mut programs = Vec::new();
    for (prog, budget) in &runs {
        let n = compare_one(prog, root, &arms, *budget, m.samples);
        say(&format!(
            "mainemu {}: {} ({} dispatches, {}){}",
            n.program,
            n.status,
            n.dispatches,
            n.ending,
            n.detail
                .as_deref()
                .map(|d| format!(": {d}"))
                .unwrap_or_default()
        ));
        programs.push(n);
    }
    let count = |s: &str| programs.iter().filter(|p| p.status == s).count();
    let (exact, diverged, failed) = (count("exact"), count("diverged"), count("failed"));
    let bad = diverged + failed;
    MainemuSide {
        criterion: Criterion {
            name: "mainemu exactness".into(),
            measured: format!(
                "{diverged} diverged, {failed} failed of {} ({} vs {}, {} samples each)",
                programs.len(),
                m.arm,
                m.reference,
                m.samples
            ),
            value: Some(bad as f64),
            threshold,
            verdict: Verdict::of(exact > 0 && bad as u64 <= g.exactness.max_divergences),
        },
        programs,
        notes,
    }
}
