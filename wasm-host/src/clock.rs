//! The WASI clocks the guest reads, including the CPU-time clocks
//! wasmtime's WASI leaves out.
//!
//! toyvm reads host CPU time through the WASI clock `thread_cputime_id`
//! (`toyvm::host_clock`); wasmtime-wasi answers the two CPU-time clocks with
//! `EBADF`, so this host defines `clock_time_get` itself: the CPU-time
//! clocks read the native CPU clock of the thread running the instance
//! (which is the thread that called into it), realtime and monotonic read
//! the host's. Owns that one import. Nothing guest-visible reads any clock
//! (invariant 7); the readings only feed counters.

use std::sync::OnceLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};
use wasmtime::{Caller, Extern, Linker};

const REALTIME: u32 = 0;
const MONOTONIC: u32 = 1;
const PROCESS_CPUTIME: u32 = 2;
const THREAD_CPUTIME: u32 = 3;
const ERRNO_SUCCESS: i32 = 0;
const ERRNO_FAULT: i32 = 21;
const ERRNO_INVAL: i32 = 28;

/// The reading of WASI clock `id` in nanoseconds, None for an unknown clock.
pub fn read(id: u32) -> Option<u64> {
    static START: OnceLock<Instant> = OnceLock::new();
    match id {
        REALTIME => Some(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64),
        ),
        MONOTONIC => Some(START.get_or_init(Instant::now).elapsed().as_nanos() as u64),
        PROCESS_CPUTIME | THREAD_CPUTIME => Some(toyvm::host_clock::thread_ns()),
        _ => None,
    }
}

/// Defines `wasi_snapshot_preview1::clock_time_get` in `linker`, shadowing
/// wasmtime-wasi's (call after adding WASI).
pub fn define<T: 'static>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    linker.func_wrap(
        "wasi_snapshot_preview1",
        "clock_time_get",
        |mut caller: Caller<'_, T>, id: i32, _precision: i64, out: i32| -> i32 {
            let Some(ns) = read(id as u32) else {
                return ERRNO_INVAL;
            };
            let Some(Extern::Memory(mem)) = caller.get_export("memory") else {
                return ERRNO_FAULT;
            };
            match mem.write(&mut caller, out as u32 as usize, &ns.to_le_bytes()) {
                Ok(()) => ERRNO_SUCCESS,
                Err(_) => ERRNO_FAULT,
            }
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}
