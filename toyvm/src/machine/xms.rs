//! The XMS 3.0 driver (what HIMEM.SYS provides): extended memory blocks in
//! physical memory above the HMA, the HMA itself, and the A20 functions.
//!
//! Owns EMB bookkeeping and the register-level driver entry (called through
//! the far entry point INT 2Fh AX=4310h returns). It must not keep its own
//! A20 state: the gate belongs to the devices and is moved through port 92h.

use crate::bios::hostcall::Regs;
use crate::bus::{Bus, Width};
use crate::cpu::{seg, Cpu};
use crate::machine::{lin, Machine};

/// First byte of extended memory the driver manages (after the HMA).
pub const XMS_BASE: u32 = 0x110000;
/// End of installed memory.
pub const XMS_END: u32 = (super::memory::RAM_SIZE) as u32;
/// Handles the driver offers.
const MAX_HANDLES: usize = 64;

#[derive(Clone, Debug, PartialEq, Eq)]
struct Block {
    base: u32,
    kb: u32,
    locks: u8,
}

/// XMS driver state.
#[derive(Clone, Debug, Default)]
pub struct Xms {
    /// Handle n+1 is `blocks[n]`; `None` is a free handle.
    blocks: Vec<Option<Block>>,
    hma_used: bool,
    /// Local A20 enable count (functions 05h/06h).
    local_a20: u32,
}

/// An XMS error code (returned in BL with AX=0).
pub type XmsError = u8;

impl Xms {
    pub fn new() -> Xms {
        Xms {
            blocks: vec![None; MAX_HANDLES],
            hma_used: false,
            local_a20: 0,
        }
    }

    fn used(&self) -> Vec<(u32, u32)> {
        let mut v: Vec<(u32, u32)> = self
            .blocks
            .iter()
            .flatten()
            .map(|b| (b.base, b.base + b.kb * 1024))
            .collect();
        v.sort();
        v
    }

    /// Free gaps as (base, bytes), in address order.
    fn gaps(&self) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        let mut at = XMS_BASE;
        for (s, e) in self.used() {
            if s > at {
                out.push((at, s - at));
            }
            at = at.max(e);
        }
        if XMS_END > at {
            out.push((at, XMS_END - at));
        }
        out
    }

    /// Largest free block and total free, in KiB.
    pub fn free_kb(&self) -> (u32, u32) {
        let g = self.gaps();
        let largest = g.iter().map(|&(_, n)| n / 1024).max().unwrap_or(0);
        let total = g.iter().map(|&(_, n)| n / 1024).sum();
        (largest, total)
    }

    /// Allocates `kb` KiB: the new handle.
    pub fn alloc(&mut self, kb: u32) -> Result<u16, XmsError> {
        let slot = self.blocks.iter().position(Option::is_none).ok_or(0xA1u8)?;
        let need = kb * 1024;
        let base = self
            .gaps()
            .into_iter()
            .find(|&(_, n)| n >= need)
            .map(|(b, _)| b)
            .ok_or(0xA0u8)?;
        self.blocks[slot] = Some(Block { base, kb, locks: 0 });
        Ok(slot as u16 + 1)
    }

    fn block(&self, h: u16) -> Result<&Block, XmsError> {
        self.blocks
            .get((h as usize).wrapping_sub(1))
            .and_then(Option::as_ref)
            .ok_or(0xA2)
    }

    fn block_mut(&mut self, h: u16) -> Result<&mut Block, XmsError> {
        self.blocks
            .get_mut((h as usize).wrapping_sub(1))
            .and_then(Option::as_mut)
            .ok_or(0xA2)
    }

    pub fn free(&mut self, h: u16) -> Result<(), XmsError> {
        if self.block(h)?.locks > 0 {
            return Err(0xAB);
        }
        self.blocks[h as usize - 1] = None;
        Ok(())
    }

    /// Locks a block: its physical address.
    pub fn lock(&mut self, h: u16) -> Result<u32, XmsError> {
        let b = self.block_mut(h)?;
        b.locks = b.locks.checked_add(1).ok_or(0xACu8)?;
        Ok(b.base)
    }

    pub fn unlock(&mut self, h: u16) -> Result<(), XmsError> {
        let b = self.block_mut(h)?;
        if b.locks == 0 {
            return Err(0xAA);
        }
        b.locks -= 1;
        Ok(())
    }

    /// Resizes a block in place, or moves it when unlocked. Returns the
    /// (old base, new base, bytes to keep) so the caller can move contents.
    pub fn realloc(&mut self, h: u16, kb: u32) -> Result<(u32, u32, u32), XmsError> {
        let old = self.block(h)?.clone();
        if old.locks > 0 {
            return Err(0xAB);
        }
        self.blocks[h as usize - 1] = None;
        let need = kb * 1024;
        // In place when the gap starting at the block is big enough.
        let in_place = self
            .gaps()
            .iter()
            .any(|&(b, n)| b <= old.base && old.base + need <= b + n);
        let base = if in_place {
            Some(old.base)
        } else {
            self.gaps()
                .into_iter()
                .find(|&(_, n)| n >= need)
                .map(|(b, _)| b)
        };
        match base {
            Some(base) => {
                self.blocks[h as usize - 1] = Some(Block { base, kb, locks: 0 });
                Ok((old.base, base, old.kb.min(kb) * 1024))
            }
            None => {
                self.blocks[h as usize - 1] = Some(old);
                Err(0xA0)
            }
        }
    }

    /// (base, bytes) of a handle's block.
    pub fn extent(&self, h: u16) -> Result<(u32, u32), XmsError> {
        let b = self.block(h)?;
        Ok((b.base, b.kb * 1024))
    }

    fn free_handles(&self) -> u8 {
        self.blocks.iter().filter(|b| b.is_none()).count() as u8
    }
}

/// Sets the A20 gate through the fast-A20 port, as HIMEM does on a PS/2-class
/// machine.
fn gate_a20(cpu: &Cpu, m: &mut Machine, on: bool) {
    let v = m.io_read(0x92, Width::W8, cpu.clock) as u8;
    let v = if on { v | 2 } else { v & !2 };
    m.io_write(0x92, Width::W8, (v & !1) as u32, cpu.clock);
}

/// The XMS driver entry: function in AH. Results in AX (1 = success), BL
/// (error code), DX and friends, as the XMS 3.0 specification says.
pub fn service(cpu: &mut Cpu, m: &mut Machine) {
    let fail = |cpu: &mut Cpu, code: u8| {
        cpu.set_ax(0);
        cpu.set_bl(code);
    };
    let okay = |cpu: &mut Cpu| {
        cpu.set_ax(1);
        cpu.set_bl(0);
    };
    match cpu.ah() {
        0x00 => {
            cpu.set_ax(0x0300);
            cpu.set_bx(0x0301);
            cpu.set_dx(1);
        }
        0x01 => {
            if m.xms.hma_used {
                fail(cpu, 0x91)
            } else {
                m.xms.hma_used = true;
                okay(cpu)
            }
        }
        0x02 => {
            if m.xms.hma_used {
                m.xms.hma_used = false;
                okay(cpu)
            } else {
                fail(cpu, 0x93)
            }
        }
        0x03 => {
            gate_a20(cpu, m, true);
            okay(cpu)
        }
        0x04 => {
            gate_a20(cpu, m, false);
            okay(cpu)
        }
        0x05 => {
            m.xms.local_a20 += 1;
            gate_a20(cpu, m, true);
            okay(cpu)
        }
        0x06 => {
            m.xms.local_a20 = m.xms.local_a20.saturating_sub(1);
            if m.xms.local_a20 == 0 {
                gate_a20(cpu, m, false);
            }
            okay(cpu)
        }
        0x07 => {
            let on = m.mem.a20();
            cpu.set_ax(on as u16);
            cpu.set_bl(0);
        }
        0x08 => {
            let (largest, total) = m.xms.free_kb();
            cpu.set_ax(largest.min(0xFFFF) as u16);
            cpu.set_dx(total.min(0xFFFF) as u16);
            cpu.set_bl(if total == 0 { 0xA0 } else { 0 });
        }
        0x88 => {
            let (largest, total) = m.xms.free_kb();
            cpu.regs[0] = largest;
            cpu.regs[2] = total;
            cpu.regs[1] = XMS_END - 1;
            cpu.set_bl(0);
        }
        0x09 | 0x89 => {
            let kb = if cpu.ah() == 0x89 {
                cpu.regs[2]
            } else {
                cpu.dx() as u32
            };
            match m.xms.alloc(kb) {
                Ok(h) => {
                    okay(cpu);
                    cpu.set_dx(h);
                }
                Err(e) => fail(cpu, e),
            }
        }
        0x0A => match m.xms.free(cpu.dx()) {
            Ok(()) => okay(cpu),
            Err(e) => fail(cpu, e),
        },
        0x0B => match emb_move(cpu, m) {
            Ok(()) => okay(cpu),
            Err(e) => fail(cpu, e),
        },
        0x0C => match m.xms.lock(cpu.dx()) {
            Ok(a) => {
                cpu.set_ax(1);
                cpu.set_dx((a >> 16) as u16);
                cpu.set_bx(a as u16);
            }
            Err(e) => fail(cpu, e),
        },
        0x0D => match m.xms.unlock(cpu.dx()) {
            Ok(()) => okay(cpu),
            Err(e) => fail(cpu, e),
        },
        0x0E | 0x8E => match m.xms.block(cpu.dx()).cloned() {
            Ok(b) => {
                cpu.set_ax(1);
                cpu.set_bh(b.locks);
                if cpu.ah() == 0x8E {
                    cpu.set_cx(m.xms.free_handles() as u16);
                    cpu.regs[2] = b.kb;
                } else {
                    cpu.set_bl(m.xms.free_handles());
                    cpu.set_dx(b.kb.min(0xFFFF) as u16);
                }
            }
            Err(e) => fail(cpu, e),
        },
        0x0F | 0x8F => {
            let kb = if cpu.ah() == 0x8F {
                cpu.regs[3]
            } else {
                cpu.bx() as u32
            };
            match m.xms.realloc(cpu.dx(), kb) {
                Ok((from, to, n)) => {
                    if from != to {
                        let data = m.mem.ram()[from as usize..(from + n) as usize].to_vec();
                        m.mem.ram_mut()[to as usize..(to + n) as usize].copy_from_slice(&data);
                    }
                    okay(cpu)
                }
                Err(e) => fail(cpu, e),
            }
        }
        // No upper memory blocks: the largest available is 0 paragraphs.
        0x10 => {
            fail(cpu, 0xB1);
            cpu.set_dx(0);
        }
        0x11 | 0x12 => fail(cpu, 0xB2),
        _ => fail(cpu, 0x80),
    }
}

/// Function 0Bh: DS:SI points at {len: u32, src handle: u16, src off: u32,
/// dst handle: u16, dst off: u32}; handle 0 means a real-mode seg:off.
fn emb_move(cpu: &Cpu, m: &mut Machine) -> Result<(), XmsError> {
    let (ds, si) = (cpu.sregs[seg::DS], cpu.si());
    let rd32 = |m: &mut Machine, o: u16| {
        m.rd16(ds, si.wrapping_add(o)) as u32 | (m.rd16(ds, si.wrapping_add(o + 2)) as u32) << 16
    };
    let len = rd32(m, 0);
    let sh = m.rd16(ds, si.wrapping_add(4));
    let so = rd32(m, 6);
    let dh = m.rd16(ds, si.wrapping_add(10));
    let dof = rd32(m, 12);
    if len & 1 != 0 {
        return Err(0xA7);
    }
    let resolve =
        |m: &Machine, h: u16, off: u32, bad_h: u8, bad_off: u8| -> Result<u32, XmsError> {
            if h == 0 {
                return Ok(lin((off >> 16) as u16, off as u16));
            }
            let (base, size) = m.xms.extent(h).map_err(|_| bad_h)?;
            if off as u64 + len as u64 > size as u64 {
                return Err(if off > size { bad_off } else { 0xA7 });
            }
            Ok(base + off)
        };
    let src = resolve(m, sh, so, 0xA3, 0xA4)?;
    let dst = resolve(m, dh, dof, 0xA5, 0xA6)?;
    // Byte by byte through the bus, physical (A20 does not apply to EMBs but
    // the conventional side may be the VGA window). Overlap copies forward,
    // as HIMEM's REP MOVSW does.
    let phys = |h: u16, a: u32| if h == 0 { a } else { a | 0x8000_0000 };
    for i in 0..len {
        let s = phys(sh, src + i);
        let v = if s & 0x8000_0000 != 0 {
            m.mem.read8(s & 0x7FFF_FFFF)
        } else {
            m.read8(s)
        };
        let d = phys(dh, dst + i);
        if d & 0x8000_0000 != 0 {
            m.mem.write8(d & 0x7FFF_FFFF, v)
        } else {
            m.write8(d, v)
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_free_realloc() {
        let mut x = Xms::new();
        let (largest, total) = x.free_kb();
        assert_eq!(largest, 15296);
        assert_eq!(total, 15296);
        let a = x.alloc(100).unwrap();
        let b = x.alloc(200).unwrap();
        assert_eq!(x.extent(a).unwrap(), (XMS_BASE, 100 * 1024));
        assert_eq!(x.extent(b).unwrap().0, XMS_BASE + 100 * 1024);
        assert_eq!(x.lock(a), Ok(XMS_BASE));
        assert_eq!(x.free(a), Err(0xAB));
        x.unlock(a).unwrap();
        x.free(a).unwrap();
        assert_eq!(x.alloc(50).unwrap(), a);
        let (_, to, n) = x.realloc(a, 150).unwrap();
        assert_ne!(to, XMS_BASE);
        assert_eq!(n, 50 * 1024);
        assert_eq!(x.free(99), Err(0xA2));
        assert_eq!(x.alloc(1 << 20), Err(0xA0));
    }
}
