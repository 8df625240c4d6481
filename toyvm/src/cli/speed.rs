//! `toyvm speed PROGRAM|DIR|builtin [--arm l1]`: host CPU time per guest
//! dispatch for every program of a corpus under one arm, how far each is from
//! the corpus median, and (for L1) which share of the dispatches took a slow
//! path and why.
//!
//! Owns the arguments, the timing (the thread's CPU time around
//! `Session::run`: loading and the BIOS are not timed, compiles and every
//! host service are) and the table. The programs and budgets are the
//! census's (`tiers::census::entries`: the built-in manifest's budgets, a
//! directory's MANIFEST.tsv with companions, or one file). The last line is
//! `speed: N programs, median M ns/dispatch, K above Gx the median`; with
//! `--gate G` the exit status is 1 when K > 0. Timings are host facts, never
//! guest-visible, and vary from run to run; the slow-path columns are the
//! L1 counters and do not.

use std::path::PathBuf;
use std::process::ExitCode;
use toyvm::host_clock::thread_ns;
use toyvm::session::Session;
use toyvm::tiers::census;

#[derive(clap::Args)]
pub struct Args {
    /// A DOS program, a directory of DOS programs (or a MANIFEST.tsv corpus
    /// such as ../shared/dos-real), or `builtin` (corpus-dos).
    pub target: String,
    /// The arm to time.
    #[arg(long, default_value = "l1")]
    pub arm: String,
    /// Budget per program (default: the manifest's, else 20M).
    #[arg(long)]
    pub dispatches: Option<u64>,
    /// Runs per program; the median time is reported.
    #[arg(long, default_value_t = 1)]
    pub reps: usize,
    /// Programs with fewer dispatches are listed but left out of the median
    /// and the gate (their time is mostly compiling and services).
    #[arg(long, default_value_t = 1_000_000)]
    pub min_dispatches: u64,
    /// Flag programs above this multiple of the median; with it, exit 1 if
    /// any is.
    #[arg(long)]
    pub gate: Option<f64>,
    /// Only programs whose name contains this.
    #[arg(long)]
    pub filter: Option<String>,
    /// Write the rows as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// One program's figures.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Row {
    pub name: String,
    pub dispatches: u64,
    pub end: String,
    /// Median host CPU nanoseconds per guest dispatch.
    pub ns_per_dispatch: f64,
    /// L1 counters (zero under other arms).
    pub uncached: u64,
    pub uncached_volatile: u64,
    pub uncached_window: u64,
    pub uncached_single_step: u64,
    pub uncached_shadow: u64,
    pub device_dispatches: u64,
    /// Uncached protected-mode steps, and dispatches run from L1's
    /// protected-mode blocks (`l1::pm`).
    pub uncached_protected: u64,
    pub pm_dispatches: u64,
    pub instructions_compiled: u64,
    pub spin_dispatches: u64,
    pub exits: u64,
    pub error: Option<String>,
    /// Every counter of the arm's engine (the last rep), for `--json`.
    pub counters: serde_json::Value,
}

pub fn main(a: Args) -> ExitCode {
    match run(a) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("toyvm speed: {e}");
            ExitCode::FAILURE
        }
    }
}

fn pct(x: u64, of: u64) -> String {
    if of == 0 || x == 0 {
        "-".into()
    } else {
        format!("{:.2}", 100.0 * x as f64 / of as f64)
    }
}

fn measure(e: &census::Entry, arm: &str, reps: usize) -> Row {
    let mut row = Row {
        name: e.name.clone(),
        ..Row::default()
    };
    let mut times = Vec::new();
    for _ in 0..reps.max(1) {
        let mut cfg = e.cfg.clone();
        cfg.arm = arm.to_string();
        let mut s = match Session::new(&cfg) {
            Ok(s) => s,
            Err(err) => {
                row.error = Some(err);
                return row;
            }
        };
        let t0 = thread_ns();
        let end = s.run().clone();
        let t = thread_ns() - t0;
        row.dispatches = s.clock();
        row.end = format!("{end:?}");
        times.push(t);
        let c = s.counters().unwrap_or(serde_json::Value::Null);
        let g = |k: &str| c.get(k).and_then(|v| v.as_u64()).unwrap_or(0);
        row.uncached = g("uncached_steps");
        row.uncached_volatile = g("uncached_volatile");
        row.uncached_window = g("uncached_window");
        row.uncached_single_step = g("uncached_single_step");
        row.uncached_shadow = g("uncached_shadow");
        row.device_dispatches = g("device_dispatches");
        row.uncached_protected = g("uncached_protected");
        row.pm_dispatches = g("pm_dispatches");
        row.instructions_compiled = g("instructions_compiled");
        row.spin_dispatches = g("spin_dispatches");
        row.exits = g("runs");
        row.counters = c;
    }
    times.sort_unstable();
    let t = times[times.len() / 2];
    row.ns_per_dispatch = if row.dispatches == 0 {
        0.0
    } else {
        t as f64 / row.dispatches as f64
    };
    row
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn run(a: Args) -> Result<ExitCode, String> {
    toyvm::session::engine(&a.arm)?;
    let mut entries = census::entries(&a.target, a.dispatches)?;
    if let Some(f) = &a.filter {
        entries.retain(|e| e.name.contains(f.as_str()));
    }
    if entries.is_empty() {
        return Err("no programs".into());
    }
    let rows: Vec<Row> = entries.iter().map(|e| measure(e, &a.arm, a.reps)).collect();
    let counted = |r: &Row| r.error.is_none() && r.dispatches >= a.min_dispatches;
    let med = median(
        rows.iter()
            .filter(|r| counted(r))
            .map(|r| r.ns_per_dispatch)
            .collect(),
    );
    println!(
        "{:<40} {:>11} {:>8} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>7} {:>7} {:>6}",
        "program",
        "dispatches",
        "ns/disp",
        "x med",
        "slow%",
        "volat%",
        "windw%",
        "step%",
        "shdw%",
        "prot%",
        "pmblk%",
        "device%",
        "comp/M",
        "spin%"
    );
    let gate = a.gate.unwrap_or(2.0);
    let mut above = Vec::new();
    for r in &rows {
        if let Some(e) = &r.error {
            println!("{:<40} error: {e}", r.name);
            continue;
        }
        let x = if med > 0.0 {
            r.ns_per_dispatch / med
        } else {
            0.0
        };
        let mark = if counted(r) && x > gate {
            above.push(r.name.clone());
            " <"
        } else if counted(r) {
            ""
        } else {
            " (short)"
        };
        let per_m = if r.dispatches == 0 {
            0.0
        } else {
            r.instructions_compiled as f64 * 1e6 / r.dispatches as f64
        };
        println!(
            "{:<40} {:>11} {:>8.2} {:>6.2} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>7} {:>7.0} {:>6}{mark}",
            r.name,
            r.dispatches,
            r.ns_per_dispatch,
            x,
            pct(r.uncached, r.dispatches),
            pct(r.uncached_volatile, r.dispatches),
            pct(r.uncached_window, r.dispatches),
            pct(r.uncached_single_step, r.dispatches),
            pct(r.uncached_shadow, r.dispatches),
            pct(r.uncached_protected, r.dispatches),
            pct(r.pm_dispatches, r.dispatches),
            pct(r.device_dispatches, r.dispatches),
            per_m,
            pct(r.spin_dispatches, r.dispatches),
        );
    }
    if let Some(j) = &a.json {
        let text = serde_json::to_string_pretty(&rows).map_err(|e| e.to_string())?;
        std::fs::write(j, text + "\n").map_err(|e| format!("{}: {e}", j.display()))?;
    }
    let n = rows.iter().filter(|r| counted(r)).count();
    println!(
        "speed: {n} programs, median {med:.2} ns/dispatch, {} above {gate}x the median{}{}",
        above.len(),
        if above.is_empty() { "" } else { ": " },
        above.join(", ")
    );
    Ok(if a.gate.is_some() && !above.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
