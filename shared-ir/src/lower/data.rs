//! Data movement: MOV (with segment registers), LEA, XCHG, MOVZX/MOVSX,
//! the accumulator sign extensions, XLATB, LxS far-pointer loads and port
//! I/O.
//!
//! It owns these instructions' µops only; operand access is `operands`'s.

use super::operands::{lane_for, op_size, seg_of, width_of_bytes, Opnd};
use super::{no, LineBuilder, Unsupported, L};
use crate::flags::Width;
use crate::ir::*;
use crate::machine::{MachineModel, Seg};
use iced_x86::{Instruction, Mnemonic, OpKind, Register};

impl<M: MachineModel> LineBuilder<'_, M> {
    /// MOV: register, memory, immediate and segment-register forms.
    pub(super) fn mov(&mut self, ins: &Instruction) -> L<()> {
        let w0 = || width_of_bytes(op_size(ins, 0)?);
        let k0 = ins.op_kind(0);
        let k1 = ins.op_kind(1);
        if k0 == OpKind::Register && ins.op_register(0).is_segment_register() {
            let s = seg_of(ins.op_register(0)).ok_or(Unsupported("segment"))?;
            if matches!(s, Seg::Ss | Seg::Cs) {
                return no("mov ss/cs (interrupt shadow or #UD)");
            }
            // Checked before the source is read (`load_seg` checks again) so
            // that this refusal wins over one from the source operand.
            let (Some(_), Some(_)) = (self.model.seg_selector(s), self.model.seg_base(s)) else {
                return no("segment load in this model");
            };
            let src = self.opnd(ins, 1)?;
            let v = self.read(src, Width::W16)?;
            self.load_seg(s, v)?;
        } else if k1 == OpKind::Register && ins.op_register(1).is_segment_register() {
            let s = seg_of(ins.op_register(1)).ok_or(Unsupported("segment"))?;
            let sel = self.model.seg_selector(s).ok_or(Unsupported("selector"))?;
            let src = Src::Reg(Reg::w(sel.0));
            match self.opnd(ins, 0)? {
                Opnd::Reg(r) => self.emit(Op::Mov { dst: r, src }),
                Opnd::Mem(a) => self.store(Width::W16, a, src, true),
                Opnd::Imm(_) => return no("mov imm, sreg"),
            }
        } else {
            let w = w0()?;
            let s = self.opnd(ins, 1)?;
            let src = self.read(s, w)?;
            match self.opnd(ins, 0)? {
                Opnd::Reg(r) => self.emit(Op::Mov { dst: r, src }),
                Opnd::Mem(a) => self.store(w, a, src, true),
                Opnd::Imm(_) => return no("mov to immediate"),
            }
        }
        Ok(())
    }

    /// LEA: the effective address computed with ALU ops, cut to the address size.
    pub(super) fn lea(&mut self, ins: &Instruction) -> L<()> {
        let Opnd::Reg(d) = self.opnd(ins, 0)? else {
            return no("lea destination");
        };
        let a = self.addr(ins)?;
        let t = self.temp()?;
        let base = a.base.map_or(Src::Imm(0), |v| Src::Reg(Reg::d(v.0)));
        self.emit(Op::Mov { dst: t, src: base });
        if let Some(i) = a.index {
            let u = self.temp()?;
            self.emit(Op::Alu {
                op: AluOp::Shl,
                w: Width::W32,
                dst: u,
                a: Src::Reg(Reg::d(i.0)),
                b: Src::Imm(a.scale as u32),
            });
            self.emit(Op::Alu {
                op: AluOp::Add,
                w: Width::W32,
                dst: t,
                a: Src::Reg(t),
                b: Src::Reg(u),
            });
        }
        self.emit(Op::Alu {
            op: AluOp::Add,
            w: Width::W32,
            dst: t,
            a: Src::Reg(t),
            b: Src::Imm(a.disp),
        });
        self.emit(Op::Mov {
            dst: d,
            src: Src::Reg(Reg {
                v: t.v,
                lane: if a.asize == AddrSize::A16 {
                    Lane::W
                } else {
                    Lane::D
                },
            }),
        });
        Ok(())
    }

    /// XCHG of two registers or a register and memory.
    pub(super) fn xchg(&mut self, ins: &Instruction) -> L<()> {
        let (a, b) = match (self.opnd(ins, 0)?, self.opnd(ins, 1)?) {
            (Opnd::Reg(a), Opnd::Reg(b)) => (a, b),
            (Opnd::Mem(m), Opnd::Reg(r)) | (Opnd::Reg(r), Opnd::Mem(m)) => {
                // Load, store the register, then the register: the
                // store is checked by the load's identical access.
                let w = width_of_bytes(op_size(ins, 0)?)?;
                let t = self.read(Opnd::Mem(m), w)?;
                self.store(w, m, Src::Reg(r), false);
                self.emit(Op::Mov { dst: r, src: t });
                self.owed_check();
                return Ok(());
            }
            _ => return no("xchg form"),
        };
        if a != b {
            let t = self.temp()?;
            self.emit(Op::Mov {
                dst: t,
                src: Src::Reg(a),
            });
            self.emit(Op::Mov {
                dst: a,
                src: Src::Reg(b),
            });
            self.emit(Op::Mov {
                dst: b,
                src: Src::Reg(t),
            });
        }
        Ok(())
    }

    /// MOVZX / MOVSX.
    pub(super) fn movx(&mut self, ins: &Instruction) -> L<()> {
        use Mnemonic as X;
        let m = ins.mnemonic();
        let Opnd::Reg(d) = self.opnd(ins, 0)? else {
            return no("movzx destination");
        };
        let sw = width_of_bytes(op_size(ins, 1)?)?;
        let s = self.opnd(ins, 1)?;
        let src = self.read(s, sw)?;
        let Src::Reg(sr) = src else {
            return no("movzx immediate");
        };
        if m == X::Movzx {
            self.emit(Op::Mov { dst: d, src });
        } else {
            self.emit(Op::Sext {
                dst: d,
                src: sr,
                from: sw,
            });
        }
        Ok(())
    }

    /// CBW CWDE CWD CDQ: the accumulator sign-extended in place or into DX.
    pub(super) fn widen_acc(&mut self, m: Mnemonic) {
        use Mnemonic as X;
        match m {
            X::Cbw => self.emit(Op::Sext {
                dst: Reg::w(0),
                src: Reg::b(0),
                from: Width::W8,
            }),
            X::Cwde => self.emit(Op::Sext {
                dst: Reg::d(0),
                src: Reg::w(0),
                from: Width::W16,
            }),
            X::Cwd => self.emit(Op::Alu {
                op: AluOp::Sar,
                w: Width::W16,
                dst: Reg::w(2),
                a: Src::Reg(Reg::w(0)),
                b: Src::Imm(15),
            }),
            X::Cdq => self.emit(Op::Alu {
                op: AluOp::Sar,
                w: Width::W32,
                dst: Reg::d(2),
                a: Src::Reg(Reg::d(0)),
                b: Src::Imm(31),
            }),
            _ => unreachable!("not CBW/CWDE/CWD/CDQ"),
        }
    }

    /// XLATB: AL = [seg: BX + AL].
    pub(super) fn xlat(&mut self, ins: &Instruction) -> L<()> {
        // AL = [seg: BX + AL] at A16, [seg: EBX + AL] at A32.
        let asize = match ins.memory_base() {
            Register::BX => AddrSize::A16,
            Register::EBX => AddrSize::A32,
            _ => return no("xlat form"),
        };
        let seg = seg_of(ins.memory_segment()).ok_or(Unsupported("segment"))?;
        let sd = self.seg(seg)?;
        let t = self.temp()?;
        self.emit(Op::Mov {
            dst: t,
            src: Src::Reg(Reg::b(0)),
        });
        let addr = Addr {
            seg: sd.base,
            base: Some(VReg(3)),
            index: Some(t.v),
            scale: 0,
            disp: 0,
            asize,
            limit: sd.limit,
        };
        let site = self.before();
        self.emit(Op::Load {
            w: Width::W8,
            dst: Reg::b(0),
            addr,
            path: MemPath::Fast,
            site,
        });
        Ok(())
    }

    /// IN / OUT with an immediate or DX port.
    pub(super) fn in_out(&mut self, ins: &Instruction) -> L<()> {
        use Mnemonic as X;
        let m = ins.mnemonic();
        let (port, reg) = if m == X::In { (1, 0) } else { (0, 1) };
        let w = width_of_bytes(op_size(ins, reg)?)?;
        let p = match ins.op_kind(port) {
            OpKind::Register => Src::Reg(Reg::w(2)),
            _ => Src::Imm(ins.immediate(port) as u32 & 0xFF),
        };
        let acc = Reg {
            v: VReg(0),
            lane: lane_for(w),
        };
        let site = self.before();
        if m == X::In {
            self.emit(Op::In {
                w,
                dst: acc,
                port: p,
                site,
            });
            // A read may ask for a stop (a device wants the driver):
            // it lands right after this instruction.
            self.owed_check();
        } else {
            let after = Some(self.after());
            self.emit(Op::Out {
                w,
                port: p,
                val: Src::Reg(acc),
                site,
                after,
            });
        }
        Ok(())
    }

    /// LES LDS LSS LFS LGS with an m16:16 pointer.
    pub(super) fn lxs(&mut self, ins: &Instruction) -> L<()> {
        use Mnemonic as X;
        let m = ins.mnemonic();
        // m16:16 only: the whole pointer is checked, then offset
        // and selector are read (L0's read_far_ptr).
        let s = match m {
            X::Les => Seg::Es,
            X::Lds => Seg::Ds,
            X::Lss => Seg::Ss,
            X::Lfs => Seg::Fs,
            _ => Seg::Gs,
        };
        let Opnd::Reg(d) = self.opnd(ins, 0)? else {
            return no("lxs destination");
        };
        if d.lane != Lane::W {
            return no("lxs with a 32-bit offset");
        }
        let Opnd::Mem(addr) = self.opnd(ins, 1)? else {
            return no("lxs source");
        };
        let (off, sel) = self.far_ptr(addr)?;
        self.emit(Op::Mov {
            dst: d,
            src: Src::Reg(off),
        });
        self.load_seg(s, Src::Reg(sel))?;
        Ok(())
    }
}
