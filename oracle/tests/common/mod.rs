//! Helpers shared by the oracle's integration tests.
#![allow(dead_code)]

use oracle::spec::RunSpec;

/// A built-in corpus program's run, its budget capped at `cap`.
pub fn corpus_spec(name: &str, cap: u64) -> RunSpec {
    let c = corpus_dos::builtin().expect("built-in corpus");
    let p = c
        .get(name)
        .unwrap_or_else(|| panic!("no corpus program {name}"));
    let mut s = RunSpec::from_corpus(&c, p, None).expect("spec");
    s.budget = s.budget.min(cap);
    s
}

pub fn arms(list: &str) -> Vec<String> {
    oracle::arms::parse_list(list).unwrap()
}
