//! Direct calls for the block-closing branches, so the dispatch loop can
//! inline them instead of calling through the Op's function pointer: the
//! shared `x86_cpu::kinds` (kinds assigned by handler identity, never by
//! guessing; mainemu's L1 uses it too), with the table built from the very
//! decoder that builds L1's Ops ([`table`]). This module must not contain
//! any instruction semantics.

use crate::bus::EngineBus;
pub use crate::cpu::kinds::{call, call_branch, fusable_branch, Kinds, GENERIC};

/// The kinds of L1's Ops: one canonical encoding per kind decoded with
/// `block::decode_op`, the decoder of every cached op.
pub fn table<B: EngineBus>() -> Kinds {
    Kinds::new(|bytes| super::block::decode_op::<B>(bytes, 0x100))
}
