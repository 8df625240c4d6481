//! `oracle fuzz`: generation is deterministic and valid, real arms agree on
//! a sampled campaign, and a deliberately broken arm is caught, shrunk and
//! bisected to the dispatch where it breaks.

use iced_x86::{Decoder, DecoderOptions};
use oracle::fuzz::{generate, run, shape_of, FuzzOpts, Shape, Verdict};

fn opts(out: &str, arms: &str, count: u64, shape: Shape) -> FuzzOpts {
    FuzzOpts {
        seed: 7,
        count,
        shape,
        arms: oracle::arms::parse_list(arms).unwrap(),
        dispatches: 50_000,
        jobs: 2,
        index: None,
        shard: None,
        out: std::env::temp_dir().join(format!("oracle-fuzz-test-{out}-{}", std::process::id())),
        shrink: true,
    }
}

#[test]
fn generation_is_deterministic_and_insns_are_valid() {
    for i in 0..200 {
        for shape in [Shape::Bytes, Shape::Insns, Shape::Mixed] {
            let a = generate(7, i, shape);
            assert_eq!(a, generate(7, i, shape), "program {i} {shape:?}");
            assert_eq!(&a[a.len() - 2..], &[0xCD, 0x20], "ends with INT 20h");
            if shape_of(shape, i) == Shape::Insns {
                let mut d = Decoder::with_ip(16, &a, 0x100, DecoderOptions::NONE);
                while d.can_decode() {
                    let ins = d.decode();
                    assert!(!ins.is_invalid(), "program {i}: invalid at {:X}", ins.ip());
                }
            }
        }
    }
    assert_ne!(generate(7, 0, Shape::Bytes), generate(8, 0, Shape::Bytes));
}

#[test]
fn real_arms_agree_on_a_mixed_campaign() {
    let o = opts("exact", "l1,only-naive,l0", 40, Shape::Mixed);
    let r = run(&o, &|_| {}).unwrap();
    assert_eq!(
        (r.exact, r.diverged, r.failed),
        (40, 0, 0),
        "{:#?}",
        r.cases
    );
    assert_eq!(
        r.line(),
        "fuzz: 40 programs, 40 exact, 0 diverged, 0 failed"
    );
}

#[test]
fn a_broken_arm_is_caught_shrunk_and_bisected() {
    // `skip@40`: dispatch 40 is billed but its instruction does not run.
    let mut o = opts("broken", "l1,l1+skip@40", 4, Shape::Insns);
    o.jobs = 1;
    let r = run(&o, &|_| {}).unwrap();
    assert!(r.diverged >= 1, "{}", r.line());
    let c = r
        .cases
        .iter()
        .find(|c| c.verdict == Verdict::Diverged)
        .unwrap();
    assert!(c.minimized_len.unwrap() <= c.len);
    assert!(
        c.detail.contains("first differing dispatch: 40"),
        "{}",
        c.detail
    );
    let repro = c.repro.as_ref().expect("a repro file");
    assert!(std::path::Path::new(repro).exists());
    let _ = std::fs::remove_dir_all(&o.out);
}
