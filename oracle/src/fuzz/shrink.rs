//! The shrinker: the smallest program that still shows a divergence.
//!
//! Works in two stages, each keeping a candidate only while the predicate
//! (the same arm still diverges) holds: first on the plan (drop items or
//! bytes in halves, quarters, ... single units; then simplify the prologue
//! one feature at a time), then on the assembled image (drop byte chunks,
//! then zero single bytes). Owns that search and its budget of re-runs. It
//! must not run programs itself: the caller's predicate does.

use super::plan::Plan;

/// What shrinking found.
pub struct Shrunk {
    pub plan: Plan,
    pub image: Vec<u8>,
    /// Predicate runs spent.
    pub runs: usize,
}

/// Shrinks `plan` while `still(image)` holds, with at most `tries` runs.
pub fn shrink(plan: &Plan, still: &mut dyn FnMut(&[u8]) -> bool, tries: usize) -> Shrunk {
    let mut runs = 0usize;
    let mut best = plan.clone();
    let mut test = |p: &Plan, runs: &mut usize| -> bool {
        *runs += 1;
        still(&p.image())
    };
    // Stage 1a: drop units of the plan (delta debugging by halves).
    let mut chunk = best.units().div_ceil(2);
    while chunk >= 1 && runs < tries {
        let mut at = 0;
        while at < best.units() && runs < tries {
            let cand = best.without(at, chunk);
            if cand.units() < best.units() && test(&cand, &mut runs) {
                best = cand;
            } else {
                at += chunk;
            }
        }
        if chunk == 1 {
            break;
        }
        chunk = chunk.div_ceil(2).min(chunk - 1).max(1);
    }
    // Stage 1b: a simpler prologue, one feature at a time, until none helps.
    let mut changed = true;
    while changed && runs < tries {
        changed = false;
        for cand in best.simpler_prologues() {
            if runs >= tries {
                break;
            }
            if test(&cand, &mut runs) {
                best = cand;
                changed = true;
                break;
            }
        }
    }
    // Stage 2: the image itself (drop byte chunks, then zero bytes).
    let mut image = best.image();
    let mut still_img = |v: &[u8], runs: &mut usize| -> bool {
        *runs += 1;
        still(v)
    };
    let mut chunk = image.len() / 2;
    while chunk >= 1 && runs < tries {
        let mut at = 0;
        while at + chunk <= image.len() && runs < tries {
            let mut cand = image.clone();
            cand.drain(at..at + chunk);
            if !cand.is_empty() && still_img(&cand, &mut runs) {
                image = cand;
            } else {
                at += chunk;
            }
        }
        chunk /= 2;
    }
    for i in 0..image.len() {
        if runs >= tries {
            break;
        }
        if image[i] != 0 {
            let mut cand = image.clone();
            cand[i] = 0;
            if still_img(&cand, &mut runs) {
                image = cand;
            }
        }
    }
    Shrunk {
        plan: best,
        image,
        runs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shrinks_bytes_to_the_one_that_matters() {
        let plan = Plan::Bytes {
            prologue: Some((5, 63)),
            bytes: (0..100u8).collect(),
        };
        // "Diverges" while byte 0x42 is present.
        let s = shrink(&plan, &mut |v: &[u8]| v.contains(&0x42), 2000);
        assert_eq!(
            s.plan,
            Plan::Bytes {
                prologue: None,
                bytes: vec![0x42]
            }
        );
        assert_eq!(s.image, vec![0x42]);
    }
}
