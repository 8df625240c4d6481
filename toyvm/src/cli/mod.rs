//! Subcommand dispatch for the `toyvm` binary. Each subcommand lives in its own
//! module and owns its arguments; this file only wires them together.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

// µop arms integration point: `toyvm census`.
mod census;
mod conformance;
pub mod run;
// L1 integration point: `toyvm speed`.
mod speed;
pub mod survey;

#[derive(Parser)]
#[command(
    name = "toyvm",
    about = "A small real-mode DOS VM with an L1 threaded-code tier"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// µops per x86 instruction (and instruction-form coverage) of the
    /// µop arms over DOS programs.
    Census(census::Args),
    /// Run the CPU over SingleStepTests hardware vectors.
    Conformance(conformance::Args),
    /// Run one DOS program.
    Run(run::Args),
    /// Host CPU time per dispatch over a corpus under one arm, and L1's
    /// slow-path shares.
    Speed(speed::Args),
    /// Run every program of a manifest directory and write a report.
    Survey(survey::Args),
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Census(a) => census::main(a),
        Command::Conformance(a) => conformance::main(a),
        Command::Run(a) => run::main(a),
        Command::Speed(a) => speed::main(a),
        Command::Survey(a) => survey::main(a),
    }
}
