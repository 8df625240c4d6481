//! The 8042 keyboard controller and the keyboard behind it (ports 60h/64h).
//!
//! Owns the output buffer and status bits, the controller command byte and
//! output port (A20 gate, reset line), the controller commands DOS programs
//! use (20h/60h command byte, AAh self-test, ABh interface test, ADh/AEh
//! disable/enable, C0h/D0h/D1h ports, D2h echo, DDh/DFh A20, FEh reset), the
//! keyboard's own commands (F4h/F5h/FFh/EDh/EEh/F2h/F3h...) answered with
//! ACKs, and the queue of scan code set 1 bytes with IRQ 1 for each. Scripted
//! keys arrive at absolute dispatches from an event queue. It must not look
//! at the host keyboard or the wall clock.
//!
//! Delivery timing: a byte enters the output buffer at its scheduled
//! dispatch if the buffer is empty; after the guest reads 60h, the next
//! queued byte follows [`KBD_BYTE_DISPATCHES`] later (about a millisecond of
//! serial transfer), so a handler that reads 60h twice sees the same byte.

use super::pic::Pic;
use crate::machine::scheduler::{EventQueue, KBD_BYTE_DISPATCHES};
use std::collections::VecDeque;

/// Bytes the keyboard and controller buffer before dropping (a real
/// keyboard holds 16; scripts may burst more).
pub const QUEUE_MAX: usize = 256;

/// Status register bits (port 64h).
pub mod status {
    pub const OBF: u8 = 0x01;
    pub const IBF: u8 = 0x02;
    pub const SYS: u8 = 0x04;
    pub const CMD: u8 = 0x08;
    pub const UNLOCKED: u8 = 0x10;
    pub const AUX_OBF: u8 = 0x20;
}

/// What the next write to port 60h means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pending {
    None,
    /// Controller command 60h: the command byte follows.
    CommandByte,
    /// D1h: the output port follows.
    OutputPort,
    /// D2h: a byte to place in the output buffer as if from the keyboard.
    EchoKbd,
    /// D3h/D4h: a byte for the (absent) mouse.
    Aux,
    /// Keyboard command EDh/F3h: its argument follows.
    KbdArg,
}

#[derive(Clone, Debug)]
pub struct Keyboard {
    /// Last byte delivered to the output buffer (a read returns it even when
    /// the buffer is empty).
    pub out_buf: u8,
    pub obf: bool,
    /// Bytes waiting for the output buffer (answers first, then keys).
    pub queue: VecDeque<u8>,
    /// Earliest dispatch the next queued byte may enter the output buffer.
    ready_at: u64,
    /// Scripted scan codes.
    script: EventQueue<u8>,
    pub command_byte: u8,
    /// Output port: bit 0 = reset line (1 = run), bit 1 = A20 gate.
    pub output_port: u8,
    /// Status bit 3: last write went to 64h.
    last_was_cmd: bool,
    pending: Pending,
    /// Keyboard scanning enabled (F4h/F5h).
    pub scanning: bool,
    /// The guest asked for a CPU reset (FEh, or D1h with bit 0 clear).
    pub reset_requested: bool,
    /// Scan code bytes delivered to the guest (statistics).
    pub delivered: u64,
}

impl Default for Keyboard {
    fn default() -> Self {
        Keyboard::new()
    }
}

impl Keyboard {
    /// After POST: self-test passed (system flag set), translation on, IRQ 1
    /// enabled (command byte 45h); output port CDh: reset line high, A20
    /// gate (bit 1) off.
    pub fn new() -> Keyboard {
        Keyboard {
            out_buf: 0,
            obf: false,
            queue: VecDeque::new(),
            ready_at: 0,
            script: EventQueue::new(),
            command_byte: 0x45,
            output_port: 0xCD,
            last_was_cmd: false,
            pending: Pending::None,
            scanning: true,
            reset_requested: false,
            delivered: 0,
        }
    }

    pub fn a20(&self) -> bool {
        self.output_port & 0x02 != 0
    }

    /// Schedules a scan code byte at dispatch `at`.
    pub fn schedule(&mut self, at: u64, scancode: u8) {
        self.script.push(at, scancode);
    }

    /// Number of scripted bytes not yet due.
    pub fn scripted_pending(&self) -> usize {
        self.script.len()
    }

    /// Queues a byte now (a key arriving at `now`).
    pub fn key_event(&mut self, scancode: u8, now: u64, pic: &mut Pic) {
        self.advance(now, pic);
        if self.command_byte & 0x10 == 0 && self.scanning && self.queue.len() < QUEUE_MAX {
            self.queue.push_back(scancode);
        }
        self.advance(now, pic);
    }

    /// Dispatch of the next obligation: a scripted byte or a queued byte
    /// that can enter the empty output buffer.
    pub fn next_event(&self) -> u64 {
        let fill = if !self.obf && !self.queue.is_empty() {
            self.ready_at
        } else {
            u64::MAX
        };
        fill.min(self.script.next_due())
    }

    /// Performs everything due at or before `now`, in time order.
    pub fn advance(&mut self, now: u64, pic: &mut Pic) {
        loop {
            let fill_at = if !self.obf && !self.queue.is_empty() {
                self.ready_at
            } else {
                u64::MAX
            };
            let key_at = self.script.next_due();
            let t = fill_at.min(key_at);
            if t > now {
                break;
            }
            if key_at <= fill_at {
                if let Some((at, sc)) = self.script.pop_due(t) {
                    // A disabled keyboard (ADh, F5h) drops the key.
                    if self.command_byte & 0x10 == 0 && self.scanning {
                        if self.queue.is_empty() && !self.obf {
                            self.ready_at = self.ready_at.max(at);
                        }
                        if self.queue.len() < QUEUE_MAX {
                            self.queue.push_back(sc);
                        }
                    }
                }
            } else {
                let b = self.queue.pop_front().unwrap_or(0);
                self.fill(b, pic);
            }
        }
    }

    fn fill(&mut self, b: u8, pic: &mut Pic) {
        self.out_buf = b;
        self.obf = true;
        self.delivered += 1;
        if self.command_byte & 0x01 != 0 {
            pic.raise(1);
        }
    }

    /// Places a controller/keyboard answer in the output queue ahead of keys.
    fn answer(&mut self, bytes: &[u8], now: u64) {
        for (i, b) in bytes.iter().enumerate() {
            self.queue.insert(i, *b);
        }
        self.queue.truncate(QUEUE_MAX);
        if !self.obf {
            // A pending inter-byte gap still applies; otherwise at once.
            self.ready_at = self.ready_at.max(now);
        }
    }

    /// Port 60h read: the output buffer; schedules the next byte.
    pub fn read_data(&mut self, now: u64, pic: &mut Pic) -> u8 {
        self.advance(now, pic);
        if self.obf {
            self.obf = false;
            self.ready_at = now + KBD_BYTE_DISPATCHES;
        }
        self.out_buf
    }

    /// Port 64h read: status.
    pub fn read_status(&mut self, now: u64, pic: &mut Pic) -> u8 {
        self.advance(now, pic);
        let mut s = status::UNLOCKED;
        if self.obf {
            s |= status::OBF;
        }
        if self.command_byte & 0x04 != 0 {
            s |= status::SYS;
        }
        if self.last_was_cmd {
            s |= status::CMD;
        }
        s
    }

    /// Port 60h write: a command argument, or a command to the keyboard.
    pub fn write_data(&mut self, v: u8, now: u64, pic: &mut Pic) {
        self.advance(now, pic);
        self.last_was_cmd = false;
        match std::mem::replace(&mut self.pending, Pending::None) {
            Pending::CommandByte => self.command_byte = v,
            Pending::OutputPort => {
                self.output_port = v;
                if v & 0x01 == 0 {
                    self.reset_requested = true;
                }
            }
            Pending::EchoKbd => self.answer(&[v], now),
            Pending::Aux => {}
            Pending::KbdArg => self.answer(&[0xFA], now),
            Pending::None => self.keyboard_command(v, now),
        }
        self.advance(now, pic);
    }

    fn keyboard_command(&mut self, v: u8, now: u64) {
        match v {
            0xED | 0xF3 => {
                self.pending = Pending::KbdArg;
                self.answer(&[0xFA], now);
            }
            0xEE => self.answer(&[0xEE], now),
            0xF2 => self.answer(&[0xFA, 0xAB, 0x83], now),
            0xF4 => {
                self.scanning = true;
                self.answer(&[0xFA], now);
            }
            0xF5 => {
                self.scanning = false;
                self.answer(&[0xFA], now);
            }
            0xF6 => {
                self.scanning = true;
                self.answer(&[0xFA], now);
            }
            0xFF => {
                self.queue.clear();
                self.scanning = true;
                self.answer(&[0xFA, 0xAA], now);
            }
            0xFE => {} // resend: nothing to resend
            _ => self.answer(&[0xFA], now),
        }
    }

    /// Port 64h write: a controller command.
    pub fn write_command(&mut self, v: u8, now: u64, pic: &mut Pic) {
        self.advance(now, pic);
        self.last_was_cmd = true;
        self.pending = Pending::None;
        match v {
            0x20 => {
                let cb = self.command_byte;
                self.answer(&[cb], now)
            }
            0x60 => self.pending = Pending::CommandByte,
            0xA7 | 0xA8 => {} // mouse port disable/enable: no mouse
            0xA9 => self.answer(&[0x01], now), // mouse interface test: clock stuck low
            0xAA => {
                self.command_byte |= 0x04;
                self.answer(&[0x55], now)
            }
            0xAB => self.answer(&[0x00], now),
            0xAD => self.command_byte |= 0x10,
            0xAE => self.command_byte &= !0x10,
            0xC0 => self.answer(&[0xBF], now), // input port: no keylock, colour
            0xD0 => {
                let mut op = self.output_port & !0x30;
                if self.obf {
                    op |= 0x10;
                }
                self.answer(&[op], now)
            }
            0xD1 => self.pending = Pending::OutputPort,
            0xD2 => self.pending = Pending::EchoKbd,
            0xD3 | 0xD4 => self.pending = Pending::Aux,
            0xDD => self.output_port &= !0x02,
            0xDF => self.output_port |= 0x02,
            0xE0 => self.answer(&[0x00], now),
            0xF0..=0xFF
                // Pulse output lines: bit 0 low pulses the CPU reset.
                if v & 0x01 == 0 => {
                    self.reset_requested = true;
                }
            _ => {}
        }
        self.advance(now, pic);
    }
}
