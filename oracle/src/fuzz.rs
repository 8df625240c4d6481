//! `oracle fuzz`: random programs, every arm, exact or not.
//!
//! Owns generating programs deterministically from a seed (shapes `bytes`,
//! `insns`, `mixed`), running each under every arm in lockstep, shrinking a
//! diverging program while the divergence holds, and the summary line and
//! reports. It must not compare, bisect or run guest code by itself: that is
//! [`crate::compare`], [`crate::bisect`] (through [`crate::diff`]) and toyvm.
//!
//! Program `i` of seed `S` depends on `(S, i)` only, so `--index I` re-creates
//! one program of a large run and shards of a run (`--shard K/N`) add up to
//! the whole run.

use crate::compare::{lockstep, Options};
use crate::diff;
use crate::spec::RunSpec;
use iced_x86::code_asm::*;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// How programs are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Shape {
    /// Random bytes, then `INT 20h`.
    Bytes,
    /// Random valid instruction sequences built with iced-x86's assembler.
    Insns,
    /// Even programs `bytes`, odd programs `insns`.
    Mixed,
}

impl std::str::FromStr for Shape {
    type Err = String;
    fn from_str(s: &str) -> Result<Shape, String> {
        match s {
            "bytes" => Ok(Shape::Bytes),
            "insns" => Ok(Shape::Insns),
            "mixed" => Ok(Shape::Mixed),
            _ => Err(format!("unknown shape `{s}` (bytes, insns or mixed)")),
        }
    }
}

/// SplitMix64: small, seedable, the same on every host (invariant 7).
#[derive(Clone)]
pub struct Rng(u64);

impl Rng {
    /// The generator of program `index` of run `seed`.
    pub fn for_program(seed: u64, index: u64) -> Rng {
        let mut r = Rng(seed ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03));
        r.next_u64();
        r
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
}

/// The shape program `index` actually gets.
pub fn shape_of(shape: Shape, index: u64) -> Shape {
    match shape {
        Shape::Mixed if index & 1 == 0 => Shape::Bytes,
        Shape::Mixed => Shape::Insns,
        s => s,
    }
}

/// The bytes of program `index` of run `seed` (a .COM image loaded at 100h).
pub fn generate(seed: u64, index: u64, shape: Shape) -> Vec<u8> {
    let mut r = Rng::for_program(seed, index);
    match shape_of(shape, index) {
        Shape::Insns => insns(&mut r),
        _ => bytes(&mut r),
    }
}

fn bytes(r: &mut Rng) -> Vec<u8> {
    let n = 8 + r.below(248) as usize;
    let mut v: Vec<u8> = (0..n).map(|_| r.next_u64() as u8).collect();
    v.extend_from_slice(&[0xCD, 0x20]);
    v
}

/// A random but valid instruction sequence. Covered: ALU (8/16/32-bit,
/// register and immediate and memory forms), shifts and rotates by CL and by
/// immediates, INC/DEC/NEG/NOT, MUL/IMUL, string instructions with REP and a
/// segment override over a data area, balanced stack operations, forward
/// conditional branches, a few x87 operations, port reads of the PIT and the
/// system port, and self-modifying stores into the program's own immediates.
/// Ends with `INT 20h`.
fn insns(r: &mut Rng) -> Vec<u8> {
    // Assemble twice: the first pass learns where each patchable
    // immediate lands, the second emits the stores aimed at them.
    let n = 8 + r.below(56) as usize;
    let plan: Vec<u64> = (0..n).map(|_| r.next_u64()).collect();
    let mut targets = Vec::new();
    let first = assemble(&plan, &[], &mut targets).unwrap_or_default();
    let mut unused = Vec::new();
    match assemble(&plan, &targets, &mut unused) {
        Ok(v) if v.len() == first.len() => v,
        _ => first,
    }
}

const R8: [AsmRegister8; 4] = [al, bl, cl, dl];
const R16: [AsmRegister16; 4] = [ax, bx, dx, bp];
const R32: [AsmRegister32; 4] = [eax, ebx, edx, ebp];

/// Emits `plan` (one word of randomness per item); `targets` are code
/// offsets of patchable immediates from an earlier pass, `found` collects
/// this pass's.
fn assemble(plan: &[u64], targets: &[u16], found: &mut Vec<u16>) -> Result<Vec<u8>, IcedError> {
    let mut a = CodeAssembler::new(16)?;
    // A known start: data area at DS:8000h, ES = DS, x87 initialized.
    a.mov(si, 0x8000u32)?;
    a.mov(di, 0x8100u32)?;
    a.fninit()?;
    let mut patch = 0usize;
    for (k, &w) in plan.iter().enumerate() {
        let mut r = Rng(w);
        let v = r.next_u64() as u32;
        match r.below(14) {
            0 => {
                let (d, s) = (r.pick(&R8), r.pick(&R8));
                match r.below(4) {
                    0 => a.add(d, s)?,
                    1 => a.sub(d, s)?,
                    2 => a.adc(d, v as u8 as u32)?,
                    _ => a.xor(d, byte_ptr(si + (v & 0x7F)))?,
                }
            }
            1 => {
                let (d, s) = (r.pick(&R16), r.pick(&R16));
                match r.below(5) {
                    0 => a.sbb(d, s)?,
                    1 => a.and(d, v & 0xFFFF)?,
                    2 => a.or(word_ptr(di + (v & 0x7E)), d)?,
                    3 => a.cmp(d, s)?,
                    _ => a.add(d, word_ptr(si + (v & 0x7E)))?,
                }
            }
            2 => {
                let (d, s) = (r.pick(&R32), r.pick(&R32));
                match r.below(3) {
                    0 => a.add(d, s)?,
                    1 => a.xor(d, v)?,
                    _ => a.sub(dword_ptr(di + (v & 0x7C)), d)?,
                }
            }
            3 => {
                let d = r.pick(&R16);
                let n = v & 0x1F;
                match r.below(7) {
                    0 => a.shl(d, n)?,
                    1 => a.shr(d, n)?,
                    2 => a.sar(d, cl)?,
                    3 => a.rol(d, cl)?,
                    4 => a.ror(d, n)?,
                    5 => a.rcl(d, 1u32)?,
                    _ => a.rcr(r.pick(&R8), cl)?,
                }
            }
            4 => match r.below(4) {
                0 => a.inc(r.pick(&R16))?,
                1 => a.dec(r.pick(&R8))?,
                2 => a.neg(r.pick(&R32))?,
                _ => a.not(word_ptr(si + (v & 0x7E)))?,
            },
            5 => match r.below(2) {
                0 => a.mul(r.pick(&R8))?,
                _ => a.imul_3(r.pick(&R16), r.pick(&R16), (v & 0x7FFF) as i32)?,
            },
            6 => {
                // String operations over the data area, CX small.
                a.mov(cx, v & 0x1F)?;
                a.mov(si, 0x8000 + (v >> 8 & 0xFF))?;
                a.mov(di, 0x8200 + (v >> 16 & 0xFF))?;
                if v >> 24 & 1 == 1 {
                    a.std()?;
                } else {
                    a.cld()?;
                }
                match r.below(5) {
                    0 => a.rep().movsb()?,
                    1 => a.rep().stosw()?,
                    2 => a.repe().cmpsb()?,
                    3 => a.db(&[0x2E, 0xF3, 0xA4])?, // rep movsb from CS:
                    _ => a.lodsw()?,
                }
                a.cld()?;
            }
            7 => {
                let (x, y) = (r.pick(&R16), r.pick(&R16));
                a.push(x)?;
                a.pushf()?;
                a.popf()?;
                a.pop(y)?;
            }
            8 => {
                let mut over = a.create_label();
                match r.below(4) {
                    0 => a.jz(over)?,
                    1 => a.jc(over)?,
                    2 => a.js(over)?,
                    _ => a.jo(over)?,
                }
                a.inc(r.pick(&R16))?;
                a.set_label(&mut over)?;
                a.nop()?;
            }
            9 => match r.below(4) {
                0 => a.fld1()?,
                1 => a.fldpi()?,
                2 => a.fadd_2(st0, st1)?,
                _ => a.fstp(st1)?,
            },
            10 => match r.below(2) {
                0 => a.in_(al, 0x40u32)?,
                _ => a.in_(al, 0x61u32)?,
            },
            11 => {
                // A patchable immediate: `mov al, imm8` (B0 ib).
                found.push((a.assemble(0x100)?.len() + 1) as u16);
                a.mov(al, v as u8 as u32)?;
            }
            12 => {
                // Self-modifying store into a patchable immediate (ahead of
                // or behind this point), through CS.
                // The first pass has no targets yet: a same-length store to
                // CS:0100h keeps every later offset where the second pass
                // puts it.
                let t = match targets.get(patch % targets.len().max(1)) {
                    Some(&t) => 0x100 + t,
                    None => 0x100,
                };
                patch += 1;
                // mov byte [cs:t], imm8
                a.db(&[0x2E, 0xC6, 0x06, t as u8, (t >> 8) as u8, v as u8])?;
            }
            _ => {
                let s = r.pick(&R16);
                a.mov(word_ptr(si + (k as u32 & 0x7E)), s)?;
            }
        }
    }
    a.int(0x20)?;
    a.assemble(0x100)
}

/// What happened to one program.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Exact,
    Diverged,
    Failed,
}

/// One program's record in the report.
#[derive(Clone, Debug, Serialize)]
pub struct Case {
    pub index: u64,
    pub shape: Shape,
    pub len: usize,
    pub verdict: Verdict,
    /// The arms that differed from the reference, or the error.
    pub detail: String,
    /// Minimized program and repro file (divergences only).
    pub repro: Option<String>,
    pub minimized_len: Option<usize>,
}

/// The whole run.
#[derive(Clone, Debug, Serialize)]
pub struct FuzzReport {
    pub format: &'static str,
    pub seed: u64,
    pub count: u64,
    pub shape: Shape,
    pub arms: Vec<String>,
    pub dispatches: u64,
    pub exact: u64,
    pub diverged: u64,
    pub failed: u64,
    /// Diverged and failed programs (exact ones are counted only).
    pub cases: Vec<Case>,
}

impl FuzzReport {
    /// The line the run ends with.
    pub fn line(&self) -> String {
        format!(
            "fuzz: {} programs, {} exact, {} diverged, {} failed",
            self.exact + self.diverged + self.failed,
            self.exact,
            self.diverged,
            self.failed
        )
    }
}

/// Run parameters.
pub struct FuzzOpts {
    pub seed: u64,
    pub count: u64,
    pub shape: Shape,
    pub arms: Vec<String>,
    pub dispatches: u64,
    pub jobs: usize,
    /// Only this program (re-creates one program of a run).
    pub index: Option<u64>,
    /// Run programs i with i % n == k only.
    pub shard: Option<(u64, u64)>,
    /// Where programs, minimized programs and repro files go.
    pub out: PathBuf,
    pub shrink: bool,
}

fn opts_for(budget: u64) -> Options {
    Options {
        interval: (budget / 4).max(1),
        frame_edges: true,
        run_to_end: false,
    }
}

/// Runs `prog` (written to `path`) under `arms`: `Ok(None)` exact,
/// `Ok(Some(arms that differed))`, `Err` an arm failed.
fn check(
    path: &Path,
    prog: &[u8],
    arms: &[String],
    budget: u64,
) -> Result<Option<Vec<String>>, String> {
    std::fs::write(path, prog).map_err(|e| format!("{}: {e}", path.display()))?;
    let spec = RunSpec::new(path, budget);
    let ls = lockstep(&spec, arms, &opts_for(budget), &mut |_| {})?;
    if ls.exact() {
        return Ok(None);
    }
    Ok(Some(
        ls.arms
            .iter()
            .filter(|a| a.diff.is_some())
            .map(|a| a.arm.clone())
            .collect(),
    ))
}

/// Shrinks a diverging program while `arm` still diverges: drop chunks
/// (halves down to single bytes), then zero bytes. At most `tries` runs.
pub fn shrink(
    path: &Path,
    prog: &[u8],
    arms: &[String],
    arm: &str,
    budget: u64,
    tries: usize,
) -> Vec<u8> {
    let mut best = prog.to_vec();
    let mut runs = 0usize;
    let still = |p: &[u8], runs: &mut usize| -> bool {
        *runs += 1;
        matches!(check(path, p, arms, budget), Ok(Some(d)) if d.iter().any(|a| a == arm))
    };
    let mut chunk = best.len() / 2;
    while chunk >= 1 && runs < tries {
        let mut at = 0;
        while at + chunk <= best.len() && runs < tries {
            let mut cand = best.clone();
            cand.drain(at..at + chunk);
            if !cand.is_empty() && still(&cand, &mut runs) {
                best = cand;
            } else {
                at += chunk;
            }
        }
        chunk /= 2;
    }
    for i in 0..best.len() {
        if runs >= tries {
            break;
        }
        if best[i] != 0 {
            let mut cand = best.clone();
            cand[i] = 0;
            if still(&cand, &mut runs) {
                best = cand;
            }
        }
    }
    best
}

/// Runs the fuzz campaign; `progress` is called once per finished program.
pub fn run(o: &FuzzOpts, progress: &(dyn Fn(&Case) + Sync)) -> Result<FuzzReport, String> {
    if o.arms.len() < 2 {
        return Err("fuzz needs at least two arms (e.g. --arms l1,only-naive)".into());
    }
    let progs = o.out.join("programs");
    let repros = o.out.join("repro");
    for d in [&progs, &repros] {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    let indices: Vec<u64> = match o.index {
        Some(i) => vec![i],
        None => (0..o.count)
            .filter(|i| o.shard.is_none_or(|(k, n)| i % n == k))
            .collect(),
    };
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Case>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..o.jobs.max(1) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&i) = indices.get(k) else { break };
                let c = one(o, i, &progs, &repros);
                progress(&c);
                results.lock().unwrap_or_else(|e| e.into_inner()).push(c);
            });
        }
    });
    let mut all = results.into_inner().unwrap_or_else(|e| e.into_inner());
    all.sort_by_key(|c| c.index);
    let count = |v: Verdict| all.iter().filter(|c| c.verdict == v).count() as u64;
    Ok(FuzzReport {
        format: "oracle-fuzz/1",
        seed: o.seed,
        count: o.count,
        shape: o.shape,
        arms: o.arms.clone(),
        dispatches: o.dispatches,
        exact: count(Verdict::Exact),
        diverged: count(Verdict::Diverged),
        failed: count(Verdict::Failed),
        cases: all
            .into_iter()
            .filter(|c| c.verdict != Verdict::Exact)
            .collect(),
    })
}

fn one(o: &FuzzOpts, i: u64, progs: &Path, repros: &Path) -> Case {
    let shape = shape_of(o.shape, i);
    let prog = generate(o.seed, i, o.shape);
    let path = progs.join(format!("f{}-{i}.com", o.seed));
    let mut c = Case {
        index: i,
        shape,
        len: prog.len(),
        verdict: Verdict::Exact,
        detail: String::new(),
        repro: None,
        minimized_len: None,
    };
    match check(&path, &prog, &o.arms, o.dispatches) {
        Ok(None) => {
            let _ = std::fs::remove_file(&path);
        }
        Err(e) => {
            c.verdict = Verdict::Failed;
            c.detail = e;
        }
        Ok(Some(arms)) => {
            c.verdict = Verdict::Diverged;
            c.detail = arms.join(",");
            let arm = arms[0].clone();
            let min_path = repros.join(format!("f{}-{i}.com", o.seed));
            let scratch = progs.join(format!("f{}-{i}-shrink.com", o.seed));
            let min = if o.shrink {
                shrink(&scratch, &prog, &o.arms, &arm, o.dispatches, 400)
            } else {
                prog.clone()
            };
            let _ = std::fs::remove_file(&scratch);
            c.minimized_len = Some(min.len());
            if std::fs::write(&min_path, &min).is_ok() {
                let spec = RunSpec::new(&min_path, o.dispatches);
                let pair = [o.arms[0].clone(), arm.clone()];
                match diff::diff(&spec, &pair, &opts_for(o.dispatches), 2, &mut |_| {}) {
                    Ok(r) => {
                        for (a, d) in &r.divergences {
                            match d {
                                Ok(d) => {
                                    let rp = repros.join(format!(
                                        "f{}-{i}-{}-d{}.json",
                                        o.seed,
                                        diff::sanitize(a),
                                        d.dispatch
                                    ));
                                    if diff::write_repro(&spec, d, &rp).is_ok() {
                                        c.repro = Some(rp.display().to_string());
                                    }
                                    c.detail = format!("{}\n{}", c.detail, diff::describe(d));
                                }
                                Err(e) => c.detail = format!("{}\nbisection: {e}", c.detail),
                            }
                        }
                    }
                    Err(e) => c.detail = format!("{}\n{e}", c.detail),
                }
            }
        }
    }
    c
}

/// A minimal HTML page: the summary and one row per non-exact program.
pub fn html(r: &FuzzReport) -> String {
    let esc = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let mut s = format!(
        "<!doctype html><meta charset=utf-8><title>oracle fuzz seed {}</title>\
         <h1>oracle fuzz, seed {}, shape {:?}</h1><p>{}</p><p>arms: {}; budget {} dispatches</p>\
         <table border=1><tr><th>#</th><th>shape</th><th>bytes</th><th>verdict</th><th>minimized</th><th>repro</th><th>detail</th></tr>",
        r.seed,
        r.seed,
        r.shape,
        esc(&r.line()),
        esc(&r.arms.join(", ")),
        r.dispatches
    );
    for c in &r.cases {
        s.push_str(&format!(
            "<tr><td>{}</td><td>{:?}</td><td>{}</td><td>{:?}</td><td>{}</td><td>{}</td><td><pre>{}</pre></td></tr>",
            c.index,
            c.shape,
            c.len,
            c.verdict,
            c.minimized_len.map(|n| n.to_string()).unwrap_or_default(),
            esc(c.repro.as_deref().unwrap_or("")),
            esc(&c.detail)
        ));
    }
    s.push_str("</table>\n");
    s
}
