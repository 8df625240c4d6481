//! Running a process: the engine loop over the shared CPU (`x86_cpu::user`,
//! arm `l0`) with thunk service, a dispatch budget, and the run summary.
//!
//! Owns: the loop (service a call when EIP is in the thunk area, else one
//! `user::step`), console output forwarding, how a run ended, and the
//! summary (dispatches, ending, unimplemented call, API call counts). It must
//! not hold instruction semantics (x86-cpu does) or API bodies (dll does).

use crate::process::{Process, Service};
use x86_cpu::user::{self, FlatSetup, UserOutcome};
use x86_cpu::Cpu;

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Ending {
    Exit { code: u32 },
    Budget,
    Unimplemented { report: String },
    Stop { report: String },
}

/// The summary of a run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Summary {
    pub dispatches: u64,
    pub ending: Ending,
    pub api_calls: std::collections::BTreeMap<String, u64>,
}

/// Runs `p` for at most `budget` dispatches; `out(stream, bytes)` receives
/// console output as the program writes it.
pub fn run(p: &mut Process, budget: u64, out: &mut dyn FnMut(u8, &[u8])) -> Summary {
    let esp = p.initial_esp();
    let mut cpu = Cpu::new_flat32(&FlatSetup {
        eip: p.entry,
        esp,
        fs_base: p.teb,
        fs_limit: 0xFFF,
    });
    let ending = loop {
        if p.is_thunk(cpu.eip) {
            let s = p.service(&mut cpu);
            for (stream, bytes) in p.env.console.drain(..) {
                out(stream, &bytes);
            }
            match s {
                Service::Continue => continue,
                Service::Exit(code) => break Ending::Exit { code },
                Service::Stop(r) if r.starts_with("unimplemented") => {
                    break Ending::Unimplemented { report: r }
                }
                Service::Stop(report) => break Ending::Stop { report },
            }
        }
        if cpu.clock >= budget {
            break Ending::Budget;
        }
        match user::step(&mut cpu, &mut p.env.mem) {
            UserOutcome::Ok => {}
            UserOutcome::Exception(ev) => {
                break Ending::Stop {
                    report: format!(
                        "exception vector {} at {:#010x}{} (SEH delivery is not modelled yet)",
                        ev.vector,
                        ev.eip,
                        ev.mem.map_or(String::new(), |m| format!(
                            ", {:?} of {:#010x}",
                            m.access, m.addr
                        ))
                    ),
                }
            }
            UserOutcome::Stop(r) => {
                break Ending::Stop {
                    report: r.to_string(),
                }
            }
        }
    };
    Summary {
        dispatches: cpu.clock,
        ending,
        api_calls: p.calls.clone(),
    }
}
