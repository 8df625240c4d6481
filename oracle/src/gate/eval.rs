//! Evaluating a gate file: the toyvm side (per corpus: one sweep with the
//! reference, the design and the reference again; the census of the design's
//! pass set on the same programs), then the mainemu side
//! ([`super::mainemu_side`]); each criterion
//! with its measured value, threshold and verdict, and the record.

use super::file::{sample_indices, Corpus, GateFile};
use crate::report::{Status, SweepReport};
use crate::sweep::{self, CorpusSel, Progress, SweepOptions};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use toyvm::tiers::census;

/// Format tag of a record.
pub const RECORD_FORMAT: &str = "oracle-gate-1";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    #[serde(rename = "PASS")]
    Pass,
    #[serde(rename = "FAIL")]
    Fail,
}

impl Verdict {
    pub fn of(ok: bool) -> Verdict {
        if ok {
            Verdict::Pass
        } else {
            Verdict::Fail
        }
    }
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
        }
    }
}

/// One line of the table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Criterion {
    /// `exactness builtin`, `density builtin`, `speed builtin`, `null band
    /// builtin`, `mainemu exactness`.
    pub name: String,
    pub measured: String,
    /// The number judged (None when nothing could be measured).
    pub value: Option<f64>,
    pub threshold: String,
    pub verdict: Verdict,
}

/// One program's numbers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProgramNumbers {
    pub name: String,
    pub status: String,
    /// The reference arm's dispatches.
    pub dispatches: u64,
    /// The census's dynamic density of the design's pass set.
    pub uops_per_insn: Option<f64>,
    /// CPU ratios against the reference: the design, the reference again.
    pub ratio: Option<f64>,
    pub null_ratio: Option<f64>,
    /// Entered the speed medians (exact, reference CPU >= min_ref_ms).
    pub timed: bool,
}

/// One corpus's figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CorpusNumbers {
    pub name: String,
    pub path: String,
    /// Why the corpus was not run (an optional corpus that is absent).
    pub skipped: Option<String>,
    pub programs: Vec<ProgramNumbers>,
    pub exact: usize,
    pub diverged: usize,
    pub failed: usize,
    pub density_median: Option<f64>,
    pub speed_median: Option<f64>,
    pub null_median: Option<f64>,
    pub null_min: Option<f64>,
    pub null_max: Option<f64>,
    pub timed: usize,
}

/// The record `oracle gate` writes to `gates/results/<design>-<commit>.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateRecord {
    pub format: String,
    pub design: String,
    pub gate_file: String,
    /// `mainemu::designs::gate_hash` of the gate file's text.
    pub gate_sha1: String,
    /// `git rev-parse HEAD` of the repo (None without git).
    pub commit: Option<String>,
    /// The work tree had uncommitted changes.
    pub dirty: bool,
    /// UTC, `YYYY-MM-DDTHH:MM:SSZ`.
    pub date: String,
    pub verdict: Verdict,
    pub criteria: Vec<Criterion>,
    pub corpora: Vec<CorpusNumbers>,
    /// The mainemu side, per program (records before it existed have none).
    #[serde(default)]
    pub mainemu: Vec<super::mainemu_side::MainemuNumbers>,
}

impl GateRecord {
    /// `<design>-<commit 12>[-dirty].json` (`nogit` without a commit).
    pub fn file_name(&self) -> String {
        let c = self
            .commit
            .as_deref()
            .map(|c| &c[..c.len().min(12)])
            .unwrap_or("nogit");
        format!(
            "{}-{c}{}.json",
            self.design,
            if self.dirty { "-dirty" } else { "" }
        )
    }
}

/// How to run.
#[derive(Clone, Debug)]
pub struct EvalOptions {
    /// The repo root (holds `gates/`); corpus paths are relative to it.
    pub root: PathBuf,
    /// The gate file's path as recorded.
    pub gate_file: String,
    /// Programs run in parallel (1 keeps timings cleanest).
    pub jobs: usize,
    /// Repro files of divergences go here.
    pub repro_dir: Option<PathBuf>,
}

/// What a run printed beside the criteria (skipped corpora).
pub struct GateRun {
    pub record: GateRecord,
    pub notes: Vec<String>,
}

fn fmt2(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{v:.2}"))
}
fn fmtx(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("x{v:.3}"))
}

/// The programs a corpus entry selects, and the corpus.
pub fn sampled(
    c: &Corpus,
    root: &Path,
) -> Result<(CorpusSel, corpus_dos::Corpus, Vec<corpus_dos::Program>), String> {
    let sel = match c.dir(root) {
        None => CorpusSel::Builtin,
        Some(d) => CorpusSel::Dir(d),
    };
    let corpus = sel.load()?;
    let idx = sample_indices(corpus.programs.len(), c.sample);
    let programs = idx.iter().map(|&i| corpus.programs[i].clone()).collect();
    Ok((sel, corpus, programs))
}

/// The sweep of a corpus entry: reference, design, reference again.
pub fn sweep_options(g: &GateFile, c: &Corpus, sel: CorpusSel, o: &EvalOptions) -> SweepOptions {
    let mut so = SweepOptions::new(sel, g.arm_list());
    so.dispatches = c.dispatches;
    so.jobs = o.jobs.max(1);
    so.frames = false;
    so.timings = true;
    so.repro_dir = o.repro_dir.clone();
    so
}

/// Census rows of the design's pass set on the programs.
pub fn census_rows(
    g: &GateFile,
    c: &Corpus,
    corpus: &corpus_dos::Corpus,
    programs: &[corpus_dos::Program],
) -> Result<Vec<census::Row>, String> {
    let passes = g.passes()?;
    let entries = census::corpus_entries(corpus, c.dispatches)?;
    Ok(programs
        .iter()
        .filter_map(|p| entries.iter().find(|e| e.name == p.name))
        .map(|e| census::run(e, false, passes).0)
        .collect())
}

/// The figures of one corpus from its sweep and census.
pub fn corpus_numbers(
    g: &GateFile,
    c: &Corpus,
    r: &SweepReport,
    rows: &[census::Row],
) -> CorpusNumbers {
    let min_ns = (g.speed.min_ref_ms * 1e6) as u64;
    let mut programs = Vec::new();
    for p in &r.programs {
        let t = |i: usize| p.arms.get(i).and_then(|a| a.timing.as_ref());
        let timed = p.status == Status::Exact && t(0).is_some_and(|t| t.cpu_ns >= min_ns);
        programs.push(ProgramNumbers {
            name: p.name.clone(),
            status: p.status.word().to_string(),
            dispatches: p.arms.first().map_or(0, |a| a.last.dispatches),
            uops_per_insn: rows
                .iter()
                .find(|row| row.name == p.name)
                .and_then(|row| row.dynamic()),
            ratio: t(1).and_then(|t| t.ratio),
            null_ratio: if g.arms.null_band {
                t(2).and_then(|t| t.ratio)
            } else {
                None
            },
            timed,
        });
    }
    let timed: Vec<&ProgramNumbers> = programs.iter().filter(|p| p.timed).collect();
    let ratios: Vec<f64> = timed.iter().filter_map(|p| p.ratio).collect();
    let nulls: Vec<f64> = timed.iter().filter_map(|p| p.null_ratio).collect();
    CorpusNumbers {
        name: c.name.clone(),
        path: c.path.clone(),
        skipped: None,
        exact: r.summary.exact,
        diverged: r.summary.diverged,
        failed: r.summary.failed,
        density_median: census::median(rows.iter().filter_map(|r| r.dynamic()).collect()),
        speed_median: census::median(ratios),
        null_min: nulls.iter().copied().reduce(f64::min),
        null_max: nulls.iter().copied().reduce(f64::max),
        null_median: census::median(nulls),
        timed: timed.len(),
        programs,
    }
}

/// The toyvm criteria of one corpus.
pub fn corpus_criteria(g: &GateFile, n: &CorpusNumbers) -> Vec<Criterion> {
    let mut v = Vec::new();
    let bad = (n.diverged + n.failed) as u64;
    v.push(Criterion {
        name: format!("exactness {}", n.name),
        measured: format!(
            "{} diverged, {} failed of {} ({} vs {})",
            n.diverged,
            n.failed,
            n.programs.len(),
            g.arms.design,
            g.arms.reference
        ),
        value: Some(bad as f64),
        threshold: format!("<= {}", g.exactness.max_divergences),
        verdict: Verdict::of(bad <= g.exactness.max_divergences),
    });
    v.push(Criterion {
        name: format!("density {}", n.name),
        measured: format!(
            "{} µops/insn (dynamic median, {} programs)",
            fmt2(n.density_median),
            n.programs
                .iter()
                .filter(|p| p.uops_per_insn.is_some())
                .count()
        ),
        value: n.density_median,
        threshold: format!("<= {:.2}", g.density.max_uops_per_insn),
        verdict: Verdict::of(
            n.density_median
                .is_some_and(|d| d <= g.density.max_uops_per_insn),
        ),
    });
    v.push(Criterion {
        name: format!("speed {}", n.name),
        measured: format!(
            "{} CPU vs {} (median, {} timed)",
            fmtx(n.speed_median),
            g.arms.reference,
            n.timed
        ),
        value: n.speed_median,
        threshold: format!("<= x{:.3}", g.speed.max_ratio),
        verdict: Verdict::of(n.speed_median.is_some_and(|s| s <= g.speed.max_ratio)),
    });
    if g.arms.null_band {
        v.push(Criterion {
            name: format!("null band {}", n.name),
            measured: format!(
                "{} ({}..{})",
                fmtx(n.null_median),
                fmtx(n.null_min),
                fmtx(n.null_max)
            ),
            value: n.null_median,
            threshold: format!("x1 ± {:.3}", g.speed.null_band),
            verdict: Verdict::of(
                n.null_median
                    .is_some_and(|m| (m - 1.0).abs() <= g.speed.null_band),
            ),
        });
    }
    v
}

/// Runs the gate: each corpus (toyvm side), then mainemu.
pub fn evaluate(
    g: &GateFile,
    gate_text: &str,
    o: &EvalOptions,
    progress: &dyn Progress,
    say: &dyn Fn(&str),
) -> Result<GateRun, String> {
    let mut criteria = Vec::new();
    let mut corpora = Vec::new();
    let mut notes = Vec::new();
    for c in &g.corpora {
        if let Some(d) = c.dir(&o.root) {
            if !d.is_dir() {
                let why = format!("{} absent", d.display());
                if c.optional {
                    let line = format!("corpus {}: skipped ({why}; optional)", c.name);
                    say(&line);
                    notes.push(line);
                    corpora.push(CorpusNumbers {
                        name: c.name.clone(),
                        path: c.path.clone(),
                        skipped: Some(why),
                        programs: Vec::new(),
                        exact: 0,
                        diverged: 0,
                        failed: 0,
                        density_median: None,
                        speed_median: None,
                        null_median: None,
                        null_min: None,
                        null_max: None,
                        timed: 0,
                    });
                    continue;
                }
                criteria.push(Criterion {
                    name: format!("corpus {}", c.name),
                    measured: why,
                    value: None,
                    threshold: "present".into(),
                    verdict: Verdict::Fail,
                });
                continue;
            }
        }
        let (sel, corpus, programs) = sampled(c, &o.root)?;
        say(&format!(
            "corpus {}: {} of {} programs, sweep {}",
            c.name,
            programs.len(),
            corpus.programs.len(),
            g.arm_list().join(",")
        ));
        let so = sweep_options(g, c, sel, o);
        let r = sweep::run_programs(&corpus, &programs, &so, progress)?;
        say(&format!(
            "corpus {}: {}; census {}",
            c.name,
            r.summary.line(),
            g.passes()?.canonical()
        ));
        let rows = census_rows(g, c, &corpus, &programs)?;
        let n = corpus_numbers(g, c, &r, &rows);
        criteria.extend(corpus_criteria(g, &n));
        corpora.push(n);
    }
    let me = super::mainemu_side::run(g, &o.root, say);
    criteria.push(me.criterion);
    notes.extend(me.notes);
    let verdict = Verdict::of(criteria.iter().all(|c| c.verdict == Verdict::Pass));
    let (commit, dirty) = git_commit(&o.root);
    Ok(GateRun {
        record: GateRecord {
            format: RECORD_FORMAT.into(),
            design: g.design.clone(),
            gate_file: o.gate_file.clone(),
            gate_sha1: mainemu::designs::gate_hash(gate_text.as_bytes()),
            commit,
            dirty,
            date: utc_now(),
            verdict,
            criteria,
            corpora,
            mainemu: me.programs,
        },
        notes,
    })
}

/// `git rev-parse HEAD` in `root` and whether tracked files differ from it.
pub fn git_commit(root: &Path) -> (Option<String>, bool) {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let Some(head) = git(&["rev-parse", "HEAD"]) else {
        return (None, false);
    };
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    (Some(head), dirty)
}

/// The current UTC time, `YYYY-MM-DDTHH:MM:SSZ`.
pub fn utc_now() -> String {
    let s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    utc_date(s)
}

/// Seconds since 1970 as `YYYY-MM-DDTHH:MM:SSZ` (proleptic Gregorian).
pub fn utc_date(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil from days (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}
