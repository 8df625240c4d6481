//! The engine API every execution tier of toyvm offers the session, and L0
//! as an engine.
//!
//! Owns [`EngineExit`] (why an engine handed control back), the [`Engine`]
//! trait and the [`L0`] engine (one `l0::step` per call, so the session looks
//! at events before every instruction: the reference the other engines are
//! compared with). It must not hold instruction semantics or session policy.

use crate::bus::EngineBus;
use crate::cpu::l0::{self, StepOutcome, StopReason};
use crate::cpu::Cpu;

/// Why an engine returned to the session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EngineExit {
    /// `cpu.clock == stop_at` (or was already past it on entry).
    Reached,
    /// HLT retired: the session advances time to the next event.
    Halt,
    /// The host-service instruction retired (IP already past it).
    HostCall(u16),
    /// Execution cannot go on.
    Stop(StopReason),
    /// An instruction just retired after which the session must re-check
    /// events and interrupts before the next one: a port access the bus
    /// flagged, IF set from 0, an interrupt shadow opened (the next `run` then
    /// executes exactly one instruction), or anything the engine cannot vouch
    /// for. Returning it more often than needed is always exact.
    Attention,
}

impl EngineExit {
    /// The same outcome in the CPU's per-step vocabulary (`Reached` and
    /// `Attention` are both "go on").
    pub fn into_step(self) -> StepOutcome {
        match self {
            EngineExit::Reached | EngineExit::Attention => StepOutcome::Ok,
            EngineExit::Halt => StepOutcome::Halt,
            EngineExit::HostCall(n) => StepOutcome::HostCall(n),
            EngineExit::Stop(r) => StepOutcome::Stop(r),
        }
    }
}

/// An execution engine over a bus `B`.
///
/// Contract (ARCHITECTURE.md invariants 1-3): `run` executes guest
/// instructions, each costing its dispatches on `cpu.clock`, and returns no
/// later than the instruction boundary where `cpu.clock == stop_at`. It
/// returns earlier whenever the session must decide something (see
/// [`EngineExit`]). Entered with `cpu.shadow` set, it executes exactly one
/// instruction. Entered halted, it returns `Halt` at once.
pub trait Engine<B: EngineBus> {
    /// The arm name (as the CLI and reports spell it).
    fn name(&self) -> &'static str;
    /// Runs until `stop_at` or until the session is needed.
    fn run(&mut self, cpu: &mut Cpu, bus: &mut B, stop_at: u64) -> EngineExit;
}

/// L0 as an engine: exactly one instruction per call.
#[derive(Clone, Copy, Debug, Default)]
pub struct L0;

impl<B: EngineBus> Engine<B> for L0 {
    fn name(&self) -> &'static str {
        "l0"
    }

    fn run(&mut self, cpu: &mut Cpu, bus: &mut B, stop_at: u64) -> EngineExit {
        if cpu.halted {
            return EngineExit::Halt;
        }
        if cpu.clock >= stop_at {
            return EngineExit::Reached;
        }
        let out = l0::step(cpu, bus);
        // L0 caches nothing: host code marks are never set, the log is empty.
        let _ = bus.take_io_attention();
        match out {
            StepOutcome::Ok => EngineExit::Attention,
            StepOutcome::Halt => EngineExit::Halt,
            StepOutcome::HostCall(n) => EngineExit::HostCall(n),
            StepOutcome::Stop(r) => EngineExit::Stop(r),
        }
    }
}
