//! Control transfers, which end the program: near and far JMP/CALL,
//! RET/RETF, Jcc, LOOP/JCXZ, INT n (vector table at 0) and IRET, as links
//! to known targets or lookup exits to computed ones.
//!
//! It owns the line's ending by a transfer only; it must not continue a
//! line past one.

use super::operands::{lane_for, op_size, width_of_bytes, Opnd};
use super::{no, Flow, LineBuilder, L};
use crate::flags::{Width, IF, TF};
use crate::ir::*;
use crate::machine::{MachineModel, Seg};
use iced_x86::{Code, Instruction, Mnemonic, OpKind};

impl<M: MachineModel> LineBuilder<'_, M> {
    /// INT n / INT3 with the vector table at linear 0 (the driver
    /// guarantees it, [`LowerOpts::ivt_at_zero`]): all three stack slots
    /// checked, the vector read, FLAGS CS IP pushed, IF and TF cleared, a
    /// lookup exit to the handler (L0's `push_frame`).
    pub(super) fn int(&mut self, ins: &Instruction) -> L<Flow> {
        let v = if ins.mnemonic() == Mnemonic::Int3 {
            3
        } else {
            ins.immediate(0) as u32 & 0xFF
        };
        if self.model.stack_width() != Width::W16 {
            return no("int stack");
        }
        let (Some(sel_v), Some(base_v)) = (
            self.model.seg_selector(Seg::Cs),
            self.model.seg_base(Seg::Cs),
        ) else {
            return no("int in this model");
        };
        let site = self.before();
        for k in 1..=3u32 {
            self.emit(Op::Check {
                w: Width::W16,
                addr: self.stack_addr((2 * k).wrapping_neg()),
                site,
            });
        }
        let vec = |d: u32| Addr {
            seg: None,
            base: None,
            index: None,
            scale: 0,
            disp: 4 * v + d,
            asize: AddrSize::A32,
            limit: 0xFFFF_FFFF,
        };
        let (ip_t, cs_t, f) = (self.temp()?, self.temp()?, self.temp()?);
        for (t, d) in [(ip_t, 0), (cs_t, 2)] {
            self.emit(Op::Load {
                w: Width::W16,
                dst: t,
                addr: vec(d),
                path: MemPath::Fast,
                site,
            });
        }
        self.emit(Op::FlagsGet { dst: f });
        let next = self.next_ip;
        for (k, src) in [
            (1u32, Src::Reg(Reg::w(f.v.0))),
            (2, Src::Reg(Reg::w(sel_v.0))),
            (3, Src::Imm(next)),
        ] {
            self.store(
                Width::W16,
                self.stack_addr((2 * k).wrapping_neg()),
                src,
                false,
            );
        }
        self.move_sp(AluOp::Sub, 6);
        self.emit(Op::FlagsSet {
            src: Src::Imm(0),
            mask: IF | TF,
        });
        self.load_seg(Seg::Cs, Src::Reg(Reg::w(cs_t.v.0)))?;
        self.end_indirect(Src::Reg(Reg::w(ip_t.v.0)), Src::Reg(Reg::d(base_v.0)));
        Ok(Flow::End)
    }

    /// IRET (16-bit): IP, CS, FLAGS read before anything moves; if IF rose
    /// or TF is set, the lookup exit reports a stop at the target so the
    /// driver looks first.
    pub(super) fn iret(&mut self, ins: &Instruction) -> L<Flow> {
        if ins.code() != Code::Iretw || self.model.stack_width() != Width::W16 {
            return no("iret form");
        }
        let Some(mask) = self.model.popf_mask(false) else {
            return no("iret in this model");
        };
        let Some(base_v) = self.model.seg_base(Seg::Cs) else {
            return no("iret in this model");
        };
        let site = self.before();
        let (ip_t, cs_t, fl_t, old) = (self.temp()?, self.temp()?, self.temp()?, self.temp()?);
        for (t, d) in [(ip_t, 0u32), (cs_t, 2), (fl_t, 4)] {
            self.emit(Op::Load {
                w: Width::W16,
                dst: t,
                addr: self.stack_addr(d),
                path: MemPath::Fast,
                site,
            });
        }
        self.move_sp(AluOp::Add, 6);
        self.load_seg(Seg::Cs, Src::Reg(Reg::w(cs_t.v.0)))?;
        self.emit(Op::FlagsGet { dst: old });
        self.emit(Op::FlagsSet {
            src: Src::Reg(fl_t),
            mask,
        });
        self.stop_if_if_rose_or_tf(old, Src::Reg(fl_t))?;
        self.end_indirect(Src::Reg(Reg::w(ip_t.v.0)), Src::Reg(Reg::d(base_v.0)));
        Ok(Flow::End)
    }

    /// Control transfers end the program.
    pub(super) fn branch(&mut self, ins: &Instruction) -> L<Flow> {
        use Mnemonic as X;
        let m = ins.mnemonic();
        let next = self.next_ip;
        // The code's own size is the model's: 16-bit code in real mode,
        // 32-bit code in a flat model.
        let code32 = self.model.default_asize() == AddrSize::A32;
        let want = if code32 {
            iced_x86::CodeSize::Code32
        } else {
            iced_x86::CodeSize::Code16
        };
        if ins.code_size() != want {
            return no("branch in code of another size");
        }
        // The width of a near return address and of EIP: a 66h branch in
        // 32-bit code truncates EIP to 16 bits, left to the finer tier.
        let ipw = if code32 { Width::W32 } else { Width::W16 };
        let near = |ins: &Instruction| -> L<u32> {
            match ins.op_kind(0) {
                OpKind::NearBranch16 if !code32 => Ok(ins.near_branch_target() as u32),
                OpKind::NearBranch32 => Ok(ins.near_branch_target() as u32),
                OpKind::NearBranch16 => no("16-bit branch in 32-bit code"),
                _ => no("indirect or far branch"),
            }
        };
        // In 16-bit code a 32-bit operand size can #GP on a target past the
        // limit: leave it to L1. Flat 32-bit code segments span 4 GiB.
        let target_ok = |t: u32| code32 || t <= 0xFFFF;
        let ip_lane = lane_for(ipw);
        match m {
            X::Jmp | X::Call if ins.op_kind(0) == OpKind::FarBranch16 => {
                // JMP/CALL ptr16:16: CS = selector (base = selector << 4),
                // then a static link to the new code key. CALL pushes CS then
                // IP, both stores before SP moves (a fault in the second
                // leaves the first written and SP alone, as in L0).
                let (Some(sel_v), Some(base_v)) = (
                    self.model.seg_selector(Seg::Cs),
                    self.model.seg_base(Seg::Cs),
                ) else {
                    return no("far branch in this model");
                };
                let sel = ins.far_branch_selector() as u32;
                let off = ins.far_branch16() as u32;
                if m == X::Call {
                    self.push_far_return(sel_v);
                    self.ended_by_call = true;
                }
                self.emit(Op::Mov {
                    dst: Reg::d(sel_v.0),
                    src: Src::Imm(sel),
                });
                self.emit(Op::Mov {
                    dst: Reg::d(base_v.0),
                    src: Src::Imm(sel << 4),
                });
                let b = self.new_block();
                self.blocks[b.0 as usize].term = Term::Link {
                    key: self.model.key(sel << 4, off),
                    site: Site::new(off, 0),
                };
                self.count += 1;
                self.close(Term::Jmp(b));
            }
            X::Jmp | X::Call if matches!(ins.code(), Code::Jmp_m1616 | Code::Call_m1616) => {
                // JMP/CALL m16:16: the pointer checked and read first; CALL
                // pushes CS then IP (both stores before SP moves); a lookup
                // exit into the new code segment.
                let (Some(sel_v), Some(base_v)) = (
                    self.model.seg_selector(Seg::Cs),
                    self.model.seg_base(Seg::Cs),
                ) else {
                    return no("far branch in this model");
                };
                let Opnd::Mem(addr) = self.opnd(ins, 0)? else {
                    return no("far indirect operand");
                };
                let (off, sel) = self.far_ptr(addr)?;
                if m == X::Call {
                    self.push_far_return(sel_v);
                }
                self.load_seg(Seg::Cs, Src::Reg(Reg::w(sel.v.0)))?;
                self.end_indirect(Src::Reg(Reg::w(off.v.0)), Src::Reg(Reg::d(base_v.0)));
            }
            X::Jmp | X::Call if matches!(ins.op_kind(0), OpKind::Register | OpKind::Memory) => {
                // Near indirect (16-bit operand size): the target is read
                // before the push; the exit is a lookup.
                let w = width_of_bytes(op_size(ins, 0)?)?;
                if w != ipw {
                    return no("indirect branch of another operand size");
                }
                let o = self.opnd(ins, 0)?;
                let t = match o {
                    Opnd::Reg(r) => {
                        let t = self.temp()?;
                        self.emit(Op::Mov {
                            dst: t,
                            src: Src::Reg(r),
                        });
                        t
                    }
                    _ => match self.read(o, w)? {
                        Src::Reg(t) => t,
                        Src::Imm(_) => return no("indirect immediate"),
                    },
                };
                if m == X::Call {
                    self.push_then(ipw, Src::Imm(next), false)?;
                }
                let cs = self
                    .model
                    .seg_base(Seg::Cs)
                    .map_or(Src::Imm(0), |v| Src::Reg(Reg::d(v.0)));
                self.end_indirect(
                    Src::Reg(Reg {
                        v: t.v,
                        lane: ip_lane,
                    }),
                    cs,
                );
            }
            X::Retf => {
                // RETF [n] (16-bit): both slots read before SP moves.
                let imm = if ins.op_count() > 0 {
                    ins.immediate(0) as i64
                } else {
                    0
                };
                if ins.stack_pointer_increment() as i64 != 4 + imm
                    || self.model.stack_width() != Width::W16
                {
                    return no("retf form");
                }
                let (Some(sel_v), Some(base_v)) = (
                    self.model.seg_selector(Seg::Cs),
                    self.model.seg_base(Seg::Cs),
                ) else {
                    return no("far return in this model");
                };
                let (ip_t, cs_t) = (self.temp()?, self.temp()?);
                let site = self.before();
                self.emit(Op::Load {
                    w: Width::W16,
                    dst: ip_t,
                    addr: self.stack_addr(0),
                    path: MemPath::Fast,
                    site,
                });
                self.emit(Op::Load {
                    w: Width::W16,
                    dst: cs_t,
                    addr: self.stack_addr(2),
                    path: MemPath::Fast,
                    site,
                });
                self.move_sp(AluOp::Add, 4u32.wrapping_add(imm as u32));
                self.emit(Op::Mov {
                    dst: Reg::d(sel_v.0),
                    src: Src::Reg(cs_t),
                });
                self.emit(Op::Alu {
                    op: AluOp::Shl,
                    w: Width::W32,
                    dst: Reg::d(base_v.0),
                    a: Src::Reg(cs_t),
                    b: Src::Imm(4),
                });
                self.end_indirect(
                    Src::Reg(Reg {
                        v: ip_t.v,
                        lane: Lane::W,
                    }),
                    Src::Reg(Reg::d(base_v.0)),
                );
            }
            X::Jmp => {
                let t = near(ins)?;
                if !target_ok(t) {
                    return no("far target");
                }
                let l = self.link_block(t);
                self.count += 1;
                self.close(Term::Jmp(l));
            }
            X::Call => {
                let t = near(ins)?;
                if !target_ok(t) || ins.stack_pointer_increment() != -(ipw.bytes() as i32) {
                    return no("call form");
                }
                self.push_then(ipw, Src::Imm(next), false)?;
                self.ended_by_call = true;
                let l = self.link_block(t);
                self.count += 1;
                self.close(Term::Jmp(l));
            }
            X::Ret => {
                let imm = if ins.op_count() > 0 {
                    ins.immediate(0) as i64
                } else {
                    0
                };
                if ins.stack_pointer_increment() as i64 != ipw.bytes() as i64 + imm {
                    return no("ret form");
                }
                let t = self.pop(ipw)?;
                if ins.op_count() > 0 {
                    let imm = ins.immediate(0) as u32;
                    self.move_sp(AluOp::Add, imm);
                }
                let cs = self
                    .model
                    .seg_base(Seg::Cs)
                    .map_or(Src::Imm(0), |v| Src::Reg(Reg::d(v.0)));
                self.end_indirect(
                    Src::Reg(Reg {
                        v: t.v,
                        lane: ip_lane,
                    }),
                    cs,
                );
                return Ok(Flow::End);
            }
            X::Loop | X::Loope | X::Loopne | X::Jcxz | X::Jecxz => {
                let t = near(ins)?;
                if !target_ok(t) {
                    return no("loop target");
                }
                // The address size picks CX or ECX.
                let ecx = match m {
                    X::Jcxz => false,
                    X::Jecxz => true,
                    _ => format!("{:?}", ins.code()).ends_with("_ECX"),
                };
                let (cx, cw) = if ecx {
                    (Reg::d(1), Width::W32)
                } else {
                    (Reg::w(1), Width::W16)
                };
                let lt = self.link_block(t);
                let ln = self.link_block(next);
                if !matches!(m, X::Jcxz | X::Jecxz) {
                    self.emit(Op::Alu {
                        op: AluOp::Sub,
                        w: cw,
                        dst: cx,
                        a: Src::Reg(cx),
                        b: Src::Imm(1),
                    });
                }
                self.count += 1;
                match m {
                    X::Jcxz | X::Jecxz => self.close(Term::BrCmp {
                        op: CmpOp::Eq,
                        w: cw,
                        a: Src::Reg(cx),
                        b: Src::Imm(0),
                        t: lt,
                        f: ln,
                    }),
                    X::Loop => self.close(Term::BrCmp {
                        op: CmpOp::Ne,
                        w: cw,
                        a: Src::Reg(cx),
                        b: Src::Imm(0),
                        t: lt,
                        f: ln,
                    }),
                    _ => {
                        let z = self.new_block();
                        self.close(Term::BrCmp {
                            op: CmpOp::Eq,
                            w: cw,
                            a: Src::Reg(cx),
                            b: Src::Imm(0),
                            t: ln,
                            f: z,
                        });
                        let cc = if m == X::Loope { 4 } else { 5 };
                        self.blocks[z.0 as usize] = Block {
                            ops: vec![],
                            term: Term::BrCc { cc, t: lt, f: ln },
                        };
                    }
                }
                return Ok(Flow::End);
            }
            _ => {
                // Jcc
                let t = near(ins)?;
                if !target_ok(t) {
                    return no("far target");
                }
                let cc = match m {
                    X::Jo => 0,
                    X::Jno => 1,
                    X::Jb => 2,
                    X::Jae => 3,
                    X::Je => 4,
                    X::Jne => 5,
                    X::Jbe => 6,
                    X::Ja => 7,
                    X::Js => 8,
                    X::Jns => 9,
                    X::Jp => 10,
                    X::Jnp => 11,
                    X::Jl => 12,
                    X::Jge => 13,
                    X::Jle => 14,
                    _ => 15,
                };
                let lt = self.link_block(t);
                let ln = self.link_block(next);
                self.count += 1;
                self.close(Term::BrCc { cc, t: lt, f: ln });
                return Ok(Flow::End);
            }
        }
        // Jmp / Call: the instruction is billed in the closed block.
        Ok(Flow::End)
    }
}
