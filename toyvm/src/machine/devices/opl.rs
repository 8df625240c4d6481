//! The YM3812 (OPL2 / AdLib) at 388h/389h, without synthesis.
//!
//! Owns the address latch, the 256-byte register file and the two timers
//! with the status register they drive: timer 1 counts 80 µs steps, timer 2
//! 320 µs steps, from the preset in registers 02h/03h up to overflow; an
//! unmasked overflow sets its flag and bit 7. Register 04h starts/stops and
//! masks them, and bit 7 there resets the flags. This is exactly what AdLib
//! detection routines probe (60h then 80h to reg 4, FFh to reg 2, 21h to reg
//! 4, wait, read status: E0h-bits 00h before, C0h after). It must not make
//! sound or raise interrupts (the AdLib has no IRQ); timer state is a pure
//! function of the dispatch the timer was started at.

use crate::machine::scheduler::{OPL_TIMER1_DISPATCHES, OPL_TIMER2_DISPATCHES};

/// One OPL timer.
#[derive(Clone, Debug, Default)]
struct OplTimer {
    running: bool,
    /// Dispatch the timer (re)started counting from its preset.
    start: u64,
    /// Dispatches per overflow, fixed at start (preset × resolution).
    period: u64,
    /// Overflows at or before this dispatch were already accounted for
    /// (flag reset or start).
    armed_after: u64,
    /// Flag latched by an earlier overflow.
    flag: bool,
}

impl OplTimer {
    /// Whether an overflow happened in (armed_after, now].
    fn overflowed(&self, now: u64) -> bool {
        if !self.running || self.period == 0 || now < self.start {
            return false;
        }
        // Overflows at start + k * period, k >= 1. The first after
        // `armed_after`:
        let base = self.armed_after.max(self.start);
        let k = (base - self.start) / self.period + 1;
        let first = self.start.saturating_add(k.saturating_mul(self.period));
        first <= now
    }
}

#[derive(Clone, Debug)]
pub struct Opl2 {
    pub index: u8,
    pub regs: [u8; 256],
    t1: OplTimer,
    t2: OplTimer,
    /// Register writes (statistics; the oracle may compare it).
    pub writes: u64,
}

impl Default for Opl2 {
    fn default() -> Self {
        Opl2::new()
    }
}

impl Opl2 {
    pub fn new() -> Opl2 {
        Opl2 {
            index: 0,
            regs: [0; 256],
            t1: OplTimer::default(),
            t2: OplTimer::default(),
            writes: 0,
        }
    }

    fn flags(&self, now: u64) -> (bool, bool) {
        let r4 = self.regs[4];
        let f1 = self.t1.flag || (r4 & 0x40 == 0 && self.t1.overflowed(now));
        let f2 = self.t2.flag || (r4 & 0x20 == 0 && self.t2.overflowed(now));
        (f1, f2)
    }

    /// Status register (read of the address port): bit 7 IRQ, bit 6 timer 1,
    /// bit 5 timer 2; the low bits read 06h on an OPL2 (what OPL3 detection
    /// tells it apart by).
    pub fn status(&self, now: u64) -> u8 {
        let (f1, f2) = self.flags(now);
        let mut s = 0x06;
        if f1 {
            s |= 0x40;
        }
        if f2 {
            s |= 0x20;
        }
        if f1 || f2 {
            s |= 0x80;
        }
        s
    }

    pub fn write_index(&mut self, v: u8) {
        self.index = v;
    }

    /// Latches flags raised so far before a change to timer control.
    fn latch_flags(&mut self, now: u64) {
        let (f1, f2) = self.flags(now);
        self.t1.flag = f1;
        self.t2.flag = f2;
        self.t1.armed_after = now;
        self.t2.armed_after = now;
    }

    pub fn write_data(&mut self, v: u8, now: u64) {
        self.writes += 1;
        let i = self.index;
        if i == 4 {
            self.latch_flags(now);
            if v & 0x80 != 0 {
                // IRQ reset: clears both flags; other bits are ignored.
                self.t1.flag = false;
                self.t2.flag = false;
                return;
            }
            self.regs[4] = v;
            // Masked timers' flags are cleared (per the YM3812 manual).
            if v & 0x40 != 0 {
                self.t1.flag = false;
            }
            if v & 0x20 != 0 {
                self.t2.flag = false;
            }
            let start = |t: &mut OplTimer, on: bool, preset: u8, res: u64| {
                if on && !t.running {
                    t.running = true;
                    t.start = now;
                    t.armed_after = now;
                    t.period = (256 - preset as u64) * res;
                } else if !on {
                    t.running = false;
                }
            };
            start(
                &mut self.t1,
                v & 0x01 != 0,
                self.regs[2],
                OPL_TIMER1_DISPATCHES,
            );
            start(
                &mut self.t2,
                v & 0x02 != 0,
                self.regs[3],
                OPL_TIMER2_DISPATCHES,
            );
            return;
        }
        self.regs[i as usize] = v;
    }
}
