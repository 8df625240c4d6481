//! Arm counters reach the report: µops per instruction, fallbacks,
//! handbacks, and build time split from execution time (timings only).

mod common;
use common::*;
use oracle::report::Status;
use oracle::sweep::{self, CorpusSel, Quiet, SweepOptions};
use toyvm::cpu::{Cpu, StepOutcome};
use toyvm::machine::Machine;
use toyvm::session::{Engine, L0};

/// L0 that reports counters as a µop tier would: 3 µops per dispatch on
/// 3/4 of the dispatches, a fallback per 4, a handback per run call, and a
/// fixed 1 ms of "build" time.
struct FakeUop {
    inner: L0,
    dispatches: u64,
    calls: u64,
}

impl Engine for FakeUop {
    fn name(&self) -> &'static str {
        "fake-uop"
    }
    fn run(&mut self, cpu: &mut Cpu, m: &mut Machine, limit: u64) -> StepOutcome {
        let t = cpu.clock;
        let o = self.inner.run(cpu, m, limit);
        self.dispatches += cpu.clock - t;
        self.calls += 1;
        o
    }
    fn counters(&self) -> Option<serde_json::Value> {
        let fb = self.dispatches / 4;
        Some(serde_json::json!({
            "uops": 3 * (self.dispatches - fb),
            "uop_insns": self.dispatches - fb,
            "fallbacks": fb,
            "handbacks": self.calls,
            "build_ns": 1_000_000,
            "e1": { "links": 7, "name": "not a number" },
        }))
    }
    fn describe_site(&self, cpu: &Cpu) -> Option<String> {
        Some(format!(
            "fake program at {:04X}:{:04X}",
            cpu.sregs[1], cpu.eip
        ))
    }
}

fn fake() -> Box<dyn Engine> {
    Box::new(FakeUop {
        inner: L0 {
            trace_from: u64::MAX,
        },
        dispatches: 0,
        calls: 0,
    })
}

#[test]
fn counters_and_build_time_reach_the_report() {
    oracle::arms::register("fake-uop", fake);
    let mut o = SweepOptions::new(CorpusSel::Builtin, arms("l0,fake-uop"));
    o.filter = Some("alu16".into());
    let r = sweep::run(&o, &Quiet).unwrap();
    assert_eq!(
        r.summary.line(),
        "sweep: 1 programs, 1 exact, 0 diverged, 0 failed"
    );
    let p = &r.programs[0];
    assert_eq!(p.status, Status::Exact);
    let a = &p.arms[1];
    assert_eq!(a.last.dispatches, 400_608);
    assert_eq!(a.uops_per_insn, Some(3.0));
    assert_eq!(a.fallbacks, Some(400_608 / 4));
    assert!(a.handbacks.unwrap() > 0);
    // Host times never sit with the deterministic counters.
    assert!(!a.counters.contains_key("build_ns"));
    assert_eq!(a.counters["uop_insns"], 400_608 - 400_608 / 4);
    // Nested objects are flattened; non-numbers left out.
    assert_eq!(a.counters["e1.links"], 7);
    assert!(!a.counters.contains_key("e1.name"));
    let t = a.timing.as_ref().unwrap();
    assert_eq!(t.build_ns, Some(1_000_000));
    assert_eq!(t.exec_ns, Some(t.cpu_ns.saturating_sub(1_000_000)));
    assert!(t.ratio.unwrap() > 0.0);
    // The reference reports nothing.
    assert_eq!(p.arms[0].uops_per_insn, None);
    assert!(p.arms[0].counters.is_empty());

    // A registered arm is a base for test arms, and its sites show up.
    let spec = corpus_spec("alu16", 1_000_000);
    let res = oracle::diff::diff(
        &spec,
        &arms("fake-uop,fake-uop+skip@5000"),
        &oracle::compare::Options::default(),
        2,
        &mut |_| {},
    )
    .unwrap();
    let d = res.divergences[0].1.as_ref().unwrap();
    assert_eq!(d.dispatch, 5000);
    let site = d.sites[0].as_deref().unwrap();
    assert!(site.starts_with("fake program at "), "{site}");
    assert!(d.sites[1].as_deref().unwrap().contains("skip"));
}
