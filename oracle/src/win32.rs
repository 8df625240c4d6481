//! The oracle for mainemu: one Win32 program under two or more mainemu arms
//! (`l0`, `l1`), compared at sample budgets, and the first differing
//! dispatch found by bisection.
//!
//! Owns what an observation of a mainemu run is (the summary without the
//! arm's own counters; per thread registers, EIP, EFLAGS and clock; the
//! address-space hash; the console output; the files written under C:; the
//! desktop frame's hash, the lab's frame hash of `mainemu::frame`) and
//! the comparison schedule, and each arm's frame where the verdict looks
//! (the end, or the first differing dispatch) as PNG for the HTML report
//! (`report::win32`). mainemu's `run_arm` starts a process from the
//! beginning, so every sample point is a fresh run to that budget: budget
//! stops are exact (the engine's contract), so a run to N observes exactly
//! the state at dispatch N. It must not know how an arm executes.
//!
//! Every run gets a fresh empty directory as C: (removed afterwards) and
//! the program's own directory readable, stdin empty: runs cannot see each
//! other, and what a program writes is part of the observation.

use mainemu::frame::Frame;
use mainemu::process::{Process, Setup};
use mainemu::run::{run_arm, Arm};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::Xxh3;

/// Whether `path` is a PE image (MZ header whose e_lfanew points at `PE\0\0`).
pub fn is_pe(path: &Path) -> bool {
    let Ok(b) = std::fs::read(path) else {
        return false;
    };
    if b.len() < 0x40 || &b[..2] != b"MZ" {
        return false;
    }
    let at = u32::from_le_bytes([b[0x3C], b[0x3D], b[0x3E], b[0x3F]]) as usize;
    b.get(at..at + 4) == Some(b"PE\0\0")
}

/// What a run leaves at its end (or at its budget).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Observation {
    pub dispatches: u64,
    /// `exit 3`, `budget`, or the stop report.
    pub ending: String,
    pub api_calls: u64,
    /// XXH3 of the API call counts by name.
    pub api_hash: u64,
    /// Per thread: registers EAX..EDI, EIP, EFLAGS, clock.
    pub threads: Vec<([u32; 8], u32, u32, u64)>,
    /// XXH3 of the committed address space.
    pub memory: u64,
    /// XXH3 of the console output (stream number, bytes, per write).
    pub output: u64,
    pub output_bytes: usize,
    /// XXH3 of the files under C: (relative names and contents, sorted).
    pub files: u64,
    /// The desktop frame's hash (what the screen shows at the end).
    pub frame: u64,
}

impl Observation {
    /// The fields that differ from `other`, by name.
    pub fn differences(&self, other: &Observation) -> Vec<&'static str> {
        let mut d = Vec::new();
        let mut check = |same: bool, name| {
            if !same {
                d.push(name)
            }
        };
        check(self.dispatches == other.dispatches, "dispatches");
        check(self.ending == other.ending, "ending");
        check(
            (self.api_calls, self.api_hash) == (other.api_calls, other.api_hash),
            "api calls",
        );
        check(self.threads == other.threads, "registers");
        check(self.memory == other.memory, "memory");
        check(
            (self.output, self.output_bytes) == (other.output, other.output_bytes),
            "console output",
        );
        check(self.files == other.files, "files written");
        check(self.frame == other.frame, "frame");
        d
    }
}

/// A program and how to run it.
#[derive(Clone, Debug)]
pub struct Program {
    pub exe: PathBuf,
    pub args: Vec<String>,
    /// Scripted GUI input (`mainemu run --input`'s language), if any.
    pub input: Option<String>,
}

fn scratch(tag: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::env::temp_dir().join(format!("oracle-win32-{}-{n}-{tag}", std::process::id()))
}

/// XXH3 over every file under `dir`: relative path and contents, in name
/// order.
fn hash_tree(dir: &Path) -> u64 {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            let rel = p
                .strip_prefix(base)
                .unwrap_or(&p)
                .to_string_lossy()
                .into_owned();
            if p.is_dir() {
                out.push((rel + "/", Vec::new()));
                walk(base, &p, out);
            } else {
                out.push((rel, std::fs::read(&p).unwrap_or_default()));
            }
        }
    }
    let mut v = Vec::new();
    walk(dir, dir, &mut v);
    v.sort();
    let mut h = Xxh3::new();
    for (name, bytes) in &v {
        h.update(name.as_bytes());
        h.update(&[0]);
        h.update(&(bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    }
    h.digest()
}

/// Runs `prog` on `arm` for at most `budget` dispatches from the start.
pub fn observe(prog: &Program, arm: Arm, budget: u64) -> Result<Observation, String> {
    observe_frame(prog, arm, budget).map(|(o, _)| o)
}

/// [`observe`], with the desktop frame the observation's `frame` hashes.
fn observe_frame(prog: &Program, arm: Arm, budget: u64) -> Result<(Observation, Frame), String> {
    let bytes = std::fs::read(&prog.exe).map_err(|e| format!("{}: {e}", prog.exe.display()))?;
    let c = scratch(arm.name());
    std::fs::create_dir_all(&c).map_err(|e| format!("{}: {e}", c.display()))?;
    let result = (|| {
        let mut setup = Setup::for_program(&prog.exe, &prog.args, &[('C', c.clone())], &[])?;
        setup.stdin = Box::new(std::io::empty());
        let mut p = Process::with_setup(&bytes, setup).map_err(|e| e.to_string())?;
        mainemu::cli::gui_setup(&mut p, None, prog.input.as_deref())?;
        let mut out = Xxh3::new();
        let mut out_bytes = 0usize;
        let s = run_arm(&mut p, arm, budget, &mut |stream, b| {
            out.update(&[stream]);
            out.update(&(b.len() as u64).to_le_bytes());
            out.update(b);
            out_bytes += b.len();
        });
        let mut api = Xxh3::new();
        for (name, n) in &s.api_calls {
            api.update(name.as_bytes());
            api.update(&n.to_le_bytes());
        }
        let ending = s.ending.to_string();
        let frame = Frame::of(&p.env.desktop);
        let o = Observation {
            dispatches: s.dispatches,
            ending,
            api_calls: s.api_calls.values().sum(),
            api_hash: api.digest(),
            threads: p
                .env
                .threads
                .list
                .iter()
                .map(|t| (t.cpu.regs, t.cpu.eip, t.cpu.eflags(), t.cpu.clock))
                .collect(),
            memory: p.env.mem.content_hash(),
            output: out.digest(),
            output_bytes: out_bytes,
            files: hash_tree(&c),
            frame: frame.hash(),
        };
        Ok((o, frame))
    })();
    std::fs::remove_dir_all(&c).ok();
    result
}

/// The comparison of one program under several arms.
#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    pub program: String,
    pub arms: Vec<String>,
    /// Budgets compared (the reference's end last) and whether every arm
    /// agreed there.
    pub samples: Vec<(u64, bool)>,
    /// The reference arm's observation at its end.
    pub end: Observation,
    /// The first dispatch at which an arm differs from the reference, the
    /// arm, and the fields that differ there.
    pub first_difference: Option<(u64, String, Vec<&'static str>)>,
    /// Each arm's frame at the end, or at the first differing dispatch
    /// when there is one, in arm order.
    pub frames: Vec<ArmFrame>,
    /// Those frames as PNG `data:` URIs, each distinct frame once, by hash
    /// (what the HTML report shows).
    pub pngs: BTreeMap<String, String>,
}

/// One arm's frame in a verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ArmFrame {
    pub arm: String,
    /// Where the arm stopped for this frame.
    pub dispatches: u64,
    /// The frame hash, 16 hex digits.
    pub hash: String,
}

impl Verdict {
    pub fn exact(&self) -> bool {
        self.first_difference.is_none()
    }
}

/// Every arm run to `budget`: the first arm differing from the reference,
/// with the fields, and each arm's stop point and frame.
#[allow(clippy::type_complexity)]
fn disagreement(
    prog: &Program,
    arms: &[Arm],
    budget: u64,
) -> Result<(Option<(Arm, Vec<&'static str>)>, Vec<(u64, Frame)>), String> {
    let (r, f) = observe_frame(prog, arms[0], budget)?;
    let mut frames = vec![(r.dispatches, f)];
    let mut first = None;
    for &a in &arms[1..] {
        let (o, f) = observe_frame(prog, a, budget)?;
        let d = r.differences(&o);
        if first.is_none() && !d.is_empty() {
            first = Some((a, d));
        }
        frames.push((o.dispatches, f));
    }
    Ok((first, frames))
}

/// Runs `prog` under `arms` (reference first) with `budget`, compares at
/// `samples` evenly spaced budgets up to the reference's end and at the end,
/// and bisects the first difference to its dispatch.
pub fn compare(prog: &Program, arms: &[Arm], budget: u64, samples: u64) -> Result<Verdict, String> {
    if arms.len() < 2 {
        return Err("need at least two arms".into());
    }
    let end = observe(prog, arms[0], budget)?;
    // The frames of the last run to `budget` and of the latest differing
    // run: bisection only moves a differing point down, so that is the
    // first differing dispatch once `schedule` returns.
    let (mut at_end, mut at_difference) = (Vec::new(), Vec::new());
    let (checked, first) = schedule(end.dispatches, budget, samples, |n| {
        let (d, frames) = disagreement(prog, arms, n)?;
        if d.is_some() {
            at_difference = frames;
        } else if n == budget {
            at_end = frames;
        }
        Ok(d.map(|(a, f)| (a.name().to_string(), f)))
    })?;
    let shown = if first.is_some() {
        at_difference
    } else {
        at_end
    };
    let mut pngs = BTreeMap::new();
    let mut frames = Vec::new();
    for (&arm, (dispatches, f)) in arms.iter().zip(shown) {
        let hash = format!("{:016x}", f.hash());
        if !pngs.contains_key(&hash) {
            let png = f.png().map_err(|e| format!("frame PNG: {e}"))?;
            pngs.insert(hash.clone(), toyvm::frame::png_data_uri(&png));
        }
        frames.push(ArmFrame {
            arm: arm.name().to_string(),
            dispatches,
            hash,
        });
    }
    Ok(Verdict {
        program: prog.exe.display().to_string(),
        arms: arms.iter().map(|a| a.name().to_string()).collect(),
        samples: checked,
        end,
        first_difference: first,
        frames,
        pngs,
    })
}

/// What differs at a budget: the arm and the fields, or nothing.
pub type Disagreement = Option<(String, Vec<&'static str>)>;

/// The comparison schedule over budgets: `samples` evenly spaced points up
/// to `last` (the reference's end), then `budget`; at the first point that
/// disagrees, binary search between the last agreeing budget and it. Returns
/// the points checked (and whether they agreed) and the first differing
/// dispatch. `disagree(n)` runs every arm to budget `n` from the start.
pub fn schedule(
    last: u64,
    budget: u64,
    samples: u64,
    mut disagree: impl FnMut(u64) -> Result<Disagreement, String>,
) -> Result<(Vec<(u64, bool)>, Option<(u64, String, Vec<&'static str>)>), String> {
    let last = last.min(budget);
    let mut points: Vec<u64> = (1..=samples).map(|k| last * k / (samples + 1)).collect();
    points.push(budget);
    points.dedup();
    let mut checked = Vec::new();
    let mut lo = 0u64;
    for &n in &points {
        let Some(d) = disagree(n)? else {
            checked.push((n, true));
            lo = n;
            continue;
        };
        checked.push((n, false));
        // Bisect (lo, n]: the state at lo agrees, at hi it does not.
        let (mut hi, mut at_hi) = (n, d);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            match disagree(mid)? {
                Some(d) => (hi, at_hi) = (mid, d),
                None => lo = mid,
            }
        }
        return Ok((checked, Some((hi, at_hi.0, at_hi.1))));
    }
    Ok((checked, None))
}

/// Parses `l0,l1` into arms.
pub fn parse_arms(s: &str) -> Result<Vec<Arm>, String> {
    s.split(',').map(|a| a.trim().parse::<Arm>()).collect()
}

/// Every PE program under `dir` (recursive, sorted by path), optionally only
/// those whose path contains `filter`.
pub fn corpus(dir: &Path, filter: Option<&str>) -> Vec<PathBuf> {
    fn walk(d: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(d) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x.eq_ignore_ascii_case("exe")) && is_pe(&p) {
                out.push(p);
            }
        }
    }
    let mut v = Vec::new();
    walk(dir, &mut v);
    v.sort();
    v.retain(|p| filter.is_none_or(|f| p.to_string_lossy().contains(f)));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake pair of arms that agree before dispatch `first` and differ
    /// from it on: the schedule must name exactly `first`, for differences
    /// before, between and after the sample points.
    #[test]
    fn schedule_bisects_to_the_first_differing_dispatch() {
        for first in [1u64, 2, 999, 1000, 1001, 12_345, 49_999, 50_000] {
            let mut runs = 0;
            let (checked, found) = schedule(50_000, 60_000, 4, |n| {
                runs += 1;
                Ok((n >= first).then(|| ("l1".to_string(), vec!["registers"])))
            })
            .unwrap();
            assert_eq!(
                found,
                Some((first, "l1".to_string(), vec!["registers"])),
                "first {first}"
            );
            assert!(checked.iter().any(|c| !c.1));
            assert!(runs <= 5 + 17, "{runs} runs for first {first}");
        }
        let (checked, found) = schedule(50_000, 60_000, 4, |_| Ok(None)).unwrap();
        assert_eq!(found, None);
        assert_eq!(
            checked.iter().map(|c| c.0).collect::<Vec<_>>(),
            [10_000, 20_000, 30_000, 40_000, 60_000]
        );
    }
}
