//! The C runtime's floating-point plumbing: doubles returned in ST(0),
//! doubles read from the guest stack, and the x87 control word calls
//! (`_controlfp`, `_control87`). Shared by msvcrt and ucrtbase.
//!
//! Owns the conversion between Rust `f64` and the x87 register file; it must
//! not implement instruction semantics (x86-cpu's softfloat does the rounding).

use x86_cpu::fpu::{formats, softfloat::Rounding, F80};
use x86_cpu::Cpu;

/// Round to nearest, all exceptions masked.
const NEAREST: Rounding = Rounding { rc: 0, bits: 53, masks: 0x3F };

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
