//! Flag instructions: CLC STC CLD STD CLI, STI (and its interrupt shadow),
//! CMC, LAHF SAHF, PUSHF POPF, and the IF-rose-or-TF stop test POPF and
//! IRET share.
//!
//! It owns FLAGS writes by these instructions only; ALU flags are written
//! by the ALU ops themselves (`alu`).

use super::operands::{lane_for, width_of_bytes};
use super::{no, LineBuilder, L};
use crate::flags::{Width, CF, DF, IF, TF};
use crate::ir::*;
use crate::machine::MachineModel;
use iced_x86::{Instruction, Mnemonic};

impl<M: MachineModel> LineBuilder<'_, M> {
    /// `stop.if (new & !old & (IF|TF))`: the driver must look before the
    /// next instruction when IF rose (an interrupt may be deliverable) or
    /// TF was set (single-step mode). `old` is the FLAGS word before.
    pub(super) fn stop_if_if_rose_or_tf(&mut self, old: Reg, new: Src) -> L<()> {
        let x = self.temp()?;
        self.emit(Op::Alu {
            op: AluOp::Xor,
            w: Width::W32,
            dst: x,
            a: Src::Reg(old),
            b: Src::Imm(0xFFFF_FFFF),
        });
        self.emit(Op::Alu {
            op: AluOp::And,
            w: Width::W32,
            dst: x,
            a: Src::Reg(x),
            b: new,
        });
        self.emit(Op::Alu {
            op: AluOp::And,
            w: Width::W32,
            dst: x,
            a: Src::Reg(x),
            b: Src::Imm(IF | TF),
        });
        self.emit(Op::StopIf { src: Src::Reg(x) });
        Ok(())
    }

    /// CLC STC CLD STD CLI: one flag set or cleared.
    pub(super) fn flag_op(&mut self, ins: &Instruction) -> L<()> {
        use Mnemonic as X;
        let m = ins.mnemonic();
        let (mask, v) = match m {
            X::Clc => (CF, 0),
            X::Stc => (CF, CF),
            X::Cld => (DF, 0),
            X::Std => (DF, DF),
            _ => (IF, 0),
        };
        self.emit(Op::FlagsSet {
            src: Src::Imm(v),
            mask,
        });
        if mask == DF {
            self.delta_cache = [None; 3];
        }
        Ok(())
    }

    /// STI: a NOP with IF set; with IF clear, the shadow exit.
    pub(super) fn sti(&mut self) -> L<()> {
        // STI opens its one-instruction interrupt shadow only when
        // IF was 0 (L0's `h_flagop`); with IF already set it changes
        // nothing and is a NOP here. With IF clear the program sets
        // IF and leaves right after it with a shadow exit: the
        // driver runs exactly the next instruction, with no
        // interrupt before it, and then looks (as after L1's STI):
        //   open: ...; flags.get t; and t, IF; brcmp.ne t, 0 -> cont, sh
        //   sh:   clock.check 1 @sti; flags.set IF, IF; exit shadow @next
        //   cont: clock.check n @sti; (sti billed as a NOP) ...
        let t = self.temp()?;
        self.emit(Op::FlagsGet { dst: t });
        self.emit(Op::Alu {
            op: AluOp::And,
            w: Width::W32,
            dst: t,
            a: Src::Reg(t),
            b: Src::Imm(IF),
        });
        let fb = self.new_block();
        self.blocks[fb.0 as usize] = Block {
            ops: vec![
                Op::ClockCheck {
                    n: 1,
                    site: Site::new(self.ip, 0),
                },
                Op::FlagsSet {
                    src: Src::Imm(IF),
                    mask: IF,
                },
            ],
            term: Term::Exit {
                kind: ExitKind::Shadow,
                site: Site::new(self.next_ip, 0),
            },
        };
        let cont = self.new_block();
        self.close(Term::BrCmp {
            op: CmpOp::Ne,
            w: Width::W32,
            a: Src::Reg(t),
            b: Src::Imm(0),
            t: cont,
            f: fb,
        });
        let ip = self.ip;
        self.open(cont, ip);
        Ok(())
    }

    /// CMC: CF = !CF.
    pub(super) fn cmc(&mut self) -> L<()> {
        let t = self.temp()?;
        self.emit(Op::GetCond { dst: t, cc: 3 }); // AE: !CF
        self.emit(Op::FlagsSet {
            src: Src::Reg(t),
            mask: CF,
        });
        Ok(())
    }

    /// PUSHF / PUSHFD.
    pub(super) fn pushf(&mut self, ins: &Instruction) -> L<()> {
        // VM and RF read as 0 (L0's h_pushf).
        let w = width_of_bytes(ins.stack_pointer_increment().unsigned_abs() as usize)?;
        let t = self.temp()?;
        self.emit(Op::FlagsGet { dst: t });
        self.emit(Op::Alu {
            op: AluOp::And,
            w: Width::W32,
            dst: t,
            a: Src::Reg(t),
            b: Src::Imm(0x00FC_FFFF),
        });
        self.push(
            w,
            Src::Reg(Reg {
                v: t.v,
                lane: lane_for(w),
            }),
        )?;
        Ok(())
    }

    /// LAHF: AH = the low FLAGS byte.
    pub(super) fn lahf(&mut self) {
        self.emit(Op::FlagsGet { dst: Reg::h(0) })
    }

    /// SAHF: SF ZF AF PF CF = AH.
    pub(super) fn sahf(&mut self) {
        self.emit(Op::FlagsSet {
            src: Src::Reg(Reg::h(0)),
            mask: 0xD5,
        });
    }

    /// POPF / POPFD; the driver looks first if IF rose or TF is set.
    pub(super) fn popf(&mut self, ins: &Instruction) -> L<()> {
        // Real mode loads IOPL and NT too; if IF rose or TF is set,
        // the driver looks before the next instruction.
        let w = width_of_bytes(ins.stack_pointer_increment() as usize)?;
        let Some(mask) = self.model.popf_mask(w == Width::W32) else {
            return no("popf in this model");
        };
        let t = self.pop(w)?;
        let old = self.temp()?;
        self.emit(Op::FlagsGet { dst: old });
        self.emit(Op::FlagsSet {
            src: Src::Reg(t),
            mask,
        });
        self.stop_if_if_rose_or_tf(old, Src::Reg(t))?;
        // DF may have changed.
        self.delta_cache = [None; 3];
        self.owed_check();
        Ok(())
    }
}
