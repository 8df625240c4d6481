//! toyvm's run-time adapter for `shared_ir::machine::MachineRuntime`: what E1
//! (and the reference interpreter) call while a µop program runs on the DOS
//! machine.
//!
//! Owns the translation only: the fast path reads and writes RAM through the
//! [`CodeMap`] page view (plain RAM, no code, no device); the checked path
//! goes byte by byte through the machine's own bus (A20, VGA window, ROM
//! protection, in the order L0's `read16`/`write16` use) and reports a store
//! into a code byte as `HitCode`, remembering the byte for the driver; ports
//! go to the devices at the exact dispatch and ask for a stop exactly where
//! L1 returns `Attention` (a port write the bus judges may matter, or any
//! port access while an interrupt request is pending); x87 instructions go
//! to the CPU's FPU exactly as L0's `h_fpu` hands them over ([`run_x87`]),
//! refused before any effect when L0 would fault (#NM, a segment overrun,
//! an encoding a 486 lacks). It must not refuse anything it can do exactly,
//! and must not decide what gets invalidated.

use super::code::{CodeMap, GRANULE_SHIFT};
use crate::bus::{Bus, EngineBus, Width};
use crate::cpu::fpu::{Fpu, FpuContext, FpuMemory};
use crate::cpu::{cr0, Exception};
use crate::machine::Machine;
use iced_x86::{Code, Decoder, DecoderOptions, Instruction, OpKind};
use shared_ir::machine::{
    FastMem, MachineRuntime, Refused, ServiceCtx, ServiceOutcome, StoreOutcome, X87Call, X87Done,
};

/// The DOS machine as E1 sees it for one engine call.
pub struct DosRuntime<'a> {
    pub m: &'a mut Machine,
    pub code: &'a CodeMap,
    /// Physical code bytes written by µop stores in this call.
    pub hits: &'a mut Vec<u32>,
    /// The CPU's FPU and CR0 (x87 instructions).
    pub fpu: &'a mut Fpu,
    pub cr0: u32,
    /// Decoded x87 instructions (see [`X87Cache`]).
    pub x87: &'a mut X87Cache,
    /// A port access in this call asked for a stop (a device wants the
    /// session to look). The driver tells such a `Service` exit from one a
    /// `stop.if` owed (IF rose), which it may resume as L1 does.
    pub device_asked: bool,
}

/// After IF rose (IRET, POPF), whether the session must look before the
/// next instruction: with TF set (single-step) or an interrupt requested.
/// Otherwise it would look and find nothing before the slice's end
/// (devices move only at events, and a port access that might move one
/// asks for a stop itself), which is why L1 goes on in `general`. E1 asks
/// it through `stop_if_needed`; the driver asks it to resume a stop the
/// `jit` arm's native code owed without asking.
pub fn if_rose_needs_session(m: &mut Machine, tf: bool) -> bool {
    tf || m.interrupt_requested()
}

/// Decoded x87 instructions by encoding, direct-mapped (decoding is a pure
/// function of the bytes, so a hit is the same `Instruction`), with what
/// `run_x87` derives from the bytes on every call: whether it has a memory
/// operand, the operand's size, the 0x66 prefix. Derived once per miss:
/// on a hit the hand-off costs the key compare and a copy.
pub struct X87Cache {
    slots: Vec<(u128, X87Decoded)>,
}

/// One decoded x87 instruction and the facts `run_x87` needs of it.
#[derive(Clone, Copy, Default)]
struct X87Decoded {
    ins: Instruction,
    /// It has a memory operand; `mem_size` is that operand's byte count.
    has_mem: bool,
    mem_size: u32,
    /// A 0x66 prefix among the leading prefixes (32-bit operand forms of
    /// FSTENV/FLDENV/FSAVE/FRSTOR in 16-bit code).
    o32: bool,
}

impl Default for X87Cache {
    fn default() -> Self {
        X87Cache {
            slots: vec![(u128::MAX, X87Decoded::default()); 256],
        }
    }
}

impl X87Cache {
    /// The 16-bit decoding of `insn` (which must be all of one instruction),
    /// or `None`.
    fn decode(&mut self, insn: &[u8]) -> Option<X87Decoded> {
        if insn.is_empty() || insn.len() > 15 {
            return None;
        }
        let mut b = [0u8; 16];
        b[..insn.len()].copy_from_slice(insn);
        b[15] = insn.len() as u8;
        let key = u128::from_le_bytes(b);
        let h = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835) >> 120) as usize;
        let slot = &mut self.slots[h & 255];
        if slot.0 == key {
            return Some(slot.1);
        }
        let mut d = Decoder::with_ip(16, insn, 0, DecoderOptions::LOADALL386);
        let ins = d.decode();
        if ins.is_invalid() || ins.len() != insn.len() {
            return None;
        }
        let has_mem = (0..ins.op_count()).any(|i| ins.op_kind(i) == OpKind::Memory);
        let o32 = insn
            .iter()
            .take_while(|b| matches!(b, 0x26 | 0x2E | 0x36 | 0x3E | 0x64 | 0x65 | 0x66 | 0x67))
            .any(|b| *b == 0x66);
        let x = X87Decoded {
            ins,
            has_mem,
            mem_size: ins.memory_size().size() as u32,
            o32,
        };
        *slot = (key, x);
        Some(x)
    }
}

/// The x87 memory operand over the machine's bus: bytes go through
/// `Bus::read8`/`write8` as L0's `FpuMem` sends them (the caller checked the
/// whole operand against the limit first, so no access can fault), and
/// every written byte is tested against the code map.
struct X87Window<'a> {
    m: &'a mut Machine,
    code: &'a CodeMap,
    hits: &'a mut Vec<u32>,
    base: u32,
    off: u32,
    hit: bool,
}

impl FpuMemory for X87Window<'_> {
    fn read(&mut self, disp: u32, buf: &mut [u8]) -> Result<(), Exception> {
        let a = self.base.wrapping_add(self.off.wrapping_add(disp));
        for (i, b) in buf.iter_mut().enumerate() {
            *b = self.m.read8(a.wrapping_add(i as u32));
        }
        Ok(())
    }
    fn write(&mut self, disp: u32, buf: &[u8]) -> Result<(), Exception> {
        let a = self.base.wrapping_add(self.off.wrapping_add(disp));
        for (i, b) in buf.iter().enumerate() {
            let la = a.wrapping_add(i as u32);
            self.m.write8(la, *b);
            let p = self.m.phys(la);
            if self.code.test(p) {
                self.hits.push(p);
                self.hit = true;
            }
        }
        Ok(())
    }
}

/// Runs one x87 instruction as L0's `h_fpu` does, or refuses before any
/// effect where L0 would raise a fault: CR0.EM/TS set (#NM), an operand
/// that does not lie wholly inside the segment (#GP/#SS: checked for every
/// byte the form touches before anything runs), an encoding the FPU
/// rejects (#UD, which it reports before any change).
pub fn run_x87(rt: &mut DosRuntime<'_>, c: X87Call<'_>) -> Result<X87Done, Refused> {
    if rt.cr0 & (cr0::EM | cr0::TS) != 0 {
        return Err(Refused);
    }
    let X87Decoded {
        ins,
        has_mem,
        mem_size,
        o32,
    } = rt.x87.decode(c.insn).ok_or(Refused)?;
    if has_mem != c.mem.is_some() {
        return Err(Refused);
    }
    let (base, off, sel) = match c.mem {
        Some(m) => {
            let n = mem_size as u64;
            if n == 0 || m.off as u64 + n - 1 > m.limit as u64 {
                return Err(Refused);
            }
            (m.base, m.off, m.sel)
        }
        None => (0, 0, 0),
    };
    let mut eax = 0u32;
    let mut win = X87Window {
        m: rt.m,
        code: rt.code,
        hits: rt.hits,
        base,
        off,
        hit: false,
    };
    let out = rt.fpu.execute(
        &ins,
        FpuContext {
            mem: if has_mem { Some(&mut win) } else { None },
            eax: &mut eax,
            op32: o32,
            cs: c.cs,
            ip: c.ip,
            data_seg: sel,
            data_off: off,
        },
    );
    let hit = win.hit;
    match out {
        Ok(()) => Ok(X87Done {
            result: matches!(ins.code(), Code::Fnstsw_AX | Code::Fstsw_AX).then_some(eax as u16),
            hit_code: hit,
        }),
        // Only #UD (before any change) can come back: memory cannot fault.
        Err(_) => Err(Refused),
    }
}

impl MachineRuntime for DosRuntime<'_> {
    const PAGE_SHIFT: u32 = GRANULE_SHIFT;

    #[inline(always)]
    fn fast_mem(&mut self) -> FastMem<'_> {
        FastMem {
            ram: self.m.mem.ram_mut_codeless(),
            pages: &self.code.pages,
        }
    }

    fn read(&mut self, lin: u32, w: Width, _now: u64) -> Result<u32, Refused> {
        let mut v = 0u32;
        for i in 0..w.bytes() {
            v |= (self.m.read8(lin.wrapping_add(i)) as u32) << (8 * i);
        }
        Ok(v)
    }

    fn write(&mut self, lin: u32, w: Width, v: u32, _now: u64) -> StoreOutcome {
        let mut hit = false;
        for i in 0..w.bytes() {
            let a = lin.wrapping_add(i);
            self.m.write8(a, (v >> (8 * i)) as u8);
            let p = self.m.phys(a);
            if self.code.test(p) {
                self.hits.push(p);
                hit = true;
            }
        }
        if hit {
            StoreOutcome::HitCode
        } else {
            StoreOutcome::Done
        }
    }

    fn port_in(&mut self, port: u16, w: Width, now: u64) -> Result<u32, Refused> {
        Ok(self.m.io_read(port, w, now) & w.mask())
    }

    /// L1 returns `Attention` after a port read while an interrupt request
    /// is pending (`EngineBus::take_io_attention` on the DOS machine).
    fn port_read(&mut self, port: u16, w: Width, now: u64) -> Result<(u32, bool), Refused> {
        let v = self.m.io_read(port, w, now) & w.mask();
        let stop = self.m.take_io_attention();
        self.device_asked |= stop;
        Ok((v, stop))
    }

    /// As L1's store monitor judges a port write: each byte's port by
    /// `port_write_attention`, plus a pending interrupt request.
    fn port_out(&mut self, port: u16, w: Width, v: u32, now: u64) -> ServiceOutcome {
        let mut attn = false;
        for i in 0..w.bytes() {
            attn |= self
                .m
                .port_write_attention(port.wrapping_add(i as u16), (v >> (8 * i)) as u8);
        }
        self.m.io_write(port, w, v, now);
        attn |= self.m.take_io_attention();
        if attn {
            self.device_asked = true;
            ServiceOutcome::StopAfter
        } else {
            ServiceOutcome::Continue
        }
    }

    /// `s` is the flags that rose (`~old & new & (IF | TF)`, the lowering's
    /// `stop_if_if_rose_or_tf`): [`if_rose_needs_session`].
    fn stop_if_needed(&mut self, s: u32) -> bool {
        if_rose_needs_session(self.m, s & shared_ir::flags::TF != 0)
    }

    /// toyvm's lowering emits no service ops (host calls run on the L1 side).
    fn service(&mut self, _id: u16, _ctx: ServiceCtx<'_>, _now: u64) -> ServiceOutcome {
        ServiceOutcome::Refused
    }

    fn x87(&mut self, c: X87Call<'_>, _now: u64) -> Result<X87Done, Refused> {
        run_x87(self, c)
    }
}
