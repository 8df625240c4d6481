//! NTDLL.dll: the exports mainemu implements, each declared once.
//!
//! Owns the bodies of ntdll's calls; must not touch host state directly.
//! ntdll's C runtime subset (`_vsnprintf`, ...) runs over the same printf
//! engine as msvcrt ([`super::crt::stdio`]).

use super::crt::stdio::{fmt_a, fmt_w, store, Bound};

/// RtlInit(Unicode|Ansi)String: {Length, MaximumLength (with the NUL), Buffer} over `src`.
fn init_string(env: &mut super::Env, dst: u32, src: u32, wide: bool) {
    let size = if wide { 2 } else { 1 };
    let n = match src {
        0 => 0,
        _ if wide => env.mem.peek_wstr(src, 0x7FFF).map_or(0, |w| w.len()),
        _ => env.mem.peek_cstr(src, 0xFFFE).map_or(0, |b| b.len()),
    } as u32
        * size;
    let max = if src == 0 { 0 } else { n + size };
    env.mem.poke_u32(dst, n | max << 16);
    env.mem.poke_u32(dst + 4, src);
}

crate::dll! { "ntdll.dll";
    stdcall fn RtlGetLastWin32Error(env) -> u32 { env.last_error }
    stdcall fn RtlSetLastWin32Error(env, code: u32) { env.last_error = code; }
    stdcall fn NtCurrentTeb(env) -> u32 { env.teb() }
    stdcall fn RtlWalkHeap(env, h: u32, entry: u32) -> u32 {
        match super::kernel32::heap_walk(env, h, entry) {
            Ok(true) => 0,
            Ok(false) => 0x8000_001A, // STATUS_NO_MORE_ENTRIES
            Err(_) => 0xC000_000D,    // STATUS_INVALID_PARAMETER
        }
    }
    stdcall fn RtlInitUnicodeString(env, dst: u32, src: u32) { init_string(env, dst, src, true) }
    stdcall fn RtlInitAnsiString(env, dst: u32, src: u32) { init_string(env, dst, src, false) }
    stdcall fn RtlInitString(env, dst: u32, src: u32) { init_string(env, dst, src, false) }
    // ntdll's _vsnprintf has msvcrt's legacy bound: a full buffer gets no NUL and -1.
    cdecl fn _vsnprintf(env, buf: u32, n: u32, f: u32, va: u32) -> i32 { let out = fmt_a(env, f, va); store(env, buf, &out, Bound::Legacy(n)) }
    cdecl fn _vsnwprintf(env, buf: u32, n: u32, f: u32, va: u32) -> i32 { let out = fmt_w(env, f, va); store(env, buf, &out, Bound::Legacy(n)) }
    cdecl fn _snprintf(env, buf: u32, n: u32, f: u32) -> i32 { let out = fmt_a(env, f, env.arg_base + 12); store(env, buf, &out, Bound::Legacy(n)) }
    cdecl fn _snwprintf(env, buf: u32, n: u32, f: u32) -> i32 { let out = fmt_w(env, f, env.arg_base + 12); store(env, buf, &out, Bound::Legacy(n)) }
    cdecl fn sprintf(env, buf: u32, f: u32) -> i32 { let out = fmt_a(env, f, env.arg_base + 8); store(env, buf, &out, Bound::None) }
    cdecl fn swprintf(env, buf: u32, f: u32) -> i32 { let out = fmt_w(env, f, env.arg_base + 8); store(env, buf, &out, Bound::None) }
}
