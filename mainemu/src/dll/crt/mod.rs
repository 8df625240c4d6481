//! C runtime bodies shared by msvcrt and ucrtbase, and [`common`]: the C
//! standard exports both DLLs have, declared once (each DLL's table names it
//! with `@also`).
//!
//! Owns string and memory helpers over guest memory; must not do I/O itself
//! beyond [`super::Env::write_console`].

use super::{Env, Ret};

pub mod math;

/// The C runtime's process state (shared by msvcrt and ucrtbase): file
/// descriptors, streams, atexit table, and the small per-process values.
#[derive(Default)]
pub struct State {
    /// atexit/_onexit functions, run in reverse order by exit().
    pub atexit: Vec<u32>,
    /// rand()'s state.
    pub rand_next: u32,
    /// strtok's position.
    pub strtok_next: u32,
    pub wcstok_next: u32,
}

pub fn strlen(env: &mut Env, s: u32) -> u32 {
    env.mem.peek_cstr(s, 1 << 24).map_or(0, |v| v.len() as u32)
}

pub fn memcpy(env: &mut Env, dst: u32, src: u32, n: u32) -> u32 {
    let mut b = vec![0; n as usize];
    if env.mem.peek(src, &mut b).is_some() {
        env.mem.poke(dst, &b);
    }
    dst
}

pub fn memset(env: &mut Env, dst: u32, c: u32, n: u32) -> u32 {
    env.mem.poke(dst, &vec![c as u8; n as usize]);
    dst
}

pub fn strcmp(env: &mut Env, a: u32, b: u32) -> i32 {
    let a = env.mem.peek_cstr(a, 1 << 24).unwrap_or_default();
    let b = env.mem.peek_cstr(b, 1 << 24).unwrap_or_default();
    match a.cmp(&b) {
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Equal => 0,
        std::cmp::Ordering::Greater => 1,
    }
}

pub fn puts(env: &mut Env, s: u32) -> i32 {
    let mut v = env.mem.peek_cstr(s, 1 << 24).unwrap_or_default();
    v.push(b'\n');
    env.write_console(1, &v);
    0
}

pub fn exit(code: u32) -> Ret {
    Ret::Exit(code)
}

/// malloc and friends run on the process heap.
pub fn malloc(env: &mut Env, n: u32) -> u32 {
    let h = env.process_heap;
    env.with_heap(h, |heap, m| heap.alloc(m, n, false))
        .flatten()
        .unwrap_or(0)
}

pub fn calloc(env: &mut Env, count: u32, size: u32) -> u32 {
    let Some(n) = count.checked_mul(size) else {
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

pub fn strchr(env: &mut Env, s: u32, c: u32) -> u32 {
    let b = env.mem.peek_cstr(s, 1 << 24).unwrap_or_default();
    let c = c as u8;
    if c == 0 {
        return s + b.len() as u32;
    }
    b.iter().position(|&x| x == c).map_or(0, |i| s + i as u32)
}

pub fn strncmp(env: &mut Env, a: u32, b: u32, n: u32) -> i32 {
    let a = env.mem.peek_cstr(a, n as usize).unwrap_or_default();
    let b = env.mem.peek_cstr(b, n as usize).unwrap_or_default();
    match a.cmp(&b) {
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Equal => 0,
        std::cmp::Ordering::Greater => 1,
    }
}

pub fn wcslen(env: &mut Env, s: u32) -> u32 {
    env.mem.peek_wstr(s, 1 << 23).map_or(0, |v| v.len() as u32)
}

/// atoi: optional whitespace and sign, then decimal digits (wrapping, as msvcrt's does not saturate).
pub fn atoi(env: &mut Env, s: u32) -> i32 {
    let b = env.mem.peek_cstr(s, 4096).unwrap_or_default();
    let mut i = b
        .iter()
        .take_while(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C))
        .count();
    let neg = match b.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let mut v: i32 = 0;
    while let Some(d) = b.get(i).filter(|d| d.is_ascii_digit()) {
        v = v.wrapping_mul(10).wrapping_add((d - b'0') as i32);
        i += 1;
    }
    if neg {
        v.wrapping_neg()
    } else {
        v
    }
}

/// The C standard exports msvcrt and ucrtbase share, declared once. Not a DLL
/// of its own: it is not in [`super::DLLS`], only in the two tables' `also`.
pub mod common {
    use super as crt;

    crate::dll! { "(crt common)";
        cdecl fn strlen(env, s: u32) -> u32 { crt::strlen(env, s) }
        cdecl fn memcpy(env, dst: u32, src: u32, n: u32) -> u32 { crt::memcpy(env, dst, src, n) }
        cdecl fn memmove(env, dst: u32, src: u32, n: u32) -> u32 { crt::memcpy(env, dst, src, n) }
        cdecl fn memset(env, dst: u32, c: u32, n: u32) -> u32 { crt::memset(env, dst, c, n) }
        cdecl fn strcmp(env, a: u32, b: u32) -> i32 { crt::strcmp(env, a, b) }
        cdecl fn puts(env, s: u32) -> i32 { crt::puts(env, s) }
        cdecl fn exit(env, code: u32) -> crate::dll::Ret { crt::exit(code) }
        cdecl fn _exit(env, code: u32) -> crate::dll::Ret { crt::exit(code) }
        cdecl fn abs(env, v: i32) -> i32 { v.wrapping_abs() }
        cdecl fn malloc(env, n: u32) -> u32 { crt::malloc(env, n) }
        cdecl fn calloc(env, count: u32, size: u32) -> u32 { crt::calloc(env, count, size) }
        cdecl fn realloc(env, p: u32, n: u32) -> u32 { crt::realloc(env, p, n) }
        cdecl fn free(env, p: u32) { crt::free(env, p) }
    }
}
