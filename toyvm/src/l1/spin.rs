//! Spin folds: loops that only wait are fast-forwarded to the dispatch where
//! what they wait on may change, charging whole iterations, so the dispatch
//! count and the state are what running them would give.
//!
//! Two shapes (recognised by `block::spin_shape`, a block whose last op
//! branches back to its own head):
//! - `Mem`: every body op reads registers, flags and memory and writes only
//!   registers and flags (`jmp $`, `cmp [flag],0 / je`, a BIOS tick poll).
//!   After one iteration that ends in exactly the state it began with and
//!   stored nothing, with memory that only an interrupt can change (the
//!   session's `stop_at` comes first) and reads from plain memory, every
//!   further iteration is the same: skip as many whole iterations as fit
//!   before `stop_at`.
//! - `Port`: `IN acc, port` then ops on the accumulator only, then the branch
//!   (a 3DAh retrace wait, a status poll). After an iteration that looped,
//!   the bus promises the value under the loop's mask until dispatch `t`
//!   ([`crate::bus::EngineBus::port_stable_until`]); iterations whose read
//!   falls before `t` loop too. All but the last of them are skipped; the last
//!   runs for real, so the accumulator holds exactly what that read returns.
//!
//! This module owns the arithmetic of both folds and the head-state check; it
//! must not run guest code (the dispatch loop does, and calls in here).

use super::block::{Spin, TOp};
use super::tracked::Tracked;
use crate::bus::EngineBus;
use crate::cpu::op::Opnd;
use crate::cpu::Cpu;

/// Architectural state at a spin block's head, to compare after an
/// iteration.
#[derive(Clone, Copy, Debug)]
pub struct HeadState {
    pub id: u32,
    pub clock: u64,
    pub stores: u64,
    regs: [u32; 8],
    sregs: [u16; 6],
    flags: u32,
    eip: u32,
}

impl HeadState {
    #[inline]
    pub fn take(id: u32, cpu: &Cpu, stores: u64) -> HeadState {
        HeadState {
            id,
            clock: cpu.clock,
            stores,
            regs: cpu.regs,
            sregs: cpu.sregs,
            flags: cpu.flags.bits(),
            eip: cpu.eip,
        }
    }

    /// Whether the CPU is back in exactly this state, `n` dispatches later,
    /// with no store in between.
    #[inline]
    pub fn repeats(&self, id: u32, cpu: &Cpu, stores: u64, n: u64) -> bool {
        self.id == id
            && self.clock + n == cpu.clock
            && self.stores == stores
            && self.eip == cpu.eip
            && self.regs == cpu.regs
            && self.sregs == cpu.sregs
            && self.flags == cpu.flags.bits()
    }
}

/// After port-I/O op `i` of a block with spin shape `spin`: whether the bus
/// promises the spin read's value until a later dispatch (then the read's
/// attention is not taken), the promise's end left in `spin_t`. One
/// definition for L1's dispatch loop and the µop arms' L1 side.
#[inline(always)]
pub fn port_read_promised<B, T: EngineBus>(
    spin: Spin,
    i: usize,
    t: &TOp<B>,
    cpu: &Cpu,
    bus: &mut T,
    spin_t: &mut Option<u64>,
) -> bool {
    match spin {
        Spin::Port { in_idx, mask, w } if in_idx as usize == i => {
            let port = match t.op.src {
                Opnd::Imm => t.op.imm as u16,
                _ => cpu.regs[2] as u16,
            };
            *spin_t = bus.port_stable_until(port, w, mask, cpu.clock - 1);
            spin_t.is_some()
        }
        _ => false,
    }
}

/// Whole iterations of a `k`-dispatch memory spin starting at dispatch `c`
/// that fit before `stop_at`.
#[inline]
pub fn mem_skip(c: u64, k: u64, stop_at: u64) -> u64 {
    if stop_at <= c {
        0
    } else {
        (stop_at - c) / k
    }
}

/// Iterations of a `k`-dispatch port spin to skip when the next iteration
/// starts at `c`, its port read comes `d` dispatches into the iteration, and
/// the value read is promised until `t`: iteration `j` (1-based) reads at
/// `c + (j-1)k + d`, which must be before `t`, and ends at `c + jk`, which
/// must not pass `stop_at`. All but the last such iteration are skipped.
#[inline]
pub fn port_skip(c: u64, k: u64, d: u64, t: u64, stop_at: u64) -> u64 {
    let first_read = c + d;
    let jt = if t > first_read {
        (t - first_read - 1) / k + 1
    } else {
        0
    };
    let jb = if stop_at <= c { 0 } else { (stop_at - c) / k };
    jt.min(jb).saturating_sub(1)
}

/// Folds a `LOOP $` (`Spin::Count`, one dispatch per iteration, CX or ECX
/// counting down, flags untouched): all but the last of the remaining
/// iterations that fit before `stop_at` are taken at once, leaving the count
/// register where running them would. Returns the dispatches charged (0 when
/// nothing was folded); the caller adds them to the clock and its counters.
/// L1's dispatch loop and the µop arm's L1 side both fold with this.
#[inline]
pub fn fold_count_loop(a32: bool, cpu: &mut Cpu, stop_at: u64) -> u64 {
    let mask: u64 = if a32 { 0xFFFF_FFFF } else { 0xFFFF };
    let c = cpu.regs[1] as u64 & mask;
    let total = if c == 0 { mask + 1 } else { c };
    let k = (total - 1).min(stop_at.saturating_sub(cpu.clock));
    if k > 0 {
        let left = (c.wrapping_sub(k)) & mask;
        if a32 {
            cpu.regs[1] = left as u32;
        } else {
            cpu.set_r16(1, left as u16);
        }
    }
    k
}

/// Whole iterations of spin block `id` (its `spin` shape and `ops`) to skip
/// now, just after it branched back to its head: `head` is the state taken
/// at the head one iteration ago, `port_until` what the bus promised about
/// the polled port. 0 when the loop may not be folded. L1's dispatch loop
/// and the µop arm's L1 side both decide with this, so their folds are the
/// same by construction.
#[allow(clippy::too_many_arguments)] // the dispatch loop's live state, passed in registers
#[inline]
pub fn iterations_to_skip<B: EngineBus>(
    spin: Spin,
    ops: &[TOp<B>],
    id: u32,
    head: Option<&HeadState>,
    port_until: Option<u64>,
    cpu: &Cpu,
    tb: &Tracked<B>,
    stop_at: u64,
) -> u64 {
    let k = ops.len() as u64;
    match spin {
        Spin::Mem => match head {
            Some(h) if h.repeats(id, cpu, tb.stores, k) && reads_plain(ops, cpu, tb) => {
                mem_skip(cpu.clock, k, stop_at)
            }
            _ => 0,
        },
        Spin::Port { in_idx, .. } => match (port_until, head) {
            (Some(t), Some(h)) if h.id == id && h.clock + k == cpu.clock => {
                port_skip(cpu.clock, k, in_idx as u64, t, stop_at)
            }
            _ => 0,
        },
        Spin::None | Spin::Count => 0,
    }
}

/// Whether every memory operand the (pure) body reads, at the current
/// registers, lies in plain memory (no device side effects).
pub fn reads_plain<B: EngineBus, T: EngineBus>(ops: &[TOp<B>], cpu: &Cpu, bus: &T) -> bool {
    for t in ops {
        for o in [t.op.dst, t.op.src] {
            if let Opnd::Mem(w) = o {
                let off = crate::cpu::ea::offset(cpu, &t.op.ea);
                let lin = cpu.sbase[t.op.ea.seg as usize].wrapping_add(off);
                for i in 0..w.bytes() {
                    let p = bus.phys(lin.wrapping_add(i));
                    if !bus.code_cacheable(p, p + 1) {
                        return false;
                    }
                }
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(a32, ECX before, clock, stop_at)` -> `(dispatches folded, ECX after)`.
    #[test]
    fn count_loop_folds_all_but_the_last_iteration_that_fits() {
        let cases: &[(bool, u32, u64, u64, u64, u32)] = &[
            // CX = 5: four folded, the last LOOP runs for real.
            (false, 0xABCD_0005, 0, 100, 4, 0xABCD_0001),
            // CX = 0 means 65536 iterations; the high half of ECX is kept.
            (false, 0x1234_0000, 0, 1 << 20, 0xFFFF, 0x1234_0001),
            // The budget cuts it: only what fits before stop_at.
            (false, 0x0000_1000, 10, 20, 10, 0x0000_0FF6),
            // ECX counts with a 32-bit address size.
            (true, 0x0001_0000, 0, 1 << 20, 0xFFFF, 0x0000_0001),
            // CX = 1: the one iteration left runs for real.
            (false, 1, 0, 100, 0, 1),
            // Already at the stop: nothing.
            (false, 50, 7, 7, 0, 50),
        ];
        for &(a32, ecx, clock, stop_at, want_k, want_ecx) in cases {
            let mut cpu = Cpu::new();
            cpu.regs[1] = ecx;
            cpu.clock = clock;
            let k = fold_count_loop(a32, &mut cpu, stop_at);
            assert_eq!(
                (k, cpu.regs[1]),
                (want_k, want_ecx),
                "a32={a32} ecx={ecx:#x}"
            );
        }
    }
}
