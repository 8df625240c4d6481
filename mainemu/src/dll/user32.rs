//! USER32.dll, the part console programs use: string resources
//! (LoadStringA/W over the module's RT_STRING blocks), the character
//! helpers (CharUpper/Lower(Buff), CharNext/Prev, IsChar*) and wsprintf.
//!
//! Case mapping: UTF-16 through Rust's simple (one-to-one) case mapping;
//! ANSI as Latin-1, the code page mainemu models (see `Env::read_a`).
//!
//! Owns these calls' conventions. It must not: hold window or GUI state
//! (the desktop does, when user32's window calls arrive), or parse PE
//! resources itself (`pe::resources` does).

use super::crt::stdio::{fmt_a, fmt_w, store, Bound};
use super::Env;
use crate::pe::resources;

/// ERROR_RESOURCE_NAME_NOT_FOUND / ERROR_RESOURCE_DATA_NOT_FOUND.
const RESOURCE_NAME_NOT_FOUND: u32 = 1814;
const RESOURCE_DATA_NOT_FOUND: u32 = 1812;
/// wsprintf's output limit (characters, without the NUL).
const WSPRINTF_MAX: u32 = 1024;

/// String `id` of module `hinst` (0: the program): its guest address and length.
fn string_resource(env: &mut Env, hinst: u32, id: u32) -> Option<(u32, u32)> {
    let base = if hinst == 0 { env.image_base } else { hinst };
    let Some(pe) = env.modules.by_base(base).and_then(|m| m.pe.clone()) else {
        return env.fail(RESOURCE_DATA_NOT_FOUND, None);
    };
    match resources::find_string(&pe, id & 0xFFFF) {
        Ok(Some((rva, len))) => Some((base + rva, len)),
        _ => env.fail(RESOURCE_NAME_NOT_FOUND, None),
    }
}

fn load_string(env: &mut Env, hinst: u32, id: u32, buf: u32, cap: i32, wide: bool) -> u32 {
    let found = string_resource(env, hinst, id);
    if buf == 0 {
        return 0;
    }
    // LoadStringW with cap 0 hands out a read-only pointer to the resource text.
    if wide && cap == 0 {
        let (addr, len) = found.unwrap_or((0, 0));
        env.mem.poke_u32(buf, addr);
        return len;
    }
    if cap <= 0 {
        return 0;
    }
    let Some((addr, len)) = found else {
        env.mem.poke(buf, if wide { &[0, 0][..] } else { &[0][..] });
        return 0;
    };
    let n = len.min(cap as u32 - 1);
    let units = env.mem.peek_wstr(addr, n as usize).unwrap_or_default();
    let units = &units[..units.len().min(n as usize)];
    let text = String::from_utf16_lossy(units);
    env.put_str(buf, &text, wide);
    units.len() as u32
}

/// One UTF-16 unit's simple case mapping (unchanged when it has none or it
/// maps to more than one unit).
fn map_w(u: u16, upper: bool) -> u16 {
    let Some(c) = char::from_u32(u as u32) else {
        return u;
    };
    let mut m: Vec<char> = if upper {
        c.to_uppercase().collect()
    } else {
        c.to_lowercase().collect()
    };
    match (m.pop(), m.is_empty()) {
        (Some(r), true) if (r as u32) < 0x10000 => r as u16,
        _ => u,
    }
}

/// One Latin-1 byte's case mapping (ÿ and µ have no Latin-1 uppercase).
fn map_a(b: u8, upper: bool) -> u8 {
    let m = map_w(b as u16, upper);
    if m < 256 {
        m as u8
    } else {
        b
    }
}

/// Maps `len` units (None: up to the NUL) in place; returns the count mapped.
fn map_buf(env: &mut Env, s: u32, len: Option<u32>, upper: bool, wide: bool) -> u32 {
    let size = if wide { 2 } else { 1 };
    let mut n = 0u32;
    loop {
        if len.is_some_and(|l| n >= l) {
            break;
        }
        let a = s.wrapping_add(n * size);
        let Some(b) = env.read_bytes(a, size) else {
            break;
        };
        if wide {
            let u = u16::from_le_bytes([b[0], b[1]]);
            if len.is_none() && u == 0 {
                break;
            }
            env.mem.poke(a, &map_w(u, upper).to_le_bytes());
        } else {
            if len.is_none() && b[0] == 0 {
                break;
            }
            env.mem.poke(a, &[map_a(b[0], upper)]);
        }
        n += 1;
    }
    n
}

/// CharUpper/CharLower: a pointer whose high word is 0 is one character.
fn char_case(env: &mut Env, s: u32, upper: bool, wide: bool) -> u32 {
    if s >> 16 == 0 {
        return if wide {
            map_w(s as u16, upper) as u32
        } else {
            map_a(s as u8, upper) as u32
        };
    }
    map_buf(env, s, None, upper, wide);
    s
}

fn is_char(u: u32, test: fn(char) -> bool) -> bool {
    char::from_u32(u & 0xFFFF).is_some_and(test)
}

crate::dll! { "user32.dll";
    stdcall fn LoadStringA(env, hinst: u32, id: u32, buf: u32, cap: i32) -> u32 { load_string(env, hinst, id, buf, cap, false) }
    stdcall fn LoadStringW(env, hinst: u32, id: u32, buf: u32, cap: i32) -> u32 { load_string(env, hinst, id, buf, cap, true) }
    stdcall fn CharUpperA(env, s: u32) -> u32 { char_case(env, s, true, false) }
    stdcall fn CharUpperW(env, s: u32) -> u32 { char_case(env, s, true, true) }
    stdcall fn CharLowerA(env, s: u32) -> u32 { char_case(env, s, false, false) }
    stdcall fn CharLowerW(env, s: u32) -> u32 { char_case(env, s, false, true) }
    stdcall fn CharUpperBuffA(env, s: u32, n: u32) -> u32 { map_buf(env, s, Some(n), true, false) }
    stdcall fn CharUpperBuffW(env, s: u32, n: u32) -> u32 { map_buf(env, s, Some(n), true, true) }
    stdcall fn CharLowerBuffA(env, s: u32, n: u32) -> u32 { map_buf(env, s, Some(n), false, false) }
    stdcall fn CharLowerBuffW(env, s: u32, n: u32) -> u32 { map_buf(env, s, Some(n), false, true) }
    // Code page 1252 has no lead bytes: every character is one unit.
    stdcall fn CharNextA(env, s: u32) -> u32 { if env.read_bytes(s, 1).is_some_and(|b| b[0] != 0) { s + 1 } else { s } }
    stdcall fn CharNextW(env, s: u32) -> u32 { if env.read_bytes(s, 2).is_some_and(|b| b != [0, 0]) { s + 2 } else { s } }
    stdcall fn CharPrevA(env, start: u32, cur: u32) -> u32 { if cur > start { cur - 1 } else { start } }
    stdcall fn CharPrevW(env, start: u32, cur: u32) -> u32 { if cur > start + 1 { cur - 2 } else { start } }
    stdcall fn CharPrevExA(env, code_page: u32, start: u32, cur: u32, flags: u32) -> u32 { if cur > start { cur - 1 } else { start } }
    stdcall fn IsCharAlphaA(env, c: u32) -> bool { is_char(c & 0xFF, char::is_alphabetic) }
    stdcall fn IsCharAlphaW(env, c: u32) -> bool { is_char(c, char::is_alphabetic) }
    stdcall fn IsCharAlphaNumericA(env, c: u32) -> bool { is_char(c & 0xFF, char::is_alphanumeric) }
    stdcall fn IsCharAlphaNumericW(env, c: u32) -> bool { is_char(c, char::is_alphanumeric) }
    stdcall fn IsCharUpperA(env, c: u32) -> bool { is_char(c & 0xFF, char::is_uppercase) }
    stdcall fn IsCharUpperW(env, c: u32) -> bool { is_char(c, char::is_uppercase) }
    stdcall fn IsCharLowerA(env, c: u32) -> bool { is_char(c & 0xFF, char::is_lowercase) }
    stdcall fn IsCharLowerW(env, c: u32) -> bool { is_char(c, char::is_lowercase) }
    // wsprintf: the C runtime's formatting, at most 1024 characters and a NUL.
    cdecl fn wsprintfA(env, buf: u32, f: u32) -> i32 { let out = fmt_a(env, f, env.arg_base + 8); store(env, buf, &out[..out.len().min(WSPRINTF_MAX as usize)], Bound::None) }
    cdecl fn wsprintfW(env, buf: u32, f: u32) -> i32 { let out = fmt_w(env, f, env.arg_base + 8); store(env, buf, &out[..out.len().min(WSPRINTF_MAX as usize)], Bound::None) }
    stdcall fn wvsprintfA(env, buf: u32, f: u32, va: u32) -> i32 { let out = fmt_a(env, f, va); store(env, buf, &out[..out.len().min(WSPRINTF_MAX as usize)], Bound::None) }
    stdcall fn wvsprintfW(env, buf: u32, f: u32, va: u32) -> i32 { let out = fmt_w(env, f, va); store(env, buf, &out[..out.len().min(WSPRINTF_MAX as usize)], Bound::None) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dll::Ret;

    fn env() -> Env {
        let mut e = Env::new(crate::memory::Memory::new());
        e.process_heap = e.new_heap();
        e
    }

    #[test]
    fn case_mapping_in_place_and_by_value() {
        let mut e = env();
        let w = e.alloc_wstr(&"straße Ωmega".encode_utf16().collect::<Vec<_>>());
        assert_eq!(DLL.call("CharUpperW", &mut e, &[w]), Ret::Value(w));
        // ß has no one-unit uppercase: kept, as Windows keeps it.
        assert_eq!(e.read_w(w).as_deref(), Some("STRAßE ΩMEGA"));
        assert_eq!(DLL.call("CharLowerBuffW", &mut e, &[w, 3]), Ret::Value(3));
        assert_eq!(e.read_w(w).as_deref(), Some("strAßE ΩMEGA"));
        assert_eq!(DLL.call("CharUpperW", &mut e, &[0xE9]), Ret::Value(0xC9));
        let a = e.alloc_cstr(b"abc\xe9\xff");
        assert_eq!(DLL.call("CharUpperA", &mut e, &[a]), Ret::Value(a));
        assert_eq!(e.read_bytes(a, 6), Some(b"ABC\xc9\xff\0".to_vec()));
        assert_eq!(
            DLL.call("CharPrevExA", &mut e, &[0, a, a, 0]),
            Ret::Value(a)
        );
        assert_eq!(
            DLL.call("CharPrevExA", &mut e, &[0, a, a + 2, 0]),
            Ret::Value(a + 1)
        );
        assert_eq!(DLL.call("CharNextA", &mut e, &[a + 5]), Ret::Value(a + 5));
    }

    #[test]
    fn load_string_without_a_module_fails_cleanly() {
        let mut e = env();
        let buf = e.alloc(16);
        e.mem.poke(buf, b"xx");
        assert_eq!(
            DLL.call("LoadStringW", &mut e, &[0, 1, buf, 8]),
            Ret::Value(0)
        );
        assert_eq!(e.read_bytes(buf, 2), Some(vec![0, 0]));
        assert_eq!(e.last_error, RESOURCE_DATA_NOT_FOUND);
    }
}
