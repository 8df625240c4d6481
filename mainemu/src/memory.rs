//! The guest's 4 GiB virtual address space: reservations, commits, page
//! protections and the code-page bitmap.
//!
//! Owns: which pages are free, reserved or committed, their protections (the
//! `PAGE_*` values of Win32), the allocation each page belongs to, the bytes of
//! committed pages (allocated on commit, so the space is sparse), the
//! semantics of VirtualAlloc / VirtualFree / VirtualProtect / VirtualQuery, and
//! the code-page bitmap: which pages hold compiled code, so that a guest store
//! to such a page is recorded for the code cache to retire what it overwrote.
//! It implements [`x86_cpu::bus::Bus`]: an access the protections refuse does
//! not happen (reads give 0, writes are dropped) and is recorded as a
//! [`Fault`] for the engine to turn into an access violation.
//!
//! It must not: know about PE files, processes or the Win32 API beyond the
//! memory calls' semantics; execute instructions; decide what a fault means to
//! the guest (SEH delivery is the engine's); own the code cache itself (it only
//! records stores to marked pages).

use x86_cpu::bus::{Access, Bus, MemFault, Width};

/// Page size (x86 small pages).
pub const PAGE_SIZE: u32 = 0x1000;
/// Reservations start on this boundary (Windows' allocation granularity).
pub const ALLOC_GRANULARITY: u32 = 0x1_0000;
const PAGES: usize = 1 << 20;

/// Win32 page protection values (`PAGE_*`).
pub mod prot {
    pub const NOACCESS: u32 = 0x01;
    pub const READONLY: u32 = 0x02;
    pub const READWRITE: u32 = 0x04;
    pub const WRITECOPY: u32 = 0x08;
    pub const EXECUTE: u32 = 0x10;
    pub const EXECUTE_READ: u32 = 0x20;
    pub const EXECUTE_READWRITE: u32 = 0x40;
    pub const EXECUTE_WRITECOPY: u32 = 0x80;
    pub const GUARD: u32 = 0x100;
    pub const NOCACHE: u32 = 0x200;
}

/// Win32 `MEM_*` allocation types and states.
pub mod mem {
    pub const COMMIT: u32 = 0x1000;
    pub const RESERVE: u32 = 0x2000;
    pub const DECOMMIT: u32 = 0x4000;
    pub const RELEASE: u32 = 0x8000;
    pub const FREE: u32 = 0x1_0000;
    pub const PRIVATE: u32 = 0x2_0000;
    pub const IMAGE: u32 = 0x100_0000;
}

/// Access rights derived from a protection value, one bit each.
const R: u8 = 1;
const W: u8 = 2;
const X: u8 = 4;

/// The access bits a valid `PAGE_*` value grants, or `None` when the value is
/// not one protection (zero, two base values, unknown bits). Write-copy is
/// modelled as plain write: nothing is shared between processes here.
fn access_of(p: u32) -> Option<u8> {
    if p & !(0xFF | prot::GUARD | prot::NOCACHE) != 0 {
        return None;
    }
    Some(match p & 0xFF {
        prot::NOACCESS => 0,
        prot::READONLY => R,
        prot::READWRITE | prot::WRITECOPY => R | W,
        prot::EXECUTE => X,
        prot::EXECUTE_READ => R | X,
        prot::EXECUTE_READWRITE | prot::EXECUTE_WRITECOPY => R | W | X,
        _ => return None,
    })
}

/// Why a memory call failed, with the Win32 error code it reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemError {
    /// The address range is not (entirely) what the call needs: not reserved,
    /// already reserved, crosses allocations (ERROR_INVALID_ADDRESS).
    InvalidAddress,
    /// A flag, size or protection value is invalid (ERROR_INVALID_PARAMETER).
    InvalidParameter,
    /// No free range of that size (ERROR_NOT_ENOUGH_MEMORY).
    NoMemory,
    /// Pages are not committed (ERROR_INVALID_ADDRESS for VirtualProtect).
    NotCommitted,
}

impl MemError {
    /// The Win32 `GetLastError` value for this failure.
    pub fn win32_code(self) -> u32 {
        match self {
            MemError::InvalidAddress | MemError::NotCommitted => 487,
            MemError::InvalidParameter => 87,
            MemError::NoMemory => 8,
        }
    }
}

impl std::fmt::Display for MemError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = match self {
            MemError::InvalidAddress => "invalid address",
            MemError::InvalidParameter => "invalid parameter",
            MemError::NoMemory => "not enough memory",
            MemError::NotCommitted => "pages not committed",
        };
        write!(f, "{s} (win32 error {})", self.win32_code())
    }
}

/// An access the protections refused (the CPU crate's record).
pub type Fault = MemFault;

/// What VirtualQuery reports (`MEMORY_BASIC_INFORMATION`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemInfo {
    pub base_address: u32,
    /// 0 for free memory.
    pub allocation_base: u32,
    pub allocation_protect: u32,
    pub region_size: u32,
    /// `mem::FREE`, `mem::RESERVE` or `mem::COMMIT`.
    pub state: u32,
    /// 0 unless committed.
    pub protect: u32,
    /// `mem::PRIVATE` or `mem::IMAGE`; 0 for free memory.
    pub kind: u32,
}

/// One reservation (VirtualAlloc with MEM_RESERVE, or a mapped image).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Allocation {
    size: u32,
    protect: u32,
    kind: u32,
}

/// Per-page state: which allocation, committed or not, protection.
#[derive(Clone, Copy, Debug, Default)]
struct PageState {
    /// `PAGE_*` when committed, 0 when only reserved or free.
    protect: u16,
    /// Derived access bits (R/W/X) of a committed page; 0 otherwise.
    access: u8,
}

/// A store to a page marked in the code-page bitmap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodeWrite {
    pub addr: u32,
    /// Bytes written; a whole page ([`PAGE_SIZE`]) when the page's bytes
    /// stopped being fetchable (decommitted, released, made unreadable).
    pub len: u32,
}

/// The guest address space.
pub struct Memory {
    /// Page contents, allocated on commit.
    data: Vec<Option<Box<[u8; PAGE_SIZE as usize]>>>,
    pages: Vec<PageState>,
    /// Reservations by base address.
    allocs: std::collections::BTreeMap<u32, Allocation>,
    /// One bit per page: the page holds compiled code.
    code: Vec<u64>,
    /// Stores to code pages since the code cache last drained them.
    code_writes: Vec<CodeWrite>,
    /// The first refused access since the engine last took it.
    fault: Option<Fault>,
    /// Where searches for a free range start (the null region below is never given out).
    search_floor: u32,
    /// Committed bytes (for reports).
    committed_pages: u32,
}

impl Default for Memory {
    fn default() -> Self {
        Memory::new()
    }
}

fn page_of(addr: u32) -> usize {
    (addr >> 12) as usize
}

/// Rounds `[addr, addr + size)` out to whole pages; `None` if it wraps past 4 GiB.
fn page_span(addr: u32, size: u32) -> Option<(u32, u32)> {
    let start = addr & !(PAGE_SIZE - 1);
    let end = (addr as u64 + size as u64 + PAGE_SIZE as u64 - 1) & !(PAGE_SIZE as u64 - 1);
    if end > 1 << 32 || size == 0 {
        return None;
    }
    Some((start, (end - start as u64) as u32))
}

impl Memory {
    /// An empty address space: every page free.
    pub fn new() -> Memory {
        let mut data = Vec::with_capacity(PAGES);
        data.resize_with(PAGES, || None);
        Memory {
            data,
            pages: vec![PageState::default(); PAGES],
            allocs: Default::default(),
            code: vec![0; PAGES / 64],
            code_writes: Vec::new(),
            fault: None,
            search_floor: ALLOC_GRANULARITY,
            committed_pages: 0,
        }
    }

    /// The allocation holding `addr`, as (base, allocation).
    fn alloc_at(&self, addr: u32) -> Option<(u32, Allocation)> {
        let (&base, &a) = self.allocs.range(..=addr).next_back()?;
        ((addr as u64) < base as u64 + a.size as u64).then_some((base, a))
    }

    /// Whether `[start, start + size)` is entirely free.
    fn range_free(&self, start: u32, size: u32) -> bool {
        let end = start as u64 + size as u64;
        if let Some((b, a)) = self.allocs.range(..=start).next_back() {
            if *b as u64 + a.size as u64 > start as u64 {
                return false;
            }
        }
        self.allocs
            .range(start..)
            .next()
            .is_none_or(|(b, _)| *b as u64 >= end)
    }

    /// Finds the lowest free, granularity-aligned range of `size` bytes at or
    /// above the search floor (deterministic: bottom-up, as Windows does).
    fn find_free(&self, size: u32) -> Option<u32> {
        let mut cand = self.search_floor as u64;
        loop {
            if cand + size as u64 > 0x8000_0000 {
                return None; // user space is the low 2 GiB
            }
            // The first allocation that overlaps [cand, cand + size) moves us past it.
            let overlap = self
                .allocs
                .range(..(cand + size as u64) as u32)
                .next_back()
                .filter(|(b, a)| **b as u64 + a.size as u64 > cand);
            match overlap {
                None => return Some(cand as u32),
                Some((b, a)) => {
                    let next = *b as u64 + a.size as u64;
                    let g = ALLOC_GRANULARITY as u64;
                    cand = next.div_ceil(g) * g;
                }
            }
        }
    }

    /// Reserves a range: VirtualAlloc(addr, size, MEM_RESERVE, protect).
    /// `addr` is rounded down to the allocation granularity; `None` picks the
    /// lowest free range. Returns the base.
    pub fn reserve(
        &mut self,
        addr: Option<u32>,
        size: u32,
        protect: u32,
        kind: u32,
    ) -> Result<u32, MemError> {
        access_of(protect).ok_or(MemError::InvalidParameter)?;
        if size == 0 {
            return Err(MemError::InvalidParameter);
        }
        let base = match addr {
            Some(a) => {
                let base = a & !(ALLOC_GRANULARITY - 1);
                let (_, len) = page_span(base, (a - base).saturating_add(size))
                    .ok_or(MemError::InvalidParameter)?;
                if base == 0 || !self.range_free(base, len) {
                    return Err(MemError::InvalidAddress);
                }
                self.allocs.insert(
                    base,
                    Allocation {
                        size: len,
                        protect,
                        kind,
                    },
                );
                return Ok(base);
            }
            None => {
                let (_, len) = page_span(0, size).ok_or(MemError::InvalidParameter)?;
                let base = self.find_free(len).ok_or(MemError::NoMemory)?;
                self.allocs.insert(
                    base,
                    Allocation {
                        size: len,
                        protect,
                        kind,
                    },
                );
                base
            }
        };
        Ok(base)
    }

    /// Commits pages of one reservation: VirtualAlloc(addr, size, MEM_COMMIT,
    /// protect). New pages read as zero; pages already committed keep their
    /// bytes and take the new protection.
    pub fn commit(&mut self, addr: u32, size: u32, protect: u32) -> Result<u32, MemError> {
        let access = access_of(protect).ok_or(MemError::InvalidParameter)?;
        let (start, len) = page_span(addr, size).ok_or(MemError::InvalidParameter)?;
        let (base, a) = self.alloc_at(start).ok_or(MemError::InvalidAddress)?;
        if start as u64 + len as u64 > base as u64 + a.size as u64 {
            return Err(MemError::InvalidAddress);
        }
        for p in page_of(start)..page_of(start) + (len / PAGE_SIZE) as usize {
            if self.data[p].is_none() {
                self.data[p] = Some(Box::new([0; PAGE_SIZE as usize]));
                self.committed_pages += 1;
            }
            self.note_unfetchable(p, access);
            self.pages[p] = PageState {
                protect: protect as u16,
                access,
            };
        }
        Ok(start)
    }

    /// VirtualAlloc: `kind` is MEM_RESERVE, MEM_COMMIT or both.
    pub fn virtual_alloc(
        &mut self,
        addr: u32,
        size: u32,
        kind: u32,
        protect: u32,
    ) -> Result<u32, MemError> {
        let reserve = kind & mem::RESERVE != 0;
        let commit = kind & mem::COMMIT != 0;
        if kind & !(mem::RESERVE | mem::COMMIT) != 0 || !(reserve || commit) {
            return Err(MemError::InvalidParameter);
        }
        if reserve {
            let base = self.reserve((addr != 0).then_some(addr), size, protect, mem::PRIVATE)?;
            if commit {
                // The committed span starts at the given address (rounded to pages).
                let from = if addr != 0 { addr } else { base };
                if let Err(e) = self.commit(from, size, protect) {
                    self.allocs.remove(&base);
                    return Err(e);
                }
            }
            Ok(if addr != 0 {
                addr & !(PAGE_SIZE - 1)
            } else {
                base
            })
        } else if addr == 0 {
            // MEM_COMMIT alone with no address reserves and commits, as Windows does.
            self.virtual_alloc(0, size, mem::RESERVE | mem::COMMIT, protect)
        } else {
            self.commit(addr, size, protect)
        }
    }

    /// Decommits pages (VirtualFree MEM_DECOMMIT): they become reserved and
    /// their bytes are dropped. The range must lie in one allocation.
    pub fn decommit(&mut self, addr: u32, size: u32) -> Result<(), MemError> {
        let (base, a) = self.alloc_at(addr).ok_or(MemError::InvalidAddress)?;
        // Size 0 decommits from addr's page to the end of the allocation.
        let size = if size == 0 {
            base + a.size - (addr & !(PAGE_SIZE - 1))
        } else {
            size
        };
        let (start, len) = page_span(addr, size).ok_or(MemError::InvalidParameter)?;
        if start as u64 + len as u64 > base as u64 + a.size as u64 {
            return Err(MemError::InvalidAddress);
        }
        self.drop_pages(start, len);
        Ok(())
    }

    fn drop_pages(&mut self, start: u32, len: u32) {
        for p in page_of(start)..page_of(start) + (len / PAGE_SIZE) as usize {
            self.note_unfetchable(p, 0);
            if self.data[p].take().is_some() {
                self.committed_pages -= 1;
            }
            self.pages[p] = PageState::default();
            self.code[p / 64] &= !(1 << (p % 64));
        }
    }

    /// Releases a whole allocation (VirtualFree MEM_RELEASE): `addr` must be
    /// its base and `size` zero.
    pub fn release(&mut self, addr: u32, size: u32) -> Result<(), MemError> {
        if size != 0 {
            return Err(MemError::InvalidParameter);
        }
        let a = *self.allocs.get(&addr).ok_or(MemError::InvalidAddress)?;
        self.drop_pages(addr, a.size);
        self.allocs.remove(&addr);
        Ok(())
    }

    /// VirtualFree with MEM_DECOMMIT or MEM_RELEASE.
    pub fn virtual_free(&mut self, addr: u32, size: u32, kind: u32) -> Result<(), MemError> {
        match kind {
            mem::DECOMMIT => self.decommit(addr, size),
            mem::RELEASE => self.release(addr, size),
            _ => Err(MemError::InvalidParameter),
        }
    }

    /// VirtualProtect: changes the protection of committed pages of one
    /// allocation and returns the previous protection of the first page.
    pub fn protect(&mut self, addr: u32, size: u32, protect: u32) -> Result<u32, MemError> {
        let access = access_of(protect).ok_or(MemError::InvalidParameter)?;
        let (start, len) = page_span(addr, size).ok_or(MemError::InvalidParameter)?;
        let (base, a) = self.alloc_at(start).ok_or(MemError::InvalidAddress)?;
        if start as u64 + len as u64 > base as u64 + a.size as u64 {
            return Err(MemError::InvalidAddress);
        }
        let range = page_of(start)..page_of(start) + (len / PAGE_SIZE) as usize;
        if self.pages[range.clone()].iter().any(|p| p.protect == 0) {
            return Err(MemError::NotCommitted);
        }
        let old = self.pages[range.start].protect as u32;
        for p in range {
            self.note_unfetchable(p, access);
            self.pages[p] = PageState {
                protect: protect as u16,
                access,
            };
        }
        Ok(old)
    }

    /// VirtualQuery: the run of pages from `addr`'s page that share state and
    /// protection (within one allocation, or one free gap).
    pub fn query(&self, addr: u32) -> MemInfo {
        let start = addr & !(PAGE_SIZE - 1);
        match self.alloc_at(start) {
            None => {
                // A free gap up to the next allocation (or the end of the space).
                let end = self
                    .allocs
                    .range(start..)
                    .next()
                    .map_or(1u64 << 32, |(b, _)| *b as u64);
                MemInfo {
                    base_address: start,
                    allocation_base: 0,
                    allocation_protect: 0,
                    region_size: (end - start as u64).min(u32::MAX as u64 & !0xFFF) as u32,
                    state: mem::FREE,
                    protect: prot::NOACCESS,
                    kind: 0,
                }
            }
            Some((base, a)) => {
                let first = self.pages[page_of(start)].protect;
                let end_page = page_of(base) + (a.size / PAGE_SIZE) as usize;
                let mut p = page_of(start);
                while p < end_page && self.pages[p].protect == first {
                    p += 1;
                }
                MemInfo {
                    base_address: start,
                    allocation_base: base,
                    allocation_protect: a.protect,
                    region_size: ((p - page_of(start)) as u32) * PAGE_SIZE,
                    state: if first != 0 {
                        mem::COMMIT
                    } else {
                        mem::RESERVE
                    },
                    protect: first as u32,
                    kind: a.kind,
                }
            }
        }
    }

    /// A hash of every committed page (address, protection, bytes), for
    /// tests that compare two runs' address spaces (the arms' end states).
    pub fn content_hash(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for (p, page) in self.data.iter().enumerate() {
            if let Some(bytes) = page {
                (p, self.pages[p].protect).hash(&mut h);
                bytes[..].hash(&mut h);
            }
        }
        h.finish()
    }

    /// Number of committed pages.
    pub fn committed_pages(&self) -> u32 {
        self.committed_pages
    }

    fn note_fault(&mut self, addr: u32, write: bool) {
        if self.fault.is_none() {
            self.fault = Some(MemFault {
                addr,
                access: if write { Access::Write } else { Access::Read },
            });
        }
    }

    /// The first byte of `[addr, addr + len)` a store may not write.
    fn first_unwritable(&self, addr: u32, len: u32) -> Option<u32> {
        let mut a = addr as u64;
        let end = addr as u64 + len as u64;
        while a < end {
            let p = ((a >> 12) & 0xF_FFFF) as usize;
            if self.pages[p].access & W == 0 || self.data[p].is_none() {
                return Some(a as u32);
            }
            a = (a & !0xFFF) + PAGE_SIZE as u64;
        }
        None
    }

    /// A multi-byte store, all or nothing (the Bus contract).
    fn write_wide(&mut self, addr: u32, bytes: &[u8]) {
        if self.fault.is_some() {
            return;
        }
        if let Some(bad) = self.first_unwritable(addr, bytes.len() as u32) {
            self.note_fault(bad, true);
            return;
        }
        for (k, &b) in bytes.iter().enumerate() {
            self.write8(addr.wrapping_add(k as u32), b);
        }
    }

    /// Records a whole-page code write when page `p` holds compiled code and
    /// its new access bits `access` no longer let an instruction fetch read
    /// it: a fetch there faults now, so no cached instruction may run from it.
    fn note_unfetchable(&mut self, p: usize, access: u8) {
        if access & R == 0 && self.code[p / 64] & (1 << (p % 64)) != 0 {
            self.code_writes.push(CodeWrite {
                addr: (p as u32) << 12,
                len: PAGE_SIZE,
            });
        }
    }

    /// The 15 bytes an instruction fetch at `addr` reads (flat code: no
    /// wrap), or `None` if one of them is not readable, in which case the
    /// fetch would record a fault (nothing is recorded here).
    pub fn fetch_window(&self, addr: u32) -> Option<[u8; 15]> {
        let mut out = [0u8; 15];
        if addr > u32::MAX - 15 {
            return None;
        }
        let mut a = addr;
        let mut done = 0;
        while done < out.len() {
            let p = page_of(a);
            if self.pages[p].access & R == 0 {
                return None;
            }
            let page = self.data[p].as_ref()?;
            let off = (a & (PAGE_SIZE - 1)) as usize;
            let n = (PAGE_SIZE as usize - off).min(out.len() - done);
            out[done..done + n].copy_from_slice(&page[off..off + n]);
            done += n;
            a = a.wrapping_add(n as u32);
        }
        Some(out)
    }

    /// Whether every byte of `[addr, addr + len)` is readable (committed,
    /// not PAGE_NOACCESS): a read there records no fault.
    pub fn can_read(&self, addr: u32, len: u32) -> bool {
        let mut a = addr as u64;
        let end = addr as u64 + len as u64;
        while a < end {
            let p = ((a >> 12) & 0xF_FFFF) as usize;
            if self.pages[p].access & R == 0 || self.data[p].is_none() {
                return false;
            }
            a = (a & !0xFFF) + PAGE_SIZE as u64;
        }
        true
    }

    /// Whether every byte of `[addr, addr + len)` is writable: a store
    /// there records no fault.
    pub fn can_write(&self, addr: u32, len: u32) -> bool {
        self.first_unwritable(addr, len).is_none()
    }

    /// Appends the readable bytes from `addr` on, at most `max`, stopping at
    /// the first byte an instruction fetch could not read (the µop tier's
    /// line bytes).
    pub fn read_code(&self, addr: u32, max: u32, out: &mut Vec<u8>) {
        let mut a = addr as u64;
        let end = (addr as u64 + max as u64).min(1 << 32);
        while a < end {
            let p = (a >> 12) as usize;
            let Some(page) = self.data[p]
                .as_ref()
                .filter(|_| self.pages[p].access & R != 0)
            else {
                return;
            };
            let off = (a & 0xFFF) as usize;
            let n = ((PAGE_SIZE as u64 - off as u64).min(end - a)) as usize;
            out.extend_from_slice(&page[off..off + n]);
            a += n as u64;
        }
    }

    /// Whether stores to code pages were recorded since the last take (the
    /// code cache's per-instruction check: one load).
    #[inline(always)]
    pub fn has_code_writes(&self) -> bool {
        !self.code_writes.is_empty()
    }

    /// Whether a refused access or a store to a code page was recorded and
    /// not yet taken (the code cache's one look after an op that may
    /// access memory).
    #[inline(always)]
    pub fn attention(&self) -> bool {
        self.fault.is_some() | !self.code_writes.is_empty()
    }

    /// Marks the pages of `[addr, addr + len)` as holding compiled code.
    pub fn mark_code(&mut self, addr: u32, len: u32) {
        if let Some((start, n)) = page_span(addr, len.max(1)) {
            for p in page_of(start)..page_of(start) + (n / PAGE_SIZE) as usize {
                self.code[p / 64] |= 1 << (p % 64);
            }
        }
    }

    /// Clears the code mark of one page (the cache retired all its blocks).
    pub fn unmark_code_page(&mut self, addr: u32) {
        let p = page_of(addr);
        self.code[p / 64] &= !(1 << (p % 64));
    }

    /// Whether the page holding `addr` is marked as code.
    #[inline]
    pub fn is_code(&self, addr: u32) -> bool {
        let p = page_of(addr);
        self.code[p / 64] & (1 << (p % 64)) != 0
    }

    /// Takes the stores to code pages recorded since the last call, in order.
    pub fn take_code_writes(&mut self) -> Vec<CodeWrite> {
        std::mem::take(&mut self.code_writes)
    }

    /// Host-side read that ignores protections (loader, API implementations
    /// reading guest buffers they were given). `None` if a page is not committed.
    pub fn peek(&self, addr: u32, out: &mut [u8]) -> Option<()> {
        let mut a = addr;
        let mut done = 0;
        while done < out.len() {
            let page = self.data[page_of(a)].as_ref()?;
            let off = (a & (PAGE_SIZE - 1)) as usize;
            let n = (PAGE_SIZE as usize - off).min(out.len() - done);
            out[done..done + n].copy_from_slice(&page[off..off + n]);
            done += n;
            a = a.wrapping_add(n as u32);
        }
        Some(())
    }

    /// Host-side write that ignores protections (the loader filling read-only
    /// sections, API implementations). Stores to code pages are recorded as
    /// guest stores are. `None` (and nothing written) if a page is not committed.
    pub fn poke(&mut self, addr: u32, bytes: &[u8]) -> Option<()> {
        // Check first so a failed poke writes nothing.
        let mut a = addr as u64;
        let end = addr as u64 + bytes.len() as u64;
        if end > 1 << 32 {
            return None;
        }
        while a < end {
            self.data[(a >> 12) as usize].as_ref()?;
            a = (a & !0xFFF) + PAGE_SIZE as u64;
        }
        let mut a = addr;
        let mut done = 0;
        while done < bytes.len() {
            let off = (a & (PAGE_SIZE - 1)) as usize;
            let n = (PAGE_SIZE as usize - off).min(bytes.len() - done);
            if self.is_code(a) {
                self.code_writes.push(CodeWrite {
                    addr: a,
                    len: n as u32,
                });
            }
            let page = self.data[page_of(a)].as_mut().expect("checked above");
            page[off..off + n].copy_from_slice(&bytes[done..done + n]);
            done += n;
            a = a.wrapping_add(n as u32);
        }
        Some(())
    }

    /// Host-side little-endian dword read (`None` if not committed).
    pub fn peek_u32(&self, addr: u32) -> Option<u32> {
        let mut b = [0; 4];
        self.peek(addr, &mut b)?;
        Some(u32::from_le_bytes(b))
    }

    /// Host-side little-endian dword write.
    pub fn poke_u32(&mut self, addr: u32, v: u32) -> Option<()> {
        self.poke(addr, &v.to_le_bytes())
    }

    /// Reads a NUL-terminated byte string of at most `max` bytes.
    pub fn peek_cstr(&self, addr: u32, max: usize) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        let mut b = [0u8; 1];
        for i in 0..max {
            self.peek(addr.wrapping_add(i as u32), &mut b)?;
            if b[0] == 0 {
                return Some(out);
            }
            out.push(b[0]);
        }
        Some(out)
    }

    /// Reads a NUL-terminated UTF-16 string of at most `max` units.
    pub fn peek_wstr(&self, addr: u32, max: usize) -> Option<Vec<u16>> {
        let mut out = Vec::new();
        let mut b = [0u8; 2];
        for i in 0..max {
            self.peek(addr.wrapping_add(2 * i as u32), &mut b)?;
            let u = u16::from_le_bytes(b);
            if u == 0 {
                return Some(out);
            }
            out.push(u);
        }
        Some(out)
    }
}

impl Bus for Memory {
    #[inline]
    fn read8(&mut self, addr: u32) -> u8 {
        let p = page_of(addr);
        if self.pages[p].access & R != 0 {
            if let Some(page) = &self.data[p] {
                return page[(addr & 0xFFF) as usize];
            }
        }
        self.note_fault(addr, false);
        0
    }

    #[inline]
    fn write8(&mut self, addr: u32, v: u8) {
        if self.fault.is_some() {
            return; // a faulting instruction's later stores are dropped
        }
        let p = page_of(addr);
        if self.pages[p].access & W != 0 {
            if self.code[p / 64] & (1 << (p % 64)) != 0 {
                self.code_writes.push(CodeWrite { addr, len: 1 });
            }
            if let Some(page) = &mut self.data[p] {
                page[(addr & 0xFFF) as usize] = v;
                return;
            }
        }
        self.note_fault(addr, true);
    }

    #[inline]
    fn read32(&mut self, addr: u32) -> u32 {
        let off = (addr & 0xFFF) as usize;
        let p = page_of(addr);
        if off <= 0xFFC && self.pages[p].access & R != 0 {
            if let Some(page) = &self.data[p] {
                return u32::from_le_bytes(page[off..off + 4].try_into().unwrap());
            }
        }
        // Page-crossing or refused: byte by byte, so the fault names the first bad byte.
        self.read16(addr) as u32 | (self.read16(addr.wrapping_add(2)) as u32) << 16
    }

    #[inline]
    fn write32(&mut self, addr: u32, v: u32) {
        let off = (addr & 0xFFF) as usize;
        let p = page_of(addr);
        if off <= 0xFFC && self.pages[p].access & W != 0 && self.code[p / 64] & (1 << (p % 64)) == 0
        {
            if let Some(page) = &mut self.data[p] {
                page[off..off + 4].copy_from_slice(&v.to_le_bytes());
                return;
            }
        }
        self.write_wide(addr, &v.to_le_bytes());
    }

    #[inline]
    fn take_fault(&mut self) -> Option<MemFault> {
        self.fault.take()
    }

    #[inline]
    fn fault_pending(&self) -> bool {
        self.fault.is_some()
    }

    fn probe_write(&mut self, addr: u32, len: u32) {
        if let Some(bad) = self.first_unwritable(addr, len) {
            self.note_fault(bad, true);
        }
    }

    /// User mode has no port access: IN/OUT fault in the engine before they
    /// get here; a read that does arrive sees an open bus.
    fn io_read(&mut self, _port: u16, w: Width, _now: u64) -> u32 {
        match w {
            Width::W8 => 0xFF,
            Width::W16 => 0xFFFF,
            _ => 0xFFFF_FFFF,
        }
    }

    fn io_write(&mut self, _port: u16, _w: Width, _v: u32, _now: u64) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mb() -> Memory {
        Memory::new()
    }

    #[test]
    fn reserve_is_bottom_up_and_granular() {
        let mut m = mb();
        let a = m
            .virtual_alloc(0, 0x1234, mem::RESERVE, prot::READWRITE)
            .unwrap();
        let b = m
            .virtual_alloc(0, 0x1_0001, mem::RESERVE, prot::READWRITE)
            .unwrap();
        let c = m
            .virtual_alloc(0, 1, mem::RESERVE, prot::READWRITE)
            .unwrap();
        assert_eq!((a, b, c), (0x1_0000, 0x2_0000, 0x4_0000));
        // Release the middle one: the next fitting request takes the hole.
        m.virtual_free(b, 0, mem::RELEASE).unwrap();
        let d = m
            .virtual_alloc(0, 0x2000, mem::RESERVE, prot::READWRITE)
            .unwrap();
        assert_eq!(d, 0x2_0000);
        // A fixed address rounds down to 64K and must be free.
        assert_eq!(
            m.virtual_alloc(0x4_1000, 0x1000, mem::RESERVE, prot::READWRITE),
            Err(MemError::InvalidAddress)
        );
        assert_eq!(
            m.virtual_alloc(0x40_1234, 0x1000, mem::RESERVE, prot::READWRITE),
            Ok(0x40_1000)
        );
        assert_eq!(m.query(0x40_0000).allocation_base, 0x40_0000);
        assert_eq!(m.query(0x40_0000).region_size, 0x3000);
    }

    #[test]
    fn commit_protect_query_values() {
        let mut m = mb();
        let base = m
            .virtual_alloc(0, 0x10_000, mem::RESERVE, prot::NOACCESS)
            .unwrap();
        assert_eq!(m.committed_pages(), 0);
        m.virtual_alloc(base + 0x1800, 0x1000, mem::COMMIT, prot::READWRITE)
            .unwrap();
        // 0x1800..0x2800 touches pages 1 and 2.
        assert_eq!(m.committed_pages(), 2);
        let q = m.query(base);
        assert_eq!(
            q,
            MemInfo {
                base_address: base,
                allocation_base: base,
                allocation_protect: prot::NOACCESS,
                region_size: 0x1000,
                state: mem::RESERVE,
                protect: 0,
                kind: mem::PRIVATE
            }
        );
        let q = m.query(base + 0x1FFF);
        assert_eq!(
            (q.base_address, q.region_size, q.state, q.protect),
            (base + 0x1000, 0x2000, mem::COMMIT, prot::READWRITE)
        );
        assert_eq!(
            m.protect(base + 0x2000, 1, prot::READONLY),
            Ok(prot::READWRITE)
        );
        assert_eq!(m.query(base + 0x1000).region_size, 0x1000);
        assert_eq!(m.query(base + 0x2000).protect, prot::READONLY);
        // Protecting a reserved-only page fails.
        assert_eq!(
            m.protect(base, 0x2000, prot::READONLY),
            Err(MemError::NotCommitted)
        );
        // Invalid protections are refused.
        assert_eq!(
            m.protect(base + 0x1000, 1, 0x06),
            Err(MemError::InvalidParameter)
        );
        assert_eq!(
            m.protect(base + 0x1000, 1, 0),
            Err(MemError::InvalidParameter)
        );
        // Free memory after the allocation.
        let q = m.query(base + 0x10_000);
        assert_eq!(
            (q.state, q.allocation_base, q.region_size),
            (mem::FREE, 0, 0xFFFE_0000)
        );
    }

    #[test]
    fn bus_respects_protection_and_records_faults() {
        let mut m = mb();
        let base = m
            .virtual_alloc(0, 0x3000, mem::RESERVE | mem::COMMIT, prot::READWRITE)
            .unwrap();
        m.write32(base + 0xFFE, 0xDEAD_BEEF); // crosses pages 0 and 1
        assert_eq!(m.read32(base + 0xFFE), 0xDEAD_BEEF);
        assert_eq!(m.read8(base + 0x1000), 0xAD);
        assert_eq!(m.take_fault(), None);
        m.protect(base + 0x1000, 0x1000, prot::READONLY).unwrap();
        m.write8(base + 0x1001, 0x55);
        assert_eq!(
            m.take_fault(),
            Some(Fault {
                addr: base + 0x1001,
                access: Access::Write
            })
        );
        assert_eq!(m.read8(base + 0x1001), 0xDE, "refused store did not happen");
        m.protect(base + 0x1000, 0x1000, prot::NOACCESS).unwrap();
        assert_eq!(
            m.read16(base + 0xFFF),
            0x00BE,
            "readable low byte, refused high byte reads 0"
        );
        assert_eq!(
            m.take_fault(),
            Some(Fault {
                addr: base + 0x1000,
                access: Access::Read
            })
        );
        // Null page: never reserved.
        assert_eq!(m.read32(0), 0);
        assert_eq!(
            m.take_fault(),
            Some(Fault {
                addr: 0,
                access: Access::Read
            })
        );
        // Only the first fault is kept until taken.
        m.read8(8);
        m.read8(9);
        assert_eq!(
            m.take_fault(),
            Some(Fault {
                addr: 8,
                access: Access::Read
            })
        );
    }

    #[test]
    fn decommit_zeroes_and_release_frees() {
        let mut m = mb();
        let base = m
            .virtual_alloc(0, 0x2000, mem::RESERVE | mem::COMMIT, prot::READWRITE)
            .unwrap();
        m.write32(base + 0x1000, 7);
        m.virtual_free(base + 0x1000, 0x1000, mem::DECOMMIT)
            .unwrap();
        assert_eq!(m.committed_pages(), 1);
        assert_eq!(m.query(base + 0x1000).state, mem::RESERVE);
        m.commit(base + 0x1000, 0x1000, prot::READWRITE).unwrap();
        assert_eq!(m.read32(base + 0x1000), 0, "recommitted page is zero");
        assert_eq!(
            m.virtual_free(base + 0x1000, 0, mem::RELEASE),
            Err(MemError::InvalidAddress)
        );
        assert_eq!(
            m.virtual_free(base, 0x1000, mem::RELEASE),
            Err(MemError::InvalidParameter)
        );
        m.virtual_free(base, 0, mem::RELEASE).unwrap();
        assert_eq!(m.committed_pages(), 0);
        assert_eq!(m.query(base).state, mem::FREE);
        assert_eq!(
            m.commit(base, 0x1000, prot::READWRITE),
            Err(MemError::InvalidAddress)
        );
    }

    #[test]
    fn commit_cannot_cross_allocations() {
        let mut m = mb();
        let a = m
            .virtual_alloc(0, 0x1_0000, mem::RESERVE, prot::READWRITE)
            .unwrap();
        let b = m
            .virtual_alloc(0, 0x1_0000, mem::RESERVE, prot::READWRITE)
            .unwrap();
        assert_eq!(b, a + 0x1_0000);
        assert_eq!(
            m.commit(a + 0xF000, 0x2000, prot::READWRITE),
            Err(MemError::InvalidAddress)
        );
        assert_eq!(
            m.commit(0x7FFF_F000, 0x2000, prot::READWRITE),
            Err(MemError::InvalidAddress)
        );
        assert_eq!(
            m.commit(0xFFFF_F000, 0x2000, prot::READWRITE),
            Err(MemError::InvalidParameter)
        );
    }

    #[test]
    fn code_page_bitmap_reports_stores() {
        let mut m = mb();
        let base = m
            .virtual_alloc(
                0,
                0x3000,
                mem::RESERVE | mem::COMMIT,
                prot::EXECUTE_READWRITE,
            )
            .unwrap();
        m.mark_code(base + 0x1FF0, 0x20); // pages 1 and 2
        assert!(!m.is_code(base) && m.is_code(base + 0x1000) && m.is_code(base + 0x2FFF));
        m.write32(base + 0x10, 1); // not code
        m.write32(base + 0xFFE, 0x1122_3344); // two bytes on page 0, two on page 1
        m.write8(base + 0x2000, 9);
        m.poke(base + 0x1FFF, &[1, 2]).unwrap();
        assert_eq!(
            m.take_code_writes(),
            vec![
                CodeWrite {
                    addr: base + 0x1000,
                    len: 1
                },
                CodeWrite {
                    addr: base + 0x1001,
                    len: 1
                },
                CodeWrite {
                    addr: base + 0x2000,
                    len: 1
                },
                CodeWrite {
                    addr: base + 0x1FFF,
                    len: 1
                },
                CodeWrite {
                    addr: base + 0x2000,
                    len: 1
                },
            ]
        );
        assert!(m.take_code_writes().is_empty());
        m.unmark_code_page(base + 0x1000);
        m.write8(base + 0x1000, 1);
        assert!(m.take_code_writes().is_empty());
        // A code page made unreadable, or decommitted, is a whole-page code
        // write (a fetch there faults now); a readable protection is not.
        m.mark_code(base + 0x1000, 1);
        m.protect(base + 0x1000, 0x1000, prot::EXECUTE_READ)
            .unwrap();
        assert!(m.take_code_writes().is_empty());
        m.protect(base + 0x1000, 0x1000, prot::NOACCESS).unwrap();
        let page = |addr| CodeWrite {
            addr,
            len: PAGE_SIZE,
        };
        assert_eq!(m.take_code_writes(), vec![page(base + 0x1000)]);
        // Decommit clears the mark.
        m.decommit(base + 0x2000, 0x1000).unwrap();
        assert_eq!(m.take_code_writes(), vec![page(base + 0x2000)]);
        assert!(!m.is_code(base + 0x2000));
    }

    #[test]
    fn peek_poke_strings() {
        let mut m = mb();
        let base = m
            .virtual_alloc(0, 0x2000, mem::RESERVE | mem::COMMIT, prot::READONLY)
            .unwrap();
        m.poke(base + 0xFFC, b"hello\0").unwrap();
        assert_eq!(m.peek_cstr(base + 0xFFC, 64).unwrap(), b"hello");
        assert_eq!(m.peek_cstr(base + 0xFFC, 3).unwrap(), b"hel");
        assert_eq!(
            m.poke(base + 0x1FFF, &[0, 0]),
            None,
            "crosses into free memory"
        );
        assert_eq!(m.peek_u32(base + 0x1FFE), None);
        m.poke(base + 0x100, &[b'h', 0, b'i', 0, 0, 0]).unwrap();
        assert_eq!(
            m.peek_wstr(base + 0x100, 8).unwrap(),
            vec![b'h' as u16, b'i' as u16]
        );
    }
}
