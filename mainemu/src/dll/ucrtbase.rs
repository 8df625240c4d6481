//! UCRTBASE.dll (and the `api-ms-win-crt-*` API sets that redirect to it):
//! the exports mainemu implements, each declared once.
//!
//! Owns ucrtbase's own table: the universal CRT's start-up calls
//! (`_configure_*_argv`, `_initialize_*_environment`, `__p___argc`, onexit
//! tables, `_seh_filter_exe`), its stdio entry points that take an options
//! word and a locale (`__stdio_common_vfprintf` and friends, over the same
//! printf/scanf engines as msvcrt) and `__acrt_iob_func`. The C standard
//! bodies are shared with msvcrt in [`super::crt`] and named here with `@also`.

use super::crt::{self, startup, stdio};
use super::{Env, Ret};

/// printf option bits of `__stdio_common_*`.
const LEGACY_VSPRINTF_NULL_TERMINATION: u32 = 1;
const STANDARD_SNPRINTF_BEHAVIOR: u32 = 2;

fn file_of(env: &mut Env, f: u32) -> u32 {
    let _ = stdio::ucrt_iob(env);
    f
}

/// The bounded-store rule an options word asks for.
fn bound(opts: u32, n: u32) -> stdio::Bound {
    if opts & STANDARD_SNPRINTF_BEHAVIOR != 0 {
        stdio::Bound::Standard(n)
    } else if opts & LEGACY_VSPRINTF_NULL_TERMINATION != 0 {
        stdio::Bound::LegacyNul(n)
    } else {
        stdio::Bound::Legacy(n)
    }
}

/// An onexit table {first, last, end}: appends a function.
fn register_onexit(env: &mut Env, table: u32, f: u32) -> i32 {
    let g = |env: &Env, o| env.mem.peek_u32(table + o).unwrap_or(0);
    let (first, last, end) = (g(env, 0), g(env, 4), g(env, 8));
    let (first, last, end) = if last == end {
        let n = (end - first) / 4;
        let cap = (n * 2).max(8);
        let nb = env.alloc(4 * cap);
        if first != 0 {
            crt::string::memcpy(env, nb, first, 4 * n);
        }
        (nb, nb + 4 * n, nb + 4 * cap)
    } else {
        (first, last, end)
    };
    env.mem.poke_u32(last, f);
    env.mem.poke_u32(table, first);
    env.mem.poke_u32(table + 4, last + 4);
    env.mem.poke_u32(table + 8, end);
    0
}

/// `_execute_onexit_table`: the functions in reverse order, table emptied.
fn execute_onexit(env: &mut Env, table: u32) -> Ret {
    let first = env.mem.peek_u32(table).unwrap_or(0);
    let last = env.mem.peek_u32(table + 4).unwrap_or(0);
    let mut fns = std::collections::VecDeque::new();
    let mut a = last;
    while a > first {
        a -= 4;
        if let Some(f) = env.mem.peek_u32(a).filter(|&f| f != 0) {
            fns.push_back(f);
        }
    }
    env.mem.poke(table, &[0u8; 12]);
    Ret::call_each(env, fns, Box::new(|_| Ret::Value(0)))
}

crate::dll! { "ucrtbase.dll";
    @also crt::all::DLL;
    cdecl fn __acrt_iob_func(env, i: u32) -> u32 { stdio::ucrt_iob(env) + stdio::FILE_SIZE * i.min(2) }
    cdecl fn __stdio_common_vfprintf(env, lo: u32, hi: u32, file: u32, fmt: u32, loc: u32, va: u32) -> i32 {
        let out = stdio::fmt_a(env, fmt, va); let f = file_of(env, file); stdio::put(env, f, &out)
    }
    cdecl fn __stdio_common_vfprintf_s(env, lo: u32, hi: u32, file: u32, fmt: u32, loc: u32, va: u32) -> i32 {
        let out = stdio::fmt_a(env, fmt, va); let f = file_of(env, file); stdio::put(env, f, &out)
    }
    cdecl fn __stdio_common_vfprintf_p(env, lo: u32, hi: u32, file: u32, fmt: u32, loc: u32, va: u32) -> i32 {
        let out = stdio::fmt_a(env, fmt, va); let f = file_of(env, file); stdio::put(env, f, &out)
    }
    cdecl fn __stdio_common_vfwprintf(env, lo: u32, hi: u32, file: u32, fmt: u32, loc: u32, va: u32) -> i32 {
        let out = stdio::fmt_w(env, fmt, va); let f = file_of(env, file); stdio::put_w(env, f, &out)
    }
    cdecl fn __stdio_common_vfwprintf_s(env, lo: u32, hi: u32, file: u32, fmt: u32, loc: u32, va: u32) -> i32 {
        let out = stdio::fmt_w(env, fmt, va); let f = file_of(env, file); stdio::put_w(env, f, &out)
    }
    cdecl fn __stdio_common_vsprintf(env, lo: u32, hi: u32, buf: u32, n: u32, fmt: u32, loc: u32, va: u32) -> i32 {
        let out = stdio::fmt_a(env, fmt, va); stdio::store(env, buf, &out, bound(lo, n))
    }
    cdecl fn __stdio_common_vsprintf_s(env, lo: u32, hi: u32, buf: u32, n: u32, fmt: u32, loc: u32, va: u32) -> i32 {
        let out = stdio::fmt_a(env, fmt, va);
        if out.len() as u32 >= n { if buf != 0 && n > 0 { env.mem.poke(buf, &[0]); } return -1; }
        stdio::store(env, buf, &out, stdio::Bound::Standard(n))
    }
    cdecl fn __stdio_common_vsnprintf_s(env, lo: u32, hi: u32, buf: u32, n: u32, max: u32, fmt: u32, loc: u32, va: u32) -> i32 {
        let mut out = stdio::fmt_a(env, fmt, va);
        let trunc = max != u32::MAX && out.len() as u32 > max;
        if trunc { out.truncate(max as usize); }
        if out.len() as u32 >= n { if buf != 0 && n > 0 { env.mem.poke(buf, &[0]); } return -1; }
        let r = stdio::store(env, buf, &out, stdio::Bound::Standard(n));
        if trunc { -1 } else { r }
    }
    cdecl fn __stdio_common_vswprintf(env, lo: u32, hi: u32, buf: u32, n: u32, fmt: u32, loc: u32, va: u32) -> i32 {
        let out = stdio::fmt_w(env, fmt, va); stdio::store(env, buf, &out, bound(lo, n))
    }
    cdecl fn __stdio_common_vswprintf_s(env, lo: u32, hi: u32, buf: u32, n: u32, fmt: u32, loc: u32, va: u32) -> i32 {
        let out = stdio::fmt_w(env, fmt, va);
        if out.len() as u32 >= n { if buf != 0 && n > 0 { env.mem.poke(buf, &[0, 0]); } return -1; }
        stdio::store(env, buf, &out, stdio::Bound::Standard(n))
    }
    cdecl fn __stdio_common_vsnwprintf_s(env, lo: u32, hi: u32, buf: u32, n: u32, max: u32, fmt: u32, loc: u32, va: u32) -> i32 {
        let mut out = stdio::fmt_w(env, fmt, va);
        let trunc = max != u32::MAX && out.len() as u32 > max;
        if trunc { out.truncate(max as usize); }
        if out.len() as u32 >= n { if buf != 0 && n > 0 { env.mem.poke(buf, &[0, 0]); } return -1; }
        let r = stdio::store(env, buf, &out, stdio::Bound::Standard(n));
        if trunc { -1 } else { r }
    }
    cdecl fn __stdio_common_vsscanf(env, lo: u32, hi: u32, s: u32, n: u32, fmt: u32, loc: u32, va: u32) -> i32 { crt::scanf::sscanf(env, s, fmt, va, false) }
    cdecl fn __stdio_common_vswscanf(env, lo: u32, hi: u32, s: u32, n: u32, fmt: u32, loc: u32, va: u32) -> i32 { crt::scanf::sscanf(env, s, fmt, va, true) }
    cdecl fn __stdio_common_vfscanf(env, lo: u32, hi: u32, file: u32, fmt: u32, loc: u32, va: u32) -> i32 { crt::scanf::fscanf(env, file, fmt, va, false) }
    cdecl fn __stdio_common_vfwscanf(env, lo: u32, hi: u32, file: u32, fmt: u32, loc: u32, va: u32) -> i32 { crt::scanf::fscanf(env, file, fmt, va, true) }
    cdecl fn _configure_narrow_argv(env, mode: u32) -> i32 { startup::argv(env, false); 0 }
    cdecl fn _configure_wide_argv(env, mode: u32) -> i32 { startup::argv(env, true); 0 }
    cdecl fn _initialize_narrow_environment(env) -> i32 { startup::environ(env, false); 0 }
    cdecl fn _initialize_wide_environment(env) -> i32 { startup::environ(env, true); 0 }
    cdecl fn _get_initial_narrow_environment(env) -> u32 { startup::environ(env, false) }
    cdecl fn _get_initial_wide_environment(env) -> u32 { startup::environ(env, true) }
    cdecl fn __p___argc(env) -> u32 { let n = env.argv.len() as u32; startup::var_of(env, "argc", n) }
    cdecl fn __p___argv(env) -> u32 { let (_, a) = startup::argv(env, false); startup::var_of(env, "argv", a) }
    cdecl fn __p___wargv(env) -> u32 { let (_, a) = startup::argv(env, true); startup::var_of(env, "wargv", a) }
    cdecl fn __p__environ(env) -> u32 { let e = startup::environ(env, false); startup::var_of(env, "environ", e) }
    cdecl fn __p__wenviron(env) -> u32 { let e = startup::environ(env, true); startup::var_of(env, "wenviron", e) }
    cdecl fn __p__acmdln(env) -> u32 { let c = env.cmdline_a; startup::var_of(env, "acmdln", c) }
    cdecl fn __p__wcmdln(env) -> u32 { let c = env.cmdline_w; startup::var_of(env, "wcmdln", c) }
    cdecl fn __p__commode(env) -> u32 { startup::var_of(env, "commode", 0) }
    cdecl fn __p__fmode(env) -> u32 { let m = env.crt.fmode; startup::var_of(env, "fmode", m) }
    cdecl fn _get_narrow_winmain_command_line(env) -> u32 { env.cmdline_a }
    cdecl fn _get_wide_winmain_command_line(env) -> u32 { env.cmdline_w }
    cdecl fn _set_app_type(env, t: u32) {}
    cdecl fn __setusermatherr(env, f: u32) {}
    cdecl fn _set_fmode(env, m: u32) -> i32 { env.crt.fmode = m; 0 }
    cdecl fn _get_fmode(env, out: u32) -> i32 { let m = env.crt.fmode; env.mem.poke_u32(out, m); 0 }
    cdecl fn _crt_atexit(env, f: u32) -> i32 { env.crt.atexit.push(f); 0 }
    cdecl fn _crt_at_quick_exit(env, f: u32) -> i32 { 0 }
    cdecl fn _initialize_onexit_table(env, t: u32) -> i32 { env.mem.poke(t, &[0u8; 12]); 0 }
    cdecl fn _register_onexit_function(env, t: u32, f: u32) -> i32 { register_onexit(env, t, f) }
    cdecl fn _execute_onexit_table(env, t: u32) -> Ret { execute_onexit(env, t) }
    cdecl fn _register_thread_local_exe_atexit_callback(env, f: u32) {}
    cdecl fn _seh_filter_exe(env, code: u32, ptrs: u32) -> i32 { 0 }
    cdecl fn _seh_filter_dll(env, code: u32, ptrs: u32) -> i32 { 0 }
    cdecl fn terminate(env) -> Ret { Ret::Exit(3) }
    cdecl fn __threadid(env) -> u32 { env.thread_id() }
    cdecl fn __threadhandle(env) -> u32 { crate::handles::CURRENT_THREAD }
    cdecl fn __sys_nerr(env) -> u32 { startup::var_of(env, "sys_nerr", 43) }
}
