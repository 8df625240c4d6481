//! The `oracle` command line: `diff`, `sweep`, `merge`, `repro`, `fuzz`,
//! `gate`; `diff`/`sweep` with `--engine mainemu` compare mainemu's arms
//! ([`crate::win32`]).
//!
//! Owns argument parsing (clap), progress bars, where files go and exit
//! statuses (0 exact, 1 diverged or failed, 2 bad input). It must not hold
//! oracle logic: every subcommand calls the library.

use crate::arms;
use crate::compare::{Options, DEFAULT_INTERVAL};
use crate::diff;
use crate::report::{self, html, markdown, SweepReport};
use crate::repro::{self, Check};
use crate::state::side_by_side;
use crate::sweep::{self, CorpusSel, Progress, Shard, SweepOptions};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "oracle",
    about = "The exactness oracle: run arms side by side, bisect divergences, sweep a corpus"
)]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Cmd,
}

#[derive(Subcommand)]
pub enum Cmd {
    /// Run one program under two or more arms in lockstep; bisect a
    /// divergence to its first differing dispatch and write a repro file.
    Diff(DiffArgs),
    /// Run every program of a corpus under every arm; JSON, HTML and a
    /// Markdown summary.
    Sweep(SweepArgs),
    /// Merge sweep or fuzz shards (`--shard I/N` runs) into one report.
    Merge(MergeArgs),
    /// Re-run a repro file and say whether the arms still differ.
    Repro(ReproArgs),
    /// Generate random programs from a seed, run every arm on each, shrink
    /// and bisect each divergence; ends with `fuzz: N programs, E exact, D
    /// diverged, F failed`.
    Fuzz(FuzzArgs),
    /// Evaluate a design's gate file (gates/DESIGN.toml): toyvm side, then
    /// mainemu side; a table of criteria, a record in gates/results/.
    Gate(crate::gate::command::GateArgs),
}

#[derive(clap::Args)]
pub struct FuzzArgs {
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long, default_value_t = 100)]
    pub count: u64,
    /// Arms, reference first (default: l1,only-naive,l0; `native` is every
    /// native arm this build has, e.g. `--arms native,l1@wasm`).
    #[arg(long)]
    pub arms: Option<String>,
    /// Dispatch budget per program.
    #[arg(long, default_value_t = 200_000)]
    pub dispatches: u64,
    /// Programs run in parallel.
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// bytes, insns or mixed.
    #[arg(long, default_value = "mixed")]
    pub shape: String,
    /// Run only program INDEX of the seed (re-creates one program of a run).
    #[arg(long)]
    pub index: Option<u64>,
    /// Run programs i with i % N == K only (`K/N`). Default: from the
    /// environment of a Slurm job array (SLURM_ARRAY_TASK_ID and
    /// SLURM_ARRAY_TASK_COUNT) or a Kubernetes indexed Job
    /// (JOB_COMPLETION_INDEX and ORACLE_SHARD_COUNT).
    #[arg(long)]
    pub shard: Option<String>,
    /// Programs, minimized programs and repro files go here.
    #[arg(long, default_value = "out/fuzz")]
    pub out: PathBuf,
    #[arg(long, default_value = "out/fuzz.json")]
    pub json: PathBuf,
    #[arg(long, default_value = "out/fuzz.html")]
    pub html: PathBuf,
    /// Do not shrink diverging programs.
    #[arg(long)]
    pub no_shrink: bool,
    /// Only write the programs (fS-I.com) into DIR and stop: a corpus for
    /// `oracle sweep --corpus DIR` or `toyvm census DIR`.
    #[arg(long)]
    pub emit: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct DiffArgs {
    /// The program: a .COM/.EXE path, or a built-in corpus program name.
    pub program: String,
    /// Arms, reference first (default: l1,only-naive, or what this build has).
    #[arg(long)]
    pub arms: Option<String>,
    /// Dispatch budget (default: the corpus manifest's, or 20000000).
    #[arg(long)]
    pub dispatches: Option<u64>,
    /// Key script KEY@DISPATCH,... (overrides the manifest's).
    #[arg(long)]
    pub keys: Option<String>,
    /// `--engine mainemu`: scripted GUI input (`click 24,200 @ 3000000; key F2 @ 8000000`).
    #[arg(long)]
    pub input: Option<String>,
    /// Compare at every multiple of this many dispatches (and every frame edge).
    #[arg(long, default_value_t = DEFAULT_INTERVAL)]
    pub interval: u64,
    /// Do not sample at frame edges.
    #[arg(long)]
    pub no_frame_edges: bool,
    /// Guest command tail.
    #[arg(long)]
    pub args: Option<String>,
    /// Run this program first ("PATH ARGS"); repeatable.
    #[arg(long)]
    pub companion: Vec<String>,
    /// DOS version reported to the guest.
    #[arg(long)]
    pub dos_version: Option<String>,
    /// Sub-slices per bisection level (2 = interval halving).
    #[arg(long, default_value_t = 2)]
    pub fanout: u64,
    /// Write the repro file here (default out/repro/PROGRAM-ARM-dD.json).
    #[arg(long)]
    pub repro: Option<PathBuf>,
    /// `toyvm`, `mainemu` (Win32 PE programs, arms l0/l1), or `auto`: mainemu
    /// for a PE file.
    #[arg(long, default_value = "auto")]
    pub engine: String,
    /// mainemu: evenly spaced sample budgets before the end.
    #[arg(long, default_value_t = 4)]
    pub samples: u64,
    /// mainemu: the HTML page with each arm's frame (default
    /// out/diff-PROGRAM.html).
    #[arg(long)]
    pub html: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct SweepArgs {
    /// `builtin` or a directory (.COM/.EXE files, or a MANIFEST.tsv).
    #[arg(long, default_value = "builtin")]
    pub corpus: String,
    /// Arms, reference first (default: l1,only-naive, or what this build has).
    #[arg(long)]
    pub arms: Option<String>,
    /// Budget for every program (default: each program's manifest budget).
    #[arg(long)]
    pub dispatches: Option<u64>,
    #[arg(long, default_value_t = DEFAULT_INTERVAL)]
    pub interval: u64,
    #[arg(long)]
    pub no_frame_edges: bool,
    #[arg(long, default_value = "out/sweep.json")]
    pub json: PathBuf,
    #[arg(long, default_value = "out/sweep.html")]
    pub html: PathBuf,
    /// Run programs i with i % N == I only (default: from the scheduler's
    /// environment, as for `fuzz`).
    #[arg(long)]
    pub shard: Option<String>,
    /// Programs run in parallel.
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// Leave host timings out (reports are then byte-identical across runs).
    #[arg(long)]
    pub no_timings: bool,
    /// Do not bisect divergences (report the sample window only).
    #[arg(long)]
    pub no_bisect: bool,
    #[arg(long, default_value_t = 2)]
    pub fanout: u64,
    /// Leave final frames out of the reports.
    #[arg(long)]
    pub no_frames: bool,
    /// Only programs whose name or path contains this.
    #[arg(long)]
    pub filter: Option<String>,
    /// Write a repro file per divergence here (default: `repro/` beside --json).
    #[arg(long)]
    pub repro_dir: Option<PathBuf>,
    /// `toyvm` (default) or `mainemu`: every PE program under --corpus
    /// under mainemu's arms (default l0,l1), no arguments.
    #[arg(long, default_value = "toyvm")]
    pub engine: String,
    /// mainemu: evenly spaced sample budgets before each program's end.
    #[arg(long, default_value_t = 4)]
    pub samples: u64,
}

#[derive(clap::Args)]
pub struct MergeArgs {
    /// Shard reports.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    #[arg(long)]
    pub json: PathBuf,
    #[arg(long)]
    pub html: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct ReproArgs {
    pub file: PathBuf,
}

/// Bad input or an I/O failure.
pub const EXIT_ERROR: u8 = 2;
/// A divergence or a failed program.
pub const EXIT_DIVERGED: u8 = 1;

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Diff(a) => run_diff(a),
        Cmd::Sweep(a) => run_sweep(a),
        Cmd::Merge(a) => run_merge(a),
        Cmd::Repro(a) => run_repro(a),
        Cmd::Fuzz(a) => run_fuzz(a),
        Cmd::Gate(a) => crate::gate::command::run(a),
    };
    match r {
        Ok(c) => c,
        Err(e) => {
            eprintln!("oracle: {e}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

fn arm_list(given: &Option<String>) -> Result<Vec<String>, String> {
    let arms = match given {
        Some(s) => arms::parse_list(s)?,
        None => {
            let (a, note) = arms::resolve_default();
            if let Some(n) = note {
                eprintln!("{n}");
            }
            a
        }
    };
    arms::check_all(&arms)?;
    Ok(arms)
}

fn bar(len: u64, template: &str) -> ProgressBar {
    let b = ProgressBar::new(len);
    if let Ok(st) = ProgressStyle::with_template(template) {
        b.set_style(st);
    }
    b
}

/// One line per mainemu verdict (sweep and diff).
fn win32_row(v: &crate::win32::Verdict) -> String {
    let what = match &v.first_difference {
        None => "exact".to_string(),
        Some((n, arm, fields)) => {
            format!("DIVERGED: {arm} at dispatch {n} ({})", fields.join(", "))
        }
    };
    format!(
        "| {} | {} | {} | {} | {} |",
        v.program,
        v.end.dispatches,
        v.end.ending.lines().next().unwrap_or(""),
        v.samples.len(),
        what
    )
}

/// `oracle diff --engine mainemu PROGRAM.EXE`: arms l0,l1 by default.
fn run_diff_win32(a: DiffArgs) -> Result<ExitCode, String> {
    let arms = crate::win32::parse_arms(a.arms.as_deref().unwrap_or("l0,l1"))?;
    let prog = crate::win32::Program {
        exe: PathBuf::from(&a.program),
        args: a
            .args
            .as_deref()
            .unwrap_or("")
            .split_whitespace()
            .map(str::to_string)
            .collect(),
        input: a.input.clone(),
    };
    let budget = a.dispatches.unwrap_or(20_000_000);
    let v = crate::win32::compare(&prog, &arms, budget, a.samples)?;
    println!("| program | dispatches | ending | samples | verdict |");
    println!("|---|---:|---|---:|---|");
    println!("{}", win32_row(&v));
    for (n, ok) in &v.samples {
        println!("  at {n}: {}", if *ok { "equal" } else { "differ" });
    }
    for f in &v.frames {
        println!("  frame {}: {} at {}", f.arm, f.hash, f.dispatches);
    }
    let html = a.html.clone().unwrap_or_else(|| {
        let stem = prog.exe.file_stem().unwrap_or_default().to_string_lossy();
        PathBuf::from(format!("out/diff-{stem}.html"))
    });
    let names: Vec<String> = arms.iter().map(|x| x.name().to_string()).collect();
    let page = report::win32::render(
        "oracle diff",
        &a.program,
        &names,
        std::slice::from_ref(&v),
        &[],
    );
    write_html(&html, &page)?;
    Ok(if v.exact() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_DIVERGED)
    })
}

/// Writes a mainemu HTML page (its directory made) and says so.
fn write_html(path: &Path, page: &str) -> Result<(), String> {
    if let Some(p) = path.parent() {
        std::fs::create_dir_all(p).ok();
    }
    std::fs::write(path, page).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("wrote {}", path.display());
    Ok(())
}

/// `oracle sweep --engine mainemu --corpus DIR`.
fn run_sweep_win32(a: SweepArgs) -> Result<ExitCode, String> {
    let arms = crate::win32::parse_arms(a.arms.as_deref().unwrap_or("l0,l1"))?;
    let dir = PathBuf::from(&a.corpus);
    let progs = crate::win32::corpus(&dir, a.filter.as_deref());
    if progs.is_empty() {
        return Err(format!("no PE programs under {}", dir.display()));
    }
    let budget = a.dispatches.unwrap_or(20_000_000);
    let bar = ProgressBar::new(progs.len() as u64);
    println!("| program | dispatches | ending | samples | verdict |");
    println!("|---|---:|---|---:|---|");
    let (mut exact, mut diverged, mut failed) = (0, 0, 0);
    let mut verdicts = Vec::new();
    let mut failures = Vec::new();
    for exe in progs {
        let prog = crate::win32::Program {
            exe: exe.clone(),
            args: Vec::new(),
            input: None,
        };
        match crate::win32::compare(&prog, &arms, budget, a.samples) {
            Ok(mut v) => {
                if a.no_frames {
                    v.pngs.clear();
                }
                bar.suspend(|| println!("{}", win32_row(&v)));
                if v.exact() {
                    exact += 1
                } else {
                    diverged += 1
                }
                verdicts.push(v);
            }
            Err(e) => {
                failed += 1;
                bar.suspend(|| println!("| {} | | failed: {e} | | |", exe.display()));
                failures.push((exe.display().to_string(), e));
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    let total = exact + diverged + failed;
    if let Some(p) = a.json.parent() {
        std::fs::create_dir_all(p).ok();
    }
    let j = serde_json::to_string_pretty(&verdicts).map_err(|e| e.to_string())?;
    std::fs::write(&a.json, j + "\n").map_err(|e| format!("{}: {e}", a.json.display()))?;
    println!("wrote {}", a.json.display());
    let names: Vec<String> = arms.iter().map(|x| x.name().to_string()).collect();
    let page = report::win32::render("oracle sweep", &a.corpus, &names, &verdicts, &failures);
    write_html(&a.html, &page)?;
    println!("sweep: {total} programs, {exact} exact, {diverged} diverged, {failed} failed");
    Ok(if diverged + failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_DIVERGED)
    })
}

fn run_diff(a: DiffArgs) -> Result<ExitCode, String> {
    let pe =
        a.engine == "mainemu" || (a.engine == "auto" && crate::win32::is_pe(Path::new(&a.program)));
    if pe {
        return run_diff_win32(a);
    }
    if a.engine != "auto" && a.engine != "toyvm" {
        return Err(format!(
            "unknown engine `{}` (toyvm, mainemu, auto)",
            a.engine
        ));
    }
    let arms = arm_list(&a.arms)?;
    if arms.len() < 2 {
        return Err("diff needs at least two arms, e.g. --arms l1,only-naive".into());
    }
    let mut spec = diff::resolve_program(&a.program, a.dispatches)?;
    if let Some(k) = &a.keys {
        spec.keys = k.clone();
    }
    if let Some(x) = &a.args {
        spec.args = x.clone();
    }
    if !a.companion.is_empty() {
        spec.companions = a
            .companion
            .iter()
            .map(|c| diff::parse_companion(c))
            .collect();
    }
    if let Some(v) = &a.dos_version {
        crate::spec::parse_dos_version(v)?;
        spec.dos_version = v.clone();
    }
    let opts = Options {
        interval: a.interval.max(1),
        frame_edges: !a.no_frame_edges,
        run_to_end: false,
    };
    println!(
        "oracle diff: {} under {} (reference {}), budget {} dispatches",
        spec.program.display(),
        arms.join(", "),
        arms[0],
        spec.budget
    );
    let pb = bar(spec.budget, "{bar:40} {pos}/{len} dispatches {elapsed}");
    let r = diff::diff(&spec, &arms, &opts, a.fanout, &mut |t| pb.set_position(t));
    pb.finish_and_clear();
    let r = r?;
    let ls = &r.lockstep;
    if ls.exact() {
        let s = &ls.arms[0].last;
        println!(
            "exact: {} samples, {} dispatches, end: {}, frame {}",
            ls.samples, s.dispatches, s.end, s.frame_hash
        );
        for (arm, label) in ls.arms.iter().zip(report::arm_labels(&arms)) {
            println!("  {label}: {} CPU", markdown::ms(arm.cpu_ns));
        }
        return Ok(ExitCode::SUCCESS);
    }
    for (arm, d) in &r.divergences {
        match d {
            Ok(d) => {
                println!("{}", diff::describe(d));
                let path = match &a.repro {
                    Some(p) if r.divergences.len() == 1 => p.clone(),
                    _ => diff::default_repro_path(&spec, arm, d.dispatch),
                };
                diff::write_repro(&spec, d, &path)?;
                println!("repro: {}", path.display());
            }
            Err(e) => {
                let f = ls
                    .arms
                    .iter()
                    .find(|x| &x.arm == arm)
                    .and_then(|x| x.diff.as_ref());
                if let Some(f) = f {
                    println!(
                        "{arm} diverged from {}: samples agreed at dispatch {}, differed at {} ({})",
                        arms[0],
                        f.last_agree,
                        f.sample,
                        f.fields.join(", ")
                    );
                    print!(
                        "{}",
                        side_by_side(&[&arms[0], arm], &[&f.reference, &f.arm])
                    );
                }
                println!("bisection failed: {e}");
                for dep in &e.slice_deps {
                    let window = f.map(|f| (f.last_agree, f.sample)).unwrap_or((0, 0));
                    let pair = [arms[0].clone(), arm.clone()];
                    let path =
                        diff::default_slice_repro_path(&spec, &dep.arm, dep.states[0].dispatches);
                    diff::write_slice_repro(&spec, dep, &pair, window, &path)?;
                    println!("slice repro: {}", path.display());
                }
            }
        }
    }
    Ok(ExitCode::from(EXIT_DIVERGED))
}

struct BarProgress(ProgressBar);

impl Progress for BarProgress {
    fn start(&self, total: usize) {
        self.0.set_length(total as u64);
    }
    fn program(&self, name: &str) {
        self.0.set_message(name.to_string());
    }
    fn done(&self, name: &str, status: crate::report::Status) {
        if status != crate::report::Status::Exact {
            self.0.println(format!("{}: {}", name, status.word()));
        }
        self.0.inc(1);
    }
}

fn write_reports(r: &SweepReport, json: &Path, html_path: Option<&Path>) -> Result<(), String> {
    r.write_json(json)?;
    if let Some(h) = html_path {
        report::write_file(h, &html::render(r))?;
    }
    Ok(())
}

fn finish_report(
    r: &SweepReport,
    json: &Path,
    html_path: Option<&Path>,
) -> Result<ExitCode, String> {
    write_reports(r, json, html_path)?;
    print!("{}", markdown::render(r));
    println!();
    match html_path {
        Some(h) => println!("wrote {} and {}", json.display(), h.display()),
        None => println!("wrote {}", json.display()),
    }
    println!("{}", r.summary.line());
    Ok(if r.summary.diverged + r.summary.failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_DIVERGED)
    })
}

fn run_sweep(a: SweepArgs) -> Result<ExitCode, String> {
    match a.engine.as_str() {
        "mainemu" => return run_sweep_win32(a),
        "toyvm" => {}
        e => return Err(format!("unknown engine `{e}` (toyvm, mainemu)")),
    }
    let arms = arm_list(&a.arms)?;
    let mut o = SweepOptions::new(CorpusSel::parse(&a.corpus), arms);
    o.dispatches = a.dispatches;
    o.compare = Options {
        interval: a.interval.max(1),
        frame_edges: !a.no_frame_edges,
        run_to_end: true,
    };
    o.bisect = !a.no_bisect;
    o.fanout = a.fanout;
    let shard = crate::shard::ShardSel::resolve(a.shard.as_deref())?;
    if let Some(n) = &shard.note {
        eprintln!("{n}");
    }
    o.shard = shard.shard.map(|s| Shard {
        index: s.index as usize,
        count: s.count as usize,
    });
    o.jobs = a.jobs.max(1);
    o.timings = !a.no_timings;
    o.frames = !a.no_frames;
    o.filter = a.filter.clone();
    o.repro_dir = Some(a.repro_dir.clone().unwrap_or_else(|| {
        a.json
            .parent()
            .map(|p| p.join("repro"))
            .unwrap_or_else(|| PathBuf::from("repro"))
    }));
    let pb = bar(0, "{bar:40} {pos}/{len} {elapsed} {msg}");
    // Panics are reported per program; keep their default message off the bar.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = sweep::run(&o, &BarProgress(pb.clone()));
    std::panic::set_hook(hook);
    pb.finish_and_clear();
    let r = r?;
    finish_report(&r, &a.json, Some(&a.html))
}

fn run_merge(a: MergeArgs) -> Result<ExitCode, String> {
    // Fuzz shards or sweep shards, told apart by their `format`.
    let first = std::fs::read_to_string(&a.inputs[0])
        .map_err(|e| format!("{}: {e}", a.inputs[0].display()))?;
    if crate::fuzz::report::is_fuzz_report(&first) {
        let mut parts = Vec::new();
        for p in &a.inputs {
            parts.push((p.display().to_string(), crate::fuzz::report::read(p)?));
        }
        let r = crate::fuzz::report::merge(parts)?;
        return finish_fuzz(&r, &a.json, a.html.as_deref());
    }
    let mut parts = Vec::new();
    for p in &a.inputs {
        parts.push((p.display().to_string(), report::read(p)?));
    }
    let r = report::merge(parts)?;
    finish_report(&r, &a.json, a.html.as_deref())
}

fn run_repro(a: ReproArgs) -> Result<ExitCode, String> {
    let r = match repro::load_any(&a.file)? {
        repro::AnyRepro::Divergence(r) => r,
        repro::AnyRepro::Slices(r) => return run_slice_repro(&a.file, &r),
    };
    println!(
        "repro {}: {} against {} at dispatch {} ({})",
        a.file.display(),
        r.arms[1],
        r.arms[0],
        r.dispatch,
        r.run.program.display()
    );
    match r.check()? {
        Check::Exact => {
            println!("exact: the arms agree at dispatch {} now", r.dispatch);
            Ok(ExitCode::SUCCESS)
        }
        Check::Differs {
            fields,
            states,
            same_as_recorded,
        } => {
            println!(
                "still differs ({}){}:",
                fields.join(", "),
                if same_as_recorded {
                    ", exactly as recorded"
                } else {
                    ", not as recorded"
                }
            );
            print!(
                "{}",
                side_by_side(&[&r.arms[0], &r.arms[1]], &[&states[0], &states[1]])
            );
            Ok(ExitCode::from(EXIT_DIVERGED))
        }
    }
}

fn run_slice_repro(file: &Path, r: &repro::SliceRepro) -> Result<ExitCode, String> {
    println!(
        "slice repro {}: {} run to dispatch {} under two slice plans ({})",
        file.display(),
        r.arm,
        r.dispatch,
        r.run.program.display()
    );
    println!("  plan A: {}", r.plans[0].name);
    println!("  plan B: {}", r.plans[1].name);
    match r.check()? {
        repro::SliceCheck::Consistent => {
            println!(
                "consistent: {} ends in the same state under both plans now",
                r.arm
            );
            Ok(ExitCode::SUCCESS)
        }
        repro::SliceCheck::Dependent {
            dep,
            same_as_recorded,
        } => {
            println!(
                "still slice-dependent{}:",
                if same_as_recorded {
                    ", exactly as recorded"
                } else {
                    ", not as recorded"
                }
            );
            print!("{}", dep.describe());
            Ok(ExitCode::from(EXIT_DIVERGED))
        }
    }
}

fn run_fuzz(a: FuzzArgs) -> Result<ExitCode, String> {
    let arms = arm_list(&Some(
        a.arms
            .clone()
            .unwrap_or_else(|| crate::fuzz::DEFAULT_ARMS.to_string()),
    ))?;
    let shape: crate::fuzz::Shape = a.shape.parse()?;
    let shard = crate::shard::ShardSel::resolve(a.shard.as_deref())?;
    if let Some(s) = &shard.note {
        eprintln!("{s}");
    }
    let o = crate::fuzz::FuzzOpts {
        seed: a.seed,
        count: a.count,
        shape,
        arms: arms.clone(),
        dispatches: a.dispatches.max(1),
        jobs: a.jobs,
        index: a.index,
        shard: shard.shard,
        out: a.out.clone(),
        shrink: !a.no_shrink,
    };
    if let Some(dir) = &a.emit {
        let n = crate::fuzz::emit(&o, dir)?;
        println!("wrote {n} programs to {}", dir.display());
        return Ok(ExitCode::SUCCESS);
    }
    let todo = crate::fuzz::indices(&o).len() as u64;
    println!(
        "oracle fuzz: seed {}, {} {} programs{}, arms {}, {} dispatches each",
        a.seed,
        todo,
        shape,
        match shard.shard {
            Some(s) if a.index.is_none() =>
                format!(" (shard {}/{} of {})", s.index, s.count, a.count),
            _ => String::new(),
        },
        arms.join(","),
        o.dispatches
    );
    let pb = bar(todo, "{bar:40} {pos}/{len} programs {elapsed} {msg}");
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = crate::fuzz::run(&o, &|c| {
        if c.verdict != crate::fuzz::Verdict::Exact {
            pb.println(format!(
                "#{} ({}, {} bytes): {:?} {}",
                c.index, c.shape, c.len, c.verdict, c.detail
            ));
            if let Some(p) = &c.repro {
                pb.println(format!("repro: {p}"));
            }
        }
        pb.inc(1);
    });
    std::panic::set_hook(hook);
    pb.finish_and_clear();
    let r = r?;
    finish_fuzz(&r, &a.json, Some(&a.html))
}

fn finish_fuzz(
    r: &crate::fuzz::FuzzReport,
    json: &Path,
    html_path: Option<&Path>,
) -> Result<ExitCode, String> {
    report::write_file(json, &r.to_json()?)?;
    match html_path {
        Some(h) => {
            report::write_file(h, &crate::fuzz::report::html(r))?;
            println!("wrote {} and {}", json.display(), h.display());
        }
        None => println!("wrote {}", json.display()),
    }
    println!("{}", r.line());
    Ok(if r.diverged + r.failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_DIVERGED)
    })
}
