//! The passes `ldpast` (load fusion past independent pure ops) and
//! `guards` (segment-limit probes that cannot fail): exact op counts on
//! the shapes they are for and on the shapes they must leave alone, and
//! the meaning kept on the reference interpreter and on E1 (`run_both`
//! compares the two) from generated states, at every budget, before and
//! after. `opt_diff.rs` and `region_diff.rs` run both passes alone and in
//! every named set over generated programs as well.

mod common;

use common::run_both;
use shared_ir::ir::{Op, Program};
use shared_ir::lower::lower_line;
use shared_ir::machine::RealMode16;
use shared_ir::opt::{optimize_checked, PassSet};
use shared_ir::testkit::{gen_state, Rng};

fn lower(bytes: &[u8]) -> Program {
    lower_line(&RealMode16, 0x7000, 0x100, bytes, 16)
        .program
        .expect("lowers")
}

fn opt(p: &Program, set: &str) -> Program {
    let mut q = p.clone();
    optimize_checked(&mut q, PassSet::parse(set).unwrap(), true).unwrap();
    q
}

fn count(p: &Program, f: impl Fn(&Op) -> bool) -> usize {
    p.blocks
        .iter()
        .flat_map(|b| &b.ops)
        .filter(|o| f(o))
        .count()
}

/// `p` and `q` agree from many states at every budget, on both engines.
/// `pin` forces guest vregs to values (edge cases such as DI = 0xFFFF).
fn same_meaning(p: &Program, q: &Program, pin: &[(usize, u32)]) {
    for seed in [1u64, 7, 0xDEAD_BEEF, 0x1234_5678_9ABC, 42, 99] {
        let mut r = Rng(seed);
        let (mut regs, flags) = gen_state(&mut r);
        regs.truncate(p.guest as usize);
        for &(v, x) in pin {
            regs[v] = x;
        }
        for budget in 0..24 {
            let (a, ma) = run_both(p, &regs, flags, 100, 100 + budget);
            let (b, mb) = run_both(q, &regs, flags, 100, 100 + budget);
            assert_eq!(a, b, "budget {budget}\nbefore:\n{p}\nafter:\n{q}");
            assert_eq!(ma.log, mb.log);
            assert!(ma.ram == mb.ram, "RAM differs\n{p}\n{q}");
        }
    }
}

#[test]
fn ldpast_fuses_pops() {
    // pop si; pop bp; ret: two pops whose move follows an SP update.
    let p = lower(&[0x5E, 0x5D, 0xC3]);
    let f = opt(&p, "fuse");
    let q = opt(&p, "fuse,ldpast");
    assert_eq!(f.uop_count() - q.uop_count(), 2, "{f}\n{q}");
    let movs = |p: &Program| count(p, |o| matches!(o, Op::Mov { .. }));
    assert_eq!(movs(&f), 2, "{f}");
    assert_eq!(movs(&q), 0, "{q}");
    same_meaning(&p, &q, &[]);
    // SP at the top of the segment: the pop's load exits (limit), nothing
    // may have been written early.
    same_meaning(&p, &q, &[(4, 0xFFFF)]);
}

#[test]
fn ldpast_leaves_pop_sp_and_readers_alone() {
    // pop sp: the move's destination is the register the SP update
    // writes; pop ax; with ax read in between is not a lowering shape,
    // so the pop sp case is the one that matters.
    let p = lower(&[0x5C]);
    assert_eq!(opt(&p, "fuse,ldpast"), opt(&p, "fuse"));
    same_meaning(&p, &opt(&p, "fuse,ldpast"), &[]);
}

#[test]
fn guards_drops_the_movsb_probe_and_keeps_the_movsw_one() {
    let chk = |p: &Program| count(p, |o| matches!(o, Op::Check { .. }));
    // movsb: chk.8 [es:di] a16 lim=0xffff can never fail (REP MOVSB is a
    // `Term::Rep`, with no probe op to drop).
    let b = lower(&[0xA4]);
    assert_eq!(chk(&b), 1, "{b}");
    let qb = opt(&b, "guards");
    assert_eq!(chk(&qb), 0, "{qb}");
    assert_eq!(b.uop_count() - qb.uop_count(), 1);
    same_meaning(&b, &qb, &[]);
    same_meaning(&b, &qb, &[(7, 0xFFFF), (1, 3)]);
    // movsw: chk.16 fails at DI = 0xFFFF; it stays.
    let w = lower(&[0xA5]);
    assert_eq!(opt(&w, "guards"), w);
    // les bx,[si]: the far pointer's 32-bit probe fails at SI >= 0xFFFD.
    let i = lower(&[0xC4, 0x1C]);
    assert_eq!(chk(&i), 1, "{i}");
    assert_eq!(opt(&i, "guards"), i);
}

#[test]
fn guards_drops_a_repeated_probe_unless_its_address_changed() {
    let w = lower(&[0xA5]); // movsw: chk.16 [es:di], ld [ds:si], st [es:di]
    let (bi, ci) = w
        .blocks
        .iter()
        .enumerate()
        .find_map(|(bi, b)| {
            b.ops
                .iter()
                .position(|o| matches!(o, Op::Check { .. }))
                .map(|ci| (bi, ci))
        })
        .expect("a probe");
    let probe = w.blocks[bi].ops[ci];
    // The probe twice in a row: the second goes.
    let mut twice = w.clone();
    twice.blocks[bi].ops.insert(ci + 1, probe);
    let q = opt(&twice, "guards");
    assert_eq!(q, w, "{q}");
    same_meaning(&twice, &q, &[]);
    same_meaning(&twice, &q, &[(7, 0xFFFF)]);
    // DI written between the two (di = 0xffff): the second must stay, and
    // it is the one that exits.
    let mut moved = w.clone();
    moved.blocks[bi].ops.insert(ci + 1, probe);
    moved.blocks[bi].ops.insert(
        ci + 1,
        Op::Mov {
            dst: shared_ir::ir::Reg::w(7),
            src: shared_ir::ir::Src::Imm(0xFFFF),
        },
    );
    let q = opt(&moved, "guards");
    assert_eq!(q, moved, "{q}");
    same_meaning(&moved, &q, &[(7, 0x10)]);
}
