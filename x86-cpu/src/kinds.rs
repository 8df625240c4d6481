//! Direct calls for block-closing branches, so a threaded tier's dispatch
//! loop can inline them instead of calling through the Op's function pointer.
//!
//! A kind is assigned by identity, never by guessing: the tier decodes one
//! canonical encoding per kind with the very decoder that builds its Ops
//! ([`Kinds::new`]) and records the handler pointer that decoder chose; an
//! Op gets a kind only if its handler *is* that pointer. [`call_branch`] then
//! calls the same handler function statically. Semantics are the CPU's by
//! construction; a pointer that does not match (another instance of a
//! generic, a #UD op) just means the indirect call. Engine-independent
//! (toyvm's real-mode L1 and mainemu's flat L1 use it over their own buses);
//! it must not contain any instruction semantics.

use crate::bus::Bus;
use crate::decode::MAX_LEN;
use crate::exec::control;
use crate::op::{Flow, Op};
use crate::{Cpu, Exception};

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
    /// The table for the tier whose decoder is `decode` (given the 15-byte
    /// fetch window of one instruction: Jcc rel8, JMP rel8, LOOP rel8).
    pub fn new<B>(decode: impl Fn(&[u8; MAX_LEN]) -> Op<B>) -> Kinds {
        let mut canon: Vec<(u8, [u8; 2])> =
            (0..16u8).map(|cc| (JCC + cc, [0x70 + cc, 0])).collect();
        canon.push((JMP, [0xEB, 0x00]));
        canon.push((LOOP, [0xE2, 0x00]));
        let mut table = Vec::new();
        for (k, enc) in canon {
            let mut bytes = [0u8; MAX_LEN];
            bytes[..2].copy_from_slice(&enc);
            let op = decode(&bytes);
            table.push((op.handler as usize, k));
        }
        Kinds { table }
    }

    /// No direct calls at all.
    pub fn none() -> Kinds {
        Kinds { table: Vec::new() }
    }

    /// The kind of `op` (GENERIC unless its handler is a known one).
    pub fn of<B>(&self, op: &Op<B>) -> u8 {
        let h = op.handler as usize;
        self.table
            .iter()
            .find(|&&(p, _)| p == h)
            .map_or(GENERIC, |&(_, k)| k)
    }
}

/// Runs a block's closing branch (kind JCC, JMP or LOOP) with a static
/// call the dispatch loop can inline. Any other kind goes through [`call`].
#[inline(always)]
pub fn call_branch<B: Bus>(
    kind: u8,
    cpu: &mut Cpu,
    bus: &mut B,
    op: &Op<B>,
) -> Result<Flow, Exception> {
    // Literal patterns (kind = JCC + condition code), so the match is one
    // jump table rather than a chain of guarded compares.
    const _: () = assert!(JCC == 1 && JMP == 17 && LOOP == 18);
    macro_rules! jcc {
        ($($k:literal => $c:literal),*) => {
            match kind {
                $( $k => control::h_jcc::<_, $c>(cpu, bus, op), )*
                17 => control::h_jmp_rel(cpu, bus, op),
                18 => control::h_loop(cpu, bus, op),
                _ => call(kind, cpu, bus, op),
            }
        };
    }
    jcc!(1 => 0, 2 => 1, 3 => 2, 4 => 3, 5 => 4, 6 => 5, 7 => 6, 8 => 7, 9 => 8, 10 => 9,
         11 => 10, 12 => 11, 13 => 12, 14 => 13, 15 => 14, 16 => 15)
}

/// Whether a block-closing op of this kind is fused with the op before it.
#[inline(always)]
pub fn fusable_branch(kind: u8) -> bool {
    (JCC..=LOOP).contains(&kind)
}

/// Runs `op`'s handler through its pointer (the decoder's shape-specialised
/// instance).
#[inline(always)]
pub fn call<B: Bus>(_kind: u8, cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> Result<Flow, Exception> {
    (op.handler)(cpu, bus, op)
}
