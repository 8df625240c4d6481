//! `inspect`: the machine code of E1's engine function and of L1's hot
//! dispatch loop as each compiler made it (native rustc/LLVM, wasmtime
//! Cranelift, wasmtime Winch), with a summary per compiler.
//!
//!     cargo build --profile wasm-release --target wasm32-wasip1 -p toyvm-wasm
//!     cargo run --release -p benches --bin inspect [-- --out out/inspect]
//!
//! Writes the listings, `summary.md`, `summary.json` and `index.html` (the
//! summary and every listing) under `--out`; prints the summary.

use benches::inspect::{self, Func, Image, Summary};
use clap::Parser;
use shared_ir::e1::op;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "inspect", about = "Machine code of E1 and L1 per compiler")]
struct Args {
    #[arg(long, default_value = "out/inspect")]
    out: PathBuf,
}

/// The instances of one function a compiler made, and the memory they see.
type Found = Result<(Vec<Func>, Image), String>;

/// The functions inspected: (label, demangled path).
const FUNCTIONS: &[(&str, &str)] = &[
    ("e1-engine", "shared_ir::e1::engine::engine"),
    ("l1-run-hot", "toyvm::l1::run::run_hot"),
];

/// µops whose transitions are counted (the first two are the summary's
/// columns) and traced at the end of each listing.
const OPS: &[(&str, u32)] = &[
    ("MOV32", op::MOV32),
    ("ADD32", op::ADD32),
    ("ADDF16", op::ADDF16),
    ("BRNE", op::BRNE),
    ("LD16", op::LD16),
    ("ST16", op::ST16),
    ("CLOCKCHECK", op::CLOCKCHECK),
    ("LINK", op::LINK),
];

fn main() -> ExitCode {
    let a = Args::parse();
    // Keep toyvm's session arms (and with them E1 and L1) in this binary.
    for arm in ["l1", "only-naive"] {
        if toyvm::session::engine(std::hint::black_box(arm)).is_err() {
            eprintln!("inspect: toyvm has no arm {arm}");
            return ExitCode::FAILURE;
        }
    }
    if let Err(e) = std::fs::create_dir_all(&a.out) {
        eprintln!("inspect: {}: {e}", a.out.display());
        return ExitCode::FAILURE;
    }
    let mut sums: Vec<Summary> = Vec::new();
    let mut listings: Vec<(String, String)> = Vec::new();
    for &(label, path) in FUNCTIONS {
        let mut sources: Vec<(&str, Found)> = vec![("native", inspect::native_functions(path))];
        for c in wasm_host::Compiler::ALL {
            sources.push((c.name(), inspect::wasm_functions(c, path)));
        }
        for (compiler, found) in sources {
            let (funcs, img) = match found {
                Ok(x) => x,
                Err(e) => {
                    eprintln!("inspect: {compiler}: {e}");
                    return ExitCode::FAILURE;
                }
            };
            if funcs.is_empty() {
                eprintln!("inspect: {compiler}: no function {path}");
                continue;
            }
            for (n, f) in funcs.iter().enumerate() {
                let file = format!("{compiler}-{label}-{n}.txt");
                let ops: &[(&str, u32)] = if label == "e1-engine" { OPS } else { &[] };
                let mut s = inspect::summarize(compiler, f, &img, ops);
                let text = inspect::listing(f, &img) + &s.traces;
                if let Err(e) = std::fs::write(a.out.join(&file), &text) {
                    eprintln!("inspect: {file}: {e}");
                    return ExitCode::FAILURE;
                }
                s.function = format!("{label} #{n}: {}", f.name);
                sums.push(s);
                listings.push((file, text));
            }
        }
    }
    let md = table(&sums);
    print!("{md}");
    let html = html(&md, &listings);
    let json = serde_json::to_string_pretty(&sums).unwrap();
    for (name, body) in [
        ("summary.md", md),
        ("summary.json", json),
        ("index.html", html),
    ] {
        if let Err(e) = std::fs::write(a.out.join(name), body) {
            eprintln!("inspect: {name}: {e}");
            return ExitCode::FAILURE;
        }
    }
    eprintln!("inspect: wrote {}", a.out.display());
    ExitCode::SUCCESS
}

fn cell(p: &Option<inspect::PathCount>) -> String {
    match p {
        Some(p) => format!(
            "{} ({} mem, {}/{} stack ld/st)",
            p.instructions, p.memory_ops, p.stack_loads, p.stack_stores
        ),
        None => "-".into(),
    }
}

fn table(sums: &[Summary]) -> String {
    let mut s = String::from(
        "| function | compiler | bytes | instructions | arms | head: insns (mem, stack ld/st) | MOV32 incl. head | ADD32 incl. head | stack ld/st in function | indirect jmp/call | call block |\n|---|---|---:|---:|---:|---|---|---|---:|---:|---|\n",
    );
    for x in sums {
        let path = |n: &str| cell(&x.paths.iter().find(|(k, _)| k == n).map(|(_, p)| p.clone()));
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {}/{} | {}/{} | {} |",
            x.function.split(" (").next().unwrap_or(&x.function),
            x.compiler,
            x.code_bytes,
            x.instructions,
            x.arms,
            cell(&x.head),
            path("MOV32"),
            path("ADD32"),
            x.stack_loads,
            x.stack_stores,
            x.indirect_jumps,
            x.indirect_calls,
            cell(&x.call_block),
        );
    }
    s
}

fn esc(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn html(md: &str, listings: &[(String, String)]) -> String {
    let mut h = String::from(
        "<!doctype html><meta charset=utf-8><title>engine inspection</title>\
         <style>body{font-family:sans-serif}pre{font-size:12px;background:#f4f4f4;padding:6px}</style>\
         <h1>E1 and L1 machine code per compiler</h1><pre>",
    );
    h.push_str(&esc(md));
    h.push_str("</pre>");
    for (name, text) in listings {
        let _ = write!(
            h,
            "<details><summary>{}</summary><pre>{}</pre></details>",
            esc(name),
            esc(text)
        );
    }
    h
}
