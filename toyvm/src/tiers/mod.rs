//! The tier drivers that make the µop arms of ARCHITECTURE.md, and toyvm's
//! run-time adapter for `shared_ir::machine::MachineRuntime`.
//!
//! * [`only`]: the `only-naive` arm (every instruction through naive µop
//!   programs on E1; L1's machinery for single fallback instructions, spin
//!   sites and budget tails).
//! * [`l1side`]: the L1 blocks those arms keep and how they run.
//! * [`runtime`]: the DOS machine as E1 sees it.
//! * [`code`]: which bytes the arms' code came from, and E1's page view.
//! * [`census`]: density and coverage figures over programs.
//! * [`conformance`]: SingleStepTests vectors through naive µop programs.
//!
//! These modules own driving only: instruction semantics are the CPU's (L1
//! side) and `shared_ir`'s lowering (µop side); they must never change what
//! the guest observes.

pub mod census;
pub mod code;
pub mod conformance;
pub mod l1side;
pub mod only;
pub mod runtime;

pub use only::OnlyNaive;
