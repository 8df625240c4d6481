//! The L1 side of the µop-only arms: what runs on L1's machinery when a µop
//! program cannot.
//!
//! Owns the L1 blocks the arm keeps and how they run: single-instruction
//! blocks (an instruction the op set cannot express, a refused access, a
//! budget tail), spin blocks (an L1 block whose last op branches back to its
//! own head with a spin shape L1 folds: these stay L1 blocks and are folded
//! exactly as L1's dispatch loop folds them; a memory spin that keeps
//! looping without a fold hands control back at its head, for the driver to
//! build as a µop program), and the uncached path (fetch
//! and decode every time) for bytes that cannot be cached and for
//! single-step mode. Blocks are compiled by `l1::block::compile` (the CPU
//! decoder's `Op`s, L1's class bits and spin shapes) and every op runs
//! through `exec::run_op`, the per-dispatch contract L1 and L0 share, on
//! L1's store monitor (`Tracked`), so stores into code are seen byte by
//! byte. After each instruction it reports `Attention` exactly where L1
//! does (port I/O the bus flags, IF set from 0, a shadow opened).
//!
//! It must not implement instruction semantics, and it must not run past the
//! instruction (or, for a spin block, past the block) it was asked to run:
//! control comes back to the driver at the next head.

use crate::bus::EngineBus;
use crate::cpu::l0::{self, StepOutcome};
use crate::cpu::{exec, seg, Cpu};
use crate::l1::block::{self, Spin, TOp};
use crate::l1::classify::{IFCHG, IO, REP, SHADOW};
use crate::l1::kinds::{self, Kinds};
use crate::l1::smc::{Smc, CODE_LIMIT};
use crate::l1::spin::{self, HeadState};
use crate::l1::tracked::Tracked;
use crate::l1::EngineExit;
use crate::machine::Machine;

/// Physical chunk of the block index (bytes = 1 << shift).
const CHUNK_SHIFT: u32 = 8;

/// An L1 block the arm keeps.
pub struct FBlock {
    pub key: u64,
    pub cs_base: u32,
    pub ops: Vec<TOp<Machine>>,
    /// Physical bytes it was decoded from, and those bytes.
    pub ranges: Vec<(u32, u32)>,
    pub src: Vec<u8>,
    pub spin: Spin,
    /// The driver's epoch when its bytes were last known to match memory.
    pub epoch: u32,
    /// Guest clock when it was compiled.
    pub born: u64,
    /// Interned instruction form (first op), for the fallback counters.
    pub form: u32,
    /// Entries through the driver (the `uop` arm's heat of a cold block).
    pub entries: u32,
    /// Spin blocks: back edges taken and folds made, over every entry (a
    /// `Mem` block that loops without ever folding is a compute loop, not a
    /// wait: the driver builds it as a µop program, `SPIN_DEMOTE`).
    pub loops: u64,
    pub folds: u64,
}

impl FBlock {
    /// A memory spin block that has never folded: the only kind the driver
    /// counts back edges of and may build as a µop program (`SPIN_DEMOTE`).
    pub fn unfolded_mem_spin(&self) -> bool {
        self.spin == Spin::Mem && self.folds == 0
    }
}

/// What a spin block did, for the counters.
#[derive(Clone, Copy, Debug, Default)]
pub struct SpinStats {
    pub folds: u64,
    pub dispatches: u64,
    /// Back edges taken (passes that ended at the block's own head).
    pub loops: u64,
}

/// The arm's L1 blocks.
pub struct L1Side {
    blocks: Vec<Option<FBlock>>,
    free: Vec<u32>,
    /// Per physical chunk: the blocks with a byte in it.
    chunks: Vec<Vec<u32>>,
    /// Volatility counters (`Smc::count_hit` / `is_volatile`); its block
    /// lists are unused.
    pub smc: Smc,
    kinds: Kinds,
}

impl Default for L1Side {
    fn default() -> Self {
        L1Side::new()
    }
}

impl L1Side {
    pub fn new() -> L1Side {
        L1Side {
            blocks: Vec::new(),
            free: Vec::new(),
            chunks: vec![Vec::new(); (CODE_LIMIT >> CHUNK_SHIFT) as usize],
            smc: Smc::new(),
            kinds: kinds::table::<Machine>(),
        }
    }

    pub fn get(&self, id: u32) -> Option<&FBlock> {
        self.blocks.get(id as usize).and_then(|b| b.as_ref())
    }

    pub fn get_mut(&mut self, id: u32) -> Option<&mut FBlock> {
        self.blocks.get_mut(id as usize).and_then(|b| b.as_mut())
    }

    /// Live blocks.
    pub fn live(&self) -> usize {
        self.blocks.len() - self.free.len()
    }

    /// Compiles an L1 block of at most `max_ops` instructions at
    /// `cs_base:ip` on the store-monitored bus. `None` when its first
    /// instruction cannot be cached (device window, volatile byte).
    pub fn compile(
        &mut self,
        tb: &mut Tracked<Machine>,
        cs_base: u32,
        ip: u32,
        max_ops: usize,
    ) -> Option<block::Compiled<Machine>> {
        block::compile(tb, &self.smc, &self.kinds, cs_base, ip, max_ops)
    }

    /// Keeps a compiled block; returns its id. The caller accounts its bytes.
    pub fn insert(&mut self, b: FBlock) -> u32 {
        let ranges = b.ranges.clone();
        let id = match self.free.pop() {
            Some(id) => {
                self.blocks[id as usize] = Some(b);
                id
            }
            None => {
                self.blocks.push(Some(b));
                (self.blocks.len() - 1) as u32
            }
        };
        for &(s, e) in &ranges {
            for c in (s >> CHUNK_SHIFT)..=((e.max(s + 1) - 1) >> CHUNK_SHIFT) {
                if let Some(v) = self.chunks.get_mut(c as usize) {
                    if v.last() != Some(&id) {
                        v.push(id);
                    }
                }
            }
        }
        id
    }

    /// Drops block `id`; returns it (the caller releases its bytes).
    pub fn remove(&mut self, id: u32) -> Option<FBlock> {
        let b = self.blocks.get_mut(id as usize)?.take()?;
        for &(s, e) in &b.ranges {
            for c in (s >> CHUNK_SHIFT)..=((e.max(s + 1) - 1) >> CHUNK_SHIFT) {
                if let Some(v) = self.chunks.get_mut(c as usize) {
                    v.retain(|&x| x != id);
                }
            }
        }
        self.free.push(id);
        Some(b)
    }

    /// Blocks with a byte in physical `[lo, hi)`.
    pub fn overlapping(&self, lo: u32, hi: u32) -> Vec<u32> {
        let mut out: Vec<u32> = Vec::new();
        if hi <= lo {
            return out;
        }
        for c in (lo >> CHUNK_SHIFT)..=((hi - 1) >> CHUNK_SHIFT) {
            let Some(v) = self.chunks.get(c as usize) else {
                continue;
            };
            for &id in v {
                let hit = self
                    .get(id)
                    .is_some_and(|b| b.ranges.iter().any(|&(s, e)| s < hi && lo < e));
                if hit && !out.contains(&id) {
                    out.push(id);
                }
            }
        }
        out.sort_unstable();
        out
    }

    /// Ids of every live block (ascending).
    pub fn ids(&self) -> Vec<u32> {
        (0..self.blocks.len() as u32)
            .filter(|&i| self.blocks[i as usize].is_some())
            .collect()
    }

    /// Drops every block (volatility counters too).
    pub fn clear(&mut self) {
        self.blocks.clear();
        self.free.clear();
        for v in &mut self.chunks {
            v.clear();
        }
        self.smc.clear();
    }
}

/// The attention rule L1 applies after an instruction it ran: port I/O the
/// bus flags (only for I/O ops when `class` is given), a shadow opened, IF
/// set from 0.
fn attention_after(
    cpu: &Cpu,
    tb: &mut Tracked<Machine>,
    class: Option<u16>,
    if_before: bool,
) -> bool {
    match class {
        Some(c) => {
            (c & IO != 0 && tb.take_io_attention())
                || (c & SHADOW != 0 && cpu.shadow)
                || (c & IFCHG != 0 && !if_before && cpu.flags.if_())
        }
        None => tb.take_io_attention() || cpu.shadow || (!if_before && cpu.flags.if_()),
    }
}

/// Runs exactly one instruction through the uncached path (`l0::step`, as
/// L1 does in single-step mode and for bytes it cannot cache). Stores into
/// code are left in `tb.hits` for the caller. `Some` when the session must
/// take over.
pub fn uncached(cpu: &mut Cpu, tb: &mut Tracked<Machine>) -> Option<EngineExit> {
    let if_before = cpu.flags.if_();
    match l0::step(cpu, tb) {
        StepOutcome::Ok => {
            attention_after(cpu, tb, None, if_before).then_some(EngineExit::Attention)
        }
        StepOutcome::Halt => Some(EngineExit::Halt),
        StepOutcome::HostCall(n) => Some(EngineExit::HostCall(n)),
        StepOutcome::Stop(r) => Some(EngineExit::Stop(r)),
    }
}

/// Runs the one instruction of block `b` (the CPU at its head): a REP
/// string instruction runs element by element until it retires, a store
/// into code (the caller retires, then looks up the REP again), attention,
/// or `stop_at`. Stores into code are left in `tb.hits`.
pub fn run_one(
    b: &FBlock,
    cpu: &mut Cpu,
    tb: &mut Tracked<Machine>,
    stop_at: u64,
) -> Option<EngineExit> {
    let t = &b.ops[0];
    let if_before = cpu.flags.if_();
    let (ip0, cs0) = (cpu.eip, cpu.sbase[seg::CS]);
    loop {
        match exec::run_op(cpu, tb, &t.op) {
            StepOutcome::Ok => {}
            StepOutcome::Halt => return Some(EngineExit::Halt),
            StepOutcome::HostCall(n) => return Some(EngineExit::HostCall(n)),
            StepOutcome::Stop(r) => return Some(EngineExit::Stop(r)),
        }
        let again = t.class & REP != 0 && cpu.eip == ip0 && cpu.sbase[seg::CS] == cs0;
        if !again || !tb.hits.is_empty() {
            break;
        }
        if t.class & IO != 0 && tb.take_io_attention() {
            return Some(EngineExit::Attention);
        }
        if cpu.clock >= stop_at {
            return Some(EngineExit::Reached);
        }
    }
    attention_after(cpu, tb, Some(t.class), if_before).then_some(EngineExit::Attention)
}

/// Runs spin block `b` (id `id`, the CPU at its head) exactly as L1's
/// dispatch loop runs a spin block: iterations op by op, and at each entry
/// through its own back edge the fold L1 makes (`Mem`: whole identical
/// iterations that fit before `stop_at`; `Port`: iterations whose read the
/// bus promises; `Count`: `LOOP $` at every entry). Returns when control
/// leaves the block (`None`), at `stop_at` or when the session must look
/// (`Some`). Stores into code are left in `tb.hits` (the block returns
/// `None` at once). It also returns `None`, at its own head, once it has
/// taken `leave_after` back edges in this entry without a fold (the caller
/// passes a finite bound only for [`FBlock::unfolded_mem_spin`] blocks; the
/// driver then builds the loop as a µop program: its state never repeats,
/// so L1 would never fold it either).
pub fn run_spin(
    id: u32,
    b: &FBlock,
    cpu: &mut Cpu,
    tb: &mut Tracked<Machine>,
    stop_at: u64,
    leave_after: u64,
    stats: &mut SpinStats,
) -> Option<EngineExit> {
    let n = b.ops.len();
    let mut head: Option<HeadState> = None;
    let mut spin_t: Option<u64> = None;
    let mut back = false;
    loop {
        if cpu.clock >= stop_at {
            return Some(EngineExit::Reached);
        }
        // Block entry: the folds, as `L1::dispatch` makes them.
        if b.spin == Spin::Count {
            let k = spin::fold_count_loop(b.ops[0].op.ea.a32, cpu, stop_at);
            if k > 0 {
                cpu.clock += k;
                stats.folds += 1;
                stats.dispatches += k;
                if cpu.clock >= stop_at {
                    return Some(EngineExit::Reached);
                }
            }
        } else if b.spin != Spin::None {
            if back {
                let k = n as u64;
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
                    stats.folds += 1;
                    stats.dispatches += skip * k;
                    if cpu.clock >= stop_at {
                        return Some(EngineExit::Reached);
                    }
                } else if stats.folds == 0 && stats.loops >= leave_after {
                    return None;
                }
            }
            head = Some(HeadState::take(id, cpu, tb.stores));
            spin_t = None;
        }
        match one_pass(b, cpu, tb, stop_at, &mut spin_t) {
            PassEnd::Exit(x) => return Some(x),
            PassEnd::Left => return None,
            PassEnd::Looped => {
                back = true;
                stats.loops += 1;
            }
        }
    }
}

/// How one pass over a block ended.
enum PassEnd {
    /// The session must take over (stop, HLT, host call, budget, attention).
    Exit(EngineExit),
    /// Control left the block (or a store hit code: the caller retires).
    Left,
    /// The last op branched back to the block's own head.
    Looped,
}

/// Runs block `b` once, op by op, from its head: the exact per-dispatch
/// checks L1's dispatch loop makes (budget before each op, attention after
/// port I/O, an opened shadow or IF set from 0). For a `Spin::Port` block,
/// `spin_t` receives the bus's promise for the spin read.
fn one_pass(
    b: &FBlock,
    cpu: &mut Cpu,
    tb: &mut Tracked<Machine>,
    stop_at: u64,
    spin_t: &mut Option<u64>,
) -> PassEnd {
    let n = b.ops.len();
    let head_ip = b.ops[0].ip;
    let cs = b.cs_base;
    for (i, t) in b.ops.iter().enumerate() {
        if cpu.clock >= stop_at {
            return PassEnd::Exit(EngineExit::Reached);
        }
        let if_before = cpu.flags.if_();
        match exec::run_op(cpu, tb, &t.op) {
            StepOutcome::Ok => {}
            StepOutcome::Halt => return PassEnd::Exit(EngineExit::Halt),
            StepOutcome::HostCall(x) => return PassEnd::Exit(EngineExit::HostCall(x)),
            StepOutcome::Stop(r) => return PassEnd::Exit(EngineExit::Stop(r)),
        }
        if !tb.hits.is_empty() {
            return PassEnd::Left;
        }
        if t.class & IO != 0 {
            let attention = tb.take_io_attention();
            let promised = spin::port_read_promised(b.spin, i, t, cpu, tb, spin_t);
            if attention && !promised {
                return PassEnd::Exit(EngineExit::Attention);
            }
        }
        if (t.class & SHADOW != 0 && cpu.shadow)
            || (t.class & IFCHG != 0 && !if_before && cpu.flags.if_())
        {
            return PassEnd::Exit(EngineExit::Attention);
        }
        let fell = cpu.eip == t.next_ip && cpu.sbase[seg::CS] == cs;
        if !fell {
            let looped = i + 1 == n && cpu.eip == head_ip && cpu.sbase[seg::CS] == cs;
            return if looped {
                PassEnd::Looped
            } else {
                PassEnd::Left
            };
        }
    }
    // Fell off the end (a block cut at its op cap): control left.
    PassEnd::Left
}

/// Runs one pass over cold block `b` (the CPU at its head), the `uop` arm's
/// L1 tier: returns when control leaves the block or comes back to its head
/// (`None`: the driver looks up the next site, and counts the entry), at
/// `stop_at` or when the session must look (`Some`). No folds: a cold block
/// is never a spin block. Stores into code are left in `tb.hits`.
pub fn run_pass(
    b: &FBlock,
    cpu: &mut Cpu,
    tb: &mut Tracked<Machine>,
    stop_at: u64,
) -> Option<EngineExit> {
    match one_pass(b, cpu, tb, stop_at, &mut None) {
        PassEnd::Exit(x) => Some(x),
        PassEnd::Left | PassEnd::Looped => None,
    }
}
