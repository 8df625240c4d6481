//! The optimizer's pass manager: which passes exist, their switches, the
//! named pass sets, and running a set over a program with the IR verifier
//! after every pass (in debug builds and whenever a caller asks, as the
//! tests do).
//!
//! Owns [`Pass`], [`PassSet`] (parsing `naive`, `baseline`, `all` and pass
//! lists) and [`optimize`]. Each pass lives in its own module and must keep
//! the program's meaning exactly: the same guest state, exits, sites,
//! clock billing and machine effects, in the same order, on every path
//! (checked by `shared-ir/tests/opt_diff.rs` on the reference interpreter).
//! It must not know about x86 decoding or any machine's devices.
//!
//! Every pass but `clock` is block-local; `all` is `baseline` plus `calls`
//! and `clock`. CFG-wide flag liveness, hoisted guards and LICM are not
//! built (docs/optimizer.md).

#![forbid(unsafe_code)]

pub mod clock;
pub mod constprop;
pub mod dce;
pub mod flagfwd;
pub mod fuse;
pub mod guards;
pub mod ldpast;
pub mod merge;
pub mod nocount;

use crate::ir::verify::{verify, VerifyError};
use crate::ir::Program;

/// One optimizer pass (its switch is its presence in a [`PassSet`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pass {
    /// Region formation: programs grow from their head through the static
    /// exits of their lines (both sides of a branch, loop back edges), so a
    /// loop runs inside one program ([`crate::region`]). The driver reads
    /// this switch when it lowers; on a built program the pass does nothing.
    Region,
    /// Traces through calls: a region follows a direct CALL into its callee
    /// (the return stays a computed exit). Read by the driver with
    /// `Region`; on a built program it does nothing.
    Calls,
    /// Copy and constant propagation of temporaries into register operands,
    /// with constant folding of identities (`shl x, 0`, `add x, 0`).
    ConstProp,
    /// Address folding: a temporary known to be a constant or a copy of a
    /// register folds into the address expression (`[si+4]` as one
    /// address, base/index constants into the displacement).
    AddrFold,
    /// Fusion: a 32-bit pure ALU op into a temporary followed by a narrow
    /// move of that temporary into a register becomes one narrow ALU op.
    Fuse,
    /// Dead code: pure ops whose temporary result nobody reads, and moves
    /// of a lane onto itself.
    Dce,
    /// Flag forwarding: a flag-writing op that ends a block and the
    /// conditional branch on its record become one compare-and-branch µop.
    FlagFwd,
    /// Jump threading and straight-line merging: empty jump blocks are
    /// skipped, and a billed block that jumps to a billed block with no
    /// other predecessor absorbs it under one `clock.check`.
    Merge,
    /// One budget check per loop header (and the entry): the others go,
    /// each kept check bills the longest path to the next one, and shorter
    /// paths give the difference back on their edges (folded into the
    /// branch µops by the encoder). CFG-wide.
    Clock,
    /// Drops the tier-up entry counter (`count`) from programs that are
    /// never tiered up (an optimized program is already the top tier).
    NoCount,
    /// Load fusion past independent pure ops: `ld t; add sp, 2; mov r, t`
    /// (POP) becomes `ld r; add sp, 2`.
    LdPast,
    /// Segment-limit probes (`chk`) that cannot fail: the address size
    /// bounds the offset under the limit, or an identical probe passed
    /// earlier in the block.
    Guards,
}

impl Pass {
    /// Every pass, in the order [`optimize`] runs them.
    pub const ALL: [Pass; 12] = [
        Pass::Region,
        Pass::Calls,
        Pass::ConstProp,
        Pass::AddrFold,
        Pass::Fuse,
        Pass::LdPast,
        Pass::Guards,
        Pass::Dce,
        Pass::FlagFwd,
        Pass::Merge,
        Pass::Clock,
        Pass::NoCount,
    ];

    /// The pass's name in pass lists and reports.
    pub const fn name(self) -> &'static str {
        match self {
            Pass::Region => "region",
            Pass::Calls => "calls",
            Pass::ConstProp => "constprop",
            Pass::AddrFold => "addrfold",
            Pass::Fuse => "fuse",
            Pass::Dce => "dce",
            Pass::FlagFwd => "flagfwd",
            Pass::Merge => "merge",
            Pass::Clock => "clock",
            Pass::NoCount => "nocount",
            Pass::LdPast => "ldpast",
            Pass::Guards => "guards",
        }
    }

    pub fn from_name(s: &str) -> Option<Pass> {
        Pass::ALL.into_iter().find(|p| p.name() == s)
    }

    const fn bit(self) -> u32 {
        1 << self as u32
    }

    /// Runs this pass over `p` (no verification).
    pub fn run(self, p: &mut Program) {
        match self {
            Pass::Region | Pass::Calls => {}
            Pass::ConstProp => constprop::run(p, constprop::Mode::Operands),
            Pass::AddrFold => constprop::run(p, constprop::Mode::Addresses),
            Pass::Fuse => fuse::run(p),
            Pass::Dce => dce::run(p),
            Pass::FlagFwd => flagfwd::run(p),
            Pass::Merge => merge::run(p),
            Pass::Clock => clock::run(p),
            Pass::NoCount => nocount::run(p),
            Pass::LdPast => ldpast::run(p),
            Pass::Guards => guards::run(p),
        }
    }
}

/// A set of switched-on passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct PassSet(u32);

/// The named sets: name, passes.
pub const NAMED_SETS: &[(&str, &[Pass])] = &[
    ("naive", &[]),
    (
        "baseline",
        &[
            Pass::Region,
            Pass::ConstProp,
            Pass::AddrFold,
            Pass::Fuse,
            Pass::LdPast,
            Pass::Guards,
            Pass::Dce,
            Pass::FlagFwd,
            Pass::Merge,
            Pass::NoCount,
        ],
    ),
    ("all", &Pass::ALL),
];

impl PassSet {
    pub const NAIVE: PassSet = PassSet(0);

    pub fn of(passes: &[Pass]) -> PassSet {
        PassSet(passes.iter().fold(0, |a, p| a | p.bit()))
    }
    pub fn contains(self, p: Pass) -> bool {
        self.0 & p.bit() != 0
    }
    pub fn with(self, p: Pass) -> PassSet {
        PassSet(self.0 | p.bit())
    }
    pub fn without(self, p: Pass) -> PassSet {
        PassSet(self.0 & !p.bit())
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// The passes switched on, in running order.
    pub fn passes(self) -> impl Iterator<Item = Pass> {
        Pass::ALL.into_iter().filter(move |p| self.contains(*p))
    }
    pub fn named(name: &str) -> Option<PassSet> {
        NAMED_SETS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, ps)| PassSet::of(ps))
    }

    /// Parses a set: items separated by `,` or `.`; an item is a named set
    /// (`naive`, `baseline`, `all`), a pass name, or `~NAME` to switch a
    /// pass (or every pass of a named set) off again. `baseline.~dce` is
    /// baseline without dce. (`.` is the separator inside arm names:
    /// `only-constprop.dce`, because `+` and `@` belong to the oracle's
    /// test arms `BASE+KIND@N` and `,` separates arms in `--arms`.)
    pub fn parse(s: &str) -> Result<PassSet, String> {
        let mut set = PassSet::NAIVE;
        let mut any = false;
        for item in s.split([',', '.']).map(str::trim) {
            if item.is_empty() {
                continue;
            }
            any = true;
            let (off, name) = match item.strip_prefix('~') {
                Some(n) => (true, n),
                None => (false, item),
            };
            let add = if let Some(ns) = PassSet::named(name) {
                ns
            } else if let Some(p) = Pass::from_name(name) {
                PassSet::of(&[p])
            } else {
                return Err(format!(
                    "unknown pass or pass set `{name}` in `{s}` (sets: {}; passes: {})",
                    NAMED_SETS
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", "),
                    Pass::ALL.map(|p| p.name()).join(", ")
                ));
            };
            set = if off {
                PassSet(set.0 & !add.0)
            } else {
                PassSet(set.0 | add.0)
            };
        }
        if !any {
            return Err("empty pass set (give naive, baseline, all or a pass list)".into());
        }
        Ok(set)
    }

    /// Canonical spelling: a named set when it is one, else the passes
    /// joined by `.` (so it is valid inside an arm name).
    pub fn canonical(self) -> String {
        for (n, ps) in NAMED_SETS {
            if PassSet::of(ps) == self {
                return n.to_string();
            }
        }
        self.passes()
            .map(|p| p.name())
            .collect::<Vec<_>>()
            .join(".")
    }
}

/// A pass broke the program's well-formedness.
#[derive(Debug)]
pub struct PassError {
    pub pass: Pass,
    pub error: VerifyError,
}

impl std::fmt::Display for PassError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "after pass {}: {}", self.pass.name(), self.error)
    }
}

/// Runs the passes of `set` over `p`, verifying after every pass when
/// `check` is true (debug builds always check). On an error `p` is left
/// as the failing pass made it; callers should fall back to the program
/// they had.
pub fn optimize_checked(p: &mut Program, set: PassSet, check: bool) -> Result<(), PassError> {
    for pass in set.passes() {
        pass.run(p);
        if check || cfg!(debug_assertions) {
            verify(p).map_err(|error| PassError { pass, error })?;
        }
    }
    Ok(())
}

/// [`optimize_checked`] on a copy: returns the optimized program, or the
/// original when a pass produced malformed IR (never in a correct build;
/// debug builds and tests see the error through [`optimize_checked`]).
pub fn optimize(p: &Program, set: PassSet) -> Program {
    if set.is_empty() {
        return p.clone();
    }
    let mut q = p.clone();
    match optimize_checked(&mut q, set, false) {
        Ok(()) => q,
        Err(e) => {
            debug_assert!(false, "{e}\n{q}");
            p.clone()
        }
    }
}
