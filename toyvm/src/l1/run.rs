//! The dispatch loop: finds the block at CS:IP (link, direct-mapped cache,
//! map, or compile), runs its threaded ops, follows links from block to
//! block, and decides after each op whether the session must look.
//!
//! Two functions share the work on purpose. [`run_hot`] is small so that its
//! few locals stay in registers: it runs SAFE ops that need no look after
//! them and follows valid links into the next block, and hands everything
//! else back. `L1::dispatch` is one long function on purpose: lookups,
//! compiles, the general path (slow ops, port I/O, IF and shadow changes,
//! REP elements), spin folds, SMC retirement and exits share state (the
//! previous block and its link slot, the spin head) that would otherwise
//! travel through structs on every block.
//!
//! Per-dispatch contract, shared with `exec::run_op` (which L0 uses):
//! handlers see the clock before the dispatch is charged; `Next` moves IP
//! past the instruction; every retired instruction, REP element and
//! delivered fault costs exactly one dispatch; a fault delivers through the
//! IVT with registers as before the instruction (SAFE ops skip the snapshot
//! because they cannot have changed any, see `classify`; the rest call
//! `run_op` itself); with TF set every instruction goes through `l0::step`.
//! It must not charge anything for its own bookkeeping: block cuts, links,
//! retirements and compiles are free on the guest clock.

use super::block::{self, Block, Spin, TOp, NONE};
use super::classify::{DEVFETCH, IFCHG, IO, REP, SAFE, SHADOW};
use super::kinds;
use super::spin::{self, HeadState};
use super::tracked::Tracked;
use super::{EngineExit, L1};
use crate::bus::EngineBus;
use crate::cpu::l0::{self, StepOutcome};
use crate::cpu::op::Flow;
use crate::cpu::{exec, seg, Cpu, Exception};

/// Class bits that send an op to the general path.
const GENERAL: u16 = SAFE | IO | IFCHG | SHADOW | REP | DEVFETCH;

/// Why an instruction ran uncached (the `uncached_*` counters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Uncached {
    Volatile,
    Window,
    SingleStep,
    Shadow,
    /// Protected-mode, V86 or 32-bit code (blocks hold real-mode code).
    Protected,
}

/// Whether L1's blocks can hold the code at CS:IP: they are real-mode code
/// (keyed by CS base and IP, decoded 16-bit), so protected-mode, V86 and
/// 32-bit code runs uncached ([`Uncached::Protected`]).
#[inline(always)]
pub(super) fn blocks_apply(cpu: &Cpu) -> bool {
    !cpu.pmode && !cpu.code32
}

/// What one op did on the general path.
enum Step {
    /// Retired; IP is past it.
    Next,
    /// Retired; it set CS:IP itself.
    Jump,
    /// One REP element ran; IP stays on the instruction.
    Repeat,
    /// A fault was delivered: CS:IP is the handler's.
    Fault,
    /// The session must take over.
    Exit(EngineExit),
}

/// The rest of `run_op` for a SAFE op whose handler already ran.
#[inline(always)]
fn finish<B: EngineBus>(
    cpu: &mut Cpu,
    tb: &mut Tracked<B>,
    t: &TOp<B>,
    r: Result<Flow, Exception>,
) -> Step {
    match r {
        Ok(Flow::Next) => {
            cpu.eip = t.next_ip;
            cpu.clock += 1;
            Step::Next
        }
        Ok(Flow::Jump) => {
            cpu.clock += 1;
            Step::Jump
        }
        Ok(Flow::Repeat) => {
            cpu.clock += 1;
            Step::Repeat
        }
        Ok(Flow::Halt) => {
            cpu.eip = t.next_ip;
            cpu.halted = true;
            cpu.clock += 1;
            Step::Exit(EngineExit::Halt)
        }
        Ok(Flow::HostCall(n)) => {
            cpu.eip = t.next_ip;
            cpu.clock += 1;
            Step::Exit(EngineExit::HostCall(n))
        }
        // SAFE ops never answer Stop (classify's audit); were one to, it
        // changed nothing, which is what run_op's restore would give.
        Ok(Flow::Stop(what)) => Step::Exit(EngineExit::Stop(exec::stop_reason(cpu, &t.op, what))),
        Err(e) => {
            cpu.clock += 1;
            match exec::fault(cpu, tb, e, &t.op.bytes[..t.op.len as usize]) {
                StepOutcome::Stop(r) => Step::Exit(EngineExit::Stop(r)),
                _ => Step::Fault,
            }
        }
    }
}

/// The cold end of the hot path.
#[inline(never)]
#[cold]
fn finish_cold<B: EngineBus>(
    cpu: &mut Cpu,
    tb: &mut Tracked<B>,
    t: &TOp<B>,
    r: Result<Flow, Exception>,
) -> Step {
    finish(cpu, tb, t, r)
}

/// Runs one SAFE op exactly as `exec::run_op` would, without the snapshot
/// (TF is 0 here: single-step mode goes through `l0::step`).
#[inline(always)]
fn exec_fast<B: EngineBus>(cpu: &mut Cpu, tb: &mut Tracked<B>, t: &TOp<B>) -> Step {
    let r = kinds::call(t.kind, cpu, tb, &t.op);
    finish(cpu, tb, t, r)
}

/// Runs an op that keeps the snapshot, through `exec::run_op` itself.
#[inline(never)]
fn exec_slow<B: EngineBus>(cpu: &mut Cpu, tb: &mut Tracked<B>, t: &TOp<B>, cs_base: u32) -> Step {
    match exec::run_op(cpu, tb, &t.op) {
        StepOutcome::Ok => {
            if cpu.pmode {
                // MOV CR0 / LMSW entered protected mode: blocks hold
                // real-mode code, the session looks again (`L1::run`).
                return Step::Exit(EngineExit::Attention);
            }
            if cpu.eip == t.next_ip && cpu.sbase[seg::CS] == cs_base {
                Step::Next
            } else {
                Step::Jump
            }
        }
        StepOutcome::Halt => Step::Exit(EngineExit::Halt),
        StepOutcome::HostCall(n) => Step::Exit(EngineExit::HostCall(n)),
        StepOutcome::Stop(r) => Step::Exit(EngineExit::Stop(r)),
    }
}

/// Why `run_hot` (or the general path) stopped at op `i` of block `id`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Hot {
    /// Op `i` needs the general path (not run yet).
    General,
    /// The block's last op fell through and no valid link continues.
    Fall,
    /// Op `i` transferred control and no valid link continues.
    Jumped,
    /// Op `i` retired and stored into code.
    Hits,
    /// `stop_at` reached before op `i`.
    Reached,
    /// Control went somewhere no link describes (a fault was delivered, or
    /// an op that transferred control also stored into code).
    Elsewhere,
    /// The session must take over: the exit is in the exit slot.
    Exit,
}

/// Whether an op of class `class` in a block of spin shape `spin` needs the
/// general path rather than the hot loop: anything not SAFE, REP strings,
/// IF and shadow changes, and port I/O in a port-spin block (its IN asks the
/// bus for a promise there). `block::compile` records the answer per op as
/// run lengths (`TOp::hot_run`).
pub(crate) fn needs_general(class: u16, spin: Spin) -> bool {
    let general = if spin == Spin::None {
        GENERAL & !IO
    } else {
        GENERAL
    };
    class & general != SAFE
}

/// Runs ops from op `i` of block `id` while they are SAFE and need no look
/// after them, following valid links (fall-through and taken) into the next
/// block, and stopping before any op once `cpu.clock >= stop_at`. Counts
/// executed ops and followed links into `stats`.
///
/// Shape of the loop (docs/l1.md, "Where the time goes"): on entering a
/// block at op `i` it computes how many ops may run with no check but their
/// own result, `min(hot_run, stop_at - clock)`, so neither the budget nor
/// the op's class is looked at per op; a closing Jcc/JMP/LOOP that fits
/// runs fused after that stretch with an inlined static call.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn run_hot<B: EngineBus>(
    cpu: &mut Cpu,
    tb: &mut Tracked<B>,
    blocks: &[Block<B>],
    mut id: u32,
    mut i: usize,
    stop_at: u64,
    dm: &[(u64, u32)],
    epoch: u32,
    a20_bad: u8,
    fuse: bool,
    exit: &mut Option<EngineExit>,
    stats: &mut [u64; 4],
) -> (Hot, u32, usize) {
    let mut ran = 0u64;
    let mut chained = 0u64;
    let mut via_dm = 0u64;
    let out = 'blocks: loop {
        let b = &blocks[id as usize];
        let ops = &b.ops[..];
        let n = ops.len();
        let room = stop_at.saturating_sub(cpu.clock);
        if room == 0 {
            break 'blocks (Hot::Reached, id, i);
        }
        let hot = ops[i].hot_run as usize;
        let mut end;
        let fused;
        if hot != 0 {
            end = i + hot.min(room.min(n as u64) as usize);
            // The closing branch, fused: run the stretch before it here,
            // then it.
            fused = fuse && end == n && n - i >= 2 && kinds::fusable_branch(ops[n - 1].kind);
            if fused {
                end -= 1;
            }
        } else if ops[i].class & GENERAL == SAFE | DEVFETCH {
            // An op fetched from a device window and otherwise hot: replay
            // its fetch (the device state L0's fetch leaves), then run it as
            // a stretch of one.
            tb.fetch_effect(ops[i].fetch_dev);
            end = i + 1;
            fused = false;
            stats[3] += 1;
        } else {
            break 'blocks (Hot::General, id, i);
        }
        let start = i;
        let slot;
        loop {
            let t = &ops[i];
            let r = (t.op.handler)(cpu, tb, &t.op);
            if let Ok(Flow::Next) = r {
                cpu.eip = t.next_ip;
                cpu.clock += 1;
                if !tb.hits.is_empty() {
                    ran += (i + 1 - start) as u64;
                    break 'blocks (Hot::Hits, id, i);
                }
                if t.class & IO != 0 && tb.take_io_attention() {
                    ran += (i + 1 - start) as u64;
                    *exit = Some(EngineExit::Attention);
                    break 'blocks (Hot::Exit, id, i);
                }
                i += 1;
                if i < end {
                    continue;
                }
                ran += (i - start) as u64;
                if fused {
                    // Two guest dispatches, one threaded op; the budget was
                    // checked for both when `end` was set.
                    let j = &ops[i];
                    let r = kinds::call_branch(j.kind, cpu, tb, &j.op);
                    if let Ok(Flow::Next) = r {
                        cpu.eip = j.next_ip;
                        cpu.clock += 1;
                        slot = 0;
                        break;
                    }
                    if let Ok(Flow::Jump) = r {
                        cpu.clock += 1;
                        slot = 1;
                        break;
                    }
                    break 'blocks match finish_cold(cpu, tb, j, r) {
                        Step::Exit(x) => {
                            *exit = Some(x);
                            (Hot::Exit, id, i)
                        }
                        _ => (Hot::Elsewhere, id, i),
                    };
                }
                if i == n {
                    i -= 1;
                    slot = 0;
                    break;
                }
                // Stopped inside the block: the budget, or a general op.
                break 'blocks if cpu.clock >= stop_at {
                    (Hot::Reached, id, i)
                } else {
                    (Hot::General, id, i)
                };
            }
            ran += (i + 1 - start) as u64;
            if let Ok(Flow::Jump) = r {
                cpu.clock += 1;
                if !tb.hits.is_empty() {
                    break 'blocks (Hot::Elsewhere, id, i);
                }
                slot = 1;
                break;
            }
            break 'blocks match finish_cold(cpu, tb, t, r) {
                Step::Exit(x) => {
                    *exit = Some(x);
                    (Hot::Exit, id, i)
                }
                // Next and Jump were handled above; Repeat comes only from
                // REP ops, which take the general path.
                _ => (Hot::Elsewhere, id, i),
            };
        }
        let end = if slot == 0 { Hot::Fall } else { Hot::Jumped };
        let key = block::key(cpu.sbase[seg::CS], cpu.eip);
        let ok = |l: u32| {
            l != NONE && {
                let nb = &blocks[l as usize];
                nb.valid
                    && nb.spin == Spin::None
                    && nb.epoch == epoch
                    && nb.key == key
                    && nb.a20 != a20_bad
            }
        };
        let l = b.link[slot];
        if ok(l) {
            chained += 1;
            id = l;
        } else {
            // No link yet: the dispatch loop finds the block and sets it.
            if l == NONE {
                break (end, id, i);
            }
            // Indirect transfers (returns, jumps through registers, far
            // transfers) whose link holds another target: the direct-mapped
            // cache, still without leaving this loop.
            let (k, l2) = dm[super::dm_index(key)];
            if k != key || !ok(l2) {
                break (end, id, i);
            }
            via_dm += 1;
            id = l2;
        }
        i = 0;
    };
    stats[0] += ran;
    stats[1] += chained;
    stats[2] += via_dm;
    out
}

impl<B: EngineBus> L1<B> {
    /// One instruction through the uncached path (`l0::step`: fetch and
    /// decode every time), with the exits the session needs after it.
    pub(super) fn uncached(
        &mut self,
        cpu: &mut Cpu,
        tb: &mut Tracked<B>,
        why: Uncached,
    ) -> Option<EngineExit> {
        self.count_uncached(why);
        let if_before = cpu.flags.if_();
        let mode_before = cpu.pmode;
        let io_before = tb.io_ops;
        let out = l0::step(cpu, tb);
        self.settle(cpu, tb, out, if_before, io_before, mode_before)
    }

    /// Counts an uncached step by reason.
    pub(super) fn count_uncached(&mut self, why: Uncached) {
        self.counters.uncached_steps += 1;
        *match why {
            Uncached::Volatile => &mut self.counters.uncached_volatile,
            Uncached::Window => &mut self.counters.uncached_window,
            Uncached::SingleStep => &mut self.counters.uncached_single_step,
            Uncached::Shadow => &mut self.counters.uncached_shadow,
            Uncached::Protected => &mut self.counters.uncached_protected,
        } += 1;
    }

    /// After an uncached step that ended in `out`: retires what it stored
    /// into, and says whether the session must look (IF, shadow, ports, a
    /// mode switch; `pm_before`: the CPU was in protected mode before).
    pub(super) fn settle(
        &mut self,
        cpu: &Cpu,
        tb: &mut Tracked<B>,
        out: StepOutcome,
        if_before: bool,
        io_before: u64,
        pm_before: bool,
    ) -> Option<EngineExit> {
        self.process_hits(tb, cpu.clock);
        match out {
            StepOutcome::Ok => {
                // As after a cached op: the bus is asked only after an
                // instruction that accessed a port (asking after every step
                // sent U2.EXE back to the session 9M times in 20M dispatches
                // while an IRQ waited with IF=0).
                let io = tb.io_ops != io_before && tb.take_io_attention();
                if io || cpu.shadow || (!if_before && cpu.flags.if_()) || cpu.pmode != pm_before {
                    Some(EngineExit::Attention)
                } else {
                    None
                }
            }
            StepOutcome::Halt => Some(EngineExit::Halt),
            StepOutcome::HostCall(n) => Some(EngineExit::HostCall(n)),
            StepOutcome::Stop(r) => Some(EngineExit::Stop(r)),
        }
    }

    /// Whether a byte of the fetch window at `cs_base:ip` is volatile (the
    /// reason a compile there found nothing to cache, when it is not the
    /// window itself).
    fn volatile_at(&self, tb: &Tracked<B>, cs_base: u32, ip: u32) -> bool {
        (0..crate::cpu::decode::MAX_LEN as u32).any(|i| {
            let p = tb.phys(cs_base.wrapping_add(ip.wrapping_add(i) & 0xFFFF));
            self.smc.is_volatile(p)
        })
    }

    /// Entered inside an interrupt shadow: exactly one instruction.
    ///
    /// The instruction comes from the block cache when it can (the hot
    /// shadows are the BIOS stubs' `STI` followed by the host-service op,
    /// entered by every `INT`: fetching and decoding it each time made
    /// games that call the BIOS in a loop run at 60 ns per dispatch), run
    /// on the general path with a budget of one dispatch.
    pub(super) fn single_step(&mut self, cpu: &mut Cpu, tb: &mut Tracked<B>) -> EngineExit {
        self.shadow_step(cpu, tb).unwrap_or(EngineExit::Attention)
    }

    /// The instruction under an interrupt shadow, alone (see
    /// `single_step`); `None` when it needs nothing from the session (the
    /// caller may go on if no interrupt is requested).
    fn shadow_step(&mut self, cpu: &mut Cpu, tb: &mut Tracked<B>) -> Option<EngineExit> {
        self.counters.shadow_steps += 1;
        if cpu.flags.tf() {
            return self.uncached(cpu, tb, Uncached::Shadow);
        }
        if cpu.pmode {
            return self.uncached(cpu, tb, Uncached::Shadow);
        }
        if !blocks_apply(cpu) {
            return self.uncached(cpu, tb, Uncached::Protected);
        }
        let cs_base = cpu.sbase[seg::CS];
        let ip = cpu.eip;
        let key = block::key(cs_base, ip);
        let id = match self.find(tb, key, cs_base, ip, cpu.clock) {
            Some(x) if self.blocks[x as usize].epoch != self.epoch && !self.verify(tb, x) => None,
            other => other,
        };
        let Some(id) = id else {
            let why = if self.volatile_at(tb, cs_base, ip) {
                Uncached::Volatile
            } else {
                Uncached::Shadow
            };
            return self.uncached(cpu, tb, why);
        };
        // As `l0::step`: the shadow covers this instruction only.
        cpu.shadow = false;
        let mut spin_t = None;
        let mut exit = None;
        let stop_at = cpu.clock + 1;
        let h = self.general(cpu, tb, id, 0, stop_at, &mut spin_t, &mut exit);
        self.process_hits(tb, cpu.clock);
        match h {
            // A REP stopped after its first element by the one-dispatch
            // budget: nothing for the session.
            Hot::Exit => match exit {
                Some(EngineExit::Reached) | None => None,
                x => x,
            },
            _ => None,
        }
    }

    /// Protected-mode, V86 and 32-bit code: blocks are real-mode code
    /// (keyed by CS base and IP, decoded 16-bit), so these run through the
    /// uncached path, instruction by instruction, until the budget, an exit,
    /// or a return to real mode.
    pub(super) fn run_uncached(
        &mut self,
        cpu: &mut Cpu,
        tb: &mut Tracked<B>,
        stop_at: u64,
    ) -> EngineExit {
        while cpu.clock < stop_at {
            if let Some(x) = self.uncached(cpu, tb, Uncached::Protected) {
                return x;
            }
        }
        EngineExit::Reached
    }

    /// Op `i` of block `id` on the general path: slow ops (with the
    /// snapshot), port I/O (attention, port-spin promises), IF and shadow
    /// changes, REP strings element by element. Returns how it ended.
    #[allow(clippy::too_many_arguments)]
    fn general(
        &mut self,
        cpu: &mut Cpu,
        tb: &mut Tracked<B>,
        id: u32,
        i: usize,
        stop_at: u64,
        spin_t: &mut Option<u64>,
        exit: &mut Option<EngineExit>,
    ) -> Hot {
        let b = &self.blocks[id as usize];
        let t = &b.ops[i];
        self.counters.threaded_ops += 1;
        let if_before = t.class & IFCHG == 0 || cpu.flags.if_();
        let dev = t.class & DEVFETCH != 0;
        if dev {
            tb.fetch_effect(t.fetch_dev);
            self.counters.device_dispatches += 1;
        }
        let mut step = if t.class & SAFE != 0 {
            exec_fast(cpu, tb, t)
        } else {
            exec_slow(cpu, tb, t, b.cs_base)
        };
        // REP: one element per dispatch until the count (or the condition)
        // ends it, stopping exactly at `stop_at`.
        while let Step::Repeat = step {
            if !tb.hits.is_empty() || (t.class & IO != 0 && tb.take_io_attention()) {
                break;
            }
            if cpu.clock >= stop_at {
                break;
            }
            self.counters.threaded_ops += 1;
            if dev {
                tb.fetch_effect(t.fetch_dev);
                self.counters.device_dispatches += 1;
            }
            step = exec_fast(cpu, tb, t);
        }
        let jumped = match step {
            Step::Next => false,
            Step::Jump => true,
            Step::Repeat => {
                // Stopped between elements: IP is still on the instruction.
                if !tb.hits.is_empty() {
                    return Hot::Elsewhere;
                }
                *exit = Some(if cpu.clock >= stop_at {
                    EngineExit::Reached
                } else {
                    EngineExit::Attention
                });
                return Hot::Exit;
            }
            Step::Fault => return Hot::Elsewhere,
            Step::Exit(x) => {
                *exit = Some(x);
                return Hot::Exit;
            }
        };
        if !tb.hits.is_empty() {
            return if jumped { Hot::Elsewhere } else { Hot::Hits };
        }
        if t.class & IO != 0 {
            let attention = tb.take_io_attention();
            let promised = spin::port_read_promised(b.spin, i, t, cpu, tb, spin_t);
            if attention && !promised {
                *exit = Some(EngineExit::Attention);
                return Hot::Exit;
            }
        }
        if (t.class & SHADOW != 0 && cpu.shadow)
            || (t.class & IFCHG != 0 && !if_before && cpu.flags.if_())
        {
            // The session would look only to deliver an interrupt. With
            // none requested, none can be before `stop_at` (devices move
            // only at events, and `stop_at` comes first; a port write asks
            // for attention itself), so the run goes on; an open shadow is
            // honoured by running the next instruction alone
            // (`shadow_step`). Every INT's return through IRET, and every
            // BIOS stub's STI, used to end the run here.
            if cpu.clock >= stop_at || tb.interrupt_requested() {
                *exit = Some(EngineExit::Attention);
                return Hot::Exit;
            }
        }
        if jumped {
            Hot::Jumped
        } else if i + 1 == b.ops.len() {
            Hot::Fall
        } else {
            Hot::General // continue with op i + 1
        }
    }

    /// The dispatch loop (see the module header). Entered with
    /// `cpu.clock < stop_at`, not halted, no shadow.
    pub(super) fn dispatch(
        &mut self,
        cpu: &mut Cpu,
        tb: &mut Tracked<B>,
        stop_at: u64,
    ) -> EngineExit {
        // The block just left and which of its links leads here.
        let mut prev = NONE;
        let mut prev_slot = 0usize;
        // Continue inside block `.0` at op `.1`.
        let mut resume: Option<(u32, usize)> = None;
        // Spin state: the head of the last spin-block entry; the port
        // promise of the last port-spin iteration.
        let mut head: Option<HeadState> = None;
        let mut spin_t: Option<u64> = None;
        let mut stats = [0u64; 4];
        let mut exit_slot: Option<EngineExit> = None;
        let links = self.config.links;
        let exit = 'outer: loop {
            if cpu.clock >= stop_at {
                break EngineExit::Reached;
            }
            let (id, start) = if let Some(r) = resume.take() {
                r
            } else {
                if cpu.shadow {
                    // An op opened a shadow with no interrupt requested
                    // (`general`): the next instruction alone, then on.
                    prev = NONE;
                    head = None;
                    if let Some(x) = self.shadow_step(cpu, tb) {
                        break 'outer x;
                    }
                    if cpu.shadow || tb.interrupt_requested() {
                        break 'outer EngineExit::Attention;
                    }
                    continue;
                }
                if cpu.flags.tf() {
                    // Single-step mode: the reference path, one instruction.
                    prev = NONE;
                    if let Some(x) = self.uncached(cpu, tb, Uncached::SingleStep) {
                        break 'outer x;
                    }
                    continue;
                }
                let cs_base = cpu.sbase[seg::CS];
                let ip = cpu.eip;
                let key = block::key(cs_base, ip);
                let mut id = NONE;
                if prev != NONE {
                    let l = self.blocks[prev as usize].link[prev_slot];
                    if l != NONE {
                        let b = &self.blocks[l as usize];
                        if b.valid && b.key == key && b.a20 != self.a20_bad {
                            id = l;
                            self.counters.link_hits += 1;
                        }
                    }
                }
                if id != NONE
                    && self.blocks[id as usize].epoch != self.epoch
                    && !self.verify(tb, id)
                {
                    id = NONE;
                }
                if id == NONE {
                    let flushes = self.counters.flushes;
                    match self.find(tb, key, cs_base, ip, cpu.clock) {
                        Some(x)
                            if self.blocks[x as usize].epoch != self.epoch
                                && !self.verify(tb, x) =>
                        {
                            // Stale after host code ran: compile it again.
                            prev = NONE;
                            let _ = x;
                            continue;
                        }
                        Some(x) => {
                            id = x;
                            if links && prev != NONE && self.counters.flushes == flushes {
                                self.blocks[prev as usize].link[prev_slot] = id;
                            }
                        }
                        None => {
                            prev = NONE;
                            let why = if self.volatile_at(tb, cs_base, ip) {
                                Uncached::Volatile
                            } else {
                                Uncached::Window
                            };
                            if let Some(x) = self.uncached(cpu, tb, why) {
                                break 'outer x;
                            }
                            continue;
                        }
                    }
                }
                // Spin folds, at a loop back into the same block.
                let b = &self.blocks[id as usize];
                if b.spin == Spin::Count {
                    // LOOP $: all but the last of the remaining iterations
                    // (each one dispatch, CX - 1, flags untouched).
                    let k = spin::fold_count_loop(b.ops[0].op.ea.a32, cpu, stop_at);
                    if k > 0 {
                        cpu.clock += k;
                        self.counters.spin_folds += 1;
                        self.counters.spin_dispatches += k;
                        if cpu.clock >= stop_at {
                            break 'outer EngineExit::Reached;
                        }
                    }
                } else if b.spin != Spin::None {
                    if prev == id && prev_slot == 1 {
                        let k = b.ops.len() as u64;
                        let skip = spin::iterations_to_skip(
                            b.spin,
                            &b.ops,
                            id,
                            head.as_ref(),
                            spin_t,
                            cpu,
                            tb,
                            stop_at,
                        );
                        if skip > 0 {
                            cpu.clock += skip * k;
                            self.counters.spin_folds += 1;
                            self.counters.spin_dispatches += skip * k;
                            if cpu.clock >= stop_at {
                                break 'outer EngineExit::Reached;
                            }
                        }
                    }
                    head = Some(HeadState::take(id, cpu, tb.stores));
                    spin_t = None;
                }
                (id, 0)
            };

            let (mut h, id, i) = run_hot(
                cpu,
                tb,
                &self.blocks,
                id,
                start,
                stop_at,
                &self.dm,
                self.epoch,
                self.a20_bad,
                self.config.fuse,
                &mut exit_slot,
                &mut stats,
            );
            if h == Hot::General {
                h = self.general(cpu, tb, id, i, stop_at, &mut spin_t, &mut exit_slot);
                if h == Hot::General {
                    resume = Some((id, i + 1));
                    continue;
                }
            }
            if !tb.hits.is_empty() {
                // A store into code: retire before the next instruction runs.
                self.process_hits(tb, cpu.clock);
                head = None;
                prev = NONE;
                let b = &self.blocks[id as usize];
                if h == Hot::Hits && b.valid {
                    if i + 1 < b.ops.len() {
                        resume = Some((id, i + 1));
                    } else {
                        prev = id;
                        prev_slot = 0;
                    }
                }
                if h != Hot::Exit {
                    continue;
                }
            }
            match h {
                Hot::Fall => {
                    prev = id;
                    prev_slot = 0;
                }
                Hot::Jumped => {
                    prev = id;
                    prev_slot = 1;
                }
                Hot::Elsewhere | Hot::Hits | Hot::General => prev = NONE,
                Hot::Reached => break EngineExit::Reached,
                Hot::Exit => break exit_slot.take().unwrap_or(EngineExit::Attention),
            }
        };
        self.counters.threaded_ops += stats[0];
        self.counters.link_hits += stats[1];
        self.counters.dm_hits += stats[2];
        self.counters.device_dispatches += stats[3];
        exit
    }
}
