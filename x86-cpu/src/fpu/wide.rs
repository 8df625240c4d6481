//! A 128-bit-significand working format for the transcendental functions.
//!
//! Owns [`Wide`] (sign, unbounded exponent, 128-bit significand) and its
//! truncating-with-sticky arithmetic: every operation keeps 128 bits and jams
//! whatever it drops into bit 0, so the final rounding to 64 bits in
//! [`Wide::to_f80`] sees on which side of a representable value the result
//! lies. Relative error per operation is below 2^-126. Pure integer code; it
//! must not be used for the basic operations, which are exact in
//! [`super::softfloat`].

use super::softfloat::{self, Flags, Rounding, F80, FMT_EXTENDED};

/// (-1)^sign × sig/2^127 × 2^exp; zero when `sig == 0`, else bit 127 set.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Wide {
    pub sign: bool,
    pub exp: i32,
    pub sig: u128,
}

fn mul_u128(a: u128, b: u128) -> (u128, u128) {
    let (a1, a0) = (a >> 64, a & u64::MAX as u128);
    let (b1, b0) = (b >> 64, b & u64::MAX as u128);
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let p11 = a1 * b1;
    let mid = (p00 >> 64) + (p01 & u64::MAX as u128) + (p10 & u64::MAX as u128);
    let lo = (p00 & u64::MAX as u128) | (mid << 64);
    let hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
    (hi, lo)
}

// Named methods rather than operator traits: every call site reads as the
// truncating-with-sticky operation it is.
#[allow(clippy::should_implement_trait)]
impl Wide {
    pub const ZERO: Wide = Wide {
        sign: false,
        exp: 0,
        sig: 0,
    };
    pub const ONE: Wide = Wide {
        sign: false,
        exp: 0,
        sig: 1 << 127,
    };

    /// A positive constant.
    pub const fn c(exp: i32, sig: u128) -> Wide {
        Wide {
            sign: false,
            exp,
            sig,
        }
    }
    /// A signed constant.
    pub const fn cs(sign: bool, exp: i32, sig: u128) -> Wide {
        Wide { sign, exp, sig }
    }
    pub fn is_zero(self) -> bool {
        self.sig == 0
    }
    pub fn neg(self) -> Wide {
        Wide {
            sign: !self.sign,
            ..self
        }
    }
    pub fn abs(self) -> Wide {
        Wide {
            sign: false,
            ..self
        }
    }
    fn normalized(sign: bool, exp: i32, sig: u128) -> Wide {
        if sig == 0 {
            return Wide::ZERO;
        }
        let lz = sig.leading_zeros();
        Wide {
            sign,
            exp: exp - lz as i32,
            sig: sig << lz,
        }
    }
    /// Exact conversion of a finite extended value (zero, normal or denormal).
    pub fn from_f80(x: F80) -> Wide {
        if x.sig == 0 {
            return Wide {
                sign: x.sign(),
                ..Wide::ZERO
            };
        }
        let u = x.unpack();
        Wide {
            sign: u.sign,
            exp: u.exp,
            sig: (u.sig as u128) << 64,
        }
    }
    pub fn from_int(v: i64) -> Wide {
        Wide::normalized(v < 0, 127, v.unsigned_abs() as u128)
    }
    /// Rounds to extended per `r` (64-bit precision), always as an inexact
    /// value: callers handle the exact cases before coming here.
    pub fn to_f80(self, r: Rounding, flags: &mut Flags) -> F80 {
        if self.sig == 0 {
            return F80::zero(self.sign);
        }
        softfloat::round_pack(
            self.sign,
            self.exp,
            self.sig | 1,
            64,
            FMT_EXTENDED,
            r,
            flags,
        )
        .to_f80()
    }
    /// self × 2^n.
    pub fn scale(self, n: i32) -> Wide {
        if self.sig == 0 {
            self
        } else {
            Wide {
                exp: self.exp + n,
                ..self
            }
        }
    }
    pub fn add(self, o: Wide) -> Wide {
        if o.sig == 0 {
            return self;
        }
        if self.sig == 0 {
            return o;
        }
        let (x, y) = if (self.exp, self.sig) >= (o.exp, o.sig) {
            (self, o)
        } else {
            (o, self)
        };
        let d = (x.exp as i64 - y.exp as i64).min(200) as u32;
        let xs = x.sig >> 1; // bit 0 of x.sig is dropped only if it was a sticky
        let xs = xs | (x.sig & 1);
        let ys = softfloat::shift_right_jam(y.sig >> 1 | (y.sig & 1), d);
        if x.sign == y.sign {
            Wide::normalized(x.sign, x.exp + 1, xs + ys)
        } else {
            Wide::normalized(x.sign, x.exp + 1, xs - ys)
        }
    }
    pub fn sub(self, o: Wide) -> Wide {
        self.add(o.neg())
    }
    pub fn mul(self, o: Wide) -> Wide {
        if self.sig == 0 || o.sig == 0 {
            return Wide {
                sign: self.sign != o.sign,
                ..Wide::ZERO
            };
        }
        let (hi, lo) = mul_u128(self.sig, o.sig);
        let sticky = (lo != 0) as u128;
        // hi has its leading bit at 127 or 126.
        if hi >> 127 == 1 {
            Wide {
                sign: self.sign != o.sign,
                exp: self.exp + o.exp + 1,
                sig: hi | sticky,
            }
        } else {
            let sig = (hi << 1) | (lo >> 127) | sticky;
            Wide {
                sign: self.sign != o.sign,
                exp: self.exp + o.exp,
                sig,
            }
        }
    }
    /// self ÷ o (o non-zero; a zero divisor gives zero rather than a panic).
    pub fn div(self, o: Wide) -> Wide {
        if self.sig == 0 || o.sig == 0 {
            return Wide {
                sign: self.sign != o.sign,
                ..Wide::ZERO
            };
        }
        // Restoring division of a.sig by b.sig, 129 quotient bits.
        let (a, b) = (self.sig, o.sig);
        let mut rem = a;
        let mut q: u128 = 0;
        let exp_adj;
        if rem >= b {
            rem -= b;
            q = 1;
            exp_adj = 0;
        } else {
            exp_adj = -1;
        }
        // q's first bit is at weight 2^0 (if a >= b) else the next bit is.
        let bits = if exp_adj == 0 { 127 } else { 128 };
        for _ in 0..bits {
            let carry = rem >> 127 == 1;
            rem <<= 1;
            q <<= 1;
            if carry || rem >= b {
                rem = rem.wrapping_sub(b);
                q |= 1;
            }
        }
        let sticky = (rem != 0) as u128;
        Wide::normalized(self.sign != o.sign, self.exp - o.exp + exp_adj, q | sticky)
    }
    /// self ÷ d for a small positive integer d.
    pub fn div_small(self, d: u64) -> Wide {
        if self.sig == 0 || d == 0 {
            return self;
        }
        let d = d as u128;
        let q = self.sig / d;
        let r = self.sig % d;
        let lz = q.leading_zeros();
        // Bring in lz more quotient bits: (r << lz) / d, r < d < 2^64.
        let ext = if lz == 0 { 0 } else { (r << lz) / d };
        let r2 = if lz == 0 { r } else { (r << lz) % d };
        let sig = (q << lz) | ext | (r2 != 0) as u128;
        Wide {
            sign: self.sign,
            exp: self.exp - lz as i32,
            sig,
        }
    }
    pub fn mul_small(self, m: u64) -> Wide {
        self.mul(Wide::from_int(m as i64))
    }
    /// |self| < |o|.
    pub fn abs_lt(self, o: Wide) -> bool {
        if self.sig == 0 {
            return o.sig != 0;
        }
        if o.sig == 0 {
            return false;
        }
        (self.exp, self.sig) < (o.exp, o.sig)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn third_times_three_is_nearly_one() {
        let third = Wide::ONE.div(Wide::from_int(3));
        assert_eq!(third.exp, -2);
        assert_eq!(
            third.sig >> 4,
            0x0AAA_AAAA_AAAA_AAAA_AAAA_AAAA_AAAA_AAAA_u128
        );
        let d = Wide::ONE.div_small(3);
        assert_eq!(d.sig >> 4, third.sig >> 4);
        let one = third.mul_small(3);
        assert!(one.exp == -1 || one.exp == 0);
    }
}
