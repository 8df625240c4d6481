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
use x86_cpu::decode::Mode;
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
        loop {
            // The ops leave the block while they run, so a retirement (which
            // empties a block's ops) can run beside them; they go back unless
            // the block was retired.
            let ops = std::mem::take(&mut self.cache.blocks[b as usize].ops);
            let clock0 = cpu.clock;
            let r = self.run_ops(cpu, mem, stop_at, b, &ops);
            self.counters.block_dispatches += cpu.clock - clock0;
            let blk = &mut self.cache.blocks[b as usize];
            if blk.valid {
                blk.ops = ops;
            }
            if let Leave::Linked(from, slot) = r {
                if cpu.clock < stop_at && flat(cpu) {
                    if let Some(next) = self.cache.follow(from, slot as usize, cpu.eip) {
                        b = next;
                        continue;
                    }
                }
            }
            return r;
        }
    }

    #[inline(always)]
    fn run_ops(
        &mut self,
        cpu: &mut Cpu,
        mem: &mut Memory,
        stop_at: u64,
        b: u32,
        ops: &[cache::TOp],
    ) -> Leave {
        let mut i = 0;
        loop {
            if cpu.clock >= stop_at {
                return Leave::Exit(Box::new(Exit::Slice));
            }
            let t = &ops[i];
            // `user::step` clears the interrupt shadow before every
            // instruction; so does this.
            cpu.shadow = false;
            let out = if t.no_undo {
                user::run_op_no_undo(cpu, mem, &t.op)
            } else {
                user::run_op(cpu, mem, &t.op)
            };
            match out {
                UserOutcome::Ok => {}
                UserOutcome::Exception(ev) => return Leave::Exit(Box::new(Exit::Exception(ev))),
                UserOutcome::Stop(r) => return Leave::Exit(Box::new(Exit::Stop(r))),
            }
            if mem.has_code_writes() {
                self.cache.retire_writes(mem);
                if !self.cache.blocks[b as usize].valid {
                    // The next instruction is fetched from the new bytes.
                    return Leave::Fresh;
                }
            }
            if cpu.eip == t.next {
                i += 1;
                if i == ops.len() {
                    return Leave::Linked(b, 0);
                }
            } else if cpu.eip != t.ip {
                return Leave::Linked(b, 1);
            }
            // EIP == ip: a REP element with more to go (or a jump to
            // itself): the same op again.
        }
    }
}
