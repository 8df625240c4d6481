//! mainemu's µop arms (`only-naive`, `only-baseline`, `only-all`,
//! `only-<passes>`): every instruction the shared lowering expresses runs
//! in a µop program on E1, built under the `Flat32` machine model through
//! `shared_ir::tier` (the same core every µop arm uses); `x86_cpu::user::step`
//! runs, one at a time, what the lowering declines, what a program hands back
//! (a refused access, a helper fault, a budget tail) and everything while
//! TF is set or the code is not flat 32-bit.
//!
//! Owns the mainemu side of the tier: the run loop under `run::exec`'s
//! contract (stop exactly at `stop_at`, return at a thunk, an exception or
//! a stop), the runtime E1 calls ([`MemRuntime`]: the checked path through
//! mainemu's paged memory, a refusal before any effect so the finer tier
//! raises the access violation; a store to a page in the code-page bitmap
//! reports `HitCode`), the code-page bitmap as the store barrier (pages a
//! program was built from are marked; recorded writes retire the programs
//! they overlap before the next instruction), and the arm's counters. It
//! must not hold instruction semantics (shared-ir lowers, x86-cpu
//! executes), service thunks or deliver exceptions (run.rs and seh do).

use crate::memory::Memory;
use crate::run::Exit;
use shared_ir::exit::ExitReason;
use shared_ir::flags::Width;
use shared_ir::lower::LowerOpts;
use shared_ir::machine::{FastMem, Flat32, MachineRuntime, Refused, StoreOutcome};
use shared_ir::opt::PassSet;
use shared_ir::tier::{Site, Tier};
use std::collections::BTreeMap;
use x86_cpu::bus::Bus;
use x86_cpu::decode::Mode;
use x86_cpu::user::{self, UserOutcome};
use x86_cpu::{seg, Cpu};

/// Most instructions in one line (toyvm's `LINE_CAP`).
pub const LINE_CAP: usize = 32;
/// E1 arena size in words (the arena evicts its oldest programs when full).
const ARENA_WORDS: usize = 1 << 22;

/// The arm names mainemu accepts for µop arms: `only-` and a pass set
/// (`naive`, `baseline`, `all`, or a pass list such as `constprop.dce`).
pub fn parse_arm(arm: &str) -> Option<Result<PassSet, String>> {
    let set = arm.strip_prefix("only-")?;
    Some(PassSet::parse(set))
}

/// mainemu's memory as E1 sees it. There is no page view yet (the pages
/// are not one host slice), so every access takes the checked path.
pub struct MemRuntime<'a> {
    pub mem: &'a mut Memory,
}

impl MachineRuntime for MemRuntime<'_> {
    const PAGE_SHIFT: u32 = 12;
    fn fast_mem(&mut self) -> FastMem<'_> {
        FastMem {
            ram: &mut [],
            pages: &[],
        }
    }
    fn read(&mut self, lin: u32, w: Width, _now: u64) -> Result<u32, Refused> {
        if !self.mem.can_read(lin, w.bytes()) {
            return Err(Refused);
        }
        Ok(match w {
            Width::W8 => self.mem.read8(lin) as u32,
            Width::W16 => self.mem.read16(lin) as u32,
            Width::W32 => self.mem.read32(lin),
        })
    }
    fn write(&mut self, lin: u32, w: Width, v: u32, _now: u64) -> StoreOutcome {
        let n = w.bytes();
        if !self.mem.can_write(lin, n) {
            return StoreOutcome::Refused;
        }
        match w {
            Width::W8 => self.mem.write8(lin, v as u8),
            Width::W16 => self.mem.write16(lin, v as u16),
            Width::W32 => self.mem.write32(lin, v),
        }
        if self.mem.is_code(lin) || self.mem.is_code(lin.wrapping_add(n - 1)) {
            StoreOutcome::HitCode
        } else {
            StoreOutcome::Done
        }
    }
}

/// The arm's own counters, beside the tier's.
#[derive(Clone, Copy, Debug, Default)]
struct Steps {
    /// Instructions (or REP elements) `user::step` ran (with the tier's
    /// `uop_insns`, every dispatch of the arm), and of those while TF was
    /// set or the code was not flat.
    stepped: u64,
    unflat: u64,
}

/// A µop arm of one process (threads share it: they share the code).
pub struct Uop {
    tier: Tier,
    model: Flat32,
    steps: Steps,
    bytes: Vec<u8>,
}

impl Uop {
    pub fn new(passes: PassSet) -> Uop {
        Uop {
            tier: Tier::new(passes, LINE_CAP, ARENA_WORDS),
            model: Flat32::default(),
            steps: Steps::default(),
            bytes: Vec::new(),
        }
    }

    /// Every counter: the tier's census and the arm's steps.
    pub fn counters(&self) -> BTreeMap<String, u64> {
        let mut m = self.tier.counters();
        m.insert("stepped".into(), self.steps.stepped);
        m.insert("unflat_steps".into(), self.steps.unflat);
        m
    }

    /// Retires what recorded stores (guest, host, protection changes)
    /// overlapped.
    fn absorb(&mut self, mem: &mut Memory) {
        if mem.has_code_writes() {
            for w in mem.take_code_writes() {
                let hi = (w.addr as u64 + w.len as u64).min(u32::MAX as u64) as u32;
                self.tier.retire(w.addr, hi);
            }
        }
    }

    /// Builds the site at EIP from the readable bytes there (never from the
    /// thunk area), marking the pages a program was built from.
    fn build(&mut self, eip: u32, mem: &mut Memory, is_thunk: &dyn Fn(u32) -> bool) -> Site {
        self.bytes.clear();
        mem.read_code(eip, (LINE_CAP * 15) as u32, &mut self.bytes);
        if let Some(n) = (0..self.bytes.len()).find(|&i| is_thunk(eip.wrapping_add(i as u32))) {
            self.bytes.truncate(n);
        }
        let b = self
            .tier
            .build(&self.model, LowerOpts::default(), 0, eip, &self.bytes);
        for (lo, hi) in b.code {
            mem.mark_code(lo, hi.wrapping_sub(lo));
        }
        b.site
    }

    /// One instruction (or REP element) through `user::step`.
    fn step(&mut self, cpu: &mut Cpu, mem: &mut Memory) -> Option<Exit> {
        self.steps.stepped += 1;
        match user::step(cpu, mem) {
            UserOutcome::Ok => None,
            UserOutcome::Exception(ev) => Some(Exit::Exception(ev)),
            UserOutcome::Stop(r) => Some(Exit::Stop(r)),
        }
    }

    /// Runs `cpu` until EIP enters the thunk area, the clock reaches
    /// `stop_at`, or an exception or stop: `run::exec`'s contract, with the
    /// dispatches of L0.
    pub fn run(
        &mut self,
        cpu: &mut Cpu,
        mem: &mut Memory,
        stop_at: u64,
        is_thunk: &dyn Fn(u32) -> bool,
    ) -> Exit {
        loop {
            self.absorb(mem);
            let eip = cpu.eip;
            if is_thunk(eip) {
                return Exit::Thunk;
            }
            if cpu.clock >= stop_at {
                return Exit::Slice;
            }
            if cpu.flags.tf() || Mode::of(cpu) != Mode::FLAT32 || cpu.sbase[seg::CS] != 0 {
                // Programs run only with TF clear in flat 32-bit code.
                self.steps.unflat += 1;
                if let Some(x) = self.step(cpu, mem) {
                    return x;
                }
                continue;
            }
            let site = match self.tier.site(eip as u64) {
                Some(s) => s,
                None => self.build(eip, mem, is_thunk),
            };
            let Site::Prog(id) = site else {
                self.tier.note_fallback(site);
                if let Some(x) = self.step(cpu, mem) {
                    return x;
                }
                continue;
            };
            let mut v = [0u32; 10];
            v[..8].copy_from_slice(&cpu.regs);
            v[8] = cpu.sbase[seg::FS];
            v[9] = cpu.sbase[seg::GS];
            let mut rt = MemRuntime { mem };
            let ex = self
                .tier
                .run(id, &mut rt, &mut v, &mut cpu.flags, &mut cpu.clock, stop_at);
            cpu.regs.copy_from_slice(&v[..8]);
            cpu.eip = ex.ip;
            match ex.reason {
                ExitReason::Fallback | ExitReason::Budget => {
                    if cpu.clock >= stop_at || is_thunk(cpu.eip) {
                        continue;
                    }
                    // The finer tier runs exactly the instruction at EIP.
                    self.absorb(mem);
                    let site = match self.tier.site(cpu.eip as u64) {
                        Some(s) => s,
                        None => self.build(cpu.eip, mem, is_thunk),
                    };
                    self.tier.note_fallback(site);
                    if let Some(x) = self.step(cpu, mem) {
                        return x;
                    }
                }
                ExitReason::Invalid | ExitReason::Divert => {
                    return Exit::Stop(x86_cpu::StopReason {
                        cs: cpu.sregs[seg::CS],
                        ip: cpu.eip,
                        bytes: Vec::new(),
                        what: "the µop engine met an invalid word (an arena bug)".into(),
                    })
                }
                _ => {}
            }
        }
    }
}
