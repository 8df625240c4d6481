//! The `only-<set>` arms (`only-naive`, `only-baseline`, `only-all`,
//! `only-constprop.dce`, ...) and the `jit` arm: one driver, parametrized by
//! a `shared_ir::opt::PassSet` and by how a program runs (E1, or E1 until
//! hot and then native code from the `jit` crate, the one arm allowed to
//! generate code at run time). Every guest instruction runs through a µop
//! program on E1, built with the naive lowering and then the set's passes
//! (none for `only-naive`); L1's machinery runs only the
//! instructions the op set cannot express (one at a time), spin sites (as L1
//! folds them), budget tails and single-step mode. Code the lowering does not
//! model (protected mode, V86, 32-bit code, real mode with other segment
//! limits) runs on a whole L1 engine of its own (`pm_l1`, its protected-mode
//! blocks): the two share the machine's code-write log, and each learns of
//! the other's unlogged stores through an epoch (see `run_on_l1`).
//!
//! Owns the drive loop, the site table (code key → µop program, L1 fallback
//! instruction, L1 spin block, uncached), inline builds (a new line ends
//! where a program already starts), lazy link fill, self-modifying-code
//! retirement, the epoch check after host code wrote RAM past the
//! code-write log, the instruction after a shadow exit (STI), and the arm's
//! counters. `OnlyNaive::drive` is one long function on purpose:
//! the exits of E1 and of the L1 side share the loop state (the link slot to
//! fill, the budget, the exit to report) and each branch is a few lines of
//! that state; split up, the state would travel through structs on every
//! transition.
//!
//! The clock contract is the session's `Engine::run`: stop exactly at
//! `limit`, return after exactly the instructions after which L1 returns
//! `Attention` (or more often, which is always exact), HLT / host calls /
//! stops as L1. Nothing here is charged to the guest clock: builds,
//! handbacks, links, retirements and flushes are free; only instructions are
//! billed, by E1's `clock.check` or by `exec::run_op`.
//!
//! It must not implement instruction semantics (µop programs come from
//! `shared_ir::lower`, L1 ops from the CPU decoder) and must never let the
//! guest observe where programs are cut.

use super::code::{phys_ranges, CodeMap};
use super::l1side::{self, FBlock, L1Side, SpinStats};
use super::runtime::{if_rose_needs_session, DosRuntime, X87Cache};
use crate::bus::EngineBus;
use crate::cpu::l0::{StepOutcome, StopReason};
use crate::cpu::{seg, Cpu};
use crate::l1::block::{Spin, MAX_OPS};
use crate::l1::smc::YOUNG;
use crate::l1::tracked::Tracked;
use crate::l1::{EngineExit, KeyHasher, L1};
use crate::machine::Machine;
use crate::session::Engine;
use shared_ir::e1::{self, E1Arena, E1State, LinkSlot, ProgId};
use shared_ir::exit::ExitReason;
use shared_ir::ir::{code_key, Program, Term};
use shared_ir::lower::{lower_line_opts, LowerOpts};
use shared_ir::machine::RealMode16;
use shared_ir::opt::{optimize, Pass, PassSet};
use shared_ir::region::{lower_region, RegionLimits, RegionLine};
use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasherDefault;

/// Most instructions in one straight-line program.
pub const LINE_CAP: usize = 32;

/// How far a region grows when the set has `region` (see
/// `shared_ir::region`): lines, instructions, and whether traces follow
/// calls.
pub const REGION: RegionLimits = RegionLimits {
    max_lines: 16,
    max_insns: 192,
    line_cap: LINE_CAP,
    follow_calls: false,
};

/// Back edges a memory spin block (`Spin::Mem`: every op pure) may take
/// without a single fold before the driver builds it as a µop program. A
/// wait on memory folds at its first or second back edge (its state
/// repeats); a loop whose state changes every iteration (a counter, a
/// checksum) never folds, and runs many times faster on E1 than op by op on
/// the L1 side.
pub const SPIN_DEMOTE: u64 = 64;

/// The highest CS base whose 64 KiB segment (plus a 15-byte fetch window)
/// stays below 1 MiB: code keyed there never depends on the A20 gate.
pub const HMA_REACH: u32 = 0x10_0000 - 0x1_0000 - 16;

/// Most dispatches one slice of device-window code runs on the arm's L1
/// engine before the driver looks again (each slice after the driver ran
/// moves L1's epoch: its blocks are compared with memory on next entry).
pub const DEVICE_SLICE: u64 = 4096;

/// A region only takes lines within this many bytes of its head (and looks
/// for existing program heads in that window).
pub const REGION_WINDOW: u32 = 2048;

/// Appends the bytes at `cs_base:ip` a line may be lowered from: cacheable,
/// not volatile, inside the 64 KiB segment, at most `max` and at most a
/// line's worth.
fn line_bytes(
    code: &CodeMap,
    smc: &crate::l1::smc::Smc,
    ram: &[u8],
    cs_base: u32,
    ip: u32,
    max: usize,
    out: &mut Vec<u8>,
) {
    let max = (0x1_0000 - (ip & 0xFFFF))
        .min(LINE_CAP as u32 * 15)
        .min(max.min(u32::MAX as usize) as u32);
    for i in 0..max {
        let p = code.phys(cs_base.wrapping_add(ip + i));
        if !CodeMap::cacheable(p) || smc.is_volatile(p) {
            break;
        }
        out.push(ram[p as usize]);
    }
}

/// What the machine state lets the lowering assume (see
/// `shared_ir::lower::LowerOpts`): the interrupt table at 0 with limit
/// 3FFh, FWAIT unable to fault, and the x87 escape unable to raise #NM (x87
/// instructions then run in E1 through [`super::runtime::run_x87`]; other
/// runtimes refuse them, which is exact). Only instructions on the L1 side
/// can change any of these (LIDT, writes to CR0), so the driver checks
/// after them.
pub fn lower_opts(cpu: &Cpu) -> LowerOpts {
    use crate::cpu::cr0::{EM, MP, TS};
    LowerOpts {
        ivt_at_zero: cpu.idt_base == 0 && cpu.idt_limit == 0x3FF,
        wait_is_nop: cpu.cr0 & (MP | TS) != (MP | TS),
        x87: cpu.cr0 & (EM | TS) == 0,
    }
}

type Map<K, V> = HashMap<K, V, BuildHasherDefault<KeyHasher>>;

/// What runs at a code key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Site {
    /// A µop program (the arena's head for the key).
    Prog(ProgId),
    /// The instruction is not expressible: its one-op L1 block.
    Fallback(u32),
    /// An L1 spin block, folded as L1 folds it.
    Spin(u32),
    /// The bytes cannot be cached (device window, volatile): fetched and
    /// decoded every time.
    Uncached,
    /// The `uop` arm's cold code: an L1 block run on the L1 side, one pass
    /// per entry, until its head has been entered `Warm::k` times; then the
    /// head is built as a µop program on the arm's pass set.
    Cold(u32),
}

/// What the driver keeps per program.
struct ProgMeta {
    key: u64,
    /// Built on the upper pass set of a tier-up arm (or the arm's only set).
    upper: bool,
    ranges: Vec<(u32, u32)>,
    src: Vec<u8>,
    epoch: u32,
    born: u64,
}

/// Deterministic counters (all but the `*_ns` timings are functions of the
/// guest run and of the sequence of `limit`s the session passed).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Counters {
    /// Dispatches retired inside `run`, and where.
    pub dispatches: u64,
    /// Dispatches retired inside µop programs (x86 instructions and REP
    /// elements run as µops).
    pub uop_insns: u64,
    /// E1 ops executed (every engine transition, links and jumps included).
    pub uops: u64,
    /// Single instructions L1 ran for the arm (not expressible, or refused
    /// at run time), and their dispatches.
    pub fallbacks: u64,
    pub fallback_dispatches: u64,
    /// Instructions run one by one at the end of a slice a program did not
    /// fit (budget tails); in an interrupt shadow, in single-step mode or at
    /// an uncached site; and of all those, the ones fetched and decoded
    /// every time (TF set, bytes not cacheable).
    pub tail_steps: u64,
    pub single_steps: u64,
    pub uncached_steps: u64,
    /// Dispatches of protected-mode, V86 or 32-bit code (and real mode
    /// with other limits), which the naive lowering (`RealMode16`) does not
    /// cover, and the runs that took them: all run on the arm's own L1
    /// engine (its counters are the report's `pm_l1` object).
    pub pm_dispatches: u64,
    pub pm_runs: u64,
    /// Slices of real-mode code in a device window (the VGA window) run
    /// on that L1 engine, and their dispatches (in `pm_dispatches` too).
    pub device_slices: u64,
    pub device_dispatches: u64,
    /// Spin-block entries, folds, and all dispatches spent in spin blocks.
    pub spin_entries: u64,
    pub spin_folds: u64,
    pub spin_dispatches: u64,
    /// Memory spin blocks built as µop programs after `SPIN_DEMOTE` back
    /// edges without a fold (compute loops, not waits).
    pub spin_demoted: u64,
    /// Programs built, the x86 instructions lowered into them, their E1
    /// ops (static density = static_uops / instructions_lowered).
    pub programs_built: u64,
    pub instructions_lowered: u64,
    pub static_uops: u64,
    /// L1 blocks compiled for fallbacks and spins.
    pub l1_blocks: u64,
    /// Host thread CPU time spent building programs and L1 blocks (not
    /// deterministic; `host_clock`, the clock the oracle's arm timings use,
    /// each build counted once even when one build asks for another).
    pub build_ns: u64,
    /// E1 exits back to the driver, in total and by reason.
    pub handbacks: u64,
    pub handbacks_by_reason: BTreeMap<&'static str, u64>,
    /// Single instructions L1 ran because the op set lacks them, by form
    /// (mnemonic); and those refused at run time (a limit, a helper fault).
    pub fallbacks_by_form: BTreeMap<String, u64>,
    pub refusals_by_form: BTreeMap<String, u64>,
    /// Links filled lazily.
    pub links_filled: u64,
    /// `only-t<K>`: programs rebuilt on the upper set after K entries.
    pub tier_ups: u64,
    /// `uop`: cold L1 blocks compiled, passes run over them, the dispatches
    /// those passes retired, and heads that got hot and were built as µop
    /// programs.
    pub cold_blocks: u64,
    pub cold_passes: u64,
    pub cold_dispatches: u64,
    pub hot_heads: u64,
    /// Guest stores into code bytes; programs and L1 blocks retired by
    /// them, by logged host writes, or found stale after host code ran.
    pub smc_stores: u64,
    pub smc_retired: u64,
    pub host_retired: u64,
    pub verified: u64,
    pub stale_retired: u64,
    /// Host calls after which RAM had been written past the code-write log
    /// (every program checked against memory again).
    pub host_epochs: u64,
    /// Hand-overs from `pm_l1` after which every program was checked
    /// against memory again (L1's stores were not all seen).
    pub foreign_epochs: u64,
    pub evictions: u64,
    pub flushes: u64,
    /// A20 gate moves seen (what was fetched past 1 MiB retired, the rest
    /// kept).
    pub a20_moves: u64,
    /// Calls of `run` and how they ended.
    pub runs: u64,
    pub exits_reached: u64,
    pub exits_attention: u64,
    pub exits_other: u64,
}

/// Why E1 handed control back to the driver: the slots of
/// `handbacks_by_reason`, named by [`Handback::NAMES`] in this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Handback {
    Attention,
    Budget,
    Fallback,
    /// IF rose (IRET, POPF) with no interrupt requested: resumed in the
    /// same engine call, as L1 goes on in `general`.
    IfRose,
    Indirect,
    Invalid,
    Link,
    Shadow,
    Smc,
    Stop,
}

impl Handback {
    /// The counter keys (`handbacks_by_reason.NAME`), by discriminant.
    const NAMES: [&'static str; 10] = [
        "attention",
        "budget",
        "fallback",
        "if_rose",
        "indirect",
        "invalid",
        "link",
        "shadow",
        "smc",
        "stop",
    ];
}

/// The `only-naive` engine.
pub struct OnlyNaive {
    arena: E1Arena,
    /// Handbacks by reason, indexed by [`Handback`] (folded into
    /// `Counters::handbacks_by_reason` when the counters are read).
    handbacks_by: [u64; Handback::NAMES.len()],
    progs: Map<u32, ProgMeta>,
    sites: Map<u64, Site>,
    /// One-instruction L1 blocks by key (fallbacks, refusals, budget tails).
    singles: Map<u64, u32>,
    /// Whether the single block's instruction is expressible in µops (a
    /// fallback through it is then a run-time refusal).
    l1: L1Side,
    code: CodeMap,
    epoch: u32,
    /// Host code may have written code unseen: links must be checked again.
    stale: bool,
    /// After a host-call exit: `Memory::raw_gen` when it happened.
    host_gen: Option<u64>,
    /// The link slot of the last unlinked static exit, filled once the
    /// driver stands at its target with a program there.
    pending_slot: Option<LinkSlot>,
    /// Re-enter the indirect lookup entry of the next program entered.
    refresh_lookup: bool,
    hits: Vec<u32>,
    x87: X87Cache,
    /// IPs where programs start inside the line being built.
    stops: Vec<u32>,
    /// Interned forms: name, fallbacks, refusals; and whether the form is
    /// expressible at all.
    forms: Vec<(String, u64, u64)>,
    form_ids: BTreeMap<String, u32>,
    expressible: Map<u32, bool>,
    /// Census mode: instruction forms executed, lowered or not.
    pub census: Option<Box<FormCensus>>,
    /// Builds in progress (`build` may call `single`): only the outermost
    /// one reads the clock, so nothing is counted twice.
    build_nesting: u32,
    /// What the live programs were lowered assuming.
    opts: LowerOpts,
    /// The optimizer passes every program goes through after lowering.
    passes: PassSet,
    /// The arm's name (`only-` and the set's canonical spelling, or `jit`).
    name: &'static str,
    /// `only-t<K>`: programs start on `passes` (naive lines, counting
    /// entries) and a program whose entry counter reaches `k` is rebuilt on
    /// `upper` (regions, every pass), swapped in place as the head of its
    /// key (`E1Arena::set_head` re-points every inbound link).
    tier_up: Option<TierUp>,
    /// The build in progress is an upper-tier build.
    building_upper: bool,
    /// The build in progress replaces a memory spin block that looped
    /// `SPIN_DEMOTE` times without a fold: a program, never a spin site.
    no_spin: bool,
    /// The `uop` arm: code starts as L1 blocks (no µop build), a block head
    /// entered `k` times is built as a µop program on `passes`.
    warm: Option<Warm>,
    /// The `jit` arm: programs run through its dispatcher, compiled when hot.
    #[cfg(not(target_family = "wasm"))]
    jit: Option<Box<jit::Jit>>,
    /// E1 ops executed by op number (`profile_ops`; the census's
    /// breakdown). Off in the arms: the plain counting engine runs then.
    op_profile: Option<Box<e1::OpProfile>>,
    /// The L1 engine that runs what the lowering does not model (made at
    /// the first such run).
    pm_l1: Option<Box<L1<Machine>>>,
    /// This driver ran guest code since `pm_l1` last ran: `pm_l1` did not
    /// see those stores (E1's page view writes RAM directly).
    pm_l1_behind: bool,
    /// `pm_l1` ran guest code since the driver last ran code: its store
    /// monitor turned the machine's log off, so the driver did not see
    /// those stores.
    driver_behind: bool,
    /// `pm_l1`'s flush count when the driver last looked (an L1 flush
    /// clears every code mark of the machine, the driver's too).
    pm_l1_flushes: u64,
    pub c: Counters,
}

/// The tier-up policy of `only-t<K>`.
#[derive(Clone, Copy, Debug)]
pub struct TierUp {
    /// Entry (header) count that makes a program hot.
    pub k: u32,
    /// The pass set hot programs are rebuilt on.
    pub upper: PassSet,
}

/// The `uop` arm's policy: how many entries make a cold head hot.
#[derive(Clone, Copy, Debug)]
pub struct Warm {
    pub k: u32,
}

/// The `uop` arm's default heat threshold and pass set (docs/optimizer.md,
/// "The uop arm", has the measurements they were chosen from).
pub const UOP_DEFAULT_K: u32 = 8;
pub const UOP_DEFAULT_SET: &str = "baseline";

/// Arm names are `&'static str` in the `Engine` trait; a parametrized arm
/// interns its name once per distinct spelling (a handful per process).
fn intern(name: String) -> &'static str {
    use std::sync::Mutex;
    static NAMES: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut v = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(n) = v.iter().find(|n| **n == name) {
        return n;
    }
    let n: &'static str = Box::leak(name.into_boxed_str());
    v.push(n);
    n
}

/// Executions of one instruction form (iced-x86's `Code` name) in census
/// mode: inside µop programs (each program entry counts every instruction
/// of its line once), and on the L1 side because the form cannot be
/// lowered, or because a lowered form was refused at run time.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct FormCount {
    pub lowered: u64,
    pub fallback: u64,
    pub refused: u64,
    /// Why the lowering refuses the form ("" when it lowers).
    pub reason: String,
}

/// The census-mode record (see [`OnlyNaive::with_census`]).
#[derive(Default)]
pub struct FormCensus {
    names: Vec<String>,
    ids: BTreeMap<String, u32>,
    counts: Vec<FormCount>,
    /// Forms of each live program's instructions, in order.
    prog_forms: Map<u32, Vec<u32>>,
    /// Form of each single L1 block.
    single_forms: Map<u32, u32>,
}

impl FormCensus {
    fn intern(&mut self, name: String, reason: &str) -> u32 {
        if let Some(&i) = self.ids.get(&name) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(name.clone());
        self.counts.push(FormCount {
            reason: reason.to_string(),
            ..FormCount::default()
        });
        self.ids.insert(name, i);
        i
    }

    fn retire(&mut self, id: u32, entries: u32) {
        if let Some(forms) = self.prog_forms.remove(&id) {
            for f in forms {
                self.counts[f as usize].lowered += entries as u64;
            }
        }
    }

    /// Forms by name.
    pub fn forms(&self) -> BTreeMap<String, FormCount> {
        self.names
            .iter()
            .cloned()
            .zip(self.counts.iter().cloned())
            .collect()
    }
}

/// The iced-x86 `Code` name of the instruction at the start of `bytes`
/// (16-bit code), and why the naive lowering refuses it ("" if it lowers).
fn form_of(opts: LowerOpts, bytes: &[u8], cs_base: u32, ip: u32) -> (String, &'static str) {
    let mut d = iced_x86::Decoder::with_ip(16, bytes, ip as u64, iced_x86::DecoderOptions::NONE);
    let ins = d.decode();
    let name = if ins.is_invalid() {
        "invalid".to_string()
    } else {
        format!("{:?}", ins.code())
    };
    let len = if ins.is_invalid() {
        bytes.len()
    } else {
        ins.len()
    };
    let l = lower_line_opts(
        &RealMode16,
        opts,
        cs_base,
        ip,
        &bytes[..len.min(bytes.len())],
        1,
    );
    let why = if l.program.is_some() {
        ""
    } else {
        l.stop.unwrap_or("not lowered")
    };
    (name, why)
}

impl Default for OnlyNaive {
    fn default() -> Self {
        OnlyNaive::new()
    }
}

impl OnlyNaive {
    pub fn new() -> OnlyNaive {
        OnlyNaive {
            arena: E1Arena::new(e1::MEM_WORDS),
            handbacks_by: [0; Handback::NAMES.len()],
            progs: Map::default(),
            sites: Map::default(),
            singles: Map::default(),
            l1: L1Side::new(),
            code: CodeMap::new(false),
            epoch: 1,
            stale: false,
            host_gen: None,
            pending_slot: None,
            refresh_lookup: false,
            hits: Vec::new(),
            x87: X87Cache::default(),
            stops: Vec::new(),
            forms: Vec::new(),
            form_ids: BTreeMap::new(),
            expressible: Map::default(),
            census: None,
            build_nesting: 0,
            opts: LowerOpts::default(),
            passes: PassSet::NAIVE,
            name: "only-naive",
            tier_up: None,
            building_upper: false,
            no_spin: false,
            warm: None,
            #[cfg(not(target_family = "wasm"))]
            jit: None,
            op_profile: None,
            pm_l1: None,
            pm_l1_behind: false,
            driver_behind: false,
            pm_l1_flushes: 0,
            c: Counters::default(),
        }
    }

    /// The `jit` arm: `only-all` programs (with their entry counters, the
    /// tier-up signal) compiled to native code once a program has been
    /// entered `threshold` times on E1. `jit` is
    /// `jit::DEFAULT_THRESHOLD`; `jit-N` names another threshold.
    #[cfg(not(target_family = "wasm"))]
    pub fn with_jit(threshold: u32) -> OnlyNaive {
        let all = PassSet::named("all").unwrap_or_default();
        let mut e = OnlyNaive::with_passes(all.without(Pass::NoCount));
        e.jit = Some(Box::new(jit::Jit::new(
            threshold,
            crate::host_clock::thread_ns,
        )));
        e.name = if threshold == jit::DEFAULT_THRESHOLD {
            "jit"
        } else {
            intern(format!("jit-{threshold}"))
        };
        e
    }

    /// The engine for `jit` / `jit-N`, `None` for other names.
    fn jit_arm(arm: &str) -> Option<Result<OnlyNaive, String>> {
        let t = if arm == "jit" {
            None
        } else {
            Some(arm.strip_prefix("jit-")?)
        };
        #[cfg(not(target_family = "wasm"))]
        {
            Some(match t {
                None => Ok(OnlyNaive::with_jit(jit::DEFAULT_THRESHOLD)),
                Some(n) => n
                    .parse::<u32>()
                    .map(OnlyNaive::with_jit)
                    .map_err(|_| format!("arm `{arm}`: the threshold must be a number")),
            })
        }
        #[cfg(target_family = "wasm")]
        {
            let _ = t;
            Some(Err(format!(
                "arm `{arm}`: the jit arm generates native code and exists only in native builds"
            )))
        }
    }

    /// The `only-<set>` engine: programs go through `passes` after the
    /// naive lowering.
    pub fn with_passes(passes: PassSet) -> OnlyNaive {
        let mut e = OnlyNaive::new();
        e.passes = passes;
        e.name = intern(format!("only-{}", passes.canonical()));
        e
    }

    /// Also counts the E1 ops executed by kind (the census's breakdown,
    /// `uops_by_op` in the counters). Guest-visible behaviour is the same.
    pub fn profile_ops(mut self) -> OnlyNaive {
        self.op_profile = Some(Box::new([0; e1::OP_SLOTS]));
        self
    }

    /// `only-<set>` in census mode. The census reads the programs' entry
    /// counters for its coverage table, so `nocount` stays off there.
    pub fn with_census_passes(passes: PassSet) -> OnlyNaive {
        let mut e = OnlyNaive::with_passes(passes);
        e.passes = passes.without(Pass::NoCount);
        e.arena.log_counts(true);
        e.census = Some(Box::default());
        e
    }

    /// The `only-t<K>` engine: naive lines first, a program rebuilt on
    /// `all` (regions included) once its entry counter reaches `k`.
    pub fn with_tier_up(k: u32) -> OnlyNaive {
        let mut e = OnlyNaive::new();
        e.tier_up = Some(TierUp {
            k: k.max(1),
            upper: PassSet::named("all").unwrap_or(PassSet::NAIVE),
        });
        e.name = intern(format!("only-t{k}"));
        e
    }

    /// The `uop[K][-SET]` engine: every head starts as an L1 block on the L1
    /// side; once entered `k` times it is built as a µop program on
    /// `passes` (regions grow from it over cold code, and link to other hot
    /// heads). Cold code never pays a µop build; hot code never runs on the
    /// L1 side.
    pub fn with_uop(passes: PassSet, k: u32) -> OnlyNaive {
        let mut e = OnlyNaive::with_passes(passes);
        e.warm = Some(Warm { k: k.max(1) });
        let set = passes.canonical();
        let kk = if k == UOP_DEFAULT_K {
            String::new()
        } else {
            k.to_string()
        };
        let default_set = PassSet::named(UOP_DEFAULT_SET).is_some_and(|d| d == passes);
        e.name = intern(if default_set {
            format!("uop{kk}")
        } else {
            format!("uop{kk}-{set}")
        });
        e
    }

    /// The engine for `uop`, `uop<K>`, `uop-<SET>`, `uop<K>-<SET>`; `None`
    /// for other names.
    fn uop_arm(arm: &str) -> Option<Result<OnlyNaive, String>> {
        let rest = arm.strip_prefix("uop")?;
        let (k, set) = match rest.split_once('-') {
            Some((k, set)) => (k, Some(set)),
            None => (rest, None),
        };
        if !k.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let k = if k.is_empty() {
            UOP_DEFAULT_K
        } else {
            match k.parse::<u32>() {
                Ok(k) if k > 0 => k,
                _ => {
                    return Some(Err(format!(
                        "arm `{arm}`: the heat threshold must be a number above 0"
                    )))
                }
            }
        };
        let passes = match PassSet::parse(set.unwrap_or(UOP_DEFAULT_SET)) {
            Ok(p) => p,
            Err(e) => return Some(Err(format!("arm `{arm}`: {e}"))),
        };
        Some(Ok(OnlyNaive::with_uop(passes, k)))
    }

    /// Tier-ups done so far (programs rebuilt on the upper set).
    pub fn tier_ups(&self) -> u64 {
        self.c.tier_ups
    }

    /// The engine for an arm name `only-SET` (`SET` as
    /// `PassSet::parse` reads it, with `.` between items) or `only-t<K>`
    /// (tier-up after K entries); `None` if the name does not start with
    /// `only-`.
    pub fn for_arm(arm: &str) -> Option<Result<OnlyNaive, String>> {
        if let Some(e) = Self::jit_arm(arm) {
            return Some(e);
        }
        if let Some(e) = Self::uop_arm(arm) {
            return Some(e);
        }
        let set = arm.strip_prefix("only-")?;
        if let Some(k) = set
            .strip_prefix('t')
            .filter(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
        {
            return Some(
                k.parse::<u32>()
                    .map(OnlyNaive::with_tier_up)
                    .map_err(|e| format!("arm `{arm}`: tier-up count: {e}")),
            );
        }
        Some(
            PassSet::parse(set)
                .map(OnlyNaive::with_passes)
                .map_err(|e| format!("arm `{arm}`: {e}")),
        )
    }

    /// An engine that also records, per instruction form, how often the
    /// guest executed it inside µop programs and on the L1 side (for
    /// `toyvm census --coverage`). Guest-visible behaviour is the same.
    pub fn with_census() -> OnlyNaive {
        let mut e = OnlyNaive::new();
        e.arena.log_counts(true);
        e.census = Some(Box::default());
        e
    }

    /// Folds the entry counters of removed programs into the census.
    fn harvest_counts(&mut self) {
        let Some(c) = self.census.as_mut() else {
            return;
        };
        for (id, n) in self.arena.take_removed_counts() {
            c.retire(id.0, n);
        }
    }

    /// The census so far (live programs included; programs removed are
    /// folded in at the end of every `run`), if in census mode.
    pub fn form_census(&self) -> Option<BTreeMap<String, FormCount>> {
        let mut c = self.census.as_ref()?.forms();
        let census = self.census.as_ref()?;
        for (id, forms) in &census.prog_forms {
            let n = self.arena.count(ProgId(*id)).unwrap_or(0) as u64;
            for &f in forms {
                if let Some(x) = c.get_mut(&census.names[f as usize]) {
                    x.lowered += n;
                }
            }
        }
        Some(c)
    }

    /// Counts one handback. A fixed slot per reason, not a map: it runs on
    /// every E1 exit (KBDCHAIN, 1.2M exits in 20M dispatches: the
    /// string-keyed map's updates were 6.7% of the arm's host
    /// instructions); the report names the slots.
    #[inline]
    fn bump(&mut self, r: Handback) {
        self.handbacks_by[r as usize] += 1;
    }

    fn form_id(&mut self, name: String) -> u32 {
        if let Some(&i) = self.form_ids.get(&name) {
            return i;
        }
        let i = self.forms.len() as u32;
        self.forms.push((name.clone(), 0, 0));
        self.form_ids.insert(name, i);
        i
    }

    // ----- bookkeeping of programs and L1 blocks -------------------------

    fn forget_prog(&mut self, id: ProgId) -> Option<u64> {
        #[cfg(not(target_family = "wasm"))]
        if let Some(j) = self.jit.as_mut() {
            j.forget(id);
        }
        let meta = self.progs.remove(&id.0)?;
        for &(lo, hi) in &meta.ranges {
            self.code.remove(lo, hi);
        }
        if self.sites.get(&meta.key) == Some(&Site::Prog(id)) {
            self.sites.remove(&meta.key);
        }
        Some(meta.born)
    }

    fn forget_block(&mut self, id: u32) -> Option<u64> {
        let b = self.l1.remove(id)?;
        for &(lo, hi) in &b.ranges {
            self.code.remove(lo, hi);
        }
        if self.singles.get(&b.key) == Some(&id) {
            self.singles.remove(&b.key);
        }
        if matches!(self.sites.get(&b.key), Some(&Site::Fallback(x)) | Some(&Site::Spin(x)) | Some(&Site::Cold(x)) if x == id)
        {
            self.sites.remove(&b.key);
        }
        self.expressible.remove(&id);
        if let Some(c) = self.census.as_mut() {
            c.single_forms.remove(&id);
        }
        Some(b.born)
    }

    /// Retires every program and L1 block built from physical `[lo, hi)`;
    /// returns how many and the birth clock of the youngest.
    fn retire(&mut self, lo: u32, hi: u32) -> (u64, u64) {
        let mut n = 0;
        let mut born = 0u64;
        for id in self.arena.invalidate_range(lo, hi) {
            if let Some(b) = self.forget_prog(id) {
                n += 1;
                born = born.max(b);
            }
        }
        for id in self.l1.overlapping(lo, hi) {
            if let Some(b) = self.forget_block(id) {
                n += 1;
                born = born.max(b);
            }
        }
        (n, born)
    }

    /// Guest stores into code (µop stores and L1-side stores): retire what
    /// was built from the bytes, and count young retirements towards the
    /// byte's volatility (as L1 does).
    fn retire_hits(&mut self, hits: &[u32], now: u64) {
        for &p in hits {
            self.c.smc_stores += 1;
            if !self.code.test(p) {
                continue;
            }
            let (n, born) = self.retire(p, p + 1);
            if n > 0 {
                self.c.smc_retired += n;
                if now.saturating_sub(born) < YOUNG {
                    self.l1.smc.count_hit(p);
                }
            }
        }
    }

    /// Writes the machine logged inside code pages since the last look
    /// (host services, and guest stores already handled): retire what they
    /// hit.
    fn absorb_logged_writes(&mut self, m: &mut Machine) {
        let w = self.retire_logged_writes(m);
        // The log is the machine's, not the driver's: `pm_l1` hears of
        // every write in it too.
        if let Some(l1) = self.pm_l1.as_mut() {
            l1.absorb_writes(m, &w);
        }
    }

    /// Takes the machine's code-write log and retires the driver's code
    /// it hit (not `pm_l1`'s: after a logged slice the log holds L1's own
    /// stores, which its monitor has handled). Returns the log.
    fn retire_logged_writes(&mut self, m: &mut Machine) -> Vec<u32> {
        let w = m.mem.take_code_writes();
        for &p in &w {
            if self.code.test(p) {
                let (n, _) = self.retire(p, p + 1);
                self.c.host_retired += n;
            }
        }
        w
    }

    /// The A20 gate moved since the last real-mode run. Only code fetched
    /// from a segment that reaches past 1 MiB (CS base above `HMA_REACH`:
    /// FFFF:xxxx, the HMA) may now name other bytes: what was built there
    /// goes, the page view is rebuilt for the new state, and everything
    /// else stays (its physical bytes are its linear ones). Flushing it all
    /// instead rebuilt DOS/4GW's and the w84death OpenWatcom programs' code
    /// after each of their 4,000-6,000 gate moves.
    fn a20_moved(&mut self, m: &mut Machine) {
        let high = |key: u64| (key >> 32) as u32 > HMA_REACH;
        let progs: Vec<u32> = self
            .progs
            .iter()
            .filter(|(_, meta)| high(meta.key))
            .map(|(&id, _)| id)
            .collect();
        for id in progs {
            self.arena.remove(ProgId(id));
            self.forget_prog(ProgId(id));
        }
        for id in self.l1.ids() {
            if self.l1.get(id).is_some_and(|b| high(b.key)) {
                self.forget_block(id);
            }
        }
        self.sites.retain(|&k, _| !high(k));
        self.code.set_a20(m.mem.a20());
        self.pending_slot = None;
        self.c.a20_moves += 1;
    }

    /// Drops everything (a lost lowering assumption).
    fn flush(&mut self, m: &mut Machine) {
        self.arena.clear();
        #[cfg(not(target_family = "wasm"))]
        if let Some(j) = self.jit.as_mut() {
            j.clear();
        }
        self.harvest_counts();
        self.progs.clear();
        self.sites.clear();
        self.singles.clear();
        self.l1.clear();
        self.expressible.clear();
        self.code.reset(m.mem.a20());
        // The marks are the machine's: while `pm_l1` holds blocks they stay
        // (a mark on a page no code came from only logs writes for nothing).
        if !self.pm_l1.as_ref().is_some_and(|l1| l1.holds_code()) {
            m.clear_code_marks();
        }
        self.pending_slot = None;
        self.c.flushes += 1;
    }

    fn same_bytes(m: &Machine, ranges: &[(u32, u32)], src: &[u8]) -> bool {
        let ram = m.mem.ram();
        let mut i = 0usize;
        for &(lo, hi) in ranges {
            let n = (hi - lo) as usize;
            if ram.get(lo as usize..hi as usize) != src.get(i..i + n) {
                return false;
            }
            i += n;
        }
        true
    }

    /// After host code ran: is program `id` still built from what memory
    /// holds? If not it is retired.
    fn verify_prog(&mut self, id: ProgId, m: &mut Machine) -> bool {
        self.c.verified += 1;
        let Some(meta) = self.progs.get_mut(&id.0) else {
            return false;
        };
        if Self::same_bytes(m, &meta.ranges, &meta.src) {
            meta.epoch = self.epoch;
            return true;
        }
        self.arena.remove(id);
        self.forget_prog(id);
        self.c.stale_retired += 1;
        false
    }

    fn verify_block(&mut self, id: u32, m: &mut Machine) -> bool {
        self.c.verified += 1;
        let Some(b) = self.l1.get_mut(id) else {
            return false;
        };
        if Self::same_bytes(m, &b.ranges, &b.src) {
            b.epoch = self.epoch;
            return true;
        }
        self.forget_block(id);
        self.c.stale_retired += 1;
        false
    }

    /// Keeps the lowering's assumptions true: when the machine state no
    /// longer allows one the live programs were built with, they all go.
    fn check_assumptions(&mut self, cpu: &Cpu, m: &mut Machine) {
        let o = lower_opts(cpu);
        if o == self.opts {
            return;
        }
        let lost = (self.opts.ivt_at_zero && !o.ivt_at_zero)
            || (self.opts.wait_is_nop && !o.wait_is_nop)
            || (self.opts.x87 && !o.x87);
        if lost {
            self.flush(m);
        }
        self.opts = o;
    }

    // ----- building -------------------------------------------------------

    /// Compiles an L1 block at `cs_base:ip` and keeps it when `keep` accepts
    /// it; returns its id (`None`: not cacheable, or not kept).
    fn compile_block(
        &mut self,
        m: &mut Machine,
        cs_base: u32,
        ip: u32,
        max_ops: usize,
        now: u64,
        keep: impl FnOnce(&crate::l1::block::Compiled<Machine>) -> bool,
    ) -> Option<u32> {
        let bits = std::mem::take(&mut self.code.bits);
        let mut tb = Tracked::new(m, bits);
        let c = self.l1.compile(&mut tb, cs_base, ip, max_ops);
        self.code.bits = tb.into_code();
        let c = c?;
        if !keep(&c) {
            return None;
        }
        let first = &c.ops[0];
        let ins = crate::l1::classify::iced(&first.op.bytes, first.ip);
        let name = if first.class & crate::l1::classify::HOSTCALL != 0 {
            "hostcall".to_string()
        } else {
            format!("{:?}", ins.mnemonic()).to_lowercase()
        };
        let form = self.form_id(name);
        for &(lo, hi) in &c.ranges {
            self.code.add(lo, hi);
            m.mark_code(lo, hi);
        }
        self.c.l1_blocks += 1;
        Some(self.l1.insert(FBlock {
            key: code_key(cs_base, ip),
            cs_base,
            ops: c.ops,
            ranges: c.ranges,
            src: c.src,
            spin: c.spin,
            epoch: self.epoch,
            born: now,
            form,
            entries: 0,
            loops: 0,
            folds: 0,
        }))
    }

    /// The one-instruction L1 block at `cs_base:ip` (compiled on first use).
    fn single(&mut self, m: &mut Machine, cs_base: u32, ip: u32, now: u64) -> Option<u32> {
        let key = code_key(cs_base, ip);
        if let Some(&id) = self.singles.get(&key) {
            let ok =
                self.l1.get(id).is_some_and(|b| b.epoch == self.epoch) || self.verify_block(id, m);
            if ok {
                return Some(id);
            }
        }
        let t0 = self.build_clock_start();
        let id = self.compile_block(m, cs_base, ip, 1, now, |_| true);
        if let Some(id) = id {
            self.singles.insert(key, id);
            // Expressible in µops? (A fallback through it is then a refusal.)
            let b = self.l1.get(id).expect("just inserted");
            let bytes = b.ops[0].op.bytes;
            let len = b.ops[0].op.len as usize;
            let expr = lower_line_opts(
                &RealMode16,
                self.opts,
                cs_base,
                ip,
                &bytes[..len.min(15)],
                1,
            )
            .program
            .is_some();
            self.expressible.insert(id, expr);
            if let Some(c) = self.census.as_mut() {
                let (name, why) = form_of(self.opts, &bytes[..len.min(15)], cs_base, ip);
                let f = c.intern(name, why);
                c.single_forms.insert(id, f);
            }
        }
        self.build_clock_stop(t0);
        id
    }

    /// Builds the site at `cs_base:ip` inline (never at a later handback,
    /// so building never moves a slice boundary).
    fn build(&mut self, m: &mut Machine, cs_base: u32, ip: u32, now: u64) -> Site {
        self.build_on(m, cs_base, ip, now, self.passes)
    }

    /// [`Self::build`] on pass set `passes`.
    fn build_on(
        &mut self,
        m: &mut Machine,
        cs_base: u32,
        ip: u32,
        now: u64,
        passes: PassSet,
    ) -> Site {
        let t0 = self.build_clock_start();
        let key = code_key(cs_base, ip);
        let region = if passes.contains(Pass::Region) {
            RegionLimits {
                follow_calls: passes.contains(Pass::Calls),
                ..REGION
            }
        } else {
            RegionLimits::line(LINE_CAP)
        };
        // Programs that already start near here: lines end there and link.
        let (lo, hi) = if region.max_lines > 1 {
            (
                ip.saturating_sub(REGION_WINDOW),
                (ip + REGION_WINDOW).min(0xFFFF),
            )
        } else {
            (ip + 1, (ip + LINE_CAP as u32 * 15).min(0xFFFF))
        };
        self.stops.clear();
        // An upper-tier region grows over lower-tier programs (it supersedes
        // them on its paths); every other build stops at any program.
        let upper_only = self.building_upper;
        for k in self
            .arena
            .heads_in(code_key(cs_base, lo), code_key(cs_base, hi))
        {
            let h = k as u32;
            if h == ip {
                continue;
            }
            if upper_only {
                let lower = self
                    .arena
                    .head(k)
                    .and_then(|id| self.progs.get(&id.0))
                    .is_some_and(|p| !p.upper);
                if lower {
                    continue;
                }
            }
            self.stops.push(h);
        }
        let stops = std::mem::take(&mut self.stops);
        let r = {
            let code = &self.code;
            let smc = &self.l1.smc;
            let ram = m.mem.ram();
            let mut bytes = |at: u32, max: usize, out: &mut Vec<u8>| {
                if region.max_lines > 1 && at.abs_diff(ip) > REGION_WINDOW {
                    return;
                }
                line_bytes(code, smc, ram, cs_base, at, max, out)
            };
            lower_region(
                &RealMode16,
                self.opts,
                cs_base,
                ip,
                region,
                &stops,
                &mut bytes,
            )
        };
        self.stops = stops;
        let site = match r.program {
            Some(p) => {
                let p = optimize(&p, passes);
                if std::env::var_os("TOYVM_DUMP_PROGRAMS").is_some() {
                    eprintln!("{p}");
                }
                self.install(m, p, &r.lines, key, now)
            }
            None => match self.single(m, cs_base, ip, now) {
                Some(id) => Site::Fallback(id),
                None => Site::Uncached,
            },
        };
        self.sites.insert(key, site);
        self.build_clock_stop(t0);
        site
    }

    /// Starts timing a build; `None` when an outer build is already timing.
    fn build_clock_start(&mut self) -> Option<u64> {
        self.build_nesting += 1;
        (self.build_nesting == 1).then(crate::host_clock::thread_ns)
    }

    /// Ends a build started by [`Self::build_clock_start`].
    fn build_clock_stop(&mut self, t0: Option<u64>) {
        self.build_nesting -= 1;
        if let Some(t0) = t0 {
            self.c.build_ns += crate::host_clock::thread_ns().saturating_sub(t0);
        }
    }

    fn install(
        &mut self,
        m: &mut Machine,
        mut p: Program,
        lines: &[RegionLine],
        key: u64,
        now: u64,
    ) -> Site {
        let cs_base = (key >> 32) as u32;
        let ip = key as u32;
        let n: u64 = lines.iter().map(|l| l.instructions as u64).sum();
        // A program that branches back to its own head may be an L1 spin.
        let self_loop = p.blocks.iter().any(|b| match b.term {
            Term::Link { key: k, .. } => k == key,
            Term::Jmp(t) => t.0 == 0,
            Term::BrCc { t, f, .. } | Term::BrCmp { t, f, .. } | Term::BrArith { t, f, .. } => {
                t.0 == 0 || f.0 == 0
            }
            _ => false,
        });
        if self_loop && !self.no_spin {
            let spin = self.compile_block(m, cs_base, ip, MAX_OPS, now, |c| c.spin != Spin::None);
            if let Some(id) = spin {
                return Site::Spin(id);
            }
        }
        let insns: Vec<(u32, u32)> = p
            .code
            .iter()
            .flat_map(|&(lo, hi)| phys_ranges(&self.code, lo, hi - lo))
            .collect();
        p.code = insns.clone();
        let id = match self.arena.install(&p) {
            Ok(id) => id,
            Err(_) => {
                // Cannot happen for a verified lowering; fall back soft.
                return match self.single(m, cs_base, ip, now) {
                    Some(id) => Site::Fallback(id),
                    None => Site::Uncached,
                };
            }
        };
        self.arena.set_head(id);
        #[cfg(not(target_family = "wasm"))]
        if let Some(j) = self.jit.as_mut() {
            j.offer(id, p);
        }
        for ev in self.arena.take_evicted() {
            self.forget_prog(ev);
            self.c.evictions += 1;
        }
        let mut src = Vec::new();
        {
            let ram = m.mem.ram();
            for &(lo, hi) in &insns {
                src.extend_from_slice(&ram[lo as usize..hi as usize]);
            }
        }
        for &(lo, hi) in &insns {
            self.code.add(lo, hi);
            m.mark_code(lo, hi);
        }
        if let Some(c) = self.census.as_mut() {
            let mut forms = Vec::with_capacity(n as usize);
            let mut buf = Vec::new();
            for l in lines {
                buf.clear();
                line_bytes(
                    &self.code,
                    &self.l1.smc,
                    m.mem.ram(),
                    cs_base,
                    l.ip,
                    usize::MAX,
                    &mut buf,
                );
                let mut d = iced_x86::Decoder::with_ip(
                    16,
                    &buf,
                    l.ip as u64,
                    iced_x86::DecoderOptions::NONE,
                );
                for _ in 0..l.instructions {
                    let ins = d.decode();
                    forms.push(c.intern(format!("{:?}", ins.code()), ""));
                }
            }
            c.prog_forms.insert(id.0, forms);
        }
        self.c.programs_built += 1;
        self.c.static_uops += self.arena.ops(id).unwrap_or(0) as u64;
        self.c.instructions_lowered += n;
        self.progs.insert(
            id.0,
            ProgMeta {
                key,
                upper: self.building_upper,
                ranges: insns,
                src,
                epoch: self.epoch,
                born: now,
            },
        );
        Site::Prog(id)
    }

    /// `only-t<K>`: rebuilds program `id` on the upper set when its entry
    /// counter has reached K. The new program becomes the head of the key
    /// (inbound links re-pointed, the old one removed), between two runs of
    /// E1, so nothing guest-visible moves.
    fn maybe_tier_up(&mut self, id: ProgId, m: &mut Machine, now: u64) {
        let Some(t) = self.tier_up else {
            return;
        };
        let Some(meta) = self.progs.get(&id.0) else {
            return;
        };
        if meta.upper || self.arena.count(id).unwrap_or(0) < t.k {
            return;
        }
        let key = meta.key;
        self.building_upper = true;
        let site = self.build_on(m, (key >> 32) as u32, key as u32, now, t.upper);
        self.building_upper = false;
        match site {
            Site::Prog(new) if new != id => {
                // set_head removed the old program from the arena.
                self.forget_prog(id);
                self.sites.insert(key, site);
                self.c.tier_ups += 1;
            }
            _ => {
                // Could not rebuild (or it is a spin now): keep the old
                // program, and never try again.
                if let Some(p) = self.progs.get_mut(&id.0) {
                    p.upper = true;
                }
                if self.arena.contains(id) {
                    self.sites.insert(key, Site::Prog(id));
                }
            }
        }
    }

    // ----- the L1 side ----------------------------------------------------

    /// Runs exactly one instruction at CS:IP on the L1 side (its cached
    /// single block, or uncached), then retires what it stored into code.
    /// `why`: 0 fallback, 1 budget tail, 2 shadow / single-step / uncached
    /// site.
    fn step_one(
        &mut self,
        cpu: &mut Cpu,
        m: &mut Machine,
        stop_at: u64,
        why: u8,
    ) -> Option<EngineExit> {
        let before = cpu.clock;
        // As `l0::step`: the shadow covers only the boundary before this
        // instruction (the session has decided it already).
        cpu.shadow = false;
        // Blocks are real-mode code (decoded 16-bit, keyed by CS base and
        // IP): in protected, V86 or 32-bit code the step is uncached, as
        // L1's (an interrupt shadow there, after STI or MOV SS, ran a
        // 16-bit block on 32-bit code: 3DFONTZ under CWSDPMI).
        let id = if cpu.flags.tf() || !cpu.plain_real() {
            None
        } else {
            self.single(m, cpu.sbase[seg::CS], cpu.eip, cpu.clock)
        };
        let bits = std::mem::take(&mut self.code.bits);
        let mut tb = Tracked::new(m, bits);
        let out = match id.and_then(|id| self.l1.get(id).map(|b| (id, b))) {
            Some((id, b)) => {
                if why == 0 {
                    let f = b.form as usize;
                    let refused = self.expressible.get(&id) == Some(&true);
                    if refused {
                        self.forms[f].2 += 1;
                    } else {
                        self.forms[f].1 += 1;
                    }
                    if let Some(c) = self.census.as_mut() {
                        if let Some(&cf) = c.single_forms.get(&id) {
                            let x = &mut c.counts[cf as usize];
                            if refused {
                                x.refused += 1;
                            } else {
                                x.fallback += 1;
                            }
                        }
                    }
                }
                l1side::run_one(b, cpu, &mut tb, stop_at)
            }
            None => {
                self.c.uncached_steps += 1;
                l1side::uncached(cpu, &mut tb)
            }
        };
        let hits = std::mem::take(&mut tb.hits);
        self.code.bits = tb.into_code();
        self.check_assumptions(cpu, m);
        match why {
            0 => {
                self.c.fallbacks += 1;
                self.c.fallback_dispatches += cpu.clock - before;
            }
            1 => self.c.tail_steps += 1,
            _ => self.c.single_steps += 1,
        }
        if !hits.is_empty() {
            self.retire_hits(&hits, cpu.clock);
        }
        out
    }

    /// Protected-mode, V86 and 32-bit code, and real mode with other limits
    /// than 64 KiB: the naive lowering models plain real mode
    /// (`RealMode16`), so all of it runs on the arm's own L1 engine, with
    /// L1's protected-mode blocks, until L1 returns (the budget, an exit, a
    /// return to real mode: L1 ends its run there).
    ///
    /// The two engines share the machine and its code-write log, and each
    /// monitors only its own code's bytes, so at each hand-over the one
    /// taking over assumes the other stored anywhere: L1's epoch moves
    /// (every block compared with memory before it runs again) when the
    /// driver ran since, and the driver's moves when L1 ran since (at its
    /// next real-mode run). Logged writes reach both (`absorb_logged_writes`).
    ///
    /// `logged` (a short slice): L1 keeps the machine's code-write log on
    /// and leaves it, so the driver learns of L1's stores from the log,
    /// precisely, and its epoch does not move.
    fn run_on_l1(
        &mut self,
        cpu: &mut Cpu,
        m: &mut Machine,
        limit: u64,
        logged: bool,
    ) -> EngineExit {
        let l1 = self.pm_l1.get_or_insert_with(|| Box::new(L1::new()));
        if self.pm_l1_behind {
            l1.memory_changed_elsewhere();
            self.pm_l1_behind = false;
        }
        let start = cpu.clock;
        let exit = if logged {
            l1.run_logged(cpu, m, limit)
        } else {
            l1.run(cpu, m, limit)
        };
        self.c.pm_runs += 1;
        self.c.pm_dispatches += cpu.clock - start;
        if !logged {
            self.driver_behind = true;
        }
        let flushes = l1.counters.flushes;
        if flushes != self.pm_l1_flushes {
            // L1 cleared every code mark, the driver's too: the pages its
            // live code came from are marked again.
            self.pm_l1_flushes = flushes;
            self.code.mark_pages(m);
        }
        exit
    }

    /// The driver is about to run guest code itself: take over from
    /// `pm_l1` (see `run_on_l1`).
    fn take_over_from_l1(&mut self) {
        if self.driver_behind {
            self.driver_behind = false;
            self.epoch = self.epoch.wrapping_add(1);
            // Nothing may chain into a program unchecked.
            self.arena.unlink_all();
            self.c.foreign_epochs += 1;
        }
        self.pm_l1_behind = self.pm_l1.is_some();
    }

    /// The end of every `run`: logged writes, the counters of how it
    /// ended, and after a host call the generation the next run compares.
    fn finish_run(&mut self, m: &mut Machine, exit: EngineExit) -> StepOutcome {
        self.absorb_logged_writes(m);
        self.harvest_counts();
        match exit {
            EngineExit::Reached => self.c.exits_reached += 1,
            EngineExit::Attention => self.c.exits_attention += 1,
            EngineExit::HostCall(_) => {
                self.c.exits_other += 1;
                // The host runs a service now and may write memory any way
                // it likes: the next `run` sees whether it wrote past the
                // code-write log.
                self.host_gen = Some(m.mem.raw_gen());
            }
            _ => self.c.exits_other += 1,
        }
        exit.into_step()
    }

    // ----- the drive loop -------------------------------------------------

    /// Runs until `limit` or until the session must look (see the module
    /// header). One function on purpose.
    fn drive(&mut self, cpu: &mut Cpu, m: &mut Machine, limit: u64) -> EngineExit {
        loop {
            if cpu.clock >= limit {
                return EngineExit::Reached;
            }
            if !cpu.plain_real() {
                // An instruction on the L1 side entered protected mode (or
                // left real-mode limits): the session looks again and `run`
                // takes the L1 path.
                self.pending_slot = None;
                return EngineExit::Attention;
            }
            if cpu.flags.tf() {
                // Single-step mode: the reference path, one instruction.
                self.pending_slot = None;
                if let Some(x) = self.step_one(cpu, m, limit, 2) {
                    return x;
                }
                continue;
            }
            let cs_base = cpu.sbase[seg::CS];
            let key = code_key(cs_base, cpu.eip);
            let site = match self.sites.get(&key) {
                Some(&s) => s,
                None if self.warm.is_some() => self.cold(m, cs_base, cpu.eip, cpu.clock),
                None => self.build(m, cs_base, cpu.eip, cpu.clock),
            };
            match site {
                Site::Prog(id) => {
                    let fresh = self.progs.get(&id.0).is_some_and(|p| p.epoch == self.epoch);
                    if !fresh && !self.verify_prog(id, m) {
                        continue; // rebuilt from the new bytes next turn
                    }
                    if let Some(slot) = self.pending_slot.take() {
                        if self.arena.link_key(slot) == Some(key)
                            && self.arena.fill_link(slot).is_some()
                        {
                            self.c.links_filled += 1;
                        }
                    }
                    if std::mem::take(&mut self.refresh_lookup) {
                        self.arena.note_lookup(key);
                    }
                    // Resident registers for the whole engine call.
                    {
                        let v = self.arena.vregs_mut();
                        v[..8].copy_from_slice(&cpu.regs);
                        for s in 0..6 {
                            v[8 + s] = cpu.sregs[s] as u32;
                            v[14 + s] = cpu.sbase[s];
                        }
                    }
                    let mut st = E1State {
                        flags: cpu.flags,
                        clock: cpu.clock,
                    };
                    let before = cpu.clock;
                    let device_asked;
                    let ex = {
                        let mut rt = DosRuntime {
                            m,
                            code: &self.code,
                            hits: &mut self.hits,
                            fpu: &mut cpu.fpu,
                            cr0: cpu.cr0,
                            x87: &mut self.x87,
                            device_asked: false,
                        };
                        #[cfg(not(target_family = "wasm"))]
                        let jit = self.jit.as_mut();
                        #[cfg(target_family = "wasm")]
                        let jit: Option<&mut Box<()>> = None;
                        let ex = match jit {
                            #[cfg(not(target_family = "wasm"))]
                            Some(j) => j.run(
                                &mut self.arena,
                                &mut rt,
                                &mut st,
                                id,
                                limit,
                                &mut self.c.uops,
                            ),
                            _ => match self.op_profile.as_deref_mut() {
                                Some(prof) => e1::run_profiling(
                                    &mut self.arena,
                                    &mut rt,
                                    &mut st,
                                    id,
                                    limit,
                                    &mut self.c.uops,
                                    prof,
                                ),
                                None => e1::run_counting(
                                    &mut self.arena,
                                    &mut rt,
                                    &mut st,
                                    id,
                                    limit,
                                    &mut self.c.uops,
                                ),
                            },
                        };
                        device_asked = rt.device_asked;
                        ex
                    };
                    {
                        let v = self.arena.vregs();
                        cpu.regs.copy_from_slice(&v[..8]);
                        for s in 0..6 {
                            cpu.sregs[s] = v[8 + s] as u16;
                            cpu.sbase[s] = v[14 + s];
                        }
                    }
                    cpu.flags = st.flags;
                    cpu.clock = st.clock;
                    self.c.uop_insns += cpu.clock - before;
                    let Some(ex) = ex else {
                        // The head vanished under us (cannot happen): look again.
                        self.sites.remove(&key);
                        continue;
                    };
                    cpu.eip = ex.exit.ip;
                    self.c.handbacks += 1;
                    if !self.hits.is_empty() {
                        let hits = std::mem::take(&mut self.hits);
                        self.retire_hits(&hits, cpu.clock);
                        self.hits = hits;
                        self.hits.clear();
                    }
                    if self.tier_up.is_some() {
                        self.maybe_tier_up(id, m, cpu.clock);
                        let next = code_key(cpu.sbase[seg::CS], cpu.eip);
                        if let Some(&Site::Prog(n)) = self.sites.get(&next) {
                            self.maybe_tier_up(n, m, cpu.clock);
                        }
                    }
                    match ex.exit.reason {
                        ExitReason::Budget => {
                            self.bump(Handback::Budget);
                            // The next block does not fit: finish the slice
                            // one instruction at a time.
                            while cpu.clock < limit {
                                if let Some(x) = self.step_one(cpu, m, limit, 1) {
                                    return x;
                                }
                            }
                            return EngineExit::Reached;
                        }
                        ExitReason::Fallback => {
                            self.bump(Handback::Fallback);
                            if cpu.clock >= limit {
                                return EngineExit::Reached;
                            }
                            if let Some(x) = self.step_one(cpu, m, limit, 0) {
                                return x;
                            }
                        }
                        ExitReason::Shadow => {
                            // An STI opened the interrupt shadow: exactly the
                            // next instruction, then the session looks (what
                            // it would do itself: no interrupt is taken
                            // inside the shadow, no event is due before
                            // `limit`).
                            self.bump(Handback::Shadow);
                            if cpu.clock >= limit {
                                cpu.shadow = true;
                                return EngineExit::Reached;
                            }
                            return self
                                .step_one(cpu, m, limit, 2)
                                .unwrap_or(EngineExit::Attention);
                        }
                        ExitReason::Stop => self.bump(Handback::Stop),
                        ExitReason::Smc => self.bump(Handback::Smc),
                        ExitReason::Service => {
                            // Owed by a device, or by a `stop.if` (IF rose
                            // through IRET or POPF, or TF is set). E1 asks
                            // `stop_if_needed` before it owes one; the `jit`
                            // arm's native code does not, so a stop with no
                            // device behind it is judged here by the same
                            // rule and resumed when the session would find
                            // nothing to do.
                            if !device_asked
                                && !cpu.shadow
                                && cpu.clock < limit
                                && !if_rose_needs_session(m, cpu.flags.tf())
                            {
                                self.bump(Handback::IfRose);
                                continue;
                            }
                            self.bump(Handback::Attention);
                            return EngineExit::Attention;
                        }
                        ExitReason::Link { .. } => {
                            self.bump(Handback::Link);
                            self.pending_slot = ex.link;
                        }
                        ExitReason::Indirect { .. } => {
                            self.bump(Handback::Indirect);
                            self.refresh_lookup = true;
                        }
                        ExitReason::Invalid | ExitReason::Divert => {
                            self.bump(Handback::Invalid);
                            return EngineExit::Stop(StopReason {
                                cs: cpu.sregs[seg::CS],
                                ip: cpu.eip,
                                bytes: Vec::new(),
                                what: format!(
                                    "only-naive: E1 met a word that is not an op (arena word {})",
                                    ex.exit.ip
                                ),
                            });
                        }
                    }
                }
                Site::Fallback(_) => {
                    self.pending_slot = None;
                    if let Some(x) = self.step_one(cpu, m, limit, 0) {
                        return x;
                    }
                }
                Site::Spin(id) => {
                    self.pending_slot = None;
                    let fresh = self.l1.get(id).is_some_and(|b| b.epoch == self.epoch);
                    if !fresh && !self.verify_block(id, m) {
                        continue;
                    }
                    let before = cpu.clock;
                    let bits = std::mem::take(&mut self.code.bits);
                    let mut tb = Tracked::new(m, bits);
                    let mut stats = SpinStats::default();
                    let out = match self.l1.get(id) {
                        Some(b) => {
                            let leave_after = if b.unfolded_mem_spin() {
                                SPIN_DEMOTE.saturating_sub(b.loops)
                            } else {
                                u64::MAX
                            };
                            l1side::run_spin(id, b, cpu, &mut tb, limit, leave_after, &mut stats)
                        }
                        None => None,
                    };
                    let hits = std::mem::take(&mut tb.hits);
                    self.code.bits = tb.into_code();
                    self.c.spin_entries += 1;
                    self.c.spin_folds += stats.folds;
                    self.c.spin_dispatches += cpu.clock - before;
                    let demote = self.l1.get_mut(id).is_some_and(|b| {
                        b.loops += stats.loops;
                        b.folds += stats.folds;
                        b.unfolded_mem_spin() && b.loops >= SPIN_DEMOTE
                    });
                    if !hits.is_empty() {
                        self.retire_hits(&hits, cpu.clock);
                    }
                    if let Some(x) = out {
                        return x;
                    }
                    if demote
                        && hits.is_empty()
                        && code_key(cpu.sbase[seg::CS], cpu.eip) == key
                        && self.sites.get(&key) == Some(&Site::Spin(id))
                    {
                        // A memory spin whose state never repeated: a
                        // compute loop. Built as a µop program at its head,
                        // between two iterations (as any inline build).
                        self.forget_block(id);
                        self.c.spin_demoted += 1;
                        self.no_spin = true;
                        self.build(m, cs_base, cpu.eip, cpu.clock);
                        self.no_spin = false;
                    }
                }
                Site::Uncached => {
                    self.pending_slot = None;
                    let p = self.code.phys(cs_base.wrapping_add(cpu.eip));
                    if m.code_device(p, p + 1) {
                        // Code in a device window (Second Reality's U2 runs
                        // code out of the VGA window): L1 caches it under
                        // the bus's device promises, the driver does not, so
                        // a slice of it runs on `pm_l1`.
                        let stop = limit.min(cpu.clock + DEVICE_SLICE);
                        let before = cpu.clock;
                        let x = self.run_on_l1(cpu, m, stop, true);
                        self.c.device_slices += 1;
                        self.c.device_dispatches += cpu.clock - before;
                        // L1's stores are in the log: the driver's code
                        // they hit goes before anything else runs.
                        self.retire_logged_writes(m);
                        self.take_over_from_l1();
                        self.check_assumptions(cpu, m);
                        match x {
                            EngineExit::Reached if cpu.clock < limit => continue,
                            x => return x,
                        }
                    }
                    if let Some(x) = self.step_one(cpu, m, limit, 2) {
                        return x;
                    }
                }
                Site::Cold(id) => {
                    self.pending_slot = None;
                    let fresh = self.l1.get(id).is_some_and(|b| b.epoch == self.epoch);
                    if !fresh && !self.verify_block(id, m) {
                        continue;
                    }
                    let k = self.warm.map_or(u32::MAX, |w| w.k);
                    let hot = self.l1.get_mut(id).is_some_and(|b| {
                        b.entries += 1;
                        b.entries >= k
                    });
                    if hot {
                        // Built inline, between two instructions: nothing
                        // guest-visible moves (as any first build).
                        self.forget_block(id);
                        self.c.hot_heads += 1;
                        self.build(m, cs_base, cpu.eip, cpu.clock);
                        continue;
                    }
                    let before = cpu.clock;
                    let bits = std::mem::take(&mut self.code.bits);
                    let mut tb = Tracked::new(m, bits);
                    let out = match self.l1.get(id) {
                        Some(b) => l1side::run_pass(b, cpu, &mut tb, limit),
                        None => None,
                    };
                    let hits = std::mem::take(&mut tb.hits);
                    self.code.bits = tb.into_code();
                    self.c.cold_passes += 1;
                    self.c.cold_dispatches += cpu.clock - before;
                    // Any instruction may run here (LIDT, a CR0 write).
                    self.check_assumptions(cpu, m);
                    if !hits.is_empty() {
                        self.retire_hits(&hits, cpu.clock);
                    }
                    if let Some(x) = out {
                        return x;
                    }
                }
            }
        }
    }

    /// The `uop` arm's first look at a key: an L1 block (a spin block
    /// becomes a spin site, folded as L1 folds it; anything else a cold
    /// site). Bytes L1 cannot cache run uncached.
    fn cold(&mut self, m: &mut Machine, cs_base: u32, ip: u32, now: u64) -> Site {
        let t0 = self.build_clock_start();
        let site = match self.compile_block(m, cs_base, ip, MAX_OPS, now, |_| true) {
            Some(id) if self.l1.get(id).is_some_and(|b| b.spin != Spin::None) => Site::Spin(id),
            Some(id) => {
                self.c.cold_blocks += 1;
                Site::Cold(id)
            }
            None => Site::Uncached,
        };
        self.sites.insert(code_key(cs_base, ip), site);
        self.build_clock_stop(t0);
        site
    }

    /// Whether program `id` runs as the `jit` arm's native code.
    fn is_native(&self, id: ProgId) -> bool {
        #[cfg(not(target_family = "wasm"))]
        if let Some(j) = self.jit.as_ref() {
            return j.is_native(id);
        }
        let _ = id;
        false
    }

    /// The counters as the report shows them.
    pub fn counters_value(&self) -> serde_json::Value {
        let mut c = self.c.clone();
        for (name, &n) in Handback::NAMES.iter().zip(&self.handbacks_by) {
            if n > 0 {
                c.handbacks_by_reason.insert(name, n);
            }
        }
        for (name, fb, rf) in &self.forms {
            if *fb > 0 {
                c.fallbacks_by_form.insert(name.clone(), *fb);
            }
            if *rf > 0 {
                c.refusals_by_form.insert(name.clone(), *rf);
            }
        }
        #[cfg(not(target_family = "wasm"))]
        if let Some(j) = self.jit.as_ref() {
            // Compiling is building: the arm's build time includes it.
            c.build_ns += j.stats.compile_ns;
        }
        let mut v = serde_json::to_value(&c).unwrap_or(serde_json::Value::Null);
        #[cfg(not(target_family = "wasm"))]
        if let (Some(j), Some(o)) = (self.jit.as_ref(), v.as_object_mut()) {
            let s = &j.stats;
            o.insert(
                "jit".into(),
                serde_json::json!({
                    "compiled": s.compiled,
                    "declined": s.declined,
                    "declined_by": s.declined_by,
                    "code_bytes": s.code_bytes,
                    "native_entries": s.native_entries,
                    "diverts": s.diverts,
                    "chained": s.chained,
                    "compile_ns": s.compile_ns,
                    "live": j.live(),
                }),
            );
        }
        if let (Some(prof), Some(o)) = (self.op_profile.as_deref(), v.as_object_mut()) {
            let by_op: BTreeMap<String, u64> = prof
                .iter()
                .enumerate()
                .filter(|(_, n)| **n > 0)
                .map(|(k, n)| (e1::op_name(k as u32).to_string(), *n))
                .collect();
            o.insert(
                "uops_by_op".into(),
                serde_json::to_value(by_op).unwrap_or(serde_json::Value::Null),
            );
        }
        if let (Some(l1), Some(o)) = (self.pm_l1.as_deref(), v.as_object_mut()) {
            o.insert(
                "pm_l1".into(),
                serde_json::to_value(&l1.counters).unwrap_or(serde_json::Value::Null),
            );
        }
        if let (Some(forms), Some(o)) = (self.form_census(), v.as_object_mut()) {
            o.insert(
                "census_forms".into(),
                serde_json::to_value(forms).unwrap_or(serde_json::Value::Null),
            );
        }
        v
    }
}

impl Engine for OnlyNaive {
    fn name(&self) -> &'static str {
        self.name
    }

    fn run(&mut self, cpu: &mut Cpu, m: &mut Machine, limit: u64) -> StepOutcome {
        self.c.runs += 1;
        if !cpu.halted && cpu.clock < limit && !cpu.plain_real() {
            // Code the lowering does not model: L1 runs it (`run_on_l1`).
            // The driver's own checks (A20, assumptions, host epochs) wait
            // for its next real-mode run; logged writes reach both now.
            self.absorb_logged_writes(m);
            self.pending_slot = None;
            let start = cpu.clock;
            let exit = self.run_on_l1(cpu, m, limit, false);
            self.c.dispatches += cpu.clock - start;
            return self.finish_run(m, exit);
        }
        self.take_over_from_l1();
        if m.mem.a20() != self.code.a20() {
            self.a20_moved(m);
        }
        self.check_assumptions(cpu, m);
        if let Some(g) = self.host_gen.take() {
            // Host code ran since the last `run`. Its writes through the
            // code-write log are absorbed below; only if RAM was handed out
            // past the log (bulk copies, loads, DMA) may code have changed
            // unseen, and then every program is checked before it runs again.
            if m.mem.raw_gen() != g {
                self.epoch = self.epoch.wrapping_add(1);
                self.stale = true;
                self.c.host_epochs += 1;
            }
        }
        if self.stale {
            // Host code may have written memory it could not log: every
            // program is checked against memory before it runs again, so
            // nothing may chain into one unchecked.
            self.arena.unlink_all();
            self.stale = false;
        }
        self.absorb_logged_writes(m);
        let start = cpu.clock;
        let exit = if cpu.halted {
            EngineExit::Halt
        } else if cpu.clock >= limit {
            EngineExit::Reached
        } else if cpu.shadow {
            // Inside an interrupt shadow: exactly one instruction.
            self.pending_slot = None;
            self.step_one(cpu, m, limit, 2)
                .unwrap_or(EngineExit::Attention)
        } else {
            self.drive(cpu, m, limit)
        };
        self.c.dispatches += cpu.clock - start;
        self.finish_run(m, exit)
    }

    fn counters(&self) -> Option<serde_json::Value> {
        Some(self.counters_value())
    }

    fn describe_site(&self, cpu: &Cpu) -> Option<String> {
        if !cpu.plain_real() {
            if let Some(l1) = self.pm_l1.as_ref() {
                return Some(l1.describe(cpu.sbase[seg::CS], cpu.eip));
            }
        }
        let key = code_key(cpu.sbase[seg::CS], cpu.eip);
        Some(match self.sites.get(&key) {
            Some(Site::Prog(id)) => format!(
                "µop program #{} at {:04X}:{:04X} ({} E1 ops{})",
                id.0,
                cpu.sregs[seg::CS],
                cpu.eip,
                self.arena.ops(*id).unwrap_or(0),
                if self.is_native(*id) {
                    ", native code"
                } else {
                    ""
                }
            ),
            Some(Site::Fallback(id)) => format!(
                "L1 fallback instruction `{}`",
                self.l1
                    .get(*id)
                    .map(|b| self.forms[b.form as usize].0.clone())
                    .unwrap_or_default()
            ),
            Some(Site::Spin(id)) => format!(
                "L1 spin block ({:?}, {} ops)",
                self.l1.get(*id).map(|b| b.spin),
                self.l1.get(*id).map_or(0, |b| b.ops.len())
            ),
            Some(Site::Uncached) => "uncached instruction (L1 side)".into(),
            Some(Site::Cold(id)) => format!(
                "cold L1 block ({} ops, {} entries)",
                self.l1.get(*id).map_or(0, |b| b.ops.len()),
                self.l1.get(*id).map_or(0, |b| b.entries)
            ),
            None => "inside a µop program or not built yet".into(),
        })
    }
}
