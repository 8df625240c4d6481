//! Build cost per x86 instruction: L1's block compile beside the µop tier's
//! build, over the code of the built-in corpus programs (issue 12's gate:
//! a `baseline` build, lowering plus passes plus encoding, at most 3x L1's
//! compile per instruction).
//!
//! The code: every `.COM` under `corpus-dos/programs/`, loaded at
//! 1000:0100 on L1's flat test bus and swept linearly: an L1 block is
//! compiled at 0100, the next entry is where its bytes end (one byte on
//! when nothing compiles there). The µop side builds a line at each of
//! those entries, as the driver does (`lower_line_opts`, `optimize` with
//! the set, `E1Arena::install`, the arena cleared each iteration). Each
//! side's throughput is in the x86 instructions it took in, so criterion's
//! time per element is host ns per instruction. The gate's ratio is printed
//! first from 15 rounds that time one L1 sweep and one baseline build in
//! turn (median of the pair ratios, min and max, and the ratio of each
//! side's fastest round): criterion's groups run one after another and
//! drift apart on a shared box. `BUILD_COST_ROUNDS=N` sets the rounds.
//!
//!   cargo bench -p benches --bench build_cost

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use shared_ir::e1::E1Arena;
use shared_ir::lower::{lower_line_opts, LowerOpts};
use shared_ir::machine::RealMode16;
use shared_ir::opt::{optimize, PassSet};
use std::path::Path;
use toyvm::bus::Bus;
use toyvm::l1::block::{self, MAX_OPS};
use toyvm::l1::kinds::Kinds;
use toyvm::l1::smc::{CodeBits, Smc};
use toyvm::l1::tracked::Tracked;
use toyvm::l1::FlatBus;

const CS_BASE: u32 = 0x1_0000;
const IP: u32 = 0x100;
/// The driver's line cap (`tiers::only::LINE_CAP`).
const LINE_CAP: usize = 32;

/// One program's code and the entries of its linear sweep.
struct Code {
    bytes: Vec<u8>,
    entries: Vec<u32>,
}

fn corpus() -> Vec<Vec<u8>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus-dos/programs");
    let mut files = Vec::new();
    for d in std::fs::read_dir(&root)
        .expect("corpus-dos/programs")
        .flatten()
    {
        if let Ok(rd) = std::fs::read_dir(d.path()) {
            for f in rd.flatten() {
                let p = f.path();
                if p.extension().and_then(|e| e.to_str()) == Some("COM") {
                    files.push(p);
                }
            }
        }
    }
    files.sort();
    files.iter().filter_map(|p| std::fs::read(p).ok()).collect()
}

fn bus_with(bytes: &[u8]) -> FlatBus {
    let mut bus = FlatBus::new();
    for (i, &x) in bytes.iter().enumerate() {
        bus.write8(CS_BASE + IP + i as u32, x);
    }
    bus
}

/// Compiles every entry once on L1; returns the instructions compiled.
/// Not inlined, so callgrind can count each side's host instructions
/// (`docs/optimizer.md`, build cost).
#[inline(never)]
fn l1_compile(code: &Code, bus: &mut FlatBus, smc: &Smc, kinds: &Kinds) -> u64 {
    let mut tb = Tracked::new(bus, CodeBits::new());
    let mut n = 0;
    for &ip in &code.entries {
        if let Some(c) = block::compile(&mut tb, smc, kinds, CS_BASE, ip, MAX_OPS) {
            n += c.ops.len() as u64;
        }
    }
    n
}

/// Builds a µop line at every entry on `passes`; returns the instructions
/// lowered.
/// `install: false` stops after the passes (lowering and passes only).
#[inline(never)]
fn uop_build(code: &Code, passes: PassSet, arena: &mut E1Arena, install: bool) -> u64 {
    let mut n = 0;
    for &ip in &code.entries {
        let at = (ip - IP) as usize;
        let line = lower_line_opts(
            &RealMode16,
            LowerOpts::default(),
            CS_BASE,
            ip,
            &code.bytes[at..],
            LINE_CAP,
        );
        if let Some(p) = line.program {
            let p = optimize(&p, passes);
            if install && arena.install(&p).is_err() {
                arena.clear();
                arena.install(&p).expect("a line fits an empty arena");
            }
            n += line.instructions as u64;
        }
    }
    n
}

fn sweep(bytes: Vec<u8>, smc: &Smc, kinds: &Kinds) -> Code {
    let mut bus = bus_with(&bytes);
    let mut tb = Tracked::new(&mut bus, CodeBits::new());
    let end = IP + bytes.len() as u32;
    let mut entries = Vec::new();
    let mut ip = IP;
    while ip < end {
        entries.push(ip);
        let len: u32 = block::compile(&mut tb, smc, kinds, CS_BASE, ip, MAX_OPS)
            .map(|c| c.ranges.iter().map(|&(s, e)| e - s).sum())
            .unwrap_or(1);
        ip += len.max(1);
    }
    Code { bytes, entries }
}

fn benches(c: &mut Criterion) {
    let smc = Smc::new();
    let kinds = toyvm::l1::kinds::table::<FlatBus>();
    let codes: Vec<Code> = corpus()
        .into_iter()
        .map(|b| sweep(b, &smc, &kinds))
        .collect();
    let mut buses: Vec<FlatBus> = codes.iter().map(|c| bus_with(&c.bytes)).collect();
    let mut arena = E1Arena::new(shared_ir::e1::MEM_WORDS);
    let l1_all = |buses: &mut [FlatBus]| -> u64 {
        codes
            .iter()
            .zip(buses.iter_mut())
            .map(|(c, b)| l1_compile(c, b, &smc, &kinds))
            .sum()
    };
    // Each timed iteration starts from an empty arena, cleared outside the
    // timing (removing programs is eviction work, not building; a fresh
    // arena would bill the first touch of its pages to the build).
    let uop_all = |set: PassSet, arena: &mut E1Arena, install: bool| -> u64 {
        codes
            .iter()
            .map(|c| uop_build(c, set, arena, install))
            .sum()
    };
    let naive = PassSet::NAIVE;
    let baseline = PassSet::named("baseline").expect("the baseline set");
    let l1_insns = l1_all(&mut buses);
    let base_insns = uop_all(baseline, &mut arena, true);
    // A line takes in the same instructions whatever its pass set.
    let naive_insns = base_insns;
    // The gate's ratio, measured side by side: rounds of one L1 sweep and
    // one baseline build in turn, the ratio of each pair (the box is
    // shared: separate criterion runs drift apart), min / median / max.
    let rounds: usize = std::env::var("BUILD_COST_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15);
    let mut ratios = Vec::new();
    for _ in 0..rounds.max(1) {
        let t = std::time::Instant::now();
        std::hint::black_box(l1_all(&mut buses));
        let l1_ns = t.elapsed().as_nanos() as f64 / l1_insns as f64;
        arena.clear();
        let t = std::time::Instant::now();
        std::hint::black_box(uop_all(baseline, &mut arena, true));
        let base_ns = t.elapsed().as_nanos() as f64 / base_insns as f64;
        ratios.push((base_ns / l1_ns, l1_ns, base_ns));
    }
    // The fastest round of each side is the one least disturbed by the
    // box's other load; their ratio is printed beside the paired median.
    let l1_min = ratios.iter().map(|r| r.1).fold(f64::INFINITY, f64::min);
    let base_min = ratios.iter().map(|r| r.2).fold(f64::INFINITY, f64::min);
    ratios.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mid = ratios[ratios.len() / 2];
    println!(
        "build_cost: {} programs, {} entries; l1 {} insns, naive {} insns, baseline {} insns; paired rounds: l1 {:.0} ns/insn, baseline build {:.0} ns/insn, baseline / l1 = {:.2} (min {:.2}, max {:.2}); fastest rounds: l1 {:.0}, baseline {:.0} ns/insn, ratio {:.2}",
        codes.len(),
        codes.iter().map(|c| c.entries.len()).sum::<usize>(),
        l1_insns,
        naive_insns,
        base_insns,
        mid.1,
        mid.2,
        mid.0,
        ratios[0].0,
        ratios[ratios.len() - 1].0,
        l1_min,
        base_min,
        base_min / l1_min
    );
    let mut g = c.benchmark_group("build_cost");
    g.sample_size(20);
    g.measurement_time(std::time::Duration::from_secs(5));
    g.throughput(Throughput::Elements(l1_insns));
    g.bench_function("l1 compile ns per instruction", |b| {
        b.iter(|| l1_all(&mut buses))
    });
    let mut timed = |g: &mut criterion::BenchmarkGroup<_>, name: &str, set: PassSet, install| {
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut t = std::time::Duration::ZERO;
                for _ in 0..iters {
                    arena.clear();
                    let t0 = std::time::Instant::now();
                    std::hint::black_box(uop_all(set, &mut arena, install));
                    t += t0.elapsed();
                }
                t
            })
        });
    };
    g.throughput(Throughput::Elements(naive_insns));
    timed(&mut g, "naive build ns per instruction", naive, true);
    timed(
        &mut g,
        "naive lowering only, ns per instruction",
        naive,
        false,
    );
    g.throughput(Throughput::Elements(base_insns));
    timed(&mut g, "baseline build ns per instruction", baseline, true);
    timed(
        &mut g,
        "baseline lowering and passes only, ns per instruction",
        baseline,
        false,
    );
    g.finish();
}

criterion_group!(build, benches);
criterion_main!(build);
