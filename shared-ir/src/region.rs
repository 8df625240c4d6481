//! Region formation: one µop program from many straight lines.
//!
//! A region grows from a head IP by following the static exits (links) of
//! its lines: the taken and the not-taken side of every conditional branch,
//! the target of a JMP, the next IP after a line that reached its cap or a
//! REP, and (when asked) the callee of a CALL. A target already lowered in
//! the region becomes a jump inside the program, so a loop whose back edge
//! goes to a line of the region (its header: every back-edge target is one)
//! runs without leaving the program, and a diamond keeps both arms inside.
//! Lines end where another line of the region starts (its leaders), so no
//! instruction is lowered twice in one region; a leader found inside a line
//! already lowered splits it (the line is lowered again, shorter).
//!
//! Exactness is the lines' own: each line keeps its `clock.check` at its
//! head (one budget check per line, so a loop bills and checks once per
//! header visit), its sites and its exits. An internal jump replaces a
//! `link`, which would have tested for an owed stop before continuing in
//! the target; the target's `clock.check` makes the same test, and a line
//! whose head block has no `clock.check` (a line that starts with a REP)
//! gets an `exit.pending` at its head instead. Temporaries never live
//! across a line boundary (they are dead at every exit of a line), so lines
//! can share them. Only the head line keeps the entry counter (`count`),
//! which then counts entries plus back edges to the head: a loop header's
//! count.
//!
//! A line (other than the head) that branches back to its own start stays
//! out of the region and becomes its own program: a driver may fold it as
//! an L1 spin (a poll loop), as L1 does.
//!
//! It owns the shape of regions; it must not run anything, know a machine's
//! devices, or optimize (the passes in [`crate::opt`] run on its output).

#![forbid(unsafe_code)]

use crate::ir::*;
use crate::lower::{lower_line_until, LowerOpts, LoweredLine};
use crate::machine::MachineModel;
use std::collections::{BTreeMap, BTreeSet};

/// How far a region may grow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegionLimits {
    /// Most lines in one region (1: the straight line alone).
    pub max_lines: usize,
    /// Most x86 instructions in one region (a line in progress may pass it).
    pub max_insns: usize,
    /// Most instructions in one line.
    pub line_cap: usize,
    /// Follow a direct CALL into its callee (a trace through the call; the
    /// return is a computed exit either way).
    pub follow_calls: bool,
}

impl RegionLimits {
    /// One straight line (no region).
    pub const fn line(line_cap: usize) -> RegionLimits {
        RegionLimits {
            max_lines: 1,
            max_insns: line_cap,
            line_cap,
            follow_calls: false,
        }
    }
}

/// One line of a region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegionLine {
    /// IP of its first instruction.
    pub ip: u32,
    /// Instructions lowered into it.
    pub instructions: usize,
    /// Block index of its head in the region's program.
    pub block: u32,
}

/// A region, and what stopped its head line.
pub struct LoweredRegion {
    /// `None` when the head's first instruction is not expressible.
    pub program: Option<Program>,
    /// Instructions lowered, over every line.
    pub instructions: usize,
    /// The lines, head first.
    pub lines: Vec<RegionLine>,
    /// Why the head line ended (the coverage report's reason).
    pub stop: Option<&'static str>,
}

/// Lowers the region headed at `cs_base:ip`. `bytes(ip, max, out)` appends
/// at most `max` lowerable bytes at `ip` (cacheable, not volatile, inside the
/// segment: possibly none). `heads` (sorted ascending) are IPs where programs
/// already start in this code segment: a line ends before them and links
/// there, and the region does not grow into them (no code is lowered twice).
///
/// Build cost matters here (the `uop` arm and every `only-*` arm build
/// inline): a line only looks at the leaders and heads within its reach,
/// and fetches no further than the first of them plus one instruction.
pub fn lower_region<M: MachineModel>(
    model: &M,
    opts: LowerOpts,
    cs_base: u32,
    ip: u32,
    limits: RegionLimits,
    heads: &[u32],
    bytes: &mut dyn FnMut(u32, usize, &mut Vec<u8>),
) -> LoweredRegion {
    debug_assert!(
        heads.windows(2).all(|w| w[0] <= w[1]),
        "heads must be sorted"
    );
    let mut leaders: BTreeSet<u32> = BTreeSet::from([ip]);
    let mut order: Vec<u32> = vec![ip];
    let mut lines: BTreeMap<u32, LoweredLine> = BTreeMap::new();
    let mut buf = Vec::new();
    let mut total = 0usize;
    let mut head_stop = None;
    let reach = (limits.line_cap * MAX_INSN_LEN) as u32;
    let mut i = 0;
    while i < order.len() {
        let at = order[i];
        i += 1;
        let stops = stops_near(&leaders, heads, at, reach);
        fetch(bytes, at, reach, &stops, &mut buf);
        let l = lower_line_until(model, opts, cs_base, at, &buf, limits.line_cap, &stops);
        if at == ip {
            head_stop = l.stop;
        }
        let Some(p) = &l.program else {
            if at == ip {
                return LoweredRegion {
                    program: None,
                    instructions: 0,
                    lines: Vec::new(),
                    stop: l.stop,
                };
            }
            // Not expressible here: the link to it stays a link.
            leaders.remove(&at);
            continue;
        };
        if at != ip
            && p.blocks
                .iter()
                .any(|b| matches!(b.term, Term::Link { key, .. } if key == model.key(cs_base, at)))
        {
            // A line that loops on itself stays its own program: the driver
            // may fold it as a spin (a poll), as L1 does.
            leaders.remove(&at);
            continue;
        }
        total += l.instructions;
        if !(l.ends_in_call && !limits.follow_calls) {
            for b in &p.blocks {
                let Term::Link { key, .. } = b.term else {
                    continue;
                };
                let t = key as u32;
                if model.key(cs_base, t) != key
                    || leaders.contains(&t)
                    || heads.binary_search(&t).is_ok()
                    || order.len() >= limits.max_lines
                    || total >= limits.max_insns
                {
                    continue;
                }
                leaders.insert(t);
                order.push(t);
            }
        }
        lines.insert(at, l);
    }
    // Split lines that run over a leader found after they were lowered.
    let ends: Vec<(u32, u32)> = lines
        .iter()
        .map(|(&at, l)| (at, line_end(l, cs_base)))
        .collect();
    for (at, end) in ends {
        if leaders.range(at + 1..end).next().is_none() {
            continue;
        }
        let stops = stops_near(&leaders, heads, at, reach);
        fetch(bytes, at, reach, &stops, &mut buf);
        let l = lower_line_until(model, opts, cs_base, at, &buf, limits.line_cap, &stops);
        if at == ip {
            head_stop = l.stop;
        }
        total -= lines[&at].instructions;
        total += l.instructions;
        lines.insert(at, l);
    }
    splice(model, cs_base, ip, &order, lines, total, head_stop)
}

/// Longest x86 instruction, in bytes.
const MAX_INSN_LEN: usize = 15;

/// The stops a line at `at` can meet, ascending: region leaders and
/// existing heads in `[at, at + reach]` (a line never reads past `reach`
/// bytes, and `lower_line_until` only tests the IPs it decodes).
fn stops_near(leaders: &BTreeSet<u32>, heads: &[u32], at: u32, reach: u32) -> Vec<u32> {
    let hi = at.saturating_add(reach);
    let mut s: Vec<u32> = leaders.range(at..=hi).copied().collect();
    let a = heads.partition_point(|&h| h < at);
    let b = heads.partition_point(|&h| h <= hi);
    s.extend_from_slice(&heads[a..b]);
    s.sort_unstable();
    s.dedup();
    s
}

/// Fetches the bytes of the line at `at` into `buf`: up to `reach`, and no
/// further than the first stop after `at` plus one instruction (the line
/// ends before the stop; an instruction that starts before it may run over
/// it, and a line whose last instruction is cut by the end of the bytes
/// ends before that instruction and links there, which is exact).
fn fetch(
    bytes: &mut dyn FnMut(u32, usize, &mut Vec<u8>),
    at: u32,
    reach: u32,
    stops: &[u32],
    buf: &mut Vec<u8>,
) {
    let next = stops
        .iter()
        .find(|&&s| s > at)
        .map_or(usize::MAX, |&s| (s - at) as usize + MAX_INSN_LEN);
    buf.clear();
    bytes(at, (reach as usize).min(next), buf);
}

/// IP just past a line's last byte.
fn line_end(l: &LoweredLine, cs_base: u32) -> u32 {
    l.program
        .as_ref()
        .and_then(|p| p.code.first())
        .map_or(0, |&(_, hi)| hi.wrapping_sub(cs_base))
}

/// Joins the lines into one program: internal links become jumps.
fn splice<M: MachineModel>(
    model: &M,
    cs_base: u32,
    ip: u32,
    order: &[u32],
    mut lines: BTreeMap<u32, LoweredLine>,
    total: usize,
    stop: Option<&'static str>,
) -> LoweredRegion {
    let mut blocks: Vec<Block> = Vec::new();
    let mut heads: BTreeMap<u32, u32> = BTreeMap::new();
    let mut out_lines = Vec::new();
    let mut code: Vec<(u32, u32)> = Vec::new();
    let mut first: Option<Program> = None;
    for &at in order {
        let Some(l) = lines.remove(&at) else {
            continue;
        };
        let Some(p) = l.program else {
            continue;
        };
        let base = blocks.len() as u32;
        heads.insert(at, base);
        out_lines.push(RegionLine {
            ip: at,
            instructions: l.instructions,
            block: base,
        });
        code.extend_from_slice(&p.code);
        for mut b in p.blocks.iter().cloned() {
            b.term = b.term.map_targets(|t| BlockId(t.0 + base));
            blocks.push(b);
        }
        if at != ip {
            // Only the head counts entries.
            blocks[base as usize]
                .ops
                .retain(|o| !matches!(o, Op::Count));
        }
        if first.is_none() {
            first = Some(p);
        }
    }
    let Some(first) = first else {
        return LoweredRegion {
            program: None,
            instructions: 0,
            lines: out_lines,
            stop,
        };
    };
    // Internal links become jumps; a line head entered by a jump tests for an
    // owed stop as the link did (its clock.check does, else exit.pending).
    let mut jumped: BTreeSet<u32> = BTreeSet::new();
    for b in &mut blocks {
        if let Term::Link { key, .. } = b.term {
            let t = key as u32;
            if model.key(cs_base, t) == key {
                if let Some(&h) = heads.get(&t) {
                    b.term = Term::Jmp(BlockId(h));
                    jumped.insert(h);
                }
            }
        }
    }
    for (&at, &h) in &heads {
        if !jumped.contains(&h) {
            continue;
        }
        let ops = &mut blocks[h as usize].ops;
        let checks = ops
            .iter()
            .find(|o| !matches!(o, Op::Count))
            .is_some_and(|o| matches!(o, Op::ClockCheck { .. } | Op::ExitIfPending { .. }));
        if !checks {
            ops.insert(
                0,
                Op::ExitIfPending {
                    site: Site::new(at, 0),
                },
            );
        }
    }
    code.sort_unstable();
    let mut merged: Vec<(u32, u32)> = Vec::new();
    for (lo, hi) in code {
        match merged.last_mut() {
            Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
            _ => merged.push((lo, hi)),
        }
    }
    LoweredRegion {
        program: Some(Program {
            model: first.model,
            key: first.key,
            guest: first.guest,
            code: merged,
            blocks,
        }),
        instructions: total,
        lines: out_lines,
        stop,
    }
}
