//! The C runtime's checked (`_s`), locale (`_l`) and restartable
//! (`mbr*`, `wcr*`, `*srtombs`/`*srtowcs`) string calls, shared by msvcrt
//! and ucrtbase.
//!
//! Owns their argument checks, errno values and truncation rules as
//! Microsoft documents them, over the C locale of [`super::string`]
//! (single-byte, Latin-1 bytes; a `_locale_t` argument names that same
//! locale, since `_create_locale` knows no other, so it is ignored; an
//! `mbstate_t` has nothing to carry and is cleared). It must not do I/O and
//! must not call the guest (the invalid-parameter handler is not invoked:
//! errno and the return value say what happened).

use super::fd::errno::{EILSEQ, EINVAL, ERANGE};
use super::fd::set_errno;
use super::string::{lower, put_units, units, units_n, upper};
use crate::dll::{Env, Ret};

/// `_TRUNCATE`: copy what fits.
const TRUNCATE: u32 = u32::MAX;
/// STRUNCATE: the copy was cut short as asked.
const STRUNCATE: i32 = 80;
/// `_NLSCMPERROR`: what the comparisons answer for an invalid argument.
const NLSCMPERROR: i32 = 0x7FFF_FFFF;

/// Sets errno and returns it: every failed check of a `_s` call does both.
fn fail(env: &mut Env, e: i32) -> i32 {
    set_errno(env, e);
    e
}

fn unit(wide: bool) -> u32 {
    if wide {
        2
    } else {
        1
    }
}

/// Reads `n` units at `p` without stopping at a NUL (a `_s` call inspects
/// its whole buffer).
fn raw_units(env: &Env, p: u32, n: u32, wide: bool) -> Vec<u16> {
    let b = env.read_bytes(p, n * unit(wide)).unwrap_or_default();
    if wide {
        b.chunks(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect()
    } else {
        b.into_iter().map(u16::from).collect()
    }
}

fn put_unit(env: &mut Env, p: u32, c: u16, wide: bool) {
    put_units(env, p, &[c], false, wide);
}

/// `_strlwr_s`/`_strupr_s` and their wide and `_mbs` forms: EINVAL for a
/// NULL string or size 0, and, when no NUL lies within `size` units,
/// EINVAL with the first unit cleared (the rest is left as it was).
fn case_s(env: &mut Env, s: u32, size: u32, wide: bool, up: bool) -> i32 {
    if s == 0 || size == 0 {
        return fail(env, EINVAL);
    }
    let u = raw_units(env, s, size, wide);
    let Some(len) = u.iter().position(|&c| c == 0) else {
        put_unit(env, s, 0, wide);
        return fail(env, EINVAL);
    };
    // The C locale changes only ASCII letters in narrow strings.
    let m: Vec<u16> = u[..len]
        .iter()
        .map(|&c| match (wide, up) {
            (true, true) => upper(c),
            (true, false) => lower(c),
            (false, _) if c >= 0x80 => c,
            (false, true) => upper(c),
            (false, false) => lower(c),
        })
        .collect();
    put_units(env, s, &m, false, wide);
    0
}

/// `_strnset_s`/`_wcsnset_s` (`count` units) and `_wcsset_s` (all):
/// sets up to the NUL; no NUL within `size` is EINVAL with the string
/// emptied.
fn set_s(env: &mut Env, s: u32, size: u32, c: u32, count: u32, wide: bool) -> i32 {
    if s == 0 && size == 0 && count == 0 {
        return 0;
    }
    if s == 0 || size == 0 {
        return fail(env, EINVAL);
    }
    let mut u = raw_units(env, s, size, wide);
    let fillc = if wide { c as u16 } else { c as u8 as u16 };
    let mut i = 0usize;
    while i + 1 < size as usize && (i as u32) < count {
        if u[i] == 0 {
            put_units(env, s, &u[..i], false, wide);
            return 0;
        }
        u[i] = fillc;
        i += 1;
    }
    if u[i..].contains(&0) {
        put_units(env, s, &u[..i], false, wide);
        return 0;
    }
    put_unit(env, s, 0, wide);
    fail(env, EINVAL)
}

/// `_mbscat_s` (`count` = all) and `_mbsnbcat_s`: appends while there is
/// room; an unterminated destination is EINVAL, a full one ERANGE, both
/// with the destination's first byte cleared and what was copied left.
fn cat_s(env: &mut Env, d: u32, size: u32, s: u32, count: u32) -> i32 {
    if d == 0 && size == 0 && s == 0 && count == 0 {
        return 0;
    }
    if d == 0 || size == 0 {
        return fail(env, EINVAL);
    }
    if s == 0 {
        put_unit(env, d, 0, false);
        return fail(env, EINVAL);
    }
    let have = raw_units(env, d, size, false);
    let Some(base) = have.iter().position(|&c| c == 0) else {
        put_unit(env, d, 0, false);
        return fail(env, EINVAL);
    };
    let src = units_n(env, s, count, false);
    let room = size as usize - base - 1;
    if src.len() > room {
        // Windows copies what fits, then clears the first byte.
        let fit = (size as usize - base).min(src.len());
        put_units(env, d + base as u32, &src[..fit], false, false);
        put_unit(env, d, 0, false);
        return fail(env, ERANGE);
    }
    put_units(env, d + base as u32, &src, true, false);
    0
}

/// Stores at most `count` units of `src` (all for `_TRUNCATE`) and a NUL
/// as UTF-16 in `size` units at `d`: (units stored, 0 or STRUNCATE), or
/// ERANGE (with `d` emptied) when they do not fit and truncation was not
/// asked for.
fn store_wide(
    env: &mut Env,
    d: u32,
    size: u32,
    count: u32,
    src: &[u16],
) -> Result<(usize, i32), i32> {
    let want = if count == TRUNCATE {
        src.len()
    } else {
        src.len().min(count as usize)
    };
    let (n, e) = if want < size as usize {
        (want, 0)
    } else if count == TRUNCATE {
        (size as usize - 1, STRUNCATE)
    } else {
        put_unit(env, d, 0, true);
        return Err(fail(env, ERANGE));
    };
    put_units(env, d, &src[..n], true, true);
    Ok((n, e))
}

/// `mbstowcs_s`/`_mbstowcs_s_l`: Latin-1 bytes to UTF-16 with the checks
/// and `_TRUNCATE` rule of the documentation; `*ret` counts the NUL.
fn mbstowcs_s(env: &mut Env, ret: u32, d: u32, size: u32, s: u32, count: u32) -> i32 {
    if d == 0 && size == 0 {
        let n = units(env, s, false).len() as u32;
        if ret != 0 {
            env.mem.poke_u32(ret, n + 1);
        }
        return 0;
    }
    if s == 0 {
        if d != 0 && size != 0 {
            put_unit(env, d, 0, true);
        }
        return fail(env, EINVAL);
    }
    if d == 0 {
        return fail(env, EINVAL);
    }
    let src = units(env, s, false);
    let (n, e) = match store_wide(env, d, size, count, &src) {
        Ok(x) => x,
        Err(e) => return e,
    };
    if ret != 0 {
        env.mem.poke_u32(ret, n as u32 + 1);
    }
    e
}

/// `wcstombs_s`/`_wcstombs_s_l`: UTF-16 to Latin-1 bytes; a character
/// beyond Latin-1 is EILSEQ with the destination emptied.
fn wcstombs_s(env: &mut Env, ret: u32, d: u32, size: u32, s: u32, count: u32) -> i32 {
    let src = units(env, s, true);
    let bad = src.iter().any(|&c| c > 0xFF);
    if d == 0 && size == 0 && s != 0 {
        if bad {
            if ret != 0 {
                env.mem.poke_u32(ret, 0);
            }
            return fail(env, EILSEQ);
        }
        if ret != 0 {
            env.mem.poke_u32(ret, src.len() as u32 + 1);
        }
        return 0;
    }
    if d == 0 {
        return fail(env, EINVAL);
    }
    if size != 0 {
        put_unit(env, d, 0, false);
    }
    if s == 0 {
        return fail(env, EINVAL);
    }
    let want = if count == TRUNCATE {
        src.len()
    } else {
        src.len().min(count as usize)
    };
    if src[..want].iter().any(|&c| c > 0xFF) {
        if ret != 0 {
            env.mem.poke_u32(ret, 0);
        }
        return fail(env, EILSEQ);
    }
    let (n, e) = if want < size as usize {
        (want, 0)
    } else if count == TRUNCATE && size != 0 {
        (size as usize - 1, STRUNCATE)
    } else {
        if ret != 0 {
            env.mem.poke_u32(ret, 0);
        }
        return fail(env, ERANGE);
    };
    put_units(env, d, &src[..n], true, false);
    if ret != 0 {
        env.mem.poke_u32(ret, n as u32 + 1);
    }
    e
}

/// `mbsrtowcs`/`wcsrtombs`: converts from `*ps`, at most `len` units into
/// `d` (or counts when `d` is NULL); reaching the NUL stores it and sets
/// `*ps` to NULL, else `*ps` moves past what was converted. -1 and EILSEQ
/// for a character the narrow side cannot hold.
fn srtos(env: &mut Env, d: u32, ps: u32, len: u32, state: u32, to_wide: bool) -> u32 {
    if state != 0 {
        env.mem.poke_u32(state, 0);
    }
    let s = if ps == 0 {
        0
    } else {
        env.mem.peek_u32(ps).unwrap_or(0)
    };
    if s == 0 {
        set_errno(env, EINVAL);
        return u32::MAX;
    }
    let src = units(env, s, !to_wide);
    let limit = if d == 0 {
        src.len()
    } else {
        src.len().min(len as usize)
    };
    if let Some(bad) = src[..limit].iter().position(|&c| !to_wide && c > 0xFF) {
        if d != 0 {
            put_units(env, d, &src[..bad], false, false);
            env.mem.poke_u32(ps, s + 2 * bad as u32);
        }
        set_errno(env, EILSEQ);
        return u32::MAX;
    }
    if d == 0 {
        return src.len() as u32;
    }
    let done = limit == src.len() && limit < len as usize;
    put_units(env, d, &src[..limit], done, to_wide);
    let step = if to_wide { 1 } else { 2 };
    env.mem
        .poke_u32(ps, if done { 0 } else { s + step * limit as u32 });
    limit as u32
}

/// `mbsrtowcs_s`: the checked form of `mbsrtowcs`; `*ret` counts the NUL
/// when it was stored.
fn mbsrtowcs_s(env: &mut Env, ret: u32, d: u32, size: u32, ps: u32, count: u32, state: u32) -> i32 {
    if ret != 0 {
        env.mem.poke_u32(ret, u32::MAX);
    }
    let s = if ps == 0 {
        0
    } else {
        env.mem.peek_u32(ps).unwrap_or(0)
    };
    if s == 0 || (d == 0 && size != 0) || (d != 0 && size == 0) {
        return fail(env, EINVAL);
    }
    if state != 0 {
        env.mem.poke_u32(state, 0);
    }
    let src = units(env, s, false);
    if d == 0 {
        if ret != 0 {
            env.mem.poke_u32(ret, src.len() as u32 + 1);
        }
        return 0;
    }
    let (n, e) = match store_wide(env, d, size, count, &src) {
        Ok(x) => x,
        Err(e) => return e,
    };
    env.mem
        .poke_u32(ps, if n == src.len() { 0 } else { s + n as u32 });
    if ret != 0 {
        env.mem.poke_u32(ret, n as u32 + 1);
    }
    e
}

/// `_gcvt_s`: `%.*g` of the value into `size` bytes, ERANGE (buffer
/// emptied) when the digits or the text do not fit.
fn gcvt_s(env: &mut Env, buf: u32, size: u32, v: f64, digits: i32) -> i32 {
    if buf == 0 {
        return fail(env, EINVAL);
    }
    if digits < 0 || digits as u32 >= size {
        if size != 0 {
            put_unit(env, buf, 0, false);
        }
        return fail(env, ERANGE);
    }
    let text = crate::dll::printf::format_g(v, digits as usize);
    if text.len() as u32 >= size {
        put_unit(env, buf, 0, false);
        return fail(env, ERANGE);
    }
    let mut b = text;
    b.push(0);
    env.mem.poke(buf, &b);
    0
}

/// `wcrtomb_s`: one character, `*ret` its length (-1 when it failed).
fn wcrtomb_s(env: &mut Env, ret: u32, d: u32, size: u32, c: u32, state: u32) -> i32 {
    if state != 0 {
        env.mem.poke_u32(state, 0);
    }
    if d == 0 && size > 0 {
        if ret != 0 {
            env.mem.poke_u32(ret, 0);
        }
        return 0;
    }
    if ret != 0 {
        env.mem.poke_u32(ret, u32::MAX);
    }
    if c as u16 > 0xFF {
        if d != 0 && size > 0 {
            env.mem.poke(d, &vec![0u8; size.min(16) as usize]);
        }
        return fail(env, EILSEQ);
    }
    if size < 1 {
        return fail(env, ERANGE);
    }
    env.mem.poke(d, &[c as u8]);
    if ret != 0 {
        env.mem.poke_u32(ret, 1);
    }
    0
}

/// A double as the x87's 80-bit extended format (explicit integer bit).
pub fn f64_to_ext(v: f64) -> [u8; 10] {
    let bits = v.to_bits();
    let sign = ((bits >> 63) as u16) << 15;
    let exp = ((bits >> 52) & 0x7FF) as i32;
    let frac = bits & ((1 << 52) - 1);
    let (e, m): (u16, u64) = match exp {
        0 if frac == 0 => (0, 0),
        0 => {
            // A subnormal double is a normal extended number.
            let shift = frac.leading_zeros() as i32;
            ((15361 - (shift - 11)) as u16, frac << shift)
        }
        0x7FF => (0x7FFF, 1 << 63 | frac << 11),
        _ => ((exp - 1023 + 16383) as u16, 1 << 63 | frac << 11),
    };
    let mut out = [0u8; 10];
    out[..8].copy_from_slice(&m.to_le_bytes());
    out[8..].copy_from_slice(&(e | sign).to_le_bytes());
    out
}

/// `__STRINGTOLD`: the decimal at `s` as an 80-bit long double (through a
/// double: the extra range and precision of the format are not reached).
/// Returns 0, 1 (underflow), 2 (overflow: the largest pattern is stored)
/// or 4 (no number: `*end` is `s`, as for "inf" and "nan", which it does
/// not accept).
fn stringtold(env: &mut Env, out: u32, end: u32, s: u32) -> i32 {
    let u = units(env, s, false);
    let text: String = u.iter().map(|&c| (c as u8) as char).collect();
    let body = text.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let body = body.trim_start_matches(['+', '-']).to_ascii_lowercase();
    let (v, used) = if body.starts_with("inf") || body.starts_with("nan") {
        (0.0, 0)
    } else {
        super::misc::parse_float(&u)
    };
    if end != 0 {
        env.mem.poke_u32(end, s + used as u32);
    }
    let (ext, r) = if used == 0 {
        ([0u8; 10], 4)
    } else if v.is_infinite() {
        let mut b = [0xFFu8; 10];
        b[9] = if v < 0.0 { 0xFF } else { 0x7F };
        (b, 2)
    } else if v == 0.0 && u.iter().take(used).any(|&c| (0x31..=0x39).contains(&c)) {
        // Non-zero digits that became zero: underflow.
        let digits_end = u
            .iter()
            .take(used)
            .position(|&c| c == b'e' as u16 || c == b'E' as u16)
            .unwrap_or(used);
        if u[..digits_end].iter().any(|&c| (0x31..=0x39).contains(&c)) {
            (f64_to_ext(v), 1)
        } else {
            (f64_to_ext(v), 0)
        }
    } else {
        (f64_to_ext(v), 0)
    };
    env.mem.poke(out, &ext);
    r
}

fn mbscmp_l(env: &mut Env, a: u32, b: u32) -> i32 {
    if a == 0 || b == 0 {
        set_errno(env, EINVAL);
        return NLSCMPERROR;
    }
    super::string::compare(env, a, b, None, false, false)
}

fn memicmp_l(env: &mut Env, a: u32, b: u32, n: u32) -> i32 {
    if n == 0 {
        return 0;
    }
    if a == 0 || b == 0 {
        set_errno(env, EINVAL);
        return NLSCMPERROR;
    }
    let x: Vec<u16> = env
        .read_bytes(a, n)
        .unwrap_or_default()
        .into_iter()
        .map(u16::from)
        .collect();
    let y: Vec<u16> = env
        .read_bytes(b, n)
        .unwrap_or_default()
        .into_iter()
        .map(u16::from)
        .collect();
    super::string::cmp_units(&x, &y, true)
}

crate::dll! { "(crt checked strings)";
    cdecl fn _strupr_s(env, s: u32, n: u32) -> i32 { case_s(env, s, n, false, true) }
    cdecl fn _strlwr_s(env, s: u32, n: u32) -> i32 { case_s(env, s, n, false, false) }
    cdecl fn _wcsupr_s(env, s: u32, n: u32) -> i32 { case_s(env, s, n, true, true) }
    cdecl fn _wcslwr_s(env, s: u32, n: u32) -> i32 { case_s(env, s, n, true, false) }
    cdecl fn _mbsupr_s(env, s: u32, n: u32) -> i32 { if s == 0 && n == 0 { 0 } else { case_s(env, s, n, false, true) } }
    cdecl fn _mbslwr_s(env, s: u32, n: u32) -> i32 { if s == 0 && n == 0 { 0 } else { case_s(env, s, n, false, false) } }
    cdecl fn _strnset_s(env, s: u32, size: u32, c: u32, n: u32) -> i32 { set_s(env, s, size, c, n, false) }
    cdecl fn _wcsnset_s(env, s: u32, size: u32, c: u32, n: u32) -> i32 { set_s(env, s, size, c, n, true) }
    cdecl fn _wcsset_s(env, s: u32, size: u32, c: u32) -> i32 { set_s(env, s, size, c, u32::MAX, true) }
    cdecl fn _mbscat_s(env, d: u32, size: u32, s: u32) -> i32 { cat_s(env, d, size, s, u32::MAX) }
    cdecl fn _mbsnbcat_s(env, d: u32, size: u32, s: u32, n: u32) -> i32 { cat_s(env, d, size, s, n) }
    cdecl fn _mbscpy_s(env, d: u32, size: u32, s: u32) -> i32 {
        let e = super::string::copy_s(env, d, size, s, None, false, false);
        if e != 0 { set_errno(env, e); }
        e
    }
    cdecl fn _mbsnbcpy_s(env, d: u32, size: u32, s: u32, n: u32) -> i32 {
        let e = super::string::copy_s(env, d, size, s, Some(n), false, false);
        if e != 0 && e != STRUNCATE { set_errno(env, e); }
        e
    }
    cdecl fn _mbccpy_s(env, d: u32, size: u32, copied: u32, s: u32) -> i32 {
        if copied != 0 { env.mem.poke_u32(copied, 0); }
        if d == 0 || size == 0 { return fail(env, EINVAL); }
        if s == 0 { put_unit(env, d, 0, false); return fail(env, EINVAL); }
        let b = env.read_bytes(s, 1).unwrap_or_default();
        env.mem.poke(d, &b);
        if copied != 0 { env.mem.poke_u32(copied, 1); }
        0
    }
    cdecl fn _mbscmp_l(env, a: u32, b: u32, loc: u32) -> i32 { mbscmp_l(env, a, b) }
    cdecl fn _mbsnextc_l(env, s: u32, loc: u32) -> u32 { env.read_bytes(s, 1).and_then(|b| b.first().copied()).unwrap_or(0) as u32 }
    cdecl fn _mbsnlen(env, s: u32, n: u32) -> u32 { units_n(env, s, n, false).len() as u32 }
    cdecl fn __strncnt(env, s: u32, n: u32) -> u32 { units_n(env, s, n, false).len() as u32 }
    cdecl fn _memicmp_l(env, a: u32, b: u32, n: u32, loc: u32) -> i32 { memicmp_l(env, a, b, n) }
    cdecl fn _towlower_l(env, c: u32, loc: u32) -> u32 { super::string::c_lower(c) }
    cdecl fn _towupper_l(env, c: u32, loc: u32) -> u32 { super::string::c_upper(c) }
    cdecl fn _strtod_l(env, s: u32, end: u32, loc: u32) -> Ret { Ret::Float(super::misc::strtod(env, s, end, false)) }
    cdecl fn _wcstod_l(env, s: u32, end: u32, loc: u32) -> Ret { Ret::Float(super::misc::strtod(env, s, end, true)) }
    cdecl fn _atof_l(env, s: u32, loc: u32) -> Ret { Ret::Float(super::misc::strtod(env, s, 0, false)) }
    cdecl fn _atodbl_l(env, out: u32, s: u32, loc: u32) -> i32 {
        let v = super::misc::strtod(env, s, 0, false);
        env.mem.poke(out, &v.to_le_bytes());
        // _OVERFLOW 3, _UNDERFLOW 4, as _atodbl documents.
        if v.is_infinite() { 3 } else { 0 }
    }
    cdecl fn _gcvt_s(env, buf: u32, size: u32, lo: u32, hi: u32, digits: i32) -> i32 { gcvt_s(env, buf, size, super::math::dbl(lo, hi), digits) }
    cdecl fn __STRINGTOLD(env, out: u32, end: u32, s: u32, flags: u32) -> i32 { stringtold(env, out, end, s) }
    cdecl fn __STRINGTOLD_L(env, out: u32, end: u32, s: u32, flags: u32, loc: u32) -> i32 { stringtold(env, out, end, s) }
    cdecl fn _gcvt(env, lo: u32, hi: u32, digits: i32, buf: u32) -> u32 {
        if digits < 0 { set_errno(env, ERANGE); return 0; }
        if buf == 0 { set_errno(env, EINVAL); return 0; }
        let mut b = crate::dll::printf::format_g(super::math::dbl(lo, hi), digits as usize);
        b.push(0);
        env.mem.poke(buf, &b);
        buf
    }
    cdecl fn mbstowcs_s(env, ret: u32, d: u32, size: u32, s: u32, n: u32) -> i32 { mbstowcs_s(env, ret, d, size, s, n) }
    cdecl fn _mbstowcs_s_l(env, ret: u32, d: u32, size: u32, s: u32, n: u32, loc: u32) -> i32 { mbstowcs_s(env, ret, d, size, s, n) }
    cdecl fn wcstombs_s(env, ret: u32, d: u32, size: u32, s: u32, n: u32) -> i32 { wcstombs_s(env, ret, d, size, s, n) }
    cdecl fn _wcstombs_s_l(env, ret: u32, d: u32, size: u32, s: u32, n: u32, loc: u32) -> i32 { wcstombs_s(env, ret, d, size, s, n) }
    cdecl fn _mbstowcs_l(env, d: u32, s: u32, n: u32, loc: u32) -> u32 { super::string::mbstowcs(env, d, s, n) }
    cdecl fn _wcstombs_l(env, d: u32, s: u32, n: u32, loc: u32) -> u32 { super::string::wcstombs(env, d, s, n) }
    cdecl fn mbsrtowcs(env, d: u32, ps: u32, n: u32, state: u32) -> u32 { srtos(env, d, ps, n, state, true) }
    cdecl fn wcsrtombs(env, d: u32, ps: u32, n: u32, state: u32) -> u32 { srtos(env, d, ps, n, state, false) }
    cdecl fn mbsrtowcs_s(env, ret: u32, d: u32, size: u32, ps: u32, n: u32, state: u32) -> i32 { mbsrtowcs_s(env, ret, d, size, ps, n, state) }
    cdecl fn mbrlen(env, s: u32, n: u32, state: u32) -> u32 {
        if state != 0 { env.mem.poke_u32(state, 0); }
        if s == 0 { return 0; }
        // (size_t)-2: an incomplete character (no byte to look at).
        if n == 0 { return u32::MAX - 1; }
        (env.read_bytes(s, 1).unwrap_or_default().first().copied().unwrap_or(0) != 0) as u32
    }
    cdecl fn mbrtowc(env, d: u32, s: u32, n: u32, state: u32) -> u32 {
        if state != 0 { env.mem.poke_u32(state, 0); }
        if s == 0 { return 0; }
        if n == 0 { return u32::MAX - 1; }
        let c = env.read_bytes(s, 1).unwrap_or_default().first().copied().unwrap_or(0);
        if d != 0 { env.mem.poke(d, &(c as u16).to_le_bytes()); }
        (c != 0) as u32
    }
    cdecl fn wcrtomb(env, d: u32, c: u32, state: u32) -> u32 {
        if state != 0 { env.mem.poke_u32(state, 0); }
        if d == 0 { return 1; }
        if c as u16 > 0xFF { set_errno(env, EILSEQ); return u32::MAX; }
        env.mem.poke(d, &[c as u8]);
        1
    }
    cdecl fn wcrtomb_s(env, ret: u32, d: u32, size: u32, c: u32, state: u32) -> i32 { wcrtomb_s(env, ret, d, size, c, state) }
}

#[cfg(test)]
mod tests {
    use super::f64_to_ext;

    #[test]
    fn extended_from_double() {
        assert_eq!(f64_to_ext(1.0), [0, 0, 0, 0, 0, 0, 0, 0x80, 0xFF, 0x3F]);
        assert_eq!(f64_to_ext(-0.0), [0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80]);
        assert_eq!(f64_to_ext(-2.5), [0, 0, 0, 0, 0, 0, 0, 0xA0, 0x00, 0xC0]);
        // The smallest subnormal double, 2^-1074, is a normal extended number.
        assert_eq!(
            f64_to_ext(f64::from_bits(1)),
            [0, 0, 0, 0, 0, 0, 0, 0x80, 0xCD, 0x3B]
        );
    }
}
