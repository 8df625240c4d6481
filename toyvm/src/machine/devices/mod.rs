//! The PC's devices behind the I/O ports and the VGA memory window, and the
//! one place that orders their obligations on the guest clock.
//!
//! Owns port decoding (byte-wise: a word or dword access is the byte
//! accesses at port, port+1, ... in order, which is what the ISA bus does),
//! the list of unclaimed ports, the small system ports (61h system control
//! B with the speaker and channel 2 gate, 92h fast A20/reset, 201h game
//! port), the cached next event and [`Devices::advance`]. Each device lives
//! in its own module named after its hardware unit. It must not read wall
//! time, iterate hash maps, or run the CPU: the machine drives it with the
//! dispatch count of the instruction making each access.
//!
//! Contract with the machine (docs/machine-devices.md):
//! - Before executing the instruction at dispatch `now`, if
//!   `now >= next_event()`, call `advance(now, ram)`; then check
//!   `irq_pending()` (taken only with IF=1 and no interrupt shadow) and, if
//!   taking it, `acknowledge_irq()` for the vector.
//! - Port and VGA memory accesses pass the dispatch of the instruction making
//!   them; `io_read`/`io_write` first perform every obligation due at or
//!   before `now`, so the guest never sees a stale device.
//! - HLT: advance time to `next_event()` (if `u64::MAX`, nothing will ever
//!   wake the CPU without input).

pub mod cmos;
pub mod dma;
pub mod keyboard;
pub mod opl;
pub mod pic;
pub mod pit;
pub mod sb;
pub mod vga;

pub use cmos::Cmos;
pub use dma::Dma;
pub use keyboard::Keyboard;
pub use opl::Opl2;
pub use pic::Pic;
pub use pit::Pit;
pub use sb::SoundBlaster;
pub use vga::Vga;

use crate::frame::Frame;
use crate::machine::scheduler::{parse_key_script, ticks_since, PIT_HZ};
use shared_ir::flags::Width;
use std::collections::BTreeMap;

/// Value read from port 201h: no joystick. Buttons (bits 7:4) read 1 =
/// released, and the four axis one-shots (bits 3:0) never time out, so a
/// detection loop that triggers them and waits for a bit to clear gives up.
pub const GAME_PORT_NO_JOYSTICK: u8 = 0xFF;

/// A port nothing decodes, with how often the guest touched it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnclaimedPort {
    pub port: u16,
    pub reads: u64,
    pub writes: u64,
}

/// The PC speaker as port 61h drives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Speaker {
    /// Port 61h bit 1 (speaker data enable).
    pub data: bool,
    /// Changes of bit 0 or 1 of port 61h (each one an audible edge or gate
    /// change).
    pub changes: u64,
    /// FNV-1a over (dispatch, bits 1:0) of every change, for the oracle.
    pub hash: u64,
}

/// All devices of the machine.
#[derive(Clone, Debug)]
pub struct Devices {
    pub pic: Pic,
    pub pit: Pit,
    pub kbd: Keyboard,
    pub vga: Vga,
    pub sb: SoundBlaster,
    pub dma: Dma,
    pub opl: Opl2,
    pub cmos: Cmos,
    /// Port 61h bits 3:0 and 7 as last written.
    pub port61: u8,
    pub speaker: Speaker,
    /// Port 92h (system control A): bit 1 fast A20, bit 0 fast reset.
    pub port92: u8,
    /// A guest asked for a CPU reset (8042 FEh/D1h or port 92h bit 0).
    pub reset_requested: bool,
    unclaimed: BTreeMap<u16, UnclaimedPort>,
    next_event: u64,
}

impl Default for Devices {
    fn default() -> Self {
        Devices::new()
    }
}

fn fnv(h: u64, bytes: &[u8]) -> u64 {
    let mut h = h;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

impl Devices {
    /// Devices as at power-on, VGA in mode 03h. The machine's BIOS init then
    /// calls `pic.init_bios_defaults()` and `pit.init_bios_defaults(..)`
    /// (or [`Devices::init_bios_defaults`] for both).
    pub fn new() -> Devices {
        let mut d = Devices {
            pic: Pic::new(),
            pit: Pit::new(),
            kbd: Keyboard::new(),
            vga: Vga::new(),
            sb: SoundBlaster::new(),
            dma: Dma::new(),
            opl: Opl2::new(),
            cmos: Cmos::new(),
            port61: 0,
            speaker: Speaker {
                data: false,
                changes: 0,
                hash: sb::SAMPLE_HASH_INIT,
            },
            port92: 0,
            reset_requested: false,
            unclaimed: BTreeMap::new(),
            next_event: u64::MAX,
        };
        d.refresh();
        d
    }

    /// PIC vectors 08h/70h with BIOS masks, PIT channels as the BIOS leaves
    /// them (18.2 Hz IRQ 0 starting at `now`), VGA mode 03h.
    pub fn init_bios_defaults(&mut self, now: u64) {
        self.pic.init_bios_defaults();
        self.pit.init_bios_defaults(now, &mut self.pic);
        self.vga.set_mode(3);
        self.refresh();
    }

    /// Recomputes the cached [`Devices::next_event`]. Every `Devices` method
    /// does this itself; call it after changing a device directly through
    /// its public field (e.g. `dev.pit.write(..)`, `dev.kbd.schedule(..)`).
    pub fn refresh(&mut self) {
        self.next_event = self
            .pit
            .next_event()
            .min(self.cmos.next_event())
            .min(self.kbd.next_event())
            .min(self.sb.next_event(&self.dma));
    }

    /// Absolute dispatch of the earliest pending obligation, `u64::MAX` if
    /// none.
    #[inline]
    pub fn next_event(&self) -> u64 {
        self.next_event
    }

    /// Performs every obligation due at or before `now`: IRQ 0 edges, RTC
    /// interrupts, keyboard bytes, Sound Blaster block ends (reading the
    /// block's bytes from `ram`). Also brings lazily kept positions (DMA
    /// address/count) up to `now`. Idempotent for a given `now`.
    pub fn advance(&mut self, now: u64, ram: &mut [u8]) {
        self.pit.advance(now, &mut self.pic);
        self.cmos.advance(now, &mut self.pic);
        self.kbd.advance(now, &mut self.pic);
        self.sb.advance(now, &mut self.dma, ram, &mut self.pic);
        self.refresh();
    }

    /// The master PIC's INTR line.
    #[inline]
    pub fn irq_pending(&self) -> bool {
        self.pic.intr()
    }

    /// The INTA cycle: the vector to take (IRR → ISR, cascade through IRQ 2).
    pub fn acknowledge_irq(&mut self) -> u8 {
        self.pic.acknowledge()
    }

    /// Port read of `w` at dispatch `now`. Unknown ports read FFh per byte
    /// and are counted in [`Devices::unclaimed_ports`].
    pub fn io_read(&mut self, port: u16, w: Width, now: u64, ram: &mut [u8]) -> u32 {
        self.advance(now, ram);
        let mut v = 0u32;
        for i in 0..w.bytes() {
            v |= (self.read8(port.wrapping_add(i as u16), now, ram) as u32) << (8 * i);
        }
        self.refresh();
        v
    }

    /// Port write of `w` at dispatch `now`.
    pub fn io_write(&mut self, port: u16, w: Width, v: u32, now: u64, ram: &mut [u8]) {
        self.advance(now, ram);
        for i in 0..w.bytes() {
            self.write8(port.wrapping_add(i as u16), (v >> (8 * i)) as u8, now, ram);
        }
        self.refresh();
    }

    fn note_unclaimed(&mut self, port: u16, write: bool) {
        let e = self.unclaimed.entry(port).or_insert(UnclaimedPort {
            port,
            reads: 0,
            writes: 0,
        });
        if write {
            e.writes += 1;
        } else {
            e.reads += 1;
        }
    }

    /// Ports the guest touched that nothing decodes, in port order.
    pub fn unclaimed_ports(&self) -> Vec<UnclaimedPort> {
        self.unclaimed.values().copied().collect()
    }

    /// Port 61h as read at `now`: bits 1:0 as written, 3:2 as written, bit 4
    /// the DRAM refresh toggle (flips every 18 PIT ticks, 15.08 µs, the
    /// BIOS's channel 1 period), bit 5 channel 2 OUT, bits 7:6 (parity and
    /// channel check) 0.
    fn read61(&mut self, now: u64) -> u8 {
        let refresh = ((ticks_since(0, now, PIT_HZ) / 18) & 1) as u8;
        let out2 = self.pit.out(2, now) as u8;
        (self.port61 & 0x0F) | refresh << 4 | out2 << 5
    }

    fn write61(&mut self, v: u8, now: u64) {
        let old = self.port61;
        self.port61 = v & 0x8F;
        if (old ^ v) & 0x01 != 0 {
            self.pit.set_gate2(v & 0x01 != 0, now);
        }
        if (old ^ v) & 0x03 != 0 {
            self.speaker.data = v & 0x02 != 0;
            self.speaker.changes += 1;
            let mut rec = [0u8; 9];
            rec[..8].copy_from_slice(&now.to_le_bytes());
            rec[8] = v & 3;
            self.speaker.hash = fnv(self.speaker.hash, &rec);
        }
    }

    fn read8(&mut self, port: u16, now: u64, ram: &mut [u8]) -> u8 {
        match port {
            0x00..=0x0F | 0x80..=0x8F | 0xC0..=0xDF => {
                // A guest look at the DMA is a canonical moment for the SB's
                // deferred memory reads.
                self.sb.flush(ram);
                self.dma.read(port)
            }
            0x20 | 0x21 | 0xA0 | 0xA1 => self.pic.read(port),
            0x40..=0x43 => self.pit.read(port, now, &mut self.pic),
            0x60 => self.kbd.read_data(now, &mut self.pic),
            0x61 => self.read61(now),
            0x64 => self.kbd.read_status(now, &mut self.pic),
            0x70 => 0xFF, // index register is write-only
            0x71 => self.cmos.read_data(now, &mut self.pic),
            0x92 => self.port92 & !0x01,
            0x201 => GAME_PORT_NO_JOYSTICK,
            0x388 | 0x389 => self.read_opl(port, now),
            p if (0x220..=0x22F).contains(&p) => {
                if self.sb.claims(p) {
                    self.sb.read(p, now, ram)
                } else {
                    self.read_opl(p, now)
                }
            }
            p if self.vga.claims(p) => self.vga.read_port(p, now),
            _ => {
                self.note_unclaimed(port, false);
                0xFF
            }
        }
    }

    /// OPL2 reads: the status register at the address ports (388h, 220h,
    /// 222h, 228h); data ports read FFh.
    fn read_opl(&mut self, port: u16, now: u64) -> u8 {
        if port & 1 == 0 {
            self.opl.status(now)
        } else {
            0xFF
        }
    }

    fn write_opl(&mut self, port: u16, v: u8, now: u64) {
        if port & 1 == 0 {
            self.opl.write_index(v);
        } else {
            self.opl.write_data(v, now);
        }
    }

    fn write8(&mut self, port: u16, v: u8, now: u64, ram: &mut [u8]) {
        match port {
            0x00..=0x0F | 0x80..=0x8F | 0xC0..=0xDF => {
                self.sb.flush(ram);
                self.dma.write(port, v);
                self.sb.dma_changed(now, &self.dma);
            }
            0x20 | 0x21 | 0xA0 | 0xA1 => self.pic.write(port, v),
            0x40..=0x43 => self.pit.write(port, v, now, &mut self.pic),
            0x60 => self.kbd.write_data(v, now, &mut self.pic),
            0x61 => self.write61(v, now),
            0x64 => self.kbd.write_command(v, now, &mut self.pic),
            0x70 => self.cmos.write_index(v),
            0x71 => self.cmos.write_data(v, now, &mut self.pic),
            0x92 => {
                if v & 0x01 != 0 {
                    self.reset_requested = true;
                }
                self.port92 = v & !0x01;
            }
            0x201 => {} // fires the (absent) joystick one-shots
            0x388 | 0x389 => self.write_opl(port, v, now),
            p if (0x220..=0x22F).contains(&p) => {
                if self.sb.claims(p) {
                    self.sb.write(p, v, now, &mut self.dma, ram, &mut self.pic);
                } else if matches!(p - 0x220, 0..=3 | 8 | 9) {
                    self.write_opl(p, v, now);
                }
            }
            p if self.vga.claims(p) => self.vga.write_port(p, v),
            _ => self.note_unclaimed(port, true),
        }
        if self.kbd.reset_requested {
            self.kbd.reset_requested = false;
            self.reset_requested = true;
        }
    }

    /// CPU read of physical 0xA0000..=0xBFFFF through the VGA's read
    /// pipeline (loads the latches). Addresses outside the selected window
    /// read FFh.
    #[inline]
    pub fn vga_read(&mut self, addr: u32) -> u8 {
        self.vga.read_mem(addr)
    }

    /// CPU write of physical 0xA0000..=0xBFFFF through the write pipeline.
    #[inline]
    pub fn vga_write(&mut self, addr: u32, v: u8) {
        self.vga.write_mem(addr, v)
    }

    /// What the screen shows now, as RGB.
    pub fn render(&self) -> Frame {
        self.vga.render()
    }

    /// A scan code byte arriving at `now` (interactive input).
    pub fn key_event(&mut self, scancode: u8, now: u64) {
        self.kbd.key_event(scancode, now, &mut self.pic);
        self.refresh();
    }

    /// Schedules a scan code byte at dispatch `at`.
    pub fn schedule_key(&mut self, at: u64, scancode: u8) {
        self.kbd.schedule(at, scancode);
        self.refresh();
    }

    /// Schedules every entry of a key script (`KEY@DISPATCH`, see
    /// [`crate::machine::scheduler::parse_key_script`]).
    pub fn load_key_script(&mut self, script: &str) -> Result<usize, String> {
        let keys = parse_key_script(script)?;
        for k in &keys {
            self.kbd.schedule(k.dispatch, k.scancode);
        }
        self.refresh();
        Ok(keys.len())
    }

    /// Whether the A20 line is enabled (8042 output port bit 1 or port 92h
    /// bit 1).
    #[inline]
    pub fn a20_enabled(&self) -> bool {
        self.kbd.a20() || self.port92 & 0x02 != 0
    }

    /// Whether the guest asked for a CPU reset (and clears the request).
    pub fn take_reset_request(&mut self) -> bool {
        std::mem::replace(&mut self.reset_requested, false)
    }

    /// NMI enabled (port 70h bit 7 clear).
    pub fn nmi_enabled(&self) -> bool {
        !self.cmos.nmi_disabled
    }

    /// Dispatches of every vertical retrace start `e` with `from <= e < to`
    /// under the current VGA timing.
    pub fn frame_edges_in(&self, from: u64, to: u64) -> Vec<u64> {
        self.vga.frame_edges_in(from, to)
    }

    /// The first vertical retrace start at or after `from`.
    pub fn next_frame_edge(&self, from: u64) -> u64 {
        self.vga.next_frame_edge(from)
    }

    /// A hash of every guest-visible device state at `now` (registers,
    /// counters as they read at `now`, queues, video memory, DAC, sample and
    /// speaker hashes), for the oracle. Brings the devices to `now` first.
    pub fn state_hash(&mut self, now: u64, ram: &mut [u8]) -> u64 {
        self.advance(now, ram);
        let mut b: Vec<u8> = Vec::with_capacity(4096);
        for p in [&self.pic.master, &self.pic.slave] {
            b.extend_from_slice(&[
                p.irr,
                p.isr,
                p.imr,
                p.vector_base,
                p.icw3,
                p.icw4,
                p.lowest_priority,
            ]);
        }
        for c in 0..3 {
            let ch = &self.pit.ch[c];
            b.extend_from_slice(&[ch.mode, ch.rw, ch.bcd as u8, ch.gate as u8]);
            b.extend_from_slice(&ch.period().to_le_bytes());
            let v = self.pit.counter(c, now);
            b.extend_from_slice(&v.to_le_bytes());
            b.push(self.pit.out(c, now) as u8);
        }
        let k = &self.kbd;
        b.extend_from_slice(&[
            k.out_buf,
            k.obf as u8,
            k.command_byte,
            k.output_port,
            k.scanning as u8,
        ]);
        b.extend_from_slice(&(k.queue.len() as u64).to_le_bytes());
        b.extend_from_slice(&k.delivered.to_le_bytes());
        for ctl in [&self.dma.lo, &self.dma.hi] {
            b.extend_from_slice(&[ctl.status, ctl.command, ctl.flip_flop as u8]);
            for c in &ctl.ch {
                b.extend_from_slice(&c.base_addr.to_le_bytes());
                b.extend_from_slice(&c.base_count.to_le_bytes());
                b.extend_from_slice(&c.cur_addr.to_le_bytes());
                b.extend_from_slice(&c.cur_count.to_le_bytes());
                b.extend_from_slice(&[c.mode, c.page, c.masked as u8]);
            }
        }
        b.extend_from_slice(&self.dma.page_regs);
        b.extend_from_slice(&self.sb.samples.to_le_bytes());
        b.extend_from_slice(&self.sb.sample_hash.to_le_bytes());
        b.extend_from_slice(&self.sb.block_irqs.to_le_bytes());
        b.extend_from_slice(&[
            self.sb.irq_pending as u8,
            self.sb.speaker_on as u8,
            self.sb.time_constant,
        ]);
        b.extend_from_slice(&self.sb.mixer);
        b.extend_from_slice(&self.opl.regs);
        b.push(self.opl.status(now));
        b.extend_from_slice(&self.cmos.ram);
        b.extend_from_slice(&self.cmos.unix_time(now).to_le_bytes());
        b.extend_from_slice(&[self.port61, self.port92, self.speaker.data as u8]);
        b.extend_from_slice(&self.speaker.hash.to_le_bytes());
        let v = &self.vga;
        b.extend_from_slice(&[
            v.misc,
            v.attr_index,
            v.attr_pas as u8,
            v.attr_flip as u8,
            v.dac_mask,
        ]);
        b.extend_from_slice(&v.seq);
        b.extend_from_slice(&v.gc);
        b.extend_from_slice(&v.crtc);
        b.extend_from_slice(&v.attr);
        b.extend_from_slice(&v.latch);
        for e in &v.dac {
            b.extend_from_slice(e);
        }
        b.extend_from_slice(&v.planes);
        v.vbe.state_bytes(&mut b);
        xxhash_rust::xxh3::xxh3_64(&b)
    }
}
