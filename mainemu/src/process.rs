//! One guest process: the main image mapped and bound, the API thunk area,
//! the first thread's stack, TEB and PEB, the command line, and the service
//! of a call that reached a thunk.
//!
//! Owns: the process layout in guest memory (what each structure holds, at
//! which offset), the thunk table (one slot per resolved export or stub,
//! allocated on demand), the calling-convention work of an API call (read
//! the dword arguments after the return address, pop the return address and
//! `4 * args` for stdcall, EAX / EDX:EAX). It must not execute guest
//! instructions (the engine steps `x86-cpu` and hands a call to
//! [`Process::service`] when EIP enters the thunk area) nor hold API bodies
//! (those are in [`crate::dll`]).

use crate::dll::{self, Env, ExportDecl, Resolution, Ret};
use crate::memory::{mem, prot, Memory};
use crate::pe::{load, ImportName, PeFile};
use x86_cpu::{reg, Cpu};

/// Where the thunk area starts; each slot is [`THUNK_SIZE`] bytes of INT3
/// (the engine intercepts EIP before fetching, so they never execute).
pub const THUNK_BASE: u32 = 0x7F00_0000;
pub const THUNK_SIZE: u32 = 16;
const THUNK_AREA: u32 = 0x10_0000;

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
}
pub mod peb {
    pub const BEING_DEBUGGED: u32 = 0x02;
    pub const IMAGE_BASE: u32 = 0x08;
    pub const PROCESS_PARAMETERS: u32 = 0x10;
    pub const PROCESS_HEAP: u32 = 0x18;
}

/// What a thunk slot stands for.
#[derive(Clone)]
pub enum Thunk {
    Api(&'static ExportDecl, &'static str),
    /// An import nothing implements: calling it stops the run.
    Stub {
        dll: String,
        name: ImportName,
    },
    /// The return address of the entry point: the process exits with EAX.
    ExitThread,
}

/// What servicing a thunk call asks of the engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Service {
    /// The call returned; carry on.
    Continue,
    /// The process ended with this exit code.
    Exit(u32),
    /// The run stops with this report.
    Stop(String),
}

/// The process.
pub struct Process {
    pub env: Env,
    pub image_base: u32,
    pub entry: u32,
    pub teb: u32,
    pub peb: u32,
    pub stack_top: u32,
    pub stack_bottom: u32,
    thunks: Vec<Thunk>,
    /// API call counts by `DLL!Name`, for the run summary.
    pub calls: std::collections::BTreeMap<String, u64>,
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

fn alloc(m: &mut Memory, size: u32) -> u32 {
    m.virtual_alloc(0, size, mem::RESERVE | mem::COMMIT, prot::READWRITE)
        .expect("fresh address space has room")
}

impl Process {
    /// Maps `exe`, binds its imports to thunks, builds stack, TEB, PEB and
    /// process parameters with `argv` as the command line.
    pub fn new(exe: &[u8], argv: &[String]) -> Result<Process, String> {
        let mut pe = PeFile::parse(exe).map_err(|e| e.to_string())?;
        if pe.is_dll() {
            return Err("a DLL cannot be run as a program".into());
        }
        let mut m = Memory::new();
        m.reserve(
            Some(THUNK_BASE),
            THUNK_AREA,
            prot::EXECUTE_READ,
            mem::PRIVATE,
        )
        .expect("thunk area free");
        let mapped = load::map(&mut m, &mut pe).map_err(|e| e.to_string())?;
        let mut env = Env::new(m);
        env.argv = argv.to_vec();
        env.image_base = mapped.base;
        let mut p = Process {
            env,
            image_base: mapped.base,
            entry: mapped.base + pe.entry_rva,
            teb: 0,
            peb: 0,
            stack_top: 0,
            stack_bottom: 0,
            thunks: Vec::new(),
            calls: Default::default(),
        };
        let mut dlls = pe.imports().map_err(|e| e.to_string())?;
        // Delay-loaded imports are bound now, like normal ones: deterministic,
        // and the program's delay helper is never reached.
        dlls.extend(pe.delay_imports().map_err(|e| e.to_string())?);
        let mut slots = Vec::new();
        for d in &dlls {
            for i in &d.imports {
                slots.push((i.iat_rva, p.thunk_for(&d.dll, &i.name)?));
            }
        }
        for (rva, addr) in slots {
            p.env
                .mem
                .poke_u32(mapped.base + rva, addr)
                .ok_or("IAT slot not mapped")?;
        }
        // The stack: reserve and commit what the header asks (at least 64K).
        let size = pe.stack_reserve.clamp(0x1_0000, 0x100_0000);
        p.stack_bottom = alloc(&mut p.env.mem, size);
        p.stack_top = p.stack_bottom + size;
        // TEB, PEB, parameters, strings: one page each.
        p.teb = alloc(&mut p.env.mem, 0x2000);
        p.peb = alloc(&mut p.env.mem, 0x1000);
        let params = alloc(&mut p.env.mem, 0x1_0000);
        let cmd = command_line(argv);
        let (teb_, peb_) = (p.teb, p.peb);
        let m = &mut p.env.mem;
        let w = |m: &mut Memory, a: u32, v: u32| m.poke_u32(a, v).expect("committed");
        w(m, teb_ + teb::EXCEPTION_LIST, 0xFFFF_FFFF);
        w(m, teb_ + teb::STACK_BASE, p.stack_top);
        w(m, teb_ + teb::STACK_LIMIT, p.stack_bottom);
        w(m, teb_ + teb::SELF, teb_);
        w(m, teb_ + teb::PROCESS_ID, 0x100);
        w(m, teb_ + teb::THREAD_ID, 0x104);
        w(m, teb_ + teb::TLS_POINTER, teb_ + teb::TLS_SLOTS);
        w(m, teb_ + teb::PEB, peb_);
        w(m, peb_ + peb::IMAGE_BASE, p.image_base);
        w(m, peb_ + peb::PROCESS_PARAMETERS, params);
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
        p.env.process_heap = p.env.new_heap();
        let heap = p.env.process_heap;
        p.env
            .mem
            .poke_u32(peb_ + peb::PROCESS_HEAP, heap)
            .expect("committed");
        p.env.cmdline_a = params + 0x1000;
        p.env.cmdline_w = params + 0x3000;
        Ok(p)
    }

    /// The thunk address an import binds to (shared by every importer of
    /// the same export).
    pub fn thunk_for(&mut self, dll_name: &str, name: &ImportName) -> Result<u32, String> {
        let t = match dll::resolve(dll_name, name) {
            Resolution::Implemented(d, e) => Thunk::Api(e, d.name),
            Resolution::Data(d, v) => return Ok(self.data_for(d.name, v)),
            Resolution::Missing { .. } => Thunk::Stub {
                dll: dll_name.to_string(),
                name: name.clone(),
            },
        };
        let same = |a: &Thunk, b: &Thunk| match (a, b) {
            (Thunk::Api(x, _), Thunk::Api(y, _)) => std::ptr::eq(*x, *y),
            (Thunk::Stub { dll: d1, name: n1 }, Thunk::Stub { dll: d2, name: n2 }) => {
                d1.eq_ignore_ascii_case(d2) && n1 == n2
            }
            _ => false,
        };
        if let Some(i) = self.thunks.iter().position(|x| same(x, &t)) {
            return Ok(THUNK_BASE + THUNK_SIZE * i as u32);
        }
        self.add_thunk(t)
    }

    /// The address of a data export's variable, allocated on first import.
    fn data_for(&mut self, dll_name: &str, v: &dll::DataDecl) -> u32 {
        let key = format!("{dll_name}!{}", v.name);
        if let Some(&a) = self.env.data.get(&key) {
            return a;
        }
        let a = alloc(&mut self.env.mem, v.size.max(4));
        self.env.mem.poke(a, v.init).expect("fresh allocation");
        self.env.data.insert(key, a);
        a
    }

    fn add_thunk(&mut self, t: Thunk) -> Result<u32, String> {
        let i = self.thunks.len() as u32;
        if (i + 1) * THUNK_SIZE > THUNK_AREA {
            return Err("thunk area full".into());
        }
        let addr = THUNK_BASE + THUNK_SIZE * i;
        if addr.is_multiple_of(0x1000) {
            self.env
                .mem
                .commit(addr, 0x1000, prot::READWRITE)
                .map_err(|e| e.to_string())?;
            self.env.mem.poke(addr, &[0xCC; 0x1000]).expect("committed");
            self.env
                .mem
                .protect(addr, 0x1000, prot::EXECUTE_READ)
                .expect("committed");
        }
        self.thunks.push(t);
        Ok(addr)
    }

    /// The address the entry point returns to (the process then exits with EAX).
    pub fn exit_thunk(&mut self) -> u32 {
        if let Some(i) = self
            .thunks
            .iter()
            .position(|t| matches!(t, Thunk::ExitThread))
        {
            return THUNK_BASE + THUNK_SIZE * i as u32;
        }
        self.add_thunk(Thunk::ExitThread)
            .expect("room for one thunk")
    }

    /// Whether `eip` is in the thunk area (the engine services it instead of stepping).
    pub fn is_thunk(&self, eip: u32) -> bool {
        eip.wrapping_sub(THUNK_BASE) < THUNK_SIZE * self.thunks.len() as u32
    }

    /// Registers for the first instruction: EIP at the entry point, ESP on a
    /// stack whose top dword returns to the exit thunk.
    pub fn initial_esp(&mut self) -> u32 {
        let ret = self.exit_thunk();
        let esp = self.stack_top - 16;
        self.env.mem.poke_u32(esp, ret).expect("stack committed");
        esp
    }

    /// Services a call that reached a thunk: `[ESP]` is the return address,
    /// the arguments follow. Costs no dispatch (the CALL that got here did).
    pub fn service(&mut self, cpu: &mut Cpu) -> Service {
        let i = ((cpu.eip - THUNK_BASE) / THUNK_SIZE) as usize;
        let esp = cpu.regs[reg::ESP];
        let Some(ret) = self.env.mem.peek_u32(esp) else {
            return Service::Stop(format!("API call with an unreadable stack at {esp:#010x}"));
        };
        match self.thunks[i].clone() {
            Thunk::ExitThread => Service::Exit(cpu.regs[reg::EAX]),
            Thunk::Stub { dll, name } => {
                // Report the CALL's own address when it is the usual `call [IAT]` (FF 15 disp32).
                let mut b = [0u8; 2];
                let site = match self.env.mem.peek(ret.wrapping_sub(6), &mut b) {
                    Some(()) if b == [0xFF, 0x15] => ret.wrapping_sub(6),
                    _ => ret,
                };
                Service::Stop(dll::unimplemented_message(&dll, &name, site))
            }
            Thunk::Api(e, dll_name) => {
                let mut args = Vec::with_capacity(e.args.len());
                for k in 0..e.args.len() as u32 {
                    match self.env.mem.peek_u32(esp.wrapping_add(4 + 4 * k)) {
                        Some(v) => args.push(v),
                        None => {
                            return Service::Stop(format!(
                                "{dll_name}!{}: argument {k} unreadable at {:#010x}",
                                e.name,
                                esp + 4 + 4 * k
                            ))
                        }
                    }
                }
                *self
                    .calls
                    .entry(format!("{dll_name}!{}", e.name))
                    .or_default() += 1;
                self.env.clock = cpu.clock;
                self.env.arg_base = esp.wrapping_add(4);
                match (e.imp)(&mut self.env, &args) {
                    Ret::Exit(code) => return Service::Exit(code),
                    Ret::Chain(fns) if !fns.is_empty() => {
                        // [esp] stays the caller's return address; below it the
                        // entry addresses of fns[1..], so each `ret` enters the next
                        // and the last returns to the caller with ESP = esp + 4.
                        let n = fns.len() as u32;
                        let new_esp = esp.wrapping_sub(4 * (n - 1));
                        for (k, &f) in fns[1..].iter().enumerate() {
                            if self.env.mem.poke_u32(new_esp + 4 * k as u32, f).is_none() {
                                return Service::Stop("stack overflow chaining _initterm".into());
                            }
                        }
                        cpu.regs[reg::ESP] = new_esp;
                        cpu.eip = fns[0];
                        return Service::Continue;
                    }
                    Ret::Chain(_) => {}
                    Ret::Value(v) => cpu.regs[reg::EAX] = v,
                    Ret::Value64(v) => {
                        cpu.regs[reg::EAX] = v as u32;
                        cpu.regs[reg::EDX] = (v >> 32) as u32;
                    }
                }
                cpu.regs[reg::ESP] = esp.wrapping_add(4 + e.pop_bytes());
                cpu.eip = ret;
                Service::Continue
            }
        }
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
