//! `toyvm run`: one program, one arm, one budget; a summary on stdout and,
//! on request, the JSON report, the last frame and periodic frames.

use std::path::PathBuf;
use std::process::ExitCode;
use toyvm::session::{Config, End, Program, Session};

#[derive(clap::Args)]
pub struct Args {
    /// The DOS program (.COM or .EXE); its directory becomes drive C:.
    pub program: PathBuf,
    /// Command-line arguments for the program (use `--` before ones that
    /// start with a dash).
    pub args: Vec<String>,
    /// Guest-clock budget in dispatches.
    #[arg(long, default_value_t = 20_000_000)]
    pub dispatches: u64,
    /// Execution arm: l1 (the threaded tier), l0 (the plain interpreter) or
    /// only-naive (every instruction through naive µop programs on E1).
    #[arg(long, default_value = "l1")]
    pub arm: String,
    /// Write the last frame as PNG.
    #[arg(long)]
    pub png: Option<PathBuf>,
    /// Write a frame every N dispatches (into --frames-dir).
    #[arg(long)]
    pub frames_every: Option<u64>,
    #[arg(long)]
    pub frames_dir: Option<PathBuf>,
    /// Key script: KEY@DISPATCH,... (names like enter, esc, space, a, f1, up,
    /// or raw scan-code bytes in hex).
    #[arg(long)]
    pub keys: Option<String>,
    /// DOS version reported by INT 21h AH=30h.
    #[arg(long, default_value = "5.0")]
    pub dos_version: String,
    /// Directory that receives the files the program writes (otherwise
    /// writes stay in memory).
    #[arg(long)]
    pub out_dir: Option<PathBuf>,
    /// Write the JSON report here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Run this program first (until it exits or stays resident); repeatable.
    /// "PATH ARGS" in one argument.
    #[arg(long)]
    pub companion: Vec<String>,
    /// A host file the guest finds in C:\ (read-only), e.g. an extender the
    /// program runs itself: `--file ../shared/dos-real/_support/DOS4GW.EXE`.
    /// Repeatable.
    #[arg(long)]
    pub file: Vec<std::path::PathBuf>,
}

/// Parses "X.Y" into (major, minor).
pub fn parse_version(s: &str) -> Result<(u8, u8), String> {
    let (a, b) = s.split_once('.').unwrap_or((s, "0"));
    match (a.parse::<u8>(), b.parse::<u8>()) {
        (Ok(x), Ok(y)) if (1..=9).contains(&x) && y < 100 => Ok((x, y)),
        _ => Err(format!("bad DOS version `{s}` (expected e.g. 5.0 or 2.0)")),
    }
}

/// Parses "PATH ARGS" into a program.
pub fn parse_program(s: &str) -> Program {
    let (p, a) = s.split_once(' ').unwrap_or((s, ""));
    Program {
        path: PathBuf::from(p),
        args: a.trim().to_string(),
    }
}

pub fn main(a: Args) -> ExitCode {
    match run(a) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("toyvm run: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(a: Args) -> Result<ExitCode, String> {
    let cfg = Config {
        program: Program {
            path: a.program.clone(),
            args: a.args.join(" "),
        },
        companions: a.companion.iter().map(|c| parse_program(c)).collect(),
        files: a.file.clone(),
        budget: a.dispatches,
        arm: a.arm.clone(),
        dos_version: parse_version(&a.dos_version)?,
        out_dir: a.out_dir.clone(),
        keys: a.keys.clone(),
    };
    let mut s = Session::new(&cfg)?;
    if let Some(every) = a.frames_every.filter(|&n| n > 0) {
        let dir = a
            .frames_dir
            .clone()
            .ok_or("--frames-every needs --frames-dir")?;
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut t = every;
        while t <= cfg.budget {
            let going = s.run_until(t);
            let f = s.frame();
            let p = dir.join(format!("frame_{:010}.png", s.clock()));
            f.to_png(&p).map_err(|e| format!("{}: {e}", p.display()))?;
            if !going {
                break;
            }
            t += every;
        }
    }
    s.run();
    s.flush_files()
        .map_err(|e| format!("writing the output directory: {e}"))?;
    let report = s.report(&cfg);
    if let Some(p) = &a.png {
        s.frame()
            .to_png(p)
            .map_err(|e| format!("{}: {e}", p.display()))?;
    }
    if let Some(p) = &a.json {
        let j = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        std::fs::write(p, j + "\n").map_err(|e| format!("{}: {e}", p.display()))?;
    }
    let how = match s.end.as_ref().unwrap() {
        End::Exited { code } => format!("exited with code {code}"),
        End::Budget => "ran to the budget".to_string(),
        End::Stopped(st) => format!("stopped at {:04X}:{:04X}: {}", st.cs, st.ip, st.what),
    };
    println!(
        "{}: {} after {} dispatches",
        a.program.display(),
        how,
        report.dispatches
    );
    println!(
        "frame {}x{} hash {} (video mode {})",
        report.frame.width, report.frame.height, report.frame.hash, report.video_mode
    );
    let console = report.console.trim_end();
    if !console.is_empty() {
        let lines: Vec<&str> = console.lines().collect();
        let shown = &lines[lines.len().saturating_sub(8)..];
        println!("console ({} lines):", lines.len());
        for l in shown {
            println!("  {l}");
        }
    }
    if !report.missing_services.is_empty() {
        println!("missing services: {}", report.missing_services.join(", "));
    }
    if let Some(c) = s.counters() {
        print_counters(&a.arm, &c);
    }
    Ok(match s.end.as_ref().unwrap() {
        End::Stopped(_) => ExitCode::from(2),
        _ => ExitCode::SUCCESS,
    })
}

/// The arm's deterministic counters, the headline ones first (µop arms:
/// programs built, build time, µops per x86 instruction, fallbacks by form,
/// handbacks by reason), then every other scalar counter.
fn print_counters(arm: &str, c: &serde_json::Value) {
    let Some(o) = c.as_object() else { return };
    let n = |k: &str| o.get(k).and_then(|v| v.as_u64());
    println!("counters ({arm}):");
    if let (Some(u), Some(i)) = (n("uops"), n("uop_insns")) {
        let per = if i > 0 { u as f64 / i as f64 } else { 0.0 };
        println!("  µops executed {u} for {i} x86 instructions: {per:.2} µops per instruction");
    }
    if let Some(b) = n("programs_built") {
        let ms = n("build_ns").unwrap_or(0) as f64 / 1e6;
        println!("  programs built {b}, build time {ms:.1} ms");
    }
    for (key, title) in [
        ("fallbacks_by_form", "fallbacks by form"),
        ("handbacks_by_reason", "handbacks by reason"),
    ] {
        let Some(m) = o.get(key).and_then(|v| v.as_object()) else {
            continue;
        };
        let mut v: Vec<(&String, u64)> = m
            .iter()
            .filter_map(|(k, x)| Some((k, x.as_u64()?)))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let total: u64 = v.iter().map(|x| x.1).sum();
        let list: Vec<String> = v.iter().map(|(k, x)| format!("{k} {x}")).collect();
        println!("  {title} ({total}): {}", list.join(", "));
    }
    let rest: Vec<String> = o
        .iter()
        .filter_map(|(k, v)| Some(format!("{k} {}", v.as_u64()?)))
        .collect();
    for chunk in rest.chunks(6) {
        println!("  {}", chunk.join(", "));
    }
}
