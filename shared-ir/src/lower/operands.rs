//! Operands as the lowering sees them: guest registers and their lanes,
//! segment registers, folded memory addresses (with their segment limit),
//! reads (memory loaded into a temporary), stores, read-modify-write, and
//! segment-register loads (real mode: base = selector << 4).
//!
//! It owns operand decoding and access only; it must not lower a whole
//! instruction.

use super::{no, LineBuilder, Unsupported, L};
use crate::flags::Width;
use crate::ir::*;
use crate::machine::{MachineModel, Seg, SegData};
use iced_x86::{Instruction, OpKind, Register};

/// A decoded operand as the lowering sees it.
#[derive(Clone, Copy)]
pub(super) enum Opnd {
    Reg(Reg),
    Mem(Addr),
    Imm(u32),
}

pub(super) fn gpr(r: Register) -> Option<Reg> {
    use Register::*;
    let (v, lane) = match r {
        AL | CL | DL | BL => (r as u16 - AL as u16, Lane::B),
        AH => (0, Lane::H),
        CH => (1, Lane::H),
        DH => (2, Lane::H),
        BH => (3, Lane::H),
        AX | CX | DX | BX | SP | BP | SI | DI => (r as u16 - AX as u16, Lane::W),
        EAX | ECX | EDX | EBX | ESP | EBP | ESI | EDI => (r as u16 - EAX as u16, Lane::D),
        _ => return Option::None,
    };
    Some(Reg { v: VReg(v), lane })
}

pub(super) fn seg_of(r: Register) -> Option<Seg> {
    Some(match r {
        Register::ES => Seg::Es,
        Register::CS => Seg::Cs,
        Register::SS => Seg::Ss,
        Register::DS => Seg::Ds,
        Register::FS => Seg::Fs,
        Register::GS => Seg::Gs,
        _ => return Option::None,
    })
}

pub(super) fn width_of_bytes(n: usize) -> L<Width> {
    Ok(match n {
        1 => Width::W8,
        2 => Width::W16,
        4 => Width::W32,
        _ => return no("operand size"),
    })
}

pub(super) fn lane_for(w: Width) -> Lane {
    Lane::for_width(w)
}

impl<M: MachineModel> LineBuilder<'_, M> {
    /// How memory is reached through `s`, or a decline when the model says
    /// every access through it faults (a null selector).
    pub(super) fn seg(&self, s: Seg) -> L<SegData> {
        self.model
            .seg_data(s)
            .ok_or(Unsupported("memory through an unusable segment"))
    }

    pub(super) fn addr(&self, ins: &Instruction) -> L<Addr> {
        let seg = seg_of(ins.memory_segment()).ok_or(Unsupported("segment"))?;
        let sd = self.seg(seg)?;
        if !sd.writable {
            // A store through it faults; reads are rare enough (CS
            // overrides in flat code) to leave them with the finer tier too.
            return no("memory through a read-only segment");
        }
        let reg = |r: Register| -> L<Option<VReg>> {
            if r == Register::None {
                return Ok(None);
            }
            gpr(r)
                .filter(|g| g.lane != Lane::B && g.lane != Lane::H)
                .map(|g| Some(g.v))
                .ok_or(Unsupported("address register"))
        };
        let base = reg(ins.memory_base())?;
        let index = reg(ins.memory_index())?;
        let a16 = match (ins.memory_base(), ins.memory_index()) {
            (Register::None, Register::None) => ins.memory_displ_size() <= 2,
            (b, Register::None) => b.is_gpr16(),
            (_, i) => i.is_gpr16(),
        };
        Ok(Addr {
            seg: sd.base,
            base,
            index,
            scale: ins.memory_index_scale().trailing_zeros() as u8 * index.is_some() as u8,
            disp: ins.memory_displacement32(),
            asize: if a16 { AddrSize::A16 } else { AddrSize::A32 },
            limit: sd.limit,
        })
    }

    pub(super) fn opnd(&self, ins: &Instruction, i: u32) -> L<Opnd> {
        Ok(match ins.op_kind(i) {
            OpKind::Register => {
                Opnd::Reg(gpr(ins.op_register(i)).ok_or(Unsupported("register operand"))?)
            }
            OpKind::Memory => Opnd::Mem(self.addr(ins)?),
            OpKind::Immediate8
            | OpKind::Immediate16
            | OpKind::Immediate32
            | OpKind::Immediate8to16
            | OpKind::Immediate8to32 => Opnd::Imm(ins.immediate(i) as u32),
            _ => return no("operand kind"),
        })
    }

    /// Reads an operand as a source of width `w` (memory is loaded into a temp).
    pub(super) fn read(&mut self, o: Opnd, w: Width) -> L<Src> {
        Ok(match o {
            Opnd::Reg(r) => Src::Reg(r),
            Opnd::Imm(v) => Src::Imm(v & w.mask()),
            Opnd::Mem(addr) => {
                let t = self.temp()?;
                let site = self.before();
                self.emit(Op::Load {
                    w,
                    dst: t,
                    addr,
                    path: MemPath::Fast,
                    site,
                });
                Src::Reg(t)
            }
        })
    }

    pub(super) fn store(&mut self, w: Width, addr: Addr, src: Src, last: bool) {
        let (site, after) = (self.before(), self.after());
        self.emit(Op::Store {
            w,
            src,
            addr,
            path: MemPath::Fast,
            site,
            after: last.then_some(after),
        });
    }

    /// Under a model with write protection, stores the value just loaded
    /// from `addr` back (no effect but the store's own checks): the
    /// read-modify-write that follows may then change flags before its
    /// store, because a refusal can only happen here.
    pub(super) fn probe_store(&mut self, w: Width, addr: Addr, loaded: Reg) {
        if self.model.write_protect() {
            self.store(w, addr, Src::Reg(loaded), false);
        }
    }

    /// Segment register `s` = the 16-bit selector in `sel` (real mode:
    /// base = selector << 4).
    pub(super) fn load_seg(&mut self, s: Seg, sel: Src) -> L<()> {
        let (Some(sv), Some(bv)) = (self.model.seg_selector(s), self.model.seg_base(s)) else {
            return no("segment load in this model");
        };
        self.emit(Op::Mov {
            dst: Reg::d(sv.0),
            src: zext16(sel),
        });
        self.emit(Op::Alu {
            op: AluOp::Shl,
            w: Width::W32,
            dst: Reg::d(bv.0),
            a: Src::Reg(Reg::d(sv.0)),
            b: Src::Imm(4),
        });
        Ok(())
    }

    /// `op dst, src` with the result written back to `dst` (register or memory).
    pub(super) fn rmw(
        &mut self,
        ins: &Instruction,
        f: impl FnOnce(&mut Self, Reg, Src, Width) -> L<()>,
    ) -> L<()> {
        let w = width_of_bytes(op_size(ins, 0)?)?;
        let dst = self.opnd(ins, 0)?;
        let src = if ins.op_count() > 1 {
            let s = self.opnd(ins, 1)?;
            self.read(s, w)?
        } else {
            Src::Imm(0)
        };
        match dst {
            Opnd::Reg(r) => f(self, r, src, w),
            Opnd::Mem(addr) => {
                let t = self.read(Opnd::Mem(addr), w)?;
                let Src::Reg(t) = t else { unreachable!() };
                self.probe_store(w, addr, t);
                f(self, t, src, w)?;
                self.store(w, addr, Src::Reg(t), true);
                Ok(())
            }
            Opnd::Imm(_) => no("immediate destination"),
        }
    }
}

pub(super) fn zext16(s: Src) -> Src {
    match s {
        Src::Reg(r) if r.lane == Lane::D => Src::Reg(Reg {
            v: r.v,
            lane: Lane::W,
        }),
        s => s,
    }
}

/// Size in bytes of operand `i`.
pub(super) fn op_size(ins: &Instruction, i: u32) -> L<usize> {
    Ok(match ins.op_kind(i) {
        OpKind::Register => ins.op_register(i).size(),
        OpKind::Memory => ins.memory_size().size(),
        OpKind::Immediate8 => 1,
        OpKind::Immediate16 | OpKind::Immediate8to16 => 2,
        OpKind::Immediate32 | OpKind::Immediate8to32 => 4,
        _ => return no("operand size"),
    })
}
