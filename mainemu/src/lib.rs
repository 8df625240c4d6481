//! `mainemu`: the main engine, a 32-bit Windows user-mode emulator.
//!
//! Owns (as it grows): the guest address space ([`memory`]), the PE loader
//! ([`pe`]), the Win32 API subset (one module per DLL under [`dll`]), process
//! setup and the `mainemu` CLI. Instruction semantics are not here: they come
//! from the shared `x86-cpu` crate (issue 13: no duplicates with toyvm).
//! Designs reach the engine only after they pass their gates on toyvm.

pub mod civil;
pub mod cli;
pub mod designs;
pub mod desktop;
pub mod dll;
pub mod files;
pub mod frame;
pub mod gdi;
pub mod handles;
pub mod heap;
pub mod io;
pub mod l1;
pub mod memory;
pub mod modules;
pub mod pe;
pub mod process;
pub mod run;
pub mod seh;
pub mod survey;
pub mod threads;
pub mod thunks;
pub mod uop;
pub mod vfs;
