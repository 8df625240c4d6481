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
/// `CLOCKCHECK`, ...); `?` for a number that is no op.
pub fn op_name(o: u32) -> String {
    const ALU: [&str; 9] = ["ADD", "SUB", "AND", "OR", "XOR", "SHL", "SHR", "SAR", "MUL"];
    const ARITH: [&str; 10] = [
        "ADDF", "ADCF", "SUBF", "SBBF", "ANDF", "ORF", "XORF", "INCF", "DECF", "NEGF",
    ];
    const W: [&str; 3] = ["8", "16", "32"];
    use op::*;
    let w = |x: u32| W[(x % 3) as usize];
    match o {
        MOV32 => "MOV32".into(),
        MOVL => "MOVL".into(),
        SEXT8 => "SEXT8".into(),
        SEXT16 => "SEXT16".into(),
        x if (ALU_BASE..ARITH_BASE).contains(&x) => {
            format!("{}{}", ALU[((x - ALU_BASE) / 3) as usize], w(x - ALU_BASE))
        }
        x if (ARITH_BASE..SHIFT).contains(&x) => {
            format!(
                "{}{}",
                ARITH[((x - ARITH_BASE) / 3) as usize],
                w(x - ARITH_BASE)
            )
        }
        x if (LD..LDC).contains(&x) => format!("LD{}", w(x - LD)),
        x if (LDC..ST).contains(&x) => format!("LDC{}", w(x - LDC)),
        x if (ST..STC).contains(&x) => format!("ST{}", w(x - ST)),
        x if (STC..IN).contains(&x) => format!("STC{}", w(x - STC)),
        _ => {
            const REST: &[(u32, &str)] = &[
                (SHIFT, "SHIFT"),
                (FLAGSREC, "FLAGSREC"),
                (FLAGSGET, "FLAGSGET"),
                (FLAGSSET, "FLAGSSET"),
                (GETCC, "GETCC"),
                (IN, "IN"),
                (OUT, "OUT"),
                (SERVICE, "SERVICE"),
                (CALL, "CALL"),
                (CLOCK, "CLOCK"),
                (CLOCKCHECK, "CLOCKCHECK"),
                (COUNT, "COUNT"),
                (EXITPEND, "EXITPEND"),
                (JMP, "JMP"),
                (BRCC, "BRCC"),
                (BREQ, "BREQ"),
                (BRNE, "BRNE"),
                (BRLT, "BRLT"),
                (BRLE, "BRLE"),
                (EXIT, "EXIT"),
                (LINK, "LINK"),
                (INDIRECT, "INDIRECT"),
                (CHK, "CHK"),
                (STOPIF, "STOPIF"),
                (X87, "X87"),
                (ARITHBR, "ARITHBR"),
                (STRSTEP, "STRSTEP"),
                (JMPA, "JMPA"),
                (BRCCA, "BRCCA"),
                (ARITHBRA, "ARITHBRA"),
                (BRCMPA, "BRCMPA"),
                (DIVERT, "DIVERT"),
            ];
            REST.iter()
                .find(|(n, _)| *n == o)
                .map_or("?", |(_, s)| s)
                .to_string()
        }
    }
}

/// The class of E1 op `o` for the census's breakdown: `move` (copies,
/// lane moves, sign extension), `alu` (no flags), `arith` (writes the flag
/// record: ADDF.., SHIFT, FLAGSREC, FLAGSSET), `flags-read` (FLAGSGET,
/// GETCC), `load`, `store`, `guard` (CHK: an access check without the
/// access), `branch` (internal jumps and branches, flag-forwarded ones
/// included), `clock` (CLOCK, CLOCKCHECK, EXITPEND, COUNT), `exit` (EXIT,
/// LINK, INDIRECT, DIVERT: leaving the program), `helper` (CALL, X87,
/// STRSTEP), `machine` (IN, OUT, SERVICE, STOPIF).
pub fn op_class(o: u32) -> &'static str {
    use op::*;
    match o {
        MOV32 | MOVL | SEXT8 | SEXT16 => "move",
        x if (ALU_BASE..ARITH_BASE).contains(&x) => "alu",
        x if (ARITH_BASE..SHIFT).contains(&x) => "arith",
        SHIFT | FLAGSREC | FLAGSSET => "arith",
        FLAGSGET | GETCC => "flags-read",
        x if (LD..ST).contains(&x) => "load",
        x if (ST..IN).contains(&x) => "store",
        CHK => "guard",
        JMP | BRCC | BREQ | BRNE | BRLT | BRLE | ARITHBR | JMPA | BRCCA | ARITHBRA | BRCMPA => {
            "branch"
        }
        CLOCK | CLOCKCHECK | EXITPEND | COUNT => "clock",
        EXIT | LINK | INDIRECT | DIVERT => "exit",
        CALL | X87 | STRSTEP => "helper",
        IN | OUT | SERVICE | STOPIF => "machine",
        _ => "?",
    }
}

/// Operand word layout: bits 0..23 the word index, bits 24..25 the lane id
/// (D=0 W=1 B=2 H=3), bit 27 set for the H lane (so `(o >> 24) & 8` is the
/// lane's shift). For an address index operand bits 24..25 are the scale.
pub const OPND_INDEX_MASK: u32 = 0x00FF_FFFF;

/// E1 op numbers. Operand layouts are listed beside each; `s` is a source
/// operand word, `d` a destination, `site` the word index of an `(ip, unbill)`
/// pair in the pool, `t` an absolute target word.
#[allow(missing_docs, clippy::identity_op)]
pub mod op {
    /// `[op d s]` whole-register copy (also constants).
    pub const MOV32: u32 = 0;
    /// `[op d s]` any lane to any lane.
    pub const MOVL: u32 = 1;
    /// `[op d s]` sign extension from 8 / 16 bits.
    pub const SEXT8: u32 = 2;
    pub const SEXT16: u32 = 3;
    /// Pure ALU `[op d a b]`: base + 3*kind + width (0: 8, 1: 16, 2: 32).
    pub const ALU_BASE: u32 = 4;
    pub const ALU_KINDS: u32 = 9; // add sub and or xor shl shr sar mul
    /// x86 arithmetic with flags `[op d a b]`: base + 3*kind + width.
    pub const ARITH_BASE: u32 = ALU_BASE + 3 * ALU_KINDS; // 31
    pub const ARITH_KINDS: u32 = 10; // add adc sub sbb and or xor inc dec neg
    /// `[op kind d a c]` x86 shift/rotate (kind = 4*shiftop + width).
    pub const SHIFT: u32 = ARITH_BASE + 3 * ARITH_KINDS; // 61
    /// `[op kind a b r]`
    pub const FLAGSREC: u32 = SHIFT + 1;
    /// `[op d]`
    pub const FLAGSGET: u32 = SHIFT + 2;
    /// `[op s mask]`
    pub const FLAGSSET: u32 = SHIFT + 3;
    /// `[op d cc]`
    pub const GETCC: u32 = SHIFT + 4;
    /// Loads `[op d seg base index disp amask lim site]`: LD + width; LDC +
    /// width goes straight to the checked path.
    pub const LD: u32 = SHIFT + 5;
    pub const LDC: u32 = LD + 3;
    /// Stores `[op s seg base index disp amask lim site after]` (after 0 = none).
    pub const ST: u32 = LDC + 3;
    pub const STC: u32 = ST + 3;
    /// `[op w d port site]`
    pub const IN: u32 = STC + 3;
    /// `[op w port val site after]`
    pub const OUT: u32 = IN + 1;
    /// `[op id guest site after]`
    pub const SERVICE: u32 = IN + 2;
    /// `[op helper o0 o1 a0 a1 a2 site]`
    pub const CALL: u32 = IN + 3;
    /// `[op n]`
    pub const CLOCK: u32 = IN + 4;
    /// `[op n site]`
    pub const CLOCKCHECK: u32 = IN + 5;
    /// `[op counter_word]`
    pub const COUNT: u32 = IN + 6;
    /// `[op site]`
    pub const EXITPEND: u32 = IN + 7;
    /// `[op t]`
    pub const JMP: u32 = IN + 8;
    /// `[op cc t]` taken if the x86 condition holds, else falls through.
    pub const BRCC: u32 = IN + 9;
    /// `[op a b mask xorbit t]`: EQ NE LT LE (unsigned after `^ xorbit`).
    pub const BREQ: u32 = IN + 10;
    pub const BRNE: u32 = IN + 11;
    pub const BRLT: u32 = IN + 12;
    pub const BRLE: u32 = IN + 13;
    /// `[op kind site]` kind 0 fallback, 1 stop, 2 shadow.
    pub const EXIT: u32 = IN + 14;
    /// `[op t site key_lo key_hi]`; `t` is patched by the arena, 0 = unlinked.
    pub const LINK: u32 = IN + 15;
    /// `[op ip base site]`
    pub const INDIRECT: u32 = IN + 16;
    /// `[op - seg base index disp amask lim site]` (the load layout, no access).
    pub const CHK: u32 = IN + 17;
    /// `[op s]`: owe a stop (device request) when `s` is nonzero.
    pub const STOPIF: u32 = IN + 18;
    /// `[op d seg base index disp amask lim site after cs ds blob]`: one x87
    /// instruction through the machine (the load layout up to `site`; `lim`
    /// is the segment limit itself). `blob` names pool words
    /// `[len | has_mem << 8, bytes 0..3, 4..7, 8..11, 12..15]`.
    pub const X87: u32 = IN + 19;
    /// `[op kind d a b cc t]`: x86 arithmetic (kind = 3*arith + width, as
    /// the ARITH range) writing the flag record and `d`, then a branch to
    /// `t` if condition `cc` holds, else fall through (flag forwarding).
    pub const ARITHBR: u32 = IN + 20;
    /// `[op d n]`: `d ← DF ? -n : n` (a string instruction's step).
    pub const STRSTEP: u32 = IN + 21;
    /// Branches that also adjust the clock on the edge they take (signed
    /// counts: `opt::clock` gives back what a path does not run), two
    /// targets each, no fall-through:
    /// `[op t adj]`
    pub const JMPA: u32 = IN + 22;
    /// `[op cc t adj_t f adj_f]`
    pub const BRCCA: u32 = IN + 23;
    /// `[op kind d a b cc t adj_t f adj_f]` (ARITHBR's fields)
    pub const ARITHBRA: u32 = IN + 24;
    /// `[op cmp a b mask xorbit t adj_t f adj_f]`, cmp 0..3 = EQ NE LT LE
    pub const BRCMPA: u32 = IN + 25;
    // Generated names for the ALU and ARITH ranges (kind-major, width-minor).
    pub const ADD8: u32 = ALU_BASE + 0;
    pub const ADD16: u32 = ALU_BASE + 1;
    pub const ADD32: u32 = ALU_BASE + 2;
    pub const SUB8: u32 = ALU_BASE + 3;
    pub const SUB16: u32 = ALU_BASE + 4;
    pub const SUB32: u32 = ALU_BASE + 5;
    pub const AND8: u32 = ALU_BASE + 6;
    pub const AND16: u32 = ALU_BASE + 7;
    pub const AND32: u32 = ALU_BASE + 8;
    pub const OR8: u32 = ALU_BASE + 9;
    pub const OR16: u32 = ALU_BASE + 10;
    pub const OR32: u32 = ALU_BASE + 11;
    pub const XOR8: u32 = ALU_BASE + 12;
    pub const XOR16: u32 = ALU_BASE + 13;
    pub const XOR32: u32 = ALU_BASE + 14;
    pub const SHL8: u32 = ALU_BASE + 15;
    pub const SHL16: u32 = ALU_BASE + 16;
    pub const SHL32: u32 = ALU_BASE + 17;
    pub const SHR8: u32 = ALU_BASE + 18;
    pub const SHR16: u32 = ALU_BASE + 19;
    pub const SHR32: u32 = ALU_BASE + 20;
    pub const SAR8: u32 = ALU_BASE + 21;
    pub const SAR16: u32 = ALU_BASE + 22;
    pub const SAR32: u32 = ALU_BASE + 23;
    pub const MUL8: u32 = ALU_BASE + 24;
    pub const MUL16: u32 = ALU_BASE + 25;
    pub const MUL32: u32 = ALU_BASE + 26;
    pub const ADDF8: u32 = ARITH_BASE + 0;
    pub const ADDF16: u32 = ARITH_BASE + 1;
    pub const ADDF32: u32 = ARITH_BASE + 2;
    pub const ADCF8: u32 = ARITH_BASE + 3;
    pub const ADCF16: u32 = ARITH_BASE + 4;
    pub const ADCF32: u32 = ARITH_BASE + 5;
    pub const SUBF8: u32 = ARITH_BASE + 6;
    pub const SUBF16: u32 = ARITH_BASE + 7;
    pub const SUBF32: u32 = ARITH_BASE + 8;
    pub const SBBF8: u32 = ARITH_BASE + 9;
    pub const SBBF16: u32 = ARITH_BASE + 10;
    pub const SBBF32: u32 = ARITH_BASE + 11;
    pub const ANDF8: u32 = ARITH_BASE + 12;
    pub const ANDF16: u32 = ARITH_BASE + 13;
    pub const ANDF32: u32 = ARITH_BASE + 14;
    pub const ORF8: u32 = ARITH_BASE + 15;
    pub const ORF16: u32 = ARITH_BASE + 16;
    pub const ORF32: u32 = ARITH_BASE + 17;
    pub const XORF8: u32 = ARITH_BASE + 18;
    pub const XORF16: u32 = ARITH_BASE + 19;
    pub const XORF32: u32 = ARITH_BASE + 20;
    pub const INCF8: u32 = ARITH_BASE + 21;
    pub const INCF16: u32 = ARITH_BASE + 22;
    pub const INCF32: u32 = ARITH_BASE + 23;
    pub const DECF8: u32 = ARITH_BASE + 24;
    pub const DECF16: u32 = ARITH_BASE + 25;
    pub const DECF32: u32 = ARITH_BASE + 26;
    pub const NEGF8: u32 = ARITH_BASE + 27;
    pub const NEGF16: u32 = ARITH_BASE + 28;
    pub const NEGF32: u32 = ARITH_BASE + 29;
    pub const LD8: u32 = LD + 0;
    pub const LDC8: u32 = LDC + 0;
    pub const ST8: u32 = ST + 0;
    pub const STC8: u32 = STC + 0;
    pub const LD16: u32 = LD + 1;
    pub const LDC16: u32 = LDC + 1;
    pub const ST16: u32 = ST + 1;
    pub const STC16: u32 = STC + 1;
    pub const LD32: u32 = LD + 2;
    pub const LDC32: u32 = LDC + 2;
    pub const ST32: u32 = ST + 2;
    pub const STC32: u32 = STC + 2;

    /// `[op]` at a program's entry, written by `E1Arena::divert`: the
    /// program runs elsewhere (the `jit` arm); exit `Divert` with its id.
    pub const DIVERT: u32 = IN + 26;

    /// Number of ops.
    pub const COUNT_OPS: u32 = IN + 27;

    /// Words per op (op word included); `None` for an unknown op.
    pub const fn len(op: u32) -> Option<usize> {
        Some(match op {
            MOV32 | MOVL | SEXT8 | SEXT16 => 3,
            x if x >= ALU_BASE && x < SHIFT => 4,
            SHIFT | FLAGSREC => 5,
            FLAGSGET => 2,
            FLAGSSET | GETCC => 3,
            x if x >= LD && x < ST => 9,
            x if x >= ST && x < IN => 10,
            IN => 5,
            OUT => 6,
            SERVICE => 5,
            CALL => 8,
            CLOCK => 2,
            CLOCKCHECK => 3,
            COUNT => 2,
            EXITPEND => 2,
            JMP => 2,
            BRCC => 3,
            BREQ | BRNE | BRLT | BRLE => 6,
            EXIT => 3,
            LINK => 5,
            INDIRECT => 4,
            CHK => 9,
            STOPIF => 2,
            X87 => 13,
            ARITHBR => 7,
            STRSTEP => 3,
            JMPA => 3,
            BRCCA => 6,
            ARITHBRA | BRCMPA => 10,
            DIVERT => 1,
            _ => return None,
        })
    }
}
