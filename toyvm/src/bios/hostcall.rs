//! The host-call convention between guest stubs in the BIOS ROM and the Rust
//! services: register access by name, the caller's interrupt frame (where a
//! service returns CF/ZF), and what a service asks of the session.
//!
//! Owns only this vocabulary; it must not implement any service.

use crate::cpu::{reg, seg, Cpu};
use crate::machine::Machine;
use shared_ir::flags;

/// What a service wants the session to do after it returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Continue at CS:IP (normally the stub's IRET).
    Continue,
    /// The service must wait for an event (a key, a tick, a deadline). IP
    /// has been moved back onto the host-call instruction, so the service
    /// runs again after the session advanced the clock to the next device
    /// event (or to `until`, whichever is first) and took any interrupt.
    Wait { until: Option<u64> },
    /// The top-level program ended with this exit code (after any TSR).
    Exit { code: u8 },
    /// The run cannot go on: a clear report.
    Stop {
        what: String,
        missing: Option<String>,
    },
}

/// Length of the host-call instruction `FE 38 lo hi`.
pub const HOSTCALL_LEN: u32 = 4;

/// Named 16/8-bit register access for services.
pub trait Regs {
    fn ax(&self) -> u16;
    fn bx(&self) -> u16;
    fn cx(&self) -> u16;
    fn dx(&self) -> u16;
    fn si(&self) -> u16;
    fn di(&self) -> u16;
    fn bp(&self) -> u16;
    fn sp(&self) -> u16;
    fn set_ax(&mut self, v: u16);
    fn set_bx(&mut self, v: u16);
    fn set_cx(&mut self, v: u16);
    fn set_dx(&mut self, v: u16);
    fn set_si(&mut self, v: u16);
    fn set_di(&mut self, v: u16);
    fn set_bp(&mut self, v: u16);
    fn set_sp(&mut self, v: u16);
    fn al(&self) -> u8 {
        self.ax() as u8
    }
    fn ah(&self) -> u8 {
        (self.ax() >> 8) as u8
    }
    fn bl(&self) -> u8 {
        self.bx() as u8
    }
    fn bh(&self) -> u8 {
        (self.bx() >> 8) as u8
    }
    fn cl(&self) -> u8 {
        self.cx() as u8
    }
    fn ch(&self) -> u8 {
        (self.cx() >> 8) as u8
    }
    fn dl(&self) -> u8 {
        self.dx() as u8
    }
    fn dh(&self) -> u8 {
        (self.dx() >> 8) as u8
    }
    fn set_al(&mut self, v: u8) {
        let x = self.ax();
        self.set_ax((x & 0xFF00) | v as u16)
    }
    fn set_ah(&mut self, v: u8) {
        let x = self.ax();
        self.set_ax((x & 0x00FF) | (v as u16) << 8)
    }
    fn set_bl(&mut self, v: u8) {
        let x = self.bx();
        self.set_bx((x & 0xFF00) | v as u16)
    }
    fn set_bh(&mut self, v: u8) {
        let x = self.bx();
        self.set_bx((x & 0x00FF) | (v as u16) << 8)
    }
    fn set_cl(&mut self, v: u8) {
        let x = self.cx();
        self.set_cx((x & 0xFF00) | v as u16)
    }
    fn set_ch(&mut self, v: u8) {
        let x = self.cx();
        self.set_cx((x & 0x00FF) | (v as u16) << 8)
    }
    fn set_dl(&mut self, v: u8) {
        let x = self.dx();
        self.set_dx((x & 0xFF00) | v as u16)
    }
    fn set_dh(&mut self, v: u8) {
        let x = self.dx();
        self.set_dx((x & 0x00FF) | (v as u16) << 8)
    }
    fn es(&self) -> u16;
    fn cs(&self) -> u16;
    fn ss(&self) -> u16;
    fn ds(&self) -> u16;
    /// Loads a segment register the real-mode way (base = selector << 4).
    fn set_seg(&mut self, s: usize, v: u16);
}

fn get16(c: &Cpu, r: usize) -> u16 {
    c.regs[r] as u16
}
fn put16(c: &mut Cpu, r: usize, v: u16) {
    c.regs[r] = (c.regs[r] & 0xFFFF_0000) | v as u32;
}

impl Regs for Cpu {
    fn ax(&self) -> u16 {
        get16(self, reg::EAX)
    }
    fn bx(&self) -> u16 {
        get16(self, reg::EBX)
    }
    fn cx(&self) -> u16 {
        get16(self, reg::ECX)
    }
    fn dx(&self) -> u16 {
        get16(self, reg::EDX)
    }
    fn si(&self) -> u16 {
        get16(self, reg::ESI)
    }
    fn di(&self) -> u16 {
        get16(self, reg::EDI)
    }
    fn bp(&self) -> u16 {
        get16(self, reg::EBP)
    }
    fn sp(&self) -> u16 {
        get16(self, reg::ESP)
    }
    fn set_ax(&mut self, v: u16) {
        put16(self, reg::EAX, v)
    }
    fn set_bx(&mut self, v: u16) {
        put16(self, reg::EBX, v)
    }
    fn set_cx(&mut self, v: u16) {
        put16(self, reg::ECX, v)
    }
    fn set_dx(&mut self, v: u16) {
        put16(self, reg::EDX, v)
    }
    fn set_si(&mut self, v: u16) {
        put16(self, reg::ESI, v)
    }
    fn set_di(&mut self, v: u16) {
        put16(self, reg::EDI, v)
    }
    fn set_bp(&mut self, v: u16) {
        put16(self, reg::EBP, v)
    }
    fn set_sp(&mut self, v: u16) {
        put16(self, reg::ESP, v)
    }
    fn es(&self) -> u16 {
        self.sregs[seg::ES]
    }
    fn cs(&self) -> u16 {
        self.sregs[seg::CS]
    }
    fn ss(&self) -> u16 {
        self.sregs[seg::SS]
    }
    fn ds(&self) -> u16 {
        self.sregs[seg::DS]
    }
    fn set_seg(&mut self, s: usize, v: u16) {
        self.sregs[s] = v;
        self.sbase[s] = (v as u32) << 4;
    }
}

/// The interrupt frame a stub was entered with: IP, CS, FLAGS at SS:SP.
/// Valid while the stub has not pushed anything (services run before the
/// stub's IRET).
pub struct Frame3 {
    pub ip: u16,
    pub cs: u16,
    pub flags: u16,
}

/// Reads the caller's interrupt frame at SS:SP.
pub fn frame(cpu: &Cpu, m: &mut Machine) -> Frame3 {
    let (ss, sp) = (cpu.ss(), cpu.sp());
    Frame3 {
        ip: m.rd16(ss, sp),
        cs: m.rd16(ss, sp.wrapping_add(2)),
        flags: m.rd16(ss, sp.wrapping_add(4)),
    }
}

/// Sets or clears flag bits both live and in the caller's FLAGS image, so
/// the stub's IRET returns them.
pub fn set_ret_flag(cpu: &mut Cpu, m: &mut Machine, mask: u16, on: bool) {
    let (ss, sp) = (cpu.ss(), cpu.sp().wrapping_add(4));
    let f = m.rd16(ss, sp);
    m.wr16(ss, sp, if on { f | mask } else { f & !mask });
    cpu.flags.set_mask(mask as u32, on);
}

/// Returns CF to the caller.
pub fn set_cf(cpu: &mut Cpu, m: &mut Machine, on: bool) {
    set_ret_flag(cpu, m, flags::CF as u16, on)
}

/// Returns ZF to the caller.
pub fn set_zf(cpu: &mut Cpu, m: &mut Machine, on: bool) {
    set_ret_flag(cpu, m, flags::ZF as u16, on)
}

/// Success with CF clear.
pub fn ok(cpu: &mut Cpu, m: &mut Machine) {
    set_cf(cpu, m, false)
}

/// The DOS error convention: AX = code, CF set.
pub fn fail(cpu: &mut Cpu, m: &mut Machine, code: u16) {
    cpu.set_ax(code);
    set_cf(cpu, m, true)
}

/// Moves IP back onto the host-call instruction so it runs again (used by
/// services that wait).
pub fn retry(cpu: &mut Cpu) {
    cpu.eip = cpu.eip.wrapping_sub(HOSTCALL_LEN) & 0xFFFF;
}
