//! Pass `ldpast`: load fusion past independent pure ops.
//!
//! `ld t, [..]; X1; ..; Xk; mov r, t` (k = 1..=3) becomes
//! `ld r, [..]; X1; ..; Xk` when the only read of the temporary `t` anywhere
//! in the program is that move, and every `Xi` is a pure op (a move, sign
//! extension, pure ALU op, flag-writing arithmetic or shift, string step:
//! nothing that can exit, touch memory or a device) that neither reads nor
//! writes any lane of `r`'s vreg nor touches `t`. The POP shape of the naive
//! lowering (`ld t, [ss:sp]; add sp, 2; mov r, t`) is the case it is for:
//! `fuse` only fuses a move that directly follows its load.
//!
//! Exact: if the load exits, it exits before writing anything, and in both
//! programs neither `r` nor the `Xi` have run; if it does not, `r` holds
//! the move's value one op early, and no `Xi` reads or writes `r`, so the
//! `Xi` compute what they did and `r` ends as it did (lanes as `fuse`
//! requires: the move reads all the loaded bits and writes a lane the load
//! may write). The temporary is read nowhere else, so not writing it
//! changes nothing. It must not move any op past an op that can exit.
//!
//! Block-local: in `baseline`.

use crate::ir::{Lane, Op, Program, Src, Width};

/// Reads of vreg `v` anywhere in `p` (a narrow write counts as a read of
/// the old bits).
fn reads(p: &Program, v: u16) -> usize {
    let mut n = 0;
    for b in &p.blocks {
        for op in &b.ops {
            op.for_each_src(|s| {
                if matches!(s, Src::Reg(r) if r.v.0 == v) {
                    n += 1
                }
            });
            op.for_each_dst(|d| {
                if d.v.0 == v && d.lane != Lane::D {
                    n += 1
                }
            });
        }
        b.term.for_each_src(|s| {
            if matches!(s, Src::Reg(r) if r.v.0 == v) {
                n += 1
            }
        });
    }
    n
}

/// Whether `op` is pure (cannot exit, no memory or machine effect) and
/// leaves vregs `a` and `b` alone (no read, no write of any lane).
fn independent(op: &Op, a: u16, b: u16) -> bool {
    let pure = matches!(
        op,
        Op::Mov { .. }
            | Op::Sext { .. }
            | Op::Alu { .. }
            | Op::Arith { .. }
            | Op::Shift { .. }
            | Op::StrStep { .. }
    );
    if !pure {
        return false;
    }
    let mut ok = true;
    op.for_each_src(|s| {
        if matches!(s, Src::Reg(r) if r.v.0 == a || r.v.0 == b) {
            ok = false
        }
    });
    op.for_each_dst(|d| {
        if d.v.0 == a || d.v.0 == b {
            ok = false
        }
    });
    ok
}

/// The fused load if `ops[i]` is a load into a temporary whose move into a
/// register lane follows at `ops[i + 1 + k]` past `k` independent ops.
fn fusable(ops: &[Op], i: usize, guest: u16) -> Option<(usize, u16, Op)> {
    let Op::Load {
        w,
        dst: t,
        addr,
        path,
        site,
    } = ops[i]
    else {
        return None;
    };
    if t.lane != Lane::D || t.v.0 < guest {
        return None;
    }
    for j in i + 2..(i + 5).min(ops.len()) {
        if let Op::Mov {
            dst,
            src: Src::Reg(s),
        } = ops[j]
        {
            if s.v == t.v {
                let reads_all = match s.lane {
                    Lane::D => true,
                    Lane::W => w != Width::W32,
                    Lane::B => w == Width::W8,
                    Lane::H => false,
                };
                let writes_ok = dst.lane == Lane::D || dst.lane.width() == w;
                let between = ops[i + 1..j].iter().all(|x| independent(x, dst.v.0, t.v.0));
                if dst.v == t.v || !reads_all || !writes_ok || !between {
                    return None;
                }
                return Some((
                    j,
                    t.v.0,
                    Op::Load {
                        w,
                        dst,
                        addr,
                        path,
                        site,
                    },
                ));
            }
        }
        if !independent(&ops[j], u16::MAX, t.v.0) {
            return None;
        }
    }
    None
}

pub fn run(p: &mut Program) {
    let guest = p.guest;
    for bi in 0..p.blocks.len() {
        let mut i = 0;
        while i < p.blocks[bi].ops.len() {
            if let Some((j, t, f)) = fusable(&p.blocks[bi].ops, i, guest) {
                if reads(p, t) == 1 {
                    let ops = &mut p.blocks[bi].ops;
                    ops[i] = f;
                    ops.remove(j);
                }
            }
            i += 1;
        }
    }
}
