//! What one element of a REP string instruction ([`super::Term::Rep`])
//! does, defined once for every engine: the order of its limit checks and
//! accesses, the flags a compare writes, the index step and when the loop
//! goes on. Engines bring their own memory ([`ElemMem`]: the reference
//! interpreter the machine's checked path, E1 the page view first).
//!
//! It must not bill dispatches, test budgets or owed stops (the engines do
//! that around it, in the order [`super::Term::Rep`] documents).

use super::{sem, AddrSize, ArithOp, RepCond, StrOp, Width};
use crate::flags::LazyFlags;

/// Memory as an element sees it. `None` is a refusal (a fault or an access
/// the engine cannot make): the element then has no effect of its own.
pub trait ElemMem {
    /// Reads `w` bits at linear address `lin`.
    fn read(&mut self, lin: u32, w: Width) -> Option<u32>;
    /// Writes; `Some(true)` when the store hit code (a stop is owed).
    fn write(&mut self, lin: u32, w: Width, v: u32) -> Option<bool>;
}

/// One operand of an element: segment base, offset (already masked to the
/// address size) and the segment limit.
#[derive(Clone, Copy, Debug)]
pub struct ElemOpnd {
    pub base: u32,
    pub off: u32,
    pub limit: u32,
}

impl ElemOpnd {
    fn fits(&self, w: Width) -> bool {
        self.off as u64 + (w.bytes() as u64 - 1) <= self.limit as u64
    }
    fn lin(&self) -> u32 {
        self.base.wrapping_add(self.off)
    }
}

/// What an element did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElemDone {
    /// The accumulator's new value (LODS).
    pub acc: Option<u32>,
    /// A store hit code.
    pub hit_code: bool,
}

/// The accesses of one element: MOVS and CMPS check the destination's
/// limit before the source's, then access in instruction order; `acc` is
/// the accumulator's `w`-bit value. `Err(())` when a limit or an access
/// refused (nothing of the element happened but reads already made).
pub fn element(
    op: StrOp,
    w: Width,
    src: ElemOpnd,
    dst: ElemOpnd,
    acc: u32,
    fl: &mut LazyFlags,
    mem: &mut impl ElemMem,
) -> Result<ElemDone, ()> {
    let fits = (!op.uses_dst() || dst.fits(w)) && (!op.reads_src() || src.fits(w));
    if !fits {
        return Err(());
    }
    let mut done = ElemDone {
        acc: None,
        hit_code: false,
    };
    let m = w.mask();
    match op {
        StrOp::Movs => {
            let v = mem.read(src.lin(), w).ok_or(())? & m;
            done.hit_code = mem.write(dst.lin(), w, v).ok_or(())?;
        }
        StrOp::Stos => done.hit_code = mem.write(dst.lin(), w, acc & m).ok_or(())?,
        StrOp::Lods => done.acc = Some(mem.read(src.lin(), w).ok_or(())? & m),
        StrOp::Cmps => {
            let a = mem.read(src.lin(), w).ok_or(())? & m;
            let b = mem.read(dst.lin(), w).ok_or(())? & m;
            sem::arith(ArithOp::Sub, w, a, b, fl);
        }
        StrOp::Scas => {
            let b = mem.read(dst.lin(), w).ok_or(())? & m;
            sem::arith(ArithOp::Sub, w, acc & m, b, fl);
        }
    }
    Ok(done)
}

/// An index register after one element of `w`: stepped by `DF ? -w : w`
/// bytes, wrapping at the address size (A16 keeps bits 16..31).
#[inline(always)]
pub fn step_index(v: u32, w: Width, df: bool, asize: AddrSize) -> u32 {
    let n = w.bytes();
    let s = if df { n.wrapping_neg() } else { n };
    let m = asize.mask();
    (v & !m) | (v.wrapping_add(s) & m)
}

/// Whether the loop goes on after an element that left `count` (the
/// count lane's new value): not at zero, and for REPE / REPNE only while
/// ZF is set / clear.
#[inline(always)]
pub fn again(cond: RepCond, count: u32, fl: &LazyFlags) -> bool {
    count != 0
        && match cond {
            RepCond::Rep => true,
            RepCond::Repe => fl.cond(4),
            RepCond::Repne => fl.cond(5),
        }
}
