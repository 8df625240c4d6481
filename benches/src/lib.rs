//! `benches`: honest speed figures.
//!
//! Owns the arm bench (whole programs, interleaved repetitions, a null band:
//! [`armbench`], with the `@wasm` arms), the statistics it reports
//! ([`stats`]) and the engine inspection ([`inspect`]: E1 and L1 machine code
//! per compiler); criterion micro-benches live in `benches/`. It measures; it never changes what a tier
//! computes, and it refuses to compare speeds of arms that disagree on the
//! guest result.

pub mod armbench;
pub mod inspect;
pub mod stats;
