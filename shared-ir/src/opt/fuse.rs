//! Pass `fuse`: three shapes, each into one op.
//!
//! * Step fusion: the lowering's four-op string step `flags.get t; and t,
//!   t, DF; shr t, t, k; sub t, n, t` (`n - 2n*DF`) becomes `strstep t, n`
//!   (`DF ? -n : n`), the same value in the same temporary.
//! * Load fusion: `ld t, [..]; mov r, t` into `ld r, [..]` when nothing else
//!   reads `t` anywhere: nothing runs between the two, the load either
//!   exits before writing anything or writes the value the move would
//!   copy (lanes permitting: the move reads all the loaded bits and writes
//!   a lane the load may write).
//! * ALU narrowing: a 32-bit pure ALU op into a temporary, immediately
//! followed by a move of that temporary's low 16 or 8 bits into a register
//! lane, becomes one ALU op at the narrow width writing that lane
//! (`add.32 t, a, b; mov ax.w, t.w` → `add.16 ax.w, a, b`), when nothing
//! but that pair reads the temporary anywhere in the program.
//!
//! Exact: for add, sub, and, or, xor, mul and shl the low n bits of the
//! 32-bit result depend only on the low n bits of the operands, and a
//! narrow pure op masks its result to its width before the lane merge
//! (`sem::alu`), so the lane receives the same bits. The temporary is dead
//! afterwards (read nowhere in the program), so dropping its write changes
//! nothing (right shifts are excluded: their low bits see the high ones).

use crate::flags::DF;
use crate::ir::{AluOp, Lane, Op, Program, Reg, Src, Width};

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

/// The four-op DF step of the lowering, at `ops[i..]`: (temporary, n).
fn df_step(ops: &[Op], i: usize) -> Option<(Reg, u32)> {
    let [Op::FlagsGet { dst: t }, Op::Alu {
        op: AluOp::And,
        w: Width::W32,
        dst: t1,
        a: Src::Reg(a1),
        b: Src::Imm(DF),
    }, Op::Alu {
        op: AluOp::Shr,
        w: Width::W32,
        dst: t2,
        a: Src::Reg(a2),
        b: Src::Imm(k),
    }, Op::Alu {
        op: AluOp::Sub,
        w: Width::W32,
        dst: t3,
        a: Src::Imm(n),
        b: Src::Reg(b3),
    }] = *ops.get(i..i + 4)?
    else {
        return None;
    };
    let all_d = [t, t1, a1, t2, a2, t3, b3]
        .iter()
        .all(|r| r.v == t.v && r.lane == Lane::D);
    (all_d && k < 32 && matches!(n, 1 | 2 | 4) && DF >> k == 2 * n).then_some((t, n))
}

/// `ld t, ..; mov r, t` fusable into `ld r, ..`: the load with `r`.
fn load_move(a: &Op, b: &Op, guest: u16) -> Option<(u16, Op)> {
    let Op::Load {
        w,
        dst: t,
        addr,
        path,
        site,
    } = *a
    else {
        return None;
    };
    let Op::Mov {
        dst,
        src: Src::Reg(s),
    } = *b
    else {
        return None;
    };
    if t.lane != Lane::D || s.v != t.v || t.v.0 < guest || dst.v == t.v {
        return None;
    }
    let reads_all = match s.lane {
        Lane::D => true,
        Lane::W => w != Width::W32,
        Lane::B => w == Width::W8,
        Lane::H => false,
    };
    let writes_ok = dst.lane == Lane::D || dst.lane.width() == w;
    (reads_all && writes_ok).then_some((
        t.v.0,
        Op::Load {
            w,
            dst,
            addr,
            path,
            site,
        },
    ))
}

pub fn run(p: &mut Program) {
    let guest = p.guest;
    for b in &mut p.blocks {
        let mut i = 0;
        while i < b.ops.len() {
            if let Some((t, n)) = df_step(&b.ops, i) {
                b.ops[i] = Op::StrStep { dst: t, n };
                b.ops.drain(i + 1..i + 4);
            }
            i += 1;
        }
    }
    for bi in 0..p.blocks.len() {
        let mut i = 0;
        while i + 1 < p.blocks[bi].ops.len() {
            let ops = &p.blocks[bi].ops;
            if let Some((t, f)) = load_move(&ops[i], &ops[i + 1], guest) {
                if reads(p, t) == 1 {
                    let ops = &mut p.blocks[bi].ops;
                    ops[i] = f;
                    ops.remove(i + 1);
                    continue;
                }
            }
            i += 1;
        }
    }
    let mut bi = 0;
    while bi < p.blocks.len() {
        let mut i = 0;
        while i + 1 < p.blocks[bi].ops.len() {
            let ops = &p.blocks[bi].ops;
            let fused = match (ops[i], ops[i + 1]) {
                (
                    Op::Alu {
                        op:
                            aop @ (AluOp::Add
                            | AluOp::Sub
                            | AluOp::And
                            | AluOp::Or
                            | AluOp::Xor
                            | AluOp::Mul
                            | AluOp::Shl),
                        w: Width::W32,
                        dst:
                            Reg {
                                v: t,
                                lane: Lane::D,
                            },
                        a,
                        b,
                    },
                    Op::Mov {
                        dst,
                        src: Src::Reg(Reg { v: s, lane: sl }),
                    },
                ) if s == t
                    && t.0 >= guest
                    && dst.v != t
                    && matches!(
                        (sl, dst.lane),
                        (Lane::W, Lane::W) | (Lane::B, Lane::B) | (Lane::B, Lane::H)
                    ) =>
                {
                    let w = if sl == Lane::W { Width::W16 } else { Width::W8 };
                    Some(Op::Alu {
                        op: aop,
                        w,
                        dst,
                        a,
                        b,
                    })
                }
                _ => None,
            };
            if let Some(f) = fused {
                let t = match p.blocks[bi].ops[i] {
                    Op::Alu { dst, .. } => dst.v.0,
                    _ => unreachable!("matched an alu above"),
                };
                // Nothing but the pair reads the temporary (the ALU's own
                // operands read its old value, which stays as it was).
                let own = [a_reads(&p.blocks[bi].ops[i], t), 1].iter().sum::<usize>();
                if reads(p, t) == own {
                    let ops = &mut p.blocks[bi].ops;
                    ops[i] = f;
                    ops.remove(i + 1);
                    continue;
                }
            }
            i += 1;
        }
        bi += 1;
    }
}

fn a_reads(op: &Op, v: u16) -> usize {
    let mut n = 0;
    op.for_each_src(|s| {
        if matches!(s, Src::Reg(r) if r.v.0 == v) {
            n += 1
        }
    });
    n
}
