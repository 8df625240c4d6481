//! `toyvm`: a small DOS VM, the lab's proving ground for execution tiers.
//!
//! Uses the 386-class CPU of `x86-cpu` ([`cpu`]) and its interface to memory and
//! ports ([`bus`]); later the machine (memory, PIC, PIT, keyboard, VGA, Sound
//! Blaster), DOS and BIOS services, loaders, the L1 threaded tier, the tier
//! drivers that make the arms, the session and the `toyvm` CLI.
//! Arithmetic and flag semantics come from `shared-ir`, never from here.

pub mod bios;
pub mod bus;
pub mod conformance;
/// The CPU lives in `x86-cpu` (shared with mainemu); `toyvm::cpu` names it.
pub use x86_cpu as cpu;
pub mod dos;
pub mod frame;
pub mod host_clock;
pub mod l1;
pub mod loader;
pub mod machine;
pub mod sample;
pub mod session;
/// µop arms integration point: the tier drivers (`toyvm/src/tiers/`).
pub mod tiers;
