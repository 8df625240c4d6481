//! The x87 FPU: register stack, control/status/tag words and every x87
//! instruction DOS programs use, as a 387/486-class FPU does them.
//!
//! Owns the FPU state and the semantics of the D8-DF opcode space. It must not
//! compute effective addresses or touch segments: the CPU hands it a window on
//! the instruction's memory operand ([`FpuMemory`]) and the facts FSTENV needs
//! ([`FpuContext`]). It never delivers exceptions itself: an unmasked exception
//! sets ES/B in the status word and leaves its destination as the 387 does;
//! there is no IRQ13/#MF delivery (see `docs/x87.md`).
//!
//! Submodules: [`softfloat`] (the 80-bit arithmetic), [`wide`] and
//! [`transcendental`] (FSIN & co. in 128-bit precision), [`formats`] (memory
//! operand formats and BCD), [`opcode`] (the FOP register), [`exec`] (the
//! instruction semantics).

pub mod exec;
pub mod formats;
pub mod opcode;
pub mod softfloat;
pub mod transcendental;
pub mod wide;

use crate::Exception;
use iced_x86::Instruction;
pub use softfloat::F80;

/// The memory operand of an x87 instruction, as the CPU exposes it.
pub trait FpuMemory {
    /// Reads `buf.len()` bytes starting `disp` bytes after the operand's
    /// effective address (segment checks and wraps are the CPU's business).
    fn read(&mut self, disp: u32, buf: &mut [u8]) -> Result<(), Exception>;
    /// Writes `buf` starting `disp` bytes after the operand's effective address.
    fn write(&mut self, disp: u32, buf: &[u8]) -> Result<(), Exception>;
}

/// What an x87 instruction may need besides its operand.
pub struct FpuContext<'a> {
    /// The memory operand, or `None` for register forms.
    pub mem: Option<&'a mut dyn FpuMemory>,
    /// EAX, for FNSTSW AX (only the low 16 bits are written).
    pub eax: &'a mut u32,
    /// Operand size is 32 bits (FSTENV/FSAVE/FLDENV/FRSTOR layout).
    pub op32: bool,
    /// CS and IP of this instruction (the FPU instruction pointer).
    pub cs: u16,
    pub ip: u32,
    /// Segment selector and offset of the memory operand (the FPU data pointer).
    pub data_seg: u16,
    pub data_off: u32,
}

/// Control word after FNINIT.
pub const CONTROL_INIT: u16 = 0x037F;

/// Status word bits.
pub mod sw {
    pub const IE: u16 = 0x0001;
    pub const DE: u16 = 0x0002;
    pub const ZE: u16 = 0x0004;
    pub const OE: u16 = 0x0008;
    pub const UE: u16 = 0x0010;
    pub const PE: u16 = 0x0020;
    pub const SF: u16 = 0x0040;
    pub const ES: u16 = 0x0080;
    pub const C0: u16 = 0x0100;
    pub const C1: u16 = 0x0200;
    pub const C2: u16 = 0x0400;
    pub const TOP: u16 = 0x3800;
    pub const C3: u16 = 0x4000;
    pub const B: u16 = 0x8000;
}

/// Tag values (2 bits per physical register).
pub mod tag {
    pub const VALID: u16 = 0;
    pub const ZERO: u16 = 1;
    pub const SPECIAL: u16 = 2;
    pub const EMPTY: u16 = 3;
}

/// FPU state. Registers are indexed physically; ST(i) is `regs[(top + i) & 7]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fpu {
    /// The eight 80-bit data registers, physical order.
    pub regs: [F80; 8],
    /// Tag word: 2 bits per physical register (see [`tag`]).
    pub tags: u16,
    /// Control word (reserved bits 13-15 and 7 read as 0, bit 6 as 1).
    pub control: u16,
    /// Status word, TOP in bits 11-13.
    pub status: u16,
    /// Last instruction pointer (CS:IP as given by the CPU) and opcode.
    pub fip: u32,
    pub fcs: u16,
    pub fop: u16,
    /// Last data pointer (segment:offset of the last memory operand).
    pub fdp: u32,
    pub fds: u16,
}

impl Default for Fpu {
    fn default() -> Fpu {
        Fpu::new()
    }
}

impl Fpu {
    /// Every architectural bit of the FPU as bytes (registers, tag, control,
    /// status, instruction and data pointers, opcode): what FSAVE would store,
    /// in a fixed order, for hashing and comparing between arms.
    pub fn state_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(8 * 10 + 18);
        for r in &self.regs {
            b.extend_from_slice(&r.sig.to_le_bytes());
            b.extend_from_slice(&r.se.to_le_bytes());
        }
        for w in [
            self.tags,
            self.control,
            self.status,
            self.fcs,
            self.fop,
            self.fds,
        ] {
            b.extend_from_slice(&w.to_le_bytes());
        }
        b.extend_from_slice(&self.fip.to_le_bytes());
        b.extend_from_slice(&self.fdp.to_le_bytes());
        b
    }

    /// Power-on state (as after FNINIT).
    pub fn new() -> Fpu {
        Fpu {
            regs: [F80::ZERO; 8],
            tags: 0xFFFF,
            control: CONTROL_INIT,
            status: 0,
            fip: 0,
            fcs: 0,
            fop: 0,
            fdp: 0,
            fds: 0,
        }
    }

    /// Executes one x87 instruction (`ins` is any D8-DF form, FWAIT excluded).
    /// Returns `Err` only for a memory fault (the instruction then has not
    /// changed the FPU state) or `#UD` for encodings a 486 does not have
    /// (FCMOVcc, FCOMI, FISTTP, 387SL/Cyrix/287XL extras, invalid codes).
    pub fn execute(&mut self, ins: &Instruction, cx: FpuContext<'_>) -> Result<(), Exception> {
        exec::execute(self, ins, cx)
    }

    /// FNINIT.
    pub fn reset(&mut self) {
        *self = Fpu::new();
    }

    /// TOP, the physical index of ST(0).
    pub fn top(&self) -> usize {
        ((self.status >> 11) & 7) as usize
    }
    pub fn set_top(&mut self, top: usize) {
        self.status = (self.status & !sw::TOP) | (((top & 7) as u16) << 11);
    }
    /// Physical index of ST(i).
    pub fn phys(&self, i: usize) -> usize {
        (self.top() + i) & 7
    }
    /// The tag of physical register `p`.
    pub fn tag(&self, p: usize) -> u16 {
        (self.tags >> (2 * (p & 7))) & 3
    }
    pub fn set_tag(&mut self, p: usize, t: u16) {
        let sh = 2 * (p & 7);
        self.tags = (self.tags & !(3 << sh)) | ((t & 3) << sh);
    }
    /// ST(i) is empty.
    pub fn is_empty(&self, i: usize) -> bool {
        self.tag(self.phys(i)) == tag::EMPTY
    }
    /// ST(i)'s contents (whatever the tag says).
    pub fn st(&self, i: usize) -> F80 {
        self.regs[self.phys(i)]
    }
    /// Writes ST(i) and tags it from its contents.
    pub fn set_st(&mut self, i: usize, v: F80) {
        let p = self.phys(i);
        self.regs[p] = v;
        self.set_tag(p, tag_of(v));
    }
    /// Marks ST(0) empty and increments TOP.
    pub fn pop(&mut self) {
        let p = self.phys(0);
        self.set_tag(p, tag::EMPTY);
        self.set_top(self.top() + 1);
    }
    /// Decrements TOP and writes ST(0).
    pub fn push(&mut self, v: F80) {
        self.set_top(self.top().wrapping_sub(1));
        self.set_st(0, v);
    }
    /// The status word as FNSTSW stores it.
    pub fn status_word(&self) -> u16 {
        self.status
    }
    /// The tag word as FSTENV stores it: non-empty registers re-tagged from
    /// their contents.
    pub fn tag_word(&self) -> u16 {
        let mut t = 0u16;
        for p in 0..8 {
            let v = if self.tag(p) == tag::EMPTY {
                tag::EMPTY
            } else {
                tag_of(self.regs[p])
            };
            t |= v << (2 * p);
        }
        t
    }
    /// Loads a control word (FLDCW): reserved bits forced, ES/B recomputed.
    pub fn set_control(&mut self, cw: u16) {
        self.control = (cw & 0x1F3F) | 0x0040;
        self.update_es();
    }
    /// ES and B follow the unmasked pending exceptions.
    pub fn update_es(&mut self) {
        if self.status & !self.control & 0x3F != 0 {
            self.status |= sw::ES | sw::B;
        } else {
            self.status &= !(sw::ES | sw::B);
        }
    }
    /// Records exception flags (IE DE ZE OE UE PE SF) and updates ES/B.
    pub fn raise(&mut self, exc: u16) {
        self.status |= exc & 0x7F;
        self.update_es();
    }
    /// Exception bits of `exc` that are unmasked.
    pub fn unmasked(&self, exc: u16) -> u16 {
        exc & !self.control & 0x3F
    }
    pub fn set_c1(&mut self, on: bool) {
        self.set_flag(sw::C1, on);
    }
    pub fn set_flag(&mut self, bit: u16, on: bool) {
        if on {
            self.status |= bit;
        } else {
            self.status &= !bit;
        }
    }
    /// Sets C3 C2 C1 C0 at once.
    pub fn set_cc(&mut self, c3: bool, c2: bool, c1: bool, c0: bool) {
        self.set_flag(sw::C3, c3);
        self.set_flag(sw::C2, c2);
        self.set_flag(sw::C1, c1);
        self.set_flag(sw::C0, c0);
    }
    /// Rounding control field.
    pub fn rc(&self) -> u8 {
        ((self.control >> 10) & 3) as u8
    }
    /// Significand bits from the precision control field (the reserved
    /// value 01 behaves as 64 bits here; see `docs/x87.md`).
    pub fn precision_bits(&self) -> u32 {
        match (self.control >> 8) & 3 {
            0 => 24,
            2 => 53,
            _ => 64,
        }
    }
}

/// The tag a value gets when written.
pub fn tag_of(v: F80) -> u16 {
    use softfloat::Class;
    match v.class() {
        Class::Zero => tag::ZERO,
        Class::Normal => tag::VALID,
        _ => tag::SPECIAL,
    }
}
