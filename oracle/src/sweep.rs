//! `oracle sweep`: every program of a corpus under every arm, in lockstep
//! against the first arm.
//!
//! Owns corpus selection (built-in or a directory, through `corpus-dos`),
//! sharding (program i of the corpus order runs in shard i % N), the worker
//! threads (`--jobs`), bisecting each divergence, writing repro files, and
//! building the [`SweepReport`]: per program the status, samples, each
//! arm's final state, first divergence, counters and (separately) timings.
//! It must not format reports (that is [`crate::report`]) and must not let
//! anything but the guest decide report content (invariant 7): results are
//! sorted by program name whatever order the workers finish in.

use crate::bisect::bisect;
use crate::compare::{lockstep, Options};
use crate::diff::sanitize;
use crate::report::{
    ArmDivergence, ArmResult, ArmTiming, ProgramResult, Status, Summary, SweepReport, FORMAT,
};
use crate::repro::Repro;
use crate::spec::{panic_text, RunSpec};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Which corpus.
#[derive(Clone, Debug)]
pub enum CorpusSel {
    Builtin,
    Dir(PathBuf),
}

impl CorpusSel {
    pub fn parse(s: &str) -> CorpusSel {
        if s == "builtin" {
            CorpusSel::Builtin
        } else {
            CorpusSel::Dir(PathBuf::from(s))
        }
    }
    pub fn name(&self) -> String {
        match self {
            CorpusSel::Builtin => "builtin".into(),
            CorpusSel::Dir(d) => d.display().to_string(),
        }
    }
    pub fn load(&self) -> Result<corpus_dos::Corpus, String> {
        match self {
            CorpusSel::Builtin => corpus_dos::builtin(),
            CorpusSel::Dir(d) => {
                if !d.is_dir() {
                    return Err(format!("{}: no such corpus directory", d.display()));
                }
                corpus_dos::load_dir(d).map_err(|e| format!("{}: {e}", d.display()))
            }
        }
    }
}

/// A shard: this run takes programs i with i % count == index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// Parses "I/N" (0 <= I < N).
    pub fn parse(s: &str) -> Result<Shard, String> {
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| format!("--shard `{s}`: expected I/N, e.g. 0/2"))?;
        let (i, n) = (
            i.trim()
                .parse::<usize>()
                .map_err(|_| format!("--shard `{s}`: bad index"))?,
            n.trim()
                .parse::<usize>()
                .map_err(|_| format!("--shard `{s}`: bad count"))?,
        );
        if n == 0 || i >= n {
            return Err(format!("--shard `{s}`: need 0 <= I < N"));
        }
        Ok(Shard { index: i, count: n })
    }
}

/// What a sweep runs.
#[derive(Clone, Debug)]
pub struct SweepOptions {
    pub corpus: CorpusSel,
    /// Reference first.
    pub arms: Vec<String>,
    /// Budget override for every program.
    pub dispatches: Option<u64>,
    pub compare: Options,
    pub bisect: bool,
    pub fanout: u64,
    pub shard: Option<Shard>,
    pub jobs: usize,
    pub timings: bool,
    pub frames: bool,
    /// Only programs whose name or binary path contains this.
    pub filter: Option<String>,
    /// Write a repro file per divergence here.
    pub repro_dir: Option<PathBuf>,
}

impl SweepOptions {
    pub fn new(corpus: CorpusSel, arms: Vec<String>) -> SweepOptions {
        SweepOptions {
            corpus,
            arms,
            dispatches: None,
            compare: Options::default(),
            bisect: true,
            fanout: 2,
            shard: None,
            jobs: 1,
            timings: true,
            frames: true,
            filter: None,
            repro_dir: None,
        }
    }
}

/// The programs of the corpus this run takes (corpus order, shard and
/// filter applied).
pub fn select(c: &corpus_dos::Corpus, o: &SweepOptions) -> Vec<corpus_dos::Program> {
    c.programs
        .iter()
        .enumerate()
        .filter(|(i, _)| o.shard.is_none_or(|s| i % s.count == s.index))
        .map(|(_, p)| p)
        .filter(|p| {
            o.filter.as_ref().is_none_or(|f| {
                p.name
                    .to_ascii_lowercase()
                    .contains(&f.to_ascii_lowercase())
                    || p.binary.contains(f.as_str())
            })
        })
        .cloned()
        .collect()
}

/// Events for a progress display.
pub trait Progress: Sync {
    fn start(&self, _total: usize) {}
    fn program(&self, _name: &str) {}
    fn done(&self, _name: &str, _status: Status) {}
}

/// No progress display.
pub struct Quiet;
impl Progress for Quiet {}

/// Runs the sweep.
pub fn run(o: &SweepOptions, progress: &dyn Progress) -> Result<SweepReport, String> {
    crate::arms::check_all(&o.arms)?;
    let corpus = o.corpus.load()?;
    let programs = select(&corpus, o);
    run_programs(&corpus, &programs, o, progress)
}

/// Runs the sweep over the given programs of `corpus` (`o.corpus` names it
/// in the report; its shard and filter are not applied again).
pub fn run_programs(
    corpus: &corpus_dos::Corpus,
    programs: &[corpus_dos::Program],
    o: &SweepOptions,
    progress: &dyn Progress,
) -> Result<SweepReport, String> {
    crate::arms::check_all(&o.arms)?;
    progress.start(programs.len());
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(ProgramResult, BTreeMap<String, String>)>> = Mutex::new(Vec::new());
    let jobs = o.jobs.clamp(1, programs.len().max(1));
    std::thread::scope(|sc| {
        for _ in 0..jobs {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(p) = programs.get(i) else { break };
                progress.program(&p.name);
                let r = run_program(corpus, p, o);
                progress.done(&p.name, r.0.status);
                results.lock().unwrap_or_else(|e| e.into_inner()).push(r);
            });
        }
    });
    let mut report = SweepReport {
        format: FORMAT.into(),
        corpus: o.corpus.name(),
        arms: o.arms.clone(),
        dispatches: o.dispatches,
        interval: o.compare.interval,
        frame_edges: o.compare.frame_edges,
        bisect: o.bisect,
        shard: o.shard.map(|s| format!("{}/{}", s.index, s.count)),
        summary: Summary::default(),
        programs: Vec::new(),
        timings: None,
        frames: BTreeMap::new(),
    };
    for (p, f) in results.into_inner().unwrap_or_else(|e| e.into_inner()) {
        report.programs.push(p);
        report.frames.extend(f);
    }
    report.finish();
    Ok(report)
}

fn failed(p: &corpus_dos::Program, budget: u64, e: String) -> ProgramResult {
    ProgramResult {
        name: p.name.clone(),
        family: p.family.clone(),
        binary: p.binary.clone(),
        budget,
        keys: p.keys.clone(),
        status: Status::Failed,
        error: Some(e),
        samples: 0,
        arms: Vec::new(),
    }
}

/// One program under every arm; never panics (a toyvm panic is a failure).
pub fn run_program(
    corpus: &corpus_dos::Corpus,
    p: &corpus_dos::Program,
    o: &SweepOptions,
) -> (ProgramResult, BTreeMap<String, String>) {
    let budget = o.dispatches.unwrap_or(p.budget);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run_program_inner(corpus, p, o, budget)
    }));
    match r {
        Ok(Ok(x)) => x,
        Ok(Err(e)) => (failed(p, budget, e), BTreeMap::new()),
        Err(e) => (
            failed(
                p,
                budget,
                format!("host panic (a toyvm or oracle bug): {}", panic_text(&*e)),
            ),
            BTreeMap::new(),
        ),
    }
}

fn ratio(a: u64, b: u64) -> Option<f64> {
    (a > 0 && b > 0).then(|| a as f64 / b as f64)
}

fn run_program_inner(
    corpus: &corpus_dos::Corpus,
    p: &corpus_dos::Program,
    o: &SweepOptions,
    budget: u64,
) -> Result<(ProgramResult, BTreeMap<String, String>), String> {
    let spec = RunSpec::from_corpus(corpus, p, Some(budget))?;
    let ls = lockstep(&spec, &o.arms, &o.compare, &mut |_| {})?;
    let mut frames = BTreeMap::new();
    let mut arms = Vec::new();
    let ref_cpu = ls.arms[0].cpu_ns;
    let ref_build = ls.arms[0].counters.get("build_ns").copied();
    let ref_exec = ref_cpu.saturating_sub(ref_build.unwrap_or(0));
    // A repeated arm is its own column (`l1#2`): results carry the label,
    // runs and bisection the arm's real name.
    let labels = crate::report::arm_labels(&o.arms);
    for (a, label) in ls.arms.iter().zip(&labels) {
        if o.frames {
            let h = a.last.frame_hash.clone();
            frames.entry(h).or_insert_with(|| a.frame.png_data_uri());
        }
        let divergence = a.diff.as_ref().map(|d| {
            let mut ad = ArmDivergence {
                window: (d.last_agree, d.sample),
                fields: d.fields.clone(),
                first: None,
                bisect_error: None,
                repro: None,
            };
            if o.bisect {
                let pair = [o.arms[0].clone(), a.arm.clone()];
                match bisect(&spec, &pair, d.last_agree, d.sample, o.fanout) {
                    Ok(dv) => {
                        if let Some(dir) = &o.repro_dir {
                            let path = repro_path(dir, &p.name, label);
                            match Repro::new(&spec, &dv).save(&path) {
                                Ok(()) => ad.repro = Some(path.display().to_string()),
                                Err(e) => ad.bisect_error = Some(e),
                            }
                        }
                        ad.first = Some(dv);
                    }
                    Err(e) => {
                        // A slice-dependent arm: its own repro (two plans).
                        if let (Some(dir), Some(dep)) = (&o.repro_dir, e.slice_deps.first()) {
                            let path = dir.join(format!(
                                "{}-{}-slices-d{}.json",
                                sanitize(&p.name),
                                sanitize(&dep.arm),
                                dep.states[0].dispatches
                            ));
                            let window = (d.last_agree, d.sample);
                            if crate::diff::write_slice_repro(&spec, dep, &pair, window, &path)
                                .is_ok()
                            {
                                ad.repro = Some(path.display().to_string());
                            }
                        }
                        ad.bisect_error = Some(e.message)
                    }
                }
            }
            ad
        });
        let (counters, counters_ns): (BTreeMap<String, u64>, BTreeMap<String, u64>) = a
            .counters
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .partition(|(k, _)| !k.ends_with("_ns"));
        let uops_per_insn = counters.get("uops").map(|&u| {
            let d = counters
                .get("uop_insns")
                .copied()
                .unwrap_or(a.last.dispatches);
            if d == 0 {
                0.0
            } else {
                u as f64 / d as f64
            }
        });
        let timing = o.timings.then(|| {
            let build = counters_ns.get("build_ns").copied();
            let exec = build.map(|b| a.cpu_ns.saturating_sub(b));
            ArmTiming {
                cpu_ns: a.cpu_ns,
                build_ns: build,
                exec_ns: exec,
                ratio: ratio(a.cpu_ns, ref_cpu),
                exec_ratio: exec.and_then(|e| ratio(e, ref_exec)),
                counters_ns: counters_ns
                    .iter()
                    .filter(|(k, _)| k.as_str() != "build_ns")
                    .map(|(k, v)| (k.clone(), *v))
                    .collect(),
            }
        });
        arms.push(ArmResult {
            arm: label.clone(),
            last: a.last.clone(),
            divergence,
            fallbacks: counters.get("fallbacks").copied(),
            handbacks: counters.get("handbacks").copied(),
            counters,
            uops_per_insn,
            timing,
        });
    }
    // A program DOS could not load stops before its first instruction in
    // every arm alike: not a result, a failure to run.
    let r0 = &ls.arms[0].last;
    let load_error = (r0.dispatches == 0 && r0.end.starts_with("stopped"))
        .then(|| r0.end.trim_start_matches("stopped: ").to_string());
    let status = if load_error.is_some() {
        Status::Failed
    } else if ls.exact() {
        Status::Exact
    } else {
        Status::Diverged
    };
    Ok((
        ProgramResult {
            name: p.name.clone(),
            family: p.family.clone(),
            binary: p.binary.clone(),
            budget,
            keys: p.keys.clone(),
            status,
            error: load_error,
            samples: ls.samples,
            arms,
        },
        frames,
    ))
}

/// Where a sweep writes the repro of one program and arm.
pub fn repro_path(dir: &Path, program: &str, arm: &str) -> PathBuf {
    dir.join(format!("{}-{}.json", sanitize(program), sanitize(arm)))
}
