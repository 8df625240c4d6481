//! The naive lowering on hostile bytes: whatever it produces verifies, and
//! runs identically on the reference interpreter and E1 (no panics, no
//! disagreement), from generated machine states over the fake machine.

mod common;
use proptest::prelude::*;
use shared_ir::lower::{coverage::coverage_markdown, lower_line};
use shared_ir::machine::RealMode16;
use shared_ir::testkit::{gen_state, Rng};

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn any_lowered_line_verifies_and_both_engines_agree(
        bytes in proptest::collection::vec(any::<u8>(), 1..48),
        seed in any::<u64>(),
        budget in 0u64..20,
    ) {
        let line = lower_line(&RealMode16, 0x7000, 0x100, &bytes, 16);
        if let Some(p) = line.program {
            shared_ir::ir::verify::verify(&p).unwrap_or_else(|e| panic!("{e}\n{p}"));
            let mut r = Rng(seed | 1);
            let (regs, flags) = gen_state(&mut r);
            common::run_both(&p, &regs[..20], flags, 100, 100 + budget);
        }
    }
}

#[test]
fn print_coverage() {
    // `cargo test -p shared-ir --test lower_hostile print_coverage -- --nocapture`
    println!("{}", coverage_markdown());
}
