//! `toyvm conformance`: runs SingleStepTests hardware vectors against the CPU
//! and prints a table per opcode file, the skip and adjustment classes, and the
//! closing `conformance: P passed, F failed, S skipped` line.

use std::path::PathBuf;
use std::process::ExitCode;
use toyvm::conformance::runner::{self, Engine, Options};

#[derive(clap::Args)]
pub struct Args {
    /// A suite folder (e.g. ../shared/cpu-tests/80286), a folder of .MOO(.gz)
    /// files, or one file.
    path: PathBuf,
    /// Only files whose opcode name starts with this, e.g. `F6` or `F6.6`.
    #[arg(long)]
    filter: Option<String>,
    /// Print the first failures with a register diff.
    #[arg(long)]
    verbose: bool,
    /// How many failures --verbose prints.
    #[arg(long, default_value_t = 20)]
    max_failures: usize,
    /// Run at most this many tests per file.
    #[arg(long)]
    limit: Option<usize>,
    /// Engine under test.
    #[arg(long, default_value = "l0")]
    engine: String,
}

pub fn main(a: Args) -> ExitCode {
    let engine: Engine = match a.engine.parse() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("toyvm conformance: {e}");
            return ExitCode::FAILURE;
        }
    };
    let opts = Options {
        filter: a.filter,
        limit: a.limit,
        verbose: if a.verbose { a.max_failures } else { 0 },
        engine,
    };
    let mut out = std::io::stdout();
    let sum = match runner::run(&a.path, &opts, &mut out) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("toyvm conformance: {e}");
            return ExitCode::FAILURE;
        }
    };
    for f in &sum.failures {
        println!("FAIL {f}");
    }
    for (class, n) in &sum.skips {
        println!("skipped {n:>7}  {class}");
    }
    for (class, n) in &sum.adjusted {
        println!("adjusted {n:>6}  {class}");
    }
    if engine == Engine::E1 {
        // µop arms integration point: how much ran as µops.
        let st = toyvm::tiers::conformance::stats();
        println!(
            "e1: {} of {} test runs executed µop programs; {} dispatches in µops, {} on L0",
            st.tests_in_uops, st.tests, st.uop_dispatches, st.l0_dispatches
        );
    }
    println!("{}", sum.line());
    if sum.failed() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
