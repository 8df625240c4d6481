//! The C runtime's scanf family over strings and FILE streams, narrow and
//! wide: conversions `d i u o x X p n c s [ e f g a`, widths, `*`, lengths
//! `hh h l ll I64 L`. Shared by msvcrt and ucrtbase (whose
//! `__stdio_common_v*scanf` call the same engine).
//!
//! Owns the matching rules; stores go through the pointers in the guest
//! va_list. It must not read streams except through stdio's getc/ungetc.

use super::misc::{parse_float, parse_int};
use crate::dll::Env;

/// Where scanf reads from.
pub enum Source {
    Str { units: Vec<u16>, pos: usize },
    File(u32),
}

impl Source {
    fn next(&mut self, env: &mut Env) -> Option<u16> {
        match self {
            Source::Str { units, pos } => {
                let c = units.get(*pos).copied();
                if c.is_some() {
                    *pos += 1;
                }
                c
            }
            Source::File(f) => super::stdio::getc(env, *f).map(u16::from),
        }
    }
    fn unget(&mut self, env: &mut Env, c: u16) {
        match self {
            Source::Str { pos, .. } => *pos -= 1,
            Source::File(f) => {
                super::stdio::ungetc(env, c as i32, *f);
            }
        }
    }
}

fn is_space(c: u16) -> bool {
    matches!(c, 0x20 | 0x09..=0x0D)
}

/// Runs a scanf format over `src`; returns the assignment count or -1.
#[allow(unused_assignments)]
pub fn scan(env: &mut Env, src: &mut Source, fmt: &[u16], va: u32, wide_default: bool) -> i32 {
    let mut args = va;
    let mut next_arg = |env: &mut Env| {
        let p = env.mem.peek_u32(args).unwrap_or(0);
        args += 4;
        p
    };
    let mut assigned = 0;
    let mut consumed = 0u32;
    let mut i = 0;
    let mut any_input = false;
    macro_rules! getc {
        () => {{
            let c = src.next(env);
            if c.is_some() {
                consumed += 1;
                any_input = true;
            }
            c
        }};
    }
    macro_rules! ungetc {
        ($c:expr) => {{
            src.unget(env, $c);
            consumed -= 1;
        }};
    }
    while i < fmt.len() {
        let f = fmt[i];
        i += 1;
        if is_space(f) {
            loop {
                match getc!() {
                    Some(c) if is_space(c) => {}
                    Some(c) => {
                        ungetc!(c);
                        break;
                    }
                    None => break,
                }
            }
            continue;
        }
        if f != b'%' as u16 || fmt.get(i) == Some(&(b'%' as u16)) {
            if f == b'%' as u16 {
                i += 1;
            }
            // Literal (leading whitespace before %% is skipped).
            let mut c = getc!();
            if f == b'%' as u16 {
                while let Some(x) = c.filter(|&x| is_space(x)) {
                    let _ = x;
                    c = getc!();
                }
            }
            match c {
                Some(c) if c == f => continue,
                Some(c) => {
                    ungetc!(c);
                    return assigned;
                }
                None => {
                    return if assigned == 0 && !any_input {
                        -1
                    } else {
                        assigned
                    }
                }
            }
        }
        let suppress = fmt.get(i) == Some(&(b'*' as u16));
        if suppress {
            i += 1;
        }
        let mut width = 0usize;
        while let Some(&d) = fmt.get(i).filter(|&&d| (0x30..=0x39).contains(&d)) {
            width = width * 10 + (d - 0x30) as usize;
            i += 1;
        }
        let mut size = 0u8; // 1 hh, 2 h, 4 l, 8 ll/I64, 10 L
        let mut wide: Option<bool> = None;
        loop {
            let rest: String = fmt[i..].iter().take(3).map(|&c| c as u8 as char).collect();
            if rest.starts_with("hh") {
                size = 1;
                i += 2;
            } else if rest.starts_with('h') {
                size = 2;
                wide = Some(false);
                i += 1;
            } else if rest.starts_with("ll") || rest.starts_with("I64") {
                size = 8;
                i += if rest.starts_with('I') { 3 } else { 2 };
            } else if rest.starts_with("I32") {
                size = 4;
                i += 3;
            } else if rest.starts_with('l') || rest.starts_with('w') {
                size = 4;
                wide = Some(true);
                i += 1;
            } else if rest.starts_with('L') {
                size = 10;
                i += 1;
            } else if rest.starts_with(['z', 'j', 't', 'I']) {
                i += 1;
            } else {
                break;
            }
        }
        let Some(&conv) = fmt.get(i) else { break };
        i += 1;
        let conv = conv as u8;
        if conv == b'n' {
            if !suppress {
                let p = next_arg(env);
                env.mem.poke_u32(p, consumed);
            }
            continue;
        }
        // Every conversion but %c and %[ skips leading whitespace.
        if conv != b'c' && conv != b'[' {
            loop {
                match getc!() {
                    Some(c) if is_space(c) => {}
                    Some(c) => {
                        ungetc!(c);
                        break;
                    }
                    None => return if assigned == 0 { -1 } else { assigned },
                }
            }
        }
        match conv {
            b'd' | b'i' | b'u' | b'o' | b'x' | b'X' | b'p' => {
                let base = match conv {
                    b'd' | b'u' => 10,
                    b'i' => 0,
                    b'o' => 8,
                    _ => 16,
                };
                let max = if width == 0 { usize::MAX } else { width };
                let mut text: Vec<u16> = Vec::new();
                while text.len() < max {
                    match getc!() {
                        Some(c) => {
                            let ok = match c as u8 as char {
                                '+' | '-' => text.is_empty(),
                                'x' | 'X' => {
                                    base != 10
                                        && base != 8
                                        && matches!(text.as_slice(), [0x30] | [_, 0x30])
                                }
                                ch => c < 0x80 && ch.is_digit(if base == 0 { 16 } else { base }),
                            };
                            if ok {
                                text.push(c);
                            } else {
                                ungetc!(c);
                                break;
                            }
                        }
                        None => break,
                    }
                }
                let (v, used, _) = parse_int(&text, base, 64, conv == b'd' || conv == b'i');
                if used == 0 {
                    return if assigned == 0 && text.is_empty() && !any_input {
                        -1
                    } else {
                        assigned
                    };
                }
                if !suppress {
                    let p = next_arg(env);
                    match size {
                        1 => env.mem.poke(p, &[v as u8]),
                        2 => env.mem.poke(p, &(v as u16).to_le_bytes()),
                        8 => env.mem.poke(p, &v.to_le_bytes()),
                        _ => env.mem.poke_u32(p, v as u32),
                    };
                    assigned += 1;
                }
            }
            b'e' | b'E' | b'f' | b'F' | b'g' | b'G' | b'a' | b'A' => {
                let max = if width == 0 { usize::MAX } else { width };
                let mut text: Vec<u16> = Vec::new();
                while text.len() < max {
                    match getc!() {
                        Some(c)
                            if c < 0x80 && (c as u8 as char).is_ascii_alphanumeric()
                                || matches!(c, 0x2B | 0x2D | 0x2E) =>
                        {
                            text.push(c)
                        }
                        Some(c) => {
                            ungetc!(c);
                            break;
                        }
                        None => break,
                    }
                }
                let (v, used) = parse_float(&text);
                // Give back what the number did not use.
                for &c in text[used..].iter().rev() {
                    ungetc!(c);
                }
                if used == 0 {
                    return assigned;
                }
                if !suppress {
                    let p = next_arg(env);
                    if size == 4 || size == 8 || size == 10 {
                        env.mem.poke(p, &v.to_le_bytes());
                    } else {
                        env.mem.poke(p, &(v as f32).to_le_bytes());
                    }
                    assigned += 1;
                }
            }
            b'c' | b'C' => {
                let n = if width == 0 { 1 } else { width };
                let w = wide.unwrap_or((conv == b'C') != wide_default);
                let mut got = Vec::new();
                while got.len() < n {
                    match getc!() {
                        Some(c) => got.push(c),
                        None => break,
                    }
                }
                if got.is_empty() {
                    return if assigned == 0 { -1 } else { assigned };
                }
                if !suppress {
                    let p = next_arg(env);
                    super::string::put_units(env, p, &got, false, w);
                    assigned += 1;
                }
            }
            b's' | b'S' | b'[' => {
                let w = wide.unwrap_or((conv == b'S') != wide_default);
                let (set, neg) = if conv == b'[' {
                    let neg = fmt.get(i) == Some(&(b'^' as u16));
                    if neg {
                        i += 1;
                    }
                    let mut set = Vec::new();
                    if fmt.get(i) == Some(&(b']' as u16)) {
                        set.push((b']' as u16, b']' as u16));
                        i += 1;
                    }
                    while let Some(&c) = fmt.get(i) {
                        i += 1;
                        if c == b']' as u16 {
                            break;
                        }
                        if fmt.get(i) == Some(&(b'-' as u16))
                            && fmt.get(i + 1).is_some_and(|&e| e != b']' as u16)
                        {
                            set.push((c, fmt[i + 1]));
                            i += 2;
                        } else {
                            set.push((c, c));
                        }
                    }
                    (Some(set), neg)
                } else {
                    (None, false)
                };
                let max = if width == 0 { usize::MAX } else { width };
                let mut got = Vec::new();
                while got.len() < max {
                    match getc!() {
                        Some(c) => {
                            let ok = match &set {
                                Some(s) => s.iter().any(|&(a, b)| a <= c && c <= b) != neg,
                                None => !is_space(c),
                            };
                            if ok {
                                got.push(c);
                            } else {
                                ungetc!(c);
                                break;
                            }
                        }
                        None => break,
                    }
                }
                if got.is_empty() {
                    return if assigned == 0 && set.is_none() {
                        -1
                    } else {
                        assigned
                    };
                }
                if !suppress {
                    let p = next_arg(env);
                    super::string::put_units(env, p, &got, true, w);
                    assigned += 1;
                }
            }
            _ => return assigned,
        }
    }
    assigned
}

/// sscanf-style call over a guest string.
pub fn sscanf(env: &mut Env, s: u32, fmt: u32, va: u32, wide: bool) -> i32 {
    if s == 0 || fmt == 0 {
        super::fd::set_errno(env, super::fd::errno::EINVAL);
        return -1;
    }
    let units = super::string::units(env, s, wide);
    let f = super::string::units(env, fmt, wide);
    let mut src = Source::Str { units, pos: 0 };
    scan(env, &mut src, &f, va, wide)
}

/// fscanf-style call over a stream.
pub fn fscanf(env: &mut Env, file: u32, fmt: u32, va: u32, wide: bool) -> i32 {
    let f = super::string::units(env, fmt, wide);
    let mut src = Source::File(file);
    scan(env, &mut src, &f, va, wide)
}

crate::dll! { "(crt scanf)";
    cdecl fn sscanf(env, s: u32, fmt: u32) -> i32 { sscanf(env, s, fmt, env.arg_base + 8, false) }
    cdecl fn swscanf(env, s: u32, fmt: u32) -> i32 { sscanf(env, s, fmt, env.arg_base + 8, true) }
    cdecl fn sscanf_s(env, s: u32, fmt: u32) -> i32 { sscanf(env, s, fmt, env.arg_base + 8, false) }
    cdecl fn vsscanf(env, s: u32, fmt: u32, va: u32) -> i32 { sscanf(env, s, fmt, va, false) }
    cdecl fn fscanf(env, file: u32, fmt: u32) -> i32 { fscanf(env, file, fmt, env.arg_base + 8, false) }
    cdecl fn fwscanf(env, file: u32, fmt: u32) -> i32 { fscanf(env, file, fmt, env.arg_base + 8, true) }
    cdecl fn scanf(env, fmt: u32) -> i32 { let f = super::stdio::stdin_file(env); fscanf(env, f, fmt, env.arg_base + 4, false) }
    cdecl fn wscanf(env, fmt: u32) -> i32 { let f = super::stdio::stdin_file(env); fscanf(env, f, fmt, env.arg_base + 4, true) }
}
