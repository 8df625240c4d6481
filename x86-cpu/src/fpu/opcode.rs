//! The x87 last-opcode register (FOP): the 11 bits FSTENV/FSAVE store, rebuilt
//! from a decoded instruction.
//!
//! Owns the table from iced-x86 codes to their D8-DF encodings (generated from
//! iced's own per-code encoding notes) and the reconstruction of the ModRM
//! byte from the decoded memory operand. It must not execute anything.

use iced_x86::{Code, Instruction, Register};
use std::sync::OnceLock;

/// How the second opcode byte of an x87 instruction is formed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum OpcodeForm {
    /// ModRM with a memory operand and this reg field (`/digit`).
    Memory(u8),
    /// A register form `base + i` (i = ST(i)).
    Register(u8),
    /// A fixed second byte.
    Fixed(u8),
}

/// The low three bits of the first opcode byte (D8-DF) and the form of the
/// second byte, for every x87 code iced can decode in the D8-DF space.
///
/// Every x87 instruction asks twice (the #UD check and FOP), so the answer
/// is [`encoding_of`] tabulated once per code: an index instead of a match
/// over a few hundred sparse codes.
#[inline]
pub fn encoding(code: Code) -> Option<(u8, OpcodeForm)> {
    static TABLE: OnceLock<Vec<Option<(u8, OpcodeForm)>>> = OnceLock::new();
    TABLE.get_or_init(|| Code::values().map(encoding_of).collect())[code as usize]
}

/// [`encoding`], computed.
fn encoding_of(code: Code) -> Option<(u8, OpcodeForm)> {
    match code {
        Code::Fadd_m32fp => Some((0, OpcodeForm::Memory(0))),
        Code::Fmul_m32fp => Some((0, OpcodeForm::Memory(1))),
        Code::Fcom_m32fp => Some((0, OpcodeForm::Memory(2))),
        Code::Fcomp_m32fp => Some((0, OpcodeForm::Memory(3))),
        Code::Fsub_m32fp => Some((0, OpcodeForm::Memory(4))),
        Code::Fsubr_m32fp => Some((0, OpcodeForm::Memory(5))),
        Code::Fdiv_m32fp => Some((0, OpcodeForm::Memory(6))),
        Code::Fdivr_m32fp => Some((0, OpcodeForm::Memory(7))),
        Code::Fadd_st0_sti => Some((0, OpcodeForm::Register(0xC0))),
        Code::Fmul_st0_sti => Some((0, OpcodeForm::Register(0xC8))),
        Code::Fcom_st0_sti => Some((0, OpcodeForm::Register(0xD0))),
        Code::Fcomp_st0_sti => Some((0, OpcodeForm::Register(0xD8))),
        Code::Fsub_st0_sti => Some((0, OpcodeForm::Register(0xE0))),
        Code::Fsubr_st0_sti => Some((0, OpcodeForm::Register(0xE8))),
        Code::Fdiv_st0_sti => Some((0, OpcodeForm::Register(0xF0))),
        Code::Fdivr_st0_sti => Some((0, OpcodeForm::Register(0xF8))),
        Code::Fld_m32fp => Some((1, OpcodeForm::Memory(0))),
        Code::Fst_m32fp => Some((1, OpcodeForm::Memory(2))),
        Code::Fstp_m32fp => Some((1, OpcodeForm::Memory(3))),
        Code::Fldenv_m14byte => Some((1, OpcodeForm::Memory(4))),
        Code::Fldenv_m28byte => Some((1, OpcodeForm::Memory(4))),
        Code::Fldcw_m2byte => Some((1, OpcodeForm::Memory(5))),
        Code::Fnstenv_m14byte => Some((1, OpcodeForm::Memory(6))),
        Code::Fstenv_m14byte => Some((1, OpcodeForm::Memory(6))),
        Code::Fnstenv_m28byte => Some((1, OpcodeForm::Memory(6))),
        Code::Fstenv_m28byte => Some((1, OpcodeForm::Memory(6))),
        Code::Fnstcw_m2byte => Some((1, OpcodeForm::Memory(7))),
        Code::Fstcw_m2byte => Some((1, OpcodeForm::Memory(7))),
        Code::Fld_sti => Some((1, OpcodeForm::Register(0xC0))),
        Code::Fxch_st0_sti => Some((1, OpcodeForm::Register(0xC8))),
        Code::Fnop => Some((1, OpcodeForm::Fixed(0xD0))),
        Code::Fstpnce_sti => Some((1, OpcodeForm::Register(0xD8))),
        Code::Fchs => Some((1, OpcodeForm::Fixed(0xE0))),
        Code::Fabs => Some((1, OpcodeForm::Fixed(0xE1))),
        Code::Ftst => Some((1, OpcodeForm::Fixed(0xE4))),
        Code::Fxam => Some((1, OpcodeForm::Fixed(0xE5))),
        Code::Fld1 => Some((1, OpcodeForm::Fixed(0xE8))),
        Code::Fldl2t => Some((1, OpcodeForm::Fixed(0xE9))),
        Code::Fldl2e => Some((1, OpcodeForm::Fixed(0xEA))),
        Code::Fldpi => Some((1, OpcodeForm::Fixed(0xEB))),
        Code::Fldlg2 => Some((1, OpcodeForm::Fixed(0xEC))),
        Code::Fldln2 => Some((1, OpcodeForm::Fixed(0xED))),
        Code::Fldz => Some((1, OpcodeForm::Fixed(0xEE))),
        Code::F2xm1 => Some((1, OpcodeForm::Fixed(0xF0))),
        Code::Fyl2x => Some((1, OpcodeForm::Fixed(0xF1))),
        Code::Fptan => Some((1, OpcodeForm::Fixed(0xF2))),
        Code::Fpatan => Some((1, OpcodeForm::Fixed(0xF3))),
        Code::Fxtract => Some((1, OpcodeForm::Fixed(0xF4))),
        Code::Fprem1 => Some((1, OpcodeForm::Fixed(0xF5))),
        Code::Fdecstp => Some((1, OpcodeForm::Fixed(0xF6))),
        Code::Fincstp => Some((1, OpcodeForm::Fixed(0xF7))),
        Code::Fprem => Some((1, OpcodeForm::Fixed(0xF8))),
        Code::Fyl2xp1 => Some((1, OpcodeForm::Fixed(0xF9))),
        Code::Fsqrt => Some((1, OpcodeForm::Fixed(0xFA))),
        Code::Fsincos => Some((1, OpcodeForm::Fixed(0xFB))),
        Code::Frndint => Some((1, OpcodeForm::Fixed(0xFC))),
        Code::Fscale => Some((1, OpcodeForm::Fixed(0xFD))),
        Code::Fsin => Some((1, OpcodeForm::Fixed(0xFE))),
        Code::Fcos => Some((1, OpcodeForm::Fixed(0xFF))),
        Code::Fiadd_m32int => Some((2, OpcodeForm::Memory(0))),
        Code::Fimul_m32int => Some((2, OpcodeForm::Memory(1))),
        Code::Ficom_m32int => Some((2, OpcodeForm::Memory(2))),
        Code::Ficomp_m32int => Some((2, OpcodeForm::Memory(3))),
        Code::Fisub_m32int => Some((2, OpcodeForm::Memory(4))),
        Code::Fisubr_m32int => Some((2, OpcodeForm::Memory(5))),
        Code::Fidiv_m32int => Some((2, OpcodeForm::Memory(6))),
        Code::Fidivr_m32int => Some((2, OpcodeForm::Memory(7))),
        Code::Fcmovb_st0_sti => Some((2, OpcodeForm::Register(0xC0))),
        Code::Fcmove_st0_sti => Some((2, OpcodeForm::Register(0xC8))),
        Code::Fcmovbe_st0_sti => Some((2, OpcodeForm::Register(0xD0))),
        Code::Fcmovu_st0_sti => Some((2, OpcodeForm::Register(0xD8))),
        Code::Fucompp => Some((2, OpcodeForm::Fixed(0xE9))),
        Code::Fild_m32int => Some((3, OpcodeForm::Memory(0))),
        Code::Fisttp_m32int => Some((3, OpcodeForm::Memory(1))),
        Code::Fist_m32int => Some((3, OpcodeForm::Memory(2))),
        Code::Fistp_m32int => Some((3, OpcodeForm::Memory(3))),
        Code::Fld_m80fp => Some((3, OpcodeForm::Memory(5))),
        Code::Fstp_m80fp => Some((3, OpcodeForm::Memory(7))),
        Code::Fcmovnb_st0_sti => Some((3, OpcodeForm::Register(0xC0))),
        Code::Fcmovne_st0_sti => Some((3, OpcodeForm::Register(0xC8))),
        Code::Fcmovnbe_st0_sti => Some((3, OpcodeForm::Register(0xD0))),
        Code::Fcmovnu_st0_sti => Some((3, OpcodeForm::Register(0xD8))),
        Code::Fneni => Some((3, OpcodeForm::Fixed(0xE0))),
        Code::Feni => Some((3, OpcodeForm::Fixed(0xE0))),
        Code::Fndisi => Some((3, OpcodeForm::Fixed(0xE1))),
        Code::Fdisi => Some((3, OpcodeForm::Fixed(0xE1))),
        Code::Fnclex => Some((3, OpcodeForm::Fixed(0xE2))),
        Code::Fclex => Some((3, OpcodeForm::Fixed(0xE2))),
        Code::Fninit => Some((3, OpcodeForm::Fixed(0xE3))),
        Code::Finit => Some((3, OpcodeForm::Fixed(0xE3))),
        Code::Fnsetpm => Some((3, OpcodeForm::Fixed(0xE4))),
        Code::Fsetpm => Some((3, OpcodeForm::Fixed(0xE4))),
        Code::Frstpm => Some((3, OpcodeForm::Fixed(0xE5))),
        Code::Fucomi_st0_sti => Some((3, OpcodeForm::Register(0xE8))),
        Code::Fcomi_st0_sti => Some((3, OpcodeForm::Register(0xF0))),
        Code::Fadd_m64fp => Some((4, OpcodeForm::Memory(0))),
        Code::Fmul_m64fp => Some((4, OpcodeForm::Memory(1))),
        Code::Fcom_m64fp => Some((4, OpcodeForm::Memory(2))),
        Code::Fcomp_m64fp => Some((4, OpcodeForm::Memory(3))),
        Code::Fsub_m64fp => Some((4, OpcodeForm::Memory(4))),
        Code::Fsubr_m64fp => Some((4, OpcodeForm::Memory(5))),
        Code::Fdiv_m64fp => Some((4, OpcodeForm::Memory(6))),
        Code::Fdivr_m64fp => Some((4, OpcodeForm::Memory(7))),
        Code::Fadd_sti_st0 => Some((4, OpcodeForm::Register(0xC0))),
        Code::Fmul_sti_st0 => Some((4, OpcodeForm::Register(0xC8))),
        Code::Fcom_st0_sti_DCD0 => Some((4, OpcodeForm::Register(0xD0))),
        Code::Fcomp_st0_sti_DCD8 => Some((4, OpcodeForm::Register(0xD8))),
        Code::Fsubr_sti_st0 => Some((4, OpcodeForm::Register(0xE0))),
        Code::Fsub_sti_st0 => Some((4, OpcodeForm::Register(0xE8))),
        Code::Fdivr_sti_st0 => Some((4, OpcodeForm::Register(0xF0))),
        Code::Fdiv_sti_st0 => Some((4, OpcodeForm::Register(0xF8))),
        Code::Fld_m64fp => Some((5, OpcodeForm::Memory(0))),
        Code::Fisttp_m64int => Some((5, OpcodeForm::Memory(1))),
        Code::Fst_m64fp => Some((5, OpcodeForm::Memory(2))),
        Code::Fstp_m64fp => Some((5, OpcodeForm::Memory(3))),
        Code::Frstor_m94byte => Some((5, OpcodeForm::Memory(4))),
        Code::Frstor_m108byte => Some((5, OpcodeForm::Memory(4))),
        Code::Fnsave_m94byte => Some((5, OpcodeForm::Memory(6))),
        Code::Fsave_m94byte => Some((5, OpcodeForm::Memory(6))),
        Code::Fnsave_m108byte => Some((5, OpcodeForm::Memory(6))),
        Code::Fsave_m108byte => Some((5, OpcodeForm::Memory(6))),
        Code::Fnstsw_m2byte => Some((5, OpcodeForm::Memory(7))),
        Code::Fstsw_m2byte => Some((5, OpcodeForm::Memory(7))),
        Code::Ffree_sti => Some((5, OpcodeForm::Register(0xC0))),
        Code::Fxch_st0_sti_DDC8 => Some((5, OpcodeForm::Register(0xC8))),
        Code::Fst_sti => Some((5, OpcodeForm::Register(0xD0))),
        Code::Fstp_sti => Some((5, OpcodeForm::Register(0xD8))),
        Code::Fucom_st0_sti => Some((5, OpcodeForm::Register(0xE0))),
        Code::Fucomp_st0_sti => Some((5, OpcodeForm::Register(0xE8))),
        Code::Fiadd_m16int => Some((6, OpcodeForm::Memory(0))),
        Code::Fimul_m16int => Some((6, OpcodeForm::Memory(1))),
        Code::Ficom_m16int => Some((6, OpcodeForm::Memory(2))),
        Code::Ficomp_m16int => Some((6, OpcodeForm::Memory(3))),
        Code::Fisub_m16int => Some((6, OpcodeForm::Memory(4))),
        Code::Fisubr_m16int => Some((6, OpcodeForm::Memory(5))),
        Code::Fidiv_m16int => Some((6, OpcodeForm::Memory(6))),
        Code::Fidivr_m16int => Some((6, OpcodeForm::Memory(7))),
        Code::Faddp_sti_st0 => Some((6, OpcodeForm::Register(0xC0))),
        Code::Fmulp_sti_st0 => Some((6, OpcodeForm::Register(0xC8))),
        Code::Fcomp_st0_sti_DED0 => Some((6, OpcodeForm::Register(0xD0))),
        Code::Fcompp => Some((6, OpcodeForm::Fixed(0xD9))),
        Code::Fsubrp_sti_st0 => Some((6, OpcodeForm::Register(0xE0))),
        Code::Fsubp_sti_st0 => Some((6, OpcodeForm::Register(0xE8))),
        Code::Fdivrp_sti_st0 => Some((6, OpcodeForm::Register(0xF0))),
        Code::Fdivp_sti_st0 => Some((6, OpcodeForm::Register(0xF8))),
        Code::Fild_m16int => Some((7, OpcodeForm::Memory(0))),
        Code::Fisttp_m16int => Some((7, OpcodeForm::Memory(1))),
        Code::Fist_m16int => Some((7, OpcodeForm::Memory(2))),
        Code::Fistp_m16int => Some((7, OpcodeForm::Memory(3))),
        Code::Fbld_m80bcd => Some((7, OpcodeForm::Memory(4))),
        Code::Fild_m64int => Some((7, OpcodeForm::Memory(5))),
        Code::Fbstp_m80bcd => Some((7, OpcodeForm::Memory(6))),
        Code::Fistp_m64int => Some((7, OpcodeForm::Memory(7))),
        Code::Ffreep_sti => Some((7, OpcodeForm::Register(0xC0))),
        Code::Fxch_st0_sti_DFC8 => Some((7, OpcodeForm::Register(0xC8))),
        Code::Fstp_sti_DFD0 => Some((7, OpcodeForm::Register(0xD0))),
        Code::Fstp_sti_DFD8 => Some((7, OpcodeForm::Register(0xD8))),
        Code::Fnstsw_AX => Some((7, OpcodeForm::Fixed(0xE0))),
        Code::Fstsw_AX => Some((7, OpcodeForm::Fixed(0xE0))),
        Code::Fstdw_AX => Some((7, OpcodeForm::Fixed(0xE1))),
        Code::Fstsg_AX => Some((7, OpcodeForm::Fixed(0xE2))),
        Code::Fucomip_st0_sti => Some((7, OpcodeForm::Register(0xE8))),
        Code::Fcomip_st0_sti => Some((7, OpcodeForm::Register(0xF0))),
        Code::Fnstdw_AX => Some((7, OpcodeForm::Fixed(0xE1))),
        Code::Fnstsg_AX => Some((7, OpcodeForm::Fixed(0xE2))),
        Code::Ftstp => Some((1, OpcodeForm::Fixed(0xE6))),
        Code::Frint2 => Some((3, OpcodeForm::Fixed(0xFC))),
        Code::Frichop => Some((5, OpcodeForm::Fixed(0xFC))),
        Code::Frinear => Some((7, OpcodeForm::Fixed(0xFC))),
        _ => None,
    }
}

/// The 11-bit FOP value of `ins`: (first byte & 7) << 8 | ModRM. Memory ModRM
/// bytes are rebuilt from the addressing form (mod from the displacement
/// size, r/m from the base and index registers); 0 for codes outside D8-DF.
pub fn last_opcode(ins: &Instruction) -> u16 {
    let Some((low, form)) = encoding(ins.code()) else {
        return 0;
    };
    let second = match form {
        OpcodeForm::Fixed(b) => b,
        OpcodeForm::Register(base) => {
            // The ST(i) operand is whichever operand is not ST0 (0 if both are).
            let a = st_index(ins.op0_register()).unwrap_or(0);
            let b = if ins.op_count() >= 2 {
                st_index(ins.op1_register()).unwrap_or(0)
            } else {
                0
            };
            base.wrapping_add(if a != 0 { a } else { b })
        }
        OpcodeForm::Memory(reg) => (mod_rm_memory(ins) & 0xC7) | (reg << 3),
    };
    ((low as u16) << 8) | second as u16
}

fn st_index(r: Register) -> Option<u8> {
    let n = r as u32;
    let st0 = Register::ST0 as u32;
    if (st0..st0 + 8).contains(&n) {
        Some((n - st0) as u8)
    } else {
        None
    }
}

fn mod_rm_memory(ins: &Instruction) -> u8 {
    let base = ins.memory_base();
    let index = ins.memory_index();
    let disp = ins.memory_displ_size();
    let sixteen = matches!(
        base,
        Register::BX | Register::BP | Register::SI | Register::DI
    ) || matches!(index, Register::SI | Register::DI)
        || (base == Register::None && index == Register::None && disp == 2);
    if sixteen {
        let rm = match (base, index) {
            (Register::BX, Register::SI) => 0,
            (Register::BX, Register::DI) => 1,
            (Register::BP, Register::SI) => 2,
            (Register::BP, Register::DI) => 3,
            (Register::SI, Register::None) | (Register::None, Register::SI) => 4,
            (Register::DI, Register::None) | (Register::None, Register::DI) => 5,
            (Register::BP, Register::None) => 6,
            (Register::BX, Register::None) => 7,
            _ => 6, // disp16 only
        };
        let md = match (base, index, disp) {
            (Register::None, Register::None, _) => 0,
            (_, _, 0) => 0,
            (_, _, 1) => 1,
            _ => 2,
        };
        return (md << 6) | rm;
    }
    let rm = if index != Register::None || base == Register::ESP {
        4
    } else if base == Register::None {
        5
    } else {
        (base as u32).wrapping_sub(Register::EAX as u32) as u8 & 7
    };
    let md = if base == Register::None {
        0
    } else {
        match disp {
            0 => 0,
            1 => 1,
            _ => 2,
        }
    };
    (md << 6) | rm
}
