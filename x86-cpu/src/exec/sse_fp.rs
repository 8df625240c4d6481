//! SSE/SSE2 floating point on XMM registers: packed and scalar arithmetic,
//! square root, MIN/MAX, CMPxx, (U)COMISx, and the conversions.
//!
//! Owns the lane structure of these instructions (which lanes a scalar form
//! computes and which it keeps, which conversions zero the upper half), the
//! MXCSR sticky-flag update and the #XM rule: flags are ORed over all lanes;
//! if any raised flag is unmasked, MXCSR records the flags (only the
//! pre-computation ones, IE DE ZE, when one of those is the unmasked cause)
//! and the instruction raises #XM without writing its destination. The
//! arithmetic itself is `sse::ieee`; this module must not round or compute
//! with host floats.

use super::sse::{from_lanes, insn, lane, read, xmm};
use crate::bus::Bus;
use crate::fpu::softfloat::{Flags, DE, IE, ZE};
use crate::op::{Flow, Op};
use crate::sse::ieee::{self, Arith, Mx, Ordering, Prec};
use crate::{Cpu, Exception};
use iced_x86::Mnemonic as M;

type R = Result<Flow, Exception>;

/// Whether `m` is one of this module's instructions.
pub fn handles(m: M) -> bool {
    arith_of(m).is_some()
        || matches!(
            m,
            M::Sqrtps
                | M::Sqrtpd
                | M::Sqrtss
                | M::Sqrtsd
                | M::Cmpps
                | M::Cmppd
                | M::Cmpss
                | M::Cmpsd
                | M::Comiss
                | M::Comisd
                | M::Ucomiss
                | M::Ucomisd
                | M::Cvtsi2ss
                | M::Cvtsi2sd
                | M::Cvtss2si
                | M::Cvttss2si
                | M::Cvtsd2si
                | M::Cvttsd2si
                | M::Cvtss2sd
                | M::Cvtsd2ss
                | M::Cvtps2pd
                | M::Cvtpd2ps
                | M::Cvtdq2ps
                | M::Cvtdq2pd
                | M::Cvtps2dq
                | M::Cvttps2dq
                | M::Cvtpd2dq
                | M::Cvttpd2dq
        )
}

/// The operation, format and packedness of the two-operand arithmetic forms.
fn arith_of(m: M) -> Option<(Arith, Prec, bool)> {
    use Arith::*;
    use Prec::*;
    Some(match m {
        M::Addps => (Add, Single, true),
        M::Addpd => (Add, Double, true),
        M::Addss => (Add, Single, false),
        M::Addsd => (Add, Double, false),
        M::Subps => (Sub, Single, true),
        M::Subpd => (Sub, Double, true),
        M::Subss => (Sub, Single, false),
        M::Subsd => (Sub, Double, false),
        M::Mulps => (Mul, Single, true),
        M::Mulpd => (Mul, Double, true),
        M::Mulss => (Mul, Single, false),
        M::Mulsd => (Mul, Double, false),
        M::Divps => (Div, Single, true),
        M::Divpd => (Div, Double, true),
        M::Divss => (Div, Single, false),
        M::Divsd => (Div, Double, false),
        M::Minps => (Min, Single, true),
        M::Minpd => (Min, Double, true),
        M::Minss => (Min, Single, false),
        M::Minsd => (Min, Double, false),
        M::Maxps => (Max, Single, true),
        M::Maxpd => (Max, Double, true),
        M::Maxss => (Max, Single, false),
        M::Maxsd => (Max, Double, false),
        _ => return None,
    })
}

fn size(p: Prec) -> u32 {
    match p {
        Prec::Single => 4,
        Prec::Double => 8,
    }
}

/// Applies `f` to lanes of `p`: all of them when packed, else lane 0 with
/// the other lanes of `keep`.
fn lanes(p: Prec, packed: bool, keep: u128, mut f: impl FnMut(u32) -> u64) -> u128 {
    let sz = size(p);
    from_lanes(sz, |i| {
        if packed || i == 0 {
            f(i)
        } else {
            lane(keep, sz, i)
        }
    })
}

/// Records the flags in MXCSR; #XM when one is unmasked (see the header).
fn finish(cpu: &mut Cpu, mx: Mx, f: Flags) -> Result<(), Exception> {
    let raised = f.exc & 0x3F;
    let unmasked = raised & !mx.masks;
    if unmasked & (IE | DE | ZE) != 0 {
        cpu.sse.mxcsr |= (raised & (IE | DE | ZE)) as u32;
        return Err(Exception::XM);
    }
    cpu.sse.mxcsr |= raised as u32;
    if unmasked != 0 {
        return Err(Exception::XM);
    }
    Ok(())
}

/// The floating-point instructions.
pub fn h_fp<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let ins = insn(op)?;
    let m = ins.mnemonic();
    let s = read(cpu, bus, op, ins, 1)?;
    let mx = Mx::of(cpu.sse.mxcsr);
    let mut f = Flags::default();
    let f = &mut f;
    let dst = ins.op0_register();
    let d = if dst.is_xmm() {
        cpu.sse.xmm[xmm(dst)]
    } else {
        0
    };
    use Prec::*;
    if let Some((a, p, packed)) = arith_of(m) {
        let sz = size(p);
        let r = lanes(p, packed, d, |i| {
            ieee::arith(p, a, lane(d, sz, i), lane(s, sz, i), mx, f)
        });
        finish(cpu, mx, *f)?;
        cpu.sse.xmm[xmm(dst)] = r;
        return Ok(Flow::Next);
    }
    let r: u128 = match m {
        M::Sqrtps | M::Sqrtpd | M::Sqrtss | M::Sqrtsd => {
            let p = if matches!(m, M::Sqrtps | M::Sqrtss) {
                Single
            } else {
                Double
            };
            let packed = matches!(m, M::Sqrtps | M::Sqrtpd);
            let sz = size(p);
            lanes(p, packed, d, |i| ieee::sqrt(p, lane(s, sz, i), mx, f))
        }
        M::Cmpps | M::Cmppd | M::Cmpss | M::Cmpsd => {
            let p = if matches!(m, M::Cmpps | M::Cmpss) {
                Single
            } else {
                Double
            };
            let packed = matches!(m, M::Cmpps | M::Cmppd);
            let sz = size(p);
            let pred = ins.immediate(2) as u8;
            lanes(p, packed, d, |i| {
                if ieee::cmp_predicate(p, pred, lane(d, sz, i), lane(s, sz, i), mx, f) {
                    u64::MAX
                } else {
                    0
                }
            })
        }
        M::Comiss | M::Comisd | M::Ucomiss | M::Ucomisd => {
            let p = if matches!(m, M::Comiss | M::Ucomiss) {
                Single
            } else {
                Double
            };
            let sz = size(p);
            let signalling = matches!(m, M::Comiss | M::Comisd);
            let o = ieee::compare(p, lane(d, sz, 0), lane(s, sz, 0), signalling, mx, f);
            finish(cpu, mx, *f)?;
            // ZF PF CF: unordered 111, less 001, equal 100, greater 000;
            // OF SF AF cleared.
            let (zf, pf, cf) = match o {
                Ordering::Unordered => (1, 1, 1),
                Ordering::Less => (0, 0, 1),
                Ordering::Equal => (1, 0, 0),
                Ordering::Greater => (0, 0, 0),
            };
            let fl = cpu.eflags() & !0x8D5;
            cpu.set_eflags(fl | zf << 6 | pf << 2 | cf);
            return Ok(Flow::Next);
        }
        M::Cvtsi2ss | M::Cvtsi2sd => {
            let p = if m == M::Cvtsi2ss { Single } else { Double };
            let v = ieee::from_int(p, s as u32 as i32 as i64, mx, f);
            lanes(p, false, d, |_| v)
        }
        M::Cvtss2si | M::Cvttss2si | M::Cvtsd2si | M::Cvttsd2si => {
            let p = if matches!(m, M::Cvtss2si | M::Cvttss2si) {
                Single
            } else {
                Double
            };
            let trunc = matches!(m, M::Cvttss2si | M::Cvttsd2si);
            let v = ieee::to_int(p, lane(s, size(p), 0), trunc, 32, mx, f);
            finish(cpu, mx, *f)?;
            cpu.regs[dst.number() & 7] = v as u32;
            return Ok(Flow::Next);
        }
        M::Cvtss2sd => {
            let v = ieee::convert(Single, Double, lane(s, 4, 0), mx, f);
            lanes(Double, false, d, |_| v)
        }
        M::Cvtsd2ss => {
            let v = ieee::convert(Double, Single, lane(s, 8, 0), mx, f);
            lanes(Single, false, d, |_| v)
        }
        M::Cvtps2pd => from_lanes(8, |i| ieee::convert(Single, Double, lane(s, 4, i), mx, f)),
        M::Cvtpd2ps => from_lanes(4, |i| {
            if i < 2 {
                ieee::convert(Double, Single, lane(s, 8, i), mx, f)
            } else {
                0
            }
        }),
        M::Cvtdq2ps => from_lanes(4, |i| {
            ieee::from_int(Single, lane(s, 4, i) as u32 as i32 as i64, mx, f)
        }),
        M::Cvtdq2pd => from_lanes(8, |i| {
            ieee::from_int(Double, lane(s, 4, i) as u32 as i32 as i64, mx, f)
        }),
        M::Cvtps2dq | M::Cvttps2dq => {
            let trunc = m == M::Cvttps2dq;
            from_lanes(4, |i| ieee::to_int(Single, lane(s, 4, i), trunc, 32, mx, f))
        }
        _ => {
            // CVTPD2DQ, CVTTPD2DQ: two results, upper half zeroed.
            let trunc = m == M::Cvttpd2dq;
            from_lanes(4, |i| {
                if i < 2 {
                    ieee::to_int(Double, lane(s, 8, i), trunc, 32, mx, f)
                } else {
                    0
                }
            })
        }
    };
    finish(cpu, mx, *f)?;
    cpu.sse.xmm[xmm(dst)] = r;
    Ok(Flow::Next)
}
