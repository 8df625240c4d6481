//! Density and coverage census of the µop arms over DOS programs.
//!
//! Owns turning programs (a file, a directory of DOS programs, or the
//! built-in `corpus-dos` manifest) into session configurations, running each
//! on an `only-<set>` arm (in census mode when coverage is asked for), and
//! the figures: per program the µops executed per x86 instruction executed
//! inside programs (dynamic) and the E1 ops per lowered instruction
//! (static); medians over programs; and, weighted by how often the programs
//! execute them, which instruction forms lower and which fall back. It must
//! not change how a program runs (the arm is the same engine `toyvm run
//! --arm only-naive` uses).

use super::only::{FormCount, OnlyNaive};
use crate::session::{Config, End, Program, Session};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One program to run.
#[derive(Clone, Debug)]
pub struct Entry {
    pub name: String,
    pub cfg: Config,
}

/// The census of one program.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Row {
    pub name: String,
    pub dispatches: u64,
    pub end: String,
    /// Dispatches retired inside µop programs, and the E1 ops they took.
    pub uop_insns: u64,
    pub uops: u64,
    /// Instructions lowered into programs, and the E1 ops of those programs.
    pub instructions_lowered: u64,
    pub static_uops: u64,
    pub programs_built: u64,
    pub fallbacks: u64,
    pub spin_dispatches: u64,
    /// E1 runs that returned to the driver (program entries from outside).
    pub handbacks: u64,
    /// E1 ops executed by op name (`e1::op_name`); they sum to `uops`.
    pub by_op: BTreeMap<String, u64>,
    pub error: Option<String>,
}

impl Row {
    /// µops per x86 instruction executed inside programs.
    pub fn dynamic(&self) -> Option<f64> {
        (self.uop_insns > 0).then(|| self.uops as f64 / self.uop_insns as f64)
    }
    /// E1 ops per lowered x86 instruction.
    pub fn static_density(&self) -> Option<f64> {
        (self.instructions_lowered > 0)
            .then(|| self.static_uops as f64 / self.instructions_lowered as f64)
    }
}

/// Median of the values (None when empty).
pub fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

fn parse_dos(s: &str) -> (u8, u8) {
    let (a, b) = s.split_once('.').unwrap_or((s, "0"));
    match (a.trim().parse(), b.trim().parse()) {
        (Ok(x), Ok(y)) => (x, y),
        _ => (5, 0),
    }
}

/// The configurations of a corpus (manifest budgets, keys, companions, DOS
/// versions, arguments); `budget` overrides every budget.
pub fn corpus_entries(c: &corpus_dos::Corpus, budget: Option<u64>) -> Result<Vec<Entry>, String> {
    let mut out = Vec::new();
    for p in &c.programs {
        let mut cfg = Config::new(c.binary_path(p));
        cfg.program.args = p.args.clone();
        cfg.budget = budget.unwrap_or(p.budget);
        cfg.dos_version = parse_dos(&p.dos_version);
        cfg.keys = (!p.keys.trim().is_empty()).then(|| p.keys.clone());
        for comp in &p.companions {
            let cp = c
                .get(comp)
                .ok_or_else(|| format!("{}: companion `{comp}` is not in the corpus", p.name))?;
            cfg.companions.push(Program {
                path: c.binary_path(cp),
                args: cp.args.clone(),
            });
        }
        out.push(Entry {
            name: p.name.clone(),
            cfg,
        });
    }
    Ok(out)
}

/// `builtin`, a directory (a `MANIFEST.tsv` corpus or `.COM`/`.EXE` files
/// below it) or one program file.
pub fn entries(target: &str, budget: Option<u64>) -> Result<Vec<Entry>, String> {
    if target == "builtin" {
        let c = corpus_dos::builtin()?;
        return corpus_entries(&c, budget);
    }
    let p = PathBuf::from(target);
    if p.is_dir() {
        let c = corpus_dos::load_dir(&p).map_err(|e| e.0)?;
        return corpus_entries(&c, budget);
    }
    if p.is_file() {
        let mut cfg = Config::new(&p);
        cfg.budget = budget.unwrap_or(cfg.budget);
        let name = Path::new(target)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or(target)
            .to_string();
        return Ok(vec![Entry { name, cfg }]);
    }
    Err(format!(
        "{target}: not `builtin`, a directory or a program file"
    ))
}

/// Runs one program on `only-<passes>` (census mode with `coverage`).
pub fn run(
    e: &Entry,
    coverage: bool,
    passes: shared_ir::opt::PassSet,
) -> (Row, BTreeMap<String, FormCount>) {
    let mut row = Row {
        name: e.name.clone(),
        ..Row::default()
    };
    let engine = if coverage {
        OnlyNaive::with_census_passes(passes)
    } else {
        OnlyNaive::with_passes(passes)
    }
    .profile_ops();
    let mut cfg = e.cfg.clone();
    cfg.arm = format!("only-{}", passes.canonical());
    let mut s = match Session::with_engine(&cfg, Box::new(engine)) {
        Ok(s) => s,
        Err(err) => {
            row.error = Some(err);
            return (row, BTreeMap::new());
        }
    };
    let end = s.run().clone();
    row.end = match end {
        End::Exited { code } => format!("exited {code}"),
        End::Budget => "budget".into(),
        End::Stopped(st) => format!("stopped: {}", st.what),
    };
    row.dispatches = s.clock();
    let c = s.counters().unwrap_or(serde_json::Value::Null);
    let g = |k: &str| c.get(k).and_then(|v| v.as_u64()).unwrap_or(0);
    row.uop_insns = g("uop_insns");
    row.uops = g("uops");
    row.instructions_lowered = g("instructions_lowered");
    row.static_uops = g("static_uops");
    row.programs_built = g("programs_built");
    row.fallbacks = g("fallbacks");
    row.spin_dispatches = g("spin_dispatches");
    row.handbacks = g("handbacks");
    if let Some(b) = c.get("uops_by_op").and_then(|v| v.as_object()) {
        for (k, v) in b {
            row.by_op.insert(k.clone(), v.as_u64().unwrap_or(0));
        }
    }
    let mut forms = BTreeMap::new();
    if let Some(f) = c.get("census_forms").and_then(|v| v.as_object()) {
        for (k, v) in f {
            let n = |x: &str| v.get(x).and_then(|y| y.as_u64()).unwrap_or(0);
            forms.insert(
                k.clone(),
                FormCount {
                    lowered: n("lowered"),
                    fallback: n("fallback"),
                    refused: n("refused"),
                    reason: v
                        .get("reason")
                        .and_then(|r| r.as_str())
                        .unwrap_or("")
                        .to_string(),
                },
            );
        }
    }
    (row, forms)
}

/// The class of an op name as `e1::op_class` has it (names come from
/// `e1::op_name`).
pub fn class_of(name: &str) -> &'static str {
    shared_ir::e1::op::by_name(name).map_or("?", shared_ir::e1::op_class)
}

/// Adds `b` into `a`.
pub fn merge_forms(a: &mut BTreeMap<String, FormCount>, b: BTreeMap<String, FormCount>) {
    for (k, v) in b {
        let x = a.entry(k).or_default();
        x.lowered += v.lowered;
        x.fallback += v.fallback;
        x.refused += v.refused;
        if x.reason.is_empty() {
            x.reason = v.reason;
        }
    }
}
