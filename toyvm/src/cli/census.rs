//! `toyvm census PROGRAM|DIR|builtin --passes SET` (or `--ablate SET`): µops per x86
//! instruction over DOS programs, and (`--coverage`) which instruction forms
//! lower and which fall back, weighted by how often the programs execute
//! them.
//!
//! Owns the arguments and the printing; the runs and figures are
//! `toyvm::tiers::census`. The last line is exactly
//! `census: D.DD uops per x86 instruction (dynamic median), S.SS static`.

use shared_ir::opt::PassSet;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use toyvm::tiers::census::{self, Row};
use toyvm::tiers::only::FormCount;

#[derive(clap::Args)]
pub struct Args {
    /// A DOS program, a directory of DOS programs (or a MANIFEST.tsv
    /// corpus such as ../shared/dos-real), or `builtin` (corpus-dos).
    pub target: String,
    /// Pass set of the µop programs: naive, baseline, all, or a list of
    /// passes and sets joined by `,` or `.` (`~PASS` switches one off).
    #[arg(long, default_value = "naive")]
    pub passes: String,
    /// Instead of one census, a table: the set, then the set with each of
    /// its passes off in turn (e.g. `--ablate all`). Rows are not printed.
    #[arg(long)]
    pub ablate: Option<String>,
    /// Budget per program (default: the manifest's, else 20M).
    #[arg(long)]
    pub dispatches: Option<u64>,
    /// Also print the coverage table (instruction forms by executions).
    #[arg(long)]
    pub coverage: bool,
    /// Only programs whose name contains this.
    #[arg(long)]
    pub filter: Option<String>,
    /// Write rows (and forms with --coverage) as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Coverage rows to print (most executed first).
    #[arg(long, default_value_t = 60)]
    pub top: usize,
}

pub fn main(a: Args) -> ExitCode {
    match run(a) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("toyvm census: {e}");
            ExitCode::FAILURE
        }
    }
}

fn fmt(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{v:.2}"))
}

fn run(a: Args) -> Result<ExitCode, String> {
    let passes = PassSet::parse(&a.passes)?;
    let mut entries = census::entries(&a.target, a.dispatches)?;
    if let Some(f) = &a.filter {
        entries.retain(|e| e.name.contains(f.as_str()));
    }
    if entries.is_empty() {
        return Err("no programs".into());
    }
    if let Some(set) = &a.ablate {
        return ablate(&entries, PassSet::parse(set)?);
    }
    println!(
        "{:<24} {:>11} {:>7} {:>6} {:>6} {:>9} {:>9}  end",
        "program", "dispatches", "in µops", "dyn", "static", "fallbacks", "spin"
    );
    let mut rows: Vec<Row> = Vec::new();
    let mut forms: BTreeMap<String, FormCount> = BTreeMap::new();
    for e in &entries {
        let (r, f) = census::run(e, a.coverage, passes);
        census::merge_forms(&mut forms, f);
        match &r.error {
            Some(err) => println!("{:<24} error: {err}", r.name),
            None => println!(
                "{:<24} {:>11} {:>6.1}% {:>6} {:>6} {:>9} {:>9}  {}",
                r.name,
                r.dispatches,
                100.0 * r.uop_insns as f64 / r.dispatches.max(1) as f64,
                fmt(r.dynamic()),
                fmt(r.static_density()),
                r.fallbacks,
                r.spin_dispatches,
                r.end
            ),
        }
        rows.push(r);
    }
    let dynm = census::median(rows.iter().filter_map(|r| r.dynamic()).collect());
    let stat = census::median(rows.iter().filter_map(|r| r.static_density()).collect());
    let (u, i): (u64, u64) = rows
        .iter()
        .fold((0, 0), |(u, i), r| (u + r.uops, i + r.uop_insns));
    let (su, si): (u64, u64) = rows.iter().fold((0, 0), |(u, i), r| {
        (u + r.static_uops, i + r.instructions_lowered)
    });
    let disp: u64 = rows.iter().map(|r| r.dispatches).sum();
    let fb: u64 = rows.iter().map(|r| r.fallbacks).sum();
    println!();
    println!(
        "{} programs, {} with µop dispatches; {} dispatches, {:.1}% inside µop programs, {} fallbacks",
        rows.len(),
        rows.iter().filter(|r| r.uop_insns > 0).count(),
        disp,
        100.0 * i as f64 / disp.max(1) as f64,
        fb
    );
    println!(
        "pooled: {} dynamic ({} µops / {} instructions), {} static ({} ops / {} lowered instructions)",
        fmt((i > 0).then(|| u as f64 / i as f64)),
        u,
        i,
        fmt((si > 0).then(|| su as f64 / si as f64)),
        su,
        si
    );
    print_breakdown(&rows, a.top);
    if a.coverage {
        print_coverage(&forms, a.top);
    }
    if let Some(p) = &a.json {
        let j = serde_json::json!({ "rows": rows, "forms": forms });
        std::fs::write(
            p,
            serde_json::to_string_pretty(&j).map_err(|e| e.to_string())? + "\n",
        )
        .map_err(|e| format!("{}: {e}", p.display()))?;
    }
    println!(
        "census: {} uops per x86 instruction (dynamic median), {} static",
        fmt(dynm),
        fmt(stat)
    );
    Ok(ExitCode::SUCCESS)
}

/// Dynamic median, pooled dynamic, static median of rows.
fn figures(rows: &[Row]) -> (Option<f64>, Option<f64>, Option<f64>) {
    let dynm = census::median(rows.iter().filter_map(|r| r.dynamic()).collect());
    let stat = census::median(rows.iter().filter_map(|r| r.static_density()).collect());
    let (u, i) = rows
        .iter()
        .fold((0u64, 0u64), |(u, i), r| (u + r.uops, i + r.uop_insns));
    (dynm, (i > 0).then(|| u as f64 / i as f64), stat)
}

/// `--ablate SET`: the set, then each of its passes off in turn.
fn ablate(entries: &[census::Entry], set: PassSet) -> Result<ExitCode, String> {
    let mut variants = vec![(set.canonical(), set)];
    for p in set.passes() {
        variants.push((format!("{}.~{}", set.canonical(), p.name()), set.without(p)));
    }
    variants.push(("naive".into(), PassSet::NAIVE));
    println!("| passes | dynamic median | pooled | static median |");
    println!("|---|---:|---:|---:|");
    for (name, ps) in variants {
        let rows: Vec<Row> = entries
            .iter()
            .map(|e| census::run(e, false, ps).0)
            .collect();
        let (d, pl, st) = figures(&rows);
        println!("| {name} | {} | {} | {} |", fmt(d), fmt(pl), fmt(st));
    }
    Ok(ExitCode::SUCCESS)
}

/// Where the µops go: E1 ops executed by class and by op, per x86
/// instruction executed inside programs, pooled over the programs and as
/// the median over programs (medians do not add up; pooled figures do).
fn print_breakdown(rows: &[Row], top: usize) {
    let rows: Vec<&Row> = rows.iter().filter(|r| r.uop_insns > 0).collect();
    let insns: u64 = rows.iter().map(|r| r.uop_insns).sum();
    if insns == 0 {
        return;
    }
    let mut by_class: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut by_op: BTreeMap<&str, u64> = BTreeMap::new();
    let mut per_prog: BTreeMap<&'static str, Vec<f64>> = BTreeMap::new();
    for r in &rows {
        let mut mine: BTreeMap<&'static str, u64> = BTreeMap::new();
        for (k, n) in &r.by_op {
            let c = census::class_of(k);
            *by_class.entry(c).or_default() += n;
            *mine.entry(c).or_default() += n;
            *by_op.entry(k.as_str()).or_default() += n;
        }
        for c in classes() {
            let n = mine.get(c).copied().unwrap_or(0);
            per_prog
                .entry(c)
                .or_default()
                .push(n as f64 / r.uop_insns as f64);
        }
    }
    let total: u64 = by_class.values().sum();
    let runs: u64 = rows.iter().map(|r| r.handbacks).sum();
    println!();
    println!(
        "breakdown: µops per x86 instruction by op class ({} programs, {} instructions in µops, {} E1 runs = {:.1} instructions per run)",
        rows.len(),
        insns,
        runs,
        insns as f64 / runs.max(1) as f64
    );
    println!(
        "{:<11} {:>14} {:>8} {:>7} {:>8}",
        "class", "µops", "pooled", "share", "median"
    );
    for c in classes() {
        let n = by_class.get(c).copied().unwrap_or(0);
        println!(
            "{:<11} {:>14} {:>8.3} {:>6.1}% {:>8.3}",
            c,
            n,
            n as f64 / insns as f64,
            100.0 * n as f64 / total.max(1) as f64,
            census::median(per_prog.remove(c).unwrap_or_default()).unwrap_or(0.0)
        );
    }
    println!(
        "{:<11} {:>14} {:>8.3}",
        "total",
        total,
        total as f64 / insns as f64
    );
    let mut v: Vec<(&str, u64)> = by_op.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    println!("ops by executions (pooled per x86 instruction):");
    for (k, n) in v.iter().take(top.min(30)) {
        println!(
            "  {:<11} {:<10} {:>14} {:>8.3}",
            k,
            census::class_of(k),
            n,
            *n as f64 / insns as f64
        );
    }
}

/// The census classes of E1's ops, in print order (`e1::op::Class`).
fn classes() -> impl Iterator<Item = &'static str> {
    shared_ir::e1::op::Class::ALL.iter().map(|c| c.name())
}

fn print_coverage(forms: &BTreeMap<String, FormCount>, top: usize) {
    let total: u64 = forms
        .values()
        .map(|f| f.lowered + f.fallback + f.refused)
        .sum();
    let lowered_forms = forms.values().filter(|f| f.reason.is_empty()).count();
    let lowered_exec: u64 = forms.values().map(|f| f.lowered).sum();
    let fb_exec: u64 = forms.values().map(|f| f.fallback).sum();
    let rf_exec: u64 = forms.values().map(|f| f.refused).sum();
    println!();
    println!(
        "coverage: {} instruction forms executed, {} lower; executions: {:.2}% in µop programs, {:.2}% fall back (not expressible), {:.3}% refused at run time",
        forms.len(),
        lowered_forms,
        100.0 * lowered_exec as f64 / total.max(1) as f64,
        100.0 * fb_exec as f64 / total.max(1) as f64,
        100.0 * rf_exec as f64 / total.max(1) as f64
    );
    let mut v: Vec<(&String, &FormCount)> = forms.iter().collect();
    v.sort_by(|a, b| {
        let ta = a.1.lowered + a.1.fallback + a.1.refused;
        let tb = b.1.lowered + b.1.fallback + b.1.refused;
        tb.cmp(&ta).then(a.0.cmp(b.0))
    });
    println!(
        "{:<28} {:>12} {:>7}  {:>12} {:>10}  why it falls back",
        "form (iced Code)", "executions", "share", "fallbacks", "refused"
    );
    for (k, f) in v.iter().take(top) {
        let t = f.lowered + f.fallback + f.refused;
        println!(
            "{:<28} {:>12} {:>6.2}%  {:>12} {:>10}  {}",
            k,
            t,
            100.0 * t as f64 / total.max(1) as f64,
            f.fallback,
            f.refused,
            f.reason
        );
    }
    let mut fbv: Vec<(&String, &FormCount)> =
        forms.iter().filter(|(_, f)| f.fallback > 0).collect();
    fbv.sort_by(|a, b| b.1.fallback.cmp(&a.1.fallback).then(a.0.cmp(b.0)));
    println!();
    println!("fallback forms by executions ({}):", fbv.len());
    for (k, f) in fbv.iter().take(top) {
        println!(
            "{:<28} {:>12} {:>6.3}%  {}",
            k,
            f.fallback,
            100.0 * f.fallback as f64 / total.max(1) as f64,
            f.reason
        );
    }
}
