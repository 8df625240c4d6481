//! The code cache of mainemu's L1: blocks of decoded instructions, how they
//! are found (links, a direct-mapped cache, the map), compiled, and retired
//! when a store overwrites the bytes they came from.
//!
//! Owns block formation over x86-cpu's decoder (`decode::decode_in` for the
//! Op every handler runs, `flow::facts` for where a block ends and which
//! bytes an Op depends on), the page index (which blocks hold bytes of each
//! 4 KiB page) and exact retirement: a code write retires exactly the live
//! blocks whose bytes it overlaps, nothing else on the page. The memory's
//! code-page bitmap ([`Memory::mark_code`]) is kept equal to "a live block
//! has bytes on this page". It must not run guest code (the engine in
//! `l1/mod.rs` does) or hold instruction semantics.

use crate::memory::{CodeWrite, Memory, PAGE_SIZE};
use crate::thunks::{THUNK_AREA, THUNK_BASE};
use std::collections::HashMap;
use x86_cpu::decode::{self, Mode};
use x86_cpu::kinds::{self, Kinds};
use x86_cpu::op::Op;

/// Most instructions in one block.
pub const MAX_OPS: usize = 64;
/// Above this many blocks (live or retired: slots are not reused) the whole
/// cache is flushed, so memory stays bounded under heavy self-modification.
pub const FLUSH_BLOCKS: usize = 1 << 16;
/// Direct-mapped cache size (a power of two).
const DM: usize = 4096;
/// "No block".
pub const NONE: u32 = u32::MAX;

/// One cached instruction.
pub struct TOp {
    pub op: Op<Memory>,
    /// EIP of this instruction.
    pub ip: u32,
    /// EIP of the next one.
    pub next: u32,
    /// How it runs: [`NO_UNDO`], [`LIGHT`], [`FULL`] or [`BRANCH`].
    pub run: u8,
    /// Its `x86_cpu::kinds` kind (`GENERIC` unless `run` is [`BRANCH`]).
    pub kind: u8,
    /// How many ops from this one on are [`NO_UNDO`] or [`LIGHT`] (the
    /// stretch the engine runs without a look at the budget or the class).
    pub hot: u8,
}

/// Register-only, no snapshot (`flow::Facts::no_undo`,
/// `user::run_op_no_undo`); stores nothing.
pub const NO_UNDO: u8 = 0;
/// Writes no segment state: registers, EIP and flags snapshot
/// (`flow::Facts::light`, `user::run_op_light`).
pub const LIGHT: u8 = 1;
/// Everything else: `user::run_op` (the full snapshot).
pub const FULL: u8 = 2;
/// A `NO_UNDO` block-closing Jcc, JMP or LOOP whose handler
/// `x86_cpu::kinds` can call statically (`TOp::kind`).
pub const BRANCH: u8 = 3;

/// A compiled block: straight-line instructions from `start`.
pub struct Block {
    pub start: u32,
    /// One past the last byte any of its Ops depends on.
    pub end: u64,
    pub ops: Vec<TOp>,
    pub valid: bool,
    /// Successor cache: [fall-through, any other target]. Validated on use
    /// (live, starts at the EIP looked up), so retirement never unlinks.
    pub link: [u32; 2],
}

/// Deterministic counters of the cache (functions of the guest run and the
/// sequence of stop values).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CacheCounters {
    pub blocks_compiled: u64,
    pub instructions_compiled: u64,
    /// Code writes the memory recorded (stores to pages holding code).
    pub code_writes: u64,
    /// Blocks retired because a code write overlapped their bytes.
    pub smc_retired: u64,
    pub flushes: u64,
    pub link_hits: u64,
    pub dm_hits: u64,
    pub map_hits: u64,
}

/// The block store and its indexes.
pub struct Cache {
    pub blocks: Vec<Block>,
    map: HashMap<u32, u32>,
    dm: Box<[u32; DM]>,
    /// Page number -> blocks with bytes on it (may hold retired ones until
    /// the page is next written).
    pages: HashMap<u32, Vec<u32>>,
    /// The handlers of the closing branches `x86_cpu::kinds` calls directly.
    kinds: Kinds,
    pub counters: CacheCounters,
}

impl Default for Cache {
    fn default() -> Self {
        Cache::new()
    }
}

/// The whole thunk area, allocated slots or not: never compiled, so a slot
/// handed out later can never be reached through a link.
#[inline(always)]
fn in_thunk_area(ip: u32) -> bool {
    ip.wrapping_sub(THUNK_BASE) < THUNK_AREA
}

#[inline(always)]
fn dm_slot(eip: u32) -> usize {
    ((eip ^ (eip >> 12)) as usize) & (DM - 1)
}

impl Cache {
    pub fn new() -> Cache {
        Cache {
            blocks: Vec::new(),
            map: HashMap::new(),
            dm: Box::new([NONE; DM]),
            pages: HashMap::new(),
            kinds: Kinds::new(|b| decode::decode_in::<Memory>(b, 0x1000, Mode::FLAT32)),
            counters: CacheCounters::default(),
        }
    }

    /// Whether `b` is a live block starting at `eip`.
    #[inline(always)]
    fn live_at(&self, b: u32, eip: u32) -> bool {
        self.blocks
            .get(b as usize)
            .is_some_and(|x| x.valid && x.start == eip)
    }

    /// The live block at `eip` reachable from `from`'s link `slot`, the
    /// direct-mapped cache or the map; records the link. `None` if no block
    /// starts there yet.
    #[inline]
    pub fn find(&mut self, from: Option<(u32, usize)>, eip: u32) -> Option<u32> {
        if let Some((f, s)) = from {
            let l = self.blocks.get(f as usize).map_or(NONE, |x| x.link[s]);
            if self.live_at(l, eip) {
                self.counters.link_hits += 1;
                return Some(l);
            }
        }
        let d = self.dm[dm_slot(eip)];
        let b = if self.live_at(d, eip) {
            self.counters.dm_hits += 1;
            d
        } else {
            let b = *self.map.get(&eip)?;
            self.counters.map_hits += 1;
            self.dm[dm_slot(eip)] = b;
            b
        };
        if let Some((f, s)) = from {
            if let Some(x) = self.blocks.get_mut(f as usize).filter(|x| x.valid) {
                x.link[s] = b;
            }
        }
        Some(b)
    }

    /// The live block at `eip` that `from`'s link `slot` holds, if any (the
    /// hot path of [`Cache::find`]).
    #[inline(always)]
    pub fn follow(&mut self, from: u32, slot: usize, eip: u32) -> Option<u32> {
        let l = self.blocks[from as usize].link[slot];
        if self.live_at(l, eip) {
            self.counters.link_hits += 1;
            return Some(l);
        }
        None
    }

    /// Links `from` to the freshly compiled `b`.
    pub fn link(&mut self, from: Option<(u32, usize)>, b: u32) {
        if let Some((f, s)) = from {
            if let Some(x) = self.blocks.get_mut(f as usize).filter(|x| x.valid) {
                x.link[s] = b;
            }
        }
    }

    /// Compiles the block at `eip` in `mode`: instructions up to one that
    /// ends a block, [`MAX_OPS`], an EIP in the thunk area (`is_thunk`, never
    /// compiled: the engine services it; nothing in the thunk area is
    /// compiled at all), or an instruction whose 15-byte
    /// fetch window is not all readable (it runs uncached, so its fetch
    /// faults exactly as L0's does). `None` when the first instruction
    /// cannot be cached.
    pub fn compile(
        &mut self,
        mem: &mut Memory,
        eip: u32,
        mode: Mode,
        is_thunk: &dyn Fn(u32) -> bool,
    ) -> Option<u32> {
        let mut ops = Vec::new();
        let mut ip = eip;
        let mut end = eip as u64;
        while ops.len() < MAX_OPS && !in_thunk_area(ip) && (ops.is_empty() || !is_thunk(ip)) {
            let Some(bytes) = mem.fetch_window(ip) else {
                break;
            };
            let op = decode::decode_in::<Memory>(&bytes, ip, mode);
            let f = x86_cpu::flow::facts(&bytes, ip, mode);
            let next = ip.wrapping_add(op.len as u32);
            end = end.max(ip as u64 + f.span.max(op.len) as u64);
            let kind = self.kinds.of(&op);
            let (run, kind) = if f.no_undo && kinds::fusable_branch(kind) {
                (BRANCH, kind)
            } else if f.no_undo {
                (NO_UNDO, kinds::GENERIC)
            } else if f.light {
                (LIGHT, kinds::GENERIC)
            } else {
                (FULL, kinds::GENERIC)
            };
            ops.push(TOp {
                op,
                ip,
                next,
                run,
                kind,
                hot: 0,
            });
            if f.ends_block || next < ip {
                break;
            }
            ip = next;
        }
        if ops.is_empty() {
            return None;
        }
        let mut run = 0u8;
        for t in ops.iter_mut().rev() {
            run = if t.run == NO_UNDO || t.run == LIGHT {
                run + 1
            } else {
                0
            };
            t.hot = run;
        }
        if self.blocks.len() >= FLUSH_BLOCKS {
            self.flush(mem);
        }
        let b = self.blocks.len() as u32;
        self.counters.blocks_compiled += 1;
        self.counters.instructions_compiled += ops.len() as u64;
        mem.mark_code(eip, (end - eip as u64) as u32);
        for page in (eip >> 12)..=((end - 1) >> 12) as u32 {
            self.pages.entry(page).or_default().push(b);
        }
        self.blocks.push(Block {
            start: eip,
            end,
            ops,
            valid: true,
            link: [NONE; 2],
        });
        self.map.insert(eip, b);
        self.dm[dm_slot(eip)] = b;
        Some(b)
    }

    /// Retires every live block whose bytes overlap one of the code writes
    /// the memory recorded since the last call, and unmarks pages left with
    /// no live block.
    pub fn retire_writes(&mut self, mem: &mut Memory) {
        for CodeWrite { addr, len } in mem.take_code_writes() {
            self.counters.code_writes += 1;
            let (lo, hi) = (addr as u64, addr as u64 + len.max(1) as u64);
            for page in (lo >> 12) as u32..=((hi - 1) >> 12) as u32 {
                let Some(list) = self.pages.get_mut(&page) else {
                    continue;
                };
                let blocks = &mut self.blocks;
                let map = &mut self.map;
                let retired = &mut self.counters.smc_retired;
                list.retain(|&b| {
                    let blk = &mut blocks[b as usize];
                    if !blk.valid {
                        return false;
                    }
                    if (blk.start as u64) < hi && lo < blk.end {
                        blk.valid = false;
                        blk.ops = Vec::new();
                        map.remove(&blk.start);
                        *retired += 1;
                        return false;
                    }
                    true
                });
                if list.is_empty() {
                    self.pages.remove(&page);
                    mem.unmark_code_page(page.wrapping_mul(PAGE_SIZE));
                }
            }
        }
    }

    /// Drops every block and clears the code marks this cache set.
    pub fn flush(&mut self, mem: &mut Memory) {
        for &page in self.pages.keys() {
            mem.unmark_code_page(page.wrapping_mul(PAGE_SIZE));
        }
        self.pages.clear();
        self.blocks.clear();
        self.map.clear();
        self.dm.fill(NONE);
        self.counters.flushes += 1;
    }
}
