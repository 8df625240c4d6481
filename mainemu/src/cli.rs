//! The `mainemu` command line (clap): `imports`, `run` (console output,
//! frames as PNG, scripted input) and `survey`.
//!
//! Owns argument parsing, the reports' text and exit statuses. It must not
//! hold loader or API logic: it calls [`crate::pe`] and [`crate::dll`].

use crate::dll::{self, Resolution};
use crate::pe::{ImportName, PeFile};
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};

#[derive(Parser)]
#[command(name = "mainemu", about = "A 32-bit Windows user-mode engine")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// List every import of PROGRAM (and of the DLLs shipped next to it) and
    /// whether mainemu implements it.
    Imports {
        /// One or more PE files.
        #[arg(required = true)]
        programs: Vec<PathBuf>,
        /// One Markdown table row per program instead of the full listing.
        #[arg(long)]
        summary: bool,
    },
    /// Run PROGRAM with ARGS under the x86-cpu interpreter; console output to
    /// stdout/stderr, the summary to stderr (and --json); exit status = the program's.
    Run {
        program: PathBuf,
        /// The program's arguments (everything after PROGRAM, dashes included:
        /// mainemu's own options go before it).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
        /// Execution arm: `l0` (the plain interpreter) or `l1` (the threaded tier, same dispatches).
        #[arg(long, default_value = "l0")]
        arm: String,
        /// Guest drive mapping LETTER=DIR (repeatable). C: defaults to the
        /// current directory; the program's own directory is always readable.
        #[arg(long)]
        drive: Vec<String>,
        /// Environment edit NAME=VALUE (repeatable; NAME= removes it) over
        /// mainemu's fixed default environment.
        #[arg(long)]
        env: Vec<String>,
        /// Dispatch budget.
        #[arg(long, default_value_t = 1_000_000_000)]
        dispatches: u64,
        /// Write the summary as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Write the last frame (the desktop's pixels) as PNG here.
        #[arg(long)]
        png: Option<PathBuf>,
        /// Write a frame every N dispatches into --frames-dir
        /// (`NNNNNNNNNNNN.png`, named by dispatch, and `frames.txt`:
        /// one `dispatch hash` line per frame).
        #[arg(long, requires = "frames_dir")]
        frames_every: Option<u64>,
        /// Where --frames-every writes (created if missing).
        #[arg(long, requires = "frames_every")]
        frames_dir: Option<PathBuf>,
        /// Screen size WxH (default 640x480).
        #[arg(long)]
        screen: Option<String>,
        /// Scripted input: `click 120,80 @ 5000000; key F2 @ 9000000; text hello @ 12000000`
        /// (times in dispatches; see src/desktop/input.rs for the language).
        #[arg(long)]
        input: Option<String>,
    },
    /// Run a manifest of programs with command lines, inputs and expected
    /// results (src/survey.rs gives the format); one row per program, ending
    /// with `survey: N programs, P passed, F failed, S stopped`.
    Survey {
        /// The manifest (TOML), e.g. mainemu/survey/win32-real.toml.
        manifest: PathBuf,
        /// Where the programs are (default: the manifest's `root`).
        #[arg(long)]
        root: Option<PathBuf>,
        /// Execution arm: `l0` or `l1`.
        #[arg(long, default_value = "l0")]
        arm: String,
    },
}

/// One import and how it resolves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportLine {
    /// The DLL as the importing file names it.
    pub dll: String,
    pub name: ImportName,
    /// `Some(true)` implemented, `Some(false)` stub; `None`: the DLL is a
    /// guest PE shipped next to the program (its exports are guest code).
    pub implemented: Option<bool>,
    /// The file that imports it.
    pub from: String,
}

/// Every import of `path` and of the non-system DLLs next to it (each
/// file once), in load order.
pub fn import_report(path: &Path) -> Result<Vec<ImportLine>, String> {
    let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let mut queue = vec![path.to_path_buf()];
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    while let Some(p) = queue.pop() {
        let key = p
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        if !seen.insert(key) {
            continue;
        }
        let bytes = std::fs::read(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        let pe = PeFile::parse(&bytes).map_err(|e| format!("{}: {e}", p.display()))?;
        let from = p
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let mut dlls = pe.imports().map_err(|e| format!("{from}: {e}"))?;
        dlls.extend(pe.delay_imports().map_err(|e| format!("{from}: {e}"))?);
        for d in dlls {
            let shipped = (!dll::is_system_dll(&d.dll))
                .then(|| find_ci(&dir, &d.dll))
                .flatten();
            if let Some(s) = &shipped {
                queue.insert(0, s.clone());
            }
            for i in d.imports {
                let implemented = if shipped.is_some() {
                    None
                } else {
                    Some(matches!(
                        dll::resolve(&d.dll, &i.name),
                        Resolution::Implemented(..) | Resolution::Data(..)
                    ))
                };
                out.push(ImportLine {
                    dll: d.dll.clone(),
                    name: i.name,
                    implemented,
                    from: from.clone(),
                });
            }
        }
    }
    Ok(out)
}

/// A file in `dir` whose name matches `name` case-insensitively.
fn find_ci(dir: &Path, name: &str) -> Option<PathBuf> {
    let want = name.to_ascii_lowercase();
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .find(|e| e.file_name().to_string_lossy().to_ascii_lowercase() == want)
        .map(|e| e.path())
}

fn print_full(path: &Path, lines: &[ImportLine]) {
    println!("{}", path.display());
    let mut last = None;
    for l in lines {
        let key = (l.from.clone(), l.dll.clone());
        if last.as_ref() != Some(&key) {
            let n = lines
                .iter()
                .filter(|x| x.from == l.from && x.dll == l.dll)
                .count();
            let ok = lines
                .iter()
                .filter(|x| x.from == l.from && x.dll == l.dll && x.implemented == Some(true))
                .count();
            let what = if l.implemented.is_none() {
                "guest DLL shipped with the program".to_string()
            } else {
                format!("{ok} of {n} implemented")
            };
            println!("  {} <- {}: {what}", l.dll, l.from);
            last = Some(key);
        }
        let tag = match l.implemented {
            Some(true) => "ok  ",
            Some(false) => "stub",
            None => "pe  ",
        };
        println!("    {tag} {}", l.name);
    }
}

/// Totals: (imports of system DLLs, implemented, stubs).
pub fn totals(lines: &[ImportLine]) -> (usize, usize, usize) {
    let sys: Vec<_> = lines.iter().filter(|l| l.implemented.is_some()).collect();
    let ok = sys.iter().filter(|l| l.implemented == Some(true)).count();
    (sys.len(), ok, sys.len() - ok)
}

pub fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Run {
            program,
            args,
            arm,
            drive,
            env,
            dispatches,
            json,
            png,
            frames_every,
            frames_dir,
            screen,
            input,
        } => {
            let arm: crate::run::Arm = match arm.parse() {
                Ok(a) => a,
                Err(e) => {
                    eprintln!("mainemu: {e}");
                    return std::process::ExitCode::from(2);
                }
            };
            let mut drives = Vec::new();
            for d in &drive {
                let Some((l, dir)) = d.split_once('=') else {
                    eprintln!("mainemu: --drive wants LETTER=DIR, got {d:?}");
                    return std::process::ExitCode::from(2);
                };
                let letter = l
                    .chars()
                    .next()
                    .filter(|c| c.is_ascii_alphabetic() && l.len() == 1);
                let Some(letter) = letter else {
                    eprintln!("mainemu: --drive wants a drive letter, got {l:?}");
                    return std::process::ExitCode::from(2);
                };
                drives.push((letter.to_ascii_uppercase(), PathBuf::from(dir)));
            }
            let bytes = match std::fs::read(&program) {
                Ok(b) => b,
                Err(e) => {
                    eprintln!("mainemu: {}: {e}", program.display());
                    return std::process::ExitCode::from(2);
                }
            };
            let setup = match crate::process::Setup::for_program(&program, &args, &drives, &env) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("mainemu: {e}");
                    return std::process::ExitCode::from(2);
                }
            };
            let mut p = match crate::process::Process::with_setup(&bytes, setup) {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("mainemu: {}: {e}", program.display());
                    return std::process::ExitCode::from(2);
                }
            };
            if let Err(e) = gui_setup(&mut p, screen.as_deref(), input.as_deref()) {
                eprintln!("mainemu: {e}");
                return std::process::ExitCode::from(2);
            }
            let mut frames = match frames_dir.as_deref().zip(frames_every) {
                Some((dir, every)) => match FrameWriter::new(dir, every) {
                    Ok(f) => Some(f),
                    Err(e) => {
                        eprintln!("mainemu: {e}");
                        return std::process::ExitCode::from(2);
                    }
                },
                None => None,
            };
            use std::io::Write;
            let mut at = |p: &crate::process::Process, clock: u64| {
                if let Some(f) = frames.as_mut() {
                    f.write(p, clock);
                }
            };
            let edges = frames_every.map(|every| crate::run::Edges { every, at: &mut at });
            let s = crate::run::run_arm_with(
                &mut p,
                arm,
                dispatches,
                &mut |stream, b| {
                    if stream == 2 {
                        std::io::stderr().write_all(b).ok();
                    } else {
                        std::io::stdout().write_all(b).ok();
                    }
                },
                edges,
            );
            std::io::stdout().flush().ok();
            if let Some(mut f) = frames {
                f.finish();
                if let Some(e) = f.error {
                    eprintln!("mainemu: {e}");
                }
                eprintln!("mainemu: {} frames in {}", f.count, f.dir.display());
            }
            let gui = !p.env.desktop.windows.is_empty();
            if gui || png.is_some() {
                let f = crate::frame::Frame::of(&p.env.desktop);
                eprintln!(
                    "mainemu: frame {}x{} hash {:016x}",
                    f.width,
                    f.height,
                    f.hash()
                );
                if let Some(path) = &png {
                    if let Err(e) = f.save(path) {
                        eprintln!("mainemu: {}: {e}", path.display());
                    }
                }
            }
            let calls: u64 = s.api_calls.values().sum();
            eprintln!(
                "mainemu: {:?} after {} dispatches, {} API calls (arm {})",
                s.ending, s.dispatches, calls, s.arm
            );
            if let Some(c) = &s.l1 {
                eprintln!(
                    "  l1: {} blocks compiled ({} instructions), {} retired by stores, {} code writes, {} link / {} cache / {} map hits, {} uncached steps",
                    c.cache.blocks_compiled,
                    c.cache.instructions_compiled,
                    c.cache.smc_retired,
                    c.cache.code_writes,
                    c.cache.link_hits,
                    c.cache.dm_hits,
                    c.cache.map_hits,
                    c.uncached_steps
                );
            }
            for (k, v) in &s.api_calls {
                eprintln!("  {v:>8} {k}");
            }
            for m in &s.proc_misses {
                eprintln!("  GetProcAddress found nothing for {m}");
            }
            if let Some(j) = json {
                if let Err(e) = std::fs::write(
                    &j,
                    serde_json::to_string_pretty(&s).unwrap_or_default() + "\n",
                ) {
                    eprintln!("mainemu: {}: {e}", j.display());
                }
            }
            match s.ending {
                crate::run::Ending::Exit { code } => std::process::ExitCode::from(code as u8),
                crate::run::Ending::Idle => std::process::ExitCode::SUCCESS,
                _ => std::process::ExitCode::from(125),
            }
        }
        Cmd::Survey {
            manifest,
            root,
            arm,
        } => survey(&manifest, root.as_deref(), &arm),
        Cmd::Imports { programs, summary } => {
            let mut failed = false;
            if summary {
                println!("| program | DLLs | imports | implemented | stubs |");
                println!("|---|---|---:|---:|---:|");
            }
            for p in &programs {
                match import_report(p) {
                    Ok(lines) => {
                        let (n, ok, stub) = totals(&lines);
                        if summary {
                            let mut dlls: Vec<String> = lines
                                .iter()
                                .map(|l| crate::pe::apiset::canonical(&l.dll))
                                .collect();
                            dlls.sort();
                            dlls.dedup();
                            let name = p.file_name().unwrap_or_default().to_string_lossy();
                            println!("| {name} | {} | {n} | {ok} | {stub} |", dlls.join(" "));
                        } else {
                            print_full(p, &lines);
                            println!("imports: {n} of system DLLs, {ok} implemented, {stub} stubs");
                        }
                    }
                    Err(e) => {
                        eprintln!("mainemu: {e}");
                        failed = true;
                    }
                }
            }
            if failed {
                std::process::ExitCode::from(2)
            } else {
                std::process::ExitCode::SUCCESS
            }
        }
    }
}

/// Applies `--screen` and `--input` to a process before it starts.
pub fn gui_setup(
    p: &mut crate::process::Process,
    screen: Option<&str>,
    input: Option<&str>,
) -> Result<(), String> {
    if let Some(s) = screen {
        let (w, h) = crate::frame::parse_screen(s)?;
        p.env.desktop.resize(w, h);
    }
    if let Some(i) = input {
        p.env.desktop.input =
            crate::desktop::input::parse(i).map_err(|e| format!("--input: {e}"))?;
    }
    Ok(())
}

/// `--frames-every`'s output: one PNG per edge and `frames.txt`.
struct FrameWriter {
    dir: PathBuf,
    list: String,
    count: usize,
    /// The first write error (the run goes on; the report names it).
    error: Option<String>,
}

impl FrameWriter {
    fn new(dir: &Path, every: u64) -> Result<FrameWriter, String> {
        if every == 0 {
            return Err("--frames-every wants a positive number of dispatches".into());
        }
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(FrameWriter {
            dir: dir.to_path_buf(),
            list: String::new(),
            count: 0,
            error: None,
        })
    }

    fn write(&mut self, p: &crate::process::Process, clock: u64) {
        let f = crate::frame::Frame::of(&p.env.desktop);
        self.list += &format!("{clock} {:016x}\n", f.hash());
        self.count += 1;
        let path = self.dir.join(format!("{clock:012}.png"));
        if let Err(e) = f.save(&path) {
            self.error.get_or_insert(format!("{}: {e}", path.display()));
        }
    }

    /// Writes `frames.txt`.
    fn finish(&mut self) {
        let path = self.dir.join("frames.txt");
        if let Err(e) = std::fs::write(&path, &self.list) {
            self.error.get_or_insert(format!("{}: {e}", path.display()));
        }
    }
}

/// `mainemu survey`: rows as they finish, then the totals line. Exit status
/// 0 when every row passed, 1 otherwise, 2 for a bad manifest.
fn survey(
    manifest: &std::path::Path,
    root: Option<&std::path::Path>,
    arm: &str,
) -> std::process::ExitCode {
    let arm: crate::run::Arm = match arm.parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("mainemu survey: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let scratch = std::env::temp_dir().join(format!("mainemu-survey-{}", std::process::id()));
    std::fs::remove_dir_all(&scratch).ok();
    println!("| # | program | arguments | ending | dispatches | verdict |");
    println!("|---:|---|---|---|---:|---|");
    let r = crate::survey::run_manifest(manifest, root, arm, &scratch, &mut |i, c, g| {
        let args = c.args.join(" ");
        match g {
            Ok(g) => println!(
                "| {} | {} | {} | {} | {} | {:?}{} |",
                i + 1,
                c.program,
                args,
                g.ending.to_string().lines().next().unwrap_or(""),
                g.dispatches,
                g.verdict,
                if g.complaints.is_empty() {
                    String::new()
                } else {
                    format!(": {}", g.complaints.join("; "))
                }
            ),
            Err(e) => println!(
                "| {} | {} | {} | error: {e} | | Failed |",
                i + 1,
                c.program,
                args
            ),
        }
    });
    std::fs::remove_dir_all(&scratch).ok();
    match r {
        Ok(r) => {
            if let Some(t) = r.wine_table() {
                print!("\n{t}\n");
            }
            println!("{}", r.last_line());
            if r.count(crate::survey::Verdict::Passed) == r.rows.len() {
                std::process::ExitCode::SUCCESS
            } else {
                std::process::ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("mainemu survey: {e}");
            std::process::ExitCode::from(2)
        }
    }
}
