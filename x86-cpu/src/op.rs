//! The pre-decoded instruction form shared by L0 and (later) L1.
//!
//! An [`Op`] is what decoding produces once: a handler monomorphized for the
//! bus, operand descriptors, an addressing recipe, immediates and the length.
//! Executing an Op never looks at iced-x86 again (x87 ops excepted: the FPU's
//! interface takes the decoded instruction). This module owns the Op layout and
//! the small inlined operand accessors every handler uses; it must not contain
//! instruction semantics.

use super::ea::{self, Ea};
use super::{Cpu, Exception};
use crate::bus::{Bus, Width};
use crate::shape::{self, Shape};

/// What a handler tells the engine after it ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Retired normally: the engine moves IP past the instruction.
    Next,
    /// The handler set CS:IP itself (branches, interrupts).
    Jump,
    /// One REP element ran and more remain: IP stays on the instruction.
    Repeat,
    /// HLT retired (IP moves past it).
    Halt,
    /// The host-service instruction retired (IP moves past it).
    HostCall(u16),
    /// The instruction cannot be expressed: nothing changes, the run stops.
    /// The payload indexes [`crate::exec::system::STOP_MESSAGES`] (an index,
    /// not a `String`, so that `Result<Flow, Exception>` fits in a register:
    /// every handler returns one).
    Stop(u8),
}

impl Flow {
    /// The message of a [`Flow::Stop`] code.
    pub fn stop_message(code: u8) -> &'static str {
        crate::exec::system::STOP_MESSAGES
            .get(code as usize)
            .copied()
            .unwrap_or("unsupported instruction")
    }
}

/// A handler: one instruction family's semantics, generic over the bus.
pub type Handler<B> = fn(&mut Cpu, &mut B, &Op<B>) -> Result<Flow, Exception>;

/// Where an operand lives, decided at decode time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opnd {
    None,
    /// 8-bit register by encoding (AL CL DL BL AH CH DH BH).
    R8(u8),
    R16(u8),
    R32(u8),
    /// The memory operand described by [`Op::ea`], with its access width.
    Mem(Width),
    /// [`Op::imm`].
    Imm,
    /// A segment register (ES CS SS DS FS GS).
    Sreg(u8),
}

impl Opnd {
    /// The register index of a general-register operand (0 otherwise).
    #[inline(always)]
    pub fn reg(self) -> u8 {
        match self {
            Opnd::R8(i) | Opnd::R16(i) | Opnd::R32(i) => i,
            _ => 0,
        }
    }

    /// Access width (W16 for segment registers and immediates' callers decide).
    #[inline(always)]
    pub fn width(self) -> Width {
        match self {
            Opnd::R8(_) => Width::W8,
            Opnd::R32(_) => Width::W32,
            Opnd::Mem(w) => w,
            _ => Width::W16,
        }
    }
}

/// REP prefix state of a string instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rep {
    None,
    /// F3: REP / REPE.
    RepE,
    /// F2: REPNE.
    RepNe,
}

/// One pre-decoded instruction.
#[derive(Clone, Debug)]
pub struct Op<B> {
    pub handler: Handler<B>,
    /// Destination (or only) operand.
    pub dst: Operand,
    /// Source operand.
    pub src: Operand,
    /// Third operand (IMUL imm, SHLD/SHRD count).
    pub src2: Operand,
    /// Operation width.
    pub w: Width,
    /// 66h in effect: 32-bit operand size (stack slots, far pointers, branches).
    pub o32: bool,
    /// Handler-specific selector (ALU op, condition code, segment index, ...).
    pub sub: u8,
    pub rep: Rep,
    /// Memory operand recipe (meaningful when an operand is `Mem` or the
    /// handler addresses memory itself).
    pub ea: Ea,
    pub imm: u32,
    /// Second immediate (far pointer selector, ENTER nesting level).
    pub imm2: u32,
    /// Instruction length in bytes, prefixes included.
    pub len: u8,
    /// The instruction's bytes, for reports.
    pub bytes: [u8; 15],
    /// The decoded instruction for the two families that interpret it at
    /// run time: the x87 (the FPU interface) and SSE (`exec::sse*`, which
    /// reads operands and immediates from it).
    pub x87: Option<Box<iced_x86::Instruction>>,
}

/// Short name used in Op fields.
pub type Operand = Opnd;

/// A resolved operand location: registers by index, memory by linear address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loc {
    R8(u8),
    R16(u8),
    R32(u8),
    Mem(u32, Width),
    Imm(u32),
    Sreg(u8),
}

impl<B: Bus> Op<B> {
    /// Offset of the memory operand (no segment, no limit check).
    #[inline(always)]
    pub fn ea_off(&self, cpu: &Cpu) -> u32 {
        ea::offset(cpu, &self.ea)
    }

    /// Resolves an operand; memory operands are limit-checked for their width.
    #[inline(always)]
    pub fn loc(&self, cpu: &Cpu, o: Opnd) -> Result<Loc, Exception> {
        Ok(match o {
            Opnd::R8(i) => Loc::R8(i),
            Opnd::R16(i) => Loc::R16(i),
            Opnd::R32(i) => Loc::R32(i),
            Opnd::Mem(w) => {
                let off = self.ea_off(cpu);
                Loc::Mem(ea::check(cpu, self.ea.seg as usize, off, w.bytes())?, w)
            }
            Opnd::Imm => Loc::Imm(self.imm),
            Opnd::Sreg(s) => Loc::Sreg(s),
            Opnd::None => Loc::Imm(0),
        })
    }

    /// Resolves an operand that is written (a store or a read-modify-write
    /// destination): memory is checked for writing ([`ea::check_w`]).
    #[inline(always)]
    pub fn loc_w(&self, cpu: &Cpu, o: Opnd) -> Result<Loc, Exception> {
        Ok(match o {
            Opnd::Mem(w) => {
                let off = self.ea_off(cpu);
                Loc::Mem(ea::check_w(cpu, self.ea.seg as usize, off, w.bytes())?, w)
            }
            o => self.loc(cpu, o)?,
        })
    }

    /// Reads an operand.
    #[inline(always)]
    pub fn read(&self, cpu: &Cpu, bus: &mut B, o: Opnd) -> Result<u32, Exception> {
        Ok(get(cpu, bus, self.loc(cpu, o)?))
    }

    /// [`Op::loc`] for an operand whose shape `S` is known when the handler
    /// instance is chosen (`select`): the match on the operand kind folds
    /// away. `S` must be [`shape::of`] the operand, or [`shape::ANY`].
    #[inline(always)]
    pub fn loc_as<const S: Shape>(&self, cpu: &Cpu, o: Opnd) -> Result<Loc, Exception> {
        match S {
            shape::R8 => Ok(Loc::R8(o.reg())),
            shape::R16 => Ok(Loc::R16(o.reg())),
            shape::R32 => Ok(Loc::R32(o.reg())),
            shape::M8 | shape::M16 | shape::M32 => {
                let w = shape::width(S, Width::W8);
                let off = self.ea_off(cpu);
                Ok(Loc::Mem(
                    ea::check(cpu, self.ea.seg as usize, off, w.bytes())?,
                    w,
                ))
            }
            shape::IMM => Ok(Loc::Imm(self.imm)),
            _ => self.loc(cpu, o),
        }
    }

    /// [`Op::loc_w`] for an operand of known shape `S` (a written
    /// destination: memory is checked for writing).
    #[inline(always)]
    pub fn loc_as_w<const S: Shape>(&self, cpu: &Cpu, o: Opnd) -> Result<Loc, Exception> {
        match S {
            shape::M8 | shape::M16 | shape::M32 => {
                let w = shape::width(S, Width::W8);
                let off = self.ea_off(cpu);
                Ok(Loc::Mem(
                    ea::check_w(cpu, self.ea.seg as usize, off, w.bytes())?,
                    w,
                ))
            }
            shape::R8 | shape::R16 | shape::R32 | shape::IMM => self.loc_as::<S>(cpu, o),
            _ => self.loc_w(cpu, o),
        }
    }

    /// [`Op::read`] for an operand of known shape `S`.
    #[inline(always)]
    pub fn read_as<const S: Shape>(
        &self,
        cpu: &Cpu,
        bus: &mut B,
        o: Opnd,
    ) -> Result<u32, Exception> {
        Ok(get(cpu, bus, self.loc_as::<S>(cpu, o)?))
    }
}

/// Reads a resolved location.
#[inline(always)]
pub fn get<B: Bus>(cpu: &Cpu, bus: &mut B, l: Loc) -> u32 {
    match l {
        Loc::R8(i) => cpu.r8(i) as u32,
        Loc::R16(i) => cpu.r16(i) as u32,
        Loc::R32(i) => cpu.r32(i),
        Loc::Mem(a, w) => match w {
            Width::W8 => bus.read8(a) as u32,
            Width::W16 => bus.read16(a) as u32,
            Width::W32 => bus.read32(a),
        },
        Loc::Imm(v) => v,
        Loc::Sreg(s) => cpu.sregs[s as usize] as u32,
    }
}

/// Writes a resolved location (segment registers go through the handlers).
#[inline(always)]
pub fn put<B: Bus>(cpu: &mut Cpu, bus: &mut B, l: Loc, v: u32) {
    match l {
        Loc::R8(i) => cpu.set_r8(i, v as u8),
        Loc::R16(i) => cpu.set_r16(i, v as u16),
        Loc::R32(i) => cpu.set_r32(i, v),
        Loc::Mem(a, w) => match w {
            Width::W8 => bus.write8(a, v as u8),
            Width::W16 => bus.write16(a, v as u16),
            Width::W32 => bus.write32(a, v),
        },
        Loc::Imm(_) | Loc::Sreg(_) => {}
    }
}
