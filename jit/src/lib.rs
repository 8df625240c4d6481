//! `jit`: the `jit` arm's compiler and dispatcher. Hot µop programs (the
//! IR after the arm's pass set) are compiled to native code at run time with
//! Cranelift and run instead of their E1 words; everything else stays on E1.
//!
//! This crate is the one exception to ARCHITECTURE.md invariant 6 (no
//! runtime code generation): it exists to price that rule. It must keep
//! E1's meaning exactly (exits, sites, clock billing, budget checks, memory
//! through the same `MachineRuntime`), decline what it does not translate
//! (counted), and never be linked into the no-codegen arms.
//!
//! * [`ctx`]: the context block and the helpers compiled code calls.
//! * [`compile`]: IR to Cranelift to native code.
//! * [`run`]: the dispatcher that takes E1's place in the driver.

pub mod compile;
pub mod ctx;
pub mod run;

pub use compile::{Decline, Native};
pub use run::{Jit, JitStats, DEFAULT_THRESHOLD};
