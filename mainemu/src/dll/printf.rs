//! The C runtime's printf formatting over guest memory: a format string and
//! a va_list (dword-aligned stack arguments, doubles as 8 bytes), as msvcrt
//! and ucrtbase format them.
//!
//! Owns conversion semantics (flags `-+ #0`, width and precision with `*`,
//! lengths `hh h l ll L I32 I64 z j t`, conversions `d i u o x X c s S C p n
//! e E f F g G a %`). It must not write anywhere but the returned bytes (the
//! caller routes them to a stream or buffer) and does not implement `%n`
//! writes (they are refused: the output stops there).

use crate::memory::Memory;

/// Reads the va_list as dwords from a guest address.
struct Args<'a> {
    mem: &'a Memory,
    at: u32,
}

impl Args<'_> {
    fn u32(&mut self) -> u32 {
        let v = self.mem.peek_u32(self.at).unwrap_or(0);
        self.at = self.at.wrapping_add(4);
        v
    }
    fn u64(&mut self) -> u64 {
        let lo = self.u32() as u64;
        lo | (self.u32() as u64) << 32
    }
}

#[derive(Default)]
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
    width: usize,
    prec: Option<usize>,
}

fn pad(out: &mut Vec<u8>, s: &SpecBody, sp: &Spec) {
    let body_len = s.prefix.len() + s.digits.len();
    let fill = sp.width.saturating_sub(body_len);
    if sp.left {
        out.extend_from_slice(&s.prefix);
        out.extend_from_slice(&s.digits);
        out.extend(std::iter::repeat_n(b' ', fill));
    } else if sp.zero && s.numeric {
        out.extend_from_slice(&s.prefix);
        out.extend(std::iter::repeat_n(b'0', fill));
        out.extend_from_slice(&s.digits);
    } else {
        out.extend(std::iter::repeat_n(b' ', fill));
        out.extend_from_slice(&s.prefix);
        out.extend_from_slice(&s.digits);
    }
}

struct SpecBody {
    prefix: Vec<u8>,
    digits: Vec<u8>,
    numeric: bool,
}

fn sign_prefix(neg: bool, sp: &Spec) -> Vec<u8> {
    if neg {
        b"-".to_vec()
    } else if sp.plus {
        b"+".to_vec()
    } else if sp.space {
        b" ".to_vec()
    } else {
        Vec::new()
    }
}

/// C's %e body: d.ddde+XX (at least two exponent digits).
fn fmt_e(v: f64, prec: usize, upper: bool) -> String {
    let s = format!("{v:.prec$e}");
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    let out = format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    if upper {
        out.to_uppercase()
    } else {
        out
    }
}

fn strip_zeros(s: String) -> String {
    if !s.contains('.') {
        return s;
    }
    let (m, e) = match s.find(['e', 'E']) {
        Some(i) => (s[..i].to_string(), s[i..].to_string()),
        None => (s.clone(), String::new()),
    };
    let m = m.trim_end_matches('0').trim_end_matches('.').to_string();
    m + &e
}

fn fmt_float(v: f64, conv: u8, sp: &Spec) -> SpecBody {
    let neg = v.is_sign_negative() && !v.is_nan();
    let a = v.abs();
    let upper = conv.is_ascii_uppercase();
    let body = if !a.is_finite() {
        let s = if a.is_nan() { "nan" } else { "inf" };
        if upper {
            s.to_uppercase()
        } else {
            s.to_string()
        }
    } else {
        let prec = sp.prec.unwrap_or(6);
        match conv {
            b'f' | b'F' => format!("{a:.prec$}"),
            b'e' | b'E' => fmt_e(a, prec, upper),
            b'a' | b'A' => fmt_e(a, prec, upper), // hex floats are rare; decimal stands in
            _ => {
                let p = if prec == 0 { 1 } else { prec };
                let x = if a == 0.0 {
                    0
                } else {
                    // The exponent after rounding to p significant digits.
                    let e = fmt_e(a, p - 1, false);
                    e.split_once('e')
                        .map_or(0, |(_, x)| x.parse::<i32>().unwrap_or(0))
                };
                let s = if x < -4 || x >= p as i32 {
                    fmt_e(a, p - 1, upper)
                } else {
                    format!("{a:.*}", (p as i32 - 1 - x).max(0) as usize)
                };
                if sp.alt {
                    s
                } else {
                    strip_zeros(s)
                }
            }
        }
    };
    SpecBody {
        prefix: sign_prefix(neg, sp),
        digits: body.into_bytes(),
        numeric: a.is_finite(),
    }
}

/// `%.*g` of one double, as `_gcvt` and `_gcvt_s` write it.
pub fn format_g(v: f64, prec: usize) -> Vec<u8> {
    let sp = Spec {
        prec: Some(prec),
        ..Spec::default()
    };
    let b = fmt_float(v, b'g', &sp);
    let mut out = b.prefix;
    out.extend(b.digits);
    out
}

/// Formats `fmt` (a guest C string) with the va_list at `va`.
pub fn format(mem: &Memory, fmt: u32, va: u32, wide_default: bool) -> Vec<u8> {
    let f = mem.peek_cstr(fmt, 1 << 20).unwrap_or_default();
    format_bytes(mem, &f, va, wide_default)
}

/// Formats a host copy of the format string (`wide_default`: `%s` takes
/// UTF-16 as in the wide functions).
pub fn format_bytes(mem: &Memory, f: &[u8], va: u32, wide_default: bool) -> Vec<u8> {
    let mut args = Args { mem, at: va };
    let mut out = Vec::new();
    let mut i = 0;
    while i < f.len() {
        let c = f[i];
        i += 1;
        if c != b'%' {
            out.push(c);
            continue;
        }
        let mut sp = Spec::default();
        while i < f.len() {
            match f[i] {
                b'-' => sp.left = true,
                b'+' => sp.plus = true,
                b' ' => sp.space = true,
                b'#' => sp.alt = true,
                b'0' => sp.zero = true,
                _ => break,
            }
            i += 1;
        }
        if i < f.len() && f[i] == b'*' {
            let w = args.u32() as i32;
            if w < 0 {
                sp.left = true;
            }
            sp.width = w.unsigned_abs() as usize;
            i += 1;
        } else {
            while i < f.len() && f[i].is_ascii_digit() {
                sp.width = sp.width * 10 + (f[i] - b'0') as usize;
                i += 1;
            }
        }
        if i < f.len() && f[i] == b'.' {
            i += 1;
            let mut p = 0usize;
            if i < f.len() && f[i] == b'*' {
                let v = args.u32() as i32;
                i += 1;
                sp.prec = (v >= 0).then_some(v as usize);
            } else {
                while i < f.len() && f[i].is_ascii_digit() {
                    p = p * 10 + (f[i] - b'0') as usize;
                    i += 1;
                }
                sp.prec = Some(p);
            }
        }
        sp.width = sp.width.min(1 << 16);
        sp.prec = sp.prec.map(|p| p.min(1 << 16));
        // Length: 64-bit for ll / I64 / L (integers), 16 for h, wide for l on s/c.
        let mut long64 = false;
        let mut short = 0u8; // 1 = h, 2 = hh
        let mut wide: Option<bool> = None;
        loop {
            let rest = &f[i.min(f.len())..];
            if rest.starts_with(b"ll") || rest.starts_with(b"I64") {
                long64 = true;
                i += if rest[0] == b'I' { 3 } else { 2 };
            } else if rest.starts_with(b"I32") {
                i += 3;
            } else if rest.starts_with(b"hh") {
                short = 2;
                i += 2;
            } else if rest.first() == Some(&b'h') {
                short = 1;
                wide = Some(false);
                i += 1;
            } else if rest.first() == Some(&b'l') || rest.first() == Some(&b'w') {
                wide = Some(true);
                i += 1;
            } else if matches!(rest.first(), Some(b'L')) {
                long64 = true;
                i += 1;
            } else if matches!(rest.first(), Some(b'z' | b'j' | b't' | b'I')) {
                i += 1;
            } else {
                break;
            }
        }
        let Some(&conv) = f.get(i) else { break };
        i += 1;
        let body = match conv {
            b'%' => {
                out.push(b'%');
                continue;
            }
            b'd' | b'i' => {
                let v: i64 = if long64 {
                    args.u64() as i64
                } else {
                    match short {
                        1 => args.u32() as i16 as i64,
                        2 => args.u32() as i8 as i64,
                        _ => args.u32() as i32 as i64,
                    }
                };
                let mut d = v.unsigned_abs().to_string().into_bytes();
                if let Some(p) = sp.prec {
                    if p == 0 && v == 0 {
                        d.clear();
                    }
                    while d.len() < p {
                        d.insert(0, b'0');
                    }
                }
                SpecBody {
                    prefix: sign_prefix(v < 0, &sp),
                    digits: d,
                    numeric: sp.prec.is_none(),
                }
            }
            b'u' | b'o' | b'x' | b'X' | b'p' => {
                let v: u64 = if long64 {
                    args.u64()
                } else {
                    match short {
                        1 => args.u32() as u16 as u64,
                        2 => args.u32() as u8 as u64,
                        _ => args.u32() as u64,
                    }
                };
                let mut d = match conv {
                    b'u' => v.to_string(),
                    b'o' => format!("{v:o}"),
                    b'x' => format!("{v:x}"),
                    b'X' => format!("{v:X}"),
                    _ => format!("{v:08X}"),
                }
                .into_bytes();
                let mut prefix = Vec::new();
                if let Some(p) = sp.prec {
                    if p == 0 && v == 0 {
                        d.clear();
                    }
                    while d.len() < p {
                        d.insert(0, b'0');
                    }
                }
                if sp.alt && v != 0 {
                    match conv {
                        b'x' => prefix = b"0x".to_vec(),
                        b'X' => prefix = b"0X".to_vec(),
                        b'o' if d.first() != Some(&b'0') => d.insert(0, b'0'),
                        _ => {}
                    }
                }
                SpecBody {
                    prefix,
                    digits: d,
                    numeric: sp.prec.is_none(),
                }
            }
            b'c' | b'C' => {
                let v = args.u32();
                let is_wide = wide.unwrap_or((conv == b'C') != wide_default);
                let d = if is_wide {
                    String::from_utf16_lossy(&[v as u16]).into_bytes()
                } else {
                    vec![v as u8]
                };
                SpecBody {
                    prefix: Vec::new(),
                    digits: d,
                    numeric: false,
                }
            }
            b's' | b'S' => {
                let p = args.u32();
                let is_wide = wide.unwrap_or((conv == b'S') != wide_default);
                let max = sp.prec.unwrap_or(1 << 20);
                let d = if p == 0 {
                    b"(null)".to_vec()
                } else if is_wide {
                    let u = mem.peek_wstr(p, max).unwrap_or_default();
                    String::from_utf16_lossy(&u).into_bytes()
                } else {
                    mem.peek_cstr(p, max).unwrap_or_default()
                };
                SpecBody {
                    prefix: Vec::new(),
                    digits: d,
                    numeric: false,
                }
            }
            b'e' | b'E' | b'f' | b'F' | b'g' | b'G' | b'a' | b'A' => {
                let v = f64::from_bits(args.u64());
                fmt_float(v, conv, &sp)
            }
            // %n would write through a guest pointer: refused, output stops.
            _ => break,
        };
        pad(&mut out, &body, &sp);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{mem, prot};

    /// Lays out a va_list of dwords at 0x10000 and strings at 0x11000.
    fn run(fmt: &str, args: &[u32]) -> String {
        let mut m = Memory::new();
        m.virtual_alloc(
            0x1_0000,
            0x2000,
            mem::RESERVE | mem::COMMIT,
            prot::READWRITE,
        )
        .unwrap();
        for (k, a) in args.iter().enumerate() {
            m.poke_u32(0x1_0000 + 4 * k as u32, *a).unwrap();
        }
        m.poke(0x1_1000, b"str\0").unwrap();
        m.poke(0x1_1100, &[b'w', 0, b'i', 0, 0, 0]).unwrap();
        String::from_utf8(format_bytes(&m, fmt.as_bytes(), 0x1_0000, false)).unwrap()
    }

    fn dbl(v: f64) -> [u32; 2] {
        let b = v.to_bits();
        [b as u32, (b >> 32) as u32]
    }

    #[test]
    fn conversions_case_table() {
        let pi = dbl(3.25159);
        let big = dbl(1234567.0);
        let small = dbl(0.0001234);
        let cases: Vec<(&str, Vec<u32>, &str)> = vec![
            (
                "%d|%i|%u",
                vec![(-5i32) as u32, 7, 0xFFFF_FFFF],
                "-5|7|4294967295",
            ),
            (
                "[%5d][%-5d][%05d][%+d][% d]",
                vec![42, 42, 42, 42, 42],
                "[   42][42   ][00042][+42][ 42]",
            ),
            (
                "%x %X %#x %o %#o",
                vec![255, 255, 255, 8, 8],
                "ff FF 0xff 10 010",
            ),
            ("%.3d|%.0d|%8.3x", vec![7, 0, 10], "007||     00a"),
            (
                "%hd %hhu %lld",
                vec![0x1_FFFF, 0x1FF, 1, 1],
                "-1 255 4294967297",
            ),
            ("%I64x %p", vec![0, 1, 0x1234], "100000000 00001234"),
            (
                "%s|%.2s|%5s|%-5s|",
                vec![0x1_1000, 0x1_1000, 0x1_1000, 0x1_1000],
                "str|st|  str|str  |",
            ),
            ("%S %ls %s", vec![0x1_1100, 0x1_1100, 0], "wi wi (null)"),
            ("%c%c %%", vec![b'o' as u32, b'k' as u32], "ok %"),
            ("%*d|%-*d|%.*s", vec![4, 1, 3, 2, 1, 0x1_1000], "   1|2  |s"),
            (
                "%f %.2f %10.3f",
                vec![pi[0], pi[1], pi[0], pi[1], pi[0], pi[1]],
                "3.251590 3.25      3.252",
            ),
            (
                "%e %E",
                vec![big[0], big[1], small[0], small[1]],
                "1.234567e+06 1.234000E-04",
            ),
            (
                "%g %g %g",
                vec![big[0], big[1], small[0], small[1], pi[0], pi[1]],
                "1.23457e+06 0.0001234 3.25159",
            ),
            (
                "%g %#g",
                vec![dbl(100.0)[0], dbl(100.0)[1], dbl(1.5)[0], dbl(1.5)[1]],
                "100 1.50000",
            ),
            (
                "%5.1f|%-8.2e|",
                vec![dbl(-2.26)[0], dbl(-2.26)[1], dbl(0.0)[0], dbl(0.0)[1]],
                " -2.3|0.00e+00|",
            ),
            ("%n stops", vec![0], ""),
        ];
        for (fmt, args, want) in cases {
            assert_eq!(run(fmt, &args), want, "{fmt}");
        }
    }
}
