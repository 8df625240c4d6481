//! The designs registry: which tier designs mainemu knows, which are on by
//! default, and the rule that puts one on.
//!
//! A design (a pass set, later a mechanism switch) carries a gate file in
//! the repo, `gates/<design>.toml`, that `oracle gate DESIGN` evaluates; each
//! run writes a record to `gates/results/` (docs/gates.md). A design may be
//! on by default here only when a record for it passed against the current
//! contents of its gate file: [`check_default_on`] says which default-on
//! designs lack one, and the test `designs` runs it on the repo.
//!
//! Owns the list, the gate-file hash both sides agree on ([`gate_hash`]) and
//! the few record fields the rule reads ([`RecordView`]); the record format
//! and the gate evaluation belong to `oracle` (`oracle/src/gate/`). The µop
//! arms exist ([`UOP_ARMS`], `crate::uop`); no design is on until its gate
//! passes, and the gate cannot measure mainemu's side yet.

use serde::Deserialize;
use sha1::{Digest, Sha1};
use std::path::Path;

/// A design mainemu knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Design {
    /// The gate file is `gates/<name>.toml`.
    pub name: &'static str,
    /// What it is.
    pub what: &'static str,
    /// On by default (allowed only with a passing record, see
    /// [`check_default_on`]).
    pub default_on: bool,
}

/// Every design mainemu knows; both are off until the µop tier is ported
/// and their gates pass.
pub const DESIGNS: &[Design] = &[
    Design {
        name: "baseline",
        what: "µop programs through the `baseline` pass set",
        default_on: false,
    },
    Design {
        name: "all",
        what: "µop programs through the `all` pass set",
        default_on: false,
    },
];

/// The named µop arms mainemu runs (`crate::uop`; any `only-<passes>`
/// spelling parses too). The `uop` arm (hot loop heads on L1) is not built.
pub const UOP_ARMS: &[&str] = &["only-naive", "only-baseline", "only-all"];

/// Whether mainemu can run this arm (`l0` always; µop arms per [`UOP_ARMS`]).
pub fn has_arm(arm: &str) -> bool {
    arm == "l0" || UOP_ARMS.contains(&arm)
}

/// The designs on by default.
pub fn default_on(designs: &[Design]) -> Vec<&Design> {
    designs.iter().filter(|d| d.default_on).collect()
}

/// The hash a record carries of the gate file it was measured against:
/// SHA-1 of the file's bytes, lowercase hex.
pub fn gate_hash(bytes: &[u8]) -> String {
    Sha1::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The fields of a gate record (`gates/results/*.json`) this rule reads;
/// the record has more (numbers, date), written by `oracle gate`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct RecordView {
    pub design: String,
    /// [`gate_hash`] of the gate file the run evaluated.
    pub gate_sha1: String,
    /// `PASS` or `FAIL`.
    pub verdict: String,
}

/// Reads every `*.json` record in `results` (none when the folder is
/// missing); a file that is not a record is an error.
pub fn read_records(results: &Path) -> Result<Vec<RecordView>, String> {
    let Ok(rd) = std::fs::read_dir(results) else {
        return Ok(Vec::new());
    };
    let mut paths: Vec<_> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            let t = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
            serde_json::from_str(&t).map_err(|e| format!("{}: not a gate record: {e}", p.display()))
        })
        .collect()
}

/// Whether `design` has a passing record for the gate file text `gate`.
pub fn passing_record(design: &str, gate: &[u8], records: &[RecordView]) -> bool {
    let h = gate_hash(gate);
    records
        .iter()
        .any(|r| r.design == design && r.gate_sha1 == h && r.verdict == "PASS")
}

/// The default-on designs of `designs` that have no passing record for the
/// current contents of `gates/<name>.toml` under `gates_dir` (records in
/// `gates_dir/results/`), each with the reason. Empty: the defaults hold.
pub fn check_default_on(designs: &[Design], gates_dir: &Path) -> Result<Vec<String>, String> {
    let records = read_records(&gates_dir.join("results"))?;
    let mut bad = Vec::new();
    for d in default_on(designs) {
        let path = gates_dir.join(format!("{}.toml", d.name));
        let Ok(gate) = std::fs::read(&path) else {
            bad.push(format!(
                "{}: on by default but {} is missing",
                d.name,
                path.display()
            ));
            continue;
        };
        if !passing_record(d.name, &gate, &records) {
            let h = gate_hash(&gate);
            let seen: Vec<&RecordView> = records.iter().filter(|r| r.design == d.name).collect();
            let why = if seen.is_empty() {
                "no record".to_string()
            } else if seen.iter().any(|r| r.gate_sha1 == h) {
                "its records for this gate file fail".to_string()
            } else {
                "no record for the current gate file (it changed since)".to_string()
            };
            bad.push(format!(
                "{}: on by default without a passing record ({why}; run `oracle gate {}`)",
                d.name, d.name
            ));
        }
    }
    Ok(bad)
}
