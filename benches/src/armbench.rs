//! The arm bench: every arm on every program, repetitions interleaved
//! (A A' B, A A' B, ... where A' is the first arm again: the null band), host
//! nanoseconds per guest dispatch per arm as median, min and max, the ratio
//! of medians to the first arm, and whether the guest results agree.
//!
//! Owns the machines a program can run on here (`flat`: the flat test bus
//! with a mini DOS, enough for the compute benchmarks; `dos`: the DOS
//! session once it exists), timing and the report. It must not change what
//! an arm computes: an arm whose dispatch count or final-state hash differs
//! from the first arm's is reported as such and its speed is not a result.

use crate::stats::Summary;
use std::path::PathBuf;

use std::time::Instant;
use toyvm::l1::harness::FlatSession;
use toyvm::l1::{Counters, L0, L1};
use toyvm::session::{Config, Session};

/// A program to time.
#[derive(Clone, Debug)]
pub struct Program {
    pub path: PathBuf,
    /// Command tail.
    pub args: String,
    pub budget: u64,
}

impl Program {
    /// `PATH` or `PATH:ARGS`.
    pub fn parse(spec: &str, budget: u64) -> Program {
        let (path, args) = match spec.rsplit_once(':') {
            Some((p, a)) if !p.is_empty() => (p, a),
            _ => (spec, ""),
        };
        Program {
            path: PathBuf::from(path),
            args: args.to_string(),
            budget,
        }
    }

    /// File name and arguments, for tables.
    pub fn label(&self) -> String {
        let n = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if self.args.is_empty() {
            n
        } else {
            format!("{n} {}", self.args)
        }
    }
}

/// The guest outcome and the host time of one run.
#[derive(Clone, Debug)]
pub struct Run {
    pub dispatches: u64,
    /// Hash of everything guest-visible at the end.
    pub hash: u64,
    /// Host seconds of the run itself (machine setup excluded): wall and
    /// thread CPU time.
    pub wall: f64,
    pub cpu: f64,
    pub end: String,
    pub console: String,
    pub counters: Option<Counters>,
}

/// Which clock times a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// CPU time of the running thread (robust on a shared box: other
    /// processes' load does not count).
    Cpu,
    /// Wall time.
    Wall,
}

/// A started timer.
pub struct Timer {
    wall: Instant,
    cpu: f64,
}

/// CPU seconds used by this thread (toyvm's host clock).
pub fn thread_cpu_secs() -> f64 {
    toyvm::host_clock::thread_ns() as f64 * 1e-9
}

impl Timer {
    pub fn start() -> Timer {
        Timer {
            wall: Instant::now(),
            cpu: thread_cpu_secs(),
        }
    }
    /// (wall, cpu) seconds since the start.
    pub fn stop(&self) -> (f64, f64) {
        (
            self.wall.elapsed().as_secs_f64(),
            thread_cpu_secs() - self.cpu,
        )
    }
}

/// The L1 configuration an arm name asks for: `l1` plus optional
/// `-nofuse`, `-nospin`, `-nolinks`, `-novolatile`, `-indirect` suffixes (the
/// ablations the docs measure). `None` for arms that are not L1.
pub fn l1_config(arm: &str) -> Option<toyvm::l1::Config> {
    let rest = arm.strip_prefix("l1")?;
    let mut c = toyvm::l1::Config::default();
    for m in rest.split('-').filter(|m| !m.is_empty()) {
        match m {
            "nofuse" => c.fuse = false,
            "nospin" => c.spin = false,
            "nolinks" => c.links = false,
            "novolatile" => c.volatile_hits = 0,
            "indirect" => c.direct_calls = false,
            _ => return None,
        }
    }
    Some(c)
}

/// Runs `p` under `arm` on the flat machine.
pub fn run_flat(p: &Program, arm: &str) -> Result<Run, String> {
    let bytes = std::fs::read(&p.path).map_err(|e| format!("{}: {e}", p.path.display()))?;
    let mut s = FlatSession::com_args(&bytes, &p.args, p.budget);
    let (end, t, counters) = match arm {
        "l0" => {
            let t = Timer::start();
            let end = s.run(&mut L0);
            (end, t.stop(), None)
        }
        a if l1_config(a).is_some() => {
            let mut e = L1::with_config(l1_config(a).unwrap());
            let t = Timer::start();
            let end = s.run(&mut e);
            (end, t.stop(), Some(e.counters))
        }
        other => {
            return Err(format!(
                "unknown arm `{other}` (flat machine: l0, l1, l1-indirect)"
            ))
        }
    };
    let o = s.into_outcome(end);
    Ok(Run {
        dispatches: o.dispatches,
        hash: o.hash(),
        wall: t.0,
        cpu: t.1,
        end: format!("{:?}", o.end),
        console: String::from_utf8_lossy(&o.console).into_owned(),
        counters,
    })
}

/// The hash of everything guest-visible at the end of a DOS run: toyvm's
/// sample (registers, flags, device, frame and console hashes, end,
/// interrupts) and guest RAM. The same function for native and wasm runs.
pub fn outcome_hash(sample: &toyvm::sample::Sample, ram: &[u8]) -> u64 {
    let key = format!(
        "{}|{:016x}",
        serde_json::to_string(sample).expect("a sample serialises"),
        xxhash_rust::xxh3::xxh3_64(ram)
    );
    xxhash_rust::xxh3::xxh3_64(key.as_bytes())
}

/// Runs `p` under `arm` in the DOS session (the machine `toyvm run` uses);
/// `INNER@wasm` / `INNER@wasm-winch` run the session inside the toyvm wasm
/// module under wasmtime (docs/wasm.md).
pub fn run_dos(p: &Program, arm: &str) -> Result<Run, String> {
    let mut cfg = Config::new(&p.path);
    cfg.program.args = p.args.clone();
    cfg.budget = p.budget;
    cfg.arm = arm.to_string();
    if let Some((inner, compiler)) = wasm_host::split_arm(arm) {
        cfg.arm = inner.to_string();
        return run_wasm(&cfg, compiler);
    }
    let mut s = match l1_config(arm) {
        Some(c) if arm != "l1" => {
            let e: L1<toyvm::machine::Machine> = L1::with_config(c);
            Session::with_engine(&cfg, Box::new(e))?
        }
        _ => Session::new(&cfg)?,
    };
    let t = Timer::start();
    s.run();
    let (wall, cpu) = t.stop();
    let sample = s.sample();
    let report = s.report(&cfg);
    let counters = report
        .engine_counters
        .clone()
        .and_then(|v| serde_json::from_value::<Counters>(v).ok());
    Ok(Run {
        dispatches: sample.dispatches,
        hash: outcome_hash(&sample, s.machine.mem.ram()),
        wall,
        cpu,
        end: sample.end,
        console: report.console.clone(),
        counters,
    })
}

/// Runs `cfg` (inner arm) in a session inside the wasm module; instance
/// creation (and the once-per-process compile) is not timed.
fn run_wasm(cfg: &Config, compiler: wasm_host::Compiler) -> Result<Run, String> {
    let mut s = wasm_host::WasmSession::open(cfg, compiler)?;
    let t = Timer::start();
    s.run_until(cfg.budget)?;
    let (wall, cpu) = t.stop();
    let sample = s.sample()?;
    let counters = s
        .counters()?
        .and_then(|v| serde_json::from_value::<Counters>(v).ok());
    let console = s.console()?;
    let printed = console
        .split("\n--- screen ---\n")
        .next()
        .unwrap_or_default()
        .to_string();
    Ok(Run {
        dispatches: sample.dispatches,
        hash: outcome_hash(&sample, s.ram()),
        wall,
        cpu,
        end: sample.end,
        console: printed,
        counters,
    })
}

/// One arm's figures on one program.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ArmRow {
    pub arm: String,
    /// ns per guest dispatch over the repetitions.
    pub ns: Summary,
    /// Median ns/dispatch over the first arm's.
    pub ratio: f64,
    /// Same dispatches and final-state hash as the first arm, in every rep.
    pub exact: bool,
    pub dispatches: u64,
    pub hash: String,
    pub counters: Option<Counters>,
}

/// One program's rows.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ProgramRow {
    pub program: String,
    pub end: String,
    pub console: String,
    pub arms: Vec<ArmRow>,
}

/// Runs the bench. `arms[0]` is the reference; its null band is added as
/// `<arm>(null)` right after it.
pub fn bench(
    programs: &[Program],
    arms: &[String],
    reps: usize,
    clock: Clock,
    run: &dyn Fn(&Program, &str) -> Result<Run, String>,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<ProgramRow>, String> {
    let mut lanes: Vec<(String, String)> = Vec::new();
    for (i, a) in arms.iter().enumerate() {
        lanes.push((a.clone(), a.clone()));
        if i == 0 {
            lanes.push((format!("{a}(null)"), a.clone()));
        }
    }
    let mut out = Vec::new();
    for p in programs {
        let mut runs: Vec<Vec<Run>> = vec![Vec::new(); lanes.len()];
        for rep in 0..reps {
            for (k, (label, arm)) in lanes.iter().enumerate() {
                progress(&format!("{} rep {}/{} {}", p.label(), rep + 1, reps, label));
                runs[k].push(run(p, arm)?);
            }
        }
        let reference = &runs[0][0];
        let ref_ns = Summary::of(&ns_per_dispatch(&runs[0], clock)).median;
        let rows = lanes
            .iter()
            .zip(&runs)
            .map(|((label, _), rs)| {
                let ns = Summary::of(&ns_per_dispatch(rs, clock));
                ArmRow {
                    arm: label.clone(),
                    ratio: ns.median / ref_ns,
                    ns,
                    exact: rs
                        .iter()
                        .all(|r| r.dispatches == reference.dispatches && r.hash == reference.hash),
                    dispatches: rs[0].dispatches,
                    hash: format!("{:016x}", rs[0].hash),
                    counters: rs[0].counters.clone(),
                }
            })
            .collect();
        out.push(ProgramRow {
            program: p.label(),
            end: reference.end.clone(),
            console: reference.console.clone(),
            arms: rows,
        });
    }
    Ok(out)
}

fn ns_per_dispatch(rs: &[Run], clock: Clock) -> Vec<f64> {
    rs.iter()
        .map(|r| {
            let s = if clock == Clock::Cpu { r.cpu } else { r.wall };
            s * 1e9 / r.dispatches.max(1) as f64
        })
        .collect()
}

/// Per arm, the geometric mean over programs of its median ratio to the
/// first arm, and for `INNER@...` arms to the native `INNER` (when that is
/// one of the arms): the figures the `@wasm` speed gate reads. Programs
/// where the arm was not exact are left out (and counted).
pub fn geomeans(rows: &[ProgramRow]) -> String {
    let Some(first) = rows.first() else {
        return String::new();
    };
    let mut s = String::from(
        "\n\n| arm | geomean ratio to first arm | geomean ratio to its native arm | programs |\n|---|---:|---:|---:|\n",
    );
    for a in &first.arms {
        let native = a.arm.split_once('@').map(|(n, _)| n.to_string());
        let (mut lf, mut ln, mut n, mut nn) = (0.0f64, 0.0f64, 0usize, 0usize);
        for p in rows {
            let Some(x) = p.arms.iter().find(|x| x.arm == a.arm && x.exact) else {
                continue;
            };
            lf += x.ratio.ln();
            n += 1;
            if let Some(nat) = native
                .as_deref()
                .and_then(|nm| p.arms.iter().find(|y| y.arm == nm))
            {
                ln += (x.ns.median / nat.ns.median).ln();
                nn += 1;
            }
        }
        let g = |l: f64, k: usize| {
            if k == 0 {
                "-".to_string()
            } else {
                format!("{:.3}", (l / k as f64).exp())
            }
        };
        s.push_str(&format!(
            "| {} | {} | {} | {n} of {} |\n",
            a.arm,
            g(lf, n),
            g(ln, nn),
            rows.len()
        ));
    }
    s
}

/// The report as a Markdown table plus the L1 counters per program.
pub fn table(rows: &[ProgramRow], reps: usize, clock: Clock) -> String {
    let mut s = String::new();
    s.push_str(
        "| program | dispatches | arm | ns/disp median | min | max | ratio | exact |\n|---|---:|---|---:|---:|---:|---:|---|\n",
    );
    for p in rows {
        let name = p.program.clone();
        for (i, a) in p.arms.iter().enumerate() {
            s.push_str(&format!(
                "| {} | {} | {} | {:.2} | {:.2} | {:.2} | {:.3} | {} |\n",
                if i == 0 { name.as_str() } else { "" },
                if i == 0 {
                    a.dispatches.to_string()
                } else {
                    String::new()
                },
                a.arm,
                a.ns.median,
                a.ns.min,
                a.ns.max,
                a.ratio,
                if a.exact {
                    "yes".to_string()
                } else {
                    format!("NO (dispatches {}, hash {})", a.dispatches, a.hash)
                }
            ));
        }
    }
    s.push_str(&format!(
        "\n{reps} repetitions per arm, interleaved; ns = {} per guest dispatch; ratio = median / first arm's median; `(null)` is the first arm again.\n",
        if clock == Clock::Cpu { "thread CPU time" } else { "wall time" }
    ));
    for p in rows {
        if let Some(line) = p.console.lines().rev().find(|l| !l.trim().is_empty()) {
            s.push_str(&format!(
                "\n{}: last console line `{}` ({})",
                p.program,
                line.trim(),
                p.end
            ));
        }
    }
    s.push_str(&geomeans(rows));
    s.push_str("\n\nDeterministic counters (L1):\n\n");
    s.push_str("| program | ops/dispatch | blocks | instrs compiled | uncached | spin folds | spin dispatches | SMC stores | SMC retired | host retired | flushes | link/dm/map hits | runs (reached/attention/other) |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
    for p in rows {
        for a in &p.arms {
            if let Some(c) = &a.counters {
                let name = &p.program;
                s.push_str(&format!(
                    "| {} ({}) | {:.4} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {}/{}/{} | {} ({}/{}/{}) |\n",
                    name,
                    a.arm,
                    c.ops_per_dispatch(),
                    c.blocks_compiled,
                    c.instructions_compiled,
                    c.uncached_steps,
                    c.spin_folds,
                    c.spin_dispatches,
                    c.smc_stores,
                    c.smc_retired,
                    c.host_retired,
                    c.flushes,
                    c.link_hits,
                    c.dm_hits,
                    c.map_hits,
                    c.runs,
                    c.exits_reached,
                    c.exits_attention,
                    c.exits_other
                ));
                break;
            }
        }
    }
    s
}
