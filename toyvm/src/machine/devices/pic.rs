//! The two cascaded 8259A programmable interrupt controllers (ports 20h/21h,
//! A0h/A1h).
//!
//! Owns IRR/ISR/IMR, the ICW1-4 initialisation sequence, OCW1-3 (masks, EOI
//! and rotation, register read select, poll, special mask), the cascade of
//! the slave's INT into the master's IR2, and the INTA cycle. It must not
//! decide *when* a line rises: devices call [`Pic::raise`] at the dispatch
//! their event is due, and the CPU side asks [`Pic::intr`] and performs
//! [`Pic::acknowledge`].
//!
//! Modelling choices (see docs/machine-devices.md):
//! - Requests are edge latches: `raise` sets the IRR bit, which stays set
//!   until the INTA cycle that services it (or a reinitialisation). A line
//!   that drops before acknowledge does not withdraw its request (the real
//!   part would then deliver a spurious IR7), so the spurious case arises only
//!   when nothing is pending at INTA.
//! - Spurious interrupt: an INTA with no unmasked request above the in-service
//!   priority answers the IR7 vector of that controller (base + 7) and sets no
//!   ISR bit, exactly like the 8259A. A spurious request on the slave also
//!   leaves the master's IR2 in service (as on hardware), so a handler must
//!   still EOI the master.
//! - Level-triggered mode (LTIM) is stored but behaves like edge mode.

/// One 8259A.
#[derive(Clone, Debug)]
pub struct Pic8259 {
    pub irr: u8,
    pub isr: u8,
    pub imr: u8,
    /// Vector base from ICW2 (low three bits forced to zero).
    pub vector_base: u8,
    /// ICW3: on the master, the bit mask of inputs with a slave; on the
    /// slave, its cascade identity.
    pub icw3: u8,
    pub icw4: u8,
    /// Next ICW expected (0 = none, 2, 3, 4).
    init_step: u8,
    single: bool,
    need_icw4: bool,
    pub level_triggered: bool,
    /// OCW3 register read select: true = ISR, false = IRR.
    read_isr: bool,
    /// OCW3 poll command pending: the next read of the command port polls.
    poll: bool,
    pub special_mask: bool,
    pub auto_eoi: bool,
    pub rotate_on_aeoi: bool,
    /// The input with the lowest priority (7 after init: fixed priority with
    /// IR0 highest).
    pub lowest_priority: u8,
}

impl Default for Pic8259 {
    fn default() -> Self {
        Pic8259::new()
    }
}

impl Pic8259 {
    pub fn new() -> Pic8259 {
        Pic8259 {
            irr: 0,
            isr: 0,
            imr: 0xFF,
            vector_base: 0,
            icw3: 0,
            icw4: 0,
            init_step: 0,
            single: false,
            need_icw4: false,
            level_triggered: false,
            read_isr: false,
            poll: false,
            special_mask: false,
            auto_eoi: false,
            rotate_on_aeoi: false,
            lowest_priority: 7,
        }
    }

    /// Priority rank of input `irq` (0 = highest).
    #[inline]
    fn rank(&self, irq: u8) -> u8 {
        (irq.wrapping_sub(self.lowest_priority).wrapping_sub(1)) & 7
    }

    /// The input of highest priority whose bit is set in `bits`, if any.
    fn highest(&self, bits: u8) -> Option<u8> {
        (0..8u8)
            .map(|r| (self.lowest_priority + 1 + r) & 7)
            .find(|&irq| bits & (1 << irq) != 0)
    }

    /// The request this controller would signal on INT given `irr` (which
    /// includes the cascade input on a master): the highest-priority unmasked
    /// request that beats everything in service.
    fn pending_with(&self, irr: u8) -> Option<u8> {
        let req = irr & !self.imr;
        let cand = self.highest(req)?;
        // In special mask mode, masked in-service levels do not block.
        let blocking = if self.special_mask {
            self.isr & !self.imr
        } else {
            self.isr
        };
        match self.highest(blocking) {
            Some(s) if self.rank(s) <= self.rank(cand) => {
                // A master also lets a slave's higher request through the
                // in-service cascade input only in special fully nested
                // mode (ICW4 bit 4), which we honour here.
                let sfnm = self.icw4 & 0x10 != 0;
                if sfnm && s == cand && !self.single && self.icw3 & (1 << s) != 0 {
                    Some(cand)
                } else {
                    None
                }
            }
            _ => Some(cand),
        }
    }

    /// Non-specific EOI: clears the highest-priority in-service bit.
    fn eoi_nonspecific(&mut self, rotate: bool) {
        let blocking = if self.special_mask {
            self.isr & !self.imr
        } else {
            self.isr
        };
        if let Some(l) = self.highest(blocking) {
            self.isr &= !(1 << l);
            if rotate {
                self.lowest_priority = l;
            }
        }
    }

    fn write_command(&mut self, v: u8) {
        if v & 0x10 != 0 {
            // ICW1: starts initialisation. Clears the mask, IRR edge sense,
            // priorities back to fixed, special mask off, read IRR.
            self.need_icw4 = v & 0x01 != 0;
            self.single = v & 0x02 != 0;
            self.level_triggered = v & 0x08 != 0;
            self.imr = 0;
            self.isr = 0;
            self.irr = 0;
            self.lowest_priority = 7;
            self.special_mask = false;
            self.read_isr = false;
            self.poll = false;
            self.auto_eoi = false;
            self.rotate_on_aeoi = false;
            if !self.need_icw4 {
                self.icw4 = 0;
            }
            self.init_step = 2;
        } else if v & 0x08 == 0 {
            // OCW2.
            let level = v & 7;
            match v >> 5 {
                0b001 => self.eoi_nonspecific(false),
                0b011 => self.isr &= !(1 << level),
                0b101 => self.eoi_nonspecific(true),
                0b100 => self.rotate_on_aeoi = true,
                0b000 => self.rotate_on_aeoi = false,
                0b111 => {
                    self.isr &= !(1 << level);
                    self.lowest_priority = level;
                }
                0b110 => self.lowest_priority = level,
                _ => {} // 010: no operation
            }
        } else {
            // OCW3.
            if v & 0x02 != 0 {
                self.read_isr = v & 0x01 != 0;
            }
            self.poll = v & 0x04 != 0;
            if v & 0x40 != 0 {
                self.special_mask = v & 0x20 != 0;
            }
        }
    }

    fn write_data(&mut self, v: u8) {
        match self.init_step {
            2 => {
                self.vector_base = v & 0xF8;
                self.init_step = if !self.single {
                    3
                } else if self.need_icw4 {
                    4
                } else {
                    0
                };
            }
            3 => {
                self.icw3 = v;
                self.init_step = if self.need_icw4 { 4 } else { 0 };
            }
            4 => {
                self.icw4 = v;
                self.auto_eoi = v & 0x02 != 0;
                self.init_step = 0;
            }
            _ => self.imr = v, // OCW1
        }
    }
}

/// The PC/AT pair: master at 20h/21h, slave at A0h/A1h on the master's IR2.
#[derive(Clone, Debug, Default)]
pub struct Pic {
    pub master: Pic8259,
    pub slave: Pic8259,
}

impl Pic {
    /// Both controllers as at power-on: uninitialised, all masked, vector
    /// base 0. The machine's BIOS init calls [`Pic::init_bios_defaults`].
    pub fn new() -> Pic {
        Pic {
            master: Pic8259::new(),
            slave: Pic8259::new(),
        }
    }

    /// Programs both controllers as an AT BIOS does at POST: master vectors
    /// 08h-0Fh with a slave on IR2, slave vectors 70h-77h with identity 2,
    /// 8086 mode, normal EOI, edge triggered. Masks: master B8h (IRQ 0, 1, 2
    /// and 6 enabled; 3, 4, 5, 7 masked until a driver unmasks them), slave
    /// FFh (nothing enabled behind IR2 until a program asks).
    pub fn init_bios_defaults(&mut self) {
        for (port, vals) in [
            (0x20u16, [0x11u8, 0x08, 0x04, 0x01]),
            (0xA0, [0x11, 0x70, 0x02, 0x01]),
        ] {
            self.write(port, vals[0]);
            self.write(port + 1, vals[1]);
            self.write(port + 1, vals[2]);
            self.write(port + 1, vals[3]);
        }
        self.master.imr = 0xB8;
        self.slave.imr = 0xFF;
    }

    /// Raises (an edge on) IRQ line `irq` (0-15): latches the request. The
    /// bus line IRQ2 is wired to the slave's IR1 (IRQ 9) on the AT, since the
    /// master's IR2 carries the cascade.
    pub fn raise(&mut self, irq: u8) {
        match irq {
            2 => self.slave.irr |= 0x02,
            0..=7 => self.master.irr |= 1 << irq,
            8..=15 => self.slave.irr |= 1 << (irq - 8),
            _ => {}
        }
    }

    /// Withdraws a still-latched request on `irq` (used when a device clears
    /// its request before it was serviced and the model wants it gone).
    pub fn lower(&mut self, irq: u8) {
        match irq {
            2 => self.slave.irr &= !0x02,
            0..=7 => self.master.irr &= !(1 << irq),
            8..=15 => self.slave.irr &= !(1 << (irq - 8)),
            _ => {}
        }
    }

    /// The slave's INT output, fed to the master's cascade input(s).
    fn slave_int(&self) -> bool {
        self.slave.pending_with(self.slave.irr).is_some()
    }

    /// Master inputs wired to the slave: those ICW3 marks (IR2 on the AT;
    /// IR2 too before any initialisation), none in single mode.
    fn cascade_mask(&self) -> u8 {
        if self.master.single {
            0
        } else if self.master.icw3 == 0 {
            0x04
        } else {
            self.master.icw3
        }
    }

    fn master_irr(&self) -> u8 {
        let mut irr = self.master.irr;
        if self.slave_int() {
            irr |= self.cascade_mask();
        }
        irr
    }

    /// The master's INT line: an unmasked request beats everything in service.
    pub fn intr(&self) -> bool {
        self.master.pending_with(self.master_irr()).is_some()
    }

    /// The INTA cycle: returns the vector and moves the request from IRR to
    /// ISR (not in auto-EOI mode). With nothing pending, answers the master's
    /// IR7 vector (spurious) and changes nothing.
    pub fn acknowledge(&mut self) -> u8 {
        let irr = self.master_irr();
        let Some(irq) = self.master.pending_with(irr) else {
            return self.master.vector_base | 7;
        };
        let cascade = self.cascade_mask() & (1 << irq) != 0;
        Self::service(&mut self.master, irq);
        if cascade && self.slave_int() {
            let s = self.slave.pending_with(self.slave.irr).unwrap_or(7);
            Self::service(&mut self.slave, s);
            self.slave.vector_base | s
        } else if cascade {
            // Slave request vanished: the slave answers its spurious IR7.
            self.slave.vector_base | 7
        } else {
            self.master.vector_base | irq
        }
    }

    fn service(p: &mut Pic8259, irq: u8) {
        p.irr &= !(1 << irq);
        if p.auto_eoi {
            if p.rotate_on_aeoi {
                p.lowest_priority = irq;
            }
        } else {
            p.isr |= 1 << irq;
        }
    }

    /// Port read (20h, 21h, A0h, A1h).
    pub fn read(&mut self, port: u16) -> u8 {
        let is_slave = port & 0x80 != 0;
        if port & 1 == 1 {
            return if is_slave {
                self.slave.imr
            } else {
                self.master.imr
            };
        }
        // Poll command: the read is an acknowledge of this controller.
        let poll = if is_slave {
            self.slave.poll
        } else {
            self.master.poll
        };
        if poll {
            if is_slave {
                self.slave.poll = false;
                match self.slave.pending_with(self.slave.irr) {
                    Some(l) => {
                        Self::service(&mut self.slave, l);
                        0x80 | l
                    }
                    None => 0,
                }
            } else {
                self.master.poll = false;
                let irr = self.master_irr();
                match self.master.pending_with(irr) {
                    Some(l) => {
                        Self::service(&mut self.master, l);
                        0x80 | l
                    }
                    None => 0,
                }
            }
        } else {
            let p = if is_slave { &self.slave } else { &self.master };
            if p.read_isr {
                p.isr
            } else if is_slave {
                p.irr
            } else {
                self.master_irr()
            }
        }
    }

    /// Port write (20h, 21h, A0h, A1h).
    pub fn write(&mut self, port: u16, v: u8) {
        let p = if port & 0x80 != 0 {
            &mut self.slave
        } else {
            &mut self.master
        };
        if port & 1 == 0 {
            p.write_command(v);
        } else {
            p.write_data(v);
        }
    }
}
