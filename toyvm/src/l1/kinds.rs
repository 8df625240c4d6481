//! Direct calls for the block-closing branches, so the dispatch loop can
//! inline them instead of calling through the Op's function pointer.
//!
//! A kind is assigned by identity, never by guessing: when L1 starts it
//! decodes one canonical encoding per kind with the very decoder that builds
//! its Ops and records the handler pointer that decoder chose; an Op gets a
//! kind only if its handler *is* that pointer. [`call`] then calls the same
//! handler function statically. Semantics are the CPU's by construction;
//! a pointer that does not match (another instance of a generic, a #UD op)
//! just means the indirect call. The other hot handlers need no kind: the
//! CPU decoder already picks an instance specialised for the operands'
//! shapes (`x86_cpu::select`), small enough that the indirect call is the
//! only overhead left. This module must not contain any instruction
//! semantics.

use super::tracked::Tracked;
use crate::bus::EngineBus;
use crate::cpu::decode::MAX_LEN;
use crate::cpu::exec::control;
use crate::cpu::op::{Flow, Op};
use crate::cpu::{Cpu, Exception};

pub const GENERIC: u8 = 0;
/// Jcc with condition code `k - JCC` (16 kinds).
pub const JCC: u8 = 1;
pub const JMP: u8 = 17;
pub const LOOP: u8 = 18;

/// Handler pointers as the decoder produces them, with their kinds.
pub struct Kinds {
    table: Vec<(usize, u8)>,
}

impl Kinds {
    pub fn new<B: EngineBus>() -> Kinds {
        let mut canon: Vec<(u8, [u8; 2])> =
            (0..16u8).map(|cc| (JCC + cc, [0x70 + cc, 0])).collect();
        canon.push((JMP, [0xEB, 0x00]));
        canon.push((LOOP, [0xE2, 0x00]));
        let mut table = Vec::new();
        for (k, enc) in canon {
            let mut bytes = [0u8; MAX_LEN];
            bytes[..2].copy_from_slice(&enc);
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
    macro_rules! jcc {
        ($($c:literal),*) => {
            match kind {
                $( k if k == JCC + $c => control::h_jcc::<_, $c>(cpu, tb, op), )*
                JMP => control::h_jmp_rel(cpu, tb, op),
                LOOP => control::h_loop(cpu, tb, op),
                _ => call(kind, cpu, tb, op),
            }
        };
    }
    jcc!(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
}

/// Whether a block-closing op of this kind is fused with the op before it.
#[inline(always)]
pub fn fusable_branch(kind: u8) -> bool {
    (JCC..=LOOP).contains(&kind)
}

/// Runs `op`'s handler through its pointer (the decoder's shape-specialised
/// instance).
#[inline(always)]
pub fn call<B: EngineBus>(
    _kind: u8,
    cpu: &mut Cpu,
    tb: &mut Tracked<B>,
    op: &Op<Tracked<B>>,
) -> Result<Flow, Exception> {
    (op.handler)(cpu, tb, op)
}
