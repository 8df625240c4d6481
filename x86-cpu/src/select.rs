//! Which instance of a shape-generic handler an Op gets.
//!
//! The hottest handler families (ALU, TEST, MOV, INC/DEC/NOT/NEG, shifts,
//! MOVZX/MOVSX, LEA, PUSH, POP, Jcc) are written once, generic over their
//! operands' shapes (`crate::shape`) and, for ALU, unary and Jcc, over the
//! operation selector. The tables here list the shapes worth an instance
//! (the forms real-mode and flat code use); any other combination gets the
//! general instance ([`shape::ANY`], selector from `sub`), which behaves
//! identically. A table entry is only a speed choice: the semantics are the
//! handler body's in every instance.
//!
//! This module owns those tables; it must not contain instruction semantics
//! or decoding (the decoder calls it with the operands it built).

use crate::bus::Bus;
use crate::exec::alu::{self, FROM_SUB};
use crate::exec::{control, data};
use crate::op::{Handler, Opnd};
use crate::shape::{self, ANY, IMM, M16, M32, M8, R16, R32, R8};

/// Picks `$mk!(D, S)` for the listed (D, S) pairs, else `$any`.
macro_rules! pick2 {
    ($mk:ident, $d:expr, $s:expr, $any:expr, [$(($D:ident, $S:ident)),* $(,)?]) => {
        match ($d, $s) {
            $( ($D, $S) => $mk!($D, $S), )*
            _ => $any,
        }
    };
}

/// The (destination, source) shapes with an instance for two-operand
/// ALU-like families: register/register, register/immediate, memory/register,
/// register/memory and memory/immediate at each width.
macro_rules! pick_binary {
    ($mk:ident, $d:expr, $s:expr, $any:expr) => {
        pick2!(
            $mk,
            $d,
            $s,
            $any,
            [
                (R8, R8),
                (R16, R16),
                (R32, R32),
                (R8, IMM),
                (R16, IMM),
                (R32, IMM),
                (M8, R8),
                (M16, R16),
                (M32, R32),
                (R8, M8),
                (R16, M16),
                (R32, M32),
                (M8, IMM),
                (M16, IMM),
                (M32, IMM),
            ]
        )
    };
}

/// Picks `$mk!(D)` for the listed shapes, else `$any`.
macro_rules! pick1 {
    ($mk:ident, $d:expr, $any:expr, [$($D:ident),* $(,)?]) => {
        match $d {
            $( $D => $mk!($D), )*
            _ => $any,
        }
    };
}

fn alu_op<B: Bus, const OP: u8>(d: u8, s: u8) -> Handler<B> {
    macro_rules! mk {
        ($D:ident, $S:ident) => {
            alu::h_alu::<B, OP, $D, $S> as Handler<B>
        };
    }
    pick_binary!(mk, d, s, alu::h_alu::<B, FROM_SUB, ANY, ANY>)
}

/// ADD OR ADC SBB AND SUB XOR CMP (`sub` in /reg order).
pub fn alu<B: Bus>(sub: u8, dst: Opnd, src: Opnd) -> Handler<B> {
    let (d, s) = (shape::of(dst), shape::of(src));
    match sub {
        0 => alu_op::<B, 0>(d, s),
        1 => alu_op::<B, 1>(d, s),
        2 => alu_op::<B, 2>(d, s),
        3 => alu_op::<B, 3>(d, s),
        4 => alu_op::<B, 4>(d, s),
        5 => alu_op::<B, 5>(d, s),
        6 => alu_op::<B, 6>(d, s),
        7 => alu_op::<B, 7>(d, s),
        _ => alu::h_alu::<B, FROM_SUB, ANY, ANY>,
    }
}

/// TEST.
pub fn test<B: Bus>(dst: Opnd, src: Opnd) -> Handler<B> {
    let (d, s) = (shape::of(dst), shape::of(src));
    macro_rules! mk {
        ($D:ident, $S:ident) => {
            alu::h_test::<B, $D, $S> as Handler<B>
        };
    }
    pick_binary!(mk, d, s, alu::h_test::<B, ANY, ANY>)
}

/// MOV between general registers, memory and immediates (segment and
/// control registers are other handlers).
pub fn mov<B: Bus>(dst: Opnd, src: Opnd) -> Handler<B> {
    let (d, s) = (shape::of(dst), shape::of(src));
    macro_rules! mk {
        ($D:ident, $S:ident) => {
            data::h_mov::<B, $D, $S> as Handler<B>
        };
    }
    pick_binary!(mk, d, s, data::h_mov::<B, ANY, ANY>)
}

fn unary_op<B: Bus, const U: u8>(d: u8) -> Handler<B> {
    macro_rules! mk {
        ($D:ident) => {
            alu::h_unary::<B, U, $D> as Handler<B>
        };
    }
    pick1!(
        mk,
        d,
        alu::h_unary::<B, FROM_SUB, ANY>,
        [R8, R16, R32, M8, M16, M32]
    )
}

/// NOT (0) NEG (1) INC (2) DEC (3).
pub fn unary<B: Bus>(sub: u8, dst: Opnd) -> Handler<B> {
    let d = shape::of(dst);
    match sub {
        0 => unary_op::<B, 0>(d),
        1 => unary_op::<B, 1>(d),
        2 => unary_op::<B, 2>(d),
        3 => unary_op::<B, 3>(d),
        _ => alu::h_unary::<B, FROM_SUB, ANY>,
    }
}

/// The shifts and rotates (count an immediate or CL).
pub fn shift<B: Bus>(dst: Opnd, src: Opnd) -> Handler<B> {
    let (d, s) = (shape::of(dst), shape::of(src));
    macro_rules! mk {
        ($D:ident, $S:ident) => {
            alu::h_shift::<B, $D, $S> as Handler<B>
        };
    }
    pick2!(
        mk,
        d,
        s,
        alu::h_shift::<B, ANY, ANY>,
        [
            (R8, IMM),
            (R16, IMM),
            (R32, IMM),
            (M8, IMM),
            (M16, IMM),
            (M32, IMM),
            (R8, R8),
            (R16, R8),
            (R32, R8),
            (M8, R8),
            (M16, R8),
            (M32, R8),
        ]
    )
}

/// MOVZX / MOVSX.
pub fn movx<B: Bus>(dst: Opnd, src: Opnd) -> Handler<B> {
    let (d, s) = (shape::of(dst), shape::of(src));
    macro_rules! mk {
        ($D:ident, $S:ident) => {
            data::h_movx::<B, $D, $S> as Handler<B>
        };
    }
    pick2!(
        mk,
        d,
        s,
        data::h_movx::<B, ANY, ANY>,
        [
            (R16, R8),
            (R16, M8),
            (R32, R8),
            (R32, M8),
            (R32, R16),
            (R32, M16),
        ]
    )
}

/// LEA.
pub fn lea<B: Bus>(dst: Opnd) -> Handler<B> {
    macro_rules! mk {
        ($D:ident) => {
            data::h_lea::<B, $D> as Handler<B>
        };
    }
    pick1!(mk, shape::of(dst), data::h_lea::<B, ANY>, [R16, R32])
}

/// PUSH (general registers, immediates, memory; segment registers take the
/// general instance).
pub fn push<B: Bus>(dst: Opnd) -> Handler<B> {
    macro_rules! mk {
        ($D:ident) => {
            data::h_push::<B, $D> as Handler<B>
        };
    }
    pick1!(
        mk,
        shape::of(dst),
        data::h_push::<B, ANY>,
        [R16, R32, IMM, M16, M32]
    )
}

/// POP into a general register (memory and segment registers take the
/// general instance).
pub fn pop<B: Bus>(dst: Opnd) -> Handler<B> {
    macro_rules! mk {
        ($D:ident) => {
            data::h_pop::<B, $D> as Handler<B>
        };
    }
    pick1!(mk, shape::of(dst), data::h_pop::<B, ANY>, [R16, R32])
}

/// Jcc by condition code.
pub fn jcc<B: Bus>(cc: u8) -> Handler<B> {
    macro_rules! by_cc {
        ($($c:literal),*) => {
            match cc {
                $( $c => control::h_jcc::<B, $c> as Handler<B>, )*
                _ => control::h_jcc::<B, FROM_SUB>,
            }
        };
    }
    by_cc!(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
}
