//! Slice plans: does an arm's state at a dispatch depend on where its run
//! was cut on the way there?
//!
//! Invariant 2 wants every engine to stop at an exact dispatch without
//! effect, so the state an arm reaches at dispatch `hi` must be the same
//! whichever slices it ran in. When bisection cannot reproduce a divergence
//! with finer slices, one arm breaks that; this module finds which one by
//! running each arm alone from scratch under several plans that all end at
//! `hi` and comparing the arm with itself. Owns the plans and that check; it
//! must not compare two different arms (that is [`crate::compare`]) nor
//! print or write files.

use crate::compare::advance;
use crate::spec::RunSpec;
use crate::state::{same_ram, side_by_side, State};

/// A plan: the slice ends (ascending, the last one is the target).
pub type Plan = Vec<u64>;

/// The plans tried for the window `(lo, hi)`: the lockstep's own (`lo`, then
/// `hi` in one slice) against straight from 0, a last single dispatch, the
/// halving point, and single dispatches over the last 64.
pub fn plans(lo: u64, hi: u64) -> Vec<(String, Plan)> {
    let mut v = vec![
        (format!("to {lo}, then to {hi} in one slice"), vec![lo, hi]),
        (format!("straight to {hi}"), vec![hi]),
    ];
    if hi > lo + 1 {
        v.push((
            format!("to {lo}, to {}, then one dispatch to {hi}", hi - 1),
            vec![lo, hi - 1, hi],
        ));
        let mid = lo + (hi - lo) / 2;
        v.push((
            format!("to {lo}, to {mid}, then to {hi}"),
            vec![lo, mid, hi],
        ));
        let from = hi.saturating_sub(64).max(lo);
        let mut p = vec![lo, from];
        p.extend(from + 1..=hi);
        v.push((
            format!("to {lo}, to {from}, then single dispatches to {hi}"),
            p,
        ));
    }
    v.dedup_by(|a, b| a.1 == b.1);
    v
}

/// Why `arm` is slice-dependent, with the two plans side by side, or `None`
/// when every plan gives it the same state at the end.
pub fn check_arm(spec: &RunSpec, arm: &str, lo: u64, hi: u64) -> Result<Option<String>, String> {
    let ps = plans(lo, hi);
    let mut base = spec.open(arm)?;
    for &t in &ps[0].1 {
        advance(base.as_mut(), arm, t)?;
    }
    let mut want = State::capture_light(base.as_mut());
    for (name, plan) in &ps[1..] {
        let mut s = spec.open(arm)?;
        for &t in plan {
            advance(s.as_mut(), arm, t)?;
        }
        let mut got = State::capture_light(s.as_mut());
        if got != want || !same_ram(base.as_ref(), s.as_ref()) {
            want.fill_ram_hash(base.as_ref());
            got.fill_ram_hash(s.as_ref());
            let a = format!("{arm}: {}", ps[0].0);
            let b = format!("{arm}: {name}");
            return Ok(Some(format!(
                "{arm} is slice-dependent: the same program run to dispatch {hi} under two \
                 slice plans ends in different states\n  plan A: {}\n  plan B: {name}\n{}",
                ps[0].0,
                side_by_side(&[&a, &b], &[&want, &got])
            )));
        }
    }
    Ok(None)
}

/// The slice-dependent arms of `arms` over `(lo, hi)`, each with its report.
pub fn find(spec: &RunSpec, arms: &[String; 2], lo: u64, hi: u64) -> Vec<String> {
    arms.iter()
        .filter_map(|a| match check_arm(spec, a, lo, hi) {
            Ok(r) => r,
            Err(e) => Some(format!("{a}: slice-plan check failed: {e}")),
        })
        .collect()
}
