//! String instructions (STOS LODS MOVS SCAS CMPS; REP forms at 16-bit
//! addressing only, single elements at 16- or 32-bit addressing): one
//! element inline, or with REP/REPE/REPNE a loop of its own billed one
//! dispatch per element; the DF-signed step, cached per block.
//!
//! It owns string instructions only.

use super::operands::{lane_for, seg_of};
use super::{no, Flow, LineBuilder, Unsupported, L};
use crate::flags::{Width, DF};
use crate::ir::*;
use crate::machine::{MachineModel, Seg, SegData};
use iced_x86::{Instruction, Mnemonic, OpKind};

/// The string instructions the lowering expresses.
#[derive(Clone, Copy, PartialEq, Eq)]
enum StrKind {
    Stos,
    Lods,
    Movs,
    /// Compares end a REPE/REPNE loop on ZF as well as on the count.
    Scas,
    Cmps,
}

impl<M: MachineModel> LineBuilder<'_, M> {
    /// `delta = DF ? -n : n` into a temp (string instructions).
    fn string_delta(&mut self, n: u32) -> L<Reg> {
        let slot = n.trailing_zeros() as usize % 3;
        if let Some(t) = self.delta_cache[slot] {
            return Ok(t);
        }
        let t = self.temp()?;
        self.delta_cache[slot] = Some(t);
        self.emit(Op::FlagsGet { dst: t });
        self.emit(Op::Alu {
            op: AluOp::And,
            w: Width::W32,
            dst: t,
            a: Src::Reg(t),
            b: Src::Imm(DF),
        });
        // DF is bit 10: shift it to 2n, then n - 2n*df.
        self.emit(Op::Alu {
            op: AluOp::Shr,
            w: Width::W32,
            dst: t,
            a: Src::Reg(t),
            b: Src::Imm(10 - (n.trailing_zeros() + 1)),
        });
        self.emit(Op::Alu {
            op: AluOp::Sub,
            w: Width::W32,
            dst: t,
            a: Src::Imm(n),
            b: Src::Reg(t),
        });
        Ok(t)
    }

    /// STOS/LODS/MOVS, with or without REP (16-bit addressing).
    pub(super) fn string(&mut self, ins: &Instruction) -> L<Flow> {
        use Mnemonic as X;
        let m = ins.mnemonic();
        let w = match m {
            X::Stosb | X::Lodsb | X::Movsb | X::Scasb | X::Cmpsb => Width::W8,
            X::Stosw | X::Lodsw | X::Movsw | X::Scasw | X::Cmpsw => Width::W16,
            _ => Width::W32,
        };
        let kind = match m {
            X::Stosb | X::Stosw | X::Stosd => StrKind::Stos,
            X::Lodsb | X::Lodsw | X::Lodsd => StrKind::Lods,
            X::Scasb | X::Scasw | X::Scasd => StrKind::Scas,
            X::Cmpsb | X::Cmpsw | X::Cmpsd => StrKind::Cmps,
            _ => StrKind::Movs,
        };
        // The index registers are SI/DI (A16) or ESI/EDI (A32).
        let ok16 = (0..ins.op_count()).all(|i| {
            matches!(
                ins.op_kind(i),
                OpKind::MemoryESDI | OpKind::MemorySegSI | OpKind::Register
            )
        });
        let ok32 = (0..ins.op_count()).all(|i| {
            matches!(
                ins.op_kind(i),
                OpKind::MemoryESEDI | OpKind::MemorySegESI | OpKind::Register
            )
        });
        let rep = ins.has_rep_prefix() || ins.has_repne_prefix();
        if !ok16 && !(ok32 && self.model.default_asize() == AddrSize::A32) {
            return no("32-bit string addressing");
        }
        if ok32 && rep {
            return no("rep string at a32");
        }
        let asize = if ok16 { AddrSize::A16 } else { AddrSize::A32 };
        let src_seg = seg_of(ins.memory_segment()).ok_or(Unsupported("segment"))?;
        let (ss, es) = (self.seg(src_seg)?, self.seg(Seg::Es)?);
        let mk = |sd: SegData, reg: u16| Addr {
            seg: sd.base,
            base: Some(VReg(reg)),
            index: None,
            scale: 0,
            disp: 0,
            asize,
            limit: sd.limit,
        };
        let src = mk(ss, 6);
        let dst = mk(es, 7);
        if !rep {
            let delta = self.string_delta(w.bytes())?;
            let site = self.before();
            self.element(kind, w, src, dst, delta, site)?;
            if matches!(kind, StrKind::Stos | StrKind::Movs) {
                self.owed_check();
            }
            return Ok(Flow::Next);
        }
        // REP: its own loop, billed one dispatch per element at the top of
        // the element (the budget and an owed stop are tested there, at the
        // instruction); a zero count costs one dispatch.
        //   head: step; brcmp.eq cx, 0 -> zero, body
        //   body: clock.check 1; element; cx -= 1; brcmp.ne cx, 0 -> body, done
        //   zero: clock.check 1; link next      done: link next
        let ip = self.ip;
        let next_ip = self.next_ip;
        // A line already open is closed into the head; an empty one becomes it.
        let head = if self.count == 0 && self.ops.is_empty() {
            BlockId(self.cur as u32)
        } else {
            let h = self.new_block();
            self.close(Term::Jmp(h));
            h
        };
        let body = self.new_block();
        let done = self.link_block(next_ip);
        let zero = self.link_block(next_ip);
        self.blocks[zero.0 as usize].ops.push(Op::ClockCheck {
            n: 1,
            site: Site::new(ip, 0),
        });
        let delta = self.temp()?;
        self.open(head, ip);
        let d = self.string_delta(w.bytes())?;
        self.emit(Op::Mov {
            dst: delta,
            src: Src::Reg(d),
        });
        let cx = Reg::w(1);
        self.close(Term::BrCmp {
            op: CmpOp::Eq,
            w: Width::W16,
            a: Src::Reg(cx),
            b: Src::Imm(0),
            t: zero,
            f: body,
        });
        self.open(body, ip);
        self.emit(Op::ClockCheck {
            n: 1,
            site: Site::new(ip, 0),
        });
        // One element (billed, so a fault gives one back).
        self.element(kind, w, src, dst, delta, Site::new(ip, 1))?;
        self.emit(Op::Alu {
            op: AluOp::Sub,
            w: Width::W16,
            dst: cx,
            a: Src::Reg(cx),
            b: Src::Imm(1),
        });
        let b = std::mem::take(&mut self.ops);
        // Compares also end on ZF: REPE while equal, REPNE while not.
        let again = if matches!(kind, StrKind::Scas | StrKind::Cmps) {
            let c = self.new_block();
            let cc = if ins.has_repne_prefix() { 5 } else { 4 };
            self.blocks[c.0 as usize] = Block {
                ops: vec![],
                term: Term::BrCc {
                    cc,
                    t: body,
                    f: done,
                },
            };
            c
        } else {
            body
        };
        self.blocks[body.0 as usize] = Block {
            ops: b,
            term: Term::BrCmp {
                op: CmpOp::Ne,
                w: Width::W16,
                a: Src::Reg(cx),
                b: Src::Imm(0),
                t: again,
                f: done,
            },
        };
        Ok(Flow::End)
    }

    /// One string element: accesses first (MOVS probes its store before its
    /// load, so a fault leaves no effect), then the index registers.
    fn element(
        &mut self,
        kind: StrKind,
        w: Width,
        src: Addr,
        dst: Addr,
        delta: Reg,
        site: Site,
    ) -> L<()> {
        let acc = Reg {
            v: VReg(0),
            lane: lane_for(w),
        };
        // SI/DI or ESI/EDI, by the address size.
        let iw = if dst.asize == AddrSize::A16 {
            Width::W16
        } else {
            Width::W32
        };
        let step = |s: &mut Self, r: u16| {
            let x = Reg {
                v: VReg(r),
                lane: lane_for(iw),
            };
            s.emit(Op::Alu {
                op: AluOp::Add,
                w: iw,
                dst: x,
                a: Src::Reg(x),
                b: Src::Reg(delta),
            })
        };
        match kind {
            StrKind::Stos => {
                self.emit(Op::Store {
                    w,
                    src: Src::Reg(acc),
                    addr: dst,
                    path: MemPath::Fast,
                    site,
                    after: None,
                });
                step(self, 7);
            }
            StrKind::Lods => {
                self.emit(Op::Load {
                    w,
                    dst: acc,
                    addr: src,
                    path: MemPath::Fast,
                    site,
                });
                step(self, 6);
            }
            StrKind::Scas => {
                let t = self.temp()?;
                self.emit(Op::Load {
                    w,
                    dst: t,
                    addr: dst,
                    path: MemPath::Fast,
                    site,
                });
                self.emit(Op::Arith {
                    op: ArithOp::Sub,
                    w,
                    dst: None,
                    a: Src::Reg(acc),
                    b: Src::Reg(t),
                });
                step(self, 7);
            }
            StrKind::Cmps => {
                let (a, b) = (self.temp()?, self.temp()?);
                self.emit(Op::Check { w, addr: dst, site });
                self.emit(Op::Load {
                    w,
                    dst: a,
                    addr: src,
                    path: MemPath::Fast,
                    site,
                });
                self.emit(Op::Load {
                    w,
                    dst: b,
                    addr: dst,
                    path: MemPath::Fast,
                    site,
                });
                self.emit(Op::Arith {
                    op: ArithOp::Sub,
                    w,
                    dst: None,
                    a: Src::Reg(a),
                    b: Src::Reg(b),
                });
                step(self, 6);
                step(self, 7);
            }
            StrKind::Movs => {
                let t = self.temp()?;
                self.emit(Op::Check { w, addr: dst, site });
                self.emit(Op::Load {
                    w,
                    dst: t,
                    addr: src,
                    path: MemPath::Fast,
                    site,
                });
                self.emit(Op::Store {
                    w,
                    src: Src::Reg(t),
                    addr: dst,
                    path: MemPath::Fast,
                    site,
                    after: None,
                });
                step(self, 6);
                step(self, 7);
            }
        }
        Ok(())
    }
}
