//! Guest threads and their deterministic scheduling on the guest clock.
//!
//! Owns: each thread's CPU, TEB and stack, its stack of host frames (guest
//! calls the host made and is waiting on: a callback, an SEH handler, a TLS
//! callback), its state (runnable, blocked in a wait until something is
//! signaled or a deadline on the guest clock, exited), and the choice of the
//! next thread to run: round robin in creation order, a thread running until
//! it blocks, exits, yields or spends its quantum of dispatches. Nothing here
//! reads host time or depends on host scheduling (invariant 7).
//!
//! It must not execute guest instructions (the run loop does) nor hold API
//! bodies (the wait functions in `dll::kernel32` decide when a wait is met).

use crate::dll::{Env, Ret};
use x86_cpu::Cpu;

/// Dispatches a thread runs before the next runnable one gets the CPU.
pub const QUANTUM: u64 = 50_000;

/// A continuation: what the host does with a guest call's EAX.
pub type Then = Box<dyn FnOnce(&mut Env, u32) -> Ret>;

/// Who started a chain of guest calls, i.e. what a final value means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// An API call: the value is its result; return to `ret` with ESP = `esp`.
    /// `thunk` is the API's own thunk: a wait answered by a continuation
    /// (after a guest call) makes the call again from there.
    Api { ret: u32, esp: u32, thunk: u32 },
    /// A thread's start routine: the value is the thread's exit code.
    ThreadStart,
    /// The engine (exception dispatch): a value is an internal error; the
    /// chain must end by setting the CPU state ([`Ret::Jumped`]) or stopping.
    Engine,
}

/// A guest call the host is waiting on.
pub struct Frame {
    /// ESP before the arguments were pushed (restored when the call returns,
    /// whether the callee popped them or not).
    pub sp_base: u32,
    /// EBX, ESI, EDI, EBP at the call (restored when it returns).
    pub saved: [u32; 4],
    pub then: Then,
    pub origin: Origin,
}

/// Why a thread does not run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Runnable,
    /// In a wait: retried when an object is signaled after `epoch` or at `deadline`.
    Blocked {
        deadline: Option<u64>,
        epoch: u64,
    },
    /// Suspended (CREATE_SUSPENDED / SuspendThread) until the count drops to 0.
    Suspended,
    Exited,
}

/// One guest thread.
pub struct Thread {
    pub id: u32,
    pub cpu: Cpu,
    pub teb: u32,
    pub stack_top: u32,
    pub stack_bottom: u32,
    /// The stack's guard page (Windows' PAGE_GUARD page above the last,
    /// never-committed page of the reservation): reserved, not committed,
    /// until the thread's stack grows into it. The first touch commits it
    /// and raises STATUS_STACK_OVERFLOW (`seh::stack_guard`); `None` after
    /// that, so a second overflow is a plain access violation.
    pub stack_guard: Option<u32>,
    pub frames: Vec<Frame>,
    pub state: State,
    /// The thread was woken from a wait and is retrying its call (not counted again).
    pub retrying: bool,
    /// The deadline of the wait in progress (u64::MAX: none), kept across
    /// retries and cleared when the call completes.
    pub wait_deadline: Option<u64>,
    /// A condition-variable sleep in progress: (variable, generation, woken).
    pub cv_wait: Option<(u32, u64, bool)>,
    pub suspend_count: u32,
    /// GetLastError of this thread while it is not the current one.
    pub last_error: u32,
    /// STILL_ACTIVE (259) until it exits.
    pub exit_code: u32,
    /// Fiber-local storage values (FlsAlloc indexes).
    pub fls: Vec<u32>,
    /// User APCs queued for the thread (QueueUserAPC): function, argument;
    /// they run at its next alertable wait.
    pub apcs: std::collections::VecDeque<(u32, u32)>,
}

/// The thread table.
#[derive(Default)]
pub struct Threads {
    /// In creation order (the scheduling order).
    pub list: Vec<Thread>,
    /// Index of the current thread in `list`.
    pub cur: usize,
    /// Bumped whenever a waitable object becomes signaled (blocked threads
    /// whose wait started before retry their call).
    pub epoch: u64,
    /// Next thread id to give out.
    pub next_id: u32,
    /// Clock at which the current thread's quantum ends.
    pub slice_end: u64,
}

/// STILL_ACTIVE: the exit code of a thread or process that has not ended.
pub const STILL_ACTIVE: u32 = 259;

impl Threads {
    pub fn new() -> Threads {
        Threads {
            next_id: 0x104,
            ..Default::default()
        }
    }

    pub fn cur(&self) -> &Thread {
        &self.list[self.cur]
    }

    pub fn cur_mut(&mut self) -> &mut Thread {
        &mut self.list[self.cur]
    }

    pub fn by_id(&self, id: u32) -> Option<&Thread> {
        self.list.iter().find(|t| t.id == id)
    }

    pub fn by_id_mut(&mut self, id: u32) -> Option<&mut Thread> {
        self.list.iter_mut().find(|t| t.id == id)
    }

    /// Adds a thread; returns its id.
    pub fn add(&mut self, cpu: Cpu, teb: u32, stack_bottom: u32, stack_top: u32) -> u32 {
        let id = self.next_id;
        self.next_id += 4;
        self.list.push(Thread {
            id,
            cpu,
            teb,
            stack_top,
            stack_bottom,
            stack_guard: None,
            frames: Vec::new(),
            state: State::Runnable,
            retrying: false,
            wait_deadline: None,
            cv_wait: None,
            suspend_count: 0,
            last_error: 0,
            exit_code: STILL_ACTIVE,
            fls: Vec::new(),
            apcs: Default::default(),
        });
        id
    }

    /// Whether any thread has not exited.
    pub fn any_alive(&self) -> bool {
        self.list.iter().any(|t| t.state != State::Exited)
    }

    /// Marks blocked threads whose wait may now be met as runnable (they
    /// retry their call): an object was signaled since they blocked, or
    /// their deadline has come.
    pub fn wake(&mut self, clock: u64) {
        let epoch = self.epoch;
        for t in &mut self.list {
            if let State::Blocked { deadline, epoch: e } = t.state {
                if e < epoch || deadline.is_some_and(|d| d <= clock) {
                    t.state = State::Runnable;
                }
            }
        }
    }

    /// The next runnable thread after the current one (round robin),
    /// including the current one last. `None` when nothing can run.
    pub fn next_runnable(&self) -> Option<usize> {
        let n = self.list.len();
        (1..=n)
            .map(|k| (self.cur + k) % n)
            .find(|&i| self.list[i].state == State::Runnable)
    }

    /// The earliest deadline among blocked threads (for idle time skips).
    pub fn earliest_deadline(&self) -> Option<u64> {
        self.list
            .iter()
            .filter_map(|t| match t.state {
                State::Blocked { deadline, .. } => deadline,
                _ => None,
            })
            .min()
    }
}
