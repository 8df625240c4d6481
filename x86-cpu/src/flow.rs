//! What a tier that caches decoded instructions in straight-line blocks needs
//! to know about one instruction besides its [`Op`](crate::op::Op): whether
//! it ends a block, and how many of the fetched bytes its decoding depends
//! on (the bytes a store must touch to make a cached copy stale).
//!
//! Owns that classification, decided from the same bytes and mode the CPU
//! decoder reads (iced-x86's control-flow facts), engine-independent: any
//! threaded tier over [`crate::decode`] can use it (mainemu's L1 does; toyvm's
//! L1 has its richer `classify`, which could build on this). It must not
//! execute anything or hold instruction semantics.

use crate::decode::{Mode, MAX_LEN};
use iced_x86::{
    ConditionCode, Decoder, DecoderOptions, FlowControl, Instruction, Mnemonic as M, OpKind,
};

/// Block-formation facts of one instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Facts {
    /// Control may continue somewhere other than the next instruction (any
    /// branch, call, return, interrupt, or an undecodable encoding, which
    /// raises an exception), or the instruction repeats in place (a string
    /// instruction with a REP prefix, one dispatch per element).
    pub ends_block: bool,
    /// How many bytes from the instruction's first one the decoded Op
    /// depends on: its length, or the whole fetch window for an undecodable
    /// encoding (whether it is #UD or #GP can depend on every byte).
    pub span: u8,
    /// The instruction touches no memory and no segment or system register,
    /// and its handler changes nothing before its last possible fault: a
    /// tier may run it without the register snapshot that undoes a fault
    /// (`user::run_op_no_undo`). Register and immediate operands only
    /// (LEA's address is computed, not accessed), from an audited list of
    /// handlers: ALU, moves, shifts, bit scans and tests, SETcc, flag ops,
    /// Jcc and JMP rel (their only fault, a target past the CS limit, comes
    /// before EIP moves). Everything else keeps the snapshot.
    pub no_undo: bool,
    /// The instruction writes no segment state (selectors, bases, limits):
    /// what it may change that `user::run_op`'s snapshot restores after a
    /// fault is the general registers, EIP and the flags only, so a tier
    /// may run it with a snapshot of those (`user::run_op_light`), which
    /// gives `run_op`'s outcome and state. Near branches, calls and
    /// returns, the stack, moves, ALU, string, bit, flag, x87 and SSE ops
    /// with no segment, control, debug or test register operand; not the
    /// segment loads (LDS ... LSS, far transfers, IRET, INT n, SYSENTER ...),
    /// POPF. Implied by `no_undo`.
    pub light: bool,
}

/// The facts of the instruction whose (up to) 15 bytes start at `ip`.
pub fn facts(bytes: &[u8; MAX_LEN], ip: u32, mode: Mode) -> Facts {
    let bits = if mode.code32 { 32 } else { 16 };
    let mut dec = Decoder::with_ip(bits, bytes, ip as u64, DecoderOptions::LOADALL386);
    let ins = dec.decode();
    if ins.is_invalid() {
        return Facts {
            ends_block: true,
            span: MAX_LEN as u8,
            no_undo: false,
            light: false,
        };
    }
    let repeats = ins.is_string_instruction()
        && (ins.has_rep_prefix() || ins.has_repe_prefix() || ins.has_repne_prefix());
    let no_undo = no_undo(&ins);
    Facts {
        ends_block: ins.flow_control() != FlowControl::Next || repeats,
        span: ins.len() as u8,
        no_undo,
        light: no_undo || light(&ins),
    }
}

/// See [`Facts::light`]: an allow-list (integer mnemonics by name, the
/// x87, MMX and SSE families by their CPUID feature), so an instruction no
/// one looked at keeps the full snapshot.
fn light(ins: &Instruction) -> bool {
    let regs_ok = (0..ins.op_count()).all(|i| {
        ins.op_kind(i) != OpKind::Register || {
            let r = ins.op_register(i);
            r.is_gpr() || r.is_st() || r.is_mm() || r.is_xmm()
        }
    });
    if !regs_ok {
        return false;
    }
    let m = ins.mnemonic();
    match ins.flow_control() {
        FlowControl::ConditionalBranch => return true,
        FlowControl::UnconditionalBranch | FlowControl::IndirectBranch => {
            return m == M::Jmp && !ins.is_jmp_far() && !ins.is_jmp_far_indirect()
        }
        FlowControl::Call | FlowControl::IndirectCall => {
            return m == M::Call && !ins.is_call_far() && !ins.is_call_far_indirect()
        }
        FlowControl::Return => return m == M::Ret,
        FlowControl::Next => {}
        _ => return false,
    }
    if is_plain_alu(m) || ins.condition_code() != ConditionCode::None {
        // ALU, shifts, extensions, LEA; SETcc, CMOVcc.
        return true;
    }
    if writes_only_gprs_and_memory(m) || matches!(m, M::Cmpxchg8b | M::Pushf | M::Pushfd) {
        return true;
    }
    use iced_x86::CpuidFeature as C;
    let f = ins.cpuid_features();
    !f.is_empty()
        && f.iter().all(|c| {
            matches!(
                c,
                C::FPU | C::FPU287 | C::FPU387 | C::MMX | C::SSE | C::SSE2 | C::SSE3 | C::CMOV
            )
        })
}

/// General-purpose instructions, by mnemonic, beyond [`is_plain_alu`], that
/// change nothing but the general registers, EIP, the flags and memory:
/// moves and exchanges, the stack, multiply and divide, BOUND, the string
/// ops (REP or not), bit scans and tests, the flag ops, BCD adjustments.
/// The tiers' small-snapshot rules start from it ([`Facts::light`] for flat
/// user mode; toyvm's protected-mode `pm_light`, which adds its own
/// exclusions), so the list is audited once.
pub fn writes_only_gprs_and_memory(m: M) -> bool {
    matches!(
        m,
        M::Mov
            | M::Xchg
            | M::Xadd
            | M::Cmpxchg
            | M::Bswap
            | M::Xlatb
            | M::Cmp
            | M::Test
            | M::Push
            | M::Pop
            | M::Pusha
            | M::Pushad
            | M::Popa
            | M::Popad
            | M::Enter
            | M::Leave
            | M::Mul
            | M::Imul
            | M::Div
            | M::Idiv
            | M::Shld
            | M::Shrd
            | M::Bound
            | M::Movsb
            | M::Movsw
            | M::Movsd
            | M::Stosb
            | M::Stosw
            | M::Stosd
            | M::Lodsb
            | M::Lodsw
            | M::Lodsd
            | M::Cmpsb
            | M::Cmpsw
            | M::Cmpsd
            | M::Scasb
            | M::Scasw
            | M::Scasd
            | M::Bsf
            | M::Bsr
            | M::Bt
            | M::Bts
            | M::Btr
            | M::Btc
            | M::Nop
            | M::Sahf
            | M::Lahf
            | M::Clc
            | M::Stc
            | M::Cmc
            | M::Cld
            | M::Std
            | M::Daa
            | M::Das
            | M::Aaa
            | M::Aas
            | M::Aam
            | M::Aad
    )
}

/// See [`Facts::no_undo`].
fn no_undo(ins: &Instruction) -> bool {
    if ins.has_lock_prefix() {
        return false;
    }
    let m = ins.mnemonic();
    let operands_ok = (0..ins.op_count()).all(|i| match ins.op_kind(i) {
        OpKind::Register => ins.op_register(i).is_gpr(),
        OpKind::Memory => m == M::Lea,
        OpKind::NearBranch16 | OpKind::NearBranch32 => true,
        OpKind::Immediate8
        | OpKind::Immediate8_2nd
        | OpKind::Immediate16
        | OpKind::Immediate32
        | OpKind::Immediate8to16
        | OpKind::Immediate8to32 => true,
        _ => false,
    });
    if !operands_ok {
        return false;
    }
    if ins.is_jcc_short_or_near() || (m == M::Jmp && ins.op_count() == 1) {
        return matches!(ins.op0_kind(), OpKind::NearBranch16 | OpKind::NearBranch32);
    }
    // SETcc (and CMOVcc, which the Pentium model decodes to #UD: raised
    // before anything changes) are the conditional ops that fall through.
    if ins.condition_code() != ConditionCode::None && ins.flow_control() == FlowControl::Next {
        return true;
    }
    is_plain_alu(m)
        || matches!(
            m,
            M::Cmp
                | M::Test
                | M::Mov
                | M::Shld
                | M::Shrd
                | M::Imul
                | M::Mul
                | M::Xchg
                | M::Bswap
                | M::Bt
                | M::Bts
                | M::Btr
                | M::Btc
                | M::Bsf
                | M::Bsr
                | M::Nop
                | M::Clc
                | M::Stc
                | M::Cmc
                | M::Cld
                | M::Std
                | M::Lahf
                | M::Sahf
        )
}

/// The ALU, shift, extension and LEA mnemonics whose handlers compute their
/// destination from their operands and the flags and write it and the flags
/// only (with a register destination: no store, no stack). toyvm's L1 builds
/// its spin-loop `PURE` class on it; [`Facts::no_undo`] too.
pub fn is_plain_alu(m: M) -> bool {
    matches!(
        m,
        M::Add
            | M::Or
            | M::Adc
            | M::Sbb
            | M::And
            | M::Sub
            | M::Xor
            | M::Inc
            | M::Dec
            | M::Not
            | M::Neg
            | M::Rol
            | M::Ror
            | M::Rcl
            | M::Rcr
            | M::Shl
            | M::Shr
            | M::Sal
            | M::Sar
            | M::Movzx
            | M::Movsx
            | M::Lea
            | M::Cbw
            | M::Cwd
            | M::Cwde
            | M::Cdq
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(code: &[u8]) -> Facts {
        let mut b = [0u8; MAX_LEN];
        b[..code.len()].copy_from_slice(code);
        facts(&b, 0x1000, Mode::FLAT32)
    }

    #[test]
    fn branches_and_rep_strings_end_blocks() {
        // add eax, ebx / mov [eax], ecx: straight-line.
        let add = Facts {
            ends_block: false,
            span: 2,
            no_undo: true,
            light: true,
        };
        assert_eq!(f(&[0x01, 0xD8]), add);
        let store = Facts {
            ends_block: false,
            span: 2,
            no_undo: false,
            light: true,
        };
        assert_eq!(f(&[0x89, 0x08]), store);
        // jne rel8, jmp rel32, call, ret, int 3, jmp [eax]
        let codes: [&[u8]; 6] = [
            &[0x75, 0x00],
            &[0xE9, 0, 0, 0, 0],
            &[0xE8, 0, 0, 0, 0],
            &[0xC3],
            &[0xCC],
            &[0xFF, 0x20],
        ];
        for code in codes {
            assert!(f(code).ends_block, "{code:02x?}");
            assert_eq!(f(code).span as usize, code.len());
        }
        // rep movsd ends a block, a plain movsd does not.
        assert!(f(&[0xF3, 0xA5]).ends_block);
        assert!(!f(&[0xA5]).ends_block);
        // An undefined opcode depends on the whole window.
        assert_eq!(f(&[0x0F, 0x0B]).span, 2); // UD2 is a valid instruction
        let bad = Facts {
            ends_block: true,
            span: 15,
            no_undo: false,
            light: false,
        };
        assert_eq!(f(&[0xFE, 0x38]), bad); // FE /7 is undefined
    }

    #[test]
    fn no_undo_is_register_only_and_audited() {
        // lea eax,[ebx+4]; jne; jmp rel32; shl eax,cl; imul eax,ebx,5: no undo.
        let fast: [&[u8]; 5] = [
            &[0x8D, 0x43, 0x04],
            &[0x75, 0x00],
            &[0xE9, 0, 0, 0, 0],
            &[0xD3, 0xE0],
            &[0x6B, 0xC3, 0x05],
        ];
        for code in fast {
            assert!(f(code).no_undo, "{code:02x?}");
        }
        // mov eax,[ebx]; push eax; mov ds,ax; div ebx; lock add [eax],ebx;
        // loop; ret; call rel32; jmp eax: keep the snapshot.
        let slow: [&[u8]; 9] = [
            &[0x8B, 0x03],
            &[0x50],
            &[0x8E, 0xD8],
            &[0xF7, 0xF3],
            &[0xF0, 0x01, 0x18],
            &[0xE2, 0x00],
            &[0xC3],
            &[0xE8, 0, 0, 0, 0],
            &[0xFF, 0xE0],
        ];
        for code in slow {
            assert!(!f(code).no_undo, "{code:02x?}");
        }
    }

    #[test]
    fn light_writes_no_segment_state() {
        // mov eax,[ebx]; push eax; pop [eax]; ret; call [eax]; rep movsd;
        // fld dword [eax]; mov eax,fs:[0]: the small snapshot.
        let light: [&[u8]; 8] = [
            &[0x8B, 0x03],
            &[0x50],
            &[0x8F, 0x00],
            &[0xC3],
            &[0xFF, 0x10],
            &[0xF3, 0xA5],
            &[0xD9, 0x00],
            &[0x64, 0xA1, 0, 0, 0, 0],
        ];
        for code in light {
            assert!(f(code).light, "{code:02x?}");
        }
        // mov ds,ax; pop es; push fs; lds eax,[ebx]; jmp far; retf; iret;
        // int 3; popfd; fxrstor [eax]: the full snapshot.
        let full: [&[u8]; 10] = [
            &[0x8E, 0xD8],
            &[0x07],
            &[0x0F, 0xA0],
            &[0xC5, 0x03],
            &[0xEA, 0, 0, 0, 0, 0x1B, 0],
            &[0xCB],
            &[0xCF],
            &[0xCC],
            &[0x9D],
            &[0x0F, 0xAE, 0x08],
        ];
        for code in full {
            assert!(!f(code).light, "{code:02x?}");
        }
    }
}
