//! `wasm-host`: runs toyvm compiled to wasm32-wasip1 under wasmtime, with
//! either of wasmtime's x86-64 compilers: Cranelift (optimizing) or Winch
//! (baseline). The oracle and the arm bench use it for the arms
//! `<arm>@wasm` and `<arm>@wasm-winch` (docs/wasm.md).
//!
//! Modules: [`compiler`] (arm-name suffixes, engines, loading and caching
//! the compiled module), [`clock`] (the WASI CPU-time clock the guest reads),
//! [`session`] (one toyvm session inside one instance). It must not
//! implement guest semantics: the guest is toyvm itself (crate `toyvm-wasm`).

pub mod clock;
pub mod compiler;
pub mod session;

pub use compiler::{split_arm, Compiler};
pub use session::WasmSession;
