//! The Sound Blaster Pro 2 DSP (version 3.02) and mixer at 220h, IRQ 7,
//! 8-bit DMA channel 1.
//!
//! Owns the DSP reset handshake (226h, AAh at 22Ah, data-available bit 7 of
//! 22Eh), the command parser (version, speaker, time constant, sample rate,
//! block size, direct DAC, 8-bit single-cycle / auto-init / high-speed DMA
//! playback and recording, ADPCM timing, pause/continue/exit, silence,
//! force IRQ, test registers) and the SB Pro mixer registers (224h/225h,
//! stored). The FM ports of the card (220h-223h, 228h/229h) belong to the
//! OPL2 and are routed by `Devices`. It must not produce audio: consumed
//! samples are counted and hashed so the oracle can compare them.
//!
//! Timing: the DSP consumes one byte every `(256 - TC)` µs (time constant)
//! or `1 / rate` s (41h), i.e. byte `j` of a run started at dispatch `o` is
//! consumed at `o + ceil(j * DISPATCHES_PER_SECOND * den / num)`. The
//! block-end IRQ is raised at the dispatch of the block's last byte. DMA
//! position (address/count of the 8237) is bookkept byte by byte up to any
//! dispatch asked about, so the guest sees the exact position.
//!
//! Canonical memory moments: the bytes' *addresses* are fixed when they are
//! consumed, but guest RAM is read (or, for recording, written with silence
//! 80h) only at canonical moments: the block-end event and any guest access
//! to an SB or DMA port. Those happen at the same dispatch in every arm, so
//! the sample hash never depends on how often the machine polls the devices.
//! A program that rewrites a buffer byte after the DSP consumed it but
//! before the next block end/port access is heard differently than on
//! hardware; nothing in the DOS corpus depends on that.

use super::dma::Dma;
use super::pic::Pic;
use crate::machine::scheduler::{dispatch_of_tick_rational, ticks_since_rational};
use std::collections::VecDeque;

/// The BLASTER environment string that describes this card (the DOS layer
/// puts it in the environment): base 220h, IRQ 7, DMA 1, type 4 (SB Pro 2).
pub const BLASTER: &str = "A220 I7 D1 T4";

/// FNV-1a 64-bit offset basis: the sample hash of no samples.
pub const SAMPLE_HASH_INIT: u64 = 0xcbf2_9ce4_8422_2325;

/// One DMA transfer in progress.
#[derive(Clone, Debug)]
struct Transfer {
    auto_init: bool,
    /// Device-to-memory (ADC) instead of playback.
    record: bool,
    /// Silence (80h): no DMA, just time.
    silence: bool,
    high_speed: bool,
    /// Samples per byte (ADPCM packs 2, 3 or 4): the byte rate divides.
    spb: u64,
    /// Block length in bytes.
    len: u32,
    /// Bytes consumed in the current block.
    done: u32,
    /// Byte rate num/den bytes per second.
    num: u64,
    den: u64,
    /// Dispatch the current run (start, continue or un-stall) began.
    origin: u64,
    /// Bytes consumed since `origin`.
    run: u64,
    paused: bool,
    /// Waiting for the DMA channel to be unmasked.
    stalled: bool,
    /// DAh: stop at the end of this block.
    exit_after_block: bool,
}

#[derive(Clone, Debug)]
pub struct SoundBlaster {
    pub base: u16,
    pub irq: u8,
    pub dma_channel: usize,
    reset_latch: bool,
    out: VecDeque<u8>,
    last_out: u8,
    cmd: Option<u8>,
    args: Vec<u8>,
    need: usize,
    pub speaker_on: bool,
    pub time_constant: u8,
    /// Current byte rate as num/den bytes per second.
    rate: (u64, u64),
    /// Block size (48h), bytes.
    pub block_size: u32,
    /// The DSP's 8-bit IRQ line (cleared by reading 22Eh).
    pub irq_pending: bool,
    test_reg: u8,
    pub mixer_index: u8,
    pub mixer: [u8; 256],
    xfer: Option<Transfer>,
    /// Addresses consumed but not yet read from RAM (see module docs).
    pending: Vec<u32>,
    /// Samples consumed (DMA bytes and direct DAC writes), counted when they
    /// reach the hash.
    pub samples: u64,
    /// FNV-1a over every consumed sample byte in order.
    pub sample_hash: u64,
    /// Block-end interrupts raised.
    pub block_irqs: u64,
}

impl Default for SoundBlaster {
    fn default() -> Self {
        SoundBlaster::new()
    }
}

impl SoundBlaster {
    pub fn new() -> SoundBlaster {
        let mut sb = SoundBlaster {
            base: 0x220,
            irq: 7,
            dma_channel: 1,
            reset_latch: false,
            out: VecDeque::new(),
            last_out: 0xAA,
            cmd: None,
            args: Vec::new(),
            need: 0,
            speaker_on: false,
            time_constant: 0,
            rate: (1_000_000, 256),
            block_size: 0x800,
            irq_pending: false,
            test_reg: 0,
            mixer_index: 0,
            mixer: [0; 256],
            xfer: None,
            pending: Vec::new(),
            samples: 0,
            sample_hash: SAMPLE_HASH_INIT,
            block_irqs: 0,
        };
        sb.mixer_reset();
        sb
    }

    /// Whether `port` is a DSP/mixer port of this card (the FM ports are
    /// not).
    pub fn claims(&self, port: u16) -> bool {
        port >= self.base && port < self.base + 0x10 && !matches!(port - self.base, 0..=3 | 8 | 9)
    }

    fn mixer_reset(&mut self) {
        self.mixer = [0; 256];
        self.mixer[0x04] = 0x99; // voice
        self.mixer[0x0A] = 0x00; // mic
        self.mixer[0x0C] = 0x00; // input filter/source
        self.mixer[0x0E] = 0x00; // mono, output filter on
        self.mixer[0x22] = 0x99; // master
        self.mixer[0x26] = 0x99; // FM
        self.mixer[0x28] = 0x00; // CD
        self.mixer[0x2E] = 0x00; // line
    }

    fn hash_byte(&mut self, b: u8) {
        self.sample_hash ^= b as u64;
        self.sample_hash = self.sample_hash.wrapping_mul(0x0000_0100_0000_01b3);
        self.samples += 1;
    }

    /// Reads (or, recording, writes) guest RAM for every byte consumed so
    /// far. Called only at canonical moments.
    pub fn flush(&mut self, ram: &mut [u8]) {
        let record = self.xfer.as_ref().is_some_and(|x| x.record);
        let pending = std::mem::take(&mut self.pending);
        for &a in &pending {
            if record {
                if let Some(slot) = ram.get_mut(a as usize) {
                    *slot = 0x80;
                }
                self.hash_byte(0x80);
            } else {
                let b = ram.get(a as usize).copied().unwrap_or(0xFF);
                self.hash_byte(b);
            }
        }
        self.pending = pending;
        self.pending.clear();
    }

    /// Bytes (of the current run) at which the current block ends.
    fn block_end_index(x: &Transfer) -> u64 {
        x.run + (x.len - x.done) as u64
    }

    /// Dispatch of the next block-end IRQ, `u64::MAX` if none will come
    /// without a guest action (paused, stalled, or DMA terminal count with
    /// auto-init off before the block ends).
    pub fn next_event(&self, dma: &Dma) -> u64 {
        let Some(x) = &self.xfer else {
            return u64::MAX;
        };
        if x.paused || x.stalled {
            return u64::MAX;
        }
        let left = (x.len - x.done) as u64;
        if !x.silence {
            if !dma.ready(self.dma_channel) {
                return u64::MAX;
            }
            let c = dma.channel(self.dma_channel);
            if !c.auto_init() && (c.remaining() as u64) < left {
                return u64::MAX;
            }
        }
        dispatch_of_tick_rational(x.origin, Self::block_end_index(x), x.num, x.den)
    }

    /// Bookkeeps consumption up to `now` and performs every block end due,
    /// in order (flushing RAM and raising the IRQ at each).
    pub fn advance(&mut self, now: u64, dma: &mut Dma, ram: &mut [u8], pic: &mut Pic) {
        loop {
            let Some(x) = &mut self.xfer else {
                return;
            };
            if x.paused || x.stalled {
                return;
            }
            let due = ticks_since_rational(x.origin, now, x.num, x.den);
            let end_idx = Self::block_end_index(x);
            let target = due.min(end_idx);
            while x.run < target {
                if x.silence {
                    x.run += 1;
                    x.done += 1;
                    continue;
                }
                match dma.transfer_address(self.dma_channel) {
                    Some(a) => {
                        self.pending.push(a);
                        x.run += 1;
                        x.done += 1;
                    }
                    None => {
                        x.stalled = true;
                        break;
                    }
                }
            }
            if x.stalled || x.run < end_idx {
                return;
            }
            // Block end at the dispatch of its last byte.
            let auto = x.auto_init && !x.exit_after_block;
            let silence = x.silence;
            if auto {
                x.done = 0;
                x.len = self.block_size.max(1);
            }
            if !silence {
                self.flush(ram);
            }
            if !auto {
                self.xfer = None;
            }
            self.block_irqs += 1;
            self.raise_irq(pic);
        }
    }

    fn raise_irq(&mut self, pic: &mut Pic) {
        if !self.irq_pending {
            self.irq_pending = true;
            pic.raise(self.irq);
        }
    }

    /// The DMA registers changed (a guest DMA port write at `now`): a stalled
    /// transfer resumes if its channel is now unmasked.
    pub fn dma_changed(&mut self, now: u64, dma: &Dma) {
        if let Some(x) = &mut self.xfer {
            if x.stalled && (x.silence || dma.ready(self.dma_channel)) {
                x.stalled = false;
                x.origin = now;
                x.run = 0;
            }
        }
    }

    fn start(
        &mut self,
        now: u64,
        len: u32,
        auto_init: bool,
        record: bool,
        spb: u64,
        high_speed: bool,
    ) {
        self.xfer = Some(Transfer {
            auto_init,
            record,
            silence: false,
            high_speed,
            spb: spb.max(1),
            len: len.max(1),
            done: 0,
            num: self.rate.0,
            den: self.rate.1 * spb.max(1),
            origin: now,
            run: 0,
            paused: false,
            stalled: false,
            exit_after_block: false,
        });
    }

    fn reset(&mut self, ram: &mut [u8]) {
        self.flush(ram);
        self.xfer = None;
        self.out.clear();
        self.out.push_back(0xAA);
        self.cmd = None;
        self.args.clear();
        self.need = 0;
        self.irq_pending = false;
        self.speaker_on = false;
        self.rate = (1_000_000, 256);
        self.time_constant = 0;
    }

    fn high_speed_busy(&self) -> bool {
        self.xfer
            .as_ref()
            .is_some_and(|x| x.high_speed && !x.stalled)
    }

    /// DSP/mixer port read. `Devices` has already advanced to `now`.
    pub fn read(&mut self, port: u16, now: u64, ram: &mut [u8]) -> u8 {
        let _ = now;
        self.flush(ram);
        match port - self.base {
            0x04 => self.mixer_index,
            0x05 => self.mixer[self.mixer_index as usize],
            0x0A => {
                if let Some(b) = self.out.pop_front() {
                    self.last_out = b;
                }
                self.last_out
            }
            0x0C => {
                if self.high_speed_busy() {
                    0xFF
                } else {
                    0x7F
                }
            }
            0x0E => {
                self.irq_pending = false;
                if self.out.is_empty() {
                    0x7F
                } else {
                    0xFF
                }
            }
            _ => 0xFF,
        }
    }

    /// DSP/mixer port write. `Devices` has already advanced to `now`.
    pub fn write(
        &mut self,
        port: u16,
        v: u8,
        now: u64,
        dma: &mut Dma,
        ram: &mut [u8],
        pic: &mut Pic,
    ) {
        self.flush(ram);
        match port - self.base {
            0x04 => self.mixer_index = v,
            0x05 => {
                if self.mixer_index == 0 {
                    self.mixer_reset();
                } else {
                    self.mixer[self.mixer_index as usize] = v;
                }
            }
            0x06 => {
                if v & 1 != 0 {
                    self.reset_latch = true;
                } else if self.reset_latch {
                    self.reset_latch = false;
                    self.reset(ram);
                }
            }
            0x0C => {
                if self.high_speed_busy() && self.xfer.as_ref().is_some_and(|x| x.auto_init) {
                    // High-speed auto-init ignores commands until reset.
                    return;
                }
                self.command_byte(v, now, dma, ram, pic);
            }
            _ => {}
        }
    }

    fn arg_count(cmd: u8) -> usize {
        match cmd {
            0x10 | 0x38 | 0x40 | 0xE0 | 0xE2 | 0xE4 => 1,
            0x14 | 0x16 | 0x17 | 0x24 | 0x41 | 0x42 | 0x48 | 0x74..=0x77 | 0x80 => 2,
            0xB0..=0xCF => 3,
            _ => 0,
        }
    }

    fn command_byte(&mut self, v: u8, now: u64, dma: &mut Dma, ram: &mut [u8], pic: &mut Pic) {
        match self.cmd {
            None => {
                self.cmd = Some(v);
                self.args.clear();
                self.need = Self::arg_count(v);
            }
            Some(_) => self.args.push(v),
        }
        if self.args.len() < self.need {
            return;
        }
        let cmd = self.cmd.take().unwrap_or(0);
        let a = std::mem::take(&mut self.args);
        let len16 = |a: &[u8]| (a[0] as u32 | (a[1] as u32) << 8) + 1;
        match cmd {
            0x10 => self.hash_byte(a[0]),
            0x14 => self.start(now, len16(&a), false, false, 1, false),
            0x16 | 0x17 => self.start(now, len16(&a), false, false, 4, false),
            0x74 | 0x75 => self.start(now, len16(&a), false, false, 2, false),
            0x76 | 0x77 => self.start(now, len16(&a), false, false, 3, false),
            0x1C => self.start(now, self.block_size, true, false, 1, false),
            0x1F => self.start(now, self.block_size, true, false, 4, false),
            0x7D => self.start(now, self.block_size, true, false, 2, false),
            0x7F => self.start(now, self.block_size, true, false, 3, false),
            0x90 => self.start(now, self.block_size, true, false, 1, true),
            0x91 => self.start(now, self.block_size, false, false, 1, true),
            0x24 => self.start(now, len16(&a), false, true, 1, false),
            0x2C => self.start(now, self.block_size, true, true, 1, false),
            0x98 => self.start(now, self.block_size, true, true, 1, true),
            0x99 => self.start(now, self.block_size, false, true, 1, true),
            0x20 => self.out.push_back(0x80),
            0x40 => {
                self.time_constant = a[0];
                self.set_rate(now, 1_000_000, 256 - a[0] as u64, dma, ram, pic);
            }
            0x41 | 0x42 => {
                let r = ((a[0] as u64) << 8 | a[1] as u64).max(1);
                self.set_rate(now, r, 1, dma, ram, pic);
            }
            0x48 => self.block_size = len16(&a),
            0x80 => {
                self.start(now, len16(&a), false, false, 1, false);
                if let Some(x) = &mut self.xfer {
                    x.silence = true;
                }
            }
            0xD0 => {
                if let Some(x) = &mut self.xfer {
                    x.paused = true;
                }
            }
            0xD4 => {
                if let Some(x) = &mut self.xfer {
                    if x.paused {
                        x.paused = false;
                        x.origin = now;
                        x.run = 0;
                    }
                }
            }
            0xDA => {
                if let Some(x) = &mut self.xfer {
                    x.exit_after_block = true;
                }
            }
            0xD1 => self.speaker_on = true,
            0xD3 => self.speaker_on = false,
            0xD8 => self
                .out
                .push_back(if self.speaker_on { 0xFF } else { 0x00 }),
            0xE0 => self.out.push_back(!a[0]),
            0xE1 => {
                self.out.push_back(3);
                self.out.push_back(2);
            }
            0xE3 => {
                for b in b"COPYRIGHT (C) CREATIVE TECHNOLOGY LTD, 1992.\0" {
                    self.out.push_back(*b);
                }
            }
            0xE4 => self.test_reg = a[0],
            0xE8 => self.out.push_back(self.test_reg),
            0xF2 => self.raise_irq(pic),
            0xF8 => self.out.push_back(0),
            _ => {} // MIDI, SB16 and unknown commands: arguments swallowed
        }
        // Keep the reply queue bounded against hostile command floods.
        while self.out.len() > 64 {
            self.out.pop_front();
        }
    }

    /// A rate change re-bases a running transfer at `now`.
    fn set_rate(
        &mut self,
        now: u64,
        num: u64,
        den: u64,
        dma: &mut Dma,
        ram: &mut [u8],
        pic: &mut Pic,
    ) {
        self.advance(now, dma, ram, pic);
        self.rate = (num, den);
        if let Some(x) = &mut self.xfer {
            x.num = num;
            x.den = den * x.spb;
            x.origin = now;
            x.run = 0;
        }
    }

    /// Whether a DMA transfer is in progress (not necessarily running).
    pub fn dma_active(&self) -> bool {
        self.xfer.is_some()
    }
}
