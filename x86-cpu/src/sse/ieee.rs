//! IEEE single and double arithmetic as the SSE unit performs it: exactly
//! rounded + − × ÷ √, MIN/MAX, compares and conversions, under MXCSR's
//! rounding control, DAZ and FTZ, with the exception flags each raises.
//!
//! Owns the SSE rules that differ from the x87: results go straight to the
//! destination format (one rounding, the format's own exponent range), the
//! first source's NaN wins and the invalid result is the negative QNaN
//! "indefinite", DAZ zeroes denormal inputs, FTZ zeroes tiny results when
//! underflow is masked. The significand arithmetic and the rounding routine
//! are the x87 soft-float's (`fpu::softfloat`); nothing here uses host
//! floating point. It must not know about registers, lanes or memory.

use crate::fpu::softfloat::{
    self as sf, Flags, Format, Rounded, Rounding, F80, FMT_DOUBLE, FMT_SINGLE,
};
pub use sf::Ordering;
use sf::{IE, PE, UE, ZE};

/// The element format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prec {
    Single,
    Double,
}

/// What MXCSR says about one operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mx {
    pub rc: u8,
    /// Exception masks in flag positions (IM = bit 0 ... PM = bit 5).
    pub masks: u16,
    pub daz: bool,
    pub ftz: bool,
}

impl Mx {
    pub fn of(mxcsr: u32) -> Mx {
        use super::mxcsr as m;
        Mx {
            rc: ((mxcsr >> m::RC_SHIFT) & 3) as u8,
            masks: ((mxcsr >> m::MASK_SHIFT) & 0x3F) as u16,
            daz: mxcsr & m::DAZ != 0,
            ftz: mxcsr & m::FTZ != 0,
        }
    }
}

impl Prec {
    fn fmt(self) -> Format {
        match self {
            Prec::Single => FMT_SINGLE,
            Prec::Double => FMT_DOUBLE,
        }
    }
    fn exp_bits(self) -> u32 {
        match self {
            Prec::Single => 8,
            Prec::Double => 11,
        }
    }
    fn frac_bits(self) -> u32 {
        match self {
            Prec::Single => 23,
            Prec::Double => 52,
        }
    }
    fn sign_bit(self) -> u64 {
        1 << (self.exp_bits() + self.frac_bits())
    }
    fn frac_mask(self) -> u64 {
        (1 << self.frac_bits()) - 1
    }
    fn exp_field(self, a: u64) -> u64 {
        (a >> self.frac_bits()) & ((1 << self.exp_bits()) - 1)
    }
    fn exp_max(self) -> u64 {
        (1 << self.exp_bits()) - 1
    }
    pub fn is_nan(self, a: u64) -> bool {
        self.exp_field(a) == self.exp_max() && a & self.frac_mask() != 0
    }
    pub fn is_snan(self, a: u64) -> bool {
        self.is_nan(a) && a & self.quiet_bit() == 0
    }
    fn quiet_bit(self) -> u64 {
        1 << (self.frac_bits() - 1)
    }
    fn quiet(self, a: u64) -> u64 {
        a | self.quiet_bit()
    }
    pub fn is_denormal(self, a: u64) -> bool {
        self.exp_field(a) == 0 && a & self.frac_mask() != 0
    }
    /// The QNaN "indefinite" a masked invalid operation returns.
    pub fn indefinite(self) -> u64 {
        self.sign_bit() | (self.exp_max() << self.frac_bits()) | self.quiet_bit()
    }
    fn zero(self, neg: bool) -> u64 {
        if neg {
            self.sign_bit()
        } else {
            0
        }
    }
    fn infinity(self, neg: bool) -> u64 {
        self.zero(neg) | (self.exp_max() << self.frac_bits())
    }
    fn sign(self, a: u64) -> bool {
        a & self.sign_bit() != 0
    }
    /// DAZ: a denormal input becomes a zero of its sign (no DE).
    fn daz(self, a: u64, mx: Mx) -> u64 {
        if mx.daz && self.is_denormal(a) {
            a & self.sign_bit()
        } else {
            a
        }
    }
    /// The exact extended value of a non-NaN encoding (DE for a denormal).
    fn to_f80(self, a: u64, flags: &mut Flags) -> F80 {
        match self {
            Prec::Single => sf::from_f32(a as u32, flags),
            Prec::Double => sf::from_f64(a, flags),
        }
    }
    fn pack(self, r: Rounded) -> u64 {
        match self {
            Prec::Single => r.to_f32_bits() as u64,
            Prec::Double => r.to_f64_bits(),
        }
    }
}

/// Rounds the exact value (-1)^sign × sig/2^127 × 2^exp (sig bit 127 set,
/// sticky jammed) into `p` under `mx`: one rounding with the format's
/// exponent range (tininess after rounding, as x86 detects it), then FTZ.
fn round(p: Prec, sign: bool, exp: i32, sig: u128, mx: Mx, flags: &mut Flags) -> u64 {
    let fmt = p.fmt();
    let r = Rounding {
        rc: mx.rc,
        bits: fmt.precision,
        masks: mx.masks,
    };
    if mx.ftz && mx.masks & UE != 0 {
        // Tininess: the result rounded with an unbounded exponent lies
        // below the smallest normal.
        let wide = Format {
            emin: -1_000_000,
            emax: 1_000_000,
            ..fmt
        };
        let mut scratch = Flags::default();
        if let Rounded::Finite { exp, .. } =
            sf::round_pack(sign, exp, sig, fmt.precision, wide, r, &mut scratch)
        {
            if exp < fmt.emin {
                flags.raise(UE | PE);
                return p.zero(sign);
            }
        }
    }
    p.pack(sf::round_pack(sign, exp, sig, fmt.precision, fmt, r, flags))
}

/// Rounds an exact extended value into `p` (conversions).
fn round_f80(p: Prec, v: F80, mx: Mx, flags: &mut Flags) -> u64 {
    match v.class() {
        sf::Class::Zero => p.zero(v.sign()),
        sf::Class::Infinity => p.infinity(v.sign()),
        _ => {
            let u = v.unpack();
            round(p, u.sign, u.exp, (u.sig as u128) << 64, mx, flags)
        }
    }
}

/// The two-operand NaN rule: an SNaN raises IE; the first source's NaN
/// (quieted) wins over the second's.
fn nan2(p: Prec, a: u64, b: u64, flags: &mut Flags) -> Option<u64> {
    let (na, nb) = (p.is_nan(a), p.is_nan(b));
    if !na && !nb {
        return None;
    }
    if p.is_snan(a) || p.is_snan(b) {
        flags.raise(IE);
    }
    Some(if na { p.quiet(a) } else { p.quiet(b) })
}

/// The basic two-operand operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arith {
    Add,
    Sub,
    Mul,
    Div,
    Min,
    Max,
}

/// `a op b` in format `p` (the bits in the low 32 or 64 of each word).
pub fn arith(p: Prec, op: Arith, a: u64, b: u64, mx: Mx, flags: &mut Flags) -> u64 {
    let (a, b) = (p.daz(a, mx), p.daz(b, mx));
    if matches!(op, Arith::Min | Arith::Max) {
        return min_max(p, op == Arith::Min, a, b, flags);
    }
    if let Some(n) = nan2(p, a, b, flags) {
        return n;
    }
    let fa = p.to_f80(a, flags);
    let mut fb = p.to_f80(b, flags);
    use sf::Class::*;
    match op {
        Arith::Add | Arith::Sub => {
            if op == Arith::Sub {
                fb = fb.negate();
            }
            let (ca, cb) = (fa.class(), fb.class());
            if ca == Infinity || cb == Infinity {
                if ca == Infinity && cb == Infinity && fa.sign() != fb.sign() {
                    flags.raise(IE);
                    return p.indefinite();
                }
                return p.infinity(if ca == Infinity { fa.sign() } else { fb.sign() });
            }
            if ca == Zero && cb == Zero {
                let neg = if fa.sign() == fb.sign() {
                    fa.sign()
                } else {
                    mx.rc == sf::RC_DOWN
                };
                return p.zero(neg);
            }
            if ca == Zero {
                return round_f80(p, fb, mx, flags);
            }
            if cb == Zero {
                return round_f80(p, fa, mx, flags);
            }
            match sf::add_sig(fa.unpack(), fb.unpack()) {
                None => p.zero(mx.rc == sf::RC_DOWN),
                Some((s, e, n)) => round(p, s, e, n, mx, flags),
            }
        }
        Arith::Mul => {
            let sign = fa.sign() != fb.sign();
            let (ca, cb) = (fa.class(), fb.class());
            if ca == Infinity || cb == Infinity {
                if ca == Zero || cb == Zero {
                    flags.raise(IE);
                    return p.indefinite();
                }
                return p.infinity(sign);
            }
            if ca == Zero || cb == Zero {
                return p.zero(sign);
            }
            let (s, e, n) = sf::mul_sig(fa.unpack(), fb.unpack());
            round(p, s, e, n, mx, flags)
        }
        _ => {
            let sign = fa.sign() != fb.sign();
            let (ca, cb) = (fa.class(), fb.class());
            if ca == Infinity {
                if cb == Infinity {
                    flags.raise(IE);
                    return p.indefinite();
                }
                return p.infinity(sign);
            }
            if cb == Infinity {
                return p.zero(sign);
            }
            if cb == Zero {
                if ca == Zero {
                    flags.raise(IE);
                    return p.indefinite();
                }
                flags.raise(ZE);
                return p.infinity(sign);
            }
            if ca == Zero {
                return p.zero(sign);
            }
            let (ua, ub) = (fa.unpack(), fb.unpack());
            let (q, e) = sf::div_sig(ua.sig, ub.sig);
            round(p, sign, ua.exp - ub.exp + e, q, mx, flags)
        }
    }
}

/// MINxx/MAXxx: any NaN raises IE (QNaN too) and returns the second
/// source; so does a tie (±0 against ±0); otherwise the smaller/larger.
fn min_max(p: Prec, min: bool, a: u64, b: u64, flags: &mut Flags) -> u64 {
    if p.is_nan(a) || p.is_nan(b) {
        flags.raise(IE);
        return b;
    }
    let fa = p.to_f80(a, flags);
    let fb = p.to_f80(b, flags);
    let ord = sf::compare(fa, fb, true, &mut Flags::default());
    let pick_a = if min {
        ord == Ordering::Less
    } else {
        ord == Ordering::Greater
    };
    if pick_a {
        a
    } else {
        b
    }
}

/// √a.
pub fn sqrt(p: Prec, a: u64, mx: Mx, flags: &mut Flags) -> u64 {
    let a = p.daz(a, mx);
    if p.is_nan(a) {
        if p.is_snan(a) {
            flags.raise(IE);
        }
        return p.quiet(a);
    }
    let fa = p.to_f80(a, flags);
    match fa.class() {
        sf::Class::Zero => a,
        sf::Class::Infinity if !fa.sign() => a,
        _ if fa.sign() => {
            flags.raise(IE);
            p.indefinite()
        }
        _ => {
            let u = fa.unpack();
            let (root, e) = sf::sqrt_sig(u.sig, u.exp);
            round(p, false, e, root, mx, flags)
        }
    }
}

/// Compares a with b; NaNs give Unordered and raise IE when signalling (or
/// when either is an SNaN). DE for denormal inputs (not under DAZ).
pub fn compare(p: Prec, a: u64, b: u64, signalling: bool, mx: Mx, flags: &mut Flags) -> Ordering {
    let (a, b) = (p.daz(a, mx), p.daz(b, mx));
    if p.is_nan(a) || p.is_nan(b) {
        if signalling || p.is_snan(a) || p.is_snan(b) {
            flags.raise(IE);
        }
        return Ordering::Unordered;
    }
    let fa = p.to_f80(a, flags);
    let fb = p.to_f80(b, flags);
    sf::compare(fa, fb, true, &mut Flags::default())
}

/// CMPxx's predicate `imm & 7` (EQ LT LE UNORD NEQ NLT NLE ORD) as true/false.
pub fn cmp_predicate(p: Prec, pred: u8, a: u64, b: u64, mx: Mx, flags: &mut Flags) -> bool {
    let pred = pred & 7;
    // LT, LE, NLT, NLE signal on QNaNs.
    let signalling = matches!(pred, 1 | 2 | 5 | 6);
    let o = compare(p, a, b, signalling, mx, flags);
    use Ordering::*;
    match pred {
        0 => o == Equal,
        1 => o == Less,
        2 => matches!(o, Less | Equal),
        3 => o == Unordered,
        4 => o != Equal,
        5 => o != Less,
        6 => !matches!(o, Less | Equal),
        _ => o != Unordered,
    }
}

/// Float to signed integer of `bits` (32 or 64): rounding per `mx.rc`, or
/// toward zero when `truncate`. NaN, infinity and out-of-range values raise
/// IE and give the "integer indefinite" (the minimum value); an inexact
/// conversion raises PE. Denormal inputs do not raise DE.
pub fn to_int(p: Prec, a: u64, truncate: bool, bits: u32, mx: Mx, flags: &mut Flags) -> u64 {
    let indefinite = 1u64 << (bits - 1);
    let a = p.daz(a, mx);
    if p.is_nan(a) {
        flags.raise(IE);
        return indefinite;
    }
    let fa = p.to_f80(a, &mut Flags::default());
    let rc = if truncate { sf::RC_ZERO } else { mx.rc };
    let (min, max) = if bits == 32 {
        (i32::MIN as i64, i32::MAX as i64)
    } else {
        (i64::MIN, i64::MAX)
    };
    match sf::to_int(fa, rc, min, max, flags) {
        Some(v) => v as u64 & (u64::MAX >> (64 - bits)),
        None => indefinite,
    }
}

/// Signed integer to float (exact for doubles from 32 bits; singles round).
pub fn from_int(p: Prec, v: i64, mx: Mx, flags: &mut Flags) -> u64 {
    round_f80(p, sf::from_int(v), mx, flags)
}

/// Converts between the formats (CVTSS2SD, CVTSD2SS and the packed forms):
/// NaNs keep sign and leading payload bits and are quieted (IE for an
/// SNaN), denormal inputs raise DE (zero under DAZ), narrowing rounds.
pub fn convert(from: Prec, to: Prec, a: u64, mx: Mx, flags: &mut Flags) -> u64 {
    let a = from.daz(a, mx);
    if from.is_nan(a) {
        if from.is_snan(a) {
            flags.raise(IE);
        }
        let q = from.quiet(a);
        let frac = q & from.frac_mask();
        let frac = if to.frac_bits() > from.frac_bits() {
            frac << (to.frac_bits() - from.frac_bits())
        } else {
            frac >> (from.frac_bits() - to.frac_bits())
        };
        return to.infinity(from.sign(q)) | frac;
    }
    let v = from.to_f80(a, flags);
    round_f80(to, v, mx, flags)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RN: Mx = Mx {
        rc: 0,
        masks: 0x3F,
        daz: false,
        ftz: false,
    };

    fn d(op: Arith, a: f64, b: f64) -> (u64, u16) {
        let mut f = Flags::default();
        let r = arith(Prec::Double, op, a.to_bits(), b.to_bits(), RN, &mut f);
        (r, f.exc)
    }

    #[test]
    fn double_basics_match_ieee() {
        assert_eq!(d(Arith::Add, 1.0, 2.0), (3.0f64.to_bits(), 0));
        assert_eq!(d(Arith::Div, 1.0, 3.0), ((1.0f64 / 3.0).to_bits(), PE));
        assert_eq!(d(Arith::Div, 1.0, 0.0), (f64::INFINITY.to_bits(), ZE));
        assert_eq!(d(Arith::Sub, 0.1, 0.1), (0, 0));
        assert_eq!(
            d(Arith::Mul, 1e308, 10.0),
            (f64::INFINITY.to_bits(), sf::OE | PE)
        );
        // Tiny and exact: no UE when masked; DE for the denormal input.
        let tiny = f64::from_bits(1);
        assert_eq!(d(Arith::Add, tiny, tiny), (2, sf::DE));
        // 0/0: the negative QNaN indefinite.
        assert_eq!(d(Arith::Div, 0.0, 0.0), (0xFFF8_0000_0000_0000, IE));
    }
}
