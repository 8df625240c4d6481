//! Host CPU time of the calling thread, for arm timings.
//!
//! The oracle times arms with toyvm's per-thread CPU clock
//! (`toyvm::host_clock`), so runs with `--jobs N` still bill each arm only
//! its own work and wall time never enters a report. It
//! must not be used for anything guest-visible (invariant 7).

pub use toyvm::host_clock::thread_ns;

/// Runs `f` and adds the CPU time it took to `acc`.
pub fn timed<T>(acc: &mut u64, f: impl FnOnce() -> T) -> T {
    let t0 = thread_ns();
    let r = f();
    *acc += thread_ns().saturating_sub(t0);
    r
}
