//! The `oracle` binary: see [`oracle::cli`].

fn main() -> std::process::ExitCode {
    // Behave like a Unix tool when the reader goes away (`oracle ... | head`).
    // SAFETY: restoring the default disposition of one signal at start-up.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    oracle::cli::main()
}
