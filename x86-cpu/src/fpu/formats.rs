//! Memory operand formats of the x87: 16/32/64-bit integers, 32/64/80-bit
//! reals and 18-digit packed BCD, converted to and from extended.
//!
//! Owns the byte layouts and the indefinite encodings of each format. It must
//! not touch FPU state: every function takes values and returns values plus
//! [`Flags`].

use super::softfloat::{self, Class, Flags, Rounding, F80, FMT_DOUBLE, FMT_SINGLE};

/// A memory operand format of the x87.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MemFormat {
    I16,
    I32,
    I64,
    F32,
    F64,
    F80,
    Bcd,
}

impl MemFormat {
    pub fn size(self) -> usize {
        match self {
            MemFormat::I16 => 2,
            MemFormat::I32 | MemFormat::F32 => 4,
            MemFormat::I64 | MemFormat::F64 => 8,
            MemFormat::F80 | MemFormat::Bcd => 10,
        }
    }
}

/// A value read from memory, converted without any exception processing:
/// NaNs keep their signalling bit, `denormal` says the source encoding was a
/// denormal single/double (which extended represents as a normal number).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Loaded {
    pub value: F80,
    pub denormal: bool,
}

/// Converts memory bytes (little-endian, `fmt.size()` long) to extended.
pub fn decode(fmt: MemFormat, b: &[u8]) -> Loaded {
    let mut fl = Flags::default();
    let plain = |value| Loaded {
        value,
        denormal: false,
    };
    match fmt {
        MemFormat::I16 => plain(softfloat::from_int(i16::from_le_bytes([b[0], b[1]]) as i64)),
        MemFormat::I32 => plain(softfloat::from_int(
            i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as i64,
        )),
        MemFormat::I64 => {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[..8]);
            plain(softfloat::from_int(i64::from_le_bytes(a)))
        }
        MemFormat::F32 => {
            let bits = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            let e = (bits >> 23) & 0xFF;
            if e == 0xFF && bits & 0x7F_FFFF != 0 {
                // Keep an SNaN signalling: the consumer decides about IE.
                let sig = (1u64 << 63) | ((bits as u64 & 0x7F_FFFF) << 40);
                return plain(F80 {
                    se: 0x7FFF | ((bits >> 16) as u16 & 0x8000),
                    sig,
                });
            }
            let v = softfloat::from_f32(bits, &mut fl);
            Loaded {
                value: v,
                denormal: e == 0 && bits & 0x7F_FFFF != 0,
            }
        }
        MemFormat::F64 => {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[..8]);
            let bits = u64::from_le_bytes(a);
            let e = (bits >> 52) & 0x7FF;
            let frac = bits & ((1 << 52) - 1);
            if e == 0x7FF && frac != 0 {
                let sig = (1u64 << 63) | (frac << 11);
                return plain(F80 {
                    se: 0x7FFF | ((bits >> 48) as u16 & 0x8000),
                    sig,
                });
            }
            let v = softfloat::from_f64(bits, &mut fl);
            Loaded {
                value: v,
                denormal: e == 0 && frac != 0,
            }
        }
        MemFormat::F80 => {
            let mut a = [0u8; 10];
            a.copy_from_slice(&b[..10]);
            plain(F80::from_le_bytes(a))
        }
        MemFormat::Bcd => plain(bcd_to_f80(b)),
    }
}

/// FBLD: 18 packed digits (byte 0 low nibble least significant), sign in
/// byte 9 bit 7. Nibbles above 9 are weighted as they stand (the result of
/// an invalid BCD operand is undefined on hardware).
pub fn bcd_to_f80(b: &[u8]) -> F80 {
    let mut v: i64 = 0;
    for i in (0..9).rev() {
        v = v * 10 + (b[i] >> 4) as i64;
        v = v * 10 + (b[i] & 15) as i64;
    }
    let neg = b[9] & 0x80 != 0;
    softfloat::from_int(v).with_sign(neg)
}

/// The packed BCD indefinite (FBSTP of an invalid value, masked).
pub const BCD_INDEFINITE: [u8; 10] = [0, 0, 0, 0, 0, 0, 0, 0xC0, 0xFF, 0xFF];

/// Converts extended to the memory format for a store (FST/FIST/FBSTP).
/// Returns the bytes (in a 10-byte buffer; the first `fmt.size()` count) and
/// raises IE/OE/UE/PE and the rounded-up bit in `flags`. A masked invalid
/// store writes the format's indefinite; the caller must not write at all
/// when an exception it raised is unmasked.
pub fn encode(fmt: MemFormat, v: F80, r: Rounding, flags: &mut Flags) -> [u8; 10] {
    let mut out = [0u8; 10];
    match fmt {
        MemFormat::I16 | MemFormat::I32 | MemFormat::I64 => {
            let (min, max, size) = match fmt {
                MemFormat::I16 => (i16::MIN as i64, i16::MAX as i64, 2),
                MemFormat::I32 => (i32::MIN as i64, i32::MAX as i64, 4),
                _ => (i64::MIN, i64::MAX, 8),
            };
            let n = softfloat::to_int(v, r.rc, min, max, flags).unwrap_or(min);
            out[..size].copy_from_slice(&n.to_le_bytes()[..size]);
        }
        MemFormat::F32 => {
            let bits = match v.class() {
                Class::QNaN | Class::SNaN | Class::Unsupported => {
                    softfloat::nan_to_f32_bits(v, flags)
                }
                _ => softfloat::to_ieee(v, FMT_SINGLE, r, flags).to_f32_bits(),
            };
            out[..4].copy_from_slice(&bits.to_le_bytes());
        }
        MemFormat::F64 => {
            let bits = match v.class() {
                Class::QNaN | Class::SNaN | Class::Unsupported => {
                    softfloat::nan_to_f64_bits(v, flags)
                }
                _ => softfloat::to_ieee(v, FMT_DOUBLE, r, flags).to_f64_bits(),
            };
            out[..8].copy_from_slice(&bits.to_le_bytes());
        }
        MemFormat::F80 => out = v.to_le_bytes(),
        MemFormat::Bcd => {
            const LIMIT: i64 = 999_999_999_999_999_999;
            match softfloat::to_int(v, r.rc, -LIMIT, LIMIT, flags) {
                None => out = BCD_INDEFINITE,
                Some(n) => {
                    let mut m = n.unsigned_abs();
                    for byte in out.iter_mut().take(9) {
                        let lo = (m % 10) as u8;
                        m /= 10;
                        let hi = (m % 10) as u8;
                        m /= 10;
                        *byte = lo | (hi << 4);
                    }
                    out[9] = if v.sign() { 0x80 } else { 0 };
                }
            }
        }
    }
    out
}

/// The indefinite a masked stack-underflow store writes in each format.
pub fn indefinite(fmt: MemFormat) -> [u8; 10] {
    let mut out = [0u8; 10];
    match fmt {
        MemFormat::I16 => out[..2].copy_from_slice(&0x8000u16.to_le_bytes()),
        MemFormat::I32 => out[..4].copy_from_slice(&0x8000_0000u32.to_le_bytes()),
        MemFormat::I64 => out[..8].copy_from_slice(&0x8000_0000_0000_0000u64.to_le_bytes()),
        MemFormat::F32 => out[..4].copy_from_slice(&0xFFC0_0000u32.to_le_bytes()),
        MemFormat::F64 => out[..8].copy_from_slice(&0xFFF8_0000_0000_0000u64.to_le_bytes()),
        MemFormat::F80 => out = F80::INDEFINITE.to_le_bytes(),
        MemFormat::Bcd => out = BCD_INDEFINITE,
    }
    out
}
