//! Arithmetic and logic: the fused flag-writing ALU ops, shifts and
//! rotates, SETcc, multiply and divide, SHLD/SHRD, the bit tests and the
//! BCD adjusts (the last few as helper calls, with L0's flags).
//!
//! It owns these instructions' µops only; operand access is `operands`'s.

use super::operands::{lane_for, op_size, width_of_bytes, Opnd};
use super::{no, LineBuilder, L};
use crate::flags::Width;
use crate::ir::*;
use crate::machine::MachineModel;
use iced_x86::{Instruction, Mnemonic, OpKind, Register};

impl<M: MachineModel> LineBuilder<'_, M> {
    /// ADD OR ADC SBB AND SUB XOR: fused flag-writing ALU op, read-modify-write.
    pub(super) fn arith(&mut self, ins: &Instruction) -> L<()> {
        use Mnemonic as X;
        let m = ins.mnemonic();
        let op = match m {
            X::Add => ArithOp::Add,
            X::Or => ArithOp::Or,
            X::Adc => ArithOp::Adc,
            X::Sbb => ArithOp::Sbb,
            X::And => ArithOp::And,
            X::Sub => ArithOp::Sub,
            _ => ArithOp::Xor,
        };
        self.rmw(ins, |s, d, src, w| {
            s.emit(Op::Arith {
                op,
                w,
                dst: Some(d),
                a: Src::Reg(d),
                b: src,
            });
            Ok(())
        })?;
        Ok(())
    }

    /// CMP / TEST: flags only.
    pub(super) fn cmp_test(&mut self, ins: &Instruction) -> L<()> {
        use Mnemonic as X;
        let m = ins.mnemonic();
        let w0 = || width_of_bytes(op_size(ins, 0)?);
        let w = w0()?;
        let a = self.opnd(ins, 0)?;
        let a = self.read(a, w)?;
        let b = self.opnd(ins, 1)?;
        let b = self.read(b, w)?;
        self.emit(Op::Arith {
            op: if m == X::Cmp {
                ArithOp::Sub
            } else {
                ArithOp::And
            },
            w,
            dst: None,
            a,
            b,
        });
        Ok(())
    }

    /// INC DEC NEG, read-modify-write.
    pub(super) fn inc_dec_neg(&mut self, ins: &Instruction) -> L<()> {
        use Mnemonic as X;
        let m = ins.mnemonic();
        let op = match m {
            X::Inc => ArithOp::Inc,
            X::Dec => ArithOp::Dec,
            _ => ArithOp::Neg,
        };
        self.rmw(ins, |s, d, _, w| {
            s.emit(Op::Arith {
                op,
                w,
                dst: Some(d),
                a: Src::Reg(d),
                b: Src::Imm(0),
            });
            Ok(())
        })?;
        Ok(())
    }

    /// NOT (no flags).
    pub(super) fn not(&mut self, ins: &Instruction) -> L<()> {
        self.rmw(ins, |s, d, _, w| {
            s.emit(Op::Alu {
                op: AluOp::Xor,
                w,
                dst: d,
                a: Src::Reg(d),
                b: Src::Imm(w.mask()),
            });
            Ok(())
        })?;
        Ok(())
    }

    /// Rotates and shifts by an immediate or CL.
    pub(super) fn shift(&mut self, ins: &Instruction) -> L<()> {
        use Mnemonic as X;
        let m = ins.mnemonic();
        let op = match m {
            X::Rol => ShiftOp::Rol,
            X::Ror => ShiftOp::Ror,
            X::Rcl => ShiftOp::Rcl,
            X::Rcr => ShiftOp::Rcr,
            X::Shl | X::Sal => ShiftOp::Shl,
            X::Shr => ShiftOp::Shr,
            _ => ShiftOp::Sar,
        };
        self.rmw(ins, |s, d, count, w| {
            s.emit(Op::Shift {
                op,
                w,
                dst: d,
                a: Src::Reg(d),
                count,
            });
            Ok(())
        })?;
        Ok(())
    }

    /// SETcc to a register or memory byte.
    pub(super) fn setcc(&mut self, ins: &Instruction) -> L<()> {
        let cc = (ins.condition_code() as u8).wrapping_sub(1);
        if cc > 15 {
            return no("setcc condition");
        }
        match self.opnd(ins, 0)? {
            Opnd::Reg(r) => self.emit(Op::GetCond { dst: r, cc }),
            Opnd::Mem(a) => {
                let t = self.temp()?;
                self.emit(Op::GetCond { dst: t, cc });
                self.store(Width::W8, a, Src::Reg(t), true);
            }
            Opnd::Imm(_) => return no("setcc"),
        }
        Ok(())
    }

    /// IMUL with two or three operands: the truncated product.
    pub(super) fn imul_trunc(&mut self, ins: &Instruction) -> L<()> {
        let w0 = || width_of_bytes(op_size(ins, 0)?);
        let w = w0()?;
        let Opnd::Reg(d) = self.opnd(ins, 0)? else {
            return no("imul destination");
        };
        let (a, b) = if ins.op_count() == 3 {
            let a = self.opnd(ins, 1)?;
            (
                self.read(a, w)?,
                Src::Imm(ins.immediate(2) as u32 & w.mask()),
            )
        } else {
            let b = self.opnd(ins, 1)?;
            (Src::Reg(d), self.read(b, w)?)
        };
        let helper = match w {
            Width::W16 => Helper::ImulTrunc16,
            Width::W32 => Helper::ImulTrunc32,
            Width::W8 => return no("imul r8"),
        };
        let site = self.before();
        self.emit(Op::Call {
            helper,
            outs: [Some(d), None],
            args: [a, b, Src::Imm(0)],
            site,
        });
        Ok(())
    }

    /// MUL IMUL DIV IDIV with one operand: one helper on AX/DX:AX/EDX:EAX.
    pub(super) fn mul_div(&mut self, ins: &Instruction) -> L<()> {
        use Mnemonic as X;
        let m = ins.mnemonic();
        let w0 = || width_of_bytes(op_size(ins, 0)?);
        let w = w0()?;
        let s = self.opnd(ins, 0)?;
        let src = self.read(s, w)?;
        let site = self.before();
        let (helper, outs, args) = match (m, w) {
            (X::Mul, Width::W8) => (
                Helper::Mul8,
                [Some(Reg::w(0)), None],
                [Src::Reg(Reg::b(0)), src, Src::Imm(0)],
            ),
            (X::Imul, Width::W8) => (
                Helper::Imul8,
                [Some(Reg::w(0)), None],
                [Src::Reg(Reg::b(0)), src, Src::Imm(0)],
            ),
            (X::Div, Width::W8) => (
                Helper::Div8,
                [Some(Reg::b(0)), Some(Reg::h(0))],
                [Src::Reg(Reg::w(0)), src, Src::Imm(0)],
            ),
            (X::Idiv, Width::W8) => (
                Helper::Idiv8,
                [Some(Reg::b(0)), Some(Reg::h(0))],
                [Src::Reg(Reg::w(0)), src, Src::Imm(0)],
            ),
            (_, w) => {
                let (lo, hi) = (
                    Reg {
                        v: VReg(0),
                        lane: lane_for(w),
                    },
                    Reg {
                        v: VReg(2),
                        lane: lane_for(w),
                    },
                );
                match (m, w) {
                    (X::Mul, Width::W16) => (
                        Helper::Mul16,
                        [Some(lo), Some(hi)],
                        [Src::Reg(lo), src, Src::Imm(0)],
                    ),
                    (X::Mul, _) => (
                        Helper::Mul32,
                        [Some(lo), Some(hi)],
                        [Src::Reg(lo), src, Src::Imm(0)],
                    ),
                    (X::Imul, Width::W16) => (
                        Helper::Imul16,
                        [Some(lo), Some(hi)],
                        [Src::Reg(lo), src, Src::Imm(0)],
                    ),
                    (X::Imul, _) => (
                        Helper::Imul32,
                        [Some(lo), Some(hi)],
                        [Src::Reg(lo), src, Src::Imm(0)],
                    ),
                    (X::Div, Width::W16) => (
                        Helper::Div16,
                        [Some(lo), Some(hi)],
                        [Src::Reg(hi), Src::Reg(lo), src],
                    ),
                    (X::Div, _) => (
                        Helper::Div32,
                        [Some(lo), Some(hi)],
                        [Src::Reg(hi), Src::Reg(lo), src],
                    ),
                    (_, Width::W16) => (
                        Helper::Idiv16,
                        [Some(lo), Some(hi)],
                        [Src::Reg(hi), Src::Reg(lo), src],
                    ),
                    _ => (
                        Helper::Idiv32,
                        [Some(lo), Some(hi)],
                        [Src::Reg(hi), Src::Reg(lo), src],
                    ),
                }
            }
        };
        // Mul8/Imul8 produce one result (AX); the canonical form needs
        // unused outputs empty.
        let outs = if helper.arity().1 == 1 {
            [outs[0], None]
        } else {
            outs
        };
        self.emit(Op::Call {
            helper,
            outs,
            args,
            site,
        });
        Ok(())
    }

    /// SHLD / SHRD r/m, r, imm8|CL: one helper (flags as L0's).
    pub(super) fn shld_shrd(&mut self, ins: &Instruction) -> L<()> {
        use Mnemonic as X;
        let m = ins.mnemonic();
        let w0 = || width_of_bytes(op_size(ins, 0)?);
        // SHLD/SHRD r/m, r, imm8|CL: one helper (flags as L0's).
        let w = w0()?;
        let helper = match (m, w) {
            (X::Shld, Width::W16) => Helper::Shld16,
            (X::Shld, Width::W32) => Helper::Shld32,
            (_, Width::W16) => Helper::Shrd16,
            (_, Width::W32) => Helper::Shrd32,
            _ => return no("shld/shrd width"),
        };
        let Opnd::Reg(b) = self.opnd(ins, 1)? else {
            return no("shld/shrd source");
        };
        let count = match ins.op_kind(2) {
            OpKind::Register if ins.op_register(2) == Register::CL => Src::Reg(Reg::b(1)),
            OpKind::Immediate8 => Src::Imm(ins.immediate(2) as u32 & 0xFF),
            _ => return no("shld/shrd count"),
        };
        match self.opnd(ins, 0)? {
            Opnd::Reg(d) => self.call1(helper, d, [Src::Reg(d), Src::Reg(b), count]),
            Opnd::Mem(addr) => {
                let Src::Reg(t) = self.read(Opnd::Mem(addr), w)? else {
                    unreachable!()
                };
                self.probe_store(w, addr, t);
                self.call1(helper, t, [Src::Reg(t), Src::Reg(b), count]);
                self.store(w, addr, Src::Reg(t), true);
            }
            Opnd::Imm(_) => return no("shld/shrd destination"),
        }
        Ok(())
    }

    /// BT BTS BTR BTC, including the bit-string form with memory.
    pub(super) fn bt(&mut self, ins: &Instruction) -> L<()> {
        use Mnemonic as X;
        let m = ins.mnemonic();
        let w0 = || width_of_bytes(op_size(ins, 0)?);
        // Only CF changes. A register bit offset with a memory
        // operand addresses a bit string: the offset's signed high
        // part moves the address (in operand-size units).
        let w = w0()?;
        let helper = match w {
            Width::W16 => Helper::Bt16,
            Width::W32 => Helper::Bt32,
            Width::W8 => return no("bt width"),
        };
        let opi = match m {
            X::Bt => 0,
            X::Bts => 1,
            X::Btr => 2,
            _ => 3,
        };
        let bit = match self.opnd(ins, 1)? {
            Opnd::Reg(r) => Src::Reg(r),
            Opnd::Imm(v) => Src::Imm(v & 0xFF),
            Opnd::Mem(_) => return no("bt bit operand"),
        };
        match self.opnd(ins, 0)? {
            Opnd::Reg(d) => self.call1(helper, d, [Src::Reg(d), bit, Src::Imm(opi)]),
            Opnd::Mem(mut addr) => {
                if let Src::Reg(r) = bit {
                    if addr.index.is_some() {
                        return no("bt bit string with an index register");
                    }
                    // index = sign-extended offset >> log2(bits),
                    // scaled by the operand size.
                    let u = self.temp()?;
                    let sh = if w == Width::W16 { 4 } else { 5 };
                    if w == Width::W16 {
                        self.emit(Op::Sext {
                            dst: u,
                            src: r,
                            from: Width::W16,
                        });
                    } else {
                        self.emit(Op::Mov {
                            dst: u,
                            src: Src::Reg(r),
                        });
                    }
                    self.emit(Op::Alu {
                        op: AluOp::Sar,
                        w: Width::W32,
                        dst: u,
                        a: Src::Reg(u),
                        b: Src::Imm(sh),
                    });
                    addr.index = Some(u.v);
                    addr.scale = if w == Width::W16 { 1 } else { 2 };
                }
                let Src::Reg(t) = self.read(Opnd::Mem(addr), w)? else {
                    unreachable!()
                };
                if opi != 0 {
                    self.probe_store(w, addr, t);
                }
                self.call1(helper, t, [Src::Reg(t), bit, Src::Imm(opi)]);
                if opi != 0 {
                    self.store(w, addr, Src::Reg(t), true);
                }
            }
            Opnd::Imm(_) => return no("bt destination"),
        }
        Ok(())
    }

    /// DAA DAS AAA AAS AAM AAD: one helper each on AL or AX.
    pub(super) fn bcd(&mut self, ins: &Instruction) {
        use Mnemonic as X;
        let m = ins.mnemonic();
        match m {
            X::Daa | X::Das => {
                let h = if m == X::Daa {
                    Helper::Daa
                } else {
                    Helper::Das
                };
                self.call1(
                    h,
                    Reg::b(0),
                    [Src::Reg(Reg::b(0)), Src::Imm(0), Src::Imm(0)],
                );
            }
            X::Aaa | X::Aas => {
                let h = if m == X::Aaa {
                    Helper::Aaa
                } else {
                    Helper::Aas
                };
                self.call1(
                    h,
                    Reg::w(0),
                    [Src::Reg(Reg::w(0)), Src::Imm(0), Src::Imm(0)],
                );
            }
            X::Aam => {
                let b = ins.immediate(0) as u32 & 0xFF;
                self.call1(
                    Helper::Aam,
                    Reg::w(0),
                    [Src::Reg(Reg::b(0)), Src::Imm(b), Src::Imm(0)],
                );
            }
            X::Aad => {
                let b = ins.immediate(0) as u32 & 0xFF;
                self.call1(
                    Helper::Aad,
                    Reg::w(0),
                    [Src::Reg(Reg::w(0)), Src::Imm(b), Src::Imm(0)],
                );
            }
            _ => unreachable!("not a BCD adjust"),
        }
    }
}
