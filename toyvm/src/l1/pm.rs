//! L1 for protected-mode and V86 code: blocks of ops decoded once and run
//! through the paging adapter, exactly as `pm::step` (L0 there) runs them.
//!
//! A block starts at (CS base, EIP) under one mode (code size, V86, paging
//! on or off, CPL: [`mode_of`]) and holds ops of the CPU decoder typed by
//! the paging adapter over L1's store monitor ([`PBus`]). What L0's step
//! does besides running the op, and how a block stands in for it:
//!
//! - The fetch through paging. With paging on, a block lies in one linear
//!   page, so one translation names every byte of its ops. An op whose
//!   15-byte fetch window (not the op) runs into the next page translates
//!   that page before it runs, as L0's fetch does (`POp::xpage`); an op
//!   that itself crosses the page runs uncached. It is
//!   checked on entry: if the translation cache was dropped since the block
//!   last checked it ([`Paged::generation`]) or did not hold it, the page is
//!   translated again as a fetch would (a TLB hit, or a walk setting the
//!   accessed bits L0's fetch sets at that same instruction); a different
//!   physical page retires the block, a refused fetch runs the instruction
//!   uncached (which delivers the #PF). An op that drops the cache ends the
//!   block, so the next fetch is checked again.
//! - The CS limit: on entry the block's furthest byte (`end`) must be inside
//!   CS, else the instruction runs uncached (and takes its #GP there).
//! - Self-modifying code: the physical bytes carry code bits in L1's bitmap
//!   (16 MiB, `smc`), so stores retire blocks exactly as in real mode; the
//!   L1 epoch (host writes) forces a byte compare before reuse.
//! - The per-dispatch contract: ops [`classify::pm_light`] accepts change
//!   only registers, EIP, flags and memory, so they run with a snapshot of
//!   those three (restored on a fault, which is then delivered through the
//!   IDT as `pm::run_op` would); every other op runs through `pm::run_op`
//!   itself, after which the adapter is re-synced with CR0/CR3/CPL and the
//!   block is left if the mode, CS or TF changed.
//!
//! TF, an interrupt shadow, device windows, volatile bytes and the rare
//! windows above go through `pm::step_paged` (counted as uncached). This
//! module owns the protected-mode block store, its compile, entry checks and
//! loop; it must not hold instruction semantics (the CPU's handlers and
//! `pm`'s fault delivery do) or retirement policy (`smc`, `L1`).

use super::block::{
    a20_tag, cacheable, push_range, read_ranges, Block, Fetch, A20_ANY, A20_BIT, NONE,
};
use super::classify::{self, INVALID, IO, TERM};
use super::run::Uncached;
use super::smc::Smc;
use super::tracked::Tracked;
use super::{EngineExit, L1};
use crate::bus::{Bus, EngineBus};
use crate::cpu::decode::{self, Mode, MAX_LEN};
use crate::cpu::l0::StepOutcome;
use crate::cpu::op::{Flow, Op};
use crate::cpu::paging::Paged;
use crate::cpu::{exec, pm, seg, Cpu, Exception};
use std::collections::HashMap;

/// The bus protected-mode ops run on: the paging adapter over the store
/// monitor.
pub type PBus<B> = Paged<Tracked<B>>;

/// Block ids of this store carry this bit in the shared SMC index.
pub const PM_ID: u32 = 1 << 31;

/// Translation generation meaning "check on every entry".
const ALWAYS: u64 = u64::MAX;

/// The mode a protected-mode block was decoded and checked for: code size,
/// V86, paging, CPL.
#[inline(always)]
pub fn mode_of(cpu: &Cpu) -> u8 {
    cpu.code32 as u8 | (cpu.v86 as u8) << 1 | (cpu.paging() as u8) << 2 | (cpu.cpl & 3) << 3
}

/// One op of a protected-mode block.
pub struct POp<B> {
    pub op: Op<PBus<B>>,
    /// EIP of the next instruction.
    pub next_ip: u32,
    /// Runs with the small snapshot (`classify::pm_light`).
    pub light: bool,
    /// Touches ports: ask for attention after it.
    pub io: bool,
    /// With paging, when the op's fetch window (not the op) runs into the
    /// next page: that page's first linear address, whose translation L0's
    /// fetch makes before the op runs; `NONE` otherwise.
    pub xpage: u32,
    /// How many window bytes lie on that page.
    pub xlen: u32,
}

/// A protected-mode block.
pub struct PmBlock<B> {
    pub cs_base: u32,
    pub eip: u32,
    pub mode: u8,
    pub valid: bool,
    pub ops: Vec<POp<B>>,
    /// Physical bytes the ops came from (code bits) and those bytes.
    pub ranges: Vec<(u32, u32)>,
    pub src: Vec<u8>,
    /// Furthest offset in CS an op reaches (the limit must cover it).
    pub end: u64,
    /// With paging: the linear page and its physical page.
    pub page_lin: u32,
    pub page_phys: u32,
    /// The translation generation the page was last checked at.
    pub tgen: u64,
    /// `L1::epoch` when its bytes were last known to match memory.
    pub epoch: u32,
    pub born: u64,
    /// Successors: [fall-through, taken].
    pub link: [u32; 2],
    /// As `Block::a20`, from the fetched CPU addresses: the linear ones
    /// without paging, the page's translation with it.
    pub a20: u8,
}

impl<B> PmBlock<B> {
    /// Whether this block runs code at `cs_base:eip` in `mode` while the
    /// A20 gate stands so that `a20_bad` is the tag of the other state.
    #[inline(always)]
    fn is(&self, cs_base: u32, eip: u32, mode: u8, a20_bad: u8) -> bool {
        self.valid
            && self.eip == eip
            && self.cs_base == cs_base
            && self.mode == mode
            && self.a20 != a20_bad
    }
}

/// The protected-mode block store.
pub struct PmCache<B> {
    pub blocks: Vec<PmBlock<B>>,
    free: Vec<u32>,
    map: HashMap<(u32, u32, u8), u32>,
    pub live: usize,
}

impl<B> Default for PmCache<B> {
    fn default() -> Self {
        PmCache {
            blocks: Vec::new(),
            free: Vec::new(),
            map: HashMap::new(),
            live: 0,
        }
    }
}

impl<B> PmCache<B> {
    pub fn clear(&mut self) {
        self.blocks.clear();
        self.free.clear();
        self.map.clear();
        self.live = 0;
    }

    /// Forgets block `idx` (its code bits are the caller's); returns its
    /// ranges.
    pub fn remove(&mut self, idx: u32) -> Vec<(u32, u32)> {
        let b = &mut self.blocks[idx as usize];
        b.valid = false;
        b.ops = Vec::new();
        b.link = [NONE, NONE];
        let ranges = std::mem::take(&mut b.ranges);
        let k = map_key(b.cs_base, b.eip, b.mode, b.a20);
        if self.map.get(&k) == Some(&idx) {
            self.map.remove(&k);
        }
        self.free.push(idx);
        self.live -= 1;
        ranges
    }
}

/// The map's key: blocks that depend on the A20 gate are filed under
/// their gate state too (bits 6-7; `mode_of` uses bits 0-4), so both
/// states' blocks for one address can be kept.
#[inline(always)]
fn map_key(cs_base: u32, eip: u32, mode: u8, a20: u8) -> (u32, u32, u8) {
    (cs_base, eip, mode | a20 << 6)
}

/// The result of compiling at one address.
struct Compiled<B> {
    ops: Vec<POp<B>>,
    ranges: Vec<(u32, u32)>,
    end: u64,
    page_lin: u32,
    page_phys: u32,
    a20: u8,
}

/// Why a compile found nothing to cache at its first instruction.
enum NoBlock {
    Volatile,
    Window,
    /// The fetch would fault, leaves the page or wraps, or passes the CS
    /// limit.
    Protected,
}

/// Decodes a block at `cs_base:eip` for the CPU's current mode.
fn compile<B: EngineBus>(
    cpu: &Cpu,
    pb: &mut PBus<B>,
    smc: &Smc,
    max_ops: usize,
) -> Result<Compiled<B>, NoBlock> {
    let cs_base = cpu.sbase[seg::CS];
    let eip0 = cpu.eip;
    let mask = cpu.ip_mask();
    let mode = Mode::of(cpu);
    let paging = pb.translating();
    let lin0 = cs_base.wrapping_add(eip0);
    let page_lin = lin0 & !0xFFF;
    let page_phys = if paging {
        match pb.fetch_translate(lin0) {
            Some(p) => p & !0xFFF,
            None => return Err(NoBlock::Protected),
        }
    } else {
        0
    };
    let mut ops = Vec::new();
    let mut ranges = Vec::new();
    let mut end = 0u64;
    let mut ip = eip0;
    let mut why = NoBlock::Protected;
    let mut a20 = false;
    while ops.len() < max_ops {
        let lin = cs_base.wrapping_add(ip);
        let last = MAX_LEN as u32 - 1;
        // The fetch window must not wrap (in the offset or the linear
        // space) nor, with paging, leave the block's page.
        if ip.wrapping_add(last) & mask < ip
            || lin.checked_add(last).is_none()
            || (paging && lin & !0xFFF != page_lin)
        {
            why = NoBlock::Protected;
            break;
        }
        // With paging the window may run into the next page (`xpage`): its
        // bytes there are not read here (their page is translated when the
        // op runs, as L0's fetch does) and must not be part of the op.
        let inpage = if paging {
            (page_lin + 0x1000 - lin).min(MAX_LEN as u32) as usize
        } else {
            MAX_LEN
        };
        let mut p = [0u32; MAX_LEN];
        // Whether a CPU address of the window (before the A20 gate) has
        // bit 20 set. With paging the page's translation is checked on
        // entry as L0's fetch would make it, and the gate applies after
        // paging, so only the translated page's bit 20 matters.
        let mut hi = false;
        for (i, x) in p.iter_mut().enumerate() {
            let l = lin + i.min(inpage - 1) as u32;
            let cpu_addr = if paging { page_phys | (l & 0xFFF) } else { l };
            hi |= cpu_addr & A20_BIT != 0;
            *x = pb.bus.phys(cpu_addr);
        }
        if cacheable(&pb.bus, &p, false) != Fetch::Plain {
            why = NoBlock::Window;
            break;
        }
        let mut bytes = [0u8; MAX_LEN];
        for (b, &x) in bytes.iter_mut().zip(&p[..inpage]) {
            *b = pb.bus.peek8(x);
        }
        let op = decode::decode_in::<PBus<B>>(&bytes, ip, mode);
        let ins = classify::iced_in(&bytes, ip, cpu.code32);
        let class = classify::classify(&ins, &op, false);
        let dep = if class & INVALID != 0 {
            MAX_LEN
        } else {
            op.len as usize
        };
        // The decoder reads an instruction's bytes in order and no further
        // than its length, so zeros past the page change nothing of an op
        // that ends inside it; one that does not is not cached.
        if dep > inpage || ip as u64 + op.len as u64 > cpu.seg_end[seg::CS] {
            why = NoBlock::Protected;
            break;
        }
        if p[..dep].iter().any(|&x| smc.is_volatile(x)) {
            why = NoBlock::Volatile;
            break;
        }
        for &x in &p[..dep] {
            push_range(&mut ranges, x);
        }
        a20 |= hi;
        end = end.max(ip as u64 + op.len as u64);
        let next_ip = ip.wrapping_add(op.len as u32) & mask;
        let light = classify::pm_light(&ins, &op, class);
        ops.push(POp {
            op,
            next_ip,
            light,
            io: class & IO != 0,
            xpage: if inpage < MAX_LEN {
                page_lin + 0x1000
            } else {
                NONE
            },
            xlen: (MAX_LEN - inpage) as u32,
        });
        if class & TERM != 0 {
            break;
        }
        ip = next_ip;
    }
    if ops.is_empty() {
        return Err(why);
    }
    Ok(Compiled {
        ops,
        ranges,
        end,
        page_lin,
        page_phys,
        a20: a20_tag(&pb.bus, a20),
    })
}

/// How a run through a block ended.
enum End {
    /// The last op fell through.
    Fall,
    /// Op transferred control (a jump, or a REP element).
    Jumped,
    /// An op stored into code; `.0`: it retired normally (EIP past it).
    Hits(bool, usize),
    /// Control went where no link describes (a fault was delivered, the
    /// mode, CS, TF or the translation cache changed).
    Elsewhere,
    Reached,
    Exit(EngineExit),
    /// The op's fetch window runs into device memory on the next page: it
    /// must run uncached (its fetch reads have effects).
    Uncached,
}

/// Runs a light op with the small snapshot; a fault is delivered as
/// `pm::run_op` delivers it (a page fault the bus recorded first).
#[inline(always)]
fn exec_light<B: EngineBus>(cpu: &mut Cpu, pb: &mut PBus<B>, t: &POp<B>) -> Result<Flow, End> {
    let regs = cpu.regs;
    let eip = cpu.eip;
    let flags = cpu.flags;
    let r = (t.op.handler)(cpu, pb, &t.op);
    if let Some(f) = pb.take_fault() {
        cpu.regs = regs;
        cpu.eip = eip;
        cpu.flags = flags;
        cpu.clock += 1;
        cpu.cr2 = f.addr;
        let code = pb.fault_code();
        let out = pm::fault(cpu, pb, Exception(14, code), &t.op);
        pb.sync(cpu);
        return Err(delivered(out));
    }
    match r {
        Ok(Flow::Next) => {
            cpu.eip = t.next_ip;
            cpu.clock += 1;
            Ok(Flow::Next)
        }
        Ok(f @ (Flow::Jump | Flow::Repeat)) => {
            cpu.clock += 1;
            Ok(f)
        }
        Ok(Flow::Stop(what)) => {
            cpu.regs = regs;
            cpu.eip = eip;
            cpu.flags = flags;
            Err(End::Exit(EngineExit::Stop(exec::stop_reason(
                cpu, &t.op, what,
            ))))
        }
        Ok(Flow::Halt | Flow::HostCall(_)) => unreachable!("HLT and host calls are not light"),
        Err(e) => {
            cpu.regs = regs;
            cpu.eip = eip;
            cpu.flags = flags;
            cpu.clock += 1;
            let out = pm::fault(cpu, pb, e, &t.op);
            pb.sync(cpu);
            Err(delivered(out))
        }
    }
}

#[cold]
fn delivered(out: StepOutcome) -> End {
    match out {
        StepOutcome::Stop(r) => End::Exit(EngineExit::Stop(r)),
        _ => End::Elsewhere,
    }
}

/// Runs block `id` from op `i` until it ends; `ran` counts the dispatches.
#[allow(clippy::too_many_arguments)]
fn run_block<B: EngineBus>(
    cpu: &mut Cpu,
    pb: &mut PBus<B>,
    blocks: &[PmBlock<B>],
    id: u32,
    mut i: usize,
    stop_at: u64,
    ran: &mut u64,
) -> End {
    let b = &blocks[id as usize];
    let n = b.ops.len();
    let gen = pb.generation();
    let start = cpu.clock;
    let out = loop {
        if cpu.clock >= stop_at {
            break End::Reached;
        }
        let t = &b.ops[i];
        if t.xpage != NONE {
            // What L0's fetch does to the next page: translate it (a TLB
            // hit, a walk, or a refusal that faults nothing since the op
            // ends before it), then read its bytes, which only plain memory
            // lets us skip.
            if let Some(p) = pb.fetch_translate(t.xpage) {
                // The byte the read reaches is the translation with the A20
                // gate applied (an odd megabyte's page may alias the VGA
                // window while the gate is closed).
                let p = pb.bus.phys(p);
                if !pb.bus.code_cacheable(p, p + t.xlen) {
                    break End::Uncached;
                }
            }
        }
        if t.light {
            match exec_light(cpu, pb, t) {
                Ok(Flow::Next) => {
                    if pb.generation() != gen {
                        break End::Elsewhere;
                    }
                    if !pb.bus.hits.is_empty() {
                        break End::Hits(true, i);
                    }
                    i += 1;
                    if i == n {
                        break End::Fall;
                    }
                }
                Ok(Flow::Repeat) => {
                    if !pb.bus.hits.is_empty() || pb.generation() != gen {
                        break End::Elsewhere;
                    }
                }
                Ok(_) => {
                    if !pb.bus.hits.is_empty() || pb.generation() != gen {
                        break End::Elsewhere;
                    }
                    break End::Jumped;
                }
                Err(e) => break e,
            }
            continue;
        }
        // The full contract: `pm::run_op` with its snapshot.
        let if_before = cpu.flags.if_();
        let cs_before = cpu.sbase[seg::CS];
        let mode_before = mode_of(cpu);
        let io_before = pb.bus.io_ops;
        match pm::run_op(cpu, pb, &t.op) {
            StepOutcome::Ok => {}
            StepOutcome::Halt => break End::Exit(EngineExit::Halt),
            StepOutcome::HostCall(n) => break End::Exit(EngineExit::HostCall(n)),
            StepOutcome::Stop(r) => break End::Exit(EngineExit::Stop(r)),
        }
        pb.sync(cpu);
        if t.io && pb.bus.io_ops != io_before && pb.bus.take_io_attention() {
            break End::Exit(EngineExit::Attention);
        }
        if cpu.shadow || !cpu.pmode {
            break End::Exit(EngineExit::Attention);
        }
        if !if_before && cpu.flags.if_() && (cpu.clock >= stop_at || pb.bus.interrupt_requested()) {
            break End::Exit(EngineExit::Attention);
        }
        if mode_of(cpu) != mode_before
            || cpu.sbase[seg::CS] != cs_before
            || cpu.flags.tf()
            || pb.generation() != gen
        {
            break End::Elsewhere;
        }
        let next = cpu.eip == t.next_ip;
        if !pb.bus.hits.is_empty() {
            break End::Hits(next, i);
        }
        if !next {
            break End::Jumped;
        }
        i += 1;
        if i == n {
            break End::Fall;
        }
    };
    *ran += cpu.clock - start;
    out
}

/// The physical ranges of block `id` of either store (real-mode `blocks`,
/// or protected-mode `pm` with [`PM_ID`]).
pub fn ranges_in<'a, B>(blocks: &'a [Block<B>], pm: &'a [PmBlock<B>], id: u32) -> &'a [(u32, u32)] {
    if id & PM_ID != 0 {
        &pm[(id & !PM_ID) as usize].ranges
    } else {
        &blocks[id as usize].ranges
    }
}

impl<B: EngineBus> L1<B> {
    /// One instruction through `pm::step_paged` (fetch and decode), with the
    /// exits the session needs after it.
    fn pm_uncached(
        &mut self,
        cpu: &mut Cpu,
        pb: &mut PBus<B>,
        why: Uncached,
    ) -> Option<EngineExit> {
        self.count_uncached(why);
        let if_before = cpu.flags.if_();
        let io_before = pb.bus.io_ops;
        let out = pm::step_paged(cpu, pb);
        pb.sync(cpu);
        self.settle(cpu, &mut pb.bus, out, if_before, io_before, true)
    }

    /// Finds or compiles the protected-mode block at CS:EIP for the current
    /// mode.
    fn pm_find(&mut self, cpu: &Cpu, pb: &mut PBus<B>) -> Result<u32, NoBlock> {
        let k = (cpu.sbase[seg::CS], cpu.eip, mode_of(cpu));
        // A block that does not depend on the A20 gate, else one compiled
        // under its present state.
        for tag in [A20_ANY, self.a20_now] {
            if let Some(&idx) = self.pm.map.get(&map_key(k.0, k.1, k.2, tag)) {
                self.counters.map_hits += 1;
                return Ok(idx);
            }
        }
        let c = compile(cpu, pb, &self.smc, self.config.max_ops)?;
        if self.live + self.pm.live >= self.config.max_live {
            self.flush_inner();
            pb.bus.code.clear_all();
            pb.bus.clear_code_marks();
        }
        self.counters.blocks_compiled += 1;
        self.counters.instructions_compiled += c.ops.len() as u64;
        self.counters.pm_blocks += 1;
        let mut src = read_ranges(&mut pb.bus, &c.ranges);
        src.shrink_to_fit();
        let block = PmBlock {
            cs_base: k.0,
            eip: k.1,
            mode: k.2,
            valid: true,
            ops: c.ops,
            ranges: c.ranges,
            src,
            end: c.end,
            page_lin: c.page_lin,
            page_phys: c.page_phys,
            tgen: if pb.caches(c.page_lin) {
                pb.generation()
            } else {
                ALWAYS
            },
            epoch: self.epoch,
            born: cpu.clock,
            link: [NONE, NONE],
            a20: c.a20,
        };
        let idx = match self.pm.free.pop() {
            Some(i) => {
                self.pm.blocks[i as usize] = block;
                i
            }
            None => {
                self.pm.blocks.push(block);
                (self.pm.blocks.len() - 1) as u32
            }
        };
        self.pm.live += 1;
        if c.a20 != A20_ANY {
            self.counters.a20_blocks += 1;
        }
        let ranges = self.pm.blocks[idx as usize].ranges.clone();
        self.smc.add(&mut pb.bus.code, idx | PM_ID, &ranges);
        for &(s, e) in &ranges {
            pb.bus.mark_code(s, e);
        }
        self.pm.map.insert(map_key(k.0, k.1, k.2, c.a20), idx);
        Ok(idx)
    }

    /// The entry checks of block `idx` (see the module header): `Ok(true)`
    /// to run it, `Ok(false)` when it was retired (look again), `Err` to
    /// run the instruction uncached.
    fn pm_enter(&mut self, cpu: &Cpu, pb: &mut PBus<B>, idx: u32) -> Result<bool, Uncached> {
        let b = &self.pm.blocks[idx as usize];
        if b.end > cpu.seg_end[seg::CS] {
            return Err(Uncached::Protected);
        }
        if b.epoch != self.epoch {
            self.counters.verified += 1;
            let now = read_ranges(&mut pb.bus, &b.ranges);
            if now != b.src {
                self.counters.stale_retired += 1;
                self.retire(&mut pb.bus.code, idx | PM_ID);
                return Ok(false);
            }
            self.pm.blocks[idx as usize].epoch = self.epoch;
        }
        let b = &self.pm.blocks[idx as usize];
        if pb.translating() && b.tgen != pb.generation() {
            let lin = b.cs_base.wrapping_add(cpu.eip);
            match pb.fetch_translate(lin) {
                Some(p) if p & !0xFFF == b.page_phys => {
                    let g = if pb.caches(lin) {
                        pb.generation()
                    } else {
                        ALWAYS
                    };
                    self.pm.blocks[idx as usize].tgen = g;
                    self.counters.pm_retranslated += 1;
                }
                Some(_) => {
                    // The page maps other bytes now.
                    self.counters.stale_retired += 1;
                    self.retire(&mut pb.bus.code, idx | PM_ID);
                    return Ok(false);
                }
                None => return Err(Uncached::Protected),
            }
        }
        Ok(true)
    }

    /// The protected-mode dispatch loop. Entered in protected or V86 mode
    /// with `cpu.clock < stop_at`, not halted, no shadow; returns
    /// `Attention` when the CPU leaves protected mode.
    pub(super) fn run_pm(&mut self, cpu: &mut Cpu, pb: &mut PBus<B>, stop_at: u64) -> EngineExit {
        let mut prev = NONE;
        let mut prev_slot = 0usize;
        let mut resume: Option<(u32, usize)> = None;
        let mut ran = 0u64;
        let exit = 'outer: loop {
            if cpu.clock >= stop_at {
                break EngineExit::Reached;
            }
            if !cpu.pmode || cpu.shadow {
                break EngineExit::Attention;
            }
            let (idx, start) = match resume.take() {
                Some(r) => r,
                None => {
                    if cpu.flags.tf() {
                        prev = NONE;
                        if let Some(x) = self.pm_uncached(cpu, pb, Uncached::SingleStep) {
                            break 'outer x;
                        }
                        continue;
                    }
                    let (cs_base, eip, mode) = (cpu.sbase[seg::CS], cpu.eip, mode_of(cpu));
                    let mut idx = NONE;
                    if prev != NONE {
                        let l = self.pm.blocks[prev as usize].link[prev_slot];
                        if l != NONE
                            && self.pm.blocks[l as usize].is(cs_base, eip, mode, self.a20_bad)
                        {
                            idx = l;
                            self.counters.link_hits += 1;
                        }
                    }
                    if idx == NONE {
                        match self.pm_find(cpu, pb) {
                            Ok(x) => {
                                idx = x;
                                if prev != NONE && self.pm.blocks[prev as usize].valid {
                                    self.pm.blocks[prev as usize].link[prev_slot] = x;
                                }
                            }
                            Err(why) => {
                                prev = NONE;
                                let why = match why {
                                    NoBlock::Volatile => Uncached::Volatile,
                                    NoBlock::Window => Uncached::Window,
                                    NoBlock::Protected => Uncached::Protected,
                                };
                                if let Some(x) = self.pm_uncached(cpu, pb, why) {
                                    break 'outer x;
                                }
                                continue;
                            }
                        }
                    }
                    match self.pm_enter(cpu, pb, idx) {
                        Ok(true) => {}
                        Ok(false) => {
                            prev = NONE;
                            continue;
                        }
                        Err(why) => {
                            prev = NONE;
                            if let Some(x) = self.pm_uncached(cpu, pb, why) {
                                break 'outer x;
                            }
                            continue;
                        }
                    }
                    (idx, 0)
                }
            };
            let end = run_block(cpu, pb, &self.pm.blocks, idx, start, stop_at, &mut ran);
            if !pb.bus.hits.is_empty() {
                // A store into code: retire before the next instruction.
                self.process_hits(&mut pb.bus, cpu.clock);
            }
            prev = NONE;
            match end {
                End::Fall => {
                    prev = idx;
                    prev_slot = 0;
                }
                End::Jumped => {
                    prev = idx;
                    prev_slot = 1;
                }
                End::Hits(next, i) => {
                    let b = &self.pm.blocks[idx as usize];
                    if next && b.valid && i + 1 < b.ops.len() {
                        resume = Some((idx, i + 1));
                    }
                }
                End::Elsewhere => {}
                End::Uncached => {
                    if let Some(x) = self.pm_uncached(cpu, pb, Uncached::Window) {
                        break x;
                    }
                }
                End::Reached => break EngineExit::Reached,
                End::Exit(x) => break x,
            }
        };
        self.counters.threaded_ops += ran;
        self.counters.pm_dispatches += ran;
        exit
    }
}
