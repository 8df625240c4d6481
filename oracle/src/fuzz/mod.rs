//! `oracle fuzz`: random programs, every arm, exact or not.
//!
//! Owns the campaign: which programs a run (or shard) holds, the worker
//! threads, running each program under every arm in lockstep, shrinking a
//! diverging program while the divergence holds, bisecting the minimized
//! one and writing its repro file, and the summary line. Generating
//! programs is [`plan`] and [`real16`], shrinking [`shrink`], the report
//! [`report`]. It must not compare or bisect by itself: that is
//! [`crate::compare`] and [`crate::bisect`] (through [`crate::diff`]).
//!
//! Program `i` of seed `S` depends on `(S, i)` only, so `--index I`
//! re-creates one program of a large run and the shards of a run
//! (`--shard K/N`, programs with `i % N == K`) add up to the whole run.

pub mod plan;
pub mod real16;
pub mod report;
pub mod rng;
pub mod shrink;

pub use plan::{generate, shape_of, Plan, Shape};
pub use report::{Case, FuzzReport, Minimized, ShardId, Verdict};
pub use rng::Rng;

use crate::compare::{lockstep_verdict, Options};
use crate::diff;
use crate::spec::RunSpec;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The arms `oracle fuzz` runs when `--arms` is not given.
pub const DEFAULT_ARMS: &str = "l1,only-naive,l0";

/// Predicate runs the shrinker may spend on one divergence.
pub const SHRINK_TRIES: usize = 400;

/// Run parameters.
pub struct FuzzOpts {
    pub seed: u64,
    pub count: u64,
    pub shape: Shape,
    pub arms: Vec<String>,
    pub dispatches: u64,
    pub jobs: usize,
    /// Only this program (re-creates one program of a run).
    pub index: Option<u64>,
    /// Run programs i with i % count == index only.
    pub shard: Option<ShardId>,
    /// Where programs, minimized programs and repro files go.
    pub out: PathBuf,
    pub shrink: bool,
}

/// How densely a fuzz program is sampled: four times over the budget and
/// at every frame edge.
pub fn options(budget: u64) -> Options {
    Options {
        interval: (budget / 4).max(1),
        frame_edges: true,
        run_to_end: false,
    }
}

/// Runs `prog` (written to `path`) under `arms`: `Ok(None)` exact,
/// `Ok(Some(arms that differed))`, `Err` an arm failed.
pub fn check(
    path: &Path,
    prog: &[u8],
    arms: &[String],
    budget: u64,
) -> Result<Option<Vec<String>>, String> {
    std::fs::write(path, prog).map_err(|e| format!("{}: {e}", path.display()))?;
    let spec = RunSpec::new(path, budget);
    let ls = lockstep_verdict(&spec, arms, &options(budget))?;
    if ls.exact() {
        return Ok(None);
    }
    Ok(Some(
        ls.arms
            .iter()
            .filter(|a| a.diff.is_some())
            .map(|a| a.arm.clone())
            .collect(),
    ))
}

/// The programs a run holds, in order.
pub fn indices(o: &FuzzOpts) -> Vec<u64> {
    match o.index {
        Some(i) => vec![i],
        None => (0..o.count)
            .filter(|i| o.shard.is_none_or(|s| i % s.count == s.index))
            .collect(),
    }
}

/// Writes the run's programs into `dir` as `fS-I.com` without running
/// them; returns how many.
pub fn emit(o: &FuzzOpts, dir: &Path) -> Result<usize, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let todo = indices(o);
    for &i in &todo {
        let p = dir.join(format!("f{}-{i}.com", o.seed));
        std::fs::write(&p, generate(o.seed, i, o.shape))
            .map_err(|e| format!("{}: {e}", p.display()))?;
    }
    Ok(todo.len())
}

/// Runs the fuzz campaign; `progress` is called once per finished program.
pub fn run(o: &FuzzOpts, progress: &(dyn Fn(&Case) + Sync)) -> Result<FuzzReport, String> {
    if o.arms.len() < 2 {
        return Err("fuzz needs at least two arms (e.g. --arms l1,only-naive)".into());
    }
    if let Some(s) = o.shard {
        if s.count == 0 || s.index >= s.count {
            return Err(format!("bad shard {}/{}", s.index, s.count));
        }
    }
    let progs = o.out.join("programs");
    let repros = o.out.join("repro");
    for d in [&progs, &repros] {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    let todo = indices(o);
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Case>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..o.jobs.max(1) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&i) = todo.get(k) else { break };
                let c = one(o, i, &progs, &repros);
                progress(&c);
                results.lock().unwrap_or_else(|e| e.into_inner()).push(c);
            });
        }
    });
    let mut all = results.into_inner().unwrap_or_else(|e| e.into_inner());
    all.sort_by_key(|c| c.index);
    let count = |v: Verdict| all.iter().filter(|c| c.verdict == v).count() as u64;
    Ok(FuzzReport {
        format: report::FORMAT.into(),
        seed: o.seed,
        count: o.count,
        shape: o.shape,
        arms: o.arms.clone(),
        dispatches: o.dispatches,
        shard: if o.index.is_none() { o.shard } else { None },
        index: o.index,
        exact: count(Verdict::Exact),
        diverged: count(Verdict::Diverged),
        failed: count(Verdict::Failed),
        cases: all
            .into_iter()
            .filter(|c| c.verdict != Verdict::Exact)
            .collect(),
    })
}

/// Runs program `i`; on a divergence shrinks, bisects and writes the repro.
pub fn one(o: &FuzzOpts, i: u64, progs: &Path, repros: &Path) -> Case {
    let shape = shape_of(o.shape, i);
    let plan = Plan::new(o.seed, i, o.shape);
    let prog = plan.image();
    let path = progs.join(format!("f{}-{i}.com", o.seed));
    let mut c = Case {
        index: i,
        shape,
        len: prog.len(),
        verdict: Verdict::Exact,
        detail: String::new(),
        minimized: None,
        repro: None,
        dispatch: None,
    };
    match check(&path, &prog, &o.arms, o.dispatches) {
        Ok(None) => {
            let _ = std::fs::remove_file(&path);
        }
        Err(e) => {
            c.verdict = Verdict::Failed;
            c.detail = e;
        }
        Ok(Some(arms)) => {
            c.verdict = Verdict::Diverged;
            c.detail = arms.join(",");
            let arm = arms[0].clone();
            let min_path = repros.join(format!("f{}-{i}.com", o.seed));
            let scratch = progs.join(format!("f{}-{i}-shrink.com", o.seed));
            let (min, plan_line, runs) = if o.shrink {
                let s = shrink::shrink(
                    &plan,
                    &mut |img: &[u8]| {
                        matches!(check(&scratch, img, &o.arms, o.dispatches),
                                 Ok(Some(d)) if d.iter().any(|a| a == &arm))
                    },
                    SHRINK_TRIES,
                );
                (s.image, s.plan.summary(), s.runs)
            } else {
                (prog.clone(), plan.summary(), 0)
            };
            let _ = std::fs::remove_file(&scratch);
            c.minimized = Some(Minimized {
                plan: plan_line,
                len: min.len(),
                program: min_path.display().to_string(),
                runs,
            });
            if let Err(e) = std::fs::write(&min_path, &min) {
                c.detail = format!("{}\n{}: {e}", c.detail, min_path.display());
                return c;
            }
            bisect_into(o, &mut c, &min_path, &arm, repros);
        }
    }
    c
}

/// Bisects the minimized program and records the divergence and its repro.
fn bisect_into(o: &FuzzOpts, c: &mut Case, program: &Path, arm: &str, repros: &Path) {
    let spec = RunSpec::new(program, o.dispatches);
    let pair = [o.arms[0].clone(), arm.to_string()];
    match diff::diff(&spec, &pair, &options(o.dispatches), 2, &mut |_| {}) {
        Ok(r) if r.divergences.is_empty() => {
            c.detail = format!(
                "{}\nthe minimized program no longer diverges when run alone against {}",
                c.detail, o.arms[0]
            );
        }
        Ok(r) => {
            for (a, d) in &r.divergences {
                match d {
                    Ok(d) => {
                        let rp = repros.join(format!(
                            "f{}-{}-{}-d{}.json",
                            o.seed,
                            c.index,
                            diff::sanitize(a),
                            d.dispatch
                        ));
                        if diff::write_repro(&spec, d, &rp).is_ok() {
                            c.repro = Some(rp.display().to_string());
                        }
                        c.dispatch = Some(d.dispatch);
                        c.detail = format!("{}\n{}", c.detail, diff::describe(d));
                    }
                    Err(e) => {
                        c.detail = format!("{}\nbisection: {e}", c.detail);
                        // A slice-dependent arm: a repro of the two plans.
                        if let Some(dep) = e.slice_deps.first() {
                            let window = r
                                .lockstep
                                .arms
                                .iter()
                                .find(|x| &x.arm == a)
                                .and_then(|x| x.diff.as_ref())
                                .map(|f| (f.last_agree, f.sample))
                                .unwrap_or((0, 0));
                            let rp = repros.join(format!(
                                "f{}-{}-{}-slices-d{}.json",
                                o.seed,
                                c.index,
                                diff::sanitize(&dep.arm),
                                dep.states[0].dispatches
                            ));
                            if diff::write_slice_repro(&spec, dep, &pair, window, &rp).is_ok() {
                                c.repro = Some(rp.display().to_string());
                            }
                        }
                    }
                }
            }
        }
        Err(e) => c.detail = format!("{}\n{e}", c.detail),
    }
}
