//! A session: one program (after its companions), one engine, one budget;
//! frames, events and a report out.
//!
//! Owns the main loop and its exact event delivery (ARCHITECTURE.md
//! invariants 1-3): before each instruction the devices perform what is due
//! at the current dispatch; then, if IF=1, no interrupt shadow applies and
//! the PIC has a request, the interrupt is taken; HLT and waiting services
//! advance the clock to the next event (or the budget); the run stops
//! exactly at the budget. It also routes host calls to the BIOS and DOS
//! services. It must not implement services or instruction semantics.

use crate::bios::hostcall::{self, Outcome, Regs};
use crate::bios::rom::{self, svc};
use crate::bios::{bda, keyboard, mouse, timer, video, Bios};
use crate::bus::Bus;
use crate::cpu::l0::{self, StepOutcome, StopReason};
use crate::cpu::{seg, Cpu};
use crate::dos::exec::{self, ExecError, Mode, Request};
use crate::dos::files::GuestFs;
use crate::dos::path::{self, Resolved};
use crate::dos::{int21, Dos};
use crate::frame::Frame;
use crate::loader;
use crate::machine::{ems, xms, Machine};
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};

/// An execution engine: runs guest instructions on the machine.
pub trait Engine {
    /// The arm name (as the CLI and reports spell it).
    fn name(&self) -> &'static str;
    /// Runs instructions until the clock reaches `limit`, an instruction
    /// needs the session (host call, HLT, stop), or an interrupt may have
    /// become deliverable. Must not run past `limit`.
    fn run(&mut self, cpu: &mut Cpu, m: &mut Machine, limit: u64) -> StepOutcome;
    /// Deterministic performance counters for the report (L1 integration
    /// point; engines without counters keep the default). The oracle reads
    /// numeric fields (nested objects flattened as `a.b`); names it knows
    /// are in docs/oracle.md. They never feed back into guest time.
    fn counters(&self) -> Option<serde_json::Value> {
        None
    }

    // --- oracle integration (docs/oracle.md): optional, never guest-visible.

    /// Which program/block of this arm covers the instruction at the
    /// current CS:IP, for divergence reports. Default: the arm cannot say.
    fn describe_site(&self, _cpu: &Cpu) -> Option<String> {
        None
    }
}

/// The L0 interpreter as an engine. `trace_from`: print every instruction
/// from that dispatch on to stderr (a debugging aid, `TOYVM_TRACE_FROM`).
pub struct L0 {
    pub trace_from: u64,
}

impl Engine for L0 {
    fn name(&self) -> &'static str {
        "l0"
    }
    fn run(&mut self, cpu: &mut Cpu, m: &mut Machine, limit: u64) -> StepOutcome {
        while cpu.clock < limit {
            if cpu.clock >= self.trace_from {
                let at = cpu.sbase[seg::CS].wrapping_add(cpu.eip);
                let b = m.read_lin(at, 8);
                eprintln!(
                    "{:>10} {:04X}:{:04X} {:02X?} AX={:04X} BX={:04X} CX={:04X} DX={:04X} SI={:04X} DI={:04X} BP={:04X} SP={:04X} DS={:04X} ES={:04X} SS={:04X} F={:04X}",
                    cpu.clock, cpu.sregs[seg::CS], cpu.eip, &b[..instruction_len(&b)], cpu.ax(), cpu.bx(), cpu.cx(), cpu.dx(),
                    cpu.si(), cpu.di(), cpu.bp(), cpu.sp(), cpu.ds(), cpu.es(), cpu.ss(), cpu.flags.bits() & 0xFFFF
                );
            }
            let o = l0::step(cpu, m);
            if o != StepOutcome::Ok {
                return o;
            }
            // A port write may have unmasked or acknowledged an IRQ; STI,
            // POPF or IRET may have opened IF over a pending one.
            if m.attention || (cpu.flags.if_() && m.dev.irq_pending()) {
                return StepOutcome::Ok;
            }
        }
        StepOutcome::Ok
    }
}

/// Every arm [`engine`] builds, the reference first: what `oracle fuzz
/// --arms native` runs. A new arm is one more name here.
pub const ARMS: &[&str] = &[
    "l1",
    "l0",
    "only-naive",
    "only-baseline",
    "only-all",
    "only-t2",
    "uop",
    "jit",
];

/// The arms this build knows.
pub fn engine(arm: &str) -> Result<Box<dyn Engine>, String> {
    match arm {
        "l0" => Ok(Box::new(L0 {
            trace_from: std::env::var("TOYVM_TRACE_FROM")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(u64::MAX),
        })),
        // L1 integration point: the threaded tier (toyvm/src/l1/dos.rs).
        "l1" => Ok(Box::new(crate::l1::dos::engine())),
        // µop arms integration point: toyvm/src/tiers/.
        // `only-<set>`: one driver parametrized by a pass set (naive,
        // baseline, all, or passes joined by `.`: only-constprop.dce).
        other => match crate::tiers::OnlyNaive::for_arm(other) {
            Some(e) => e.map(|e| Box::new(e) as Box<dyn Engine>),
            None => Err(format!(
                "unknown or not yet built arm `{other}` (available: l0, l1, only-<set> with SET naive, baseline, all or passes joined by `.`, only-t<K>, uop[K][-SET], jit, jit-<threshold>)"
            )),
        },
    }
}

/// A program to run: host file, guest command tail.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Program {
    pub path: PathBuf,
    pub args: String,
}

/// What a session runs and how (serialisable: the wasm host hands it to
/// the session inside the module as JSON).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Config {
    /// The program; its directory becomes C:\.
    pub program: Program,
    /// Programs run before it, each until it exits or stays resident
    /// (e.g. a TSR the program needs).
    pub companions: Vec<Program>,
    /// Host files given to the guest in C:\ (read-only, never written out):
    /// what the program runs or reads itself, e.g. the DOS/4G extender a
    /// Watcom LE stub executes (DOS4GW.EXE).
    #[serde(default)]
    pub files: Vec<PathBuf>,
    pub budget: u64,
    pub arm: String,
    pub dos_version: (u8, u8),
    pub out_dir: Option<PathBuf>,
    /// Key script (`KEY@DISPATCH,...`).
    pub keys: Option<String>,
}

impl Config {
    pub fn new(program: impl Into<PathBuf>) -> Config {
        Config {
            program: Program {
                path: program.into(),
                args: String::new(),
            },
            companions: Vec::new(),
            files: Vec::new(),
            budget: 20_000_000,
            arm: "l1".into(),
            dos_version: (5, 0),
            out_dir: None,
            keys: None,
        }
    }
}

/// Why a run stopped early.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stop {
    pub cs: u16,
    pub ip: u32,
    pub bytes: Vec<u8>,
    pub what: String,
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    Exited { code: u8 },
    Budget,
    Stopped(Stop),
}

/// Architectural state at one dispatch (what the oracle compares).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Snapshot {
    pub dispatches: u64,
    pub cs: u16,
    pub ip: u32,
    pub regs: [u32; 8],
    pub sregs: [u16; 6],
    /// FLAGS restricted to the bits the architecture defines.
    pub flags: u32,
    /// XXH3 of guest RAM (conventional, HMA and extended memory).
    pub ram_hash: u64,
    /// Hash of all guest-visible device state.
    pub device_hash: u64,
    pub frame_hash: u64,
}

/// FLAGS bits compared: CF PF AF ZF SF TF IF DF OF.
pub const DEFINED_FLAGS: u32 = 0x0FD5;

/// One program, one engine, one budget.
pub struct Session {
    pub cpu: Cpu,
    pub machine: Machine,
    pub bios: Bios,
    pub dos: Dos,
    engine: Box<dyn Engine>,
    pub budget: u64,
    /// Programs still to start from the shell, with their guest names.
    queue: VecDeque<(Vec<String>, String)>,
    pub end: Option<End>,
    /// Interrupts taken, by vector.
    pub interrupts: BTreeMap<u8, u64>,
    /// Services asked for and not implemented (the run stopped on the first).
    pub missing: Vec<String>,
    /// Deadline of the service wait in progress, if any.
    waiting: Option<Option<u64>>,
    /// Print every host call to stderr (debugging aid; never in reports).
    pub trace: bool,
}

/// A DOS short name for a long host name, as DOSBox and Windows make them:
/// the first six valid characters, `~1`, and the first three of the
/// extension.
pub fn short_name(long: &str) -> String {
    let (stem, ext) = match long.rsplit_once('.') {
        Some((s, e)) => (s, e),
        None => (long, ""),
    };
    let clean = |s: &str, n: usize| -> String {
        s.chars()
            .filter(|c| c.is_ascii_alphanumeric() || "_-!#$%&'()@^`{}~".contains(*c))
            .map(|c| c.to_ascii_uppercase())
            .take(n)
            .collect()
    };
    let mut out = clean(stem, 6);
    if out.is_empty() {
        out.push('X');
    }
    out.push_str("~1");
    let e = clean(ext, 3);
    if !e.is_empty() {
        out.push('.');
        out.push_str(&e);
    }
    out
}

fn read_host(p: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()))
}

impl Session {
    /// Boots the machine, BIOS and DOS, and starts the first program.
    /// Fails (before any dispatch) only for bad configuration; a program
    /// that cannot load ends the session as stopped.
    pub fn new(cfg: &Config) -> Result<Session, String> {
        Session::with_engine(cfg, engine(&cfg.arm)?)
    }

    /// As [`Session::new`], with an engine the caller built (a tier under
    /// development, an instrumented engine, the oracle's test arms);
    /// `cfg.arm` is then only a label.
    pub fn with_engine(cfg: &Config, engine: Box<dyn Engine>) -> Result<Session, String> {
        let prog = &cfg.program.path;
        let meta = std::fs::metadata(prog).map_err(|e| format!("{}: {e}", prog.display()))?;
        if !meta.is_file() {
            return Err(format!("{}: not a file", prog.display()));
        }
        let root = prog
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let mut fs = GuestFs::new(root, cfg.out_dir.as_deref())
            .map_err(|e| format!("{}: {e}", root.display()))?;

        let mut machine = Machine::new();
        machine.dev.init_bios_defaults(0);
        let rom = rom::install(&mut machine.mem);
        let mut bios = Bios::default();
        let dt = timer::now(&bios, 0);
        bda::init(&mut machine.mem, timer::ticks_of(&dt));
        video::init(&mut machine);
        machine.sync_a20();
        fs.host_stamp = timer::dos_stamp(&dt);
        if let Some(k) = &cfg.keys {
            machine.dev.load_key_script(k)?;
        }
        bios.mouse = mouse::Mouse::default();

        // Guest names: the program from its own directory; companions and
        // extra files are given to the guest as files in C:\ (read-only,
        // never written out).
        let guest_name = |p: &Path| -> Result<(String, bool), String> {
            let n = p
                .file_name()
                .and_then(|n| n.to_str())
                .ok_or_else(|| format!("{}: not a DOS file name", p.display()))?;
            Ok(match path::host_name_83(n) {
                Some(s) => (s, true),
                None => (short_name(n), false),
            })
        };
        let mut queue = VecDeque::new();
        for c in &cfg.companions {
            let (name, _) = guest_name(&c.path)?;
            fs.inject(&name, read_host(&c.path)?);
            queue.push_back((vec![name], c.args.clone()));
        }
        for f in &cfg.files {
            let (name, _) = guest_name(f)?;
            fs.inject(&name, read_host(f)?);
        }
        // A program whose host name is not 8.3 gets a DOS short name.
        let (name, is83) = guest_name(prog)?;
        if !is83 {
            fs.inject(&name, read_host(prog)?);
        }
        queue.push_back((vec![name], cfg.program.args.clone()));

        let mut dos = Dos::new(fs, cfg.dos_version, rom);
        dos.boot(&mut machine.mem);
        let mut s = Session {
            cpu: Cpu::new(),
            machine,
            bios,
            dos,
            engine,
            budget: cfg.budget,
            queue,
            end: None,
            interrupts: BTreeMap::new(),
            missing: Vec::new(),
            waiting: None,
            trace: std::env::var_os("TOYVM_TRACE_CALLS").is_some(),
        };
        s.start_next();
        Ok(s)
    }

    /// EXECs the next queued program from the shell, or ends the run.
    fn start_next(&mut self) {
        let Some((comps, args)) = self.queue.pop_front() else {
            let code = self.dos.return_code as u8;
            self.end = Some(End::Exited { code });
            return;
        };
        let (ss, sp) = self.dos.shell_stack();
        self.cpu.set_seg(seg::SS, ss);
        self.cpu.set_sp(sp);
        self.cpu.set_seg(seg::CS, rom::BIOS_SEG);
        self.cpu.eip = self.dos.rom.shell_return as u32;
        self.dos.current_psp = crate::dos::SHELL_PSP;
        let tail = if args.is_empty() {
            Vec::new()
        } else {
            format!(" {args}").into_bytes()
        };
        let req = Request {
            comps: comps.clone(),
            tail: &tail,
            env_seg: 0,
            fcbs: None,
            mode: Mode::Run,
        };
        if let Err(e) = exec::exec(&mut self.cpu, &mut self.machine, &mut self.dos, req) {
            let what = match e {
                ExecError::Unsupported(w) => w,
                ExecError::Dos(code) => {
                    let why = match code {
                        path::ERR_FILE_NOT_FOUND | path::ERR_PATH_NOT_FOUND => {
                            "not found".to_string()
                        }
                        path::ERR_NO_MEMORY => "does not fit in memory".to_string(),
                        path::ERR_BAD_FORMAT => {
                            let bytes = self
                                .dos
                                .fs
                                .open(&comps)
                                .map(|n| self.dos.fs.node(n).data.clone())
                                .unwrap_or_default();
                            match loader::parse(&bytes) {
                                Err(e) => e.to_string(),
                                Ok(_) => "bad format".into(),
                            }
                        }
                        c => format!("DOS error {c:02X}h"),
                    };
                    format!("cannot load C:\\{}: {why}", path::key(&comps))
                }
            };
            self.end = Some(End::Stopped(Stop {
                cs: 0,
                ip: 0,
                bytes: Vec::new(),
                what,
            }));
        }
    }

    /// The engine's arm name.
    pub fn arm(&self) -> &'static str {
        self.engine.name()
    }

    /// The engine's performance counters (see [`Engine::counters`]).
    pub fn counters(&self) -> Option<serde_json::Value> {
        self.engine.counters()
    }

    /// What the engine says about the site at the current CS:IP (see
    /// [`Engine::describe_site`]).
    pub fn describe_site(&self) -> Option<String> {
        self.engine.describe_site(&self.cpu)
    }

    /// Current guest clock (dispatches).
    pub fn clock(&self) -> u64 {
        self.cpu.clock
    }

    /// Runs to the budget (or the end of the program).
    pub fn run(&mut self) -> &End {
        let b = self.budget;
        self.run_until(b);
        if self.end.is_none() {
            self.end = Some(End::Budget);
        }
        self.end.as_ref().unwrap()
    }

    /// Runs until the clock reaches exactly `target` (capped at the budget)
    /// or the run ends. Returns true while the run can go on.
    pub fn run_until(&mut self, target: u64) -> bool {
        let target = target.min(self.budget);
        while self.end.is_none() && self.cpu.clock < target {
            self.step_slice(target);
        }
        if self.end.is_none() && self.cpu.clock >= self.budget {
            self.end = Some(End::Budget);
        }
        self.end.is_none()
    }

    fn stop(&mut self, r: StopReason) {
        self.end = Some(End::Stopped(Stop {
            cs: r.cs,
            ip: r.ip,
            bytes: r.bytes,
            what: r.what,
        }));
    }

    /// One turn of the main loop: obligations, interrupt, then a slice of
    /// the engine up to the next event.
    fn step_slice(&mut self, target: u64) {
        let now = self.cpu.clock;
        let m = &mut self.machine;
        if m.dev.next_event() <= now {
            m.dev.advance(now, m.mem.ram_mut());
        }
        if self.cpu.flags.if_() && !self.cpu.shadow && m.dev.irq_pending() {
            let v = m.dev.acknowledge_irq();
            *self.interrupts.entry(v).or_insert(0) += 1;
            self.waiting = None;
            if let Err(r) = self.cpu.interrupt(m, v) {
                self.stop(r);
            }
            return;
        }
        if self.cpu.halted || self.waiting.is_some() {
            let until = self.waiting.flatten().unwrap_or(u64::MAX);
            let t = m.dev.next_event().min(until).min(target);
            self.cpu.clock = self.cpu.clock.max(t);
            if self.waiting.is_some() && self.cpu.clock >= until.min(m.dev.next_event()) {
                // Retry the waiting service (its IP points at the host call).
                self.waiting = None;
            }
            return;
        }
        let limit = m.dev.next_event().min(target);
        m.attention = false;
        match self.engine.run(&mut self.cpu, m, limit) {
            StepOutcome::Ok | StepOutcome::Halt => {}
            StepOutcome::HostCall(n) => self.host_call(n),
            StepOutcome::Stop(r) => self.stop(r),
        }
    }

    /// Runs host service `n` and applies its outcome.
    fn host_call(&mut self, n: u16) {
        if self.trace {
            let c = &self.cpu;
            let f = hostcall::frame(c, &mut self.machine);
            eprintln!(
                "[{:>10}] svc {n:04X} from {:04X}:{:04X} AX={:04X} BX={:04X} CX={:04X} DX={:04X} SI={:04X} DI={:04X} DS={:04X} ES={:04X}",
                c.clock, f.cs, f.ip, c.ax(), c.bx(), c.cx(), c.dx(), c.si(), c.di(), c.ds(), c.es()
            );
        }
        let out = self.service(n);
        match out {
            Outcome::Continue => {}
            Outcome::Wait { until } => {
                // Nothing can ever wake a wait with no events and no deadline.
                self.waiting = Some(until);
            }
            Outcome::Exit { code } => self.end = Some(End::Exited { code }),
            Outcome::Stop { what, missing } => {
                if let Some(mi) = missing {
                    self.missing.push(mi);
                }
                let (cs, ip, bytes) = self.fault_site(n & 0xFF00 == 0x0200);
                self.end = Some(End::Stopped(Stop {
                    cs,
                    ip,
                    bytes,
                    what,
                }));
            }
        }
    }

    /// The instruction that entered the current stub (from its interrupt
    /// frame): for a fault the faulting instruction, for a service the
    /// `INT n` before the return address (or the return address itself when
    /// the service was reached another way, e.g. PUSHF + CALL FAR).
    fn fault_site(&mut self, fault: bool) -> (u16, u32, Vec<u8>) {
        let f = hostcall::frame(&self.cpu, &mut self.machine);
        let (cs, mut ip) = (f.cs, f.ip);
        if !fault && self.machine.rd8(cs, ip.wrapping_sub(2)) == 0xCD {
            ip = ip.wrapping_sub(2);
        }
        let bytes = self.machine.read_lin(crate::machine::lin(cs, ip), 15);
        let len = instruction_len(&bytes);
        (cs, ip as u32, bytes[..len].to_vec())
    }

    fn service(&mut self, n: u16) -> Outcome {
        let (cpu, m, bios, dos) = (
            &mut self.cpu,
            &mut self.machine,
            &mut self.bios,
            &mut self.dos,
        );
        let unknown = |cpu: &Cpu, m: &mut Machine, v: u8, sel: String| {
            let what = format!("INT {v:02X}h {sel}");
            int21::missing(cpu, m, what)
        };
        match n {
            svc::SHELL_RETURN => {
                self.start_next();
                Outcome::Continue
            }
            svc::TIMER_TICK => {
                timer::tick(m);
                Outcome::Continue
            }
            svc::KEYBOARD_BYTE => {
                keyboard::scancode(m, bios, cpu.al());
                Outcome::Continue
            }
            svc::XMS => {
                xms::service(cpu, m);
                Outcome::Continue
            }
            svc::CPM_CALL => int21::cpm_call(cpu, m, dos, bios),
            svc::VBE_WINDOW => {
                crate::bios::vbe::window_call(cpu, m);
                Outcome::Continue
            }
            svc::RESET => Outcome::Stop {
                what: "reboot requested (jump to the reset vector)".into(),
                missing: None,
            },
            0x0010 => match video::int10(cpu, m, bios) {
                Some(o) => o,
                None => unknown(cpu, m, 0x10, format!("AH={:02X}h", cpu.ah())),
            },
            0x0013 => match crate::bios::misc::int13(cpu, m, bios) {
                Some(o) => o,
                None => unknown(
                    cpu,
                    m,
                    0x13,
                    format!("AH={:02X}h (BIOS disk I/O is not modelled)", cpu.ah()),
                ),
            },
            0x0011 => {
                crate::bios::misc::int11(cpu, m);
                Outcome::Continue
            }
            0x0012 => {
                crate::bios::misc::int12(cpu, m);
                Outcome::Continue
            }
            0x0015 => match crate::bios::misc::int15(cpu, m, bios) {
                Some(o) => o,
                None => unknown(cpu, m, 0x15, format!("AH={:02X}h", cpu.ah())),
            },
            0x0016 => match keyboard::int16(cpu, m, bios) {
                Some(o) => o,
                None => unknown(cpu, m, 0x16, format!("AH={:02X}h", cpu.ah())),
            },
            0x001A => {
                if timer::int1a(cpu, m, bios) {
                    Outcome::Continue
                } else {
                    // PCI BIOS, alarms and friends: "not supported".
                    bios.decline(format!("INT 1Ah AH={:02X}h", cpu.ah()));
                    hostcall::set_cf(cpu, m, true);
                    Outcome::Continue
                }
            }
            0x0025 | 0x0026 => crate::bios::misc::int25_26(cpu, bios, n as u8),
            0x0020 => int21::int20(cpu, m, dos),
            0x0021 => int21::int21(cpu, m, dos, bios),
            0x0027 => int21::int27(cpu, m, dos),
            0x0029 => {
                crate::dos::console::out(m, bios, cpu.al());
                Outcome::Continue
            }
            0x002F => int21::int2f(cpu, m, dos),
            0x0033 => {
                if mouse::int33(cpu, m, &mut bios.mouse) {
                    Outcome::Continue
                } else {
                    bios.decline(format!("INT 33h AX={:04X}h", cpu.ax()));
                    Outcome::Continue
                }
            }
            0x0067 => {
                if !ems::service(cpu, m) {
                    bios.decline(format!("INT 67h AH={:02X}h", cpu.ah()));
                }
                Outcome::Continue
            }
            _ if n == svc::exception(6) && emulate_rdtsc(cpu, m) => Outcome::Continue,
            _ if n & 0xFF00 == 0x0200 => {
                let v = n as u8;
                let name = match v {
                    0 => "divide error (#DE)",
                    6 => "invalid opcode (#UD)",
                    7 => "x87 not available (#NM)",
                    _ => "exception",
                };
                let f = hostcall::frame(cpu, m);
                let at = crate::machine::lin(f.cs, f.ip);
                let absent_rom = at >= 0xC8000 && m.read8(at) == 0xFF;
                Outcome::Stop {
                    what: if absent_rom {
                        format!(
                            "{name} at {:04X}:{:04X}: execution reached absent ROM (no ROM BASIC or option ROM here)",
                            f.cs, f.ip
                        )
                    } else {
                        format!(
                            "{name} at {:04X}:{:04X} with no handler of the program's own",
                            f.cs, f.ip
                        )
                    },
                    missing: None,
                }
            }
            _ if n & 0xFF00 == 0x0300 => {
                let v = n as u8;
                let sel = format!("AH={:02X}h", cpu.ah());
                unknown(cpu, m, v, sel)
            }
            _ => {
                let (cs, ip) = (cpu.cs(), cpu.eip);
                Outcome::Stop {
                    what: format!(
                        "unknown host service {n:04X}h at {cs:04X}:{:04X}",
                        ip.wrapping_sub(4)
                    ),
                    missing: None,
                }
            }
        }
    }

    /// The current frame (what the screen shows).
    pub fn frame(&self) -> Frame {
        self.machine.dev.render()
    }

    /// The text console: what was printed through DOS and BIOS, then (in a
    /// text mode) what the screen shows.
    pub fn console_text(&self) -> (String, Option<String>) {
        let printed: String = self
            .bios
            .console
            .bytes
            .iter()
            .map(|&b| match b {
                b'\r' => '\r',
                b'\n' => '\n',
                b'\t' => '\t',
                _ => video::cp437(b),
            })
            .collect();
        let printed = printed.replace("\r\n", "\n").replace('\r', "\n");
        (printed, video::screen_text(&self.machine))
    }

    /// A snapshot of the architectural state now.
    pub fn snapshot(&mut self) -> Snapshot {
        let now = self.cpu.clock;
        let m = &mut self.machine;
        let ram_hash = xxhash_rust::xxh3::xxh3_64(m.mem.ram());
        let device_hash = m.dev.state_hash(now, m.mem.ram_mut());
        Snapshot {
            dispatches: now,
            cs: self.cpu.sregs[seg::CS],
            ip: self.cpu.eip,
            regs: self.cpu.regs,
            sregs: self.cpu.sregs,
            flags: self.cpu.flags.bits() & DEFINED_FLAGS,
            ram_hash,
            device_hash,
            frame_hash: self.frame().hash(),
        }
    }

    /// The first vertical retrace start at or after `from`.
    pub fn next_frame_edge(&self, from: u64) -> u64 {
        self.machine.dev.next_frame_edge(from)
    }

    /// Writes files the guest changed to the output directory (if any).
    pub fn flush_files(&mut self) -> std::io::Result<usize> {
        self.dos.fs.flush()
    }

    /// Functions answered "not supported" by design, by name.
    pub fn declined(&self) -> BTreeMap<String, u64> {
        let mut d = self.bios.declined.clone();
        for (k, v) in &self.dos.declined {
            *d.entry(k.clone()).or_insert(0) += v;
        }
        d
    }

    /// Whether the guest is at a point the CPU would call "in the BIOS"
    /// (for reports).
    pub fn at_keyboard_wait(&self) -> bool {
        self.waiting.is_some()
    }
}

/// The default #UD handler's one act of mercy: RDTSC (0F 31, a Pentium
/// instruction the 486-class CPU lacks) is completed here with the time
/// stamp counter defined as the dispatch clock, so programs that time
/// themselves with it run. Returns false for any other instruction.
fn emulate_rdtsc(cpu: &mut Cpu, m: &mut Machine) -> bool {
    let f = hostcall::frame(cpu, m);
    let at = crate::machine::lin(f.cs, f.ip);
    if m.read8(at) != 0x0F || m.read8(at + 1) != 0x31 {
        return false;
    }
    cpu.regs[crate::cpu::reg::EAX] = cpu.clock as u32;
    cpu.regs[crate::cpu::reg::EDX] = (cpu.clock >> 32) as u32;
    let sp = cpu.sp();
    m.wr16(cpu.ss(), sp, f.ip.wrapping_add(2));
    true
}

/// Length of the x86 instruction at the start of `bytes` (16-bit code).
pub fn instruction_len(bytes: &[u8]) -> usize {
    use iced_x86::{Decoder, DecoderOptions};
    let mut d = Decoder::new(16, bytes, DecoderOptions::NONE);
    let i = d.decode();
    if i.is_invalid() {
        bytes.len().min(4)
    } else {
        i.len().min(bytes.len())
    }
}

#[allow(dead_code)]
fn unused(_: Resolved) {}

/// The report of a run (serialised as JSON with a stable field order).
#[derive(Clone, Debug, serde::Serialize)]
pub struct Report {
    pub program: String,
    pub args: String,
    pub companions: Vec<String>,
    pub arm: String,
    pub dos_version: String,
    pub budget: u64,
    pub dispatches: u64,
    /// "exited", "budget" or "stopped".
    pub end: String,
    pub exit_code: Option<u8>,
    pub stop: Option<StopReport>,
    pub video_mode: String,
    pub frame: FrameReport,
    /// What the program printed through DOS and the BIOS teletype.
    pub console: String,
    /// What a text mode shows at the end (None in graphics modes).
    pub screen: Option<String>,
    /// Interrupts taken, by vector ("08h").
    pub interrupts: BTreeMap<String, u64>,
    pub unclaimed_ports: Vec<PortReport>,
    pub missing_services: Vec<String>,
    pub declined_services: BTreeMap<String, u64>,
    /// The engine's deterministic performance counters, if it keeps any
    /// (L1 integration point).
    pub engine_counters: Option<serde_json::Value>,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct StopReport {
    pub cs: String,
    pub ip: String,
    pub bytes: String,
    pub what: String,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct FrameReport {
    pub width: u32,
    pub height: u32,
    pub hash: String,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct PortReport {
    pub port: String,
    pub reads: u64,
    pub writes: u64,
}

impl Session {
    /// The run's report (call after the run ended).
    pub fn report(&mut self, cfg: &Config) -> Report {
        let (end, exit_code, stop) = match self.end.clone().unwrap_or(End::Budget) {
            End::Exited { code } => ("exited", Some(code), None),
            End::Budget => ("budget", None, None),
            End::Stopped(s) => (
                "stopped",
                None,
                Some(StopReport {
                    cs: format!("{:04X}", s.cs),
                    ip: format!("{:04X}", s.ip),
                    bytes: s
                        .bytes
                        .iter()
                        .map(|b| format!("{b:02X}"))
                        .collect::<Vec<_>>()
                        .join(" "),
                    what: s.what,
                }),
            ),
        };
        let f = self.frame();
        let (console, screen) = self.console_text();
        Report {
            program: cfg.program.path.display().to_string(),
            args: cfg.program.args.clone(),
            companions: cfg
                .companions
                .iter()
                .map(|c| {
                    format!("{} {}", c.path.display(), c.args)
                        .trim_end()
                        .to_string()
                })
                .collect(),
            arm: self.arm().to_string(),
            dos_version: format!("{}.{}", cfg.dos_version.0, cfg.dos_version.1),
            budget: self.budget,
            dispatches: self.cpu.clock,
            end: end.into(),
            exit_code,
            stop,
            video_mode: match self.machine.dev.vga.vbe.mode {
                Some(v) => format!("VBE {:03X}h", v.number),
                None => format!("{:02X}h", bda::rd8(&self.machine.mem, bda::VIDEO_MODE)),
            },
            frame: FrameReport {
                width: f.width,
                height: f.height,
                hash: format!("{:016x}", f.hash()),
            },
            console,
            screen,
            interrupts: self
                .interrupts
                .iter()
                .map(|(v, n)| (format!("{v:02X}h"), *n))
                .collect(),
            unclaimed_ports: self
                .machine
                .dev
                .unclaimed_ports()
                .iter()
                .map(|p| PortReport {
                    port: format!("{:04X}h", p.port),
                    reads: p.reads,
                    writes: p.writes,
                })
                .collect(),
            missing_services: self.missing.clone(),
            declined_services: self.declined(),
            engine_counters: self.engine.counters(),
        }
    }
}
