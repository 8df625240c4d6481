//! `shared-ir`: everything both VMs share about executing x86.
//!
//! Owns the x86 arithmetic and flag semantics (the lazy-flag record in [`flags`],
//! the ALU helpers in [`alu`]), and, as the lab grows, the µop IR, the naive
//! lowering, the optimizer passes, the reference interpreter and the E1 engine
//! with its arena. It knows nothing of DOS, Windows or any machine's devices:
//! machines plug in through traits defined here.

pub mod alu;
pub mod e1;
pub mod exit;
pub mod flags;
pub mod ir;
pub mod lower;
pub mod machine;
pub mod opt;
pub mod refinterp;
pub mod region;
pub mod testkit;
pub mod tier;
