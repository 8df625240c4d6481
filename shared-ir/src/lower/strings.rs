//! String instructions (STOS LODS MOVS SCAS CMPS): one element inline
//! (16-bit addressing, or 32-bit where the machine's default address size is
//! 32-bit), or with REP/REPE/REPNE one [`Term::Rep`] block that runs one
//! element per execution (16- or 32-bit addressing, CX or ECX); the
//! DF-signed step of a single element, cached per block.
//!
//! It owns string instructions only.

use super::operands::{lane_for, seg_of};
use super::{no, Flow, LineBuilder, Unsupported, L};
use crate::flags::{Width, DF};
use crate::ir::*;
use crate::machine::{MachineModel, Seg, SegData};
use iced_x86::{Instruction, Mnemonic, OpKind};

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
            X::Stosb | X::Stosw | X::Stosd => StrOp::Stos,
            X::Lodsb | X::Lodsw | X::Lodsd => StrOp::Lods,
            X::Scasb | X::Scasw | X::Scasd => StrOp::Scas,
            X::Cmpsb | X::Cmpsw | X::Cmpsd => StrOp::Cmps,
            _ => StrOp::Movs,
        };
        // The index registers: SI/DI (16-bit addressing) or, for REP only,
        // ESI/EDI (32-bit addressing: the count is then ECX).
        let all = |ok: fn(OpKind) -> bool| (0..ins.op_count()).all(|i| ok(ins.op_kind(i)));
        let a16 = all(|k| {
            matches!(
                k,
                OpKind::MemoryESDI | OpKind::MemorySegSI | OpKind::Register
            )
        });
        let a32 = all(|k| {
            matches!(
                k,
                OpKind::MemoryESEDI | OpKind::MemorySegESI | OpKind::Register
            )
        });
        let rep = ins.has_rep_prefix() || ins.has_repne_prefix();
        // A single element at 32-bit addressing only where that is the
        // machine's default (Flat32); a 67h-prefixed one in real mode falls back.
        let single_ok = a16 || (a32 && self.model.default_asize() == AddrSize::A32);
        if !(single_ok || (a32 && rep)) {
            return no("32-bit string addressing");
        }
        let asize = if a16 { AddrSize::A16 } else { AddrSize::A32 };
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
            if matches!(kind, StrOp::Stos | StrOp::Movs) {
                self.owed_check();
            }
            return Ok(Flow::Next);
        }
        // REP: the instructions before it close their block, which jumps to
        // a block of its own whose terminator is one element per execution
        // (`Term::Rep`: the budget and owed-stop test, the billing, a zero
        // count's one dispatch, the element, the steps, the count, REPE /
        // REPNE), looping on itself, then a link to the next instruction.
        let op = kind;
        let cond = if !op.compares() {
            RepCond::Rep
        } else if ins.has_repne_prefix() {
            RepCond::Repne
        } else {
            RepCond::Repe
        };
        let count = match asize {
            AddrSize::A16 => Reg::w(1),
            AddrSize::A32 => Reg::d(1),
        };
        let element = self.new_block();
        let done = self.link_block(self.next_ip);
        self.close(Term::Jmp(element));
        self.blocks[element.0 as usize] = Block {
            ops: vec![],
            term: Term::Rep {
                op,
                w,
                cond,
                src,
                dst,
                count,
                site: Site::new(self.ip, 0),
                t: element,
                f: done,
            },
        };
        Ok(Flow::End)
    }

    /// One string element: accesses first (MOVS probes its store before its
    /// load, so a fault leaves no effect), then the index registers.
    fn element(
        &mut self,
        kind: StrOp,
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
            StrOp::Stos => {
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
            StrOp::Lods => {
                self.emit(Op::Load {
                    w,
                    dst: acc,
                    addr: src,
                    path: MemPath::Fast,
                    site,
                });
                step(self, 6);
            }
            StrOp::Scas => {
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
            StrOp::Cmps => {
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
            StrOp::Movs => {
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
