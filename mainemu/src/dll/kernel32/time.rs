//! kernel32's time calls over the guest clock (`Env::guest_filetime`, a fixed
//! epoch plus dispatches at a fixed rate) and `civil` arithmetic. The time
//! zone is UTC with no daylight saving, so local and system time agree.
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
