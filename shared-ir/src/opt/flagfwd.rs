//! `flagfwd`: flag forwarding into compare-and-branch. A block that ends
//! with a flag-writing x86 op (CMP, TEST, SUB, DEC, INC, ADD, ...) and a
//! branch on a condition of the record it wrote becomes one µop,
//! [`Term::BrArith`]: the op and the branch in a single engine transition.
//!
//! Why it is exact: `brarith` writes the same flag record and the same
//! destination as the op did and branches on the same condition of that
//! record; nothing ran between the two (the op was the block's last), and
//! neither can exit. Only a guest register or no destination is fused, so
//! liveness of temporaries never has to look into a terminator.
//!
//! It must not fuse across ops, nor change which flags a branch reads.

#![forbid(unsafe_code)]

use crate::ir::*;

/// Runs the pass.
pub fn run(p: &mut Program) {
    let guest = p.guest;
    for b in &mut p.blocks {
        let Term::BrCc { cc, t, f } = b.term else {
            continue;
        };
        let Some(&Op::Arith {
            op,
            w,
            dst,
            a,
            b: bb,
        }) = b.ops.last()
        else {
            continue;
        };
        if dst.is_some_and(|d| d.v.0 >= guest) {
            continue;
        }
        b.ops.pop();
        b.term = Term::BrArith {
            op,
            w,
            dst,
            a,
            b: bb,
            cc,
            t,
            f,
        };
    }
}
