//! Repro files: a divergence, small enough to check in, that a regression
//! test can load and re-run.
//!
//! Two kinds. A divergence repro (JSON, `format: "oracle-repro/1"`) holds
//! the run (program path, arguments, companions, DOS version, budget,
//! keys), the two arm names, the first differing dispatch, the instruction
//! there, the common state before it and both states at it. A slice repro
//! (`format: "oracle-slice-repro/1"`) holds the run, one arm, two slice
//! plans that end at the same dispatch and the arm's two different states
//! there (an arm that breaks invariant 2 by itself). Owns writing, loading
//! either (with clear errors for missing or corrupt files) and re-running
//! one. It must not search for the divergence itself (that is
//! [`crate::bisect`] and [`crate::slicing`]).

use crate::bisect::Divergence;
use crate::compare::advance;
use crate::slicing::{self, SliceDep, SlicePlan};
use crate::spec::RunSpec;
use crate::state::{side_by_side, State};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const FORMAT: &str = "oracle-repro/1";
pub const SLICE_FORMAT: &str = "oracle-slice-repro/1";

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repro {
    pub format: String,
    pub run: RunSpec,
    /// Reference arm first.
    pub arms: [String; 2],
    /// The first dispatch after which the arms differ.
    pub dispatch: u64,
    /// The instruction there, as text (for people).
    #[serde(default)]
    pub instruction: String,
    pub fields: Vec<String>,
    /// The common state at dispatch - 1.
    pub before: State,
    /// Both states at `dispatch`.
    pub states: [State; 2],
}

/// What re-running a repro found (one per check: size does not matter).
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Check {
    /// The arms agree at the recorded dispatch (the bug is fixed).
    Exact,
    /// They still differ there.
    Differs {
        fields: Vec<String>,
        states: [State; 2],
        /// Whether both states are exactly the recorded ones.
        same_as_recorded: bool,
    },
}

/// The workspace root (paths under it are stored relative to it).
fn workspace_root() -> PathBuf {
    let c = corpus_dos::builtin_root();
    c.parent().map(Path::to_path_buf).unwrap_or(c)
}

fn relativize(p: &Path) -> PathBuf {
    let root = workspace_root();
    match (p.canonicalize(), root.canonicalize()) {
        (Ok(a), Ok(r)) => a.strip_prefix(&r).map(Path::to_path_buf).unwrap_or(a),
        _ => p.to_path_buf(),
    }
}

fn resolve(p: &Path, base: Option<&Path>) -> PathBuf {
    if p.is_absolute() || p.exists() {
        return p.to_path_buf();
    }
    for dir in base
        .into_iter()
        .map(Path::to_path_buf)
        .chain([workspace_root()])
    {
        let c = dir.join(p);
        if c.exists() {
            return c;
        }
    }
    p.to_path_buf()
}

fn portable(run: &RunSpec) -> RunSpec {
    let mut run = run.clone();
    run.program = relativize(&run.program);
    for c in &mut run.companions {
        c.program = relativize(&c.program);
    }
    run
}

fn save_json<T: Serialize>(v: &T, path: &Path) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let text = serde_json::to_string_pretty(v).map_err(|e| e.to_string())?;
    std::fs::write(path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))
}

/// A slice-dependent arm: the same program run to the same dispatch under
/// two slice plans ends in two states.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SliceRepro {
    pub format: String,
    pub run: RunSpec,
    /// The slice-dependent arm.
    pub arm: String,
    /// The pair whose divergence bisection could not narrow (reference
    /// first), and the lockstep's sample window.
    pub found_with: [String; 2],
    pub window: (u64, u64),
    /// Where both plans end.
    pub dispatch: u64,
    /// Plan A (the lockstep's own) and plan B.
    pub plans: [SlicePlan; 2],
    pub fields: Vec<String>,
    /// The arm's state at the end of plan A and of plan B.
    pub states: [State; 2],
}

/// What re-running a slice repro found.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SliceCheck {
    /// Both plans end in the same state now (the bug is fixed).
    Consistent,
    /// They still end in different states.
    Dependent {
        dep: SliceDep,
        /// Whether both states are exactly the recorded ones.
        same_as_recorded: bool,
    },
}

impl SliceRepro {
    pub fn new(
        run: &RunSpec,
        d: &SliceDep,
        found_with: &[String; 2],
        window: (u64, u64),
    ) -> SliceRepro {
        SliceRepro {
            format: SLICE_FORMAT.into(),
            run: portable(run),
            arm: d.arm.clone(),
            found_with: found_with.clone(),
            window,
            dispatch: d.states[0].dispatches,
            plans: d.plans.clone(),
            fields: d.fields.clone(),
            states: d.states.clone(),
        }
    }

    pub fn save(&self, path: &Path) -> Result<(), String> {
        save_json(self, path)
    }

    /// Re-runs the arm from scratch under both plans and compares it with
    /// itself.
    pub fn check(&self) -> Result<SliceCheck, String> {
        match slicing::compare_plans(&self.run, &self.arm, &self.plans[0], &self.plans[1])? {
            None => Ok(SliceCheck::Consistent),
            Some(dep) => {
                let same = dep.states == self.states;
                Ok(SliceCheck::Dependent {
                    dep,
                    same_as_recorded: same,
                })
            }
        }
    }
}

/// Either kind of repro file.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnyRepro {
    Divergence(Repro),
    Slices(SliceRepro),
}

/// Loads a repro file of either kind (told apart by `format`).
pub fn load_any(path: impl AsRef<Path>) -> Result<AnyRepro, String> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    #[derive(Deserialize)]
    struct F {
        format: String,
    }
    let f: F = serde_json::from_str(&text)
        .map_err(|e| format!("{}: not an oracle repro file: {e}", path.display()))?;
    if f.format != SLICE_FORMAT {
        return load(path).map(AnyRepro::Divergence);
    }
    let mut r: SliceRepro = serde_json::from_str(&text)
        .map_err(|e| format!("{}: not an oracle slice repro file: {e}", path.display()))?;
    let base = path.parent();
    r.run.program = resolve(&r.run.program, base);
    for c in &mut r.run.companions {
        c.program = resolve(&c.program, base);
    }
    Ok(AnyRepro::Slices(r))
}

impl Repro {
    /// The repro of a divergence found on `run`. Program paths inside the
    /// workspace are stored relative to it, so the file is portable.
    pub fn new(run: &RunSpec, d: &Divergence) -> Repro {
        Repro {
            format: FORMAT.into(),
            run: portable(run),
            arms: d.arms.clone(),
            dispatch: d.dispatch,
            instruction: d.instruction.as_ref().map(|i| i.line()).unwrap_or_default(),
            fields: d.fields.clone(),
            before: d.before.clone(),
            states: d.states.clone(),
        }
    }

    /// Writes the file (pretty JSON, trailing newline).
    pub fn save(&self, path: &Path) -> Result<(), String> {
        save_json(self, path)
    }

    /// Re-runs both arms from scratch to the recorded dispatch and compares
    /// them there (and at dispatch - 1, which must agree).
    pub fn check(&self) -> Result<Check, String> {
        let d = self.dispatch;
        let mut a = self.run.open(&self.arms[0])?;
        let mut b = self.run.open(&self.arms[1])?;
        if d > 0 {
            advance(a.as_mut(), &self.arms[0], d - 1)?;
            advance(b.as_mut(), &self.arms[1], d - 1)?;
            let (x, y) = (State::capture(a.as_mut()), State::capture(b.as_mut()));
            if x != y {
                return Ok(Check::Differs {
                    fields: x.differences(&y),
                    states: [x, y],
                    same_as_recorded: false,
                });
            }
        }
        advance(a.as_mut(), &self.arms[0], d)?;
        advance(b.as_mut(), &self.arms[1], d)?;
        let (x, y) = (State::capture(a.as_mut()), State::capture(b.as_mut()));
        if x == y {
            return Ok(Check::Exact);
        }
        let same = x == self.states[0] && y == self.states[1];
        Ok(Check::Differs {
            fields: x.differences(&y),
            states: [x, y],
            same_as_recorded: same,
        })
    }
}

/// Loads a repro file; relative program paths are looked up as given, then
/// beside the file, then under the workspace root.
pub fn load(path: impl AsRef<Path>) -> Result<Repro, String> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut r: Repro = serde_json::from_str(&text)
        .map_err(|e| format!("{}: not an oracle repro file: {e}", path.display()))?;
    if r.format != FORMAT {
        return Err(format!(
            "{}: repro format `{}`, this oracle reads `{FORMAT}`",
            path.display(),
            r.format
        ));
    }
    let base = path.parent();
    r.run.program = resolve(&r.run.program, base);
    for c in &mut r.run.companions {
        c.program = resolve(&c.program, base);
    }
    Ok(r)
}

/// For regression tests: loads the repro at `path`, re-runs it and panics
/// with both states side by side if the arms still differ at its dispatch.
pub fn assert_exact(path: impl AsRef<Path>) {
    let path = path.as_ref();
    let r = load(path).unwrap_or_else(|e| panic!("{e}"));
    match r
        .check()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    {
        Check::Exact => {}
        Check::Differs { fields, states, .. } => panic!(
            "{}: {} and {} still differ at dispatch {} ({}):\n{}",
            path.display(),
            r.arms[0],
            r.arms[1],
            r.dispatch,
            fields.join(", "),
            side_by_side(&[&r.arms[0], &r.arms[1]], &[&states[0], &states[1]])
        ),
    }
}
