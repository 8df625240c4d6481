//! External corpora: a directory of DOS programs with an optional config
//! (`corpus.toml`, same schema as the built-in manifest, every field but the
//! name optional), or a directory with a `MANIFEST.tsv` like `shared/dos-real`.

use crate::manifest::{Agreement, Corpus, Program};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug)]
pub struct ExternalError(pub String);

impl std::fmt::Display for ExternalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for ExternalError {}

/// Per-program overrides in an external directory's `corpus.toml`:
/// `[program.NAME] budget = .., keys = "..", dos_version = "..", companions = [..], args = ".."`.
#[derive(Debug, Default, Deserialize)]
struct Overrides {
    budget: Option<u64>,
    keys: Option<String>,
    dos_version: Option<String>,
    companions: Option<Vec<String>>,
    args: Option<String>,
    family: Option<String>,
    tags: Option<Vec<String>>,
    timing_independent: Option<bool>,
    expected_checksum: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct DirConfig {
    #[serde(default)]
    program: BTreeMap<String, Overrides>,
}

fn blank(name: &str, family: &str, binary: String, format: &str) -> Program {
    Program {
        name: name.to_string(),
        family: family.to_string(),
        source: String::new(),
        binary,
        format: format.to_string(),
        description: String::new(),
        tags: Vec::new(),
        budget: 20_000_000,
        keys: String::new(),
        dos_version: "5.0".into(),
        companions: Vec::new(),
        files: Vec::new(),
        args: String::new(),
        timing_independent: false,
        expected_checksum: String::new(),
        expected_exit: 0,
        dosbox_agrees: Agreement::Unknown,
        dosbox_output: String::new(),
        dosbox_note: String::new(),
        l1_frame_hash: String::new(),
        l1_console: String::new(),
        l1_end: String::new(),
        l1_dispatches: 0,
    }
}

/// Load an external corpus directory: `MANIFEST.tsv` if present, else every
/// `.COM`/`.EXE` below the directory (recursively), with `corpus.toml` overrides.
pub fn load_dir(dir: &Path) -> Result<Corpus, ExternalError> {
    let tsv = dir.join("MANIFEST.tsv");
    let mut programs = if tsv.exists() {
        load_tsv(dir, &tsv)?
    } else {
        let mut v = Vec::new();
        scan(dir, dir, &mut v)?;
        v.sort_by(|a, b| a.binary.cmp(&b.binary));
        v
    };
    let cfg = dir.join("corpus.toml");
    if cfg.exists() {
        let text = std::fs::read_to_string(&cfg).map_err(|e| ExternalError(e.to_string()))?;
        let c: DirConfig =
            toml::from_str(&text).map_err(|e| ExternalError(format!("{}: {e}", cfg.display())))?;
        for (name, o) in c.program {
            let p = programs
                .iter_mut()
                .find(|p| p.name.eq_ignore_ascii_case(&name))
                .ok_or_else(|| ExternalError(format!("{}: no program {name}", cfg.display())))?;
            if let Some(v) = o.budget {
                p.budget = v;
            }
            if let Some(v) = o.keys {
                p.keys = v;
            }
            if let Some(v) = o.dos_version {
                p.dos_version = v;
            }
            if let Some(v) = o.companions {
                p.companions = v;
            }
            if let Some(v) = o.args {
                p.args = v;
            }
            if let Some(v) = o.family {
                p.family = v;
            }
            if let Some(v) = o.tags {
                p.tags = v;
            }
            if let Some(v) = o.timing_independent {
                p.timing_independent = v;
            }
            if let Some(v) = o.expected_checksum {
                p.expected_checksum = v;
            }
        }
    }
    Ok(Corpus {
        root: dir.to_path_buf(),
        schema: 1,
        data_files: Vec::new(),
        programs,
    })
}

fn scan(root: &Path, dir: &Path, out: &mut Vec<Program>) -> Result<(), ExternalError> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| ExternalError(format!("{}: {e}", dir.display())))?
        .filter_map(|e| e.ok())
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        if path.is_dir() {
            scan(root, &path, out)?;
            continue;
        }
        let ext = path
            .extension()
            .and_then(|x| x.to_str())
            .map(|x| x.to_ascii_lowercase());
        let format = match ext.as_deref() {
            Some("com") => "com",
            Some("exe") => "exe",
            _ => continue,
        };
        let rel = path.strip_prefix(root).unwrap_or(&path);
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("?");
        let family = rel
            .parent()
            .and_then(|p| p.to_str())
            .filter(|s| !s.is_empty())
            .unwrap_or("external");
        out.push(blank(
            name,
            family,
            rel.to_string_lossy().into_owned(),
            format,
        ));
    }
    Ok(())
}

/// `MANIFEST.tsv`: a header line, then tab-separated rows: path, size, hash,
/// source repo, source path, in repo, license, format, category, needs,
/// DOSBox result, notes. The family is the first path component.
fn load_tsv(dir: &Path, tsv: &Path) -> Result<Vec<Program>, ExternalError> {
    let text = std::fs::read_to_string(tsv).map_err(|e| ExternalError(e.to_string()))?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split('\t').collect();
    let col = |n: &str| header.iter().position(|h| *h == n);
    let c_path = col("path").ok_or_else(|| ExternalError("MANIFEST.tsv: no path column".into()))?;
    let c_fmt = col("format");
    let c_cat = col("category");
    let c_dosbox = header.iter().position(|h| h.starts_with("dosbox"));
    let c_notes = col("notes");
    let mut out = Vec::new();
    for line in lines.filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split('\t').collect();
        let path = f.get(c_path).copied().unwrap_or("");
        if path.is_empty() {
            continue;
        }
        let fmt = c_fmt.and_then(|c| f.get(c)).copied().unwrap_or("");
        let format = if fmt.eq_ignore_ascii_case("COM") {
            "com"
        } else {
            "exe"
        };
        let name = Path::new(path)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("?");
        let family = path.split('/').next().unwrap_or("external");
        let mut p = blank(name, family, path.to_string(), format);
        p.format = if fmt.is_empty() {
            format.into()
        } else {
            fmt.to_ascii_lowercase()
        };
        p.description = c_cat.and_then(|c| f.get(c)).copied().unwrap_or("").into();
        p.dosbox_note = c_dosbox
            .and_then(|c| f.get(c))
            .copied()
            .unwrap_or("")
            .into();
        let notes = c_notes.and_then(|c| f.get(c)).copied().unwrap_or("");
        if !notes.is_empty() {
            p.dosbox_note = format!("{}; {}", p.dosbox_note, notes);
        }
        let _ = dir;
        out.push(p);
    }
    // The hosts the notes name, as in the DOSBox runs: `CWSDPMI -p` first
    // (the DPMI host stays resident), DOS4GW.EXE in C:\ for Watcom LE stubs.
    let cws = out
        .iter()
        .position(|p| p.binary.eq_ignore_ascii_case("_support/CWSDPMI.EXE"))
        .map(|i| out[i].name.clone());
    let has_dos4gw = out
        .iter()
        .any(|p| p.binary.eq_ignore_ascii_case("_support/DOS4GW.EXE"));
    for p in &mut out {
        if p.binary.eq_ignore_ascii_case("_support/CWSDPMI.EXE") {
            p.args = "-p".into();
        } else if p.dosbox_note.contains("CWSDPMI -p") {
            if let Some(c) = &cws {
                p.companions.push(c.clone());
            }
        }
        if has_dos4gw && p.dosbox_note.contains("needs DOS4GW.EXE") {
            p.files.push("_support/DOS4GW.EXE".into());
        }
    }
    Ok(out)
}
