//! Hardware-vector conformance: SingleStepTests data run against the CPU.
//!
//! [`moo`] parses the vectors; [`runner`] runs them on a flat test bus with
//! the masks and 286-versus-386 adjustments of FORMAT.md and reports per file.
//! [`test386`] runs the test386.asm ROM (real and protected mode, paging,
//! rings, V86) and compares its printed results with the reference.
//! Nothing here is used by the DOS machine.

pub mod moo;
pub mod runner;
pub mod test386;
