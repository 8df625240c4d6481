//! Arms by name: the toyvm arms this build has, plus the oracle's own
//! deliberately broken test arms (`BASE+flipcf@N`, `BASE+flipdf@N`,
//! `BASE+skip@N`, `BASE+nobill@N`, `BASE+panic@N`, `BASE+slicedep@N`) that
//! prove divergence detection, bisection and failure reporting work.
//!
//! Owns arm-name parsing, the default arm list and its fallback, and a
//! process-wide registry for engines toyvm does not build. It must not
//! implement guest semantics: a test arm wraps a real engine and breaks it at
//! exactly one dispatch, nothing else.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use toyvm::cpu::{Cpu, StepOutcome};
use toyvm::machine::Machine;
use toyvm::session::Engine;

/// The arms a sweep compares when `--arms` is not given (the first is the
/// reference). Arms this build lacks are dropped with a message; see
/// [`resolve_default`].
pub const DEFAULT_ARMS: &[&str] = &["l1", "only-naive"];

/// The arm every build has (used when no default arm is built).
pub const BASELINE_ARM: &str = "l0";

/// How a test arm is broken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// After dispatch N retires, CF is inverted (often healed by the next
    /// arithmetic instruction before anything reads it: then invisible).
    FlipCf,
    /// After dispatch N retires, DF is inverted (persists until CLD/STD).
    FlipDf,
    /// After dispatch N retires, the x87 control word's rounding-control bit 10
    /// is inverted (only the x87 state differs until an FPU result shows it).
    X87Rc,
    /// After dispatch N retires, DR7 bit 0 is inverted (a debug register:
    /// stored only, so only the CPU's system state differs).
    Dr7,
    /// Dispatch N is billed but its instruction does not run.
    Skip,
    /// The instruction of dispatch N runs but costs no dispatch (a clock
    /// billing bug: the arm is one instruction ahead from then on).
    NoBill,
    /// The engine panics when the clock reaches N (an arm that errors).
    Panic,
    /// DF is inverted at N only when a multi-dispatch slice ends exactly
    /// at N: an arm whose behaviour depends on where the run is cut (as in
    /// seed 004 phase 1 step 2, bug 1). Bisection must say so, not guess.
    SliceDep,
}

impl Fault {
    fn name(self) -> &'static str {
        match self {
            Fault::FlipCf => "flipcf",
            Fault::FlipDf => "flipdf",
            Fault::X87Rc => "x87rc",
            Fault::Dr7 => "dr7",
            Fault::Skip => "skip",
            Fault::NoBill => "nobill",
            Fault::Panic => "panic",
            Fault::SliceDep => "slicedep",
        }
    }
    fn what(self) -> &'static str {
        match self {
            Fault::FlipCf => "inverts CF after dispatch",
            Fault::FlipDf => "inverts DF after dispatch",
            Fault::X87Rc => "inverts x87 rounding control after dispatch",
            Fault::Dr7 => "inverts DR7 bit 0 after dispatch",
            Fault::Skip => "bills without running dispatch",
            Fault::NoBill => "runs without billing dispatch",
            Fault::Panic => "panics at dispatch",
            Fault::SliceDep => "inverts DF when a slice is cut at dispatch",
        }
    }
}

/// A parsed arm name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArmName {
    pub base: String,
    pub fault: Option<(Fault, u64)>,
}

/// Parses `BASE` or `BASE+KIND@N` (KIND: flipcf, flipdf, skip, nobill,
/// panic, slicedep; N >= 1).
pub fn parse(name: &str) -> Result<ArmName, String> {
    let name = name.trim();
    if name.is_empty() {
        return Err("empty arm name".into());
    }
    let Some((base, fault)) = name.split_once('+') else {
        return Ok(ArmName {
            base: name.to_string(),
            fault: None,
        });
    };
    let (kind, at) = fault.split_once('@').ok_or_else(|| {
        format!(
            "test arm `{name}`: expected BASE+KIND@DISPATCH (KIND: flipcf, flipdf, x87rc, dr7, skip, nobill, panic, slicedep)"
        )
    })?;
    let kind = match kind {
        "flipcf" => Fault::FlipCf,
        "flipdf" => Fault::FlipDf,
        "x87rc" => Fault::X87Rc,
        "dr7" => Fault::Dr7,
        "skip" => Fault::Skip,
        "nobill" => Fault::NoBill,
        "panic" => Fault::Panic,
        "slicedep" => Fault::SliceDep,
        k => {
            return Err(format!(
                "test arm `{name}`: unknown fault `{k}` (flipcf, flipdf, x87rc, dr7, skip, nobill, panic, slicedep)"
            ))
        }
    };
    let at: u64 = at
        .replace('_', "")
        .parse()
        .map_err(|_| format!("test arm `{name}`: bad dispatch `{at}`"))?;
    if at == 0 {
        return Err(format!("test arm `{name}`: the dispatch must be >= 1"));
    }
    Ok(ArmName {
        base: base.to_string(),
        fault: Some((kind, at)),
    })
}

/// Builds an engine of a registered arm.
pub type Factory = fn() -> Box<dyn Engine>;

fn registry() -> &'static Mutex<BTreeMap<String, Factory>> {
    static REG: Mutex<BTreeMap<String, Factory>> = Mutex::new(BTreeMap::new());
    &REG
}

/// Registers an arm by name for this process (tests and experiments with
/// engines toyvm does not know): it then works everywhere an arm name does,
/// as a base of test arms too. A registered name shadows toyvm's.
pub fn register(name: &str, f: Factory) {
    registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(name.to_string(), f);
}

fn base_engine(name: &str) -> Result<Box<dyn Engine>, String> {
    let f = registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(name)
        .copied();
    match f {
        Some(f) => Ok(f()),
        None => toyvm::session::engine(name),
    }
}

/// Builds the engine for an arm name; a clear error for an unknown arm.
pub fn make(name: &str) -> Result<Box<dyn Engine>, String> {
    let a = parse(name)?;
    let inner = base_engine(&a.base)?;
    Ok(match a.fault {
        None => inner,
        Some((fault, at)) => Box::new(Broken {
            inner,
            fault,
            at,
            done: false,
            name: intern(name),
        }),
    })
}

/// The wasm compiler type (`wasm_host::Compiler`; uninhabited in a build
/// without the `wasm` feature).
#[cfg(feature = "wasm")]
pub type WasmCompiler = wasm_host::Compiler;
#[cfg(not(feature = "wasm"))]
pub type WasmCompiler = NoWasm;

/// No wasm compiler: this oracle was built without the `wasm` feature.
#[cfg(not(feature = "wasm"))]
#[derive(Clone, Copy, Debug)]
pub enum NoWasm {}

/// For `INNER@wasm` / `INNER@wasm-winch`: the inner arm and the compiler,
/// after checking the inner arm is one toyvm builds (inside the module only
/// toyvm's own arms exist: no test arms, no registered ones). Ok(None) for
/// any other name.
pub fn wasm_arm(name: &str) -> Result<Option<(&str, WasmCompiler)>, String> {
    let name = name.trim();
    let Some((_, suffix)) = name.rsplit_once('@') else {
        return Ok(None);
    };
    if suffix != "wasm" && suffix != "wasm-winch" {
        return Ok(None);
    }
    #[cfg(feature = "wasm")]
    {
        let Some((inner, c)) = wasm_host::split_arm(name) else {
            return Err(format!(
                "arm `{name}`: expected INNER@{suffix} with a toyvm arm as INNER"
            ));
        };
        if inner.contains('+') {
            return Err(format!(
                "arm `{name}`: test arms run natively only (the module holds toyvm's own arms)"
            ));
        }
        toyvm::session::engine(inner).map_err(|e| format!("arm `{name}`: {e}"))?;
        Ok(Some((inner, c)))
    }
    #[cfg(not(feature = "wasm"))]
    {
        Err(format!(
            "arm `{name}`: this oracle was built without the `wasm` feature (cargo build -p oracle --features wasm)"
        ))
    }
}

/// Checks that an arm can be run: a native arm's engine can be built; a
/// wasm arm's inner arm exists and the toyvm module compiles under its
/// compiler (compiled once per process; a missing module is a clear error).
pub fn check(name: &str) -> Result<(), String> {
    match wasm_arm(name)? {
        #[cfg(feature = "wasm")]
        Some((_, c)) => wasm_host::compiler::compiled(c)
            .map(|_| ())
            .map_err(|e| format!("arm `{name}`: {e}")),
        #[cfg(not(feature = "wasm"))]
        Some((_, c)) => match c {},
        None => make(name).map(|_| ()),
    }
}

/// Checks that every arm can be built (before any run starts).
pub fn check_all(names: &[String]) -> Result<(), String> {
    if names.is_empty() {
        return Err("no arms given".into());
    }
    for n in names {
        check(n)?;
    }
    Ok(())
}

/// The list word that stands for every native arm this build has
/// (`toyvm::session::ARMS`, the reference first).
pub const NATIVE: &str = "native";

/// Parses a comma-separated arm list; `native` expands to every native arm
/// of this build (e.g. `native,l1@wasm`).
pub fn parse_list(s: &str) -> Result<Vec<String>, String> {
    let v: Vec<String> = s
        .split(',')
        .map(|x| x.trim().to_string())
        .filter(|x| !x.is_empty())
        .flat_map(|x| {
            if x == NATIVE {
                toyvm::session::ARMS.iter().map(|a| a.to_string()).collect()
            } else {
                vec![x]
            }
        })
        .collect();
    if v.is_empty() {
        return Err(format!("`{s}`: no arms"));
    }
    Ok(v)
}

/// The default arm list this build can run, and a note when it had to fall
/// back: the arms of [`DEFAULT_ARMS`] that exist; when fewer than two do,
/// the first existing one (or [`BASELINE_ARM`]) twice, which is a null-band
/// run (an arm against itself).
pub fn resolve_default() -> (Vec<String>, Option<String>) {
    let have: Vec<String> = DEFAULT_ARMS
        .iter()
        .filter(|a| make(a).is_ok())
        .map(|a| a.to_string())
        .collect();
    if have.len() == DEFAULT_ARMS.len() {
        return (have, None);
    }
    let missing: Vec<&str> = DEFAULT_ARMS
        .iter()
        .copied()
        .filter(|a| !have.iter().any(|h| h == a))
        .collect();
    let arms = if have.len() >= 2 {
        have
    } else {
        let a = have
            .first()
            .cloned()
            .unwrap_or_else(|| BASELINE_ARM.to_string());
        vec![a.clone(), a]
    };
    let note = format!(
        "note: default arm(s) {} not built in this toyvm yet; running {} instead",
        missing.join(", "),
        arms.join(",")
    );
    (arms, Some(note))
}

/// Arm names must be `&'static str` for [`Engine::name`]; test arm names are
/// made at run time, so they are interned (a few bytes per distinct name).
fn intern(s: &str) -> &'static str {
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut set = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(n) = set.get(s) {
        return n;
    }
    let n: &'static str = Box::leak(s.to_string().into_boxed_str());
    set.insert(n);
    n
}

/// A real engine broken at exactly one dispatch.
struct Broken {
    inner: Box<dyn Engine>,
    fault: Fault,
    at: u64,
    done: bool,
    name: &'static str,
}

impl Engine for Broken {
    fn name(&self) -> &'static str {
        self.name
    }

    fn run(&mut self, cpu: &mut Cpu, m: &mut Machine, limit: u64) -> StepOutcome {
        if self.done {
            return self.inner.run(cpu, m, limit);
        }
        match self.fault {
            Fault::FlipCf | Fault::FlipDf | Fault::X87Rc | Fault::Dr7 => {
                if cpu.clock < self.at {
                    let o = self.inner.run(cpu, m, limit.min(self.at));
                    if cpu.clock >= self.at {
                        self.flip(cpu);
                    }
                    o
                } else {
                    // The clock jumped over N (HLT): break at the first run.
                    self.flip(cpu);
                    self.inner.run(cpu, m, limit)
                }
            }
            Fault::Skip => {
                let before = self.at - 1;
                if cpu.clock < before {
                    return self.inner.run(cpu, m, limit.min(before));
                }
                if cpu.clock < limit && !cpu.halted {
                    cpu.clock += 1;
                    self.done = true;
                    return StepOutcome::Ok;
                }
                self.inner.run(cpu, m, limit)
            }
            Fault::SliceDep => {
                let start = cpu.clock;
                let o = self.inner.run(cpu, m, limit);
                if limit == self.at && cpu.clock == self.at && start + 1 < self.at {
                    self.flip(cpu);
                }
                o
            }
            Fault::Panic => {
                if cpu.clock < self.at {
                    let o = self.inner.run(cpu, m, limit.min(self.at));
                    if cpu.clock < self.at {
                        return o;
                    }
                }
                panic!(
                    "test arm {}: deliberate panic at dispatch {}",
                    self.name, self.at
                );
            }
            Fault::NoBill => {
                let before = self.at - 1;
                if cpu.clock < before {
                    return self.inner.run(cpu, m, limit.min(before));
                }
                if cpu.clock < limit && !cpu.halted {
                    let start = cpu.clock;
                    let o = self.inner.run(cpu, m, start + 1);
                    if cpu.clock == start + 1 {
                        cpu.clock = start;
                        self.done = true;
                    }
                    return o;
                }
                self.inner.run(cpu, m, limit)
            }
        }
    }

    fn counters(&self) -> Option<serde_json::Value> {
        let mut c = match self.inner.counters() {
            Some(serde_json::Value::Object(m)) => m,
            _ => serde_json::Map::new(),
        };
        c.insert("test_faults".into(), (self.done as u64).into());
        Some(serde_json::Value::Object(c))
    }

    fn describe_site(&self, cpu: &Cpu) -> Option<String> {
        let own = format!(
            "test arm: {} {} {}",
            self.fault.name(),
            self.fault.what(),
            self.at
        );
        Some(match self.inner.describe_site(cpu) {
            Some(s) => format!("{s}; {own}"),
            None => own,
        })
    }
}

impl Broken {
    fn flip(&mut self, cpu: &mut Cpu) {
        if self.fault == Fault::X87Rc {
            cpu.fpu.control ^= 0x0400;
            self.done = true;
            return;
        }
        if self.fault == Fault::Dr7 {
            cpu.dr[7] ^= 1;
            self.done = true;
            return;
        }
        let bit = match self.fault {
            Fault::FlipCf => 0x001,
            _ => 0x400,
        };
        let f = cpu.flags.bits();
        cpu.flags.set_bits(f ^ bit);
        self.done = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse() {
        assert_eq!(parse("l0").unwrap().fault, None);
        assert_eq!(
            parse("l0+flipcf@1_000").unwrap().fault,
            Some((Fault::FlipCf, 1000))
        );
        assert!(parse("l0+frob@3").is_err());
        assert!(parse("l0+skip@0").is_err());
        assert!(parse("l0+skip").is_err());
        assert!(make("no-such-arm").is_err());
        assert!(make("no-such-arm+skip@5").is_err());
        assert_eq!(make("l0+skip@5").unwrap().name(), "l0+skip@5");
    }

    #[test]
    fn native_is_every_arm_toyvm_builds() {
        let v = parse_list("native,l1#x").unwrap();
        assert_eq!(v[0], "l1");
        assert_eq!(v.len(), toyvm::session::ARMS.len() + 1);
        for a in toyvm::session::ARMS {
            assert!(make(a).is_ok(), "{a}");
        }
    }
}
