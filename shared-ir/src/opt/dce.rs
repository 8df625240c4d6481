//! Pass `dce`: removes pure ops (`mov`, `sext`, pure ALU, `cond`,
//! `flags.get`) whose destination is a temporary nobody reads afterwards,
//! and moves of a lane onto itself.
//!
//! Liveness is backward within a block; a temporary read anywhere in the
//! program (by any block, in any lane, or merged into by a narrow write)
//! counts as live at every block end, which is conservative and needs no
//! CFG fixpoint. Temporaries are dead at every exit (the resident register
//! model's rule, enforced by the verifier's definite assignment), so
//! removing their dead writes changes no guest state. Guest registers are
//! never removed (except the no-op self-move).

use crate::ir::{Op, Program, Reg, Src};

fn is_pure(op: &Op) -> bool {
    matches!(
        op,
        Op::Mov { .. }
            | Op::Sext { .. }
            | Op::Alu { .. }
            | Op::GetCond { .. }
            | Op::StrStep { .. }
            | Op::FlagsGet { .. }
    )
}

fn is_self_move(op: &Op) -> bool {
    matches!(*op, Op::Mov { dst, src: Src::Reg(s) } if s == dst)
}

pub fn run(p: &mut Program) {
    let guest = p.guest as usize;
    // Fixed-size sets and one reused `keep`: the pass runs on every program
    // built, and per-block allocation was most of its cost.
    const N: usize = crate::ir::VREG_NAMES as usize + 1;
    // Temporaries read anywhere (live at every block end).
    let mut read_any = [false; N];
    let mark = |r: Reg, set: &mut [bool; N]| set[r.v.0 as usize] = true;
    for b in &p.blocks {
        for op in &b.ops {
            op.for_each_src(|s| {
                if let Src::Reg(r) = s {
                    mark(r, &mut read_any)
                }
            });
            op.for_each_dst(|d| {
                if d.lane != crate::ir::Lane::D {
                    mark(d, &mut read_any)
                }
            });
        }
        b.term.for_each_src(|s| {
            if let Src::Reg(r) = s {
                mark(r, &mut read_any)
            }
        });
    }
    let mut keep: Vec<bool> = Vec::new();
    for b in &mut p.blocks {
        let mut live = read_any;
        b.term.for_each_src(|s| {
            if let Src::Reg(r) = s {
                live[r.v.0 as usize] = true
            }
        });
        keep.clear();
        keep.resize(b.ops.len(), true);
        for (i, op) in b.ops.iter().enumerate().rev() {
            if is_self_move(op) {
                keep[i] = false;
                continue;
            }
            if is_pure(op) {
                let mut dead = true;
                op.for_each_dst(|d| {
                    let v = d.v.0 as usize;
                    if v < guest || d.lane != crate::ir::Lane::D || live[v] {
                        dead = false
                    }
                });
                if dead {
                    keep[i] = false;
                    continue;
                }
            }
            // A whole write kills; a narrow write merges (reads) the old
            // bits. Kills first, then reads: one op may write a vreg both
            // ways (`call imul16 v26.w, v26`), and the merge still reads.
            op.for_each_dst(|d| {
                if d.lane == crate::ir::Lane::D {
                    live[d.v.0 as usize] = false
                }
            });
            op.for_each_dst(|d| {
                if d.lane != crate::ir::Lane::D {
                    live[d.v.0 as usize] = true
                }
            });
            op.for_each_src(|s| {
                if let Src::Reg(r) = s {
                    live[r.v.0 as usize] = true
                }
            });
        }
        if keep.contains(&false) {
            let mut it = keep.iter();
            b.ops.retain(|_| *it.next().unwrap_or(&true));
        }
    }
}
