//! Handlers that move data: MOV and friends, XCHG, LEA, far-pointer loads,
//! XLAT, the stack (PUSH/POP/PUSHA/POPA/PUSHF/POPF/ENTER/LEAVE), LAHF/SAHF and
//! SETcc.
//!
//! Owns the real-mode rules of these moves (segment loads set base = sel << 4,
//! MOV SS / POP SS open the interrupt shadow, PUSH SP pushes the old SP, POP
//! to memory addresses with the incremented SP). It must not do arithmetic
//! beyond address and stack-pointer updates.

use super::{peek, pop, push};
use crate::bus::{Bus, Width};
use crate::op::{get, put, Flow, Op, Opnd};
use crate::shape::{self, Shape};
use crate::{ea, reg, seg, Cpu, Exception, EFLAGS_WRITABLE};
use shared_ir::flags::{AF, CF, PF, SF, ZF};

type R = Result<Flow, Exception>;

/// Loads a segment register as the mode does; SS opens the interrupt shadow.
#[inline]
fn load_sreg(cpu: &mut Cpu, s: u8, v: u16) -> Result<(), Exception> {
    cpu.load_seg(s as usize, v)?;
    if s as usize == seg::SS {
        cpu.shadow = true;
    }
    Ok(())
}

/// MOV (registers, memory, immediates; segment registers as a source), with
/// destination shape `D` and source shape `S` (`crate::shape`).
pub fn h_mov<B: Bus, const D: Shape, const S: Shape>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let v = op.read_as::<S>(cpu, bus, op.src)?;
    let d = op.loc_as::<D>(cpu, op.dst)?;
    put(cpu, bus, d, v);
    Ok(Flow::Next)
}

/// MOV Sreg, r/m16 (`sub` = segment index; CS was rejected at decode).
pub fn h_mov_sreg<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let v = op.read(cpu, bus, op.src)?;
    load_sreg(cpu, op.sub, v as u16)?;
    Ok(Flow::Next)
}

/// MOVZX (0) / MOVSX (1), destination shape `D`, source shape `S`.
pub fn h_movx<B: Bus, const D: Shape, const S: Shape>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let v = op.read_as::<S>(cpu, bus, op.src)?;
    let v = if op.sub == 1 {
        match shape::width(S, op.src.width()) {
            Width::W8 => v as u8 as i8 as i32 as u32,
            _ => v as u16 as i16 as i32 as u32,
        }
    } else {
        v
    };
    let d = op.loc_as::<D>(cpu, op.dst)?;
    put(cpu, bus, d, v & shape::width(D, op.w).mask());
    Ok(Flow::Next)
}

/// XCHG.
pub fn h_xchg<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let d = op.loc(cpu, op.dst)?;
    let s = op.loc(cpu, op.src)?;
    let (a, b) = (get(cpu, bus, d), get(cpu, bus, s));
    put(cpu, bus, d, b);
    put(cpu, bus, s, a);
    Ok(Flow::Next)
}

/// NOP, PAUSE, FWAIT, and the cache/TLB instructions a real-mode 486 treats as
/// no-ops here (INVD, WBINVD, INVLPG).
pub fn h_nop<B: Bus>(_cpu: &mut Cpu, _bus: &mut B, _op: &Op<B>) -> R {
    Ok(Flow::Next)
}

/// LEA: the offset only, truncated to the destination (shape `D`).
pub fn h_lea<B: Bus, const D: Shape>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let off = op.ea_off(cpu);
    let d = op.loc_as::<D>(cpu, op.dst)?;
    put(cpu, bus, d, off);
    Ok(Flow::Next)
}

/// LES LDS LSS LFS LGS (`sub` = segment index): offset then selector.
pub fn h_lfar<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let (off, sel) = read_far_ptr(cpu, bus, op)?;
    let d = op.loc(cpu, op.dst)?;
    cpu.load_seg(op.sub as usize, sel)?;
    put(cpu, bus, d, off);
    Ok(Flow::Next)
}

/// Reads an m16:16 / m16:32 far pointer at the memory operand (by `o32`).
pub fn read_far_ptr<B: Bus>(cpu: &Cpu, bus: &mut B, op: &Op<B>) -> Result<(u32, u16), Exception> {
    let n = if op.o32 { 4 } else { 2 };
    let lin = ea::check(cpu, op.ea.seg as usize, op.ea_off(cpu), n + 2)?;
    let off = if op.o32 {
        bus.read32(lin)
    } else {
        bus.read16(lin) as u32
    };
    Ok((off, bus.read16(lin.wrapping_add(n))))
}

/// XLAT: AL = [seg:(E)BX + AL].
pub fn h_xlat<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let mut off = cpu.regs[reg::EBX].wrapping_add(cpu.r8(0) as u32);
    if !op.ea.a32 {
        off &= 0xFFFF;
    }
    let lin = ea::check(cpu, op.ea.seg as usize, off, 1)?;
    let v = bus.read8(lin);
    cpu.set_r8(0, v);
    Ok(Flow::Next)
}

/// PUSH `dst` (shape `D`; a word or dword slot by `o32`; SP pushes its old
/// value).
pub fn h_push<B: Bus, const D: Shape>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let v = op.read_as::<D>(cpu, bus, op.dst)?;
    push(cpu, bus, op.o32, v)?;
    Ok(Flow::Next)
}

/// POP `dst` (shape `D`); a memory destination is addressed with the
/// incremented SP.
pub fn h_pop<B: Bus, const D: Shape>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let v = pop(cpu, bus, op.o32)?;
    match op.dst {
        Opnd::Sreg(s) if D == shape::ANY => load_sreg(cpu, s, v as u16)?,
        o => {
            let d = op.loc_as::<D>(cpu, o)?;
            put(cpu, bus, d, v);
        }
    }
    Ok(Flow::Next)
}

/// PUSHA / PUSHAD: AX CX DX BX (old SP) BP SI DI.
pub fn h_pusha<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let n: u32 = if op.o32 { 4 } else { 2 };
    // Check the whole block first so a fault leaves memory untouched.
    let top = ea::check(cpu, seg::SS, cpu.stack_ptr_plus(n.wrapping_neg()), n)?;
    let low = ea::check(cpu, seg::SS, cpu.stack_ptr_plus((8 * n).wrapping_neg()), n)?;
    if low < top {
        bus.probe_write(low, 8 * n);
    }
    let old_sp = cpu.regs[reg::ESP];
    for r in 0..8 {
        let v = if r == reg::ESP { old_sp } else { cpu.regs[r] };
        push(cpu, bus, op.o32, v)?;
    }
    Ok(Flow::Next)
}

/// POPA / POPAD: DI SI BP (SP skipped) BX DX CX AX.
pub fn h_popa<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let n: u32 = if op.o32 { 4 } else { 2 };
    for r in (0..8u8).rev() {
        if r as usize == reg::ESP {
            cpu.set_stack_ptr(cpu.stack_ptr_plus(n));
            continue;
        }
        let v = pop(cpu, bus, op.o32)?;
        if op.o32 {
            cpu.set_r32(r, v);
        } else {
            cpu.set_r16(r, v as u16);
        }
    }
    Ok(Flow::Next)
}

/// PUSHF / PUSHFD (VM and RF read as 0).
pub fn h_pushf<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let f = cpu.flags.bits() & 0x00FC_FFFF;
    push(cpu, bus, op.o32, f)?;
    Ok(Flow::Next)
}

/// POPF / POPFD: real mode loads IOPL and NT too (386 behaviour).
pub fn h_popf<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let v = pop(cpu, bus, op.o32)?;
    set_flags_from_stack(cpu, v, op.o32);
    Ok(Flow::Next)
}

/// Writes FLAGS (or EFLAGS with `o32`) from a popped value. In protected mode
/// IOPL changes only at CPL 0 and IF only when CPL <= IOPL; both are silently
/// kept otherwise (no fault), as on hardware.
pub fn set_flags_from_stack(cpu: &mut Cpu, v: u32, o32: bool) {
    let mut wmask = if o32 {
        EFLAGS_WRITABLE
    } else {
        EFLAGS_WRITABLE & 0xFFFF
    };
    if cpu.pmode {
        let iopl = (cpu.flags.bits() >> 12) & 3;
        if cpu.cpl != 0 {
            wmask &= !0x3000;
        }
        if cpu.cpl as u32 > iopl {
            wmask &= !shared_ir::flags::IF;
        }
    }
    let cur = cpu.flags.bits();
    cpu.flags.set_bits((cur & !wmask) | (v & wmask));
}

/// LAHF.
pub fn h_lahf<B: Bus>(cpu: &mut Cpu, _bus: &mut B, _op: &Op<B>) -> R {
    let f = cpu.flags.bits() as u8;
    cpu.set_r8(4, f);
    Ok(Flow::Next)
}

/// SAHF: SF ZF AF PF CF from AH.
pub fn h_sahf<B: Bus>(cpu: &mut Cpu, _bus: &mut B, _op: &Op<B>) -> R {
    let m = SF | ZF | AF | PF | CF;
    let ah = cpu.r8(4) as u32;
    let cur = cpu.flags.bits();
    cpu.flags.set_bits((cur & !m) | (ah & m));
    Ok(Flow::Next)
}

/// ENTER imm16, imm8 (the nesting level is taken modulo 32). The stack size
/// (SS.B) picks SP/BP or ESP/EBP for the frame arithmetic, the operand size
/// the slot width (386 manual). The written span is probed first, so a bus
/// that refuses part of it sees no write at all.
pub fn h_enter<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let level = op.imm2 & 31;
    let n: u32 = if op.o32 { 4 } else { 2 };
    let mask = if cpu.stack32 { u32::MAX } else { 0xFFFF };
    let slots = 1 + level;
    if let (Ok(lo), Ok(hi)) = (
        ea::check(
            cpu,
            seg::SS,
            cpu.stack_ptr_plus((slots * n).wrapping_neg()),
            n,
        ),
        ea::check(cpu, seg::SS, cpu.stack_ptr_plus(n.wrapping_neg()), n),
    ) {
        if lo < hi {
            bus.probe_write(lo, slots * n);
        }
    }
    push(cpu, bus, op.o32, cpu.regs[reg::EBP])?;
    let frame = cpu.stack_ptr();
    if level > 0 {
        let mut bp = cpu.regs[reg::EBP] & mask;
        for _ in 1..level {
            bp = bp.wrapping_sub(n) & mask;
            let lin = ea::check(cpu, seg::SS, bp, n)?;
            let v = if op.o32 {
                bus.read32(lin)
            } else {
                bus.read16(lin) as u32
            };
            push(cpu, bus, op.o32, v)?;
        }
        push(cpu, bus, op.o32, frame)?;
    }
    if op.o32 {
        cpu.regs[reg::EBP] = frame;
    } else {
        cpu.set_r16(reg::EBP as u8, frame as u16);
    }
    cpu.set_stack_ptr(cpu.stack_ptr_plus((op.imm & 0xFFFF).wrapping_neg()));
    Ok(Flow::Next)
}

/// LEAVE: (E)SP = (E)BP by the stack size, then pop BP / EBP.
pub fn h_leave<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let bp = cpu.regs[reg::EBP];
    cpu.set_stack_ptr(bp);
    let v = peek(cpu, bus, op.o32, 0)?;
    let n = if op.o32 { 4 } else { 2 };
    cpu.set_stack_ptr(cpu.stack_ptr_plus(n));
    if op.o32 {
        cpu.regs[reg::EBP] = v;
    } else {
        cpu.set_r16(reg::EBP as u8, v as u16);
    }
    Ok(Flow::Next)
}

/// SETcc (`sub` = condition code).
pub fn h_setcc<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let v = cpu.flags.cond(op.sub) as u32;
    let d = op.loc(cpu, op.dst)?;
    put(cpu, bus, d, v);
    Ok(Flow::Next)
}

/// CMOVcc (`sub` = condition code): the source is read (and may fault) even
/// when the condition is false; then nothing is written.
pub fn h_cmov<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let v = op.read(cpu, bus, op.src)?;
    if cpu.flags.cond(op.sub) {
        let d = op.loc(cpu, op.dst)?;
        put(cpu, bus, d, v);
    }
    Ok(Flow::Next)
}
