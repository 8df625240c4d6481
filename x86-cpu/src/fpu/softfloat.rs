//! 80-bit extended soft-float: the x87 number format and its exactly rounded
//! basic operations (+ − × ÷ √, round-to-integer, partial remainder, scaling,
//! comparisons, and the one rounding routine every result goes through).
//!
//! Owns the bit layout of extended reals, the classification of encodings as a
//! 387+ sees them (pseudo-denormals are denormals, unnormals, pseudo-NaNs and
//! pseudo-infinities are "unsupported"), IEEE rounding in four modes with x87
//! precision control, tininess after rounding, and the exception flags a
//! result raises. Everything is integer arithmetic: no host floating point, no
//! allocation. It must not know about the register stack, tags, the status
//! word or memory: callers decide what a flag means for the machine.

/// Exception flag bits, in status-word positions.
pub const IE: u16 = 0x0001;
pub const DE: u16 = 0x0002;
pub const ZE: u16 = 0x0004;
pub const OE: u16 = 0x0008;
pub const UE: u16 = 0x0010;
pub const PE: u16 = 0x0020;
/// Stack fault (status word bit 6; always raised together with IE).
pub const SF: u16 = 0x0040;

/// Exponent bias of the extended format.
pub const BIAS: i32 = 16383;
/// Smallest normal exponent (unbiased) of the extended format.
pub const EMIN: i32 = -16382;
/// Largest finite exponent (unbiased) of the extended format.
pub const EMAX: i32 = 16383;
/// The exponent wrap applied to unmasked overflow/underflow results that go
/// to a register (3 × 2^13).
pub const BIAS_ADJUST: i32 = 24576;

/// An extended real exactly as a register holds it: sign and 15-bit biased
/// exponent in `se`, the 64-bit significand (explicit integer bit 63) in `sig`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Hash)]
pub struct F80 {
    pub se: u16,
    pub sig: u64,
}

/// How a 387+ classifies an extended encoding.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Class {
    Zero,
    /// Denormal or pseudo-denormal (biased exponent 0, significand non-zero).
    Denormal,
    Normal,
    Infinity,
    QNaN,
    SNaN,
    /// Unnormal, pseudo-NaN, pseudo-infinity: invalid operands on a 387+.
    Unsupported,
}

impl F80 {
    pub const ZERO: F80 = F80 { se: 0, sig: 0 };
    pub const NEG_ZERO: F80 = F80 { se: 0x8000, sig: 0 };
    pub const ONE: F80 = F80 {
        se: 0x3FFF,
        sig: 1 << 63,
    };
    pub const INFINITY: F80 = F80 {
        se: 0x7FFF,
        sig: 1 << 63,
    };
    pub const NEG_INFINITY: F80 = F80 {
        se: 0xFFFF,
        sig: 1 << 63,
    };
    /// The QNaN "real indefinite" every masked invalid operation produces.
    pub const INDEFINITE: F80 = F80 {
        se: 0xFFFF,
        sig: 0xC000_0000_0000_0000,
    };

    pub fn from_bits(bits: u128) -> F80 {
        F80 {
            se: (bits >> 64) as u16,
            sig: bits as u64,
        }
    }
    pub fn to_bits(self) -> u128 {
        ((self.se as u128) << 64) | self.sig as u128
    }
    pub fn from_le_bytes(b: [u8; 10]) -> F80 {
        let mut s = [0u8; 8];
        s.copy_from_slice(&b[..8]);
        F80 {
            sig: u64::from_le_bytes(s),
            se: u16::from_le_bytes([b[8], b[9]]),
        }
    }
    pub fn to_le_bytes(self) -> [u8; 10] {
        let mut b = [0u8; 10];
        b[..8].copy_from_slice(&self.sig.to_le_bytes());
        b[8..].copy_from_slice(&self.se.to_le_bytes());
        b
    }
    pub fn sign(self) -> bool {
        self.se & 0x8000 != 0
    }
    pub fn biased_exp(self) -> u16 {
        self.se & 0x7FFF
    }
    pub fn with_sign(self, neg: bool) -> F80 {
        F80 {
            se: (self.se & 0x7FFF) | if neg { 0x8000 } else { 0 },
            sig: self.sig,
        }
    }
    pub fn negate(self) -> F80 {
        F80 {
            se: self.se ^ 0x8000,
            sig: self.sig,
        }
    }
    pub fn abs(self) -> F80 {
        F80 {
            se: self.se & 0x7FFF,
            sig: self.sig,
        }
    }
    pub fn zero(neg: bool) -> F80 {
        F80::ZERO.with_sign(neg)
    }
    pub fn infinity(neg: bool) -> F80 {
        F80::INFINITY.with_sign(neg)
    }

    pub fn class(self) -> Class {
        let e = self.biased_exp();
        let j = self.sig >> 63 != 0;
        if e == 0 {
            if self.sig == 0 {
                Class::Zero
            } else {
                Class::Denormal
            }
        } else if e == 0x7FFF {
            if !j {
                Class::Unsupported
            } else if self.sig << 1 == 0 {
                Class::Infinity
            } else if self.sig & (1 << 62) != 0 {
                Class::QNaN
            } else {
                Class::SNaN
            }
        } else if !j {
            Class::Unsupported
        } else {
            Class::Normal
        }
    }
    pub fn is_nan(self) -> bool {
        matches!(self.class(), Class::QNaN | Class::SNaN)
    }
    /// The NaN with its quiet bit set.
    pub fn quieted(self) -> F80 {
        F80 {
            se: self.se,
            sig: self.sig | (1 << 62),
        }
    }

    /// Finite non-zero value as (sign, unbiased exponent of the leading bit,
    /// normalized significand). Only meaningful for Normal and Denormal.
    pub fn unpack(self) -> Unpacked {
        let sign = self.sign();
        let e = self.biased_exp() as i32;
        if e == 0 {
            let lz = self.sig.leading_zeros() as i32;
            Unpacked {
                sign,
                exp: EMIN - lz,
                sig: self.sig << lz,
            }
        } else {
            Unpacked {
                sign,
                exp: e - BIAS,
                sig: self.sig,
            }
        }
    }
}

/// A finite non-zero number: (-1)^sign × sig/2^63 × 2^exp, sig bit 63 set.
/// The exponent is unbounded (i32), so values outside the extended range
/// (intermediate results, denormals) are represented exactly.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Unpacked {
    pub sign: bool,
    pub exp: i32,
    pub sig: u64,
}

/// Rounding control field values.
pub const RC_NEAREST: u8 = 0;
pub const RC_DOWN: u8 = 1;
pub const RC_UP: u8 = 2;
pub const RC_ZERO: u8 = 3;

/// What the control word says about rounding one result.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Rounding {
    /// Rounding control (RC_*).
    pub rc: u8,
    /// Significand bits kept: 24, 53 or 64.
    pub bits: u32,
    /// Exception mask bits (control word bits 0-5): decides the masked or
    /// unmasked overflow/underflow response.
    pub masks: u16,
}

impl Rounding {
    /// Full 64-bit precision, given rounding control and masks.
    pub fn extended(rc: u8, masks: u16) -> Rounding {
        Rounding {
            rc,
            bits: 64,
            masks,
        }
    }
}

/// Flags a computation raised.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Flags {
    /// IE DE ZE OE UE PE bits.
    pub exc: u16,
    /// The delivered result was rounded up in magnitude (the x87 C1 bit).
    pub up: bool,
}

impl Flags {
    pub fn raise(&mut self, bits: u16) {
        self.exc |= bits;
    }
}

/// A destination format for [`round_pack`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Format {
    /// Full significand precision (with the integer bit).
    pub precision: u32,
    pub emin: i32,
    pub emax: i32,
    /// Exponent wrap for unmasked overflow/underflow, or 0 where the
    /// destination (memory) is left unwritten instead.
    pub bias_adjust: i32,
}

pub const FMT_EXTENDED: Format = Format {
    precision: 64,
    emin: EMIN,
    emax: EMAX,
    bias_adjust: BIAS_ADJUST,
};
pub const FMT_DOUBLE: Format = Format {
    precision: 53,
    emin: -1022,
    emax: 1023,
    bias_adjust: 0,
};
pub const FMT_SINGLE: Format = Format {
    precision: 24,
    emin: -126,
    emax: 127,
    bias_adjust: 0,
};

/// A rounded value in a [`Format`]: zero, infinity, or finite with
/// value = sig/2^63 × 2^exp where a normal has bit 63 set and a denormal has
/// `exp == emin` and bit 63 clear.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Rounded {
    Zero { sign: bool },
    Infinity { sign: bool },
    Finite { sign: bool, exp: i32, sig: u64 },
}

/// Rounds `sig` (bits past the leading bit 127 may be a jammed sticky) at bit
/// index `lsb` (bits below `lsb` are dropped). Returns the kept units, whether
/// anything was dropped and whether the kept value was incremented.
fn round_at(sig: u128, lsb: u32, sign: bool, rc: u8) -> (u128, bool, bool) {
    if lsb == 0 {
        return (sig, false, false);
    }
    let (kept, inexact, above_half, at_half) = if lsb > 128 {
        (0u128, sig != 0, false, false)
    } else if lsb == 128 {
        (0u128, sig != 0, sig > (1u128 << 127), sig == (1u128 << 127))
    } else {
        let rem = sig & ((1u128 << lsb) - 1);
        let half = 1u128 << (lsb - 1);
        (sig >> lsb, rem != 0, rem > half, rem == half)
    };
    if !inexact {
        return (kept, false, false);
    }
    let up = match rc {
        RC_NEAREST => above_half || (at_half && kept & 1 == 1),
        RC_DOWN => sign,
        RC_UP => !sign,
        _ => false,
    };
    (if up { kept + 1 } else { kept }, true, up)
}

fn bit_len(x: u128) -> i32 {
    128 - x.leading_zeros() as i32
}

/// Rounds the exact value (-1)^sign × sig/2^127 × 2^exp (sig bit 127 set; a
/// sticky bit may be jammed into bit 0) to `keep_bits` significand bits of
/// `fmt`, applying the x87 rules: tininess is detected after rounding with an
/// unbounded exponent; masked underflow denormalizes and raises UE only when
/// the result is inexact; unmasked overflow/underflow raise OE/UE and, when the
/// format allows it, wrap the exponent by `bias_adjust`; masked overflow gives
/// infinity or the largest finite number per rounding mode. Raises PE on any
/// inexact result and sets `flags.up` when the magnitude was rounded up.
pub fn round_pack(
    sign: bool,
    exp: i32,
    sig: u128,
    keep_bits: u32,
    fmt: Format,
    r: Rounding,
    flags: &mut Flags,
) -> Rounded {
    if sig == 0 {
        return Rounded::Zero { sign };
    }
    debug_assert!(sig >> 127 == 1);
    let p = keep_bits.min(fmt.precision);
    // Round with an unbounded exponent.
    let lsb = 128 - p;
    let (kept, inexact, up) = round_at(sig, lsb, sign, r.rc);
    // kept × 2^(exp - 127 + lsb)
    let unit_exp = exp - 127 + lsb as i32;
    let lead_exp = unit_exp + bit_len(kept) - 1;
    let tiny = lead_exp < fmt.emin;
    if !tiny {
        if lead_exp > fmt.emax {
            flags.raise(OE);
            if r.masks & OE == 0 && fmt.bias_adjust != 0 {
                if inexact {
                    flags.raise(PE);
                }
                flags.up = up;
                return finite(sign, lead_exp - fmt.bias_adjust, kept);
            }
            flags.raise(PE);
            let to_inf = match r.rc {
                RC_NEAREST => true,
                RC_DOWN => sign,
                RC_UP => !sign,
                _ => false,
            };
            flags.up = to_inf;
            if to_inf {
                return Rounded::Infinity { sign };
            }
            let ones = (!0u64) << (64 - p);
            return Rounded::Finite {
                sign,
                exp: fmt.emax,
                sig: ones,
            };
        }
        if inexact {
            flags.raise(PE);
        }
        flags.up = up;
        return finite(sign, lead_exp, kept);
    }
    if r.masks & UE == 0 {
        flags.raise(UE);
        if inexact {
            flags.raise(PE);
        }
        flags.up = up;
        if fmt.bias_adjust != 0 {
            return finite(sign, lead_exp + fmt.bias_adjust, kept);
        }
        return Rounded::Zero { sign };
    }
    // Masked underflow: denormalize. Granularity is the format's denormal
    // unit 2^(emin - precision + 1) unless precision control is coarser.
    let denorm_lsb = 128 - fmt.precision as i64 + (fmt.emin as i64 - exp as i64);
    // Below 129 the exact position no longer changes the rounding (all of
    // `sig` is under half a unit), so round there but keep the true unit.
    let lsb2_true = (lsb as i64).max(denorm_lsb);
    let lsb2 = lsb2_true.min(129) as u32;
    let (kept2, inexact2, up2) = round_at(sig, lsb2, sign, r.rc);
    if inexact2 {
        flags.raise(UE | PE);
    }
    flags.up = up2;
    if kept2 == 0 {
        return Rounded::Zero { sign };
    }
    let unit_exp2 = (exp as i64 - 127 + lsb2_true) as i32;
    let lead2 = unit_exp2 + bit_len(kept2) - 1;
    if lead2 >= fmt.emin {
        return finite(sign, lead2, kept2);
    }
    // value = kept2 × 2^unit_exp2 = sig64 × 2^(emin - 63)
    let shift = unit_exp2 - (fmt.emin - 63);
    Rounded::Finite {
        sign,
        exp: fmt.emin,
        sig: (kept2 << shift) as u64,
    }
}

fn finite(sign: bool, lead_exp: i32, kept: u128) -> Rounded {
    let len = bit_len(kept);
    Rounded::Finite {
        sign,
        exp: lead_exp,
        sig: (kept << (128 - len) >> 64) as u64,
    }
}

impl Rounded {
    /// Packs into the extended format. Exponents already wrapped by the
    /// unmasked response are masked to 15 bits.
    pub fn to_f80(self) -> F80 {
        match self {
            Rounded::Zero { sign } => F80::zero(sign),
            Rounded::Infinity { sign } => F80::infinity(sign),
            Rounded::Finite { sign, exp, sig } => {
                let be = if sig >> 63 == 0 {
                    0
                } else {
                    ((exp + BIAS) & 0x7FFF) as u16
                };
                F80 {
                    se: be | if sign { 0x8000 } else { 0 },
                    sig,
                }
            }
        }
    }
    pub fn to_f64_bits(self) -> u64 {
        match self {
            Rounded::Zero { sign } => (sign as u64) << 63,
            Rounded::Infinity { sign } => ((sign as u64) << 63) | 0x7FF0_0000_0000_0000,
            Rounded::Finite { sign, exp, sig } => {
                let be = if sig >> 63 == 0 {
                    0
                } else {
                    (exp + 1023) as u64 & 0x7FF
                };
                ((sign as u64) << 63) | (be << 52) | ((sig >> 11) & ((1 << 52) - 1))
            }
        }
    }
    pub fn to_f32_bits(self) -> u32 {
        match self {
            Rounded::Zero { sign } => (sign as u32) << 31,
            Rounded::Infinity { sign } => ((sign as u32) << 31) | 0x7F80_0000,
            Rounded::Finite { sign, exp, sig } => {
                let be = if sig >> 63 == 0 {
                    0
                } else {
                    (exp + 127) as u32 & 0xFF
                };
                ((sign as u32) << 31) | (be << 23) | ((sig >> 40) as u32 & 0x7F_FFFF)
            }
        }
    }
}

/// Rounds an exact intermediate into an extended register result.
pub fn round_to_f80(sign: bool, exp: i32, sig: u128, r: Rounding, flags: &mut Flags) -> F80 {
    round_pack(sign, exp, sig, r.bits, FMT_EXTENDED, r, flags).to_f80()
}

/// Normalizes a non-zero u128 so bit 127 is set; returns (sig, left shift).
fn normalize128(x: u128) -> (u128, i32) {
    let lz = x.leading_zeros();
    (x << lz, lz as i32)
}

/// Shifts right, ORing any bits shifted out into bit 0 (sticky jam).
pub fn shift_right_jam(x: u128, n: u32) -> u128 {
    if n == 0 {
        x
    } else if n >= 128 {
        (x != 0) as u128
    } else {
        (x >> n) | ((x & ((1u128 << n) - 1) != 0) as u128)
    }
}

/// The x87 NaN propagation rule for two operands (at least one a NaN): an SNaN
/// raises IE; a QNaN beats an SNaN; of two NaNs of the same kind the larger
/// significand wins, and on a tie the positive one.
pub fn propagate_nan(a: F80, b: F80, flags: &mut Flags) -> F80 {
    let (ca, cb) = (a.class(), b.class());
    let a_nan = matches!(ca, Class::QNaN | Class::SNaN);
    let b_nan = matches!(cb, Class::QNaN | Class::SNaN);
    if ca == Class::SNaN || cb == Class::SNaN {
        flags.raise(IE);
    }
    let (qa, qb) = (a.quieted(), b.quieted());
    if a_nan && b_nan {
        if ca == cb {
            if qa.sig != qb.sig {
                return if qa.sig > qb.sig { qa } else { qb };
            }
            return if qa.se <= qb.se { qa } else { qb };
        }
        return if ca == Class::QNaN { qa } else { qb };
    }
    if a_nan {
        qa
    } else {
        qb
    }
}

/// One-operand NaN response: SNaN raises IE, the result is quiet.
pub fn propagate_nan1(a: F80, flags: &mut Flags) -> F80 {
    if a.class() == Class::SNaN {
        flags.raise(IE);
    }
    a.quieted()
}

/// Checks two operands for the cases that end an operation before any
/// arithmetic: unsupported encodings (IE, indefinite) and NaNs. Also raises
/// DE for denormal operands when no NaN is involved... not here; callers do.
fn nan_or_unsupported(a: F80, b: F80, flags: &mut Flags) -> Option<F80> {
    let (ca, cb) = (a.class(), b.class());
    if ca == Class::Unsupported || cb == Class::Unsupported {
        flags.raise(IE);
        return Some(F80::INDEFINITE);
    }
    if matches!(ca, Class::QNaN | Class::SNaN) || matches!(cb, Class::QNaN | Class::SNaN) {
        return Some(propagate_nan(a, b, flags));
    }
    None
}

fn raise_denormals(a: F80, b: F80, flags: &mut Flags) {
    if a.class() == Class::Denormal || b.class() == Class::Denormal {
        flags.raise(DE);
    }
}

/// a + b (or a − b when `negate_b`).
pub fn add(a: F80, b: F80, negate_b: bool, r: Rounding, flags: &mut Flags) -> F80 {
    if let Some(n) = nan_or_unsupported(a, b, flags) {
        return n;
    }
    let b = if negate_b { b.negate() } else { b };
    let (ca, cb) = (a.class(), b.class());
    if ca == Class::Infinity || cb == Class::Infinity {
        if ca == Class::Infinity && cb == Class::Infinity && a.sign() != b.sign() {
            flags.raise(IE);
            return F80::INDEFINITE;
        }
        raise_denormals(a, b, flags);
        return if ca == Class::Infinity { a } else { b };
    }
    raise_denormals(a, b, flags);
    if ca == Class::Zero && cb == Class::Zero {
        let neg = if a.sign() == b.sign() {
            a.sign()
        } else {
            r.rc == RC_DOWN
        };
        return F80::zero(neg);
    }
    if ca == Class::Zero {
        return round_unpacked(b.unpack(), r, flags);
    }
    if cb == Class::Zero {
        return round_unpacked(a.unpack(), r, flags);
    }
    let (ua, ub) = (a.unpack(), b.unpack());
    add_unpacked(ua, ub, r, flags)
}

fn round_unpacked(u: Unpacked, r: Rounding, flags: &mut Flags) -> F80 {
    round_to_f80(u.sign, u.exp, (u.sig as u128) << 64, r, flags)
}

fn add_unpacked(ua: Unpacked, ub: Unpacked, r: Rounding, flags: &mut Flags) -> F80 {
    match add_sig(ua, ub) {
        None => F80::zero(r.rc == RC_DOWN),
        Some((sign, exp, n)) => round_to_f80(sign, exp, n, r, flags),
    }
}

/// The exact sum of two finite non-zero numbers as (sign, exponent of the
/// leading bit, significand with bit 127 set and a jammed sticky), or None
/// when they cancel exactly (the caller picks the zero's sign). Shared by
/// the x87 and the SSE formats, which differ only in how they round.
pub fn add_sig(ua: Unpacked, ub: Unpacked) -> Option<(bool, i32, u128)> {
    let (x, y) = if (ua.exp, ua.sig) >= (ub.exp, ub.sig) {
        (ua, ub)
    } else {
        (ub, ua)
    };
    // Leading bit at 126 leaves one bit of headroom for the carry.
    let xs = (x.sig as u128) << 63;
    let d = (x.exp - y.exp) as u32;
    let ys = shift_right_jam((y.sig as u128) << 63, d);
    let (sum, sign) = if x.sign == y.sign {
        (xs + ys, x.sign)
    } else {
        (xs - ys, x.sign)
    };
    if sum == 0 {
        return None;
    }
    let (n, lz) = normalize128(sum);
    // Leading bit was at 126 for exponent x.exp.
    Some((sign, x.exp + 1 - lz, n))
}

/// a × b.
pub fn mul(a: F80, b: F80, r: Rounding, flags: &mut Flags) -> F80 {
    if let Some(n) = nan_or_unsupported(a, b, flags) {
        return n;
    }
    let sign = a.sign() != b.sign();
    let (ca, cb) = (a.class(), b.class());
    if ca == Class::Infinity || cb == Class::Infinity {
        if ca == Class::Zero || cb == Class::Zero {
            flags.raise(IE);
            return F80::INDEFINITE;
        }
        raise_denormals(a, b, flags);
        return F80::infinity(sign);
    }
    raise_denormals(a, b, flags);
    if ca == Class::Zero || cb == Class::Zero {
        return F80::zero(sign);
    }
    let (ua, ub) = (a.unpack(), b.unpack());
    mul_unpacked(ua, ub, r, flags)
}

fn mul_unpacked(ua: Unpacked, ub: Unpacked, r: Rounding, flags: &mut Flags) -> F80 {
    let (sign, exp, n) = mul_sig(ua, ub);
    round_to_f80(sign, exp, n, r, flags)
}

/// The exact product of two finite non-zero numbers as (sign, exponent of
/// the leading bit, significand with bit 127 set).
pub fn mul_sig(ua: Unpacked, ub: Unpacked) -> (bool, i32, u128) {
    let prod = ua.sig as u128 * ub.sig as u128;
    let (n, lz) = normalize128(prod);
    // prod leading bit at 126 or 127 for exponent ea + eb (+1).
    (ua.sign != ub.sign, ua.exp + ub.exp + 1 - lz, n)
}

/// a ÷ b.
pub fn div(a: F80, b: F80, r: Rounding, flags: &mut Flags) -> F80 {
    if let Some(n) = nan_or_unsupported(a, b, flags) {
        return n;
    }
    let sign = a.sign() != b.sign();
    let (ca, cb) = (a.class(), b.class());
    if ca == Class::Infinity {
        if cb == Class::Infinity {
            flags.raise(IE);
            return F80::INDEFINITE;
        }
        raise_denormals(a, b, flags);
        return F80::infinity(sign);
    }
    if cb == Class::Infinity {
        raise_denormals(a, b, flags);
        return F80::zero(sign);
    }
    if cb == Class::Zero {
        if ca == Class::Zero {
            flags.raise(IE);
            return F80::INDEFINITE;
        }
        raise_denormals(a, b, flags);
        flags.raise(ZE);
        return F80::infinity(sign);
    }
    raise_denormals(a, b, flags);
    if ca == Class::Zero {
        return F80::zero(sign);
    }
    let (ua, ub) = (a.unpack(), b.unpack());
    let (q, e) = div_sig(ua.sig, ub.sig);
    round_to_f80(sign, ua.exp - ub.exp + e, q, r, flags)
}

/// Quotient of two normalized significands as a normalized u128 with a
/// jammed sticky, and the exponent offset of its leading bit (0 or -1).
pub fn div_sig(a: u64, b: u64) -> (u128, i32) {
    let num = (a as u128) << 64;
    let b128 = b as u128;
    let mut q = num / b128;
    let mut rem = num % b128;
    // q is 64 or 65 bits; extend by 3 more bits by long division.
    for _ in 0..3 {
        rem <<= 1;
        q <<= 1;
        if rem >= b128 {
            rem -= b128;
            q |= 1;
        }
    }
    let sticky = (rem != 0) as u128;
    let (n, lz) = normalize128(q);
    // q = a/b × 2^67 ; leading bit of a/b is 2^0 or 2^-1.
    ((n | sticky), 127 - lz - 67)
}

/// √a.
pub fn sqrt(a: F80, r: Rounding, flags: &mut Flags) -> F80 {
    match a.class() {
        Class::Unsupported => {
            flags.raise(IE);
            F80::INDEFINITE
        }
        Class::QNaN | Class::SNaN => propagate_nan1(a, flags),
        Class::Zero => a,
        Class::Infinity => {
            if a.sign() {
                flags.raise(IE);
                F80::INDEFINITE
            } else {
                a
            }
        }
        Class::Normal | Class::Denormal => {
            if a.class() == Class::Denormal {
                flags.raise(DE);
            }
            if a.sign() {
                flags.raise(IE);
                return F80::INDEFINITE;
            }
            let u = a.unpack();
            let (root, e) = sqrt_sig(u.sig, u.exp);
            round_to_f80(false, e, root, r, flags)
        }
    }
}

/// Square root of sig/2^63 × 2^exp: normalized u128 root with jammed sticky
/// and the exponent of its leading bit.
pub fn sqrt_sig(sig: u64, exp: i32) -> (u128, i32) {
    let odd = exp.rem_euclid(2) == 1;
    // x = sig/2^63 (× 2 if odd) ∈ [1,4); N = x × 2^64, a 66-bit integer.
    let n: u128 = (sig as u128) << (1 + odd as u32);
    // Digit-by-digit square root of N × 4^35: 33 + 35 pairs of bits.
    let mut root: u128 = 0;
    let mut rem: u128 = 0;
    for i in (0..68).rev() {
        let pair = if i >= 35 {
            (n >> (2 * (i - 35))) & 3
        } else {
            0
        };
        rem = (rem << 2) | pair;
        let trial = (root << 2) | 1;
        root <<= 1;
        if rem >= trial {
            rem -= trial;
            root |= 1;
        }
    }
    // root = floor(sqrt(x) × 2^67), leading bit at 67.
    let sticky = (rem != 0) as u128;
    ((root << 60) | sticky, exp.div_euclid(2))
}

/// Rounds to an integer value per rounding control (FRNDINT).
pub fn round_to_int(a: F80, rc: u8, flags: &mut Flags) -> F80 {
    match a.class() {
        Class::Unsupported => {
            flags.raise(IE);
            F80::INDEFINITE
        }
        Class::QNaN | Class::SNaN => propagate_nan1(a, flags),
        Class::Zero | Class::Infinity => a,
        Class::Normal | Class::Denormal => {
            if a.class() == Class::Denormal {
                flags.raise(DE);
            }
            let u = a.unpack();
            if u.exp >= 63 {
                return a;
            }
            // value = sig × 2^(exp-63); integer part at bit index 63-exp.
            let lsb = (63 - u.exp).min(200) as u32 + 64;
            let (kept, inexact, up) = round_at((u.sig as u128) << 64, lsb, u.sign, rc);
            if inexact {
                flags.raise(PE);
            }
            flags.up = up;
            if kept == 0 {
                return F80::zero(u.sign);
            }
            let len = bit_len(kept);
            F80 {
                se: ((len - 1 + BIAS) as u16) | if u.sign { 0x8000 } else { 0 },
                sig: (kept << (128 - len) >> 64) as u64,
            }
        }
    }
}

/// Result of converting to an integer: the value, or None when it does not
/// fit (IE raised).
pub fn to_int(a: F80, rc: u8, min: i64, max: i64, flags: &mut Flags) -> Option<i64> {
    match a.class() {
        Class::Unsupported | Class::QNaN | Class::SNaN | Class::Infinity => {
            flags.raise(IE);
            None
        }
        Class::Zero => Some(0),
        Class::Normal | Class::Denormal => {
            // No DE on integer stores (the 387+ does not report it here).
            let u = a.unpack();
            if u.exp >= 64 {
                flags.raise(IE);
                return None;
            }
            let lsb = (63 - u.exp).min(200) as u32 + 64;
            let mut f = Flags::default();
            let (kept, inexact, up) = round_at((u.sig as u128) << 64, lsb, u.sign, rc);
            f.up = up;
            let v: i128 = if u.sign {
                -(kept as i128)
            } else {
                kept as i128
            };
            if v < min as i128 || v > max as i128 {
                flags.raise(IE);
                return None;
            }
            if inexact {
                flags.raise(PE);
            }
            flags.up = f.up;
            Some(v as i64)
        }
    }
}

/// Exact conversion of an integer to extended.
pub fn from_int(v: i64) -> F80 {
    if v == 0 {
        return F80::ZERO;
    }
    let sign = v < 0;
    let m = v.unsigned_abs();
    let lz = m.leading_zeros();
    F80 {
        se: ((63 - lz as i32 + BIAS) as u16) | if sign { 0x8000 } else { 0 },
        sig: m << lz,
    }
}

/// Ordering of two operands for the compare instructions.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Ordering {
    Less,
    Equal,
    Greater,
    Unordered,
}

/// Compares a with b. NaNs give Unordered; `quiet` (FUCOM) raises IE only for
/// SNaNs, otherwise (FCOM) for any NaN. Unsupported encodings raise IE.
pub fn compare(a: F80, b: F80, quiet: bool, flags: &mut Flags) -> Ordering {
    let (ca, cb) = (a.class(), b.class());
    if ca == Class::Unsupported || cb == Class::Unsupported {
        flags.raise(IE);
        return Ordering::Unordered;
    }
    let nan = |c| matches!(c, Class::QNaN | Class::SNaN);
    if nan(ca) || nan(cb) {
        if !quiet || ca == Class::SNaN || cb == Class::SNaN {
            flags.raise(IE);
        }
        return Ordering::Unordered;
    }
    raise_denormals(a, b, flags);
    let key = |x: F80, c: Class| -> (i32, i64, u64) {
        // (sign rank, exponent, significand) giving a total order on values.
        match c {
            Class::Zero => (0, 0, 0),
            Class::Infinity => (if x.sign() { -1 } else { 1 }, i64::MAX, 0),
            _ => {
                let u = x.unpack();
                (if u.sign { -1 } else { 1 }, u.exp as i64, u.sig)
            }
        }
    };
    let (ka, kb) = (key(a, ca), key(b, cb));
    use std::cmp::Ordering as O;
    let ord = if ka.0 != kb.0 {
        ka.0.cmp(&kb.0)
    } else if ka.0 == 0 {
        O::Equal
    } else {
        let mag = (ka.1, ka.2).cmp(&(kb.1, kb.2));
        if ka.0 < 0 {
            mag.reverse()
        } else {
            mag
        }
    };
    match ord {
        O::Less => Ordering::Less,
        O::Equal => Ordering::Equal,
        O::Greater => Ordering::Greater,
    }
}

/// Outcome of a partial remainder step.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Remainder {
    pub value: F80,
    /// Low three bits of the quotient (C0 = bit 2, C3 = bit 1, C1 = bit 0).
    pub quotient_low: u8,
    /// The reduction is incomplete (C2).
    pub partial: bool,
}

/// FPREM (`nearest == false`: truncated quotient) and FPREM1 (IEEE remainder,
/// quotient rounded to nearest even). The result is always exact. When the
/// exponent difference is 64 or more only a partial reduction is made: the
/// exponent difference drops by N = 32 + (diff mod 32) bits... see the doc
/// (the remainder is reduced by a multiple of b × 2^(diff − N)).
pub fn remainder(a: F80, b: F80, nearest: bool, r: Rounding, flags: &mut Flags) -> Remainder {
    let done = |value| Remainder {
        value,
        quotient_low: 0,
        partial: false,
    };
    if let Some(n) = nan_or_unsupported(a, b, flags) {
        return done(n);
    }
    let (ca, cb) = (a.class(), b.class());
    if ca == Class::Infinity || cb == Class::Zero {
        flags.raise(IE);
        return done(F80::INDEFINITE);
    }
    raise_denormals(a, b, flags);
    if ca == Class::Zero || cb == Class::Infinity {
        // Result is the dividend itself (a denormal dividend is normalized
        // through the rounding path like any other result).
        if ca == Class::Denormal {
            return done(round_unpacked(a.unpack(), r, flags));
        }
        return done(a);
    }
    let (ua, ub) = (a.unpack(), b.unpack());
    let d = ua.exp - ub.exp;
    if d < 0 {
        if nearest && d == -1 && ua.sig > ub.sig {
            // |a| > |b|/2: quotient 1, remainder a − b (exact).
            let rem = ((ub.sig as u128) << 1) - ua.sig as u128;
            let (n, lz) = normalize128(rem);
            let v = round_to_f80(!ua.sign, ub.exp - 64 + (127 - lz), n, r, flags);
            return Remainder {
                value: v,
                quotient_low: 1,
                partial: false,
            };
        }
        return done(round_unpacked(ua, r, flags));
    }
    let (shift, partial) = if d >= 64 {
        (d - (32 + (d & 31)), true)
    } else {
        (0, false)
    };
    let dd = (d - shift) as u32;
    let num = (ua.sig as u128) << dd;
    let den = ub.sig as u128;
    let mut q = num / den;
    let mut rem = num % den;
    let mut sign = ua.sign;
    if nearest && !partial {
        let twice = rem << 1;
        if twice > den || (twice == den && q & 1 == 1) {
            q += 1;
            rem = den - rem;
            sign = !sign;
        }
    }
    let qlow = (q & 7) as u8;
    if rem == 0 {
        return Remainder {
            value: F80::zero(ua.sign),
            quotient_low: qlow,
            partial,
        };
    }
    // rem × 2^(eb + shift − 63)
    let (n, lz) = normalize128(rem);
    let exp = ub.exp + shift - 63 + (127 - lz);
    let v = round_to_f80(sign, exp, n, Rounding { bits: 64, ..r }, flags);
    Remainder {
        value: v,
        quotient_low: qlow,
        partial,
    }
}

/// a × 2^n for an integer n (FSCALE's core, and FXTRACT's inverse).
pub fn scale(a: F80, n: i32, r: Rounding, flags: &mut Flags) -> F80 {
    match a.class() {
        Class::Unsupported => {
            flags.raise(IE);
            F80::INDEFINITE
        }
        Class::QNaN | Class::SNaN => propagate_nan1(a, flags),
        Class::Zero | Class::Infinity => a,
        Class::Normal | Class::Denormal => {
            if a.class() == Class::Denormal {
                flags.raise(DE);
            }
            let u = a.unpack();
            let e = (u.exp as i64 + n as i64).clamp(-100_000, 100_000) as i32;
            round_to_f80(
                u.sign,
                e,
                (u.sig as u128) << 64,
                Rounding { bits: 64, ..r },
                flags,
            )
        }
    }
}

/// Converts a single (32-bit) real to extended: exact; SNaN raises IE and is
/// quieted; denormals raise DE.
pub fn from_f32(bits: u32, flags: &mut Flags) -> F80 {
    let sign = bits >> 31 != 0;
    let e = ((bits >> 23) & 0xFF) as i32;
    let frac = (bits & 0x7F_FFFF) as u64;
    from_ieee(sign, e, frac, 23, 0xFF, 127, flags)
}

/// Converts a double (64-bit) real to extended, as [`from_f32`].
pub fn from_f64(bits: u64, flags: &mut Flags) -> F80 {
    let sign = bits >> 63 != 0;
    let e = ((bits >> 52) & 0x7FF) as i32;
    let frac = bits & ((1 << 52) - 1);
    from_ieee(sign, e, frac, 52, 0x7FF, 1023, flags)
}

fn from_ieee(
    sign: bool,
    e: i32,
    frac: u64,
    frac_bits: u32,
    emax_field: i32,
    bias: i32,
    flags: &mut Flags,
) -> F80 {
    let s = if sign { 0x8000u16 } else { 0 };
    if e == emax_field {
        let f = frac << (63 - frac_bits);
        if frac == 0 {
            return F80::infinity(sign);
        }
        let nan = F80 {
            se: 0x7FFF | s,
            sig: (1 << 63) | f,
        };
        return propagate_nan1(nan, flags);
    }
    if e == 0 {
        if frac == 0 {
            return F80::zero(sign);
        }
        flags.raise(DE);
        let lz = frac.leading_zeros() as i32; // frac < 2^frac_bits
        let lead = 63 - lz; // index of leading bit
        let exp = (1 - bias) - (frac_bits as i32 - lead);
        return F80 {
            se: ((exp + BIAS) as u16) | s,
            sig: frac << lz,
        };
    }
    F80 {
        se: ((e - bias + BIAS) as u16) | s,
        sig: (1 << 63) | (frac << (63 - frac_bits)),
    }
}

/// Converts extended to a single/double real for FST m32/m64: rounds per RC
/// (precision control does not apply), NaNs are quieted and truncated, SNaN
/// and unsupported raise IE (masked result: QNaN / indefinite).
pub fn to_ieee(a: F80, fmt: Format, r: Rounding, flags: &mut Flags) -> Rounded {
    match a.class() {
        Class::Zero => Rounded::Zero { sign: a.sign() },
        Class::Infinity => Rounded::Infinity { sign: a.sign() },
        Class::Unsupported | Class::QNaN | Class::SNaN => {
            // NaN results are encoded by the caller from this sentinel form.
            unreachable_nan()
        }
        Class::Normal | Class::Denormal => {
            let u = a.unpack();
            round_pack(
                u.sign,
                u.exp,
                (u.sig as u128) << 64,
                fmt.precision,
                fmt,
                r,
                flags,
            )
        }
    }
}

fn unreachable_nan() -> Rounded {
    // Callers filter NaNs and unsupported encodings before calling to_ieee;
    // answer with zero rather than panic should one slip through.
    Rounded::Zero { sign: false }
}

/// The single/double encoding of an extended NaN or unsupported value
/// (IE raised for SNaN and unsupported).
pub fn nan_to_f64_bits(a: F80, flags: &mut Flags) -> u64 {
    let q = if a.class() == Class::Unsupported {
        flags.raise(IE);
        F80::INDEFINITE
    } else {
        propagate_nan1(a, flags)
    };
    ((q.sign() as u64) << 63) | 0x7FF0_0000_0000_0000 | ((q.sig >> 11) & ((1 << 52) - 1))
}

/// As [`nan_to_f64_bits`] for singles.
pub fn nan_to_f32_bits(a: F80, flags: &mut Flags) -> u32 {
    let q = if a.class() == Class::Unsupported {
        flags.raise(IE);
        F80::INDEFINITE
    } else {
        propagate_nan1(a, flags)
    };
    ((q.sign() as u32) << 31) | 0x7F80_0000 | ((q.sig >> 40) as u32 & 0x7F_FFFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r() -> Rounding {
        Rounding::extended(RC_NEAREST, 0x3F)
    }

    #[test]
    fn one_plus_one_is_two() {
        let mut f = Flags::default();
        let two = add(F80::ONE, F80::ONE, false, r(), &mut f);
        assert_eq!(
            two,
            F80 {
                se: 0x4000,
                sig: 1 << 63
            }
        );
        assert_eq!(f.exc, 0);
    }

    #[test]
    fn sqrt_of_four_is_two() {
        let mut f = Flags::default();
        let four = F80 {
            se: 0x4001,
            sig: 1 << 63,
        };
        assert_eq!(
            sqrt(four, r(), &mut f),
            F80 {
                se: 0x4000,
                sig: 1 << 63
            }
        );
        assert_eq!(f.exc, 0);
    }

    #[test]
    fn one_third() {
        let mut f = Flags::default();
        let three = from_int(3);
        let q = div(F80::ONE, three, r(), &mut f);
        assert_eq!(
            q,
            F80 {
                se: 0x3FFD,
                sig: 0xAAAA_AAAA_AAAA_AAAB
            }
        );
        assert_eq!(f.exc, PE);
        assert!(f.up);
    }
}
