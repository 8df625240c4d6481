//! mainemu's L1: the threaded tier. Guest code runs from blocks decoded once
//! (`cache`), every instruction through the CPU's own dispatch
//! (`x86_cpu::user::run_op`, the same call L0's `user::step` makes after
//! fetching and decoding), so registers, flags, faults, the single-step trap
//! and the clock are L0's by construction.
//!
//! Owns the dispatch loop: find the block at EIP, run its ops one dispatch
//! each with the budget checked before every one (a stop at `stop_at` lands
//! there exactly, inside a block too), follow the block's exit, retire what a
//! store overwrote before the next instruction runs, and fall back to
//! `user::step` for code it does not cache (an unreadable fetch window, a
//! non-flat code segment). EIP in the thunk area ends the run before any
//! lookup (the engine services thunks; they are never compiled). It must not
//! hold instruction semantics (x86-cpu does), service thunks or deliver
//! exceptions (run.rs and seh do).

pub mod cache;

use crate::memory::Memory;
use crate::run::Exit;
use cache::{Cache, CacheCounters};
use shared_ir::flags::LazyFlags;
use x86_cpu::bus::Bus;
use x86_cpu::decode::Mode;
use x86_cpu::kinds;
use x86_cpu::op::Flow;
use x86_cpu::user::{self, UserOutcome};
use x86_cpu::{seg, Cpu};

/// L1's counters for the run summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counters {
    #[serde(flatten)]
    pub cache: CacheCounters,
    /// Dispatches (instructions, REP elements, faults) run from blocks.
    pub block_dispatches: u64,
    /// Instructions run through `user::step` (fetch and decode each time).
    pub uncached_steps: u64,
    /// Calls of [`L1::run`].
    pub runs: u64,
}

/// The L1 engine of one process (threads share it: they share the code).
#[derive(Default)]
pub struct L1 {
    cache: Cache,
    counters: Counters,
}

/// The only mode L1 compiles for: flat 32-bit code on the Pentium model,
/// CS base 0 (what `Cpu::new_flat32` sets up); anything else runs uncached.
const MODE: Mode = Mode::FLAT32;

/// Whether the CPU runs the code L1 compiles (see [`MODE`]).
#[inline(always)]
fn flat(cpu: &Cpu) -> bool {
    Mode::of(cpu) == MODE && cpu.sbase[seg::CS] == 0
}

/// How a chain of blocks was left.
enum Leave {
    /// Block `.0` was left by its exit `.1` (0 fall-through, 1 any other).
    Linked(u32, u8),
    /// The running block was retired: look up EIP afresh.
    Fresh,
    /// Back to the run loop's caller (boxed: it is rare and large).
    Exit(Box<Exit>),
}

impl L1 {
    pub fn new() -> L1 {
        L1::default()
    }

    /// The counters so far.
    pub fn counters(&self) -> Counters {
        Counters {
            cache: self.cache.counters,
            ..self.counters
        }
    }

    /// Runs `cpu` until EIP enters the thunk area, the clock reaches
    /// `stop_at`, or an exception or stop: the contract of `run::exec`, with
    /// the same dispatches as L0.
    pub fn run(
        &mut self,
        cpu: &mut Cpu,
        mem: &mut Memory,
        stop_at: u64,
        is_thunk: &dyn Fn(u32) -> bool,
    ) -> Exit {
        self.counters.runs += 1;
        // Host writes (API bodies, the loader) and protection changes since
        // the last run.
        if mem.has_code_writes() {
            self.cache.retire_writes(mem);
        }
        // The block just left and which of its exits was taken.
        let mut from: Option<(u32, usize)> = None;
        loop {
            let eip = cpu.eip;
            if is_thunk(eip) {
                return Exit::Thunk;
            }
            if cpu.clock >= stop_at {
                return Exit::Slice;
            }
            let found = if flat(cpu) {
                match self.cache.find(from, eip) {
                    Some(b) => Some(b),
                    None => {
                        let b = self.cache.compile(mem, eip, MODE, is_thunk);
                        if let Some(b) = b {
                            self.cache.link(from, b);
                        }
                        b
                    }
                }
            } else {
                None
            };
            let Some(b) = found else {
                // Uncached: exactly L0's step.
                self.counters.uncached_steps += 1;
                from = None;
                match user::step(cpu, mem) {
                    UserOutcome::Ok => {}
                    UserOutcome::Exception(ev) => return Exit::Exception(ev),
                    UserOutcome::Stop(r) => return Exit::Stop(r),
                }
                if mem.has_code_writes() {
                    self.cache.retire_writes(mem);
                }
                continue;
            };
            from = match self.run_chain(cpu, mem, stop_at, b) {
                Leave::Linked(b, slot) => Some((b, slot as usize)),
                Leave::Fresh => None,
                Leave::Exit(exit) => return *exit,
            };
        }
    }

    /// Runs block `b` from its first op, then the blocks its links lead to
    /// while the link is valid (the same check [`Cache::find`] makes first),
    /// the budget has room and the code is still flat, until a block is left
    /// some other way, a store retires the running block, the clock reaches
    /// `stop_at`, or an exception. No linked block lies in the thunk area
    /// (`Cache::compile` refuses it), so no thunk check is needed here.
    #[inline]
    fn run_chain(&mut self, cpu: &mut Cpu, mem: &mut Memory, stop_at: u64, mut b: u32) -> Leave {
        let clock0 = cpu.clock;
        let mut i = 0;
        let leave = loop {
            let ops = &self.cache.blocks[b as usize].ops[..];
            let (ran, at) = run_ops(cpu, mem, stop_at, ops, i);
            let slot = match ran {
                Ran::Fall => 0,
                Ran::Jumped => 1,
                Ran::Resume => {
                    // Op `at` retired; retire what it overwrote in code
                    // before the next instruction.
                    let (ip, next, n) = (ops[at].ip, ops[at].next, ops.len());
                    if mem.has_code_writes() {
                        self.cache.retire_writes(mem);
                    }
                    if !self.cache.blocks[b as usize].valid {
                        // The next instruction is fetched from the new bytes.
                        break Leave::Fresh;
                    }
                    if cpu.eip == next {
                        if at + 1 < n {
                            i = at + 1;
                            continue;
                        }
                        0
                    } else if cpu.eip == ip {
                        // A REP element with more to go: the same op again.
                        i = at;
                        continue;
                    } else {
                        1
                    }
                }
                Ran::Unflat(slot) => break Leave::Linked(b, slot),
                Ran::Exit(e) => break Leave::Exit(e),
            };
            if cpu.clock < stop_at {
                if let Some(next) = self.cache.follow(b, slot as usize, cpu.eip) {
                    b = next;
                    i = 0;
                    continue;
                }
            }
            break Leave::Linked(b, slot);
        };
        self.counters.block_dispatches += cpu.clock - clock0;
        leave
    }
}

/// How [`run_ops`] left a block.
enum Ran {
    /// Its last op fell through.
    Fall,
    /// An op transferred control elsewhere.
    Jumped,
    /// The op at the index returned retired and may have stored into a code
    /// page, or left the fast loop's conditions (TF, a pending fault): the
    /// caller retires what was overwritten and goes on after it.
    Resume,
    /// An op that may change the mode ran and the code is no longer flat:
    /// left by link slot `.0`, not followed.
    Unflat(u8),
    /// Back to the run loop's caller.
    Exit(Box<Exit>),
}

/// Runs the ops of one block from op `i`, one dispatch each, and says how the
/// block was left and at which op. With TF clear and no bus fault pending
/// (the usual case) the handlers are called here, in stretches of `NO_UNDO`
/// and `LIGHT` ops (`TOp::hot`) with the budget looked at once per stretch
/// (every op that moves on to the next costs exactly one dispatch), each op
/// with the small snapshot (`user::run_op_light`'s, which restores nothing
/// for a `NO_UNDO` op, as `run_op_no_undo` restores nothing) and one look at
/// the memory after it (a fault or a code write pending); the closing
/// branch is called statically (`x86_cpu::kinds`). Anything else, and every
/// `FULL` op, goes through the `user` functions themselves.
#[inline(always)]
fn run_ops(
    cpu: &mut Cpu,
    mem: &mut Memory,
    stop_at: u64,
    ops: &[cache::TOp],
    mut i: usize,
) -> (Ran, usize) {
    if cpu.flags.tf() || mem.fault_pending() {
        return run_ops_slow(cpu, mem, stop_at, ops, i);
    }
    let n = ops.len();
    'ops: loop {
        let room = stop_at.saturating_sub(cpu.clock);
        if room == 0 {
            return (Ran::Exit(Box::new(Exit::Slice)), i);
        }
        let hot = ops[i].hot as usize;
        if hot != 0 {
            let end = i + hot.min(room.min(cache::MAX_OPS as u64) as usize);
            loop {
                let t = &ops[i];
                // `user::step` clears the interrupt shadow before every
                // instruction; so does this.
                cpu.shadow = false;
                if t.run == cache::LIGHT {
                    let regs = cpu.regs;
                    let flags = cpu.flags;
                    let r = (t.op.handler)(cpu, mem, &t.op);
                    if !matches!(r, Ok(Flow::Next)) || mem.attention() {
                        match off_stretch(cpu, mem, t, Some((regs, flags)), r, i) {
                            Some(leave) => return leave,
                            None => continue 'ops,
                        }
                    }
                } else {
                    // NO_UNDO: no memory access, so no fault or code write.
                    let r = (t.op.handler)(cpu, mem, &t.op);
                    if !matches!(r, Ok(Flow::Next)) {
                        match off_stretch(cpu, mem, t, None, r, i) {
                            Some(leave) => return leave,
                            None => continue 'ops,
                        }
                    }
                }
                // EIP was on this op, so `next` is `next_ip` (flat code
                // does not wrap inside a block).
                cpu.eip = t.next;
                cpu.clock += 1;
                i += 1;
                if i < end {
                    continue;
                }
                if i == n {
                    return (Ran::Fall, n - 1);
                }
                continue 'ops;
            }
        }
        let t = &ops[i];
        cpu.shadow = false;
        if t.run == cache::BRANCH {
            // A no-undo closing branch, called statically.
            let r = kinds::call_branch(t.kind, cpu, mem, &t.op);
            match r {
                Ok(Flow::Next) => {
                    cpu.eip = t.next;
                    cpu.clock += 1;
                    i += 1;
                    if i == n {
                        return (Ran::Fall, n - 1);
                    }
                    continue 'ops;
                }
                Ok(Flow::Jump) => {
                    cpu.clock += 1;
                    if cpu.eip != t.ip {
                        return (Ran::Jumped, i);
                    }
                    continue 'ops;
                }
                r => {
                    let out = user::no_undo_rest(cpu, mem, &t.op, false, t.ip, r);
                    return (settled(out), i);
                }
            }
        }
        let out = user::run_op(cpu, mem, &t.op);
        if !matches!(out, UserOutcome::Ok) {
            return (settled(out), i);
        }
        if mem.has_code_writes() {
            return (Ran::Resume, i);
        }
        let fell = cpu.eip == t.next;
        if !flat(cpu) {
            return (Ran::Unflat(if fell { 0 } else { 1 }), i);
        }
        if cpu.flags.tf() || mem.fault_pending() {
            // Not the fast loop's conditions any more: the caller goes on
            // from the next op (as after a store into code).
            return (Ran::Resume, i);
        }
        if fell {
            i += 1;
            if i == n {
                return (Ran::Fall, n - 1);
            }
        } else if cpu.eip != t.ip {
            return (Ran::Jumped, i);
        }
    }
}

/// An op of a stretch that did not simply retire and move on (`snap`: the
/// small snapshot of a `LIGHT` op, none for `NO_UNDO`): `None` when it
/// retired in place (a REP element, a jump to itself) and the block goes on
/// at the same op.
#[inline(always)]
fn off_stretch(
    cpu: &mut Cpu,
    mem: &mut Memory,
    t: &cache::TOp,
    snap: Option<([u32; 8], LazyFlags)>,
    r: Result<Flow, x86_cpu::Exception>,
    i: usize,
) -> Option<(Ran, usize)> {
    match r {
        Ok(f @ (Flow::Next | Flow::Jump | Flow::Repeat)) if !mem.fault_pending() => {
            if f == Flow::Next {
                cpu.eip = t.next;
            }
            cpu.clock += 1;
            if mem.has_code_writes() {
                return Some((Ran::Resume, i));
            }
            if cpu.eip != t.ip {
                // Only Next keeps EIP inside a block.
                return Some((Ran::Jumped, i));
            }
            // A REP element with more to go (or a jump to itself): the same
            // op again, if the budget has room.
            None
        }
        r => {
            let out = match snap {
                Some((regs, flags)) => {
                    user::light_rest(cpu, mem, &t.op, false, t.ip, regs, flags, r)
                }
                None => user::no_undo_rest(cpu, mem, &t.op, false, t.ip, r),
            };
            Some((settled(out), i))
        }
    }
}

/// A dispatch that did not simply retire: an event or a stop for the run
/// loop's caller (a retirement, e.g. one the trap did not follow, goes on
/// from the next op).
#[cold]
fn settled(out: UserOutcome) -> Ran {
    match out {
        UserOutcome::Ok => Ran::Resume,
        UserOutcome::Exception(ev) => Ran::Exit(Box::new(Exit::Exception(ev))),
        UserOutcome::Stop(r) => Ran::Exit(Box::new(Exit::Stop(r))),
    }
}

/// [`run_ops`] when TF is set or a bus fault is pending: every op through
/// the `user` functions, which check both.
#[inline(never)]
fn run_ops_slow(
    cpu: &mut Cpu,
    mem: &mut Memory,
    stop_at: u64,
    ops: &[cache::TOp],
    mut i: usize,
) -> (Ran, usize) {
    let n = ops.len();
    loop {
        if cpu.clock >= stop_at {
            return (Ran::Exit(Box::new(Exit::Slice)), i);
        }
        let t = &ops[i];
        cpu.shadow = false;
        let out = match t.run {
            cache::NO_UNDO | cache::BRANCH => user::run_op_no_undo(cpu, mem, &t.op),
            cache::LIGHT => user::run_op_light(cpu, mem, &t.op),
            _ => user::run_op(cpu, mem, &t.op),
        };
        if !matches!(out, UserOutcome::Ok) {
            return (settled(out), i);
        }
        if mem.has_code_writes() {
            return (Ran::Resume, i);
        }
        if cpu.eip == t.next {
            if !flat(cpu) {
                return (Ran::Unflat(0), i);
            }
            i += 1;
            if i == n {
                return (Ran::Fall, i - 1);
            }
        } else if cpu.eip != t.ip {
            if !flat(cpu) {
                return (Ran::Unflat(1), i);
            }
            return (Ran::Jumped, i);
        }
    }
}
