//! `corpus-dos`: the DOS programs the lab runs on.
//!
//! Owns the built-in corpus (NASM sources under `programs/<family>/`, the
//! assembled binaries beside them, one manifest `corpus.toml`) and loading of
//! external corpora: a directory of `.COM`/`.EXE` files with an optional
//! `corpus.toml`-style config, or a directory with a `MANIFEST.tsv` in the
//! format of `shared/dos-real`. Data plus a small loader; it never runs
//! programs itself.

pub mod external;
pub mod manifest;

pub use external::{load_dir, ExternalError};
pub use manifest::{
    builtin, builtin_root, console_lines, console_record, crc32, end_record, last_line, Agreement,
    Corpus, Program, COVERAGE,
};

/// A shared data set for a test: the folder the environment variable `var`
/// names (`CPU_TESTS_DIR`, `DOS_REAL`: the overrides the docs give), else
/// [`shared_dir`]`(sub)`, provided it holds the file `marker`. When it is
/// absent this prints the one `SKIPPED:` line the test's output shows and
/// returns `None`, so every data-driven test skips the same way.
pub fn shared_data_or_skip(var: &str, sub: &str, marker: &str) -> Option<std::path::PathBuf> {
    let found = match std::env::var_os(var) {
        Some(d) => Some(std::path::PathBuf::from(d)),
        None => shared_dir(sub),
    }
    .filter(|d| d.join(marker).is_file());
    if found.is_none() {
        eprintln!(
            "SKIPPED: shared/{sub} not found (set {var}, or LAB_SHARED to the shared folder)"
        );
    }
    found
}

/// Finds `shared/<sub>` (e.g. `dos-real`, `cpu-tests`): the folder named by
/// the environment variable `LAB_SHARED` if set, else the first `shared/`
/// beside the workspace or any of its ancestors (so git worktrees nested
/// below the checkout find it too). `None` when it is absent: callers skip
/// with a clear message.
pub fn shared_dir(sub: &str) -> Option<std::path::PathBuf> {
    if let Some(d) = std::env::var_os("LAB_SHARED") {
        let p = std::path::PathBuf::from(d).join(sub);
        return p.exists().then_some(p);
    }
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|a| a.join("shared").join(sub))
        .find(|d| d.is_dir())
}
