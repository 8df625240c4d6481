//! `armbench`: times arms side by side on whole programs.
//!
//!     cargo run --release -p benches --bin armbench -- --arms l0,l1 PROGRAM...
//!
//! Prints a Markdown table (and `--json FILE` writes the rows).

use benches::armbench::{self, Program};
use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "armbench",
    about = "Interleaved whole-program timing of toyvm arms"
)]
struct Args {
    /// Arms, comma-separated; the first is the reference and gets a null band.
    #[arg(long, default_value = "l0,l1")]
    arms: String,
    /// Repetitions per arm.
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Dispatch budget per run.
    #[arg(long, default_value_t = 2_000_000_000)]
    budget: u64,
    /// Machine: `dos` (the DOS session of `toyvm run`) or `flat` (flat bus,
    /// mini DOS: INT 21h print/exit; arms l0, l1, l1-indirect).
    #[arg(long, default_value = "dos")]
    machine: String,
    /// Time with `cpu` (thread CPU time) or `wall`.
    #[arg(long, default_value = "cpu")]
    clock: String,
    /// Write the rows as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Programs: `FILE.COM` or `FILE.COM:ARGS` (command tail).
    programs: Vec<String>,
}

fn main() -> ExitCode {
    let a = Args::parse();
    let arms: Vec<String> = a.arms.split(',').map(|s| s.trim().to_string()).collect();
    let programs: Vec<Program> = a
        .programs
        .iter()
        .map(|p| Program::parse(p, a.budget))
        .collect();
    let run: &dyn Fn(&Program, &str) -> Result<armbench::Run, String> = match a.machine.as_str() {
        "flat" => &armbench::run_flat,
        "dos" => &armbench::run_dos,
        other => {
            eprintln!("armbench: unknown machine `{other}` (available: dos, flat)");
            return ExitCode::FAILURE;
        }
    };
    let clock = match a.clock.as_str() {
        "cpu" => armbench::Clock::Cpu,
        "wall" => armbench::Clock::Wall,
        other => {
            eprintln!("armbench: unknown clock `{other}` (cpu, wall)");
            return ExitCode::FAILURE;
        }
    };
    let rows = match armbench::bench(&programs, &arms, a.reps, clock, run, &mut |m| {
        eprintln!("{m}")
    }) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("armbench: {e}");
            return ExitCode::FAILURE;
        }
    };
    print!("{}", armbench::table(&rows, a.reps, clock));
    if let Some(j) = a.json {
        if let Err(e) = std::fs::write(&j, serde_json::to_string_pretty(&rows).unwrap()) {
            eprintln!("armbench: {}: {e}", j.display());
            return ExitCode::FAILURE;
        }
    }
    if rows.iter().all(|r| r.arms.iter().all(|a| a.exact)) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
