//! Calendar arithmetic for the time calls: FILETIME (100 ns since
//! 1601-01-01 UTC) to and from civil dates, Unix seconds, DOS dates. The
//! guest's time zone is UTC (no daylight saving), so local and system time
//! are the same: deterministic everywhere.
//!
//! Owns only arithmetic; it must not read any clock (the guest clock comes
//! from `Env`).

/// 100 ns ticks per second.
pub const TICKS: u64 = 10_000_000;

/// English day names, Sunday first (`Civil::weekday` order).
pub const DAY_NAMES: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
/// English month names, January first.
pub const MONTH_NAMES: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
/// FILETIME of 1970-01-01.
pub const UNIX_EPOCH: u64 = 116_444_736_000_000_000;

/// A SYSTEMTIME's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Civil {
    pub year: i64,
    /// 1..=12
    pub month: u32,
    /// 1..=31
    pub day: u32,
    /// 0 = Sunday
    pub weekday: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub millis: u32,
    /// Day of the year, 0-based.
    pub yday: u32,
}

/// Days since 1970-01-01 of a civil date (proleptic Gregorian).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of days since 1970-01-01.
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

pub fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

/// Seconds since 1970 (may be negative) as a civil time.
pub fn from_unix(secs: i64, millis: u32) -> Civil {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400) as u32;
    let (year, month, day) = civil_from_days(days);
    Civil {
        year,
        month,
        day,
        weekday: (days + 4).rem_euclid(7) as u32,
        hour: rem / 3600,
        minute: rem / 60 % 60,
        second: rem % 60,
        millis,
        yday: (days - days_from_civil(year, 1, 1)) as u32,
    }
}

/// A civil time as seconds since 1970.
pub fn to_unix(c: &Civil) -> i64 {
    days_from_civil(c.year, c.month, c.day) * 86_400
        + c.hour as i64 * 3600
        + c.minute as i64 * 60
        + c.second as i64
}

/// FILETIME → civil time.
pub fn from_filetime(ft: u64) -> Civil {
    let t = ft as i128 - UNIX_EPOCH as i128;
    let secs = t.div_euclid(TICKS as i128) as i64;
    let millis = (t.rem_euclid(TICKS as i128) / 10_000) as u32;
    from_unix(secs, millis)
}

/// Civil time → FILETIME (`None` for fields out of range or before 1601).
pub fn to_filetime(c: &Civil) -> Option<u64> {
    let days_in = [
        31,
        if is_leap(c.year) { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1601..=30827).contains(&c.year)
        || !(1..=12).contains(&c.month)
        || c.day == 0
        || c.day > days_in[c.month as usize - 1]
        || c.hour > 23
        || c.minute > 59
        || c.second > 59
        || c.millis > 999
    {
        return None;
    }
    let t = to_unix(c) as i128 * TICKS as i128 + c.millis as i128 * 10_000 + UNIX_EPOCH as i128;
    u64::try_from(t).ok()
}

/// SYSTEMTIME bytes (8 WORDs).
pub fn systemtime_bytes(c: &Civil) -> [u8; 16] {
    let w = [
        c.year as u16,
        c.month as u16,
        c.weekday as u16,
        c.day as u16,
        c.hour as u16,
        c.minute as u16,
        c.second as u16,
        c.millis as u16,
    ];
    let mut b = [0u8; 16];
    for (k, v) in w.iter().enumerate() {
        b[2 * k..2 * k + 2].copy_from_slice(&v.to_le_bytes());
    }
    b
}

/// A SYSTEMTIME read back (weekday ignored, as SystemTimeToFileTime does).
pub fn from_systemtime_bytes(b: &[u8; 16]) -> Civil {
    let w = |k: usize| u16::from_le_bytes([b[2 * k], b[2 * k + 1]]) as u32;
    Civil {
        year: w(0) as i64,
        month: w(1),
        weekday: w(2),
        day: w(3),
        hour: w(4),
        minute: w(5),
        second: w(6),
        millis: w(7),
        yday: 0,
    }
}

/// FILETIME → (DOS date, DOS time) (`None` outside 1980..=2107).
pub fn to_dos(ft: u64) -> Option<(u16, u16)> {
    let c = from_filetime(ft);
    if !(1980..=2107).contains(&c.year) {
        return None;
    }
    let date = (((c.year - 1980) as u16) << 9) | ((c.month as u16) << 5) | c.day as u16;
    let time = ((c.hour as u16) << 11) | ((c.minute as u16) << 5) | (c.second / 2) as u16;
    Some((date, time))
}

/// (DOS date, DOS time) → FILETIME.
pub fn from_dos(date: u16, time: u16) -> Option<u64> {
    let c = Civil {
        year: 1980 + (date >> 9) as i64,
        month: ((date >> 5) & 15) as u32,
        day: (date & 31) as u32,
        hour: (time >> 11) as u32,
        minute: ((time >> 5) & 63) as u32,
        second: 2 * (time & 31) as u32,
        ..Default::default()
    };
    to_filetime(&c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip() {
        // 2020-01-01 00:00 UTC, a Wednesday: mainemu's epoch.
        let c = from_filetime(crate::dll::EPOCH_FILETIME);
        assert_eq!(
            (c.year, c.month, c.day, c.weekday, c.hour),
            (2020, 1, 1, 3, 0)
        );
        assert_eq!(to_filetime(&c), Some(crate::dll::EPOCH_FILETIME));
        let c = from_unix(951_782_400 + 86_399, 0); // 2000-02-29 23:59:59
        assert_eq!(
            (c.year, c.month, c.day, c.hour, c.second, c.yday),
            (2000, 2, 29, 23, 59, 59)
        );
        assert_eq!(from_filetime(0).year, 1601);
        let (d, t) = to_dos(crate::dll::EPOCH_FILETIME + 3 * TICKS).unwrap();
        assert_eq!(from_dos(d, t), Some(crate::dll::EPOCH_FILETIME + 2 * TICKS));
        assert!(to_filetime(&Civil {
            year: 2021,
            month: 2,
            day: 29,
            ..Default::default()
        })
        .is_none());
    }
}
