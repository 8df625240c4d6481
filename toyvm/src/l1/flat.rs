//! A flat test bus that implements [`EngineBus`]: 2 MiB of RAM with an A20
//! gate, one optional device window (reads there have a side effect, so code
//! there cannot be cached), a few scripted ports whose values are pure
//! functions of the clock, and the same 4 KiB code-page write log the DOS
//! machine's memory keeps.
//!
//! Owns only test fixtures: it lets L1 be proven against L0 without the DOS
//! machine. It must not model any real device.

use crate::bus::{Bus, EngineBus, Width};
use std::collections::BTreeMap;

/// RAM size (a power of two above the real-mode limit).
pub const FLAT_SIZE: usize = 2 << 20;

/// A scripted port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Port {
    /// Reads `base`, with `bits` also set during dispatches
    /// `[phase + k*period, phase + k*period + high)` (a retrace-like square
    /// wave), and `noise` set on odd dispatches. Pure.
    Wave {
        period: u64,
        high: u64,
        phase: u64,
        bits: u32,
        base: u32,
        noise: u32,
    },
    /// Reads `before` until dispatch `at`, then `after`. Pure.
    Step { at: u64, before: u32, after: u32 },
    /// Each read returns the next value of a counter: a side effect, so no
    /// prediction and attention after each read.
    Counter(u32),
}

impl Port {
    fn value(&self, now: u64) -> u32 {
        match *self {
            Port::Wave {
                period,
                high,
                phase,
                bits,
                base,
                noise,
            } => {
                let n = if now & 1 == 1 { noise } else { 0 };
                if wave_high(now, period, high, phase) {
                    base | bits | n
                } else {
                    base | n
                }
            }
            Port::Step { at, before, after } => {
                if now < at {
                    before
                } else {
                    after
                }
            }
            Port::Counter(v) => v,
        }
    }
}

fn wave_pos(now: u64, period: u64, phase: u64) -> u64 {
    (now + period - phase % period) % period
}

fn wave_high(now: u64, period: u64, high: u64, phase: u64) -> bool {
    wave_pos(now, period, phase) < high
}

/// A port access the guest made that is observable (writes, side-effect
/// reads), with its dispatch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IoEvent {
    pub at: u64,
    pub port: u16,
    pub value: u32,
    pub write: bool,
}

/// The flat bus.
#[derive(Clone, Debug)]
pub struct FlatBus {
    pub mem: Vec<u8>,
    /// A20 gate (closed: physical address bit 20 is forced to 0).
    pub a20: bool,
    /// `[start, end)` physical: reads count in `device_reads`; not cacheable.
    pub device: Option<(u32, u32)>,
    pub device_reads: u64,
    pub ports: BTreeMap<u16, Port>,
    pub io_log: Vec<IoEvent>,
    /// Port reads that reached the bus (folded reads never do: not compared).
    pub port_reads: u64,
    attention: bool,
    code_pages: Vec<bool>,
    code_writes: Vec<u32>,
}

impl Default for FlatBus {
    fn default() -> Self {
        FlatBus::new()
    }
}

impl FlatBus {
    pub fn new() -> FlatBus {
        FlatBus {
            mem: vec![0; FLAT_SIZE],
            a20: true,
            device: None,
            device_reads: 0,
            ports: BTreeMap::new(),
            io_log: Vec::new(),
            port_reads: 0,
            attention: false,
            code_pages: vec![false; FLAT_SIZE >> 12],
            code_writes: Vec::new(),
        }
    }

    #[inline(always)]
    fn map(&self, addr: u32) -> usize {
        let a = if self.a20 { addr } else { addr & !(1 << 20) };
        (a as usize) & (FLAT_SIZE - 1)
    }

    /// A host-side write (a loader, a DOS read): logged for the engine like
    /// any write into marked code.
    pub fn host_write(&mut self, addr: u32, bytes: &[u8]) {
        for (i, &b) in bytes.iter().enumerate() {
            self.write8(addr.wrapping_add(i as u32), b);
        }
    }

    /// Moves the A20 gate (as a port write would).
    pub fn set_a20(&mut self, on: bool) {
        self.a20 = on;
    }

    /// A fingerprint of RAM.
    pub fn ram_hash(&self) -> u64 {
        xxhash_rust::xxh3::xxh3_64(&self.mem)
    }
}

impl Bus for FlatBus {
    #[inline(always)]
    fn read8(&mut self, addr: u32) -> u8 {
        let a = self.map(addr);
        if let Some((s, e)) = self.device {
            if (s as usize..e as usize).contains(&a) {
                self.device_reads += 1;
            }
        }
        self.mem[a]
    }
    #[inline(always)]
    fn write8(&mut self, addr: u32, v: u8) {
        let a = self.map(addr);
        self.mem[a] = v;
        if self.code_pages[a >> 12] {
            self.code_writes.push(a as u32);
        }
    }
    fn io_read(&mut self, port: u16, w: Width, now: u64) -> u32 {
        self.port_reads += 1;
        match self.ports.get_mut(&port) {
            Some(Port::Counter(v)) => {
                let r = *v;
                *v = v.wrapping_add(1);
                self.attention = true;
                self.io_log.push(IoEvent {
                    at: now,
                    port,
                    value: r & w.mask(),
                    write: false,
                });
                r & w.mask()
            }
            Some(p) => p.value(now) & w.mask(),
            None => w.mask(),
        }
    }
    fn io_write(&mut self, port: u16, w: Width, v: u32, now: u64) {
        self.attention = true;
        self.io_log.push(IoEvent {
            at: now,
            port,
            value: v & w.mask(),
            write: true,
        });
    }
}

impl EngineBus for FlatBus {
    #[inline(always)]
    fn phys(&self, addr: u32) -> u32 {
        self.map(addr) as u32
    }
    fn code_cacheable(&self, start: u32, end: u32) -> bool {
        if end as usize > FLAT_SIZE {
            return false;
        }
        match self.device {
            Some((s, e)) => end <= s || start >= e,
            None => true,
        }
    }
    fn mark_code(&mut self, start: u32, end: u32) {
        for p in (start >> 12)..=((end - 1) >> 12) {
            if let Some(x) = self.code_pages.get_mut(p as usize) {
                *x = true;
            }
        }
    }
    fn clear_code_marks(&mut self) {
        self.code_pages.iter_mut().for_each(|x| *x = false);
    }
    fn take_code_writes(&mut self, out: &mut Vec<u32>) {
        out.append(&mut self.code_writes);
    }
    fn port_stable_until(&mut self, port: u16, w: Width, mask: u32, now: u64) -> Option<u64> {
        let mask = mask & w.mask();
        match self.ports.get(&port) {
            None => Some(u64::MAX),
            Some(Port::Counter(_)) => None,
            Some(Port::Step { at, before, after }) => {
                if now < *at && (before ^ after) & mask != 0 {
                    Some(*at)
                } else {
                    Some(u64::MAX)
                }
            }
            Some(&Port::Wave {
                period,
                high,
                phase,
                bits,
                noise,
                ..
            }) => {
                if noise & mask != 0 {
                    return Some(now + 1);
                }
                if bits & mask == 0 || high == 0 || high >= period {
                    return Some(u64::MAX);
                }
                let pos = wave_pos(now, period, phase);
                Some(if pos < high {
                    now + (high - pos)
                } else {
                    now + (period - pos)
                })
            }
        }
    }
    fn take_io_attention(&mut self) -> bool {
        std::mem::replace(&mut self.attention, false)
    }
}
