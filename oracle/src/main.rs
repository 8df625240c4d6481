//! The `oracle` binary: see [`oracle::cli`].

fn main() -> std::process::ExitCode {
    // Behave like a Unix tool when the reader goes away (`oracle ... | head`).
    // SAFETY: restoring the default disposition of one signal at start-up.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // Every run allocates a 16 MiB guest RAM per arm. Left alone, glibc
    // raises its mmap threshold after the first one is freed and serves the
    // next ones from the heap, where calloc must clear all 16 MiB (12% of
    // a fuzz campaign's time); a fixed threshold keeps them fresh mappings
    // of the zero page, cleared lazily, page by page, as the guest touches
    // them (and memcmp of two untouched regions reads one cached page).
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: a malloc tuning call at start-up, before any thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
    oracle::cli::main()
}
