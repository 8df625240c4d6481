//! MultiByteToWideChar and WideCharToMultiByte: the code pages mainemu
//! models (1252 with its 0x80-0x9F table for CP_ACP, UTF-8, UTF-7 as
//! Windows writes it, Latin-1 for the other single-byte pages `nls`
//! accepts) and the calls' argument rules (ERROR_INVALID_PARAMETER 87,
//! ERROR_INVALID_FLAGS 1004, ERROR_INSUFFICIENT_BUFFER 122,
//! ERROR_NO_UNICODE_TRANSLATION 1113).
//!
//! Owns the conversions only; code page identities (which pages exist,
//! CP_ACP's number) are `nls`'. Must not touch host state.

use super::nls::{resolve_cp, valid_cp};
use crate::dll::Env;
use crate::files::err;

const CP_UTF7: u32 = 65000;
const CP_UTF8: u32 = 65001;
const ERROR_INVALID_FLAGS: u32 = 1004;
const ERROR_NO_UNICODE_TRANSLATION: u32 = 1113;
/// MB_PRECOMPOSED, MB_COMPOSITE, MB_USEGLYPHCHARS, MB_ERR_INVALID_CHARS.
const MB_FLAGS: u32 = 0xF;
const MB_ERR_INVALID_CHARS: u32 = 8;
/// WC_COMPOSITECHECK, WC_DISCARDNS, WC_SEPCHARS, WC_DEFAULTCHAR,
/// WC_ERR_INVALID_CHARS, WC_NO_BEST_FIT_CHARS.
const WC_FLAGS: u32 = 0x200 | 0x10 | 0x20 | 0x40 | 0x80 | 0x400;
const WC_ERR_INVALID_CHARS: u32 = 0x80;

/// Code page 1252's 0x80-0x9F (the undefined 81, 8D, 8F, 90, 9D map to themselves).
const CP1252_HIGH: [u16; 32] = [
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039,
    0x0152, 0x008D, 0x017D, 0x008F, 0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
    0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
];

fn sb_to_wide(cp: u32, b: u8) -> u16 {
    match b {
        0x80..=0x9F if cp == 1252 => CP1252_HIGH[b as usize - 0x80],
        _ => b as u16,
    }
}

/// One byte of the ANSI code page (CP_ACP, 1252) as UTF-16.
pub fn ansi_to_wide(b: u8) -> u16 {
    sb_to_wide(super::nls::ACP, b)
}

/// One UTF-16 unit in the ANSI code page, `?` when it has no byte.
pub fn wide_to_ansi(u: u16) -> u8 {
    wide_to_sb(super::nls::ACP, u).unwrap_or(b'?')
}

/// The single byte for `u` in `cp`, if it has one.
fn wide_to_sb(cp: u32, u: u16) -> Option<u8> {
    if cp == 1252 {
        if let Some(k) = CP1252_HIGH.iter().position(|&x| x == u) {
            return Some(0x80 + k as u8);
        }
        if (0x80..0xA0).contains(&u) {
            return None;
        }
    }
    (u < 256).then_some(u as u8)
}

/// RFC 2152's directly encoded set as Windows uses it (with NUL, TAB, LF, CR).
fn utf7_direct(u: u16) -> bool {
    matches!(u, 0 | 9 | 10 | 13 | 0x20 | 0x27..=0x29 | 0x2B..=0x3A | 0x3F)
        || (u as u8).is_ascii_alphanumeric() && u < 0x80
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// UTF-16 to UTF-7 as Windows writes it: `+` as `+-`, every base64 run
/// closed with `-`. `cap` (0: count only) limits the output; None when it
/// does not fit (Windows also refuses a final padded sextet with no room
/// for its `-`).
fn utf7_encode(src: &[u16], cap: usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let put = |out: &mut Vec<u8>, b: u8| {
        if cap > 0 && out.len() >= cap {
            return None;
        }
        out.push(b);
        Some(())
    };
    let mut i = 0;
    while i < src.len() {
        let u = src[i];
        if u == u16::from(b'+') {
            put(&mut out, b'+')?;
            put(&mut out, b'-')?;
            i += 1;
        } else if utf7_direct(u) {
            put(&mut out, u as u8)?;
            i += 1;
        } else {
            put(&mut out, b'+')?;
            let (mut bits, mut n) = (0u32, 0u32);
            while i < src.len() && !utf7_direct(src[i]) && src[i] != u16::from(b'+') {
                bits = (bits << 16) | src[i] as u32;
                n += 16;
                while n >= 6 {
                    n -= 6;
                    put(&mut out, B64[((bits >> n) & 0x3F) as usize])?;
                }
                i += 1;
            }
            if n > 0 {
                if cap > 0 && out.len() + 1 >= cap {
                    return None;
                }
                put(&mut out, B64[((bits << (6 - n)) & 0x3F) as usize])?;
            }
            put(&mut out, b'-')?;
        }
    }
    Some(out)
}

/// UTF-7 to UTF-16 as Windows reads it: an unfinished unit at a `-` or a
/// non-base64 character is dropped; a byte >= 0x80 ends a base64 run
/// keeping the unfinished unit's bits.
fn utf7_decode(src: &[u8]) -> Vec<u16> {
    let sextet = |b: u8| B64.iter().position(|&x| x == b).map(|k| k as u32);
    let mut out = Vec::new();
    let (mut bits, mut n) = (0u32, 0u32);
    let mut i = 0;
    while i < src.len() {
        if src[i] != b'+' {
            out.push(src[i] as u16);
            i += 1;
            continue;
        }
        i += 1;
        if i >= src.len() {
            break;
        }
        if src[i] == b'-' {
            out.push(u16::from(b'+'));
            i += 1;
            continue;
        }
        while i < src.len() {
            let b = src[i];
            if b == b'-' {
                i += 1;
                n = 0;
                break;
            }
            if b >= 0x80 {
                break;
            }
            let Some(s) = sextet(b) else {
                n = 0;
                break;
            };
            bits = (bits << 6) | s;
            n += 6;
            if n >= 16 {
                out.push((bits >> (n - 16)) as u16);
                n -= 16;
            }
            i += 1;
        }
    }
    out
}

fn byte(env: &Env, a: u32) -> Option<u8> {
    let mut x = [0u8];
    env.mem.peek(a, &mut x).map(|_| x[0])
}

fn read_units<T: Copy + Default + PartialEq>(
    read: impl Fn(u32) -> Option<T>,
    n: i32,
) -> Option<Vec<T>> {
    let mut v = Vec::new();
    for k in 0.. {
        if n >= 0 && k >= n as u32 {
            break;
        }
        let u = read(k)?;
        v.push(u);
        if n < 0 && u == T::default() {
            break;
        }
        if k > 1 << 24 {
            return None;
        }
    }
    Some(v)
}

/// MultiByteToWideChar.
pub fn mb_to_wide(env: &mut Env, cp: u32, flags: u32, src: u32, n: i32, dst: u32, cap: i32) -> i32 {
    if src == 0 || n == 0 || (dst == 0 && cap != 0) || cap < 0 {
        return env.fail(err::INVALID_PARAMETER, 0);
    }
    let cp = resolve_cp(cp);
    if cp == CP_UTF7 {
        if flags != 0 {
            return env.fail(ERROR_INVALID_FLAGS, 0);
        }
    } else if !valid_cp(cp) {
        return env.fail(err::INVALID_PARAMETER, 0);
    } else if flags & !MB_FLAGS != 0 {
        return env.fail(ERROR_INVALID_FLAGS, 0);
    }
    let Some(b) = read_units(|k| byte(env, src + k), n) else {
        return env.fail(998, 0);
    };
    let w: Vec<u16> = match cp {
        CP_UTF7 => utf7_decode(&b),
        CP_UTF8 => match std::str::from_utf8(&b) {
            Ok(s) => s.encode_utf16().collect(),
            Err(_) if flags & MB_ERR_INVALID_CHARS != 0 => {
                return env.fail(ERROR_NO_UNICODE_TRANSLATION, 0)
            }
            Err(_) => String::from_utf8_lossy(&b).encode_utf16().collect(),
        },
        _ => b.iter().map(|&c| sb_to_wide(cp, c)).collect(),
    };
    if cap == 0 {
        return w.len() as i32;
    }
    if (cap as usize) < w.len() {
        // Windows fills the buffer before failing.
        env.mem.poke(dst, &crate::dll::wbytes(&w[..cap as usize]));
        return env.fail(err::INSUFFICIENT_BUFFER, 0);
    }
    env.mem.poke(dst, &crate::dll::wbytes(&w));
    w.len() as i32
}

/// WideCharToMultiByte.
#[allow(clippy::too_many_arguments)]
pub fn wide_to_mb(
    env: &mut Env,
    cp: u32,
    flags: u32,
    src: u32,
    n: i32,
    dst: u32,
    cap: i32,
    defchar: u32,
    used: u32,
) -> i32 {
    if src == 0 || n == 0 || (dst == 0 && cap != 0) || cap < 0 {
        return env.fail(err::INVALID_PARAMETER, 0);
    }
    let cp = resolve_cp(cp);
    match cp {
        CP_UTF7 | CP_UTF8 if defchar != 0 || used != 0 => {
            return env.fail(err::INVALID_PARAMETER, 0)
        }
        CP_UTF7 if flags != 0 => return env.fail(ERROR_INVALID_FLAGS, 0),
        CP_UTF8 if flags & !WC_ERR_INVALID_CHARS != 0 => return env.fail(ERROR_INVALID_FLAGS, 0),
        CP_UTF7 | CP_UTF8 => {}
        _ if !valid_cp(cp) => return env.fail(err::INVALID_PARAMETER, 0),
        _ if flags & !WC_FLAGS != 0 => return env.fail(ERROR_INVALID_FLAGS, 0),
        _ => {}
    }
    let Some(w) = read_units(
        |k| {
            let mut x = [0u8; 2];
            env.mem
                .peek(src + 2 * k, &mut x)
                .map(|_| u16::from_le_bytes(x))
        },
        n,
    ) else {
        return env.fail(998, 0);
    };
    let b: Vec<u8> = match cp {
        CP_UTF7 => match utf7_encode(&w, cap as usize) {
            Some(b) => b,
            None => return env.fail(err::INSUFFICIENT_BUFFER, 0),
        },
        CP_UTF8 => match String::from_utf16(&w) {
            Ok(s) => s.into_bytes(),
            Err(_) if flags & WC_ERR_INVALID_CHARS != 0 => {
                return env.fail(ERROR_NO_UNICODE_TRANSLATION, 0)
            }
            Err(_) => String::from_utf16_lossy(&w).into_bytes(),
        },
        _ => {
            let def = if defchar != 0 {
                byte(env, defchar).unwrap_or(b'?')
            } else {
                b'?'
            };
            let mut any = false;
            let b = w
                .iter()
                .map(|&u| {
                    wide_to_sb(cp, u).unwrap_or_else(|| {
                        any = true;
                        def
                    })
                })
                .collect();
            if used != 0 {
                env.mem.poke_u32(used, any as u32);
            }
            b
        }
    };
    if cap == 0 {
        return b.len() as i32;
    }
    if (cap as usize) < b.len() {
        env.mem.poke(dst, &b[..cap as usize]);
        return env.fail(err::INSUFFICIENT_BUFFER, 0);
    }
    env.mem.poke(dst, &b);
    b.len() as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    #[test]
    fn utf7_as_windows_writes_and_reads_it() {
        // Examples of Wine's codepage test (written by Windows).
        assert_eq!(utf7_encode(&w("A+B"), 0).unwrap(), b"A+-B");
        assert_eq!(utf7_encode(&w("\u{263A}"), 0).unwrap(), b"+Jjo-");
        assert_eq!(
            utf7_encode(&w("Hi Mom -\u{263A}-!"), 0).unwrap(),
            b"Hi Mom -+Jjo--+ACE-"
        );
        assert_eq!(
            utf7_encode(&w("\u{65E5}\u{672C}\u{8A9E}"), 0).unwrap(),
            b"+ZeVnLIqe-"
        );
        assert_eq!(utf7_decode(b"Hi Mom -+Jjo--+ACE-"), w("Hi Mom -\u{263A}-!"));
        assert_eq!(utf7_decode(b"+ZeVnLIqe-"), w("\u{65E5}\u{672C}\u{8A9E}"));
        assert_eq!(utf7_decode(b"+-+"), w("+"));
        // No room for the closing '-' of a padded sextet: refused.
        assert_eq!(utf7_encode(&w("\u{263A}"), 4), None);
        assert_eq!(utf7_encode(&w("\u{263A}"), 5).unwrap(), b"+Jjo-");
    }

    #[test]
    fn cp1252_high_half() {
        assert_eq!(sb_to_wide(1252, 0x80), 0x20AC);
        assert_eq!(wide_to_sb(1252, 0x20AC), Some(0x80));
        assert_eq!(wide_to_sb(1252, 0x0081), Some(0x81));
        assert_eq!(wide_to_sb(1252, 0x0085), None);
        assert_eq!(wide_to_sb(28591, 0x0085), Some(0x85));
    }
}
