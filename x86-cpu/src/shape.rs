//! Operand shapes: where an operand lives, as a compile-time constant.
//!
//! Decoding knows every operand's kind (a register of some width, memory of
//! some width, an immediate). The hottest handlers are generic over that
//! kind (`const D: Shape, const S: Shape`), so one handler body (the
//! instruction's semantics, written once) is instantiated per shape and its
//! operand accesses compile to a direct register or memory access instead of
//! run-time matches on [`Opnd`] and [`crate::op::Loc`]. [`ANY`] instantiates
//! the general body (run-time dispatch on the operand), which every shape a
//! table does not list gets, so a shape is only ever a speed choice.
//!
//! This module owns the shape vocabulary and the mapping from [`Opnd`]; the
//! choice of instance per Op is `select`'s. It must not contain instruction
//! semantics.

use crate::bus::Width;
use crate::op::Opnd;

/// An operand shape (one of the constants below).
pub type Shape = u8;

/// Decided at run time from the Op's operand (the general instance).
pub const ANY: Shape = 0;
/// An 8-bit register (AL CL DL BL AH CH DH BH by encoding).
pub const R8: Shape = 1;
pub const R16: Shape = 2;
pub const R32: Shape = 3;
/// The memory operand of [`crate::op::Op::ea`], 8 bits wide.
pub const M8: Shape = 4;
pub const M16: Shape = 5;
pub const M32: Shape = 6;
/// [`crate::op::Op::imm`].
pub const IMM: Shape = 7;

/// The shape of a decoded operand ([`ANY`] for segment registers and none).
pub const fn of(o: Opnd) -> Shape {
    match o {
        Opnd::R8(_) => R8,
        Opnd::R16(_) => R16,
        Opnd::R32(_) => R32,
        Opnd::Mem(Width::W8) => M8,
        Opnd::Mem(Width::W16) => M16,
        Opnd::Mem(Width::W32) => M32,
        Opnd::Imm => IMM,
        Opnd::None | Opnd::Sreg(_) => ANY,
    }
}

/// The access width a shape implies; `dynamic` (the Op's width) for
/// [`ANY`] and [`IMM`].
#[inline(always)]
pub const fn width(s: Shape, dynamic: Width) -> Width {
    match s {
        R8 | M8 => Width::W8,
        R16 | M16 => Width::W16,
        R32 | M32 => Width::W32,
        _ => dynamic,
    }
}

/// Whether a shape is a memory operand.
#[inline(always)]
pub const fn is_mem(s: Shape) -> bool {
    matches!(s, M8 | M16 | M32)
}
