//! The host's per-thread CPU clock, for timing work (building programs,
//! running arms) in reports and benches.
//!
//! Owns the one definition of "host CPU time" the lab uses: the calling
//! thread's CPU time, so parallel runs bill each arm only its own work and
//! wall time never enters a figure. Natively that is
//! `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`; in the wasm32-wasip1 build it is
//! the WASI clock `thread_cputime_id`, which the lab's wasmtime host
//! (`wasm-host`) answers with the same native clock of the thread running the
//! instance (wasmtime's own WASI answers it with an error: we then read 0).
//! It must never feed anything guest-visible (ARCHITECTURE.md, determinism):
//! its readings go into counters and reports only.

/// CPU time consumed by the calling thread so far, in nanoseconds (0 if the
/// host cannot tell).
#[cfg(unix)]
pub fn thread_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if r != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CPU time consumed by the calling thread so far, in nanoseconds (0 if the
/// host cannot tell).
#[cfg(target_os = "wasi")]
pub fn thread_ns() -> u64 {
    // SAFETY: clock_time_get only writes its result; any clock id is valid to ask.
    unsafe { wasi::clock_time_get(wasi::CLOCKID_THREAD_CPUTIME_ID, 1) }.unwrap_or(0)
}
