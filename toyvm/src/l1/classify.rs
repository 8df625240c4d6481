//! What L1 needs to know about one decoded instruction, decided once at
//! compile time: whether it ends a block, whether its handler may skip the
//! fault snapshot, whether the session must look after it, and the facts spin
//! detection and fusion use.
//!
//! Owns the class bits and the audit behind `SAFE` (see [`classify`]). It
//! reads iced-x86's decoding of the same bytes and the `Op` the CPU decoder
//! built; it must not execute anything or hold instruction semantics.

use crate::cpu::decode::MAX_LEN;
use crate::cpu::op::{Op, Opnd, Rep};
use crate::cpu::seg;
use iced_x86::{Code, Decoder, DecoderOptions, FlowControl, Instruction, Mnemonic as M, OpKind};

/// The handler changes no register, flag, segment or IP before its last
/// possible fault, so a fault leaves the CPU as before the instruction and
/// `run_op`'s register snapshot can be skipped. (Memory is never part of the
/// snapshot: both paths leave earlier stores of a faulting instruction.)
pub const SAFE: u16 = 1 << 0;
/// Ends the block: control may go elsewhere, the session must see what it did,
/// or one REP element at a time must be countable.
pub const TERM: u16 = 1 << 1;
/// Touches ports: ask the bus for attention afterwards.
pub const IO: u16 = 1 << 2;
/// May set IF (STI, POPF, IRET): attention if it went from 0 to 1.
pub const IFCHG: u16 = 1 << 3;
/// May open the interrupt shadow (STI, MOV SS, POP SS).
pub const SHADOW: u16 = 1 << 4;
/// A string instruction with a REP prefix (one dispatch per element).
pub const REP: u16 = 1 << 5;
/// A near branch whose target is `next_ip + imm` (JMP rel, Jcc, LOOP, JCXZ).
pub const JREL: u16 = 1 << 6;
/// Conditional: may fall through.
pub const COND: u16 = 1 << 7;
/// Reads registers, flags and memory, writes only registers and flags: no
/// store, no stack, no segment register, no port. A spin-loop body is made
/// of these (plus one IN for a port poll).
pub const PURE: u16 = 1 << 8;
/// Undecodable: the Op raises #UD or #GP and depends on all 15 fetched bytes.
pub const INVALID: u16 = 1 << 9;
/// Writes only the flags (CMP, TEST): the first half of a fusable pair.
pub const FLAGS_ONLY: u16 = 1 << 10;
/// An x87 escape (the FPU interface).
pub const X87: u16 = 1 << 11;
/// Host-service instruction.
pub const HOSTCALL: u16 = 1 << 12;
/// IN (not INS): a port read into the accumulator.
pub const IN: u16 = 1 << 13;
/// Fetched (partly) from a device window (`EngineBus::code_device`): the
/// fetch's effect is replayed before every dispatch of it (`TOp::fetch_dev`).
pub const DEVFETCH: u16 = 1 << 14;

/// The class of the host-service instruction.
pub const HOSTCALL_CLASS: u16 = SAFE | TERM | HOSTCALL;

/// Decodes `bytes` at `ip` with the same options as the CPU decoder.
pub fn iced(bytes: &[u8; MAX_LEN], ip: u32) -> Instruction {
    let mut dec = Decoder::with_ip(16, bytes, ip as u64, DecoderOptions::LOADALL386);
    dec.decode()
}

fn mem_dst<B>(op: &Op<B>) -> bool {
    matches!(op.dst, Opnd::Mem(_))
}

fn reg_dst<B>(op: &Op<B>) -> bool {
    matches!(op.dst, Opnd::R8(_) | Opnd::R16(_) | Opnd::R32(_))
}

/// The class bits of one instruction. `hostcall`: the Op is the
/// host-service instruction (decided by address, not by iced).
///
/// The `SAFE` audit, handler by handler (x86-cpu/src/exec, x86-cpu/src/string.rs):
/// every handler computes its operand locations (`Op::loc`, `ea::check`) and
/// reads before its first register write, so a fault changes nothing, except:
/// POP to memory (SP moves before the destination check), PUSHA/POPA, ENTER,
/// LEAVE (SP before the read), far CALL (two pushes), RETF (two pops), RET
/// with a 32-bit operand size (SP moves before the #GP target check), LOOPcc
/// with a 32-bit operand size (CX moves before the #GP target check), and the
/// control-register, LMSW and stop handlers
/// (they may answer `Flow::Stop`, which restores the snapshot). Those keep the
/// snapshot (`exec::run_op`). `toyvm/tests/l1_safe.rs` checks the audit on
/// random encodings and states.
pub fn classify<B>(ins: &Instruction, op: &Op<B>, hostcall: bool) -> u16 {
    if hostcall {
        return HOSTCALL_CLASS;
    }
    if ins.is_invalid() {
        return SAFE | TERM | INVALID;
    }
    let m = ins.mnemonic();
    let mut c = 0u16;
    if op.x87.is_some() {
        // SAFE: the escape's handler (`h_fpu`) writes no register, segment,
        // IP or flag before a fault. #NM is checked first; the FPU raises
        // only memory faults, before touching anything a snapshot covers;
        // EAX is written only by FSTSW AX (no memory operand, cannot
        // fault), the flags only by the Pentium model's FCMOV/FCOMI forms
        // (no memory operand either). The FPU's own state is in neither
        // snapshot: `Fpu::execute` leaves it unchanged on a fault, on every
        // path alike. Not PURE: it writes FPU state (no spin fold).
        return SAFE | X87;
    }
    match ins.flow_control() {
        FlowControl::Next => {}
        FlowControl::ConditionalBranch => {
            c |= TERM | COND;
            if ins.op_count() == 1 && is_near_rel(ins.op0_kind()) {
                c |= JREL;
            }
        }
        FlowControl::UnconditionalBranch => {
            c |= TERM;
            if is_near_rel(ins.op0_kind()) {
                c |= JREL;
            }
        }
        _ => c |= TERM,
    }
    if op.rep != Rep::None && is_string(ins) {
        c |= TERM | REP;
    }
    let sreg_ss = op.dst == Opnd::Sreg(seg::SS as u8);
    match m {
        M::Hlt | M::Loadall => c |= TERM,
        M::Sti => c |= TERM | IFCHG | SHADOW,
        M::Popf | M::Popfd => c |= TERM | IFCHG,
        M::Iret | M::Iretd => c |= TERM | IFCHG,
        M::Mov | M::Pop if sreg_ss => c |= TERM | SHADOW,
        M::In => c |= IO | IN,
        M::Out | M::Insb | M::Insw | M::Insd | M::Outsb | M::Outsw | M::Outsd => c |= IO,
        _ => {}
    }
    let unsafe_ = match m {
        M::Pop => mem_dst(op),
        M::Pusha | M::Pushad | M::Popa | M::Popad | M::Enter | M::Leave => true,
        M::Call => matches!(
            ins.code(),
            Code::Call_ptr1616 | Code::Call_ptr1632 | Code::Call_m1616 | Code::Call_m1632
        ),
        M::Retf => true,
        M::Ret => op.o32,
        M::Loop | M::Loope | M::Loopne => op.o32,
        M::Lmsw | M::Loadall => true,
        M::Mov => {
            let (r0, r1) = (ins.op0_register(), ins.op1_register());
            r0.is_cr() || r1.is_cr() || r0.is_dr() || r1.is_dr() || r0.is_tr() || r1.is_tr()
        }
        _ => false,
    };
    if !unsafe_ {
        c |= SAFE;
    }
    let pure_alu = crate::cpu::flow::is_plain_alu(m);
    let pure = match m {
        M::Cmp | M::Test => true,
        M::Nop => true,
        M::Mov => reg_dst(op) && !matches!(op.src, Opnd::Sreg(_) | Opnd::None),
        _ => pure_alu && reg_dst(op),
    };
    if pure && c & TERM == 0 && !unsafe_ {
        c |= PURE;
    }
    if matches!(m, M::Cmp | M::Test) {
        c |= FLAGS_ONLY;
    }
    c
}

fn is_near_rel(k: OpKind) -> bool {
    matches!(k, OpKind::NearBranch16 | OpKind::NearBranch32)
}

fn is_string(ins: &Instruction) -> bool {
    ins.is_string_instruction()
}

/// Decodes `bytes` at `ip` as code of the given default size (protected-mode
/// blocks, `pm`).
pub fn iced_in(bytes: &[u8; MAX_LEN], ip: u32, code32: bool) -> Instruction {
    let bits = if code32 { 32 } else { 16 };
    let mut dec = Decoder::with_ip(bits, bytes, ip as u64, DecoderOptions::LOADALL386);
    dec.decode()
}

/// Whether an instruction running in protected or V86 mode can change
/// nothing but the general registers, EIP, the flags and memory (and the
/// clock), whatever it faults on: then undoing a fault needs only those
/// three restored, not `pm::run_op`'s whole snapshot (descriptor caches,
/// CPL, LDTR, TR, V86). `pm` runs these with that small snapshot (`class`
/// is [`classify`]'s answer for the same bytes).
///
/// A whitelist of general-purpose instructions: ALU, moves without a
/// segment, control or debug register, stack ops, near branches, calls and
/// returns, string ops that touch no port, bit ops, conversions. Everything
/// else (segment loads, far transfers, INT/IRET, IF and IOPL-sensitive
/// instructions, ports, descriptor-table and system instructions, SSE,
/// the undecodable) keeps the full snapshot. The x87 escape is light: it
/// changes the FPU, EAX, the flags and memory only.
pub fn pm_light<B>(ins: &Instruction, op: &Op<B>, class: u16) -> bool {
    if class & (INVALID | HOSTCALL | IO | IFCHG | SHADOW) != 0 {
        return false;
    }
    if class & X87 != 0 || op.x87.is_some() {
        // The escape changes the FPU, EAX (FSTSW AX), the flags (the
        // Pentium model's FCOMI/FCMOV) and memory, and nothing before a
        // fault (see `classify`'s audit): the small snapshot covers it.
        return class & X87 != 0 && op.x87.is_some();
    }
    if matches!(op.dst, Opnd::Sreg(_)) || matches!(op.src, Opnd::Sreg(_)) {
        return false;
    }
    if ins.is_jmp_far()
        || ins.is_jmp_far_indirect()
        || ins.is_call_far()
        || ins.is_call_far_indirect()
    {
        return false;
    }
    for i in 0..ins.op_count() {
        if ins.op_kind(i) == OpKind::Register {
            let r = ins.op_register(i);
            if r.is_segment_register() || r.is_cr() || r.is_dr() || r.is_tr() || !r.is_gpr() {
                return false;
            }
        }
    }
    let m = ins.mnemonic();
    if crate::cpu::flow::is_plain_alu(m) {
        return true;
    }
    match ins.flow_control() {
        FlowControl::ConditionalBranch => return true,
        FlowControl::UnconditionalBranch | FlowControl::IndirectBranch => return m == M::Jmp,
        FlowControl::Call | FlowControl::IndirectCall => return m == M::Call,
        FlowControl::Return => return m == M::Ret,
        FlowControl::Next => {}
        _ => return false,
    }
    if ins.condition_code() != iced_x86::ConditionCode::None {
        // SETcc, CMOVcc.
        return true;
    }
    // Not in `is_plain_alu`: moves, the stack, multiply and divide, string,
    // bit, flag and BCD ops (the CPU crate's list, shared with mainemu).
    crate::cpu::flow::writes_only_gprs_and_memory(m)
}
