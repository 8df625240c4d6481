//! The C runtime's <time.h>: time, clock, localtime/gmtime (UTC: the guest
//! has no time zone), mktime, strftime, asctime/ctime, _strdate/_strtime,
//! _ftime, in their 32- and 64-bit forms. Shared by msvcrt and ucrtbase.
//!
//! Owns `struct tm` and the formats; time itself is the guest clock
//! (`Env::guest_filetime`), never the host's.

use crate::civil::{self, Civil};
use crate::dll::{Env, Ret};

fn now_secs(env: &Env) -> i64 {
    (env.guest_filetime() - civil::UNIX_EPOCH) as i64 / civil::TICKS as i64
}

fn put_time(env: &mut Env, out: u32, t: i64, wide64: bool) {
    if out != 0 {
        if wide64 {
            env.mem.poke(out, &t.to_le_bytes());
        } else {
            env.mem.poke_u32(out, t as u32);
        }
    }
}

fn read_time(env: &Env, p: u32, wide64: bool) -> Option<i64> {
    if wide64 {
        let mut b = [0u8; 8];
        env.mem.peek(p, &mut b)?;
        Some(i64::from_le_bytes(b))
    } else {
        env.mem.peek_u32(p).map(|v| v as i32 as i64)
    }
}

/// `struct tm` (9 ints).
fn tm_bytes(c: &Civil) -> Vec<u8> {
    let v = [
        c.second as i32,
        c.minute as i32,
        c.hour as i32,
        c.day as i32,
        c.month as i32 - 1,
        (c.year - 1900) as i32,
        c.weekday as i32,
        c.yday as i32,
        0,
    ];
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn read_tm(env: &Env, p: u32) -> Option<[i32; 9]> {
    let mut b = [0u8; 36];
    env.mem.peek(p, &mut b)?;
    let mut v = [0i32; 9];
    for (k, x) in v.iter_mut().enumerate() {
        *x = i32::from_le_bytes(b[4 * k..4 * k + 4].try_into().expect("4"));
    }
    Some(v)
}

/// The per-thread `struct tm` localtime/gmtime return.
fn tm_buf(env: &mut Env) -> u32 {
    let tid = env.thread_id();
    super::misc::static_buf(env, &format!("tm {tid}"), 36)
}

fn localtime(env: &mut Env, p: u32, wide64: bool) -> u32 {
    let Some(t) = read_time(env, p, wide64) else {
        return 0;
    };
    if t < 0 || (!wide64 && t > i32::MAX as i64) || t > 32_535_215_999 {
        super::fd::set_errno(env, super::fd::errno::EINVAL);
        return 0;
    }
    let b = tm_buf(env);
    let c = civil::from_unix(t, 0);
    env.mem.poke(b, &tm_bytes(&c));
    b
}

fn localtime_s(env: &mut Env, out: u32, p: u32, wide64: bool) -> i32 {
    let Some(t) = read_time(env, p, wide64).filter(|&t| t >= 0) else {
        if out != 0 {
            env.mem.poke(out, &[0xFFu8; 36]);
        }
        return super::fd::errno::EINVAL;
    };
    let c = civil::from_unix(t, 0);
    env.mem.poke(out, &tm_bytes(&c));
    0
}

/// mktime: normalizes the fields, writes them back, returns the time.
fn mktime(env: &mut Env, p: u32) -> i64 {
    let Some(v) = read_tm(env, p) else {
        return -1;
    };
    let (sec, min, hour, mday, mon, year) = (
        v[0] as i64,
        v[1] as i64,
        v[2] as i64,
        v[3] as i64,
        v[4] as i64,
        v[5] as i64,
    );
    let y = 1900 + year + mon.div_euclid(12);
    let m = mon.rem_euclid(12) as u32 + 1;
    let days = civil::days_from_civil(y, m, 1) + mday - 1;
    let t = days * 86_400 + hour * 3600 + min * 60 + sec;
    if t < 0 {
        return -1;
    }
    let c = civil::from_unix(t, 0);
    env.mem.poke(p, &tm_bytes(&c));
    t
}

fn civil_of_tm(v: &[i32; 9]) -> Civil {
    Civil {
        year: 1900 + v[5] as i64,
        month: (v[4].rem_euclid(12) + 1) as u32,
        day: v[3] as u32,
        weekday: v[6].rem_euclid(7) as u32,
        hour: v[2] as u32,
        minute: v[1] as u32,
        second: v[0] as u32,
        millis: 0,
        yday: v[7] as u32,
    }
}

fn asctime_text(c: &Civil) -> String {
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {}\n",
        &crate::civil::DAY_NAMES[c.weekday as usize % 7][..3],
        &crate::civil::MONTH_NAMES[(c.month as usize + 11) % 12][..3],
        c.day,
        c.hour,
        c.minute,
        c.second,
        c.year
    )
}

/// strftime's conversions for the C locale.
pub fn strftime(fmt: &str, c: &Civil) -> String {
    let mut out = String::new();
    let mut it = fmt.chars().peekable();
    while let Some(ch) = it.next() {
        if ch != '%' {
            out.push(ch);
            continue;
        }
        let alt = it.peek() == Some(&'#');
        if alt {
            it.next();
        }
        let Some(f) = it.next() else { break };
        let pad2 = |v: u32| {
            if alt {
                v.to_string()
            } else {
                format!("{v:02}")
            }
        };
        let h12 = if c.hour.is_multiple_of(12) {
            12
        } else {
            c.hour % 12
        };
        let s = match f {
            'a' => crate::civil::DAY_NAMES[c.weekday as usize % 7][..3].to_string(),
            'A' => crate::civil::DAY_NAMES[c.weekday as usize % 7].to_string(),
            'b' | 'h' => crate::civil::MONTH_NAMES[(c.month as usize + 11) % 12][..3].to_string(),
            'B' => crate::civil::MONTH_NAMES[(c.month as usize + 11) % 12].to_string(),
            'c' => format!(
                "{:02}/{:02}/{:02} {:02}:{:02}:{:02}",
                c.month,
                c.day,
                c.year % 100,
                c.hour,
                c.minute,
                c.second
            ),
            'd' => pad2(c.day),
            'H' => pad2(c.hour),
            'I' => pad2(h12),
            'j' => {
                if alt {
                    (c.yday + 1).to_string()
                } else {
                    format!("{:03}", c.yday + 1)
                }
            }
            'm' => pad2(c.month),
            'M' => pad2(c.minute),
            'p' => if c.hour < 12 { "AM" } else { "PM" }.to_string(),
            'S' => pad2(c.second),
            'U' => pad2((c.yday + 7 - c.weekday) / 7),
            'W' => pad2((c.yday + 7 - (c.weekday + 6) % 7) / 7),
            'w' => c.weekday.to_string(),
            'x' | 'D' => format!("{:02}/{:02}/{:02}", c.month, c.day, c.year % 100),
            'X' | 'T' => format!("{:02}:{:02}:{:02}", c.hour, c.minute, c.second),
            'y' => pad2((c.year % 100) as u32),
            'Y' => c.year.to_string(),
            'z' => "+0000".into(),
            'Z' => "UTC".into(),
            'e' => format!("{:2}", c.day),
            'F' => format!("{}-{:02}-{:02}", c.year, c.month, c.day),
            'R' => format!("{:02}:{:02}", c.hour, c.minute),
            'n' => "\n".into(),
            't' => "\t".into(),
            'u' => (if c.weekday == 0 { 7 } else { c.weekday }).to_string(),
            '%' => "%".into(),
            other => format!("%{other}"),
        };
        out.push_str(&s);
    }
    out
}

fn strftime_call(env: &mut Env, buf: u32, max: u32, fmt: u32, tm: u32, wide: bool) -> u32 {
    let (Some(f), Some(v)) = (env.read_str(fmt, wide), read_tm(env, tm)) else {
        return 0;
    };
    let s = strftime(&f, &civil_of_tm(&v));
    let n = if wide {
        s.encode_utf16().count()
    } else {
        s.len()
    } as u32;
    if n >= max {
        return 0;
    }
    env.put_str(buf, &s, wide);
    n
}

fn ctime(env: &mut Env, p: u32, wide64: bool, wide: bool) -> u32 {
    let Some(t) = read_time(env, p, wide64).filter(|&t| t >= 0) else {
        return 0;
    };
    let s = asctime_text(&civil::from_unix(t, 0));
    let b = super::misc::static_buf(env, if wide { "wasctime" } else { "asctime" }, 64);
    env.put_str(b, &s, wide);
    b
}

fn asctime(env: &mut Env, tm: u32, wide: bool) -> u32 {
    let Some(v) = read_tm(env, tm) else {
        return 0;
    };
    let s = asctime_text(&civil_of_tm(&v));
    let b = super::misc::static_buf(env, if wide { "wasctime" } else { "asctime" }, 64);
    env.put_str(b, &s, wide);
    b
}

fn strdate(env: &mut Env, buf: u32, wide: bool, time: bool) -> u32 {
    let c = civil::from_filetime(env.guest_filetime());
    let s = if time {
        format!("{:02}:{:02}:{:02}", c.hour, c.minute, c.second)
    } else {
        format!("{:02}/{:02}/{:02}", c.month, c.day, c.year % 100)
    };
    env.put_str(buf, &s, wide);
    buf
}

fn ftime(env: &mut Env, out: u32, wide64: bool) {
    let ft = env.guest_filetime();
    let t = now_secs(env);
    let ms = ((ft % civil::TICKS) / 10_000) as u16;
    let mut b = Vec::new();
    if wide64 {
        b.extend(t.to_le_bytes());
    } else {
        b.extend((t as u32).to_le_bytes());
    }
    b.extend(ms.to_le_bytes());
    b.extend([0u8; 4]);
    if wide64 {
        b.extend([0u8; 2]);
    }
    env.mem.poke(out, &b);
}

/// `_Gettnames`: a malloc'd `__lc_time_data` of the English locale: 43
/// narrow string pointers (short and long day names from Sunday, short and
/// long month names, AM, PM, the short and long date and the time pictures,
/// as GetLocaleInfo gives them), the LCID (0), two reserved ints, the 43
/// wide pointers, then the wide strings and the narrow ones (Windows' wide
/// pointers lead into the locale's own data, not after the narrow copies,
/// which Wine's test checks).
fn gettnames(env: &mut Env) -> u32 {
    let mut kinds: Vec<u32> = vec![0x37, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36];
    kinds.extend([0x30, 0x2A, 0x2B, 0x2C, 0x2D, 0x2E, 0x2F]);
    kinds.extend(0x44..=0x4F);
    kinds.extend(0x38..=0x43);
    kinds.extend([0x28, 0x29, 0x1F, 0x20, 0x1003]);
    let names: Vec<String> = kinds
        .iter()
        .map(|&k| crate::dll::kernel32::nls::locale_text(k).unwrap_or_default())
        .collect();
    const HEAD: u32 = 43 * 4 + 12 + 43 * 4;
    let narrow: u32 = names.iter().map(|n| n.len() as u32 + 1).sum();
    let base = super::malloc(env, HEAD + 3 * narrow);
    if base == 0 {
        return 0;
    }
    let mut head = vec![0u8; HEAD as usize];
    let (mut a, mut w) = (base + HEAD + 2 * narrow, base + HEAD);
    for (k, n) in names.iter().enumerate() {
        head[4 * k..4 * k + 4].copy_from_slice(&a.to_le_bytes());
        head[184 + 4 * k..188 + 4 * k].copy_from_slice(&w.to_le_bytes());
        env.put_str(a, n, false);
        env.put_str(w, n, true);
        a += n.len() as u32 + 1;
        w += 2 * (n.len() as u32 + 1);
    }
    env.mem.poke(base, &head);
    base
}

crate::dll! { "(crt time)";
    cdecl fn _Gettnames(env) -> u32 { gettnames(env) }
    cdecl fn time(env, out: u32) -> u32 { let t = now_secs(env); put_time(env, out, t, false); t as u32 }
    cdecl fn _time32(env, out: u32) -> u32 { let t = now_secs(env); put_time(env, out, t, false); t as u32 }
    cdecl fn _time64(env, out: u32) -> u64 { let t = now_secs(env); put_time(env, out, t, true); t as u64 }
    cdecl fn clock(env) -> u32 { env.guest_ms() as u32 }
    cdecl fn difftime(env, a: u32, b: u32) -> Ret { Ret::Float(a as i32 as f64 - b as i32 as f64) }
    cdecl fn _difftime32(env, a: u32, b: u32) -> Ret { Ret::Float(a as i32 as f64 - b as i32 as f64) }
    cdecl fn _difftime64(env, a: u32, b: u32, c: u32, d: u32) -> Ret {
        Ret::Float(((b as u64) << 32 | a as u64) as i64 as f64 - ((d as u64) << 32 | c as u64) as i64 as f64)
    }
    cdecl fn localtime(env, p: u32) -> u32 { localtime(env, p, false) }
    cdecl fn _localtime32(env, p: u32) -> u32 { localtime(env, p, false) }
    cdecl fn _localtime64(env, p: u32) -> u32 { localtime(env, p, true) }
    cdecl fn gmtime(env, p: u32) -> u32 { localtime(env, p, false) }
    cdecl fn _gmtime32(env, p: u32) -> u32 { localtime(env, p, false) }
    cdecl fn _gmtime64(env, p: u32) -> u32 { localtime(env, p, true) }
    cdecl fn _localtime32_s(env, out: u32, p: u32) -> i32 { localtime_s(env, out, p, false) }
    cdecl fn _localtime64_s(env, out: u32, p: u32) -> i32 { localtime_s(env, out, p, true) }
    cdecl fn _gmtime32_s(env, out: u32, p: u32) -> i32 { localtime_s(env, out, p, false) }
    cdecl fn _gmtime64_s(env, out: u32, p: u32) -> i32 { localtime_s(env, out, p, true) }
    cdecl fn mktime(env, p: u32) -> u32 { mktime(env, p) as u32 }
    cdecl fn _mktime32(env, p: u32) -> u32 { mktime(env, p) as u32 }
    cdecl fn _mktime64(env, p: u32) -> u64 { mktime(env, p) as u64 }
    cdecl fn _mkgmtime(env, p: u32) -> u32 { mktime(env, p) as u32 }
    cdecl fn _mkgmtime32(env, p: u32) -> u32 { mktime(env, p) as u32 }
    cdecl fn _mkgmtime64(env, p: u32) -> u64 { mktime(env, p) as u64 }
    cdecl fn strftime(env, buf: u32, max: u32, fmt: u32, tm: u32) -> u32 { strftime_call(env, buf, max, fmt, tm, false) }
    cdecl fn wcsftime(env, buf: u32, max: u32, fmt: u32, tm: u32) -> u32 { strftime_call(env, buf, max, fmt, tm, true) }
    cdecl fn _strftime_l(env, buf: u32, max: u32, fmt: u32, tm: u32, loc: u32) -> u32 { strftime_call(env, buf, max, fmt, tm, false) }
    cdecl fn asctime(env, tm: u32) -> u32 { asctime(env, tm, false) }
    cdecl fn _wasctime(env, tm: u32) -> u32 { asctime(env, tm, true) }
    cdecl fn ctime(env, p: u32) -> u32 { ctime(env, p, false, false) }
    cdecl fn _ctime32(env, p: u32) -> u32 { ctime(env, p, false, false) }
    cdecl fn _ctime64(env, p: u32) -> u32 { ctime(env, p, true, false) }
    cdecl fn _wctime(env, p: u32) -> u32 { ctime(env, p, false, true) }
    cdecl fn _wctime32(env, p: u32) -> u32 { ctime(env, p, false, true) }
    cdecl fn _wctime64(env, p: u32) -> u32 { ctime(env, p, true, true) }
    cdecl fn _strdate(env, buf: u32) -> u32 { strdate(env, buf, false, false) }
    cdecl fn _strtime(env, buf: u32) -> u32 { strdate(env, buf, false, true) }
    cdecl fn _wstrdate(env, buf: u32) -> u32 { strdate(env, buf, true, false) }
    cdecl fn _wstrtime(env, buf: u32) -> u32 { strdate(env, buf, true, true) }
    cdecl fn _ftime(env, out: u32) { ftime(env, out, false) }
    cdecl fn _ftime32(env, out: u32) { ftime(env, out, false) }
    cdecl fn _ftime64(env, out: u32) { ftime(env, out, true) }
    cdecl fn _tzset(env) {}
    cdecl fn _get_timezone(env, out: u32) -> i32 { env.mem.poke_u32(out, 0); 0 }
    cdecl fn _get_daylight(env, out: u32) -> i32 { env.mem.poke_u32(out, 0); 0 }
    cdecl fn _get_dstbias(env, out: u32) -> i32 { env.mem.poke_u32(out, 0); 0 }
    cdecl fn __daylight(env) -> u32 { super::misc::static_buf(env, "daylight", 4) }
    cdecl fn __timezone(env) -> u32 { super::misc::static_buf(env, "timezone", 4) }
    cdecl fn __dstbias(env) -> u32 { super::misc::static_buf(env, "dstbias", 4) }
    cdecl fn __tzname(env) -> u32 {
        let b = super::misc::static_buf(env, "tzname", 8);
        if env.mem.peek_u32(b) == Some(0) { let s = env.alloc_cstr(b"UTC"); env.mem.poke_u32(b, s); env.mem.poke_u32(b + 4, s); }
        b
    }
}
