//! Bisection: narrow a differing sample window to the first differing
//! dispatch.
//!
//! Runs are deterministic, so a re-run is exact: both arms are re-run from
//! scratch to the last agreeing dispatch, then stepped forward in `fanout`
//! sub-slices (2 = interval halving) until a sub-slice differs; that
//! sub-slice becomes the window and the arms are re-run from scratch to its
//! start; the last level steps single dispatches. At the first differing
//! dispatch D it records the common state at D-1, the instruction there
//! (disassembled), what each arm says about the site, both states at D, and
//! where RAM, frame and console differ. Owns that search and the divergence
//! record. It must not print or write files.

use crate::arm_run::ArmRun;
use crate::compare::advance;
use crate::disasm;
use crate::slicing::SliceDep;
use crate::spec::RunSpec;
use crate::state::{same_ram, State};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
type Pair = [Box<dyn ArmRun>; 2];

/// The instruction that ran at the first differing dispatch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Instruction {
    pub cs: u16,
    pub ip: u32,
    /// Its bytes, spaced hex.
    pub bytes: String,
    /// Intel syntax.
    pub text: String,
    /// What happened before it in the same dispatch, if anything (an
    /// interrupt taken, a halted CPU).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

impl Instruction {
    pub fn line(&self) -> String {
        let mut s = format!(
            "{:04X}:{:04X}  {:<24} {}",
            self.cs, self.ip, self.bytes, self.text
        );
        if !self.note.is_empty() {
            s.push_str(&format!("  ({})", self.note));
        }
        s
    }
}

/// A run of differing RAM bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RamDiff {
    /// Physical address, hex.
    pub addr: String,
    pub len: u32,
    /// The first bytes of each arm there, spaced hex.
    pub a: String,
    pub b: String,
}

/// The first differing dispatch of two arms, and everything shown about it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Divergence {
    pub arms: [String; 2],
    /// The first dispatch after which the two arms' states differ.
    pub dispatch: u64,
    /// The sample window the lockstep run found (last agreeing, first differing).
    pub window: (u64, u64),
    /// Fields that differ at `dispatch`.
    pub fields: Vec<String>,
    pub instruction: Option<Instruction>,
    /// What each arm says about the site at dispatch - 1.
    pub sites: [Option<String>; 2],
    /// The common state at dispatch - 1.
    pub before: State,
    /// Both states at `dispatch`.
    pub states: [State; 2],
    /// Where RAM differs (first runs only).
    pub ram: Vec<RamDiff>,
    /// How the frames differ, if they do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<String>,
    /// The last lines of each console, if they differ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub console: Option<[String; 2]>,
    /// Re-runs from scratch the search took.
    pub reruns: u32,
}

/// How many RAM difference runs a divergence lists.
const MAX_RAM_DIFFS: usize = 8;

fn fresh(spec: &RunSpec, arms: &[String; 2], to: u64) -> Result<Pair, String> {
    let mut a = spec.open(&arms[0])?;
    let mut b = spec.open(&arms[1])?;
    advance(a.as_mut(), &arms[0], to)?;
    advance(b.as_mut(), &arms[1], to)?;
    Ok([a, b])
}

/// Both arms' states where they stand, and whether they agree (RAM
/// compared directly; RAM hashes filled in only when they differ).
fn compare_now(s: &mut Pair) -> (State, State, bool) {
    let mut a = State::capture_light(s[0].as_mut());
    let mut b = State::capture_light(s[1].as_mut());
    let same = a == b && same_ram(s[0].as_ref(), s[1].as_ref());
    if !same {
        a.fill_ram_hash(s[0].as_ref());
        b.fill_ram_hash(s[1].as_ref());
    }
    (a, b, same)
}

fn step(s: &mut Pair, arms: &[String; 2], to: u64) -> Result<(State, State, bool), String> {
    advance(s[0].as_mut(), &arms[0], to)?;
    advance(s[1].as_mut(), &arms[1], to)?;
    Ok(compare_now(s))
}

/// Why bisection did not land: an error running an arm, or a divergence
/// that did not reproduce with finer slices, with the slice-dependent arms
/// the slice-plan check found (each with its two plans and states).
#[derive(Clone, Debug)]
pub struct BisectError {
    pub message: String,
    pub slice_deps: Vec<SliceDep>,
}

impl std::fmt::Display for BisectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<String> for BisectError {
    fn from(message: String) -> Self {
        BisectError {
            message,
            slice_deps: Vec::new(),
        }
    }
}

impl From<BisectError> for String {
    fn from(e: BisectError) -> String {
        e.message
    }
}

fn unstable(spec: &RunSpec, arms: &[String; 2], lo: u64, hi: u64) -> BisectError {
    let (deps, errors) = crate::slicing::find(spec, arms, lo, hi);
    let mut what: Vec<String> = deps.iter().map(|d| d.describe()).collect();
    what.extend(errors);
    if what.is_empty() {
        what.push("no slice plan tried (crate::slicing::plans) tells which arm".to_string());
    }
    BisectError {
        message: format!(
            "the divergence of {} from {} did not reproduce between dispatches {lo} and {hi} when \
             re-run with finer slices: one of the arms changes behaviour with where the run is \
             sliced (itself a bug: invariant 2 wants every engine to stop at an exact dispatch \
             without effect)\n{}",
            arms[1],
            arms[0],
            what.join("\n")
        ),
        slice_deps: deps,
    }
}

/// Narrows the window (`lo` agrees, `hi` differs) to the first differing
/// dispatch of `arms[1]` against `arms[0]`. `fanout` >= 2 sub-slices per level.
pub fn bisect(
    spec: &RunSpec,
    arms: &[String; 2],
    lo: u64,
    hi: u64,
    fanout: u64,
) -> Result<Divergence, BisectError> {
    let window = (lo, hi);
    let k = fanout.max(2);
    let (mut lo, mut hi) = (lo, hi.max(lo + 1));
    let mut reruns = 1u32;
    let mut s = fresh(spec, arms, lo)?;
    {
        let (_, _, same) = compare_now(&mut s);
        if !same {
            if lo == 0 {
                return finish(spec, s, arms, 0, window, reruns, None);
            }
            // They agreed at `lo` when sampled, not when run straight there.
            return Err(unstable(spec, arms, 0, lo));
        }
    }
    loop {
        let width = hi - lo;
        if width == 1 {
            return finish(spec, s, arms, hi, window, reruns, Some(lo));
        }
        let sub = width.div_ceil(k);
        if sub == 1 {
            // Last level: single dispatches; the sessions stay usable.
            while lo + 1 < hi {
                let pre = Pre::take(&mut s);
                let (a, b, same) = step(&mut s, arms, lo + 1)?;
                if !same {
                    return Ok(pre.divergence(&mut s, arms, lo + 1, window, reruns, a, b));
                }
                lo += 1;
            }
            return finish(spec, s, arms, hi, window, reruns, Some(lo));
        }
        // Step sub-slices up to (not including) `hi`, known to differ.
        let mut cur = lo;
        let mut found = None;
        while cur + sub < hi {
            let (_, _, same) = step(&mut s, arms, cur + sub)?;
            if !same {
                found = Some(cur + sub);
                break;
            }
            cur += sub;
        }
        match found {
            Some(at) => {
                lo = cur;
                hi = at;
                reruns += 1;
                s = fresh(spec, arms, lo)?;
            }
            None => lo = cur,
        }
    }
}

/// The last step, from `D-1` (sessions there) to `D`.
fn finish(
    spec: &RunSpec,
    mut s: Pair,
    arms: &[String; 2],
    d: u64,
    window: (u64, u64),
    reruns: u32,
    from: Option<u64>,
) -> Result<Divergence, BisectError> {
    let Some(lo) = from else {
        // Different from dispatch 0: nothing ran.
        let (mut a, mut b, _) = compare_now(&mut s);
        a.fill_ram_hash(s[0].as_ref());
        b.fill_ram_hash(s[1].as_ref());
        let pre = Pre {
            before: a.clone(),
            instruction: None,
            sites: [s[0].describe_site(), s[1].describe_site()],
            ivt: Vec::new(),
            interrupts: BTreeMap::new(),
            halted: false,
        };
        return Ok(pre.divergence(&mut s, arms, 0, window, reruns, a, b));
    };
    let pre = Pre::take(&mut s);
    let (a, b, same) = step(&mut s, arms, d)?;
    if same {
        return Err(unstable(spec, arms, lo, d));
    }
    Ok(pre.divergence(&mut s, arms, d, window, reruns, a, b))
}

/// What is known at D-1, before the last step.
struct Pre {
    before: State,
    instruction: Option<Instruction>,
    sites: [Option<String>; 2],
    ivt: Vec<u8>,
    interrupts: BTreeMap<u8, u64>,
    halted: bool,
}

fn insn_at(s: &mut dyn ArmRun, cs: u16, ip: u32) -> Instruction {
    let lin = ((cs as u32) << 4).wrapping_add(ip & 0xFFFF);
    let bytes = s.read_lin(lin, 15);
    let (len, text) =
        if bytes[0] == 0xFE && bytes[1] == 0x38 && (0xF_0000..0x10_0000).contains(&lin) {
            // toyvm's host-service instruction in the BIOS ROM (see cpu::l0).
            let n = u16::from_le_bytes([bytes[2], bytes[3]]);
            (4, format!("host call {n:04X}h (toyvm BIOS/DOS service)"))
        } else {
            disasm::one(&bytes, ip)
        };
    Instruction {
        cs,
        ip,
        bytes: disasm::hex_bytes(&bytes[..len.min(bytes.len())]),
        text,
        note: String::new(),
    }
}

impl Pre {
    fn take(s: &mut Pair) -> Pre {
        // Capture both: a capture brings the devices to the clock, and the
        // two arms must see the same sampling history.
        let sample = s[0].sample();
        let before = match &sample {
            Ok(x) => {
                let mut b = State::from_sample(x);
                b.fill_ram_hash(s[0].as_ref());
                b
            }
            Err(_) => State::capture(s[0].as_mut()),
        };
        let sample = sample.unwrap_or_default();
        let _ = State::capture_light(s[1].as_mut());
        let a = s[0].as_mut();
        let instruction = Some(insn_at(a, before.cs, before.ip));
        let ivt = a.ram()[..1024].to_vec();
        Pre {
            before,
            instruction,
            sites: [s[0].describe_site(), s[1].describe_site()],
            ivt,
            interrupts: sample.interrupts,
            halted: sample.halted,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn divergence(
        mut self,
        s: &mut Pair,
        arms: &[String; 2],
        d: u64,
        window: (u64, u64),
        reruns: u32,
        a: State,
        b: State,
    ) -> Divergence {
        // An interrupt taken at the boundary ran before the instruction:
        // the instruction of this dispatch is then the handler's first.
        let now = s[0].interrupts();
        let taken: Vec<u8> = now
            .iter()
            .filter(|(v, n)| self.interrupts.get(v).copied().unwrap_or(0) < **n)
            .map(|(v, _)| *v)
            .collect();
        if let Some(&v) = taken.first() {
            if self.ivt.len() >= 1024 {
                let e = v as usize * 4;
                let ip = u16::from_le_bytes([self.ivt[e], self.ivt[e + 1]]) as u32;
                let cs = u16::from_le_bytes([self.ivt[e + 2], self.ivt[e + 3]]);
                let mut i = insn_at(s[0].as_mut(), cs, ip);
                i.note = format!("interrupt vector {v:02X}h taken first, at its handler");
                self.instruction = Some(i);
            }
        } else if self.halted {
            if let Some(i) = &mut self.instruction {
                i.note = "CPU halted: the clock advanced to the next event".into();
            }
        }
        let fields = a.differences(&b);
        let ram = ram_diffs(s[0].as_ref(), s[1].as_ref());
        let frame = frame_diff(s);
        let console = (a.console_hash != b.console_hash).then(|| {
            let tail = |t: String| -> String {
                let lines: Vec<&str> = t.lines().collect();
                lines[lines.len().saturating_sub(6)..].join("\n")
            };
            [tail(s[0].console()), tail(s[1].console())]
        });
        Divergence {
            arms: arms.clone(),
            dispatch: d,
            window,
            fields,
            instruction: self.instruction,
            sites: self.sites,
            before: self.before,
            states: [a, b],
            ram,
            frame,
            console,
            reruns,
        }
    }
}

fn ram_diffs(a: &dyn ArmRun, b: &dyn ArmRun) -> Vec<RamDiff> {
    let (x, y) = (a.ram(), b.ram());
    let mut out = Vec::new();
    let n = x.len().min(y.len());
    let mut i = 0;
    while i < n && out.len() < MAX_RAM_DIFFS {
        // Skip equal 64-byte chunks fast.
        if i % 64 == 0 && i + 64 <= n && x[i..i + 64] == y[i..i + 64] {
            i += 64;
            continue;
        }
        if x[i] == y[i] {
            i += 1;
            continue;
        }
        let start = i;
        // A run ends after 16 equal bytes in a row.
        let mut last = i;
        while i < n && i - last <= 16 {
            if x[i] != y[i] {
                last = i;
            }
            i += 1;
        }
        let end = last + 1;
        let show = (end - start).min(16);
        out.push(RamDiff {
            addr: format!("{start:05X}"),
            len: (end - start) as u32,
            a: disasm::hex_bytes(&x[start..start + show]),
            b: disasm::hex_bytes(&y[start..start + show]),
        });
        i = end;
    }
    out
}

fn frame_diff(s: &mut Pair) -> Option<String> {
    let (fa, fb) = (s[0].frame(), s[1].frame());
    if fa == fb {
        return None;
    }
    if fa.width != fb.width || fa.height != fb.height {
        return Some(format!(
            "sizes differ: {}x{} against {}x{}",
            fa.width, fa.height, fb.width, fb.height
        ));
    }
    let (mut n, mut x0, mut y0, mut x1, mut y1) = (0u64, u32::MAX, u32::MAX, 0, 0);
    for y in 0..fa.height {
        for x in 0..fa.width {
            if fa.pixel(x, y) != fb.pixel(x, y) {
                n += 1;
                x0 = x0.min(x);
                y0 = y0.min(y);
                x1 = x1.max(x);
                y1 = y1.max(y);
            }
        }
    }
    Some(format!(
        "{n} pixels differ within ({x0},{y0})-({x1},{y1}) of {}x{}",
        fa.width, fa.height
    ))
}
