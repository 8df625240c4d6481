//! E1 transition cost: host ns per µop on small loops, measured with criterion.
//!
//! Each loop runs `ITERS` iterations of a body of µops inside one engine call
//! (a `clock.check`, the body, a decrement and a compare-and-branch per
//! iteration); throughput is reported in µops (engine ops executed), so
//! criterion's time per element is the ns per µop.
//!
//!   cargo bench -p shared-ir --bench e1
//!
//! Loops: `regcopy` (16 whole-register copies), `alu16` (16 flag-writing
//! 16-bit ALU ops on AX-style lanes), `alu32` (16 flag-writing 32-bit ops),
//! `mem16` (8 load/store pairs through the plain-RAM fast path).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use shared_ir::e1::{self, E1Arena, E1State};
use shared_ir::ir::parse::parse_program;
use shared_ir::testkit::FakeMachine;

const ITERS: u32 = 10_000;

fn program(body: &str) -> String {
    format!(
        "program model=real16 key=0x10 guest=20
b0:
  clock.check 1 @0x100/0
  mov v29, {ITERS:#x}
  jmp b1
b1:
  clock.check 1 @0x102/0
{body}
  sub.32 v29, v29, 1
  brcmp.ne.32 v29, 0, b1, b2
b2:
  exit stop @0x104/0
"
    )
}

fn repeat(lines: &[&str], n: usize) -> String {
    lines
        .iter()
        .cycle()
        .take(n)
        .map(|l| format!("  {l}\n"))
        .collect()
}

fn bench_loop(c: &mut Criterion, name: &str, body: String, body_ops: u64) {
    let p = parse_program(&program(&body)).expect("bench program parses");
    let mut arena = E1Arena::new(1 << 12);
    let id = arena.install(&p).expect("bench program installs");
    let mut m = FakeMachine::new();
    // Per iteration: clock.check + body + sub + brcmp; plus 3 entry ops and the exit.
    let uops = ITERS as u64 * (body_ops + 3) + 3;
    let mut g = c.benchmark_group("e1");
    g.throughput(Throughput::Elements(uops));
    g.sample_size(30);
    g.measurement_time(std::time::Duration::from_secs(4));
    g.bench_function(name, |b| {
        b.iter(|| {
            arena.vregs_mut()[..8].copy_from_slice(&[1, 2, 3, 4, 0x100, 6, 0x200, 8]);
            arena.vregs_mut()[17] = 0x1000;
            let mut st = E1State::default();
            let ex = e1::run(&mut arena, &mut m, &mut st, id, u64::MAX / 2).expect("resident");
            assert_eq!(st.clock, ITERS as u64 + 1);
            ex
        })
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    bench_loop(
        c,
        "regcopy",
        repeat(
            &[
                "mov eax, ebx",
                "mov ebx, ecx",
                "mov ecx, edx",
                "mov edx, eax",
            ],
            16,
        ),
        16,
    );
    bench_loop(
        c,
        "alu16",
        repeat(
            &[
                "add.16.f eax.w, eax.w, ebx.w",
                "xor.16.f ecx.w, ecx.w, eax.w",
                "sub.16.f edx.w, edx.w, 0x3",
                "and.16.f ebx.w, ebx.w, ecx.w",
            ],
            16,
        ),
        16,
    );
    bench_loop(
        c,
        "alu32",
        repeat(
            &[
                "add.32.f eax, eax, ebx",
                "xor.32.f ecx, ecx, eax",
                "sub.32.f edx, edx, 0x3",
                "and.32.f ebx, ebx, ecx",
            ],
            16,
        ),
        16,
    );
    bench_loop(
        c,
        "mem16",
        repeat(
            &[
                "ld.16 eax.w, [ds_base: esp + esi*1 + 0x10] a16 fast @0x102/1",
                "st.16 [ds_base: esp + edi*1 + 0x20] a16 fast, eax.w @0x102/1",
            ],
            16,
        ),
        16,
    );
}

criterion_group!(e1_benches, benches);
criterion_main!(e1_benches);
