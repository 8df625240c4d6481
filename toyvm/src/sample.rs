//! What a session shows at a sample point: the fields the oracle compares,
//! computed in one place for every way a session runs (natively, or inside
//! the wasm32-wasip1 module under wasmtime, where the oracle receives it as
//! JSON).
//!
//! Owns [`Sample`], taking it ([`Session::sample`]), and the texts it is
//! made of (how the run stands, the console). Taking a sample brings the
//! devices to the clock (as every sampler must, so all arms see the same
//! sampling history); it must never run the guest forward.

use crate::cpu::seg;
use crate::session::{End, Session, DEFINED_FLAGS};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A session's state at one sample point (RAM itself is compared directly,
/// not through this).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sample {
    pub dispatches: u64,
    /// "running", "budget", "exited N" or "stopped: WHAT".
    pub end: String,
    pub cs: u16,
    pub ip: u32,
    /// EAX ECX EDX EBX ESP EBP ESI EDI.
    pub regs: [u32; 8],
    /// ES CS SS DS FS GS.
    pub sregs: [u16; 6],
    /// FLAGS & [`DEFINED_FLAGS`].
    pub flags: u32,
    /// Hash of every guest-visible device state.
    pub device_hash: u64,
    /// Hash of the frame the screen shows.
    pub frame_hash: u64,
    /// XXH3-64 of [`console_dump`].
    pub console_hash: u64,
    /// XXH3-64 of the x87 state (`Fpu::state_bytes`).
    pub fpu_hash: u64,
    /// XXH3-64 of the CPU's system state (`Cpu::system_state_bytes`:
    /// control registers, descriptor table registers and caches, mode).
    #[serde(default)]
    pub system_hash: u64,
    /// The CPU is halted (waiting for an interrupt).
    pub halted: bool,
    /// Interrupts taken so far, by vector.
    pub interrupts: BTreeMap<u8, u64>,
}

/// How a session stands, as one word or phrase.
pub fn end_text(s: &Session) -> String {
    match &s.end {
        None => "running".into(),
        Some(End::Budget) => "budget".into(),
        Some(End::Exited { code }) => format!("exited {code}"),
        Some(End::Stopped(st)) => format!("stopped: {}", st.what),
    }
}

/// The console of a session: what was printed, then (in a text mode) the
/// screen.
pub fn console_dump(s: &Session) -> String {
    let (printed, screen) = s.console_text();
    match screen {
        Some(sc) => format!("{printed}\n--- screen ---\n{sc}"),
        None => printed,
    }
}

impl Session {
    /// The sample where the session stands (devices brought to the clock).
    pub fn sample(&mut self) -> Sample {
        let now = self.cpu.clock;
        let m = &mut self.machine;
        let device_hash = m.dev.state_hash(now, m.mem.ram_mut());
        let frame_hash = self.frame().hash();
        let console = console_dump(self);
        Sample {
            dispatches: now,
            end: end_text(self),
            cs: self.cpu.sregs[seg::CS],
            ip: self.cpu.eip,
            regs: self.cpu.regs,
            sregs: self.cpu.sregs,
            flags: self.cpu.flags.bits() & DEFINED_FLAGS,
            device_hash,
            frame_hash,
            console_hash: xxhash_rust::xxh3::xxh3_64(console.as_bytes()),
            fpu_hash: xxhash_rust::xxh3::xxh3_64(&self.cpu.fpu.state_bytes()),
            system_hash: xxhash_rust::xxh3::xxh3_64(&self.cpu.system_state_bytes()),
            halted: self.cpu.halted,
            interrupts: self.interrupts.clone(),
        }
    }
}
