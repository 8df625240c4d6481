//! SHLWAPI.dll: the string and path helpers Wine's notepad uses (StrCmpN(I),
//! StrStr(I), StrRStrI, PathFindFileName, wnsprintf). Comparisons are by
//! UTF-16 unit with Rust's simple case mapping (as user32's CharUpper);
//! every other export stays a named stub.
//!
//! Owns these calls' conventions; must not touch host state.

use super::crt::stdio::{fmt_w, store, Bound};
use super::gui_structs::read_str;
use super::Env;

fn wstr(env: &Env, a: u32) -> Vec<u16> {
    read_str(&env.mem, a, -1, true).unwrap_or_default()
}

fn fold(u: u16) -> u16 {
    char::from_u32(u as u32)
        .and_then(|c| {
            let mut l = c.to_lowercase();
            (l.len() == 1).then(|| l.next()).flatten()
        })
        .filter(|c| (*c as u32) < 0x1_0000)
        .map_or(u, |c| c as u16)
}

/// StrCmpN(I)W: the first `n` units, <0, 0 or >0.
fn cmp_n(env: &Env, a: u32, b: u32, n: i32, ci: bool) -> i32 {
    let (a, b) = (wstr(env, a), wstr(env, b));
    let n = n.max(0) as usize;
    let f = |u: u16| if ci { fold(u) } else { u };
    let x = a.iter().take(n).map(|&u| f(u)).chain(std::iter::once(0));
    let y = b.iter().take(n).map(|&u| f(u)).chain(std::iter::once(0));
    for (p, q) in x.zip(y).take(n) {
        if p != q {
            return p as i32 - q as i32;
        }
        if p == 0 {
            break;
        }
    }
    0
}

/// StrStr(I)W / StrRStrIW: the address of the first (last) match, or 0.
fn find(env: &Env, hay: u32, needle: u32, ci: bool, last: bool) -> u32 {
    if hay == 0 || needle == 0 {
        return 0;
    }
    let f = |u: &u16| if ci { fold(*u) } else { *u };
    let h: Vec<u16> = wstr(env, hay).iter().map(f).collect();
    let n: Vec<u16> = wstr(env, needle).iter().map(f).collect();
    if n.is_empty() || n.len() > h.len() {
        return 0;
    }
    let mut hits = (0..=h.len() - n.len()).filter(|&i| h[i..i + n.len()] == n[..]);
    let at = if last { hits.last() } else { hits.next() };
    at.map_or(0, |i| hay + 2 * i as u32)
}

crate::dll! { "shlwapi.dll";
    stdcall fn StrCmpNW(env, a: u32, b: u32, n: i32) -> i32 { cmp_n(env, a, b, n, false) }
    stdcall fn StrCmpNIW(env, a: u32, b: u32, n: i32) -> i32 { cmp_n(env, a, b, n, true) }
    stdcall fn StrStrW(env, h: u32, n: u32) -> u32 { find(env, h, n, false, false) }
    stdcall fn StrStrIW(env, h: u32, n: u32) -> u32 { find(env, h, n, true, false) }
    // StrRStrIW(start, end, search): the last match before `end` (0: the whole string).
    stdcall fn StrRStrIW(env, h: u32, end: u32, n: u32) -> u32 {
        let r = find(env, h, n, true, true);
        if end != 0 && r >= end { 0 } else { r }
    }
    // The part after the last '\\', '/' or ':'.
    stdcall fn PathFindFileNameW(env, p: u32) -> u32 {
        let s = wstr(env, p);
        let cut = s.iter().rposition(|&u| u == b'\\' as u16 || u == b'/' as u16 || u == b':' as u16);
        p + 2 * cut.map_or(0, |i| i as u32 + 1)
    }
    cdecl fn wnsprintfW(env, buf: u32, max: i32, f: u32) -> i32 {
        let out = fmt_w(env, f, env.arg_base + 12);
        if max <= 0 { return -1; }
        let n = out.len().min(max as usize - 1);
        store(env, buf, &out[..n], Bound::None)
    }
}
