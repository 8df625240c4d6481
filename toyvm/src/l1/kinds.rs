//! Direct calls for the hottest handlers, so the dispatch loop can inline
//! them instead of calling through the Op's function pointer.
//!
//! A kind is assigned by identity, never by guessing: when L1 starts it
//! decodes one canonical encoding per kind with the very decoder that builds
//! its Ops and records the handler pointer that decoder chose; an Op gets a
//! kind only if its handler *is* that pointer. [`call`] then calls the same
//! handler function statically. Semantics are the CPU's by construction;
//! a pointer that does not match (another copy of a generic, a #UD op) just
//! means the generic indirect call. This module must not contain any
//! instruction semantics.

use super::tracked::Tracked;
use crate::bus::EngineBus;
use crate::cpu::decode::MAX_LEN;
use crate::cpu::exec::{alu, control, data};
use crate::cpu::op::{Flow, Op};
use crate::cpu::{string, Cpu, Exception};

pub const GENERIC: u8 = 0;
const MOV: u8 = 1;
const ALU: u8 = 2;
const TEST: u8 = 3;
const UNARY: u8 = 4;
const SHIFT: u8 = 5;
const SHXD: u8 = 6;
const MULDIV: u8 = 7;
const IMUL2: u8 = 8;
pub const JCC: u8 = 9;
pub const JMP: u8 = 10;
pub const LOOP: u8 = 11;
const PUSH: u8 = 12;
const POP: u8 = 13;
const CALL: u8 = 14;
const RET: u8 = 15;
const LEA: u8 = 16;
const MOVX: u8 = 17;
const STRING: u8 = 18;
const XCHG: u8 = 19;
const CBW: u8 = 20;
const SETCC: u8 = 21;
const FLAGOP: u8 = 22;

/// Canonical encodings, one per kind.
const CANON: &[(u8, &[u8])] = &[
    (MOV, &[0x89, 0xC0]),
    (ALU, &[0x01, 0xC0]),
    (TEST, &[0x85, 0xC0]),
    (UNARY, &[0x40]),
    (SHIFT, &[0xD1, 0xE0]),
    (SHXD, &[0x0F, 0xA4, 0xC0, 0x01]),
    (MULDIV, &[0xF7, 0xE0]),
    (IMUL2, &[0x0F, 0xAF, 0xC0]),
    (JCC, &[0x74, 0x00]),
    (JMP, &[0xEB, 0x00]),
    (LOOP, &[0xE2, 0x00]),
    (PUSH, &[0x50]),
    (POP, &[0x58]),
    (CALL, &[0xE8, 0x00, 0x00]),
    (RET, &[0xC3]),
    (LEA, &[0x8D, 0x00]),
    (MOVX, &[0x0F, 0xB6, 0xC0]),
    (STRING, &[0xA4]),
    (XCHG, &[0x87, 0xC3]),
    (CBW, &[0x98]),
    (SETCC, &[0x0F, 0x94, 0xC0]),
    (FLAGOP, &[0xF8]),
];

/// Handler pointers as the decoder produces them, with their kinds.
pub struct Kinds {
    table: Vec<(usize, u8)>,
}

impl Kinds {
    pub fn new<B: EngineBus>() -> Kinds {
        let mut table = Vec::new();
        for &(k, enc) in CANON {
            let mut bytes = [0u8; MAX_LEN];
            bytes[..enc.len()].copy_from_slice(enc);
            let op = super::block::decode_op::<B>(&bytes, 0x100);
            table.push((op.handler as usize, k));
        }
        Kinds { table }
    }

    /// No direct calls at all.
    pub fn none() -> Kinds {
        Kinds { table: Vec::new() }
    }

    /// The kind of `op` (GENERIC unless its handler is a known one).
    pub fn of<B>(&self, op: &Op<Tracked<B>>) -> u8 {
        let h = op.handler as usize;
        self.table
            .iter()
            .find(|&&(p, _)| p == h)
            .map_or(GENERIC, |&(_, k)| k)
    }
}

/// Runs a block's closing branch (kind JCC, JMP or LOOP) with a static
/// call the dispatch loop can inline: the "fused" second half of the pair
/// formed with the op before it. Any other kind goes through [`call`].
#[inline(always)]
pub fn call_branch<B: EngineBus>(
    kind: u8,
    cpu: &mut Cpu,
    tb: &mut Tracked<B>,
    op: &Op<Tracked<B>>,
) -> Result<Flow, Exception> {
    match kind {
        JCC => control::h_jcc(cpu, tb, op),
        JMP => control::h_jmp_rel(cpu, tb, op),
        LOOP => control::h_loop(cpu, tb, op),
        _ => call(kind, cpu, tb, op),
    }
}

/// Whether a block-closing op of this kind is fused with the op before it.
#[inline(always)]
pub fn fusable_branch(kind: u8) -> bool {
    matches!(kind, JCC | JMP | LOOP)
}

/// Runs `op`'s handler: statically for a known kind, through the pointer
/// otherwise.
#[inline(always)]
pub fn call<B: EngineBus>(
    kind: u8,
    cpu: &mut Cpu,
    tb: &mut Tracked<B>,
    op: &Op<Tracked<B>>,
) -> Result<Flow, Exception> {
    match kind {
        MOV => data::h_mov(cpu, tb, op),
        ALU => alu::h_alu(cpu, tb, op),
        TEST => alu::h_test(cpu, tb, op),
        UNARY => alu::h_unary(cpu, tb, op),
        SHIFT => alu::h_shift(cpu, tb, op),
        SHXD => alu::h_shxd(cpu, tb, op),
        MULDIV => alu::h_muldiv(cpu, tb, op),
        IMUL2 => alu::h_imul2(cpu, tb, op),
        JCC => control::h_jcc(cpu, tb, op),
        JMP => control::h_jmp_rel(cpu, tb, op),
        LOOP => control::h_loop(cpu, tb, op),
        PUSH => data::h_push(cpu, tb, op),
        POP => data::h_pop(cpu, tb, op),
        CALL => control::h_call_rel(cpu, tb, op),
        RET => control::h_ret(cpu, tb, op),
        LEA => data::h_lea(cpu, tb, op),
        MOVX => data::h_movx(cpu, tb, op),
        STRING => string::h_string(cpu, tb, op),
        XCHG => data::h_xchg(cpu, tb, op),
        CBW => alu::h_cbw(cpu, tb, op),
        SETCC => data::h_setcc(cpu, tb, op),
        FLAGOP => control::h_flagop(cpu, tb, op),
        _ => (op.handler)(cpu, tb, op),
    }
}
