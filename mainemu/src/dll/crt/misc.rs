//! The C runtime's <stdlib.h> and process calls: errno access, strerror,
//! the environment (getenv/_putenv over the process environment), exit and
//! atexit (handlers run as guest calls, streams flushed), abort and signal,
//! qsort and bsearch (the comparator is a guest function: a merge sort as a
//! chain of guest calls, so the order is deterministic), number parsing and
//! formatting (strtol to _ui64toa), rand, setjmp/longjmp, threads
//! (_beginthreadex), the C locale. Shared by msvcrt and ucrtbase.
//!
//! Owns these calls' C semantics. It must not implement stdio (stdio does)
//! or walk exception chains (seh does).

use super::fd::{self, errno};
use super::string::{put_units, units};
use crate::dll::{Env, Ret};
use std::collections::VecDeque;
use x86_cpu::reg;

/// msvcrt's message for an errno value.
pub fn strerror_text(e: i32) -> &'static str {
    const T: [&str; 43] = [
        "No error",
        "Operation not permitted",
        "No such file or directory",
        "No such process",
        "Interrupted function call",
        "Input/output error",
        "No such device or address",
        "Arg list too long",
        "Exec format error",
        "Bad file descriptor",
        "No child processes",
        "Resource temporarily unavailable",
        "Not enough space",
        "Permission denied",
        "Bad address",
        "Unknown error",
        "Resource device",
        "File exists",
        "Improper link",
        "No such device",
        "Not a directory",
        "Is a directory",
        "Invalid argument",
        "Too many open files in system",
        "Too many open files",
        "Inappropriate I/O control operation",
        "Unknown error",
        "File too large",
        "No space left on device",
        "Invalid seek",
        "Read-only file system",
        "Too many links",
        "Broken pipe",
        "Domain error",
        "Result too large",
        "Unknown error",
        "Resource deadlock avoided",
        "Unknown error",
        "Filename too long",
        "No locks available",
        "Function not implemented",
        "Directory not empty",
        "Illegal byte sequence",
    ];
    T.get(e as usize).copied().unwrap_or("Unknown error")
}

/// A per-process static buffer for a returned string (strerror, asctime, ...).
pub fn static_buf(env: &mut Env, key: &str, size: u32) -> u32 {
    let k = format!("crt!({key})");
    if let Some(&a) = env.data.get(&k) {
        return a;
    }
    let a = env.alloc(size);
    env.data.insert(k, a);
    a
}

fn strerror(env: &mut Env, e: i32, wide: bool) -> u32 {
    let b = static_buf(env, if wide { "wcserror" } else { "strerror" }, 256);
    env.put_str(b, strerror_text(e), wide);
    b
}

/// getenv: the value in a per-variable guest copy (NULL when unset).
fn getenv(env: &mut Env, name: u32, wide: bool) -> u32 {
    let Some(n) = env.read_str(name, wide) else {
        return 0;
    };
    let Some(v) = env.var(&n).map(str::to_string) else {
        return 0;
    };
    let key = format!("crt!(env {} {}={v})", wide as u8, n.to_uppercase());
    if let Some(&a) = env.data.get(&key) {
        return a;
    }
    let w: Vec<u16> = v.encode_utf16().collect();
    let a = if wide {
        env.alloc_wstr(&w)
    } else {
        env.alloc_cstr(&v.chars().map(|c| c as u8).collect::<Vec<_>>())
    };
    env.data.insert(key, a);
    a
}

fn putenv(env: &mut Env, s: u32, wide: bool) -> i32 {
    let Some(kv) = env.read_str(s, wide) else {
        return -1;
    };
    let Some((k, v)) = kv.split_once('=') else {
        fd::set_errno(env, errno::EINVAL);
        return -1;
    };
    if k.is_empty() {
        fd::set_errno(env, errno::EINVAL);
        return -1;
    }
    env.set_var(k, (!v.is_empty()).then_some(v));
    0
}

/// exit(): atexit handlers (last registered first), then the process ends.
pub fn exit(env: &mut Env, code: u32) -> Ret {
    let fns: VecDeque<u32> = std::mem::take(&mut env.crt.atexit)
        .into_iter()
        .rev()
        .collect();
    Ret::call_each(
        env,
        fns,
        Box::new(move |env| {
            super::stdio::flush_all(env);
            Ret::Exit(code)
        }),
    )
}

/// _cexit: handlers and flush, then return to the caller.
pub fn cexit(env: &mut Env) -> Ret {
    let fns: VecDeque<u32> = std::mem::take(&mut env.crt.atexit)
        .into_iter()
        .rev()
        .collect();
    Ret::call_each(
        env,
        fns,
        Box::new(|env| {
            super::stdio::flush_all(env);
            Ret::Value(0)
        }),
    )
}

/// signal numbers.
const SIGABRT: u32 = 22;

fn raise(env: &mut Env, sig: u32) -> Ret {
    let h = env.crt.signals.get(&sig).copied().unwrap_or(0);
    match h {
        0 => {
            // SIG_DFL: the process ends (abort's exit code is 3).
            super::stdio::flush_all(env);
            Ret::Exit(3)
        }
        1 => Ret::Value(0),
        f => {
            env.crt.signals.insert(sig, 0);
            Ret::call(f, vec![sig], |_, _| Ret::Value(0))
        }
    }
}

/// A merge sort run as a chain of guest comparator calls. Elements stay
/// where they are while comparing; the sorted order is written at the end.
struct Sort {
    base: u32,
    size: u32,
    cmp: u32,
    ctx: Option<u32>,
    order: Vec<u32>,
    tmp: Vec<u32>,
    width: usize,
    lo: usize,
    mid: usize,
    hi: usize,
    i: usize,
    j: usize,
}

impl Sort {
    fn set_run(&mut self) {
        let n = self.order.len();
        self.mid = (self.lo + self.width).min(n);
        self.hi = (self.lo + 2 * self.width).min(n);
        self.i = self.lo;
        self.j = self.mid;
    }
}

fn sort_step(env: &mut Env, mut s: Sort) -> Ret {
    let n = s.order.len();
    loop {
        if s.width >= n {
            let mut all = Vec::with_capacity(n * s.size as usize);
            for &k in &s.order {
                all.extend(
                    env.read_bytes(s.base + k * s.size, s.size)
                        .unwrap_or_default(),
                );
            }
            env.mem.poke(s.base, &all);
            return Ret::Value(0);
        }
        if s.i < s.mid && s.j < s.hi {
            let a = s.base + s.order[s.i] * s.size;
            let b = s.base + s.order[s.j] * s.size;
            let args = match s.ctx {
                Some(c) => vec![c, a, b],
                None => vec![a, b],
            };
            return Ret::call(s.cmp, args, move |env, r| {
                let mut s = s;
                if r as i32 <= 0 {
                    s.tmp.push(s.order[s.i]);
                    s.i += 1;
                } else {
                    s.tmp.push(s.order[s.j]);
                    s.j += 1;
                }
                sort_step(env, s)
            });
        }
        s.tmp.extend_from_slice(&s.order[s.i..s.mid]);
        s.tmp.extend_from_slice(&s.order[s.j..s.hi]);
        s.lo = s.hi;
        if s.lo >= n {
            s.order = std::mem::take(&mut s.tmp);
            s.width *= 2;
            s.lo = 0;
        }
        s.set_run();
    }
}

fn qsort(env: &mut Env, base: u32, n: u32, size: u32, cmp: u32, ctx: Option<u32>) -> Ret {
    if n < 2 || size == 0 {
        return Ret::Value(0);
    }
    let mut s = Sort {
        base,
        size,
        cmp,
        ctx,
        order: (0..n).collect(),
        tmp: Vec::with_capacity(n as usize),
        width: 1,
        lo: 0,
        mid: 0,
        hi: 0,
        i: 0,
        j: 0,
    };
    s.set_run();
    sort_step(env, s)
}

#[allow(clippy::too_many_arguments)]
fn bsearch_step(
    _env: &mut Env,
    key: u32,
    base: u32,
    lo: u32,
    hi: u32,
    size: u32,
    cmp: u32,
    ctx: Option<u32>,
) -> Ret {
    if lo >= hi {
        return Ret::Value(0);
    }
    let mid = lo + (hi - lo) / 2;
    let at = base + mid * size;
    let args = match ctx {
        Some(c) => vec![c, key, at],
        None => vec![key, at],
    };
    Ret::call(cmp, args, move |env, r| match (r as i32).cmp(&0) {
        std::cmp::Ordering::Equal => Ret::Value(at),
        std::cmp::Ordering::Less => bsearch_step(env, key, base, lo, mid, size, cmp, ctx),
        std::cmp::Ordering::Greater => bsearch_step(env, key, base, mid + 1, hi, size, cmp, ctx),
    })
}

/// Parses an integer as strtol does: (value as u64 magnitude with sign
/// applied by wrapping, units consumed, overflowed for `bits`/`signed`).
pub fn parse_int(u: &[u16], base: u32, bits: u32, signed: bool) -> (u64, usize, bool) {
    let mut i = u
        .iter()
        .take_while(|&&c| matches!(c, 0x20 | 0x09..=0x0D))
        .count();
    let neg = match u.get(i) {
        Some(&0x2D) => {
            i += 1;
            true
        }
        Some(&0x2B) => {
            i += 1;
            false
        }
        _ => false,
    };
    let mut base = base;
    let hex_prefix = u.get(i) == Some(&0x30) && matches!(u.get(i + 1), Some(&0x78) | Some(&0x58));
    if (base == 0 || base == 16)
        && hex_prefix
        && u.get(i + 2)
            .is_some_and(|&c| (c as u8 as char).is_ascii_hexdigit() && c < 0x80)
    {
        base = 16;
        i += 2;
    } else if base == 0 {
        base = if u.get(i) == Some(&0x30) { 8 } else { 10 };
    }
    if !(2..=36).contains(&base) {
        return (0, 0, false);
    }
    let start = i;
    let mut v: u128 = 0;
    let mut over = false;
    while let Some(&c) = u.get(i) {
        let d = match c {
            0x30..=0x39 => c as u32 - 0x30,
            0x41..=0x5A => c as u32 - 0x41 + 10,
            0x61..=0x7A => c as u32 - 0x61 + 10,
            _ => break,
        };
        if d >= base {
            break;
        }
        v = v * base as u128 + d as u128;
        if v > u64::MAX as u128 {
            over = true;
            v = u64::MAX as u128;
        }
        i += 1;
    }
    if i == start {
        return (0, 0, false);
    }
    let max_mag: u128 = if signed {
        if neg {
            1u128 << (bits - 1)
        } else {
            (1u128 << (bits - 1)) - 1
        }
    } else {
        (1u128 << bits) - 1
    };
    if v > max_mag {
        over = true;
    }
    let val = if over {
        if signed {
            if neg {
                (1u64 << (bits - 1)).wrapping_neg()
            } else {
                (1u64 << (bits - 1)) - 1
            }
        } else if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        }
    } else if neg {
        (v as u64).wrapping_neg()
    } else {
        v as u64
    };
    (val, i, over)
}

/// The zeros of the decimal digit runs `wcstol` and friends accept besides
/// ASCII (Arabic-Indic to fullwidth; each zero starts ten digits).
const DIGIT_ZEROS: [u16; 17] = [
    0x0660, 0x06F0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0C66, 0x0CE6, 0x0D66, 0x0E50, 0x0ED0,
    0x0F20, 0x1040, 0x17E0, 0x1810, 0xFF10,
];

/// A non-ASCII decimal digit as its ASCII digit, a Unicode space as ' ',
/// anything else unchanged.
fn wide_digit_or_space(c: u16) -> u16 {
    if c < 0x80 {
        return c;
    }
    if let Some(z) = DIGIT_ZEROS.iter().find(|&&z| (z..z + 10).contains(&c)) {
        return b'0' as u16 + (c - z);
    }
    let space = char::from_u32(c as u32).is_some_and(char::is_whitespace);
    if space {
        b' ' as u16
    } else {
        c
    }
}

fn strto_int(
    env: &mut Env,
    s: u32,
    end: u32,
    base: u32,
    bits: u32,
    signed: bool,
    wide: bool,
) -> u64 {
    let mut u = units(env, s, wide);
    if wide {
        // The wide conversions read any script's decimal digits and skip
        // any Unicode space, as Windows' do: mapped here unit for unit.
        for c in u.iter_mut() {
            *c = wide_digit_or_space(*c);
        }
    }
    let (v, used, over) = parse_int(&u, base, bits, signed);
    if over {
        fd::set_errno(env, errno::ERANGE);
    }
    if end != 0 {
        env.mem
            .poke_u32(end, s + used as u32 * if wide { 2 } else { 1 });
    }
    if bits == 32 {
        v & 0xFFFF_FFFF
    } else {
        v
    }
}

/// The longest prefix of `u` that is a C floating-point number: (value, units used).
pub fn parse_float(u: &[u16]) -> (f64, usize) {
    let s: String = u
        .iter()
        .map(|&c| if c < 0x80 { c as u8 as char } else { '\u{1}' })
        .collect();
    let b = s.as_bytes();
    let mut i = b
        .iter()
        .take_while(|c| matches!(c, b' ' | b'\t'..=b'\r'))
        .count();
    let start = i;
    if matches!(b.get(i), Some(b'+' | b'-')) {
        i += 1;
    }
    let rest = s[i..].to_ascii_lowercase();
    if rest.starts_with("inf") {
        let n = if rest.starts_with("infinity") { 8 } else { 3 };
        let v: f64 = if b[start] == b'-' {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
        return (v, i + n);
    }
    if rest.starts_with("nan") {
        return (f64::NAN, i + 3);
    }
    let digits_start = i;
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    let mut mant = i - digits_start;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let f = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        mant += i - f;
    }
    if mant == 0 {
        return (0.0, 0);
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let d = j;
        while b.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        if j > d {
            i = j;
        }
    }
    let text = &s[start..i];
    (text.parse::<f64>().unwrap_or(0.0), i)
}

/// Inclusive byte ranges.
type Ranges = &'static [(u8, u8)];

/// The `_mbctype` byte of `b` under code page `cp` (before the table's
/// leading extra entry): _MS 0x01 and _MP 0x02 (code page 932's
/// single-byte katakana and punctuation), _M1 0x04 lead byte, _M2 0x08
/// trail byte, _SBUP 0x10 and _SBLOW 0x20 single-byte letters. The lead
/// and trail ranges are Windows' for the four East Asian code pages; the
/// letters of a single-byte page are its characters' Unicode case.
pub fn mbctype(cp: i32, b: u8) -> u8 {
    let inr = |r: Ranges| r.iter().any(|&(a, z)| (a..=z).contains(&b));
    let (lead, trail): (Ranges, Ranges) = match cp {
        932 => (&[(0x81, 0x9F), (0xE0, 0xFC)], &[(0x40, 0x7E), (0x80, 0xFC)]),
        936 => (&[(0x81, 0xFE)], &[(0x40, 0xFE)]),
        949 => (&[(0x81, 0xFE)], &[(0x41, 0xFE)]),
        950 => (&[(0x81, 0xFE)], &[(0x40, 0x7E), (0xA1, 0xFE)]),
        _ => (&[], &[]),
    };
    let mut t = 0;
    if inr(lead) {
        t |= 0x04;
    }
    if inr(trail) {
        t |= 0x08;
    }
    if cp == 932 {
        match b {
            0xA1..=0xA5 => t |= 0x02,
            0xA6..=0xDF => t |= 0x01,
            _ => {}
        }
    }
    let single_letter = b.is_ascii_alphabetic() || (cp == 1252 && b >= 0x80);
    if single_letter {
        let c = char::from_u32(super::super::kernel32::codepage::ansi_to_wide(b) as u32)
            .unwrap_or('\0');
        if c.is_uppercase() {
            t |= 0x10;
        } else if c.is_lowercase() {
            t |= 0x20;
        }
    }
    t
}

/// `_setmbcp`: the multibyte code page and msvcrt's `_mbctype` table for
/// it (the table only: the `_mbs` calls stay single-byte). `_MB_CP_ANSI`
/// (-3) is 1252, `_MB_CP_OEM` (-2) 437, `_MB_CP_LOCALE` (-4) the C
/// locale's (none, 0), `_MB_CP_SBCS` 0.
fn setmbcp(env: &mut Env, cp: i32) -> i32 {
    let cp = match cp {
        -3 => 1252,
        -2 => 437,
        -4 => 0,
        c => c,
    };
    if !matches!(cp, 0 | 437 | 850 | 1252 | 932 | 936 | 949 | 950) {
        fd::set_errno(env, errno::EINVAL);
        return -1;
    }
    env.crt.mbcp = cp;
    // The table is rewritten only where a program can see it.
    if let Some(&a) = env.data.get("msvcrt.dll!_mbctype") {
        let mut t = vec![0u8; 257];
        if cp != 0 {
            for b in 0..=255u8 {
                t[b as usize + 1] = mbctype(cp, b);
            }
        }
        env.mem.poke(a, &t);
    }
    0
}

pub fn strtod(env: &mut Env, s: u32, end: u32, wide: bool) -> f64 {
    let u = units(env, s, wide);
    let (v, used) = parse_float(&u);
    if v.is_infinite() && used > 0 && !u.iter().any(|&c| c == b'i' as u16 || c == b'I' as u16) {
        fd::set_errno(env, errno::ERANGE);
    }
    if end != 0 {
        env.mem
            .poke_u32(end, s + used as u32 * if wide { 2 } else { 1 });
    }
    v
}

/// _itoa and friends: `v` (already sign-extended to 64 bits when signed) in `radix`.
fn to_radix(v: u64, neg: bool, radix: u32) -> String {
    if !(2..=36).contains(&radix) {
        return String::new();
    }
    let mut digits = Vec::new();
    let mut m = if neg { v.wrapping_neg() } else { v };
    loop {
        let d = (m % radix as u64) as u32;
        digits.push(std::char::from_digit(d, radix).unwrap_or('0'));
        m /= radix as u64;
        if m == 0 {
            break;
        }
    }
    if neg {
        digits.push('-');
    }
    digits.iter().rev().collect()
}

fn itoa(env: &mut Env, v: u64, neg: bool, buf: u32, radix: u32, wide: bool) -> u32 {
    let s = to_radix(v, neg, radix);
    env.put_str(buf, &s, wide);
    buf
}

fn itoa_s(env: &mut Env, v: u64, neg: bool, buf: u32, size: u32, radix: u32, wide: bool) -> i32 {
    if buf == 0 || size == 0 || !(2..=36).contains(&radix) {
        return errno::EINVAL;
    }
    let s = to_radix(v, neg, radix);
    if s.len() as u32 >= size {
        env.put_str(buf, "", wide);
        return errno::ERANGE;
    }
    env.put_str(buf, &s, wide);
    0
}

/// _JUMP_BUFFER offsets.
mod jb {
    pub const EBP: u32 = 0;
    pub const EBX: u32 = 4;
    pub const EDI: u32 = 8;
    pub const ESI: u32 = 12;
    pub const ESP: u32 = 16;
    pub const EIP: u32 = 20;
    pub const REGISTRATION: u32 = 24;
    pub const TRYLEVEL: u32 = 28;
}

fn setjmp(env: &mut Env, buf: u32) -> u32 {
    let teb = env.teb();
    let reg0 = env.mem.peek_u32(teb).unwrap_or(u32::MAX);
    let cpu = env.threads.cur().cpu.clone();
    let esp = cpu.regs[reg::ESP];
    let ret = env.mem.peek_u32(esp).unwrap_or(0);
    let vals = [
        (jb::EBP, cpu.regs[reg::EBP]),
        (jb::EBX, cpu.regs[reg::EBX]),
        (jb::EDI, cpu.regs[reg::EDI]),
        (jb::ESI, cpu.regs[reg::ESI]),
        (jb::ESP, esp + 4),
        (jb::EIP, ret),
        (jb::REGISTRATION, reg0),
        (jb::TRYLEVEL, 0xFFFF_FFFF),
    ];
    for (o, v) in vals {
        env.mem.poke_u32(buf + o, v);
    }
    // The cookie "VC20" marks a buffer _setjmp3 filled.
    env.mem.poke_u32(buf + 32, 0x5643_3230);
    0
}

fn longjmp(env: &mut Env, buf: u32, val: u32) -> Ret {
    let g = |o| env.mem.peek_u32(buf + o).unwrap_or(0);
    let (ebp, ebx, edi, esi, esp, eip, registration) = (
        g(jb::EBP),
        g(jb::EBX),
        g(jb::EDI),
        g(jb::ESI),
        g(jb::ESP),
        g(jb::EIP),
        g(jb::REGISTRATION),
    );
    let teb = env.teb();
    env.mem.poke_u32(teb, registration);
    let cpu = env.cpu();
    cpu.regs[reg::EBP] = ebp;
    cpu.regs[reg::EBX] = ebx;
    cpu.regs[reg::EDI] = edi;
    cpu.regs[reg::ESI] = esi;
    cpu.regs[reg::ESP] = esp;
    cpu.regs[reg::EAX] = if val == 0 { 1 } else { val };
    cpu.eip = eip;
    Ret::Jumped
}

/// msvcrt's per-thread rand: next = next * 214013 + 2531011.
fn rand(env: &mut Env) -> i32 {
    let tid = env.thread_id();
    let s = env.crt.rand.entry(tid).or_insert(1);
    *s = s.wrapping_mul(214_013).wrapping_add(2_531_011);
    ((*s >> 16) & 0x7FFF) as i32
}

/// setlocale: only the C locale exists (every query or change answers "C").
fn setlocale(env: &mut Env, locale: u32, wide: bool) -> u32 {
    if let Some(l) = env.read_str(locale, wide) {
        if !(l.is_empty()
            || l == "C"
            || l.eq_ignore_ascii_case("english")
            || l.contains(".1252")
            || l.starts_with("en"))
        {
            return 0;
        }
    }
    let b = static_buf(env, if wide { "wlocale" } else { "locale" }, 8);
    env.put_str(b, "C", wide);
    b
}

/// struct lconv of the C locale: decimal_point ".", every other string "".
fn localeconv(env: &mut Env) -> u32 {
    if let Some(&l) = env.data.get("crt!(lconv)") {
        return l;
    }
    let s = env.alloc(4);
    env.mem.poke(s, b".\0\0");
    let mut b = Vec::new();
    for k in 0..10u32 {
        b.extend((if k == 0 { s } else { s + 2 }).to_le_bytes());
    }
    b.extend([0x7Fu8; 8]);
    for _ in 0..6 {
        b.extend((s + 2).to_le_bytes());
    }
    let l = env.alloc(b.len() as u32);
    env.mem.poke(l, &b);
    env.data.insert("crt!(lconv)".into(), l);
    l
}

fn beginthreadex(env: &mut Env, stack: u32, start: u32, arg: u32, flags: u32, tid: u32) -> u32 {
    let h = crate::dll::kernel32::sync::create_thread(env, stack, start, arg, flags, tid);
    if h == 0 {
        fd::set_errno(env, errno::EAGAIN);
    }
    h
}

fn int_ret(v: u64, bits: u32) -> Ret {
    if bits == 64 {
        Ret::Value64(v)
    } else {
        Ret::Value(v as u32)
    }
}

crate::dll! { "(crt stdlib)";
    cdecl fn _errno(env) -> u32 { fd::errno_addr(env) }
    cdecl fn __doserrno(env) -> u32 { fd::errno_addr(env) + 4 }
    cdecl fn _get_errno(env, out: u32) -> i32 { let e = fd::get_errno(env); env.mem.poke_u32(out, e as u32); 0 }
    cdecl fn _set_errno(env, e: i32) -> i32 { fd::set_errno(env, e); 0 }
    cdecl fn _get_doserrno(env, out: u32) -> i32 { let a = fd::errno_addr(env); let v = env.mem.peek_u32(a + 4).unwrap_or(0); env.mem.poke_u32(out, v); 0 }
    cdecl fn _set_doserrno(env, e: u32) -> i32 { let a = fd::errno_addr(env); env.mem.poke_u32(a + 4, e); 0 }
    cdecl fn strerror(env, e: i32) -> u32 { strerror(env, e, false) }
    cdecl fn _wcserror(env, e: i32) -> u32 { strerror(env, e, true) }
    cdecl fn strerror_s(env, buf: u32, n: u32, e: i32) -> i32 {
        let t: String = strerror_text(e).chars().take(n.saturating_sub(1) as usize).collect();
        env.put_str(buf, &t, false); 0
    }
    cdecl fn _strerror(env, s: u32) -> u32 {
        let e = fd::get_errno(env);
        let mut m = env.read_a(s).filter(|s| !s.is_empty()).map(|s| format!("{s}: ")).unwrap_or_default();
        m.push_str(strerror_text(e));
        m.push('\n');
        let b = static_buf(env, "_strerror", 512);
        env.put_str(b, &m, false);
        b
    }
    cdecl fn getenv(env, name: u32) -> u32 { getenv(env, name, false) }
    cdecl fn _wgetenv(env, name: u32) -> u32 { getenv(env, name, true) }
    cdecl fn getenv_s(env, size: u32, buf: u32, cap: u32, name: u32) -> i32 {
        let n = env.read_a(name).unwrap_or_default();
        match env.var(&n).map(str::to_string) {
            Some(v) => { env.mem.poke_u32(size, v.len() as u32 + 1); if (v.len() as u32) < cap { env.put_str(buf, &v, false); 0 } else { errno::ERANGE } }
            None => { env.mem.poke_u32(size, 0); 0 }
        }
    }
    cdecl fn _dupenv_s(env, out: u32, len: u32, name: u32) -> i32 {
        let n = env.read_a(name).unwrap_or_default();
        match env.var(&n).map(str::to_string) {
            Some(v) => { let a = env.alloc_cstr(v.as_bytes()); env.mem.poke_u32(out, a); if len != 0 { env.mem.poke_u32(len, v.len() as u32 + 1); } 0 }
            None => { env.mem.poke_u32(out, 0); if len != 0 { env.mem.poke_u32(len, 0); } 0 }
        }
    }
    cdecl fn _putenv(env, s: u32) -> i32 { putenv(env, s, false) }
    cdecl fn _wputenv(env, s: u32) -> i32 { putenv(env, s, true) }
    cdecl fn _putenv_s(env, name: u32, value: u32) -> i32 {
        let (Some(n), Some(v)) = (env.read_a(name), env.read_a(value)) else { return errno::EINVAL };
        env.set_var(&n, (!v.is_empty()).then_some(&v)); 0
    }
    cdecl fn exit(env, code: u32) -> Ret { exit(env, code) }
    cdecl fn _exit(env, code: u32) -> Ret { super::stdio::flush_all(env); Ret::Exit(code) }
    cdecl fn _Exit(env, code: u32) -> Ret { Ret::Exit(code) }
    cdecl fn quick_exit(env, code: u32) -> Ret { Ret::Exit(code) }
    cdecl fn _cexit(env) -> Ret { cexit(env) }
    cdecl fn _c_exit(env) {}
    cdecl fn atexit(env, f: u32) -> i32 { env.crt.atexit.push(f); 0 }
    cdecl fn _onexit(env, f: u32) -> u32 { env.crt.atexit.push(f); f }
    cdecl fn abort(env) -> Ret { raise(env, SIGABRT) }
    // A failed assert(): the message on stderr, then abort.
    cdecl fn _assert(env, expr: u32, file: u32, line: u32) -> Ret {
        let e = env.read_a(expr).unwrap_or_default();
        let f = env.read_a(file).unwrap_or_default();
        super::stdio::flush_all(env);
        env.write_console(2, format!("Assertion failed: {e}, file {f}, line {line}\n").as_bytes());
        raise(env, SIGABRT)
    }
    cdecl fn _wassert(env, expr: u32, file: u32, line: u32) -> Ret {
        let e = env.read_w(expr).unwrap_or_default();
        let f = env.read_w(file).unwrap_or_default();
        super::stdio::flush_all(env);
        env.write_console(2, format!("Assertion failed: {e}, file {f}, line {line}\n").as_bytes());
        raise(env, SIGABRT)
    }
    cdecl fn raise(env, sig: u32) -> Ret { raise(env, sig) }
    cdecl fn signal(env, sig: u32, h: u32) -> u32 {
        if !matches!(sig, 2 | 4 | 8 | 11 | 15 | 21 | 22 | 6) { fd::set_errno(env, errno::EINVAL); return 0xFFFF_FFFF; }
        env.crt.signals.insert(sig, h).unwrap_or(0)
    }
    cdecl fn _set_abort_behavior(env, flags: u32, mask: u32) -> u32 { 0 }
    cdecl fn _amsg_exit(env, code: u32) -> Ret { Ret::Exit(255) }
    cdecl fn _purecall(env) -> Ret { Ret::Stop("pure virtual function call (_purecall)".into()) }
    cdecl fn _invalid_parameter_noinfo(env) {}
    cdecl fn _invalid_parameter_noinfo_noreturn(env) -> Ret { Ret::Stop("_invalid_parameter_noinfo_noreturn: the C runtime saw an invalid parameter".into()) }
    cdecl fn _invalid_parameter(env, e: u32, f: u32, file: u32, line: u32, r: u32) {}
    cdecl fn _set_invalid_parameter_handler(env, h: u32) -> u32 { std::mem::replace(&mut env.crt.invalid_handler, h) }
    cdecl fn _get_invalid_parameter_handler(env) -> u32 { env.crt.invalid_handler }
    cdecl fn qsort(env, base: u32, n: u32, size: u32, cmp: u32) -> Ret { qsort(env, base, n, size, cmp, None) }
    cdecl fn qsort_s(env, base: u32, n: u32, size: u32, cmp: u32, ctx: u32) -> Ret { qsort(env, base, n, size, cmp, Some(ctx)) }
    cdecl fn bsearch(env, key: u32, base: u32, n: u32, size: u32, cmp: u32) -> Ret { bsearch_step(env, key, base, 0, n, size, cmp, None) }
    cdecl fn bsearch_s(env, key: u32, base: u32, n: u32, size: u32, cmp: u32, ctx: u32) -> Ret { bsearch_step(env, key, base, 0, n, size, cmp, Some(ctx)) }
    cdecl fn rand(env) -> i32 { rand(env) }
    cdecl fn srand(env, seed: u32) { let tid = env.thread_id(); env.crt.rand.insert(tid, seed); }
    cdecl fn rand_s(env, out: u32) -> i32 { let a = rand(env) as u32; let b = rand(env) as u32; let c = rand(env) as u32; env.mem.poke_u32(out, a << 17 ^ b << 2 ^ c); 0 }
    cdecl fn abs(env, v: i32) -> i32 { v.wrapping_abs() }
    cdecl fn labs(env, v: i32) -> i32 { v.wrapping_abs() }
    cdecl fn llabs(env, lo: u32, hi: u32) -> u64 { (((hi as u64) << 32 | lo as u64) as i64).wrapping_abs() as u64 }
    cdecl fn _abs64(env, lo: u32, hi: u32) -> u64 { (((hi as u64) << 32 | lo as u64) as i64).wrapping_abs() as u64 }
    cdecl fn div(env, a: i32, b: i32) -> u64 { if b == 0 { 0 } else { (a.wrapping_div(b) as u32 as u64) | ((a.wrapping_rem(b) as u32 as u64) << 32) } }
    cdecl fn ldiv(env, a: i32, b: i32) -> u64 { if b == 0 { 0 } else { (a.wrapping_div(b) as u32 as u64) | ((a.wrapping_rem(b) as u32 as u64) << 32) } }
    cdecl fn _rotl(env, v: u32, n: u32) -> u32 { v.rotate_left(n & 31) }
    cdecl fn _rotr(env, v: u32, n: u32) -> u32 { v.rotate_right(n & 31) }
    cdecl fn _lrotl(env, v: u32, n: u32) -> u32 { v.rotate_left(n & 31) }
    cdecl fn _lrotr(env, v: u32, n: u32) -> u32 { v.rotate_right(n & 31) }
    cdecl fn _byteswap_ulong(env, v: u32) -> u32 { v.swap_bytes() }
    cdecl fn _byteswap_ushort(env, v: u32) -> u32 { (v as u16).swap_bytes() as u32 }
    cdecl fn atoi(env, s: u32) -> u32 { strto_int(env, s, 0, 10, 32, true, false) as u32 }
    cdecl fn atol(env, s: u32) -> u32 { strto_int(env, s, 0, 10, 32, true, false) as u32 }
    cdecl fn _wtoi(env, s: u32) -> u32 { strto_int(env, s, 0, 10, 32, true, true) as u32 }
    cdecl fn _wtol(env, s: u32) -> u32 { strto_int(env, s, 0, 10, 32, true, true) as u32 }
    cdecl fn _atoi64(env, s: u32) -> u64 { strto_int(env, s, 0, 10, 64, true, false) }
    cdecl fn _wtoi64(env, s: u32) -> u64 { strto_int(env, s, 0, 10, 64, true, true) }
    cdecl fn atoll(env, s: u32) -> u64 { strto_int(env, s, 0, 10, 64, true, false) }
    cdecl fn strtol(env, s: u32, end: u32, base: u32) -> u32 { strto_int(env, s, end, base, 32, true, false) as u32 }
    cdecl fn strtoul(env, s: u32, end: u32, base: u32) -> u32 { strto_int(env, s, end, base, 32, false, false) as u32 }
    cdecl fn wcstol(env, s: u32, end: u32, base: u32) -> u32 { strto_int(env, s, end, base, 32, true, true) as u32 }
    cdecl fn wcstoul(env, s: u32, end: u32, base: u32) -> u32 { strto_int(env, s, end, base, 32, false, true) as u32 }
    cdecl fn _strtoi64(env, s: u32, end: u32, base: u32) -> Ret { int_ret(strto_int(env, s, end, base, 64, true, false), 64) }
    cdecl fn _strtoui64(env, s: u32, end: u32, base: u32) -> Ret { int_ret(strto_int(env, s, end, base, 64, false, false), 64) }
    cdecl fn strtoll(env, s: u32, end: u32, base: u32) -> Ret { int_ret(strto_int(env, s, end, base, 64, true, false), 64) }
    cdecl fn strtoull(env, s: u32, end: u32, base: u32) -> Ret { int_ret(strto_int(env, s, end, base, 64, false, false), 64) }
    cdecl fn _wcstoi64(env, s: u32, end: u32, base: u32) -> Ret { int_ret(strto_int(env, s, end, base, 64, true, true), 64) }
    cdecl fn _wcstoui64(env, s: u32, end: u32, base: u32) -> Ret { int_ret(strto_int(env, s, end, base, 64, false, true), 64) }
    cdecl fn wcstoll(env, s: u32, end: u32, base: u32) -> Ret { int_ret(strto_int(env, s, end, base, 64, true, true), 64) }
    cdecl fn wcstoull(env, s: u32, end: u32, base: u32) -> Ret { int_ret(strto_int(env, s, end, base, 64, false, true), 64) }
    cdecl fn strtod(env, s: u32, end: u32) -> Ret { Ret::Float(strtod(env, s, end, false)) }
    cdecl fn wcstod(env, s: u32, end: u32) -> Ret { Ret::Float(strtod(env, s, end, true)) }
    cdecl fn strtof(env, s: u32, end: u32) -> Ret { Ret::Float(strtod(env, s, end, false) as f32 as f64) }
    cdecl fn wcstof(env, s: u32, end: u32) -> Ret { Ret::Float(strtod(env, s, end, true) as f32 as f64) }
    cdecl fn atof(env, s: u32) -> Ret { Ret::Float(strtod(env, s, 0, false)) }
    cdecl fn _wtof(env, s: u32) -> Ret { Ret::Float(strtod(env, s, 0, true)) }
    cdecl fn _atodbl(env, out: u32, s: u32) -> i32 { let v = strtod(env, s, 0, false); env.mem.poke(out, &v.to_le_bytes()); 0 }
    cdecl fn _atoflt(env, out: u32, s: u32) -> i32 { let v = strtod(env, s, 0, false) as f32; env.mem.poke(out, &v.to_le_bytes()); 0 }
    cdecl fn _itoa(env, v: i32, buf: u32, radix: u32) -> u32 { itoa(env, v as i64 as u64, v < 0 && radix == 10, buf, radix, false) }
    cdecl fn _ltoa(env, v: i32, buf: u32, radix: u32) -> u32 { itoa(env, v as i64 as u64, v < 0 && radix == 10, buf, radix, false) }
    cdecl fn _ultoa(env, v: u32, buf: u32, radix: u32) -> u32 { itoa(env, v as u64, false, buf, radix, false) }
    cdecl fn _itow(env, v: i32, buf: u32, radix: u32) -> u32 { itoa(env, v as i64 as u64, v < 0 && radix == 10, buf, radix, true) }
    cdecl fn _ltow(env, v: i32, buf: u32, radix: u32) -> u32 { itoa(env, v as i64 as u64, v < 0 && radix == 10, buf, radix, true) }
    cdecl fn _ultow(env, v: u32, buf: u32, radix: u32) -> u32 { itoa(env, v as u64, false, buf, radix, true) }
    cdecl fn _i64toa(env, lo: u32, hi: u32, buf: u32, radix: u32) -> u32 { let v = (hi as u64) << 32 | lo as u64; itoa(env, v, (v as i64) < 0 && radix == 10, buf, radix, false) }
    cdecl fn _ui64toa(env, lo: u32, hi: u32, buf: u32, radix: u32) -> u32 { itoa(env, (hi as u64) << 32 | lo as u64, false, buf, radix, false) }
    cdecl fn _i64tow(env, lo: u32, hi: u32, buf: u32, radix: u32) -> u32 { let v = (hi as u64) << 32 | lo as u64; itoa(env, v, (v as i64) < 0 && radix == 10, buf, radix, true) }
    cdecl fn _ui64tow(env, lo: u32, hi: u32, buf: u32, radix: u32) -> u32 { itoa(env, (hi as u64) << 32 | lo as u64, false, buf, radix, true) }
    cdecl fn _itoa_s(env, v: i32, buf: u32, size: u32, radix: u32) -> i32 { itoa_s(env, v as i64 as u64, v < 0 && radix == 10, buf, size, radix, false) }
    cdecl fn _ltoa_s(env, v: i32, buf: u32, size: u32, radix: u32) -> i32 { itoa_s(env, v as i64 as u64, v < 0 && radix == 10, buf, size, radix, false) }
    cdecl fn _ultoa_s(env, v: u32, buf: u32, size: u32, radix: u32) -> i32 { itoa_s(env, v as u64, false, buf, size, radix, false) }
    cdecl fn _itow_s(env, v: i32, buf: u32, size: u32, radix: u32) -> i32 { itoa_s(env, v as i64 as u64, v < 0 && radix == 10, buf, size, radix, true) }
    cdecl fn _i64toa_s(env, lo: u32, hi: u32, buf: u32, size: u32, radix: u32) -> i32 { let v = (hi as u64) << 32 | lo as u64; itoa_s(env, v, (v as i64) < 0 && radix == 10, buf, size, radix, false) }
    cdecl fn _ui64toa_s(env, lo: u32, hi: u32, buf: u32, size: u32, radix: u32) -> i32 { itoa_s(env, (hi as u64) << 32 | lo as u64, false, buf, size, radix, false) }
    cdecl fn _setjmp(env, buf: u32) -> u32 { setjmp(env, buf) }
    cdecl fn _setjmp3(env, buf: u32, n: u32) -> u32 { setjmp(env, buf) }
    cdecl fn longjmp(env, buf: u32, val: u32) -> Ret { longjmp(env, buf, val) }
    cdecl fn _beginthreadex(env, sa: u32, stack: u32, start: u32, arg: u32, flags: u32, tid: u32) -> u32 { beginthreadex(env, stack, start, arg, flags, tid) }
    cdecl fn _beginthread(env, start: u32, stack: u32, arg: u32) -> u32 { let h = beginthreadex(env, stack, start, arg, 0, 0); if h == 0 { u32::MAX } else { h } }
    cdecl fn _endthreadex(env, code: u32) -> Ret { Ret::ExitThread(code) }
    cdecl fn _endthread(env) -> Ret { Ret::ExitThread(0) }
    cdecl fn setlocale(env, cat: u32, locale: u32) -> u32 { setlocale(env, locale, false) }
    cdecl fn _wsetlocale(env, cat: u32, locale: u32) -> u32 { setlocale(env, locale, true) }
    cdecl fn localeconv(env) -> u32 { localeconv(env) }
    cdecl fn _configthreadlocale(env, t: i32) -> i32 { 2 }
    cdecl fn _create_locale(env, cat: u32, name: u32) -> u32 { static_buf(env, "locale_t", 64) }
    cdecl fn _free_locale(env, l: u32) {}
    cdecl fn _get_current_locale(env) -> u32 { static_buf(env, "locale_t", 64) }
    cdecl fn ___lc_codepage_func(env) -> u32 { 0 }
    cdecl fn ___lc_collate_cp_func(env) -> u32 { 0 }
    cdecl fn ___lc_handle_func(env) -> u32 { static_buf(env, "lc_handle", 24) }
    cdecl fn _getmbcp(env) -> i32 { env.crt.mbcp }
    cdecl fn _setmbcp(env, cp: i32) -> i32 { setmbcp(env, cp) }
    cdecl fn _getpid(env) -> u32 { crate::process::PROCESS_ID }
    cdecl fn system(env, cmd: u32) -> Ret { super::spawn::system(env, cmd, false) }
    cdecl fn _wsystem(env, cmd: u32) -> Ret { super::spawn::system(env, cmd, true) }
    cdecl fn _lock(env, n: u32) {}
    cdecl fn _unlock(env, n: u32) {}
    cdecl fn _initterm(env, start: u32, end: u32) -> Ret {
        let mut fns = VecDeque::new();
        let mut a = start;
        while a < end && fns.len() < 65536 {
            match env.mem.peek_u32(a) { Some(0) => {} Some(f) => fns.push_back(f), None => break }
            a += 4;
        }
        Ret::call_each(env, fns, Box::new(|_| Ret::Value(0)))
    }
    cdecl fn _initterm_e(env, start: u32, end: u32) -> Ret { initterm_e(env, start, end) }
    cdecl fn _swab(env, src: u32, dst: u32, n: i32) {
        if n < 2 { return; }
        let mut b = env.read_bytes(src, (n & !1) as u32).unwrap_or_default();
        for c in b.chunks_mut(2) { c.swap(0, 1); }
        env.mem.poke(dst, &b);
    }
    cdecl fn _lfind(env, key: u32, base: u32, num: u32, width: u32, cmp: u32) -> Ret {
        let n = env.mem.peek_u32(num).unwrap_or(0);
        lfind(env, key, base, 0, n, width, cmp)
    }
    cdecl fn _wputenv_s(env, name: u32, value: u32) -> i32 {
        let (Some(n), Some(v)) = (env.read_w(name), env.read_w(value)) else { return errno::EINVAL };
        env.set_var(&n, (!v.is_empty()).then_some(&v)); 0
    }
    cdecl fn _searchenv(env, file: u32, var: u32, out: u32) { searchenv(env, file, var, out, false) }
    cdecl fn _wsearchenv(env, file: u32, var: u32, out: u32) { searchenv(env, file, var, out, true) }
    cdecl fn __wgetmainargs(env, argc: u32, argv: u32, envp: u32, wild: u32, si: u32) -> i32 { super::startup::mainargs(env, argc, argv, envp, true) }
}

fn lfind(_env: &mut Env, key: u32, base: u32, i: u32, n: u32, width: u32, cmp: u32) -> Ret {
    if i >= n {
        return Ret::Value(0);
    }
    let at = base + i * width;
    Ret::call(cmp, vec![key, at], move |env, r| {
        if r == 0 {
            Ret::Value(at)
        } else {
            lfind(env, key, base, i + 1, n, width, cmp)
        }
    })
}

/// `_initterm_e`: like `_initterm` but each function returns an int; the
/// first non-zero stops and is returned.
fn initterm_e(env: &mut Env, start: u32, end: u32) -> Ret {
    if start >= end {
        return Ret::Value(0);
    }
    match env.mem.peek_u32(start) {
        Some(0) => initterm_e(env, start + 4, end),
        Some(f) => Ret::call(f, vec![], move |env, r| {
            if r != 0 {
                Ret::Value(r)
            } else {
                initterm_e(env, start + 4, end)
            }
        }),
        None => Ret::Value(0),
    }
}

fn searchenv(env: &mut Env, file: u32, var: u32, out: u32, wide: bool) {
    let f = env.read_str(file, wide).unwrap_or_default();
    let v = env.read_str(var, wide).unwrap_or_default();
    let mut dirs = vec![env.drives.cwd()];
    dirs.extend(
        env.var(&v)
            .unwrap_or("")
            .split(';')
            .filter(|d| !d.is_empty())
            .map(str::to_string),
    );
    for d in dirs {
        let cand = format!("{}\\{}", d.trim_end_matches('\\'), f);
        if crate::dll::kernel32::file::resolve(env, &cand).is_ok_and(|h| h.is_file()) {
            let full = env.drives.lexical_full(&cand);
            env.put_str(out, &full, wide);
            return;
        }
    }
    put_units(env, out, &[], true, wide);
    fd::set_errno(env, errno::ENOENT);
}

#[cfg(test)]
mod tests {
    use super::mbctype;

    /// Windows' `_mbctype` after `_setmbcp(cp)`, run-length encoded as
    /// (value, count) from the table's extra leading entry on.
    #[test]
    fn mbctype_tables() {
        let tables: [(i32, &[u8]); 4] = [
            (
                932,
                &[
                    0x0, 65, 0x8, 1, 0x18, 26, 0x8, 6, 0x28, 26, 0x8, 4, 0x0, 1, 0x8, 1, 0xc, 31,
                    0x8, 1, 0xa, 5, 0x9, 58, 0xc, 29, 0, 3,
                ],
            ),
            (
                936,
                &[
                    0x0, 65, 0x8, 1, 0x18, 26, 0x8, 6, 0x28, 26, 0x8, 6, 0xc, 126, 0, 1,
                ],
            ),
            (
                949,
                &[0x0, 66, 0x18, 26, 0x8, 6, 0x28, 26, 0x8, 6, 0xc, 126, 0, 1],
            ),
            (
                950,
                &[
                    0x0, 65, 0x8, 1, 0x18, 26, 0x8, 6, 0x28, 26, 0x8, 4, 0x0, 2, 0x4, 32, 0xc, 94,
                    0, 1,
                ],
            ),
        ];
        for (cp, rle) in tables {
            let want: Vec<u8> = rle
                .chunks(2)
                .flat_map(|p| std::iter::repeat_n(p[0], p[1] as usize))
                .collect();
            assert_eq!(want.len(), 257, "cp {cp}");
            let got: Vec<u8> = std::iter::once(0)
                .chain((0..=255u8).map(|b| mbctype(cp, b)))
                .collect();
            assert_eq!(got, want, "cp {cp}");
        }
        // 1252: letters by case, ª and º lower, × and ÷ neither.
        assert_eq!(
            [0x41, 0x61, 0x8A, 0x9A, 0xAA, 0xBA, 0xD7, 0xDF, 0xF7, 0xFF].map(|b| mbctype(1252, b)),
            [0x10, 0x20, 0x10, 0x20, 0x20, 0x20, 0, 0x20, 0, 0x20]
        );
    }
}
