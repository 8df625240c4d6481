//! The lazy-flag record: the one definition of x86 arithmetic flags in the lab.
//!
//! Every interpreter (toyvm's L0 and L1, the µop reference interpreter, E1, and
//! later mainemu) writes the same record after a flag-setting operation and reads
//! flags through the same evaluation functions here, so "exact" has one meaning.
//!
//! The record is `(kind, a, b, r)` plus an `eager` word. `kind` names the
//! operation and width that produced the six arithmetic flags (CF PF AF ZF SF OF);
//! each kind derives some of those flags from `a`, `b`, `r` and takes the rest from
//! `eager`. `eager` always holds the non-arithmetic bits (TF IF DF IOPL NT, ...).
//!
//! This module owns only the record and its evaluation. It must not know about
//! instructions, decoders or machines; ALU helpers that *produce* records live in
//! [`crate::alu`].

/// Carry flag.
pub const CF: u32 = 1 << 0;
/// Bit 1 of FLAGS, always set.
pub const RESERVED1: u32 = 1 << 1;
/// Parity flag (even parity of the low result byte).
pub const PF: u32 = 1 << 2;
/// Auxiliary (nibble) carry flag.
pub const AF: u32 = 1 << 4;
/// Zero flag.
pub const ZF: u32 = 1 << 6;
/// Sign flag.
pub const SF: u32 = 1 << 7;
/// Trap flag.
pub const TF: u32 = 1 << 8;
/// Interrupt enable flag.
pub const IF: u32 = 1 << 9;
/// Direction flag.
pub const DF: u32 = 1 << 10;
/// Overflow flag.
pub const OF: u32 = 1 << 11;
/// I/O privilege level (two bits).
pub const IOPL: u32 = 3 << 12;
/// Nested task flag.
pub const NT: u32 = 1 << 14;
/// Alignment check flag (486+, bit 18 of EFLAGS).
pub const AC: u32 = 1 << 18;
/// ID flag (CPUID present, bit 21 of EFLAGS).
pub const ID: u32 = 1 << 21;
/// The six flags a lazy record can describe.
pub const ARITH: u32 = CF | PF | AF | ZF | SF | OF;

/// Operand width of an operation, in bits.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Width {
    W8 = 0,
    W16 = 1,
    W32 = 2,
}

impl Width {
    /// Width in bits.
    #[inline(always)]
    pub const fn bits(self) -> u32 {
        8 << (self as u32)
    }
    /// Width in bytes.
    #[inline(always)]
    pub const fn bytes(self) -> u32 {
        1 << (self as u32)
    }
    /// Mask of the value bits.
    #[inline(always)]
    pub const fn mask(self) -> u32 {
        match self {
            Width::W8 => 0xFF,
            Width::W16 => 0xFFFF,
            Width::W32 => 0xFFFF_FFFF,
        }
    }
    /// Shift that brings the sign bit to bit 0.
    #[inline(always)]
    pub const fn sign_shift(self) -> u32 {
        self.bits() - 1
    }
    /// Width from a byte count (1, 2 or 4).
    pub const fn from_bytes(n: u32) -> Width {
        match n {
            1 => Width::W8,
            2 => Width::W16,
            _ => Width::W32,
        }
    }
}

/// Which operation produced the arithmetic flags, and at which width.
///
/// Numbering: `Eager` is 0; then groups of three (8, 16, 32 bit) per operation,
/// so `kind = 1 + 3 * op + width`. E1 stores the raw `u8`.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlagKind {
    /// All six arithmetic flags are in `eager`.
    Eager = 0,
    /// `r = a + b + carry_in`: every flag from the record (ADD, ADC, XADD).
    Add8,
    Add16,
    Add32,
    /// `r = a - b - borrow_in`: every flag from the record (SUB, SBB, CMP, NEG, CMPXCHG, SCAS, CMPS).
    Sub8,
    Sub16,
    Sub32,
    /// Logical result `r`: CF = OF = 0, AF = 0, SZP from `r` (AND OR XOR TEST).
    Logic8,
    Logic16,
    Logic32,
    /// `r = a + 1`: CF from `eager`, the rest from the record.
    Inc8,
    Inc16,
    Inc32,
    /// `r = a - 1`: CF from `eager`, the rest from the record.
    Dec8,
    Dec16,
    Dec32,
    /// SF ZF PF from `r`; CF OF AF from `eager` (shifts, rotates through SZP producers, MUL).
    Szp8,
    Szp16,
    Szp32,
}

/// Operation group of a [`FlagKind`], without the width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlagOp {
    Eager,
    Add,
    Sub,
    Logic,
    Inc,
    Dec,
    Szp,
}

impl FlagKind {
    const TABLE: [FlagKind; 19] = [
        FlagKind::Eager,
        FlagKind::Add8,
        FlagKind::Add16,
        FlagKind::Add32,
        FlagKind::Sub8,
        FlagKind::Sub16,
        FlagKind::Sub32,
        FlagKind::Logic8,
        FlagKind::Logic16,
        FlagKind::Logic32,
        FlagKind::Inc8,
        FlagKind::Inc16,
        FlagKind::Inc32,
        FlagKind::Dec8,
        FlagKind::Dec16,
        FlagKind::Dec32,
        FlagKind::Szp8,
        FlagKind::Szp16,
        FlagKind::Szp32,
    ];

    /// Builds a kind from an operation group and a width.
    #[inline(always)]
    pub const fn new(op: FlagOp, w: Width) -> FlagKind {
        let base = match op {
            FlagOp::Eager => return FlagKind::Eager,
            FlagOp::Add => 1,
            FlagOp::Sub => 4,
            FlagOp::Logic => 7,
            FlagOp::Inc => 10,
            FlagOp::Dec => 13,
            FlagOp::Szp => 16,
        };
        Self::TABLE[base + w as usize]
    }

    /// Decodes the raw byte E1 stores; `None` for an out-of-range value.
    pub fn from_u8(v: u8) -> Option<FlagKind> {
        Self::TABLE.get(v as usize).copied()
    }

    /// The operation group.
    #[inline(always)]
    pub const fn op(self) -> FlagOp {
        // A table, not range compares: flag evaluation sits on every
        // conditional branch of every interpreter.
        const OPS: [FlagOp; 19] = [
            FlagOp::Eager,
            FlagOp::Add,
            FlagOp::Add,
            FlagOp::Add,
            FlagOp::Sub,
            FlagOp::Sub,
            FlagOp::Sub,
            FlagOp::Logic,
            FlagOp::Logic,
            FlagOp::Logic,
            FlagOp::Inc,
            FlagOp::Inc,
            FlagOp::Inc,
            FlagOp::Dec,
            FlagOp::Dec,
            FlagOp::Dec,
            FlagOp::Szp,
            FlagOp::Szp,
            FlagOp::Szp,
        ];
        OPS[self as usize]
    }

    /// The width (meaningless for `Eager`, which reports 32).
    #[inline(always)]
    pub const fn width(self) -> Width {
        // A table rather than `(k - 1) % 3` (a multiply-shift on every flag
        // read; measured as 4% of L1's instructions on BLZ).
        const W: [Width; 19] = [
            Width::W32,
            Width::W8,
            Width::W16,
            Width::W32,
            Width::W8,
            Width::W16,
            Width::W32,
            Width::W8,
            Width::W16,
            Width::W32,
            Width::W8,
            Width::W16,
            Width::W32,
            Width::W8,
            Width::W16,
            Width::W32,
            Width::W8,
            Width::W16,
            Width::W32,
        ];
        W[self as usize]
    }

    /// Which of the six arithmetic flags this kind takes from `eager`.
    #[inline(always)]
    pub const fn eager_part(self) -> u32 {
        match self.op() {
            FlagOp::Eager => ARITH,
            FlagOp::Inc | FlagOp::Dec => CF,
            FlagOp::Szp => CF | OF | AF,
            _ => 0,
        }
    }
}

/// Even parity of the low byte of `r` (PF's definition).
#[inline(always)]
pub const fn parity(r: u32) -> bool {
    (r as u8).count_ones() & 1 == 0
}

/// The lazy flag record. See the module header for its meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LazyFlags {
    /// Bits not described by `kind`, including every non-arithmetic flag.
    pub eager: u32,
    /// The producing operation and width.
    pub kind: FlagKind,
    /// First operand, masked to the width.
    pub a: u32,
    /// Second operand, masked to the width.
    pub b: u32,
    /// Result, masked to the width.
    pub r: u32,
}

impl Default for LazyFlags {
    fn default() -> Self {
        LazyFlags::from_bits(RESERVED1)
    }
}

impl LazyFlags {
    /// A record holding exactly `bits` (all eager).
    #[inline(always)]
    pub const fn from_bits(bits: u32) -> LazyFlags {
        LazyFlags {
            eager: bits | RESERVED1,
            kind: FlagKind::Eager,
            a: 0,
            b: 0,
            r: 0,
        }
    }

    /// Records an operation; the caller passes values already masked to the width.
    #[inline(always)]
    pub fn record(&mut self, kind: FlagKind, a: u32, b: u32, r: u32) {
        self.kind = kind;
        self.a = a;
        self.b = b;
        self.r = r;
    }

    /// Makes `eager`'s CF bit valid, so that a following INC/DEC/SZP record keeps it.
    #[inline(always)]
    pub fn pin_cf(&mut self) {
        if self.kind.eager_part() & CF == 0 {
            let c = self.cf() as u32;
            self.eager = (self.eager & !CF) | c;
        }
    }

    /// Records INC (`r = a + 1`), keeping CF.
    #[inline(always)]
    pub fn record_inc(&mut self, w: Width, a: u32, r: u32) {
        self.pin_cf();
        self.record(FlagKind::new(FlagOp::Inc, w), a, 1, r);
    }

    /// Records DEC (`r = a - 1`), keeping CF.
    #[inline(always)]
    pub fn record_dec(&mut self, w: Width, a: u32, r: u32) {
        self.pin_cf();
        self.record(FlagKind::new(FlagOp::Dec, w), a, 1, r);
    }

    /// Records a result whose SF ZF PF come from `r` and whose CF OF AF are given.
    #[inline(always)]
    pub fn record_szp(&mut self, w: Width, r: u32, cf: bool, of: bool, af: bool) {
        self.eager =
            (self.eager & !(CF | OF | AF)) | (cf as u32) | ((of as u32) << 11) | ((af as u32) << 4);
        self.record(FlagKind::new(FlagOp::Szp, w), 0, 0, r);
    }

    /// Carry flag.
    #[inline(always)]
    pub fn cf(&self) -> bool {
        let k = self.kind;
        let s = k.width().sign_shift();
        match k.op() {
            FlagOp::Add => ((self.a & self.b) | ((self.a | self.b) & !self.r)) >> s & 1 != 0,
            FlagOp::Sub => ((!self.a & self.b) | ((!(self.a ^ self.b)) & self.r)) >> s & 1 != 0,
            FlagOp::Logic => false,
            _ => self.eager & CF != 0,
        }
    }

    /// Parity flag.
    #[inline(always)]
    pub fn pf(&self) -> bool {
        match self.kind {
            FlagKind::Eager => self.eager & PF != 0,
            _ => parity(self.r),
        }
    }

    /// Auxiliary carry flag.
    #[inline(always)]
    pub fn af(&self) -> bool {
        match self.kind.op() {
            FlagOp::Add | FlagOp::Sub | FlagOp::Inc | FlagOp::Dec => {
                (self.a ^ self.b ^ self.r) & 0x10 != 0
            }
            FlagOp::Logic => false,
            _ => self.eager & AF != 0,
        }
    }

    /// Zero flag.
    #[inline(always)]
    pub fn zf(&self) -> bool {
        match self.kind {
            FlagKind::Eager => self.eager & ZF != 0,
            _ => self.r == 0,
        }
    }

    /// Sign flag.
    #[inline(always)]
    pub fn sf(&self) -> bool {
        match self.kind {
            FlagKind::Eager => self.eager & SF != 0,
            k => self.r >> k.width().sign_shift() & 1 != 0,
        }
    }

    /// Overflow flag.
    #[inline(always)]
    pub fn of(&self) -> bool {
        let k = self.kind;
        let s = k.width().sign_shift();
        match k.op() {
            FlagOp::Add | FlagOp::Inc => ((self.a ^ self.r) & (self.b ^ self.r)) >> s & 1 != 0,
            FlagOp::Sub | FlagOp::Dec => ((self.a ^ self.b) & (self.a ^ self.r)) >> s & 1 != 0,
            FlagOp::Logic => false,
            _ => self.eager & OF != 0,
        }
    }

    /// The six arithmetic flags as bits.
    #[inline]
    pub fn arith(&self) -> u32 {
        if self.kind == FlagKind::Eager {
            return self.eager & ARITH;
        }
        (self.cf() as u32)
            | ((self.pf() as u32) << 2)
            | ((self.af() as u32) << 4)
            | ((self.zf() as u32) << 6)
            | ((self.sf() as u32) << 7)
            | ((self.of() as u32) << 11)
    }

    /// The whole FLAGS/EFLAGS value.
    #[inline]
    pub fn bits(&self) -> u32 {
        (self.eager & !ARITH) | self.arith() | RESERVED1
    }

    /// Replaces every flag (POPF, IRET, SAHF-style full writes go through here).
    #[inline(always)]
    pub fn set_bits(&mut self, v: u32) {
        *self = LazyFlags::from_bits(v);
    }

    /// Turns the record into an all-eager one with the same value.
    #[inline]
    pub fn materialize(&mut self) {
        let v = self.bits();
        self.set_bits(v);
    }

    /// Sets or clears some flags, keeping the others' values.
    #[inline]
    pub fn set_mask(&mut self, mask: u32, value: bool) {
        if mask & ARITH != 0 {
            self.materialize();
        }
        if value {
            self.eager |= mask;
        } else {
            self.eager &= !mask;
        }
    }

    /// Sets CF (CLC, STC, CMC, BT*), keeping the others.
    #[inline]
    pub fn set_cf(&mut self, c: bool) {
        if self.kind.eager_part() & CF != 0 {
            self.eager = (self.eager & !CF) | c as u32;
        } else {
            self.set_mask(CF, c);
        }
    }

    /// Direction flag.
    #[inline(always)]
    pub fn df(&self) -> bool {
        self.eager & DF != 0
    }

    /// Interrupt flag.
    #[inline(always)]
    pub fn if_(&self) -> bool {
        self.eager & IF != 0
    }

    /// Trap flag.
    #[inline(always)]
    pub fn tf(&self) -> bool {
        self.eager & TF != 0
    }

    /// Evaluates an x86 condition code (the low nibble of Jcc/SETcc/CMOVcc).
    /// Inlined everywhere: with a constant `cc` (handlers specialised per
    /// condition) only the flags it needs are computed.
    #[inline(always)]
    pub fn cond(&self, cc: u8) -> bool {
        let v = match cc >> 1 {
            0 => self.of(),
            1 => self.cf(),
            2 => self.zf(),
            3 => self.cf() || self.zf(),
            4 => self.sf(),
            5 => self.pf(),
            6 => self.sf() != self.of(),
            _ => self.zf() || (self.sf() != self.of()),
        };
        v ^ (cc & 1 != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference_add(w: Width, a: u32, b: u32, cin: u32) -> u32 {
        let m = w.mask() as u64;
        let s = w.sign_shift();
        let full = a as u64 + b as u64 + cin as u64;
        let r = (full & m) as u32;
        let cf = full > m;
        let sa = (a >> s) & 1;
        let sb = (b >> s) & 1;
        let sr = (r >> s) & 1;
        let of = sa == sb && sr != sa;
        let af = ((a & 0xF) + (b & 0xF) + cin) > 0xF;
        (cf as u32)
            | ((parity(r) as u32) << 2)
            | ((af as u32) << 4)
            | (((r == 0) as u32) << 6)
            | (sr << 7)
            | ((of as u32) << 11)
    }

    fn reference_sub(w: Width, a: u32, b: u32, bin: u32) -> u32 {
        let m = w.mask() as i64;
        let s = w.sign_shift();
        let full = a as i64 - b as i64 - bin as i64;
        let r = (full & m) as u32;
        let cf = full < 0;
        let sa = (a >> s) & 1;
        let sb = (b >> s) & 1;
        let sr = (r >> s) & 1;
        let of = sa != sb && sr != sa;
        let af = ((a & 0xF) as i32 - (b & 0xF) as i32 - bin as i32) < 0;
        (cf as u32)
            | ((parity(r) as u32) << 2)
            | ((af as u32) << 4)
            | (((r == 0) as u32) << 6)
            | (sr << 7)
            | ((of as u32) << 11)
    }

    #[test]
    fn add_and_sub_match_the_definition_exhaustively_at_8_bits() {
        for a in 0..256u32 {
            for b in 0..256u32 {
                for c in 0..2u32 {
                    let mut f = LazyFlags::default();
                    f.record(FlagKind::Add8, a, b, (a + b + c) & 0xFF);
                    assert_eq!(
                        f.arith(),
                        reference_add(Width::W8, a, b, c),
                        "add {a} {b} {c}"
                    );
                    f.record(
                        FlagKind::Sub8,
                        a,
                        b,
                        a.wrapping_sub(b).wrapping_sub(c) & 0xFF,
                    );
                    assert_eq!(
                        f.arith(),
                        reference_sub(Width::W8, a, b, c),
                        "sub {a} {b} {c}"
                    );
                }
            }
        }
    }

    #[test]
    fn wide_corners() {
        let cases: [(u32, u32); 6] = [
            (0xFFFF_FFFF, 1),
            (0x7FFF_FFFF, 1),
            (0x8000_0000, 0x8000_0000),
            (0, 0),
            (0x1234_5678, 0xEDCB_A988),
            (0x8000_0000, 1),
        ];
        for (a, b) in cases {
            for c in 0..2 {
                let mut f = LazyFlags::default();
                f.record(FlagKind::Add32, a, b, a.wrapping_add(b).wrapping_add(c));
                assert_eq!(f.arith(), reference_add(Width::W32, a, b, c));
                f.record(FlagKind::Sub32, a, b, a.wrapping_sub(b).wrapping_sub(c));
                assert_eq!(f.arith(), reference_sub(Width::W32, a, b, c));
                let (a16, b16) = (a & 0xFFFF, b & 0xFFFF);
                f.record(FlagKind::Add16, a16, b16, (a16 + b16 + c) & 0xFFFF);
                assert_eq!(f.arith(), reference_add(Width::W16, a16, b16, c));
            }
        }
    }

    #[test]
    fn inc_keeps_carry_from_the_previous_record() {
        let mut f = LazyFlags::default();
        f.record(FlagKind::Add8, 0xFF, 1, 0); // CF = 1
        f.record_inc(Width::W8, 0x7F, 0x80);
        assert!(f.cf());
        assert!(f.of());
        assert!(f.sf());
        assert!(f.af());
        f.record(FlagKind::Logic16, 0, 0, 0); // CF = 0
        f.record_dec(Width::W16, 0, 0xFFFF);
        assert!(!f.cf());
        assert!(f.sf());
        assert!(!f.of());
    }

    #[test]
    fn conditions_follow_their_flags() {
        let mut f = LazyFlags::default();
        f.record(FlagKind::Sub16, 3, 5, 3u32.wrapping_sub(5) & 0xFFFF); // 3 - 5
        assert!(f.cond(0x2)); // B
        assert!(f.cond(0xC)); // L
        assert!(!f.cond(0x4)); // Z
        assert!(f.cond(0xE)); // LE
        assert!(!f.cond(0x7)); // A is false
        f.record(FlagKind::Sub16, 0x8000, 1, 0x7FFF); // -32768 - 1 overflows
        assert!(f.of());
        assert!(!f.sf());
        assert!(f.cond(0xC)); // L: SF != OF
        assert!(!f.cond(0xD)); // GE
    }

    #[test]
    fn bits_round_trip_through_set_bits() {
        let mut f = LazyFlags::from_bits(IF | DF);
        f.record(FlagKind::Logic8, 0, 0, 0x80);
        let v = f.bits();
        assert_eq!(v & (IF | DF | SF | RESERVED1), IF | DF | SF | RESERVED1);
        assert_eq!(v & (ZF | CF | OF), 0);
        let mut g = LazyFlags::default();
        g.set_bits(v);
        assert_eq!(g.bits(), v);
        g.set_cf(true);
        assert_eq!(g.bits(), v | CF);
    }

    #[test]
    fn szp_takes_cf_of_af_from_eager() {
        let mut f = LazyFlags::default();
        f.record_szp(Width::W8, 0x00, true, false, true);
        assert_eq!(f.arith(), CF | AF | ZF | PF);
    }

    #[test]
    fn kinds_round_trip_through_u8() {
        for v in 0..19u8 {
            let k = FlagKind::from_u8(v).unwrap();
            assert_eq!(k as u8, v);
            assert_eq!(FlagKind::new(k.op(), k.width()), k);
        }
        assert!(FlagKind::from_u8(19).is_none());
    }
}
