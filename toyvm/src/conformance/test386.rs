//! test386.asm (`../shared/cpu-tests/test386`): a BIOS-replacement ROM that
//! tests real mode, protected mode, paging, rings, V86 and task switches,
//! reporting progress as POST codes and printing the results of its 0xEE
//! arithmetic series.
//!
//! Owns the ROM as its README says to install it (64 KiB at F0000h, aliased
//! at FFFF0000h, the CPU at its reset vector FFFF:FFF0 with CS base
//! FFFF0000h), the test machine (RAM below the ROM, the POST port 190h, an
//! output port), the run to the final HLT, and the comparison of the 0xEE
//! output with `test386-EE-reference.txt` line by line. The shipped
//! `test386.bin` prints nowhere (its `configuration.asm` leaves every
//! output port at 0); as the README says to configure the EQUs for the
//! system, the runner assembles the source with `OUT_PORT equ 0xE9` when
//! NASM is installed (the build with the shipped configuration reproduces
//! `test386.bin` byte for byte) and falls back to `test386.bin`, without
//! the comparison, when it is not. It must not change CPU semantics.

use crate::bus::{Bus, EngineBus, Width};
use crate::cpu::{l0, seg, Cpu, StepOutcome};
use crate::l1::{EngineExit, L1};
use std::path::{Path, PathBuf};

/// The diagnostic port test386 writes its POST codes to.
pub const POST_PORT: u16 = 0x190;
/// The port the configured ROM prints its results on.
pub const OUT_PORT: u16 = 0xE9;
/// RAM below the ROM (the test touches the first MiB only).
const RAM_SIZE: usize = 2 << 20;

/// The test machine: RAM, the ROM at F0000h and FFFF0000h, the POST and
/// output ports.
pub struct Test386Bus {
    ram: Vec<u8>,
    rom: Vec<u8>,
    /// Every POST code written, with the dispatch it was written at.
    pub posts: Vec<(u8, u64)>,
    /// Bytes written to the output port.
    pub out: Vec<u8>,
}

impl Test386Bus {
    pub fn new(rom: &[u8]) -> Test386Bus {
        let mut r = vec![0xFF; 0x10000];
        let n = rom.len().min(0x10000);
        r[0x10000 - n..].copy_from_slice(&rom[rom.len() - n..]);
        Test386Bus {
            ram: vec![0; RAM_SIZE],
            rom: r,
            posts: Vec::new(),
            out: Vec::new(),
        }
    }

    /// The last POST code written (0 before any).
    pub fn post(&self) -> u8 {
        self.posts.last().map_or(0, |p| p.0)
    }
}

impl Bus for Test386Bus {
    #[inline]
    fn read8(&mut self, addr: u32) -> u8 {
        if addr >= 0xFFFF_0000 || (0xF_0000..0x10_0000).contains(&addr) {
            return self.rom[(addr & 0xFFFF) as usize];
        }
        self.ram.get(addr as usize).copied().unwrap_or(0xFF)
    }
    #[inline]
    fn write8(&mut self, addr: u32, v: u8) {
        if (0xF_0000..0x10_0000).contains(&addr) {
            return;
        }
        if let Some(b) = self.ram.get_mut(addr as usize) {
            *b = v;
        }
    }
    fn io_read(&mut self, _port: u16, w: Width, _now: u64) -> u32 {
        w.mask()
    }
    fn io_write(&mut self, port: u16, _w: Width, v: u32, now: u64) {
        match port {
            POST_PORT => self.posts.push((v as u8, now)),
            OUT_PORT => self.out.push(v as u8),
            _ => {}
        }
    }
}

impl EngineBus for Test386Bus {
    fn code_cacheable(&self, _start: u32, _end: u32) -> bool {
        true
    }
    fn mark_code(&mut self, _start: u32, _end: u32) {}
    fn clear_code_marks(&mut self) {}
    // Every write is a guest store through the engine: L1's store monitor
    // sees them all.
    fn take_code_writes(&mut self, _out: &mut Vec<u32>) {}
    fn port_stable_until(&mut self, _port: u16, _w: Width, _mask: u32, _now: u64) -> Option<u64> {
        None
    }
    fn take_io_attention(&mut self) -> bool {
        false
    }
}

/// Whether a directory holds the test386 suite.
pub fn is_suite(dir: &Path) -> bool {
    dir.join("test386.bin").is_file() && dir.join("test386-EE-reference.txt").is_file()
}

/// The ROM to run and where it came from.
pub struct Rom {
    pub bytes: Vec<u8>,
    /// "assembled with OUT_PORT equ 0xE9" or why the shipped binary is used.
    pub origin: String,
    /// Whether the ROM prints its 0xEE results on [`OUT_PORT`].
    pub prints: bool,
}

/// Assembles the suite's source with the output port configured, or falls
/// back to the shipped `test386.bin`.
pub fn rom(dir: &Path) -> Result<Rom, String> {
    let src = dir.join("src");
    if src.join("test386.asm").is_file() {
        match assemble(&src) {
            Ok(bytes) => {
                return Ok(Rom {
                    bytes,
                    origin: format!("assembled from {} with OUT_PORT equ 0xE9", src.display()),
                    prints: true,
                })
            }
            Err(why) => {
                let p = dir.join("test386.bin");
                let bytes = std::fs::read(&p).map_err(|e| format!("{}: {e}", p.display()))?;
                return Ok(Rom {
                    bytes,
                    origin: format!("{} as shipped (it prints nowhere; {why})", p.display()),
                    prints: false,
                });
            }
        }
    }
    let p = dir.join("test386.bin");
    let bytes = std::fs::read(&p).map_err(|e| format!("{}: {e}", p.display()))?;
    Ok(Rom {
        bytes,
        origin: format!(
            "{} as shipped (it prints nowhere; no source to configure)",
            p.display()
        ),
        prints: false,
    })
}

/// Copies `src` to a scratch directory, sets `OUT_PORT equ 0xE9` in its
/// configuration and runs NASM as the suite's makefile does.
fn assemble(src: &Path) -> Result<Vec<u8>, String> {
    let tmp = scratch_dir();
    let out = (|| -> Result<Vec<u8>, String> {
        copy_dir(src, &tmp.join("src")).map_err(|e| format!("copying the source: {e}"))?;
        let cfg = tmp.join("src").join("configuration.asm");
        let text = std::fs::read_to_string(&cfg).map_err(|e| format!("{}: {e}", cfg.display()))?;
        let mut found = false;
        let text: String = text
            .lines()
            .map(|l| {
                if l.trim_start().starts_with("OUT_PORT") && l.contains("equ") {
                    found = true;
                    "OUT_PORT equ 0xE9".to_string()
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        if !found {
            return Err("configuration.asm has no OUT_PORT equ".into());
        }
        std::fs::write(&cfg, text + "\n").map_err(|e| format!("{}: {e}", cfg.display()))?;
        let inc = format!("{}/", tmp.join("src").display());
        let bin = tmp.join("test386.bin");
        let st = std::process::Command::new("nasm")
            .arg(format!("-i{inc}"))
            .args(["-f", "bin"])
            .arg(tmp.join("src").join("test386.asm"))
            .arg("-w-all")
            .arg("-o")
            .arg(&bin)
            .output()
            .map_err(|e| format!("nasm not available: {e}"))?;
        if !st.status.success() {
            return Err(format!(
                "nasm failed: {}",
                String::from_utf8_lossy(&st.stderr)
                    .lines()
                    .next()
                    .unwrap_or("")
            ));
        }
        std::fs::read(&bin).map_err(|e| format!("{}: {e}", bin.display()))
    })();
    let _ = std::fs::remove_dir_all(&tmp);
    out
}

fn scratch_dir() -> PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    std::env::temp_dir().join(format!(
        "toyvm-test386-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()))?;
        } else {
            std::fs::copy(&p, to.join(e.file_name()))?;
            // Sources on a read-only share stay read-only in the copy.
            let mut perm = std::fs::metadata(to.join(e.file_name()))?.permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            perm.set_readonly(false);
            std::fs::set_permissions(to.join(e.file_name()), perm)?;
        }
    }
    Ok(())
}

/// Which engine runs the ROM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    L0,
    L1,
}

/// How a run ended.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// POST codes in the order reached (repeats of the same code folded).
    pub posts: Vec<(u8, u64)>,
    pub output: Vec<u8>,
    pub dispatches: u64,
    /// "halted", "budget", or the stop report.
    pub end: String,
    pub cpu: Cpu,
}

impl Outcome {
    /// The last POST code reached.
    pub fn post(&self) -> u8 {
        self.posts.last().map_or(0, |p| p.0)
    }
}

/// The CPU at the reset vector: CS F000h with base FFFF0000h, IP FFF0h.
pub fn reset_cpu() -> Cpu {
    let mut cpu = Cpu::new();
    cpu.sregs[seg::CS] = 0xF000;
    cpu.sbase[seg::CS] = 0xFFFF_0000;
    cpu.eip = 0xFFF0;
    cpu
}

/// Runs the ROM from reset to its final HLT (test386 halts with interrupts
/// off at POST FF, or at the failing test's code), at most `budget`
/// dispatches.
pub fn run(rom: &[u8], engine: Engine, budget: u64) -> Outcome {
    let mut bus = Test386Bus::new(rom);
    let mut cpu = reset_cpu();
    // Debugging aid: TOYVM_TEST386_TRACE=N prints the last N instructions
    // (L0) before the run ends.
    let trace: usize = std::env::var("TOYVM_TEST386_TRACE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut last: std::collections::VecDeque<String> = std::collections::VecDeque::new();
    let end = match engine {
        Engine::L0 => loop {
            if cpu.clock >= budget {
                break "budget".to_string();
            }
            if trace > 0 {
                if last.len() == trace {
                    last.pop_front();
                }
                let lin = cpu.sbase[seg::CS].wrapping_add(cpu.eip);
                last.push_back(format!(
                    "{:>9} {:04X}:{:08X} lin {:08X} cpl{} v86={} EAX={:08X} EBX={:08X} ECX={:08X} EDX={:08X} ESI={:08X} EDI={:08X} EBP={:08X} ESP={:08X} DS={:04X} ES={:04X} SS={:04X} F={:08X}",
                    cpu.clock, cpu.sregs[seg::CS], cpu.eip, lin, cpu.cpl, cpu.v86 as u8, cpu.regs[0], cpu.regs[3], cpu.regs[1], cpu.regs[2],
                    cpu.regs[6], cpu.regs[7], cpu.regs[5], cpu.regs[4], cpu.sregs[3], cpu.sregs[0], cpu.sregs[2], cpu.eflags()
                ));
            }
            match l0::step(&mut cpu, &mut bus) {
                StepOutcome::Ok => {}
                StepOutcome::Halt => break "halted".to_string(),
                StepOutcome::HostCall(n) => break format!("unexpected host call {n:#06X}"),
                StepOutcome::Stop(r) => break format!("stopped: {r}"),
            }
        },
        Engine::L1 => {
            let mut l1: L1<Test386Bus> = L1::new();
            loop {
                match l1.run(&mut cpu, &mut bus, budget) {
                    EngineExit::Reached => break "budget".to_string(),
                    EngineExit::Halt => break "halted".to_string(),
                    EngineExit::HostCall(n) => break format!("unexpected host call {n:#06X}"),
                    EngineExit::Stop(r) => break format!("stopped: {r}"),
                    EngineExit::Attention => {}
                }
            }
        }
    };
    for l in &last {
        eprintln!("{l}");
    }
    let mut posts: Vec<(u8, u64)> = Vec::new();
    for &(p, t) in &bus.posts {
        if posts.last().map(|x| x.0) != Some(p) {
            posts.push((p, t));
        }
    }
    Outcome {
        posts,
        output: bus.out,
        dispatches: cpu.clock,
        end,
        cpu,
    }
}

/// Line-by-line differences between the output and the reference: the
/// count (a line that differs, or is missing or extra, counts once) and
/// the first few, as `line N: got ... / want ...`.
pub fn compare(output: &[u8], reference: &[u8], show: usize) -> (usize, Vec<String>) {
    let got: Vec<&[u8]> = output.split(|&b| b == b'\n').collect();
    let want: Vec<&[u8]> = reference.split(|&b| b == b'\n').collect();
    let mut n = 0;
    let mut first = Vec::new();
    for i in 0..got.len().max(want.len()) {
        let (g, w) = (got.get(i), want.get(i));
        if g != w {
            n += 1;
            if first.len() < show {
                let s = |x: Option<&&[u8]>| {
                    x.map_or("(none)".to_string(), |l| {
                        String::from_utf8_lossy(l).into_owned()
                    })
                };
                first.push(format!("line {}: got {:?} / want {:?}", i + 1, s(g), s(w)));
            }
        }
    }
    (n, first)
}
