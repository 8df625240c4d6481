//! L1: the threaded tier. Guest code is decoded once into blocks of the CPU
//! decoder's `Op`s and run by one dispatch loop, exactly as L0 would run it.
//!
//! Owns the block cache (keyed by CS base and IP), the links and the
//! direct-mapped cache that find the next block, self-modifying-code
//! retirement (with `smc`), spin folds (with `spin`), the counters, and the
//! engine API glue ([`engine`]). Instruction semantics are the CPU's handlers,
//! called through the same `Op`s L0 builds; L1 must not implement any
//! instruction itself, and must never let the guest observe that it exists:
//! dispatch counts, state, port reads and interrupts land exactly as under L0
//! (docs/l1.md gives the argument; `toyvm/tests/l1_*.rs` check it).
//!
//! Submodules: `block` (compiling), `classify` (per-instruction facts),
//! `kinds` (direct calls by handler identity, fused closing branches), `run`
//! (the dispatch loop), `smc` (code bits, volatility), `spin` (folds),
//! `tracked` (the store monitor), `engine` (the engine API and L0), `dos`
//! (L1 as the DOS session's engine), `conformance` (L1 under the
//! SingleStepTests runner), `flat` (a flat test bus), `harness` (a small
//! session over the flat bus).

pub mod block;
pub mod classify;
pub mod conformance;
pub mod dos;
pub mod engine;
pub mod flat;
pub mod harness;
pub mod kinds;
pub mod pm;
mod run;
pub mod smc;
pub mod spin;
pub mod tracked;

pub use engine::{Engine, EngineExit, L0};
pub use flat::FlatBus;

use crate::bus::EngineBus;
use crate::cpu::{self, Cpu};
use block::{Block, Compiled, NONE};
use smc::{CodeBits, Smc};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use tracked::Tracked;

/// Deterministic, performance-only figures (they never feed back into guest
/// time). Every field is a pure function of the guest run and the sequence of
/// `stop_at` values the session passed.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Counters {
    /// Guest dispatches retired inside `run` (clock advanced by L1).
    pub dispatches: u64,
    /// Threaded ops executed (cached Ops dispatched by the loop; a REP
    /// element is one).
    pub threaded_ops: u64,
    /// Instructions run through the uncached path (fetch and decode each
    /// time): volatile code, device windows, single-step mode, shadow steps.
    /// The five `uncached_*` counters below split it by reason.
    pub uncached_steps: u64,
    /// ... because a byte of the instruction is volatile (`smc`).
    pub uncached_volatile: u64,
    /// ... because its fetch window cannot be cached (a device window
    /// without the `code_device` promise, the end of the address space).
    pub uncached_window: u64,
    /// ... because TF is set (single-step mode runs `l0::step`).
    pub uncached_single_step: u64,
    /// ... because the run was entered inside an interrupt shadow (exactly
    /// one instruction, then the session looks) and the instruction could
    /// not come from the block cache (TF set, or nothing to cache there).
    pub uncached_shadow: u64,
    /// ... because protected-mode or V86 code cannot come from a `pm`
    /// block there (its fetch window leaves the page or wraps, passes the
    /// CS limit, or the fetch faults), or real-mode code runs 32-bit.
    pub uncached_protected: u64,
    /// Protected-mode and V86 blocks compiled (`pm`; in `blocks_compiled`
    /// too), the dispatches run from them, and the entries that translated
    /// a block's page again (the translation cache had been dropped).
    pub pm_blocks: u64,
    pub pm_dispatches: u64,
    pub pm_retranslated: u64,
    /// Runs entered inside an interrupt shadow (one instruction each,
    /// cached or not).
    pub shadow_steps: u64,
    /// Dispatches of ops fetched from a device window (the VGA memory): they
    /// run cached, with the fetch's effect replayed before each.
    pub device_dispatches: u64,
    /// Blocks compiled from a device window, and retired because a store or
    /// port write may have changed what that window reads.
    pub device_blocks: u64,
    pub device_retired: u64,
    /// Dispatches skipped by spin folds (counted in `dispatches` too).
    pub spin_dispatches: u64,
    /// Spin folds taken.
    pub spin_folds: u64,
    /// Blocks compiled, and the instructions in them.
    pub blocks_compiled: u64,
    pub instructions_compiled: u64,
    /// Guest stores into code bytes.
    pub smc_stores: u64,
    /// Blocks retired because the guest stored into them.
    pub smc_retired: u64,
    /// Blocks retired because the host wrote into them (logged writes).
    pub host_retired: u64,
    /// Blocks compared with memory after host code ran, and those found
    /// changed (unlogged host writes: program loads, XMS, EMS).
    pub verified: u64,
    pub stale_retired: u64,
    /// Whole-cache flushes.
    pub flushes: u64,
    /// Moves of the A20 gate seen between runs, and blocks compiled whose
    /// fetched addresses have bit 20 set (`Block::a20`: kept per gate
    /// state).
    #[serde(default)]
    pub a20_moves: u64,
    #[serde(default)]
    pub a20_blocks: u64,
    /// Host calls after which memory may have changed past the code-write
    /// log (the epoch moved: blocks are verified before they run again).
    pub host_epochs: u64,
    /// Times another engine sharing the machine ran guest code this one's
    /// store monitor did not see (`L1::memory_changed_elsewhere`: the µop
    /// arms hand protected-mode code to L1): the epoch moved.
    #[serde(default)]
    pub foreign_epochs: u64,
    /// Block transitions found through a link, the direct-mapped cache, the
    /// map, or by compiling.
    pub link_hits: u64,
    pub dm_hits: u64,
    pub map_hits: u64,
    /// Calls of `run`, and how they ended.
    pub runs: u64,
    pub exits_reached: u64,
    pub exits_attention: u64,
    pub exits_other: u64,
}

impl Counters {
    /// Threaded-op dispatches per guest dispatch.
    pub fn ops_per_dispatch(&self) -> f64 {
        if self.dispatches == 0 {
            0.0
        } else {
            self.threaded_ops as f64 / self.dispatches as f64
        }
    }
}

/// Tunables (the defaults are what the measurements in docs/l1.md used).
#[derive(Clone, Debug)]
pub struct Config {
    /// Most instructions per block.
    pub max_ops: usize,
    /// Fold spin loops.
    pub spin: bool,
    /// Follow links between blocks (off: every transition looks up).
    pub links: bool,
    /// Guest stores into a code byte before it is volatile (0: never).
    pub volatile_hits: u8,
    /// Live blocks above which the cache is flushed.
    pub max_live: usize,
    /// Call the hottest handlers directly (`kinds`) instead of through the
    /// Op's pointer.
    pub direct_calls: bool,
    /// Run a block's closing Jcc/JMP/LOOP fused with the op before it (one
    /// threaded dispatch for the pair).
    pub fuse: bool,
    /// Compile code fetched from device windows the bus vouches for
    /// (`EngineBus::code_device`, the VGA memory) instead of running it
    /// uncached.
    pub device_code: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_ops: block::MAX_OPS,
            spin: true,
            links: true,
            volatile_hits: smc::VOLATILE_HITS,
            max_live: smc::MAX_LIVE_BLOCKS,
            direct_calls: true,
            fuse: true,
            device_code: true,
        }
    }
}

/// A multiplicative hasher for the block map (deterministic, fast; the map is
/// only ever looked up, never iterated).
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (v ^ (v >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

const DM_BITS: u32 = 12;

#[inline(always)]
pub(crate) fn dm_index(key: u64) -> usize {
    ((key ^ (key >> 28)).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - DM_BITS)) as usize
}

/// The L1 engine over a bus `B`.
pub struct L1<B> {
    pub(crate) blocks: Vec<Block<B>>,
    free: Vec<u32>,
    live: usize,
    map: HashMap<u64, u32, BuildHasherDefault<KeyHasher>>,
    /// Direct-mapped cache (key, block) for indirect transfers.
    pub(crate) dm: Vec<(u64, u32)>,
    pub(crate) smc: Smc,
    /// The code bits (moved into the store monitor during a run).
    code: CodeBits,
    scratch: Vec<u32>,
    pub counters: Counters,
    pub config: Config,
    kinds: kinds::Kinds,
    /// Bumped whenever host code may have written guest memory without the
    /// bus logging it (after every HostCall exit); a block from an older
    /// epoch is compared with memory before it runs again.
    pub(crate) epoch: u32,
    /// `phys(1 MiB)` at the last run: the A20 gate's state.
    a20_seen: u32,
    /// The `Block::a20` tag of the gate's present state, and of the other
    /// one (blocks tagged so are not entered).
    pub(crate) a20_now: u8,
    pub(crate) a20_bad: u8,
    /// Real-mode blocks that depend on the gate, by (key, tag) (`map` holds
    /// the others).
    map_a20: HashMap<(u64, u8), u32>,
    /// Live blocks compiled from a device window.
    device_live: Vec<u32>,
    /// Set at a `HostCall` exit: the bus's unlogged-write generation then.
    host_gen: Option<Option<u64>>,
    /// Protected-mode and V86 blocks (`pm`; their ids carry `pm::PM_ID` in
    /// the SMC index).
    pub(crate) pm: pm::PmCache<B>,
}

impl<B: EngineBus> Default for L1<B> {
    fn default() -> Self {
        L1::new()
    }
}

impl<B: EngineBus> L1<B> {
    pub fn new() -> L1<B> {
        L1::with_config(Config::default())
    }

    pub fn with_config(config: Config) -> L1<B> {
        let mut smc = Smc::with_limit(smc::PHYS_LIMIT);
        smc.volatile_hits = config.volatile_hits;
        L1 {
            blocks: Vec::new(),
            free: Vec::new(),
            live: 0,
            map: HashMap::default(),
            dm: vec![(u64::MAX, NONE); 1 << DM_BITS],
            smc,
            code: CodeBits::with_limit(smc::PHYS_LIMIT),
            scratch: Vec::new(),
            counters: Counters::default(),
            epoch: 1,
            a20_seen: u32::MAX,
            // Set by the first run, before any block exists.
            a20_now: block::A20_ANY,
            a20_bad: u8::MAX,
            map_a20: HashMap::new(),
            device_live: Vec::new(),
            host_gen: None,
            pm: pm::PmCache::default(),
            kinds: if config.direct_calls {
                kinds::table::<B>()
            } else {
                kinds::Kinds::none()
            },
            config,
        }
    }

    /// Which live block covers `cs_base:ip` (for divergence reports): the
    /// block starting there, else one that contains it.
    pub fn describe(&self, cs_base: u32, ip: u32) -> String {
        let seg = cs_base >> 4;
        let at = |b: &Block<B>, i: usize| {
            format!(
                "l1 block {:04X}:{:04X} op {}/{} ({} instrs, compiled at dispatch {}, spin {:?})",
                b.cs_base >> 4,
                b.key as u32,
                i + 1,
                b.ops.len(),
                b.ops.len(),
                b.born,
                b.spin
            )
        };
        if let Some(&id) = self.map.get(&block::key(cs_base, ip)) {
            return at(&self.blocks[id as usize], 0);
        }
        for b in self
            .blocks
            .iter()
            .filter(|b| b.valid && b.cs_base == cs_base)
        {
            if let Some(i) = b.ops.iter().position(|t| t.ip == ip) {
                return at(b, i);
            }
        }
        format!("l1: no compiled block covers {seg:04X}:{ip:04X} (uncached or not yet compiled)")
    }

    /// Number of live blocks.
    pub fn live_blocks(&self) -> usize {
        self.live
    }

    /// Whether any block (real-mode or protected-mode) is live, so code
    /// marks on the bus may be L1's.
    pub fn holds_code(&self) -> bool {
        self.live + self.pm.live > 0
    }

    /// Drops every block (the bus's marks too). Counted as a flush.
    pub fn flush(&mut self, bus: &mut B) {
        self.flush_inner();
        bus.clear_code_marks();
    }

    fn flush_inner(&mut self) {
        self.blocks.clear();
        self.free.clear();
        self.map.clear();
        self.live = 0;
        self.dm.iter_mut().for_each(|e| *e = (u64::MAX, NONE));
        self.smc.clear();
        self.code.clear_all();
        self.device_live.clear();
        self.map_a20.clear();
        self.pm.clear();
        self.counters.flushes += 1;
    }

    /// Runs guest code until `cpu.clock == stop_at` or the session is needed.
    /// See [`Engine`] for the contract.
    pub fn run(&mut self, cpu: &mut Cpu, bus: &mut B, stop_at: u64) -> EngineExit {
        self.run_with_log(cpu, bus, stop_at, false)
    }

    /// `run`, but with the bus's code-write log kept on for the guest's
    /// stores and left for the caller: for a short run inside another
    /// engine that shares the bus (the µop arms' slices of device-window
    /// code), which then sees every store L1 made into its own code from
    /// the log (L1 retires its own blocks from its store monitor as
    /// always). Not for long runs: every store into a marked page is one
    /// entry in the log.
    pub fn run_logged(&mut self, cpu: &mut Cpu, bus: &mut B, stop_at: u64) -> EngineExit {
        self.run_with_log(cpu, bus, stop_at, true)
    }

    fn run_with_log(
        &mut self,
        cpu: &mut Cpu,
        bus: &mut B,
        stop_at: u64,
        keep_log: bool,
    ) -> EngineExit {
        self.counters.runs += 1;
        let a20 = bus.phys(0x10_0000);
        if a20 != self.a20_seen {
            // The A20 gate moved (it moves only between runs: a port write
            // that may move it returns to the session, host code runs
            // between runs). CPU addresses with bit 20 set name other bytes
            // now: the blocks fetched from such addresses are set aside
            // (their tag is the other state's) until the gate moves back;
            // every other block reads the same bytes as before. Set aside,
            // they keep their code bits, so stores into their bytes still
            // retire them.
            if self.a20_seen != u32::MAX {
                self.counters.a20_moves += 1;
            }
            self.a20_seen = a20;
            let on = a20 & block::A20_BIT != 0;
            self.a20_now = if on { block::A20_ON } else { block::A20_OFF };
            self.a20_bad = if on { block::A20_OFF } else { block::A20_ON };
        }
        if let Some(g) = self.host_gen.take() {
            // Host code ran since the last run. What it wrote through the
            // bus is in the code-write log (absorbed below); only if it
            // wrote memory past the log (loads, XMS, EMS, DMA) may code have
            // changed unseen: then every block is compared with memory
            // before it runs again. (Moving the epoch after every host call
            // made a loop around INT 16h verify its blocks each time.)
            if g.is_none() || bus.unlogged_generation() != g {
                self.epoch = self.epoch.wrapping_add(1);
                self.counters.host_epochs += 1;
            }
            // Host code may also have changed device memory or registers
            // directly (a BIOS mode set): device code goes.
            self.retire_device_blocks();
        }
        self.absorb_host_writes(bus);
        let start = cpu.clock;
        let exit = if cpu.halted {
            EngineExit::Halt
        } else if cpu.clock >= stop_at {
            EngineExit::Reached
        } else {
            let code = std::mem::take(&mut self.code);
            // Guest stores are seen by the store monitor; the bus's log
            // would only be discarded below.
            if !keep_log {
                bus.monitor_stores(true);
            }
            let mut tb = Tracked::new(bus, code);
            tb.dev_watch = !self.device_live.is_empty();
            let exit = if cpu.shadow {
                self.single_step(cpu, &mut tb)
            } else if cpu.pmode && !cpu.flat_user {
                // Protected-mode and V86 code: its own blocks, run through
                // the paging adapter (which holds the translation cache for
                // the run).
                let tlb = std::mem::take(&mut cpu.tlb);
                let mut pb = cpu::paging::Paged::new(tb, tlb, cpu);
                let exit = self.run_pm(cpu, &mut pb, stop_at);
                let (t, tlb) = pb.into_parts();
                cpu.tlb = tlb;
                tb = t;
                exit
            } else if !run::blocks_apply(cpu) {
                self.run_uncached(cpu, &mut tb, stop_at)
            } else {
                self.dispatch(cpu, &mut tb, stop_at)
            };
            self.process_hits(&mut tb, cpu.clock);
            self.code = tb.into_code();
            if !keep_log {
                bus.monitor_stores(false);
            }
            exit
        };
        // Everything the bus logged during the run was a guest store, already
        // handled precisely by the store monitor.
        if !keep_log {
            bus.take_code_writes(&mut self.scratch);
            self.scratch.clear();
        }
        self.counters.dispatches += cpu.clock - start;
        if let EngineExit::HostCall(_) = exit {
            // The host runs a service now and may write memory any way it
            // likes (loaders, XMS moves, EMS maps): the next run looks.
            self.host_gen = Some(bus.unlogged_generation());
        }
        match exit {
            EngineExit::Reached => self.counters.exits_reached += 1,
            EngineExit::Attention => self.counters.exits_attention += 1,
            _ => self.counters.exits_other += 1,
        }
        exit
    }

    /// Retires blocks built from bytes the host wrote since the last run.
    fn absorb_host_writes(&mut self, bus: &mut B) {
        bus.take_code_writes(&mut self.scratch);
        if self.scratch.is_empty() {
            return;
        }
        let writes = std::mem::take(&mut self.scratch);
        self.absorb_writes(bus, &writes);
        self.scratch = writes;
        self.scratch.clear();
    }

    /// Retires the blocks built from the physical bytes `writes` names, as
    /// for writes taken from the bus's code-write log (`u32::MAX`: anything
    /// may have changed, everything goes). For an engine that shares the
    /// machine with L1 and drains the log itself (the µop arms), so L1 still
    /// hears of every logged write.
    pub fn absorb_writes(&mut self, bus: &mut B, writes: &[u32]) {
        if writes.contains(&u32::MAX) {
            self.flush(bus);
            return;
        }
        let mut code = std::mem::take(&mut self.code);
        for &p in writes {
            if code.test(p) {
                let (n, _) = self.retire_at(&mut code, p, 0);
                self.counters.host_retired += n;
            }
        }
        self.code = code;
    }

    /// Another engine sharing the machine ran guest code since L1's last
    /// run, and its stores were not all logged (E1's page view writes RAM
    /// directly): every block is compared with memory before it runs again,
    /// as after unlogged host writes. Device blocks too: `verify` reads
    /// their bytes with `peek8`, what a fetch would read under the device's
    /// state now, so a store into the window or a register write by the
    /// other engine that changed them is seen (retiring them all instead
    /// made Second Reality's U2 recompile its VGA-window code at every
    /// hand-over: 9.07M instructions compiled in 20M dispatches).
    pub fn memory_changed_elsewhere(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        self.counters.foreign_epochs += 1;
    }

    /// Handles the stores into code the monitor saw at dispatch `now`:
    /// retires the blocks built from those bytes, and counts a store towards
    /// the byte's volatility when a block it retired was young (compiled less
    /// than `smc::YOUNG` dispatches ago: code patched while it runs, not code
    /// reloaded after long use). Returns whether anything was retired.
    fn process_hits(&mut self, tb: &mut Tracked<B>, now: u64) -> bool {
        if tb.hits.is_empty() {
            return false;
        }
        let hits = std::mem::take(&mut tb.hits);
        let mut any = false;
        for &p in &hits {
            if p == tracked::DEVICE_HIT {
                // A store into a device window or a port write that may
                // change what device code reads: retire it all.
                any |= self.retire_device_code(&mut tb.code);
                tb.dev_watch = false;
                continue;
            }
            self.counters.smc_stores += 1;
            if tb.code.test(p) {
                let (n, youngest) = self.retire_at(&mut tb.code, p, now);
                if youngest < smc::YOUNG {
                    self.smc.count_hit(p);
                }
                self.counters.smc_retired += n;
                any |= n > 0;
            }
        }
        tb.hits = hits;
        tb.hits.clear();
        any
    }

    /// Retires every block compiled from a device window; returns whether
    /// there was one.
    fn retire_device_code(&mut self, code: &mut CodeBits) -> bool {
        let victims = std::mem::take(&mut self.device_live);
        let mut any = false;
        for id in victims {
            if self.blocks[id as usize].valid {
                self.retire(code, id);
                self.counters.device_retired += 1;
                any = true;
            }
        }
        any
    }

    /// [`L1::retire_device_code`] between runs (the code bits are home).
    fn retire_device_blocks(&mut self) {
        if !self.device_live.is_empty() {
            let mut code = std::mem::take(&mut self.code);
            self.retire_device_code(&mut code);
            self.code = code;
        }
    }

    /// Retires every live block with a byte at physical `p`; returns how
    /// many, and the age at `now` of the youngest.
    fn retire_at(&mut self, code: &mut CodeBits, p: u32, now: u64) -> (u64, u64) {
        let victims: Vec<u32> = self
            .smc
            .blocks_near(p)
            .iter()
            .copied()
            .filter(|&id| {
                let valid = if id & pm::PM_ID != 0 {
                    self.pm.blocks[(id & !pm::PM_ID) as usize].valid
                } else {
                    self.blocks[id as usize].valid
                };
                valid
                    && pm::ranges_in(&self.blocks, &self.pm.blocks, id)
                        .iter()
                        .any(|&(s, e)| s <= p && p < e)
            })
            .collect();
        let mut youngest = u64::MAX;
        for &id in &victims {
            let born = if id & pm::PM_ID != 0 {
                self.pm.blocks[(id & !pm::PM_ID) as usize].born
            } else {
                self.blocks[id as usize].born
            };
            youngest = youngest.min(now.saturating_sub(born));
            self.retire(code, id);
        }
        (victims.len() as u64, youngest)
    }

    fn retire(&mut self, code: &mut CodeBits, id: u32) {
        if id & pm::PM_ID != 0 {
            let ranges = self.pm.remove(id & !pm::PM_ID);
            let (blocks, pmb) = (&self.blocks, &self.pm.blocks);
            self.smc
                .remove(code, id, &ranges, |o| pm::ranges_in(blocks, pmb, o));
            return;
        }
        let b = &mut self.blocks[id as usize];
        b.valid = false;
        let ranges = std::mem::take(&mut b.ranges);
        let key = b.key;
        if !b.dev_ranges.is_empty() {
            b.dev_ranges = Vec::new();
            self.device_live.retain(|&x| x != id);
        }
        b.ops = Vec::new();
        b.link = [NONE, NONE];
        let tag = b.a20;
        let (blocks, pmb) = (&self.blocks, &self.pm.blocks);
        self.smc
            .remove(code, id, &ranges, |o| pm::ranges_in(blocks, pmb, o));
        if tag == block::A20_ANY {
            if self.map.get(&key) == Some(&id) {
                self.map.remove(&key);
            }
        } else if self.map_a20.get(&(key, tag)) == Some(&id) {
            self.map_a20.remove(&(key, tag));
        }
        self.free.push(id);
        self.live -= 1;
    }

    /// Whether block `id`'s bytes still match memory (after host code ran);
    /// if not it is retired. Counted in `verified` / `stale_retired`.
    pub(crate) fn verify(&mut self, tb: &mut Tracked<B>, id: u32) -> bool {
        self.counters.verified += 1;
        let b = &self.blocks[id as usize];
        let mut now = block::read_ranges(tb, &b.ranges);
        now.extend(block::read_ranges(tb, &b.dev_ranges));
        let same = now == b.src;
        if same {
            self.blocks[id as usize].epoch = self.epoch;
        } else {
            self.counters.stale_retired += 1;
            self.retire(&mut tb.code, id);
        }
        same
    }

    /// Finds or compiles the block at `key`; `None` when its first
    /// instruction cannot be cached.
    fn find(
        &mut self,
        tb: &mut Tracked<B>,
        key: u64,
        cs_base: u32,
        ip: u32,
        now: u64,
    ) -> Option<u32> {
        let d = dm_index(key);
        let (k, id) = self.dm[d];
        if k == key && id != NONE {
            let b = &self.blocks[id as usize];
            if b.valid && b.key == key && b.a20 != self.a20_bad {
                self.counters.dm_hits += 1;
                return Some(id);
            }
        }
        // A block that does not depend on the A20 gate, else one compiled
        // under its present state.
        let hit = match self.map.get(&key) {
            Some(&id) => Some(id),
            None => self.map_a20.get(&(key, self.a20_now)).copied(),
        };
        if let Some(id) = hit {
            self.counters.map_hits += 1;
            self.dm[d] = (key, id);
            return Some(id);
        }
        let c = block::compile_with(
            tb,
            &self.smc,
            &self.kinds,
            cs_base,
            ip,
            self.config.max_ops,
            self.config.device_code,
        )?;
        if self.live + self.pm.live >= self.config.max_live {
            self.flush_inner();
            tb.code.clear_all();
            tb.clear_code_marks();
        }
        let id = self.install(tb, key, cs_base, c, now);
        self.dm[d] = (key, id);
        Some(id)
    }

    fn install(
        &mut self,
        tb: &mut Tracked<B>,
        key: u64,
        cs_base: u32,
        c: Compiled<B>,
        now: u64,
    ) -> u32 {
        self.counters.blocks_compiled += 1;
        self.counters.instructions_compiled += c.ops.len() as u64;
        let block = Block {
            key,
            cs_base,
            valid: true,
            ops: c.ops,
            ranges: c.ranges,
            dev_ranges: c.dev_ranges,
            link: [NONE, NONE],
            born: now,
            src: c.src,
            epoch: self.epoch,
            a20: c.a20,
            spin: if self.config.spin {
                c.spin
            } else {
                block::Spin::None
            },
        };
        let id = match self.free.pop() {
            Some(id) => {
                self.blocks[id as usize] = block;
                id
            }
            None => {
                self.blocks.push(block);
                (self.blocks.len() - 1) as u32
            }
        };
        self.live += 1;
        let tag = self.blocks[id as usize].a20;
        if tag != block::A20_ANY {
            self.counters.a20_blocks += 1;
        }
        if !self.blocks[id as usize].dev_ranges.is_empty() {
            self.device_live.push(id);
            self.counters.device_blocks += 1;
            tb.dev_watch = true;
        }
        let ranges = self.blocks[id as usize].ranges.clone();
        self.smc.add(&mut tb.code, id, &ranges);
        for &(s, e) in &ranges {
            tb.mark_code(s, e);
        }
        if tag == block::A20_ANY {
            self.map.insert(key, id);
        } else {
            self.map_a20.insert((key, tag), id);
        }
        id
    }
}

impl<B: EngineBus> Engine<B> for L1<B> {
    fn name(&self) -> &'static str {
        "l1"
    }
    fn run(&mut self, cpu: &mut Cpu, bus: &mut B, stop_at: u64) -> EngineExit {
        L1::run(self, cpu, bus, stop_at)
    }
}
