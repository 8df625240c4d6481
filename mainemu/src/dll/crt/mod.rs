//! C runtime bodies shared by msvcrt and ucrtbase, and [`common`]: the C
//! standard exports both DLLs have, declared once (each DLL's table names it
//! with `@also`).
//!
//! Owns string and memory helpers over guest memory; must not do I/O itself
//! beyond [`super::Env::write_console`].

use super::Env;

pub mod cxx;
pub mod except;
pub mod fd;
pub mod files;
pub mod math;
pub mod misc;
pub mod rtti;
pub mod scanf;
pub mod spawn;
pub mod startup;
pub mod stdio;
pub mod string;
pub mod string_s;
pub mod time;
pub mod undname;

/// The C runtime's process state (shared by msvcrt and ucrtbase): file
/// descriptors, streams, atexit table, and the small per-process values.
#[derive(Default)]
pub struct State {
    /// _popen streams (FILE address) and their child's exit code for _pclose.
    pub popen: std::collections::BTreeMap<u32, u32>,
    /// atexit/_onexit functions, run in reverse order by exit().
    pub atexit: Vec<u32>,
    /// rand()'s state per thread.
    pub rand: std::collections::BTreeMap<u32, u32>,
    /// strtok's position.
    pub strtok_next: u32,
    pub wcstok_next: u32,
    /// File descriptors (fd module).
    pub fds: Vec<Option<fd::Fd>>,
    /// FILE streams by guest address (stdio module).
    pub streams: std::collections::BTreeMap<u32, stdio::Stream>,
    /// Each thread's errno block (thread id → address of [errno, _doserrno]).
    pub errno_blocks: std::collections::BTreeMap<u32, u32>,
    /// The default text/binary mode when the program has no `_fmode` variable.
    pub fmode: u32,
    /// Counter for tmpnam/tmpfile/_tempnam names.
    pub tmp_counter: u32,
    pub umask: u32,
    /// signal() handlers by signal number (0 = SIG_DFL).
    pub signals: std::collections::BTreeMap<u32, u32>,
    pub invalid_handler: u32,
    pub new_mode: i32,
    /// `_setmbcp`'s code page (0: single-byte, the start-up state here).
    pub mbcp: i32,
    /// C++ exceptions whose catch block is running, innermost last (object,
    /// ThrowInfo): what `throw;` rethrows.
    pub cxx_caught: Vec<(u32, u32)>,
}

/// malloc and friends run on the process heap.
pub fn malloc(env: &mut Env, n: u32) -> u32 {
    let h = env.process_heap;
    match env
        .with_heap(h, |heap, m| heap.alloc(m, n, false))
        .flatten()
    {
        Some(a) => a,
        None => {
            fd::set_errno(env, fd::errno::ENOMEM);
            0
        }
    }
}

pub fn calloc(env: &mut Env, count: u32, size: u32) -> u32 {
    let Some(n) = count.checked_mul(size) else {
        fd::set_errno(env, fd::errno::ENOMEM);
        return 0;
    };
    let h = env.process_heap;
    env.with_heap(h, |heap, m| heap.alloc(m, n, true))
        .flatten()
        .unwrap_or(0)
}

pub fn realloc(env: &mut Env, p: u32, n: u32) -> u32 {
    if p == 0 {
        return malloc(env, n);
    }
    if n == 0 {
        free(env, p);
        return 0;
    }
    let h = env.process_heap;
    env.with_heap(h, |heap, m| heap.realloc(m, p, n, false))
        .flatten()
        .unwrap_or(0)
}

pub fn free(env: &mut Env, p: u32) {
    if p != 0 {
        let h = env.process_heap;
        env.with_heap(h, |heap, _| heap.free(p));
    }
}

/// The `_fmode` the program set (msvcrt's variable when imported, else the runtime's).
pub fn fmode(env: &Env) -> u32 {
    match env.data.get("msvcrt.dll!_fmode") {
        Some(&a) => env.mem.peek_u32(a).unwrap_or(0),
        None => env.crt.fmode,
    }
}

/// Every C runtime table both DLLs export, for their `@also`.
pub mod all {
    crate::dll! { "(crt)";
        @also super::common::DLL;
        @also super::string::DLL;
        @also super::string_s::DLL;
        @also super::stdio::exports::DLL;
        @also super::files::DLL;
        @also super::misc::DLL;
        @also super::math::exports::DLL;
        @also super::time::DLL;
        @also super::scanf::DLL;
        @also super::spawn::DLL;
    }
}

/// The heap calls both runtimes export, declared once. Not a DLL of its
/// own: it is not in [`super::DLLS`], only in the two tables' `also`.
pub mod common {
    use super as crt;

    crate::dll! { "(crt heap)";
        cdecl fn malloc(env, n: u32) -> u32 { crt::malloc(env, n) }
        cdecl fn calloc(env, count: u32, size: u32) -> u32 { crt::calloc(env, count, size) }
        cdecl fn realloc(env, p: u32, n: u32) -> u32 { crt::realloc(env, p, n) }
        cdecl fn free(env, p: u32) { crt::free(env, p) }
        cdecl fn _recalloc(env, p: u32, count: u32, size: u32) -> u32 {
            let Some(n) = count.checked_mul(size) else { return 0 };
            let old = if p == 0 { 0 } else { let h = env.process_heap; env.with_heap(h, |hp, _| hp.size(p)).flatten().unwrap_or(0) };
            let q = crt::realloc(env, p, n);
            if q != 0 && n > old { env.mem.poke(q + old, &vec![0u8; (n - old) as usize]); }
            q
        }
        cdecl fn _msize(env, p: u32) -> u32 { let h = env.process_heap; env.with_heap(h, |hp, _| hp.size(p)).flatten().unwrap_or(u32::MAX) }
        cdecl fn _expand(env, p: u32, n: u32) -> u32 { 0 }
        cdecl fn _aligned_malloc(env, n: u32, align: u32) -> u32 { aligned_malloc(env, n, align, 0) }
        cdecl fn _aligned_offset_malloc(env, n: u32, align: u32, off: u32) -> u32 { aligned_malloc(env, n, align, off) }
        cdecl fn _aligned_free(env, p: u32) { if p != 0 { let raw = env.mem.peek_u32((p & !3) - 4).unwrap_or(0); crt::free(env, raw); } }
        cdecl fn _aligned_realloc(env, p: u32, n: u32, align: u32) -> u32 {
            let q = aligned_malloc(env, n, align, 0);
            if p != 0 && q != 0 {
                let raw = env.mem.peek_u32((p & !3) - 4).unwrap_or(0);
                let h = env.process_heap;
                let old = env.with_heap(h, |hp, _| hp.size(raw)).flatten().unwrap_or(0).saturating_sub(p - raw);
                crate::dll::crt::string::memcpy(env, q, p, old.min(n));
                crt::free(env, raw);
            }
            q
        }
        cdecl fn _heapchk(env) -> i32 { -2 }
        cdecl fn _heapmin(env) -> i32 { 0 }
        cdecl fn _heapwalk(env, p: u32) -> i32 { -5 }
        cdecl fn _set_new_mode(env, m: i32) -> i32 { std::mem::replace(&mut env.crt.new_mode, m) }
        cdecl fn _query_new_mode(env) -> i32 { env.crt.new_mode }
        cdecl fn _callnewh(env, n: u32) -> i32 { 0 }
        cdecl fn _set_new_handler(env, h: u32) -> u32 { 0 }
        cdecl fn _get_heap_handle(env) -> u32 { env.process_heap }
    }

    fn aligned_malloc(env: &mut crate::dll::Env, n: u32, align: u32, off: u32) -> u32 {
        if align == 0 || !align.is_power_of_two() {
            return 0;
        }
        let align = align.max(4);
        let raw = crt::malloc(env, n + align + 4 + off);
        if raw == 0 {
            return 0;
        }
        let p = ((raw + 4 + off + align - 1) & !(align - 1)) - off;
        env.mem.poke_u32((p & !3) - 4, raw);
        p
    }
}
