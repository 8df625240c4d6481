//! SSE2 packed-integer arithmetic on XMM registers: add/subtract (wrapping
//! and saturating), compares, min/max, averages, multiplies, sum of absolute
//! differences, and the shifts (per lane and whole-register byte shifts).
//!
//! Owns these lane semantics only; operand access and the whitelist are in
//! `sse`. It must not touch flags, MXCSR or floating point.

use super::sse::{from_lanes, insn, lane, read, xmm};
use crate::bus::Bus;
use crate::op::{Flow, Op};
use crate::{Cpu, Exception};
use iced_x86::Mnemonic as M;

type R = Result<Flow, Exception>;

/// Whether `m` is one of this module's instructions.
pub fn handles(m: M) -> bool {
    matches!(
        m,
        M::Paddb
            | M::Paddw
            | M::Paddd
            | M::Paddq
            | M::Psubb
            | M::Psubw
            | M::Psubd
            | M::Psubq
            | M::Paddsb
            | M::Paddsw
            | M::Paddusb
            | M::Paddusw
            | M::Psubsb
            | M::Psubsw
            | M::Psubusb
            | M::Psubusw
            | M::Pcmpeqb
            | M::Pcmpeqw
            | M::Pcmpeqd
            | M::Pcmpgtb
            | M::Pcmpgtw
            | M::Pcmpgtd
            | M::Pminub
            | M::Pmaxub
            | M::Pminsw
            | M::Pmaxsw
            | M::Pavgb
            | M::Pavgw
            | M::Pmullw
            | M::Pmulhw
            | M::Pmulhuw
            | M::Pmuludq
            | M::Pmaddwd
            | M::Psadbw
            | M::Psllw
            | M::Pslld
            | M::Psllq
            | M::Psrlw
            | M::Psrld
            | M::Psrlq
            | M::Psraw
            | M::Psrad
            | M::Pslldq
            | M::Psrldq
    )
}

/// Sign-extends the low `size` bytes.
fn sx(v: u64, size: u32) -> i64 {
    let sh = 64 - 8 * size;
    ((v << sh) as i64) >> sh
}

fn map2(d: u128, s: u128, size: u32, f: impl Fn(u64, u64) -> u64) -> u128 {
    from_lanes(size, |i| f(lane(d, size, i), lane(s, size, i)))
}

fn mask(b: bool) -> u64 {
    if b {
        u64::MAX
    } else {
        0
    }
}

/// Saturates a signed result to `size` bytes.
fn sat_s(v: i64, size: u32) -> u64 {
    let hi = (1i64 << (8 * size - 1)) - 1;
    v.clamp(-hi - 1, hi) as u64
}

/// Saturates an unsigned result to `size` bytes.
fn sat_u(v: i64, size: u32) -> u64 {
    v.clamp(0, (1i64 << (8 * size)) - 1) as u64
}

/// Shifts every lane of `size` bytes by `count` (≥ lane width: zero, or the
/// sign for arithmetic shifts).
fn shift(d: u128, size: u32, count: u64, kind: u8) -> u128 {
    let bits = 8 * size as u64;
    from_lanes(size, |i| {
        let v = lane(d, size, i);
        match kind {
            0 if count >= bits => 0,
            0 => v << count,
            1 if count >= bits => 0,
            1 => v >> count,
            _ => (sx(v, size) >> count.min(bits - 1)) as u64,
        }
    })
}

/// The packed-integer instructions.
pub fn h_int<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let ins = insn(op)?;
    let s = read(cpu, bus, op, ins, 1)?;
    let x = xmm(ins.op0_register());
    let d = cpu.sse.xmm[x];
    // Shift count: an immediate, or the low 64 bits of the source (the
    // upper 64 are ignored).
    let count = s as u64;
    cpu.sse.xmm[x] = match ins.mnemonic() {
        M::Paddb => map2(d, s, 1, u64::wrapping_add),
        M::Paddw => map2(d, s, 2, u64::wrapping_add),
        M::Paddd => map2(d, s, 4, u64::wrapping_add),
        M::Paddq => map2(d, s, 8, u64::wrapping_add),
        M::Psubb => map2(d, s, 1, u64::wrapping_sub),
        M::Psubw => map2(d, s, 2, u64::wrapping_sub),
        M::Psubd => map2(d, s, 4, u64::wrapping_sub),
        M::Psubq => map2(d, s, 8, u64::wrapping_sub),
        M::Paddsb => map2(d, s, 1, |a, b| sat_s(sx(a, 1) + sx(b, 1), 1)),
        M::Paddsw => map2(d, s, 2, |a, b| sat_s(sx(a, 2) + sx(b, 2), 2)),
        M::Psubsb => map2(d, s, 1, |a, b| sat_s(sx(a, 1) - sx(b, 1), 1)),
        M::Psubsw => map2(d, s, 2, |a, b| sat_s(sx(a, 2) - sx(b, 2), 2)),
        M::Paddusb => map2(d, s, 1, |a, b| sat_u(a as i64 + b as i64, 1)),
        M::Paddusw => map2(d, s, 2, |a, b| sat_u(a as i64 + b as i64, 2)),
        M::Psubusb => map2(d, s, 1, |a, b| sat_u(a as i64 - b as i64, 1)),
        M::Psubusw => map2(d, s, 2, |a, b| sat_u(a as i64 - b as i64, 2)),
        M::Pcmpeqb => map2(d, s, 1, |a, b| mask(a == b)),
        M::Pcmpeqw => map2(d, s, 2, |a, b| mask(a == b)),
        M::Pcmpeqd => map2(d, s, 4, |a, b| mask(a == b)),
        M::Pcmpgtb => map2(d, s, 1, |a, b| mask(sx(a, 1) > sx(b, 1))),
        M::Pcmpgtw => map2(d, s, 2, |a, b| mask(sx(a, 2) > sx(b, 2))),
        M::Pcmpgtd => map2(d, s, 4, |a, b| mask(sx(a, 4) > sx(b, 4))),
        M::Pminub => map2(d, s, 1, u64::min),
        M::Pmaxub => map2(d, s, 1, u64::max),
        M::Pminsw => map2(d, s, 2, |a, b| if sx(a, 2) <= sx(b, 2) { a } else { b }),
        M::Pmaxsw => map2(d, s, 2, |a, b| if sx(a, 2) >= sx(b, 2) { a } else { b }),
        M::Pavgb => map2(d, s, 1, |a, b| (a + b + 1) >> 1),
        M::Pavgw => map2(d, s, 2, |a, b| (a + b + 1) >> 1),
        M::Pmullw => map2(d, s, 2, |a, b| (sx(a, 2) * sx(b, 2)) as u64),
        M::Pmulhw => map2(d, s, 2, |a, b| ((sx(a, 2) * sx(b, 2)) >> 16) as u64),
        M::Pmulhuw => map2(d, s, 2, |a, b| (a * b) >> 16),
        M::Pmuludq => from_lanes(8, |i| lane(d, 4, 2 * i) * lane(s, 4, 2 * i)),
        M::Pmaddwd => from_lanes(4, |i| {
            let p = |k| sx(lane(d, 2, k), 2) * sx(lane(s, 2, k), 2);
            // Only -32768² + -32768² overflows; it wraps to 8000_0000h.
            (p(2 * i) + p(2 * i + 1)) as u64
        }),
        M::Psadbw => from_lanes(8, |i| {
            (0..8)
                .map(|k| {
                    (lane(d, 1, 8 * i + k) as i64 - lane(s, 1, 8 * i + k) as i64).unsigned_abs()
                })
                .sum()
        }),
        M::Psllw => shift(d, 2, count, 0),
        M::Pslld => shift(d, 4, count, 0),
        M::Psllq => shift(d, 8, count, 0),
        M::Psrlw => shift(d, 2, count, 1),
        M::Psrld => shift(d, 4, count, 1),
        M::Psrlq => shift(d, 8, count, 1),
        M::Psraw => shift(d, 2, count, 2),
        M::Psrad => shift(d, 4, count, 2),
        M::Pslldq if count > 15 => 0,
        M::Pslldq => d << (8 * count),
        M::Psrldq if count > 15 => 0,
        _ => d >> (8 * count),
    };
    Ok(Flow::Next)
}
