//! Helpers shared by x86-cpu's integration tests.

pub mod flatram;
