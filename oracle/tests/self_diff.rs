//! An arm against itself is exact, and sampling does not perturb the run:
//! the lockstep's final state equals a plain run's, on programs covering
//! IRQs, HLT, keys, Sound Blaster DMA, mode 13h, EXEC, TSR companions and SMC.
//! The same for L1, against L0 and against itself.

mod common;
use common::*;
use oracle::compare::{lockstep, Options};
use oracle::state::State;

fn plain_final(spec: &oracle::spec::RunSpec, arm: &str) -> State {
    let mut s = spec.open(arm).unwrap();
    s.try_run_until(u64::MAX).unwrap();
    State::capture(s.as_mut())
}

#[test]
fn l0_against_itself_is_exact_and_sampling_is_transparent() {
    // (program, budget cap, expected end, dispatches, final frame hash):
    // recorded from `oracle diff NAME --arms l0,l0 --dispatches CAP`.
    let cases: &[(&str, u64, &str, u64, &str)] = &[
        ("alu16", 3_000_000, "exited 0", 400_608, "6528e78eb11e735b"),
        ("plasma", 3_000_000, "budget", 3_000_000, "a56f150787b072a4"),
        ("hlt5", 3_000_000, "exited 0", 1_098_542, "2cd1df161f58d18c"),
        (
            "kbd09",
            3_000_000,
            "exited 0",
            2_400_162,
            "4bfc76add0fe0d59",
        ),
        (
            "autoinit",
            3_000_000,
            "exited 0",
            2_058_652,
            "6a76439cf8a1b4b6",
        ),
        (
            "chain08",
            2_000_000,
            "exited 0",
            1_757_664,
            "76091d059609aa2f",
        ),
        ("tsruse", 3_000_000, "exited 0", 13_030, "ea4874d106800abe"),
        ("parent", 3_000_000, "exited 0", 26_679, "6629edc133568fe5"),
        ("nextrep", 3_000_000, "exited 0", 14_677, "c13b548d50c5164a"),
    ];
    for &(name, cap, end, disp, frame) in cases {
        let spec = corpus_spec(name, cap);
        let opts = Options {
            interval: 100_000,
            ..Options::default()
        };
        let ls = lockstep(&spec, &arms("l0,l0"), &opts, &mut |_| {}).unwrap();
        assert!(ls.exact(), "{name}: l0 against itself diverged");
        // Sampled every 100K dispatches and at every frame edge (~57K).
        let last = &ls.arms[0].last;
        assert!(
            ls.samples > last.dispatches / 100_000,
            "{name}: only {} samples",
            ls.samples
        );
        assert_eq!(last, &ls.arms[1].last, "{name}");
        assert_eq!(
            last,
            &plain_final(&spec, "l0"),
            "{name}: sampling changed the run"
        );
        assert_eq!(
            (last.end.as_str(), last.dispatches, last.frame_hash.as_str()),
            (end, disp, frame),
            "{name}"
        );
    }
}

#[test]
fn l1_matches_l0_and_itself_and_sampling_does_not_perturb_it() {
    for (name, cap) in [
        ("plasma", 3_000_000),
        ("kbd09", 3_000_000),
        ("autoinit", 3_000_000),
        ("chain08", 2_000_000),
        ("nextrep", 3_000_000),
        ("selfjmp", 2_000_000),
        ("flagspin", 2_000_000),
    ] {
        let spec = corpus_spec(name, cap);
        let opts = Options {
            interval: 100_000,
            ..Options::default()
        };
        let ls = lockstep(&spec, &arms("l0,l1,l1"), &opts, &mut |_| {}).unwrap();
        assert!(ls.exact(), "{name}: l1 diverged from l0");
        let l1 = &ls.arms[1].last;
        assert_eq!(l1, &plain_final(&spec, "l1"), "{name}: sampling changed l1");
        assert_eq!(l1, &plain_final(&spec, "l0"), "{name}");
        // L1 reports its counters; they are deterministic for a schedule.
        assert!(ls.arms[1].counters["dispatches"] > 0, "{name}");
        assert_eq!(ls.arms[1].counters, ls.arms[2].counters, "{name}");
    }
}
