//! Addressing: effective offsets, segment limits, linear addresses.
//!
//! Owns the addressing recipe ([`Ea`]) and the one limit rule every access goes
//! through: an access whose last byte lies past the segment's limit
//! ([`Cpu::seg_end`] for reads, [`Cpu::seg_wend`] for writes: 0xFFFF in real
//! mode, 4 GiB - 1 for a flat segment) faults (#GP, or the stack-fault
//! vector for SS). The fast check is one compare; whatever it refuses goes
//! to [`check_slow`], which knows the protected-mode cases the extents
//! cannot express (expand-down segments, null selectors, read-only and
//! execute-only segments) before it decides on a fault. It must not read or
//! write memory itself.

use super::{seg, Cpu, Exception};

/// "No register" in an [`Ea`] base or index.
pub const NO_REG: u8 = 0xFF;

/// How to compute a memory operand's offset: `base + index << scale + disp`,
/// truncated to 16 bits unless `a32`, in segment `seg`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ea {
    pub base: u8,
    pub index: u8,
    pub scale: u8,
    pub disp: u32,
    pub seg: u8,
    pub a32: bool,
}

impl Ea {
    /// No memory operand (segment DS, 16-bit addressing).
    pub const NONE: Ea = Ea {
        base: NO_REG,
        index: NO_REG,
        scale: 0,
        disp: 0,
        seg: seg::DS as u8,
        a32: false,
    };
}

/// The offset an [`Ea`] names for the current registers.
#[inline(always)]
pub fn offset(cpu: &Cpu, ea: &Ea) -> u32 {
    let mut off = ea.disp;
    if ea.base != NO_REG {
        off = off.wrapping_add(cpu.regs[ea.base as usize & 7]);
    }
    if ea.index != NO_REG {
        off = off.wrapping_add(cpu.regs[ea.index as usize & 7] << ea.scale);
    }
    if ea.a32 {
        off
    } else {
        off & 0xFFFF
    }
}

/// The fault a segment overrun raises in segment `s`.
#[inline]
pub fn overrun(cpu: &Cpu, s: usize) -> Exception {
    if s == seg::SS {
        Exception(cpu.ss_fault_vector, 0)
    } else {
        Exception::GP
    }
}

/// Checks that `size` bytes at `s:off` may be read and returns the linear
/// address of the first one.
#[inline(always)]
pub fn check(cpu: &Cpu, s: usize, off: u32, size: u32) -> Result<u32, Exception> {
    if off as u64 + size as u64 > cpu.seg_end[s] {
        return check_slow(cpu, s, off, size, false);
    }
    Ok(cpu.sbase[s].wrapping_add(off))
}

/// Checks that `size` bytes at `s:off` may be written (read-modify-write
/// destinations too) and returns the linear address of the first one.
#[inline(always)]
pub fn check_w(cpu: &Cpu, s: usize, off: u32, size: u32) -> Result<u32, Exception> {
    if off as u64 + size as u64 > cpu.seg_wend[s] {
        return check_slow(cpu, s, off, size, true);
    }
    Ok(cpu.sbase[s].wrapping_add(off))
}

/// What the fast check refused. Real and V86 mode: an overrun. Protected
/// mode: a null segment is #GP(0) (#SS(0) for SS); a write to a segment
/// that is not writable data, or a read of execute-only code, is #GP(0);
/// an expand-down data segment allows the offsets above its limit up to
/// 0xFFFF (or 4 GiB - 1 with B set); anything else is an overrun.
#[cold]
#[inline(never)]
pub fn check_slow(cpu: &Cpu, s: usize, off: u32, size: u32, write: bool) -> Result<u32, Exception> {
    if !cpu.pmode || cpu.v86 {
        return Err(overrun(cpu, s));
    }
    let attr = cpu.sattr[s];
    if attr & 0x80 == 0 {
        return Err(overrun(cpu, s));
    }
    let code = attr & 0x18 == 0x18;
    if code {
        if write || (attr & 2 == 0 && s != seg::CS) {
            return Err(overrun(cpu, s));
        }
    } else {
        if write && attr & 2 == 0 {
            return Err(overrun(cpu, s));
        }
        if attr & 4 != 0 {
            // Expand-down: valid offsets are (limit, upper].
            let upper: u64 = if attr & 0x400 != 0 {
                0xFFFF_FFFF
            } else {
                0xFFFF
            };
            let last = off as u64 + size as u64 - 1;
            if (off as u64) > cpu.slimit[s] as u64 && last <= upper {
                return Ok(cpu.sbase[s].wrapping_add(off));
            }
            return Err(overrun(cpu, s));
        }
    }
    // Expand-up within the extent the fast check used: the other extent
    // (a read through a segment whose writes are refused) may allow it.
    let end = if write {
        cpu.seg_wend[s]
    } else {
        cpu.seg_end[s]
    };
    if off as u64 + size as u64 <= end {
        return Ok(cpu.sbase[s].wrapping_add(off));
    }
    Err(overrun(cpu, s))
}
