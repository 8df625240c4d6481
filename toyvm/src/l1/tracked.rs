//! The store monitor: the bus L1's cached handlers run against.
//!
//! [`Tracked`] forwards every access to the real bus and tests each stored
//! byte against L1's code bits (one bit per physical byte). A store into code
//! is remembered in `hits`, so the dispatch loop can retire the blocks built
//! from that byte before the next instruction runs. It owns the code bitmap
//! while a run is in progress (L1 moves it in and out), and it must not
//! decide anything: retiring blocks is `smc`'s job.
//!
//! Safety: `Tracked` holds a raw pointer to the bus because cached `Op`s are
//! typed by the bus they run on and cannot carry a borrow's lifetime. A
//! `Tracked` exists only on the stack of one `L1::run` call, built from the
//! `&mut B` that call received, and nothing else touches that bus while it
//! lives.

use super::smc::CodeBits;
use crate::bus::{Bus, EngineBus, Width};

/// The bus seen by L1's handlers: the real bus plus a store monitor.
pub struct Tracked<B> {
    bus: *mut B,
    /// L1's code bits (moved in for the duration of a run).
    pub code: CodeBits,
    /// Physical addresses of stores into code since the dispatch loop last
    /// looked.
    pub hits: Vec<u32>,
    /// Memory stores made through this bus (spin folds check a loop body
    /// stored nothing).
    pub stores: u64,
    /// A port write since the last look that may need the session.
    pub write_attention: bool,
}

impl<B: EngineBus> Tracked<B> {
    /// Wraps `bus` for one run.
    pub fn new(bus: &mut B, code: CodeBits) -> Tracked<B> {
        Tracked {
            bus: bus as *mut B,
            code,
            hits: Vec::new(),
            stores: 0,
            write_attention: false,
        }
    }

    /// The real bus.
    #[inline(always)]
    pub fn inner(&mut self) -> &mut B {
        // SAFETY: see the module header; `self.bus` came from a `&mut B` that
        // outlives `self` and is not used elsewhere while `self` lives.
        unsafe { &mut *self.bus }
    }

    #[inline(always)]
    fn inner_ref(&self) -> &B {
        // SAFETY: as for `inner`.
        unsafe { &*self.bus }
    }

    /// Unwraps, handing the code bits back.
    pub fn into_code(self) -> CodeBits {
        self.code
    }

    #[inline(always)]
    fn note(&mut self, addr: u32) {
        let p = self.inner_ref().phys(addr);
        if self.code.test(p) {
            self.hits.push(p);
        }
    }
}

impl<B: EngineBus> Bus for Tracked<B> {
    #[inline(always)]
    fn read8(&mut self, addr: u32) -> u8 {
        self.inner().read8(addr)
    }
    #[inline(always)]
    fn write8(&mut self, addr: u32, v: u8) {
        self.stores += 1;
        self.inner().write8(addr, v);
        self.note(addr);
    }
    #[inline(always)]
    fn read16(&mut self, addr: u32) -> u16 {
        self.inner().read16(addr)
    }
    #[inline(always)]
    fn read32(&mut self, addr: u32) -> u32 {
        self.inner().read32(addr)
    }
    #[inline(always)]
    fn write16(&mut self, addr: u32, v: u16) {
        self.stores += 1;
        self.inner().write16(addr, v);
        self.note(addr);
        self.note(addr.wrapping_add(1));
    }
    #[inline(always)]
    fn write32(&mut self, addr: u32, v: u32) {
        self.stores += 1;
        self.inner().write32(addr, v);
        for i in 0..4 {
            self.note(addr.wrapping_add(i));
        }
    }
    #[inline(always)]
    fn io_read(&mut self, port: u16, w: Width, now: u64) -> u32 {
        self.inner().io_read(port, w, now)
    }
    #[inline(always)]
    fn io_write(&mut self, port: u16, w: Width, v: u32, now: u64) {
        let mut attn = false;
        for i in 0..w.bytes() {
            attn |= self
                .inner_ref()
                .port_write_attention(port.wrapping_add(i as u16));
        }
        self.write_attention |= attn;
        self.inner().io_write(port, w, v, now)
    }
}

impl<B: EngineBus> EngineBus for Tracked<B> {
    #[inline(always)]
    fn phys(&self, addr: u32) -> u32 {
        self.inner_ref().phys(addr)
    }
    fn code_cacheable(&self, start: u32, end: u32) -> bool {
        self.inner_ref().code_cacheable(start, end)
    }
    fn mark_code(&mut self, start: u32, end: u32) {
        self.inner().mark_code(start, end)
    }
    fn clear_code_marks(&mut self) {
        self.inner().clear_code_marks()
    }
    fn take_code_writes(&mut self, out: &mut Vec<u32>) {
        self.inner().take_code_writes(out)
    }
    fn port_stable_until(&mut self, port: u16, w: Width, mask: u32, now: u64) -> Option<u64> {
        self.inner().port_stable_until(port, w, mask, now)
    }
    /// Port attention: writes judged one by one (`port_write_attention`),
    /// plus whatever the bus reports.
    fn take_io_attention(&mut self) -> bool {
        let w = std::mem::replace(&mut self.write_attention, false);
        let r = self.inner().take_io_attention();
        w || r
    }
    fn port_write_attention(&self, port: u16) -> bool {
        self.inner_ref().port_write_attention(port)
    }
}
