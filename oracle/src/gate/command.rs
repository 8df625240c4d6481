//! `oracle gate DESIGN`: the arguments, the table, the record file and the
//! exit status (0 every criterion passed, 1 one failed, 2 bad input).

use super::eval::{evaluate, Criterion, EvalOptions, Verdict};
use super::file::GateFile;
use crate::report::{write_file, Status};
use crate::sweep::Progress;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct GateArgs {
    /// The design: its gate file is GATES/<design>.toml.
    pub design: String,
    /// The gates folder (its parent is the repo root corpus paths are
    /// relative to; records go to GATES/results/).
    #[arg(long, default_value = "gates")]
    pub gates: PathBuf,
    /// Programs run in parallel (1 keeps CPU ratios cleanest).
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// Repro files of divergences go here.
    #[arg(long, default_value = "out/gate/repro")]
    pub repro_dir: PathBuf,
    /// Do not write the record.
    #[arg(long)]
    pub no_record: bool,
}

struct Bar(ProgressBar);

impl Progress for Bar {
    fn start(&self, total: usize) {
        self.0.set_length(total as u64);
    }
    fn program(&self, name: &str) {
        self.0.set_message(name.to_string());
    }
    fn done(&self, name: &str, status: Status) {
        if status != Status::Exact {
            self.0.suspend(|| println!("{name}: {}", status.word()));
        }
        self.0.inc(1);
    }
}

/// The table: one row per criterion, then the verdict line.
pub fn table(criteria: &[Criterion]) -> String {
    // Each column as wide as its widest cell or its heading.
    let width = |cell: fn(&Criterion) -> &str, head: &str| {
        criteria
            .iter()
            .map(|c| cell(c).chars().count())
            .chain([head.chars().count()])
            .max()
            .unwrap_or(0)
    };
    let w0 = width(|c| &c.name, "criterion");
    let w1 = width(|c| &c.measured, "measured");
    let w2 = width(|c| &c.threshold, "threshold");
    let pad = |s: &str, w: usize| format!("{s}{}", " ".repeat(w.saturating_sub(s.chars().count())));
    let mut out = format!(
        "{}  {}  {}  verdict\n",
        pad("criterion", w0),
        pad("measured", w1),
        pad("threshold", w2)
    );
    for c in criteria {
        out += &format!(
            "{}  {}  {}  {}\n",
            pad(&c.name, w0),
            pad(&c.measured, w1),
            pad(&c.threshold, w2),
            c.verdict.word()
        );
    }
    out
}

/// The last line: `gate DESIGN: PASS` or `gate DESIGN: FAIL (K of N criteria fail)`.
pub fn verdict_line(design: &str, criteria: &[Criterion]) -> String {
    let bad = criteria
        .iter()
        .filter(|c| c.verdict == Verdict::Fail)
        .count();
    if bad == 0 {
        format!("gate {design}: PASS ({} criteria)", criteria.len())
    } else {
        format!(
            "gate {design}: FAIL ({bad} of {} criteria fail)",
            criteria.len()
        )
    }
}

pub fn run(a: GateArgs) -> Result<ExitCode, String> {
    let (g, text) = GateFile::load(&a.gates, &a.design)?;
    let root = a
        .gates
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let o = EvalOptions {
        root,
        gate_file: a
            .gates
            .join(format!("{}.toml", a.design))
            .display()
            .to_string(),
        jobs: a.jobs,
        repro_dir: Some(a.repro_dir.clone()),
    };
    println!(
        "oracle gate {}: {} ({})",
        g.design,
        o.gate_file,
        if g.about.is_empty() { "-" } else { &g.about }
    );
    let pb = ProgressBar::new(0);
    if let Ok(st) = ProgressStyle::with_template("{bar:40} {pos}/{len} {elapsed} {msg}") {
        pb.set_style(st);
    }
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = evaluate(&g, &text, &o, &Bar(pb.clone()), &|s| {
        pb.suspend(|| println!("{s}"))
    });
    std::panic::set_hook(hook);
    pb.finish_and_clear();
    let run = r?;
    let rec = &run.record;
    println!();
    print!("{}", table(&rec.criteria));
    if !a.no_record {
        let path = a.gates.join("results").join(rec.file_name());
        let json = serde_json::to_string_pretty(rec).map_err(|e| e.to_string())? + "\n";
        write_file(&path, &json)?;
        println!("wrote {}", path.display());
    }
    println!("{}", verdict_line(&g.design, &rec.criteria));
    Ok(if rec.verdict == Verdict::Pass {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(crate::cli::EXIT_DIVERGED)
    })
}
