//! `benches`: honest speed figures.
//!
//! Owns the arm bench (whole programs, interleaved repetitions, a null band:
//! [`armbench`]) and the statistics it reports ([`stats`]); later criterion
//! micro-benches (E1 transition cost, lowering and encode cost) and the
//! wasmtime engine comparison. It measures; it never changes what a tier
//! computes, and it refuses to compare speeds of arms that disagree on the
//! guest result.

pub mod armbench;
pub mod stats;
