//! The µop arms against L1 (docs/port.md): every mingw test program under
//! `l1`, `only-naive`, `only-baseline` and `only-all` with identical
//! summaries (ending, dispatches, API calls), output, thread registers and
//! address-space hash; budget stops landing at N exactly with equal state
//! (threads, faults, self-modifying code); the self-modifying program's
//! stores retiring µop programs; and 7-Zip's benchmark to a budget.
mod common;

use common::arms::{diff, finish, go, End};
use mainemu::process::{Process, Setup};
use mainemu::run::{Arm, Ending};

fn arm(name: &str) -> Arm {
    name.parse().unwrap()
}

const UOP_ARMS: &[&str] = &["only-naive", "only-baseline", "only-all"];

/// The tier's counter `k` of a µop run (0 when absent).
fn counter(e: &End, k: &str) -> u64 {
    e.s.uop
        .as_ref()
        .expect("µop counters")
        .get(k)
        .copied()
        .unwrap_or(0)
}

const PROGRAMS: &[(&str, &[&str])] = &[
    ("hello.exe", &[]),
    ("heap.exe", &[]),
    ("cmdline.exe", &["x", "y z"]),
    ("fileio.exe", &[]),
    ("files.exe", &[]),
    ("crtio.exe", &[]),
    ("threads.exe", &[]),
    ("seh.exe", &[]),
    ("usedll.exe", &[]),
    ("gdi_shapes.exe", &[]),
    ("gdi_bits.exe", &[]),
    ("smc.exe", &[]),
    ("smc.exe", &["noaccess"]),
    ("compute.exe", &["2"]),
];

#[test]
fn every_program_is_the_same_under_l1_and_every_uop_arm() {
    let mut failures = Vec::new();
    for &(name, args) in PROGRAMS {
        let Some(a) = go(name, args, Arm::L1, 50_000_000) else {
            return;
        };
        assert!(
            matches!(a.s.ending, Ending::Exit { .. } | Ending::Stop { .. }),
            "{name}: {:?}",
            a.s.ending
        );
        for &u in UOP_ARMS {
            let b = go(name, args, arm(u), 50_000_000).unwrap();
            assert_eq!(b.s.arm, u);
            // Most guest dispatches run inside µop programs.
            let inside = counter(&b, "uop_insns");
            if inside * 2 < counter(&b, "dispatches") {
                failures.push(format!("{name} {u}: only {inside} dispatches in programs"));
            }
            for d in diff(&a, &b) {
                failures.push(format!("{name} {u}: {d}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn budget_stops_land_at_n_with_equal_state() {
    let cases: &[(&str, &[u64])] = &[
        ("threads.exe", &[1, 7, 4_321, 50_001, 123_457, 3_000_017]),
        ("seh.exe", &[1, 100, 2_000, 5_555, 7_000, 7_439]),
        ("smc.exe", &[10, 3_001, 9_999, 20_000, 27_182, 34_063]),
        ("heap.exe", &[77, 60_001, 300_000, 605_021]),
    ];
    let mut failures = Vec::new();
    for &(name, budgets) in cases {
        for &n in budgets {
            let Some(a) = go(name, &[], Arm::L1, n) else {
                return;
            };
            assert_eq!(
                (&a.s.ending, a.s.dispatches),
                (&Ending::Budget, n),
                "{name} @{n}"
            );
            for &u in UOP_ARMS {
                let b = go(name, &[], arm(u), n).unwrap();
                for d in diff(&a, &b) {
                    failures.push(format!("{name} {u} @{n}: {d}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_budget_in_the_self_patching_loop_stops_exactly() {
    // smc.exe's loop patches its own ADD immediate: stops at every
    // instruction around a store into the running program.
    let mut failures = Vec::new();
    for n in 1_900..2_000 {
        let Some(a) = go("smc.exe", &[], Arm::L1, n) else {
            return;
        };
        let b = go("smc.exe", &[], arm("only-naive"), n).unwrap();
        for d in diff(&a, &b) {
            failures.push(format!("smc.exe @{n}: {d}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn self_modifying_code_retires_programs() {
    let Some(b) = go("smc.exe", &[], arm("only-naive"), 50_000_000) else {
        return;
    };
    assert_eq!(
        b.out,
        "loop sum=500500 imm=1001\ninline sum=1275\nwindow acc=1801789955\ndata t=486094 f1=8 f2=9\n"
    );
    assert_eq!(
        (&b.s.ending, b.s.dispatches),
        (&Ending::Exit { code: 0 }, 34_064)
    );
    // Every patch of the loop's immediate retires the program holding it.
    assert!(counter(&b, "retired") >= 1000, "{:?}", b.s.uop);
    assert!(counter(&b, "handbacks.smc") >= 1000, "{:?}", b.s.uop);
}

#[test]
fn bad_arm_names_are_clear_errors() {
    let e = "only-nosuchpass".parse::<Arm>().unwrap_err();
    assert!(e.contains("only-nosuchpass"), "{e}");
    let e = "fast".parse::<Arm>().unwrap_err();
    assert!(e.contains("only-naive"), "{e}");
}

#[test]
fn real_7za_benchmark_runs_the_same_under_l1_and_only_naive() {
    let Some(dir) = common::win32_real() else {
        return;
    };
    let exe = dir.join("7zip-18.01/7za.exe");
    let args: Vec<String> = ["b", "-mmt1", "-md16"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let run = |arm: Arm| {
        let c = std::env::temp_dir().join(format!(
            "mainemu-uop-7za-{}-{}",
            std::process::id(),
            arm.name()
        ));
        std::fs::create_dir_all(&c).unwrap();
        let mut setup = Setup::for_program(&exe, &args, &[('C', c.clone())], &[]).unwrap();
        setup.stdin = Box::new(std::io::empty());
        let p = Process::with_setup(&std::fs::read(&exe).unwrap(), setup).unwrap();
        let end = finish(p, arm, 5_000_000);
        std::fs::remove_dir_all(&c).ok();
        end
    };
    let (a, b) = (run(Arm::L1), run(arm("only-naive")));
    assert_eq!((&a.s.ending, a.s.dispatches), (&Ending::Budget, 5_000_000));
    assert_eq!(diff(&a, &b), Vec::<String>::new());
    assert!(
        counter(&b, "uop_insns") * 10 > 9 * 5_000_000,
        "{:?}",
        b.s.uop
    );
}
