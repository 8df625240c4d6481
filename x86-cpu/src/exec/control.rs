//! Handlers that change the flow of control: jumps, calls, returns, Jcc,
//! LOOP/JCXZ, INT/INT3/INTO/INT1/IRET, BOUND, HLT, and the flag instructions.
//!
//! Owns the real-mode branch rules (16-bit targets wrap, 32-bit targets past
//! the CS limit are #GP at the branch, far transfers load CS as real mode
//! does). Frame pushes for software interrupts go through `cpu::interrupt`;
//! this module must not duplicate them.

use super::data::{read_far_ptr, set_flags_from_stack};
use super::{branch, io_privileged, next_ip, peek, pop, privileged, push};
use crate::bus::Bus;
use crate::interrupt::push_frame;
use crate::op::{Flow, Op};
use crate::{ea, pmint, reg, seg, segs, xfer, Cpu, Exception};
use shared_ir::flags::{DF, IF};

type R = Result<Flow, Exception>;

#[inline(always)]
fn rel_target<B>(cpu: &Cpu, op: &Op<B>) -> u32 {
    next_ip(cpu, op).wrapping_add(op.imm)
}

/// JMP rel8/rel16/rel32 (`imm` = displacement).
pub fn h_jmp_rel<B: Bus>(cpu: &mut Cpu, _bus: &mut B, op: &Op<B>) -> R {
    branch(cpu, op.o32, rel_target(cpu, op))
}

/// Jcc: condition code `CC` (the low nibble of the opcode), or
/// [`super::alu::FROM_SUB`] to take it from `sub`. Inlined where a tier
/// calls it statically (`crate::kinds`).
#[inline]
pub fn h_jcc<B: Bus, const CC: u8>(cpu: &mut Cpu, _bus: &mut B, op: &Op<B>) -> R {
    let cc = if CC == super::alu::FROM_SUB {
        op.sub
    } else {
        CC
    };
    if cpu.flags.cond(cc) {
        branch(cpu, op.o32, rel_target(cpu, op))
    } else {
        Ok(Flow::Next)
    }
}

/// JMP r/m (near, indirect).
pub fn h_jmp_ind<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let t = op.read(cpu, bus, op.dst)?;
    branch(cpu, op.o32, t)
}

/// A far transfer's CS:EIP. Protected mode goes through descriptors and
/// gates (`xfer`); real, V86 and flat user mode check the target against
/// the current CS limit (real-mode loads keep it) before any register
/// changes (L1 runs far jumps without the snapshot), then load CS as the
/// mode does.
fn far_to<B: Bus>(cpu: &mut Cpu, bus: &mut B, sel: u16, off: u32, next: u32) -> R {
    if cpu.pm_tables() {
        return xfer::jmp_far(cpu, bus, sel, off, next);
    }
    if off as u64 >= cpu.seg_end[seg::CS] {
        return Err(Exception::GP);
    }
    segs::load(cpu, bus, seg::CS, sel)?;
    cpu.eip = off;
    Ok(Flow::Jump)
}

/// JMP ptr16:16 / ptr16:32 (`imm` offset, `imm2` selector).
pub fn h_jmp_far<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let next = next_ip(cpu, op);
    far_to(cpu, bus, op.imm2 as u16, op.imm, next)
}

/// JMP m16:16 / m16:32.
pub fn h_jmp_far_ind<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let (off, sel) = read_far_ptr(cpu, bus, op)?;
    let next = next_ip(cpu, op);
    far_to(cpu, bus, sel, off, next)
}

fn call_near<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>, target: u32) -> R {
    let t = if op.o32 { target } else { target & 0xFFFF };
    if t as u64 >= cpu.seg_end[seg::CS] {
        return Err(Exception::GP);
    }
    let ret = next_ip(cpu, op);
    push(cpu, bus, op.o32, ret)?;
    cpu.eip = t;
    Ok(Flow::Jump)
}

/// CALL rel16/rel32.
pub fn h_call_rel<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let t = rel_target(cpu, op);
    call_near(cpu, bus, op, t)
}

/// CALL r/m (near, indirect); the target is read before the push.
pub fn h_call_ind<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let t = op.read(cpu, bus, op.dst)?;
    call_near(cpu, bus, op, t)
}

fn call_far<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>, sel: u16, off: u32) -> R {
    if cpu.pm_tables() {
        let ret = next_ip(cpu, op);
        return xfer::call_far(cpu, bus, sel, off, op.o32, ret);
    }
    if off as u64 >= cpu.seg_end[seg::CS] {
        return Err(Exception::GP);
    }
    let ret = next_ip(cpu, op);
    let n: u32 = if op.o32 { 4 } else { 2 };
    if let Ok(lo) = ea::check(
        cpu,
        seg::SS,
        cpu.stack_ptr_plus((2 * n).wrapping_neg()),
        2 * n,
    ) {
        bus.probe_write(lo, 2 * n);
    }
    push(cpu, bus, op.o32, cpu.sregs[seg::CS] as u32)?;
    push(cpu, bus, op.o32, ret)?;
    far_to(cpu, bus, sel, off, ret)
}

/// CALL ptr16:16 / ptr16:32.
pub fn h_call_far<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    call_far(cpu, bus, op, op.imm2 as u16, op.imm)
}

/// CALL m16:16 / m16:32.
pub fn h_call_far_ind<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let (off, sel) = read_far_ptr(cpu, bus, op)?;
    call_far(cpu, bus, op, sel, off)
}

/// RET (`sub` 0) / RETF (`sub` 1), releasing `imm` extra bytes.
pub fn h_ret<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    if op.sub == 1 && cpu.pm_tables() {
        return xfer::ret_far(cpu, bus, op.o32, op.imm & 0xFFFF);
    }
    let ip = pop(cpu, bus, op.o32)?;
    let ip = if op.o32 { ip } else { ip & 0xFFFF };
    let cs = if op.sub == 1 {
        Some(pop(cpu, bus, op.o32)? as u16)
    } else {
        None
    };
    if ip as u64 >= cpu.seg_end[seg::CS] {
        return Err(Exception::GP);
    }
    cpu.set_stack_ptr(cpu.stack_ptr_plus(op.imm & 0xFFFF));
    if let Some(cs) = cs {
        segs::load(cpu, bus, seg::CS, cs)?;
    }
    cpu.eip = ip;
    Ok(Flow::Jump)
}

/// LOOP (0) LOOPE (1) LOOPNE (2) JCXZ/JECXZ (3); the count register is ECX
/// with a 32-bit address size.
pub fn h_loop<B: Bus>(cpu: &mut Cpu, _bus: &mut B, op: &Op<B>) -> R {
    let a32 = op.ea.a32;
    let mask = if a32 { u32::MAX } else { 0xFFFF };
    let mut cx = cpu.regs[reg::ECX] & mask;
    let take = if op.sub == 3 {
        cx == 0
    } else {
        cx = cx.wrapping_sub(1) & mask;
        if a32 {
            cpu.regs[reg::ECX] = cx;
        } else {
            cpu.set_r16(reg::ECX as u8, cx as u16);
        }
        cx != 0
            && match op.sub {
                1 => cpu.flags.zf(),
                2 => !cpu.flags.zf(),
                _ => true,
            }
    };
    if take {
        branch(cpu, op.o32, rel_target(cpu, op))
    } else {
        Ok(Flow::Next)
    }
}

/// INT n (0, vector in `imm`), INT3 (1), INTO (2), INT1/ICEBP (3): traps that
/// push the address of the next instruction.
pub fn h_int<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let vector = match op.sub {
        0 => op.imm as u8,
        1 => Exception::BP.0,
        2 => {
            if !cpu.flags.of() {
                return Ok(Flow::Next);
            }
            Exception::OF.0
        }
        _ => Exception::DB.0,
    };
    if cpu.flat_user {
        // No IDT in flat user mode: the engine gets the event (user::run_op
        // tells these traps from faults by the opcode).
        return Err(Exception(vector, 0));
    }
    // INT n, INT3 and INTO are IOPL-sensitive in V86 mode (no VME).
    if cpu.v86 && op.sub != 3 && cpu.iopl() < 3 {
        return Err(Exception::GP);
    }
    let ret = next_ip(cpu, op);
    if cpu.pmode {
        // INT1 (ICEBP) is delivered like a debug exception: no gate DPL check.
        pmint::software(cpu, bus, vector, ret, op.sub != 3)?;
        return Ok(Flow::Jump);
    }
    push_frame(cpu, bus, vector, ret)?;
    Ok(Flow::Jump)
}

/// IRET / IRETD.
pub fn h_iret<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    if cpu.flat_user {
        // No kernel to return to in flat user mode.
        return Err(Exception::GP);
    }
    if cpu.pmode {
        let next = next_ip(cpu, op);
        return pmint::iret(cpu, bus, op.o32, next);
    }
    let n = if op.o32 { 4 } else { 2 };
    let ip = peek(cpu, bus, op.o32, 0)?;
    let cs = peek(cpu, bus, op.o32, n)? as u16;
    let fl = peek(cpu, bus, op.o32, 2 * n)?;
    let ip = if op.o32 { ip } else { ip & 0xFFFF };
    if ip as u64 >= cpu.seg_end[seg::CS] {
        return Err(Exception::GP);
    }
    cpu.set_stack_ptr(cpu.stack_ptr_plus(3 * n));
    cpu.load_seg_real(seg::CS, cs);
    cpu.eip = ip;
    set_flags_from_stack(cpu, fl, op.o32);
    Ok(Flow::Jump)
}

/// BOUND r, m: #BR unless lower <= r <= upper (signed).
pub fn h_bound<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let n = op.w.bytes();
    let lin = ea::check(cpu, op.ea.seg as usize, op.ea_off(cpu), 2 * n)?;
    let (idx, lo, hi) = if op.o32 {
        (
            op.read(cpu, bus, op.dst)? as i32,
            bus.read32(lin) as i32,
            bus.read32(lin.wrapping_add(4)) as i32,
        )
    } else {
        (
            op.read(cpu, bus, op.dst)? as u16 as i16 as i32,
            bus.read16(lin) as i16 as i32,
            bus.read16(lin.wrapping_add(2)) as i16 as i32,
        )
    };
    if idx < lo || idx > hi {
        return Err(Exception::BR);
    }
    Ok(Flow::Next)
}

/// HLT (#GP above CPL 0).
pub fn h_hlt<B: Bus>(cpu: &mut Cpu, _bus: &mut B, _op: &Op<B>) -> R {
    privileged(cpu)?;
    Ok(Flow::Halt)
}

/// CLC (0) STC (1) CMC (2) CLD (3) STD (4) CLI (5) STI (6).
pub fn h_flagop<B: Bus>(cpu: &mut Cpu, _bus: &mut B, op: &Op<B>) -> R {
    let f = &mut cpu.flags;
    match op.sub {
        0 => f.set_cf(false),
        1 => f.set_cf(true),
        2 => {
            let c = f.cf();
            f.set_cf(!c)
        }
        3 => f.set_mask(DF, false),
        4 => f.set_mask(DF, true),
        5 => {
            io_privileged(cpu)?;
            cpu.flags.set_mask(IF, false)
        }
        _ => {
            io_privileged(cpu)?;
            // Interrupts become deliverable only after the next instruction.
            if !cpu.flags.if_() {
                cpu.shadow = true;
            }
            cpu.flags.set_mask(IF, true);
        }
    }
    Ok(Flow::Next)
}
