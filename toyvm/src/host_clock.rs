//! The host's per-thread CPU clock, for timing work (building programs,
//! running arms) in reports and benches.
//!
//! Owns the one definition of "host CPU time" the lab uses: the calling
//! thread's CPU time (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`), so parallel
//! runs bill each arm only its own work and wall time never enters a figure.
//! It must never feed anything guest-visible (ARCHITECTURE.md, determinism):
//! its readings go into counters and reports only.

/// CPU time consumed by the calling thread so far, in nanoseconds (0 if the
/// host cannot tell).
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
