//! The built-in manifest: schema, parsing and the coverage list.

use serde::Deserialize;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Every path an emulator tier can get wrong that the built-in corpus must
/// exercise; each tag is used by at least one program (a unit test checks).
pub const COVERAGE: &[&str] = &[
    "wait.selfbranch",
    "wait.retrace",
    "wait.display_enable",
    "wait.pit_latch",
    "wait.kbd_status",
    "wait.hlt",
    "irq.timer_chain",
    "irq.keyboard",
    "irq.sb_dma",
    "int.hook_chain",
    "int.divide_error",
    "flags.pushf_popf_cli_sti_iret",
    "smc.imm_patch",
    "smc.decryptor",
    "smc.buffer_exec",
    "smc.same_block",
    "smc.fpu_emu",
    "cf.far_call",
    "cf.far_selector_patch",
    "cf.jump_table",
    "cf.jump_table32",
    "cf.far_jump_table",
    "cf.loop_shapes",
    "cf.deep_calls",
    "cf.recursion",
    "arith.shift_cl",
    "arith.rotate_cl",
    "arith.rcl_rcr",
    "arith.shld_shrd",
    "arith.adc_sbb_mem",
    "arith.muldiv",
    "arith.bcd",
    "arith.real32_sib",
    "mem.ea32",
    "arith.bitops",
    "arith.alu",
    "mem.rep_string",
    "mem.rep_df1",
    "mem.rep_seg_wrap",
    "mem.wrap64k",
    "mem.seg_override",
    "mem.fs_gs",
    "mem.xms",
    "mem.ems",
    "mem.dos_alloc",
    "mem.mcb_walk",
    "video.mode13h",
    "video.effects",
    "video.modex_flip",
    "video.vga_write_modes",
    "video.planar16",
    "video.text_direct",
    "video.text_bios",
    "video.palette",
    "x87.trig",
    "x87.rot3d",
    "x87.mandel",
    "x87.convert",
    "x87.compare",
    "dos.datafile",
    "dos.exe_reloc",
    "dos.exe_alloc",
    "dos.exec",
    "dos.tsr",
    "kernel.crc32",
    "kernel.sort",
    "kernel.sieve",
    "kernel.lz",
    "kernel.matmul",
    "kernel.fixmandel",
    "bench",
];

/// Whether DOSBox 0.74 printed the expected line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Agreement {
    Yes,
    No,
    Unknown,
}

/// One program of a corpus.
#[derive(Debug, Clone, Deserialize)]
pub struct Program {
    pub name: String,
    pub family: String,
    /// NASM source, relative to the corpus root (empty for external programs).
    #[serde(default)]
    pub source: String,
    /// The binary (.COM or .EXE), relative to the corpus root.
    pub binary: String,
    #[serde(default = "default_format")]
    pub format: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub tags: Vec<String>,
    /// Dispatch budget for one run.
    #[serde(default = "default_budget")]
    pub budget: u64,
    /// Key script: `SCAN@DISPATCH,...` (hex scan codes, break codes have bit 7 set).
    #[serde(default)]
    pub keys: String,
    #[serde(default = "default_dos")]
    pub dos_version: String,
    /// Programs (by name) to run first in the same session.
    #[serde(default)]
    pub companions: Vec<String>,
    /// Files (relative to the corpus root) the guest finds in C:\ besides
    /// the program's directory, e.g. the DOS/4G extender an LE stub runs.
    #[serde(default)]
    pub files: Vec<String>,
    #[serde(default)]
    pub args: String,
    #[serde(default)]
    pub timing_independent: bool,
    /// The last line the program prints (`CHECKSUM XXXXXXXX` for timing-independent ones).
    #[serde(default)]
    pub expected_checksum: String,
    /// The exact exit code (INT 21h 4Ch AL) of the program (source header `@exit`,
    /// default 0; DOSBox checks it with `IF ERRORLEVEL N IF NOT ERRORLEVEL N+1`).
    #[serde(default)]
    pub expected_exit: u8,
    #[serde(default = "default_agree")]
    pub dosbox_agrees: Agreement,
    /// What DOSBox printed when it disagrees (a recorded DOSBox bug).
    #[serde(default)]
    pub dosbox_output: String,
    #[serde(default)]
    pub dosbox_note: String,
    /// toyvm's `l1` arm at `budget` (recorded by `scripts/corpus.py record`, asserted
    /// by `toyvm/tests/corpus_expected.rs`); empty / 0 when not recorded.
    /// The final frame hash (`Report::frame.hash`, 16 hex digits).
    #[serde(default)]
    pub l1_frame_hash: String,
    /// The console text in the form of [`console_record`].
    #[serde(default)]
    pub l1_console: String,
    /// How the run ended: `exited N` (N the exit code) or `budget`.
    #[serde(default)]
    pub l1_end: String,
    /// The dispatch count at the end of the run.
    #[serde(default)]
    pub l1_dispatches: u64,
}

/// Longest console text `l1_console` stores verbatim (and at most
/// [`CONSOLE_VERBATIM_LINES`] lines); longer text is stored as its digest.
pub const CONSOLE_VERBATIM_CHARS: usize = 100;
pub const CONSOLE_VERBATIM_LINES: usize = 4;

/// The lines of a console text: split at `\n`, without the empty piece after a
/// final newline.
pub fn console_lines(text: &str) -> Vec<&str> {
    let mut v: Vec<&str> = text.split('\n').collect();
    if v.last() == Some(&"") {
        v.pop();
    }
    v
}

/// The last line of a console text that is not blank, trimmed (what the
/// checksum convention calls the printed result; `""` when none).
pub fn last_line(text: &str) -> &str {
    text.split('\n')
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("")
}

/// How `l1_console` records a console text: the text itself when it has at most
/// 4 lines and 100 characters, else
/// `~N lines crc32=XXXXXXXX last=LAST` (CRC-32 of the text's UTF-8 bytes, N as
/// [`console_lines`] counts, LAST as [`last_line`] finds). `scripts/corpus.py`
/// computes the same string.
pub fn console_record(text: &str) -> String {
    let n = console_lines(text).len();
    if text.chars().count() <= CONSOLE_VERBATIM_CHARS && n <= CONSOLE_VERBATIM_LINES {
        return text.to_string();
    }
    format!(
        "~{n} lines crc32={:08X} last={}",
        crc32(text.as_bytes()),
        last_line(text)
    )
}

/// CRC-32 (IEEE 802.3, the polynomial of zlib and of the corpus programs).
pub fn crc32(data: &[u8]) -> u32 {
    let mut c = 0xFFFF_FFFFu32;
    for &b in data {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// The `l1_end` form of a run's end: `exited N` or `budget` (`stopped` for a
/// run toyvm stopped, which a corpus program must never record).
pub fn end_record(end: &str, exit_code: Option<u8>) -> String {
    match (end, exit_code) {
        ("exited", Some(c)) => format!("exited {c}"),
        (e, _) => e.to_string(),
    }
}

fn default_format() -> String {
    "com".into()
}
fn default_budget() -> u64 {
    20_000_000
}
fn default_dos() -> String {
    "5.0".into()
}
fn default_agree() -> Agreement {
    Agreement::Unknown
}

impl Program {
    /// Parse the key script into (scan code, dispatch) pairs.
    pub fn key_script(&self) -> Result<Vec<(u8, u64)>, String> {
        let mut out = Vec::new();
        for item in self
            .keys
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            let (k, d) = item
                .split_once('@')
                .ok_or_else(|| format!("{}: key item {item:?} lacks '@'", self.name))?;
            let k = u8::from_str_radix(k, 16).map_err(|e| format!("{}: {e}", self.name))?;
            let d = d.parse().map_err(|e| format!("{}: {e}", self.name))?;
            out.push((k, d));
        }
        Ok(out)
    }
    /// The `l1_end` a correct run records when the program exits: `exited N`
    /// with N = `expected_exit`.
    pub fn expected_end(&self) -> String {
        end_record("exited", Some(self.expected_exit))
    }
    pub fn is_bench(&self) -> bool {
        self.tags.iter().any(|t| t == "bench")
    }
}

#[derive(Debug, Clone, Deserialize)]
struct ManifestFile {
    #[serde(default)]
    schema: u32,
    #[serde(default)]
    data_files: Vec<String>,
    #[serde(default)]
    program: Vec<Program>,
}

/// A loaded corpus: programs plus the directory their paths are relative to.
#[derive(Debug, Clone)]
pub struct Corpus {
    pub root: PathBuf,
    pub schema: u32,
    pub data_files: Vec<String>,
    pub programs: Vec<Program>,
}

impl Corpus {
    /// Parse a manifest text; `root` is where its relative paths point.
    pub fn parse(text: &str, root: &Path) -> Result<Corpus, String> {
        let m: ManifestFile = toml::from_str(text).map_err(|e| e.to_string())?;
        Ok(Corpus {
            root: root.to_path_buf(),
            schema: m.schema,
            data_files: m.data_files,
            programs: m.program,
        })
    }
    pub fn load(manifest: &Path) -> Result<Corpus, String> {
        let text = std::fs::read_to_string(manifest)
            .map_err(|e| format!("{}: {e}", manifest.display()))?;
        let root = manifest.parent().unwrap_or(Path::new("."));
        Corpus::parse(&text, root)
    }
    pub fn families(&self) -> BTreeSet<&str> {
        self.programs.iter().map(|p| p.family.as_str()).collect()
    }
    pub fn get(&self, name: &str) -> Option<&Program> {
        self.programs
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(name))
    }
    pub fn binary_path(&self, p: &Program) -> PathBuf {
        self.root.join(&p.binary)
    }
    pub fn source_path(&self, p: &Program) -> Option<PathBuf> {
        (!p.source.is_empty()).then(|| self.root.join(&p.source))
    }
    /// The programs to run before `p` in the same session: (binary path, the
    /// companion's own `args`), in manifest order; an error names a companion
    /// that is not in the corpus. (The oracle's `RunSpec::from_corpus` and
    /// toyvm's corpus test build their sessions from this.)
    pub fn companion_runs(&self, p: &Program) -> Result<Vec<(PathBuf, String)>, String> {
        p.companions
            .iter()
            .map(|c| {
                let cp = self
                    .get(c)
                    .ok_or_else(|| format!("{}: companion `{c}` is not in the corpus", p.name))?;
                Ok((self.binary_path(cp), cp.args.clone()))
            })
            .collect()
    }
}

/// The directory of the built-in corpus (this crate).
pub fn builtin_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Load the built-in corpus from `corpus.toml` in this crate.
pub fn builtin() -> Result<Corpus, String> {
    Corpus::load(&builtin_root().join("corpus.toml"))
}
