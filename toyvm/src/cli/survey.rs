//! `toyvm survey`: runs every program of a `MANIFEST.tsv` (the dos-real
//! format) and writes an HTML table (our last frame next to DOSBox's
//! picture) and optionally the JSON reports.
//!
//! Owns the manifest reading and the per-program policy (companions from the
//! notes column, the DOS version the MS-DOS 2.x tools need). It must not
//! change how a program runs beyond what `toyvm run` options can express.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use toyvm::frame::png_data_uri;
use toyvm::session::{Config, Program, Report, Session};

#[derive(clap::Args)]
pub struct Args {
    /// Directory holding MANIFEST.tsv (and _dosbox_screens/).
    pub dir: PathBuf,
    /// Budget per program.
    #[arg(long, default_value_t = 20_000_000)]
    pub dispatches: u64,
    /// Execution arm: l1 (the threaded tier), l0 (the plain interpreter) or
    /// only-naive (naive µop programs on E1).
    #[arg(long, default_value = "l1")]
    pub arm: String,
    /// Write the HTML report here.
    #[arg(long)]
    pub html: PathBuf,
    /// Write all JSON reports here (one array).
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Also write each last frame as PNG here (named like _dosbox_screens).
    #[arg(long)]
    pub frames_dir: Option<PathBuf>,
    /// Only programs whose path contains this text.
    #[arg(long)]
    pub filter: Option<String>,
}

/// One manifest row.
#[derive(Clone, Debug)]
pub struct Row {
    pub path: String,
    pub format: String,
    pub needs: String,
    pub dosbox: String,
    pub notes: String,
}

/// Reads MANIFEST.tsv.
pub fn read_manifest(dir: &Path) -> Result<Vec<Row>, String> {
    let p = dir.join("MANIFEST.tsv");
    let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() < 11 {
            return Err(format!(
                "{}:{}: expected at least 11 columns",
                p.display(),
                i + 1
            ));
        }
        rows.push(Row {
            path: f[0].to_string(),
            format: f[7].to_string(),
            needs: f[9].to_string(),
            dosbox: f[10].to_string(),
            notes: f.get(11).copied().unwrap_or("").to_string(),
        });
    }
    Ok(rows)
}

/// The configuration a manifest row runs with.
pub fn config_for(dir: &Path, row: &Row, budget: u64, arm: &str) -> Config {
    let mut cfg = Config::new(dir.join(&row.path));
    cfg.budget = budget;
    cfg.arm = arm.to_string();
    if row.notes.contains("needs DIS.EXE") {
        let top = row.path.split('/').next().unwrap_or("");
        let dis = dir.join(top).join("DIS").join("DIS.EXE");
        if dis.exists() {
            cfg.companions.push(Program {
                path: dis,
                args: String::new(),
            });
        }
    }
    // As in the DOSBox runs: the DPMI host first whenever the notes say so.
    if row.notes.contains("CWSDPMI -p") {
        cfg.companions.push(Program {
            path: dir.join("_support").join("CWSDPMI.EXE"),
            args: "-p".into(),
        });
    }
    // Watcom LE programs run DOS4GW.EXE themselves (from C:\ or the PATH).
    if row.notes.contains("needs DOS4GW.EXE") {
        cfg.files.push(dir.join("_support").join("DOS4GW.EXE"));
    }
    // The MS-DOS 2.x tools refuse any version but their own.
    if row.path.contains("/v2.0/") {
        cfg.dos_version = (2, 0);
    }
    cfg
}

/// The result of one program.
pub struct Outcome {
    pub row: Row,
    pub report: Option<Report>,
    pub error: Option<String>,
    pub png: Vec<u8>,
}

/// Runs one row (a panic is caught and reported as a bug, not a result).
pub fn run_row(dir: &Path, row: &Row, budget: u64, arm: &str) -> Outcome {
    let cfg = config_for(dir, row, budget, arm);
    let r = std::panic::catch_unwind(|| {
        let mut s = Session::new(&cfg)?;
        s.run();
        let rep = s.report(&cfg);
        let png = s.frame().png_bytes();
        Ok::<_, String>((rep, png))
    });
    match r {
        Ok(Ok((rep, png))) => Outcome {
            row: row.clone(),
            report: Some(rep),
            error: None,
            png,
        },
        Ok(Err(e)) => Outcome {
            row: row.clone(),
            report: None,
            error: Some(e),
            png: Vec::new(),
        },
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".into());
            Outcome {
                row: row.clone(),
                report: None,
                error: Some(format!("host panic (a toyvm bug): {msg}")),
                png: Vec::new(),
            }
        }
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// "exited", "budget" or "stopped" (load errors and panics count as stopped).
pub fn kind(o: &Outcome) -> &str {
    o.report.as_ref().map_or("stopped", |r| r.end.as_str())
}

/// The summary line.
pub fn summary(outs: &[Outcome]) -> String {
    let n = outs.len();
    let e = outs.iter().filter(|o| kind(o) == "exited").count();
    let b = outs.iter().filter(|o| kind(o) == "budget").count();
    format!(
        "survey: {n} programs, {e} exited, {b} ran to budget, {} stopped",
        n - e - b
    )
}

fn html(dir: &Path, outs: &[Outcome], budget: u64, arm: &str) -> String {
    let mut h = String::new();
    h.push_str(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>toyvm survey</title><style>",
    );
    h.push_str("body{font-family:sans-serif;font-size:13px}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px;vertical-align:top}img{width:320px;image-rendering:pixelated}.exited{background:#e8f5e9}.budget{background:#e3f2fd}.stopped{background:#ffebee}pre{white-space:pre-wrap;max-width:420px;max-height:160px;overflow:auto;margin:0}");
    h.push_str("</style></head><body>");
    h.push_str(&format!(
        "<h1>toyvm survey</h1><p>{} &mdash; arm <b>{}</b>, budget {} dispatches per program, from <code>{}</code>.</p>",
        esc(&summary(outs)),
        esc(arm),
        budget,
        esc(&dir.display().to_string())
    ));
    h.push_str("<table><tr><th>#</th><th>program</th><th>result</th><th>toyvm (last frame)</th><th>DOSBox 0.74 (~7 s)</th></tr>");
    for (i, o) in outs.iter().enumerate() {
        let k = kind(o);
        h.push_str(&format!(
            "<tr class=\"{k}\"><td>{}</td><td><b>{}</b><br>{}<br><small>{}</small></td><td>",
            i + 1,
            esc(&o.row.path),
            esc(&o.row.format),
            esc(&o.row.needs)
        ));
        match (&o.report, &o.error) {
            (Some(r), _) => {
                let what = match r.end.as_str() {
                    "exited" => format!("exited, code {}", r.exit_code.unwrap_or(0)),
                    "budget" => "ran to budget".into(),
                    _ => "stopped".into(),
                };
                h.push_str(&format!(
                    "<b>{what}</b> after {} dispatches<br>",
                    r.dispatches
                ));
                if let Some(s) = &r.stop {
                    h.push_str(&format!(
                        "at {}:{} [{}]<br>{}<br>",
                        s.cs,
                        s.ip,
                        esc(&s.bytes),
                        esc(&s.what)
                    ));
                }
                if !r.companions.is_empty() {
                    h.push_str(&format!("after: {}<br>", esc(&r.companions.join("; "))));
                }
                h.push_str(&format!(
                    "mode {}, frame {}<br>DOS {}",
                    r.video_mode, r.frame.hash, r.dos_version
                ));
                let c = r.console.trim();
                if !c.is_empty() {
                    let lines: Vec<&str> = c.lines().take(12).collect();
                    h.push_str(&format!("<pre>{}</pre>", esc(&lines.join("\n"))));
                }
            }
            (None, Some(e)) => h.push_str(&format!("<b>stopped</b><br>{}", esc(e))),
            _ => {}
        }
        h.push_str(&format!(
            "<br><small>DOSBox: {}</small></td><td>",
            esc(&o.row.dosbox)
        ));
        if !o.png.is_empty() {
            h.push_str(&format!("<img src=\"{}\">", png_data_uri(&o.png)));
        }
        h.push_str("</td><td>");
        let shot = dir
            .join("_dosbox_screens")
            .join(format!("{}.png", o.row.path.replace('/', "__")));
        match std::fs::read(&shot) {
            Ok(b) => h.push_str(&format!("<img src=\"{}\">", png_data_uri(&b))),
            Err(_) => h.push_str("<small>no picture</small>"),
        }
        h.push_str("</td></tr>\n");
    }
    h.push_str("</table></body></html>\n");
    h
}

pub fn main(a: Args) -> ExitCode {
    match run(a) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("toyvm survey: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(a: Args) -> Result<(), String> {
    toyvm::session::engine(&a.arm)?;
    let rows: Vec<Row> = read_manifest(&a.dir)?
        .into_iter()
        .filter(|r| {
            a.filter
                .as_ref()
                .is_none_or(|f| r.path.contains(f.as_str()))
        })
        .collect();
    let bar = ProgressBar::new(rows.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} {elapsed} {msg}")
            .map_err(|e| e.to_string())?,
    );
    // Panics are reported per program; keep their default message off the bar.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut outs = Vec::new();
    for row in &rows {
        bar.set_message(row.path.clone());
        let o = run_row(&a.dir, row, a.dispatches, &a.arm);
        if let (Some(d), false) = (&a.frames_dir, o.png.is_empty()) {
            let _ = std::fs::create_dir_all(d);
            let p = d.join(format!("{}.png", row.path.replace('/', "__")));
            std::fs::write(&p, &o.png).map_err(|e| format!("{}: {e}", p.display()))?;
        }
        outs.push(o);
        bar.inc(1);
    }
    std::panic::set_hook(hook);
    bar.finish_and_clear();
    std::fs::write(&a.html, html(&a.dir, &outs, a.dispatches, &a.arm))
        .map_err(|e| format!("{}: {e}", a.html.display()))?;
    if let Some(j) = &a.json {
        let reports: Vec<serde_json::Value> = outs
            .iter()
            .map(|o| match (&o.report, &o.error) {
                (Some(r), _) => serde_json::to_value(r).unwrap_or_default(),
                (None, e) => {
                    serde_json::json!({"program": o.row.path, "end": "stopped", "error": e})
                }
            })
            .collect();
        let mut f = std::fs::File::create(j).map_err(|e| format!("{}: {e}", j.display()))?;
        let text = serde_json::to_string_pretty(&reports).map_err(|e| e.to_string())?;
        f.write_all(text.as_bytes())
            .and_then(|_| f.write_all(b"\n"))
            .map_err(|e| e.to_string())?;
    }
    for o in &outs {
        if kind(o) == "stopped" {
            let why = o
                .report
                .as_ref()
                .and_then(|r| r.stop.as_ref().map(|s| s.what.clone()))
                .or_else(|| o.error.clone())
                .unwrap_or_default();
            println!("stopped: {}: {}", o.row.path, why);
        }
    }
    println!("{}", summary(&outs));
    Ok(())
}
