//! Which physical bytes the µop arms' code came from, and the page view E1's
//! fast path reads and writes through.
//!
//! Owns three views of one fact ("this byte backs a µop program or an
//! L1-side fallback block"): a per-byte reference count (programs overlap:
//! a jump into the middle of a line starts another line over the same
//! bytes), the per-byte [`CodeBits`] L1's store monitor tests (moved into a
//! `Tracked` bus while a fallback runs), and the [`FastMem`] page view, where
//! a granule holding any code byte loses `PAGE_WRITE` so every E1 store into
//! it takes the checked path (which tests the byte). It also rebuilds the
//! view when the A20 gate moves. It must not decide what is invalidated or
//! run anything.

use crate::bus::EngineBus;
use crate::l1::smc::{CodeBits, CODE_LIMIT};
use crate::machine::memory::{EMS_FRAME_END, RAM_SIZE, UMB_START, VGA_END, VGA_START};
use shared_ir::machine::{PAGE_READ, PAGE_WRITE};

/// Granule of the page view, in address bits (16 bytes: a store next to code
/// takes the checked path only within 16 bytes of it).
pub const GRANULE_SHIFT: u32 = 4;
/// Linear addresses a real-mode access can reach (FFFF:FFFF + 3).
pub const LIN_LIMIT: u32 = 0x11_0000;

const A20_BIT: u32 = 1 << 20;

/// Code bytes and the page view.
pub struct CodeMap {
    /// Programs and blocks built from each physical byte (saturating).
    refs: Vec<u16>,
    /// `refs > 0`, as L1's store monitor wants it.
    pub bits: CodeBits,
    /// Code bytes per physical granule.
    gran: Vec<u16>,
    /// The page view: per linear granule, the host offset of its first byte
    /// in RAM with `PAGE_READ` / `PAGE_WRITE`.
    pub pages: Vec<u32>,
    a20: bool,
}

impl Default for CodeMap {
    fn default() -> Self {
        CodeMap::new(false)
    }
}

/// Whether physical byte `a` is plain RAM a store may change directly.
fn writable(a: u32) -> bool {
    a < VGA_START
        || (UMB_START..EMS_FRAME_END).contains(&a)
        || (a >= 0x10_0000 && (a as usize) < RAM_SIZE)
}

impl CodeMap {
    pub fn new(a20: bool) -> CodeMap {
        let mut c = CodeMap {
            refs: vec![0; CODE_LIMIT as usize],
            bits: CodeBits::new(),
            gran: vec![0; (CODE_LIMIT >> GRANULE_SHIFT) as usize],
            pages: vec![0; (LIN_LIMIT >> GRANULE_SHIFT) as usize],
            a20,
        };
        c.rebuild_pages();
        c
    }

    /// The physical byte a linear address names under this map's A20 state.
    #[inline(always)]
    pub fn phys(&self, lin: u32) -> u32 {
        if self.a20 {
            lin
        } else {
            lin & !A20_BIT
        }
    }

    pub fn a20(&self) -> bool {
        self.a20
    }

    /// Whether a physical byte may back cached code (not the VGA window,
    /// whose reads have side effects; below the code limit).
    pub fn cacheable(p: u32) -> bool {
        p < CODE_LIMIT && !(VGA_START..VGA_END).contains(&p)
    }

    fn entry(&self, lin_granule: u32) -> u32 {
        let lin = lin_granule << GRANULE_SHIFT;
        let p = self.phys(lin);
        if (VGA_START..VGA_END).contains(&p) {
            return 0;
        }
        let mut e = p | PAGE_READ;
        let g = (p >> GRANULE_SHIFT) as usize;
        if writable(p) && self.gran.get(g).is_none_or(|&n| n == 0) {
            e |= PAGE_WRITE;
        }
        e
    }

    fn rebuild_pages(&mut self) {
        for g in 0..self.pages.len() as u32 {
            self.pages[g as usize] = self.entry(g);
        }
    }

    /// Forgets all code and rebuilds the view for the A20 state `a20`.
    pub fn reset(&mut self, a20: bool) {
        self.refs.iter_mut().for_each(|r| *r = 0);
        self.bits.clear_all();
        self.gran.iter_mut().for_each(|g| *g = 0);
        self.a20 = a20;
        self.rebuild_pages();
    }

    /// Recomputes the view entries that show physical granule `g`.
    fn refresh(&mut self, g: u32) {
        let lin = g << GRANULE_SHIFT;
        if let Some(e) = self.pages.get(g as usize).map(|_| self.entry(g)) {
            // Identity when A20 is open or below the wrap.
            if self.phys(lin) == lin {
                self.pages[g as usize] = e;
            }
        }
        // With A20 closed, linear 1 MiB + x shows physical x.
        if !self.a20 && lin < 0x1_0000 {
            let alias = (lin | A20_BIT) >> GRANULE_SHIFT;
            if (alias as usize) < self.pages.len() {
                self.pages[alias as usize] = self.entry(alias);
            }
        }
    }

    /// Keeps the code (physical bytes) and rebuilds the view for the A20
    /// state `a20` (the caller has dropped what was fetched past 1 MiB).
    pub fn set_a20(&mut self, a20: bool) {
        self.a20 = a20;
        self.rebuild_pages();
    }

    /// Counts one more program/block built from physical `[lo, hi)`.
    pub fn add(&mut self, lo: u32, hi: u32) {
        for p in lo..hi.min(CODE_LIMIT) {
            let r = &mut self.refs[p as usize];
            *r = r.saturating_add(1);
            if *r == 1 {
                self.bits.set(p);
                let g = p >> GRANULE_SHIFT;
                self.gran[g as usize] += 1;
                if self.gran[g as usize] == 1 {
                    self.refresh(g);
                }
            }
        }
    }

    /// Counts one program/block fewer built from physical `[lo, hi)`.
    pub fn remove(&mut self, lo: u32, hi: u32) {
        for p in lo..hi.min(CODE_LIMIT) {
            let r = &mut self.refs[p as usize];
            if *r == 0 {
                continue;
            }
            *r -= 1;
            if *r == 0 {
                self.bits.clear(p);
                let g = p >> GRANULE_SHIFT;
                self.gran[g as usize] -= 1;
                if self.gran[g as usize] == 0 {
                    self.refresh(g);
                }
            }
        }
    }

    /// Whether physical byte `p` backs code.
    #[inline(always)]
    pub fn test(&self, p: u32) -> bool {
        self.bits.test(p)
    }

    /// Marks on `bus` every page a code byte of this map lies in (after
    /// another engine sharing the bus cleared all marks).
    pub fn mark_pages<B: EngineBus>(&self, bus: &mut B) {
        const PAGE_GRANULES: usize = 1 << (12 - GRANULE_SHIFT);
        for (i, page) in self.gran.chunks(PAGE_GRANULES).enumerate() {
            if page.iter().any(|&g| g > 0) {
                let lo = (i as u32) << 12;
                bus.mark_code(lo, lo + (1 << 12));
            }
        }
    }
}

/// Physical ranges of the linear bytes `[lin, lin + n)` under `map`'s A20
/// state (split where the A20 wrap breaks contiguity).
pub fn phys_ranges(map: &CodeMap, lin: u32, n: u32) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    for i in 0..n {
        let p = map.phys(lin.wrapping_add(i));
        match out.last_mut() {
            Some(last) if last.1 == p => last.1 = p + 1,
            _ => out.push((p, p + 1)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_granules_lose_write_and_get_it_back() {
        let mut c = CodeMap::new(false);
        let g = 0x1234u32 >> GRANULE_SHIFT;
        assert_ne!(c.pages[g as usize] & PAGE_WRITE, 0);
        c.add(0x1234, 0x1236);
        c.add(0x1235, 0x1237);
        assert!(c.test(0x1236) && !c.test(0x1237));
        assert_eq!(c.pages[g as usize] & PAGE_WRITE, 0);
        // The A20 alias of the granule too.
        let alias = (0x1234u32 | A20_BIT) >> GRANULE_SHIFT;
        assert_eq!(c.pages[alias as usize] & PAGE_WRITE, 0);
        assert_eq!(c.pages[alias as usize] & !0xF, 0x1230);
        c.remove(0x1234, 0x1236);
        assert!(c.test(0x1235) && !c.test(0x1234));
        c.remove(0x1235, 0x1237);
        assert!(!c.test(0x1235));
        assert_ne!(c.pages[g as usize] & PAGE_WRITE, 0);
        assert_ne!(c.pages[alias as usize] & PAGE_WRITE, 0);
        // VGA: neither; ROM: read only.
        assert_eq!(c.pages[(0xA0000 >> GRANULE_SHIFT) as usize], 0);
        assert_eq!(
            c.pages[(0xF0000 >> GRANULE_SHIFT) as usize] & (PAGE_READ | PAGE_WRITE),
            PAGE_READ
        );
    }
}
