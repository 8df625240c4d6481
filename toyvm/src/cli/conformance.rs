//! `toyvm conformance`: runs SingleStepTests hardware vectors against the CPU
//! and prints a table per opcode file, the skip and adjustment classes, and the
//! closing `conformance: P passed, F failed, S skipped` line; or, given the
//! test386 folder, runs that ROM and prints each POST code reached, the
//! differences of its 0xEE output with the reference, and the closing
//! `test386: POST XX, D differences` line.

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
    /// test386: the dispatch budget of the ROM run.
    #[arg(long, default_value_t = 400_000_000)]
    dispatches: u64,
    /// test386: write the ROM's printed output here.
    #[arg(long)]
    output: Option<PathBuf>,
}

fn test386(a: &Args) -> ExitCode {
    use toyvm::conformance::test386 as t;
    let engine = match a.engine.as_str() {
        "l0" => t::Engine::L0,
        "l1" => t::Engine::L1,
        other => {
            eprintln!("toyvm conformance: engine {other:?} cannot run test386 (available: l0, l1)");
            return ExitCode::FAILURE;
        }
    };
    let rom = match t::rom(&a.path) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("toyvm conformance: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("test386: ROM {}", rom.origin);
    let o = t::run(&rom.bytes, engine, a.dispatches);
    for (p, at) in &o.posts {
        println!("POST {p:02X} at dispatch {at}");
    }
    println!(
        "end: {} after {} dispatches at {:04X}:{:08X}",
        o.end,
        o.dispatches,
        o.cpu.sregs[toyvm::cpu::seg::CS],
        o.cpu.eip
    );
    if let Some(p) = &a.output {
        if let Err(e) = std::fs::write(p, &o.output) {
            eprintln!("toyvm conformance: {}: {e}", p.display());
        }
    }
    let diffs = if rom.prints {
        let rp = a.path.join("test386-EE-reference.txt");
        let reference = match std::fs::read(&rp) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("toyvm conformance: {}: {e}", rp.display());
                return ExitCode::FAILURE;
            }
        };
        let (n, first) = t::compare(&o.output, &reference, 20);
        for f in first {
            println!("DIFF {f}");
        }
        n
    } else {
        println!("0xEE output not compared: the ROM prints nowhere");
        0
    };
    println!("test386: POST {:02X}, {diffs} differences", o.post());
    if o.post() == 0xFF && diffs == 0 && rom.prints {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

pub fn main(a: Args) -> ExitCode {
    if toyvm::conformance::test386::is_suite(&a.path) {
        return test386(&a);
    }
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
