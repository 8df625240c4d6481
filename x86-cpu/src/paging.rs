//! Paging: the 386/486 two-level translation of 4 KiB pages, as a bus
//! adapter that sits between the CPU (linear addresses) and a physical bus.
//!
//! Owns the page walk (page directory at CR3, page tables), the protection
//! rules (U/S and R/W of both levels combined; supervisor writes ignore R/W
//! unless CR0.WP), the accessed and dirty bits, the #PF error code, and a
//! host-side translation cache. The cache is invisible to the guest: it is
//! dropped whenever CR0 or CR3 is written, on INVLPG, and whenever a store
//! reaches a physical page a cached translation was read from, so a program
//! sees exactly what a walk on every access would give (the model has no
//! stale-TLB behaviour to reproduce, and every arm sees the same memory).
//! It must not know about segments or privilege rules beyond the CPL it is
//! told ([`Mmu::Cpl`]) and the implicit supervisor accesses
//! ([`Mmu::System`]).
//!
//! A refused access follows the bus fault contract (`bus`): the first fault
//! is recorded, reads return 0, later writes are dropped, wide accesses are
//! all or nothing across pages, and the CPU takes the fault after the
//! handler. [`Bus::fault_code`] then gives the error code bits.

use crate::bus::{Access, Bus, MemFault, Mmu, Width};
use crate::{cr0, Cpu};

/// Translation cache size (direct-mapped by linear page number).
const ENTRIES: usize = 256;
/// Physical pages whose use as page-directory or page-table pages the cache
/// can track (the first 16 MiB); translations through tables above that are
/// never cached.
const TRACKED_PAGES: u32 = 4096;

/// A valid tag (linear page numbers have 20 bits).
const VALID: u32 = 1 << 31;
/// Permission bits of a cached translation.
const USER_READ: u8 = 1;
const USER_WRITE: u8 = 2;
const SUPER_WRITE: u8 = 4;
/// The PTE's dirty bit is already set: writes need no walk.
const DIRTY: u8 = 8;

/// Page-table entry bits.
pub const PTE_P: u32 = 1;
pub const PTE_W: u32 = 2;
pub const PTE_U: u32 = 4;
pub const PTE_A: u32 = 0x20;
pub const PTE_D: u32 = 0x40;

/// #PF error code bits.
pub const PF_PROT: u16 = 1;
pub const PF_WRITE: u16 = 2;
pub const PF_USER: u16 = 4;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
struct Entry {
    tag: u32,
    phys: u32,
    perm: u8,
}

/// The translation cache and its page-table tracking. Empty (no allocation)
/// until paging is first used, so a real-mode CPU carries nothing.
#[derive(Clone, Debug, Default)]
pub struct Tlb {
    entries: Vec<Entry>,
    /// One bit per tracked physical page: a cached translation was read from it.
    tables: Vec<u64>,
    live: bool,
    /// Page walks done (a performance figure, never guest-visible).
    pub walks: u64,
    /// Times the cache was dropped.
    pub flushes: u64,
}

impl Tlb {
    fn ensure(&mut self) {
        if self.entries.is_empty() {
            self.entries = vec![Entry::default(); ENTRIES];
            self.tables = vec![0; TRACKED_PAGES as usize / 64];
        }
    }

    /// Drops every cached translation.
    pub fn flush(&mut self) {
        if self.live {
            self.entries.iter_mut().for_each(|e| *e = Entry::default());
            self.tables.iter_mut().for_each(|w| *w = 0);
            self.live = false;
            self.flushes += 1;
        }
    }

    #[inline(always)]
    fn is_table(&self, phys: u32) -> bool {
        let p = phys >> 12;
        self.live && p < TRACKED_PAGES && self.tables[(p >> 6) as usize] & (1 << (p & 63)) != 0
    }

    fn mark_table(&mut self, page: u32) {
        self.tables[(page >> 6) as usize] |= 1 << (page & 63);
    }
}

/// A bus seen through the paging unit. Built per step from the CPU's state
/// (`pm`), told about changes in the middle of an instruction through
/// [`Bus::mmu`]. It owns the bus handle it wraps (`&mut B` for L0's step,
/// a lifetime-free handle for a threaded tier that keeps decoded ops typed
/// by this bus) and, for its lifetime, the CPU's translation cache.
pub struct Paged<B> {
    pub bus: B,
    pub tlb: Tlb,
    cr3: u32,
    on: bool,
    wp: bool,
    cpl3: bool,
    system: bool,
    fault: Option<MemFault>,
    code: u16,
}

impl<B: Bus> Paged<B> {
    /// An adapter for the CPU's current paging state (CR0.PG, CR0.WP, CR3,
    /// CPL).
    pub fn new(bus: B, tlb: Tlb, cpu: &Cpu) -> Paged<B> {
        let mut p = Paged {
            bus,
            tlb,
            cr3: 0,
            on: false,
            wp: false,
            cpl3: false,
            system: false,
            fault: None,
            code: 0,
        };
        p.sync(cpu);
        p
    }

    /// Re-reads the CPU's paging state, as [`Paged::new`] would build it
    /// between two instructions (a tier that keeps one adapter across
    /// instructions calls this after any instruction that may have changed
    /// CR0, CR3 or the CPL).
    #[inline]
    pub fn sync(&mut self, cpu: &Cpu) {
        self.on = cpu.paging();
        if self.on {
            self.tlb.ensure();
        }
        self.cr3 = cpu.cr3;
        self.wp = cpu.cr0 & cr0::WP != 0;
        self.cpl3 = cpu.cpl == 3;
        self.system = false;
        self.fault = None;
    }

    /// The bus handle and the translation cache back.
    pub fn into_parts(self) -> (B, Tlb) {
        (self.bus, self.tlb)
    }

    /// Whether addresses are translated (CR0.PG with PE).
    #[inline(always)]
    pub fn translating(&self) -> bool {
        self.on
    }

    /// What an instruction fetch of the byte at linear `lin` does to the
    /// translation (a TLB hit, or a walk setting the accessed bits): the
    /// physical address, or `None` when the fetch would fault (nothing is
    /// recorded then; a failed walk changes nothing).
    pub fn fetch_translate(&mut self, lin: u32) -> Option<u32> {
        if self.fault.is_some() {
            return None;
        }
        let p = self.translate(lin, false);
        if p.is_none() {
            self.fault = None;
        }
        p
    }

    /// Whether the translation of `lin` is held in the cache now: then any
    /// change to it (a store to its tables, CR0/CR3 writes, INVLPG) drops
    /// the cache and moves [`Paged::generation`].
    pub fn caches(&self, lin: u32) -> bool {
        if !self.on {
            return false;
        }
        let lpn = lin >> 12;
        self.tlb
            .entries
            .get(lpn as usize & (ENTRIES - 1))
            .map(|e| e.tag)
            == Some(lpn | VALID)
    }

    /// Moves whenever the translation cache is dropped.
    #[inline(always)]
    pub fn generation(&self) -> u64 {
        self.tlb.flushes
    }

    #[inline(always)]
    fn user(&self) -> bool {
        self.cpl3 && !self.system
    }

    /// The physical address of `lin` for a read or a write, or `None` with
    /// the fault recorded.
    #[inline(always)]
    fn translate(&mut self, lin: u32, write: bool) -> Option<u32> {
        if !self.on {
            return Some(lin);
        }
        if self.fault.is_some() {
            return None;
        }
        let lpn = lin >> 12;
        let e = self.tlb.entries[lpn as usize & (ENTRIES - 1)];
        if e.tag == lpn | VALID {
            let need = match (self.user(), write) {
                (true, false) => USER_READ,
                (true, true) => USER_WRITE | DIRTY,
                (false, false) => 0,
                (false, true) => SUPER_WRITE | DIRTY,
            };
            if e.perm & need == need {
                return Some(e.phys | (lin & 0xFFF));
            }
        }
        self.walk(lin, write)
    }

    /// Walks the tables for `lin`, checks the access, sets the accessed and
    /// dirty bits, and caches the translation when its tables are trackable.
    #[cold]
    fn walk(&mut self, lin: u32, write: bool) -> Option<u32> {
        self.tlb.walks += 1;
        let user = self.user();
        let pde_a = (self.cr3 & !0xFFF) | ((lin >> 22) << 2);
        let pde = self.bus.read32(pde_a);
        if pde & PTE_P == 0 {
            return self.fail(lin, write, user, false);
        }
        let pte_a = (pde & !0xFFF) | (((lin >> 12) & 0x3FF) << 2);
        let pte = self.bus.read32(pte_a);
        if pte & PTE_P == 0 {
            return self.fail(lin, write, user, false);
        }
        let u = pde & pte & PTE_U != 0;
        let w = pde & pte & PTE_W != 0;
        let allowed = match (user, write) {
            (true, false) => u,
            (true, true) => u && w,
            (false, false) => true,
            (false, true) => w || !self.wp,
        };
        if !allowed {
            return self.fail(lin, write, user, true);
        }
        if pde & PTE_A == 0 {
            self.bus.write32(pde_a, pde | PTE_A);
        }
        let npte = pte | PTE_A | if write { PTE_D } else { 0 };
        if npte != pte {
            self.bus.write32(pte_a, npte);
        }
        let phys = pte & !0xFFF;
        let (dir_page, table_page) = (pde_a >> 12, pte_a >> 12);
        if dir_page < TRACKED_PAGES && table_page < TRACKED_PAGES {
            let mut perm = 0;
            if u {
                perm |= USER_READ;
                if w {
                    perm |= USER_WRITE;
                }
            }
            if w || !self.wp {
                perm |= SUPER_WRITE;
            }
            if npte & PTE_D != 0 {
                perm |= DIRTY;
            }
            let lpn = lin >> 12;
            self.tlb.entries[lpn as usize & (ENTRIES - 1)] = Entry {
                tag: lpn | VALID,
                phys,
                perm,
            };
            self.tlb.mark_table(dir_page);
            self.tlb.mark_table(table_page);
            self.tlb.live = true;
        }
        Some(phys | (lin & 0xFFF))
    }

    fn fail(&mut self, lin: u32, write: bool, user: bool, present: bool) -> Option<u32> {
        self.fault = Some(MemFault {
            addr: lin,
            access: if write { Access::Write } else { Access::Read },
        });
        self.code = present as u16 * PF_PROT | write as u16 * PF_WRITE | user as u16 * PF_USER;
        None
    }

    /// A store reached physical byte `p`: if a cached translation came from
    /// that page, drop the cache (the guest edited its page tables).
    #[inline(always)]
    fn stored(&mut self, p: u32) {
        if self.tlb.is_table(p) {
            self.tlb.flush();
        }
    }

    /// Translates every page of `[lin, lin + len)` for writing; true when all
    /// of them can be written.
    fn writable(&mut self, lin: u32, len: u32) -> bool {
        if !self.on || len == 0 {
            return self.fault.is_none();
        }
        let last = lin.wrapping_add(len - 1);
        let mut page = lin & !0xFFF;
        loop {
            let a = if page == lin & !0xFFF { lin } else { page };
            if self.translate(a, true).is_none() {
                return false;
            }
            if page == last & !0xFFF {
                return true;
            }
            page = page.wrapping_add(0x1000);
        }
    }

    #[inline(always)]
    fn same_page(lin: u32, n: u32) -> bool {
        (lin & 0xFFF) + n <= 0x1000
    }
}

impl<B: Bus> Bus for Paged<B> {
    #[inline(always)]
    fn read8(&mut self, addr: u32) -> u8 {
        match self.translate(addr, false) {
            Some(p) => self.bus.read8(p),
            None => 0,
        }
    }

    #[inline(always)]
    fn write8(&mut self, addr: u32, v: u8) {
        if let Some(p) = self.translate(addr, true) {
            self.bus.write8(p, v);
            self.stored(p);
        }
    }

    #[inline]
    fn read16(&mut self, addr: u32) -> u16 {
        if !self.on || Self::same_page(addr, 2) {
            return match self.translate(addr, false) {
                Some(p) => self.bus.read16(p),
                None => 0,
            };
        }
        self.read8(addr) as u16 | (self.read8(addr.wrapping_add(1)) as u16) << 8
    }

    #[inline]
    fn read32(&mut self, addr: u32) -> u32 {
        if !self.on || Self::same_page(addr, 4) {
            return match self.translate(addr, false) {
                Some(p) => self.bus.read32(p),
                None => 0,
            };
        }
        let mut v = 0u32;
        for i in 0..4 {
            v |= (self.read8(addr.wrapping_add(i)) as u32) << (8 * i);
        }
        v
    }

    #[inline]
    fn write16(&mut self, addr: u32, v: u16) {
        if !self.on || Self::same_page(addr, 2) {
            if let Some(p) = self.translate(addr, true) {
                self.bus.write16(p, v);
                self.stored(p);
            }
            return;
        }
        if self.writable(addr, 2) {
            self.write8(addr, v as u8);
            self.write8(addr.wrapping_add(1), (v >> 8) as u8);
        }
    }

    #[inline]
    fn write32(&mut self, addr: u32, v: u32) {
        if !self.on || Self::same_page(addr, 4) {
            if let Some(p) = self.translate(addr, true) {
                self.bus.write32(p, v);
                self.stored(p);
            }
            return;
        }
        if self.writable(addr, 4) {
            for i in 0..4 {
                self.write8(addr.wrapping_add(i), (v >> (8 * i)) as u8);
            }
        }
    }

    fn take_fault(&mut self) -> Option<MemFault> {
        match self.fault.take() {
            Some(f) => Some(f),
            None => self.bus.take_fault(),
        }
    }

    fn fault_pending(&self) -> bool {
        self.fault.is_some() || self.bus.fault_pending()
    }

    fn probe_write(&mut self, addr: u32, len: u32) {
        self.writable(addr, len);
    }

    fn mmu(&mut self, c: Mmu) {
        match c {
            Mmu::Cpl(cpl) => self.cpl3 = cpl == 3,
            Mmu::System(on) => self.system = on,
            Mmu::Reload { cr0: c0, cr3 } => {
                self.tlb.flush();
                self.on = c0 & cr0::PG != 0 && c0 & cr0::PE != 0;
                if self.on {
                    self.tlb.ensure();
                }
                self.wp = c0 & cr0::WP != 0;
                self.cr3 = cr3;
            }
            // One page or all: dropping everything is as exact and simpler.
            Mmu::Invlpg(_) => self.tlb.flush(),
        }
    }

    fn fault_code(&self) -> u16 {
        self.code
    }

    #[inline]
    fn io_read(&mut self, port: u16, w: Width, now: u64) -> u32 {
        self.bus.io_read(port, w, now)
    }

    #[inline]
    fn io_write(&mut self, port: u16, w: Width, v: u32, now: u64) {
        self.bus.io_write(port, w, v, now)
    }
}
