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
    /// Port accesses (reads and writes) made through this bus: the
    /// uncached path asks the bus for attention only after an instruction
    /// that made one (as the hot loop does for IO-class ops).
    pub io_ops: u64,
    /// Device code is live (L1 compiled blocks from a device window, see
    /// `EngineBus::code_device`): every store into a device window and every
    /// port write the bus says may change what such code reads is reported
    /// in `hits` as [`DEVICE_HIT`].
    pub dev_watch: bool,
}

/// The `hits` entry that stands for "a store or port write may have changed
/// device code": every device block is retired.
pub const DEVICE_HIT: u32 = u32::MAX;

impl<B: EngineBus> Tracked<B> {
    /// Wraps `bus` for one run.
    pub fn new(bus: &mut B, code: CodeBits) -> Tracked<B> {
        Tracked {
            bus: bus as *mut B,
            code,
            hits: Vec::new(),
            stores: 0,
            write_attention: false,
            io_ops: 0,
            dev_watch: false,
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

    /// With device code live: a store of `n` bytes at `addr` into a device
    /// window may change what that code reads.
    #[inline(always)]
    fn note_device(&mut self, addr: u32, n: u32) {
        if self.dev_watch {
            let first = self.inner_ref().phys(addr);
            let last = self.inner_ref().phys(addr.wrapping_add(n - 1));
            let dev = self.inner_ref().code_device(first, first.wrapping_add(1))
                || self.inner_ref().code_device(last, last.wrapping_add(1));
            if dev && self.hits.last() != Some(&DEVICE_HIT) {
                self.hits.push(DEVICE_HIT);
            }
        }
    }

    /// Performs what an instruction fetch does to the device byte at linear
    /// `addr` besides returning it (a device read's state change).
    #[inline]
    pub fn fetch_effect(&mut self, addr: u32) {
        let _ = self.inner().read8(addr);
    }

    /// `note` for the `n` bytes of one store (n = 2 or 4), in address
    /// order: one bitmap test when the bytes are physically contiguous and
    /// in one bitmap word (the common case), byte by byte otherwise.
    #[inline(always)]
    fn note_span(&mut self, addr: u32, n: u32) {
        let p = self.inner_ref().phys(addr);
        let last = addr.wrapping_add(n - 1);
        if self.inner_ref().phys(last) == p.wrapping_add(n - 1) && !self.code.any(p, n) {
            return;
        }
        for i in 0..n {
            self.note(addr.wrapping_add(i));
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
        self.note_device(addr, 1);
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
        self.note_span(addr, 2);
        self.note_device(addr, 2);
    }
    #[inline(always)]
    fn write32(&mut self, addr: u32, v: u32) {
        self.stores += 1;
        self.inner().write32(addr, v);
        self.note_span(addr, 4);
        self.note_device(addr, 4);
    }
    #[inline(always)]
    fn io_read(&mut self, port: u16, w: Width, now: u64) -> u32 {
        self.io_ops += 1;
        self.inner().io_read(port, w, now)
    }
    #[inline(always)]
    fn io_write(&mut self, port: u16, w: Width, v: u32, now: u64) {
        self.io_ops += 1;
        let mut attn = false;
        let mut dev = false;
        for i in 0..w.bytes() {
            let p = port.wrapping_add(i as u16);
            attn |= self
                .inner_ref()
                .port_write_attention(p, (v >> (8 * i)) as u8);
            dev |= self.dev_watch && self.inner_ref().port_changes_device_code(p);
        }
        self.write_attention |= attn;
        self.inner().io_write(port, w, v, now);
        if dev && self.hits.last() != Some(&DEVICE_HIT) {
            self.hits.push(DEVICE_HIT);
        }
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
    #[inline(always)]
    fn code_device(&self, start: u32, end: u32) -> bool {
        self.inner_ref().code_device(start, end)
    }
    fn peek8(&mut self, addr: u32) -> u8 {
        self.inner().peek8(addr)
    }
    fn port_changes_device_code(&self, port: u16) -> bool {
        self.inner_ref().port_changes_device_code(port)
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
    fn unlogged_generation(&self) -> Option<u64> {
        self.inner_ref().unlogged_generation()
    }
    fn interrupt_requested(&mut self) -> bool {
        self.inner().interrupt_requested()
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
    fn port_write_attention(&self, port: u16, byte: u8) -> bool {
        self.inner_ref().port_write_attention(port, byte)
    }
}
