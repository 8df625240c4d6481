//! The two 8237A DMA controllers and the page registers (ports 00h-0Fh,
//! C0h-DEh, 80h-8Fh).
//!
//! Owns per-channel base/current address and count (with each controller's
//! byte-pointer flip-flop), mode (transfer type, auto-initialise, direction),
//! masks, the status register (terminal-count bits, cleared on read) and the
//! page registers (including the unused ones, such as POST port 80h, which
//! just hold their value). It must not decide when bytes move: the device
//! that owns the DREQ (the Sound Blaster on channel 1) calls
//! [`Dma::read_byte`] / [`Dma::write_byte`] for each byte at the dispatch it
//! consumes it, so the current address and count seen by a guest read are
//! those of that exact dispatch.
//!
//! Channels 0-3 are the 8-bit controller, 4-7 the 16-bit one (addresses and
//! counts in words; channel 4 is the cascade). Only 8-bit transfers are
//! driven by devices here; the 16-bit side is registers only.

/// One DMA channel's registers.
#[derive(Clone, Debug, Default)]
pub struct DmaChannel {
    pub base_addr: u16,
    pub base_count: u16,
    pub cur_addr: u16,
    pub cur_count: u16,
    /// Mode register (bits 7:6 mode, 5 decrement, 4 auto-init, 3:2 type).
    pub mode: u8,
    pub page: u8,
    pub masked: bool,
    /// Bytes transferred since power-on (statistics only).
    pub transferred: u64,
}

impl DmaChannel {
    pub fn auto_init(&self) -> bool {
        self.mode & 0x10 != 0
    }
    pub fn decrement(&self) -> bool {
        self.mode & 0x20 != 0
    }
    /// Bytes left before terminal count (count + 1).
    pub fn remaining(&self) -> u32 {
        self.cur_count as u32 + 1
    }
}

/// One 8237A.
#[derive(Clone, Debug, Default)]
pub struct Dma8237 {
    pub ch: [DmaChannel; 4],
    /// Byte-pointer flip-flop: false = next access is the low byte.
    pub flip_flop: bool,
    /// Status: bits 3:0 terminal count reached (cleared on read), bits 7:4
    /// requests.
    pub status: u8,
    pub command: u8,
    pub request: u8,
    pub temp: u8,
}

impl Dma8237 {
    fn new() -> Dma8237 {
        let mut d = Dma8237::default();
        for c in &mut d.ch {
            c.masked = true;
        }
        d
    }

    fn read_reg(&mut self, reg: u8) -> u8 {
        match reg {
            0..=7 => {
                let c = &self.ch[(reg >> 1) as usize];
                let v = if reg & 1 == 0 {
                    c.cur_addr
                } else {
                    c.cur_count
                };
                let hi = self.flip_flop;
                self.flip_flop = !hi;
                if hi {
                    (v >> 8) as u8
                } else {
                    v as u8
                }
            }
            8 => {
                let s = self.status;
                self.status &= 0xF0;
                s
            }
            0xD => self.temp,
            // Reading the mask register (0Fh) is supported by later
            // chipsets; the unused read ports float.
            0xF => {
                0xF0 | self
                    .ch
                    .iter()
                    .enumerate()
                    .fold(0, |m, (i, c)| m | (c.masked as u8) << i)
            }
            _ => 0xFF,
        }
    }

    fn write_reg(&mut self, reg: u8, v: u8) {
        match reg {
            0..=7 => {
                let hi = self.flip_flop;
                self.flip_flop = !hi;
                let c = &mut self.ch[(reg >> 1) as usize];
                let set = |x: u16| {
                    if hi {
                        (x & 0x00FF) | (v as u16) << 8
                    } else {
                        (x & 0xFF00) | v as u16
                    }
                };
                // Writing programs both the base and the current register.
                if reg & 1 == 0 {
                    c.base_addr = set(c.base_addr);
                    c.cur_addr = c.base_addr;
                } else {
                    c.base_count = set(c.base_count);
                    c.cur_count = c.base_count;
                }
            }
            8 => self.command = v,
            9 => {
                let bit = 0x10 << (v & 3);
                if v & 4 != 0 {
                    self.request |= bit >> 4;
                    self.status |= bit;
                } else {
                    self.request &= !(bit >> 4);
                    self.status &= !bit;
                }
            }
            0xA => self.ch[(v & 3) as usize].masked = v & 4 != 0,
            0xB => self.ch[(v & 3) as usize].mode = v,
            0xC => self.flip_flop = false,
            0xD => {
                // Master clear: like a hardware reset.
                self.flip_flop = false;
                self.status = 0;
                self.command = 0;
                self.request = 0;
                self.temp = 0;
                for c in &mut self.ch {
                    c.masked = true;
                }
            }
            0xE => {
                for c in &mut self.ch {
                    c.masked = false;
                }
            }
            0xF => {
                for (i, c) in self.ch.iter_mut().enumerate() {
                    c.masked = v & (1 << i) != 0;
                }
            }
            _ => {}
        }
    }
}

/// Page register port for each channel (0-7).
const PAGE_PORTS: [u16; 8] = [0x87, 0x83, 0x81, 0x82, 0x8F, 0x8B, 0x89, 0x8A];

/// Both controllers and the page register file.
#[derive(Clone, Debug)]
pub struct Dma {
    /// 8-bit controller: channels 0-3.
    pub lo: Dma8237,
    /// 16-bit controller: channels 4-7.
    pub hi: Dma8237,
    /// Ports 80h-8Fh (the channel pages plus scratch registers).
    pub page_regs: [u8; 16],
}

impl Default for Dma {
    fn default() -> Self {
        Dma::new()
    }
}

impl Dma {
    pub fn new() -> Dma {
        Dma {
            lo: Dma8237::new(),
            hi: Dma8237::new(),
            page_regs: [0; 16],
        }
    }

    /// Whether `port` belongs to the DMA subsystem.
    pub fn claims(port: u16) -> bool {
        matches!(port, 0x00..=0x0F | 0x80..=0x8F | 0xC0..=0xDF)
    }

    fn page_of(&self, ch: usize) -> u8 {
        self.page_regs[(PAGE_PORTS[ch] - 0x80) as usize]
    }

    /// Channel `ch` (0-7) registers.
    pub fn channel(&self, ch: usize) -> &DmaChannel {
        if ch < 4 {
            &self.lo.ch[ch]
        } else {
            &self.hi.ch[(ch - 4) & 3]
        }
    }

    pub fn read(&mut self, port: u16) -> u8 {
        match port {
            0x00..=0x0F => self.lo.read_reg(port as u8),
            0x80..=0x8F => self.page_regs[(port - 0x80) as usize],
            0xC0..=0xDF if port & 1 == 0 => self.hi.read_reg(((port - 0xC0) >> 1) as u8),
            _ => 0xFF,
        }
    }

    pub fn write(&mut self, port: u16, v: u8) {
        match port {
            0x00..=0x0F => self.lo.write_reg(port as u8, v),
            0x80..=0x8F => {
                self.page_regs[(port - 0x80) as usize] = v;
                // Keep the channels' page copies current.
                for (i, p) in PAGE_PORTS.iter().enumerate() {
                    if *p == port {
                        if i < 4 {
                            self.lo.ch[i].page = v;
                        } else {
                            self.hi.ch[i - 4].page = v;
                        }
                    }
                }
            }
            0xC0..=0xDF if port & 1 == 0 => self.hi.write_reg(((port - 0xC0) >> 1) as u8, v),
            _ => {}
        }
    }

    /// Whether 8-bit channel `ch` would accept a DREQ now (unmasked).
    pub fn ready(&self, ch: usize) -> bool {
        ch < 4 && !self.lo.ch[ch].masked
    }

    /// Physical address of the next byte of 8-bit channel `ch`.
    pub fn address(&self, ch: usize) -> u32 {
        let c = &self.lo.ch[ch & 3];
        (self.page_of(ch & 3) as u32) << 16 | c.cur_addr as u32
    }

    /// Advances channel `ch` by one byte; handles terminal count (status
    /// bit, auto-init reload, or self-mask as the 8237 does without
    /// auto-init). Returns true at terminal count.
    fn step(&mut self, ch: usize) -> bool {
        let c = &mut self.lo.ch[ch];
        c.transferred += 1;
        c.cur_addr = if c.decrement() {
            c.cur_addr.wrapping_sub(1)
        } else {
            c.cur_addr.wrapping_add(1)
        };
        let (n, wrapped) = c.cur_count.overflowing_sub(1);
        c.cur_count = n;
        if wrapped {
            self.lo.status |= 1 << ch;
            if c.auto_init() {
                c.cur_addr = c.base_addr;
                c.cur_count = c.base_count;
            } else {
                c.masked = true;
            }
            true
        } else {
            false
        }
    }

    /// One DREQ cycle on 8-bit channel `ch` without touching memory: returns
    /// the physical address the byte moves at and steps the channel, or
    /// None (and moves nothing) if the channel is masked. Devices that defer
    /// the memory access to a canonical moment use this.
    pub fn transfer_address(&mut self, ch: usize) -> Option<u32> {
        if !self.ready(ch) {
            return None;
        }
        let a = self.address(ch);
        self.step(ch);
        Some(a)
    }

    /// Memory-to-device transfer of one byte on 8-bit channel `ch`: reads
    /// guest RAM at the channel's address (out-of-RAM reads float to FFh).
    /// Returns None (and moves nothing) if the channel is masked.
    pub fn read_byte(&mut self, ch: usize, ram: &[u8]) -> Option<u8> {
        if !self.ready(ch) {
            return None;
        }
        let a = self.address(ch) as usize;
        let b = ram.get(a).copied().unwrap_or(0xFF);
        self.step(ch);
        Some(b)
    }

    /// Device-to-memory transfer of one byte on 8-bit channel `ch`. Returns
    /// false if the channel is masked.
    pub fn write_byte(&mut self, ch: usize, v: u8, ram: &mut [u8]) -> bool {
        if !self.ready(ch) {
            return false;
        }
        let a = self.address(ch) as usize;
        if let Some(slot) = ram.get_mut(a) {
            *slot = v;
        }
        self.step(ch);
        true
    }
}
