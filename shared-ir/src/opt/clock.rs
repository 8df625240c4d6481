//! `clock`: one budget check per loop header (and the entry), billing
//! exactly on every path.
//!
//! A region has a `clock.check` at the head of every line. This pass keeps
//! the checks of the entry and of loop headers (targets of back edges, so
//! every cycle still meets a check) and removes the others. Each kept
//! check at block `H` tests and bills `R(H)`, the most dispatches any path
//! from `H` can run before it reaches another kept check or leaves the
//! program; an edge whose path is shorter gives the difference back
//! (`clock` with a negative count on the edge, which the encoder folds into
//! the branch µop, so it costs no transition).
//!
//! Why it is exact. Write `n(B)` for what `B` billed at its head before
//! (0 for a block without a check) and `R(B) = n(B) + max R(S)` over its
//! successors `S` whose check goes. In the new program, a block `B` whose
//! check went is entered with `R(B)` billed ahead where the old one had
//! `n(B)` (the edge into it gives back `R(P) - n(P) - R(B)` from its
//! predecessor `P`'s surplus); so every site in `B` gets `unbill +
//! R(B) - n(B)` and reports the same dispatch as before, and an edge into a
//! kept check arrives with nothing ahead, as before. The kept check tests
//! for `R(H)`: when that does not fit the budget the program exits at `H`'s
//! head before anything of it happened (exact, invariant 2: a finer engine
//! runs the slice's tail). A removed check also tested for an owed stop at
//! its boundary; when a predecessor's ops may leave one owed, an
//! `exit.pending` at the block's head keeps that test.
//!
//! It applies only where billing is plain: every `clock.check` is its
//! block's first op, there is no bare `clock` op, and every loop header has
//! a check, and there is no [`Term::Rep`] (which tests and bills its
//! element itself); otherwise the program is left as it is. It must not move or
//! reorder any other op.

#![forbid(unsafe_code)]

use crate::ir::*;

/// Runs the pass.
pub fn run(p: &mut Program) {
    let n = p.blocks.len();
    if n == 0 {
        return;
    }
    // Billing must be plain: a REP element bills itself at its terminator.
    if p.blocks.iter().any(|b| matches!(b.term, Term::Rep { .. })) {
        return;
    }
    let mut own = vec![0u32; n];
    let mut checked = vec![false; n];
    for (i, b) in p.blocks.iter().enumerate() {
        for (k, op) in b.ops.iter().enumerate() {
            match *op {
                Op::Clock { .. } => return,
                Op::ClockCheck { n: c, .. } if k == 0 => {
                    own[i] = c;
                    checked[i] = true;
                }
                Op::ClockCheck { .. } => return,
                _ => {}
            }
        }
    }
    // Reachability and back edges (iterative DFS from the entry).
    let mut reach = vec![false; n];
    let mut header = vec![false; n];
    let mut state = vec![0u8; n]; // 0 new, 1 on stack, 2 done
    let mut stack: Vec<(usize, Vec<usize>)> = vec![(0, succs(&p.blocks[0]))];
    state[0] = 1;
    reach[0] = true;
    while let Some((b, ss)) = stack.last_mut() {
        let b = *b;
        match ss.pop() {
            Some(s) => match state[s] {
                0 => {
                    state[s] = 1;
                    reach[s] = true;
                    let next = succs(&p.blocks[s]);
                    stack.push((s, next));
                }
                1 => header[s] = true,
                _ => {}
            },
            None => {
                state[b] = 2;
                stack.pop();
            }
        }
    }
    let keep: Vec<bool> = (0..n).map(|b| b == 0 || header[b]).collect();
    if (0..n).any(|b| reach[b] && keep[b] && !checked[b]) {
        return;
    }
    // R over the acyclic graph of blocks without a kept check.
    let mut r: Vec<Option<u32>> = vec![None; n];
    for b in 0..n {
        if reach[b] {
            remainder(p, b, &keep, &own, &mut r);
        }
    }
    let rr = |b: usize| r[b].unwrap_or(own[b]);
    // Owed stops a predecessor may leave at a removed check's boundary.
    let mut owes_in = vec![false; n];
    for b in 0..n {
        if !reach[b] {
            continue;
        }
        let owes = may_owe(&p.blocks[b].ops) || !checked[b];
        for s in succs(&p.blocks[b]) {
            if owes {
                owes_in[s] = true;
            }
        }
    }
    // Rewrite blocks.
    let mut edge_blocks: Vec<Block> = Vec::new();
    let base = n as u32;
    for b in 0..n {
        if !reach[b] {
            continue;
        }
        let extra = rr(b) - own[b];
        let blk = &mut p.blocks[b];
        let head_site = match blk.ops.first() {
            Some(&Op::ClockCheck { site, .. }) => Some(site),
            _ => None,
        };
        for op in blk.ops.iter_mut() {
            if !matches!(op, Op::ClockCheck { .. }) {
                shift_sites(op, extra);
            }
        }
        shift_term(&mut blk.term, extra);
        if checked[b] {
            let site = head_site.unwrap_or(Site::new(0, 0));
            if keep[b] {
                blk.ops[0] = Op::ClockCheck { n: rr(b), site };
            } else if owes_in[b] {
                blk.ops[0] = Op::ExitIfPending {
                    site: Site::new(site.ip, rr(b)),
                };
            } else {
                blk.ops.remove(0);
            }
        }
        // Edges: give back what the path to each successor does not run.
        let out = own[b] as i64 - rr(b) as i64;
        let mut retarget = |s: BlockId| -> BlockId {
            let si = s.0 as usize;
            let into = if keep[si] { 0 } else { rr(si) as i64 };
            let adj = out + into;
            if adj == 0 {
                return s;
            }
            edge_blocks.push(Block {
                ops: vec![Op::Clock {
                    n: adj as i32 as u32,
                }],
                term: Term::Jmp(s),
            });
            BlockId(base + edge_blocks.len() as u32 - 1)
        };
        blk.term = blk.term.map_targets(&mut retarget);
    }
    p.blocks.extend(edge_blocks);
}

fn succs(b: &Block) -> Vec<usize> {
    b.term.succs().map(|s| s.0 as usize).collect()
}

/// `R(b)`: `own(b)` plus the longest remainder among successors whose
/// check goes (memoized; the graph of those is acyclic).
fn remainder(p: &Program, b: usize, keep: &[bool], own: &[u32], r: &mut [Option<u32>]) -> u32 {
    if let Some(v) = r[b] {
        return v;
    }
    // Iterative post-order to stay off the call stack on long chains.
    let mut stack = vec![(b, false)];
    while let Some((x, expanded)) = stack.pop() {
        if r[x].is_some() {
            continue;
        }
        let ss: Vec<usize> = succs(&p.blocks[x])
            .into_iter()
            .filter(|&s| !keep[s])
            .collect();
        if expanded {
            let m = ss.iter().map(|&s| r[s].unwrap_or(0)).max().unwrap_or(0);
            r[x] = Some(own[x] + m);
        } else {
            stack.push((x, true));
            for s in ss {
                if r[s].is_none() {
                    stack.push((s, false));
                }
            }
        }
    }
    r[b].unwrap_or(own[b])
}

/// Whether a stop may be owed (not yet reported) after these ops.
fn may_owe(ops: &[Op]) -> bool {
    let mut owed = false;
    for o in ops {
        match o {
            Op::ExitIfPending { .. } | Op::ClockCheck { .. } => owed = false,
            Op::In { .. } | Op::StopIf { .. } => owed = true,
            Op::Store { after: None, .. }
            | Op::Out { after: None, .. }
            | Op::Service { after: None, .. }
            | Op::X87 { after: None, .. } => owed = true,
            _ => {}
        }
    }
    owed
}

fn shift_sites(op: &mut Op, k: u32) {
    let f = |s: &mut Site| s.unbill += k;
    match op {
        Op::Load { site, .. }
        | Op::In { site, .. }
        | Op::Call { site, .. }
        | Op::Check { site, .. }
        | Op::ExitIfPending { site }
        | Op::ClockCheck { site, .. } => f(site),
        Op::Store { site, after, .. }
        | Op::Out { site, after, .. }
        | Op::Service { site, after, .. }
        | Op::X87 { site, after, .. } => {
            f(site);
            if let Some(a) = after {
                f(a)
            }
        }
        _ => {}
    }
}

fn shift_term(t: &mut Term, k: u32) {
    match t {
        Term::Exit { site, .. } | Term::Link { site, .. } | Term::Indirect { site, .. } => {
            site.unbill += k
        }
        _ => {}
    }
}
