//! Pass `guards`: removes segment-limit probes (`chk`, [`Op::Check`]) that
//! cannot fail.
//!
//! * A probe whose address size bounds the offset below the limit: the
//!   offset is `(..) & asize`, so an access of `n` bytes passes whenever
//!   `asize + n - 1 <= limit`, whatever the registers hold (real mode's
//!   `chk.8 [es:di] a16 lim=0xffff`, the MOVSB destination probe).
//! * A probe that repeats an earlier probe of the same block with the same
//!   address (segment, base, index, scale, displacement, address size,
//!   limit) at the same or a wider width, when no op between writes a vreg
//!   the address reads: it computes the same offset and passed already.
//!
//! Exact: a probe does nothing but exit when the access would fault, and
//! in both cases it provably does not. It must not remove a load's or a
//! store's own limit test (those are part of the access), nor a probe
//! whose address registers may have changed.
//!
//! Block-local: in `baseline`.

use crate::ir::{Addr, Op, Program};

/// Whether a probe of `bytes` at `a` passes whatever the registers hold.
fn never_fails(a: &Addr, bytes: u32) -> bool {
    a.asize.mask() as u64 + (bytes as u64 - 1) <= a.limit as u64
}

/// Whether `op` may write a vreg `a` reads (a service may write any guest
/// register).
fn writes_any(op: &Op, a: &Addr) -> bool {
    if matches!(op, Op::Service { .. }) {
        return true;
    }
    let mut hit = false;
    op.for_each_dst(|d| {
        if [a.seg, a.base, a.index].contains(&Some(d.v)) {
            hit = true
        }
    });
    hit
}

pub fn run(p: &mut Program) {
    for b in &mut p.blocks {
        let mut i = 0;
        while i < b.ops.len() {
            let Op::Check { w, addr, .. } = b.ops[i] else {
                i += 1;
                continue;
            };
            let dominated = b.ops[..i].iter().enumerate().rev().any(|(k, prev)| {
                matches!(prev, Op::Check { w: pw, addr: pa, .. }
                    if *pa == addr && pw.bytes() >= w.bytes()
                        && !b.ops[k + 1..i].iter().any(|x| writes_any(x, &addr)))
            });
            if never_fails(&addr, w.bytes()) || dominated {
                b.ops.remove(i);
            } else {
                i += 1;
            }
        }
    }
}
