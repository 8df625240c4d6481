//! The `jit` arm's way to run a program: [`Jit::run`] takes the place of
//! `e1::run_counting` in the µop arms' driver. Programs start on E1; one
//! whose entry counter (E1's `count`) reaches the threshold is compiled to
//! native code ([`crate::compile`]) and *diverted* in the arena
//! (`E1Arena::divert`), so E1 hands over to the dispatcher whenever it
//! enters it, through a link or the lookup table. Native code hands back at
//! its exits; a static exit whose link word is filled, or a computed exit the
//! lookup table resolves, continues in the dispatcher without leaving, as
//! E1 continues; everything else goes back to the driver exactly as E1's exit
//! would (same reason, IP, clock, link slot).
//!
//! The link protocol stays the arena's: compiled code reads its link words
//! in place, so lazy filling, re-pointing and unpatching (`unlink_all`
//! after host code wrote memory) apply to native code unchanged.
//!
//! It owns the compiled programs and their counters; it must not build
//! programs, touch the site table or decide anything the driver decides.

use crate::compile::{self, Decline, Native};
use crate::ctx::{self, code, Ctx};
use cranelift_codegen::isa::OwnedTargetIsa;
use shared_ir::e1::{self, E1Arena, E1Exit, E1State, LinkSlot, ProgId};
use shared_ir::exit::{Exit, ExitReason};
use shared_ir::ir::Program;
use shared_ir::machine::MachineRuntime;
use std::collections::{BTreeMap, HashMap};

/// Deterministic counters (all but `compile_ns`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JitStats {
    /// Programs compiled, and the machine code they took.
    pub compiled: u64,
    pub code_bytes: u64,
    /// Programs declined (they stay on E1), by reason.
    pub declined: u64,
    pub declined_by: BTreeMap<&'static str, u64>,
    /// Calls into native code, and E1 handing over to it.
    pub native_entries: u64,
    pub diverts: u64,
    /// Native exits the dispatcher continued itself (filled links, lookups).
    pub chained: u64,
    /// Host CPU time spent compiling (not deterministic).
    pub compile_ns: u64,
}

/// Compiled programs and the programs waiting to get hot.
pub struct Jit {
    isa: Option<OwnedTargetIsa>,
    threshold: u32,
    native: HashMap<u32, Native>,
    /// IR of programs not compiled yet (dropped once compiled or declined).
    ir: HashMap<u32, Program>,
    clock: fn() -> u64,
    since_sweep: u32,
    pub stats: JitStats,
}

/// The threshold the `jit` arm uses (entries of a program before it is
/// compiled): `docs/wasm.md`, "The jit arm", says how it was chosen.
pub const DEFAULT_THRESHOLD: u32 = 64;

impl Jit {
    /// A dispatcher compiling programs after `threshold` E1 entries (0: at
    /// the first entry); `clock` reads host CPU time for `compile_ns`.
    pub fn new(threshold: u32, clock: fn() -> u64) -> Jit {
        Jit {
            isa: compile::host_isa().ok(),
            threshold,
            native: HashMap::new(),
            ir: HashMap::new(),
            clock,
            since_sweep: 0,
            stats: JitStats::default(),
        }
    }

    /// Offers a program just installed in the arena as `id` (its IR after the
    /// arm's passes); it is compiled once hot.
    pub fn offer(&mut self, id: ProgId, p: Program) {
        self.ir.insert(id.0, p);
    }

    /// The program left the arena: drop what was kept for it.
    pub fn forget(&mut self, id: ProgId) {
        self.native.remove(&id.0);
        self.ir.remove(&id.0);
    }

    /// Everything left the arena.
    pub fn clear(&mut self) {
        self.native.clear();
        self.ir.clear();
    }

    /// Whether program `id` runs as native code.
    pub fn is_native(&self, id: ProgId) -> bool {
        self.native.contains_key(&id.0)
    }

    /// Programs held as native code now.
    pub fn live(&self) -> usize {
        self.native.len()
    }

    /// Compiles program `id` now if it is waiting (for tests and for
    /// threshold 0); `Ok(false)` if it is not waiting.
    pub fn compile_now<M: MachineRuntime>(
        &mut self,
        arena: &mut E1Arena,
        id: ProgId,
    ) -> Result<bool, Decline> {
        let Some(p) = self.ir.remove(&id.0) else {
            return Ok(false);
        };
        let t0 = (self.clock)();
        let r = match self.isa.as_ref() {
            Some(isa) => {
                let slot_of = |key: u64| arena.link_slot(id, key);
                compile::compile::<M>(isa, &p, &slot_of)
            }
            None => Err(Decline::Codegen("no host ISA".into())),
        };
        self.stats.compile_ns += (self.clock)().saturating_sub(t0);
        match r {
            Ok(n) => {
                self.stats.compiled += 1;
                self.stats.code_bytes += n.code_bytes as u64;
                arena.divert(id);
                self.native.insert(id.0, n);
                self.since_sweep += 1;
                if self.since_sweep >= 256 {
                    // Programs the arena dropped on its own (a head replaced
                    // by set_head) are never entered again: free their code.
                    self.since_sweep = 0;
                    self.native.retain(|k, _| arena.contains(ProgId(*k)));
                    self.ir.retain(|k, _| arena.contains(ProgId(*k)));
                }
                Ok(true)
            }
            Err(d) => {
                self.stats.declined += 1;
                *self.stats.declined_by.entry(d.name()).or_insert(0) += 1;
                Err(d)
            }
        }
    }

    /// Runs from program `entry` until an exit the driver must see; the
    /// contract of `e1::run_counting` (`uops` counts E1 ops only).
    pub fn run<M: MachineRuntime>(
        &mut self,
        arena: &mut E1Arena,
        m: &mut M,
        st: &mut E1State,
        entry: ProgId,
        limit: u64,
        uops: &mut u64,
    ) -> Option<E1Exit> {
        let mut cur = entry;
        loop {
            if !self.native.contains_key(&cur.0)
                && self.ir.contains_key(&cur.0)
                && arena.count(cur).unwrap_or(0) >= self.threshold
            {
                let _ = self.compile_now::<M>(arena, cur);
            }
            let Some(n) = self.native.get(&cur.0) else {
                let ex = e1::run_counting(arena, m, st, cur, limit, uops)?;
                if ex.exit.reason == ExitReason::Divert && self.native.contains_key(&ex.exit.ip) {
                    self.stats.diverts += 1;
                    cur = ProgId(ex.exit.ip);
                    continue;
                }
                return Some(ex);
            };
            self.stats.native_entries += 1;
            let start_left = limit.saturating_sub(st.clock).min(i64::MAX as u64) as i64;
            let mut c = Ctx {
                vregs: arena.vregs_mut().as_mut_ptr(),
                words: arena.words_ptr(),
                rt: std::ptr::null_mut(),
                ram: std::ptr::null_mut(),
                ram_len: 0,
                pages: std::ptr::null(),
                pages_len: 0,
                base: st.clock.wrapping_add(start_left as u64) as i64,
                left: start_left,
                fl: ctx::pack(st.flags),
                pending: 0,
                exit_ip: 0,
                exit_unbill: 0,
                exit_slot: 0,
                exit_key: 0,
                res: [0; 2],
            };
            ctx::refresh_view(&mut c, m);
            c.rt = m as *mut M as *mut std::ffi::c_void;
            // SAFETY: the code was compiled for `M` (this function is the only
            // caller and is generic over the same `M`); `c` outlives the call;
            // the vreg file, the word memory and the page view stay valid for
            // it (the helpers refresh the view after every runtime call).
            let r = unsafe { (n.entry)(&mut c) };
            st.flags = c.flags();
            st.clock = (c.base.wrapping_sub(c.left) as u64).wrapping_sub(c.exit_unbill as u64);
            let ip = c.exit_ip;
            let reason = match r {
                code::BUDGET => ExitReason::Budget,
                code::FALLBACK => ExitReason::Fallback,
                code::STOP => ExitReason::Stop,
                code::SMC => ExitReason::Smc,
                code::SERVICE => ExitReason::Service,
                code::SHADOW => ExitReason::Shadow,
                code::LINK => {
                    let slot = (c.exit_slot != 0).then_some(LinkSlot(c.exit_slot));
                    if let Some(t) = slot.and_then(|s| arena.linked(s)) {
                        self.stats.chained += 1;
                        cur = t;
                        continue;
                    }
                    return Some(E1Exit {
                        exit: Exit {
                            reason: ExitReason::Link { key: c.exit_key },
                            ip,
                        },
                        link: slot,
                    });
                }
                code::INDIRECT => {
                    if let Some(t) = arena.lookup(c.exit_key) {
                        self.stats.chained += 1;
                        cur = t;
                        continue;
                    }
                    ExitReason::Indirect { key: c.exit_key }
                }
                _ => ExitReason::Invalid,
            };
            return Some(E1Exit {
                exit: Exit { reason, ip },
                link: None,
            });
        }
    }
}
