//! Pass `nocount`: drops `count` (the tier-up entry counter) from a
//! program. Exact by construction: the counter is engine bookkeeping read
//! only by a tier-up driver, never guest-visible state, and `count` cannot
//! exit. Arms that tier up (or the census in coverage mode, which reads the
//! counters) must not switch it on for programs they will count.

use crate::ir::{Op, Program};

pub fn run(p: &mut Program) {
    for b in &mut p.blocks {
        b.ops.retain(|op| !matches!(op, Op::Count));
    }
}
