//! Addressing: effective offsets, segment limits, linear addresses.
//!
//! Owns the addressing recipe ([`Ea`]) and the one limit rule every access goes
//! through: an access whose last byte lies past the segment's limit
//! ([`Cpu::seg_end`]: 0xFFFF in real mode, 4 GiB - 1 for a flat segment)
//! faults (#GP, or the stack-fault vector for SS). It must not read or write
//! memory itself.

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
        Exception(cpu.ss_fault_vector)
    } else {
        Exception::GP
    }
}

/// Checks that `size` bytes at `s:off` lie inside the segment and returns the
/// linear address of the first one.
#[inline(always)]
pub fn check(cpu: &Cpu, s: usize, off: u32, size: u32) -> Result<u32, Exception> {
    if off as u64 + size as u64 > cpu.seg_end[s] {
        return Err(overrun(cpu, s));
    }
    Ok(cpu.sbase[s].wrapping_add(off))
}
