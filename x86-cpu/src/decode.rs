//! Building [`Op`]s: iced-x86 decodes, this module turns the result into our
//! pre-decoded form once, so executing never inspects iced again (the x87
//! and SSE Ops excepted: they carry the iced instruction).
//!
//! Owns the instruction whitelists (the 486's; the Pentium model's adds
//! RDTSC, CMPXCHG8B, CMOVcc and the long NOP; the SSE2 model's SSE/SSE2
//! list is `exec::sse::build`: anything iced knows beyond them becomes
//! #UD), operand and addressing descriptors, prefix facts (66h and 67h
//! against the code segment's default size, LOCK validity, REP), and the
//! choice of handler. It must not execute anything or touch CPU state:
//! decoding is a pure function of the bytes, IP and [`Mode`], which is what
//! lets L1 cache its output per block.

use super::ea::{Ea, NO_REG};
use super::exec::{alu, control, data, sysprot, system};
use super::op::{Handler, Op, Opnd, Rep};
use super::select;
use super::string;
use crate::bus::{Bus, Width};
use crate::{Cpu, Isa};
use iced_x86::{Code, ConditionCode, Decoder, DecoderError, DecoderOptions, Instruction};
use iced_x86::{Mnemonic as M, OpKind, Register};

/// The longest instruction a 386/486 accepts; longer raises #GP.
pub const MAX_LEN: usize = 15;

/// What decoding depends on besides the bytes: the code segment's default
/// size and the instruction set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Mode {
    /// CS.D: 32-bit default operand and address size (66h/67h select 16).
    pub code32: bool,
    pub isa: Isa,
}

impl Mode {
    /// Real mode on the 486: what toyvm runs.
    pub const REAL: Mode = Mode {
        code32: false,
        isa: Isa::I486,
    };
    /// Flat 32-bit code on the Pentium model: what a Win32 user-mode engine runs.
    pub const FLAT32: Mode = Mode {
        code32: true,
        isa: Isa::PentiumSse2,
    };

    /// The mode the CPU is in now.
    #[inline(always)]
    pub fn of(cpu: &Cpu) -> Mode {
        Mode {
            code32: cpu.code32,
            isa: cpu.isa,
        }
    }

    fn bitness(self) -> u32 {
        if self.code32 {
            32
        } else {
            16
        }
    }
}

/// Prefix facts read from the instruction's own bytes. `o32`/`a32` say
/// whether 66h/67h are present; [`Prefixes::effective`] applies them to the
/// mode's default size.
#[derive(Clone, Copy, Default)]
struct Prefixes {
    o32: bool,
    a32: bool,
    lock: bool,
    rep: u8,
    count: usize,
}

impl Prefixes {
    /// The operand and address sizes in effect (true = 32 bits).
    fn effective(mut self, mode: Mode) -> Prefixes {
        self.o32 ^= mode.code32;
        self.a32 ^= mode.code32;
        self
    }
}

fn scan_prefixes(bytes: &[u8]) -> Prefixes {
    let mut p = Prefixes::default();
    for &b in bytes {
        match b {
            0x66 => p.o32 = true,
            0x67 => p.a32 = true,
            0xF0 => p.lock = true,
            0xF2 | 0xF3 => p.rep = b,
            0x26 | 0x2E | 0x36 | 0x3E | 0x64 | 0x65 => {}
            _ => break,
        }
        p.count += 1;
    }
    p
}

fn blank<B: Bus>(handler: Handler<B>, bytes: &[u8; MAX_LEN], len: usize) -> Op<B> {
    Op {
        handler,
        dst: Opnd::None,
        src: Opnd::None,
        src2: Opnd::None,
        w: Width::W16,
        o32: false,
        sub: 0,
        rep: Rep::None,
        ea: Ea::NONE,
        imm: 0,
        imm2: 0,
        len: len as u8,
        bytes: *bytes,
        x87: None,
    }
}

/// Decodes the real-mode instruction whose (up to) 15 bytes start at `ip`
/// ([`Mode::REAL`]; see [`decode_in`]).
pub fn decode<B: Bus>(bytes: &[u8; MAX_LEN], ip: u32) -> Op<B> {
    decode_in(bytes, ip, Mode::REAL)
}

/// Decodes the instruction whose (up to) 15 bytes start at `ip` in `mode`.
/// Always returns an Op: undefined encodings become a #UD op, over-long ones
/// a #GP op, and inexpressible ones a stop op, so a cached block can hold
/// them too.
pub fn decode_in<B: Bus>(bytes: &[u8; MAX_LEN], ip: u32, mode: Mode) -> Op<B> {
    let mut dec = Decoder::with_ip(mode.bitness(), bytes, ip as u64, DecoderOptions::LOADALL386);
    let ins = dec.decode();
    if ins.is_invalid() {
        return if dec.last_error() == DecoderError::NoMoreBytes || too_long(bytes, mode) {
            blank(gp_handler::<B>, bytes, MAX_LEN)
        } else {
            blank(system::h_ud::<B>, bytes, ins.len().max(1))
        };
    }
    let p = scan_prefixes(&bytes[..ins.len()]).effective(mode);
    let mut op = blank(system::h_ud::<B>, bytes, ins.len());
    op.o32 = p.o32;
    op.ea = build_ea(&ins, p.a32);
    if p.lock && !lockable(&ins) {
        return op;
    }
    if (0xD8..=0xDF).contains(&bytes[p.count]) {
        fpu_op(&ins, &mut op);
        return op;
    }
    if !build(&ins, p, mode, &mut op) {
        op.handler = system::h_ud::<B>;
    }
    op
}

/// Whether an undecodable window is a valid instruction made longer than 15
/// bytes by redundant prefixes (#GP) rather than an undefined opcode (#UD):
/// decode it again with each kind of prefix kept once.
fn too_long(bytes: &[u8; MAX_LEN], mode: Mode) -> bool {
    let p = scan_prefixes(bytes);
    if p.count == MAX_LEN {
        return true;
    }
    let mut buf = Vec::with_capacity(2 * MAX_LEN);
    let mut seg = None;
    for &b in &bytes[..p.count] {
        if matches!(b, 0x26 | 0x2E | 0x36 | 0x3E | 0x64 | 0x65) {
            seg = Some(b);
        }
    }
    buf.extend(seg);
    if p.o32 {
        buf.push(0x66);
    }
    if p.a32 {
        buf.push(0x67);
    }
    if p.lock {
        buf.push(0xF0);
    }
    if p.rep != 0 {
        buf.push(p.rep);
    }
    let kept = buf.len();
    buf.extend_from_slice(&bytes[p.count..]);
    let mut dec = Decoder::new(mode.bitness(), &buf, DecoderOptions::LOADALL386);
    let ins = dec.decode();
    if ins.is_invalid() {
        return dec.last_error() == DecoderError::NoMoreBytes;
    }
    ins.len() - kept + p.count > MAX_LEN
}

fn gp_handler<B: Bus>(
    _: &mut super::Cpu,
    _: &mut B,
    _: &Op<B>,
) -> Result<super::op::Flow, super::Exception> {
    Err(super::Exception::GP)
}

/// The host-service op for `FE 38 lo hi` (the caller checked the address).
pub fn hostcall<B: Bus>(bytes: &[u8; MAX_LEN]) -> Op<B> {
    let mut op = blank(system::h_hostcall::<B>, bytes, 4);
    op.imm = bytes[2] as u32 | (bytes[3] as u32) << 8;
    op
}

/// LOCK is accepted only on read-modify-write instructions with a memory
/// destination (the 386 raises #UD otherwise).
fn lockable(ins: &Instruction) -> bool {
    matches!(
        ins.mnemonic(),
        M::Add
            | M::Adc
            | M::And
            | M::Btc
            | M::Btr
            | M::Bts
            | M::Cmpxchg
            | M::Cmpxchg8b
            | M::Dec
            | M::Inc
            | M::Neg
            | M::Not
            | M::Or
            | M::Sbb
            | M::Sub
            | M::Xor
            | M::Xadd
            | M::Xchg
    ) && ins.op_count() > 0
        && ins.op0_kind() == OpKind::Memory
}

fn gpr_index(r: Register) -> u8 {
    if r == Register::None {
        NO_REG
    } else {
        (r.number() & 7) as u8
    }
}

fn build_ea(ins: &Instruction, a32: bool) -> Ea {
    let has_mem = (0..ins.op_count()).any(|i| ins.op_kind(i) == OpKind::Memory);
    let segr = ins.memory_segment();
    let seg = if segr.is_segment_register() {
        (segr as u32 - Register::ES as u32) as u8
    } else {
        super::seg::DS as u8
    };
    if !has_mem {
        return Ea {
            seg,
            a32,
            ..Ea::NONE
        };
    }
    Ea {
        base: gpr_index(ins.memory_base()),
        index: gpr_index(ins.memory_index()),
        scale: ins.memory_index_scale().trailing_zeros() as u8,
        disp: ins.memory_displacement32(),
        seg,
        a32,
    }
}

fn mem_width(ins: &Instruction) -> Width {
    match ins.memory_size().size() {
        1 => Width::W8,
        4 => Width::W32,
        _ => Width::W16,
    }
}

/// Converts operand `i`; immediates land in `op.imm`.
fn opnd<B>(ins: &Instruction, i: u32, op: &mut Op<B>) -> Opnd {
    if i >= ins.op_count() {
        return Opnd::None;
    }
    match ins.op_kind(i) {
        OpKind::Register => reg_opnd(ins.op_register(i)),
        OpKind::Memory => Opnd::Mem(mem_width(ins)),
        OpKind::Immediate8
        | OpKind::Immediate16
        | OpKind::Immediate32
        | OpKind::Immediate8to16
        | OpKind::Immediate8to32 => {
            op.imm = ins.immediate(i) as u32;
            Opnd::Imm
        }
        _ => Opnd::None,
    }
}

fn reg_opnd(r: Register) -> Opnd {
    let n = (r.number() & 7) as u8;
    if r.is_gpr8() {
        Opnd::R8(n)
    } else if r.is_gpr16() {
        Opnd::R16(n)
    } else if r.is_gpr32() {
        Opnd::R32(n)
    } else if r.is_segment_register() {
        Opnd::Sreg((r as u32 - Register::ES as u32) as u8)
    } else {
        Opnd::None
    }
}

/// Fills `dst`/`src`/`src2` from the first three operands and sets the width
/// from the destination; masks the immediate to that width.
fn operands<B>(ins: &Instruction, op: &mut Op<B>) {
    op.dst = opnd(ins, 0, op);
    op.src = opnd(ins, 1, op);
    op.src2 = opnd(ins, 2, op);
    op.w = match op.dst {
        Opnd::None | Opnd::Imm => op.src.width(),
        d => d.width(),
    };
    if op.src == Opnd::Imm || op.src2 == Opnd::Imm {
        op.imm &= op.w.mask();
    }
}

fn fpu_op<B: Bus>(ins: &Instruction, op: &mut Op<B>) {
    op.handler = system::h_fpu::<B>;
    let has_mem = (0..ins.op_count()).any(|i| ins.op_kind(i) == OpKind::Memory);
    op.dst = if has_mem {
        Opnd::Mem(Width::W16)
    } else {
        Opnd::None
    };
    op.x87 = Some(Box::new(*ins));
}

fn cc(ins: &Instruction) -> u8 {
    (ins.condition_code() as u8).wrapping_sub(ConditionCode::o as u8)
}

fn rel_disp(ins: &Instruction) -> u32 {
    (ins.near_branch_target() as u32).wrapping_sub(ins.next_ip() as u32)
}

/// Chooses the handler and fills the Op; false means "not an instruction of
/// the mode's instruction set".
fn build<B: Bus>(ins: &Instruction, p: Prefixes, mode: Mode, op: &mut Op<B>) -> bool {
    let m = ins.mnemonic();
    if build_alu(ins, m, op) || build_data(ins, m, op) || build_control(ins, p, m, op) {
        return true;
    }
    if build_system(ins, p, m, op) {
        return true;
    }
    if mode.isa.sse2() && crate::exec::sse::build(ins, op) {
        return true;
    }
    mode.isa.pentium() && build_pentium(ins, m, op)
}

fn is_cmov(m: M) -> bool {
    matches!(
        m,
        M::Cmovo
            | M::Cmovno
            | M::Cmovb
            | M::Cmovae
            | M::Cmove
            | M::Cmovne
            | M::Cmovbe
            | M::Cmova
            | M::Cmovs
            | M::Cmovns
            | M::Cmovp
            | M::Cmovnp
            | M::Cmovl
            | M::Cmovge
            | M::Cmovle
            | M::Cmovg
    )
}

/// The Pentium model's additions to the 486 set (operands already filled by
/// `build_alu`).
fn build_pentium<B: Bus>(ins: &Instruction, m: M, op: &mut Op<B>) -> bool {
    match m {
        M::Rdtsc => set(op, system::h_rdtsc::<B>, 0),
        M::Cmpxchg8b => ins.op0_kind() == OpKind::Memory && set(op, alu::h_cmpxchg8b::<B>, 0),
        // The long NOP (0F 1F /0) reads nothing and changes nothing.
        M::Nop => set(op, data::h_nop::<B>, 0),
        _ if is_cmov(m) => set(op, data::h_cmov::<B>, cc(ins)),
        _ => false,
    }
}

fn set<B>(op: &mut Op<B>, h: Handler<B>, sub: u8) -> bool {
    op.handler = h;
    op.sub = sub;
    true
}

fn build_alu<B: Bus>(ins: &Instruction, m: M, op: &mut Op<B>) -> bool {
    operands(ins, op);
    match m {
        M::Add | M::Or | M::Adc | M::Sbb | M::And | M::Sub | M::Xor | M::Cmp => {
            let sub = match m {
                M::Add => 0,
                M::Or => 1,
                M::Adc => 2,
                M::Sbb => 3,
                M::And => 4,
                M::Sub => 5,
                M::Xor => 6,
                _ => 7,
            };
            set(op, select::alu::<B>(sub, op.dst, op.src), sub)
        }
        M::Test => set(op, select::test::<B>(op.dst, op.src), 0),
        M::Not | M::Neg | M::Inc | M::Dec => {
            let sub = match m {
                M::Not => 0,
                M::Neg => 1,
                M::Inc => 2,
                _ => 3,
            };
            set(op, select::unary::<B>(sub, op.dst), sub)
        }
        M::Rol | M::Ror | M::Rcl | M::Rcr | M::Shl | M::Shr | M::Sal | M::Sar => {
            let sub = match m {
                M::Rol => 0,
                M::Ror => 1,
                M::Rcl => 2,
                M::Rcr => 3,
                M::Shl => 4,
                M::Shr => 5,
                M::Sal => 6,
                _ => 7,
            };
            set(op, select::shift::<B>(op.dst, op.src), sub)
        }
        M::Shld => set(op, alu::h_shxd::<B>, 0),
        M::Shrd => set(op, alu::h_shxd::<B>, 1),
        M::Mul => set(op, alu::h_muldiv::<B>, 0),
        M::Imul if ins.op_count() == 1 => set(op, alu::h_muldiv::<B>, 1),
        M::Imul => set(op, alu::h_imul2::<B>, 0),
        M::Div => set(op, alu::h_muldiv::<B>, 2),
        M::Idiv => set(op, alu::h_muldiv::<B>, 3),
        M::Daa | M::Das | M::Aaa | M::Aas | M::Aam | M::Aad | M::Salc => {
            op.w = Width::W8;
            let sub = match m {
                M::Daa => 0,
                M::Das => 1,
                M::Aaa => 2,
                M::Aas => 3,
                M::Aam => 4,
                M::Aad => 5,
                _ => 6,
            };
            set(op, alu::h_bcd::<B>, sub)
        }
        M::Cbw => set(op, alu::h_cbw::<B>, 0),
        M::Cwde => set(op, alu::h_cbw::<B>, 1),
        M::Cwd => set(op, alu::h_cbw::<B>, 2),
        M::Cdq => set(op, alu::h_cbw::<B>, 3),
        M::Bt => set(op, alu::h_bt::<B>, 0),
        M::Bts => set(op, alu::h_bt::<B>, 1),
        M::Btr => set(op, alu::h_bt::<B>, 2),
        M::Btc => set(op, alu::h_bt::<B>, 3),
        // A 486 ignores F3 before 0F BC/BD: TZCNT/LZCNT encodings are BSF/BSR.
        M::Bsf | M::Tzcnt => set(op, alu::h_bscan::<B>, 0),
        M::Bsr | M::Lzcnt => set(op, alu::h_bscan::<B>, 1),
        M::Xadd => set(op, alu::h_xadd::<B>, 0),
        M::Cmpxchg => set(op, alu::h_cmpxchg::<B>, 0),
        M::Bswap => set(op, alu::h_bswap::<B>, 0),
        _ => false,
    }
}

fn is_setcc(m: M) -> bool {
    matches!(
        m,
        M::Seto
            | M::Setno
            | M::Setb
            | M::Setae
            | M::Sete
            | M::Setne
            | M::Setbe
            | M::Seta
            | M::Sets
            | M::Setns
            | M::Setp
            | M::Setnp
            | M::Setl
            | M::Setge
            | M::Setle
            | M::Setg
    )
}

fn build_data<B: Bus>(ins: &Instruction, m: M, op: &mut Op<B>) -> bool {
    let stack_w = if op.o32 { Width::W32 } else { Width::W16 };
    match m {
        M::Mov => build_mov(ins, op),
        M::Movzx => set(op, select::movx::<B>(op.dst, op.src), 0),
        M::Movsx => set(op, select::movx::<B>(op.dst, op.src), 1),
        M::Xchg => set(op, data::h_xchg::<B>, 0),
        M::Nop => matches!(ins.code(), Code::Nopw | Code::Nopd) && set(op, data::h_nop::<B>, 0),
        M::Pause => set(op, data::h_nop::<B>, 0),
        M::Lea => set(op, select::lea::<B>(op.dst), 0),
        M::Les | M::Lds | M::Lss | M::Lfs | M::Lgs => {
            let s = match m {
                M::Les => 0,
                M::Lss => 2,
                M::Lds => 3,
                M::Lfs => 4,
                _ => 5,
            };
            set(op, data::h_lfar::<B>, s)
        }
        M::Xlatb => {
            op.w = Width::W8;
            set(op, data::h_xlat::<B>, 0)
        }
        M::Push | M::Pop => {
            op.w = stack_w;
            if op.src == Opnd::Imm {
                op.imm = ins.immediate(0) as u32 & stack_w.mask();
            }
            if m == M::Push {
                set(op, select::push::<B>(op.dst), 0)
            } else {
                set(op, select::pop::<B>(op.dst), 0)
            }
        }
        M::Pusha | M::Pushad => set(op, data::h_pusha::<B>, 0),
        M::Popa | M::Popad => set(op, data::h_popa::<B>, 0),
        M::Pushf | M::Pushfd => set(op, data::h_pushf::<B>, 0),
        M::Popf | M::Popfd => set(op, data::h_popf::<B>, 0),
        M::Lahf => set(op, data::h_lahf::<B>, 0),
        M::Sahf => set(op, data::h_sahf::<B>, 0),
        M::Enter => {
            op.imm = ins.immediate16() as u32;
            op.imm2 = ins.immediate8_2nd() as u32;
            set(op, data::h_enter::<B>, 0)
        }
        M::Leave => set(op, data::h_leave::<B>, 0),
        _ if is_setcc(m) => set(op, data::h_setcc::<B>, cc(ins)),
        _ => false,
    }
}

fn build_mov<B: Bus>(ins: &Instruction, op: &mut Op<B>) -> bool {
    let (r0, r1) = (ins.op0_register(), ins.op1_register());
    if let Opnd::Sreg(s) = op.dst {
        // MOV CS, r/m is #UD on the 386.
        return s != super::seg::CS as u8 && set(op, data::h_mov_sreg::<B>, s);
    }
    if r0.is_cr() || r1.is_cr() || r0.is_dr() || r1.is_dr() {
        let (to_ctl, ctl) = if r0.is_cr() || r0.is_dr() {
            (true, r0)
        } else {
            (false, r1)
        };
        let n = ctl.number() as u32;
        if ctl.is_cr() && !matches!(n, 0 | 2 | 3) {
            return false;
        }
        op.imm = n;
        let sub = (ctl.is_dr() as u8) * 2 + to_ctl as u8;
        return set(op, system::h_movcr::<B>, sub);
    }
    if r0.is_tr() || r1.is_tr() {
        return set(op, system::h_stop::<B>, 1);
    }
    set(op, select::mov::<B>(op.dst, op.src), 0)
}

fn build_control<B: Bus>(ins: &Instruction, p: Prefixes, m: M, op: &mut Op<B>) -> bool {
    match ins.code() {
        Code::Jmp_ptr1616 | Code::Jmp_ptr1632 | Code::Call_ptr1616 | Code::Call_ptr1632 => {
            op.imm = ins.far_branch32();
            op.imm2 = ins.far_branch_selector() as u32;
            let h = if m == M::Jmp {
                control::h_jmp_far::<B>
            } else {
                control::h_call_far::<B>
            };
            return set(op, h, 0);
        }
        Code::Jmp_m1616 | Code::Jmp_m1632 => return set(op, control::h_jmp_far_ind::<B>, 0),
        Code::Call_m1616 | Code::Call_m1632 => return set(op, control::h_call_far_ind::<B>, 0),
        Code::Jmp_rm16 | Code::Jmp_rm32 => return set(op, control::h_jmp_ind::<B>, 0),
        Code::Call_rm16 | Code::Call_rm32 => return set(op, control::h_call_ind::<B>, 0),
        _ => {}
    }
    if ins.is_jcc_short_or_near() {
        op.imm = rel_disp(ins);
        let c = cc(ins);
        return set(op, select::jcc::<B>(c), c);
    }
    match m {
        M::Jmp => {
            op.imm = rel_disp(ins);
            set(op, control::h_jmp_rel::<B>, 0)
        }
        M::Call => {
            op.imm = rel_disp(ins);
            set(op, control::h_call_rel::<B>, 0)
        }
        M::Ret | M::Retf => {
            op.imm = if ins.op_count() == 1 {
                ins.immediate16() as u32
            } else {
                0
            };
            set(op, control::h_ret::<B>, (m == M::Retf) as u8)
        }
        M::Loop | M::Loope | M::Loopne | M::Jcxz | M::Jecxz => {
            op.imm = rel_disp(ins);
            op.ea.a32 = p.a32;
            let sub = match m {
                M::Loop => 0,
                M::Loope => 1,
                M::Loopne => 2,
                _ => 3,
            };
            set(op, control::h_loop::<B>, sub)
        }
        M::Int => {
            op.imm = ins.immediate8() as u32;
            set(op, control::h_int::<B>, 0)
        }
        M::Int3 => set(op, control::h_int::<B>, 1),
        M::Into => set(op, control::h_int::<B>, 2),
        M::Int1 => set(op, control::h_int::<B>, 3),
        M::Iret | M::Iretd => set(op, control::h_iret::<B>, 0),
        M::Bound => set(op, control::h_bound::<B>, 0),
        M::Hlt => set(op, control::h_hlt::<B>, 0),
        M::Clc => set(op, control::h_flagop::<B>, 0),
        M::Stc => set(op, control::h_flagop::<B>, 1),
        M::Cmc => set(op, control::h_flagop::<B>, 2),
        M::Cld => set(op, control::h_flagop::<B>, 3),
        M::Std => set(op, control::h_flagop::<B>, 4),
        M::Cli => set(op, control::h_flagop::<B>, 5),
        M::Sti => set(op, control::h_flagop::<B>, 6),
        _ => false,
    }
}

fn string_kind(code: Code) -> Option<(u8, Width)> {
    use Code as C;
    Some(match code {
        C::Movsb_m8_m8 => (0, Width::W8),
        C::Movsw_m16_m16 => (0, Width::W16),
        C::Movsd_m32_m32 => (0, Width::W32),
        C::Cmpsb_m8_m8 => (1, Width::W8),
        C::Cmpsw_m16_m16 => (1, Width::W16),
        C::Cmpsd_m32_m32 => (1, Width::W32),
        C::Scasb_AL_m8 => (2, Width::W8),
        C::Scasw_AX_m16 => (2, Width::W16),
        C::Scasd_EAX_m32 => (2, Width::W32),
        C::Lodsb_AL_m8 => (3, Width::W8),
        C::Lodsw_AX_m16 => (3, Width::W16),
        C::Lodsd_EAX_m32 => (3, Width::W32),
        C::Stosb_m8_AL => (4, Width::W8),
        C::Stosw_m16_AX => (4, Width::W16),
        C::Stosd_m32_EAX => (4, Width::W32),
        C::Insb_m8_DX => (5, Width::W8),
        C::Insw_m16_DX => (5, Width::W16),
        C::Insd_m32_DX => (5, Width::W32),
        C::Outsb_DX_m8 => (6, Width::W8),
        C::Outsw_DX_m16 => (6, Width::W16),
        C::Outsd_DX_m32 => (6, Width::W32),
        _ => return None,
    })
}

fn build_system<B: Bus>(ins: &Instruction, p: Prefixes, m: M, op: &mut Op<B>) -> bool {
    if let Some((sub, w)) = string_kind(ins.code()) {
        op.w = w;
        op.ea.a32 = p.a32;
        op.rep = match p.rep {
            0xF3 => Rep::RepE,
            0xF2 => Rep::RepNe,
            _ => Rep::None,
        };
        return set(op, string::h_string::<B>, sub);
    }
    match m {
        M::In => set(op, system::h_in::<B>, 0),
        M::Out => {
            op.w = op.src.width();
            set(op, system::h_out::<B>, 0)
        }
        M::Cpuid => set(op, system::h_cpuid::<B>, 0),
        M::Clts => set(op, system::h_clts::<B>, 0),
        M::Smsw => set(op, system::h_smsw::<B>, 0),
        M::Lmsw => set(op, system::h_lmsw::<B>, 0),
        M::Lgdt => set(op, system::h_dtr::<B>, 0),
        M::Lidt => set(op, system::h_dtr::<B>, 1),
        M::Sgdt => set(op, system::h_dtr::<B>, 2),
        M::Sidt => set(op, system::h_dtr::<B>, 3),
        M::Invd | M::Wbinvd => set(op, system::h_priv_nop::<B>, 0),
        M::Invlpg => set(op, system::h_priv_nop::<B>, 1),
        M::Sldt => set(op, sysprot::h_sysreg::<B>, 0),
        M::Str => set(op, sysprot::h_sysreg::<B>, 1),
        M::Lldt => set(op, sysprot::h_sysreg::<B>, 2),
        M::Ltr => set(op, sysprot::h_sysreg::<B>, 3),
        M::Verr => set(op, sysprot::h_verify::<B>, 0),
        M::Verw => set(op, sysprot::h_verify::<B>, 1),
        M::Lar => set(op, sysprot::h_larlsl::<B>, 0),
        M::Lsl => set(op, sysprot::h_larlsl::<B>, 1),
        M::Arpl => set(op, sysprot::h_arpl::<B>, 0),
        M::Wait => set(op, system::h_wait::<B>, 0),
        M::Loadall => set(op, system::h_stop::<B>, 0),
        _ => false,
    }
}

/// Whether a LOCK prefix on these bytes is accepted (the instruction is
/// lockable with a memory destination); used by harnesses to classify tests.
pub fn lock_accepted(bytes: &[u8]) -> bool {
    let mut buf = [0u8; MAX_LEN];
    let n = bytes.len().min(MAX_LEN);
    buf[..n].copy_from_slice(&bytes[..n]);
    let mut dec = Decoder::with_ip(16, &buf, 0, DecoderOptions::LOADALL386);
    let ins = dec.decode();
    !ins.is_invalid() && lockable(&ins)
}
