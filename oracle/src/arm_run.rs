//! One arm's run as the oracle drives it: a native toyvm session, or (with
//! the `wasm` feature) a toyvm session inside the wasm module under
//! wasmtime (`<arm>@wasm`, `<arm>@wasm-winch`).
//!
//! Owns the [`ArmRun`] trait (run forward, take a sample, read RAM, frame,
//! console, counters, site, memory) and its two implementations. Every
//! value comes from toyvm's own code (`Session::sample` on both sides), so
//! "equal" means the same thing for every arm. It must not compare: that is
//! [`crate::compare`].

use crate::spec::panic_text;
use std::collections::BTreeMap;
use toyvm::frame::Frame;
use toyvm::sample::Sample;
use toyvm::session::Session;

/// A run of one arm the oracle can drive and inspect.
pub trait ArmRun {
    /// The guest clock (dispatches).
    fn clock(&self) -> u64;
    /// Whether the run has ended (budget, exit or stop).
    fn ended(&self) -> bool;
    /// Runs until the clock reaches `target` or the run ends; Err when the
    /// arm itself failed (a toyvm panic, a wasm trap).
    fn try_run_until(&mut self, target: u64) -> Result<(), String>;
    /// The first frame edge at or after `from`.
    fn next_frame_edge(&mut self, from: u64) -> u64;
    /// The sample where the run stands (devices brought to the clock).
    fn sample(&mut self) -> Result<Sample, String>;
    /// Guest RAM.
    fn ram(&self) -> &[u8];
    /// The current frame.
    fn frame(&mut self) -> Frame;
    /// The console: what was printed, then the text screen.
    fn console(&mut self) -> String;
    /// The engine's performance counters.
    fn counters(&mut self) -> Option<serde_json::Value>;
    /// What the engine says about the site at the current CS:IP.
    fn describe_site(&mut self) -> Option<String>;
    /// `n` bytes of guest memory from linear address `lin`.
    fn read_lin(&mut self, lin: u32, n: usize) -> Vec<u8>;
    /// Interrupts taken so far, by vector.
    fn interrupts(&mut self) -> BTreeMap<u8, u64> {
        self.sample().map(|s| s.interrupts).unwrap_or_default()
    }
}

impl ArmRun for Session {
    fn clock(&self) -> u64 {
        Session::clock(self)
    }
    fn ended(&self) -> bool {
        self.end.is_some()
    }
    fn try_run_until(&mut self, target: u64) -> Result<(), String> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.run_until(target);
        }))
        .map_err(|p| panic_text(&*p))
    }
    fn next_frame_edge(&mut self, from: u64) -> u64 {
        Session::next_frame_edge(self, from)
    }
    fn sample(&mut self) -> Result<Sample, String> {
        Ok(Session::sample(self))
    }
    fn ram(&self) -> &[u8] {
        self.machine.mem.ram()
    }
    fn frame(&mut self) -> Frame {
        Session::frame(self)
    }
    fn console(&mut self) -> String {
        toyvm::sample::console_dump(self)
    }
    fn counters(&mut self) -> Option<serde_json::Value> {
        Session::counters(self)
    }
    fn describe_site(&mut self) -> Option<String> {
        Session::describe_site(self)
    }
    fn read_lin(&mut self, lin: u32, n: usize) -> Vec<u8> {
        self.machine.read_lin(lin, n)
    }
    fn interrupts(&mut self) -> BTreeMap<u8, u64> {
        self.interrupts.clone()
    }
}

/// A trapped wasm session answers what it can: an empty frame, no
/// counters. The trap itself surfaces through `try_run_until` and `sample`.
#[cfg(feature = "wasm")]
impl ArmRun for wasm_host::WasmSession {
    fn clock(&self) -> u64 {
        wasm_host::WasmSession::clock(self)
    }
    fn ended(&self) -> bool {
        wasm_host::WasmSession::ended(self)
    }
    fn try_run_until(&mut self, target: u64) -> Result<(), String> {
        self.run_until(target)
    }
    fn next_frame_edge(&mut self, from: u64) -> u64 {
        wasm_host::WasmSession::next_frame_edge(self, from).unwrap_or(u64::MAX)
    }
    fn sample(&mut self) -> Result<Sample, String> {
        wasm_host::WasmSession::sample(self)
    }
    fn ram(&self) -> &[u8] {
        wasm_host::WasmSession::ram(self)
    }
    fn frame(&mut self) -> Frame {
        wasm_host::WasmSession::frame(self).unwrap_or_else(|_| Frame::filled(0, 0, [0; 3]))
    }
    fn console(&mut self) -> String {
        wasm_host::WasmSession::console(self).unwrap_or_else(|e| format!("({e})"))
    }
    fn counters(&mut self) -> Option<serde_json::Value> {
        wasm_host::WasmSession::counters(self).ok().flatten()
    }
    fn describe_site(&mut self) -> Option<String> {
        wasm_host::WasmSession::describe_site(self).ok().flatten()
    }
    fn read_lin(&mut self, lin: u32, n: usize) -> Vec<u8> {
        wasm_host::WasmSession::read_lin(self, lin, n).unwrap_or_else(|_| vec![0; n])
    }
}
