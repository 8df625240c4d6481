//! What toyvm's caching engines (L1, the µop arms) need from the machine bus.
//!
//! The CPU-facing [`Bus`] trait lives in `x86-cpu` (shared by toyvm and
//! mainemu); this module re-exports it and adds [`EngineBus`], the questions
//! an engine that caches decoded code asks the DOS machine. It must not hold
//! instruction semantics.

pub use x86_cpu::bus::{Bus, Width};

/// What an execution engine that caches decoded code needs from the bus,
/// beyond [`Bus`]: where code may be cached, host-side writes into it, the
/// A20 mapping, port predictions for spin folds, and when a port access
/// needs the session.
///
/// An engine only ever *asks*: every answer must be a pure function of the
/// bus state (no wall time), so two runs ask the same questions and get the
/// same answers. A bus that cannot predict something answers conservatively
/// (`false`, `None`, "attention"), which costs speed, never exactness.
pub trait EngineBus: Bus {
    /// The physical byte a CPU address names (the A20 gate applied). Code
    /// bits and code writes are physical addresses.
    #[inline(always)]
    fn phys(&self, addr: u32) -> u32 {
        addr
    }

    /// Whether physical bytes `[start, end)` may back cached code: plain RAM
    /// or ROM whose reads have no side effects (not a device window).
    fn code_cacheable(&self, start: u32, end: u32) -> bool;

    /// Whether physical bytes `[start, end)` lie in a device window whose
    /// code an engine may still cache, under these promises: a read's value
    /// is [`EngineBus::peek8`]'s (a pure function of device state); a
    /// read's only other effect is a state change that reading the *last*
    /// byte of a sequence reproduces (the VGA's latches: fetching 15 bytes
    /// leaves what reading the last of them leaves); and what reads return
    /// changes only through stores into such a window, port writes
    /// [`EngineBus::port_changes_device_code`] flags, or host code. The
    /// engine then replays the fetch's effect before each such instruction
    /// and drops that code on any of those changes. `false` (the default):
    /// no such promise, code there runs uncached.
    #[inline(always)]
    fn code_device(&self, _start: u32, _end: u32) -> bool {
        false
    }

    /// What a CPU read of `addr` returns, without its side effects (for
    /// compiling and verifying device code). Only called where
    /// `code_cacheable` or `code_device` holds.
    fn peek8(&mut self, addr: u32) -> u8 {
        self.read8(addr)
    }

    /// Whether a write to `port` may change what reads of a
    /// [`EngineBus::code_device`] window return (mapping or read-mode
    /// registers). `true` unless the bus knows better.
    fn port_changes_device_code(&self, _port: u16) -> bool {
        true
    }

    /// Declares that compiled code derives from physical bytes
    /// `[start, end)`: from now on, writes into them that do not go through
    /// the engine's own stores (host services, loaders, DMA, bulk copies) must
    /// be reported by [`EngineBus::take_code_writes`]. A bus may track at a
    /// coarser granularity and report more.
    fn mark_code(&mut self, start: u32, end: u32);

    /// `true` while an engine whose store monitor sees every guest store
    /// runs (L1's `Tracked`): writes through the bus need not be logged for
    /// [`EngineBus::take_code_writes`] then (the engine discards that part
    /// of the log anyway). `false` when it hands back. A bus may ignore it.
    fn monitor_stores(&mut self, _on: bool) {}

    /// Whether the session would deliver an interrupt at the next
    /// instruction boundary if IF were 1 and no shadow applied (a request
    /// is pending). `true` (the default) when the bus cannot tell: the
    /// engine then returns after every instruction that sets IF or opens a
    /// shadow, which is always exact.
    fn interrupt_requested(&mut self) -> bool {
        true
    }

    /// A generation that moves whenever memory may have been written
    /// without going through [`EngineBus::take_code_writes`]'s log (bulk
    /// copies, program loads, DMA, EMS maps). An engine that sees it
    /// unchanged across host code knows the log holds every write the host
    /// made into code. `None` (the default): the bus cannot tell, assume it
    /// moved.
    fn unlogged_generation(&self) -> Option<u64> {
        None
    }

    /// The engine dropped all its code: forget every mark.
    fn clear_code_marks(&mut self);

    /// Appends to `out` the physical addresses written inside marked code
    /// since the last call. `u32::MAX` means "anything may have changed"
    /// (e.g. the A20 gate moved): the engine flushes everything.
    fn take_code_writes(&mut self, out: &mut Vec<u32>);

    /// Spin-fold prediction for a port read at dispatch `now`: `Some(t)` if
    /// reading `port` (width `w`) at any dispatch in `[now, t)` returns the
    /// same value under `mask` and such reads are idempotent (reading k >= 1
    /// times leaves the devices as reading once, schedules nothing, raises
    /// nothing); `t` is the first dispatch where that may stop holding
    /// (`u64::MAX`: never). `None`: no such promise (reads have side
    /// effects, or the bus cannot tell).
    fn port_stable_until(&mut self, port: u16, w: Width, mask: u32, now: u64) -> Option<u64>;

    /// Whether a port access since the last call may have changed what the
    /// session decides between instructions (a PIC mask or EOI, a timer
    /// reprogrammed, an event scheduled by a read): the engine returns
    /// `Attention` right after the instruction that made it. Clears the flag.
    /// Writes are also judged one by one by [`EngineBus::port_write_attention`];
    /// a bus may leave them out here.
    fn take_io_attention(&mut self) -> bool;

    /// Whether writing `byte` to `port` may change what the session decides
    /// between instructions (interrupt state, event dates, the A20 gate).
    /// `false` only for writes that provably cannot (e.g. VGA registers, a
    /// PIT latch command).
    fn port_write_attention(&self, _port: u16, _byte: u8) -> bool {
        true
    }
}
