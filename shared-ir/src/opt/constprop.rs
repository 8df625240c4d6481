//! Passes `constprop` and `addrfold`: block-local copy and constant
//! propagation of temporaries.
//!
//! A temporary written whole (`mov tN, imm` / `mov tN, vM`) is known until
//! it or its source register is written again (or a service runs: it may
//! write any guest register). `constprop` replaces register operands that
//! read it (a lane of the constant, or the same lane of the source
//! register) and folds identities of 32-bit pure ALU ops (`shl x, 0`,
//! `add x, 0`, both operands constant) into moves. `addrfold` folds it into
//! address expressions: a constant base or index into the displacement
//! (the offset is `(base + index << scale + disp) & asize`, all wrapping,
//! so the sum is the same), a copy into the register itself.
//!
//! Exact: every replaced read yields the same bits at the same point, and
//! no op is removed here (dead moves are `dce`'s). Only temporaries are
//! tracked, so guest registers keep every write they had.

use crate::ir::{sem, Addr, AluOp, Lane, Op, Program, Reg, Src, Term, VReg, Width};

/// What is known of the temporaries at one point of a block: a few entries,
/// so a vector scan (a hash map's `retain` on every write walked all its
/// buckets and was most of the pass's cost).
#[derive(Default)]
struct Known(Vec<(u16, Val)>);

impl Known {
    fn get(&self, v: &u16) -> Option<&Val> {
        self.0.iter().find(|e| e.0 == *v).map(|e| &e.1)
    }
    /// Adds `v`; the caller has already dropped what a write to `v` ends
    /// (`forget`).
    fn insert(&mut self, v: u16, val: Val) {
        self.0.push((v, val));
    }
    /// A write to `v`: forgets `v` and every copy of it.
    fn forget(&mut self, v: VReg) {
        self.0
            .retain(|e| e.0 != v.0 && !matches!(e.1, Val::Copy(c) if c == v));
    }
    fn clear(&mut self) {
        self.0.clear();
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Operands,
    Addresses,
}

#[derive(Clone, Copy)]
enum Val {
    Imm(u32),
    /// All 32 bits of this vreg.
    Copy(VReg),
}

pub fn run(p: &mut Program, mode: Mode) {
    let guest = p.guest;
    let mut known = Known::default();
    for b in &mut p.blocks {
        known.clear();
        for op in &mut b.ops {
            match mode {
                Mode::Operands => {
                    map_srcs(op, |s| subst(&known, s));
                    fold(op);
                }
                Mode::Addresses => map_addrs(op, |a| fold_addr(&known, a)),
            }
            if matches!(op, Op::Service { .. }) {
                known.clear();
                continue;
            }
            op.for_each_dst(|d| {
                known.forget(d.v);
            });
            if let Op::Mov {
                dst: Reg { v, lane: Lane::D },
                src,
            } = *op
            {
                if v.0 >= guest {
                    let val = match src {
                        Src::Imm(c) => Some(Val::Imm(c)),
                        Src::Reg(Reg {
                            v: s,
                            lane: Lane::D,
                        }) if s != v => Some(Val::Copy(s)),
                        _ => None,
                    };
                    if let Some(val) = val {
                        known.insert(v.0, val);
                    }
                }
            }
        }
        if mode == Mode::Operands {
            map_term_srcs(&mut b.term, |s| subst(&known, s));
        }
    }
}

fn subst(known: &Known, s: &mut Src) {
    if let Src::Reg(r) = *s {
        match known.get(&r.v.0) {
            Some(Val::Imm(c)) => *s = Src::Imm(r.lane.read(*c)),
            Some(Val::Copy(v)) => {
                *s = Src::Reg(Reg {
                    v: *v,
                    lane: r.lane,
                })
            }
            None => {}
        }
    }
}

/// 32-bit pure ALU identities and constants become moves.
fn fold(op: &mut Op) {
    if let Op::Alu {
        op: aop,
        w: Width::W32,
        dst,
        a,
        b,
    } = *op
    {
        let src = match (aop, a, b) {
            (_, Src::Imm(x), Src::Imm(y)) => Some(Src::Imm(sem::alu(aop, Width::W32, x, y))),
            (
                AluOp::Add
                | AluOp::Sub
                | AluOp::Or
                | AluOp::Xor
                | AluOp::Shl
                | AluOp::Shr
                | AluOp::Sar,
                a,
                Src::Imm(0),
            ) => Some(a),
            (AluOp::Add | AluOp::Or | AluOp::Xor, Src::Imm(0), b) => Some(b),
            _ => None,
        };
        if let Some(src) = src {
            *op = Op::Mov { dst, src };
        }
    }
}

fn fold_addr(known: &Known, a: &mut Addr) {
    if let Some(v) = a.base {
        match known.get(&v.0) {
            Some(Val::Imm(c)) => {
                a.base = None;
                a.disp = a.disp.wrapping_add(*c);
            }
            Some(Val::Copy(s)) => a.base = Some(*s),
            None => {}
        }
    }
    if let Some(v) = a.index {
        match known.get(&v.0) {
            Some(Val::Imm(c)) => {
                a.index = None;
                a.disp = a.disp.wrapping_add(c.wrapping_shl(a.scale as u32));
                a.scale = 0;
            }
            Some(Val::Copy(s)) => a.index = Some(*s),
            None => {}
        }
    }
    if let Some(v) = a.seg {
        match known.get(&v.0) {
            Some(Val::Imm(0)) => a.seg = None,
            Some(Val::Copy(s)) => a.seg = Some(*s),
            _ => {}
        }
    }
    a.disp &= a.asize.mask();
}

/// Calls `f` on every `Src` operand field of `op` (register-only fields,
/// such as `sext`'s source, are not `Src`s and stay as they are).
pub fn map_srcs(op: &mut Op, mut f: impl FnMut(&mut Src)) {
    match op {
        Op::Mov { src, .. } => f(src),
        Op::Alu { a, b, .. } | Op::Arith { a, b, .. } => {
            f(a);
            f(b)
        }
        Op::Shift { a, count, .. } => {
            f(a);
            f(count)
        }
        Op::FlagsRec { a, b, r, .. } => {
            f(a);
            f(b);
            f(r)
        }
        Op::FlagsSet { src, .. } | Op::StopIf { src } => f(src),
        Op::Store { src, .. } => f(src),
        Op::In { port, .. } => f(port),
        Op::Out { port, val, .. } => {
            f(port);
            f(val)
        }
        Op::Call { helper, args, .. } => {
            let n = helper.arity().0;
            for a in &mut args[..n] {
                f(a)
            }
        }
        Op::X87 { cs, ds, .. } => {
            f(cs);
            f(ds)
        }
        _ => {}
    }
}

fn map_term_srcs(t: &mut Term, mut f: impl FnMut(&mut Src)) {
    match t {
        Term::BrCmp { a, b, .. } | Term::BrArith { a, b, .. } => {
            f(a);
            f(b)
        }
        Term::Indirect { ip, base, .. } => {
            f(ip);
            f(base)
        }
        _ => {}
    }
}

/// Calls `f` on every address of `op`.
pub fn map_addrs(op: &mut Op, mut f: impl FnMut(&mut Addr)) {
    match op {
        Op::Load { addr, .. } | Op::Store { addr, .. } | Op::Check { addr, .. } => f(addr),
        Op::X87 { mem: Some(a), .. } => f(a),
        _ => {}
    }
}
