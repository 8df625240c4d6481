//! ALU helpers: x86 arithmetic, logic, shift, rotate, multiply, divide and BCD
//! semantics, producing results plus a lazy-flag record ([`crate::flags`]).
//!
//! Every interpreter calls these so that results and flags have one definition.
//! Pure functions of their inputs: no machine state, no memory, no exceptions
//! beyond returning "divide error" to the caller. Values passed in are masked to
//! the operation width by the caller; results come back masked.
//!
//! Where the architecture leaves a flag undefined we still produce one fixed,
//! deterministic value (documented per helper), so every arm agrees; the
//! conformance harnesses mask those flags.

use crate::flags::{FlagKind, FlagOp, LazyFlags, Width, AF, ARITH, CF, OF, PF, SF, ZF};

/// How an operation changes the arithmetic flags. Apply with [`FlagUpdate::apply`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlagUpdate {
    /// Flags unchanged (shift by zero, DIV on this model).
    None,
    /// A full lazy record (ADD/SUB families and logic).
    Record {
        kind: FlagKind,
        a: u32,
        b: u32,
        r: u32,
    },
    /// INC: every flag but CF from the record.
    Inc { w: Width, a: u32, r: u32 },
    /// DEC: every flag but CF from the record.
    Dec { w: Width, a: u32, r: u32 },
    /// SF ZF PF from `r`, the other three given.
    Szp {
        w: Width,
        r: u32,
        cf: bool,
        of: bool,
        af: bool,
    },
    /// Replace exactly the flags in `mask` with those in `value`.
    Bits { mask: u32, value: u32 },
}

impl FlagUpdate {
    /// Writes this update into a flag record.
    #[inline(always)]
    pub fn apply(self, f: &mut LazyFlags) {
        match self {
            FlagUpdate::None => {}
            FlagUpdate::Record { kind, a, b, r } => f.record(kind, a, b, r),
            FlagUpdate::Inc { w, a, r } => f.record_inc(w, a, r),
            FlagUpdate::Dec { w, a, r } => f.record_dec(w, a, r),
            FlagUpdate::Szp { w, r, cf, of, af } => f.record_szp(w, r, cf, of, af),
            FlagUpdate::Bits { mask, value } => {
                if mask == CF {
                    f.set_cf(value & CF != 0);
                } else {
                    f.materialize();
                    f.eager = (f.eager & !mask) | (value & mask);
                }
            }
        }
    }
}

#[inline(always)]
fn msb(w: Width, v: u32) -> bool {
    v >> w.sign_shift() & 1 != 0
}

#[inline(always)]
fn sext(w: Width, v: u32) -> i64 {
    match w {
        Width::W8 => v as u8 as i8 as i64,
        Width::W16 => v as u16 as i16 as i64,
        Width::W32 => v as i32 as i64,
    }
}

/// The eight classic ALU operations, in ModRM /reg encoding order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AluOp {
    Add,
    Or,
    Adc,
    Sbb,
    And,
    Sub,
    Xor,
    Cmp,
}

impl AluOp {
    /// From the /reg field (0-7).
    pub fn from_index(i: u8) -> AluOp {
        [
            AluOp::Add,
            AluOp::Or,
            AluOp::Adc,
            AluOp::Sbb,
            AluOp::And,
            AluOp::Sub,
            AluOp::Xor,
            AluOp::Cmp,
        ][i as usize & 7]
    }
}

/// `a + b + cin`.
#[inline(always)]
pub fn add(w: Width, a: u32, b: u32, cin: bool) -> (u32, FlagUpdate) {
    let r = a.wrapping_add(b).wrapping_add(cin as u32) & w.mask();
    let kind = FlagKind::new(FlagOp::Add, w);
    (r, FlagUpdate::Record { kind, a, b, r })
}

/// `a - b - bin`.
#[inline(always)]
pub fn sub(w: Width, a: u32, b: u32, bin: bool) -> (u32, FlagUpdate) {
    let r = a.wrapping_sub(b).wrapping_sub(bin as u32) & w.mask();
    let kind = FlagKind::new(FlagOp::Sub, w);
    (r, FlagUpdate::Record { kind, a, b, r })
}

/// Flags of a logical result (AND OR XOR TEST): CF = OF = AF = 0.
#[inline(always)]
pub fn logic(w: Width, r: u32) -> FlagUpdate {
    FlagUpdate::Record {
        kind: FlagKind::new(FlagOp::Logic, w),
        a: 0,
        b: 0,
        r,
    }
}

/// One of the eight classic ALU operations. `cf` is the incoming carry (ADC/SBB).
/// The caller discards the result for CMP.
#[inline(always)]
pub fn binop(op: AluOp, w: Width, a: u32, b: u32, cf: bool) -> (u32, FlagUpdate) {
    match op {
        AluOp::Add => add(w, a, b, false),
        AluOp::Adc => add(w, a, b, cf),
        AluOp::Sub | AluOp::Cmp => sub(w, a, b, false),
        AluOp::Sbb => sub(w, a, b, cf),
        AluOp::Or => (a | b, logic(w, a | b)),
        AluOp::And => (a & b, logic(w, a & b)),
        AluOp::Xor => (a ^ b, logic(w, a ^ b)),
    }
}

/// INC (CF untouched).
#[inline(always)]
pub fn inc(w: Width, a: u32) -> (u32, FlagUpdate) {
    let r = a.wrapping_add(1) & w.mask();
    (r, FlagUpdate::Inc { w, a, r })
}

/// DEC (CF untouched).
#[inline(always)]
pub fn dec(w: Width, a: u32) -> (u32, FlagUpdate) {
    let r = a.wrapping_sub(1) & w.mask();
    (r, FlagUpdate::Dec { w, a, r })
}

/// NEG: `0 - a`, flags as SUB (CF = a != 0).
#[inline(always)]
pub fn neg(w: Width, a: u32) -> (u32, FlagUpdate) {
    sub(w, 0, a, false)
}

/// Shift and rotate operations, in ModRM /reg order (/6 is the SAL alias of SHL).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShiftOp {
    Rol,
    Ror,
    Rcl,
    Rcr,
    Shl,
    Shr,
    Sal,
    Sar,
}

impl ShiftOp {
    /// From the /reg field (0-7).
    pub fn from_index(i: u8) -> ShiftOp {
        [
            ShiftOp::Rol,
            ShiftOp::Ror,
            ShiftOp::Rcl,
            ShiftOp::Rcr,
            ShiftOp::Shl,
            ShiftOp::Shr,
            ShiftOp::Sal,
            ShiftOp::Sar,
        ][i as usize & 7]
    }
}

/// Shift or rotate `a` by `count` (masked here to 5 bits, as on the 286 and later).
///
/// A masked count of 0 changes nothing. Rotates change only CF and OF. OF is
/// defined only for a count of 1; for larger counts we produce the count-1
/// formula applied to the final result (rotates, SHL) or to the last step (SHR),
/// and 0 for SAR. AF is undefined for shifts; we clear it.
pub fn shift(op: ShiftOp, w: Width, a: u32, count: u32, cf_in: bool) -> (u32, FlagUpdate) {
    let c = count & 31;
    if c == 0 {
        return (a, FlagUpdate::None);
    }
    let bits = w.bits();
    let m = w.mask();
    match op {
        ShiftOp::Rol | ShiftOp::Ror => {
            let k = c % bits;
            let a64 = a as u64;
            let r = match (k, op) {
                (0, _) => a,
                (_, ShiftOp::Rol) => ((a64 << k) | (a64 >> (bits - k))) as u32 & m,
                _ => ((a64 >> k) | (a64 << (bits - k))) as u32 & m,
            };
            let (cf, of) = if op == ShiftOp::Rol {
                let cf = r & 1 != 0;
                (cf, msb(w, r) ^ cf)
            } else {
                let cf = msb(w, r);
                (cf, msb(w, r) ^ (r >> (bits - 2) & 1 != 0))
            };
            (r, rot_flags(cf, of))
        }
        ShiftOp::Rcl | ShiftOp::Rcr => {
            let k = if bits == 32 { c } else { c % (bits + 1) };
            // Rotate the (bits+1)-wide value CF:a as a u64.
            let wide = ((cf_in as u64) << bits) | a as u64;
            let modulus = bits + 1;
            let full = (1u64 << modulus) - 1;
            let rot = match (k, op) {
                (0, _) => wide,
                (_, ShiftOp::Rcl) => ((wide << k) | (wide >> (modulus - k))) & full,
                _ => ((wide >> k) | (wide << (modulus - k))) & full,
            };
            let r = (rot as u32) & m;
            let cf = rot >> bits & 1 != 0;
            let of = if op == ShiftOp::Rcl {
                msb(w, r) ^ cf
            } else {
                msb(w, r) ^ (r >> (bits - 2) & 1 != 0)
            };
            (r, rot_flags(cf, of))
        }
        ShiftOp::Shl | ShiftOp::Sal => {
            let wide = (a as u64) << c;
            let r = (wide as u32) & m;
            let cf = wide >> bits & 1 != 0;
            let of = msb(w, r) ^ cf;
            (r, szp(w, r, cf, of))
        }
        ShiftOp::Shr => {
            let r = ((a as u64) >> c) as u32 & m;
            let cf = (a as u64) >> (c - 1) & 1 != 0;
            let prev = ((a as u64) >> (c - 1)) as u32 & m;
            let of = msb(w, prev);
            (r, szp(w, r, cf, of))
        }
        ShiftOp::Sar => {
            let s = sext(w, a);
            let r = (s >> c) as u32 & m;
            let cf = (s >> (c - 1)) & 1 != 0;
            (r, szp(w, r, cf, false))
        }
    }
}

#[inline(always)]
fn rot_flags(cf: bool, of: bool) -> FlagUpdate {
    FlagUpdate::Bits {
        mask: CF | OF,
        value: cf as u32 | (of as u32) << 11,
    }
}

#[inline(always)]
fn szp(w: Width, r: u32, cf: bool, of: bool) -> FlagUpdate {
    FlagUpdate::Szp {
        w,
        r,
        cf,
        of,
        af: false,
    }
}

/// SHLD: shift `a` left by `count` (masked to 5 bits), filling from the top of `b`.
///
/// For 16-bit operands a count above 16 is undefined; we shift the 48-bit
/// pattern `a:b:a` (what a 386 does), so the result is deterministic.
pub fn shld(w: Width, a: u32, b: u32, count: u32) -> (u32, FlagUpdate) {
    let c = count & 31;
    if c == 0 {
        return (a, FlagUpdate::None);
    }
    let bits = w.bits() as u64;
    let m = w.mask() as u64;
    let (a64, b64) = (a as u64, b as u64);
    let pat: u128 = ((a64 as u128) << (2 * bits)) | ((b64 as u128) << bits) | a64 as u128;
    let total = 3 * bits;
    let shifted = pat << c;
    let r = ((shifted >> (total - bits)) as u64 & m) as u32;
    let cf = (shifted >> total) & 1 != 0;
    let of = msb(w, r) ^ msb(w, a);
    (r, szp(w, r, cf, of))
}

/// SHRD: shift `a` right by `count` (masked to 5 bits), filling from the bottom of `b`.
/// 16-bit counts above 16 shift the pattern `a:b:a` read right to left (see [`shld`]).
pub fn shrd(w: Width, a: u32, b: u32, count: u32) -> (u32, FlagUpdate) {
    let c = count & 31;
    if c == 0 {
        return (a, FlagUpdate::None);
    }
    let bits = w.bits() as u64;
    let m = w.mask() as u64;
    let (a64, b64) = (a as u64, b as u64);
    let pat: u128 = ((a64 as u128) << (2 * bits)) | ((b64 as u128) << bits) | a64 as u128;
    let r = ((pat >> c) as u64 & m) as u32;
    let cf = (pat >> (c - 1)) & 1 != 0;
    let of = msb(w, r) ^ msb(w, a);
    (r, szp(w, r, cf, of))
}

/// MUL: unsigned `a * b`, returns (low, high). CF = OF = high != 0; SF ZF PF
/// (undefined) follow the low half; AF (undefined) is cleared.
#[inline]
pub fn mul(w: Width, a: u32, b: u32) -> (u32, u32, FlagUpdate) {
    let full = a as u64 * b as u64;
    let lo = (full as u32) & w.mask();
    let hi = ((full >> w.bits()) as u32) & w.mask();
    let c = hi != 0;
    (lo, hi, szp(w, lo, c, c))
}

/// IMUL (one-operand form): signed `a * b`, returns (low, high). CF = OF = the
/// product does not fit the low half.
#[inline]
pub fn imul(w: Width, a: u32, b: u32) -> (u32, u32, FlagUpdate) {
    let full = sext(w, a) * sext(w, b);
    let lo = (full as u32) & w.mask();
    let hi = ((full >> w.bits()) as u32) & w.mask();
    let c = sext(w, lo) != full;
    (lo, hi, szp(w, lo, c, c))
}

/// Why a division faults (#DE).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DivideError;

/// DIV: unsigned `(hi:lo) / d`, returns (quotient, remainder). Flags are
/// undefined; this model leaves them unchanged.
#[inline]
pub fn div(w: Width, hi: u32, lo: u32, d: u32) -> Result<(u32, u32), DivideError> {
    if d == 0 {
        return Err(DivideError);
    }
    let n = ((hi as u64) << w.bits()) | lo as u64;
    let q = n / d as u64;
    if q > w.mask() as u64 {
        return Err(DivideError);
    }
    Ok((q as u32, (n % d as u64) as u32))
}

/// IDIV: signed `(hi:lo) / d`, truncating toward zero. Faults when the quotient
/// does not fit (the 286 and later accept the most negative quotient).
#[inline]
pub fn idiv(w: Width, hi: u32, lo: u32, d: u32) -> Result<(u32, u32), DivideError> {
    if d & w.mask() == 0 {
        return Err(DivideError);
    }
    let bits = w.bits();
    let n: i64 = if bits == 32 {
        (((hi as u64) << 32) | lo as u64) as i64
    } else {
        let raw = ((hi as u64) << bits) | lo as u64;
        let sh = 64 - 2 * bits;
        ((raw << sh) as i64) >> sh
    };
    let dv = sext(w, d);
    let q = n.checked_div(dv).ok_or(DivideError)?;
    let r = n.wrapping_rem(dv);
    let lim = 1i64 << (bits - 1);
    if q < -lim || q >= lim {
        return Err(DivideError);
    }
    Ok((q as u32 & w.mask(), r as u32 & w.mask()))
}

/// Two- and three-operand IMUL: the truncated product, CF = OF = it overflowed.
#[inline]
pub fn imul_trunc(w: Width, a: u32, b: u32) -> (u32, FlagUpdate) {
    let (lo, _, f) = imul(w, a, b);
    (lo, f)
}

/// DAA on AL, given CF and AF. OF (undefined) is cleared.
pub fn daa(al: u8, cf: bool, af: bool) -> (u8, FlagUpdate) {
    let naf = (al & 0xF) > 9 || af;
    // The low-nibble carry can only matter when the high adjust happens too,
    // and that one sets CF by itself.
    let ncf = al > 0x99 || cf;
    let mut r = al;
    if naf {
        r = r.wrapping_add(6);
    }
    if ncf {
        r = r.wrapping_add(0x60);
    }
    (r, szp_af(r, ncf, naf))
}

/// DAS on AL, given CF and AF. OF (undefined) is cleared.
pub fn das(al: u8, cf: bool, af: bool) -> (u8, FlagUpdate) {
    let old = al;
    let mut al = al;
    let mut ncf = false;
    let naf = (al & 0xF) > 9 || af;
    if naf {
        let (v, b) = al.overflowing_sub(6);
        al = v;
        ncf = cf || b;
    }
    if old > 0x99 || cf {
        al = al.wrapping_sub(0x60);
        ncf = true;
    }
    (al, szp_af(al, ncf, naf))
}

#[inline]
fn szp_af(al: u8, cf: bool, af: bool) -> FlagUpdate {
    FlagUpdate::Szp {
        w: Width::W8,
        r: al as u32,
        cf,
        of: false,
        af,
    }
}

/// AAA on AX, given AF. Returns the new AX. SF ZF PF OF are undefined: SZP follow
/// the final AL, OF is cleared.
pub fn aaa(ax: u16, af: bool) -> (u16, FlagUpdate) {
    let adjust = (ax & 0xF) > 9 || af;
    let ax = if adjust { ax.wrapping_add(0x106) } else { ax };
    let ax = ax & 0xFF0F;
    (ax, szp_af(ax as u8, adjust, adjust))
}

/// AAS on AX, given AF. Returns the new AX (undefined flags as [`aaa`]).
pub fn aas(ax: u16, af: bool) -> (u16, FlagUpdate) {
    let adjust = (ax & 0xF) > 9 || af;
    let ax = if adjust {
        let al = (ax as u8).wrapping_sub(6);
        let ah = ((ax >> 8) as u8)
            .wrapping_sub(1)
            .wrapping_sub(((ax as u8) < 6) as u8);
        (ah as u16) << 8 | al as u16
    } else {
        ax
    };
    let ax = ax & 0xFF0F;
    (ax, szp_af(ax as u8, adjust, adjust))
}

/// AAM with base `imm`: AH = AL / imm, AL = AL % imm. Base 0 is #DE.
/// OF AF CF (undefined) are cleared.
pub fn aam(al: u8, imm: u8) -> Result<(u16, FlagUpdate), DivideError> {
    if imm == 0 {
        return Err(DivideError);
    }
    let ah = al / imm;
    let al = al % imm;
    Ok(((ah as u16) << 8 | al as u16, szp_af(al, false, false)))
}

/// AAD with base `imm`: AL = AL + AH * imm, AH = 0. Flags as the byte ADD of
/// AL and `AH * imm` (OF AF CF are undefined; this is what Intel parts do).
pub fn aad(ax: u16, imm: u8) -> (u16, FlagUpdate) {
    let prod = ((ax >> 8) as u8).wrapping_mul(imm) as u32;
    let (al, f) = add(Width::W8, ax as u8 as u32, prod, false);
    (al as u16, f)
}

/// BSF: index of the lowest set bit, or `None` for zero (destination unchanged).
/// ZF = source is zero; the other flags (undefined) follow the source as a
/// logic result.
pub fn bsf(w: Width, v: u32) -> (Option<u32>, FlagUpdate) {
    let v = v & w.mask();
    let r = if v == 0 {
        None
    } else {
        Some(v.trailing_zeros())
    };
    (r, bitscan_flags(v))
}

/// BSR: index of the highest set bit, or `None` for zero (flags as [`bsf`]).
pub fn bsr(w: Width, v: u32) -> (Option<u32>, FlagUpdate) {
    let v = v & w.mask();
    let r = if v == 0 {
        None
    } else {
        Some(31 - v.leading_zeros())
    };
    (r, bitscan_flags(v))
}

#[inline]
fn bitscan_flags(v: u32) -> FlagUpdate {
    FlagUpdate::Bits {
        mask: ZF,
        value: if v == 0 { ZF } else { 0 },
    }
}

/// The bit-test family, in 0F BA /reg order minus 4.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BtOp {
    Bt,
    Bts,
    Btr,
    Btc,
}

/// BT/BTS/BTR/BTC on `v` at bit `bit` (already reduced modulo the width by the
/// caller's addressing). Returns the new value (unchanged for BT). Only CF changes.
#[inline]
pub fn bt(op: BtOp, w: Width, v: u32, bit: u32) -> (u32, FlagUpdate) {
    let b = bit % w.bits();
    let m = 1u32 << b;
    let cf = v & m != 0;
    let r = match op {
        BtOp::Bt => v,
        BtOp::Bts => v | m,
        BtOp::Btr => v & !m,
        BtOp::Btc => v ^ m,
    };
    (
        r,
        FlagUpdate::Bits {
            mask: CF,
            value: cf as u32,
        },
    )
}

/// Flags as an all-eager word, for callers that write the six flags directly.
#[inline]
pub fn eager_arith(bits: u32) -> FlagUpdate {
    FlagUpdate::Bits {
        mask: ARITH,
        value: bits & ARITH,
    }
}

/// Bits of the six arithmetic flags, for building `Bits` updates by hand.
pub const ARITH_FLAGS: [u32; 6] = [CF, PF, AF, ZF, SF, OF];

#[cfg(test)]
mod tests {
    use super::*;

    fn flags_of(u: FlagUpdate) -> u32 {
        let mut f = LazyFlags::default();
        u.apply(&mut f);
        f.bits() & ARITH
    }

    #[test]
    fn shifts_by_zero_change_nothing_and_counts_are_masked() {
        assert_eq!(
            shift(ShiftOp::Shl, Width::W8, 0x81, 32, false),
            (0x81, FlagUpdate::None)
        );
        let (r, f) = shift(ShiftOp::Shl, Width::W8, 0x81, 33, false);
        assert_eq!(r, 0x02);
        assert_eq!(flags_of(f) & (CF | OF), CF | OF);
    }

    #[test]
    fn shl_beyond_width_shifts_everything_out() {
        let (r, f) = shift(ShiftOp::Shl, Width::W8, 0x01, 8, false);
        assert_eq!(r, 0);
        assert_eq!(flags_of(f) & (CF | ZF | PF), CF | ZF | PF);
        let (r, f) = shift(ShiftOp::Shr, Width::W16, 0x8000, 16, false);
        assert_eq!(r, 0);
        assert_eq!(flags_of(f) & CF, CF);
    }

    #[test]
    fn sar_keeps_the_sign() {
        let (r, f) = shift(ShiftOp::Sar, Width::W16, 0x8001, 1, false);
        assert_eq!(r, 0xC000);
        assert_eq!(flags_of(f) & (CF | SF | OF), CF | SF);
        let (r, _) = shift(ShiftOp::Sar, Width::W32, 0x8000_0000, 31, false);
        assert_eq!(r, 0xFFFF_FFFF);
    }

    #[test]
    fn rotates_touch_only_cf_and_of() {
        let (r, f) = shift(ShiftOp::Rol, Width::W8, 0x81, 1, false);
        assert_eq!(r, 0x03);
        assert_eq!(
            f,
            FlagUpdate::Bits {
                mask: CF | OF,
                value: CF | OF
            }
        );
        let (r, _) = shift(ShiftOp::Ror, Width::W32, 0x1, 4, false);
        assert_eq!(r, 0x1000_0000);
        let (r, f) = shift(ShiftOp::Rcl, Width::W8, 0x80, 1, false);
        assert_eq!(r, 0x00);
        assert_eq!(flags_of(f) & (CF | OF), CF | OF);
        let (r, f) = shift(ShiftOp::Rcr, Width::W8, 0x01, 1, true);
        assert_eq!(r, 0x80);
        assert_eq!(flags_of(f) & CF, CF);
        // RCL by 9 on a byte is the identity.
        assert_eq!(shift(ShiftOp::Rcl, Width::W8, 0x5A, 9, true).0, 0x5A);
        let (r, _) = shift(ShiftOp::Rcl, Width::W32, 0x8000_0000, 1, true);
        assert_eq!(r, 1);
    }

    #[test]
    fn double_shifts() {
        assert_eq!(shld(Width::W16, 0x1234, 0xABCD, 4).0, 0x234A);
        assert_eq!(shrd(Width::W16, 0x1234, 0xABCD, 4).0, 0xD123);
        assert_eq!(shld(Width::W32, 0x8000_0001, 0xF000_0000, 1).0, 0x0000_0003);
        assert_eq!(shrd(Width::W32, 1, 0, 1).0, 0);
    }

    #[test]
    fn multiply_and_divide() {
        let (lo, hi, f) = mul(Width::W16, 0xFFFF, 0xFFFF);
        assert_eq!((lo, hi), (0x0001, 0xFFFE));
        assert_eq!(flags_of(f) & (CF | OF), CF | OF);
        let (lo, hi, f) = imul(Width::W8, 0xFF, 0x02);
        assert_eq!((lo, hi), (0xFE, 0xFF));
        assert_eq!(flags_of(f) & (CF | OF), 0);
        assert_eq!(div(Width::W8, 0x01, 0x00, 0x02), Ok((0x80, 0)));
        assert_eq!(div(Width::W8, 0x02, 0x00, 0x02), Err(DivideError));
        assert_eq!(div(Width::W16, 0, 5, 0), Err(DivideError));
        // -128 / 1 fits on the 286 and later.
        assert_eq!(idiv(Width::W8, 0xFF, 0x80, 0x01), Ok((0x80, 0)));
        assert_eq!(idiv(Width::W8, 0x00, 0x80, 0x01), Err(DivideError));
        assert_eq!(idiv(Width::W16, 0xFFFF, 0xFFF9, 2), Ok((0xFFFD, 0xFFFF)));
        assert_eq!(
            idiv(Width::W32, 0x8000_0000, 0, 0xFFFF_FFFF),
            Err(DivideError)
        );
    }

    #[test]
    fn bcd() {
        let (al, f) = daa(0x0F, false, false);
        assert_eq!(al, 0x15);
        assert_eq!(flags_of(f) & (CF | AF), AF);
        let (al, f) = daa(0x9A, false, false);
        assert_eq!(al, 0x00);
        assert_eq!(flags_of(f) & (CF | ZF), CF | ZF);
        let (al, _) = das(0x10, false, true);
        assert_eq!(al, 0x0A);
        assert_eq!(aaa(0x000B, false).0, 0x0101);
        // AX - 6 borrows from AH, then AH - 1 (what the 286 vectors show).
        assert_eq!(aas(0x0200, true).0, 0x000A);
        assert_eq!(aas(0x0208, true).0, 0x0102);
        assert_eq!(aam(0x4F, 10).unwrap().0, 0x0709);
        assert!(aam(1, 0).is_err());
        assert_eq!(aad(0x0709, 10).0, 0x004F);
    }

    #[test]
    fn bit_ops() {
        assert_eq!(bsf(Width::W16, 0x0100).0, Some(8));
        assert_eq!(bsr(Width::W32, 0x8000_0001).0, Some(31));
        assert_eq!(bsf(Width::W16, 0).0, None);
        assert_eq!(flags_of(bsf(Width::W16, 0).1) & ZF, ZF);
        let (r, f) = bt(BtOp::Btc, Width::W16, 0x0001, 16);
        assert_eq!(r, 0x0000);
        assert_eq!(flags_of(f) & CF, CF);
    }

    #[test]
    fn binops_match_add_and_sub() {
        let (r, f) = binop(AluOp::Sbb, Width::W8, 0, 0, true);
        assert_eq!(r, 0xFF);
        assert_eq!(flags_of(f) & (CF | SF | AF), CF | SF | AF);
        let (r, f) = binop(AluOp::Xor, Width::W16, 0xFFFF, 0xFFFF, true);
        assert_eq!(r, 0);
        assert_eq!(flags_of(f), ZF | PF);
    }
}
