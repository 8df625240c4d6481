//! Lockstep: run every arm of one program side by side and compare them at
//! every sample point.
//!
//! Sample points are every multiple of the interval, every frame edge
//! (`Session::next_frame_edge`), and the end (budget or the program's own
//! end); dispatch 0 is compared too. The first arm is the reference; each
//! other arm is compared with it until its first differing sample, which is
//! recorded as a window (last agreeing sample, first differing sample) for
//! [`crate::bisect`] to narrow. Owns the sample schedule, per-arm CPU time
//! of execution (sampling excluded) and the end-of-run counters. It must not
//! bisect, print or write files.

use crate::arm_run::ArmRun;
use crate::cputime;
use crate::spec::RunSpec;
use crate::state::{same_ram, State};
use std::collections::BTreeMap;
use toyvm::frame::Frame;

/// How densely to sample.
#[derive(Clone, Debug)]
pub struct Options {
    /// Compare at every multiple of this many dispatches.
    pub interval: u64,
    /// Also compare at every frame edge.
    pub frame_edges: bool,
    /// Keep running arms that diverged (for their final frames and
    /// timings); otherwise stop once every non-reference arm diverged.
    pub run_to_end: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            interval: DEFAULT_INTERVAL,
            frame_edges: true,
            run_to_end: true,
        }
    }
}

/// Default sample interval (frame edges, ~57K dispatches apart at 70 Hz,
/// usually come first).
pub const DEFAULT_INTERVAL: u64 = 1_000_000;

/// The first sample where an arm differed from the reference.
#[derive(Clone, Debug)]
pub struct FirstDiff {
    /// Dispatch of the last sample where the arm agreed.
    pub last_agree: u64,
    /// Dispatch target of the first sample where it did not.
    pub sample: u64,
    /// Fields that differ there.
    pub fields: Vec<String>,
    pub reference: State,
    pub arm: State,
}

/// One arm's run.
pub struct ArmOutcome {
    pub arm: String,
    /// None: exact at every sample (always None for the reference).
    pub diff: Option<FirstDiff>,
    /// The state where the arm stopped.
    pub last: State,
    /// Host CPU time spent executing (sampling excluded), ns.
    pub cpu_ns: u64,
    pub counters: BTreeMap<String, u64>,
    pub frame: Frame,
}

/// A lockstep run.
pub struct Lockstep {
    /// Sample points compared (dispatch 0 and the end included).
    pub samples: u64,
    pub arms: Vec<ArmOutcome>,
}

impl Lockstep {
    /// Whether every arm agreed with the reference at every sample.
    pub fn exact(&self) -> bool {
        self.arms.iter().all(|a| a.diff.is_none())
    }
}

/// Opens a fresh run for every arm.
pub fn open_all(spec: &RunSpec, arms: &[String]) -> Result<Vec<Box<dyn ArmRun>>, String> {
    arms.iter().map(|a| spec.open(a)).collect()
}

/// Runs an arm to `target`, turning a toyvm panic (or a wasm trap) into an
/// error.
pub fn advance(s: &mut dyn ArmRun, arm: &str, target: u64) -> Result<(), String> {
    let from = s.clock();
    s.try_run_until(target).map_err(|p| {
        format!("arm {arm} panicked running from dispatch {from} to {target} (a toyvm bug): {p}")
    })
}

/// The next sample point after `t`.
fn next_target(t: u64, budget: u64, opts: &Options, sessions: &mut [Box<dyn ArmRun>]) -> u64 {
    let iv = opts.interval.max(1);
    let mut next = (t / iv + 1).saturating_mul(iv).min(budget);
    if opts.frame_edges {
        for s in sessions.iter_mut().filter(|s| !s.ended()) {
            let e = s.next_frame_edge(t + 1);
            if e > t {
                next = next.min(e);
            }
        }
    }
    next.max(t + 1)
}

/// The order `n` arms run in after sample number `sample`: rotated by one
/// from sample to sample (each arm runs first as often as every other),
/// forwards for `n` samples, then backwards for `n`. A rotation alone keeps
/// neighbours: with `l1,only-naive,l1` the reference would always run right
/// after its own repetition (host caches and branch predictors warm with
/// L1's code) and only-naive always right after the reference, which biased
/// the null band by about +1% (x1.010..x1.012 in three built-in sweeps).
/// Alternating the direction gives every arm each neighbour before it
/// equally often (for three arms: every ordered pair, once per 6 samples).
pub fn run_order(n: usize, sample: u64) -> impl Iterator<Item = usize> {
    let n = n.max(1);
    let rot = (sample % n as u64) as usize;
    let backwards = (sample / n as u64) % 2 == 1;
    (0..n).map(move |k| {
        if backwards {
            (rot + n - k) % n
        } else {
            (rot + k) % n
        }
    })
}

/// Runs `arms` (the first is the reference) on `spec` in lockstep.
/// `progress(dispatch)` is called after every sample.
pub fn lockstep(
    spec: &RunSpec,
    arms: &[String],
    opts: &Options,
    progress: &mut dyn FnMut(u64),
) -> Result<Lockstep, String> {
    run_lockstep(spec, arms, opts, progress, true)
}

/// As [`lockstep`], for a caller that only needs the verdict (the fuzzer):
/// the final states keep an empty RAM hash, and no final frame or counters
/// are taken (hashing 16 MiB and rendering a frame per arm cost more than a
/// short program's whole run).
pub fn lockstep_verdict(
    spec: &RunSpec,
    arms: &[String],
    opts: &Options,
) -> Result<Lockstep, String> {
    run_lockstep(spec, arms, opts, &mut |_| {}, false)
}

fn run_lockstep(
    spec: &RunSpec,
    arms: &[String],
    opts: &Options,
    progress: &mut dyn FnMut(u64),
    full: bool,
) -> Result<Lockstep, String> {
    let mut sessions = open_all(spec, arms)?;
    let n = arms.len();
    let mut diffs: Vec<Option<FirstDiff>> = vec![None; n];
    let mut cpu = vec![0u64; n];
    let mut samples = 0u64;
    let mut prev = 0u64;
    let mut t = 0u64;
    let mut states = Vec::new();
    loop {
        // A verdict-only run does not compare at dispatch 0: every arm has
        // just booted the same machine, and any difference the boot left
        // would still show at the next sample. (It must when nothing runs.)
        let skip = !full && t == 0 && !sessions.iter().all(|s| s.ended());
        if !skip {
            states = sessions
                .iter_mut()
                .map(|s| State::capture_light(s.as_mut()))
                .collect::<Vec<_>>();
            samples += 1;
        }
        for i in (1..n).filter(|_| !skip) {
            if diffs[i].is_some() {
                continue;
            }
            let same_ram = same_ram(sessions[0].as_ref(), sessions[i].as_ref());
            if states[i] != states[0] || !same_ram {
                let mut r = states[0].clone();
                let mut a = states[i].clone();
                r.fill_ram_hash(sessions[0].as_ref());
                a.fill_ram_hash(sessions[i].as_ref());
                diffs[i] = Some(FirstDiff {
                    last_agree: prev,
                    sample: t,
                    fields: r.differences(&a),
                    reference: r,
                    arm: a,
                });
            }
        }
        progress(t);
        let all_diverged = n > 1 && diffs[1..].iter().all(|d| d.is_some());
        if sessions.iter().all(|s| s.ended()) || (all_diverged && !opts.run_to_end) {
            break;
        }
        prev = t;
        t = next_target(t, spec.budget, opts, &mut sessions);
        // Vary the order the arms run in (see `run_order`), so no arm
        // always runs right after the samples' RAM hashing has flushed the
        // host caches, nor always right after the same other arm.
        for i in run_order(n, samples) {
            let mut r = Ok(());
            let s = &mut sessions[i];
            cputime::timed(&mut cpu[i], || r = advance(s.as_mut(), &arms[i], t));
            r?;
        }
    }
    if full {
        for (st, s) in states.iter_mut().zip(&sessions) {
            st.fill_ram_hash(s.as_ref());
        }
    }
    let arms_out = sessions
        .iter_mut()
        .zip(states)
        .enumerate()
        .map(|(i, (s, st))| ArmOutcome {
            arm: arms[i].clone(),
            diff: diffs[i].take(),
            last: st,
            cpu_ns: cpu[i],
            counters: if full {
                flatten_counters(s.counters().as_ref())
            } else {
                BTreeMap::new()
            },
            frame: if full {
                s.frame()
            } else {
                Frame::filled(0, 0, [0; 3])
            },
        })
        .collect();
    Ok(Lockstep {
        samples,
        arms: arms_out,
    })
}

/// An engine's counters as `name -> u64`: the numeric (unsigned integer)
/// fields of its JSON object, nested objects flattened as `outer.inner`;
/// anything else is left out.
pub fn flatten_counters(v: Option<&serde_json::Value>) -> BTreeMap<String, u64> {
    fn walk(prefix: &str, v: &serde_json::Value, out: &mut BTreeMap<String, u64>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    let key = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&key, x, out);
                }
            }
            serde_json::Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    out.insert(prefix.to_string(), u);
                }
            }
            _ => {}
        }
    }
    let mut out = BTreeMap::new();
    if let Some(v) = v {
        walk("", v, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::run_order;

    #[test]
    fn run_order_balances_first_place_and_predecessors() {
        for n in 1..=4usize {
            let mut first = vec![0u32; n];
            let mut pairs = vec![vec![0u32; n]; n];
            for s in 0..(2 * n as u64) {
                let o: Vec<usize> = run_order(n, s).collect();
                let mut sorted = o.clone();
                sorted.sort();
                assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "a permutation");
                first[o[0]] += 1;
                for w in o.windows(2) {
                    pairs[w[0]][w[1]] += 1;
                }
            }
            assert!(first.iter().all(|&f| f == 2), "n={n}: {first:?}");
            if n == 3 {
                // Every ordered pair of distinct arms, equally often.
                for (a, row) in pairs.iter().enumerate() {
                    for (b, &c) in row.iter().enumerate() {
                        assert_eq!(c, if a == b { 0 } else { 2 }, "{a}->{b}");
                    }
                }
            }
        }
        assert_eq!(run_order(3, 0).collect::<Vec<_>>(), [0, 1, 2]);
        assert_eq!(run_order(3, 1).collect::<Vec<_>>(), [1, 2, 0]);
        assert_eq!(run_order(3, 3).collect::<Vec<_>>(), [0, 2, 1]);
    }
}
