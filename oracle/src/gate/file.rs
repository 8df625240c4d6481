//! The gate file format (`gates/<design>.toml`), parsed with serde and
//! `toml`; unknown keys are errors so a typo cannot switch a criterion off.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A parsed gate file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateFile {
    /// The design's name (must match the file name).
    pub design: String,
    /// One line on what the design is.
    #[serde(default)]
    pub about: String,
    pub arms: Arms,
    /// The corpora, in order.
    #[serde(rename = "corpus")]
    pub corpora: Vec<Corpus>,
    pub exactness: Exactness,
    pub density: Density,
    pub speed: Speed,
    pub mainemu: Mainemu,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Arms {
    /// The reference arm (`l1`).
    pub reference: String,
    /// The design's arm, `only-<passes>`; the census runs `<passes>`.
    pub design: String,
    /// List the reference again (its ratios are the null band).
    #[serde(default = "yes")]
    pub null_band: bool,
}

fn yes() -> bool {
    true
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Corpus {
    /// Label in the table (`builtin`, `dos-real`).
    pub name: String,
    /// `builtin`, or a directory relative to the repo root (the folder
    /// holding `gates/`).
    pub path: String,
    /// A missing directory is skipped with a line saying so (otherwise
    /// it fails the gate).
    #[serde(default)]
    pub optional: bool,
    /// Take this many programs, evenly spaced in corpus order (0 or absent:
    /// every program).
    #[serde(default)]
    pub sample: usize,
    /// Dispatch budget for every program (absent: the manifest's).
    #[serde(default)]
    pub dispatches: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Exactness {
    /// Programs allowed to diverge or fail (0).
    pub max_divergences: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Density {
    /// µops per x86 instruction executed inside µop programs, dynamic
    /// median over the sampled programs (the census's figure).
    pub max_uops_per_insn: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Speed {
    /// Median over timed programs of CPU(design) / CPU(reference).
    pub max_ratio: f64,
    /// The null band holds when the median of CPU(reference again) /
    /// CPU(reference) is within 1 ± this.
    pub null_band: f64,
    /// Programs whose reference took less CPU than this are not timed.
    #[serde(default = "min_ref_ms")]
    pub min_ref_ms: f64,
}

fn min_ref_ms() -> f64 {
    crate::report::MIN_TIMED_NS as f64 / 1e6
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mainemu {
    /// The mainemu arm that must be exact against `reference` on every
    /// program mainemu runs.
    pub arm: String,
    pub reference: String,
    /// Run mainemu's own mingw test programs (every PE that
    /// `mainemu/tests/programs/build.sh` builds, no arguments).
    #[serde(default = "yes")]
    pub test_programs: bool,
    /// Only the test programs whose file name contains this.
    #[serde(default)]
    pub filter: Option<String>,
    /// Dispatch budget of every program that does not give its own.
    #[serde(default = "mainemu_dispatches")]
    pub dispatches: u64,
    /// Sample budgets per program before its end (each a fresh run of
    /// every arm to that budget; a difference is bisected to its dispatch).
    #[serde(default = "mainemu_samples")]
    pub samples: u64,
    /// Further programs, e.g. from `../shared/win32-real`.
    #[serde(default, rename = "program")]
    pub programs: Vec<MainemuProgram>,
}

fn mainemu_dispatches() -> u64 {
    20_000_000
}

fn mainemu_samples() -> u64 {
    3
}

/// One program of the mainemu side beyond the test programs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MainemuProgram {
    /// The EXE, relative to the repo root (or absolute).
    pub exe: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// A missing EXE is skipped with a line saying so (otherwise it fails
    /// the gate).
    #[serde(default)]
    pub optional: bool,
    /// Budget (absent: the section's `dispatches`).
    #[serde(default)]
    pub dispatches: Option<u64>,
}

impl GateFile {
    /// Parses and checks a gate file's text.
    pub fn parse(text: &str) -> Result<GateFile, String> {
        let g: GateFile = toml::from_str(text).map_err(|e| e.to_string())?;
        g.passes()?;
        crate::arms::parse(&g.arms.reference)?;
        if g.corpora.is_empty() {
            return Err("no [[corpus]]".into());
        }
        Ok(g)
    }

    /// Reads `DIR/<design>.toml`: the file, its text.
    pub fn load(gates: &Path, design: &str) -> Result<(GateFile, String), String> {
        let path = gates.join(format!("{design}.toml"));
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let g = GateFile::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        if g.design != design {
            return Err(format!(
                "{}: design = \"{}\" does not match the file name",
                path.display(),
                g.design
            ));
        }
        Ok((g, text))
    }

    /// The pass set of the design arm (`only-<passes>`).
    pub fn passes(&self) -> Result<shared_ir::opt::PassSet, String> {
        let p =
            self.arms.design.strip_prefix("only-").ok_or_else(|| {
                format!("arms.design `{}`: expected only-<passes>", self.arms.design)
            })?;
        shared_ir::opt::PassSet::parse(p)
    }

    /// The sweep's arm list: reference, design, and the reference again
    /// for the null band.
    pub fn arm_list(&self) -> Vec<String> {
        let mut v = vec![self.arms.reference.clone(), self.arms.design.clone()];
        if self.arms.null_band {
            v.push(self.arms.reference.clone());
        }
        v
    }
}

impl Corpus {
    /// Where the corpus is: `None` for the built-in one.
    pub fn dir(&self, root: &Path) -> Option<PathBuf> {
        (self.path != "builtin").then(|| root.join(&self.path))
    }
}

/// Indices of `n` programs evenly spaced over `len` (all when `n` is 0 or
/// at least `len`): `i * len / n`.
pub fn sample_indices(len: usize, n: usize) -> Vec<usize> {
    if n == 0 || n >= len {
        return (0..len).collect();
    }
    (0..n).map(|i| i * len / n).collect()
}
