//! Value semantics of the µops that compute: pure ALU ops, x86 arithmetic with
//! its flag record, shifts and rotates, compare-and-branch conditions, helpers.
//!
//! These are pure functions of their inputs and the lazy-flag record, shared by
//! the reference interpreter and E1 so that a value means one thing. They must
//! not touch machines, memory or the clock.
//!
//! The x86 parts (arithmetic with flags, shifts and rotates, MUL/IMUL/DIV/
//! IDIV) delegate to [`crate::alu`], the helpers toyvm's L0 uses, so L0 and
//! the µop tiers agree by construction, undefined flags included.

use super::{AluOp, ArithOp, CmpOp, Helper, ShiftOp, Width};
use crate::alu;
use crate::flags::LazyFlags;

/// Sign-extends the `w`-bit value `v` to 32 bits.
#[inline(always)]
pub const fn sext(v: u32, w: Width) -> u32 {
    let s = 32 - w.bits();
    (((v << s) as i32) >> s) as u32
}

/// Pure ALU op at width `w`; operands are masked to the width first.
#[inline(always)]
pub fn alu(op: AluOp, w: Width, a: u32, b: u32) -> u32 {
    let m = w.mask();
    let (a, bm) = (a & m, b & m);
    let r = match op {
        AluOp::Add => a.wrapping_add(bm),
        AluOp::Sub => a.wrapping_sub(bm),
        AluOp::And => a & bm,
        AluOp::Or => a | bm,
        AluOp::Xor => a ^ bm,
        AluOp::Shl => a.wrapping_shl(b & 31),
        AluOp::Shr => a >> (b & 31),
        AluOp::Sar => ((sext(a, w) as i32) >> (b & 31)) as u32,
        AluOp::Mul => a.wrapping_mul(bm),
    };
    r & m
}

/// x86 arithmetic at width `w` with its flag record; returns the result masked
/// to the width. Delegates to [`crate::alu`], toyvm L0's own helpers.
#[inline(always)]
pub fn arith(op: ArithOp, w: Width, a: u32, b: u32, fl: &mut LazyFlags) -> u32 {
    let m = w.mask();
    let (a, b) = (a & m, b & m);
    let (r, u) = match op {
        ArithOp::Add => alu::add(w, a, b, false),
        ArithOp::Adc => alu::add(w, a, b, fl.cf()),
        ArithOp::Sub => alu::sub(w, a, b, false),
        ArithOp::Sbb => alu::sub(w, a, b, fl.cf()),
        ArithOp::And => alu::binop(alu::AluOp::And, w, a, b, false),
        ArithOp::Or => alu::binop(alu::AluOp::Or, w, a, b, false),
        ArithOp::Xor => alu::binop(alu::AluOp::Xor, w, a, b, false),
        ArithOp::Inc => alu::inc(w, a),
        ArithOp::Dec => alu::dec(w, a),
        ArithOp::Neg => alu::neg(w, a),
    };
    u.apply(fl);
    r
}

/// x86 shift/rotate of `a` by `count` at width `w`, flags included
/// ([`crate::alu::shift`]: count masked to 5 bits; a zero masked count
/// returns `a` and leaves the flags).
pub fn shift(op: ShiftOp, w: Width, a: u32, count: u32, fl: &mut LazyFlags) -> u32 {
    let op = match op {
        ShiftOp::Rol => alu::ShiftOp::Rol,
        ShiftOp::Ror => alu::ShiftOp::Ror,
        ShiftOp::Rcl => alu::ShiftOp::Rcl,
        ShiftOp::Rcr => alu::ShiftOp::Rcr,
        ShiftOp::Shl => alu::ShiftOp::Shl,
        ShiftOp::Shr => alu::ShiftOp::Shr,
        ShiftOp::Sar => alu::ShiftOp::Sar,
    };
    let (r, u) = alu::shift(op, w, a & w.mask(), count, fl.cf());
    u.apply(fl);
    r
}

/// Compare-and-branch condition at width `w`.
#[inline(always)]
pub fn compare(op: CmpOp, w: Width, a: u32, b: u32) -> bool {
    let m = w.mask();
    let (a, b) = (a & m, b & m);
    let (sa, sb) = (sext(a, w) as i32, sext(b, w) as i32);
    match op {
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
        CmpOp::Ltu => a < b,
        CmpOp::Leu => a <= b,
        CmpOp::Gtu => a > b,
        CmpOp::Geu => a >= b,
        CmpOp::Lts => sa < sb,
        CmpOp::Les => sa <= sb,
        CmpOp::Gts => sa > sb,
        CmpOp::Ges => sa >= sb,
    }
}

/// A helper refused its inputs (divide error): the instruction must run in a
/// finer tier, which raises the fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HelperFault;

/// Runs a helper on its arguments ([`crate::alu`]'s MUL/IMUL/DIV/IDIV).
/// Results beyond the helper's arity are 0.
pub fn helper(h: Helper, args: [u32; 3], fl: &mut LazyFlags) -> Result<[u32; 2], HelperFault> {
    helper_inline(h, args, fl)
}

/// [`helper`] itself, always inlined: a caller that names a constant
/// helper (E1's hot multiply, double-shift and bit-test arms) gets that one
/// helper's code with no call and no table. The one definition of every
/// helper's semantics.
#[inline(always)]
pub fn helper_inline(
    h: Helper,
    args: [u32; 3],
    fl: &mut LazyFlags,
) -> Result<[u32; 2], HelperFault> {
    use Width::*;
    let [a0, a1, a2] = args;
    let m = |w: Width, v: u32| v & w.mask();
    let wide = |w: Width, (lo, hi, u): (u32, u32, alu::FlagUpdate), fl: &mut LazyFlags| {
        u.apply(fl);
        if w == W8 {
            [lo | hi << 8, 0]
        } else {
            [lo, hi]
        }
    };
    let div =
        |r: Result<(u32, u32), alu::DivideError>| r.map(|(q, r)| [q, r]).map_err(|_| HelperFault);
    Ok(match h {
        Helper::Mul8 => wide(W8, alu::mul(W8, m(W8, a0), m(W8, a1)), fl),
        Helper::Mul16 => wide(W16, alu::mul(W16, m(W16, a0), m(W16, a1)), fl),
        Helper::Mul32 => wide(W32, alu::mul(W32, a0, a1), fl),
        Helper::Imul8 => wide(W8, alu::imul(W8, m(W8, a0), m(W8, a1)), fl),
        Helper::Imul16 => wide(W16, alu::imul(W16, m(W16, a0), m(W16, a1)), fl),
        Helper::Imul32 => wide(W32, alu::imul(W32, a0, a1), fl),
        Helper::ImulTrunc16 => {
            let (r, u) = alu::imul_trunc(W16, m(W16, a0), m(W16, a1));
            u.apply(fl);
            [r, 0]
        }
        Helper::ImulTrunc32 => {
            let (r, u) = alu::imul_trunc(W32, a0, a1);
            u.apply(fl);
            [r, 0]
        }
        Helper::Div8 => div(alu::div(W8, (a0 >> 8) & 0xFF, a0 & 0xFF, m(W8, a1)))?,
        Helper::Div16 => div(alu::div(W16, m(W16, a0), m(W16, a1), m(W16, a2)))?,
        Helper::Div32 => div(alu::div(W32, a0, a1, a2))?,
        Helper::Idiv8 => div(alu::idiv(W8, (a0 >> 8) & 0xFF, a0 & 0xFF, m(W8, a1)))?,
        Helper::Idiv16 => div(alu::idiv(W16, m(W16, a0), m(W16, a1), m(W16, a2)))?,
        Helper::Idiv32 => div(alu::idiv(W32, a0, a1, a2))?,
        Helper::Shld16 | Helper::Shld32 | Helper::Shrd16 | Helper::Shrd32 => {
            let w = if matches!(h, Helper::Shld16 | Helper::Shrd16) {
                W16
            } else {
                W32
            };
            let (r, u) = if matches!(h, Helper::Shld16 | Helper::Shld32) {
                alu::shld(w, m(w, a0), m(w, a1), a2 & 0xFF)
            } else {
                alu::shrd(w, m(w, a0), m(w, a1), a2 & 0xFF)
            };
            u.apply(fl);
            [r, 0]
        }
        Helper::Bt16 | Helper::Bt32 => {
            let w = if h == Helper::Bt16 { W16 } else { W32 };
            let op = [
                alu::BtOp::Bt,
                alu::BtOp::Bts,
                alu::BtOp::Btr,
                alu::BtOp::Btc,
            ][(a2 & 3) as usize];
            let (r, u) = alu::bt(op, w, m(w, a0), a1);
            u.apply(fl);
            [r, 0]
        }
        Helper::Daa | Helper::Das => {
            let (cf, af) = (fl.cf(), fl.af());
            let (al, u) = if h == Helper::Daa {
                alu::daa(a0 as u8, cf, af)
            } else {
                alu::das(a0 as u8, cf, af)
            };
            u.apply(fl);
            [al as u32, 0]
        }
        Helper::Aaa | Helper::Aas => {
            let af = fl.af();
            let (ax, u) = if h == Helper::Aaa {
                alu::aaa(a0 as u16, af)
            } else {
                alu::aas(a0 as u16, af)
            };
            u.apply(fl);
            [ax as u32, 0]
        }
        Helper::Aam => {
            let (ax, u) = alu::aam(a0 as u8, a1 as u8).map_err(|_| HelperFault)?;
            u.apply(fl);
            [ax as u32, 0]
        }
        Helper::Aad => {
            let (ax, u) = alu::aad(a0 as u16, a1 as u8);
            u.apply(fl);
            [ax as u32, 0]
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flags::FlagKind;

    #[test]
    fn shifts_by_zero_change_nothing_and_rotates_keep_szp() {
        let mut f = LazyFlags::default();
        f.record(FlagKind::Sub16, 3, 5, 0xFFFE);
        let before = f.bits();
        assert_eq!(shift(ShiftOp::Shl, Width::W16, 0x1234, 32, &mut f), 0x1234);
        assert_eq!(f.bits(), before);
        let r = shift(ShiftOp::Rol, Width::W8, 0x81, 1, &mut f);
        assert_eq!(r, 0x03);
        assert!(f.cf());
        // SF ZF PF AF untouched by a rotate.
        assert_eq!(f.bits() & 0xD4, before & 0xD4);
    }

    #[test]
    fn shl_past_the_width_clears_and_reports_carry_from_the_last_bit_out() {
        let mut f = LazyFlags::default();
        assert_eq!(shift(ShiftOp::Shl, Width::W8, 0x01, 8, &mut f), 0);
        assert!(f.cf());
        assert_eq!(shift(ShiftOp::Shl, Width::W8, 0xFF, 9, &mut f), 0);
        assert!(!f.cf());
        assert!(f.zf());
    }

    #[test]
    fn rcl_rotates_through_carry() {
        let mut f = LazyFlags::default();
        f.set_cf(true);
        assert_eq!(shift(ShiftOp::Rcl, Width::W8, 0x80, 1, &mut f), 0x01);
        assert!(f.cf());
        f.set_cf(false);
        // 9-bit rotate by 9 is the identity.
        assert_eq!(shift(ShiftOp::Rcl, Width::W8, 0x5A, 9, &mut f), 0x5A);
        assert!(!f.cf());
    }

    #[test]
    fn division_refuses_zero_and_overflow() {
        let mut f = LazyFlags::default();
        assert_eq!(helper(Helper::Div16, [0, 100, 7], &mut f), Ok([14, 2]));
        assert_eq!(helper(Helper::Div16, [1, 0, 1], &mut f), Err(HelperFault));
        assert_eq!(helper(Helper::Div8, [100, 0, 0], &mut f), Err(HelperFault));
        assert_eq!(
            helper(Helper::Idiv8, [(-128i16) as u16 as u32, 1, 0], &mut f),
            Ok([0x80, 0])
        );
        assert_eq!(helper(Helper::Idiv8, [128, 1, 0], &mut f), Err(HelperFault));
    }
}
