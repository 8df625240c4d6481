//! L1 as the DOS session's engine (`--arm l1`, the default).
//!
//! Owns only the adapter between [`L1`] over the DOS [`Machine`] and the
//! session's `Engine` trait: exits map to the session's step outcomes and
//! the counters go into the run report. It must not add behaviour: what L1
//! does on the machine is `L1::run` and `machine::engine_bus`.

use super::L1;
use crate::cpu::l0::StepOutcome;
use crate::cpu::Cpu;
use crate::machine::Machine;
use crate::session::Engine;

/// A fresh L1 engine for the DOS machine.
pub fn engine() -> L1<Machine> {
    L1::new()
}

impl Engine for L1<Machine> {
    fn name(&self) -> &'static str {
        "l1"
    }
    fn run(&mut self, cpu: &mut Cpu, m: &mut Machine, limit: u64) -> StepOutcome {
        L1::run(self, cpu, m, limit).into_step()
    }
    fn counters(&self) -> Option<serde_json::Value> {
        serde_json::to_value(&self.counters).ok()
    }
    fn describe_site(&self, cpu: &Cpu) -> Option<String> {
        Some(self.describe(cpu.sbase[crate::cpu::seg::CS], cpu.eip))
    }
}
