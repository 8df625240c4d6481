//! A small session over [`FlatBus`]: scripted interrupts at exact dispatches,
//! HLT, a host call to exit, and a fingerprint of everything guest-visible.
//! Tests and the flat-bus arm bench use it to run L0 and L1 side by side.
//!
//! It follows the session contract of ARCHITECTURE.md invariant 2 the way
//! the DOS session does: before each engine call, an interrupt due at or
//! before the clock is taken if IF=1 and no shadow applies; the engine is
//! told to stop at the next interrupt date (or the budget); HLT waits for
//! the next interrupt. It owns only this loop; it must not know engines'
//! internals.

use super::engine::{Engine, EngineExit};
use super::flat::{FlatBus, IoEvent};
use crate::cpu::l0::StopReason;
use crate::cpu::{seg, Cpu};

/// Where the exit stub lives (F000:0000, host call 0).
pub const EXIT_STUB: u32 = 0xF_0000;
/// INT 21h and INT 10h stubs of the mini DOS (host calls 21h and 10h, IRET).
pub const DOS_STUB: u32 = 0xF_0010;
pub const VIDEO_STUB: u32 = 0xF_0020;
/// FLAGS bits compared: CF PF AF ZF SF TF IF DF OF.
pub const DEFINED_FLAGS: u32 = 0x0FD5;

/// Something the guest made happen, with its dispatch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// An interrupt was taken at `at`, interrupting CS:IP.
    Irq {
        at: u64,
        vector: u8,
        cs: u16,
        ip: u32,
    },
    /// A host call retired at `at`.
    HostCall { at: u64, n: u16 },
    /// HLT retired at `at`.
    Halt { at: u64 },
}

/// How a flat run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    Budget,
    /// Host call 0.
    Exit,
    Stopped(StopReason),
}

/// A program on the flat bus with its interrupt script.
#[derive(Clone)]
pub struct FlatSession {
    pub cpu: Cpu,
    pub bus: FlatBus,
    /// (dispatch, vector), sorted by dispatch.
    pub irqs: Vec<(u64, u8)>,
    next_irq: usize,
    pub budget: u64,
    pub events: Vec<Event>,
    /// Engine calls made (a performance figure, not compared).
    pub engine_calls: u64,
    /// What the guest printed through the mini DOS (INT 21h AH=02h/09h).
    pub console: Vec<u8>,
}

/// Everything guest-visible at the end of a run, for comparing arms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub end: End,
    pub dispatches: u64,
    pub cs: u16,
    pub ip: u32,
    pub regs: [u32; 8],
    pub sregs: [u16; 6],
    pub flags: u32,
    pub ram_hash: u64,
    pub events: Vec<Event>,
    pub io: Vec<IoEvent>,
    pub device_reads: u64,
    pub console: Vec<u8>,
}

impl Outcome {
    /// One hash of everything compared.
    pub fn hash(&self) -> u64 {
        let s = format!(
            "{:?}|{}|{:04X}:{:08X}|{:?}|{:?}|{:X}|{:X}|{:?}|{:?}|{}|{:?}",
            self.end,
            self.dispatches,
            self.cs,
            self.ip,
            self.regs,
            self.sregs,
            self.flags,
            self.ram_hash,
            self.events,
            self.io,
            self.device_reads,
            self.console
        );
        xxhash_rust::xxh3::xxh3_64(s.as_bytes())
    }
}

impl FlatSession {
    /// `code` loaded at `cs:ip` (CS:IP set there, SS:SP = cs:FFFE), the exit
    /// stub at F000:0000 and INT 20h pointing at it.
    pub fn new(cs: u16, ip: u16, code: &[u8], budget: u64) -> FlatSession {
        let mut bus = FlatBus::new();
        let base = ((cs as u32) << 4) + ip as u32;
        bus.mem[base as usize..base as usize + code.len()].copy_from_slice(code);
        bus.mem[EXIT_STUB as usize..EXIT_STUB as usize + 4].copy_from_slice(&[0xFE, 0x38, 0, 0]);
        let mut s = FlatSession {
            cpu: Cpu::new(),
            bus,
            irqs: Vec::new(),
            next_irq: 0,
            budget,
            events: Vec::new(),
            engine_calls: 0,
            console: Vec::new(),
        };
        s.set_vector(0x20, 0xF000, 0);
        s.cpu.set_cs_ip(cs, ip);
        s.cpu.load_seg_real(seg::SS, cs);
        s.cpu.load_seg_real(seg::DS, cs);
        s.cpu.load_seg_real(seg::ES, cs);
        s.cpu.regs[4] = 0xFFFE;
        s
    }

    /// A .COM program the way DOS starts one, with just enough DOS for
    /// compute benchmarks: a PSP at cs:0000 whose first bytes are INT 20h, a
    /// zero word on the stack, INT 21h AH=02h/09h (print) and AH=4Ch (exit)
    /// and INT 10h (ignored) as host calls.
    pub fn com(code: &[u8], budget: u64) -> FlatSession {
        FlatSession::com_args(code, "", budget)
    }

    /// [`FlatSession::com`] with a command tail (PSP:80h).
    pub fn com_args(code: &[u8], args: &str, budget: u64) -> FlatSession {
        let cs = 0x1000u16;
        let mut s = FlatSession::new(cs, 0x100, code, budget);
        s.bus.mem[0x10000..0x10002].copy_from_slice(&[0xCD, 0x20]);
        let tail: Vec<u8> = if args.is_empty() {
            Vec::new()
        } else {
            format!(" {args}").into_bytes()
        };
        let n = tail.len().min(126);
        s.bus.mem[0x10080] = n as u8;
        s.bus.mem[0x10081..0x10081 + n].copy_from_slice(&tail[..n]);
        s.bus.mem[0x10081 + n] = 0x0D;
        s.cpu.regs[4] = 0xFFFC;
        for (stub, n) in [(DOS_STUB, 0x21u8), (VIDEO_STUB, 0x10)] {
            let a = stub as usize;
            s.bus.mem[a..a + 5].copy_from_slice(&[0xFE, 0x38, n, 0, 0xCF]);
            s.set_vector(n, 0xF000, (stub - 0xF_0000) as u16);
        }
        s
    }

    fn mini_dos(&mut self, n: u16) -> bool {
        if n != 0x21 {
            return false;
        }
        let ah = (self.cpu.regs[0] >> 8) as u8;
        match ah {
            0x02 => self.console.push(self.cpu.regs[2] as u8),
            0x09 => {
                let base = self.cpu.sbase[seg::DS];
                let mut off = self.cpu.regs[2] as u16;
                for _ in 0..4096 {
                    let c = self.bus.mem[(base + off as u32) as usize];
                    if c == b'$' {
                        break;
                    }
                    self.console.push(c);
                    off = off.wrapping_add(1);
                }
            }
            0x4C => return true,
            _ => {}
        }
        false
    }

    /// Points IVT entry `v` at `cs:ip`.
    pub fn set_vector(&mut self, v: u8, cs: u16, ip: u16) {
        let a = v as usize * 4;
        self.bus.mem[a..a + 2].copy_from_slice(&ip.to_le_bytes());
        self.bus.mem[a + 2..a + 4].copy_from_slice(&cs.to_le_bytes());
    }

    /// Schedules interrupt `vector` at dispatch `at`.
    pub fn irq_at(&mut self, at: u64, vector: u8) {
        self.irqs.push((at, vector));
        self.irqs.sort_by_key(|x| x.0);
    }

    /// Runs to the budget, the exit host call or a stop.
    pub fn run<E: Engine<FlatBus>>(&mut self, e: &mut E) -> End {
        loop {
            let now = self.cpu.clock;
            if now >= self.budget {
                return End::Budget;
            }
            let pending = self.next_irq < self.irqs.len() && self.irqs[self.next_irq].0 <= now;
            if pending && self.cpu.flags.if_() && !self.cpu.shadow {
                let v = self.irqs[self.next_irq].1;
                self.next_irq += 1;
                self.events.push(Event::Irq {
                    at: now,
                    vector: v,
                    cs: self.cpu.sregs[seg::CS],
                    ip: self.cpu.eip,
                });
                if let Err(r) = self.cpu.interrupt(&mut self.bus, v) {
                    return End::Stopped(r);
                }
                continue;
            }
            let next_date = if self.next_irq < self.irqs.len() {
                self.irqs[self.next_irq].0
            } else {
                u64::MAX
            };
            if self.cpu.halted {
                let t = if self.cpu.flags.if_() {
                    next_date
                } else {
                    u64::MAX
                };
                self.cpu.clock = now.max(t.min(self.budget));
                continue;
            }
            let stop_at = if pending {
                self.budget
            } else {
                next_date.min(self.budget)
            };
            self.engine_calls += 1;
            match e.run(&mut self.cpu, &mut self.bus, stop_at) {
                EngineExit::Reached | EngineExit::Attention => {}
                EngineExit::Halt => self.events.push(Event::Halt { at: self.cpu.clock }),
                EngineExit::HostCall(n) => {
                    self.events.push(Event::HostCall {
                        at: self.cpu.clock,
                        n,
                    });
                    if n == 0 || self.mini_dos(n) {
                        return End::Exit;
                    }
                }
                EngineExit::Stop(r) => return End::Stopped(r),
            }
        }
    }

    /// Runs and summarises.
    pub fn outcome<E: Engine<FlatBus>>(mut self, e: &mut E) -> Outcome {
        let end = self.run(e);
        self.into_outcome(end)
    }

    /// Summarises a finished run.
    pub fn into_outcome(self, end: End) -> Outcome {
        Outcome {
            end,
            dispatches: self.cpu.clock,
            cs: self.cpu.sregs[seg::CS],
            ip: self.cpu.eip,
            regs: self.cpu.regs,
            sregs: self.cpu.sregs,
            flags: self.cpu.flags.bits() & DEFINED_FLAGS,
            ram_hash: self.bus.ram_hash(),
            events: self.events,
            io: self.bus.io_log,
            device_reads: self.bus.device_reads,
            console: self.console,
        }
    }
}
