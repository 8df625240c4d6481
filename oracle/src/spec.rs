//! What one oracle run is: a program, its companions, arguments, DOS
//! version, budget and key script, independent of the arm.
//!
//! Owns turning that into a toyvm [`Config`] and opening a fresh session for
//! an arm (every bisection re-run starts here, from scratch). It must not
//! run anything itself.

use crate::arm_run::ArmRun;
use crate::arms;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use toyvm::session::{Config, Program, Session};

/// One program run, minus the arm.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSpec {
    /// Host path of the program (.COM/.EXE); its directory becomes C:\.
    pub program: PathBuf,
    #[serde(default)]
    pub args: String,
    /// Programs run first in the same session (host path, arguments).
    #[serde(default)]
    pub companions: Vec<Companion>,
    /// "5.0", "2.0", ...
    #[serde(default = "default_dos")]
    pub dos_version: String,
    /// Dispatch budget.
    pub budget: u64,
    /// Key script (`KEY@DISPATCH,...`), empty for none.
    #[serde(default)]
    pub keys: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Companion {
    pub program: PathBuf,
    #[serde(default)]
    pub args: String,
}

fn default_dos() -> String {
    "5.0".into()
}

/// Parses "X.Y" (or "X") into (major, minor).
pub fn parse_dos_version(s: &str) -> Result<(u8, u8), String> {
    let (a, b) = s.split_once('.').unwrap_or((s, "0"));
    match (a.trim().parse::<u8>(), b.trim().parse::<u8>()) {
        (Ok(x), Ok(y)) if (1..=9).contains(&x) && y < 100 => Ok((x, y)),
        _ => Err(format!("bad DOS version `{s}` (expected e.g. 5.0 or 2.0)")),
    }
}

impl RunSpec {
    pub fn new(program: impl Into<PathBuf>, budget: u64) -> RunSpec {
        RunSpec {
            program: program.into(),
            args: String::new(),
            companions: Vec::new(),
            dos_version: default_dos(),
            budget,
            keys: String::new(),
        }
    }

    /// The spec of a corpus program (its manifest budget, keys, args,
    /// companions and DOS version); `budget` overrides the manifest's.
    pub fn from_corpus(
        corpus: &corpus_dos::Corpus,
        p: &corpus_dos::Program,
        budget: Option<u64>,
    ) -> Result<RunSpec, String> {
        let mut companions = Vec::new();
        for c in &p.companions {
            let cp = corpus
                .get(c)
                .ok_or_else(|| format!("{}: companion `{c}` is not in the corpus", p.name))?;
            companions.push(Companion {
                program: corpus.binary_path(cp),
                args: cp.args.clone(),
            });
        }
        Ok(RunSpec {
            program: corpus.binary_path(p),
            args: p.args.clone(),
            companions,
            dos_version: p.dos_version.clone(),
            budget: budget.unwrap_or(p.budget),
            keys: p.keys.clone(),
        })
    }

    /// The toyvm configuration (arm left at its default: the oracle passes
    /// the engine itself).
    pub fn config(&self) -> Result<Config, String> {
        let mut cfg = Config::new(&self.program);
        cfg.program = Program {
            path: self.program.clone(),
            args: self.args.clone(),
        };
        cfg.companions = self
            .companions
            .iter()
            .map(|c| Program {
                path: c.program.clone(),
                args: c.args.clone(),
            })
            .collect();
        cfg.budget = self.budget;
        cfg.dos_version = parse_dos_version(&self.dos_version)?;
        cfg.keys = (!self.keys.trim().is_empty()).then(|| self.keys.clone());
        Ok(cfg)
    }

    /// A fresh run of this spec on `arm`, at dispatch 0: a native session,
    /// or for `INNER@wasm` / `INNER@wasm-winch` a session inside the wasm
    /// module (see [`arms::wasm_arm`]).
    pub fn open(&self, arm: &str) -> Result<Box<dyn ArmRun>, String> {
        if let Some((inner, compiler)) = arms::wasm_arm(arm)? {
            return self.open_wasm(inner, compiler);
        }
        Ok(Box::new(self.open_native(arm)?))
    }

    #[cfg(feature = "wasm")]
    fn open_wasm(
        &self,
        inner: &str,
        compiler: wasm_host::Compiler,
    ) -> Result<Box<dyn ArmRun>, String> {
        self.check_files()?;
        let mut cfg = self.config()?;
        cfg.arm = inner.to_string();
        let s = wasm_host::WasmSession::open(&cfg, compiler)
            .map_err(|e| format!("{}: {e}", self.program.display()))?;
        Ok(Box::new(s))
    }

    #[cfg(not(feature = "wasm"))]
    fn open_wasm(&self, _inner: &str, _compiler: arms::NoWasm) -> Result<Box<dyn ArmRun>, String> {
        match _compiler {}
    }

    fn check_files(&self) -> Result<(), String> {
        if !Path::new(&self.program).is_file() {
            return Err(format!("{}: no such program file", self.program.display()));
        }
        for c in &self.companions {
            if !c.program.is_file() {
                return Err(format!(
                    "{}: no such companion program file",
                    c.program.display()
                ));
            }
        }
        Ok(())
    }

    /// A fresh native toyvm session of this run on `arm`, at dispatch 0.
    pub fn open_native(&self, arm: &str) -> Result<Session, String> {
        self.check_files()?;
        let cfg = self.config()?;
        let mut engine = Some(arms::make(arm)?);
        // A toyvm panic while booting is a toyvm bug; report it, don't die.
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            Session::with_engine(&cfg, engine.take().expect("engine"))
        }));
        match r {
            Ok(s) => s.inspect(|s| advise_huge(s.machine.mem.ram())),
            Err(p) => Err(format!(
                "{}: toyvm panicked while booting (a toyvm bug): {}",
                self.program.display(),
                panic_text(&*p)
            )),
        }
    }
}

/// Asks the kernel for transparent huge pages over a session's guest RAM.
/// The oracle compares 16 MiB of RAM per arm at every sample; most of it is
/// never touched, and with 4 KiB pages the first compare takes one page
/// fault per page (4,096 per arm); with huge pages, eight. Advice only:
/// contents and results are unchanged.
fn advise_huge(ram: &[u8]) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = (ram.as_ptr() as usize).next_multiple_of(HUGE);
        let end = (ram.as_ptr() as usize + ram.len()) & !(HUGE - 1);
        if end > start {
            // SAFETY: advice over a range inside a live allocation; it
            // changes neither its contents nor its mapping's validity.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = ram;
}

/// The message of a caught panic.
pub fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panic".into())
}
