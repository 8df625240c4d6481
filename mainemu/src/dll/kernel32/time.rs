//! kernel32's time calls over the guest clock (`Env::guest_filetime`, a fixed
//! epoch plus dispatches at a fixed rate) and `civil` arithmetic. The time
//! zone is UTC with no daylight saving, so local and system time agree.
//!
//! GetDateFormat/GetTimeFormat format en-US pictures (the only locale
//! mainemu models): `d dd ddd dddd M MM MMM MMMM y yy yyyy g` and
//! `h hh H HH m mm s ss t tt`, quoted literals, the default short/long date
//! and time formats and the TIME_* flags.
//!
//! Owns the SYSTEMTIME/FILETIME/DOS conventions of these calls; it must not
//! read host time.

use crate::civil::{self, Civil};
use crate::dll::Env;
use crate::files::err;

fn read_ft(env: &Env, p: u32) -> Option<u64> {
    let mut b = [0u8; 8];
    env.mem.peek(p, &mut b)?;
    Some(u64::from_le_bytes(b))
}

fn put_systemtime(env: &mut Env, out: u32, c: &Civil) -> bool {
    env.mem.poke(out, &civil::systemtime_bytes(c)).is_some()
}

fn read_systemtime(env: &Env, p: u32) -> Option<Civil> {
    let mut b = [0u8; 16];
    env.mem.peek(p, &mut b)?;
    Some(civil::from_systemtime_bytes(&b))
}

/// FileTimeToSystemTime: refuses times with the top bit set.
fn ft_to_st(env: &mut Env, ft: u32, out: u32) -> bool {
    match read_ft(env, ft) {
        Some(t) if t < 1 << 63 => {
            let c = civil::from_filetime(t);
            put_systemtime(env, out, &c)
        }
        _ => env.fail(err::INVALID_PARAMETER, false),
    }
}

fn st_to_ft(env: &mut Env, st: u32, out: u32) -> bool {
    match read_systemtime(env, st).and_then(|c| civil::to_filetime(&c)) {
        Some(t) => env.mem.poke(out, &t.to_le_bytes()).is_some(),
        None => env.fail(err::INVALID_PARAMETER, false),
    }
}

/// TIME_ZONE_INFORMATION for UTC (172 bytes): bias 0, names "Coordinated Universal Time".
fn tz_info(env: &mut Env, out: u32) -> u32 {
    let mut b = vec![0u8; 172];
    let name: Vec<u16> = "Coordinated Universal Time".encode_utf16().collect();
    for (k, u) in name.iter().enumerate() {
        b[4 + 2 * k..6 + 2 * k].copy_from_slice(&u.to_le_bytes());
        b[88 + 2 * k..90 + 2 * k].copy_from_slice(&u.to_le_bytes());
    }
    env.mem.poke(out, &b);
    0 // TIME_ZONE_ID_UNKNOWN
}

/// Expands a date or time picture for `c` (en-US names; `'...'` is literal, `''` a quote).
fn picture(pic: &str, c: &Civil) -> String {
    let ch: Vec<char> = pic.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < ch.len() {
        let x = ch[i];
        if x == '\'' {
            i += 1;
            while i < ch.len() {
                if ch[i] == '\'' {
                    if ch.get(i + 1) == Some(&'\'') {
                        out.push('\'');
                        i += 2;
                        continue;
                    }
                    break;
                }
                out.push(ch[i]);
                i += 1;
            }
            i += 1;
            continue;
        }
        let mut n = 1;
        while i + n < ch.len() && ch[i + n] == x {
            n += 1;
        }
        let h12 = if c.hour.is_multiple_of(12) {
            12
        } else {
            c.hour % 12
        };
        let month = crate::civil::MONTH_NAMES[(c.month.clamp(1, 12) - 1) as usize];
        let day = crate::civil::DAY_NAMES[(c.weekday % 7) as usize];
        match (x, n) {
            ('d', 1) => out += &c.day.to_string(),
            ('d', 2) => out += &format!("{:02}", c.day),
            ('d', 3) => out += &day[..3],
            ('d', _) => out += day,
            ('M', 1) => out += &c.month.to_string(),
            ('M', 2) => out += &format!("{:02}", c.month),
            ('M', 3) => out += &month[..3],
            ('M', _) => out += month,
            ('y', 1) => out += &(c.year % 100).to_string(),
            ('y', 2) => out += &format!("{:02}", c.year % 100),
            ('y', _) => out += &c.year.to_string(),
            ('g', _) => out += "A.D.",
            ('h', 1) => out += &h12.to_string(),
            ('h', _) => out += &format!("{h12:02}"),
            ('H', 1) => out += &c.hour.to_string(),
            ('H', _) => out += &format!("{:02}", c.hour),
            ('m', 1) => out += &c.minute.to_string(),
            ('m', _) => out += &format!("{:02}", c.minute),
            ('s', 1) => out += &c.second.to_string(),
            ('s', _) => out += &format!("{:02}", c.second),
            ('t', 1) => out += if c.hour < 12 { "A" } else { "P" },
            ('t', _) => out += if c.hour < 12 { "AM" } else { "PM" },
            _ => (0..n).for_each(|_| out.push(x)),
        }
        i += n;
    }
    out
}

/// GetDateFormat/GetTimeFormat: the time (`st`, NULL: now), the picture (NULL:
/// the default the flags choose), the string into `buf` of `cap` characters
/// with the usual size-query and short-buffer rules.
#[allow(clippy::too_many_arguments)]
fn date_time_format(
    env: &mut Env,
    flags: u32,
    st: u32,
    fmt: u32,
    buf: u32,
    cap: i32,
    date: bool,
    wide: bool,
) -> i32 {
    let c = if st == 0 {
        civil::from_filetime(env.guest_filetime())
    } else {
        match read_systemtime(env, st) {
            Some(c)
                if (1..=12).contains(&c.month)
                    && (1..=31).contains(&c.day)
                    && c.hour < 24
                    && c.minute < 60
                    && c.second < 60 =>
            {
                c
            }
            _ => return env.fail(err::INVALID_PARAMETER, 0),
        }
    };
    let pic = match env.read_str(fmt, wide) {
        Some(p) => p,
        None if date => if flags & 2 != 0 {
            "dddd, MMMM d, yyyy"
        } else {
            "M/d/yyyy"
        }
        .to_string(),
        None => {
            // TIME_NOMINUTESORSECONDS 1, TIME_NOSECONDS 2, TIME_NOTIMEMARKER 4, TIME_FORCE24HOURFORMAT 8.
            let mut p = String::from(if flags & 8 != 0 { "H" } else { "h" });
            if flags & 1 == 0 {
                p += ":mm";
                if flags & 2 == 0 {
                    p += ":ss";
                }
            }
            if flags & 12 == 0 {
                p += " tt";
            }
            p
        }
    };
    let text = picture(&pic, &c);
    super::nls::put_counted(env, buf, cap, &text, wide)
}

crate::dll! { "(kernel32 time)";

    stdcall fn GetTickCount(env) -> u32 { env.guest_ms() as u32 }
    stdcall fn GetTickCount64(env) -> u64 { env.guest_ms() }
    stdcall fn QueryPerformanceFrequency(env, out: u32) -> bool {
        env.mem.poke(out, &crate::dll::DISPATCHES_PER_SECOND.to_le_bytes()).is_some()
    }
    stdcall fn QueryPerformanceCounter(env, out: u32) -> bool {
        let c = env.clock;
        env.mem.poke(out, &c.to_le_bytes()).is_some()
    }
    stdcall fn GetSystemTimeAsFileTime(env, out: u32) {
        let t = env.guest_filetime();
        env.mem.poke(out, &t.to_le_bytes());
    }
    stdcall fn GetSystemTimePreciseAsFileTime(env, out: u32) {
        let t = env.guest_filetime();
        env.mem.poke(out, &t.to_le_bytes());
    }
    stdcall fn GetSystemTime(env, out: u32) { let c = civil::from_filetime(env.guest_filetime()); put_systemtime(env, out, &c); }
    stdcall fn GetDateFormatA(env, lcid: u32, flags: u32, st: u32, fmt: u32, buf: u32, cap: i32) -> i32 { date_time_format(env, flags, st, fmt, buf, cap, true, false) }
    stdcall fn GetDateFormatW(env, lcid: u32, flags: u32, st: u32, fmt: u32, buf: u32, cap: i32) -> i32 { date_time_format(env, flags, st, fmt, buf, cap, true, true) }
    stdcall fn GetDateFormatEx(env, name: u32, flags: u32, st: u32, fmt: u32, buf: u32, cap: i32, calendar: u32) -> i32 { date_time_format(env, flags, st, fmt, buf, cap, true, true) }
    stdcall fn GetTimeFormatA(env, lcid: u32, flags: u32, st: u32, fmt: u32, buf: u32, cap: i32) -> i32 { date_time_format(env, flags, st, fmt, buf, cap, false, false) }
    stdcall fn GetTimeFormatW(env, lcid: u32, flags: u32, st: u32, fmt: u32, buf: u32, cap: i32) -> i32 { date_time_format(env, flags, st, fmt, buf, cap, false, true) }
    stdcall fn GetTimeFormatEx(env, name: u32, flags: u32, st: u32, fmt: u32, buf: u32, cap: i32) -> i32 { date_time_format(env, flags, st, fmt, buf, cap, false, true) }
    stdcall fn GetLocalTime(env, out: u32) { let c = civil::from_filetime(env.guest_filetime()); put_systemtime(env, out, &c); }
    stdcall fn FileTimeToSystemTime(env, ft: u32, out: u32) -> bool { ft_to_st(env, ft, out) }
    stdcall fn SystemTimeToFileTime(env, st: u32, out: u32) -> bool { st_to_ft(env, st, out) }
    stdcall fn FileTimeToLocalFileTime(env, ft: u32, out: u32) -> bool {
        match read_ft(env, ft) { Some(t) => env.mem.poke(out, &t.to_le_bytes()).is_some(), None => env.fail(err::INVALID_PARAMETER, false) }
    }
    stdcall fn LocalFileTimeToFileTime(env, ft: u32, out: u32) -> bool {
        match read_ft(env, ft) { Some(t) => env.mem.poke(out, &t.to_le_bytes()).is_some(), None => env.fail(err::INVALID_PARAMETER, false) }
    }
    stdcall fn SystemTimeToTzSpecificLocalTime(env, tz: u32, st: u32, out: u32) -> bool {
        let mut b = [0u8; 16];
        if env.mem.peek(st, &mut b).is_none() { return env.fail(err::INVALID_PARAMETER, false); }
        env.mem.poke(out, &b).is_some()
    }
    stdcall fn CompareFileTime(env, a: u32, b: u32) -> i32 {
        let (x, y) = (read_ft(env, a).unwrap_or(0), read_ft(env, b).unwrap_or(0));
        x.cmp(&y) as i32
    }
    stdcall fn FileTimeToDosDateTime(env, ft: u32, date: u32, time: u32) -> bool {
        match read_ft(env, ft).and_then(civil::to_dos) {
            Some((d, t)) => {
                env.mem.poke(date, &d.to_le_bytes());
                env.mem.poke(time, &t.to_le_bytes());
                true
            }
            None => env.fail(err::INVALID_PARAMETER, false),
        }
    }
    stdcall fn DosDateTimeToFileTime(env, date: u32, time: u32, out: u32) -> bool {
        match civil::from_dos(date as u16, time as u16) {
            Some(t) => env.mem.poke(out, &t.to_le_bytes()).is_some(),
            None => env.fail(err::INVALID_PARAMETER, false),
        }
    }
    stdcall fn GetTimeZoneInformation(env, out: u32) -> u32 { tz_info(env, out) }
    stdcall fn GetDynamicTimeZoneInformation(env, out: u32) -> u32 {
        let mut b = vec![0u8; 432];
        env.mem.poke(out, &b.split_off(0));
        tz_info(env, out)
    }
    stdcall fn GetProcessTimes(env, h: u32, c: u32, e: u32, k: u32, u: u32) -> bool {
        let now = env.guest_filetime();
        let run = now - crate::dll::EPOCH_FILETIME;
        for (p, v) in [(c, crate::dll::EPOCH_FILETIME), (e, 0), (k, 0), (u, run)] {
            if p != 0 { env.mem.poke(p, &v.to_le_bytes()); }
        }
        true
    }
    stdcall fn GetThreadTimes(env, h: u32, c: u32, e: u32, k: u32, u: u32) -> bool {
        let now = env.guest_filetime();
        let run = now - crate::dll::EPOCH_FILETIME;
        for (p, v) in [(c, crate::dll::EPOCH_FILETIME), (e, 0), (k, 0), (u, run)] {
            if p != 0 { env.mem.poke(p, &v.to_le_bytes()); }
        }
        true
    }
    stdcall fn GetSystemTimes(env, idle: u32, kernel: u32, user: u32) -> bool {
        let run = env.guest_filetime() - crate::dll::EPOCH_FILETIME;
        for (p, v) in [(idle, 0), (kernel, 0), (user, run)] {
            if p != 0 { env.mem.poke(p, &v.to_le_bytes()); }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_and_time_pictures() {
        let c = civil::from_filetime(civil::UNIX_EPOCH + 1_622_548_805 * civil::TICKS);
        assert_eq!(picture("M/d/yyyy", &c), "6/1/2021");
        assert_eq!(picture("dddd, MMMM d, yyyy", &c), "Tuesday, June 1, 2021");
        assert_eq!(
            picture("ddd dd MMM yy 'at' h:mm:ss tt", &c),
            "Tue 01 Jun 21 at 12:00:05 PM"
        );
        assert_eq!(picture("HH'h''' t", &c), "12h' P");
        let mut e = Env::new(crate::memory::Memory::new());
        e.process_heap = e.new_heap();
        let st = e.alloc(16);
        e.mem.poke(st, &civil::systemtime_bytes(&c));
        let buf = e.alloc(64);
        assert_eq!(date_time_format(&mut e, 0, st, 0, buf, 0, false, true), 12);
        assert_eq!(date_time_format(&mut e, 0, st, 0, buf, 11, false, true), 0);
        assert_eq!(e.last_error, err::INSUFFICIENT_BUFFER);
        assert_eq!(date_time_format(&mut e, 0, st, 0, buf, 64, false, true), 12);
        assert_eq!(e.read_w(buf).as_deref(), Some("12:00:05 PM"));
        assert_eq!(
            date_time_format(&mut e, 2 | 8, st, 0, buf, 64, false, false),
            6
        );
        assert_eq!(e.read_a(buf).as_deref(), Some("12:00"));
        assert_eq!(date_time_format(&mut e, 2, st, 0, buf, 64, true, true), 22);
        assert_eq!(e.read_w(buf).as_deref(), Some("Tuesday, June 1, 2021"));
    }
}
