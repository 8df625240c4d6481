//! E1's op set, defined once: [`TABLE`] gives every op its number (its
//! position), its name, its operand shape (words, op word included, and the
//! layout of those words) and its census class. The encoder emits the
//! numbers, the engine dispatches on them and advances by [`words`], the
//! arena walks code with [`len`], and the census and every printer take
//! names and classes from [`TABLE`] ([`super::op_name`],
//! [`super::op_class`]); nothing else lists ops.
//!
//! Operand words: `s` a source operand (vreg slot or pool constant, lane in
//! the high bits), `d` a destination, `site` the word index of an
//! `(ip, unbill)` pair in the pool, `t` an absolute target word.
//!
//! It must not know IR types or how an op runs (that is the engine's).

#![allow(missing_docs)]

/// An op's class in the census's breakdown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// Copies, lane moves, sign extension.
    Move,
    /// ALU without flags.
    Alu,
    /// Writes the flag record (ADDF.., SHIFT, FLAGSREC, FLAGSSET).
    Arith,
    /// Reads the flags (FLAGSGET, GETCC).
    FlagsRead,
    Load,
    Store,
    /// An access check without the access (CHK).
    Guard,
    /// Internal jumps and branches, flag-forwarded ones included.
    Branch,
    /// Budget, billing, owed-stop tests, entry counters.
    Clock,
    /// Leaving the program (EXIT, LINK, INDIRECT, DIVERT).
    Exit,
    /// Out-of-line helpers (CALL, X87, STRSTEP).
    Helper,
    /// Ports, services, stop requests.
    Machine,
    /// One REP string element (REP).
    String,
}

impl Class {
    /// Every class, in the census's print order.
    pub const ALL: [Class; 13] = [
        Class::Move,
        Class::Alu,
        Class::Arith,
        Class::FlagsRead,
        Class::Load,
        Class::Store,
        Class::Guard,
        Class::Branch,
        Class::Clock,
        Class::Exit,
        Class::Helper,
        Class::Machine,
        Class::String,
    ];

    /// The name the census prints.
    pub const fn name(self) -> &'static str {
        match self {
            Class::Move => "move",
            Class::Alu => "alu",
            Class::Arith => "arith",
            Class::FlagsRead => "flags-read",
            Class::Load => "load",
            Class::Store => "store",
            Class::Guard => "guard",
            Class::Branch => "branch",
            Class::Clock => "clock",
            Class::Exit => "exit",
            Class::Helper => "helper",
            Class::Machine => "machine",
            Class::String => "string",
        }
    }
}

/// One op of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpInfo {
    /// Its name (`ADDF16`, `LD8`, `CLOCKCHECK`).
    pub name: &'static str,
    /// Words it occupies, op word included.
    pub words: u8,
    pub class: Class,
    /// The layout of its operand words, and what it does.
    pub shape: &'static str,
}

/// Defines the op numbers (sequential, in table order), [`COUNT_OPS`] and
/// [`TABLE`] from one list.
macro_rules! ops {
    ($($name:ident $words:literal $class:ident $shape:literal;)*) => {
        #[allow(non_camel_case_types, clippy::upper_case_acronyms, dead_code)]
        #[repr(u32)]
        enum Num { $($name,)* End }
        $(pub const $name: u32 = Num::$name as u32;)*
        /// Number of ops.
        pub const COUNT_OPS: u32 = Num::End as u32;
        /// Every op, indexed by its number.
        pub const TABLE: [OpInfo; COUNT_OPS as usize] = [
            $(OpInfo { name: stringify!($name), words: $words, class: Class::$class, shape: $shape },)*
        ];
    };
}

ops! {
    MOV32 3 Move "d s: whole-register copy (also constants)";
    MOVL 3 Move "d s: any lane to any lane";
    SEXT8 3 Move "d s: sign extension from 8 bits";
    SEXT16 3 Move "d s: sign extension from 16 bits";
    ADD8 4 Alu "d a b: pure ALU, no flags";
    ADD16 4 Alu "d a b: pure ALU, no flags";
    ADD32 4 Alu "d a b: pure ALU, no flags";
    SUB8 4 Alu "d a b: pure ALU, no flags";
    SUB16 4 Alu "d a b: pure ALU, no flags";
    SUB32 4 Alu "d a b: pure ALU, no flags";
    AND8 4 Alu "d a b: pure ALU, no flags";
    AND16 4 Alu "d a b: pure ALU, no flags";
    AND32 4 Alu "d a b: pure ALU, no flags";
    OR8 4 Alu "d a b: pure ALU, no flags";
    OR16 4 Alu "d a b: pure ALU, no flags";
    OR32 4 Alu "d a b: pure ALU, no flags";
    XOR8 4 Alu "d a b: pure ALU, no flags";
    XOR16 4 Alu "d a b: pure ALU, no flags";
    XOR32 4 Alu "d a b: pure ALU, no flags";
    SHL8 4 Alu "d a b: pure ALU, no flags";
    SHL16 4 Alu "d a b: pure ALU, no flags";
    SHL32 4 Alu "d a b: pure ALU, no flags";
    SHR8 4 Alu "d a b: pure ALU, no flags";
    SHR16 4 Alu "d a b: pure ALU, no flags";
    SHR32 4 Alu "d a b: pure ALU, no flags";
    SAR8 4 Alu "d a b: pure ALU, no flags";
    SAR16 4 Alu "d a b: pure ALU, no flags";
    SAR32 4 Alu "d a b: pure ALU, no flags";
    MUL8 4 Alu "d a b: pure ALU, no flags";
    MUL16 4 Alu "d a b: pure ALU, no flags";
    MUL32 4 Alu "d a b: pure ALU, no flags";
    ADDF8 4 Arith "d a b: x86 arithmetic writing the flag record";
    ADDF16 4 Arith "d a b: x86 arithmetic writing the flag record";
    ADDF32 4 Arith "d a b: x86 arithmetic writing the flag record";
    ADCF8 4 Arith "d a b: x86 arithmetic writing the flag record";
    ADCF16 4 Arith "d a b: x86 arithmetic writing the flag record";
    ADCF32 4 Arith "d a b: x86 arithmetic writing the flag record";
    SUBF8 4 Arith "d a b: x86 arithmetic writing the flag record";
    SUBF16 4 Arith "d a b: x86 arithmetic writing the flag record";
    SUBF32 4 Arith "d a b: x86 arithmetic writing the flag record";
    SBBF8 4 Arith "d a b: x86 arithmetic writing the flag record";
    SBBF16 4 Arith "d a b: x86 arithmetic writing the flag record";
    SBBF32 4 Arith "d a b: x86 arithmetic writing the flag record";
    ANDF8 4 Arith "d a b: x86 arithmetic writing the flag record";
    ANDF16 4 Arith "d a b: x86 arithmetic writing the flag record";
    ANDF32 4 Arith "d a b: x86 arithmetic writing the flag record";
    ORF8 4 Arith "d a b: x86 arithmetic writing the flag record";
    ORF16 4 Arith "d a b: x86 arithmetic writing the flag record";
    ORF32 4 Arith "d a b: x86 arithmetic writing the flag record";
    XORF8 4 Arith "d a b: x86 arithmetic writing the flag record";
    XORF16 4 Arith "d a b: x86 arithmetic writing the flag record";
    XORF32 4 Arith "d a b: x86 arithmetic writing the flag record";
    INCF8 4 Arith "d a b: x86 arithmetic writing the flag record";
    INCF16 4 Arith "d a b: x86 arithmetic writing the flag record";
    INCF32 4 Arith "d a b: x86 arithmetic writing the flag record";
    DECF8 4 Arith "d a b: x86 arithmetic writing the flag record";
    DECF16 4 Arith "d a b: x86 arithmetic writing the flag record";
    DECF32 4 Arith "d a b: x86 arithmetic writing the flag record";
    NEGF8 4 Arith "d a b: x86 arithmetic writing the flag record";
    NEGF16 4 Arith "d a b: x86 arithmetic writing the flag record";
    NEGF32 4 Arith "d a b: x86 arithmetic writing the flag record";
    SHIFT 5 Arith "kind d a c: x86 shift/rotate (kind = 3*shiftop + width)";
    FLAGSREC 5 Arith "kind a b r: a raw flag record";
    FLAGSGET 2 FlagsRead "d: the whole FLAGS word";
    FLAGSSET 3 Arith "s mask: replace the FLAGS bits in mask";
    GETCC 3 FlagsRead "d cc: x86 condition as 0/1";
    LD8 9 Load "d seg base index disp amask lim site: load through the page view";
    LD16 9 Load "d seg base index disp amask lim site: load through the page view";
    LD32 9 Load "d seg base index disp amask lim site: load through the page view";
    LDC8 9 Load "d seg base index disp amask lim site: load on the checked path";
    LDC16 9 Load "d seg base index disp amask lim site: load on the checked path";
    LDC32 9 Load "d seg base index disp amask lim site: load on the checked path";
    ST8 10 Store "s seg base index disp amask lim site after (0 = none): store through the page view";
    ST16 10 Store "s seg base index disp amask lim site after (0 = none): store through the page view";
    ST32 10 Store "s seg base index disp amask lim site after (0 = none): store through the page view";
    STC8 10 Store "s seg base index disp amask lim site after (0 = none): store on the checked path";
    STC16 10 Store "s seg base index disp amask lim site after (0 = none): store on the checked path";
    STC32 10 Store "s seg base index disp amask lim site after (0 = none): store on the checked path";
    IN 5 Machine "w d port site";
    OUT 6 Machine "w port val site after";
    SERVICE 5 Machine "id guest site after";
    CALL 8 Helper "helper o0 o1 a0 a1 a2 site: out-of-line helper";
    CLOCK 2 Clock "n: bill n dispatches";
    CLOCKCHECK 3 Clock "n site: owed stop or budget test, then bill n";
    COUNT 2 Clock "counter_word: bump the entry counter";
    EXITPEND 2 Clock "site: exit if a stop is owed";
    JMP 2 Branch "t";
    BRCC 3 Branch "cc t: taken if the x86 condition holds, else fall through";
    BREQ 6 Branch "a b mask xorbit t";
    BRNE 6 Branch "a b mask xorbit t";
    BRLT 6 Branch "a b mask xorbit t (unsigned after ^ xorbit)";
    BRLE 6 Branch "a b mask xorbit t (unsigned after ^ xorbit)";
    EXIT 3 Exit "kind site: 0 fallback, 1 stop, 2 shadow";
    LINK 5 Exit "t site key_lo key_hi: t patched by the arena, 0 = unlinked";
    INDIRECT 4 Exit "ip base site: computed exit through the lookup table";
    CHK 9 Guard "- seg base index disp amask lim site: the load layout, no access";
    STOPIF 2 Machine "s: owe a stop when s is nonzero and the machine needs it";
    X87 13 Helper "d seg base index disp amask lim site after cs ds blob: one x87 instruction";
    ARITHBR 7 Branch "kind d a b cc t: x86 arithmetic then a branch on its condition";
    STRSTEP 3 Helper "d n: d = DF ? -n : n";
    JMPA 3 Branch "t adj: jump, clock adjusted on the edge";
    BRCCA 6 Branch "cc t adj_t f adj_f";
    ARITHBRA 10 Branch "kind d a b cc t adj_t f adj_f";
    BRCMPA 10 Branch "cmp a b mask xorbit t adj_t f adj_f (cmp 0..3 = EQ NE LT LE)";
    DIVERT 1 Exit "(none): the program runs elsewhere (jit); exit Divert";
    REP 13 String "kind acc sseg sbase slim dseg dbase dlim count site t f: one REP string element (kind = 3*strop + width | cond << 4 | a32 << 6; limits raw)";
}

/// Pure ALU `[op d a b]`: `ALU_BASE + 3*kind + width` (width 0: 8, 1: 16,
/// 2: 32; kinds add sub and or xor shl shr sar mul).
pub const ALU_BASE: u32 = ADD8;
pub const ALU_KINDS: u32 = 9;
/// x86 arithmetic with flags `[op d a b]`: `ARITH_BASE + 3*kind + width`
/// (add adc sub sbb and or xor inc dec neg).
pub const ARITH_BASE: u32 = ADDF8;
pub const ARITH_KINDS: u32 = 10;
/// Loads: `LD + width`; `LDC + width` goes straight to the checked path.
pub const LD: u32 = LD8;
pub const LDC: u32 = LDC8;
/// Stores: `ST + width`, `STC + width`.
pub const ST: u32 = ST8;
pub const STC: u32 = STC8;

const _: () = assert!(MUL32 == ALU_BASE + 3 * ALU_KINDS - 1);
const _: () = assert!(NEGF32 == ARITH_BASE + 3 * ARITH_KINDS - 1);
const _: () = assert!(LDC32 == LD + 5 && STC32 == ST + 5);

/// Words per op (op word included); `None` for a number that is no op.
pub const fn len(o: u32) -> Option<usize> {
    if o < COUNT_OPS {
        Some(TABLE[o as usize].words as usize)
    } else {
        None
    }
}

/// Words of op `o`, for the engine's constant advances (`o` must be an op).
pub const fn words(o: u32) -> usize {
    TABLE[o as usize].words as usize
}

/// The op named `name`.
pub fn by_name(name: &str) -> Option<u32> {
    TABLE.iter().position(|i| i.name == name).map(|i| i as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_ranges_are_kind_major() {
        for (i, a) in TABLE.iter().enumerate() {
            assert_eq!(by_name(a.name), Some(i as u32), "{}", a.name);
        }
        let w = ["8", "16", "32"];
        let alu = ["ADD", "SUB", "AND", "OR", "XOR", "SHL", "SHR", "SAR", "MUL"];
        for (k, n) in alu.iter().enumerate() {
            for (j, s) in w.iter().enumerate() {
                let o = ALU_BASE + 3 * k as u32 + j as u32;
                assert_eq!(TABLE[o as usize].name, format!("{n}{s}"));
            }
        }
        assert_eq!(TABLE[(ARITH_BASE + 3 * 2 + 1) as usize].name, "SUBF16");
        assert_eq!(TABLE[(LDC + 2) as usize].name, "LDC32");
        assert_eq!(len(COUNT_OPS), None);
        assert_eq!(len(LINK), Some(5));
    }
}
