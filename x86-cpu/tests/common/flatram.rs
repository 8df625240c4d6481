//! A flat RAM bus with a protection per 4 KiB page, shared by the
//! flat-mode tests: the first refused access is recorded and later writes
//! dropped, as `x86_cpu::bus` says. It owns this test bus only.

#![allow(dead_code)]

use x86_cpu::bus::{Access, Bus, MemFault, Width};

/// Page size of the protections.
pub const PAGE: u32 = 0x1000;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Prot {
    None,
    Read,
    ReadWrite,
}

/// 4 MiB of RAM at linear 0 with a protection per 4 KiB page; the first
/// refused access is recorded, later writes dropped, as `x86_cpu::bus` says.
pub struct FlatRam {
    pub mem: Vec<u8>,
    pub prot: Vec<Prot>,
    pub fault: Option<MemFault>,
}

impl FlatRam {
    /// `size` bytes of RAM at linear 0, every page read-write but page 0.
    pub fn new(size: u32) -> FlatRam {
        let mut prot = vec![Prot::ReadWrite; (size / PAGE) as usize];
        prot[0] = Prot::None;
        FlatRam {
            mem: vec![0; size as usize],
            prot,
            fault: None,
        }
    }
    pub fn page(&self, a: u32) -> Prot {
        self.prot
            .get((a / PAGE) as usize)
            .copied()
            .unwrap_or(Prot::None)
    }
    /// Whether all `n` bytes at `a` allow `acc`; records the first refused one.
    pub fn allow(&mut self, a: u32, n: u32, acc: Access) -> bool {
        if self.fault.is_some() {
            return false;
        }
        for i in 0..n {
            let x = a.wrapping_add(i);
            let ok = matches!(
                (self.page(x), acc),
                (Prot::ReadWrite, _) | (Prot::Read, Access::Read | Access::Execute)
            );
            if !ok {
                self.fault = Some(MemFault {
                    addr: x,
                    access: acc,
                });
                return false;
            }
        }
        true
    }
    pub fn load(&mut self, a: u32, bytes: &[u8]) {
        self.mem[a as usize..a as usize + bytes.len()].copy_from_slice(bytes);
    }
    pub fn rd32(&self, a: u32) -> u32 {
        u32::from_le_bytes(self.mem[a as usize..a as usize + 4].try_into().unwrap())
    }
    pub fn wr32(&mut self, a: u32, v: u32) {
        self.mem[a as usize..a as usize + 4].copy_from_slice(&v.to_le_bytes());
    }
    pub fn read_n(&mut self, a: u32, n: u32) -> u32 {
        if !self.allow(a, n, Access::Read) {
            return 0;
        }
        (0..n).fold(0, |v, i| {
            v | (self.mem[a.wrapping_add(i) as usize] as u32) << (8 * i)
        })
    }
    pub fn write_n(&mut self, a: u32, n: u32, v: u32) {
        if self.allow(a, n, Access::Write) {
            for i in 0..n {
                self.mem[a.wrapping_add(i) as usize] = (v >> (8 * i)) as u8;
            }
        }
    }
}

impl Bus for FlatRam {
    fn read8(&mut self, a: u32) -> u8 {
        self.read_n(a, 1) as u8
    }
    fn write8(&mut self, a: u32, v: u8) {
        self.write_n(a, 1, v as u32)
    }
    fn read16(&mut self, a: u32) -> u16 {
        self.read_n(a, 2) as u16
    }
    fn read32(&mut self, a: u32) -> u32 {
        self.read_n(a, 4)
    }
    fn write16(&mut self, a: u32, v: u16) {
        self.write_n(a, 2, v as u32)
    }
    fn write32(&mut self, a: u32, v: u32) {
        self.write_n(a, 4, v)
    }
    fn take_fault(&mut self) -> Option<MemFault> {
        self.fault.take()
    }
    fn fault_pending(&self) -> bool {
        self.fault.is_some()
    }
    fn probe_write(&mut self, a: u32, n: u32) {
        self.allow(a, n, Access::Write);
    }
    fn io_read(&mut self, _p: u16, w: Width, _n: u64) -> u32 {
        w.mask()
    }
    fn io_write(&mut self, _p: u16, _w: Width, _v: u32, _n: u64) {}
}
