//! The C runtime's string, memory, character-class and conversion calls,
//! narrow and wide from one body each (a `wide` flag picks the unit), and
//! the single-byte `_mbs*` forms (mainemu's code page has no lead bytes, so
//! they are the byte-string calls). Shared by msvcrt and ucrtbase.
//!
//! Owns C semantics over guest memory (the C locale: ASCII classes,
//! Latin-1 for the rest). It must not do I/O.

use crate::dll::Env;

/// Reads a NUL-terminated string as units (bytes widened, or UTF-16).
pub fn units(env: &Env, p: u32, wide: bool) -> Vec<u16> {
    if wide {
        env.mem.peek_wstr(p, 1 << 23).unwrap_or_default()
    } else {
        env.mem
            .peek_cstr(p, 1 << 24)
            .unwrap_or_default()
            .into_iter()
            .map(u16::from)
            .collect()
    }
}

/// Reads at most `n` units (stopping at a NUL).
pub fn units_n(env: &Env, p: u32, n: u32, wide: bool) -> Vec<u16> {
    if wide {
        env.mem.peek_wstr(p, n as usize).unwrap_or_default()
    } else {
        env.mem
            .peek_cstr(p, n as usize)
            .unwrap_or_default()
            .into_iter()
            .map(u16::from)
            .collect()
    }
}

/// Writes units (and a NUL when `nul`).
pub fn put_units(env: &mut Env, p: u32, u: &[u16], nul: bool, wide: bool) {
    let mut b = Vec::with_capacity(u.len() * 2 + 2);
    for &x in u {
        if wide {
            b.extend(x.to_le_bytes());
        } else {
            b.push(x as u8);
        }
    }
    if nul {
        b.extend(if wide { &[0u8, 0][..] } else { &[0u8][..] });
    }
    env.mem.poke(p, &b);
}

fn unit(wide: bool) -> u32 {
    if wide {
        2
    } else {
        1
    }
}

fn sign(o: std::cmp::Ordering) -> i32 {
    o as i32
}

pub fn lower(c: u16) -> u16 {
    match c {
        0x41..=0x5A => c + 32,
        0xC0..=0xDE if c != 0xD7 => c + 32,
        _ if c > 0xFF => char::from_u32(c as u32)
            .and_then(|ch| ch.to_lowercase().next())
            .map_or(c, |l| if (l as u32) < 0x10000 { l as u16 } else { c }),
        _ => c,
    }
}

pub fn upper(c: u16) -> u16 {
    match c {
        0x61..=0x7A => c - 32,
        0xE0..=0xFE if c != 0xF7 => c - 32,
        _ if c > 0xFF => char::from_u32(c as u32)
            .and_then(|ch| ch.to_uppercase().next())
            .map_or(c, |u| if (u as u32) < 0x10000 { u as u16 } else { c }),
        _ => c,
    }
}

pub fn cmp_units(a: &[u16], b: &[u16], fold: bool) -> i32 {
    let f = |c: u16| if fold { lower(c) } else { c };
    for (x, y) in a.iter().zip(b.iter()) {
        let (x, y) = (f(*x), f(*y));
        if x != y {
            return if x < y { -1 } else { 1 };
        }
    }
    sign(a.len().cmp(&b.len()))
}

/// strcmp/wcscmp and the case-folding and counted forms.
pub fn compare(env: &Env, a: u32, b: u32, n: Option<u32>, fold: bool, wide: bool) -> i32 {
    let (x, y) = match n {
        Some(n) => (units_n(env, a, n, wide), units_n(env, b, n, wide)),
        None => (units(env, a, wide), units(env, b, wide)),
    };
    cmp_units(&x, &y, fold)
}

fn strcpy(env: &mut Env, d: u32, s: u32, wide: bool) -> u32 {
    let u = units(env, s, wide);
    put_units(env, d, &u, true, wide);
    d
}

fn strncpy(env: &mut Env, d: u32, s: u32, n: u32, wide: bool) -> u32 {
    let mut u = units_n(env, s, n, wide);
    u.resize(n as usize, 0);
    put_units(env, d, &u, false, wide);
    d
}

fn strcat(env: &mut Env, d: u32, s: u32, n: Option<u32>, wide: bool) -> u32 {
    let dl = units(env, d, wide).len() as u32;
    let u = match n {
        Some(n) => units_n(env, s, n, wide),
        None => units(env, s, wide),
    };
    put_units(env, d + dl * unit(wide), &u, true, wide);
    d
}

/// strchr (first) and strrchr (`last`): a NUL finds the terminator.
fn find_char(env: &Env, s: u32, c: u32, wide: bool, last: bool) -> u32 {
    let u = units(env, s, wide);
    let c = if wide { c as u16 } else { c as u8 as u16 };
    if c == 0 {
        return s + u.len() as u32 * unit(wide);
    }
    let at = if last {
        u.iter().rposition(|&x| x == c)
    } else {
        u.iter().position(|&x| x == c)
    };
    at.map_or(0, |i| s + i as u32 * unit(wide))
}

fn strchr(env: &Env, s: u32, c: u32, wide: bool) -> u32 {
    find_char(env, s, c, wide, false)
}

fn strrchr(env: &Env, s: u32, c: u32, wide: bool) -> u32 {
    find_char(env, s, c, wide, true)
}

fn strstr(env: &Env, h: u32, n: u32, wide: bool) -> u32 {
    let hu = units(env, h, wide);
    let nu = units(env, n, wide);
    if nu.is_empty() {
        return h;
    }
    hu.windows(nu.len())
        .position(|w| w == nu.as_slice())
        .map_or(0, |i| h + i as u32 * unit(wide))
}

fn span(env: &Env, s: u32, set: u32, inside: bool, wide: bool) -> u32 {
    let u = units(env, s, wide);
    let set = units(env, set, wide);
    u.iter().take_while(|c| set.contains(c) == inside).count() as u32
}

fn strpbrk(env: &Env, s: u32, set: u32, wide: bool) -> u32 {
    let n = span(env, s, set, false, wide);
    let len = units(env, s, wide).len() as u32;
    if n < len {
        s + n * unit(wide)
    } else {
        0
    }
}

/// strtok/wcstok with the position kept in `state` (per process).
fn strtok(env: &mut Env, s: u32, delim: u32, wide: bool, state: Option<u32>) -> u32 {
    let start = if s != 0 {
        s
    } else {
        match state {
            Some(p) => env.mem.peek_u32(p).unwrap_or(0),
            None if wide => env.crt.wcstok_next,
            None => env.crt.strtok_next,
        }
    };
    let save = |env: &mut Env, v: u32| match state {
        Some(p) => {
            env.mem.poke_u32(p, v);
        }
        None if wide => env.crt.wcstok_next = v,
        None => env.crt.strtok_next = v,
    };
    if start == 0 {
        return 0;
    }
    let set = units(env, delim, wide);
    let u = units(env, start, wide);
    let skip = u.iter().take_while(|c| set.contains(c)).count();
    if skip == u.len() {
        save(env, 0);
        return 0;
    }
    let tok = start + skip as u32 * unit(wide);
    let len = u[skip..].iter().take_while(|c| !set.contains(c)).count();
    let end = skip + len;
    if end < u.len() {
        let at = start + end as u32 * unit(wide);
        put_units(env, at, &[], true, wide);
        save(env, at + unit(wide));
    } else {
        save(env, 0);
    }
    tok
}

fn strdup(env: &mut Env, s: u32, wide: bool) -> u32 {
    if s == 0 {
        return 0;
    }
    let u = units(env, s, wide);
    let a = env.alloc((u.len() as u32 + 1) * unit(wide));
    if a != 0 {
        put_units(env, a, &u, true, wide);
    }
    a
}

pub fn map_in_place(env: &mut Env, s: u32, wide: bool, f: impl Fn(u16) -> u16) -> u32 {
    let u: Vec<u16> = units(env, s, wide).into_iter().map(f).collect();
    put_units(env, s, &u, false, wide);
    s
}

fn strrev(env: &mut Env, s: u32, wide: bool) -> u32 {
    let mut u = units(env, s, wide);
    u.reverse();
    put_units(env, s, &u, false, wide);
    s
}

fn memcmp(env: &Env, a: u32, b: u32, n: u32) -> i32 {
    let (x, y) = (
        env.read_bytes(a, n).unwrap_or_default(),
        env.read_bytes(b, n).unwrap_or_default(),
    );
    sign(x.cmp(&y))
}

fn memchr(env: &Env, s: u32, c: u32, n: u32) -> u32 {
    let b = env.read_bytes(s, n).unwrap_or_default();
    b.iter()
        .position(|&x| x == c as u8)
        .map_or(0, |i| s + i as u32)
}

pub fn memcpy(env: &mut Env, d: u32, s: u32, n: u32) -> u32 {
    if let Some(b) = env.read_bytes(s, n) {
        env.mem.poke(d, &b);
    }
    d
}

pub fn memset(env: &mut Env, d: u32, c: u32, n: u32) -> u32 {
    env.mem.poke(d, &vec![c as u8; n as usize]);
    d
}

/// Character classes of the C locale: the `_pctype` bits (UPPER 1, LOWER 2,
/// DIGIT 4, SPACE 8, PUNCT 0x10, CONTROL 0x20, BLANK 0x40, HEX 0x80, ALPHA 0x100).
pub fn ctype(c: u32) -> u16 {
    let c = c as u16;
    let mut m = 0;
    match c {
        0x41..=0x5A => m |= 0x1 | 0x100,
        0x61..=0x7A => m |= 0x2 | 0x100,
        0x30..=0x39 => m |= 0x4,
        _ => {}
    }
    if matches!(c, 0x41..=0x46 | 0x61..=0x66 | 0x30..=0x39) {
        m |= 0x80;
    }
    if matches!(c, 0x09..=0x0D | 0x20) {
        m |= 0x8;
    }
    if c == 0x20 || c == 0x09 {
        m |= 0x40;
    }
    if c < 0x20 || c == 0x7F {
        m |= 0x20;
    }
    if (0x21..=0x7E).contains(&c) && m & (0x1 | 0x2 | 0x4) == 0 {
        m |= 0x10;
    }
    if c > 0xFF {
        if let Some(ch) = char::from_u32(c as u32) {
            if ch.is_uppercase() {
                m |= 0x1 | 0x100;
            } else if ch.is_lowercase() {
                m |= 0x2 | 0x100;
            } else if ch.is_alphabetic() {
                m |= 0x100;
            } else if ch.is_numeric() {
                m |= 0x4;
            } else if ch.is_whitespace() {
                m |= 0x8;
            } else if !ch.is_control() {
                m |= 0x10;
            }
        }
    }
    m
}

/// The 257-entry `_pctype` table (index -1 = EOF) in guest memory.
pub fn pctype_table(env: &mut Env) -> u32 {
    if let Some(&a) = env.data.get("crt!(pctype)") {
        return a + 2;
    }
    let a = env.alloc(2 * 257);
    let mut b = vec![0u8; 2];
    for c in 0..256u32 {
        b.extend(if c < 128 { ctype(c) } else { 0 }.to_le_bytes());
    }
    env.mem.poke(a, &b);
    env.data.insert("crt!(pctype)".into(), a);
    a + 2
}

/// mbstowcs: Latin-1 bytes to UTF-16 (count without NUL, or -1).
pub fn mbstowcs(env: &mut Env, d: u32, s: u32, n: u32) -> u32 {
    let u = units(env, s, false);
    if d == 0 {
        return u.len() as u32;
    }
    let k = u.len().min(n as usize);
    put_units(env, d, &u[..k], k < n as usize, true);
    k as u32
}

pub fn wcstombs(env: &mut Env, d: u32, s: u32, n: u32) -> u32 {
    let u = units(env, s, true);
    if u.iter().any(|&c| c > 0xFF) {
        super::fd::set_errno(env, super::fd::errno::EILSEQ);
        return u32::MAX;
    }
    if d == 0 {
        return u.len() as u32;
    }
    let k = u.len().min(n as usize);
    put_units(env, d, &u[..k], k < n as usize, false);
    k as u32
}

/// A double-byte character of `cp`: a lead byte then a trail byte.
fn mbc_legal(cp: i32, c: u32) -> bool {
    let (hi, lo) = ((c >> 8) as u8, c as u8);
    c < 0x1_0000 && super::misc::mbctype(cp, hi) & 4 != 0 && super::misc::mbctype(cp, lo) & 8 != 0
}

/// JIS X 0208 (row and cell 0x21-0x7E each) to Shift-JIS; 0 when `c` is
/// no JIS character.
fn jis_to_sjis(c: u32) -> u32 {
    let (hi, lo) = (c >> 8, c & 0xFF);
    if c > 0xFFFF || !(0x21..=0x7E).contains(&hi) || !(0x21..=0x7E).contains(&lo) {
        return 0;
    }
    // Odd rows take cells 0x40-0x9E, even rows 0x9F-0xFC (0x7F skipped).
    let mut lo = if hi % 2 == 1 { lo + 0x1F } else { lo + 0x7D };
    if lo >= 0x7F {
        lo += 1;
    }
    let lead = (hi - 0x21) / 2 + 0x81;
    let lead = if lead > 0x9F { lead + 0x40 } else { lead };
    lead << 8 | lo
}

/// Shift-JIS to JIS X 0208; 0 when `c` is no double-byte character of 932.
fn sjis_to_jis(c: u32) -> u32 {
    if !mbc_legal(932, c) || (c >> 8) >= 0xF0 {
        return 0;
    }
    let c = if (c >> 8) >= 0xE0 { c - 0x4000 } else { c };
    let mut c = (((c >> 8) - 0x81) * 2 + 0x21) << 8 | (c & 0xFF);
    if c & 0xFF > 0x7F {
        c -= 1;
    }
    if c & 0xFF > 0x9D {
        c + 0x83
    } else {
        c - 0x1F
    }
}

/// towlower in the C locale: ASCII letters only.
pub fn c_lower(c: u32) -> u32 {
    let c = c & 0xFFFF;
    if (0x41..=0x5A).contains(&c) {
        c + 32
    } else {
        c
    }
}

/// towupper in the C locale: ASCII letters only.
pub fn c_upper(c: u32) -> u32 {
    let c = c & 0xFFFF;
    if (0x61..=0x7A).contains(&c) {
        c - 32
    } else {
        c
    }
}

fn isprint_c(c: u32) -> bool {
    is(c, 0x117) != 0 || c == 0x20
}

fn is(c: u32, mask: u16) -> i32 {
    if c > 0xFFFF {
        return 0;
    }
    (ctype(c) & mask) as i32
}

/// strcpy_s and friends: 0, or EINVAL/ERANGE with the destination emptied.
pub fn copy_s(
    env: &mut Env,
    d: u32,
    cap: u32,
    s: u32,
    n: Option<u32>,
    append: bool,
    wide: bool,
) -> i32 {
    use super::fd::errno::{EINVAL, ERANGE};
    if d == 0 || cap == 0 {
        return EINVAL;
    }
    if s == 0 {
        put_units(env, d, &[], true, wide);
        return EINVAL;
    }
    let base = if append {
        units_n(env, d, cap, wide).len() as u32
    } else {
        0
    };
    if base >= cap {
        put_units(env, d, &[], true, wide);
        return EINVAL;
    }
    let mut src = units(env, s, wide);
    let truncate = n == Some(u32::MAX);
    if let Some(n) = n.filter(|&n| n != u32::MAX) {
        src.truncate(n as usize);
    }
    if base + src.len() as u32 >= cap {
        if truncate {
            src.truncate((cap - base - 1) as usize);
            put_units(env, d + base * unit(wide), &src, true, wide);
            return 80; // STRUNCATE
        }
        put_units(env, d, &[], true, wide);
        return ERANGE;
    }
    put_units(env, d + base * unit(wide), &src, true, wide);
    0
}

crate::dll! { "(crt string)";
    cdecl fn strlen(env, s: u32) -> u32 { units(env, s, false).len() as u32 }
    cdecl fn wcslen(env, s: u32) -> u32 { units(env, s, true).len() as u32 }
    cdecl fn strnlen(env, s: u32, n: u32) -> u32 { units_n(env, s, n, false).len() as u32 }
    cdecl fn wcsnlen(env, s: u32, n: u32) -> u32 { units_n(env, s, n, true).len() as u32 }
    cdecl fn strcpy(env, d: u32, s: u32) -> u32 { strcpy(env, d, s, false) }
    cdecl fn wcscpy(env, d: u32, s: u32) -> u32 { strcpy(env, d, s, true) }
    cdecl fn strncpy(env, d: u32, s: u32, n: u32) -> u32 { strncpy(env, d, s, n, false) }
    cdecl fn wcsncpy(env, d: u32, s: u32, n: u32) -> u32 { strncpy(env, d, s, n, true) }
    cdecl fn strcat(env, d: u32, s: u32) -> u32 { strcat(env, d, s, None, false) }
    cdecl fn wcscat(env, d: u32, s: u32) -> u32 { strcat(env, d, s, None, true) }
    cdecl fn strncat(env, d: u32, s: u32, n: u32) -> u32 { strcat(env, d, s, Some(n), false) }
    cdecl fn wcsncat(env, d: u32, s: u32, n: u32) -> u32 { strcat(env, d, s, Some(n), true) }
    cdecl fn strcpy_s(env, d: u32, cap: u32, s: u32) -> i32 { copy_s(env, d, cap, s, None, false, false) }
    cdecl fn wcscpy_s(env, d: u32, cap: u32, s: u32) -> i32 { copy_s(env, d, cap, s, None, false, true) }
    cdecl fn strcat_s(env, d: u32, cap: u32, s: u32) -> i32 { copy_s(env, d, cap, s, None, true, false) }
    cdecl fn wcscat_s(env, d: u32, cap: u32, s: u32) -> i32 { copy_s(env, d, cap, s, None, true, true) }
    cdecl fn strncpy_s(env, d: u32, cap: u32, s: u32, n: u32) -> i32 { copy_s(env, d, cap, s, Some(n), false, false) }
    cdecl fn wcsncpy_s(env, d: u32, cap: u32, s: u32, n: u32) -> i32 { copy_s(env, d, cap, s, Some(n), false, true) }
    cdecl fn strncat_s(env, d: u32, cap: u32, s: u32, n: u32) -> i32 { copy_s(env, d, cap, s, Some(n), true, false) }
    cdecl fn wcsncat_s(env, d: u32, cap: u32, s: u32, n: u32) -> i32 { copy_s(env, d, cap, s, Some(n), true, true) }
    cdecl fn strcmp(env, a: u32, b: u32) -> i32 { compare(env, a, b, None, false, false) }
    cdecl fn wcscmp(env, a: u32, b: u32) -> i32 { compare(env, a, b, None, false, true) }
    cdecl fn strncmp(env, a: u32, b: u32, n: u32) -> i32 { compare(env, a, b, Some(n), false, false) }
    cdecl fn wcsncmp(env, a: u32, b: u32, n: u32) -> i32 { compare(env, a, b, Some(n), false, true) }
    cdecl fn _stricmp(env, a: u32, b: u32) -> i32 { compare(env, a, b, None, true, false) }
    cdecl fn _strcmpi(env, a: u32, b: u32) -> i32 { compare(env, a, b, None, true, false) }
    cdecl fn _wcsicmp(env, a: u32, b: u32) -> i32 { compare(env, a, b, None, true, true) }
    cdecl fn _strnicmp(env, a: u32, b: u32, n: u32) -> i32 { compare(env, a, b, Some(n), true, false) }
    cdecl fn _wcsnicmp(env, a: u32, b: u32, n: u32) -> i32 { compare(env, a, b, Some(n), true, true) }
    cdecl fn strcoll(env, a: u32, b: u32) -> i32 { compare(env, a, b, None, false, false) }
    cdecl fn wcscoll(env, a: u32, b: u32) -> i32 { compare(env, a, b, None, false, true) }
    cdecl fn _stricoll(env, a: u32, b: u32) -> i32 { compare(env, a, b, None, true, false) }
    cdecl fn _wcsicoll(env, a: u32, b: u32) -> i32 { compare(env, a, b, None, true, true) }
    cdecl fn _strncoll(env, a: u32, b: u32, n: u32) -> i32 { compare(env, a, b, Some(n), false, false) }
    cdecl fn _wcsncoll(env, a: u32, b: u32, n: u32) -> i32 { compare(env, a, b, Some(n), false, true) }
    cdecl fn _strnicoll(env, a: u32, b: u32, n: u32) -> i32 { compare(env, a, b, Some(n), true, false) }
    cdecl fn _wcsnicoll(env, a: u32, b: u32, n: u32) -> i32 { compare(env, a, b, Some(n), true, true) }
    cdecl fn strxfrm(env, d: u32, s: u32, n: u32) -> u32 {
        let u = units(env, s, false);
        if (u.len() as u32) < n { put_units(env, d, &u, true, false); }
        u.len() as u32
    }
    cdecl fn wcsxfrm(env, d: u32, s: u32, n: u32) -> u32 {
        let u = units(env, s, true);
        if (u.len() as u32) < n { put_units(env, d, &u, true, true); }
        u.len() as u32
    }
    cdecl fn strchr(env, s: u32, c: u32) -> u32 { strchr(env, s, c, false) }
    cdecl fn wcschr(env, s: u32, c: u32) -> u32 { strchr(env, s, c, true) }
    cdecl fn strrchr(env, s: u32, c: u32) -> u32 { strrchr(env, s, c, false) }
    cdecl fn wcsrchr(env, s: u32, c: u32) -> u32 { strrchr(env, s, c, true) }
    cdecl fn strstr(env, h: u32, n: u32) -> u32 { strstr(env, h, n, false) }
    cdecl fn wcsstr(env, h: u32, n: u32) -> u32 { strstr(env, h, n, true) }
    cdecl fn strspn(env, s: u32, set: u32) -> u32 { span(env, s, set, true, false) }
    cdecl fn wcsspn(env, s: u32, set: u32) -> u32 { span(env, s, set, true, true) }
    cdecl fn strcspn(env, s: u32, set: u32) -> u32 { span(env, s, set, false, false) }
    cdecl fn wcscspn(env, s: u32, set: u32) -> u32 { span(env, s, set, false, true) }
    cdecl fn strpbrk(env, s: u32, set: u32) -> u32 { strpbrk(env, s, set, false) }
    cdecl fn wcspbrk(env, s: u32, set: u32) -> u32 { strpbrk(env, s, set, true) }
    cdecl fn strtok(env, s: u32, d: u32) -> u32 { strtok(env, s, d, false, None) }
    cdecl fn wcstok(env, s: u32, d: u32) -> u32 { strtok(env, s, d, true, None) }
    cdecl fn strtok_s(env, s: u32, d: u32, ctx: u32) -> u32 { strtok(env, s, d, false, Some(ctx)) }
    cdecl fn wcstok_s(env, s: u32, d: u32, ctx: u32) -> u32 { strtok(env, s, d, true, Some(ctx)) }
    cdecl fn _strdup(env, s: u32) -> u32 { strdup(env, s, false) }
    cdecl fn _wcsdup(env, s: u32) -> u32 { strdup(env, s, true) }
    cdecl fn _strrev(env, s: u32) -> u32 { strrev(env, s, false) }
    cdecl fn _wcsrev(env, s: u32) -> u32 { strrev(env, s, true) }
    cdecl fn _strupr(env, s: u32) -> u32 { map_in_place(env, s, false, |c| if c < 0x80 { upper(c) } else { c }) }
    cdecl fn _wcsupr(env, s: u32) -> u32 { map_in_place(env, s, true, upper) }
    cdecl fn _strlwr(env, s: u32) -> u32 { map_in_place(env, s, false, |c| if c < 0x80 { lower(c) } else { c }) }
    cdecl fn _wcslwr(env, s: u32) -> u32 { map_in_place(env, s, true, lower) }
    cdecl fn _strset(env, s: u32, c: u32) -> u32 { map_in_place(env, s, false, |_| c as u8 as u16) }
    cdecl fn _wcsset(env, s: u32, c: u32) -> u32 { map_in_place(env, s, true, |_| c as u16) }
    cdecl fn _strnset(env, s: u32, c: u32, n: u32) -> u32 {
        let u: Vec<u16> = units(env, s, false).iter().enumerate().map(|(i, &x)| if (i as u32) < n { c as u8 as u16 } else { x }).collect();
        put_units(env, s, &u, false, false); s
    }
    cdecl fn _wcsnset(env, s: u32, c: u32, n: u32) -> u32 {
        let u: Vec<u16> = units(env, s, true).iter().enumerate().map(|(i, &x)| if (i as u32) < n { c as u16 } else { x }).collect();
        put_units(env, s, &u, false, true); s
    }
    cdecl fn memcmp(env, a: u32, b: u32, n: u32) -> i32 { memcmp(env, a, b, n) }
    cdecl fn _memicmp(env, a: u32, b: u32, n: u32) -> i32 {
        let (x, y) = (env.read_bytes(a, n).unwrap_or_default(), env.read_bytes(b, n).unwrap_or_default());
        let xu: Vec<u16> = x.iter().map(|&c| c as u16).collect();
        let yu: Vec<u16> = y.iter().map(|&c| c as u16).collect();
        cmp_units(&xu, &yu, true)
    }
    cdecl fn memchr(env, s: u32, c: u32, n: u32) -> u32 { memchr(env, s, c, n) }
    cdecl fn memcpy(env, d: u32, s: u32, n: u32) -> u32 { memcpy(env, d, s, n) }
    cdecl fn memmove(env, d: u32, s: u32, n: u32) -> u32 { memcpy(env, d, s, n) }
    cdecl fn memset(env, d: u32, c: u32, n: u32) -> u32 { memset(env, d, c, n) }
    cdecl fn memcpy_s(env, d: u32, cap: u32, s: u32, n: u32) -> i32 {
        if n == 0 { return 0; }
        if d == 0 || s == 0 || cap < n { if d != 0 { memset(env, d, 0, cap); } return if cap < n { 34 } else { 22 }; }
        memcpy(env, d, s, n); 0
    }
    cdecl fn memmove_s(env, d: u32, cap: u32, s: u32, n: u32) -> i32 {
        if n == 0 { return 0; }
        if d == 0 || s == 0 || cap < n { return if cap < n { 34 } else { 22 }; }
        memcpy(env, d, s, n); 0
    }
    cdecl fn _memccpy(env, d: u32, s: u32, c: u32, n: u32) -> u32 {
        let b = env.read_bytes(s, n).unwrap_or_default();
        match b.iter().position(|&x| x == c as u8) {
            Some(i) => { env.mem.poke(d, &b[..=i]); d + i as u32 + 1 }
            None => { env.mem.poke(d, &b); 0 }
        }
    }
    cdecl fn wmemcpy(env, d: u32, s: u32, n: u32) -> u32 { memcpy(env, d, s, 2 * n) }
    cdecl fn wmemmove(env, d: u32, s: u32, n: u32) -> u32 { memcpy(env, d, s, 2 * n) }
    cdecl fn wmemset(env, d: u32, c: u32, n: u32) -> u32 { let w = vec![c as u16; n as usize]; put_units(env, d, &w, false, true); d }
    cdecl fn wmemcmp(env, a: u32, b: u32, n: u32) -> i32 {
        let (x, y) = (env.read_bytes(a, 2 * n).unwrap_or_default(), env.read_bytes(b, 2 * n).unwrap_or_default());
        let xu: Vec<u16> = x.chunks(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
        let yu: Vec<u16> = y.chunks(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
        sign(xu.cmp(&yu))
    }
    cdecl fn wmemchr(env, s: u32, c: u32, n: u32) -> u32 {
        let x = env.read_bytes(s, 2 * n).unwrap_or_default();
        x.chunks(2).position(|p| u16::from_le_bytes([p[0], p[1]]) == c as u16).map_or(0, |i| s + 2 * i as u32)
    }
    cdecl fn isalpha(env, c: u32) -> i32 { is(c, 0x103) & 0x103 }
    cdecl fn isupper(env, c: u32) -> i32 { is(c, 0x1) }
    cdecl fn islower(env, c: u32) -> i32 { is(c, 0x2) }
    cdecl fn isdigit(env, c: u32) -> i32 { is(c, 0x4) }
    cdecl fn isxdigit(env, c: u32) -> i32 { is(c, 0x80) }
    cdecl fn isspace(env, c: u32) -> i32 { is(c, 0x8) }
    cdecl fn ispunct(env, c: u32) -> i32 { is(c, 0x10) }
    cdecl fn isalnum(env, c: u32) -> i32 { is(c, 0x107) }
    cdecl fn isprint(env, c: u32) -> i32 { is(c, 0x117) | ((c == 0x20) as i32 * 0x40) }
    cdecl fn isgraph(env, c: u32) -> i32 { is(c, 0x117) }
    cdecl fn iscntrl(env, c: u32) -> i32 { is(c, 0x20) }
    cdecl fn isblank(env, c: u32) -> i32 { is(c, 0x40) }
    cdecl fn __isascii(env, c: u32) -> i32 { (c < 0x80) as i32 }
    cdecl fn __toascii(env, c: u32) -> i32 { (c & 0x7F) as i32 }
    cdecl fn __iscsym(env, c: u32) -> i32 { (is(c, 0x107) != 0 || c == b'_' as u32) as i32 }
    cdecl fn __iscsymf(env, c: u32) -> i32 { (is(c, 0x103) != 0 || c == b'_' as u32) as i32 }
    cdecl fn _isctype(env, c: u32, mask: u32) -> i32 { is(c, mask as u16) }
    cdecl fn iswalpha(env, c: u32) -> i32 { is(c, 0x103) }
    cdecl fn iswupper(env, c: u32) -> i32 { is(c, 0x1) }
    cdecl fn iswlower(env, c: u32) -> i32 { is(c, 0x2) }
    cdecl fn iswdigit(env, c: u32) -> i32 { is(c, 0x4) }
    cdecl fn iswxdigit(env, c: u32) -> i32 { is(c, 0x80) }
    cdecl fn iswspace(env, c: u32) -> i32 { is(c, 0x8) }
    cdecl fn iswpunct(env, c: u32) -> i32 { is(c, 0x10) }
    cdecl fn iswalnum(env, c: u32) -> i32 { is(c, 0x107) }
    cdecl fn iswprint(env, c: u32) -> i32 { is(c, 0x117) | ((c == 0x20) as i32 * 0x40) }
    cdecl fn iswgraph(env, c: u32) -> i32 { is(c, 0x117) }
    cdecl fn iswcntrl(env, c: u32) -> i32 { is(c, 0x20) }
    cdecl fn iswascii(env, c: u32) -> i32 { (c < 0x80) as i32 }
    cdecl fn iswctype(env, c: u32, mask: u32) -> i32 { is(c, mask as u16) }
    cdecl fn is_wctype(env, c: u32, mask: u32) -> i32 { is(c, mask as u16) }
    cdecl fn tolower(env, c: i32) -> i32 { if (0..0x80).contains(&c) { lower(c as u16) as i32 } else { c } }
    cdecl fn toupper(env, c: i32) -> i32 { if (0..0x80).contains(&c) { upper(c as u16) as i32 } else { c } }
    cdecl fn _tolower(env, c: i32) -> i32 { c + 32 }
    cdecl fn _toupper(env, c: i32) -> i32 { c - 32 }
    // The C locale maps only A-Z and a-z (Latin-1 letters stay as they are).
    cdecl fn towlower(env, c: u32) -> u32 { c_lower(c) }
    cdecl fn towupper(env, c: u32) -> u32 { c_upper(c) }
    cdecl fn __pctype_func(env) -> u32 { pctype_table(env) }
    cdecl fn __p__pctype(env) -> u32 {
        let t = pctype_table(env);
        if let Some(&p) = env.data.get("crt!(pctype ptr)") { return p; }
        let p = env.alloc(4); env.mem.poke_u32(p, t); env.data.insert("crt!(pctype ptr)".into(), p); p
    }
    cdecl fn ___mb_cur_max_func(env) -> i32 { 1 }
    cdecl fn __p___mb_cur_max(env) -> u32 {
        if let Some(&p) = env.data.get("crt!(mb_cur_max)") { return p; }
        let p = env.alloc(4); env.mem.poke_u32(p, 1); env.data.insert("crt!(mb_cur_max)".into(), p); p
    }
    cdecl fn mbstowcs(env, d: u32, s: u32, n: u32) -> u32 { mbstowcs(env, d, s, n) }
    cdecl fn wcstombs(env, d: u32, s: u32, n: u32) -> u32 { wcstombs(env, d, s, n) }
    cdecl fn mbtowc(env, d: u32, s: u32, n: u32) -> i32 {
        if s == 0 { return 0; }
        if n == 0 { return -1; }
        let b = env.read_bytes(s, 1).unwrap_or_default();
        let c = b.first().copied().unwrap_or(0);
        if d != 0 { env.mem.poke(d, &(c as u16).to_le_bytes()); }
        (c != 0) as i32
    }
    cdecl fn wctomb(env, d: u32, c: u32) -> i32 {
        if d == 0 { return 0; }
        if c > 0xFF { super::fd::set_errno(env, super::fd::errno::EILSEQ); return -1; }
        env.mem.poke(d, &[c as u8]); 1
    }
    cdecl fn mblen(env, s: u32, n: u32) -> i32 {
        if s == 0 { return 0; }
        if n == 0 { return -1; }
        (env.read_bytes(s, 1).unwrap_or_default().first().copied().unwrap_or(0) != 0) as i32
    }
    cdecl fn btowc(env, c: i32) -> u32 { if c == -1 { 0xFFFF } else { c as u8 as u32 } }
    cdecl fn wctob(env, c: u32) -> i32 { if c < 0x100 { c as i32 } else { -1 } }
    cdecl fn _mbslen(env, s: u32) -> u32 { units(env, s, false).len() as u32 }
    cdecl fn _mbstrlen(env, s: u32) -> u32 { units(env, s, false).len() as u32 }
    cdecl fn _mbscmp(env, a: u32, b: u32) -> i32 { compare(env, a, b, None, false, false) }
    cdecl fn _mbsicmp(env, a: u32, b: u32) -> i32 { compare(env, a, b, None, true, false) }
    cdecl fn _mbsncmp(env, a: u32, b: u32, n: u32) -> i32 { compare(env, a, b, Some(n), false, false) }
    cdecl fn _mbsnbcmp(env, a: u32, b: u32, n: u32) -> i32 { compare(env, a, b, Some(n), false, false) }
    cdecl fn _mbsnicmp(env, a: u32, b: u32, n: u32) -> i32 { compare(env, a, b, Some(n), true, false) }
    cdecl fn _mbsnbicmp(env, a: u32, b: u32, n: u32) -> i32 { compare(env, a, b, Some(n), true, false) }
    cdecl fn _mbschr(env, s: u32, c: u32) -> u32 { strchr(env, s, c, false) }
    cdecl fn _mbsrchr(env, s: u32, c: u32) -> u32 { strrchr(env, s, c, false) }
    cdecl fn _mbsstr(env, h: u32, n: u32) -> u32 { strstr(env, h, n, false) }
    cdecl fn _mbscpy(env, d: u32, s: u32) -> u32 { strcpy(env, d, s, false) }
    cdecl fn _mbscat(env, d: u32, s: u32) -> u32 { strcat(env, d, s, None, false) }
    cdecl fn _mbsdup(env, s: u32) -> u32 { strdup(env, s, false) }
    cdecl fn _mbsinc(env, s: u32) -> u32 { s + 1 }
    cdecl fn _mbsninc(env, s: u32, n: u32) -> u32 { if s == 0 { 0 } else { s + (units_n(env, s, n, false).len() as u32) } }
    cdecl fn _mbsdec(env, start: u32, s: u32) -> u32 { if s > start { s - 1 } else { 0 } }
    cdecl fn _mbsnextc(env, s: u32) -> u32 { env.read_bytes(s, 1).and_then(|b| b.first().copied()).unwrap_or(0) as u32 }
    cdecl fn _mbclen(env, s: u32) -> u32 { 1 }
    cdecl fn _mbsspn(env, s: u32, set: u32) -> u32 { span(env, s, set, true, false) }
    cdecl fn _mbscspn(env, s: u32, set: u32) -> u32 { span(env, s, set, false, false) }
    cdecl fn _mbsspnp(env, s: u32, set: u32) -> u32 {
        let n = span(env, s, set, true, false);
        if n < units(env, s, false).len() as u32 { s + n } else { 0 }
    }
    cdecl fn _mbspbrk(env, s: u32, set: u32) -> u32 { strpbrk(env, s, set, false) }
    cdecl fn _mbstok(env, s: u32, d: u32) -> u32 { strtok(env, s, d, false, None) }
    cdecl fn _mbsupr(env, s: u32) -> u32 { map_in_place(env, s, false, |c| if c < 0x80 { upper(c) } else { c }) }
    cdecl fn _mbslwr(env, s: u32) -> u32 { map_in_place(env, s, false, |c| if c < 0x80 { lower(c) } else { c }) }
    cdecl fn _mbsrev(env, s: u32) -> u32 { strrev(env, s, false) }
    cdecl fn _mbsncpy(env, d: u32, s: u32, n: u32) -> u32 { strncpy(env, d, s, n, false) }
    cdecl fn _mbsnbcpy(env, d: u32, s: u32, n: u32) -> u32 { strncpy(env, d, s, n, false) }
    cdecl fn _mbsncat(env, d: u32, s: u32, n: u32) -> u32 { strcat(env, d, s, Some(n), false) }
    cdecl fn _mbsnbcat(env, d: u32, s: u32, n: u32) -> u32 { strcat(env, d, s, Some(n), false) }
    cdecl fn _mbccpy(env, d: u32, s: u32) { if let Some(b) = env.read_bytes(s, 1) { env.mem.poke(d, &b); } }
    cdecl fn _mbbtombc(env, c: u32) -> u32 { c }
    cdecl fn _mbctombb(env, c: u32) -> u32 { c }
    cdecl fn _mbsbtype(env, s: u32, n: u32) -> i32 { 0 }
    // _MBC_TRAIL (2) never: the code page has no lead bytes; a byte is
    // _MBC_SINGLE (0) when printable, else _MBC_ILLEGAL (-1).
    cdecl fn _mbbtype(env, c: u32, t: i32) -> i32 { if t != 1 && isprint_c(c & 0xFF) { 0 } else { -1 } }
    // Lead and trail bytes of the code page _setmbcp chose (_M1 4, _M2 8).
    cdecl fn _ismbblead(env, c: u32) -> i32 { (super::misc::mbctype(env.crt.mbcp, c as u8) & 4) as i32 }
    cdecl fn _ismbbtrail(env, c: u32) -> i32 { (super::misc::mbctype(env.crt.mbcp, c as u8) & 8) as i32 }
    cdecl fn _ismbslead(env, s: u32, p: u32) -> i32 { 0 }
    cdecl fn _ismbstrail(env, s: u32, p: u32) -> i32 { 0 }
    cdecl fn _ismbcalpha(env, c: u32) -> i32 { is(c, 0x103) }
    cdecl fn _ismbcdigit(env, c: u32) -> i32 { is(c, 0x4) }
    cdecl fn _ismbcspace(env, c: u32) -> i32 { is(c, 0x8) }
    cdecl fn _ismbclegal(env, c: u32) -> i32 { mbc_legal(env.crt.mbcp, c) as i32 }
    cdecl fn _ismbcl0(env, c: u32) -> i32 { 0 }
    cdecl fn _ismbcl1(env, c: u32) -> i32 { 0 }
    cdecl fn _ismbcl2(env, c: u32) -> i32 { 0 }
    cdecl fn _ismbckata(env, c: u32) -> i32 { 0 }
    cdecl fn _ismbchira(env, c: u32) -> i32 { 0 }
    // JIS and Shift-JIS conversions act only under code page 932 (else c
    // unchanged); hiragana and katakana ones are not modelled: c unchanged.
    cdecl fn _mbcjistojms(env, c: u32) -> u32 { if env.crt.mbcp == 932 { jis_to_sjis(c) } else { c } }
    cdecl fn _mbcjmstojis(env, c: u32) -> u32 { if env.crt.mbcp == 932 { sjis_to_jis(c) } else { c } }
    cdecl fn _mbctohira(env, c: u32) -> u32 { c }
    cdecl fn _mbctokata(env, c: u32) -> u32 { c }
    cdecl fn _mbctolower(env, c: u32) -> u32 { if c < 0x80 { lower(c as u16) as u32 } else { c } }
    cdecl fn _mbctoupper(env, c: u32) -> u32 { if c < 0x80 { upper(c as u16) as u32 } else { c } }
}

#[cfg(test)]
mod jis_tests {
    use super::{jis_to_sjis, sjis_to_jis};

    /// Windows' _mbcjistojms/_mbcjmstojis under code page 932.
    #[test]
    fn jis_and_shift_jis() {
        for (jis, sjis) in [
            (0x2121, 0x8140),
            (0x2223, 0x81A1),
            (0x237E, 0x829E),
            (0x255F, 0x837E),
            (0x2560, 0x8380),
            (0x7E7E, 0xEFFC),
        ] {
            assert_eq!(jis_to_sjis(jis), sjis, "{jis:#x}");
            assert_eq!(sjis_to_jis(sjis), jis, "{sjis:#x}");
        }
        for bad in [0x2020, 0x7F7F, 0x2121FFFF] {
            assert_eq!(jis_to_sjis(bad), 0, "{bad:#x}");
        }
        for bad in [0x80FC, 0x813F, 0x817F] {
            assert_eq!(sjis_to_jis(bad), 0, "{bad:#x}");
        }
    }
}
