//! Which wasm compiler an arm runs under, and the compiled toyvm module.
//!
//! Owns the arm-name suffixes (`@wasm` = Cranelift, `@wasm-winch` = Winch),
//! the wasmtime engine configuration of each compiler, where the toyvm
//! module is found, and compiling it once per process (and once per module
//! build on disk: the compiled artifact is cached next to the module, keyed
//! by the module's hash). It must not run sessions.

use std::path::PathBuf;
use std::sync::OnceLock;
use wasmtime::{Engine, Module, OptLevel, Strategy};

/// A wasmtime compiler.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compiler {
    /// Cranelift, wasmtime's optimizing compiler (`@wasm`).
    Cranelift,
    /// Winch, wasmtime's single-pass baseline compiler (`@wasm-winch`).
    Winch,
}

impl Compiler {
    pub const ALL: [Compiler; 2] = [Compiler::Cranelift, Compiler::Winch];

    /// The arm-name suffix (after `@`).
    pub fn suffix(self) -> &'static str {
        match self {
            Compiler::Cranelift => "wasm",
            Compiler::Winch => "wasm-winch",
        }
    }

    /// The compiler's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Compiler::Cranelift => "cranelift",
            Compiler::Winch => "winch",
        }
    }

    /// The wasmtime configuration of this compiler.
    pub fn config(self) -> wasmtime::Config {
        let mut c = wasmtime::Config::new();
        match self {
            Compiler::Cranelift => {
                // Function tables filled at instantiation: no lazy-init
                // check on every indirect call (L1's threaded dispatch is
                // one). Winch requires lazy init.
                c.table_lazy_init(false);
                c.strategy(Strategy::Cranelift);
                c.cranelift_opt_level(OptLevel::Speed);
            }
            Compiler::Winch => {
                c.strategy(Strategy::Winch);
            }
        }
        c
    }
}

/// Splits an arm name `ARM@wasm` / `ARM@wasm-winch` into the inner (native)
/// arm and the compiler; None for any other name.
pub fn split_arm(name: &str) -> Option<(&str, Compiler)> {
    let (inner, suffix) = name.rsplit_once('@')?;
    let c = Compiler::ALL.into_iter().find(|c| c.suffix() == suffix)?;
    (!inner.is_empty()).then_some((inner, c))
}

/// The command that builds the module.
pub const BUILD_COMMAND: &str =
    "cargo build --profile wasm-release --target wasm32-wasip1 -p toyvm-wasm";

/// Where the toyvm module is: `$TOYVM_WASM_MODULE`, else the workspace's
/// `wasm-release` build (`$CARGO_TARGET_DIR` or `target/`): the release
/// profile with fat LTO and one codegen unit (docs/bench.md measured it
/// 5-8% faster under Cranelift than the plain release profile).
pub fn module_path() -> PathBuf {
    if let Some(p) = std::env::var_os("TOYVM_WASM_MODULE") {
        return PathBuf::from(p);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target")));
    target.join("wasm32-wasip1/wasm-release/toyvm_wasm.wasm")
}

/// The module compiled by one compiler, with its engine.
pub struct Compiled {
    pub compiler: Compiler,
    pub engine: Engine,
    pub module: Module,
    /// The wasm bytes it was compiled from.
    pub wasm: Vec<u8>,
    /// Host CPU time spent compiling (0 when the cached artifact was loaded).
    pub compile_ns: u64,
}

/// The toyvm module compiled by `c`, once per process.
pub fn compiled(c: Compiler) -> Result<&'static Compiled, String> {
    static CRANELIFT: OnceLock<Result<Compiled, String>> = OnceLock::new();
    static WINCH: OnceLock<Result<Compiled, String>> = OnceLock::new();
    let cell = match c {
        Compiler::Cranelift => &CRANELIFT,
        Compiler::Winch => &WINCH,
    };
    cell.get_or_init(|| compile(c))
        .as_ref()
        .map_err(|e| e.clone())
}

fn compile(c: Compiler) -> Result<Compiled, String> {
    let path = module_path();
    let wasm = std::fs::read(&path).map_err(|e| {
        format!(
            "{}: {e} (the toyvm wasm module; build it with `{BUILD_COMMAND}`)",
            path.display()
        )
    })?;
    let engine = Engine::new(&c.config()).map_err(|e| format!("wasmtime {}: {e:#}", c.name()))?;
    let key = xxhash_rust::xxh3::xxh3_64(&wasm).to_le_bytes();
    let cache = path.with_extension(format!("{}.cwasm", c.name()));
    if let Ok(bytes) = std::fs::read(&cache) {
        if bytes.len() > 8 && bytes[..8] == key {
            // SAFETY: the artifact was written by `Module::serialize` of this
            // program (same module hash); wasmtime itself rejects artifacts of
            // another wasmtime version or configuration.
            if let Ok(module) = unsafe { Module::deserialize(&engine, &bytes[8..]) } {
                return Ok(Compiled {
                    compiler: c,
                    engine,
                    module,
                    wasm,
                    compile_ns: 0,
                });
            }
        }
    }
    let t0 = toyvm::host_clock::thread_ns();
    let module = Module::new(&engine, &wasm).map_err(|e| {
        format!(
            "{}: {} failed to compile it: {e:#}",
            path.display(),
            c.name()
        )
    })?;
    let compile_ns = toyvm::host_clock::thread_ns().saturating_sub(t0);
    if let Ok(ser) = module.serialize() {
        let mut bytes = key.to_vec();
        bytes.extend_from_slice(&ser);
        // A cache that cannot be written only costs the next process a compile.
        let tmp = cache.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::write(&tmp, &bytes).is_ok() {
            let _ = std::fs::rename(&tmp, &cache);
        }
    }
    Ok(Compiled {
        compiler: c,
        engine,
        module,
        wasm,
        compile_ns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arm_suffixes_split() {
        assert_eq!(split_arm("l1@wasm"), Some(("l1", Compiler::Cranelift)));
        assert_eq!(
            split_arm("only-naive@wasm-winch"),
            Some(("only-naive", Compiler::Winch))
        );
        assert_eq!(split_arm("l1"), None);
        assert_eq!(split_arm("@wasm"), None);
        assert_eq!(split_arm("l1+flipcf@5"), None);
        assert_eq!(split_arm("l1@wasm-v8"), None);
    }
}
