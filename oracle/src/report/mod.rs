//! The sweep report: its data model (serialised as JSON with a stable field
//! order), reading, merging shards, and the summary figures.
//!
//! Everything a Markdown or HTML view shows is in [`SweepReport`], so a
//! merged report renders exactly like an unsharded one. Timings live only in
//! the `timing` fields (per arm) and in [`SweepReport::timings`]; with
//! `--no-timings` they are absent and the file is byte-identical across
//! runs (invariant 7). This module must not run anything.

pub mod html;
pub mod markdown;
pub mod win32;

use crate::bisect::Divergence;
use crate::state::State;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

pub const FORMAT: &str = "oracle-sweep/2";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepReport {
    pub format: String,
    /// "builtin" or the corpus directory as given.
    pub corpus: String,
    /// The reference arm first.
    pub arms: Vec<String>,
    /// The budget override (`--dispatches`), if any.
    pub dispatches: Option<u64>,
    pub interval: u64,
    pub frame_edges: bool,
    pub bisect: bool,
    /// "I/N" for one shard; absent for whole and merged runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    pub summary: Summary,
    /// Sorted by (name, binary).
    pub programs: Vec<ProgramResult>,
    /// Timing summary (absent with `--no-timings`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timings: Option<TimingSummary>,
    /// Final frames as PNG `data:` URIs, by frame hash.
    #[serde(default)]
    pub frames: BTreeMap<String, String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub programs: usize,
    pub exact: usize,
    pub diverged: usize,
    pub failed: usize,
}

impl Summary {
    /// The line a sweep ends with.
    pub fn line(&self) -> String {
        format!(
            "sweep: {} programs, {} exact, {} diverged, {} failed",
            self.programs, self.exact, self.diverged, self.failed
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Exact,
    Diverged,
    Failed,
}

impl Status {
    pub fn word(self) -> &'static str {
        match self {
            Status::Exact => "exact",
            Status::Diverged => "diverged",
            Status::Failed => "failed",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProgramResult {
    pub name: String,
    pub family: String,
    /// Relative to the corpus root.
    pub binary: String,
    pub budget: u64,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub keys: String,
    pub status: Status,
    /// Why the program failed (could not load, an arm errored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Sample points compared.
    pub samples: u64,
    pub arms: Vec<ArmResult>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArmResult {
    /// The arm's column label: its name, or `NAME#K` for the K-th listing
    /// of a repeated arm ([`arm_labels`]).
    pub arm: String,
    /// The state where the arm stopped (dispatches, end, registers, hashes).
    #[serde(rename = "final")]
    pub last: State,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub divergence: Option<ArmDivergence>,
    /// Deterministic performance counters (names in docs/oracle.md).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters: BTreeMap<String, u64>,
    /// `uops / uop_insns` (or `uops / dispatches`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uops_per_insn: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallbacks: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handbacks: Option<u64>,
    /// Host CPU time (absent with `--no-timings`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<ArmTiming>,
}

/// An arm's first divergence from the reference.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArmDivergence {
    /// Last agreeing and first differing sample.
    pub window: (u64, u64),
    /// Fields that differed at the first differing sample.
    pub fields: Vec<String>,
    /// The bisected first differing dispatch (absent with `--no-bisect`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<Divergence>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bisect_error: Option<String>,
    /// The repro file written for it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repro: Option<String>,
}

/// Host CPU time of one arm on one program (never compared, never exact).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArmTiming {
    /// Execution CPU time including builds (sampling excluded), ns.
    pub cpu_ns: u64,
    /// Build time the arm reports (`build_ns` counter), ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_ns: Option<u64>,
    /// `cpu_ns - build_ns` when the arm reports builds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec_ns: Option<u64>,
    /// `cpu_ns` against the reference arm's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
    /// `exec_ns` against the reference arm's execution time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec_ratio: Option<f64>,
    /// Other `*_ns` counters the arm reports.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters_ns: BTreeMap<String, u64>,
}

/// Per-arm CPU summary: totals over every program, geomeans over the
/// programs where every arm ran exact and the reference took at least
/// [`MIN_TIMED_NS`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimingSummary {
    pub arms: Vec<ArmTimingSummary>,
    /// The spread of ratios of the reference arm listed again (an arm
    /// against itself): what noise alone looks like.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub null_band: Option<NullBand>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArmTimingSummary {
    /// The arm's column label ([`arm_labels`]: `l1`, `only-naive`, `l1#2`).
    pub arm: String,
    /// CPU time over every program, ns (build included).
    pub cpu_ns: u64,
    /// Build time over every program, ns (absent when the arm reports no
    /// `build_ns`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_ns: Option<u64>,
    /// Execution time over every program: `cpu_ns - build_ns`, ns.
    #[serde(default)]
    pub exec_ns: u64,
    /// Geometric mean of per-program CPU ratios against the reference.
    pub geomean_ratio: Option<f64>,
    /// Geometric mean of per-program execution-time ratios against the
    /// reference's execution time (an arm without builds: its CPU time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geomean_exec_ratio: Option<f64>,
    /// Programs that entered the geomeans.
    pub programs: usize,
    /// This column is the reference listed again: its ratios are the null
    /// band.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub null_band: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NullBand {
    /// The arm listed twice (the reference).
    pub arm: String,
    /// The repeated arm's column label (`l1#2`).
    #[serde(default)]
    pub column: String,
    pub min: f64,
    pub max: f64,
    pub geomean: f64,
    pub programs: usize,
}

/// Column labels of an arm list: the name, and `NAME#K` for the K-th
/// listing of a name given more than once (`l1,only-naive,l1` gives `l1`,
/// `only-naive`, `l1#2`). Per-arm results carry these labels, so a
/// repeated arm is its own column everywhere.
pub fn arm_labels(arms: &[String]) -> Vec<String> {
    arms.iter()
        .enumerate()
        .map(|(i, a)| {
            let n = arms[..i].iter().filter(|b| *b == a).count();
            if n == 0 {
                a.clone()
            } else {
                format!("{a}#{}", n + 1)
            }
        })
        .collect()
}

/// Programs whose reference arm ran for less CPU time than this are shown
/// but left out of geomeans and the null band: at that size the ratio is
/// timer noise.
pub const MIN_TIMED_NS: u64 = 5_000_000;

/// Geometric mean (None for an empty set).
pub fn geomean(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    Some((v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp())
}

impl SweepReport {
    /// Recomputes the summary counts from the programs.
    pub fn summarize(&mut self) {
        let mut s = Summary {
            programs: self.programs.len(),
            ..Summary::default()
        };
        for p in &self.programs {
            match p.status {
                Status::Exact => s.exact += 1,
                Status::Diverged => s.diverged += 1,
                Status::Failed => s.failed += 1,
            }
        }
        self.summary = s;
        self.timings = self.timing_summary();
    }

    /// Whether the report carries timings.
    pub fn has_timings(&self) -> bool {
        self.programs
            .iter()
            .flat_map(|p| &p.arms)
            .any(|a| a.timing.is_some())
    }

    fn timing_summary(&self) -> Option<TimingSummary> {
        if !self.has_timings() {
            return None;
        }
        // Programs that enter the geomeans: exact, and long enough on the
        // reference for a ratio to mean something.
        let timed: Vec<&ProgramResult> = self
            .programs
            .iter()
            .filter(|p| p.status == Status::Exact)
            .filter(|p| {
                p.arms
                    .first()
                    .and_then(|a| a.timing.as_ref())
                    .is_some_and(|t| t.cpu_ns >= MIN_TIMED_NS)
            })
            .collect();
        let exec_of = |t: &ArmTiming| t.exec_ns.unwrap_or(t.cpu_ns);
        let positive = |r: &f64| r.is_finite() && *r > 0.0;
        let ratios = |i: usize| -> Vec<f64> {
            timed
                .iter()
                .filter_map(|p| p.arms.get(i)?.timing.as_ref()?.ratio)
                .filter(positive)
                .collect()
        };
        let exec_ratios = |i: usize| -> Vec<f64> {
            timed
                .iter()
                .filter_map(|p| {
                    let r = p.arms.first()?.timing.as_ref()?;
                    let a = p.arms.get(i)?.timing.as_ref()?;
                    let (a, r) = (exec_of(a), exec_of(r));
                    (a > 0 && r > 0).then(|| a as f64 / r as f64)
                })
                .filter(positive)
                .collect()
        };
        let null_col = (1..self.arms.len()).find(|&i| self.arms[i] == self.arms[0]);
        let labels = arm_labels(&self.arms);
        let arms = labels
            .iter()
            .enumerate()
            .map(|(i, label)| {
                let r = ratios(i);
                let timings: Vec<&ArmTiming> = self
                    .programs
                    .iter()
                    .filter_map(|p| p.arms.get(i)?.timing.as_ref())
                    .collect();
                let builds: Vec<u64> = timings.iter().filter_map(|t| t.build_ns).collect();
                ArmTimingSummary {
                    arm: label.clone(),
                    cpu_ns: timings.iter().map(|t| t.cpu_ns).sum(),
                    build_ns: (!builds.is_empty()).then(|| builds.iter().sum()),
                    exec_ns: timings.iter().map(|t| exec_of(t)).sum(),
                    geomean_ratio: geomean(&r),
                    geomean_exec_ratio: geomean(&exec_ratios(i)),
                    programs: r.len(),
                    null_band: Some(i) == null_col,
                }
            })
            .collect();
        let null_band = null_col.and_then(|i| {
            let r = ratios(i);
            Some(NullBand {
                arm: self.arms[0].clone(),
                column: labels[i].clone(),
                min: r.iter().copied().fold(f64::INFINITY, f64::min),
                max: r.iter().copied().fold(0.0, f64::max),
                geomean: geomean(&r)?,
                programs: r.len(),
            })
        });
        Some(TimingSummary { arms, null_band })
    }

    /// Sorts programs by (name, binary) and recomputes the summaries.
    pub fn finish(&mut self) {
        self.programs
            .sort_by(|a, b| (&a.name, &a.binary).cmp(&(&b.name, &b.binary)));
        self.summarize();
    }

    /// Pretty JSON with a trailing newline.
    pub fn to_json(&self) -> Result<String, String> {
        serde_json::to_string_pretty(self)
            .map(|s| s + "\n")
            .map_err(|e| e.to_string())
    }

    pub fn write_json(&self, path: &Path) -> Result<(), String> {
        write_file(path, &self.to_json()?)
    }
}

/// Writes a file, creating its directory.
pub fn write_file(path: &Path, text: &str) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Reads a sweep report, with a clear error for a missing or corrupt file.
pub fn read(path: &Path) -> Result<SweepReport, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let r: SweepReport = serde_json::from_str(&text)
        .map_err(|e| format!("{}: not an oracle sweep report: {e}", path.display()))?;
    if r.format != FORMAT {
        return Err(format!(
            "{}: report format `{}`, this oracle reads `{FORMAT}`",
            path.display(),
            r.format
        ));
    }
    Ok(r)
}

/// Merges shard reports into one, identical in content to an unsharded
/// run: same settings required, programs unioned (no duplicates) and
/// sorted, summaries recomputed, frames unioned.
pub fn merge(parts: Vec<(String, SweepReport)>) -> Result<SweepReport, String> {
    let mut it = parts.into_iter();
    let (first_name, mut out) = it.next().ok_or("merge: no reports given")?;
    out.shard = None;
    let same = |a: &SweepReport, b: &SweepReport| {
        a.corpus == b.corpus
            && a.arms == b.arms
            && a.dispatches == b.dispatches
            && a.interval == b.interval
            && a.frame_edges == b.frame_edges
            && a.bisect == b.bisect
    };
    for (name, r) in it {
        if !same(&out, &r) {
            return Err(format!(
                "merge: {name} was run with other settings than {first_name} \
                 (corpus, arms, --dispatches, --interval, frame edges or bisection differ)"
            ));
        }
        if r.has_timings() != out.has_timings()
            && !r.programs.is_empty()
            && !out.programs.is_empty()
        {
            return Err(format!(
                "merge: {name} and {first_name} disagree on --no-timings"
            ));
        }
        for p in r.programs {
            if out
                .programs
                .iter()
                .any(|q| q.name == p.name && q.binary == p.binary)
            {
                return Err(format!(
                    "merge: program {} ({}) is in more than one report (overlapping shards?)",
                    p.name, p.binary
                ));
            }
            out.programs.push(p);
        }
        out.frames.extend(r.frames);
    }
    out.finish();
    Ok(out)
}
