//! What a fuzz program is before it becomes bytes: its shape and plan.
//!
//! Owns the shapes (`bytes`, `insns`, `mixed`), making program `i` of seed
//! `S` from `(S, i)` alone, turning a plan into a `.COM` image, and the
//! smaller plans the shrinker tries (items dropped, prologue features
//! cleared, bytes dropped or zeroed). It must not run programs.

use super::real16::{self, feature, Plan16};
use super::rng::Rng;
use serde::{Deserialize, Serialize};

/// How programs are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Shape {
    /// Random bytes, then `INT 20h`; half of them after the random-state
    /// prologue.
    Bytes,
    /// Random valid real-mode programs ([`real16`]).
    Insns,
    /// Even programs `bytes`, odd programs `insns`.
    Mixed,
}

impl Shape {
    pub const NAMES: &'static str = "bytes, insns or mixed";
}

impl std::str::FromStr for Shape {
    type Err = String;
    fn from_str(s: &str) -> Result<Shape, String> {
        match s {
            "bytes" => Ok(Shape::Bytes),
            "insns" => Ok(Shape::Insns),
            "mixed" => Ok(Shape::Mixed),
            _ => Err(format!("unknown shape `{s}` ({})", Shape::NAMES)),
        }
    }
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Shape::Bytes => "bytes",
            Shape::Insns => "insns",
            Shape::Mixed => "mixed",
        })
    }
}

/// The shape program `index` actually gets.
pub fn shape_of(shape: Shape, index: u64) -> Shape {
    match shape {
        Shape::Mixed if index & 1 == 0 => Shape::Bytes,
        Shape::Mixed => Shape::Insns,
        s => s,
    }
}

/// A program before assembly.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "shape", rename_all = "lowercase")]
pub enum Plan {
    /// Random bytes (then `INT 20h`), optionally after the random-state
    /// prologue (`state`, `features`).
    Bytes {
        prologue: Option<(u64, u8)>,
        bytes: Vec<u8>,
    },
    Insns(Plan16),
}

impl Plan {
    /// Program `index` of run `seed`.
    pub fn new(seed: u64, index: u64, shape: Shape) -> Plan {
        let mut r = Rng::for_program(seed, index);
        match shape_of(shape, index) {
            Shape::Insns => Plan::Insns(Plan16::random(&mut r)),
            _ => {
                let n = 8 + r.below(248) as usize;
                let bytes = (0..n).map(|_| r.u8()).collect();
                let prologue = r.chance(1, 2).then(|| (r.next_u64(), feature::ALL));
                Plan::Bytes { prologue, bytes }
            }
        }
    }

    /// The `.COM` image. A plan the assembler refuses (a generator bug,
    /// counted by the tests) loses items from its end until it assembles.
    pub fn image(&self) -> Vec<u8> {
        match self {
            Plan::Bytes { prologue, bytes } => {
                let mut v = match prologue {
                    Some((s, f)) => real16::prologue_only(*s, *f).unwrap_or_default(),
                    None => Vec::new(),
                };
                v.extend_from_slice(bytes);
                v.extend_from_slice(&[0xCD, 0x20]);
                v
            }
            Plan::Insns(p) => {
                let mut p = p.clone();
                loop {
                    match p.assemble() {
                        Ok(v) => return v,
                        Err(_) if !p.items.is_empty() => {
                            p.items.pop();
                        }
                        Err(_) => return vec![0xCD, 0x20],
                    }
                }
            }
        }
    }

    /// Whether the plan assembles as it is (the generator's own check).
    pub fn assembles(&self) -> Result<(), String> {
        match self {
            Plan::Insns(p) => p.assemble().map(|_| ()),
            Plan::Bytes {
                prologue: Some((s, f)),
                ..
            } => real16::prologue_only(*s, *f).map(|_| ()),
            Plan::Bytes { .. } => Ok(()),
        }
    }

    /// Its size in the unit the shrinker drops (items or bytes).
    pub fn units(&self) -> usize {
        match self {
            Plan::Bytes { bytes, .. } => bytes.len(),
            Plan::Insns(p) => p.items.len(),
        }
    }

    /// The plan without units `at..at + n`.
    pub fn without(&self, at: usize, n: usize) -> Plan {
        let mut p = self.clone();
        match &mut p {
            Plan::Bytes { bytes, .. } => {
                bytes.drain(at..(at + n).min(bytes.len()));
            }
            Plan::Insns(q) => {
                q.items.drain(at..(at + n).min(q.items.len()));
            }
        }
        p
    }

    /// Simpler variants of the prologue, one step each (a feature bit
    /// cleared; the bytes shape's prologue dropped).
    pub fn simpler_prologues(&self) -> Vec<Plan> {
        let features = match self {
            Plan::Bytes {
                prologue: Some((_, f)),
                ..
            } => *f,
            Plan::Insns(p) => p.features,
            _ => return Vec::new(),
        };
        let mut out = Vec::new();
        if let Plan::Bytes { bytes, .. } = self {
            out.push(Plan::Bytes {
                prologue: None,
                bytes: bytes.clone(),
            });
        }
        for (bit, _) in feature::NAMES {
            if features & bit == 0 {
                continue;
            }
            let mut p = self.clone();
            match &mut p {
                Plan::Bytes {
                    prologue: Some((_, f)),
                    ..
                } => *f &= !bit,
                Plan::Insns(q) => q.features &= !bit,
                _ => {}
            }
            out.push(p);
        }
        out
    }

    /// One line for reports: shape, size and the prologue features left.
    pub fn summary(&self) -> String {
        let names = |f: u8| -> String {
            let v: Vec<&str> = feature::NAMES
                .iter()
                .filter(|(b, _)| f & b != 0)
                .map(|(_, n)| *n)
                .collect();
            if v.is_empty() {
                "none".into()
            } else {
                v.join("+")
            }
        };
        match self {
            Plan::Bytes {
                prologue: None,
                bytes,
            } => format!("bytes: {} random bytes, no prologue", bytes.len()),
            Plan::Bytes {
                prologue: Some((_, f)),
                bytes,
            } => format!(
                "bytes: {} random bytes after the prologue ({})",
                bytes.len(),
                names(*f)
            ),
            Plan::Insns(p) => format!(
                "insns: {} items, prologue ({})",
                p.items.len(),
                names(p.features)
            ),
        }
    }
}

/// The image of program `index` of run `seed`.
pub fn generate(seed: u64, index: u64, shape: Shape) -> Vec<u8> {
    Plan::new(seed, index, shape).image()
}
