//! The semantics of every x87 instruction in the D8-DF space on a 387/486:
//! operand fetch, stack faults, the masked and unmasked exception responses,
//! condition codes, and the environment images (FSTENV/FLDENV/FSAVE/FRSTOR).
//!
//! Owns the instruction-level rules (which operand is which, what pops, what
//! an unmasked exception leaves behind). Number crunching is delegated to
//! [`super::softfloat`] and [`super::transcendental`]; it must not compute
//! effective addresses or deliver exceptions (no IRQ13).

use super::formats::{self, MemFormat};
use super::opcode;
use super::softfloat::{self, Class, Flags, Ordering, Rounding, DE, F80, IE, OE, SF, UE, ZE};
use super::transcendental;
use super::{sw, tag, tag_of, Fpu, FpuContext, FpuMemory};
use crate::Exception;
use iced_x86::{Code, Instruction, OpKind, Register};

/// The binary arithmetic operations.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ArithOp {
    Add,
    Mul,
    Sub,
    Subr,
    Div,
    Divr,
}

/// The second operand of an arithmetic or compare instruction.
#[derive(Clone, Copy, Debug)]
enum Source {
    Reg(usize),
    Mem(formats::Loaded),
}

fn mem<'m>(cx: &'m mut FpuContext<'_>) -> Result<&'m mut dyn FpuMemory, Exception> {
    match cx.mem.as_mut() {
        Some(m) => Ok(&mut **m),
        // A memory form without a memory window is a caller bug: refuse softly.
        None => Err(Exception::UD),
    }
}

fn read_mem(cx: &mut FpuContext<'_>, disp: u32, buf: &mut [u8]) -> Result<(), Exception> {
    mem(cx)?.read(disp, buf)
}

fn write_mem(cx: &mut FpuContext<'_>, disp: u32, buf: &[u8]) -> Result<(), Exception> {
    mem(cx)?.write(disp, buf)
}

fn load_operand(cx: &mut FpuContext<'_>, fmt: MemFormat) -> Result<formats::Loaded, Exception> {
    let mut b = [0u8; 10];
    read_mem(cx, 0, &mut b[..fmt.size()])?;
    Ok(formats::decode(fmt, &b))
}

/// ST(i) index of a register operand.
fn sti(r: Register) -> usize {
    (r as usize).wrapping_sub(Register::ST0 as usize) & 7
}

/// The ST(i) register of a two-register form (the operand that is not the
/// implied ST0, or 0).
fn reg_operand(ins: &Instruction) -> usize {
    if ins.op_count() == 0 {
        return 1; // FCOM/FUCOM/FXCH without operands mean ST(1)
    }
    if ins.op_count() == 1 {
        return sti(ins.op0_register());
    }
    let a = sti(ins.op0_register());
    let b = sti(ins.op1_register());
    if a != 0 {
        a
    } else {
        b
    }
}

/// Codes that exist on a 486 but are "control" instructions: they do not
/// update FIP/FOP/FDP.
fn is_control(code: Code) -> bool {
    use Code::*;
    matches!(
        code,
        Fninit
            | Finit
            | Fnclex
            | Fclex
            | Fldcw_m2byte
            | Fnstcw_m2byte
            | Fstcw_m2byte
            | Fnstsw_m2byte
            | Fstsw_m2byte
            | Fnstsw_AX
            | Fstsw_AX
            | Fnstenv_m14byte
            | Fstenv_m14byte
            | Fnstenv_m28byte
            | Fstenv_m28byte
            | Fldenv_m14byte
            | Fldenv_m28byte
            | Fnsave_m94byte
            | Fsave_m94byte
            | Fnsave_m108byte
            | Fsave_m108byte
            | Frstor_m94byte
            | Frstor_m108byte
            | Fneni
            | Feni
            | Fndisi
            | Fdisi
            | Fnsetpm
            | Fsetpm
    )
}

pub fn execute(f: &mut Fpu, ins: &Instruction, mut cx: FpuContext<'_>) -> Result<(), Exception> {
    let code = ins.code();
    if is_control(code) {
        return execute_control(f, code, &mut cx);
    }
    if opcode::encoding(code).is_none() || is_not_486(code) {
        return Err(Exception::UD);
    }
    let has_mem = (0..ins.op_count()).any(|i| ins.op_kind(i) == OpKind::Memory);
    // Memory operands are read before any state changes, so a fault leaves
    // the FPU untouched.
    let loaded = match mem_load_format(code) {
        Some(fmt) if has_mem => Some(load_operand(&mut cx, fmt)?),
        _ => None,
    };
    let (old_fcs, old_fip, old_fop, old_fds, old_fdp) = (f.fcs, f.fip, f.fop, f.fds, f.fdp);
    f.fcs = cx.cs;
    f.fip = cx.ip;
    f.fop = opcode::last_opcode(ins);
    if has_mem {
        f.fds = cx.data_seg;
        f.fdp = cx.data_off;
    }
    let result = execute_numeric(f, ins, code, loaded, &mut cx);
    if result.is_err() {
        // A store that faulted: the instruction did not happen.
        (f.fcs, f.fip, f.fop, f.fds, f.fdp) = (old_fcs, old_fip, old_fop, old_fds, old_fdp);
    }
    result
}

/// P6/SSE3/387SL/Cyrix/287XL encodings a 486 raises #UD for.
fn is_not_486(code: Code) -> bool {
    use Code::*;
    matches!(
        code,
        Fcmovb_st0_sti
            | Fcmove_st0_sti
            | Fcmovbe_st0_sti
            | Fcmovu_st0_sti
            | Fcmovnb_st0_sti
            | Fcmovne_st0_sti
            | Fcmovnbe_st0_sti
            | Fcmovnu_st0_sti
            | Fucomi_st0_sti
            | Fcomi_st0_sti
            | Fucomip_st0_sti
            | Fcomip_st0_sti
            | Fisttp_m16int
            | Fisttp_m32int
            | Fisttp_m64int
            | Fstdw_AX
            | Fstsg_AX
            | Fnstdw_AX
            | Fnstsg_AX
            | Frstpm
            | Ftstp
            | Frint2
            | Frichop
            | Frinear
    )
}

/// The memory format an instruction reads, if it reads one.
fn mem_load_format(code: Code) -> Option<MemFormat> {
    use Code::*;
    Some(match code {
        Fadd_m32fp | Fmul_m32fp | Fcom_m32fp | Fcomp_m32fp | Fsub_m32fp | Fsubr_m32fp
        | Fdiv_m32fp | Fdivr_m32fp | Fld_m32fp => MemFormat::F32,
        Fadd_m64fp | Fmul_m64fp | Fcom_m64fp | Fcomp_m64fp | Fsub_m64fp | Fsubr_m64fp
        | Fdiv_m64fp | Fdivr_m64fp | Fld_m64fp => MemFormat::F64,
        Fld_m80fp => MemFormat::F80,
        Fiadd_m16int | Fimul_m16int | Ficom_m16int | Ficomp_m16int | Fisub_m16int
        | Fisubr_m16int | Fidiv_m16int | Fidivr_m16int | Fild_m16int => MemFormat::I16,
        Fiadd_m32int | Fimul_m32int | Ficom_m32int | Ficomp_m32int | Fisub_m32int
        | Fisubr_m32int | Fidiv_m32int | Fidivr_m32int | Fild_m32int => MemFormat::I32,
        Fild_m64int => MemFormat::I64,
        Fbld_m80bcd => MemFormat::Bcd,
        _ => return None,
    })
}

fn execute_control(f: &mut Fpu, code: Code, cx: &mut FpuContext<'_>) -> Result<(), Exception> {
    use Code::*;
    match code {
        Fninit | Finit => f.reset(),
        Fnclex | Fclex => f.status &= !(0x00FF | sw::B),
        Fldcw_m2byte => {
            let mut b = [0u8; 2];
            read_mem(cx, 0, &mut b)?;
            f.set_control(u16::from_le_bytes(b));
        }
        Fnstcw_m2byte | Fstcw_m2byte => write_mem(cx, 0, &f.control.to_le_bytes())?,
        Fnstsw_m2byte | Fstsw_m2byte => write_mem(cx, 0, &f.status_word().to_le_bytes())?,
        Fnstsw_AX | Fstsw_AX => *cx.eax = (*cx.eax & 0xFFFF_0000) | f.status_word() as u32,
        Fnstenv_m14byte | Fstenv_m14byte | Fnstenv_m28byte | Fstenv_m28byte => {
            let wide = matches!(code, Fnstenv_m28byte | Fstenv_m28byte);
            let (img, n) = env_image(f, wide);
            write_mem(cx, 0, &img[..n])?;
            f.control |= 0x3F;
            f.update_es();
        }
        Fldenv_m14byte | Fldenv_m28byte => {
            let wide = code == Fldenv_m28byte;
            let n = if wide { 28 } else { 14 };
            let mut img = [0u8; 28];
            read_mem(cx, 0, &mut img[..n])?;
            load_env(f, &img, wide);
        }
        Fnsave_m94byte | Fsave_m94byte | Fnsave_m108byte | Fsave_m108byte => {
            let wide = matches!(code, Fnsave_m108byte | Fsave_m108byte);
            let (env, n) = env_image(f, wide);
            let mut img = [0u8; 108];
            img[..n].copy_from_slice(&env[..n]);
            for i in 0..8 {
                img[n + 10 * i..n + 10 * i + 10].copy_from_slice(&f.st(i).to_le_bytes());
            }
            write_mem(cx, 0, &img[..n + 80])?;
            f.reset();
        }
        Frstor_m94byte | Frstor_m108byte => {
            let wide = code == Frstor_m108byte;
            let n = if wide { 28 } else { 14 };
            let mut img = [0u8; 108];
            read_mem(cx, 0, &mut img[..n + 80])?;
            // Registers are in stack order from the TOP being loaded.
            let sw_at = if wide { 4 } else { 2 };
            let sw_word = u16::from_le_bytes([img[sw_at], img[sw_at + 1]]);
            let top = ((sw_word >> 11) & 7) as usize;
            for i in 0..8 {
                let mut r = [0u8; 10];
                r.copy_from_slice(&img[n + 10 * i..n + 10 * i + 10]);
                f.regs[(top + i) & 7] = F80::from_le_bytes(r);
            }
            load_env(f, &img, wide);
        }
        // FENI/FDISI/FSETPM: no-ops on a 387+.
        _ => {}
    }
    Ok(())
}

/// The real-mode environment image (14 or 28 bytes).
pub fn env_image(f: &Fpu, wide: bool) -> ([u8; 28], usize) {
    let mut img = [0u8; 28];
    let ip = ((f.fcs as u32) << 4).wrapping_add(f.fip);
    let dp = ((f.fds as u32) << 4).wrapping_add(f.fdp);
    let tw = f.tag_word();
    if wide {
        let words: [u32; 7] = [
            0xFFFF_0000 | f.control as u32,
            0xFFFF_0000 | f.status_word() as u32,
            0xFFFF_0000 | tw as u32,
            0xFFFF_0000 | (ip & 0xFFFF),
            ((ip & 0xFFFF_0000) >> 4) | (f.fop as u32 & 0x7FF),
            0xFFFF_0000 | (dp & 0xFFFF),
            (dp & 0xFFFF_0000) >> 4,
        ];
        for (i, w) in words.iter().enumerate() {
            img[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
        }
        (img, 28)
    } else {
        let words: [u16; 7] = [
            f.control,
            f.status_word(),
            tw,
            ip as u16,
            (((ip >> 16) & 0xF) << 12) as u16 | (f.fop & 0x7FF),
            dp as u16,
            (((dp >> 16) & 0xF) << 12) as u16,
        ];
        for (i, w) in words.iter().enumerate() {
            img[2 * i..2 * i + 2].copy_from_slice(&w.to_le_bytes());
        }
        (img, 14)
    }
}

/// Loads a real-mode environment image: control, status (with TOP), tags
/// (only "empty" is taken from the image; the rest is recomputed from the
/// registers as a 387+ does), and the instruction and data pointers (kept as
/// linear addresses with a zero selector).
pub fn load_env(f: &mut Fpu, img: &[u8], wide: bool) {
    let (cw, swd, tw, ip, fop, dp) = if wide {
        let d = |i: usize| {
            u32::from_le_bytes([img[4 * i], img[4 * i + 1], img[4 * i + 2], img[4 * i + 3]])
        };
        let ip = (d(3) & 0xFFFF) | ((d(4) << 4) & 0xFFFF_0000);
        let dp = (d(5) & 0xFFFF) | ((d(6) << 4) & 0xFFFF_0000);
        (
            d(0) as u16,
            d(1) as u16,
            d(2) as u16,
            ip,
            (d(4) & 0x7FF) as u16,
            dp,
        )
    } else {
        let w = |i: usize| u16::from_le_bytes([img[2 * i], img[2 * i + 1]]) as u32;
        let ip = w(3) | ((w(4) >> 12) << 16);
        let dp = w(5) | ((w(6) >> 12) << 16);
        (
            w(0) as u16,
            w(1) as u16,
            w(2) as u16,
            ip,
            (w(4) & 0x7FF) as u16,
            dp,
        )
    };
    f.control = (cw & 0x1F3F) | 0x0040;
    f.status = swd;
    for p in 0..8 {
        let t = if (tw >> (2 * p)) & 3 == tag::EMPTY {
            tag::EMPTY
        } else {
            tag_of(f.regs[p])
        };
        f.set_tag(p, t);
    }
    f.fcs = 0;
    f.fip = ip;
    f.fop = fop;
    f.fds = 0;
    f.fdp = dp;
    f.update_es();
}

fn rounding(f: &Fpu, bits: u32) -> Rounding {
    Rounding {
        rc: f.rc(),
        bits,
        masks: f.control & 0x3F,
    }
}

/// Masked stack-underflow response: IE|SF, C1=0; if masked, the destination
/// (if any) receives the indefinite and the pops happen.
fn stack_underflow(f: &mut Fpu, dst: Option<usize>, pops: u32) {
    f.set_c1(false);
    f.raise(IE | SF);
    if f.unmasked(IE) != 0 {
        return;
    }
    if let Some(d) = dst {
        f.set_st(d, F80::INDEFINITE);
    }
    for _ in 0..pops {
        f.pop();
    }
}

/// Stack-overflow response for a push: IE|SF, C1=1; masked, the indefinite is
/// pushed.
fn stack_overflow(f: &mut Fpu) {
    f.set_c1(true);
    f.raise(IE | SF);
    if f.unmasked(IE) == 0 {
        f.push(F80::INDEFINITE);
    }
}

/// Commits a computed register result: an unmasked IE/DE/ZE leaves the
/// destination and TOP unchanged (only the flags are recorded); otherwise
/// the result is written (OE/UE unmasked: already exponent-wrapped), C1 is
/// the rounded-up bit and the pops happen.
fn commit(f: &mut Fpu, dst: usize, value: F80, fl: Flags, pops: u32) {
    let fatal = f.unmasked(fl.exc & (IE | DE | ZE));
    if fatal != 0 {
        f.raise(fl.exc & (IE | DE | ZE));
        return;
    }
    f.set_st(dst, value);
    f.set_c1(fl.up);
    f.raise(fl.exc);
    for _ in 0..pops {
        f.pop();
    }
}

pub fn compute(op: ArithOp, dst: F80, src: F80, r: Rounding, fl: &mut Flags) -> F80 {
    match op {
        ArithOp::Add => softfloat::add(dst, src, false, r, fl),
        ArithOp::Sub => softfloat::add(dst, src, true, r, fl),
        ArithOp::Subr => softfloat::add(src, dst, true, r, fl),
        ArithOp::Mul => softfloat::mul(dst, src, r, fl),
        ArithOp::Div => softfloat::div(dst, src, r, fl),
        ArithOp::Divr => softfloat::div(src, dst, r, fl),
    }
}

fn is_nan_or_unsupported(v: F80) -> bool {
    matches!(v.class(), Class::QNaN | Class::SNaN | Class::Unsupported)
}

/// dst := dst op src, then `pops` pops.
fn arith(f: &mut Fpu, op: ArithOp, dst: usize, src: Source, pops: u32) {
    let src_empty = matches!(src, Source::Reg(i) if f.is_empty(i));
    if f.is_empty(dst) || src_empty {
        stack_underflow(f, Some(dst), pops);
        return;
    }
    let a = f.st(dst);
    let (b, mem_denormal) = match src {
        Source::Reg(i) => (f.st(i), false),
        Source::Mem(l) => (l.value, l.denormal),
    };
    let mut fl = Flags::default();
    let v = compute(op, a, b, rounding(f, f.precision_bits()), &mut fl);
    if mem_denormal && !is_nan_or_unsupported(a) {
        fl.raise(DE);
    }
    commit(f, dst, v, fl, pops);
}

/// Compares ST(0) with src and sets C3 C2 C0 (C1 = 0), then pops.
fn compare(f: &mut Fpu, src: Source, quiet: bool, pops: u32) {
    let src_empty = matches!(src, Source::Reg(i) if f.is_empty(i));
    if f.is_empty(0) || src_empty {
        f.raise(IE | SF);
        if f.unmasked(IE) == 0 {
            f.set_cc(true, true, false, true);
            for _ in 0..pops {
                f.pop();
            }
        } else {
            f.set_c1(false);
        }
        return;
    }
    let a = f.st(0);
    let (b, mem_denormal) = match src {
        Source::Reg(i) => (f.st(i), false),
        Source::Mem(l) => (l.value, l.denormal),
    };
    let mut fl = Flags::default();
    let ord = softfloat::compare(a, b, quiet, &mut fl);
    if mem_denormal && ord != Ordering::Unordered {
        fl.raise(DE);
    }
    if f.unmasked(fl.exc & (IE | DE)) != 0 {
        f.raise(fl.exc);
        return;
    }
    set_compare_cc(f, ord);
    f.raise(fl.exc);
    for _ in 0..pops {
        f.pop();
    }
}

fn set_compare_cc(f: &mut Fpu, ord: Ordering) {
    match ord {
        Ordering::Greater => f.set_cc(false, false, false, false),
        Ordering::Less => f.set_cc(false, false, false, true),
        Ordering::Equal => f.set_cc(true, false, false, false),
        Ordering::Unordered => f.set_cc(true, true, false, true),
    }
}

/// Pushes a loaded value (FLD/FILD/FBLD/constants): stack overflow if ST(7)
/// is in use; an unmasked IE/DE from the conversion leaves the stack alone.
fn push_value(f: &mut Fpu, v: F80, fl: Flags) {
    if !f.is_empty(7) {
        stack_overflow(f);
        return;
    }
    if f.unmasked(fl.exc & (IE | DE)) != 0 {
        f.raise(fl.exc);
        return;
    }
    f.push(v);
    f.set_c1(false);
    f.raise(fl.exc);
}

/// Stores ST(0) to memory in `fmt`, then pops `pops` times.
fn store_mem(
    f: &mut Fpu,
    cx: &mut FpuContext<'_>,
    fmt: MemFormat,
    pops: u32,
) -> Result<(), Exception> {
    if f.is_empty(0) {
        if f.unmasked(IE) == 0 {
            write_mem(cx, 0, &formats::indefinite(fmt)[..fmt.size()])?;
        }
        stack_underflow(f, None, pops);
        return Ok(());
    }
    let mut fl = Flags::default();
    let bytes = formats::encode(fmt, f.st(0), rounding(f, 64), &mut fl);
    if f.unmasked(fl.exc & (IE | OE | UE)) != 0 {
        // Memory is left unchanged and the stack is not popped.
        f.raise(fl.exc);
        return Ok(());
    }
    write_mem(cx, 0, &bytes[..fmt.size()])?;
    f.set_c1(fl.up);
    f.raise(fl.exc);
    for _ in 0..pops {
        f.pop();
    }
    Ok(())
}

fn execute_numeric(
    f: &mut Fpu,
    ins: &Instruction,
    code: Code,
    loaded: Option<formats::Loaded>,
    cx: &mut FpuContext<'_>,
) -> Result<(), Exception> {
    use ArithOp::*;
    use Code::*;
    let i = reg_operand(ins);
    let memsrc = || match loaded {
        Some(l) => Source::Mem(l),
        None => Source::Reg(1),
    };
    match code {
        // Arithmetic: ST(0) op memory.
        Fadd_m32fp | Fadd_m64fp | Fiadd_m16int | Fiadd_m32int => arith(f, Add, 0, memsrc(), 0),
        Fmul_m32fp | Fmul_m64fp | Fimul_m16int | Fimul_m32int => arith(f, Mul, 0, memsrc(), 0),
        Fsub_m32fp | Fsub_m64fp | Fisub_m16int | Fisub_m32int => arith(f, Sub, 0, memsrc(), 0),
        Fsubr_m32fp | Fsubr_m64fp | Fisubr_m16int | Fisubr_m32int => arith(f, Subr, 0, memsrc(), 0),
        Fdiv_m32fp | Fdiv_m64fp | Fidiv_m16int | Fidiv_m32int => arith(f, Div, 0, memsrc(), 0),
        Fdivr_m32fp | Fdivr_m64fp | Fidivr_m16int | Fidivr_m32int => arith(f, Divr, 0, memsrc(), 0),
        // ST(0) := ST(0) op ST(i).
        Fadd_st0_sti => arith(f, Add, 0, Source::Reg(i), 0),
        Fmul_st0_sti => arith(f, Mul, 0, Source::Reg(i), 0),
        Fsub_st0_sti => arith(f, Sub, 0, Source::Reg(i), 0),
        Fsubr_st0_sti => arith(f, Subr, 0, Source::Reg(i), 0),
        Fdiv_st0_sti => arith(f, Div, 0, Source::Reg(i), 0),
        Fdivr_st0_sti => arith(f, Divr, 0, Source::Reg(i), 0),
        // ST(i) := ST(i) op ST(0) [and pop].
        Fadd_sti_st0 => arith(f, Add, i, Source::Reg(0), 0),
        Fmul_sti_st0 => arith(f, Mul, i, Source::Reg(0), 0),
        Fsub_sti_st0 => arith(f, Sub, i, Source::Reg(0), 0),
        Fsubr_sti_st0 => arith(f, Subr, i, Source::Reg(0), 0),
        Fdiv_sti_st0 => arith(f, Div, i, Source::Reg(0), 0),
        Fdivr_sti_st0 => arith(f, Divr, i, Source::Reg(0), 0),
        Faddp_sti_st0 => arith(f, Add, i, Source::Reg(0), 1),
        Fmulp_sti_st0 => arith(f, Mul, i, Source::Reg(0), 1),
        Fsubp_sti_st0 => arith(f, Sub, i, Source::Reg(0), 1),
        Fsubrp_sti_st0 => arith(f, Subr, i, Source::Reg(0), 1),
        Fdivp_sti_st0 => arith(f, Div, i, Source::Reg(0), 1),
        Fdivrp_sti_st0 => arith(f, Divr, i, Source::Reg(0), 1),

        // Compares.
        Fcom_m32fp | Fcom_m64fp | Ficom_m16int | Ficom_m32int => compare(f, memsrc(), false, 0),
        Fcomp_m32fp | Fcomp_m64fp | Ficomp_m16int | Ficomp_m32int => compare(f, memsrc(), false, 1),
        Fcom_st0_sti | Fcom_st0_sti_DCD0 => compare(f, Source::Reg(i), false, 0),
        Fcomp_st0_sti | Fcomp_st0_sti_DCD8 | Fcomp_st0_sti_DED0 => {
            compare(f, Source::Reg(i), false, 1)
        }
        Fcompp => compare(f, Source::Reg(1), false, 2),
        Fucom_st0_sti => compare(f, Source::Reg(i), true, 0),
        Fucomp_st0_sti => compare(f, Source::Reg(i), true, 1),
        Fucompp => compare(f, Source::Reg(1), true, 2),
        Ftst => {
            let zero = formats::Loaded {
                value: F80::ZERO,
                denormal: false,
            };
            compare(f, Source::Mem(zero), false, 0)
        }
        Fxam => fxam(f),

        // Loads.
        Fld_m32fp | Fld_m64fp => {
            let l = loaded.unwrap_or(formats::Loaded {
                value: F80::INDEFINITE,
                denormal: false,
            });
            let mut fl = Flags::default();
            let v = if is_nan_or_unsupported(l.value) {
                softfloat::propagate_nan1(l.value, &mut fl)
            } else {
                l.value
            };
            if l.denormal {
                fl.raise(DE);
            }
            push_value(f, v, fl);
        }
        Fld_m80fp | Fild_m16int | Fild_m32int | Fild_m64int | Fbld_m80bcd => {
            let v = loaded.map(|l| l.value).unwrap_or(F80::INDEFINITE);
            push_value(f, v, Flags::default());
        }
        Fld_sti => {
            if !f.is_empty(7) {
                stack_overflow(f);
            } else if f.is_empty(i) {
                f.set_c1(false);
                f.raise(IE | SF);
                if f.unmasked(IE) == 0 {
                    f.push(F80::INDEFINITE);
                }
            } else {
                let v = f.st(i);
                push_value(f, v, Flags::default());
            }
        }
        Fld1 | Fldz | Fldpi | Fldl2e | Fldl2t | Fldlg2 | Fldln2 => {
            let v = transcendental::constant(code, f.rc());
            push_value(f, v, Flags::default());
        }

        // Stores.
        Fst_m32fp => store_mem(f, cx, MemFormat::F32, 0)?,
        Fstp_m32fp => store_mem(f, cx, MemFormat::F32, 1)?,
        Fst_m64fp => store_mem(f, cx, MemFormat::F64, 0)?,
        Fstp_m64fp => store_mem(f, cx, MemFormat::F64, 1)?,
        Fstp_m80fp => store_mem(f, cx, MemFormat::F80, 1)?,
        Fist_m16int => store_mem(f, cx, MemFormat::I16, 0)?,
        Fistp_m16int => store_mem(f, cx, MemFormat::I16, 1)?,
        Fist_m32int => store_mem(f, cx, MemFormat::I32, 0)?,
        Fistp_m32int => store_mem(f, cx, MemFormat::I32, 1)?,
        Fistp_m64int => store_mem(f, cx, MemFormat::I64, 1)?,
        Fbstp_m80bcd => store_mem(f, cx, MemFormat::Bcd, 1)?,
        Fst_sti | Fstp_sti | Fstpnce_sti | Fstp_sti_DFD0 | Fstp_sti_DFD8 => {
            let pops = if code == Fst_sti { 0 } else { 1 };
            if f.is_empty(0) {
                stack_underflow(f, Some(i), pops);
            } else {
                let v = f.st(0);
                f.set_st(i, v);
                f.set_c1(false);
                for _ in 0..pops {
                    f.pop();
                }
            }
        }

        // Register housekeeping.
        Fxch_st0_sti | Fxch_st0_sti_DDC8 | Fxch_st0_sti_DFC8 => {
            if f.is_empty(0) || f.is_empty(i) {
                f.set_c1(false);
                f.raise(IE | SF);
                if f.unmasked(IE) != 0 {
                    return Ok(());
                }
                for r in [0, i] {
                    if f.is_empty(r) {
                        f.set_st(r, F80::INDEFINITE);
                    }
                }
            }
            let (a, b) = (f.st(0), f.st(i));
            let (pa, pb) = (f.phys(0), f.phys(i));
            let (ta, tb) = (f.tag(pa), f.tag(pb));
            f.regs[pa] = b;
            f.regs[pb] = a;
            f.set_tag(pa, tb);
            f.set_tag(pb, ta);
            f.set_c1(false);
        }
        Ffree_sti => {
            let p = f.phys(i);
            f.set_tag(p, tag::EMPTY);
        }
        Ffreep_sti => {
            let p = f.phys(i);
            f.set_tag(p, tag::EMPTY);
            f.pop();
        }
        Fincstp => {
            f.set_top(f.top() + 1);
            f.set_c1(false);
        }
        Fdecstp => {
            f.set_top(f.top().wrapping_sub(1));
            f.set_c1(false);
        }
        Fnop => {}
        Fchs | Fabs => {
            if f.is_empty(0) {
                stack_underflow(f, Some(0), 0);
            } else {
                let v = f.st(0);
                f.set_st(0, if code == Fchs { v.negate() } else { v.abs() });
                f.set_c1(false);
            }
        }

        // One-operand arithmetic.
        Fsqrt => unary(f, |v, f| {
            let mut fl = Flags::default();
            (
                softfloat::sqrt(v, rounding(f, f.precision_bits()), &mut fl),
                fl,
            )
        }),
        Frndint => unary(f, |v, f| {
            let mut fl = Flags::default();
            (softfloat::round_to_int(v, f.rc(), &mut fl), fl)
        }),
        F2xm1 => unary(f, |v, f| {
            let mut fl = Flags::default();
            (transcendental::f2xm1(v, rounding(f, 64), &mut fl), fl)
        }),
        Fscale => fscale(f),
        Fxtract => fxtract(f),
        Fprem => fprem(f, false),
        Fprem1 => fprem(f, true),
        Fsin | Fcos | Fptan | Fsincos => trig(f, code),
        Fpatan | Fyl2x | Fyl2xp1 => binary_pop(f, code),
        _ => return Err(Exception::UD),
    }
    Ok(())
}

fn unary(f: &mut Fpu, op: impl FnOnce(F80, &Fpu) -> (F80, Flags)) {
    if f.is_empty(0) {
        stack_underflow(f, Some(0), 0);
        return;
    }
    let (v, fl) = op(f.st(0), f);
    commit(f, 0, v, fl, 0);
}

fn fxam(f: &mut Fpu) {
    let v = f.st(0);
    let sign = v.sign();
    // (C3, C2, C0)
    let (c3, c2, c0) = if f.is_empty(0) {
        (true, false, true)
    } else {
        match v.class() {
            Class::Unsupported => (false, false, false),
            Class::QNaN | Class::SNaN => (false, false, true),
            Class::Normal => (false, true, false),
            Class::Infinity => (false, true, true),
            Class::Zero => (true, false, false),
            Class::Denormal => (true, true, false),
        }
    };
    f.set_cc(c3, c2, sign, c0);
}

fn fscale(f: &mut Fpu) {
    if f.is_empty(0) || f.is_empty(1) {
        stack_underflow(f, Some(0), 0);
        return;
    }
    let (a, b) = (f.st(0), f.st(1));
    let mut fl = Flags::default();
    let r = rounding(f, 64);
    let v = fscale_value(a, b, r, &mut fl);
    commit(f, 0, v, fl, 0);
}

/// ST(0) × 2^trunc(ST(1)) with the x87 special cases.
pub fn fscale_value(a: F80, b: F80, r: Rounding, fl: &mut Flags) -> F80 {
    let (ca, cb) = (a.class(), b.class());
    if ca == Class::Unsupported || cb == Class::Unsupported {
        fl.raise(IE);
        return F80::INDEFINITE;
    }
    if is_nan_or_unsupported(a) || is_nan_or_unsupported(b) {
        return softfloat::propagate_nan(a, b, fl);
    }
    if ca == Class::Denormal || cb == Class::Denormal {
        fl.raise(DE);
    }
    if cb == Class::Infinity {
        return match (ca, b.sign()) {
            (Class::Zero, false) | (Class::Infinity, true) => {
                fl.raise(IE);
                F80::INDEFINITE
            }
            (Class::Infinity, false) => a,
            (Class::Zero, true) => a,
            (_, true) => F80::zero(a.sign()),
            (_, false) => F80::infinity(a.sign()),
        };
    }
    if ca == Class::Zero || ca == Class::Infinity {
        return a;
    }
    let n = if cb == Class::Zero {
        0
    } else {
        let u = b.unpack();
        if u.exp < 0 {
            0
        } else if u.exp >= 30 {
            if u.sign {
                -(1 << 30)
            } else {
                1 << 30
            }
        } else {
            let m = (u.sig >> (63 - u.exp)) as i32;
            if u.sign {
                -m
            } else {
                m
            }
        }
    };
    softfloat::scale(a, n, r, fl)
}

fn fxtract(f: &mut Fpu) {
    if f.is_empty(0) || !f.is_empty(7) {
        if f.is_empty(0) {
            f.set_c1(false);
        } else {
            f.set_c1(true);
        }
        f.raise(IE | SF);
        if f.unmasked(IE) == 0 {
            f.set_st(0, F80::INDEFINITE);
            f.push(F80::INDEFINITE);
        }
        return;
    }
    let x = f.st(0);
    let mut fl = Flags::default();
    let (exponent, significand) = match x.class() {
        Class::Unsupported => {
            fl.raise(IE);
            (F80::INDEFINITE, F80::INDEFINITE)
        }
        Class::QNaN | Class::SNaN => {
            let q = softfloat::propagate_nan1(x, &mut fl);
            (q, q)
        }
        Class::Zero => {
            fl.raise(ZE);
            (F80::NEG_INFINITY, x)
        }
        Class::Infinity => (F80::INFINITY, x),
        Class::Normal | Class::Denormal => {
            if x.class() == Class::Denormal {
                fl.raise(DE);
            }
            let u = x.unpack();
            (
                softfloat::from_int(u.exp as i64),
                F80 {
                    se: 0x3FFF | if u.sign { 0x8000 } else { 0 },
                    sig: u.sig,
                },
            )
        }
    };
    if f.unmasked(fl.exc & (IE | DE | ZE)) != 0 {
        f.raise(fl.exc);
        return;
    }
    f.set_st(0, exponent);
    f.push(significand);
    f.set_c1(false);
    f.raise(fl.exc);
}

fn fprem(f: &mut Fpu, nearest: bool) {
    if f.is_empty(0) || f.is_empty(1) {
        f.set_flag(sw::C2, false);
        stack_underflow(f, Some(0), 0);
        return;
    }
    let (a, b) = (f.st(0), f.st(1));
    let mut fl = Flags::default();
    let rem = softfloat::remainder(a, b, nearest, rounding(f, 64), &mut fl);
    if f.unmasked(fl.exc & (IE | DE | ZE)) != 0 {
        f.raise(fl.exc);
        return;
    }
    f.set_st(0, rem.value);
    let q = rem.quotient_low;
    f.set_cc(q & 2 != 0, rem.partial, q & 1 != 0, q & 4 != 0);
    f.raise(fl.exc);
}

fn trig(f: &mut Fpu, code: Code) {
    let pushes = matches!(code, Code::Fptan | Code::Fsincos);
    if f.is_empty(0) || (pushes && !f.is_empty(7)) {
        f.set_c1(!f.is_empty(0));
        f.set_flag(sw::C2, false);
        f.raise(IE | SF);
        if f.unmasked(IE) == 0 {
            f.set_st(0, F80::INDEFINITE);
            if pushes {
                f.push(F80::INDEFINITE);
            }
        }
        return;
    }
    let x = f.st(0);
    let r = rounding(f, 64);
    let mut fl = Flags::default();
    let out = match code {
        Code::Fsin => transcendental::sin(x, r, &mut fl).map(|v| (v, None)),
        Code::Fcos => transcendental::cos(x, r, &mut fl).map(|v| (v, None)),
        Code::Fptan => transcendental::tan(x, r, &mut fl).map(|v| {
            // A NaN argument gives the NaN twice; otherwise 1.0 is pushed.
            let second = if v.is_nan() { v } else { F80::ONE };
            (v, Some(second))
        }),
        _ => transcendental::sincos(x, r, &mut fl).map(|(s, c)| (s, Some(c))),
    };
    let Some((first, second)) = out else {
        // |x| >= 2^63: operand left alone, C2 = 1.
        f.set_flag(sw::C2, true);
        return;
    };
    f.set_flag(sw::C2, false);
    if f.unmasked(fl.exc & (IE | DE | ZE)) != 0 {
        f.raise(fl.exc);
        return;
    }
    f.set_st(0, first);
    if let Some(s) = second {
        f.push(s);
    }
    f.set_c1(fl.up);
    f.raise(fl.exc);
}

fn binary_pop(f: &mut Fpu, code: Code) {
    if f.is_empty(0) || f.is_empty(1) {
        stack_underflow(f, Some(1), 1);
        return;
    }
    let (x, y) = (f.st(0), f.st(1));
    let r = rounding(f, 64);
    let mut fl = Flags::default();
    let v = match code {
        Code::Fpatan => transcendental::atan2(y, x, r, &mut fl),
        Code::Fyl2x => transcendental::yl2x(x, y, r, &mut fl),
        _ => transcendental::yl2xp1(x, y, r, &mut fl),
    };
    commit(f, 1, v, fl, 1);
}

/// EFLAGS bits the P6 x87 instructions read or write.
const CF: u32 = 1;
const PF: u32 = 1 << 2;
const ZF: u32 = 1 << 6;

/// The P6 x87 instructions the flat user-mode model runs (a Pentium Pro
/// x87: FCMOVcc, FCOMI, FCOMIP, FUCOMI, FUCOMIP). They read or write EFLAGS
/// (ZF, PF, CF), which [`FpuContext`] does not carry, so the caller passes
/// the materialized EFLAGS. Returns `false` (nothing done) for any other
/// instruction; the 486 model never calls this (they stay #UD there).
pub fn execute_p6(f: &mut Fpu, ins: &Instruction, eflags: &mut u32) -> bool {
    use Code::*;
    let code = ins.code();
    let i = reg_operand(ins);
    let cond = |fl: u32| match code {
        Fcmovb_st0_sti => fl & CF != 0,
        Fcmove_st0_sti => fl & ZF != 0,
        Fcmovbe_st0_sti => fl & (CF | ZF) != 0,
        Fcmovu_st0_sti => fl & PF != 0,
        Fcmovnb_st0_sti => fl & CF == 0,
        Fcmovne_st0_sti => fl & ZF == 0,
        Fcmovnbe_st0_sti => fl & (CF | ZF) == 0,
        _ => fl & PF == 0, // Fcmovnu
    };
    match code {
        Fcmovb_st0_sti | Fcmove_st0_sti | Fcmovbe_st0_sti | Fcmovu_st0_sti | Fcmovnb_st0_sti
        | Fcmovne_st0_sti | Fcmovnbe_st0_sti | Fcmovnu_st0_sti => {
            f.set_c1(false);
            if f.is_empty(0) || f.is_empty(i) {
                f.raise(IE | SF);
                if f.unmasked(IE) == 0 && cond(*eflags) {
                    f.set_st(0, F80::INDEFINITE);
                }
                return true;
            }
            if cond(*eflags) {
                let v = f.st(i);
                f.set_st(0, v);
            }
            true
        }
        Fcomi_st0_sti | Fcomip_st0_sti | Fucomi_st0_sti | Fucomip_st0_sti => {
            let quiet = matches!(code, Fucomi_st0_sti | Fucomip_st0_sti);
            let pop = matches!(code, Fcomip_st0_sti | Fucomip_st0_sti);
            f.set_c1(false);
            let set = |fl: &mut u32, bits: u32| {
                *fl = (*fl & !(CF | PF | ZF | 0x800 | 0x80 | 0x10)) | bits
            };
            if f.is_empty(0) || f.is_empty(i) {
                f.raise(IE | SF);
                if f.unmasked(IE) == 0 {
                    set(eflags, CF | PF | ZF);
                    if pop {
                        f.pop();
                    }
                }
                return true;
            }
            let mut fl = Flags::default();
            let ord = softfloat::compare(f.st(0), f.st(i), quiet, &mut fl);
            if f.unmasked(fl.exc & (IE | DE)) != 0 {
                f.raise(fl.exc);
                return true;
            }
            set(
                eflags,
                match ord {
                    Ordering::Greater => 0,
                    Ordering::Less => CF,
                    Ordering::Equal => ZF,
                    Ordering::Unordered => CF | PF | ZF,
                },
            );
            f.raise(fl.exc);
            if pop {
                f.pop();
            }
            true
        }
        _ => false,
    }
}
