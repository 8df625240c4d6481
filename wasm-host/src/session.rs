//! One toyvm session inside one wasmtime instance of the toyvm module.
//!
//! Owns the instance (store, WASI context with the preopened directories
//! the session's files live in), the calls into the module's session API
//! (`toyvm-wasm`'s ABI) and decoding their answers into toyvm's own types
//! (`Sample`, `Frame`). A trap (a guest panic, an out-of-bounds access)
//! poisons the session: every later call reports the same error. It must
//! not compare or judge: the oracle does.

use crate::compiler::{self, Compiler};
use std::path::{Path, PathBuf};
use toyvm::frame::Frame;
use toyvm::sample::Sample;
use toyvm::session::Config;
use wasmtime::{Instance, Linker, Memory, Store, TypedFunc};
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::{FsPerms, WasiCtxBuilder};

struct Host {
    wasi: WasiP1Ctx,
}

/// A session running inside the wasm module.
pub struct WasmSession {
    store: Store<Host>,
    memory: Memory,
    compiler: Compiler,
    arm: String,
    run_until: TypedFunc<u64, i32>,
    next_frame_edge: TypedFunc<u64, u64>,
    clock_fn: TypedFunc<(), u64>,
    ended_fn: TypedFunc<(), i32>,
    ram_ptr: TypedFunc<(), u32>,
    ram_len: TypedFunc<(), u32>,
    out_ptr: TypedFunc<(), u32>,
    out_len: TypedFunc<(), u32>,
    read_lin: TypedFunc<(u32, u32), i32>,
    instance: Instance,
    /// Cached after every call that can move them.
    clock: u64,
    ended: bool,
    ram: (usize, usize),
    poisoned: Option<String>,
}

/// The directories a configuration's files live in, made absolute.
fn absolute(p: &Path) -> Result<PathBuf, String> {
    std::fs::canonicalize(p).map_err(|e| format!("{}: {e}", p.display()))
}

fn utf8(p: &Path) -> Result<String, String> {
    p.to_str()
        .map(str::to_string)
        .ok_or_else(|| format!("{}: not a UTF-8 path (WASI needs one)", p.display()))
}

impl WasmSession {
    /// Opens `cfg` (whose `arm` is the inner, native arm name) under
    /// `compiler`. Host paths are made absolute and their directories
    /// preopened at the same paths in the guest (read-only; the output
    /// directory read-write).
    pub fn open(cfg: &Config, compiler: Compiler) -> Result<WasmSession, String> {
        let compiled = compiler::compiled(compiler)?;
        let mut cfg = cfg.clone();
        let mut dirs: Vec<(PathBuf, FsPerms)> = Vec::new();
        let mut add_dir = |d: &Path, perms: FsPerms| {
            if !dirs.iter().any(|(x, _)| x == d) {
                dirs.push((d.to_path_buf(), perms));
            }
        };
        cfg.program.path = absolute(&cfg.program.path)?;
        add_dir(
            cfg.program.path.parent().unwrap_or(Path::new("/")),
            FsPerms::ReadOnly,
        );
        for c in &mut cfg.companions {
            c.path = absolute(&c.path)?;
            add_dir(c.path.parent().unwrap_or(Path::new("/")), FsPerms::ReadOnly);
        }
        for f in &mut cfg.files {
            *f = absolute(f)?;
            add_dir(f.parent().unwrap_or(Path::new("/")), FsPerms::ReadOnly);
        }
        if let Some(o) = &mut cfg.out_dir {
            std::fs::create_dir_all(&*o).map_err(|e| format!("{}: {e}", o.display()))?;
            *o = absolute(o)?;
            dirs.retain(|(d, _)| d != o);
            dirs.push((o.clone(), FsPerms::ReadWrite));
        }
        let mut b = WasiCtxBuilder::new();
        b.inherit_stderr().allow_blocking_current_thread(true);
        for (d, perms) in &dirs {
            b.preopened_dir(d, utf8(d)?, *perms)
                .map_err(|e| format!("{}: {e:#}", d.display()))?;
        }
        let host = Host { wasi: b.build_p1() };
        let mut store = Store::new(&compiled.engine, host);
        let mut linker: Linker<Host> = Linker::new(&compiled.engine);
        let wire = |l: &mut Linker<Host>| -> wasmtime::Result<()> {
            wasmtime_wasi::p1::add_to_linker_sync(l, |h: &mut Host| &mut h.wasi)?;
            crate::clock::define(l)
        };
        wire(&mut linker).map_err(|e| format!("wasm host: {e:#}"))?;
        let instance = linker
            .instantiate(&mut store, &compiled.module)
            .map_err(|e| format!("instantiating the toyvm module: {e:#}"))?;
        if let Ok(init) = instance.get_typed_func::<(), ()>(&mut store, "_initialize") {
            init.call(&mut store, ())
                .map_err(|e| format!("toyvm module _initialize: {e:#}"))?;
        }
        let memory = instance
            .get_memory(&mut store, "memory")
            .ok_or("the toyvm module exports no memory")?;
        macro_rules! f {
            ($name:literal) => {
                instance
                    .get_typed_func(&mut store, $name)
                    .map_err(|e| format!("toyvm module export {}: {e:#}", $name))?
            };
        }
        let mut s = WasmSession {
            memory,
            compiler,
            arm: format!("{}@{}", cfg.arm, compiler.suffix()),
            run_until: f!("tw_run_until"),
            next_frame_edge: f!("tw_next_frame_edge"),
            clock_fn: f!("tw_clock"),
            ended_fn: f!("tw_ended"),
            ram_ptr: f!("tw_ram_ptr"),
            ram_len: f!("tw_ram_len"),
            out_ptr: f!("tw_out_ptr"),
            out_len: f!("tw_out_len"),
            read_lin: f!("tw_read_lin"),
            instance,
            clock: 0,
            ended: false,
            ram: (0, 0),
            poisoned: None,
            store,
        };
        let json = serde_json::to_vec(&cfg).map_err(|e| e.to_string())?;
        let alloc: TypedFunc<u32, u32> = s.func("tw_alloc")?;
        let ptr = s.call(&alloc, json.len() as u32)?;
        s.memory
            .write(&mut s.store, ptr as usize, &json)
            .map_err(|e| format!("writing the config into the module: {e}"))?;
        let open: TypedFunc<(u32, u32), i32> = s.func("tw_open")?;
        let status = s.call(&open, (ptr, json.len() as u32))?;
        s.answer_of(status)?;
        s.refresh()?;
        Ok(s)
    }

    fn func<P: wasmtime::WasmParams, R: wasmtime::WasmResults>(
        &mut self,
        name: &str,
    ) -> Result<TypedFunc<P, R>, String> {
        self.instance
            .get_typed_func(&mut self.store, name)
            .map_err(|e| format!("toyvm module export {name}: {e:#}"))
    }

    fn call<P: wasmtime::WasmParams, R: wasmtime::WasmResults>(
        &mut self,
        f: &TypedFunc<P, R>,
        args: P,
    ) -> Result<R, String> {
        if let Some(e) = &self.poisoned {
            return Err(e.clone());
        }
        f.call(&mut self.store, args).map_err(|e| {
            let msg = format!(
                "arm {} trapped (the guest panicked or faulted; its message, if any, is on stderr): {e:#}",
                self.arm
            );
            self.poisoned = Some(msg.clone());
            msg
        })
    }

    /// The output buffer after a call that returned `status`.
    fn answer_of(&mut self, status: i32) -> Result<Vec<u8>, String> {
        let (p, n) = (self.out_ptr.clone(), self.out_len.clone());
        let ptr = self.call(&p, ())? as usize;
        let len = self.call(&n, ())? as usize;
        let bytes = self
            .memory
            .data(&self.store)
            .get(ptr..ptr + len)
            .ok_or("the toyvm module's answer lies outside its memory")?
            .to_vec();
        match status {
            0 => Ok(bytes),
            _ => Err(String::from_utf8_lossy(&bytes).into_owned()),
        }
    }

    fn ask(&mut self, name: &str) -> Result<Vec<u8>, String> {
        let f: TypedFunc<(), i32> = self.func(name)?;
        let status = self.call(&f, ())?;
        self.answer_of(status)
    }

    fn refresh(&mut self) -> Result<(), String> {
        let (c, e, p, n) = (
            self.clock_fn.clone(),
            self.ended_fn.clone(),
            self.ram_ptr.clone(),
            self.ram_len.clone(),
        );
        self.clock = self.call(&c, ())?;
        self.ended = self.call(&e, ())? != 0;
        let ptr = self.call(&p, ())? as usize;
        let len = self.call(&n, ())? as usize;
        if self.memory.data(&self.store).get(ptr..ptr + len).is_none() {
            return Err("the toyvm module's RAM lies outside its memory".into());
        }
        self.ram = (ptr, len);
        Ok(())
    }

    /// The arm name (`INNER@wasm` or `INNER@wasm-winch`).
    pub fn arm(&self) -> &str {
        &self.arm
    }

    pub fn compiler(&self) -> Compiler {
        self.compiler
    }

    /// The guest clock (dispatches).
    pub fn clock(&self) -> u64 {
        self.clock
    }

    /// Whether the run has ended.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// Runs until the clock reaches `target` or the run ends.
    pub fn run_until(&mut self, target: u64) -> Result<(), String> {
        let f = self.run_until.clone();
        let status = self.call(&f, target)?;
        self.answer_of(status)?;
        self.refresh()
    }

    /// The first frame edge at or after `from`.
    pub fn next_frame_edge(&mut self, from: u64) -> Result<u64, String> {
        let f = self.next_frame_edge.clone();
        self.call(&f, from)
    }

    /// The sample where the session stands (devices brought to the clock).
    pub fn sample(&mut self) -> Result<Sample, String> {
        let b = self.ask("tw_sample")?;
        serde_json::from_slice(&b).map_err(|e| format!("the module's sample: {e}"))
    }

    /// Guest RAM, read in place from linear memory.
    pub fn ram(&self) -> &[u8] {
        let (p, n) = self.ram;
        &self.memory.data(&self.store)[p..p + n]
    }

    /// The current frame.
    pub fn frame(&mut self) -> Result<Frame, String> {
        let b = self.ask("tw_frame")?;
        if b.len() < 8 {
            return Err("the module's frame is truncated".into());
        }
        let width = u32::from_le_bytes(b[0..4].try_into().unwrap());
        let height = u32::from_le_bytes(b[4..8].try_into().unwrap());
        Ok(Frame {
            width,
            height,
            rgb: b[8..].to_vec(),
        })
    }

    /// The engine's counters inside the module.
    pub fn counters(&mut self) -> Result<Option<serde_json::Value>, String> {
        let b = self.ask("tw_counters")?;
        serde_json::from_slice(&b).map_err(|e| format!("the module's counters: {e}"))
    }

    /// What the engine says about the current site.
    pub fn describe_site(&mut self) -> Result<Option<String>, String> {
        let b = self.ask("tw_describe_site")?;
        serde_json::from_slice(&b).map_err(|e| format!("the module's site: {e}"))
    }

    /// The console (printed text, then the text screen).
    pub fn console(&mut self) -> Result<String, String> {
        let b = self.ask("tw_console")?;
        Ok(String::from_utf8_lossy(&b).into_owned())
    }

    /// `n` bytes of guest memory from linear address `lin`.
    pub fn read_lin(&mut self, lin: u32, n: usize) -> Result<Vec<u8>, String> {
        let f = self.read_lin.clone();
        let status = self.call(&f, (lin, n as u32))?;
        self.answer_of(status)
    }
}
