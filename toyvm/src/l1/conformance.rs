//! L1 under the SingleStepTests runner (`toyvm conformance --engine l1`).
//!
//! Owns the conformance test bus as an [`EngineBus`] (flat RAM, no devices,
//! nothing to predict) and the per-test execution: one reused L1, flushed
//! before every test (each test loads new bytes at the same addresses), run
//! to the first HLT exactly as the L0 runner steps to it. It must not change
//! what is compared.

use super::{EngineExit, L1};
use crate::bus::{EngineBus, Width};
use crate::conformance::runner::TestBus;
use crate::cpu::Cpu;
use std::cell::RefCell;

impl EngineBus for TestBus {
    #[inline(always)]
    fn phys(&self, addr: u32) -> u32 {
        addr & 0xFF_FFFF
    }
    fn code_cacheable(&self, _start: u32, _end: u32) -> bool {
        true
    }
    fn mark_code(&mut self, _start: u32, _end: u32) {}
    fn clear_code_marks(&mut self) {}
    // Host writes happen only between tests, and every test starts on a
    // flushed cache.
    fn take_code_writes(&mut self, _out: &mut Vec<u32>) {}
    fn port_stable_until(&mut self, _port: u16, _w: Width, _mask: u32, _now: u64) -> Option<u64> {
        None
    }
    fn take_io_attention(&mut self) -> bool {
        false
    }
}

thread_local! {
    static ENGINE: RefCell<Option<L1<TestBus>>> = const { RefCell::new(None) };
}

/// Runs to the first HLT (at most 2000 dispatches) under L1; returns a
/// failure text or None, like the L0 runner's `execute`.
pub fn execute(cpu: &mut Cpu, bus: &mut TestBus) -> Option<String> {
    ENGINE.with(|e| {
        let mut e = e.borrow_mut();
        let l1 = e.get_or_insert_with(L1::new);
        l1.flush(bus);
        let stop_at = cpu.clock + 2000;
        loop {
            match l1.run(cpu, bus, stop_at) {
                EngineExit::Halt => return None,
                EngineExit::HostCall(n) => return Some(format!("unexpected host call {n:#06X}")),
                EngineExit::Stop(s) => return Some(format!("stopped: {s}")),
                EngineExit::Reached => return Some("no HLT within 2000 steps".into()),
                EngineExit::Attention => {}
            }
        }
    })
}
