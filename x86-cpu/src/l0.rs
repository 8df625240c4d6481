//! L0: the plain decode-and-execute interpreter.
//!
//! Each step fetches up to 15 bytes at CS:IP (the fetch wraps at offset
//! 0xFFFF), decodes them with iced-x86 into an [`Op`](super::op::Op) and runs it
//! through [`exec::run_op`](super::exec::run_op), the same per-dispatch
//! contract L1 will use with cached Ops. It is the semantic reference for every
//! faster tier of toyvm. It must not hold instruction semantics of its own.

use super::decode::{self, MAX_LEN};
use super::{exec, seg, Cpu};
use crate::bus::Bus;

/// Why execution cannot go on: a clear report instead of a panic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StopReason {
    /// CS of the instruction that stopped.
    pub cs: u16,
    /// IP/EIP of the instruction that stopped.
    pub ip: u32,
    /// Its bytes (up to 15).
    pub bytes: Vec<u8>,
    /// What went wrong, in words (e.g. "triple fault", "unsupported: LOADALL").
    pub what: String,
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at {:04X}:{:04X} [", self.what, self.cs, self.ip)?;
        for (i, b) in self.bytes.iter().enumerate() {
            write!(f, "{}{:02X}", if i == 0 { "" } else { " " }, b)?;
        }
        write!(f, "]")
    }
}

/// What one call to [`step`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StepOutcome {
    /// One dispatch was spent: an instruction retired, one REP element ran, or
    /// an exception was delivered through the IVT.
    Ok,
    /// HLT retired; the machine advances the clock to the next event.
    Halt,
    /// The host-service instruction `FE 38 lo hi` retired inside the BIOS ROM
    /// (linear F0000-FFFFF); IP is already past it and the machine runs service
    /// `lo | hi << 8`.
    HostCall(u16),
    /// Execution cannot go on.
    Stop(StopReason),
}

/// Reads the 15 bytes at CS:IP, wrapping at the end of a 16-bit segment.
#[inline]
pub fn fetch<B: Bus>(cpu: &Cpu, bus: &mut B) -> [u8; MAX_LEN] {
    let mut bytes = [0u8; MAX_LEN];
    let base = cpu.sbase[seg::CS];
    let mask = cpu.ip_mask();
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = bus.read8(base.wrapping_add((cpu.eip.wrapping_add(i as u32)) & mask));
    }
    bytes
}

/// Whether `bytes` at CS:IP are the host-service instruction in the ROM
/// window (real mode only: protected-mode code never reaches the host).
#[inline]
pub fn is_hostcall(cpu: &Cpu, bytes: &[u8]) -> bool {
    let lin = cpu.sbase[seg::CS].wrapping_add(cpu.eip);
    bytes[0] == 0xFE && bytes[1] == 0x38 && (0xF_0000..0x10_0000).contains(&lin)
}

/// Executes exactly one instruction (or one REP element) at CS:IP. In
/// protected and V86 mode this is `pm::step` (paging, descriptor rules,
/// delivery through the IDT).
///
/// A halted CPU stays halted and spends nothing: the machine advances time and
/// wakes it with [`Cpu::interrupt`].
pub fn step<B: Bus>(cpu: &mut Cpu, bus: &mut B) -> StepOutcome {
    if cpu.halted {
        return StepOutcome::Halt;
    }
    if cpu.pmode && !cpu.flat_user {
        return super::pm::step(cpu, bus);
    }
    cpu.shadow = false;
    let bytes = fetch(cpu, bus);
    let op = if is_hostcall(cpu, &bytes) {
        decode::hostcall::<B>(&bytes)
    } else {
        decode::decode_in::<B>(&bytes, cpu.eip, decode::Mode::of(cpu))
    };
    exec::run_op(cpu, bus, &op)
}
