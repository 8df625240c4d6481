//! `x86-cpu`: the x86 CPU both VMs share (toyvm's real-mode 386, mainemu's
//! 32-bit flat user mode): architectural state, decode to ops, and the
//! execution of integer and x87 instructions, written once.
//!
//! This crate owns the register file, segment state, control registers, the
//! guest clock, the exception vocabulary and the small accessors machines and
//! services use (registers by width, linear addresses, stack pushes). Instruction
//! semantics live in the submodules; arithmetic and flags come from `shared_ir`.
//! Protected mode has modules of its own: descriptors (`desc`), segment loads
//! (`segs`), far transfers through descriptors and gates (`xfer`), IDT delivery
//! (`pmint`), task switches and the TSS (`task`), paging (`paging`) and the
//! protected-mode step (`pm`). It must not know about DOS, Windows, BIOS or
//! devices: it talks to the world only through [`crate::bus::Bus`].

pub mod bus;
pub mod decode;
pub mod desc;
pub mod ea;
pub mod exec;
pub mod flow;
pub mod fpu;
pub mod interrupt;
pub mod kinds;
pub mod l0;
pub mod op;
pub mod paging;
pub mod pm;
pub mod pmint;
pub mod segs;
pub mod select;
pub mod shape;
pub mod sse;
pub mod string;
pub mod task;
pub mod user;
pub mod xfer;

use crate::bus::Bus;
use shared_ir::flags::LazyFlags;

pub use bus::{Access, MemFault};
pub use l0::{StepOutcome, StopReason};
pub use user::{Event, EventKind, FlatSetup, UserOutcome};

/// General register indices in x86 encoding order.
pub mod reg {
    pub const EAX: usize = 0;
    pub const ECX: usize = 1;
    pub const EDX: usize = 2;
    pub const EBX: usize = 3;
    pub const ESP: usize = 4;
    pub const EBP: usize = 5;
    pub const ESI: usize = 6;
    pub const EDI: usize = 7;
}

/// Segment register indices in x86 encoding order.
pub mod seg {
    pub const ES: usize = 0;
    pub const CS: usize = 1;
    pub const SS: usize = 2;
    pub const DS: usize = 3;
    pub const FS: usize = 4;
    pub const GS: usize = 5;
}

/// An architectural exception: the vector and, for the faults that push one
/// in protected mode (#DF #TS #NP #SS #GP #PF #AC), the error code (a
/// selector with its TI/IDT/EXT bits, or the page-fault bits). Real mode
/// delivers the vector through the IVT and has no error code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Exception(pub u8, pub u16);

impl Exception {
    pub const DE: Exception = Exception(0, 0);
    pub const DB: Exception = Exception(1, 0);
    pub const BP: Exception = Exception(3, 0);
    pub const OF: Exception = Exception(4, 0);
    pub const BR: Exception = Exception(5, 0);
    pub const UD: Exception = Exception(6, 0);
    pub const NM: Exception = Exception(7, 0);
    pub const DF: Exception = Exception(8, 0);
    pub const TS: Exception = Exception(10, 0);
    pub const NP: Exception = Exception(11, 0);
    pub const SS: Exception = Exception(12, 0);
    pub const GP: Exception = Exception(13, 0);
    /// Page fault: raised for a memory access the bus refused ([`MemFault`]).
    pub const PF: Exception = Exception(14, 0);
    pub const MF: Exception = Exception(16, 0);
    /// SIMD floating-point exception (an unmasked MXCSR exception).
    pub const XM: Exception = Exception(19, 0);

    /// #GP with an error code (a selector, or 0).
    #[inline]
    pub const fn gp(code: u16) -> Exception {
        Exception(13, code)
    }
    /// #NP (segment not present) for a selector.
    #[inline]
    pub const fn np(code: u16) -> Exception {
        Exception(11, code)
    }
    /// #SS (stack fault) with an error code.
    #[inline]
    pub const fn ss(code: u16) -> Exception {
        Exception(12, code)
    }
    /// #TS (invalid TSS) for a selector.
    #[inline]
    pub const fn ts(code: u16) -> Exception {
        Exception(10, code)
    }
    /// The same fault for a selector: the error code names it (RPL bits
    /// cleared; bits 0-1 are EXT and IDT).
    #[inline]
    pub const fn for_sel(self, sel: u16) -> Exception {
        Exception(self.0, sel & 0xFFFC)
    }
    /// Whether a protected-mode fault with this vector pushes an error code.
    #[inline]
    pub const fn pushes_code(vector: u8) -> bool {
        matches!(vector, 8 | 10..=14 | 17)
    }
}

/// CR0 bits the model cares about.
pub mod cr0 {
    pub const PE: u32 = 1 << 0;
    pub const MP: u32 = 1 << 1;
    pub const EM: u32 = 1 << 2;
    pub const TS: u32 = 1 << 3;
    /// Extension type: hard-wired to 1 on a 486 with an FPU.
    pub const ET: u32 = 1 << 4;
    pub const NE: u32 = 1 << 5;
    /// Write protect (486): supervisor writes honour read-only pages.
    pub const WP: u32 = 1 << 16;
    /// Alignment mask (486): stored; #AC is not modelled.
    pub const AM: u32 = 1 << 18;
    /// Cache disable and not write-through (486): stored, no cache is modelled.
    pub const NW: u32 = 1 << 29;
    pub const CD: u32 = 1 << 30;
    /// Paging.
    pub const PG: u32 = 1 << 31;
    /// The bits a 486 keeps (the rest read as 0).
    pub const WRITABLE: u32 = PE | MP | EM | TS | ET | NE | WP | AM | NW | CD | PG;
}

/// A system segment register (LDTR, TR): selector and descriptor cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SysSeg {
    pub sel: u16,
    pub base: u32,
    /// Byte limit (granularity applied).
    pub limit: u32,
    /// Access byte (type, S, DPL, P) and, in bits 8-11, the descriptor's
    /// flags nibble (AVL, L, D/B, G); 0 when the register holds nothing.
    pub attr: u16,
}

/// Which instruction set the decoder accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Isa {
    /// A 486DX: what toyvm's real mode runs (CMOVcc, RDTSC, CMPXCHG8B are #UD).
    #[default]
    I486,
    /// A Pentium-class part as Win32 programs expect it: the 486 plus RDTSC,
    /// CMPXCHG8B, CMOVcc, the long NOP (0F 1F) and the P6 x87 forms FCMOVcc
    /// and F(U)COMI(P) (compilers targeting i686 emit them). CPUID says
    /// family 5 with the CMOV bit.
    Pentium,
    /// The Pentium model plus SSE and SSE2 (XMM0-7, MXCSR, FXSAVE/FXRSTOR):
    /// what flat user mode runs, since MSVC targets SSE2 by default. CPUID
    /// adds FXSR, SSE and SSE2 (not MMX, which is not modelled: MMX-register
    /// forms stay #UD). CR4.OSFXSR and OSXMMEXCPT are taken as set.
    PentiumSse2,
}

impl Isa {
    /// The Pentium additions (RDTSC, CMPXCHG8B, CMOVcc, the P6 x87 forms).
    #[inline(always)]
    pub fn pentium(self) -> bool {
        self != Isa::I486
    }
    /// SSE and SSE2.
    #[inline(always)]
    pub fn sse2(self) -> bool {
        self == Isa::PentiumSse2
    }
}

/// Architectural state of the CPU.
#[derive(Clone, Debug)]
pub struct Cpu {
    /// EAX ECX EDX EBX ESP EBP ESI EDI.
    pub regs: [u32; 8],
    /// ES CS SS DS FS GS selectors.
    pub sregs: [u16; 6],
    /// Segment bases (real mode: selector << 4).
    pub sbase: [u32; 6],
    /// Segment limit + 1 per segment (an access of `n` bytes at offset `off`
    /// is inside when `off + n <= seg_end`): 0x1_0000 in real mode,
    /// 0x1_0000_0000 for a flat 4 GiB segment, 0 for a null selector.
    pub seg_end: [u64; 6],
    /// CS.D: the default operand and address size is 32 bits (16 in real mode).
    pub code32: bool,
    /// SS.B: the stack pointer is ESP (SP in real mode).
    pub stack32: bool,
    /// Writable extent per segment, as `seg_end` is the readable one: equal
    /// to `seg_end` in real mode, 0 for a segment that cannot be written in
    /// protected mode (code, read-only data). Stores check it
    /// ([`ea::check_w`]), so a write-protect costs the hot path nothing.
    pub seg_wend: [u64; 6],
    /// Descriptor cache attributes per segment register: the access byte in
    /// bits 0-7, the flags nibble (AVL, L, D/B, G) in bits 8-11; 0 for a
    /// null (unusable) segment. Real mode: 93h (data), 9Bh (CS).
    pub sattr: [u16; 6],
    /// Descriptor cache limits in bytes (granularity applied).
    pub slimit: [u32; 6],
    /// Protected mode (CR0.PE as the segment rules see it): segment loads take
    /// base and limit from a descriptor instead of `sel << 4`.
    pub pmode: bool,
    /// Virtual-8086 mode (EFLAGS.VM, kept apart from the lazy flags).
    pub v86: bool,
    /// Flat user mode without descriptor tables (mainemu): a segment load
    /// copies a segment register that holds the same selector, software
    /// interrupts are reported as events. See [`user`].
    pub flat_user: bool,
    /// Current privilege level: 0 in real mode, 3 in flat user and V86 mode.
    pub cpl: u8,
    /// LDTR and TR.
    pub ldtr: SysSeg,
    pub tr: SysSeg,
    /// Translation cache of the paging unit (host-side, invisible to the
    /// guest: see `paging`).
    pub tlb: paging::Tlb,
    /// Set by a task switch once it committed to the new task: a fault
    /// after that point is delivered in the new task, not undone.
    pub committed: bool,
    /// The instruction set the decoder accepts.
    pub isa: Isa,
    /// Instruction pointer (IP in the low 16 bits in real mode).
    pub eip: u32,
    /// FLAGS/EFLAGS as a lazy record.
    pub flags: LazyFlags,
    /// The x87 FPU.
    pub fpu: fpu::Fpu,
    /// XMM0-7 and MXCSR (used only by the SSE model, [`Isa::PentiumSse2`]).
    pub sse: sse::SseState,
    /// CR0.
    pub cr0: u32,
    /// CR2 (the last page-fault address) and CR3 (the page directory).
    pub cr2: u32,
    pub cr3: u32,
    /// Debug registers DR0-DR7 (stored only; breakpoints are not modelled).
    pub dr: [u32; 8],
    /// Interrupt descriptor table register (real mode: the IVT base and limit).
    pub idt_base: u32,
    pub idt_limit: u16,
    /// GDTR.
    pub gdt_base: u32,
    pub gdt_limit: u16,
    /// The guest clock: dispatches since reset (ARCHITECTURE.md invariant 1).
    pub clock: u64,
    /// No interrupt is accepted at the next instruction boundary (after STI,
    /// MOV SS, POP SS).
    pub shadow: bool,
    /// The CPU executed HLT and waits for an interrupt.
    pub halted: bool,
    /// Vector raised for a stack-segment limit overrun: 12 (#SS) on a 386. The
    /// 286 conformance data shows 13; its harness flips this to compare.
    pub ss_fault_vector: u8,
}

impl Default for Cpu {
    fn default() -> Self {
        Cpu::new()
    }
}

/// `seg_end` of a real-mode segment (limit 0xFFFF).
pub const REAL_SEG_END: u64 = 0x1_0000;
/// `seg_end` of a flat 4 GiB segment (limit 0xFFFF_FFFF).
pub const FLAT_SEG_END: u64 = 0x1_0000_0000;

/// Descriptor cache attributes of the segment registers after reset: present
/// read/write data, CS present readable code (all accessed, DPL 0).
pub const REAL_ATTR: [u16; 6] = [0x93, 0x9B, 0x93, 0x93, 0x93, 0x93];

/// EFLAGS.VM (bit 17): kept in [`Cpu::v86`], merged into pushed images.
pub const EFLAGS_VM: u32 = 1 << 17;
/// EFLAGS.RF (bit 16): not modelled (no instruction breakpoints), reads 0.
pub const EFLAGS_RF: u32 = 1 << 16;

/// EFLAGS bits POPF/IRET can change in real mode (IOPL and NT included, as on a
/// 386; AC and ID toggle as on a 486; VM and RF cannot be set this way).
pub const EFLAGS_WRITABLE: u32 = 0x0024_7FD5;

impl Cpu {
    /// The system state as bytes, for the oracle's comparison (`system`
    /// in a sample): CR0/CR2/CR3, DR0-DR7, GDTR, IDTR, LDTR, TR, the
    /// descriptor caches (base, limit, attributes) of the six segment
    /// registers, the mode (protected, V86, CPL, 32-bit code and stack).
    /// Descriptor tables themselves live in RAM and are compared there; the
    /// host-side translation cache is not guest state and stays out.
    pub fn system_state_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(160);
        for v in [self.cr0, self.cr2, self.cr3, self.gdt_base, self.idt_base] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        for v in self.dr {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&self.gdt_limit.to_le_bytes());
        b.extend_from_slice(&self.idt_limit.to_le_bytes());
        for t in [&self.ldtr, &self.tr] {
            b.extend_from_slice(&t.sel.to_le_bytes());
            b.extend_from_slice(&t.base.to_le_bytes());
            b.extend_from_slice(&t.limit.to_le_bytes());
            b.extend_from_slice(&t.attr.to_le_bytes());
        }
        for i in 0..6 {
            b.extend_from_slice(&self.sbase[i].to_le_bytes());
            b.extend_from_slice(&self.slimit[i].to_le_bytes());
            b.extend_from_slice(&self.sattr[i].to_le_bytes());
        }
        b.extend_from_slice(&[
            self.pmode as u8,
            self.v86 as u8,
            self.cpl,
            self.code32 as u8,
            self.stack32 as u8,
        ]);
        b
    }

    /// Reset state as this lab defines it: every register, selector and base
    /// zero (the caller sets CS:IP), FLAGS = 0x0002, CR0 = ET, IVT at 0 with
    /// limit 0x3FF, FPU as after FNINIT, clock 0.
    pub fn new() -> Cpu {
        Cpu {
            regs: [0; 8],
            sregs: [0; 6],
            sbase: [0; 6],
            seg_end: [REAL_SEG_END; 6],
            seg_wend: [REAL_SEG_END; 6],
            sattr: REAL_ATTR,
            slimit: [0xFFFF; 6],
            code32: false,
            stack32: false,
            pmode: false,
            v86: false,
            flat_user: false,
            cpl: 0,
            ldtr: SysSeg::default(),
            tr: SysSeg {
                sel: 0,
                base: 0,
                limit: 0xFFFF,
                attr: 0x8B,
            },
            tlb: paging::Tlb::default(),
            committed: false,
            isa: Isa::I486,
            eip: 0,
            flags: LazyFlags::default(),
            fpu: fpu::Fpu::new(),
            sse: sse::SseState::default(),
            cr0: cr0::ET,
            cr2: 0,
            cr3: 0,
            dr: [0, 0, 0, 0, 0, 0, 0xFFFF_0FF0, 0x0000_0400],
            idt_base: 0,
            idt_limit: 0x3FF,
            gdt_base: 0,
            gdt_limit: 0xFFFF,
            clock: 0,
            shadow: false,
            halted: false,
            ss_fault_vector: 12,
        }
    }

    /// Loads a segment register as real mode does: selector and base = sel << 4.
    #[inline]
    pub fn load_seg_real(&mut self, s: usize, sel: u16) {
        self.sregs[s] = sel;
        self.sbase[s] = (sel as u32) << 4;
    }

    /// Sets CS:IP (a far jump as the machine performs it).
    pub fn set_cs_ip(&mut self, cs: u16, ip: u16) {
        self.load_seg_real(seg::CS, cs);
        self.eip = ip as u32;
    }

    /// Linear address of `seg:off` (no limit check).
    #[inline(always)]
    pub fn linear(&self, s: usize, off: u32) -> u32 {
        self.sbase[s].wrapping_add(off)
    }

    /// 8-bit register by encoding (AL CL DL BL AH CH DH BH).
    #[inline(always)]
    pub fn r8(&self, i: u8) -> u8 {
        let i = i as usize & 7;
        if i < 4 {
            self.regs[i] as u8
        } else {
            (self.regs[i - 4] >> 8) as u8
        }
    }
    /// Writes an 8-bit register by encoding.
    #[inline(always)]
    pub fn set_r8(&mut self, i: u8, v: u8) {
        let i = i as usize & 7;
        if i < 4 {
            self.regs[i] = (self.regs[i] & !0xFF) | v as u32;
        } else {
            self.regs[i - 4] = (self.regs[i - 4] & !0xFF00) | (v as u32) << 8;
        }
    }
    /// 16-bit register by encoding (AX CX DX BX SP BP SI DI).
    #[inline(always)]
    pub fn r16(&self, i: u8) -> u16 {
        self.regs[i as usize & 7] as u16
    }
    /// Writes a 16-bit register, keeping the upper half.
    #[inline(always)]
    pub fn set_r16(&mut self, i: u8, v: u16) {
        let r = &mut self.regs[i as usize & 7];
        *r = (*r & 0xFFFF_0000) | v as u32;
    }
    /// 32-bit register by encoding.
    #[inline(always)]
    pub fn r32(&self, i: u8) -> u32 {
        self.regs[i as usize & 7]
    }
    /// Writes a 32-bit register.
    #[inline(always)]
    pub fn set_r32(&mut self, i: u8, v: u32) {
        self.regs[i as usize & 7] = v;
    }

    /// The IP (low 16 bits of EIP).
    #[inline(always)]
    pub fn ip(&self) -> u16 {
        self.eip as u16
    }

    /// FLAGS/EFLAGS as a value (VM from [`Cpu::v86`]).
    #[inline]
    pub fn eflags(&self) -> u32 {
        self.flags.bits() | if self.v86 { EFLAGS_VM } else { 0 }
    }

    /// IOPL (EFLAGS bits 12-13).
    #[inline]
    pub fn iopl(&self) -> u8 {
        ((self.flags.bits() >> 12) & 3) as u8
    }

    /// Whether paging translates addresses (CR0.PG).
    #[inline(always)]
    pub fn paging(&self) -> bool {
        self.cr0 & cr0::PG != 0
    }

    /// Real mode with every segment as reset leaves it (64 KiB, writable,
    /// 16-bit code): what a tier whose machine model hard-codes real-mode
    /// limits (the naive lowering's `RealMode16`) may assume. A return from
    /// protected mode with other limits in the caches ("unreal mode") is
    /// not.
    #[inline]
    pub fn plain_real(&self) -> bool {
        // Element by element, not `== [REAL_SEG_END; 6]`: each array
        // compare was a `bcmp` call, and the µop arms' driver asks this on
        // every handback (KBDCHAIN, 20M dispatches under only-baseline: 7.1M
        // `bcmp` calls, 2.4% of the arm's host instructions).
        !self.pmode
            && !self.code32
            && self.seg_end.iter().all(|&e| e == REAL_SEG_END)
            && self.seg_wend.iter().all(|&e| e == REAL_SEG_END)
    }

    /// Protected mode with descriptor tables (not V86, not flat user mode):
    /// where the `pm` step, `xfer`, `pmint` and `task` apply.
    #[inline(always)]
    pub fn pm_tables(&self) -> bool {
        self.pmode && !self.v86 && !self.flat_user
    }

    /// Replaces FLAGS/EFLAGS (only architecturally writable bits stick).
    #[inline]
    pub fn set_eflags(&mut self, v: u32) {
        self.flags.set_bits(v & EFLAGS_WRITABLE);
    }

    /// The stack pointer as the stack segment sizes it: SP (zero-extended) on
    /// a 16-bit stack, ESP on a 32-bit one.
    #[inline(always)]
    pub fn stack_ptr(&self) -> u32 {
        if self.stack32 {
            self.regs[reg::ESP]
        } else {
            self.regs[reg::ESP] & 0xFFFF
        }
    }

    /// Writes the stack pointer: SP only (upper half kept) on a 16-bit stack.
    #[inline(always)]
    pub fn set_stack_ptr(&mut self, v: u32) {
        if self.stack32 {
            self.regs[reg::ESP] = v;
        } else {
            self.set_r16(reg::ESP as u8, v as u16);
        }
    }

    /// `sp() + delta`, wrapped to the stack size.
    #[inline(always)]
    pub fn stack_ptr_plus(&self, delta: u32) -> u32 {
        let v = self.stack_ptr().wrapping_add(delta);
        if self.stack32 {
            v
        } else {
            v & 0xFFFF
        }
    }

    /// The mask of the instruction pointer: 0xFFFF in a 16-bit code segment.
    #[inline(always)]
    pub fn ip_mask(&self) -> u32 {
        if self.code32 {
            u32::MAX
        } else {
            0xFFFF
        }
    }

    /// Pushes a word on SS:SP, honouring the 16-bit SP wrap. Fails (and changes
    /// nothing) when the word would straddle offset 0xFFFF.
    pub fn push16<B: Bus>(&mut self, bus: &mut B, v: u16) -> Result<(), Exception> {
        let sp = self.stack_ptr_plus(2u32.wrapping_neg());
        let lin = ea::check(self, seg::SS, sp, 2)?;
        bus.write16(lin, v);
        self.set_stack_ptr(sp);
        Ok(())
    }

    /// Pops a word from SS:SP, honouring the 16-bit SP wrap.
    pub fn pop16<B: Bus>(&mut self, bus: &mut B) -> Result<u16, Exception> {
        let sp = self.stack_ptr();
        let lin = ea::check(self, seg::SS, sp, 2)?;
        let v = bus.read16(lin);
        self.set_stack_ptr(self.stack_ptr_plus(2));
        Ok(v)
    }

    /// Delivers an external or host-requested interrupt: through the IVT in
    /// real mode (pushes FLAGS, CS, IP; clears IF and TF; loads CS:IP),
    /// through the IDT in protected and V86 mode (`pm`). Leaves the halted
    /// state. Costs no dispatch. The caller checks IF and [`Cpu::shadow`]
    /// first.
    pub fn interrupt<B: Bus>(&mut self, bus: &mut B, vector: u8) -> Result<(), StopReason> {
        self.halted = false;
        if self.pmode && !self.flat_user {
            return pm::external_interrupt(self, bus, vector);
        }
        let ip = self.eip;
        interrupt::deliver_event(self, bus, vector, ip)
    }
}
