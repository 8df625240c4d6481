//! The µop tier driver's machine-independent core, for every `only-*` arm:
//! the site table (code key → a µop program or "the finer tier runs this
//! instruction", with the lowering's reason), building a site (lower a
//! line that ends where a program already starts, run the arm's pass set,
//! install on E1, make it the key's head, drop what the arena evicted),
//! lazy link fill, retirement of what was built from written bytes, one
//! engine call with the guest registers resident in the vregs, and the
//! census counters (programs, lowered instructions, static and dynamic
//! µops, handbacks by reason, declines by reason and run-time refusals).
//!
//! It knows no machine: the driver reads the line's bytes, says which
//! model and [`LowerOpts`] apply, gives a [`MachineRuntime`] for the engine
//! call, keeps its code-write barrier (marking what [`Built::code`] names
//! and calling [`Tier::retire`] with what was written), and runs on its
//! own finer tier what a program hands back. It must not run guest
//! instructions, read guest memory or keep any machine's state.

use crate::e1::{self, E1Arena, E1State, LinkSlot, ProgId};
use crate::exit::{Exit, ExitReason};
use crate::flags::LazyFlags;
use crate::ir::AddrSize;
use crate::lower::{lower_line_until, LowerOpts};
use crate::machine::{MachineModel, MachineRuntime};
use crate::opt::{optimize, PassSet};
use iced_x86::{Decoder, DecoderOptions};
use std::collections::{BTreeMap, HashMap};

/// What runs at a code key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Site {
    /// A µop program (the arena's head for the key).
    Prog(ProgId),
    /// The first instruction does not lower: the finer tier runs it. The
    /// form and the lowering's reason, interned ([`Tier::form_name`]:
    /// `"Movsd_m32_m32: rep string at a32"`).
    Fallback(u32),
}

/// A site just built, and the guest bytes its program was lowered from
/// (the driver marks them for its store barrier).
pub struct Built {
    pub site: Site,
    pub code: Vec<(u32, u32)>,
}

/// The census counters: all functions of the guest run and the sequence of
/// limits the driver passed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TierCounters {
    pub programs_built: u64,
    pub instructions_lowered: u64,
    /// E1 ops of the programs built (static density = this /
    /// `instructions_lowered`).
    pub static_uops: u64,
    /// Dispatches retired inside programs.
    pub uop_insns: u64,
    /// E1 ops executed (dynamic density = this / `uop_insns`).
    pub uops: u64,
    /// Engine calls, and their exits by reason.
    pub runs: u64,
    pub handbacks: BTreeMap<&'static str, u64>,
    pub links_filled: u64,
    /// Programs retired because their bytes were written, and evicted by
    /// the arena.
    pub retired: u64,
    pub evictions: u64,
    /// Instructions the finer tier ran after a lowered form was refused at
    /// run time (a refused access, a helper fault, a budget tail).
    pub refused: u64,
}

impl TierCounters {
    /// Every counter as `name → value` (nested maps as `name.key`), for
    /// reports.
    pub fn fields(&self) -> BTreeMap<String, u64> {
        let mut m = BTreeMap::new();
        for (k, v) in [
            ("programs_built", self.programs_built),
            ("instructions_lowered", self.instructions_lowered),
            ("static_uops", self.static_uops),
            ("uop_insns", self.uop_insns),
            ("uops", self.uops),
            ("runs", self.runs),
            ("links_filled", self.links_filled),
            ("retired", self.retired),
            ("evictions", self.evictions),
            ("refused", self.refused),
        ] {
            m.insert(k.to_string(), v);
        }
        for (k, v) in &self.handbacks {
            m.insert(format!("handbacks.{k}"), *v);
        }
        m
    }
}

/// Name of an exit reason in [`TierCounters::handbacks`].
fn reason_name(r: ExitReason) -> &'static str {
    match r {
        ExitReason::Budget => "budget",
        ExitReason::Fallback => "fallback",
        ExitReason::Stop => "stop",
        ExitReason::Smc => "smc",
        ExitReason::Service => "service",
        ExitReason::Shadow => "shadow",
        ExitReason::Link { .. } => "link",
        ExitReason::Indirect { .. } => "indirect",
        ExitReason::Invalid => "invalid",
        ExitReason::Divert => "divert",
    }
}

/// The core of one µop arm.
pub struct Tier {
    arena: E1Arena,
    sites: HashMap<u64, Site>,
    /// Program id → its key, to drop a site when its program goes.
    keys: HashMap<u32, u64>,
    /// The link slot of the last unlinked static exit taken.
    pending: Option<LinkSlot>,
    passes: PassSet,
    /// Most instructions in one line.
    line_cap: usize,
    /// Interned declined forms (`Site::Fallback`'s index).
    forms: Vec<String>,
    form_ids: HashMap<String, u32>,
    /// Instructions the finer tier ran because the lowering declined them,
    /// by form id ([`Tier::note_fallback`]).
    declined: Vec<u64>,
    pub c: TierCounters,
}

impl Tier {
    /// An arm on pass set `passes` (naive: none), lines of at most
    /// `line_cap` instructions, an arena of `arena_words` E1 words.
    pub fn new(passes: PassSet, line_cap: usize, arena_words: usize) -> Tier {
        Tier {
            arena: E1Arena::new(arena_words),
            sites: HashMap::new(),
            keys: HashMap::new(),
            pending: None,
            passes,
            line_cap,
            forms: Vec::new(),
            form_ids: HashMap::new(),
            declined: Vec::new(),
            c: TierCounters::default(),
        }
    }

    /// What runs at `key`, if built.
    #[inline]
    pub fn site(&self, key: u64) -> Option<Site> {
        self.sites.get(&key).copied()
    }

    /// Builds the site at `model.key(cs_base, ip)` from `bytes` (the guest
    /// bytes at `cs_base + ip`, as many as the driver may lower from). The
    /// line ends, with a link, where another program already starts.
    pub fn build<M: MachineModel>(
        &mut self,
        model: &M,
        opts: LowerOpts,
        cs_base: u32,
        ip: u32,
        bytes: &[u8],
    ) -> Built {
        let key = model.key(cs_base, ip);
        let hi = model.key(cs_base, ip.wrapping_add(bytes.len() as u32));
        let stops: Vec<u32> = if hi > key {
            self.arena.heads_in(key + 1, hi).map(|k| k as u32).collect()
        } else {
            Vec::new()
        };
        let line = lower_line_until(model, opts, cs_base, ip, bytes, self.line_cap, &stops);
        let Some(p) = line.program else {
            let bitness = if model.default_asize() == AddrSize::A16 {
                16
            } else {
                32
            };
            let mut d = Decoder::with_ip(bitness, bytes, ip as u64, DecoderOptions::NONE);
            let form = if d.can_decode() {
                format!("{:?}", d.decode().code())
            } else {
                "no bytes".to_string()
            };
            let why = line.stop.unwrap_or("nothing to lower");
            let site = Site::Fallback(self.intern(format!("{form}: {why}")));
            self.sites.insert(key, site);
            return Built {
                site,
                code: Vec::new(),
            };
        };
        let p = if self.passes.is_empty() {
            p
        } else {
            optimize(&p, self.passes)
        };
        let id = match self.arena.install(&p) {
            Ok(id) => id,
            Err(_) => {
                let site = Site::Fallback(self.intern("the arena refused the program".into()));
                self.sites.insert(key, site);
                return Built {
                    site,
                    code: Vec::new(),
                };
            }
        };
        for ev in self.arena.take_evicted() {
            self.c.evictions += 1;
            self.forget(ev);
        }
        self.arena.set_head(id);
        self.c.programs_built += 1;
        self.c.instructions_lowered += line.instructions as u64;
        self.c.static_uops += self.arena.ops(id).unwrap_or(0) as u64;
        self.sites.insert(key, Site::Prog(id));
        self.keys.insert(id.0, key);
        Built {
            site: Site::Prog(id),
            code: p.code.clone(),
        }
    }

    /// The interned id of a declined form's name.
    fn intern(&mut self, name: String) -> u32 {
        if let Some(&i) = self.form_ids.get(&name) {
            return i;
        }
        let i = self.forms.len() as u32;
        self.forms.push(name.clone());
        self.form_ids.insert(name, i);
        self.declined.push(0);
        i
    }

    /// Every counter (see [`TierCounters::fields`]) plus the declined forms
    /// the finer tier ran, as `declined.FORM: REASON`.
    pub fn counters(&self) -> BTreeMap<String, u64> {
        let mut m = self.c.fields();
        for (name, &n) in self.forms.iter().zip(&self.declined) {
            if n > 0 {
                m.insert(format!("declined.{name}"), n);
            }
        }
        m
    }

    /// The name of a declined form (`Site::Fallback`'s index).
    pub fn form_name(&self, id: u32) -> &str {
        self.forms.get(id as usize).map_or("?", |s| s.as_str())
    }

    /// Drops the site of a program the arena no longer has.
    fn forget(&mut self, id: ProgId) {
        if let Some(key) = self.keys.remove(&id.0) {
            if self.sites.get(&key) == Some(&Site::Prog(id)) {
                self.sites.remove(&key);
            }
        }
    }

    /// Retires every program built from bytes in `[lo, hi)` (they were
    /// written) and forgets every fallback site, whose bytes may have
    /// changed too (cheap to rebuild); returns how many programs went.
    pub fn retire(&mut self, lo: u32, hi: u32) -> usize {
        let gone = self.arena.invalidate_range(lo, hi);
        for &id in &gone {
            self.forget(id);
        }
        self.c.retired += gone.len() as u64;
        if !gone.is_empty() {
            self.pending = None;
        }
        self.sites.retain(|_, s| matches!(s, Site::Prog(_)));
        gone.len()
    }

    /// Counts the finer tier running the instruction at a site: a decline
    /// (with its reason) or a run-time refusal of a lowered form.
    pub fn note_fallback(&mut self, site: Site) {
        match site {
            Site::Fallback(id) => self.declined[id as usize] += 1,
            Site::Prog(_) => self.c.refused += 1,
        }
    }

    /// Runs program `id` on E1 from the guest state: `regs` are the guest
    /// vregs (copied in and back), `flags` and `clock` the CPU's. The
    /// pending link slot, if any, is filled first (the driver stands at its
    /// target and it has a program now). Returns the exit; the caller sets
    /// its instruction pointer from `exit.ip`.
    pub fn run<R: MachineRuntime>(
        &mut self,
        id: ProgId,
        rt: &mut R,
        regs: &mut [u32],
        flags: &mut LazyFlags,
        clock: &mut u64,
        limit: u64,
    ) -> Exit {
        if let Some(slot) = self.pending.take() {
            if self.arena.fill_link(slot).is_some() {
                self.c.links_filled += 1;
            }
        }
        let n = regs.len();
        self.arena.vregs_mut()[..n].copy_from_slice(regs);
        let mut st = E1State {
            flags: *flags,
            clock: *clock,
        };
        let before = *clock;
        let mut uops = 0;
        let ex = e1::run_counting(&mut self.arena, rt, &mut st, id, limit, &mut uops);
        let Some(ex) = ex else {
            // The program is gone (cannot happen: sites follow the arena).
            return Exit {
                reason: ExitReason::Invalid,
                ip: 0,
            };
        };
        regs.copy_from_slice(&self.arena.vregs()[..n]);
        *flags = st.flags;
        *clock = st.clock;
        self.c.runs += 1;
        self.c.uops += uops;
        self.c.uop_insns += st.clock - before;
        *self
            .c
            .handbacks
            .entry(reason_name(ex.exit.reason))
            .or_default() += 1;
        self.pending = ex.link;
        ex.exit
    }
}
