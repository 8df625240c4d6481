//! x87 escapes (D8-DF) as one [`Op::X87`] each, when the driver lets the
//! engine run them ([`super::LowerOpts::x87`]).
//!
//! It owns the escape's recognition and operands only; it must not
//! interpret any x87 instruction (the machine does).

use super::operands::seg_of;
use super::{LineBuilder, Unsupported, L};
use crate::ir::*;
use crate::machine::{MachineModel, Seg};
use iced_x86::{Code, Instruction, OpKind};

impl<M: MachineModel> LineBuilder<'_, M> {
    /// An x87 instruction as one [`Op::X87`]: the memory operand's address
    /// folded as a load's, the selectors of CS and of the operand's segment
    /// for the FPU's pointers, AX as the result of FNSTSW AX.
    pub(super) fn x87(&mut self, ins: &Instruction) -> L<()> {
        let insn = X87Insn::new(self.insn).ok_or(Unsupported("x87 encoding"))?;
        let sel = |s: &Self, seg: Seg| {
            s.model
                .seg_selector(seg)
                .map_or(Src::Imm(0), |v| Src::Reg(Reg::w(v.0)))
        };
        let has_mem = (0..ins.op_count()).any(|i| ins.op_kind(i) == OpKind::Memory);
        let (mem, ds) = if has_mem {
            let seg = seg_of(ins.memory_segment()).ok_or(Unsupported("segment"))?;
            (Some(self.addr(ins)?), sel(self, seg))
        } else {
            (None, Src::Imm(0))
        };
        let dst = matches!(ins.code(), Code::Fnstsw_AX).then_some(Reg::w(0));
        let (site, after) = (self.before(), self.after());
        self.emit(Op::X87 {
            insn,
            mem,
            cs: sel(self, Seg::Cs),
            ds,
            dst,
            site,
            after: Some(after),
        });
        Ok(())
    }
}

/// An x87 escape (D8-DF) behind only segment, operand- and address-size
/// prefixes (no LOCK, REP or a folded FWAIT, which stay with a finer tier).
pub(super) fn is_x87_escape(bytes: &[u8]) -> bool {
    for &b in bytes {
        match b {
            0x26 | 0x2E | 0x36 | 0x3E | 0x64 | 0x65 | 0x66 | 0x67 => {}
            0xD8..=0xDF => return true,
            _ => return false,
        }
    }
    false
}
