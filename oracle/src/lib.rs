//! `oracle`: the exactness oracle and the lab's driver.
//!
//! Runs arms side by side ([`compare`]), bisects to the first divergent
//! dispatch ([`bisect`]), writes and re-runs repro files ([`repro`]), sweeps
//! a corpus ([`sweep`]) and writes reports (JSON, Markdown, HTML with
//! frames: [`report`]); the `oracle` CLI is [`cli`]. It drives the VMs; it
//! never implements guest semantics. docs/oracle.md describes it.

pub mod arm_run;
pub mod arms;
pub mod bisect;
pub mod cli;
pub mod compare;
pub mod cputime;
pub mod diff;
pub mod disasm;
pub mod fuzz;
pub mod gate;
pub mod report;
pub mod repro;
pub mod shard;
pub mod slicing;
pub mod spec;
pub mod state;
pub mod sweep;
pub mod win32;
