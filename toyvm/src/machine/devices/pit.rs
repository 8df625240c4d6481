//! The 8254 programmable interval timer (ports 40h-43h).
//!
//! Owns the three counters: modes 0-5, binary or BCD counting, LSB/MSB/both
//! access with their flip-flops, the counter latch and read-back commands,
//! gates (channel 2's gate is port 61h bit 0; channels 0 and 1 are tied
//! high) and OUT levels. Channel 0's OUT rising edges are IRQ 0, scheduled
//! as absolute dispatches. It must not keep time of its own: a counter's
//! value at dispatch `now` is computed from the dispatch it was loaded at,
//! `floor((now - origin) * PIT_HZ / DISPATCHES_PER_SECOND)` ticks later, in
//! `u128`, so hours of guest time accumulate no drift.
//!
//! Conventions (docs/time.md): a count written at dispatch `d` starts
//! counting at `d` (the real part's one-clock load delay is not modelled);
//! in modes 2 and 3 a count written while the counter runs takes effect at
//! the end of the current period, as on the 8254; a control word sets OUT to
//! its mode's initial level at once (low for mode 0, high otherwise), and on
//! channel 0 a low-to-high change there is an IRQ 0 edge like any other.

use super::pic::Pic;
use crate::machine::scheduler::{dispatch_of_tick, ticks_since, PIT_HZ};

/// One 8254 counter.
#[derive(Clone, Debug)]
pub struct PitChannel {
    /// Mode 0-5 (6 and 7 are stored as 2 and 3).
    pub mode: u8,
    /// Access: 1 = LSB only, 2 = MSB only, 3 = LSB then MSB.
    pub rw: u8,
    pub bcd: bool,
    /// The period of the running segment, 1..=65536 (10000 in BCD).
    count: u32,
    /// The last complete count written (the count register).
    written: u32,
    /// A count was loaded and the counter runs (or waits for its trigger).
    loaded: bool,
    /// Modes 1 and 5: loaded, waiting for a gate rising edge.
    waiting_trigger: bool,
    /// Gate low in a mode that stops counting: the elapsed count is frozen.
    paused: bool,
    /// Dispatch the segment's clock started at.
    origin: u64,
    /// PIT ticks since `origin` at which the segment started.
    tick_base: u64,
    /// Elapsed ticks already accumulated when the segment started (resume
    /// after a pause).
    e0: u64,
    /// Elapsed tick of the last OUT rising edge already delivered.
    done: u64,
    /// Modes 2/3: a count written mid-period and the tick (since `origin`)
    /// at which it replaces the running one.
    pending: Option<(u32, u64)>,
    /// OUT level while not counting (set by the control word).
    out_idle: bool,
    pub gate: bool,
    write_lsb: Option<u8>,
    read_msb_next: bool,
    latch: Option<u16>,
    latch_msb_next: bool,
    status_latch: Option<u8>,
    null_count: bool,
}

impl PitChannel {
    fn new(gate: bool) -> PitChannel {
        PitChannel {
            mode: 0,
            rw: 3,
            bcd: false,
            count: 65536,
            written: 65536,
            loaded: false,
            waiting_trigger: false,
            paused: false,
            origin: 0,
            tick_base: 0,
            e0: 0,
            done: 0,
            pending: None,
            // Power-on OUT is undefined on the 8254; high means the BIOS's
            // first control word makes no IRQ 0 edge.
            out_idle: true,
            gate,
            write_lsb: None,
            read_msb_next: false,
            latch: None,
            latch_msb_next: false,
            status_latch: None,
            null_count: false,
        }
    }

    fn modulus(&self) -> u64 {
        if self.bcd {
            10_000
        } else {
            65_536
        }
    }

    /// Promotes a pending mode 2/3 count whose switch tick has passed.
    fn settle(&mut self, now: u64) {
        if let Some((n, sw)) = self.pending {
            if !self.paused && self.loaded && ticks_since(self.origin, now, PIT_HZ) >= sw {
                self.count = n;
                self.tick_base = sw;
                self.e0 = 0;
                self.done = 0;
                self.pending = None;
            }
        }
    }

    /// Elapsed ticks of the running segment at `now` (None when not counting).
    fn elapsed(&self, now: u64) -> Option<u64> {
        if !self.loaded || self.waiting_trigger {
            return None;
        }
        if self.paused {
            return Some(self.e0);
        }
        let t = ticks_since(self.origin, now, PIT_HZ);
        Some(self.e0 + t.saturating_sub(self.tick_base))
    }

    /// OUT level at `now` (call `settle` first for exactness in modes 2/3).
    pub fn out(&self, now: u64) -> bool {
        let Some(e) = self.elapsed(now) else {
            return self.out_idle;
        };
        let n = self.count as u64;
        match self.mode {
            0 => e >= n,
            1 => e >= n,
            2 => {
                if self.paused {
                    true
                } else {
                    n == 1 || e % n != n - 1
                }
            }
            3 => {
                if self.paused {
                    true
                } else {
                    e % n < n.div_ceil(2)
                }
            }
            _ => e != n, // 4, 5: one-tick low strobe at terminal count
        }
    }

    /// The counting element's value at `now` (binary, before BCD encoding).
    fn value(&self, now: u64) -> u32 {
        let m = self.modulus();
        let n = self.count as u64;
        let Some(e) = self.elapsed(now) else {
            return (self.written as u64 % m) as u32;
        };
        let v = match self.mode {
            2 => n - e % n,
            3 => {
                let p = e % n;
                let hi = n.div_ceil(2);
                let ph = if p < hi { p } else { p - hi };
                (n & !1).saturating_sub(2 * ph)
            }
            _ => (n + m * (1 + e / m) - e) % m,
        };
        (v % m) as u32
    }

    /// Elapsed tick of the next OUT rising edge after `done`, if any.
    fn next_edge_e(&self) -> Option<u64> {
        if !self.loaded || self.waiting_trigger || self.paused {
            return None;
        }
        let n = self.count as u64;
        match self.mode {
            0 | 1 => (self.done < n).then_some(n),
            2 | 3 => (n >= 2).then(|| (self.done / n + 1) * n),
            _ => (self.done < n + 1).then_some(n + 1),
        }
    }

    /// Dispatch of the next OUT rising edge, `u64::MAX` if none.
    fn next_edge_dispatch(&self) -> u64 {
        match self.next_edge_e() {
            Some(e) => dispatch_of_tick(self.origin, e - self.e0 + self.tick_base, PIT_HZ),
            None => u64::MAX,
        }
    }

    /// Marks the next edge delivered; promotes a pending count that starts
    /// at that reload.
    fn consume_edge(&mut self) {
        if let Some(e) = self.next_edge_e() {
            self.done = e;
            if let Some((n, sw)) = self.pending {
                if e - self.e0 + self.tick_base >= sw {
                    self.count = n;
                    self.tick_base = sw;
                    self.e0 = 0;
                    self.done = 0;
                    self.pending = None;
                }
            }
        }
    }

    /// Starts a fresh segment of period `n` at `now`.
    fn start(&mut self, n: u32, now: u64) {
        self.count = n;
        self.loaded = true;
        self.origin = now;
        self.tick_base = 0;
        self.e0 = 0;
        self.done = 0;
        self.pending = None;
        self.paused = false;
        self.waiting_trigger = false;
    }

    /// A complete count was written.
    fn load_count(&mut self, raw: u16, now: u64) {
        let n = if self.bcd {
            let d = |s: u16| ((raw >> s) & 0xF).min(9) as u32;
            let v = d(12) * 1000 + d(8) * 100 + d(4) * 10 + d(0);
            if v == 0 {
                10_000
            } else {
                v
            }
        } else if raw == 0 {
            65_536
        } else {
            raw as u32
        };
        self.written = n;
        self.null_count = false;
        match self.mode {
            2 | 3 if self.loaded && !self.paused && !self.waiting_trigger => {
                // Takes effect at the end of the current period.
                let e = self.elapsed(now).unwrap_or(0);
                let cur = self.count as u64;
                let sw_e = (e / cur + 1) * cur;
                let sw_tick = sw_e - self.e0 + self.tick_base;
                self.pending = Some((n, sw_tick));
            }
            1 | 5 => {
                // Used at the next trigger; a running one-shot keeps going.
                if !self.loaded {
                    self.loaded = true;
                    self.waiting_trigger = true;
                    self.count = n;
                }
            }
            2 | 3 if !self.gate => {
                // Gate low: loaded, starts at the gate's rising edge.
                self.start(n, now);
                self.paused = true;
            }
            _ => {
                self.start(n, now);
                if !self.gate && (self.mode == 0 || self.mode == 4) {
                    self.paused = true;
                }
            }
        }
    }

    fn write(&mut self, v: u8, now: u64) {
        self.settle(now);
        match self.rw {
            1 => self.load_count(v as u16, now),
            2 => self.load_count((v as u16) << 8, now),
            _ => match self.write_lsb.take() {
                None => {
                    self.write_lsb = Some(v);
                    self.null_count = true;
                    if self.mode == 0 && self.loaded {
                        // Writing the first byte stops a mode 0 count.
                        let e = self.elapsed(now).unwrap_or(0);
                        self.paused = true;
                        self.e0 = e;
                    }
                }
                Some(lo) => self.load_count(lo as u16 | (v as u16) << 8, now),
            },
        }
    }

    fn encode(&self, v: u32) -> u16 {
        if self.bcd {
            let v = v % 10_000;
            ((v / 1000) << 12 | (v / 100 % 10) << 8 | (v / 10 % 10) << 4 | (v % 10)) as u16
        } else {
            v as u16
        }
    }

    fn status(&self, now: u64) -> u8 {
        (self.out(now) as u8) << 7
            | (self.null_count as u8) << 6
            | (self.rw & 3) << 4
            | (self.mode & 7) << 1
            | self.bcd as u8
    }

    fn latch_count(&mut self, now: u64) {
        if self.latch.is_none() {
            self.latch = Some(self.encode(self.value(now)));
            self.latch_msb_next = false;
        }
    }

    fn read(&mut self, now: u64) -> u8 {
        self.settle(now);
        if let Some(s) = self.status_latch.take() {
            return s;
        }
        if let Some(l) = self.latch {
            let b = match self.rw {
                1 => {
                    self.latch = None;
                    l as u8
                }
                2 => {
                    self.latch = None;
                    (l >> 8) as u8
                }
                _ => {
                    if self.latch_msb_next {
                        self.latch = None;
                        self.latch_msb_next = false;
                        (l >> 8) as u8
                    } else {
                        self.latch_msb_next = true;
                        l as u8
                    }
                }
            };
            return b;
        }
        let v = self.encode(self.value(now));
        match self.rw {
            1 => v as u8,
            2 => (v >> 8) as u8,
            _ => {
                let msb = self.read_msb_next;
                self.read_msb_next = !msb;
                if msb {
                    (v >> 8) as u8
                } else {
                    v as u8
                }
            }
        }
    }

    fn set_gate(&mut self, level: bool, now: u64) {
        self.settle(now);
        if level == self.gate {
            return;
        }
        self.gate = level;
        if level {
            // Rising edge.
            match self.mode {
                1 | 5 if self.loaded => self.start(self.written, now),
                // The counter reloads from the count register (the latest
                // count written, even one still waiting for a period end).
                2 | 3 if self.loaded => self.start(self.written, now),
                0 | 4 if self.loaded && self.paused && self.write_lsb.is_none() => {
                    let e = self.e0;
                    self.start(self.count, now);
                    self.e0 = e;
                    self.done = self.done.max(e);
                }
                _ => {}
            }
        } else {
            // Falling edge: modes 0, 2, 3, 4 stop counting.
            if matches!(self.mode, 0 | 2 | 3 | 4) && self.loaded && !self.paused {
                let e = self.elapsed(now).unwrap_or(0);
                if self.mode == 2 || self.mode == 3 {
                    self.pending = None;
                }
                self.paused = true;
                self.e0 = e;
            }
        }
    }

    /// The running period in ticks (the count register as loaded).
    pub fn period(&self) -> u32 {
        self.count
    }

    /// Whether a count has been loaded.
    pub fn is_loaded(&self) -> bool {
        self.loaded
    }
}

/// The three-channel 8254.
#[derive(Clone, Debug)]
pub struct Pit {
    pub ch: [PitChannel; 3],
}

impl Default for Pit {
    fn default() -> Self {
        Pit::new()
    }
}

impl Pit {
    /// Power-on: nothing loaded. The gate of channel 2 starts low (port 61h
    /// bit 0 clear).
    pub fn new() -> Pit {
        Pit {
            ch: [
                PitChannel::new(true),
                PitChannel::new(true),
                PitChannel::new(false),
            ],
        }
    }

    /// What an AT BIOS leaves at POST, at dispatch `now`: channel 0 mode 3
    /// count 0 (65536: IRQ 0 at 18.2065 Hz), channel 1 mode 2 count 18 (DRAM
    /// refresh, 15.08 µs), channel 2 mode 3 count 1331 (the 896 Hz beep).
    pub fn init_bios_defaults(&mut self, now: u64, pic: &mut Pic) {
        for (sel, count) in [(0u8, 0u16), (1, 18), (2, 1331)] {
            let mode = if sel == 1 { 2 } else { 3 };
            self.write(0x43, sel << 6 | 0x30 | mode << 1, now, pic);
            self.write(0x40 + sel as u16, count as u8, now, pic);
            self.write(0x40 + sel as u16, (count >> 8) as u8, now, pic);
        }
    }

    /// Delivers every channel 0 OUT rising edge due at or before `now` as
    /// IRQ 0.
    pub fn advance(&mut self, now: u64, pic: &mut Pic) {
        loop {
            let d = self.ch[0].next_edge_dispatch();
            if d > now {
                break;
            }
            pic.raise(0);
            self.ch[0].consume_edge();
        }
        for c in &mut self.ch {
            c.settle(now);
        }
    }

    /// Dispatch of the next IRQ 0 edge, `u64::MAX` if none.
    pub fn next_event(&self) -> u64 {
        self.ch[0].next_edge_dispatch()
    }

    /// Port read (40h-43h). 43h is write-only and reads as FFh.
    pub fn read(&mut self, port: u16, now: u64, pic: &mut Pic) -> u8 {
        self.advance(now, pic);
        match port & 3 {
            3 => 0xFF,
            c => self.ch[c as usize].read(now),
        }
    }

    /// Port write (40h-43h).
    pub fn write(&mut self, port: u16, v: u8, now: u64, pic: &mut Pic) {
        self.advance(now, pic);
        match port & 3 {
            3 => self.control(v, now, pic),
            c => self.ch[c as usize].write(v, now),
        }
    }

    /// Whether control word `v` (port 43h) only latches: a read-back
    /// (select 3) or a counter latch (access 0). Either freezes a count or
    /// status for the next reads and touches neither the counting, the OUT
    /// line nor the PIC ([`Pit::control`]), so it moves no event.
    pub fn latches_only(v: u8) -> bool {
        v >> 6 == 3 || (v >> 4) & 3 == 0
    }

    fn control(&mut self, v: u8, now: u64, pic: &mut Pic) {
        let sel = v >> 6;
        if sel == 3 {
            // Read-back: bit 5 clear latches counts, bit 4 clear latches
            // status, bits 3:1 select channels 2..0.
            for c in 0..3 {
                if v & (2 << c) != 0 {
                    let ch = &mut self.ch[c];
                    ch.settle(now);
                    if v & 0x10 == 0 && ch.status_latch.is_none() {
                        ch.status_latch = Some(ch.status(now));
                    }
                    if v & 0x20 == 0 {
                        ch.latch_count(now);
                    }
                }
            }
            return;
        }
        let ch = &mut self.ch[sel as usize];
        ch.settle(now);
        let rw = (v >> 4) & 3;
        if rw == 0 {
            ch.latch_count(now);
            return;
        }
        let old_out = ch.out(now);
        let mut mode = (v >> 1) & 7;
        if mode >= 6 {
            mode -= 4;
        }
        ch.mode = mode;
        ch.rw = rw;
        ch.bcd = v & 1 != 0;
        ch.loaded = false;
        ch.waiting_trigger = false;
        ch.paused = false;
        ch.pending = None;
        ch.write_lsb = None;
        ch.read_msb_next = false;
        ch.latch = None;
        ch.status_latch = None;
        ch.null_count = true;
        ch.out_idle = mode != 0;
        if sel == 0 && !old_out && ch.out_idle {
            pic.raise(0);
        }
    }

    /// Channel 2's gate (port 61h bit 0).
    pub fn set_gate2(&mut self, level: bool, now: u64) {
        self.ch[2].set_gate(level, now);
    }

    /// OUT of channel `c` at `now`.
    pub fn out(&mut self, c: usize, now: u64) -> bool {
        let ch = &mut self.ch[c.min(2)];
        ch.settle(now);
        ch.out(now)
    }

    /// Current counter value of channel `c` at `now` (binary), as a read
    /// would see it without a latch.
    pub fn counter(&mut self, c: usize, now: u64) -> u32 {
        let ch = &mut self.ch[c.min(2)];
        ch.settle(now);
        ch.value(now) % ch.modulus() as u32
    }
}
