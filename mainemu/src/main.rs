//! The `mainemu` command line: a thin front end over the library's CLI module.
fn main() -> std::process::ExitCode {
    mainemu::cli::main()
}
