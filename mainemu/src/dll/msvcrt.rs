//! MSVCRT.dll: the exports mainemu implements, each declared once.
//!
//! Owns msvcrt's own table: its data exports (`_iob`, `_environ`, `__argc`,
//! ...), the mingw/VC6 start-up calls (`__getmainargs`, `__p__*`,
//! `__set_app_type`, ...) and msvcrt-only C++ and SEH helpers; the C
//! standard bodies are shared with ucrtbase in [`super::crt`] and named here
//! with `@also`. Must not touch host state directly.

use super::crt::{self, startup};
use super::{Env, Ret};

fn fill_argc(env: &mut Env, a: u32) {
    let n = env.argv.len() as u32;
    env.mem.poke_u32(a, n);
}
fn fill_argv(env: &mut Env, a: u32) {
    let (_, v) = startup::argv(env, false);
    env.mem.poke_u32(a, v);
}
fn fill_wargv(env: &mut Env, a: u32) {
    let (_, v) = startup::argv(env, true);
    env.mem.poke_u32(a, v);
}
fn fill_environ(env: &mut Env, a: u32) {
    let v = startup::environ(env, false);
    env.mem.poke_u32(a, v);
}
fn fill_wenviron(env: &mut Env, a: u32) {
    let v = startup::environ(env, true);
    env.mem.poke_u32(a, v);
}
fn fill_acmdln(env: &mut Env, a: u32) {
    let c = env.cmdline_a;
    env.mem.poke_u32(a, c);
}
fn fill_wcmdln(env: &mut Env, a: u32) {
    let c = env.cmdline_w;
    env.mem.poke_u32(a, c);
}
fn fill_pctype(env: &mut Env, a: u32) {
    let t = crt::string::pctype_table(env);
    env.mem.poke_u32(a, t);
}
fn fill_ctype(env: &mut Env, a: u32) {
    let mut b = vec![0u8; 2];
    for c in 0..256u32 {
        b.extend(if c < 128 { crt::string::ctype(c) } else { 0 }.to_le_bytes());
    }
    env.mem.poke(a, &b);
}
fn fill_iob(env: &mut Env, a: u32) {
    // stdin reads, stdout and stderr write; _file is the descriptor.
    for (k, fl) in [(0u32, 1u32), (1, 2), (2, 2)] {
        env.mem.poke_u32(a + 32 * k + 12, fl);
        env.mem.poke_u32(a + 32 * k + 16, k);
    }
}
fn fill_pioinfo(env: &mut Env, _a: u32) {
    crt::fd::mirror_all(env);
}
fn fill_tzname(env: &mut Env, a: u32) {
    let s = env.alloc_cstr(b"UTC");
    env.mem.poke_u32(a, s);
    env.mem.poke_u32(a + 4, s);
}

/// `__p__x()`: the address of data export `x`.
fn data(env: &mut Env, name: &str) -> u32 {
    let d = DLL.data.iter().find(|d| d.name == name).expect("declared");
    crate::modules::data_export(env, "msvcrt.dll", d)
}

crate::dll! { "msvcrt.dll";
    @also crt::all::DLL;
    @also crt::rtti::DLL;
    @also crt::undname::DLL;
    @data _iob [640] = [0u8; 0], fill_iob;
    @data __initenv [4] = [0u8; 0], fill_environ;
    @data __winitenv [4] = [0u8; 0], fill_wenviron;
    @data _environ [4] = [0u8; 0], fill_environ;
    @data _wenviron [4] = [0u8; 0], fill_wenviron;
    @data __argc [4] = [0u8; 0], fill_argc;
    @data __argv [4] = [0u8; 0], fill_argv;
    @data __wargv [4] = [0u8; 0], fill_wargv;
    @data _acmdln [4] = [0u8; 0], fill_acmdln;
    @data _wcmdln [4] = [0u8; 0], fill_wcmdln;
    @data __mb_cur_max [4] = [1u8, 0, 0, 0];
    @data _fmode [4] = [0u8; 0];
    // 64 block pointers (2048 descriptors); blocks appear as descriptors do.
    @data __pioinfo [256] = [0u8; 0], fill_pioinfo;
    @data _commode [4] = [0u8; 0];
    @data _pctype [4] = [0u8; 0], fill_pctype;
    @data _ctype [514] = [0u8; 0], fill_ctype;
    @data _mbctype [260] = [0u8; 0];
    @data _osver [4] = [0xB1u8, 0x1D, 0, 0];
    @data _winver [4] = [0x01u8, 0x06, 0, 0];
    @data _winmajor [4] = [6u8, 0, 0, 0];
    @data _winminor [4] = [1u8, 0, 0, 0];
    @data _osplatform [4] = [2u8, 0, 0, 0];
    @data _timezone [4] = [0u8; 0];
    @data _daylight [4] = [0u8; 0];
    @data _dstbias [4] = [0u8; 0];
    @data _tzname [8] = [0u8; 0], fill_tzname;
    @data _HUGE [8] = [0u8, 0, 0, 0, 0, 0, 0xF0, 0x7F];
    @data _sys_nerr [4] = [43u8, 0, 0, 0];
    @data __badioinfo [64] = [0u8; 0];
    @data _adjust_fdiv [4] = [0u8; 0];
    @data exception_vtable as "??_7exception@@6B@" [4] = [0u8; 0], crt::rtti::fill_vtable;
    @data bad_typeid_vtable as "??_7bad_typeid@@6B@" [4] = [0u8; 0], crt::rtti::fill_vtable;
    @data bad_cast_vtable as "??_7bad_cast@@6B@" [4] = [0u8; 0], crt::rtti::fill_vtable;
    @data non_rtti_vtable as "??_7__non_rtti_object@@6B@" [4] = [0u8; 0], crt::rtti::fill_vtable;
    @data type_info_vtable as "??_7type_info@@6B@" [4] = [0u8; 0], crt::rtti::fill_vtable;
    cdecl fn __getmainargs(env, argc_p: u32, argv_p: u32, envp_p: u32, wildcard: u32, startinfo: u32) -> i32 {
        startup::mainargs(env, argc_p, argv_p, envp_p, false)
    }
    cdecl fn __set_app_type(env, kind: u32) {}
    cdecl fn __setusermatherr(env, handler: u32) {}
    cdecl fn __p__fmode(env) -> u32 { data(env, "_fmode") }
    cdecl fn _get_fmode(env, out: u32) -> i32 {
        if out == 0 { crt::fd::set_errno(env, crt::fd::errno::EINVAL); return crt::fd::errno::EINVAL; }
        let m = crt::fmode(env);
        env.mem.poke_u32(out, m);
        0
    }
    cdecl fn _set_fmode(env, m: u32) -> i32 {
        // Only _O_TEXT and _O_BINARY are modes.
        if m != crt::fd::oflag::TEXT && m != crt::fd::oflag::BINARY { crt::fd::set_errno(env, crt::fd::errno::EINVAL); return crt::fd::errno::EINVAL; }
        let a = data(env, "_fmode");
        env.mem.poke_u32(a, m);
        0
    }
    cdecl fn __p__commode(env) -> u32 { data(env, "_commode") }
    cdecl fn __p__acmdln(env) -> u32 { data(env, "_acmdln") }
    cdecl fn __p__wcmdln(env) -> u32 { data(env, "_wcmdln") }
    cdecl fn __p___argc(env) -> u32 { data(env, "__argc") }
    cdecl fn __p___argv(env) -> u32 { data(env, "__argv") }
    cdecl fn __p___wargv(env) -> u32 { data(env, "__wargv") }
    cdecl fn __p__environ(env) -> u32 { data(env, "_environ") }
    cdecl fn __p__wenviron(env) -> u32 { data(env, "_wenviron") }
    cdecl fn __p___initenv(env) -> u32 { data(env, "__initenv") }
    cdecl fn __p___winitenv(env) -> u32 { data(env, "__winitenv") }
    cdecl fn __p__timezone(env) -> u32 { data(env, "_timezone") }
    cdecl fn __p__daylight(env) -> u32 { data(env, "_daylight") }
    cdecl fn __p__tzname(env) -> u32 { data(env, "_tzname") }
    cdecl fn __p__mbctype(env) -> u32 { data(env, "_mbctype") }
    cdecl fn __p__osver(env) -> u32 { data(env, "_osver") }
    cdecl fn __p__winver(env) -> u32 { data(env, "_winver") }
    cdecl fn __dllonexit(env, f: u32, begin: u32, end: u32) -> u32 { env.crt.atexit.push(f); f }
    cdecl fn _XcptFilter(env, code: u32, ptrs: u32) -> Ret {
        // No signal() handler takes hardware exceptions here: continue the search.
        Ret::Value(0)
    }
    cdecl fn __CppXcptFilter(env, code: u32, ptrs: u32) -> Ret { Ret::Value(0) }
    cdecl fn _except_handler3(env, rec: u32, frame: u32, ctx: u32, dc: u32) -> Ret { crt::except::handler(env, rec, frame, ctx, None) }
    cdecl fn _except_handler4_common(env, cookie: u32, check: u32, rec: u32, frame: u32, ctx: u32, dc: u32) -> Ret {
        crt::except::handler(env, rec, frame, ctx, Some(cookie))
    }
    cdecl fn terminate as "?terminate@@YAXXZ" (env) -> Ret { Ret::Stop("std::terminate called (msvcrt ?terminate@@YAXXZ)".into()) }
    stdcall fn _CxxThrowException(env, obj: u32, info: u32) -> Ret { crt::cxx::throw(env, obj, info) }
    cdecl fn __CxxFrameHandler(env, rec: u32, frame: u32, ctx: u32, dc: u32) -> Ret { crt::cxx::frame_handler(env, rec, frame) }
    cdecl fn _local_unwind2(env, frame: u32, level: i32) -> Ret { crt::except::local_unwind(env, frame, level, None, Box::new(|_| Ret::Value(0))) }
    // The per-thread exception-pointers slot signal handlers read (the third dword of the errno block).
    cdecl fn __pxcptinfoptrs(env) -> u32 { crt::fd::errno_addr(env) + 8 }
    cdecl fn _global_unwind2(env, frame: u32) -> Ret { crt::except::global_unwind(env, frame, Box::new(|_| Ret::Value(0))) }
}
