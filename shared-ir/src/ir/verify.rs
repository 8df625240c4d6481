//! The IR verifier: rejects malformed programs with a clear error before any
//! engine sees them, so that engines and encoders may assume well-formed input.
//!
//! Checks: block targets exist; vreg names are in range; every operand lane
//! fits its op's width; condition codes are 0..15; every temporary is written
//! (as a whole, `D` lane) on every path before it is read; and every cycle is
//! clocked (some block on every cycle, and on every path from the entry to a
//! link or computed exit, contains a `ClockCheck` of at least one dispatch),
//! so an engine always reaches a budget test, inside a program or along a
//! chain of programs.
//! It must not change programs.

use super::{Block, BlockId, Lane, Op, Program, Reg, Src, Term, Width, VREG_NAMES};
use std::fmt;

/// What is wrong with a program, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyError {
    pub block: u32,
    /// Op index within the block; `None` for the terminator or the block as a whole.
    pub op: Option<usize>,
    pub msg: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.op {
            Some(i) => write!(f, "b{} op {}: {}", self.block, i, self.msg),
            None => write!(f, "b{} terminator: {}", self.block, self.msg),
        }
    }
}

impl std::error::Error for VerifyError {}

fn covers(lane: Lane, w: Width) -> bool {
    lane.width().bits() >= w.bits()
}

fn dst_ok(d: Reg, w: Width) -> bool {
    d.lane == Lane::D || d.lane.width() == w
}

/// Checks a program; `Ok(())` means every engine may run it.
pub fn verify(p: &Program) -> Result<(), VerifyError> {
    let n = p.blocks.len();
    let err = |block: usize, op: Option<usize>, msg: String| VerifyError {
        block: block as u32,
        op,
        msg,
    };
    if n == 0 {
        return Err(err(0, None, "program has no blocks".into()));
    }
    if p.guest > VREG_NAMES {
        return Err(err(
            0,
            None,
            format!("guest count {} > {}", p.guest, VREG_NAMES),
        ));
    }
    for (bi, b) in p.blocks.iter().enumerate() {
        for (oi, op) in b.ops.iter().enumerate() {
            check_op(op).map_err(|m| err(bi, Some(oi), m))?;
        }
        check_term(&b.term, n, p.guest).map_err(|m| err(bi, None, m))?;
    }
    check_clocked(p).map_err(|(b, m)| err(b, None, m))?;
    check_defined(p)?;
    Ok(())
}

fn check_reg(r: Reg) -> Result<(), String> {
    if r.v.0 >= VREG_NAMES {
        return Err(format!(
            "v{} is out of range (max v{})",
            r.v.0,
            VREG_NAMES - 1
        ));
    }
    Ok(())
}

fn check_src(s: Src, w: Option<Width>) -> Result<(), String> {
    if let Src::Reg(r) = s {
        check_reg(r)?;
        if let Some(w) = w {
            if !covers(r.lane, w) {
                return Err(format!(
                    "source lane {:?} of v{} is narrower than the {}-bit op",
                    r.lane,
                    r.v.0,
                    w.bits()
                ));
            }
        }
    }
    Ok(())
}

fn check_dst(d: Reg, w: Width) -> Result<(), String> {
    check_reg(d)?;
    if !dst_ok(d, w) {
        return Err(format!(
            "destination lane {:?} of v{} does not fit a {}-bit result (use the D lane or a lane of that width)",
            d.lane,
            d.v.0,
            w.bits()
        ));
    }
    Ok(())
}

fn check_op(op: &Op) -> Result<(), String> {
    match *op {
        Op::Mov { dst, src } => {
            check_reg(dst)?;
            check_src(src, None)
        }
        Op::Sext { dst, src, from } => {
            check_reg(dst)?;
            if from == Width::W32 {
                return Err("sext from 32 bits is a mov".into());
            }
            check_src(Src::Reg(src), Some(from))
        }
        Op::Alu { w, dst, a, b, .. } => {
            check_dst(dst, w)?;
            check_src(a, Some(w))?;
            check_src(b, Some(w))
        }
        Op::Arith { op, w, dst, a, b } => {
            if matches!(
                op,
                super::ArithOp::Inc | super::ArithOp::Dec | super::ArithOp::Neg
            ) && b != Src::Imm(0)
            {
                return Err(format!("{op:?} takes one operand; b must be 0"));
            }
            if let Some(d) = dst {
                check_dst(d, w)?;
            }
            check_src(a, Some(w))?;
            check_src(b, Some(w))
        }
        Op::Shift {
            w, dst, a, count, ..
        } => {
            check_dst(dst, w)?;
            check_src(a, Some(w))?;
            check_src(count, None)
        }
        Op::FlagsRec { a, b, r, .. } => {
            check_src(a, None)?;
            check_src(b, None)?;
            check_src(r, None)
        }
        Op::FlagsGet { dst } | Op::StrStep { dst, .. } => check_reg(dst),
        Op::FlagsSet { src, .. } => check_src(src, None),
        Op::GetCond { dst, cc } => {
            check_reg(dst)?;
            if cc > 15 {
                return Err(format!("condition code {cc} > 15"));
            }
            Ok(())
        }
        Op::Load { w, dst, addr, .. } => {
            check_dst(dst, w)?;
            check_addr(&addr)
        }
        Op::Check { addr, .. } => check_addr(&addr),
        Op::Store { w, src, addr, .. } => {
            check_src(src, Some(w))?;
            check_addr(&addr)
        }
        Op::In { w, dst, port, .. } => {
            check_dst(dst, w)?;
            check_src(port, None)
        }
        Op::Out { w, port, val, .. } => {
            check_src(port, None)?;
            check_src(val, Some(w))
        }
        Op::Call {
            helper, outs, args, ..
        } => {
            let (na, no) = helper.arity();
            for a in &args[..na] {
                check_src(*a, None)?;
            }
            for o in outs[..no].iter().flatten() {
                check_reg(*o)?;
            }
            // Canonical form, so the text form is lossless.
            if args[na..].iter().any(|a| *a != Src::Imm(0))
                || outs[no..].iter().any(|o| o.is_some())
            {
                return Err(format!(
                    "{:?} takes {na} args and {no} results; unused ones must be 0 / none",
                    helper
                ));
            }
            Ok(())
        }
        Op::Service { .. }
        | Op::Clock { .. }
        | Op::ClockCheck { .. }
        | Op::Count
        | Op::ExitIfPending { .. } => Ok(()),
        Op::StopIf { src } => check_src(src, None),
        Op::X87 {
            mem, cs, ds, dst, ..
        } => {
            if let Some(d) = dst {
                check_reg(d)?;
                if d.lane != Lane::W {
                    return Err("an x87 result merges into a .w lane".into());
                }
            }
            check_src(cs, Some(Width::W16))?;
            check_src(ds, Some(Width::W16))?;
            match mem {
                Some(a) => check_addr(&a),
                // Canonical form, so the text form is lossless.
                None if ds != Src::Imm(0) => {
                    Err("an x87 op without a memory operand has ds 0".into())
                }
                None => Ok(()),
            }
        }
    }
}

fn check_addr(a: &super::Addr) -> Result<(), String> {
    for v in [a.seg, a.base, a.index].into_iter().flatten() {
        check_reg(Reg { v, lane: Lane::D })?;
    }
    if a.scale > 3 {
        return Err(format!("address scale shift {} > 3", a.scale));
    }
    if a.index.is_none() && a.scale != 0 {
        return Err("address scale without an index".into());
    }
    Ok(())
}

fn check_term(t: &Term, n: usize, guest: u16) -> Result<(), String> {
    for s in t.succs() {
        if s.0 as usize >= n {
            return Err(format!(
                "branch to b{} but the program has {} blocks",
                s.0, n
            ));
        }
    }
    match *t {
        Term::BrCc { cc, .. } if cc > 15 => Err(format!("condition code {cc} > 15")),
        Term::BrCmp { w, a, b, .. } => {
            check_src(a, Some(w))?;
            check_src(b, Some(w))
        }
        Term::BrArith { cc, .. } if cc > 15 => Err(format!("condition code {cc} > 15")),
        Term::BrArith { w, dst, a, b, .. } => {
            check_src(a, Some(w))?;
            check_src(b, Some(w))?;
            match dst {
                Some(d) if d.v.0 >= guest => Err(format!(
                    "brarith writes temporary v{} (only guest registers or none)",
                    d.v.0
                )),
                _ => Ok(()),
            }
        }
        Term::Indirect { ip, base, .. } => {
            check_src(ip, None)?;
            check_src(base, None)
        }
        Term::Rep {
            op,
            cond,
            src,
            dst,
            count,
            site,
            ..
        } => check_rep(op, cond, &src, &dst, count, site, guest),
        _ => Ok(()),
    }
}

/// A [`Term::Rep`]'s canonical form: plain `[seg: base]` operands of one
/// address size on guest registers, a `.w` or whole count register, REPE /
/// REPNE only on compares, and a site with nothing billed ahead.
fn check_rep(
    op: super::StrOp,
    cond: super::RepCond,
    src: &super::Addr,
    dst: &super::Addr,
    count: Reg,
    site: super::Site,
    guest: u16,
) -> Result<(), String> {
    for a in [src, dst] {
        check_addr(a)?;
        let Some(b) = a.base else {
            return Err("rep: an operand without its index register".into());
        };
        if a.index.is_some() || a.disp != 0 {
            return Err("rep: an operand is [seg: base] only".into());
        }
        if b.0 >= guest || a.seg.is_some_and(|v| v.0 >= guest) {
            return Err("rep: operands name guest registers".into());
        }
    }
    if src.asize != dst.asize {
        return Err("rep: source and destination of different address sizes".into());
    }
    check_reg(count)?;
    if !matches!(count.lane, Lane::W | Lane::D) || count.v.0 >= guest {
        return Err("rep: the count is a guest register's .w lane or all of it".into());
    }
    if !op.compares() && cond != super::RepCond::Rep {
        return Err(format!("rep: {} only repeats with rep", op.name()));
    }
    if site.unbill != 0 {
        return Err("rep: its site bills nothing ahead (unbill 0)".into());
    }
    Ok(())
}

/// A `clock.check` of at least one dispatch, or a [`Term::Rep`] (which
/// tests the budget and bills its element itself).
fn has_clock_check(b: &Block) -> bool {
    matches!(b.term, Term::Rep { .. })
        || b.ops
            .iter()
            .any(|o| matches!(o, Op::ClockCheck { n, .. } if *n >= 1))
}

/// The entry must bill at least one dispatch under a budget test (links and
/// lookups enter there), and every cycle must pass a block that does: the
/// blocks without a `clock.check` must form an acyclic graph. Then every
/// cycle, inside a program or across links, meets a budget test.
fn check_clocked(p: &Program) -> Result<(), (usize, String)> {
    let n = p.blocks.len();
    let checked: Vec<bool> = p.blocks.iter().map(has_clock_check).collect();
    // Every path from the entry to a link or computed exit bills first: a
    // chain of programs then always meets a budget test.
    let mut seen = vec![false; n];
    let mut stack = vec![0usize];
    while let Some(b) = stack.pop() {
        if checked[b] || seen[b] {
            continue;
        }
        seen[b] = true;
        if matches!(p.blocks[b].term, Term::Link { .. } | Term::Indirect { .. }) {
            return Err((
                b,
                "a path from the entry reaches this link without a `clock.check` of at least 1 (links chain programs)".into(),
            ));
        }
        stack.extend(p.blocks[b].term.succs().map(|s| s.0 as usize));
    }
    // Iterative DFS over unchecked blocks with colours: 0 white, 1 on stack, 2 done.
    let mut colour = vec![0u8; n];
    for root in 0..n {
        if checked[root] || colour[root] != 0 {
            continue;
        }
        colour[root] = 1;
        let mut stack: Vec<(usize, Vec<BlockId>)> =
            vec![(root, p.blocks[root].term.succs().collect())];
        while let Some((b, succs)) = stack.last_mut() {
            let b = *b;
            if let Some(s) = succs.pop() {
                let s = s.0 as usize;
                if checked[s] {
                    continue;
                }
                match colour[s] {
                    0 => {
                        colour[s] = 1;
                        stack.push((s, p.blocks[s].term.succs().collect()));
                    }
                    1 => {
                        return Err((
                            s,
                            format!(
                                "cycle through b{s} and b{b} has no `clock.check` of at least 1"
                            ),
                        ));
                    }
                    _ => {}
                }
            } else {
                colour[b] = 2;
                stack.pop();
            }
        }
    }
    Ok(())
}

/// Definite assignment of temporaries (vregs at or above `guest`).
///
/// A must-analysis from the top (an unreached block has no in-set yet):
/// in-sets only shrink from one sweep to the next, so a read found
/// undefined under an in-set of any sweep is undefined under the fixpoint's
/// too. Every sweep therefore checks as it goes, and the last sweep (the one
/// that changed nothing) has checked every reached block under its final
/// in-set. Sets are fixed-size bit arrays: a build must not allocate per
/// block (this runs on every program the arena installs).
fn check_defined(p: &Program) -> Result<(), VerifyError> {
    type Set = [u64; DEF_WORDS];
    let n = p.blocks.len();
    let guest = p.guest as usize;
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (i, b) in p.blocks.iter().enumerate() {
        for s in b.term.succs() {
            preds[s.0 as usize].push(i as u32);
        }
    }
    let is_def = |set: &Set, v: usize| v < guest || set[v / 64] >> (v % 64) & 1 != 0;
    let transfer = |b: &Block, mut set: Set, bi: usize| -> Result<Set, VerifyError> {
        for (oi, op) in b.ops.iter().enumerate() {
            let mut bad = None;
            op.for_each_src(|s| {
                if let Src::Reg(r) = s {
                    if bad.is_none() && !is_def(&set, r.v.0 as usize) {
                        bad = Some(r.v.0);
                    }
                }
            });
            op.for_each_dst(|d| {
                let v = d.v.0 as usize;
                if bad.is_none() && d.lane != Lane::D && !is_def(&set, v) {
                    bad = Some(d.v.0);
                }
            });
            if let Some(v) = bad {
                return Err(VerifyError {
                    block: bi as u32,
                    op: Some(oi),
                    msg: format!(
                        "temporary v{v} may be read (or merged into) before it is written"
                    ),
                });
            }
            op.for_each_dst(|d| {
                let v = d.v.0 as usize;
                if v < VREG_NAMES as usize {
                    set[v / 64] |= 1 << (v % 64);
                }
            });
        }
        let mut bad = None;
        b.term.for_each_src(|s| {
            if let Src::Reg(r) = s {
                if bad.is_none() && !is_def(&set, r.v.0 as usize) {
                    bad = Some(r.v.0);
                }
            }
        });
        if let Some(v) = bad {
            return Err(VerifyError {
                block: bi as u32,
                op: None,
                msg: format!("temporary v{v} may be read before it is written"),
            });
        }
        Ok(set)
    };
    // Fixpoint over in-sets (intersection of reached predecessors' out-sets).
    let mut ins: Vec<Option<Set>> = vec![None; n];
    let mut outs: Vec<Option<Set>> = vec![None; n];
    let mut changed = true;
    while changed {
        changed = false;
        for bi in 0..n {
            let inset = if bi == 0 {
                Some([0; DEF_WORDS])
            } else {
                let mut acc: Option<Set> = None;
                for &pr in &preds[bi] {
                    if let Some(o) = &outs[pr as usize] {
                        acc = Some(match acc {
                            None => *o,
                            Some(mut a) => {
                                for (x, y) in a.iter_mut().zip(o) {
                                    *x &= y;
                                }
                                a
                            }
                        });
                    }
                }
                acc
            };
            if let Some(s) = inset {
                if ins[bi] == Some(s) {
                    continue;
                }
                let out = transfer(&p.blocks[bi], s, bi)?;
                ins[bi] = Some(s);
                if outs[bi] != Some(out) {
                    outs[bi] = Some(out);
                    changed = true;
                }
            }
        }
    }
    Ok(())
}

/// Words of a definite-assignment set: one bit per vreg name.
const DEF_WORDS: usize = (VREG_NAMES as usize).div_ceil(64);
