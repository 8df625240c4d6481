//! One guest process: the main image mapped and bound, its threads' stacks,
//! TEBs and the PEB, the command line and environment, and the service of a
//! call that reached the thunk area.
//!
//! Owns: the process layout in guest memory (what each structure holds, at
//! which offset), thread creation (stack, TEB, static TLS block, the start
//! frame), the start-up sequence (guest DLLs' DllMain, the program's TLS
//! callbacks, then the entry point), and the calling-convention work of an
//! API call: read the dword arguments after the return address, pop the
//! return address and `4 * args` for stdcall, EAX / EDX:EAX / ST(0), and the
//! host frames of guest calls the host makes ([`Ret::Call`]). It must not
//! execute guest instructions (the run loop steps `x86-cpu` and hands a call
//! to [`Process::service`] when EIP enters the thunk area) nor hold API
//! bodies (those are in [`crate::dll`]).

use crate::dll::{Env, Ret};
use crate::memory::{mem, prot, Memory, PAGE_SIZE};
use crate::modules::{self, Kind, Module};
use crate::pe::{load, PeFile};
use crate::threads::{Frame, Origin, State};
use crate::thunks::Thunk;
use x86_cpu::user::FlatSetup;
use x86_cpu::{reg, Cpu};

pub use crate::thunks::{THUNK_BASE, THUNK_SIZE};

/// TEB and PEB field offsets (32-bit NT layout).
pub mod teb {
    pub const EXCEPTION_LIST: u32 = 0x00;
    pub const STACK_BASE: u32 = 0x04;
    pub const STACK_LIMIT: u32 = 0x08;
    pub const SELF: u32 = 0x18;
    pub const PROCESS_ID: u32 = 0x20;
    pub const THREAD_ID: u32 = 0x24;
    pub const TLS_POINTER: u32 = 0x2C;
    pub const PEB: u32 = 0x30;
    pub const LAST_ERROR: u32 = 0x34;
    pub const TLS_SLOTS: u32 = 0xE10;
    pub const TLS_EXPANSION: u32 = 0xF94;
    /// Where mainemu keeps the static TLS pointer array (inside the TEB's second page).
    pub const STATIC_TLS_ARRAY: u32 = 0x1000;
    /// TEB size: two pages.
    pub const SIZE: u32 = 0x2000;
}
pub mod peb {
    pub const BEING_DEBUGGED: u32 = 0x02;
    pub const IMAGE_BASE: u32 = 0x08;
    pub const LDR: u32 = 0x0C;
    pub const PROCESS_PARAMETERS: u32 = 0x10;
    pub const PROCESS_HEAP: u32 = 0x18;
    pub const NUMBER_OF_PROCESSORS: u32 = 0x64;
    pub const OS_MAJOR: u32 = 0xA4;
    pub const OS_MINOR: u32 = 0xA8;
    pub const OS_BUILD: u32 = 0xAC;
    pub const OS_PLATFORM: u32 = 0xB0;
}

/// The process id every guest process reports.
pub const PROCESS_ID: u32 = 0x100;

/// What servicing a thunk call asks of the engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Service {
    /// Carry on (with the current thread, or the scheduler's next choice
    /// if this one blocked or exited).
    Continue,
    /// The process ended with this exit code.
    Exit(u32),
    /// The run stops with this report.
    Stop(String),
}

/// How to build a process beyond the image and argv.
pub struct Setup {
    pub argv: Vec<String>,
    pub drives: crate::vfs::Drives,
    /// The program's guest path (GetModuleFileName(NULL)).
    pub exe_path: String,
    /// The environment block.
    pub vars: Vec<(String, String)>,
    /// Console input.
    pub stdin: Box<dyn std::io::Read>,
}

/// The environment every guest process starts with (fixed, so nothing of
/// the host leaks in: invariant 7); `--env` adds to or removes from it.
pub fn default_vars() -> Vec<(String, String)> {
    [
        ("ComSpec", "C:\\windows\\system32\\cmd.exe"),
        ("COMPUTERNAME", "MAINEMU"),
        ("NUMBER_OF_PROCESSORS", "1"),
        ("OS", "Windows_NT"),
        ("PATH", "C:\\windows\\system32;C:\\windows"),
        ("PATHEXT", ".COM;.EXE;.BAT;.CMD"),
        ("PROCESSOR_ARCHITECTURE", "x86"),
        ("SystemDrive", "C:"),
        ("SystemRoot", "C:\\windows"),
        ("TEMP", "C:\\"),
        ("TMP", "C:\\"),
        ("USERNAME", "mainemu"),
        ("windir", "C:\\windows"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

impl Setup {
    /// The usual setup for running `exe` (a host path) with `args`: drives
    /// as given (C: defaults to the current directory), the program's own
    /// directory reachable (through a drive that holds it, or mapped
    /// read-only at the first free letter from D:), the default environment
    /// with `env` edits (`NAME=VALUE`, or `NAME=` to remove), host stdin.
    pub fn for_program(
        exe: &std::path::Path,
        args: &[String],
        drives: &[(char, std::path::PathBuf)],
        env: &[String],
    ) -> Result<Setup, String> {
        let mut d = crate::vfs::Drives::new();
        for (l, dir) in drives {
            d.map(*l, dir)
                .map_err(|e| format!("--drive {l}={}: {e}", dir.display()))?;
        }
        if !d.letters().contains(&'C') {
            d.map('C', std::path::Path::new("."))
                .map_err(|e| format!("current directory: {e}"))?;
        }
        let name = exe
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "prog.exe".into());
        let exe_path = match d.guest_of_host(exe) {
            Some(p) => p,
            None => {
                let dir = exe
                    .parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .unwrap_or(std::path::Path::new("."));
                let l = d
                    .free_letter('D')
                    .ok_or("no free drive letter for the program")?;
                d.map_readonly(l, dir)
                    .map_err(|e| format!("{}: {e}", dir.display()))?;
                format!("{l}:\\{name}")
            }
        };
        let mut vars = default_vars();
        for kv in env {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("--env wants NAME=VALUE, got {kv:?}"))?;
            crate::dll::set_var(&mut vars, k, (!v.is_empty()).then_some(v));
        }
        let mut argv = vec![name];
        argv.extend(args.iter().cloned());
        Ok(Setup {
            argv,
            drives: d,
            exe_path,
            vars,
            stdin: Box::new(std::io::stdin()),
        })
    }

    /// No drives, an empty environment and no input; the program is `C:\NAME`.
    pub fn bare(argv: &[String]) -> Setup {
        Setup {
            argv: argv.to_vec(),
            drives: crate::vfs::Drives::new(),
            exe_path: format!("C:\\{}", argv.first().map_or("prog.exe", |s| s.as_str())),
            vars: Vec::new(),
            stdin: Box::new(std::io::empty()),
        }
    }
}

/// The process.
pub struct Process {
    pub env: Env,
    pub image_base: u32,
    pub entry: u32,
    /// The first thread's TEB and stack.
    pub teb: u32,
    pub peb: u32,
    pub stack_top: u32,
    pub stack_bottom: u32,
    /// API call counts by `dll!Name`, for the run summary.
    pub calls: std::collections::BTreeMap<String, u64>,
    /// Guest DLLs whose DllMain runs at start, dependencies first.
    pending_inits: Vec<u32>,
    started: bool,
}

/// Builds the Windows command line from argv (quotes around arguments with
/// spaces or tabs, and around empty ones).
pub fn command_line(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if a.is_empty() || a.contains([' ', '\t']) {
                format!("\"{a}\"")
            } else {
                a.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn alloc(m: &mut Memory, size: u32) -> Result<u32, String> {
    m.virtual_alloc(0, size, mem::RESERVE | mem::COMMIT, prot::READWRITE)
        .map_err(|e| format!("out of guest memory: {e}"))
}

/// Handles of the console streams (GetStdHandle).
pub const STD_INPUT: u32 = 0x10;
pub const STD_OUTPUT: u32 = 0x14;
pub const STD_ERROR: u32 = 0x18;

impl Process {
    /// Maps `exe` with a bare setup (no drives; tests of the loader and calls).
    pub fn new(exe: &[u8], argv: &[String]) -> Result<Process, String> {
        Process::with_setup(exe, Setup::bare(argv))
    }

    /// Maps `exe`, loads and binds what it imports, builds the first
    /// thread, the PEB and process parameters.
    pub fn with_setup(exe: &[u8], setup: Setup) -> Result<Process, String> {
        let mut pe = PeFile::parse(exe).map_err(|e| e.to_string())?;
        if pe.is_dll() {
            return Err("a DLL cannot be run as a program".into());
        }
        let mut m = Memory::new();
        m.reserve(
            Some(THUNK_BASE),
            crate::thunks::THUNK_AREA,
            prot::EXECUTE_READ,
            mem::PRIVATE,
        )
        .expect("thunk area free");
        let mapped = load::map(&mut m, &mut pe).map_err(|e| e.to_string())?;
        let mut env = Env::new(m);
        let Setup {
            argv,
            drives,
            exe_path,
            vars,
            stdin,
        } = setup;
        env.argv = argv.clone();
        env.image_base = mapped.base;
        env.drives = drives;
        env.exe_path = exe_path.clone();
        env.vars = vars;
        env.stdin = stdin;
        use crate::handles::{ConsoleKind, Object};
        env.handles
            .add_at(STD_INPUT, Object::Console(ConsoleKind::Input));
        env.handles
            .add_at(STD_OUTPUT, Object::Console(ConsoleKind::Output));
        env.handles
            .add_at(STD_ERROR, Object::Console(ConsoleKind::Error));
        // The heap comes first: loading guest DLLs may allocate.
        env.process_heap = env.new_heap();
        let pe = std::rc::Rc::new(pe);
        env.modules.list.push(Module {
            name: exe_path
                .rsplit('\\')
                .next()
                .unwrap_or("prog.exe")
                .to_string(),
            path: exe_path,
            base: mapped.base,
            size: pe.size_of_image,
            entry: mapped.base + pe.entry_rva,
            kind: Kind::Exe,
            refs: 1,
            pe: Some(pe.clone()),
            initialized: true,
        });
        if let Some(t) = pe.tls().map_err(|e| e.to_string())? {
            let delta = mapped.base.wrapping_sub(pe.image_base);
            let len = t.end_va.wrapping_sub(t.start_va);
            let mut tmpl = vec![0u8; len as usize];
            env.mem.peek(t.start_va.wrapping_add(delta), &mut tmpl);
            tmpl.extend(std::iter::repeat_n(0, t.zero_fill.min(1 << 24) as usize));
            // This image's TLS index is 0.
            env.mem.poke_u32(t.index_va.wrapping_add(delta), 0);
            env.tls_template = Some(tmpl);
        }
        let mut p = Process {
            env,
            image_base: mapped.base,
            entry: mapped.base + pe.entry_rva,
            teb: 0,
            peb: 0,
            stack_top: 0,
            stack_bottom: 0,
            calls: Default::default(),
            pending_inits: Vec::new(),
            started: false,
        };
        p.pending_inits = modules::bind_imports(&mut p.env, &pe, mapped.base)?;
        // PEB, parameters, strings.
        p.peb = alloc(&mut p.env.mem, 0x1000)?;
        let params = alloc(&mut p.env.mem, 0x1_0000)?;
        let cmd = command_line(&argv);
        let peb_ = p.peb;
        p.env.peb = peb_;
        let m = &mut p.env.mem;
        let w = |m: &mut Memory, a: u32, v: u32| m.poke_u32(a, v).expect("committed");
        w(m, peb_ + peb::IMAGE_BASE, p.image_base);
        w(m, peb_ + peb::PROCESS_PARAMETERS, params);
        w(m, peb_ + peb::NUMBER_OF_PROCESSORS, 1);
        w(m, peb_ + peb::OS_MAJOR, 6);
        w(m, peb_ + peb::OS_MINOR, 1);
        w(m, peb_ + peb::OS_BUILD, 7601);
        w(m, peb_ + peb::OS_PLATFORM, 2);
        // Command line: ANSI at params+0x1000, UTF-16 at params+0x3000;
        // RTL_USER_PROCESS_PARAMETERS.CommandLine (UNICODE_STRING) at +0x40.
        let mut a = cmd.clone().into_bytes();
        a.truncate(0x1FFF);
        a.push(0);
        m.poke(params + 0x1000, &a).expect("committed");
        let wide: Vec<u16> = cmd.encode_utf16().take(0x3FFF).collect();
        let mut wb: Vec<u8> = wide.iter().flat_map(|u| u.to_le_bytes()).collect();
        wb.extend([0, 0]);
        m.poke(params + 0x3000, &wb).expect("committed");
        let len = (wide.len() * 2) as u32;
        w(m, params + 0x40, len | (len + 2) << 16);
        w(m, params + 0x44, params + 0x3000);
        // StandardInput/Output/Error (+0x18..+0x20).
        w(m, params + 0x18, STD_INPUT);
        w(m, params + 0x1C, STD_OUTPUT);
        w(m, params + 0x20, STD_ERROR);
        let heap = p.env.process_heap;
        p.env
            .mem
            .poke_u32(peb_ + peb::PROCESS_HEAP, heap)
            .expect("committed");
        p.env.cmdline_a = params + 0x1000;
        p.env.cmdline_w = params + 0x3000;
        // The first thread: its stack as the header asks (at least 64K).
        let size = pe.stack_reserve.clamp(0x1_0000, 0x100_0000);
        let id = new_thread(&mut p.env, p.entry, 0, size)?;
        let t = p.env.threads.by_id(id).expect("just made");
        p.teb = t.teb;
        p.stack_top = t.stack_top;
        p.stack_bottom = t.stack_bottom;
        Ok(p)
    }
}

/// Creates a thread that calls `start(param)` (stdcall) and exits with its
/// result: stack of `stack_size` bytes, TEB, static TLS block. Returns its id.
pub fn new_thread(env: &mut Env, start: u32, param: u32, stack_size: u32) -> Result<u32, String> {
    let peb_addr = env.peb;
    let size = stack_size
        .clamp(0x1_0000, 0x100_0000)
        .next_multiple_of(0x1_0000);
    // Windows' layout: the lowest page of the reservation is never
    // committed and the one above it is the guard page; the rest is
    // committed here (Windows commits on demand, which no program can see
    // apart from VirtualQuery).
    let bottom = env
        .mem
        .virtual_alloc(0, size, mem::RESERVE, prot::READWRITE)
        .map_err(|e| format!("out of guest memory: {e}"))?;
    let top = bottom + size;
    let guard = bottom + PAGE_SIZE;
    let limit = guard + PAGE_SIZE;
    env.mem
        .commit(limit, top - limit, prot::READWRITE)
        .map_err(|e| format!("out of guest memory: {e}"))?;
    let teb_ = alloc(&mut env.mem, teb::SIZE)?;
    let ret = env.thunks.slot(&mut env.mem, Thunk::ThreadReturn)?;
    // [esp] = return to ThreadReturn, [esp+4] = param.
    let esp = top - 16;
    env.mem.poke_u32(esp, ret).expect("stack committed");
    env.mem.poke_u32(esp + 4, param).expect("stack committed");
    let cpu = Cpu::new_flat32(&FlatSetup {
        eip: start,
        esp,
        fs_base: teb_,
        fs_limit: 0xFFF,
    });
    let id = env.threads.add(cpu, teb_, bottom, top);
    env.threads.by_id_mut(id).expect("just added").stack_guard = Some(guard);
    let m = &mut env.mem;
    let w = |m: &mut Memory, a: u32, v: u32| m.poke_u32(a, v).expect("committed");
    w(m, teb_ + teb::EXCEPTION_LIST, 0xFFFF_FFFF);
    w(m, teb_ + teb::STACK_BASE, top);
    w(m, teb_ + teb::STACK_LIMIT, limit);
    w(m, teb_ + teb::SELF, teb_);
    w(m, teb_ + teb::PROCESS_ID, PROCESS_ID);
    w(m, teb_ + teb::THREAD_ID, id);
    w(m, teb_ + teb::PEB, peb_addr);
    w(m, teb_ + teb::TLS_POINTER, teb_ + teb::STATIC_TLS_ARRAY);
    if let Some(tmpl) = env.tls_template.clone() {
        let block = env.alloc(tmpl.len().max(4) as u32);
        env.mem.poke(block, &tmpl);
        env.mem.poke_u32(teb_ + teb::STATIC_TLS_ARRAY, block);
    }
    Ok(id)
}

impl Process {
    /// Where a test or the run loop starts: queues the start-up calls (guest
    /// DLLs' DllMain(PROCESS_ATTACH), then the program's TLS callbacks) on
    /// the first thread, which then enters the program's entry point.
    pub fn start(&mut self) -> Service {
        if self.started {
            return Service::Continue;
        }
        self.started = true;
        let mut calls: Vec<(u32, u32)> = Vec::new();
        for base in std::mem::take(&mut self.pending_inits) {
            if let Some(m) = self.env.modules.list.iter_mut().find(|m| m.base == base) {
                m.initialized = true;
                if let Some(tls) = m.pe.as_ref().and_then(|pe| pe.tls().ok().flatten()) {
                    let delta = base.wrapping_sub(m.pe.as_ref().expect("pe").image_base);
                    calls.extend(tls.callbacks.iter().map(|&c| (c.wrapping_add(delta), base)));
                }
                if m.entry != 0 {
                    calls.push((m.entry, base));
                }
            }
        }
        let exe = self.env.modules.list[0].pe.clone().expect("exe");
        if let Ok(Some(tls)) = exe.tls() {
            let delta = self.image_base.wrapping_sub(exe.image_base);
            calls.extend(
                tls.callbacks
                    .iter()
                    .map(|&c| (c.wrapping_add(delta), self.image_base)),
            );
        }
        if calls.is_empty() {
            return Service::Continue;
        }
        // Then the thread enters the entry point as it was set up.
        let (eip, esp) = {
            let c = &self.env.threads.cur().cpu;
            (c.eip, c.regs[reg::ESP])
        };
        let r = init_chain(
            &mut self.env,
            calls.into(),
            1,
            Box::new(move |env| {
                let c = env.cpu();
                c.eip = eip;
                c.regs[reg::ESP] = esp;
                Ret::Jumped
            }),
        );
        self.finish(r, Origin::Engine)
    }
}

/// Calls `f(base, reason, 0)` for each (function, module base) in order
/// (DllMain and TLS callbacks), then continues with `last`.
pub fn init_chain(
    env: &mut Env,
    mut calls: std::collections::VecDeque<(u32, u32)>,
    reason: u32,
    last: Box<dyn FnOnce(&mut Env) -> Ret>,
) -> Ret {
    match calls.pop_front() {
        None => last(env),
        Some((f, base)) => Ret::call(f, vec![base, reason, 0], move |env, _| {
            init_chain(env, calls, reason, last)
        }),
    }
}

/// The callee-popped bytes and the name of a thunk's export.
fn service_api(
    p: &mut Process,
    e: &'static crate::dll::ExportDecl,
    d: &'static crate::dll::DllDecl,
) -> Service {
    let cpu = p.env.cpu();
    let esp = cpu.regs[reg::ESP];
    let thunk = cpu.eip;
    let Some(ret) = p.env.mem.peek_u32(esp) else {
        return Service::Stop(format!("API call with an unreadable stack at {esp:#010x}"));
    };
    let mut args = Vec::with_capacity(e.args.len());
    for k in 0..e.args.len() as u32 {
        match p.env.mem.peek_u32(esp.wrapping_add(4 + 4 * k)) {
            Some(v) => args.push(v),
            None => {
                return Service::Stop(format!(
                    "{}!{}: argument {k} unreadable at {:#010x}",
                    d.name,
                    e.name,
                    esp + 4 + 4 * k
                ))
            }
        }
    }
    let t = p.env.threads.cur_mut();
    let retry = std::mem::replace(&mut t.retrying, false);
    if !retry {
        *p.calls.entry(format!("{}!{}", d.name, e.name)).or_default() += 1;
    }
    p.env.clock = p.env.threads.cur().cpu.clock;
    p.env.arg_base = esp.wrapping_add(4);
    let teb_ = p.env.teb();
    if let Some(le) = p.env.mem.peek_u32(teb_ + teb::LAST_ERROR) {
        p.env.last_error = le;
    }
    p.env.retrying = retry;
    let r = (e.imp)(&mut p.env, &args);
    p.env.retrying = false;
    if !matches!(r, Ret::Block { .. }) {
        p.env.threads.cur_mut().wait_deadline = None;
    }
    let origin = Origin::Api {
        ret,
        esp: esp.wrapping_add(4 + e.pop_bytes()),
        thunk,
    };
    p.finish(r, origin)
}

impl Process {
    /// Services a call that reached a thunk: `[ESP]` is the return address,
    /// the arguments follow. Costs no dispatch (the CALL that got here did).
    pub fn service(&mut self) -> Service {
        let eip = self.env.threads.cur().cpu.eip;
        let Some(t) = self.env.thunks.at(eip).cloned() else {
            return Service::Stop(format!("no thunk at {eip:#010x}"));
        };
        let s = match t {
            Thunk::ThreadReturn => {
                let code = self.env.threads.cur().cpu.regs[reg::EAX];
                self.finish(Ret::ExitThread(code), Origin::Engine)
            }
            Thunk::CallbackReturn => {
                let cpu = &self.env.threads.cur().cpu;
                let (eax, esp) = (cpu.regs[reg::EAX], cpu.regs[reg::ESP]);
                let frames = &mut self.env.threads.cur_mut().frames;
                // Frames the stack has been unwound past (a longjmp out of a
                // callback) are stale: drop them.
                while frames.last().is_some_and(|f| f.sp_base < esp) {
                    frames.pop();
                }
                let Some(f) = frames.pop() else {
                    return Service::Stop(format!(
                        "a guest call returned to the host with no call pending (esp {esp:#010x})"
                    ));
                };
                restore_frame(self.env.cpu(), &f);
                self.env.clock = self.env.threads.cur().cpu.clock;
                let r = (f.then)(&mut self.env, eax);
                self.finish(r, f.origin)
            }
            Thunk::Stub { dll, name } => {
                // Report the CALL's own address when it is the usual `call [IAT]` (FF 15 disp32).
                let esp = self.env.threads.cur().cpu.regs[reg::ESP];
                let ret = self.env.mem.peek_u32(esp).unwrap_or(0);
                let mut b = [0u8; 2];
                let site = match self.env.mem.peek(ret.wrapping_sub(6), &mut b) {
                    Some(()) if b == [0xFF, 0x15] => ret.wrapping_sub(6),
                    _ => ret,
                };
                Service::Stop(crate::dll::unimplemented_message(&dll, &name, site))
            }
            Thunk::Api(e, d) => service_api(self, e, d),
            Thunk::HostGuard => Service::Stop(format!(
                "the host's exception guard at {eip:#010x} was called as a function"
            )),
        };
        // The TEB mirrors the last error (code may read it directly).
        if !self.env.threads.list.is_empty() {
            let teb_ = self.env.teb();
            let le = self.env.last_error;
            self.env.mem.poke_u32(teb_ + teb::LAST_ERROR, le);
        }
        s
    }

    /// Carries out what a body or continuation answered, for a chain
    /// started by `origin`.
    pub fn finish(&mut self, r: Ret, origin: Origin) -> Service {
        match r {
            Ret::Value(_) | Ret::Value64(_) | Ret::Float(_) => match origin {
                Origin::Api { ret, esp, .. } => {
                    let cpu = self.env.cpu();
                    match r {
                        Ret::Value(v) => cpu.regs[reg::EAX] = v,
                        Ret::Value64(v) => {
                            cpu.regs[reg::EAX] = v as u32;
                            cpu.regs[reg::EDX] = (v >> 32) as u32;
                        }
                        Ret::Float(v) => crate::dll::crt::math::push_st0(cpu, v),
                        _ => unreachable!(),
                    }
                    cpu.regs[reg::ESP] = esp;
                    cpu.eip = ret;
                    Service::Continue
                }
                Origin::ThreadStart => {
                    let code = match r {
                        Ret::Value(v) => v,
                        _ => 0,
                    };
                    self.finish(Ret::ExitThread(code), Origin::Engine)
                }
                Origin::Engine => Service::Stop(
                    "internal: a host chain started by the engine ended with a value".into(),
                ),
            },
            Ret::Call(gc) => {
                let ret = match self
                    .env
                    .thunks
                    .slot(&mut self.env.mem, Thunk::CallbackReturn)
                {
                    Ok(a) => a,
                    Err(e) => return Service::Stop(e),
                };
                let sp_base = self.env.threads.cur().cpu.regs[reg::ESP];
                let mut esp = sp_base;
                for &a in gc.args.iter().rev().chain(std::iter::once(&ret)) {
                    esp = esp.wrapping_sub(4);
                    if self.env.mem.poke_u32(esp, a).is_none() {
                        return Service::Stop(format!(
                            "stack overflow calling guest function {:#010x} (esp {esp:#010x})",
                            gc.func
                        ));
                    }
                }
                let t = self.env.threads.cur_mut();
                let r = &t.cpu.regs;
                let saved = [r[reg::EBX], r[reg::ESI], r[reg::EDI], r[reg::EBP]];
                t.frames.push(Frame {
                    sp_base,
                    saved,
                    then: gc.then,
                    origin,
                });
                t.cpu.regs[reg::ESP] = esp;
                if let Some(ebp) = gc.ebp {
                    t.cpu.regs[reg::EBP] = ebp;
                }
                t.cpu.eip = gc.func;
                Service::Continue
            }
            Ret::Jumped => Service::Continue,
            Ret::Unwind { depth, value } => {
                let frames = &mut self.env.threads.cur_mut().frames;
                if frames.len() <= depth {
                    return Service::Stop("internal: unwind to a host frame that is gone".into());
                }
                frames.truncate(depth + 1);
                let f = frames.pop().expect("more than `depth` frames");
                restore_frame(self.env.cpu(), &f);
                let r = (f.then)(&mut self.env, value);
                self.finish(r, f.origin)
            }
            Ret::Block { deadline } => match origin {
                Origin::Api { thunk, .. } => {
                    let epoch = self.env.threads.epoch;
                    let t = self.env.threads.cur_mut();
                    // From a continuation EIP is at the callback-return
                    // thunk; ESP is already back at the call's (the guest
                    // call restored it), so the call is made again from
                    // its own thunk with its own arguments.
                    t.cpu.eip = thunk;
                    t.state = State::Blocked { deadline, epoch };
                    t.retrying = true;
                    Service::Continue
                }
                _ => Service::Stop("internal: a wait outside an API call".into()),
            },
            Ret::Exit(code) => Service::Exit(code),
            Ret::ExitThread(code) => {
                let t = self.env.threads.cur_mut();
                t.state = State::Exited;
                t.exit_code = code;
                t.frames.clear();
                let tid = t.id;
                // Its windows and message queue go with it (senders waiting on it get 0).
                crate::dll::msgqueue::thread_ended(&mut self.env, tid);
                self.env.threads.epoch += 1;
                if self.env.threads.any_alive() {
                    Service::Continue
                } else {
                    Service::Exit(code)
                }
            }
            Ret::Stop(s) => Service::Stop(s),
        }
    }

    /// Whether `eip` is in the thunk area (the engine services it instead of stepping).
    #[inline]
    pub fn is_thunk(&self, eip: u32) -> bool {
        self.env.thunks.contains(eip)
    }

    /// The thunk address an import binds to (shared by every importer of
    /// the same export), or a data export's variable.
    pub fn thunk_for(
        &mut self,
        dll_name: &str,
        name: &crate::pe::ImportName,
    ) -> Result<u32, String> {
        modules::bind_import(&mut self.env, dll_name, name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_quoting() {
        let s = |v: &[&str]| command_line(&v.iter().map(|x| x.to_string()).collect::<Vec<_>>());
        assert_eq!(s(&["a.exe", "b c", "", "d"]), "a.exe \"b c\" \"\" d");
    }
}

/// Puts back what a host frame saved when the guest call it made returns
/// (or is unwound): ESP at the frame's base and the callee-saved registers.
fn restore_frame(cpu: &mut Cpu, f: &Frame) {
    cpu.regs[reg::ESP] = f.sp_base;
    for (k, r) in [reg::EBX, reg::ESI, reg::EDI, reg::EBP]
        .into_iter()
        .enumerate()
    {
        cpu.regs[r] = f.saved[k];
    }
}
