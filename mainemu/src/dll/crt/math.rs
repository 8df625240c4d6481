//! The C runtime's floating-point plumbing: doubles returned in ST(0),
//! doubles read from the guest stack, and the x87 control word calls
//! (`_controlfp`, `_control87`). Shared by msvcrt and ucrtbase.
//!
//! Owns the conversion between Rust `f64` and the x87 register file; it must
//! not implement instruction semantics (x86-cpu's softfloat does the rounding).

use x86_cpu::fpu::{formats, softfloat::Rounding, F80};
use x86_cpu::Cpu;

/// Round to nearest, all exceptions masked.
const NEAREST: Rounding = Rounding {
    rc: 0,
    bits: 53,
    masks: 0x3F,
};

/// Pushes `v` onto the x87 stack (a cdecl function's double result).
pub fn push_st0(cpu: &mut Cpu, v: f64) {
    let l = formats::decode(formats::MemFormat::F64, &v.to_le_bytes());
    cpu.fpu.push(l.value);
}

/// ST(0) as a double (for callers that hand a value back).
pub fn st0(cpu: &Cpu) -> f64 {
    let mut fl = Default::default();
    let b = formats::encode(formats::MemFormat::F64, cpu.fpu.st(0), NEAREST, &mut fl);
    f64::from_le_bytes(b[..8].try_into().expect("8 bytes"))
}

/// An 80-bit value as a double (long double arguments).
pub fn f80_to_f64(v: F80) -> f64 {
    let mut fl = Default::default();
    let b = formats::encode(formats::MemFormat::F64, v, NEAREST, &mut fl);
    f64::from_le_bytes(b[..8].try_into().expect("8 bytes"))
}

/// A double passed as two dwords (low first).
pub fn dbl(lo: u32, hi: u32) -> f64 {
    f64::from_bits((hi as u64) << 32 | lo as u64)
}

/// Pops ST(0) as a double.
fn pop(cpu: &mut Cpu) -> f64 {
    let v = st0(cpu);
    cpu.fpu.pop();
    v
}

/// The six x87 exception bits (IM DM ZM OM UM PM in the control word, IE
/// DE ZE OE UE PE in the status word) and their abstract `_EM_*` / `_SW_*`
/// bits: one table for both directions and both words.
const EXCEPTION_BITS: [(u16, u32); 6] = [
    (0x1, 0x10),
    (0x2, 0x8_0000),
    (0x4, 0x8),
    (0x8, 0x4),
    (0x10, 0x2),
    (0x20, 0x1),
];

/// The x87 control word in `_controlfp`'s abstract encoding.
pub fn abstract_cw(cw: u16) -> u32 {
    let mut r = 0;
    for (x, a) in EXCEPTION_BITS {
        if cw & x != 0 {
            r |= a;
        }
    }
    r |= match (cw >> 8) & 3 {
        0 => 0x2_0000,
        2 => 0x1_0000,
        3 => 0,
        _ => 0x2_0000,
    };
    r |= match (cw >> 10) & 3 {
        0 => 0,
        1 => 0x100,
        2 => 0x200,
        _ => 0x300,
    };
    if cw & 0x1000 != 0 {
        r |= 0x4_0000;
    }
    r
}

/// The abstract encoding back to x87 control word bits.
pub fn x87_cw(a: u32) -> u16 {
    let mut cw = 0u16;
    for (x, b) in EXCEPTION_BITS {
        if a & b != 0 {
            cw |= x;
        }
    }
    cw |= match a & 0x3_0000 {
        0x2_0000 => 0,
        0x1_0000 => 2 << 8,
        _ => 3 << 8,
    };
    cw |= (((a >> 8) & 3) as u16) << 10;
    if a & 0x4_0000 != 0 {
        cw |= 0x1000;
    }
    cw
}

/// `_control87(new, mask)`: changes the masked bits; returns the new control word.
pub fn control87(cpu: &mut Cpu, new: u32, mask: u32) -> u32 {
    let cur = abstract_cw(cpu.fpu.control);
    let next = (cur & !mask) | (new & mask);
    if mask != 0 {
        cpu.fpu.set_control(x87_cw(next) | (cpu.fpu.control & 0x40));
    }
    abstract_cw(cpu.fpu.control)
}

/// The x87 status exceptions in the abstract `_SW_*` encoding.
fn abstract_sw(sw: u16) -> u32 {
    let mut r = 0;
    for (x, a) in EXCEPTION_BITS {
        if sw & x != 0 {
            r |= a;
        }
    }
    r
}

/// `_fpclass`.
fn fpclass(v: f64) -> u32 {
    use std::num::FpCategory::*;
    let neg = v.is_sign_negative();
    match v.classify() {
        Nan => {
            if v.to_bits() & (1 << 51) != 0 {
                2
            } else {
                1
            }
        }
        Infinite => {
            if neg {
                4
            } else {
                0x200
            }
        }
        Zero => {
            if neg {
                0x20
            } else {
                0x40
            }
        }
        Subnormal => {
            if neg {
                0x10
            } else {
                0x80
            }
        }
        Normal => {
            if neg {
                8
            } else {
                0x100
            }
        }
    }
}

/// A math result: errno EDOM for a NaN from a non-NaN, ERANGE for an overflow.
fn checked(env: &mut crate::dll::Env, x: f64, r: f64) -> crate::dll::Ret {
    if r.is_nan() && !x.is_nan() {
        super::fd::set_errno(env, super::fd::errno::EDOM);
    } else if r.is_infinite() && x.is_finite() {
        super::fd::set_errno(env, super::fd::errno::ERANGE);
    }
    crate::dll::Ret::Float(r)
}

/// `frexp`: mantissa in [0.5, 1) and exponent.
pub fn frexp(v: f64) -> (f64, i32) {
    if v == 0.0 || !v.is_finite() {
        return (v, 0);
    }
    let bits = v.to_bits();
    let exp = ((bits >> 52) & 0x7FF) as i32;
    if exp == 0 {
        let (m, e) = frexp(v * 2f64.powi(64));
        return (m, e - 64);
    }
    let m = f64::from_bits((bits & !(0x7FF << 52)) | (1022 << 52));
    (m, exp - 1022)
}

pub mod exports {
    use super::*;
    use crate::dll::{Env, Ret};

    fn ci1(env: &mut Env, f: fn(f64) -> f64) -> Ret {
        let x = pop(env.cpu());
        Ret::Float(f(x))
    }
    fn ci2(env: &mut Env, f: fn(f64, f64) -> f64) -> Ret {
        let y = pop(env.cpu());
        let x = pop(env.cpu());
        Ret::Float(f(x, y))
    }
    /// _ftol: ST(0) truncated to a 64-bit integer in EDX:EAX, popped.
    fn ftol(env: &mut Env) -> Ret {
        let x = pop(env.cpu());
        let v = if x.is_finite() && x.abs() < 9.2e18 {
            x.trunc() as i64
        } else {
            i64::MIN
        };
        Ret::Value64(v as u64)
    }

    crate::dll! { "(crt math)";
        cdecl fn sin(env, lo: u32, hi: u32) -> Ret { let x = dbl(lo, hi); checked(env, x, x.sin()) }
        cdecl fn cos(env, lo: u32, hi: u32) -> Ret { let x = dbl(lo, hi); checked(env, x, x.cos()) }
        cdecl fn tan(env, lo: u32, hi: u32) -> Ret { let x = dbl(lo, hi); checked(env, x, x.tan()) }
        cdecl fn asin(env, lo: u32, hi: u32) -> Ret { let x = dbl(lo, hi); checked(env, x, x.asin()) }
        cdecl fn acos(env, lo: u32, hi: u32) -> Ret { let x = dbl(lo, hi); checked(env, x, x.acos()) }
        cdecl fn atan(env, lo: u32, hi: u32) -> Ret { Ret::Float(dbl(lo, hi).atan()) }
        cdecl fn atan2(env, a: u32, b: u32, c: u32, d: u32) -> Ret { Ret::Float(dbl(a, b).atan2(dbl(c, d))) }
        cdecl fn sinh(env, lo: u32, hi: u32) -> Ret { let x = dbl(lo, hi); checked(env, x, x.sinh()) }
        cdecl fn cosh(env, lo: u32, hi: u32) -> Ret { let x = dbl(lo, hi); checked(env, x, x.cosh()) }
        cdecl fn tanh(env, lo: u32, hi: u32) -> Ret { Ret::Float(dbl(lo, hi).tanh()) }
        cdecl fn exp(env, lo: u32, hi: u32) -> Ret { let x = dbl(lo, hi); checked(env, x, x.exp()) }
        cdecl fn log(env, lo: u32, hi: u32) -> Ret { let x = dbl(lo, hi); if x == 0.0 { super::super::fd::set_errno(env, 34); } checked(env, x, x.ln()) }
        cdecl fn log10(env, lo: u32, hi: u32) -> Ret { let x = dbl(lo, hi); if x == 0.0 { super::super::fd::set_errno(env, 34); } checked(env, x, x.log10()) }
        cdecl fn log2(env, lo: u32, hi: u32) -> Ret { let x = dbl(lo, hi); checked(env, x, x.log2()) }
        cdecl fn pow(env, a: u32, b: u32, c: u32, d: u32) -> Ret { let x = dbl(a, b); checked(env, x, x.powf(dbl(c, d))) }
        cdecl fn sqrt(env, lo: u32, hi: u32) -> Ret { let x = dbl(lo, hi); checked(env, x, x.sqrt()) }
        cdecl fn floor(env, lo: u32, hi: u32) -> Ret { Ret::Float(dbl(lo, hi).floor()) }
        cdecl fn ceil(env, lo: u32, hi: u32) -> Ret { Ret::Float(dbl(lo, hi).ceil()) }
        cdecl fn fabs(env, lo: u32, hi: u32) -> Ret { Ret::Float(dbl(lo, hi).abs()) }
        cdecl fn fmod(env, a: u32, b: u32, c: u32, d: u32) -> Ret { Ret::Float(dbl(a, b) % dbl(c, d)) }
        cdecl fn _hypot(env, a: u32, b: u32, c: u32, d: u32) -> Ret { Ret::Float(dbl(a, b).hypot(dbl(c, d))) }
        cdecl fn hypot(env, a: u32, b: u32, c: u32, d: u32) -> Ret { Ret::Float(dbl(a, b).hypot(dbl(c, d))) }
        cdecl fn _copysign(env, a: u32, b: u32, c: u32, d: u32) -> Ret { Ret::Float(dbl(a, b).copysign(dbl(c, d))) }
        cdecl fn copysign(env, a: u32, b: u32, c: u32, d: u32) -> Ret { Ret::Float(dbl(a, b).copysign(dbl(c, d))) }
        cdecl fn _chgsign(env, lo: u32, hi: u32) -> Ret { Ret::Float(-dbl(lo, hi)) }
        cdecl fn fmin(env, a: u32, b: u32, c: u32, d: u32) -> Ret { Ret::Float(dbl(a, b).min(dbl(c, d))) }
        cdecl fn fmax(env, a: u32, b: u32, c: u32, d: u32) -> Ret { Ret::Float(dbl(a, b).max(dbl(c, d))) }
        cdecl fn round(env, lo: u32, hi: u32) -> Ret { Ret::Float(dbl(lo, hi).round()) }
        cdecl fn trunc(env, lo: u32, hi: u32) -> Ret { Ret::Float(dbl(lo, hi).trunc()) }
        cdecl fn cbrt(env, lo: u32, hi: u32) -> Ret { Ret::Float(dbl(lo, hi).cbrt()) }
        cdecl fn exp2(env, lo: u32, hi: u32) -> Ret { Ret::Float(dbl(lo, hi).exp2()) }
        cdecl fn log1p(env, lo: u32, hi: u32) -> Ret { Ret::Float(dbl(lo, hi).ln_1p()) }
        cdecl fn expm1(env, lo: u32, hi: u32) -> Ret { Ret::Float(dbl(lo, hi).exp_m1()) }
        cdecl fn lround(env, lo: u32, hi: u32) -> i32 { dbl(lo, hi).round() as i32 }
        cdecl fn lrint(env, lo: u32, hi: u32) -> i32 { dbl(lo, hi).round_ties_even() as i32 }
        cdecl fn rint(env, lo: u32, hi: u32) -> Ret { Ret::Float(dbl(lo, hi).round_ties_even()) }
        cdecl fn nearbyint(env, lo: u32, hi: u32) -> Ret { Ret::Float(dbl(lo, hi).round_ties_even()) }
        cdecl fn ldexp(env, lo: u32, hi: u32, e: i32) -> Ret { Ret::Float(dbl(lo, hi) * 2f64.powi(e.clamp(-2200, 2200))) }
        cdecl fn _scalb(env, lo: u32, hi: u32, e: i32) -> Ret { Ret::Float(dbl(lo, hi) * 2f64.powi(e.clamp(-2200, 2200))) }
        cdecl fn frexp(env, lo: u32, hi: u32, ep: u32) -> Ret { let (m, e) = frexp(dbl(lo, hi)); env.mem.poke_u32(ep, e as u32); Ret::Float(m) }
        cdecl fn modf(env, lo: u32, hi: u32, ip: u32) -> Ret {
            let x = dbl(lo, hi);
            let i = x.trunc();
            env.mem.poke(ip, &i.to_le_bytes());
            Ret::Float(if x.is_infinite() { 0.0f64.copysign(x) } else { x - i })
        }
        cdecl fn _logb(env, lo: u32, hi: u32) -> Ret { let x = dbl(lo, hi); Ret::Float(if x == 0.0 { f64::NEG_INFINITY } else { (frexp(x).1 - 1) as f64 }) }
        cdecl fn _nextafter(env, a: u32, b: u32, c: u32, d: u32) -> Ret {
            let (x, y) = (dbl(a, b), dbl(c, d));
            let r = if x.is_nan() || y.is_nan() { x + y } else if x == y { y } else if x == 0.0 { f64::from_bits(1).copysign(y) }
                else if (y > x) == (x > 0.0) { f64::from_bits(x.to_bits() + 1) } else { f64::from_bits(x.to_bits() - 1) };
            Ret::Float(r)
        }
        cdecl fn _isnan(env, lo: u32, hi: u32) -> i32 { dbl(lo, hi).is_nan() as i32 }
        cdecl fn _finite(env, lo: u32, hi: u32) -> i32 { dbl(lo, hi).is_finite() as i32 }
        cdecl fn _fpclass(env, lo: u32, hi: u32) -> u32 { fpclass(dbl(lo, hi)) }
        cdecl fn sinf(env, x: u32) -> Ret { Ret::Float(f32::from_bits(x).sin() as f64) }
        cdecl fn cosf(env, x: u32) -> Ret { Ret::Float(f32::from_bits(x).cos() as f64) }
        cdecl fn sqrtf(env, x: u32) -> Ret { Ret::Float(f32::from_bits(x).sqrt() as f64) }
        cdecl fn floorf(env, x: u32) -> Ret { Ret::Float(f32::from_bits(x).floor() as f64) }
        cdecl fn ceilf(env, x: u32) -> Ret { Ret::Float(f32::from_bits(x).ceil() as f64) }
        cdecl fn fabsf(env, x: u32) -> Ret { Ret::Float(f32::from_bits(x).abs() as f64) }
        cdecl fn powf(env, x: u32, y: u32) -> Ret { Ret::Float(f32::from_bits(x).powf(f32::from_bits(y)) as f64) }
        cdecl fn logf(env, x: u32) -> Ret { Ret::Float(f32::from_bits(x).ln() as f64) }
        cdecl fn expf(env, x: u32) -> Ret { Ret::Float(f32::from_bits(x).exp() as f64) }
        cdecl fn fmodf(env, x: u32, y: u32) -> Ret { Ret::Float((f32::from_bits(x) % f32::from_bits(y)) as f64) }
        cdecl fn _CIsin(env) -> Ret { ci1(env, f64::sin) }
        cdecl fn _CIcos(env) -> Ret { ci1(env, f64::cos) }
        cdecl fn _CItan(env) -> Ret { ci1(env, f64::tan) }
        cdecl fn _CIasin(env) -> Ret { ci1(env, f64::asin) }
        cdecl fn _CIacos(env) -> Ret { ci1(env, f64::acos) }
        cdecl fn _CIatan(env) -> Ret { ci1(env, f64::atan) }
        cdecl fn _CIsinh(env) -> Ret { ci1(env, f64::sinh) }
        cdecl fn _CIcosh(env) -> Ret { ci1(env, f64::cosh) }
        cdecl fn _CItanh(env) -> Ret { ci1(env, f64::tanh) }
        cdecl fn _CIexp(env) -> Ret { ci1(env, f64::exp) }
        cdecl fn _CIlog(env) -> Ret { ci1(env, f64::ln) }
        cdecl fn _CIlog10(env) -> Ret { ci1(env, f64::log10) }
        cdecl fn _CIsqrt(env) -> Ret { ci1(env, f64::sqrt) }
        cdecl fn _CIpow(env) -> Ret { ci2(env, f64::powf) }
        cdecl fn _CIatan2(env) -> Ret { ci2(env, f64::atan2) }
        cdecl fn _CIfmod(env) -> Ret { ci2(env, |a, b| a % b) }
        cdecl fn _ftol(env) -> Ret { ftol(env) }
        cdecl fn _ftol2(env) -> Ret { ftol(env) }
        cdecl fn _ftol2_sse(env) -> Ret { ftol(env) }
        cdecl fn _controlfp(env, new: u32, mask: u32) -> u32 { control87(env.cpu(), new, mask & !0x8_0000) }
        cdecl fn _control87(env, new: u32, mask: u32) -> u32 { control87(env.cpu(), new, mask) }
        cdecl fn __control87_2(env, new: u32, mask: u32, x87: u32, sse: u32) -> i32 {
            let v = control87(env.cpu(), new, mask);
            if x87 != 0 { env.mem.poke_u32(x87, v); }
            if sse != 0 { env.mem.poke_u32(sse, v); }
            1
        }
        cdecl fn _controlfp_s(env, out: u32, new: u32, mask: u32) -> i32 {
            let v = control87(env.cpu(), new, mask & !0x8_0000);
            if out != 0 { env.mem.poke_u32(out, v); }
            0
        }
        cdecl fn _clearfp(env) -> u32 { let f = &mut env.cpu().fpu; let s = abstract_sw(f.status); f.status &= !0x80FF; s }
        cdecl fn _statusfp(env) -> u32 { abstract_sw(env.cpu().fpu.status) }
        cdecl fn _fpreset(env) { env.cpu().fpu.set_control(0x27F); }
        cdecl fn _set_controlfp(env, new: u32, mask: u32) { control87(env.cpu(), new, mask & !0x8_0000); }
        cdecl fn __fpecode(env) -> u32 { super::super::misc::static_buf(env, "fpecode", 4) }
        cdecl fn _matherr(env, e: u32) -> i32 { 0 }
        cdecl fn _set_SSE2_enable(env, f: i32) -> i32 { 0 }
    }
}
