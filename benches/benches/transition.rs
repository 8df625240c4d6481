//! E1 transition cost beside L1's, on the same x86 loops.
//!
//! Each loop is x86 code: a body of 16 instructions, then `dec bp / jnz`,
//! `ITERS` iterations. The µop side lowers the loop with the naive lowering
//! (`shared_ir::lower::lower_line`, one straight-line program that links to
//! itself) and runs it on E1 in one engine call: criterion's throughput is
//! in E1 ops executed (counted by `e1::run_counting`), so its time per
//! element is host ns per µop; the x86 instructions per µop are printed
//! once. The L1 side runs the same bytes on L1 over the flat test bus, one
//! `run` to the HLT after the loop: throughput in dispatches, so ns per
//! dispatch.
//!
//!   cargo bench -p benches --bench transition
//!
//! Loops: `regcopy` (16 × `mov r32, r32`), `alu16` (16 flag-writing 16-bit
//! register ALU ops).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use shared_ir::e1::{self, E1Arena, E1State};
use shared_ir::ir::code_key;
use shared_ir::lower::lower_line;
use shared_ir::machine::RealMode16;
use shared_ir::testkit::FakeMachine;
use toyvm::bus::Bus;
use toyvm::cpu::Cpu;
use toyvm::l1::{EngineExit, FlatBus, L1};

const ITERS: u16 = 10_000;
const CS: u16 = 0x1000;
const IP: u32 = 0x100;

/// The loop: body, `dec bp`, `jnz` back to the top, `hlt`.
fn code(body: &[&[u8]]) -> Vec<u8> {
    let mut c: Vec<u8> = body.iter().flat_map(|i| i.iter().copied()).collect();
    c.push(0x4D); // dec bp
    let back = -(c.len() as i32 + 2);
    c.extend_from_slice(&[0x75, back as i8 as u8]); // jnz top
    c.push(0xF4); // hlt
    c
}

fn cpu() -> Cpu {
    let mut c = Cpu::new();
    c.sregs[1] = CS;
    c.sbase[1] = (CS as u32) << 4;
    c.eip = IP;
    c.regs = [1, 2, 3, 4, 0xFFF0, ITERS as u32, 7, 8];
    c
}

fn bench_loop(c: &mut Criterion, name: &str, body: &[&[u8]]) {
    let bytes = code(body);
    let insns = body.len() as u64 + 2;
    let dispatches = ITERS as u64 * insns;
    let cs_base = (CS as u32) << 4;

    // E1: the naive program of the loop, linked to itself.
    let line = lower_line(&RealMode16, cs_base, IP, &bytes, 64);
    let p = line.program.expect("the loop lowers");
    assert_eq!(
        line.instructions as u64, insns,
        "one program for the whole loop"
    );
    let mut arena = E1Arena::new(1 << 14);
    let id = arena.install(&p).expect("installs");
    arena.set_head(id);
    arena.link_all();
    let mut m = FakeMachine::new();
    let run_e1 = |arena: &mut E1Arena, m: &mut FakeMachine, uops: &mut u64| {
        let c = cpu();
        let v = arena.vregs_mut();
        v[..8].copy_from_slice(&c.regs);
        for s in 0..6 {
            v[8 + s] = c.sregs[s] as u32;
            v[14 + s] = c.sbase[s];
        }
        let mut st = E1State {
            flags: c.flags,
            clock: 0,
        };
        let ex = e1::run_counting(arena, m, &mut st, id, u64::MAX / 2, uops).expect("resident");
        assert_eq!(st.clock, dispatches);
        assert_eq!(ex.exit.ip, IP + bytes.len() as u32 - 1, "leaves at the hlt");
        ex
    };
    let mut uops = 0;
    run_e1(&mut arena, &mut m, &mut uops);
    println!(
        "{name}: {} x86 instructions per iteration, {} E1 ops ({:.2} per x86 instruction, static {} ops)",
        insns,
        uops as f64 / ITERS as f64,
        uops as f64 / dispatches as f64,
        arena.ops(id).unwrap_or(0)
    );
    let mut g = c.benchmark_group(format!("transition/{name}"));
    g.sample_size(30);
    g.measurement_time(std::time::Duration::from_secs(4));
    g.throughput(Throughput::Elements(uops));
    g.bench_function("e1 ns per µop", |b| {
        b.iter(|| {
            let mut n = 0;
            run_e1(&mut arena, &mut m, &mut n)
        })
    });
    g.throughput(Throughput::Elements(dispatches));
    g.bench_function("e1 ns per x86 instruction", |b| {
        b.iter(|| {
            let mut n = 0;
            run_e1(&mut arena, &mut m, &mut n)
        })
    });

    // L1: the same bytes on the flat bus.
    let mut bus = FlatBus::new();
    for (i, &x) in bytes.iter().enumerate() {
        bus.write8(cs_base + IP + i as u32, x);
    }
    let mut l1: L1<FlatBus> = L1::new();
    let mut run_l1 = |bus: &mut FlatBus| {
        let mut c = cpu();
        let x = l1.run(&mut c, bus, u64::MAX / 2);
        assert_eq!(x, EngineExit::Halt);
        assert_eq!(c.clock, dispatches + 1);
        c.clock
    };
    run_l1(&mut bus);
    g.throughput(Throughput::Elements(dispatches + 1));
    g.bench_function("l1 ns per dispatch", |b| b.iter(|| run_l1(&mut bus)));
    g.finish();
    let _ = code_key(cs_base, IP);
}

fn benches(c: &mut Criterion) {
    // mov eax,ebx / mov ebx,ecx / ... (66 89 /r), 16 of them.
    let regcopy: Vec<&[u8]> = [
        &[0x66, 0x89, 0xD8][..],
        &[0x66, 0x89, 0xCB],
        &[0x66, 0x89, 0xD1],
        &[0x66, 0x89, 0xF2],
        &[0x66, 0x89, 0xFE],
        &[0x66, 0x89, 0xC7],
        &[0x66, 0x89, 0xD8],
        &[0x66, 0x89, 0xCB],
    ]
    .iter()
    .cycle()
    .take(16)
    .copied()
    .collect();
    bench_loop(c, "regcopy", &regcopy);
    // add ax,bx / xor cx,dx / sub si,di / and dx,ax / or bx,cx / adc di,si ...
    let alu16: Vec<&[u8]> = [
        &[0x01, 0xD8][..],
        &[0x31, 0xD1],
        &[0x29, 0xFE],
        &[0x21, 0xC2],
        &[0x09, 0xCB],
        &[0x11, 0xF7],
        &[0x19, 0xC1],
        &[0x01, 0xCA],
    ]
    .iter()
    .cycle()
    .take(16)
    .copied()
    .collect();
    bench_loop(c, "alu16", &alu16);
}

criterion_group!(transition, benches);
criterion_main!(transition);
