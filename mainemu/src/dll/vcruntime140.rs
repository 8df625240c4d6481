//! VCRUNTIME140.dll: the compiler support library of MSVC 2015+ programs
//! built with /MD: C++ exceptions (`_CxxThrowException`,
//! `__CxxFrameHandler3` over [`super::crt::cxx`]), the SEH handler
//! `_except_handler4_common`, `std::exception`'s what-string helpers, and
//! the memory/string functions it exports (msvcrt's bodies, named with `@also`).
//!
//! Owns this DLL's table. It must not hold exception semantics itself (cxx
//! and except do) nor C standard bodies (crt does).

use super::crt;
use super::{Env, Ret};

/// `__std_exception_data { const char* what; bool do_free; }`: a copy owns
/// a heap duplicate of the string when the source owned its own.
fn exception_copy(env: &mut Env, from: u32, to: u32) {
    let what = env.mem.peek_u32(from).unwrap_or(0);
    let owns = env.read_bytes(from + 4, 1).is_some_and(|b| b[0] != 0);
    let (what, owns) = match (owns, env.mem.peek_cstr(what, 1 << 20)) {
        (true, Some(s)) => {
            let p = crt::malloc(env, s.len() as u32 + 1);
            if p != 0 {
                env.mem.poke(p, &s);
                env.mem.poke(p + s.len() as u32, &[0]);
            }
            (p, p != 0)
        }
        _ => (what, false),
    };
    env.mem.poke_u32(to, what);
    env.mem.poke(to + 4, &[owns as u8]);
}

fn exception_destroy(env: &mut Env, data: u32) {
    let owns = env.read_bytes(data + 4, 1).is_some_and(|b| b[0] != 0);
    if owns {
        let what = env.mem.peek_u32(data).unwrap_or(0);
        crt::free(env, what);
    }
    env.mem.poke(data, &[0; 5]);
}

/// The process's cell for `__current_exception(_context)` (allocated once).
fn cell(env: &mut Env, name: &str) -> u32 {
    let key = format!("vcruntime140.dll!{name}");
    if let Some(&a) = env.data.get(&key) {
        return a;
    }
    let a = env.alloc(4);
    env.data.insert(key, a);
    a
}

crate::dll! { "vcruntime140.dll";
    @also crt::string::DLL;
    stdcall fn _CxxThrowException(env, obj: u32, info: u32) -> Ret { crt::cxx::throw(env, obj, info) }
    cdecl fn __CxxFrameHandler3(env, rec: u32, frame: u32, ctx: u32, dc: u32) -> Ret { crt::cxx::frame_handler(env, rec, frame) }
    cdecl fn _except_handler4_common(env, cookie: u32, check: u32, rec: u32, frame: u32, ctx: u32, dc: u32) -> Ret {
        crt::except::handler(env, rec, frame, ctx, Some(cookie))
    }
    cdecl fn __std_exception_copy(env, from: u32, to: u32) { exception_copy(env, from, to) }
    cdecl fn __std_exception_destroy(env, data: u32) { exception_destroy(env, data) }
    cdecl fn __current_exception(env) -> u32 { cell(env, "__current_exception") }
    cdecl fn __current_exception_context(env) -> u32 { cell(env, "__current_exception_context") }
    cdecl fn __std_terminate(env) -> Ret { Ret::Stop("std::terminate called (__std_terminate)".into()) }
}
