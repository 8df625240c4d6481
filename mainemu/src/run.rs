//! Running a process: the engine loop over the shared CPU (`x86_cpu::user`),
//! thread scheduling on the guest clock, thunk service, exceptions, a
//! dispatch budget, and the run summary.
//!
//! Owns: the loop (pick the thread, run it with the arm's engine until a
//! thunk, an exception, the end of its quantum or the budget; service the
//! thunk or dispatch the exception), console output forwarding, how a run
//! ended, and the summary. The arm's engine is called in exactly one place,
//! [`exec`]. It must not hold instruction semantics (x86-cpu does), API
//! bodies (dll does) or exception layouts (seh does).

use crate::process::{Process, Service};
use crate::threads::State;
use x86_cpu::user::{self, Event, UserOutcome};
use x86_cpu::{Cpu, StopReason};

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Ending {
    Exit {
        code: u32,
    },
    Budget,
    /// A GUI program waits in GetMessage with no timer, no scripted input
    /// left and no other thread to run: the session is over (not a deadlock).
    Idle,
    Unimplemented {
        report: String,
    },
    Stop {
        report: String,
    },
}

impl std::fmt::Display for Ending {
    /// `exit 3`, `budget`, or the report (what tables and the oracle print).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ending::Exit { code } => write!(f, "exit {code}"),
            Ending::Budget => f.write_str("budget"),
            Ending::Idle => f.write_str("idle: no more input"),
            Ending::Unimplemented { report } | Ending::Stop { report } => f.write_str(report),
        }
    }
}

/// The summary of a run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Summary {
    /// The arm that ran (`l0`, `l1`).
    pub arm: &'static str,
    pub dispatches: u64,
    pub ending: Ending,
    pub api_calls: std::collections::BTreeMap<String, u64>,
    /// GetProcAddress lookups mainemu could not answer (`dll!name`): the
    /// program took its fallback path where Windows might not have.
    pub proc_misses: Vec<String>,
    /// L1's counters (blocks compiled, retired by stores, links, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l1: Option<crate::l1::Counters>,
    /// A µop arm's counters (the tier's census and the arm's steps).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uop: Option<std::collections::BTreeMap<String, u64>>,
}

/// Execution arms mainemu has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arm {
    /// The plain decode-and-execute interpreter.
    L0,
    /// The threaded tier: blocks decoded once, same dispatches (`l1`).
    L1,
    /// A µop arm (`only-<passes>`, see [`crate::uop`]): its name and pass set.
    Uop(&'static str, shared_ir::opt::PassSet),
}

impl Arm {
    pub fn name(self) -> &'static str {
        match self {
            Arm::L0 => "l0",
            Arm::L1 => "l1",
            Arm::Uop(name, _) => name,
        }
    }
}

/// Arm names are `&'static str`; a µop arm interns its spelling once per
/// distinct name (a handful per process).
fn intern(name: &str) -> &'static str {
    use std::sync::Mutex;
    static NAMES: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(n) = names.iter().find(|n| **n == name) {
        return n;
    }
    let n: &'static str = Box::leak(name.to_string().into_boxed_str());
    names.push(n);
    n
}

impl std::str::FromStr for Arm {
    type Err = String;
    fn from_str(s: &str) -> Result<Arm, String> {
        match s {
            "l0" => Ok(Arm::L0),
            "l1" => Ok(Arm::L1),
            _ => match crate::uop::parse_arm(s) {
                Some(Ok(set)) => Ok(Arm::Uop(intern(s), set)),
                Some(Err(e)) => Err(format!("arm {s:?}: {e}")),
                None => Err(format!(
                    "arm {s:?} is not available (l0, l1, only-naive, only-baseline, only-all, only-<passes>)"
                )),
            },
        }
    }
}

/// Why the engine handed control back.
pub enum Exit {
    /// EIP is in the thunk area.
    Thunk,
    /// The clock reached the stop value.
    Slice,
    /// The CPU raised an exception (the dispatch is charged).
    Exception(Event),
    /// An inexpressible instruction (nothing changed).
    Stop(StopReason),
}

/// An arm's engine with its state (L1's code cache lives as long as the run).
pub enum Engine {
    L0,
    L1(Box<crate::l1::L1>),
    Uop(Box<crate::uop::Uop>),
}

impl Engine {
    pub fn new(arm: Arm) -> Engine {
        match arm {
            Arm::L0 => Engine::L0,
            Arm::L1 => Engine::L1(Box::default()),
            Arm::Uop(_, set) => Engine::Uop(Box::new(crate::uop::Uop::new(set))),
        }
    }

    /// L1's counters (`None` for the other arms).
    pub fn l1_counters(&self) -> Option<crate::l1::Counters> {
        match self {
            Engine::L1(l1) => Some(l1.counters()),
            _ => None,
        }
    }

    /// A µop arm's counters (`None` for the other arms).
    pub fn uop_counters(&self) -> Option<std::collections::BTreeMap<String, u64>> {
        match self {
            Engine::Uop(u) => Some(u.counters()),
            _ => None,
        }
    }
}

/// Runs `cpu` with the arm's engine until EIP enters the thunk area
/// (`is_thunk`), the clock reaches `stop_at`, or an exception or stop. The
/// one place the run loop calls an engine.
#[inline]
pub fn exec(
    engine: &mut Engine,
    cpu: &mut Cpu,
    mem: &mut crate::memory::Memory,
    stop_at: u64,
    is_thunk: &dyn Fn(u32) -> bool,
) -> Exit {
    match engine {
        Engine::L0 => loop {
            if is_thunk(cpu.eip) {
                return Exit::Thunk;
            }
            if cpu.clock >= stop_at {
                return Exit::Slice;
            }
            match user::step(cpu, mem) {
                UserOutcome::Ok => {}
                UserOutcome::Exception(ev) => return Exit::Exception(ev),
                UserOutcome::Stop(r) => return Exit::Stop(r),
            }
        },
        Engine::L1(l1) => l1.run(cpu, mem, stop_at, is_thunk),
        Engine::Uop(u) => u.run(cpu, mem, stop_at, is_thunk),
    }
}

fn drain(p: &mut Process, out: &mut dyn FnMut(u8, &[u8])) {
    for (stream, bytes) in p.env.console.drain(..) {
        out(stream, &bytes);
    }
}

/// Switches to thread `i`: the clock carries over, the last error is swapped.
fn switch_to(p: &mut Process, i: usize) {
    let th = &mut p.env.threads;
    if i == th.cur {
        return;
    }
    let clock = th.cur().cpu.clock;
    let le = p.env.last_error;
    th.cur_mut().last_error = le;
    th.cur = i;
    th.cur_mut().cpu.clock = clock;
    p.env.last_error = th.cur().last_error;
}

/// Runs `p` on `arm` for at most `budget` dispatches; `out(stream, bytes)`
/// receives console output as the program writes it.
pub fn run_arm(p: &mut Process, arm: Arm, budget: u64, out: &mut dyn FnMut(u8, &[u8])) -> Summary {
    run_arm_with(p, arm, budget, out, None)
}

/// A watcher called at every multiple of `every` dispatches (frame edges):
/// the engine stops exactly there, so every arm shows it the same state.
pub struct Edges<'a> {
    pub every: u64,
    /// Called with the process and the edge's dispatch count.
    pub at: &'a mut dyn FnMut(&Process, u64),
}

/// [`run_arm`] with an optional edge watcher.
pub fn run_arm_with(
    p: &mut Process,
    arm: Arm,
    budget: u64,
    out: &mut dyn FnMut(u8, &[u8]),
    mut edges: Option<Edges>,
) -> Summary {
    let mut engine = Engine::new(arm);
    let mut s = p.start();
    let mut next_edge = edges.as_ref().map_or(u64::MAX, |e| e.every.max(1));
    let ending = loop {
        drain(p, out);
        if let Some(e) = edges.as_mut() {
            while p.env.threads.cur().cpu.clock >= next_edge && next_edge <= budget {
                (e.at)(p, next_edge);
                next_edge += e.every.max(1);
            }
        }
        match s {
            Service::Continue => {}
            Service::Exit(code) => break Ending::Exit { code },
            Service::Stop(r) if r.starts_with("unimplemented") => {
                break Ending::Unimplemented { report: r }
            }
            Service::Stop(report) => break Ending::Stop { report },
        }
        // Pick the thread: the current one while it can run and has quantum left.
        let clock = p.env.threads.cur().cpu.clock;
        let th = &mut p.env.threads;
        th.wake(clock);
        let cur_ok = th.cur().state == State::Runnable && clock < th.slice_end;
        if !cur_ok {
            match th.next_runnable() {
                Some(i) => {
                    switch_to(p, i);
                    p.env.threads.slice_end = clock + crate::threads::QUANTUM;
                }
                None => match p.env.threads.earliest_deadline() {
                    // Everybody waits: guest time skips to the first deadline.
                    Some(d) => {
                        // Stop at a frame edge on the way (the wait goes on after it).
                        let d = d.max(clock).min(next_edge);
                        if d >= budget {
                            p.env.threads.cur_mut().cpu.clock = budget.max(clock);
                            break Ending::Budget;
                        }
                        p.env.threads.cur_mut().cpu.clock = d;
                        continue;
                    }
                    None if p.env.desktop.waiting_for_input => break Ending::Idle,
                    None => {
                        break Ending::Stop {
                            report: "deadlock: every thread waits with no timeout".into(),
                        }
                    }
                },
            }
        }
        let clock = p.env.threads.cur().cpu.clock;
        if clock >= budget {
            break Ending::Budget;
        }
        let stop_at = budget
            .min(p.env.threads.slice_end.max(clock + 1))
            .min(next_edge.max(clock + 1));
        let thunks = &p.env.thunks;
        let t = &mut p.env.threads.list[p.env.threads.cur];
        let exit = exec(&mut engine, &mut t.cpu, &mut p.env.mem, stop_at, &|eip| {
            thunks.contains(eip)
        });
        s = match exit {
            Exit::Thunk => p.service(),
            Exit::Slice => Service::Continue,
            Exit::Exception(ev) => {
                let cpu = p.env.cpu().clone();
                let (rec, eip) = crate::seh::record_of_event(&ev, &cpu);
                let rec = crate::seh::stack_guard(&mut p.env, rec);
                let mut at = cpu;
                at.eip = eip;
                p.env.clock = at.clock;
                let r = crate::seh::dispatch(&mut p.env, rec, &at);
                p.finish(r, crate::threads::Origin::Engine)
            }
            Exit::Stop(r) => Service::Stop(format!("{r} at {:#010x}", p.env.threads.cur().cpu.eip)),
        };
    };
    drain(p, out);
    Summary {
        arm: arm.name(),
        dispatches: p
            .env
            .threads
            .list
            .iter()
            .map(|t| t.cpu.clock)
            .max()
            .unwrap_or(0),
        ending,
        api_calls: p.calls.clone(),
        proc_misses: p.env.proc_misses.iter().cloned().collect(),
        l1: engine.l1_counters(),
        uop: engine.uop_counters(),
    }
}

/// Runs `p` on `l0` (see [`run_arm`]).
pub fn run(p: &mut Process, budget: u64, out: &mut dyn FnMut(u8, &[u8])) -> Summary {
    run_arm(p, Arm::L0, budget, out)
}
