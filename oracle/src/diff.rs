//! `oracle diff`: one program, two or more arms, in lockstep; on a
//! divergence, bisect to the first differing dispatch, print it and write a
//! repro file.
//!
//! Owns resolving the program (a path, or a built-in corpus name with its
//! manifest settings), the text report and the exit status. It must not
//! compare or bisect by itself (that is [`crate::compare`] and
//! [`crate::bisect`]).

use crate::bisect::{bisect, BisectError, Divergence};
use crate::compare::{lockstep, Lockstep, Options};
use crate::repro::{Repro, SliceRepro};
use crate::slicing::SliceDep;
use crate::spec::{Companion, RunSpec};
use crate::state::side_by_side;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Resolves PROGRAM: an existing path, else a built-in corpus program name
/// (whose manifest gives budget, keys, args, companions and DOS version).
pub fn resolve_program(program: &str, budget: Option<u64>) -> Result<RunSpec, String> {
    let p = Path::new(program);
    if p.exists() {
        return Ok(RunSpec::new(p, budget.unwrap_or(DEFAULT_BUDGET)));
    }
    if !program.contains('/') && !program.contains('\\') && !program.contains('.') {
        if let Ok(c) = corpus_dos::builtin() {
            if let Some(cp) = c.get(program) {
                return RunSpec::from_corpus(&c, cp, budget);
            }
        }
    }
    Err(format!(
        "{program}: no such program file (nor a built-in corpus program of that name)"
    ))
}

/// Budget for a program given by path when `--dispatches` is not given.
pub const DEFAULT_BUDGET: u64 = 20_000_000;

/// What a diff found.
pub struct DiffResult {
    pub lockstep: Lockstep,
    /// For each non-reference arm that diverged: the bisected divergence or
    /// why bisection failed (with the slice-dependent arms it found).
    pub divergences: Vec<(String, Result<Divergence, BisectError>)>,
}

/// Runs the diff.
pub fn diff(
    spec: &RunSpec,
    arms: &[String],
    opts: &Options,
    fanout: u64,
    progress: &mut dyn FnMut(u64),
) -> Result<DiffResult, String> {
    if arms.len() < 2 {
        return Err("diff needs at least two arms (e.g. --arms l1,only-naive)".into());
    }
    let ls = lockstep(spec, arms, opts, progress)?;
    let mut divergences = Vec::new();
    for a in &ls.arms[1..] {
        if let Some(d) = &a.diff {
            let pair = [arms[0].clone(), a.arm.clone()];
            divergences.push((
                a.arm.clone(),
                bisect(spec, &pair, d.last_agree, d.sample, fanout),
            ));
        }
    }
    Ok(DiffResult {
        lockstep: ls,
        divergences,
    })
}

/// The text report of one divergence.
pub fn describe(d: &Divergence) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} diverged from {}: samples agreed at dispatch {}, differed at {}",
        d.arms[1], d.arms[0], d.window.0, d.window.1
    );
    let _ = writeln!(
        s,
        "first differing dispatch: {} (found with {} re-run(s) from scratch)",
        d.dispatch, d.reruns
    );
    let _ = writeln!(s, "differs: {}", d.fields.join(", "));
    if let Some(i) = &d.instruction {
        let _ = writeln!(s, "instruction: {}", i.line());
    }
    for (arm, site) in d.arms.iter().zip(&d.sites) {
        let _ = writeln!(
            s,
            "  site in {arm}: {}",
            site.as_deref().unwrap_or("(the arm cannot say)")
        );
    }
    let _ = writeln!(s, "\nat dispatch {} (both):", d.dispatch.saturating_sub(1));
    let _ = writeln!(s, "  CS:IP {:04X}:{:04X}", d.before.cs, d.before.ip);
    let _ = writeln!(s, "\nat dispatch {}:", d.dispatch);
    s.push_str(&side_by_side(
        &[&d.arms[0], &d.arms[1]],
        &[&d.states[0], &d.states[1]],
    ));
    if !d.ram.is_empty() {
        let _ = writeln!(s, "RAM differs at:");
        for r in &d.ram {
            let _ = writeln!(s, "  {} +{}: {} | {}", r.addr, r.len, r.a, r.b);
        }
    }
    if let Some(f) = &d.frame {
        let _ = writeln!(s, "frame: {f}");
    }
    if let Some([a, b]) = &d.console {
        let _ = writeln!(s, "console of {} ends:\n{a}", d.arms[0]);
        let _ = writeln!(s, "console of {} ends:\n{b}", d.arms[1]);
    }
    s
}

/// Where a diff writes the repro of `arm` by default.
pub fn default_repro_path(spec: &RunSpec, arm: &str, d: u64) -> PathBuf {
    let stem = spec
        .program
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("program")
        .to_ascii_lowercase();
    PathBuf::from("out")
        .join("repro")
        .join(format!("{stem}-{}-d{d}.json", sanitize(arm)))
}

/// An arm name as a file-name part.
pub fn sanitize(arm: &str) -> String {
    arm.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Where a diff writes the slice repro of a slice-dependent `arm` by default.
pub fn default_slice_repro_path(spec: &RunSpec, arm: &str, d: u64) -> PathBuf {
    let stem = spec
        .program
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("program")
        .to_ascii_lowercase();
    PathBuf::from("out")
        .join("repro")
        .join(format!("{stem}-{}-slices-d{d}.json", sanitize(arm)))
}

/// Writes the slice repro of a slice-dependent arm found while bisecting
/// `arms[1]` against `arms[0]` over `window`.
pub fn write_slice_repro(
    spec: &RunSpec,
    dep: &SliceDep,
    arms: &[String; 2],
    window: (u64, u64),
    path: &Path,
) -> Result<SliceRepro, String> {
    let r = SliceRepro::new(spec, dep, arms, window);
    r.save(path)?;
    Ok(r)
}

/// Writes the repro of a divergence.
pub fn write_repro(spec: &RunSpec, d: &Divergence, path: &Path) -> Result<Repro, String> {
    let r = Repro::new(spec, d);
    r.save(path)?;
    Ok(r)
}

/// Parses `--companion "PATH ARGS"`.
pub fn parse_companion(s: &str) -> Companion {
    let (p, a) = s.split_once(' ').unwrap_or((s, ""));
    Companion {
        program: PathBuf::from(p),
        args: a.trim().to_string(),
    }
}
