//! The Markdown summary a sweep prints: one row per program, one column per
//! arm, then the timing summary. Owns formatting only; it must not compute
//! results.

use super::{ArmResult, ArmTimingSummary, ProgramResult, Status, SweepReport, TimingSummary};
use std::fmt::Write as _;

pub use super::arm_labels;

pub fn ms(ns: u64) -> String {
    format!("{:.1} ms", ns as f64 / 1e6)
}

/// Program labels: the name, or `name (binary)` where two programs of the
/// report share a name (external corpora).
pub fn program_labels(r: &SweepReport) -> Vec<String> {
    r.programs
        .iter()
        .map(|p| {
            if r.programs.iter().filter(|q| q.name == p.name).count() > 1 {
                format!("{} ({})", p.name, p.binary)
            } else {
                p.name.clone()
            }
        })
        .collect()
}

/// One arm's cell (without timing when the report has none).
pub fn arm_cell(a: &ArmResult, reference: bool) -> String {
    let mut parts = Vec::new();
    if !reference {
        parts.push(match &a.divergence {
            None => "exact".to_string(),
            Some(d) => match &d.first {
                Some(f) => format!("diverged @{} ({})", f.dispatch, f.fields.join(" ")),
                None => format!(
                    "diverged in {}..{} ({})",
                    d.window.0,
                    d.window.1,
                    d.fields.join(" ")
                ),
            },
        });
    }
    if let Some(t) = &a.timing {
        match (reference, t.ratio) {
            (false, Some(r)) => parts.push(format!("x{r:.2}")),
            _ => parts.push(ms(t.cpu_ns)),
        }
        if let Some(b) = t.build_ns {
            parts.push(format!("build {}", ms(b)));
        }
    }
    if let Some(u) = a.uops_per_insn {
        parts.push(format!("{u:.2} µops/insn"));
    }
    if let Some(f) = a.fallbacks {
        parts.push(format!("{f} fb"));
    }
    if let Some(h) = a.handbacks {
        parts.push(format!("{h} hb"));
    }
    if parts.is_empty() {
        "ref".into()
    } else {
        parts.join(", ")
    }
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The Markdown table and summary.
pub fn render(r: &SweepReport) -> String {
    let labels = arm_labels(&r.arms);
    let mut s = String::new();
    let _ = write!(s, "| program | result | dispatches | end |");
    for l in &labels {
        let _ = write!(s, " {} |", cell(l));
    }
    s.push('\n');
    s.push_str("|---|---|---:|---|");
    for _ in &labels {
        s.push_str("---|");
    }
    s.push('\n');
    for (p, name) in r.programs.iter().zip(program_labels(r)) {
        row(&mut s, p, &name, labels.len());
    }
    if let Some(t) = &r.timings {
        s.push('\n');
        s.push_str(&timing_table(t));
    }
    s
}

/// The cells of one arm's row of the timing summary: label, CPU total,
/// build, exec, geomean CPU ratio, geomean exec ratio.
pub fn timing_cells(a: &ArmTimingSummary) -> [String; 6] {
    let g = |x: Option<f64>| x.map(|g| format!("x{g:.3}")).unwrap_or_else(|| "-".into());
    [
        if a.null_band {
            format!("{} (null band)", a.arm)
        } else {
            a.arm.clone()
        },
        ms(a.cpu_ns),
        a.build_ns.map(ms).unwrap_or_else(|| "-".into()),
        ms(a.exec_ns),
        match a.geomean_ratio {
            Some(_) => format!("{} over {}", g(a.geomean_ratio), a.programs),
            None => "-".into(),
        },
        g(a.geomean_exec_ratio),
    ]
}

/// Header of the timing summary table.
pub const TIMING_HEADER: [&str; 6] = [
    "arm",
    "CPU total",
    "build",
    "exec",
    "geomean CPU ratio (exact programs)",
    "geomean exec ratio",
];

/// The timing summary: per arm CPU, build and exec totals and geomean
/// ratios, then the null band.
pub fn timing_table(t: &TimingSummary) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "| {} |", TIMING_HEADER.join(" | "));
    let _ = writeln!(s, "|---|---:|---:|---:|---:|---:|");
    for a in &t.arms {
        let c = timing_cells(a);
        let _ = writeln!(
            s,
            "| {} |",
            c.iter().map(|x| cell(x)).collect::<Vec<_>>().join(" | ")
        );
    }
    if let Some(nb) = &t.null_band {
        let _ = writeln!(s, "\n{}", null_band_line(nb));
    }
    s
}

/// One line saying what the null band is and how wide it was.
pub fn null_band_line(nb: &super::NullBand) -> String {
    format!(
        "null band ({} = {} against itself, {} programs): x{:.3} .. x{:.3}, geomean x{:.3}",
        if nb.column.is_empty() {
            &nb.arm
        } else {
            &nb.column
        },
        nb.arm,
        nb.programs,
        nb.min,
        nb.max,
        nb.geomean
    )
}

fn row(s: &mut String, p: &ProgramResult, name: &str, narms: usize) {
    let (disp, end) = p
        .arms
        .first()
        .map(|a| (a.last.dispatches.to_string(), a.last.end.clone()))
        .unwrap_or_default();
    let result = match (&p.status, &p.error) {
        (Status::Failed, Some(e)) => format!("failed: {e}"),
        (st, _) => st.word().to_string(),
    };
    let _ = write!(
        s,
        "| {} | {} | {} | {} |",
        cell(name),
        cell(&result),
        disp,
        cell(&end)
    );
    for i in 0..narms {
        let c = match p.status {
            Status::Failed => "-".to_string(),
            _ => p
                .arms
                .get(i)
                .map(|a| arm_cell(a, i == 0))
                .unwrap_or_default(),
        };
        let _ = write!(s, " {} |", cell(&c));
    }
    s.push('\n');
}
