//! Time: the INT 08h tick bookkeeping, INT 1Ah (tick count and the real-time
//! clock) and the guest calendar every time service derives from.
//!
//! Guest time is the dispatch clock (4,000,000 per second) counted from a
//! fixed epoch, 1994-01-01 00:00:00, plus whatever offset the guest set.
//! Nothing here reads the host clock. It must not program devices.

use super::bda::{self, MIDNIGHT, TICKS, TICKS_PER_DAY};
use super::hostcall::{self, Regs};
use super::Bios;
use crate::cpu::Cpu;
use crate::machine::Machine;

/// Dispatches per guest second (the devices' time base).
pub const DISPATCHES_PER_SECOND: u64 = 4_000_000;
/// Days from 1980-01-01 (the DOS epoch) to the boot date 1994-01-01.
const BOOT_DAYS_SINCE_1980: i64 = 5114;

/// A calendar moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DateTime {
    pub year: u16,
    pub month: u8,
    pub day: u8,
    /// 0 = Sunday.
    pub weekday: u8,
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    pub hundredths: u8,
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: u8) -> i64 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ => {
            if is_leap(y) {
                29
            } else {
                28
            }
        }
    }
}

/// Converts days since 1980-01-01 to (year, month, day).
pub fn civil(mut days: i64) -> (u16, u8, u8) {
    let mut y = 1980;
    loop {
        let n = if is_leap(y) { 366 } else { 365 };
        if days < n {
            break;
        }
        days -= n;
        y += 1;
    }
    let mut m = 1u8;
    while days >= days_in_month(y, m) {
        days -= days_in_month(y, m);
        m += 1;
    }
    (y as u16, m, days as u8 + 1)
}

/// Days since 1980-01-01 of a date (None when invalid or before 1980).
pub fn days_of(y: u16, m: u8, d: u8) -> Option<i64> {
    if !(1980..=2099).contains(&y) || !(1..=12).contains(&m) || d == 0 {
        return None;
    }
    if d as i64 > days_in_month(y as i64, m) {
        return None;
    }
    let mut n = 0;
    for yy in 1980..y as i64 {
        n += if is_leap(yy) { 366 } else { 365 };
    }
    for mm in 1..m {
        n += days_in_month(y as i64, mm);
    }
    Some(n + d as i64 - 1)
}

/// Guest time in hundredths of a second since 1980-01-01 00:00.
fn hundredths(bios: &Bios, now: u64) -> i64 {
    let t = now as i64 + bios.clock_offset;
    BOOT_DAYS_SINCE_1980 * 8_640_000 + t.div_euclid(DISPATCHES_PER_SECOND as i64 / 100)
}

/// The guest's current date and time.
pub fn now(bios: &Bios, clock: u64) -> DateTime {
    let h = hundredths(bios, clock).max(0);
    let days = h / 8_640_000;
    let mut r = h % 8_640_000;
    let (year, month, day) = civil(days);
    let hour = (r / 360_000) as u8;
    r %= 360_000;
    let minute = (r / 6000) as u8;
    r %= 6000;
    DateTime {
        year,
        month,
        day,
        // 1980-01-01 was a Tuesday.
        weekday: ((days + 2) % 7) as u8,
        hour,
        minute,
        second: (r / 100) as u8,
        hundredths: (r % 100) as u8,
    }
}

/// Moves the guest clock so that it reads `target` (hundredths since 1980).
pub fn set(bios: &mut Bios, clock: u64, target: i64) {
    let cur = hundredths(bios, clock);
    bios.clock_offset += (target - cur) * (DISPATCHES_PER_SECOND as i64 / 100);
}

/// The tick count of a time of day (18.2 Hz, as the BIOS keeps it).
pub fn ticks_of(dt: &DateTime) -> u32 {
    let secs = dt.hour as u64 * 3600 + dt.minute as u64 * 60 + dt.second as u64;
    let hs = secs * 100 + dt.hundredths as u64;
    ((hs * TICKS_PER_DAY as u64) / 8_640_000) as u32
}

/// Packed DOS time and date of a moment (files created by the guest).
pub fn dos_stamp(dt: &DateTime) -> (u16, u16) {
    let time = (dt.hour as u16) << 11 | (dt.minute as u16) << 5 | (dt.second as u16 / 2);
    let date = (dt.year.saturating_sub(1980)) << 9 | (dt.month as u16) << 5 | dt.day as u16;
    (time, date)
}

/// INT 08h's bookkeeping: one tick, with the midnight rollover.
pub fn tick(m: &mut Machine) {
    let t = bda::rd32(&m.mem, TICKS).wrapping_add(1);
    if t >= TICKS_PER_DAY {
        bda::wr32(&mut m.mem, TICKS, 0);
        bda::wr8(&mut m.mem, MIDNIGHT, 1);
    } else {
        bda::wr32(&mut m.mem, TICKS, t);
    }
}

fn bcd(v: u8) -> u8 {
    (v / 10) << 4 | (v % 10)
}
fn unbcd(v: u8) -> u8 {
    (v >> 4) * 10 + (v & 0x0F)
}

/// INT 1Ah. Returns false for a function this BIOS does not know.
pub fn int1a(cpu: &mut Cpu, m: &mut Machine, bios: &mut Bios) -> bool {
    match cpu.ah() {
        0x00 => {
            let t = bda::rd32(&m.mem, TICKS);
            cpu.set_cx((t >> 16) as u16);
            cpu.set_dx(t as u16);
            cpu.set_al(bda::rd8(&m.mem, MIDNIGHT));
            bda::wr8(&mut m.mem, MIDNIGHT, 0);
        }
        0x01 => {
            let t = (cpu.cx() as u32) << 16 | cpu.dx() as u32;
            bda::wr32(&mut m.mem, TICKS, t.min(TICKS_PER_DAY - 1));
            bda::wr8(&mut m.mem, MIDNIGHT, 0);
        }
        0x02 => {
            let dt = now(bios, cpu.clock);
            cpu.set_ch(bcd(dt.hour));
            cpu.set_cl(bcd(dt.minute));
            cpu.set_dh(bcd(dt.second));
            cpu.set_dl(0);
            hostcall::set_cf(cpu, m, false);
        }
        0x03 => {
            let dt = now(bios, cpu.clock);
            let days = days_of(dt.year, dt.month, dt.day).unwrap_or(0);
            let secs = unbcd(cpu.ch()) as i64 * 3600
                + unbcd(cpu.cl()) as i64 * 60
                + unbcd(cpu.dh()) as i64;
            set(bios, cpu.clock, days * 8_640_000 + secs * 100);
            hostcall::set_cf(cpu, m, false);
        }
        0x04 => {
            let dt = now(bios, cpu.clock);
            cpu.set_ch(bcd((dt.year / 100) as u8));
            cpu.set_cl(bcd((dt.year % 100) as u8));
            cpu.set_dh(bcd(dt.month));
            cpu.set_dl(bcd(dt.day));
            hostcall::set_cf(cpu, m, false);
        }
        0x05 => {
            let y = unbcd(cpu.ch()) as u16 * 100 + unbcd(cpu.cl()) as u16;
            let dt = now(bios, cpu.clock);
            let tod = hundredths(bios, cpu.clock).rem_euclid(8_640_000);
            match days_of(y, unbcd(cpu.dh()), unbcd(cpu.dl())) {
                Some(d) => {
                    set(bios, cpu.clock, d * 8_640_000 + tod);
                    hostcall::set_cf(cpu, m, false);
                }
                None => hostcall::set_cf(cpu, m, true),
            }
            let _ = dt;
        }
        _ => return false,
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_round_trips() {
        assert_eq!(civil(0), (1980, 1, 1));
        assert_eq!(days_of(1994, 1, 1), Some(BOOT_DAYS_SINCE_1980));
        assert_eq!(civil(BOOT_DAYS_SINCE_1980), (1994, 1, 1));
        assert_eq!(days_of(1994, 2, 29), None);
        for d in [0, 59, 60, 365, 366, 5000, 7000] {
            let (y, m, dd) = civil(d);
            assert_eq!(days_of(y, m, dd), Some(d));
        }
    }

    #[test]
    fn guest_time_follows_the_dispatch_clock() {
        let mut b = Bios::default();
        let t = now(&b, 0);
        assert_eq!((t.year, t.month, t.day, t.weekday), (1994, 1, 1, 6));
        assert_eq!((t.hour, t.minute, t.second), (0, 0, 0));
        let t = now(&b, 61 * DISPATCHES_PER_SECOND + 40_000);
        assert_eq!((t.minute, t.second, t.hundredths), (1, 1, 1));
        set(
            &mut b,
            0,
            days_of(2000, 6, 15).unwrap() * 8_640_000 + 360_000 * 13,
        );
        let t = now(&b, 0);
        assert_eq!((t.year, t.month, t.day, t.hour), (2000, 6, 15, 13));
        assert_eq!(
            ticks_of(&DateTime { hour: 12, ..t }),
            0x1800B0 / 2 + ticks_of(&DateTime { hour: 0, ..t })
        );
    }
}
