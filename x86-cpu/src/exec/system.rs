//! Handlers for I/O ports, control and debug registers, descriptor-table
//! registers, CPUID, the x87 escape, the host-service instruction, and the
//! instructions the model refuses with a stop report.
//!
//! Owns the real-mode, 486-with-FPU view of the system instructions (CPUID
//! identity, CR0 rules, the EM/TS checks before x87). It must not implement x87
//! arithmetic: D8-DF go to `cpu::fpu`, which owns that.

use super::{io_allowed, privileged};
use crate::bus::{Bus, Mmu};
use crate::fpu::{FpuContext, FpuMemory};
use crate::op::{put, Flow, Op, Opnd};
use crate::{cr0, ea, reg, seg, segs, Cpu, Exception};

type R = Result<Flow, Exception>;

/// Why a [`h_stop`] op stops, indexed by `sub`.
pub const STOP_MESSAGES: [&str; 4] = [
    "unsupported: LOADALL",
    "unsupported: test registers (MOV TRn) are not modelled",
    "unsupported: MMX registers are not modelled (CPUID does not report MMX)",
    "unsupported: RCPxx/RSQRTxx/MASKMOVDQU are not modelled",
];

fn port<B: Bus>(cpu: &Cpu, op: &Op<B>, o: Opnd) -> u16 {
    match o {
        Opnd::Imm => op.imm as u16,
        _ => cpu.r16(reg::EDX as u8),
    }
}

/// IN acc, imm8/DX. The device sees the guest clock of this dispatch.
pub fn h_in<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let p = port(cpu, op, op.src);
    io_allowed(cpu, bus, p, op.w)?;
    let v = bus.io_read(p, op.w, cpu.clock) & op.w.mask();
    let d = op.loc(cpu, op.dst)?;
    put(cpu, bus, d, v);
    Ok(Flow::Next)
}

/// OUT imm8/DX, acc.
pub fn h_out<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let p = port(cpu, op, op.dst);
    io_allowed(cpu, bus, p, op.w)?;
    let v = op.read(cpu, bus, op.src)?;
    bus.io_write(p, op.w, v, cpu.clock);
    Ok(Flow::Next)
}

/// Writes CR0. PG without PE is #GP(0). Setting PE enters protected mode
/// (the segment caches stay until reloaded, the CPL stays 0); clearing it
/// returns to real mode (`segs::enter_real`). A change of PE, PG or WP
/// drops the paging adapter's translations.
fn write_cr0<B: Bus>(cpu: &mut Cpu, bus: &mut B, v: u32) -> R {
    let v = (v & cr0::WRITABLE) | cr0::ET;
    if v & cr0::PG != 0 && v & cr0::PE == 0 {
        return Err(Exception::gp(0));
    }
    let old = cpu.cr0;
    cpu.cr0 = v;
    let pe = v & cr0::PE != 0;
    if pe != cpu.pmode && !cpu.flat_user {
        cpu.pmode = pe;
        if !pe {
            segs::enter_real(cpu);
        }
    }
    if (old ^ v) & (cr0::PE | cr0::PG | cr0::WP) != 0 {
        bus.mmu(Mmu::Reload {
            cr0: v,
            cr3: cpu.cr3,
        });
    }
    Ok(Flow::Next)
}

/// MOV r32, CRn (0) / MOV CRn, r32 (1) / MOV r32, DRn (2) / MOV DRn, r32 (3);
/// `imm` = n (CR1/CR4+ were rejected at decode; DR4/DR5 alias DR6/DR7).
pub fn h_movcr<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    privileged(cpu)?;
    let n = op.imm as usize & 7;
    let dn = if n == 4 || n == 5 { n + 2 } else { n };
    let r = match op.sub {
        0 | 2 => match op.dst {
            Opnd::R32(r) => r,
            _ => 0,
        },
        _ => match op.src {
            Opnd::R32(r) => r,
            _ => 0,
        },
    };
    match op.sub {
        0 => {
            let v = match n {
                0 => cpu.cr0,
                2 => cpu.cr2,
                _ => cpu.cr3,
            };
            cpu.set_r32(r, v);
        }
        1 => {
            let v = cpu.r32(r);
            match n {
                0 => return write_cr0(cpu, bus, v),
                2 => cpu.cr2 = v,
                _ => {
                    cpu.cr3 = v & 0xFFFF_F018;
                    bus.mmu(Mmu::Reload {
                        cr0: cpu.cr0,
                        cr3: cpu.cr3,
                    });
                }
            }
        }
        2 => cpu.set_r32(r, cpu.dr[dn]),
        _ => cpu.dr[dn] = cpu.r32(r),
    }
    Ok(Flow::Next)
}

/// CLTS.
pub fn h_clts<B: Bus>(cpu: &mut Cpu, _bus: &mut B, _op: &Op<B>) -> R {
    privileged(cpu)?;
    cpu.cr0 &= !cr0::TS;
    Ok(Flow::Next)
}

/// SMSW r/m (a 32-bit register receives all of CR0).
pub fn h_smsw<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    let d = op.loc_w(cpu, op.dst)?;
    put(cpu, bus, d, cpu.cr0);
    Ok(Flow::Next)
}

/// LMSW r/m16: loads PE MP EM TS; it cannot clear PE (setting it enters
/// protected mode as MOV CR0 does).
pub fn h_lmsw<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    privileged(cpu)?;
    let v = op.read(cpu, bus, op.dst)? & 0xF;
    let nv = (cpu.cr0 & !0xF) | v | (cpu.cr0 & cr0::PE);
    write_cr0(cpu, bus, nv)
}

/// LGDT (0) LIDT (1) SGDT (2) SIDT (3): limit word then base dword (a 16-bit
/// operand size loads 24 base bits and stores the fourth byte as 0).
pub fn h_dtr<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    if op.sub < 2 {
        privileged(cpu)?;
    }
    let lin = if op.sub < 2 {
        ea::check(cpu, op.ea.seg as usize, op.ea_off(cpu), 6)?
    } else {
        ea::check_w(cpu, op.ea.seg as usize, op.ea_off(cpu), 6)?
    };
    let base_mask = if op.o32 { u32::MAX } else { 0x00FF_FFFF };
    match op.sub {
        0 | 1 => {
            let limit = bus.read16(lin);
            let base = bus.read32(lin.wrapping_add(2)) & base_mask;
            if bus.fault_pending() {
                return Err(Exception::PF);
            }
            if op.sub == 0 {
                (cpu.gdt_base, cpu.gdt_limit) = (base, limit);
            } else {
                (cpu.idt_base, cpu.idt_limit) = (base, limit);
            }
        }
        _ => {
            let (base, limit) = if op.sub == 2 {
                (cpu.gdt_base, cpu.gdt_limit)
            } else {
                (cpu.idt_base, cpu.idt_limit)
            };
            bus.write16(lin, limit);
            bus.write32(lin.wrapping_add(2), base & base_mask);
        }
    }
    Ok(Flow::Next)
}

/// CPUID EDX feature bits the Pentium model reports: FPU (0), TSC (4), CX8
/// (8), CMOV (15: CMOVcc, and with the FPU bit FCMOVcc and FCOMI, which the
/// x87 runs in this model through `fpu::exec::execute_p6`).
pub const PENTIUM_FEATURES: u32 = 1 | 1 << 4 | 1 << 8 | 1 << 15;
/// The SSE2 model adds FXSR (24), SSE (25) and SSE2 (26); not MMX (23).
pub const SSE2_FEATURES: u32 = PENTIUM_FEATURES | 1 << 24 | 1 << 25 | 1 << 26;

/// CPUID: the 486 model is a 486DX4-class part with an on-chip FPU and nothing
/// newer; the Pentium model (flat user mode) is family 5 with what
/// [`PENTIUM_FEATURES`] lists. Leaves past the maximum return zeros.
pub fn h_cpuid<B: Bus>(cpu: &mut Cpu, _bus: &mut B, _op: &Op<B>) -> R {
    let pentium = cpu.isa.pentium();
    let (a, b, c, d) = match cpu.regs[reg::EAX] {
        // "GenuineIntel" in EBX EDX ECX.
        0 => (1, 0x756E_6547, 0x6C65_746E, 0x4965_6E69),
        // Family 5, model 2, stepping 0.
        1 if cpu.isa.sse2() => (0x0000_0520, 0, 0, SSE2_FEATURES),
        1 if pentium => (0x0000_0520, 0, 0, PENTIUM_FEATURES),
        // Family 4, model 8, stepping 0; EDX bit 0: FPU on chip.
        1 => (0x0000_0480, 0, 0, 0x0000_0001),
        _ => (0, 0, 0, 0),
    };
    cpu.regs[reg::EAX] = a;
    cpu.regs[reg::EBX] = b;
    cpu.regs[reg::ECX] = c;
    cpu.regs[reg::EDX] = d;
    Ok(Flow::Next)
}

/// RDTSC: EDX:EAX = the guest clock (dispatches retired before this one), so
/// time is deterministic (invariant 7). Allowed at CPL 3 (CR4.TSD is not
/// modelled).
pub fn h_rdtsc<B: Bus>(cpu: &mut Cpu, _bus: &mut B, _op: &Op<B>) -> R {
    cpu.regs[reg::EAX] = cpu.clock as u32;
    cpu.regs[reg::EDX] = (cpu.clock >> 32) as u32;
    Ok(Flow::Next)
}

/// INVD, WBINVD (no cache is modelled: nothing happens) and INVLPG (the
/// paging adapter drops the page's translation; `sub` 1); #GP above CPL 0.
pub fn h_priv_nop<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    privileged(cpu)?;
    if op.sub == 1 {
        let lin = cpu.linear(op.ea.seg as usize, op.ea_off(cpu));
        bus.mmu(Mmu::Invlpg(lin));
    }
    Ok(Flow::Next)
}

/// FWAIT: #NM when MP and TS are both set, otherwise nothing to wait for.
pub fn h_wait<B: Bus>(cpu: &mut Cpu, _bus: &mut B, _op: &Op<B>) -> R {
    if cpu.cr0 & (cr0::MP | cr0::TS) == (cr0::MP | cr0::TS) {
        return Err(Exception::NM);
    }
    Ok(Flow::Next)
}

/// The x87 memory operand as the FPU sees it: segment-limit checked, never
/// wrapping inside the segment. A refused bus access is an error to the FPU
/// (so its state stays as before), and the dispatch reports the bus fault.
struct FpuMem<'a, B> {
    bus: &'a mut B,
    base: u32,
    off: u32,
    end: u64,
    /// The writable extent (stores into a read-only segment fault).
    wend: u64,
    fault: Exception,
}

impl<B: Bus> FpuMem<'_, B> {
    fn lin(&self, disp: u32, n: usize, end: u64) -> Result<u32, Exception> {
        let start = self.off as u64 + disp as u64;
        if n > 0 && start + n as u64 > end {
            return Err(self.fault);
        }
        Ok(self.base.wrapping_add(start as u32))
    }
}

impl<B: Bus> FpuMemory for FpuMem<'_, B> {
    fn read(&mut self, disp: u32, buf: &mut [u8]) -> Result<(), Exception> {
        let a = self.lin(disp, buf.len(), self.end)?;
        // In dwords, then a word, then a byte: the bus's wide accesses are
        // its bytes in ascending order (the `Bus` contract), so this reads
        // what a byte loop reads, with one translation per dword.
        let mut i = 0;
        while i + 4 <= buf.len() {
            let v = self.bus.read32(a.wrapping_add(i as u32));
            buf[i..i + 4].copy_from_slice(&v.to_le_bytes());
            i += 4;
        }
        if i + 2 <= buf.len() {
            let v = self.bus.read16(a.wrapping_add(i as u32));
            buf[i..i + 2].copy_from_slice(&v.to_le_bytes());
            i += 2;
        }
        if i < buf.len() {
            buf[i] = self.bus.read8(a.wrapping_add(i as u32));
        }
        if self.bus.fault_pending() {
            return Err(Exception::PF);
        }
        Ok(())
    }
    fn write(&mut self, disp: u32, buf: &[u8]) -> Result<(), Exception> {
        let a = self.lin(disp, buf.len(), self.wend)?;
        self.bus.probe_write(a, buf.len() as u32);
        if self.bus.fault_pending() {
            return Err(Exception::PF);
        }
        // As `read`: the probe above made the whole span writable.
        let mut i = 0;
        while i + 4 <= buf.len() {
            let v = u32::from_le_bytes([buf[i], buf[i + 1], buf[i + 2], buf[i + 3]]);
            self.bus.write32(a.wrapping_add(i as u32), v);
            i += 4;
        }
        if i + 2 <= buf.len() {
            let v = u16::from_le_bytes([buf[i], buf[i + 1]]);
            self.bus.write16(a.wrapping_add(i as u32), v);
            i += 2;
        }
        if i < buf.len() {
            self.bus.write8(a.wrapping_add(i as u32), buf[i]);
        }
        Ok(())
    }
}

/// D8-DF: #NM when CR0.EM or CR0.TS is set; otherwise the FPU executes it with
/// a window on the memory operand.
pub fn h_fpu<B: Bus>(cpu: &mut Cpu, bus: &mut B, op: &Op<B>) -> R {
    if cpu.cr0 & (cr0::EM | cr0::TS) != 0 {
        return Err(Exception::NM);
    }
    let Some(ins) = op.x87.as_deref() else {
        return Err(Exception::UD);
    };
    // The Pentium (user-mode) model runs the P6 x87 forms, which touch EFLAGS.
    if cpu.isa.pentium() {
        let mut fl = cpu.eflags();
        if crate::fpu::exec::execute_p6(&mut cpu.fpu, ins, &mut fl) {
            cpu.set_eflags(fl);
            return Ok(Flow::Next);
        }
    }
    let has_mem = matches!(op.dst, Opnd::Mem(_));
    let s = op.ea.seg as usize;
    let off = op.ea_off(cpu);
    let mut mem = FpuMem {
        bus,
        base: cpu.sbase[s],
        off,
        end: cpu.seg_end[s],
        wend: cpu.seg_wend[s],
        fault: ea::overrun(cpu, s),
    };
    let (cs, ip, data_seg) = (cpu.sregs[seg::CS], cpu.eip, cpu.sregs[s]);
    let Cpu { fpu, regs, .. } = cpu;
    let cx = FpuContext {
        mem: if has_mem { Some(&mut mem) } else { None },
        eax: &mut regs[reg::EAX],
        op32: op.o32,
        cs,
        ip,
        data_seg,
        data_off: if has_mem { off } else { 0 },
    };
    fpu.execute(ins, cx)?;
    Ok(Flow::Next)
}

/// The host-service instruction `FE 38 lo hi` inside the BIOS ROM window.
pub fn h_hostcall<B: Bus>(_cpu: &mut Cpu, _bus: &mut B, op: &Op<B>) -> R {
    Ok(Flow::HostCall(op.imm as u16))
}

/// Instructions the model cannot express (`sub` indexes [`STOP_MESSAGES`]).
pub fn h_stop<B: Bus>(_cpu: &mut Cpu, _bus: &mut B, op: &Op<B>) -> R {
    Ok(Flow::Stop(op.sub))
}

/// Raises #UD (kept as a handler so L1 can cache an undefined opcode as an Op).
pub fn h_ud<B: Bus>(_cpu: &mut Cpu, _bus: &mut B, _op: &Op<B>) -> R {
    Err(Exception::UD)
}
