//! The E1 arena's protocol: lazy link fill, chaining inside the engine,
//! set-head re-pointing, drop-head unlinking, eviction that never leaves a
//! dangling link, invalidation by guest byte range (SMC), indirect lookups,
//! entry counters. Every test checks the link invariants by scanning the code
//! (`E1Arena::check_links`).

mod common;
use common::parse;
use shared_ir::e1::{self, E1Arena, E1State, ProgId};
use shared_ir::exit::{Exit, ExitReason};
use shared_ir::ir::{code_key, Program};
use shared_ir::testkit::{FakeMachine, Rng};

fn prog(key: u64, ip: u32, body: &str, term: &str, code: (u32, u32)) -> Program {
    parse(&format!(
        "program model=real16 key={key:#x} guest=20\ncode {:#x}..{:#x}\nb0:\n  clock.check 1 @{ip:#x}/0\n  count\n{body}\n  {term}\n",
        code.0, code.1
    ))
}

fn run(a: &mut E1Arena, id: ProgId, st: &mut E1State, limit: u64) -> e1::E1Exit {
    let mut m = FakeMachine::new();
    e1::run(a, &mut m, st, id, limit).expect("resident")
}

fn adder(key: u64, add: u32, to: u64) -> Program {
    prog(
        key,
        key as u32,
        &format!("  add.32 eax, eax, {add:#x}"),
        &format!("link {to:#x} @{:#x}/0", to as u32),
        (0x7000 + key as u32 * 0x10, 0x7010 + key as u32 * 0x10),
    )
}

#[test]
fn lazy_fill_then_chaining_inside_the_engine_to_an_exact_budget() {
    let mut a = E1Arena::new(1 << 12);
    let pa = a.install(&adder(0x10, 1, 0x20)).unwrap();
    a.set_head(pa);
    let mut st = E1State::default();
    let ex = run(&mut a, pa, &mut st, 100);
    assert_eq!(
        ex.exit,
        Exit {
            reason: ExitReason::Link { key: 0x20 },
            ip: 0x20
        }
    );
    let slot = ex.link.expect("an unlinked static exit names its slot");
    assert_eq!(a.link_key(slot), Some(0x20));
    assert_eq!(a.fill_link(slot), None, "no head yet");
    // The driver builds the target, makes it the head, patches the word.
    let pb = a.install(&adder(0x20, 0x100, 0x10)).unwrap();
    a.set_head(pb);
    assert_eq!(a.fill_link(slot), Some(pb));
    let ex = run(&mut a, pb, &mut st, 100);
    let slot2 = ex.link.unwrap();
    assert_eq!(a.fill_link(slot2), Some(pa));
    a.check_links().unwrap();
    // Now A and B chain without leaving until the budget: 98 more dispatches.
    let ex = run(&mut a, pa, &mut st, 100);
    assert_eq!(
        ex.exit,
        Exit {
            reason: ExitReason::Budget,
            ip: 0x10
        }
    );
    assert_eq!(st.clock, 100);
    assert_eq!(a.vregs()[0], 50 + 50 * 0x100);
    assert_eq!(a.count(pa), Some(50));
    assert_eq!(a.count(pb), Some(50));
    a.reset_count(pa);
    assert_eq!(a.count(pa), Some(0));
}

#[test]
fn set_head_repoints_inbound_links_and_drop_head_unlinks_them() {
    let mut a = E1Arena::new(1 << 12);
    let pa = a.install(&adder(0x10, 1, 0x20)).unwrap();
    let pb = a.install(&adder(0x20, 0x100, 0x30)).unwrap();
    a.set_head(pa);
    a.set_head(pb);
    assert_eq!(a.link_all(), 1);
    a.check_links().unwrap();

    // Replace B: A's link must now lead to B'.
    let pb2 = a.install(&adder(0x20, 0x1000, 0x30)).unwrap();
    a.set_head(pb2);
    assert!(!a.contains(pb), "the replaced head is removed");
    a.check_links().unwrap();
    let mut st = E1State::default();
    let ex = run(&mut a, pa, &mut st, 10);
    assert_eq!(ex.exit.reason, ExitReason::Link { key: 0x30 });
    assert_eq!(a.vregs()[0], 0x1001);
    assert_eq!(st.clock, 2);

    // Drop B': A's link is unpatched and exits with its slot again.
    assert_eq!(a.drop_head(0x20), Some(pb2));
    a.check_links().unwrap();
    let ex = run(&mut a, pa, &mut st, 10);
    assert_eq!(
        ex.exit,
        Exit {
            reason: ExitReason::Link { key: 0x20 },
            ip: 0x20
        }
    );
    assert!(ex.link.is_some());
    assert_eq!(a.vregs()[0], 0x1002);
}

#[test]
fn eviction_never_leaves_a_dangling_link() {
    // Room for a handful of programs; install hundreds, all linked to each other.
    let mut a = E1Arena::new(400);
    let mut r = Rng(5);
    let mut heads: Vec<(u64, ProgId)> = Vec::new();
    for i in 1..400u64 {
        let to = if i > 1 { 1 + r.below(i - 1) } else { 1 };
        let p = prog(
            i,
            i as u32,
            "  add.32 eax, eax, 1",
            &format!("brcmp.ltu.32 eax, {:#x}, b1, b2\nb1:\n  link {to:#x} @{:#x}/0\nb2:\n  link {:#x} @0x1/0", r.below(1000), to as u32, i + 1),
            (0x7000, 0x7001),
        );
        let id = a.install(&p).unwrap();
        a.set_head(id);
        a.link_all();
        a.check_links()
            .unwrap_or_else(|e| panic!("after install {i}: {e}"));
        heads.push((i, id));
        // Whatever is resident runs into budgets or unlinked exits, never
        // into freed words.
        for &(_, h) in heads.iter().rev().take(4) {
            if a.contains(h) {
                let mut st = E1State::default();
                let ex = run(&mut a, h, &mut st, 50);
                assert_ne!(ex.exit.reason, ExitReason::Invalid, "ran into freed words");
                assert!(st.clock <= 50);
            }
        }
    }
    assert!(a.stats.evictions > 300, "{:?}", a.stats);
    assert!(a.programs().len() < 30);
}

#[test]
fn invalidating_a_byte_range_removes_exactly_the_programs_built_from_it() {
    let mut a = E1Arena::new(1 << 12);
    let p1 = a
        .install(&prog(1, 1, "", "exit stop @0x1/0", (0x7100, 0x7110)))
        .unwrap();
    let p2 = a
        .install(&prog(2, 2, "", "exit stop @0x2/0", (0x7200, 0x7210)))
        .unwrap();
    let p3 = a
        .install(&prog(3, 3, "", "exit stop @0x3/0", (0x7100, 0x7300)))
        .unwrap();
    let pa = a
        .install(&prog(4, 4, "", "link 0x1 @0x1/0", (0x7400, 0x7410)))
        .unwrap();
    for id in [p1, p2, p3, pa] {
        a.set_head(id);
    }
    a.link_all();
    assert_eq!(a.invalidate_range(0x7110, 0x7200), vec![p3]);
    assert_eq!(a.invalidate_range(0x710F, 0x7110), vec![p1]);
    assert!(a.contains(p2) && a.contains(pa));
    assert_eq!(a.head(1), None);
    a.check_links().unwrap();
    let mut st = E1State::default();
    let ex = run(&mut a, pa, &mut st, 10);
    assert_eq!(ex.exit.reason, ExitReason::Link { key: 1 });
}

#[test]
fn a_store_into_its_own_code_exits_and_the_driver_invalidates_it() {
    let mut a = E1Arena::new(1 << 12);
    let p = prog(
        0x10,
        0x100,
        "  st.16 [ds_base: ebx] a16 fast, eax.w @0x100/1 after @0x103/0",
        "link 0x10 @0x103/0",
        (0x7000, 0x7010),
    );
    let id = a.install(&p).unwrap();
    a.set_head(id);
    a.link_all();
    a.vregs_mut()[3] = 0x4; // ebx
    a.vregs_mut()[17] = 0x7000; // ds_base
    let mut st = E1State::default();
    let mut m = FakeMachine::new();
    let ex = e1::run(&mut a, &mut m, &mut st, id, 1000).unwrap();
    assert_eq!(
        ex.exit,
        Exit {
            reason: ExitReason::Smc,
            ip: 0x103
        }
    );
    assert_eq!(
        st.clock, 1,
        "stopped after the storing instruction, not later"
    );
    assert_eq!(a.invalidate_range(0x7004, 0x7006), vec![id]);
    assert!(a.programs().is_empty());
    a.check_links().unwrap();
}

#[test]
fn indirect_exits_look_up_heads_inside_the_engine() {
    let mut a = E1Arena::new(1 << 12);
    let pa = a
        .install(&prog(
            0x10,
            0x10,
            "",
            "indirect ebx, cs_base @0x0/0",
            (0, 1),
        ))
        .unwrap();
    let key_b = code_key(0x1000, 0x30);
    let pb = a
        .install(&prog(
            key_b,
            0x30,
            "  mov eax, 0x77",
            "exit stop @0x40/0",
            (0, 1),
        ))
        .unwrap();
    a.set_head(pa);
    a.set_head(pb);
    a.vregs_mut()[15] = 0x1000; // cs_base
    a.vregs_mut()[3] = 0x30;
    let mut st = E1State::default();
    let ex = run(&mut a, pa, &mut st, 10);
    assert_eq!(
        ex.exit,
        Exit {
            reason: ExitReason::Stop,
            ip: 0x40
        }
    );
    assert_eq!(a.vregs()[0], 0x77);
    assert_eq!(st.clock, 2);
    a.vregs_mut()[3] = 0x31;
    let ex = run(&mut a, pa, &mut st, 10);
    assert_eq!(
        ex.exit,
        Exit {
            reason: ExitReason::Indirect {
                key: code_key(0x1000, 0x31)
            },
            ip: 0x31
        }
    );
    // A dropped head is no longer found.
    a.drop_head(key_b);
    a.vregs_mut()[3] = 0x30;
    let ex = run(&mut a, pa, &mut st, 10);
    assert_eq!(ex.exit.reason, ExitReason::Indirect { key: key_b });
}

#[test]
fn a_self_linked_loop_counts_every_entry() {
    let mut a = E1Arena::new(1 << 12);
    let id = a.install(&adder(0x10, 1, 0x10)).unwrap();
    a.set_head(id);
    a.link_all();
    a.check_links().unwrap();
    let mut st = E1State {
        clock: 5,
        ..Default::default()
    };
    let ex = run(&mut a, id, &mut st, 1005);
    assert_eq!(
        ex.exit,
        Exit {
            reason: ExitReason::Budget,
            ip: 0x10
        }
    );
    assert_eq!(a.count(id), Some(1000));
    assert_eq!(a.vregs()[0], 1000);
    // Replacing a self-linked head leaves no link behind.
    let id2 = a.install(&adder(0x10, 2, 0x10)).unwrap();
    a.set_head(id2);
    a.check_links().unwrap();
}

#[test]
fn oversized_and_malformed_programs_are_refused_with_a_reason() {
    let mut a = E1Arena::new(8);
    let e = a.install(&adder(1, 1, 2)).unwrap_err();
    assert!(e.to_string().contains("does not fit"), "{e}");
    let mut bad = adder(1, 1, 2);
    bad.blocks[0].ops.remove(0); // no clock.check
    let e = E1Arena::new(1 << 10).install(&bad).unwrap_err();
    assert!(e.to_string().contains("clock.check"), "{e}");
}
