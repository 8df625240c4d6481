//! `merge`: jump threading and straight-line merging.
//!
//! * A block with no ops that only jumps on (the empty link blocks a region
//!   leaves behind) is skipped: every edge to it goes to its target.
//! * A billed block A (its first op a `clock.check n1`, no other clock op)
//!   that jumps to a billed block B (`clock.check n2` first, no other clock
//!   op) which has no other predecessor becomes one block billed `n1 + n2`
//!   once at A's head: two lines of a region joined by an unconditional jump
//!   (a JMP, a line cap) cost one budget check instead of two.
//!
//! Why it is exact: billing ahead is what every line already does, and each
//! site says how much was billed ahead of it (`unbill`): A's sites now have
//! `n2` more billed ahead, so they get `unbill + n2`; B's sites keep theirs
//! (the instructions billed before them are A's `n1` plus B's own, as
//! before). A merged block that does not fit the budget exits at A's head
//! before anything happened, which is exact (invariant 2; a finer engine
//! then runs the slice's tail). B's `clock.check` also tested for an owed
//! stop at B's head: when some op of A can leave a stop owed without
//! leaving (a store or port access whose stop is not reported at once, a
//! `stopif`) and no `exit.pending` follows it in A, an `exit.pending` at
//! B's head keeps that test (site: B's IP, `n2` billed ahead).
//!
//! It must not reorder ops, move ops across a clock op, or touch the entry
//! block's identity (block 0 stays the entry).

#![forbid(unsafe_code)]

use crate::ir::*;

/// Runs the pass.
pub fn run(p: &mut Program) {
    thread_jumps(p);
    loop {
        if !merge_one(p) {
            break;
        }
    }
    thread_jumps(p);
}

/// Follows a chain of empty jump blocks from `b` to its end.
fn final_target(p: &Program, mut b: BlockId) -> BlockId {
    let mut steps = 0;
    while let Term::Jmp(t) = p.blocks[b.0 as usize].term {
        if !p.blocks[b.0 as usize].ops.is_empty() || t == b || steps > p.blocks.len() {
            break;
        }
        b = t;
        steps += 1;
    }
    b
}

fn thread_jumps(p: &mut Program) {
    for i in 0..p.blocks.len() {
        let term = p.blocks[i].term;
        let new = term.map_targets(|t| final_target(p, t));
        p.blocks[i].term = new;
    }
}

/// Predecessor counts over blocks reachable from the entry.
fn preds(p: &Program) -> Vec<u32> {
    let n = p.blocks.len();
    let mut reach = vec![false; n];
    let mut stack = vec![0usize];
    reach[0] = true;
    let mut count = vec![0u32; n];
    while let Some(b) = stack.pop() {
        for s in p.blocks[b].term.succs() {
            let s = s.0 as usize;
            count[s] += 1;
            if !reach[s] {
                reach[s] = true;
                stack.push(s);
            }
        }
    }
    count
}

/// `clock.check n` at the head and no other clock op.
fn billed(b: &Block) -> Option<(u32, Site)> {
    let Some(&Op::ClockCheck { n, site }) = b.ops.first() else {
        return None;
    };
    let others = b.ops[1..]
        .iter()
        .any(|o| matches!(o, Op::ClockCheck { .. } | Op::Clock { .. }));
    (!others).then_some((n, site))
}

/// Whether a stop may be owed (not yet reported) after the block's ops.
fn may_owe(ops: &[Op]) -> bool {
    let mut owed = false;
    for o in ops {
        match o {
            Op::ExitIfPending { .. } => owed = false,
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

fn add_unbill(op: &mut Op, n: u32) {
    let f = |s: &mut Site| s.unbill += n;
    match op {
        Op::Load { site, .. }
        | Op::In { site, .. }
        | Op::Call { site, .. }
        | Op::Check { site, .. }
        | Op::ExitIfPending { site } => f(site),
        Op::Store { site, after, .. }
        | Op::Out { site, after, .. }
        | Op::Service { site, after, .. }
        | Op::X87 { site, after, .. } => {
            f(site);
            if let Some(a) = after {
                f(a)
            }
        }
        // The head's own check keeps its site: nothing billed before it.
        Op::ClockCheck { .. } => {}
        _ => {}
    }
}

fn merge_one(p: &mut Program) -> bool {
    let pc = preds(p);
    for a in 0..p.blocks.len() {
        let Term::Jmp(b) = p.blocks[a].term else {
            continue;
        };
        let bi = b.0 as usize;
        if bi == a || bi == 0 || pc[bi] != 1 || pc[a] == 0 && a != 0 {
            continue;
        }
        let (Some((n1, s1)), Some((n2, s2))) = (billed(&p.blocks[a]), billed(&p.blocks[bi])) else {
            continue;
        };
        let owe = may_owe(&p.blocks[a].ops);
        let tail = std::mem::replace(
            &mut p.blocks[bi],
            Block {
                ops: Vec::new(),
                term: Term::Exit {
                    kind: ExitKind::Stop,
                    site: Site::new(s2.ip, 0),
                },
            },
        );
        let blk = &mut p.blocks[a];
        for op in blk.ops.iter_mut().skip(1) {
            add_unbill(op, n2);
        }
        blk.ops[0] = Op::ClockCheck {
            n: n1 + n2,
            site: s1,
        };
        if owe {
            blk.ops.push(Op::ExitIfPending {
                site: Site::new(s2.ip, n2),
            });
        }
        blk.ops.extend(tail.ops.into_iter().skip(1));
        blk.term = tail.term;
        // B is unreachable now; leave it as an empty stop (the encoder skips
        // unreachable blocks).
        return true;
    }
    false
}
