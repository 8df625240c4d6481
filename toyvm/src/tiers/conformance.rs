//! SingleStepTests vectors through naive µop programs on E1
//! (`toyvm conformance DIR --engine e1`).
//!
//! Owns the conformance test bus as a `MachineRuntime` (no page view: the
//! bus remembers every byte written so the runner can clear it, so every
//! access takes the checked path, byte by byte) and the per-test drive: the
//! straight line at CS:IP is lowered and run on E1; what it hands back
//! (an instruction the op set cannot express, a refused access, the HLT
//! that ends the test) runs on L0, exactly one instruction, as the L0
//! runner steps it. The pass criterion is the runner's. It must not change
//! what is compared.

use crate::bus::{Bus, Width};
use crate::conformance::runner::TestBus;
use crate::cpu::l0::{self, StepOutcome};
use crate::cpu::{seg, Cpu};
use shared_ir::e1::{self, E1Arena, E1State};
use shared_ir::exit::ExitReason;
use shared_ir::lower::lower_line_opts;
use shared_ir::machine::{
    FastMem, MachineRuntime, RealMode16, Refused, ServiceCtx, ServiceOutcome, StoreOutcome,
};
use std::cell::RefCell;

/// The test bus for one µop program: checked accesses only; a store into
/// the program's own bytes is a store into code.
struct TestRuntime<'a> {
    bus: &'a mut TestBus,
    code: (u32, u32),
}

impl MachineRuntime for TestRuntime<'_> {
    const PAGE_SHIFT: u32 = 12;
    fn fast_mem(&mut self) -> FastMem<'_> {
        FastMem {
            ram: &mut [],
            pages: &[],
        }
    }
    fn read(&mut self, lin: u32, w: Width, _now: u64) -> Result<u32, Refused> {
        let mut v = 0;
        for i in 0..w.bytes() {
            v |= (self.bus.read8(lin.wrapping_add(i)) as u32) << (8 * i);
        }
        Ok(v)
    }
    fn write(&mut self, lin: u32, w: Width, v: u32, _now: u64) -> StoreOutcome {
        let mut hit = false;
        for i in 0..w.bytes() {
            let a = lin.wrapping_add(i) & 0xFF_FFFF;
            self.bus.write8(a, (v >> (8 * i)) as u8);
            hit |= self.code.0 <= a && a < self.code.1;
        }
        if hit {
            StoreOutcome::HitCode
        } else {
            StoreOutcome::Done
        }
    }
    fn port_in(&mut self, port: u16, w: Width, now: u64) -> Result<u32, Refused> {
        Ok(self.bus.io_read(port, w, now) & w.mask())
    }
    fn port_out(&mut self, port: u16, w: Width, v: u32, now: u64) -> ServiceOutcome {
        self.bus.io_write(port, w, v, now);
        ServiceOutcome::Continue
    }
    fn service(&mut self, _id: u16, _ctx: ServiceCtx<'_>, _now: u64) -> ServiceOutcome {
        ServiceOutcome::Refused
    }
}

/// Tests that ran at least one dispatch inside a µop program, and all
/// tests run (for the CLI's extra line).
#[derive(Clone, Copy, Debug, Default)]
pub struct E1Stats {
    pub tests: u64,
    pub tests_in_uops: u64,
    pub uop_dispatches: u64,
    pub l0_dispatches: u64,
}

thread_local! {
    static ARENA: RefCell<Option<E1Arena>> = const { RefCell::new(None) };
    static STATS: RefCell<E1Stats> = RefCell::new(E1Stats::default());
}

/// Counts so far on this thread.
pub fn stats() -> E1Stats {
    STATS.with(|s| *s.borrow())
}

fn l0_step(cpu: &mut Cpu, bus: &mut TestBus, st: &mut E1Stats) -> Option<Option<String>> {
    let before = cpu.clock;
    let out = l0::step(cpu, bus);
    st.l0_dispatches += cpu.clock - before;
    match out {
        StepOutcome::Ok => None,
        StepOutcome::Halt => Some(None),
        StepOutcome::HostCall(n) => Some(Some(format!("unexpected host call {n:#06X}"))),
        StepOutcome::Stop(s) => Some(Some(format!("stopped: {s}"))),
    }
}

/// Runs to the first HLT (at most 2000 dispatches) with every instruction
/// the naive lowering expresses on E1; returns a failure text or None, like
/// the L0 runner's `execute`.
pub fn execute(cpu: &mut Cpu, bus: &mut TestBus) -> Option<String> {
    ARENA.with(|a| {
        let mut a = a.borrow_mut();
        let arena = a.get_or_insert_with(|| E1Arena::new(1 << 16));
        let mut st = E1Stats {
            tests: 1,
            ..E1Stats::default()
        };
        let out = drive(arena, cpu, bus, &mut st);
        STATS.with(|s| {
            let mut s = s.borrow_mut();
            s.tests += 1;
            s.tests_in_uops += (st.uop_dispatches > 0) as u64;
            s.uop_dispatches += st.uop_dispatches;
            s.l0_dispatches += st.l0_dispatches;
        });
        out
    })
}

fn drive(
    arena: &mut E1Arena,
    cpu: &mut Cpu,
    bus: &mut TestBus,
    st: &mut E1Stats,
) -> Option<String> {
    let stop_at = cpu.clock + 2000;
    loop {
        if cpu.clock >= stop_at {
            return Some("no HLT within 2000 steps".into());
        }
        if cpu.flags.tf() || cpu.shadow {
            if let Some(r) = l0_step(cpu, bus, st) {
                return r;
            }
            continue;
        }
        // The straight line at CS:IP, from the bytes as they are now (every
        // program is built fresh: a test may rewrite its own code).
        let (cs_base, ip) = (cpu.sbase[seg::CS], cpu.eip);
        let n = (0x1_0000 - (ip & 0xFFFF)).min(16 * 15);
        let bytes: Vec<u8> = (0..n)
            .map(|i| bus.read8(cs_base.wrapping_add(ip + i)))
            .collect();
        let opts = super::only::lower_opts(cpu);
        let line = lower_line_opts(&RealMode16, opts, cs_base, ip, &bytes, 16);
        let Some(p) = line.program else {
            if let Some(r) = l0_step(cpu, bus, st) {
                return r;
            }
            continue;
        };
        arena.clear();
        let code = p.code[0];
        let id = match arena.install(&p) {
            Ok(id) => id,
            Err(e) => return Some(format!("E1 install: {e}")),
        };
        {
            let v = arena.vregs_mut();
            v[..8].copy_from_slice(&cpu.regs);
            for s in 0..6 {
                v[8 + s] = cpu.sregs[s] as u32;
                v[14 + s] = cpu.sbase[s];
            }
        }
        let mut es = E1State {
            flags: cpu.flags,
            clock: cpu.clock,
        };
        let before = cpu.clock;
        let ex = {
            let mut rt = TestRuntime { bus, code };
            e1::run(arena, &mut rt, &mut es, id, stop_at)
        };
        {
            let v = arena.vregs();
            cpu.regs.copy_from_slice(&v[..8]);
            for s in 0..6 {
                cpu.sregs[s] = v[8 + s] as u16;
                cpu.sbase[s] = v[14 + s];
            }
        }
        cpu.flags = es.flags;
        cpu.clock = es.clock;
        st.uop_dispatches += cpu.clock - before;
        let Some(ex) = ex else {
            return Some("E1: program vanished".into());
        };
        cpu.eip = ex.exit.ip;
        match ex.exit.reason {
            ExitReason::Budget | ExitReason::Fallback if cpu.clock < stop_at => {
                if let Some(r) = l0_step(cpu, bus, st) {
                    return r;
                }
            }
            ExitReason::Invalid | ExitReason::Divert => {
                return Some("E1 met an invalid word".into())
            }
            // An STI opened the shadow: the next instruction runs on L0.
            ExitReason::Shadow => cpu.shadow = true,
            _ => {}
        }
    }
}
