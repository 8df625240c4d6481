//! `oracle fuzz`: generation is deterministic and valid, generated programs
//! run to their own end, real arms agree on a sampled campaign, a
//! deliberately broken arm is caught, shrunk and bisected to the dispatch
//! where it breaks, and shards merge into the unsharded report.

use oracle::fuzz::real16::{feature, Plan16};
use oracle::fuzz::{generate, run, shape_of, FuzzOpts, Plan, Rng, Shape, ShardId, Verdict};
use oracle::spec::RunSpec;
use std::collections::BTreeMap;

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
fn generation_is_deterministic_and_every_plan_assembles() {
    for i in 0..300 {
        for shape in [Shape::Bytes, Shape::Insns, Shape::Mixed] {
            let a = generate(7, i, shape);
            assert_eq!(a, generate(7, i, shape), "program {i} {shape}");
            let plan = Plan::new(7, i, shape);
            plan.assembles()
                .unwrap_or_else(|e| panic!("program {i} {shape}: {e}"));
            if shape_of(shape, i) == Shape::Bytes {
                assert_eq!(&a[a.len() - 2..], &[0xCD, 0x20], "ends with INT 20h");
            }
        }
    }
    assert_ne!(generate(7, 0, Shape::Bytes), generate(8, 0, Shape::Bytes));
    assert_ne!(generate(7, 1, Shape::Insns), generate(7, 3, Shape::Insns));
}

/// Every prologue feature switched off still assembles (the shrinker's
/// simpler plans).
#[test]
fn simpler_prologues_assemble() {
    for i in 0..40 {
        let p = Plan16::random(&mut Rng::for_program(3, i));
        for f in 0..=feature::ALL {
            let q = Plan16 {
                features: f,
                ..p.clone()
            };
            q.assemble()
                .unwrap_or_else(|e| panic!("plan {i} features {f}: {e}"));
        }
    }
}

/// Generated programs are valid programs: under l0 they end by exiting (or
/// at the budget, for programs that wait on the timer or spin), never
/// stopped by an invalid opcode, a fault or an unimplemented service.
#[test]
fn insns_programs_run_to_their_own_end() {
    let dir = std::env::temp_dir().join(format!("oracle-fuzz-ends-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut ends: BTreeMap<String, u32> = BTreeMap::new();
    let mut bad = Vec::new();
    for i in 0..120u64 {
        let img = generate(21, i, Shape::Insns);
        let path = dir.join(format!("p{i}.com"));
        std::fs::write(&path, &img).unwrap();
        let mut s = RunSpec::new(&path, 300_000).open("l0").unwrap();
        oracle::compare::advance(s.as_mut(), "l0", 300_000).unwrap();
        let end = oracle::state::State::capture_light(s.as_mut()).end;
        let key = if end.starts_with("exited") {
            "exited".to_string()
        } else {
            end.clone()
        };
        if !(end.starts_with("exited") || end == "budget") {
            bad.push(format!("program {i}: {end}"));
        }
        *ends.entry(key).or_default() += 1;
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("ends under l0: {ends:?}");
    assert!(bad.is_empty(), "{bad:#?}\nends: {ends:?}");
    assert!(
        ends.get("exited").copied().unwrap_or(0) >= 90,
        "most programs exit by themselves: {ends:?}"
    );
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
    let _ = std::fs::remove_dir_all(&o.out);
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
    let m = c.minimized.as_ref().expect("minimized");
    assert!(m.len <= c.len, "{} > {}", m.len, c.len);
    assert_eq!(c.dispatch, Some(40), "{}", c.detail);
    assert!(
        c.detail.contains("first differing dispatch: 40"),
        "{}",
        c.detail
    );
    let repro = c.repro.as_ref().expect("a repro file");
    assert!(std::path::Path::new(repro).exists());
    let _ = std::fs::remove_dir_all(&o.out);
}

#[test]
fn shards_merge_into_the_unsharded_report() {
    let whole = opts("merge", "l1,l0", 12, Shape::Mixed);
    let all = run(&whole, &|_| {}).unwrap();
    let mut parts = Vec::new();
    for k in 0..3 {
        let mut o = opts("merge", "l1,l0", 12, Shape::Mixed);
        o.shard = Some(ShardId { index: k, count: 3 });
        let r = run(&o, &|_| {}).unwrap();
        assert_eq!(r.exact + r.diverged + r.failed, 4);
        parts.push((format!("shard {k}"), r));
    }
    let merged = oracle::fuzz::report::merge(parts.clone()).unwrap();
    assert_eq!(merged.to_json().unwrap(), all.to_json().unwrap());
    assert_eq!(
        oracle::fuzz::report::html(&merged),
        oracle::fuzz::report::html(&all)
    );
    // A missing or repeated shard is refused.
    assert!(oracle::fuzz::report::merge(parts[..2].to_vec()).is_err());
    let mut twice = parts.clone();
    twice[2] = parts[1].clone();
    assert!(oracle::fuzz::report::merge(twice).is_err());
    let _ = std::fs::remove_dir_all(&whole.out);
}

/// The generator exercises what docs/oracle.md says it does: stepping a
/// sample of insns programs one dispatch at a time under l0 sees code run
/// with an aliased CS, a line run across the end of CS into CS:0000, the
/// program's own handlers (divide error, single step, INT 3, INTO, the user
/// vectors), DOS and BIOS services, the timer interrupt, and the data
/// segment registers away from CS, and protected-mode round trips.
#[test]
fn insns_programs_cover_what_the_docs_claim() {
    let dir = std::env::temp_dir().join(format!("oracle-fuzz-cover-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut aliased = 0;
    let mut wrapped = 0;
    let mut seg_apart = 0;
    let mut pmode = 0;
    let mut vectors: BTreeMap<u8, u64> = BTreeMap::new();
    for i in 0..60u64 {
        let img = generate(5, i, Shape::Insns);
        let path = dir.join(format!("p{i}.com"));
        std::fs::write(&path, &img).unwrap();
        let mut s = RunSpec::new(&path, 30_000).open_native("l0").unwrap();
        let psp = s.cpu.sregs[1];
        let (mut alias, mut wrap, mut apart, mut pm) = (false, false, false, false);
        let mut last_ip = 0u32;
        while s.end.is_none() && s.clock() < 30_000 {
            let cs = s.cpu.sregs[1];
            let ip = s.cpu.eip;
            if cs != psp && cs.wrapping_sub(psp) < 0x20 || psp.wrapping_sub(cs) == 1 {
                alias = true;
            }
            if cs == psp && last_ip >= 0xFF00 && ip < 0x100 {
                wrap = true;
            }
            if s.cpu.sregs[3] != psp && s.cpu.sregs[3].wrapping_sub(psp) <= 0x1000 {
                apart = true;
            }
            last_ip = if cs == psp { ip } else { 0 };
            pm |= s.cpu.pmode;
            // Entering a vector's handler (software and hardware alike).
            let ram = s.machine.mem.ram();
            for v in [0x00u8, 0x01, 0x03, 0x04, 0x10, 0x21, 0x60, 0x61, 0x62, 0x63] {
                let e = v as usize * 4;
                let off = u16::from_le_bytes([ram[e], ram[e + 1]]) as u32;
                let seg = u16::from_le_bytes([ram[e + 2], ram[e + 3]]);
                if (seg, off) == (cs, ip) {
                    *vectors.entry(v).or_default() += 1;
                }
            }
            let t = s.clock() + 1;
            s.run_until(t);
        }
        for (v, n) in &s.interrupts {
            *vectors.entry(*v).or_default() += n;
        }
        aliased += alias as u32;
        wrapped += wrap as u32;
        seg_apart += apart as u32;
        pmode += pm as u32;
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!(
        "aliased {aliased}, wrapped {wrapped}, DS apart {seg_apart}, protected mode {pmode}, vectors {vectors:x?}"
    );
    assert!(pmode >= 5, "protected-mode round trips in {pmode} programs");
    assert!(aliased >= 2, "aliased CS in {aliased} programs");
    assert!(
        wrapped >= 1,
        "a line across the end of CS in {wrapped} programs"
    );
    assert!(seg_apart >= 10, "DS away from CS in {seg_apart} programs");
    for v in [
        0x00u8, 0x01, 0x03, 0x04, 0x08, 0x10, 0x21, 0x60, 0x61, 0x62, 0x63,
    ] {
        assert!(
            vectors.contains_key(&v),
            "vector {v:02X}h never taken: {vectors:x?}"
        );
    }
}
