//! The MC146818-style CMOS RAM and real-time clock (ports 70h/71h).
//!
//! Owns the 128-byte CMOS file (equipment, memory sizes, checksum), the NMI
//! mask bit (port 70h bit 7), and the clock: the time of day is a fixed
//! epoch, 1994-01-01 00:00:00 (a Saturday), plus whole guest seconds
//! (`now / DISPATCHES_PER_SECOND`), shifted by whatever the guest sets.
//! Status A (update-in-progress for the last 244 µs of each second, rate
//! select), B (SET, PIE, AIE, UIE, binary/BCD, 12/24 h), C (PF/AF/UF/IRQF,
//! cleared by reading) and D (valid RAM). The periodic and update-ended
//! interrupts drive IRQ 8, as a level that stays up until C is read. It
//! must not read the host clock.

use super::pic::Pic;
use crate::machine::scheduler::{
    dispatch_of_tick_rational, ticks_since_rational, DISPATCHES_PER_SECOND, RTC_HZ,
};

/// Seconds from 1970-01-01 to the RTC epoch, 1994-01-01 00:00:00.
pub const RTC_EPOCH_UNIX: i64 = 757_382_400;

/// Days since 1970-01-01 of a civil date (proleptic Gregorian).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Civil date of days since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Broken-down time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DateTime {
    pub year: i64,
    pub month: i64,
    pub day: i64,
    pub hour: i64,
    pub minute: i64,
    pub second: i64,
    /// 1 = Sunday .. 7 = Saturday (the RTC's convention).
    pub weekday: i64,
}

impl DateTime {
    pub fn from_unix(t: i64) -> DateTime {
        let days = t.div_euclid(86_400);
        let s = t.rem_euclid(86_400);
        let (year, month, day) = civil_from_days(days);
        DateTime {
            year,
            month,
            day,
            hour: s / 3600,
            minute: s / 60 % 60,
            second: s % 60,
            weekday: (days + 4).rem_euclid(7) + 1,
        }
    }

    pub fn to_unix(&self) -> i64 {
        days_from_civil(self.year, self.month, self.day) * 86_400
            + self.hour * 3600
            + self.minute * 60
            + self.second
    }
}

#[derive(Clone, Debug)]
pub struct Cmos {
    pub index: u8,
    /// Port 70h bit 7: NMI disabled.
    pub nmi_disabled: bool,
    pub ram: [u8; 128],
    /// Guest-set shift of the clock, seconds.
    offset: i64,
    /// While SET (register B bit 7) is on, the clock is frozen here.
    frozen: Option<i64>,
    /// Register C flags latched at the last evaluation.
    flags: u8,
    /// Dispatch of the last read of register C (flags clear) or enable.
    cleared_at: u64,
    /// IRQ 8 line level (IRQF).
    irq_line: bool,
}

impl Default for Cmos {
    fn default() -> Self {
        Cmos::new()
    }
}

fn bcd(v: i64) -> u8 {
    let v = v.rem_euclid(100) as u8;
    ((v / 10) << 4) | (v % 10)
}

fn from_bcd(v: u8) -> i64 {
    ((v >> 4) as i64) * 10 + (v & 0x0F) as i64
}

impl Cmos {
    /// The CMOS of a 386 with 640 KiB base memory, no extended memory, one
    /// 1.44 MB floppy, a coprocessor and a VGA. The machine may change the
    /// memory sizes with [`Cmos::set_memory_sizes`].
    pub fn new() -> Cmos {
        let mut c = Cmos {
            index: 0,
            nmi_disabled: false,
            ram: [0; 128],
            offset: 0,
            frozen: None,
            flags: 0,
            cleared_at: 0,
            irq_line: false,
        };
        c.ram[0x0A] = 0x26; // 32.768 kHz divider, 1024 Hz periodic rate
        c.ram[0x0B] = 0x02; // 24-hour, BCD, no interrupts
        c.ram[0x0D] = 0x80; // RAM and time valid
        c.ram[0x10] = 0x40; // drive A: 1.44 MB, no drive B
        c.ram[0x14] = 0x03; // 1 floppy, coprocessor present, EGA/VGA
        c.set_memory_sizes(640, 0);
        c
    }

    /// Base and extended memory sizes in KiB (registers 15h-18h, 30h-31h),
    /// and the checksum.
    pub fn set_memory_sizes(&mut self, base_kb: u16, ext_kb: u16) {
        self.ram[0x15] = base_kb as u8;
        self.ram[0x16] = (base_kb >> 8) as u8;
        self.ram[0x17] = ext_kb as u8;
        self.ram[0x18] = (ext_kb >> 8) as u8;
        self.ram[0x30] = ext_kb as u8;
        self.ram[0x31] = (ext_kb >> 8) as u8;
        self.update_checksum();
    }

    fn update_checksum(&mut self) {
        let sum: u16 = self.ram[0x10..=0x2D].iter().map(|&b| b as u16).sum();
        self.ram[0x2E] = (sum >> 8) as u8;
        self.ram[0x2F] = sum as u8;
    }

    /// Unix time the clock shows at dispatch `now`.
    pub fn unix_time(&self, now: u64) -> i64 {
        match self.frozen {
            Some(t) => t,
            None => RTC_EPOCH_UNIX + self.offset + (now / DISPATCHES_PER_SECOND) as i64,
        }
    }

    /// Broken-down time at `now`.
    pub fn datetime(&self, now: u64) -> DateTime {
        DateTime::from_unix(self.unix_time(now))
    }

    fn binary(&self) -> bool {
        self.ram[0x0B] & 0x04 != 0
    }

    fn enc(&self, v: i64) -> u8 {
        if self.binary() {
            v.rem_euclid(256) as u8
        } else {
            bcd(v)
        }
    }

    fn dec(&self, v: u8) -> i64 {
        if self.binary() {
            v as i64
        } else {
            from_bcd(v)
        }
    }

    /// Periodic-interrupt divider in 32.768 kHz ticks, None if off.
    fn periodic_div(&self) -> Option<u64> {
        match self.ram[0x0A] & 0x0F {
            0 => None,
            1 => Some(128),
            2 => Some(256),
            r => Some(1 << (r - 1)),
        }
    }

    /// Register C flags that would be set at `now` since the last clear.
    fn flags_at(&self, now: u64) -> u8 {
        let mut f = self.flags;
        if let Some(div) = self.periodic_div() {
            if ticks_since_rational(0, now, RTC_HZ, div)
                > ticks_since_rational(0, self.cleared_at, RTC_HZ, div)
            {
                f |= 0x40;
            }
        }
        if self.frozen.is_none()
            && now / DISPATCHES_PER_SECOND > self.cleared_at / DISPATCHES_PER_SECOND
        {
            f |= 0x10;
        }
        f
    }

    fn irqf(&self, flags: u8) -> bool {
        flags & self.ram[0x0B] & 0x70 != 0
    }

    /// Dispatch at which IRQ 8 next rises, `u64::MAX` if not armed.
    pub fn next_event(&self) -> u64 {
        if self.irq_line {
            return u64::MAX;
        }
        let b = self.ram[0x0B];
        let mut t = u64::MAX;
        if b & 0x40 != 0 {
            if let Some(div) = self.periodic_div() {
                let k = ticks_since_rational(0, self.cleared_at, RTC_HZ, div) + 1;
                t = t.min(dispatch_of_tick_rational(0, k, RTC_HZ, div));
            }
        }
        if b & 0x10 != 0 && self.frozen.is_none() {
            t = t.min((self.cleared_at / DISPATCHES_PER_SECOND + 1) * DISPATCHES_PER_SECOND);
        }
        t
    }

    /// Raises IRQ 8 if its line rises at or before `now`.
    pub fn advance(&mut self, now: u64, pic: &mut Pic) {
        let t = self.next_event();
        if t <= now {
            self.irq_line = true;
            pic.raise(8);
        }
    }

    /// Re-evaluates the IRQ line after a control change at `now`.
    fn update_line(&mut self, now: u64, pic: &mut Pic) {
        let f = self.flags_at(now);
        let up = self.irqf(f);
        if up && !self.irq_line {
            pic.raise(8);
        }
        self.irq_line = up;
    }

    pub fn write_index(&mut self, v: u8) {
        self.index = v & 0x7F;
        self.nmi_disabled = v & 0x80 != 0;
    }

    pub fn read_data(&mut self, now: u64, pic: &mut Pic) -> u8 {
        self.advance(now, pic);
        let i = self.index as usize;
        let dt = self.datetime(now);
        let hour = |c: &Cmos| {
            if c.ram[0x0B] & 0x02 != 0 {
                c.enc(dt.hour)
            } else {
                let h12 = if dt.hour % 12 == 0 { 12 } else { dt.hour % 12 };
                c.enc(h12) | if dt.hour >= 12 { 0x80 } else { 0 }
            }
        };
        match i {
            0x00 => self.enc(dt.second),
            0x02 => self.enc(dt.minute),
            0x04 => hour(self),
            0x06 => self.enc(dt.weekday),
            0x07 => self.enc(dt.day),
            0x08 => self.enc(dt.month),
            0x09 => self.enc(dt.year % 100),
            0x32 | 0x37 => self.enc(dt.year / 100),
            0x0A => {
                let uip = self.frozen.is_none()
                    && now % DISPATCHES_PER_SECOND >= DISPATCHES_PER_SECOND - 244 * 4;
                (self.ram[0x0A] & 0x7F) | if uip { 0x80 } else { 0 }
            }
            0x0C => {
                let f = self.flags_at(now);
                let v = f | if self.irqf(f) { 0x80 } else { 0 };
                self.flags = 0;
                self.cleared_at = now;
                self.irq_line = false;
                v
            }
            _ => self.ram[i],
        }
    }

    pub fn write_data(&mut self, v: u8, now: u64, pic: &mut Pic) {
        self.advance(now, pic);
        let i = self.index as usize;
        match i {
            0x00 | 0x02 | 0x04 | 0x06 | 0x07 | 0x08 | 0x09 | 0x32 | 0x37 => {
                let mut dt = self.datetime(now);
                let h24 = self.ram[0x0B] & 0x02 != 0;
                match i {
                    0x00 => dt.second = self.dec(v).min(59),
                    0x02 => dt.minute = self.dec(v).min(59),
                    0x04 => {
                        if h24 {
                            dt.hour = self.dec(v).min(23);
                        } else {
                            let h = self.dec(v & 0x7F).clamp(1, 12) % 12;
                            dt.hour = h + if v & 0x80 != 0 { 12 } else { 0 };
                        }
                    }
                    0x06 => {} // weekday follows from the date
                    0x07 => dt.day = self.dec(v).clamp(1, 31),
                    0x08 => dt.month = self.dec(v).clamp(1, 12),
                    0x09 => dt.year = dt.year / 100 * 100 + self.dec(v).min(99),
                    _ => dt.year = self.dec(v).min(99) * 100 + dt.year % 100,
                }
                let t = dt.to_unix();
                match self.frozen {
                    Some(_) => self.frozen = Some(t),
                    None => {
                        self.offset = t - RTC_EPOCH_UNIX - (now / DISPATCHES_PER_SECOND) as i64;
                    }
                }
            }
            0x0A => self.ram[0x0A] = v & 0x7F,
            0x0B => {
                let was_set = self.ram[0x0B] & 0x80 != 0;
                let set = v & 0x80 != 0;
                if set && !was_set {
                    self.frozen = Some(self.unix_time(now));
                } else if !set && was_set {
                    if let Some(t) = self.frozen.take() {
                        self.offset = t - RTC_EPOCH_UNIX - (now / DISPATCHES_PER_SECOND) as i64;
                    }
                }
                // Latch what has happened so far before enables change.
                self.flags = self.flags_at(now);
                self.cleared_at = now;
                self.ram[0x0B] = v;
                self.update_line(now, pic);
            }
            0x0C | 0x0D => {} // read-only
            _ => {
                self.ram[i] = v;
                if (0x10..=0x2D).contains(&i) {
                    self.update_checksum();
                }
            }
        }
    }
}
