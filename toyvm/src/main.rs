//! The `toyvm` command line: a thin front end over the `toyvm` library.
mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
