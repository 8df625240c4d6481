//! kernel32's character-type and string-mapping calls: GetStringType(A/W/ExA/ExW)
//! (CT_CTYPE1/2/3 classes from Rust's Unicode tables), LCMapString(A/W/Ex)
//! (lower/upper case, byte reversal, sort keys from `nls`' weights) and the
//! locale enumeration (one locale, en-US).
//!
//! Owns these calls' argument rules and error codes (ERROR_INVALID_PARAMETER
//! 87, ERROR_INVALID_FLAGS 1004, ERROR_INSUFFICIENT_BUFFER 122). ANSI strings
//! are Latin-1 (code page 1252 as modelled by `nls`). Must not touch host state.

use super::nls::{lower, primary, units, upper};
use crate::dll::{Env, Ret};
use crate::files::err;

const C1_UPPER: u16 = 0x1;
const C1_LOWER: u16 = 0x2;
const C1_DIGIT: u16 = 0x4;
const C1_SPACE: u16 = 0x8;
const C1_PUNCT: u16 = 0x10;
const C1_CNTRL: u16 = 0x20;
const C1_BLANK: u16 = 0x40;
const C1_XDIGIT: u16 = 0x80;
const C1_ALPHA: u16 = 0x100;
const C1_DEFINED: u16 = 0x200;

const ERROR_INVALID_FLAGS: u32 = 1004;

/// The CT_CTYPE1 class of one UTF-16 unit.
pub fn ctype1(u: u16) -> u16 {
    let Some(c) = char::from_u32(u as u32) else {
        return 0; // a surrogate half
    };
    let mut t = C1_DEFINED;
    if c.is_control() {
        t |= C1_CNTRL;
    }
    if c.is_whitespace() || matches!(u, 0x0B | 0x0C) {
        t |= C1_SPACE;
    }
    if matches!(u, 0x09 | 0x20 | 0xA0 | 0x3000) {
        t |= C1_BLANK;
    }
    if c.is_ascii_digit() {
        t |= C1_DIGIT;
    }
    if c.is_ascii_hexdigit() {
        t |= C1_XDIGIT;
    }
    if c.is_alphabetic() {
        t |= C1_ALPHA;
        if c.is_uppercase() {
            t |= C1_UPPER;
        } else if c.is_lowercase() {
            t |= C1_LOWER;
        }
    } else if !c.is_control() && !c.is_whitespace() && !c.is_ascii_digit() {
        t |= C1_PUNCT;
    }
    t
}

/// The CT_CTYPE2 (bidirectional) class of one UTF-16 unit.
fn ctype2(u: u16) -> u16 {
    let c = char::from_u32(u as u32).unwrap_or('\u{FFFD}');
    match u {
        0x0A | 0x0D | 0x1C..=0x1E | 0x85 | 0x2029 => 8, // C2_BLOCKSEPARATOR
        0x09 | 0x0B | 0x1F => 9,                        // C2_SEGMENTSEPARATOR
        0x0C | 0x20 | 0x2028 | 0x3000 => 10,            // C2_WHITESPACE
        0x30..=0x39 | 0xB2 | 0xB3 | 0xB9 => 3,          // C2_EUROPENUMBER
        0x2B | 0x2D => 4,                               // C2_EUROPESEPARATOR
        0x23..=0x25 | 0xA2..=0xA5 | 0xB0 | 0xB1 => 5,   // C2_EUROPETERMINATOR
        0x2C | 0x2E | 0x2F | 0x3A | 0xA0 => 7,          // C2_COMMONSEPARATOR
        _ if c.is_control() => 0,                       // C2_NOTAPPLICABLE
        _ if c.is_alphabetic() => 1,                    // C2_LEFTTORIGHT
        _ => 11,                                        // C2_OTHERNEUTRAL
    }
}

/// The CT_CTYPE3 class of one UTF-16 unit.
fn ctype3(u: u16) -> u16 {
    const C3_SYMBOL: u16 = 0x8;
    const C3_HALFWIDTH: u16 = 0x40;
    const C3_FULLWIDTH: u16 = 0x80;
    const C3_HIGHSURROGATE: u16 = 0x800;
    const C3_LOWSURROGATE: u16 = 0x1000;
    const C3_ALPHA: u16 = 0x8000;
    match u {
        0xD800..=0xDBFF => return C3_HIGHSURROGATE,
        0xDC00..=0xDFFF => return C3_LOWSURROGATE,
        _ => {}
    }
    let c = char::from_u32(u as u32).unwrap_or('\u{FFFD}');
    let mut t = 0;
    if u < 0x7F || (0xFF61..=0xFFDC).contains(&u) {
        t |= C3_HALFWIDTH;
    }
    if (0xFF01..=0xFF5E).contains(&u) || (0x3000..=0x30FF).contains(&u) {
        t |= C3_FULLWIDTH;
    }
    if c.is_alphabetic() {
        t |= C3_ALPHA;
    } else if ctype1(u) & C1_PUNCT != 0 {
        t |= C3_SYMBOL;
    }
    t
}

/// Reads `n` units (n = -1: through the NUL, which is counted and classified).
fn source(env: &Env, p: u32, n: i32, wide: bool) -> Option<Vec<u16>> {
    let mut v = units(env, p, n, wide)?;
    if n < 0 {
        v.push(0);
    }
    Some(v)
}

/// GetStringType*: one WORD of class bits per source unit.
fn string_type(env: &mut Env, kind: u32, src: u32, n: i32, out: u32, wide: bool) -> bool {
    let f: fn(u16) -> u16 = match kind {
        1 => ctype1,
        2 => ctype2,
        4 => ctype3,
        _ => return env.fail(ERROR_INVALID_FLAGS, false),
    };
    if src == 0 || n == 0 || out == 0 {
        return env.fail(err::INVALID_PARAMETER, false);
    }
    let Some(units) = source(env, src, n, wide) else {
        return env.fail(err::INVALID_PARAMETER, false);
    };
    let bytes: Vec<u8> = units.iter().flat_map(|&u| f(u).to_le_bytes()).collect();
    env.mem.poke(out, &bytes).is_some() || env.fail(998, false)
}

const LCMAP_LOWERCASE: u32 = 0x100;
const LCMAP_UPPERCASE: u32 = 0x200;
const LCMAP_SORTKEY: u32 = 0x400;
const LCMAP_BYTEREV: u32 = 0x800;
const LCMAP_LINGUISTIC_CASING: u32 = 0x0100_0000;
/// NORM_IGNORECASE, NORM_IGNORENONSPACE, NORM_IGNORESYMBOLS, NORM_IGNOREKANATYPE,
/// NORM_IGNOREWIDTH, SORT_STRINGSORT: accepted with LCMAP_SORTKEY.
const SORT_FLAGS: u32 = 0x1 | 0x2 | 0x4 | 0x1_0000 | 0x2_0000 | 0x1000 | 0x1000_0000;

/// A sort key: the primary weights (two bytes each), 01, the case weights
/// (one per unit: 01 lower or caseless, 02 upper) unless case is ignored,
/// 01 01 01, 00. Ordering keys by bytes gives `nls::compare`'s order.
fn sort_key(units: &[u16], flags: u32) -> Vec<u8> {
    let mut k = Vec::new();
    for &u in units {
        let p = primary(u);
        k.extend_from_slice(&[(p >> 16) as u8 + 1, (p >> 8) as u8, p as u8]);
    }
    k.push(1);
    if flags & 1 == 0 {
        k.extend(units.iter().map(|&u| if lower(u) == u { 1 } else { 2 }));
    }
    k.extend_from_slice(&[1, 1, 1, 0]);
    k
}

/// LCMapString*: `n` units (-1: through the NUL) of `src` mapped into `dst`
/// (`cap` units, or bytes for a sort key; 0 asks for the size).
#[allow(clippy::too_many_arguments)]
fn lcmap(env: &mut Env, flags: u32, src: u32, n: i32, dst: u32, cap: i32, wide: bool) -> i32 {
    if src == 0 || n == 0 || cap < 0 || (cap > 0 && dst == 0) {
        return env.fail(err::INVALID_PARAMETER, 0);
    }
    let case = flags & (LCMAP_LOWERCASE | LCMAP_UPPERCASE);
    if flags & LCMAP_SORTKEY != 0 {
        if flags & !(LCMAP_SORTKEY | SORT_FLAGS) != 0 {
            return env.fail(ERROR_INVALID_FLAGS, 0);
        }
    } else if case == (LCMAP_LOWERCASE | LCMAP_UPPERCASE)
        || flags & !(case | LCMAP_BYTEREV | LCMAP_LINGUISTIC_CASING) != 0
        || flags & LCMAP_BYTEREV != 0 && !wide
    {
        return env.fail(ERROR_INVALID_FLAGS, 0);
    }
    let Some(mut units) = source(env, src, n, wide) else {
        return env.fail(err::INVALID_PARAMETER, 0);
    };
    let out: Vec<u8> = if flags & LCMAP_SORTKEY != 0 {
        if units.last() == Some(&0) && n < 0 {
            units.pop();
        }
        sort_key(&units, flags)
    } else {
        for u in units.iter_mut() {
            *u = match case {
                LCMAP_LOWERCASE => lower(*u),
                LCMAP_UPPERCASE => upper(*u),
                _ => *u,
            };
            if flags & LCMAP_BYTEREV != 0 {
                *u = u.swap_bytes();
            }
        }
        if wide {
            units.iter().flat_map(|u| u.to_le_bytes()).collect()
        } else {
            units
                .iter()
                .map(|&u| if u < 256 { u as u8 } else { b'?' })
                .collect()
        }
    };
    let count = if flags & LCMAP_SORTKEY == 0 && wide {
        out.len() / 2
    } else {
        out.len()
    };
    if cap == 0 {
        return count as i32;
    }
    if (cap as usize) < count {
        return env.fail(err::INSUFFICIENT_BUFFER, 0);
    }
    if env.mem.poke(dst, &out).is_none() {
        return env.fail(998, 0);
    }
    count as i32
}

/// EnumSystemLocales(A/W/Ex): calls `proc` once, for en-US ("00000409" or,
/// for Ex, "en-US" with LOCALE_WINDOWS and `lparam`), then returns TRUE.
fn enum_locales(env: &mut Env, proc_: u32, ex: Option<u32>, wide: bool) -> Ret {
    if proc_ == 0 {
        return Ret::Value(env.fail(err::INVALID_PARAMETER, 0));
    }
    let name = if ex.is_some() { "en-US" } else { "00000409" };
    let p = if wide {
        let w: Vec<u16> = name.encode_utf16().collect();
        env.alloc_wstr(&w)
    } else {
        env.alloc_cstr(name.as_bytes())
    };
    let args = match ex {
        Some(lparam) => vec![p, 1, lparam], // LOCALE_WINDOWS
        None => vec![p],
    };
    Ret::call(proc_, args, |_, _| Ret::Value(1))
}

crate::dll! { "(kernel32 ctype)";
    stdcall fn GetStringTypeW(env, kind: u32, src: u32, n: i32, out: u32) -> bool {
        string_type(env, kind, src, n, out, true)
    }
    stdcall fn GetStringTypeExW(env, lcid: u32, kind: u32, src: u32, n: i32, out: u32) -> bool {
        string_type(env, kind, src, n, out, true)
    }
    stdcall fn GetStringTypeA(env, lcid: u32, kind: u32, src: u32, n: i32, out: u32) -> bool {
        string_type(env, kind, src, n, out, false)
    }
    stdcall fn GetStringTypeExA(env, lcid: u32, kind: u32, src: u32, n: i32, out: u32) -> bool {
        string_type(env, kind, src, n, out, false)
    }
    stdcall fn LCMapStringW(env, lcid: u32, flags: u32, src: u32, n: i32, dst: u32, cap: i32) -> i32 {
        lcmap(env, flags, src, n, dst, cap, true)
    }
    stdcall fn LCMapStringA(env, lcid: u32, flags: u32, src: u32, n: i32, dst: u32, cap: i32) -> i32 {
        lcmap(env, flags, src, n, dst, cap, false)
    }
    stdcall fn LCMapStringEx(env, name: u32, flags: u32, src: u32, n: i32, dst: u32, cap: i32, ver: u32, reserved: u32, handle: u32) -> i32 {
        lcmap(env, flags, src, n, dst, cap, true)
    }
    stdcall fn EnumSystemLocalesA(env, proc_: u32, flags: u32) -> Ret { enum_locales(env, proc_, None, false) }
    stdcall fn EnumSystemLocalesW(env, proc_: u32, flags: u32) -> Ret { enum_locales(env, proc_, None, true) }
    stdcall fn EnumSystemLocalesEx(env, proc_: u32, flags: u32, lparam: u32, reserved: u32) -> Ret {
        enum_locales(env, proc_, Some(lparam), true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctype1_of_ascii_is_windows_table() {
        // Values Windows gives (GetStringTypeW CT_CTYPE1).
        let t: Vec<u16> = "A z5 \t\n!\0".encode_utf16().map(ctype1).collect();
        assert_eq!(
            t,
            vec![0x381, 0x248, 0x302, 0x284, 0x248, 0x268, 0x228, 0x210, 0x220]
        );
        assert_eq!(ctype2(b'7' as u16), 3);
        assert_eq!(ctype3(b'a' as u16), 0x8040);
    }

    #[test]
    fn sort_keys_order_like_compare() {
        let w = |s: &str| s.encode_utf16().collect::<Vec<u16>>();
        let words = ["a", "A", "b", "ab", "1", "-", "B"];
        for x in words {
            for y in words {
                let c = super::super::nls::compare(&w(x), &w(y), false);
                let k = sort_key(&w(x), 0).cmp(&sort_key(&w(y), 0)) as i32;
                assert_eq!(c, k, "{x} vs {y}");
            }
        }
    }
}
