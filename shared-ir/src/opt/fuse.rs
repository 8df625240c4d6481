//! Pass `fuse`: a 32-bit pure ALU op into a temporary, immediately
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

pub fn run(p: &mut Program) {
    let guest = p.guest;
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
