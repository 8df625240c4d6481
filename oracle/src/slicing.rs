//! Slice plans: does an arm's state at a dispatch depend on where its run
//! was cut on the way there?
//!
//! Invariant 2 wants every engine to stop at an exact dispatch without
//! effect, so the state an arm reaches at dispatch `hi` must be the same
//! whichever slices it ran in. When bisection cannot reproduce a divergence
//! with finer slices, one arm breaks that; this module finds which one by
//! running each arm alone from scratch under several plans that all end at
//! `hi` and comparing the arm with itself. Owns the plans, that check and
//! its record ([`SliceDep`]: the two plans and the two states), and
//! re-running a pair of plans (what a slice repro file does). It must not
//! compare two different arms (that is [`crate::compare`]) nor print or
//! write files.

use crate::compare::advance;
use crate::spec::RunSpec;
use crate::state::{same_ram, side_by_side, State};
use serde::{Deserialize, Serialize};

/// A plan: the slice ends (ascending, the last one is the target).
pub type Plan = Vec<u64>;

/// A named plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlicePlan {
    pub name: String,
    pub ends: Plan,
}

/// An arm that ends in different states at the same dispatch under two
/// slice plans.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SliceDep {
    pub arm: String,
    /// Plan A (the lockstep's own) and plan B.
    pub plans: [SlicePlan; 2],
    /// The fields that differ.
    pub fields: Vec<String>,
    /// The arm's state at the end of plan A and of plan B.
    pub states: [State; 2],
}

impl SliceDep {
    /// The report: the arm named, both plans, both states side by side.
    pub fn describe(&self) -> String {
        let hi = self.states[0].dispatches;
        let a = format!("{}: {}", self.arm, self.plans[0].name);
        let b = format!("{}: {}", self.arm, self.plans[1].name);
        format!(
            "{} is slice-dependent: the same program run to dispatch {hi} under two \
             slice plans ends in different states ({})\n  plan A: {}\n  plan B: {}\n{}",
            self.arm,
            self.fields.join(", "),
            self.plans[0].name,
            self.plans[1].name,
            side_by_side(&[&a, &b], &[&self.states[0], &self.states[1]])
        )
    }
}

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

/// Runs `arm` from scratch along `plan`; its state at the end and the run.
fn run_plan(
    spec: &RunSpec,
    arm: &str,
    plan: &[u64],
) -> Result<(State, Box<dyn crate::arm_run::ArmRun>), String> {
    let mut s = spec.open(arm)?;
    for &t in plan {
        advance(s.as_mut(), arm, t)?;
    }
    Ok((State::capture_light(s.as_mut()), s))
}

/// Runs `arm` under two plans and compares it with itself: `Some` with
/// both states when they differ.
pub fn compare_plans(
    spec: &RunSpec,
    arm: &str,
    a: &SlicePlan,
    b: &SlicePlan,
) -> Result<Option<SliceDep>, String> {
    let (mut want, ra) = run_plan(spec, arm, &a.ends)?;
    let (mut got, rb) = run_plan(spec, arm, &b.ends)?;
    if got == want && same_ram(ra.as_ref(), rb.as_ref()) {
        return Ok(None);
    }
    want.fill_ram_hash(ra.as_ref());
    got.fill_ram_hash(rb.as_ref());
    Ok(Some(SliceDep {
        arm: arm.to_string(),
        plans: [a.clone(), b.clone()],
        fields: want.differences(&got),
        states: [want, got],
    }))
}

/// Whether `arm` is slice-dependent over `(lo, hi)`: the first plan that
/// ends it in a different state than the lockstep's own plan.
pub fn check_arm(spec: &RunSpec, arm: &str, lo: u64, hi: u64) -> Result<Option<SliceDep>, String> {
    let ps: Vec<SlicePlan> = plans(lo, hi)
        .into_iter()
        .map(|(name, ends)| SlicePlan { name, ends })
        .collect();
    for b in &ps[1..] {
        if let Some(d) = compare_plans(spec, arm, &ps[0], b)? {
            return Ok(Some(d));
        }
    }
    Ok(None)
}

/// The slice-dependent arms of `arms` over `(lo, hi)`, and the arms whose
/// check itself failed (with why).
pub fn find(spec: &RunSpec, arms: &[String; 2], lo: u64, hi: u64) -> (Vec<SliceDep>, Vec<String>) {
    let mut deps = Vec::new();
    let mut errors = Vec::new();
    for a in arms {
        match check_arm(spec, a, lo, hi) {
            Ok(Some(d)) => deps.push(d),
            Ok(None) => {}
            Err(e) => errors.push(format!("{a}: slice-plan check failed: {e}")),
        }
    }
    (deps, errors)
}
