//! E1: the µop engine. A program is data (words in one `u32` memory) run by
//! ONE fixed engine function ([`engine::run`]); there is no runtime code
//! generation anywhere (ARCHITECTURE.md invariant 6).
//!
//! * [`encode`] turns a verified IR [`crate::ir::Program`] into E1 words:
//!   operands pre-resolved to word indices (a vreg slot, or a constant in the
//!   pool behind the code, so `add r, r` and `add r, imm` are one op), blocks
//!   laid out with fall-through, sites and constants pooled.
//! * [`engine`] is the loop over a `match` on the op word.
//! * [`arena`] holds many programs at once with links between them
//!   (patchable target words), heads, entry counters, eviction and
//!   invalidation by guest byte range.
//!
//! Memory layout of the one word array ([`MEM_WORDS`] words): words
//! `0..256` are the vreg file (guest registers first, temporaries shared by
//! all programs, word 255 a write sink); programs follow.

#![forbid(unsafe_code)]

pub mod arena;
pub mod encode;
pub mod engine;
pub mod op;

pub use arena::{E1Arena, E1Error, LinkSlot, ProgId};
pub use engine::{run, run_counting, run_profiling, E1Exit, E1State, OpProfile};

/// Words in E1's memory (a power of two: every index is masked with
/// [`MEM_MASK`], which lets safe Rust drop the bounds checks and means no
/// program word can make the engine index out of range).
pub const MEM_WORDS: usize = 1 << 20;
/// Mask applied to every memory index.
pub const MEM_MASK: usize = MEM_WORDS - 1;
/// Words allocated past `MEM_WORDS` (never used by programs), so an op's
/// operand words `pc + k` (k < 16) need no mask once `pc` itself is masked.
pub const MEM_SLACK: usize = 16;
/// Length of the word array.
pub const MEM_ALLOC: usize = MEM_WORDS + MEM_SLACK;
/// Vreg file size; destinations are masked with `VREG_MASK`, so no program can
/// write outside the vreg file (except `count` into its own header).
pub const VREG_WORDS: usize = 256;
pub const VREG_MASK: usize = VREG_WORDS - 1;
/// The write sink for results nobody reads (CMP, TEST, unused helper outputs).
pub const SINK: u32 = 255;
/// First word available to programs.
pub const ARENA_BASE: u32 = VREG_WORDS as u32;
/// Slots of an [`OpProfile`] (a power of two above [`op::COUNT_OPS`]).
pub const OP_SLOTS: usize = 128;
const _: () = assert!(op::COUNT_OPS as usize <= OP_SLOTS);

/// The name of E1 op `o` as the census prints it (`ADDF16`, `LD8`,
/// `CLOCKCHECK`, ...; from [`op::TABLE`]); `?` for a number that is no op.
pub fn op_name(o: u32) -> &'static str {
    op::TABLE.get(o as usize).map_or("?", |i| i.name)
}

/// The census class of E1 op `o` ([`op::Class`], from [`op::TABLE`]); `?`
/// for a number that is no op.
pub fn op_class(o: u32) -> &'static str {
    op::TABLE.get(o as usize).map_or("?", |i| i.class.name())
}

/// Operand word layout: bits 0..23 the word index, bits 24..25 the lane id
/// (D=0 W=1 B=2 H=3), bit 27 set for the H lane (so `(o >> 24) & 8` is the
/// lane's shift). For an address index operand bits 24..25 are the scale.
pub const OPND_INDEX_MASK: u32 = 0x00FF_FFFF;
