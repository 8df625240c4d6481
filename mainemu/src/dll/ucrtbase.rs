//! UCRTBASE.dll (and the `api-ms-win-crt-*` API sets that redirect to it):
//! the exports mainemu implements, each declared once.
//!
//! Owns ucrtbase's export table; bodies shared with msvcrt in [`super::crt`].

use super::crt;

crate::dll! { "ucrtbase.dll";
    cdecl fn strlen(env, s: u32) -> u32 { crt::strlen(env, s) }
    cdecl fn memcpy(env, dst: u32, src: u32, n: u32) -> u32 { crt::memcpy(env, dst, src, n) }
    cdecl fn memmove(env, dst: u32, src: u32, n: u32) -> u32 { crt::memcpy(env, dst, src, n) }
    cdecl fn memset(env, dst: u32, c: u32, n: u32) -> u32 { crt::memset(env, dst, c, n) }
    cdecl fn strcmp(env, a: u32, b: u32) -> i32 { crt::strcmp(env, a, b) }
    cdecl fn puts(env, s: u32) -> i32 { crt::puts(env, s) }
    cdecl fn exit(env, code: u32) -> super::Ret { crt::exit(code) }
    cdecl fn _exit(env, code: u32) -> super::Ret { crt::exit(code) }
    cdecl fn abs(env, v: i32) -> i32 { v.wrapping_abs() }
    cdecl fn malloc(env, n: u32) -> u32 { crt::malloc(env, n) }
    cdecl fn calloc(env, count: u32, size: u32) -> u32 { crt::calloc(env, count, size) }
    cdecl fn realloc(env, p: u32, n: u32) -> u32 { crt::realloc(env, p, n) }
    cdecl fn free(env, p: u32) { crt::free(env, p) }
}
