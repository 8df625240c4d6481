//! kernel32's national-language and string calls: code pages (ANSI 1252,
//! OEM 437, single-byte but for UTF-8), the locale (en-US, LCID 0x409),
//! the lstr* family, CompareString, and FormatMessage (inserts with printf
//! specs, `%n`/`%0`/`%%` escapes, the system messages of common error codes).
//!
//! Comparison model (CompareString, lstrcmp, lstrcmpi): a two-level sort,
//! first by a primary weight per character (symbols and punctuation, then
//! digits, then letters, each group in code-point order, letters without
//! case), then by case (lowercase before uppercase) unless case is ignored.
//! This is the order Windows' word sort gives for ASCII letters, digits and
//! most punctuation; Windows' special weights (the hyphen and apostrophe
//! ignored, expansions such as "ß") are not modelled.
//!
//! Owns these calls' conventions; must not touch host state.

use super::system::gl_alloc;
use crate::dll::Env;
use crate::files::err;

pub const ACP: u32 = 1252;
pub const OEMCP: u32 = 437;
const CP_UTF8: u32 = 65001;
/// en-US.
pub const LCID: u32 = 0x409;

/// Code pages this model accepts (all single-byte Latin-1 but UTF-8).
pub fn valid_cp(cp: u32) -> bool {
    matches!(cp, 437 | 850 | 1252 | 20127 | 28591 | 65000 | CP_UTF8)
}

pub fn resolve_cp(cp: u32) -> u32 {
    match cp {
        0 | 3 => ACP, // CP_ACP, CP_THREAD_ACP
        1 => OEMCP,   // CP_OEMCP
        2 => ACP,     // CP_MACCP: no Mac code page; the ANSI one
        c => c,
    }
}

/// Bytes per character at most: 4 for UTF-8, 5 for UTF-7, else 1.
fn max_char_size(cp: u32) -> u8 {
    match cp {
        CP_UTF8 => 4,
        65000 => 5,
        _ => 1,
    }
}

/// CPINFO: MaxCharSize, DefaultChar[2], LeadByte[12] (18 bytes).
fn cp_info(env: &mut Env, cp: u32, out: u32) -> bool {
    let cp = resolve_cp(cp);
    if !valid_cp(cp) {
        return env.fail(err::INVALID_PARAMETER, false);
    }
    let mut b = vec![0u8; 18];
    b[0] = max_char_size(cp);
    b[4] = b'?';
    env.mem.poke(out, &b).is_some() || env.fail(998, false)
}

/// The display name Windows gives a code page (GetCPInfoEx's CodePageName).
fn cp_name(cp: u32) -> &'static str {
    match cp {
        437 => "437   (OEM - United States)",
        850 => "850   (OEM - Multilingual Latin I)",
        1252 => "1252  (ANSI - Latin I)",
        20127 => "20127 (US-ASCII)",
        28591 => "28591 (ISO 8859-1 Latin I)",
        65000 => "65000 (UTF-7)",
        _ => "65001 (UTF-8)",
    }
}

/// CPINFOEX: the CPINFO fields, UnicodeDefaultChar, CodePage, CodePageName[260].
fn cp_info_ex(env: &mut Env, cp: u32, flags: u32, out: u32, wide: bool) -> bool {
    let cp = resolve_cp(cp);
    if flags != 0 || !valid_cp(cp) {
        return env.fail(err::INVALID_PARAMETER, false);
    }
    let mut b = vec![0u8; 24];
    b[0] = max_char_size(cp);
    b[4] = b'?';
    b[18] = b'?';
    b[20..24].copy_from_slice(&cp.to_le_bytes());
    if env.mem.poke(out, &b).is_none() {
        return env.fail(998, false);
    }
    let size = if wide { 520 } else { 260 };
    env.mem.poke(out + 24, &vec![0u8; size]);
    env.put_str(out + 24, cp_name(cp), wide);
    true
}

/// GetLocaleInfo's answers for en-US (LCTYPE → text), the only locale modelled.
pub fn locale_text(lctype: u32) -> Option<String> {
    let s = match lctype {
        0x01 => "0409",                    // LOCALE_ILANGUAGE
        0x02 => "English (United States)", // LOCALE_SLANGUAGE
        0x03 => "ENU",                     // LOCALE_SABBREVLANGNAME
        0x04 => "English",                 // LOCALE_SNATIVELANGNAME
        0x05 => "1",                       // LOCALE_ICOUNTRY
        0x06 => "United States",           // LOCALE_SCOUNTRY
        0x07 => "USA",                     // LOCALE_SABBREVCTRYNAME
        0x08 => "United States",           // LOCALE_SNATIVECTRYNAME
        0x09 => "0409",                    // LOCALE_IDEFAULTLANGUAGE
        0x0A => "1",                       // LOCALE_IDEFAULTCOUNTRY
        0x0B => "437",                     // LOCALE_IDEFAULTCODEPAGE
        0x0C => ",",                       // LOCALE_SLIST
        0x0D => "1",                       // LOCALE_IMEASURE (U.S.)
        0x0E => ".",                       // LOCALE_SDECIMAL
        0x0F => ",",                       // LOCALE_STHOUSAND
        0x10 => "3;0",                     // LOCALE_SGROUPING
        0x11 => "2",                       // LOCALE_IDIGITS
        0x12 => "1",                       // LOCALE_ILZERO
        0x13 => "0123456789",              // LOCALE_SNATIVEDIGITS
        0x14 => "$",                       // LOCALE_SCURRENCY
        0x15 => "USD",                     // LOCALE_SINTLSYMBOL
        0x16 => ".",                       // LOCALE_SMONDECIMALSEP
        0x17 => ",",                       // LOCALE_SMONTHOUSANDSEP
        0x18 => "3;0",                     // LOCALE_SMONGROUPING
        0x19 => "2",                       // LOCALE_ICURRDIGITS
        0x1B => "0",                       // LOCALE_ICURRENCY
        0x1C => "0",                       // LOCALE_INEGCURR
        0x1D => "/",                       // LOCALE_SDATE
        0x1E => ":",                       // LOCALE_STIME
        0x1F => "M/d/yyyy",                // LOCALE_SSHORTDATE
        0x20 => "dddd, MMMM d, yyyy",      // LOCALE_SLONGDATE
        0x21 => "0",                       // LOCALE_IDATE
        0x22 => "0",                       // LOCALE_ILDATE
        0x23 => "0",                       // LOCALE_ITIME
        0x28 => "AM",                      // LOCALE_S1159
        0x29 => "PM",                      // LOCALE_S2359
        0x2A..=0x30 => crate::civil::DAY_NAMES[((lctype - 0x2A + 1) % 7) as usize],
        0x31..=0x37 => {
            return Some(
                crate::civil::DAY_NAMES[((lctype - 0x31 + 1) % 7) as usize][..3].to_string(),
            )
        }
        0x38..=0x43 => crate::civil::MONTH_NAMES[(lctype - 0x38) as usize],
        0x44..=0x4F => {
            return Some(crate::civil::MONTH_NAMES[(lctype - 0x44) as usize][..3].to_string())
        }
        0x50 => "",                // LOCALE_SPOSITIVESIGN
        0x51 => "-",               // LOCALE_SNEGATIVESIGN
        0x59 => "en",              // LOCALE_SISO639LANGNAME
        0x5A => "US",              // LOCALE_SISO3166CTRYNAME
        0x5C => "en-US",           // LOCALE_SNAME
        0x1001 => "English",       // LOCALE_SENGLANGUAGE
        0x1002 => "United States", // LOCALE_SENGCOUNTRY
        0x1003 => "h:mm:ss tt",    // LOCALE_STIMEFORMAT
        0x1004 => "1252",          // LOCALE_IDEFAULTANSICODEPAGE
        0x1009 => "1",             // LOCALE_ICALENDARTYPE
        0x100C => "6",             // LOCALE_IFIRSTDAYOFWEEK (Sunday)
        0x100D => "0",             // LOCALE_IFIRSTWEEKOFYEAR
        0x1011 => "10000",         // LOCALE_IDEFAULTMACCODEPAGE
        _ => return None,
    };
    Some(s.to_string())
}

/// GetLocaleInfo(A/W/Ex): the en-US value, as text or (LOCALE_RETURN_NUMBER)
/// a dword; the usual size-query and short-buffer rules.
fn locale_info(env: &mut Env, lcid: u32, lctype: u32, buf: u32, cap: i32, wide: bool) -> i32 {
    const RETURN_NUMBER: u32 = 0x2000_0000;
    // User-override and code-page selector bits do not change en-US answers.
    let kind = lctype & !(0x8000_0000 | RETURN_NUMBER | 0x1000_0000 | 0x4000_0000);
    // en-US, the neutral English LCID (9) and the default/invariant selectors.
    if !matches!(lcid, LCID | 9 | 0 | 0x400 | 0x800 | 0x7F) {
        return env.fail(err::INVALID_PARAMETER, 0);
    }
    let Some(text) = locale_text(kind) else {
        return env.fail(1004, 0); // ERROR_INVALID_FLAGS
    };
    if lctype & RETURN_NUMBER != 0 {
        let Ok(n) = text.parse::<u32>() else {
            return env.fail(1004, 0);
        };
        // The size is in characters: a dword is 2 of them wide, 4 narrow.
        let need = if wide { 2 } else { 4 };
        if cap == 0 {
            return need;
        }
        if cap < need || env.mem.poke_u32(buf, n).is_none() {
            return env.fail(err::INSUFFICIENT_BUFFER, 0);
        }
        return need;
    }
    put_counted(env, buf, cap, &text, wide)
}

/// The NLS convention for a text answer: `cap` 0 asks for the size (in
/// characters, with the NUL); a short buffer is ERROR_INSUFFICIENT_BUFFER
/// and 0; otherwise the text and its size.
pub(super) fn put_counted(env: &mut Env, buf: u32, cap: i32, text: &str, wide: bool) -> i32 {
    let need = text.encode_utf16().count() as i32 + 1;
    if cap == 0 {
        return need;
    }
    if cap < need || buf == 0 {
        return env.fail(err::INSUFFICIENT_BUFFER, 0);
    }
    env.put_str(buf, text, wide);
    need
}

/// The units of a string argument: `n` of them, or through the NUL (excluded) when `n` < 0.
pub fn units(env: &Env, p: u32, n: i32, wide: bool) -> Option<Vec<u16>> {
    if n < 0 {
        return if wide {
            env.mem.peek_wstr(p, 1 << 20)
        } else {
            env.mem
                .peek_cstr(p, 1 << 20)
                .map(|b| b.iter().map(|&c| c as u16).collect())
        };
    }
    let size = if wide { 2 } else { 1 };
    let b = env.read_bytes(p, n as u32 * size)?;
    Some(if wide {
        b.chunks(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect()
    } else {
        b.iter().map(|&c| c as u16).collect()
    })
}

pub fn lower(u: u16) -> u16 {
    char::from_u32(u as u32)
        .and_then(|c| c.to_lowercase().next())
        .map_or(u, |c| if (c as u32) < 0x1_0000 { c as u16 } else { u })
}

/// The primary weight of a character (see the module comment).
pub fn primary(u: u16) -> u32 {
    let c = char::from_u32(u as u32).unwrap_or('\u{FFFD}');
    if c.is_alphabetic() {
        0x3_0000 + lower(u) as u32
    } else if c.is_ascii_digit() {
        0x2_0000 + u as u32
    } else {
        0x1_0000 + u as u32
    }
}

/// Compares two strings: -1, 0 or 1.
pub fn compare(a: &[u16], b: &[u16], ignore_case: bool) -> i32 {
    let pa = a.iter().map(|&u| primary(u));
    let pb = b.iter().map(|&u| primary(u));
    match pa.cmp(pb) {
        std::cmp::Ordering::Less => return -1,
        std::cmp::Ordering::Greater => return 1,
        _ => {}
    }
    if ignore_case {
        return 0;
    }
    // Same letters: the first case difference decides, lowercase first.
    for (&x, &y) in a.iter().zip(b) {
        if x != y {
            let (lx, ly) = (lower(x) == x, lower(y) == y);
            return if lx && !ly {
                -1
            } else if !lx && ly {
                1
            } else {
                (x as i32 - y as i32).signum()
            };
        }
    }
    0
}

/// NORM_IGNORECASE and LINGUISTIC_IGNORECASE.
const IGNORECASE: u32 = 0x1 | 0x10;

#[allow(clippy::too_many_arguments)]
fn compare_string(
    env: &mut Env,
    flags: u32,
    s1: u32,
    n1: i32,
    s2: u32,
    n2: i32,
    wide: bool,
) -> u32 {
    let (Some(a), Some(b)) = (units(env, s1, n1, wide), units(env, s2, n2, wide)) else {
        return env.fail(err::INVALID_PARAMETER, 0);
    };
    (compare(&a, &b, flags & IGNORECASE != 0) + 2) as u32
}

fn lstrcmp(env: &mut Env, s1: u32, s2: u32, wide: bool, ignore_case: bool) -> i32 {
    // NULL sorts before every string (lstrcmp does not fault on it).
    match (units(env, s1, -1, wide), units(env, s2, -1, wide)) {
        (Some(a), Some(b)) => compare(&a, &b, ignore_case),
        (None, Some(_)) => -1,
        (Some(_), None) => 1,
        (None, None) => 0,
    }
}

fn lstrlen(env: &mut Env, s: u32, wide: bool) -> u32 {
    units(env, s, -1, wide).map_or(0, |u| u.len() as u32)
}

/// lstrcpyn: at most `n - 1` units and a NUL.
fn lstrcpyn(env: &mut Env, dst: u32, src: u32, n: i32, wide: bool) -> u32 {
    if n <= 0 {
        return dst;
    }
    let Some(mut u) = units(env, src, -1, wide) else {
        return 0;
    };
    u.truncate(n as usize - 1);
    put_units(env, dst, &u, wide);
    dst
}

fn put_units(env: &mut Env, dst: u32, u: &[u16], wide: bool) -> Option<()> {
    let b: Vec<u8> = if wide {
        u.iter().chain([&0]).flat_map(|x| x.to_le_bytes()).collect()
    } else {
        u.iter().chain([&0]).map(|&x| x as u8).collect()
    };
    env.mem.poke(dst, &b)
}

fn lstrcat(env: &mut Env, dst: u32, src: u32, wide: bool) -> u32 {
    let (Some(mut a), Some(b)) = (units(env, dst, -1, wide), units(env, src, -1, wide)) else {
        return 0;
    };
    a.extend(b);
    put_units(env, dst, &a, wide);
    dst
}

fn lstrcpy(env: &mut Env, dst: u32, src: u32, wide: bool) -> u32 {
    let Some(u) = units(env, src, -1, wide) else {
        return 0;
    };
    match put_units(env, dst, &u, wide) {
        Some(()) => dst,
        None => 0,
    }
}

/// The English text of a system error code (FORMAT_MESSAGE_FROM_SYSTEM).
pub fn system_message(code: u32) -> Option<&'static str> {
    Some(match code {
        0 => "The operation completed successfully.\r\n",
        1 => "Incorrect function.\r\n",
        2 => "The system cannot find the file specified.\r\n",
        3 => "The system cannot find the path specified.\r\n",
        4 => "The system cannot open the file.\r\n",
        5 => "Access is denied.\r\n",
        6 => "The handle is invalid.\r\n",
        8 => "Not enough memory resources are available to process this command.\r\n",
        15 => "The system cannot find the drive specified.\r\n",
        18 => "There are no more files.\r\n",
        32 => "The process cannot access the file because it is being used by another process.\r\n",
        80 => "The file exists.\r\n",
        87 => "The parameter is incorrect.\r\n",
        122 => "The data area passed to a system call is too small.\r\n",
        123 => "The filename, directory name, or volume label syntax is incorrect.\r\n",
        126 => "The specified module could not be found.\r\n",
        127 => "The specified procedure could not be found.\r\n",
        145 => "The directory is not empty.\r\n",
        183 => "Cannot create a file when that file already exists.\r\n",
        203 => "The system could not find the environment option that was entered.\r\n",
        _ => return None,
    })
}

pub mod fm {
    pub const ALLOCATE_BUFFER: u32 = 0x100;
    pub const IGNORE_INSERTS: u32 = 0x200;
    pub const FROM_STRING: u32 = 0x400;
    pub const FROM_HMODULE: u32 = 0x800;
    pub const FROM_SYSTEM: u32 = 0x1000;
    pub const ARGUMENT_ARRAY: u32 = 0x2000;
    pub const MAX_WIDTH_MASK: u32 = 0xFF;
}

/// Expands a message: inserts `%1`..`%99` (with an optional `!spec!`
/// printf conversion, `s` by default), `%n` (CRLF), `%0` (end, no newline),
/// `%` before any other character (that character). `arg(k)` is the
/// address of argument k (1-based). `None`: an insert with no arguments.
pub fn expand(
    env: &Env,
    text: &str,
    flags: u32,
    arg: &dyn Fn(u32) -> Option<u32>,
    wide: bool,
) -> Option<String> {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    let width = flags & fm::MAX_WIDTH_MASK;
    while i < c.len() {
        let ch = c[i];
        i += 1;
        if ch != '%' {
            // MAX_WIDTH_MASK: the text's own line breaks become spaces.
            if width == fm::MAX_WIDTH_MASK && (ch == '\r' || ch == '\n') {
                if ch == '\r' && c.get(i) == Some(&'\n') {
                    i += 1;
                }
                out.push(' ');
            } else {
                out.push(ch);
            }
            continue;
        }
        let Some(&e) = c.get(i) else {
            break;
        };
        i += 1;
        match e {
            '0' => return Some(out),
            'n' => out.push_str("\r\n"),
            '1'..='9' => {
                let mut k = e as u32 - '0' as u32;
                if let Some(d) = c.get(i).and_then(|d| d.to_digit(10)) {
                    k = k * 10 + d;
                    i += 1;
                }
                let mut spec = String::from("s");
                if c.get(i) == Some(&'!') {
                    if let Some(end) = c[i + 1..].iter().position(|&x| x == '!') {
                        spec = c[i + 1..i + 1 + end].iter().collect();
                        i += end + 2;
                    }
                }
                if flags & fm::IGNORE_INSERTS != 0 {
                    out.push('%');
                    out.push_str(&k.to_string());
                    if spec != "s" {
                        out.push('!');
                        out.push_str(&spec);
                        out.push('!');
                    }
                    continue;
                }
                let va = arg(k)?;
                let f = format!("%{spec}");
                let b = crate::dll::printf::format_bytes(&env.mem, f.as_bytes(), va, wide);
                if wide {
                    out.push_str(&String::from_utf8_lossy(&b));
                } else {
                    out.extend(b.iter().map(|&x| x as char));
                }
            }
            other => out.push(other),
        }
    }
    Some(out)
}

#[allow(clippy::too_many_arguments)]
fn format_message(
    env: &mut Env,
    flags: u32,
    source: u32,
    id: u32,
    lang: u32,
    buf: u32,
    size: u32,
    args: u32,
    wide: bool,
) -> u32 {
    let text = if flags & fm::FROM_STRING != 0 {
        match env.read_str(source, wide) {
            Some(t) => t,
            None => return env.fail(err::INVALID_PARAMETER, 0),
        }
    } else if flags & (fm::FROM_HMODULE | fm::FROM_SYSTEM) != 0 {
        // The module's message table first (FROM_HMODULE), then the
        // system's (FROM_SYSTEM).
        let module = if flags & fm::FROM_HMODULE != 0 {
            Some(super::resource::message(env, source, id, lang))
        } else {
            None
        };
        match module {
            Some(Ok(t)) => t,
            Some(Err(e)) if flags & fm::FROM_SYSTEM == 0 => return env.fail(e, 0),
            _ => match system_message(id) {
                Some(t) => t.to_string(),
                None => return env.fail(super::resource::ERROR_MR_MID_NOT_FOUND, 0),
            },
        }
    } else {
        return env.fail(err::INVALID_PARAMETER, 0);
    };
    let array = flags & fm::ARGUMENT_ARRAY != 0;
    // A va_list* (the va_list's current position) or an array of dwords.
    let base = if args == 0 {
        None
    } else if array {
        Some(args)
    } else {
        env.mem.peek_u32(args)
    };
    let arg = |k: u32| base.map(|b| b + 4 * (k - 1));
    let Some(out) = expand(env, &text, flags, &arg, wide) else {
        return env.fail(err::INVALID_PARAMETER, 0);
    };
    let units = if wide {
        out.encode_utf16().count()
    } else {
        out.chars().count()
    } as u32;
    let unit = if wide { 2 } else { 1 };
    if flags & fm::ALLOCATE_BUFFER != 0 {
        let a = gl_alloc(env, 0, (units + 1).max(size) * unit);
        if a == 0 {
            return 0;
        }
        env.put_str(a, &out, wide);
        env.mem.poke_u32(buf, a);
    } else {
        if units + 1 > size {
            return env.fail(err::INSUFFICIENT_BUFFER, 0);
        }
        env.put_str(buf, &out, wide);
    }
    env.last_error = 0;
    units
}

crate::dll! { "(kernel32 nls)";
    stdcall fn GetACP(env) -> u32 { ACP }
    stdcall fn GetOEMCP(env) -> u32 { OEMCP }
    stdcall fn IsValidCodePage(env, cp: u32) -> bool { valid_cp(cp) }
    stdcall fn GetCPInfo(env, cp: u32, out: u32) -> bool { cp_info(env, cp, out) }
    stdcall fn GetLocaleInfoA(env, lcid: u32, lctype: u32, buf: u32, cap: i32) -> i32 { locale_info(env, lcid, lctype, buf, cap, false) }
    stdcall fn GetLocaleInfoW(env, lcid: u32, lctype: u32, buf: u32, cap: i32) -> i32 { locale_info(env, lcid, lctype, buf, cap, true) }
    stdcall fn GetLocaleInfoEx(env, name: u32, lctype: u32, buf: u32, cap: i32) -> i32 {
        // en-US, the invariant locale (""), or NULL (the user's): all answer en-US.
        let ok = env.read_w(name).is_none_or(|n| n.is_empty() || n.eq_ignore_ascii_case("en-US"));
        if !ok { return env.fail(err::INVALID_PARAMETER, 0); }
        locale_info(env, LCID, lctype, buf, cap, true)
    }
    stdcall fn GetCPInfoExA(env, cp: u32, flags: u32, out: u32) -> bool { cp_info_ex(env, cp, flags, out, false) }
    stdcall fn GetCPInfoExW(env, cp: u32, flags: u32, out: u32) -> bool { cp_info_ex(env, cp, flags, out, true) }
    stdcall fn GetUserDefaultLCID(env) -> u32 { LCID }
    stdcall fn GetSystemDefaultLCID(env) -> u32 { LCID }
    stdcall fn GetUserDefaultLangID(env) -> u32 { LCID }
    stdcall fn GetSystemDefaultLangID(env) -> u32 { LCID }
    stdcall fn GetUserDefaultUILanguage(env) -> u32 { LCID }
    stdcall fn GetSystemDefaultUILanguage(env) -> u32 { LCID }
    stdcall fn GetThreadLocale(env) -> u32 { LCID }
    stdcall fn SetThreadLocale(env, lcid: u32) -> bool { lcid == LCID || env.fail(err::INVALID_PARAMETER, false) }
    stdcall fn IsValidLocale(env, lcid: u32, flags: u32) -> bool { lcid == LCID || lcid == 0x400 || lcid == 0x800 }
    stdcall fn lstrlenA(env, s: u32) -> u32 { lstrlen(env, s, false) }
    stdcall fn lstrlenW(env, s: u32) -> u32 { lstrlen(env, s, true) }
    stdcall fn lstrcpyA(env, d: u32, s: u32) -> u32 { lstrcpy(env, d, s, false) }
    stdcall fn lstrcpyW(env, d: u32, s: u32) -> u32 { lstrcpy(env, d, s, true) }
    stdcall fn lstrcpynA(env, d: u32, s: u32, n: i32) -> u32 { lstrcpyn(env, d, s, n, false) }
    stdcall fn lstrcpynW(env, d: u32, s: u32, n: i32) -> u32 { lstrcpyn(env, d, s, n, true) }
    stdcall fn lstrcatA(env, d: u32, s: u32) -> u32 { lstrcat(env, d, s, false) }
    stdcall fn lstrcatW(env, d: u32, s: u32) -> u32 { lstrcat(env, d, s, true) }
    stdcall fn lstrcmpA(env, a: u32, b: u32) -> i32 { lstrcmp(env, a, b, false, false) }
    stdcall fn lstrcmpW(env, a: u32, b: u32) -> i32 { lstrcmp(env, a, b, true, false) }
    stdcall fn lstrcmpiA(env, a: u32, b: u32) -> i32 { lstrcmp(env, a, b, false, true) }
    stdcall fn lstrcmpiW(env, a: u32, b: u32) -> i32 { lstrcmp(env, a, b, true, true) }
    stdcall fn CompareStringA(env, lcid: u32, flags: u32, s1: u32, n1: i32, s2: u32, n2: i32) -> u32 {
        compare_string(env, flags, s1, n1, s2, n2, false)
    }
    stdcall fn CompareStringW(env, lcid: u32, flags: u32, s1: u32, n1: i32, s2: u32, n2: i32) -> u32 {
        compare_string(env, flags, s1, n1, s2, n2, true)
    }
    stdcall fn CompareStringEx(env, name: u32, flags: u32, s1: u32, n1: i32, s2: u32, n2: i32, v: u32, r: u32, p: u32) -> u32 {
        compare_string(env, flags, s1, n1, s2, n2, true)
    }
    stdcall fn CompareStringOrdinal(env, s1: u32, n1: i32, s2: u32, n2: i32, ignore_case: bool) -> u32 {
        let (Some(a), Some(b)) = (units(env, s1, n1, true), units(env, s2, n2, true)) else {
            return env.fail(err::INVALID_PARAMETER, 0);
        };
        let f = |u: &u16| if ignore_case { crate::dll::kernel32::nls::upper(*u) } else { *u };
        (a.iter().map(f).cmp(b.iter().map(f)) as i32 + 2) as u32
    }
    stdcall fn FormatMessageA(env, flags: u32, source: u32, id: u32, lang: u32, buf: u32, size: u32, args: u32) -> u32 {
        format_message(env, flags, source, id, lang, buf, size, args, false)
    }
    stdcall fn FormatMessageW(env, flags: u32, source: u32, id: u32, lang: u32, buf: u32, size: u32, args: u32) -> u32 {
        format_message(env, flags, source, id, lang, buf, size, args, true)
    }
}

/// Simple uppercase mapping of one UTF-16 unit (one-to-one mappings only).
pub fn upper(u: u16) -> u16 {
    char::from_u32(u as u32)
        .filter(|c| c.to_uppercase().count() == 1)
        .and_then(|c| c.to_uppercase().next())
        .map_or(u, |c| if (c as u32) < 0x1_0000 { c as u16 } else { u })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    #[test]
    fn locale_day_and_month_names() {
        // LOCALE_SDAYNAME1 (2Ah) is Monday, SDAYNAME7 (30h) Sunday.
        let t = |x| locale_text(x).unwrap();
        assert_eq!(
            (t(0x2A), t(0x30), t(0x31), t(0x37)),
            ("Monday".into(), "Sunday".into(), "Mon".into(), "Sun".into())
        );
        assert_eq!(
            (t(0x38), t(0x43), t(0x44), t(0x4F)),
            (
                "January".into(),
                "December".into(),
                "Jan".into(),
                "Dec".into()
            )
        );
    }

    #[test]
    fn word_sort_order() {
        // Case-insensitive first, then lowercase before uppercase.
        assert_eq!(compare(&w("apple"), &w("Banana"), false), -1);
        assert_eq!(compare(&w("a"), &w("A"), false), -1);
        assert_eq!(compare(&w("A"), &w("a"), true), 0);
        assert_eq!(compare(&w("abc"), &w("ab"), false), 1);
        // Punctuation, then digits, then letters.
        assert_eq!(compare(&w("_x"), &w("1x"), false), -1);
        assert_eq!(compare(&w("9"), &w("a"), false), -1);
        assert_eq!(compare(&w("/C"), &w("/c"), true), 0);
    }

    #[test]
    fn locale_info_en_us() {
        let mut env = Env::new(crate::memory::Memory::new());
        env.process_heap = env.new_heap();
        let buf = env.alloc(64);
        assert_eq!(locale_info(&mut env, LCID, 0x1004, buf, 0, false), 5);
        assert_eq!(locale_info(&mut env, LCID, 0x1004, buf, 64, false), 5);
        assert_eq!(env.read_a(buf).as_deref(), Some("1252"));
        assert_eq!(locale_info(&mut env, 0x400, 0x2A + 6, buf, 64, true), 7);
        assert_eq!(env.read_w(buf).as_deref(), Some("Sunday"));
        assert_eq!(locale_info(&mut env, LCID, 0x44 + 8, buf, 64, true), 4);
        assert_eq!(env.read_w(buf).as_deref(), Some("Sep"));
        // LOCALE_RETURN_NUMBER: a dword, 2 wide characters.
        assert_eq!(locale_info(&mut env, LCID, 0x2000_000B, buf, 64, true), 2);
        assert_eq!(env.mem.peek_u32(buf), Some(437));
        assert_eq!(locale_info(&mut env, LCID, 0x1F, buf, 3, true), 0);
        assert_eq!(env.last_error, err::INSUFFICIENT_BUFFER);
        assert_eq!(locale_info(&mut env, LCID, 0x7777, buf, 64, true), 0);
        assert_eq!(env.last_error, 1004);
        assert_eq!(locale_info(&mut env, 0x407, 0x2, buf, 64, true), 0);
        assert_eq!(env.last_error, err::INVALID_PARAMETER);
    }

    #[test]
    fn format_message_inserts() {
        let mut env = Env::new(crate::memory::Memory::new());
        let a = env
            .mem
            .virtual_alloc(
                0,
                0x1000,
                crate::memory::mem::RESERVE | crate::memory::mem::COMMIT,
                crate::memory::prot::READWRITE,
            )
            .unwrap();
        // Arguments: 42, a pointer to "xy", 255.
        env.mem.poke(a + 0x100, b"xy\0");
        for (k, v) in [42u32, a + 0x100, 255].iter().enumerate() {
            env.mem.poke_u32(a + 4 * k as u32, *v);
        }
        let arg = |k: u32| Some(a + 4 * (k - 1));
        let got = expand(
            &env,
            "n=%1!d! s=%2 x=%3!02x!%n100%% %.%0tail",
            0,
            &arg,
            false,
        )
        .unwrap();
        assert_eq!(got, "n=42 s=xy x=ff\r\n100% .");
        let kept = expand(&env, "%1 and %2!d!", fm::IGNORE_INSERTS, &|_| None, false).unwrap();
        assert_eq!(kept, "%1 and %2!d!");
        assert!(expand(&env, "%1", 0, &|_| None, false).is_none());
        assert_eq!(expand(&env, "a\r\nb", 0xFF, &arg, false).unwrap(), "a b");
    }
}
