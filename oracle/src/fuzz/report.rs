//! The fuzz report (`oracle-fuzz/2`): JSON, HTML, and merging shards.
//!
//! Owns the report types, reading a report back with a clear error, the
//! HTML page and [`merge`]: shards of one run (same seed, count, shape,
//! arms, budget) joined into the report the unsharded run writes, byte for
//! byte (nothing in a report depends on timing, scheduling or the shard).
//! It must not run programs.

use super::plan::Shape;
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const FORMAT: &str = "oracle-fuzz/2";

/// What happened to one program.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Exact,
    Diverged,
    Failed,
}

/// One program's record in the report (only programs that were not exact
/// are listed).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Case {
    pub index: u64,
    pub shape: Shape,
    /// Image size in bytes.
    pub len: usize,
    pub verdict: Verdict,
    /// The arms that differed from the reference (first line), then the
    /// bisected divergence, or the error.
    pub detail: String,
    /// The minimized program (divergences only): its plan in one line, its
    /// size, its path, the predicate runs shrinking took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimized: Option<Minimized>,
    /// The repro file `oracle repro` re-runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repro: Option<String>,
    /// The first differing dispatch, when bisection found it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatch: Option<u64>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Minimized {
    pub plan: String,
    pub len: usize,
    pub program: String,
    pub runs: usize,
}

/// Which shard of a run a report holds.
pub use crate::shard::ShardSpec as ShardId;

/// The whole run (or one shard of it).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct FuzzReport {
    pub format: String,
    pub seed: u64,
    /// Programs of the run (all shards together).
    pub count: u64,
    pub shape: Shape,
    pub arms: Vec<String>,
    pub dispatches: u64,
    /// Only in a shard's report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardId>,
    /// Only when one program was re-created (`--index`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u64>,
    pub exact: u64,
    pub diverged: u64,
    pub failed: u64,
    /// Diverged and failed programs, by index (exact ones are counted only).
    pub cases: Vec<Case>,
}

impl FuzzReport {
    /// The line the run ends with.
    pub fn line(&self) -> String {
        format!(
            "fuzz: {} programs, {} exact, {} diverged, {} failed",
            self.exact + self.diverged + self.failed,
            self.exact,
            self.diverged,
            self.failed
        )
    }

    pub fn to_json(&self) -> Result<String, String> {
        serde_json::to_string_pretty(self)
            .map(|s| s + "\n")
            .map_err(|e| e.to_string())
    }
}

/// Reads a fuzz report (JSON) back.
pub fn read(path: &Path) -> Result<FuzzReport, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let r: FuzzReport = serde_json::from_str(&text)
        .map_err(|e| format!("{}: not an oracle fuzz report: {e}", path.display()))?;
    if r.format != FORMAT {
        return Err(format!(
            "{}: report format `{}`, this oracle reads `{FORMAT}`",
            path.display(),
            r.format
        ));
    }
    Ok(r)
}

/// Whether a JSON file is a fuzz report (by its `format`), for `oracle
/// merge` to tell fuzz shards from sweep shards.
pub fn is_fuzz_report(text: &str) -> bool {
    #[derive(Deserialize)]
    struct F {
        format: String,
    }
    serde_json::from_str::<F>(text)
        .map(|f| f.format.starts_with("oracle-fuzz/"))
        .unwrap_or(false)
}

/// Joins the shards of one run: every shard of `0..N` exactly once, the
/// same run settings; the result is what the unsharded run writes.
pub fn merge(parts: Vec<(String, FuzzReport)>) -> Result<FuzzReport, String> {
    let Some((name0, first)) = parts.first() else {
        return Err("merge: no reports given".into());
    };
    let n = match first.shard {
        Some(s) => s.count,
        None => return Err(format!("{name0}: not a shard report (no `shard`)")),
    };
    let mut seen = vec![false; n as usize];
    for (name, p) in &parts {
        let same = p.seed == first.seed
            && p.count == first.count
            && p.shape == first.shape
            && p.arms == first.arms
            && p.dispatches == first.dispatches
            && p.index.is_none();
        if !same {
            return Err(format!(
                "{name}: a different run than {name0} (seed, count, shape, arms and budget must match)"
            ));
        }
        let s = p
            .shard
            .ok_or_else(|| format!("{name}: not a shard report (no `shard`)"))?;
        if s.count != n || s.index >= n {
            return Err(format!(
                "{name}: shard {}/{} does not belong with {n} shards",
                s.index, s.count
            ));
        }
        if std::mem::replace(&mut seen[s.index as usize], true) {
            return Err(format!("{name}: shard {}/{n} given twice", s.index));
        }
    }
    if let Some(k) = seen.iter().position(|s| !s) {
        return Err(format!("merge: shard {k}/{n} is missing"));
    }
    let mut cases: Vec<Case> = parts.iter().flat_map(|(_, p)| p.cases.clone()).collect();
    cases.sort_by_key(|c| c.index);
    let sum = |f: fn(&FuzzReport) -> u64| parts.iter().map(|(_, p)| f(p)).sum::<u64>();
    Ok(FuzzReport {
        format: FORMAT.into(),
        seed: first.seed,
        count: first.count,
        shape: first.shape,
        arms: first.arms.clone(),
        dispatches: first.dispatches,
        shard: None,
        index: None,
        exact: sum(|p| p.exact),
        diverged: sum(|p| p.diverged),
        failed: sum(|p| p.failed),
        cases,
    })
}

/// A self-contained page: the summary and one row per program that was not
/// exact.
pub fn html(r: &FuzzReport) -> String {
    let esc = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let mut s = format!(
        "<!doctype html><meta charset=utf-8><title>oracle fuzz seed {}</title>\n\
         <style>body{{font-family:sans-serif}}td{{vertical-align:top}}pre{{margin:0}}</style>\n\
         <h1>oracle fuzz, seed {}, shape {}</h1>\n<p>{}</p>\n<p>arms: {} (reference first); budget {} dispatches{}</p>\n\
         <table border=1 cellspacing=0 cellpadding=3><tr><th>#</th><th>shape</th><th>bytes</th><th>verdict</th>\
         <th>first differing dispatch</th><th>minimized</th><th>repro</th><th>detail</th></tr>\n",
        r.seed,
        r.seed,
        r.shape,
        esc(&r.line()),
        esc(&r.arms.join(", ")),
        r.dispatches,
        match r.shard {
            Some(s) => format!("; shard {}/{}", s.index, s.count),
            None => String::new(),
        }
    );
    for c in &r.cases {
        let min = c
            .minimized
            .as_ref()
            .map(|m| format!("{} bytes: {}<br>{}", m.len, esc(&m.plan), esc(&m.program)))
            .unwrap_or_default();
        s.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:?}</td><td>{}</td><td>{}</td><td>{}</td><td><pre>{}</pre></td></tr>\n",
            c.index,
            c.shape,
            c.len,
            c.verdict,
            c.dispatch.map(|d| d.to_string()).unwrap_or_default(),
            min,
            esc(c.repro.as_deref().unwrap_or("")),
            esc(&c.detail)
        ));
    }
    s.push_str("</table>\n");
    s
}
