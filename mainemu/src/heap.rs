//! Guest heaps (HeapCreate/HeapAlloc/..., and the C runtime's malloc over the
//! process heap): a deterministic first-fit allocator whose bookkeeping lives
//! on the host, so a guest overrun cannot corrupt it and every run gives the
//! same addresses.
//!
//! Owns: block placement (8-byte granules, lowest address first), growth by
//! reserving and committing regions through [`crate::memory::Memory`],
//! coalescing on free, in-place growth on realloc when the next block is
//! free. It must not: know handles or API names (the DLL layer maps handles
//! to heaps), or read host randomness or time.

use crate::memory::{mem, prot, Memory};
use std::collections::BTreeMap;

const GRANULE: u32 = 8;
/// A heap grows by regions of at least this many bytes.
const REGION: u32 = 0x10_0000;

/// One heap.
#[derive(Clone, Debug, Default)]
pub struct Heap {
    /// Free blocks by address → size.
    free: BTreeMap<u32, u32>,
    /// Live blocks by address → (rounded size, requested size).
    used: BTreeMap<u32, (u32, u32)>,
    /// Regions reserved for this heap (base, size), for destruction.
    regions: Vec<(u32, u32)>,
}

fn round(n: u32) -> Option<u32> {
    n.max(1)
        .checked_add(GRANULE - 1)
        .map(|v| v & !(GRANULE - 1))
}

impl Heap {
    /// An empty heap (regions come on first allocation).
    pub fn new() -> Heap {
        Heap::default()
    }

    fn grow(&mut self, m: &mut Memory, need: u32) -> Option<()> {
        let size = need.checked_add(0xFFFF)? & !0xFFFF;
        let size = size.max(REGION);
        let base = m
            .virtual_alloc(0, size, mem::RESERVE | mem::COMMIT, prot::READWRITE)
            .ok()?;
        self.regions.push((base, size));
        self.insert_free(base, size);
        Some(())
    }

    fn insert_free(&mut self, mut addr: u32, mut size: u32) {
        // Merge with the following and the preceding free block.
        if let Some(&next) = self.free.get(&(addr + size)) {
            self.free.remove(&(addr + size));
            size += next;
        }
        if let Some((&pa, &ps)) = self.free.range(..addr).next_back() {
            if pa + ps == addr {
                self.free.remove(&pa);
                addr = pa;
                size += ps;
            }
        }
        self.free.insert(addr, size);
    }

    /// The block after `after` (0: the first) in address order, busy or
    /// free: (address, size: requested for a busy block, whole for a free
    /// one, busy), for HeapWalk.
    pub fn next_block(&self, after: u32) -> Option<(u32, u32, bool)> {
        let lo = if after == 0 { 0 } else { after + 1 };
        let u = self
            .used
            .range(lo..)
            .next()
            .map(|(&a, &(_, n))| (a, n, true));
        let f = self.free.range(lo..).next().map(|(&a, &n)| (a, n, false));
        match (u, f) {
            (Some(u), Some(f)) => Some(if u.0 < f.0 { u } else { f }),
            (u, f) => u.or(f),
        }
    }

    /// Allocates `n` bytes (zeroed when `zero`); `None` when out of memory.
    pub fn alloc(&mut self, m: &mut Memory, n: u32, zero: bool) -> Option<u32> {
        let r = round(n)?;
        let found = self
            .free
            .iter()
            .find(|(_, &s)| s >= r)
            .map(|(&a, &s)| (a, s));
        let (a, s) = match found {
            Some(f) => f,
            None => {
                self.grow(m, r)?;
                self.free
                    .iter()
                    .find(|(_, &s)| s >= r)
                    .map(|(&a, &s)| (a, s))?
            }
        };
        self.free.remove(&a);
        if s > r {
            self.free.insert(a + r, s - r);
        }
        self.used.insert(a, (r, n));
        if zero {
            m.poke(a, &vec![0; r as usize]);
        }
        Some(a)
    }

    /// Frees a block; false if `addr` is not a live block of this heap.
    pub fn free(&mut self, addr: u32) -> bool {
        match self.used.remove(&addr) {
            Some((r, _)) => {
                self.insert_free(addr, r);
                true
            }
            None => false,
        }
    }

    /// The requested size of a live block.
    pub fn size(&self, addr: u32) -> Option<u32> {
        self.used.get(&addr).map(|&(_, n)| n)
    }

    /// Resizes a block, in place when it shrinks or the next block is free
    /// and large enough, else by moving it. `None` (block unchanged) on failure.
    pub fn realloc(&mut self, m: &mut Memory, addr: u32, n: u32, zero: bool) -> Option<u32> {
        let (r_old, n_old) = *self.used.get(&addr)?;
        let r = round(n)?;
        let next_free = self.free.get(&(addr + r_old)).copied().unwrap_or(0);
        if r <= r_old || r <= r_old + next_free {
            if r > r_old {
                self.free.remove(&(addr + r_old));
                let rest = r_old + next_free - r;
                if rest > 0 {
                    self.free.insert(addr + r, rest);
                }
            } else if r < r_old {
                self.insert_free(addr + r, r_old - r);
            }
            self.used.insert(addr, (r, n));
            if zero && n > n_old {
                m.poke(addr + n_old, &vec![0; (n - n_old) as usize]);
            }
            return Some(addr);
        }
        let new = self.alloc(m, n, zero)?;
        let mut buf = vec![0; n_old.min(n) as usize];
        m.peek(addr, &mut buf)?;
        m.poke(new, &buf)?;
        self.free(addr);
        Some(new)
    }

    /// Live blocks and their total requested bytes (for reports and tests).
    pub fn stats(&self) -> (usize, u64) {
        (
            self.used.len(),
            self.used.values().map(|&(_, n)| n as u64).sum(),
        )
    }

    /// Releases every region (HeapDestroy).
    pub fn destroy(self, m: &mut Memory) {
        for (base, _) in self.regions {
            m.release(base, 0).ok();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_fit_coalesce_realloc() {
        let mut m = Memory::new();
        let mut h = Heap::new();
        let a = h.alloc(&mut m, 10, false).unwrap();
        let b = h.alloc(&mut m, 1, false).unwrap();
        let c = h.alloc(&mut m, 24, false).unwrap();
        assert_eq!((a, b, c), (0x1_0000, 0x1_0010, 0x1_0018));
        assert!(h.free(b));
        assert!(!h.free(b), "double free refused");
        // A request that fits the hole takes it (lowest address first).
        assert_eq!(h.alloc(&mut m, 8, false), Some(0x1_0010));
        assert!(h.free(0x1_0010));
        // Growing a in place into the freed b.
        m.poke(a, b"0123456789").unwrap();
        assert_eq!(h.realloc(&mut m, a, 24, false), Some(a));
        // Growing c past the next free block's size moves nothing (tail is free).
        assert_eq!(h.realloc(&mut m, c, 4000, true), Some(c));
        // Growing a now needs a move; contents follow.
        let a2 = h.realloc(&mut m, a, 100, false).unwrap();
        assert_eq!(a2, c + 4000);
        assert_eq!(m.peek_cstr(a2, 10).unwrap(), b"0123456789");
        assert_eq!(h.size(a2), Some(100));
        assert_eq!(h.stats(), (2, 4100));
        // Zeroing on a reused block.
        h.free(a2);
        m.poke(c, &[0xAA; 16]).unwrap();
        h.free(c);
        let z = h.alloc(&mut m, 16, true).unwrap();
        assert_eq!(z, 0x1_0000);
        let mut buf = [1u8; 16];
        m.peek(z, &mut buf).unwrap();
        assert_eq!(buf, [0; 16]);
        // Larger than a region: a new region sized to fit, adjacent to the
        // first, so the free tail of the first and the new region coalesce.
        let big = h.alloc(&mut m, 0x20_0001, false).unwrap();
        assert_eq!(big, 0x1_0010);
        h.destroy(&mut m);
        assert_eq!(m.committed_pages(), 0);
    }
}
