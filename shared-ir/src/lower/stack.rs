//! The stack: SP and SS:SP addresses, push and pop, the m16:16 far
//! pointer read, the far CALL return frame, and the stack instructions
//! (PUSH POP PUSHA POPA ENTER LEAVE).
//!
//! It owns stack accesses only; control transfers that use the stack
//! (CALL RET INT IRET) live in `control`, PUSHF/POPF in `flags`.

use super::operands::{lane_for, seg_of, width_of_bytes, Opnd};
use super::{no, LineBuilder, Unsupported, L};
use crate::flags::Width;
use crate::ir::*;
use crate::machine::{MachineModel, Seg};
use iced_x86::{Code, Instruction, Mnemonic, OpKind};

impl<M: MachineModel> LineBuilder<'_, M> {
    pub(super) fn sp(&self) -> L<Reg> {
        match self.model.stack_width() {
            Width::W16 => Ok(Reg::w(4)),
            _ => Ok(Reg::d(4)),
        }
    }

    /// SP (ESP on a 32-bit stack) = SP `op` `n`: how the multi-slot
    /// sequences (far CALL/RET, INT/IRET, PUSHA/POPA, RET n) move the stack
    /// pointer once.
    pub(super) fn move_sp(&mut self, op: AluOp, n: u32) {
        let sp = match self.model.stack_width() {
            Width::W16 => Reg::w(4),
            _ => Reg::d(4),
        };
        self.emit(Op::Alu {
            op,
            w: sp.lane.width(),
            dst: sp,
            a: Src::Reg(sp),
            b: Src::Imm(n),
        });
    }

    pub(super) fn stack_addr(&self, disp: u32) -> Addr {
        let a16 = self.model.stack_width() == Width::W16;
        Addr {
            seg: self.model.seg_base(Seg::Ss),
            base: Some(VReg(4)),
            index: None,
            scale: 0,
            disp,
            asize: if a16 { AddrSize::A16 } else { AddrSize::A32 },
            limit: self.model.seg_limit(Seg::Ss),
        }
    }

    pub(super) fn push(&mut self, w: Width, src: Src) -> L<()> {
        self.push_then(w, src, true)
    }

    /// A push; `owed`: test for an owed stop right after it (the push is the
    /// whole instruction). A CALL's push is not: its next boundary is the
    /// call target, where the link or lookup exit tests the owed stop, so an
    /// owed stop there must not report the fall-through IP.
    pub(super) fn push_then(&mut self, w: Width, src: Src, owed: bool) -> L<()> {
        let n = w.bytes();
        // A narrower source (a selector in a 32-bit slot) is zero-extended.
        let src = match src {
            Src::Reg(r) if r.lane.width().bits() < w.bits() => {
                let t = self.temp()?;
                self.emit(Op::Mov { dst: t, src });
                Src::Reg(t)
            }
            s => s,
        };
        self.store(w, self.stack_addr(n.wrapping_neg()), src, false);
        let sp = self.sp()?;
        let sw = sp.lane.width();
        self.emit(Op::Alu {
            op: AluOp::Sub,
            w: sw,
            dst: sp,
            a: Src::Reg(sp),
            b: Src::Imm(n),
        });
        if owed {
            self.owed_check();
        }
        Ok(())
    }

    /// A far CALL's return frame: CS then IP stored below SP, both before SP
    /// moves (a fault in the second store leaves the first written and SP
    /// alone, as in L0), then SP -= 4. `cs_sel` is CS's selector vreg.
    pub(super) fn push_far_return(&mut self, cs_sel: VReg) {
        let next = self.next_ip;
        // Both slots are checked before either store: with SP = 3 the CS
        // slot fits and the IP slot (FFFFh) faults. A fault exit re-runs the
        // instruction from its start on the L1 side, which is exact only if
        // nothing was stored yet: the CS store may have overwritten the
        // CALL's own bytes (SS = CS), and the re-run decoded another
        // instruction (oracle fuzz; arm_regressions' far_call_push_faults).
        let site = self.before();
        for k in [1u32, 2] {
            self.emit(Op::Check {
                w: Width::W16,
                addr: self.stack_addr((2 * k).wrapping_neg()),
                site,
            });
        }
        self.store(
            Width::W16,
            self.stack_addr(2u32.wrapping_neg()),
            Src::Reg(Reg::w(cs_sel.0)),
            false,
        );
        self.store(
            Width::W16,
            self.stack_addr(4u32.wrapping_neg()),
            Src::Imm(next),
            false,
        );
        self.move_sp(AluOp::Sub, 4);
    }

    /// Pops into a temp (SP updated); returns the temp.
    pub(super) fn pop(&mut self, w: Width) -> L<Reg> {
        let t = self.temp()?;
        let site = self.before();
        self.emit(Op::Load {
            w,
            dst: t,
            addr: self.stack_addr(0),
            path: MemPath::Fast,
            site,
        });
        let sp = self.sp()?;
        self.emit(Op::Alu {
            op: AluOp::Add,
            w: sp.lane.width(),
            dst: sp,
            a: Src::Reg(sp),
            b: Src::Imm(w.bytes()),
        });
        Ok(t)
    }

    /// Checks an m16:16 far pointer as one access, then reads offset and
    /// selector (L0's `read_far_ptr`).
    pub(super) fn far_ptr(&mut self, addr: Addr) -> L<(Reg, Reg)> {
        let site = self.before();
        self.emit(Op::Check {
            w: Width::W32,
            addr,
            site,
        });
        let (off, sel) = (self.temp()?, self.temp()?);
        self.emit(Op::Load {
            w: Width::W16,
            dst: off,
            addr,
            path: MemPath::Fast,
            site,
        });
        let mut a2 = addr;
        a2.disp = a2.disp.wrapping_add(2);
        self.emit(Op::Load {
            w: Width::W16,
            dst: sel,
            addr: a2,
            path: MemPath::Fast,
            site,
        });
        Ok((off, sel))
    }

    /// PUSH of a register, segment register, memory or immediate.
    pub(super) fn push_insn(&mut self, ins: &Instruction) -> L<()> {
        let w = width_of_bytes(ins.stack_pointer_increment().unsigned_abs() as usize)?;
        let src = match ins.op_kind(0) {
            OpKind::Register if ins.op_register(0).is_segment_register() => {
                let s = seg_of(ins.op_register(0)).ok_or(Unsupported("segment"))?;
                let sel = self.model.seg_selector(s).ok_or(Unsupported("selector"))?;
                Src::Reg(Reg::w(sel.0))
            }
            _ => {
                let o = self.opnd(ins, 0)?;
                self.read(o, w)?
            }
        };
        self.push(w, src)?;
        Ok(())
    }

    /// POP to a register or a data segment register (POP SS falls back).
    pub(super) fn pop_insn(&mut self, ins: &Instruction) -> L<()> {
        let w = width_of_bytes(ins.stack_pointer_increment() as usize)?;
        if ins.op_kind(0) == OpKind::Register && ins.op_register(0).is_segment_register() {
            // POP DS/ES/FS/GS: selector, then base = selector << 4. POP SS
            // opens an interrupt shadow: L1 runs it.
            let s = seg_of(ins.op_register(0)).ok_or(Unsupported("segment"))?;
            let (Some(_), Some(_)) = (self.model.seg_selector(s), self.model.seg_base(s)) else {
                return no("segment load in this model");
            };
            if s == Seg::Ss || w != Width::W16 {
                return no("pop ss (interrupt shadow)");
            }
            let t = self.pop(w)?;
            self.load_seg(s, Src::Reg(Reg::w(t.v.0)))?;
            return Ok(());
        }
        if ins.op_kind(0) != OpKind::Register {
            return no("pop to memory");
        }
        let Opnd::Reg(d) = self.opnd(ins, 0)? else {
            return no("pop");
        };
        let t = self.pop(w)?;
        self.emit(Op::Mov {
            dst: d,
            src: Src::Reg(t),
        });
        Ok(())
    }

    /// LEAVE with the stack's own operand size (LEAVE on a 16-bit stack,
    /// LEAVED on a 32-bit one).
    pub(super) fn leave(&mut self, ins: &Instruction) -> L<()> {
        // SP = BP, pop BP: load first (at SS:BP) so a fault leaves SP alone.
        let w = self.model.stack_width();
        let form = if w == Width::W16 {
            Code::Leavew
        } else {
            Code::Leaved
        };
        if ins.code() != form {
            return no("leave form");
        }
        let t = self.temp()?;
        let site = self.before();
        let mut addr = self.stack_addr(0);
        addr.base = Some(VReg(5));
        self.emit(Op::Load {
            w,
            dst: t,
            addr,
            path: MemPath::Fast,
            site,
        });
        let l = lane_for(w);
        self.emit(Op::Alu {
            op: AluOp::Add,
            w,
            dst: Reg {
                v: VReg(4),
                lane: l,
            },
            a: Src::Reg(Reg {
                v: VReg(5),
                lane: l,
            }),
            b: Src::Imm(w.bytes()),
        });
        self.emit(Op::Mov {
            dst: Reg {
                v: VReg(5),
                lane: l,
            },
            src: Src::Reg(Reg { v: t.v, lane: l }),
        });
        Ok(())
    }

    /// PUSHA / PUSHAD.
    pub(super) fn pusha(&mut self, ins: &Instruction) -> L<()> {
        use Mnemonic as X;
        let m = ins.mnemonic();
        // AX CX DX BX (old SP) BP SI DI; the first and last slots
        // are checked before any store, as L0 does.
        let (w, n) = if m == X::Pushad {
            (Width::W32, 4u32)
        } else {
            (Width::W16, 2u32)
        };
        let site = self.before();
        for k in [1u32, 8] {
            self.emit(Op::Check {
                w,
                addr: self.stack_addr((n * k).wrapping_neg()),
                site,
            });
        }
        for k in 0..8u16 {
            let src = Src::Reg(Reg {
                v: VReg(k),
                lane: lane_for(w),
            });
            self.store(
                w,
                self.stack_addr((n * (k as u32 + 1)).wrapping_neg()),
                src,
                false,
            );
        }
        self.move_sp(AluOp::Sub, 8 * n);
        self.owed_check();
        Ok(())
    }

    /// POPA / POPAD.
    pub(super) fn popa(&mut self, ins: &Instruction) -> L<()> {
        use Mnemonic as X;
        let m = ins.mnemonic();
        // DI SI BP (SP skipped) BX DX CX AX: every slot read before
        // any register is written.
        let (w, n) = if m == X::Popad {
            (Width::W32, 4u32)
        } else {
            (Width::W16, 2u32)
        };
        let site = self.before();
        let mut vals = Vec::new();
        for (k, r) in (0..8u16).rev().enumerate() {
            if r == 4 {
                continue;
            }
            let t = self.temp()?;
            self.emit(Op::Load {
                w,
                dst: t,
                addr: self.stack_addr(n * k as u32),
                path: MemPath::Fast,
                site,
            });
            vals.push((r, t));
        }
        for (r, t) in vals {
            self.emit(Op::Mov {
                dst: Reg {
                    v: VReg(r),
                    lane: lane_for(w),
                },
                src: Src::Reg(Reg {
                    v: t.v,
                    lane: lane_for(w),
                }),
            });
        }
        self.move_sp(AluOp::Add, 8 * n);
        Ok(())
    }

    /// ENTER imm16, 0 or 1 with the stack's own operand size (ENTER on a
    /// 16-bit stack, ENTERD on a 32-bit one).
    pub(super) fn enter(&mut self, ins: &Instruction) -> L<()> {
        // push BP, [push frame], BP = frame, SP = frame [- n] - imm16.
        let level = ins.immediate(1) as u32 & 31;
        let w = self.model.stack_width();
        let form = if w == Width::W16 {
            Code::Enterw_imm16_imm8
        } else {
            Code::Enterd_imm16_imm8
        };
        if ins.code() != form || level > 1 {
            return no("enter form");
        }
        let (n, l) = (w.bytes(), lane_for(w));
        let r = |v: u16| Reg {
            v: VReg(v),
            lane: l,
        };
        let imm = ins.immediate(0) as u32 & 0xFFFF;
        self.store(w, self.stack_addr(n.wrapping_neg()), Src::Reg(r(5)), false);
        let f = self.temp()?;
        self.emit(Op::Alu {
            op: AluOp::Sub,
            w,
            dst: f,
            a: Src::Reg(r(4)),
            b: Src::Imm(n),
        });
        let fl = Reg { v: f.v, lane: l };
        if level == 1 {
            self.store(
                w,
                self.stack_addr((2 * n).wrapping_neg()),
                Src::Reg(fl),
                false,
            );
        }
        self.emit(Op::Mov {
            dst: r(5),
            src: Src::Reg(fl),
        });
        self.emit(Op::Alu {
            op: AluOp::Sub,
            w,
            dst: r(4),
            a: Src::Reg(fl),
            b: Src::Imm(imm + n * level),
        });
        self.owed_check();
        Ok(())
    }
}
