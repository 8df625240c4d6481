//! `oracle gate DESIGN`: evaluate a design's gate file, `gates/<design>.toml`.
//!
//! A gate file says which corpora (sampled), which arms, and what must hold
//! on the toyvm side (exactness, density, speed against the reference with
//! a null band) and on the mainemu side. [`file`] owns the format,
//! [`eval`] runs the criteria and builds the record, [`mainemu_side`] the
//! mainemu arm against mainemu's reference, [`command`] is the
//! CLI (table, exit status, the record under `gates/results/`). The sweep
//! and the census are the library's own ([`crate::sweep`],
//! `toyvm::tiers::census`); this module only selects, runs and judges.
//! docs/gates.md describes the format and the criteria.

pub mod command;
pub mod eval;
pub mod file;
pub mod mainemu_side;

pub use eval::{evaluate, Criterion, GateRecord, GateRun, Verdict};
pub use file::GateFile;
