//! Hand-written IR programs with the values they must produce, on the
//! reference interpreter and E1 alike (see `common::run_both`): narrow and
//! high-byte writes, 64 KiB wraps and limit faults, stores into code, budget
//! stops, shifts by 0 and past the width, ADC chains, a REP-style loop stopped
//! at an exact dispatch; plus the verifier's and parser's errors.

mod common;
use common::*;
use shared_ir::exit::{Exit, ExitReason};
use shared_ir::flags::{LazyFlags, CF, ZF};
use shared_ir::ir::{parse::parse_program, print::print_program, verify::verify};

const EAX: usize = 0;
const ECX: usize = 1;
const EDX: usize = 2;
const EBX: usize = 3;
const EDI: usize = 7;
const DS_BASE: usize = 17;
const ES_BASE: usize = 14;

fn regs(set: &[(usize, u32)]) -> Vec<u32> {
    let mut r = vec![0u32; 20];
    for &(i, v) in set {
        r[i] = v;
    }
    r
}

#[test]
fn narrow_and_high_byte_writes_merge_into_32_bit_registers() {
    let p = parse(
        "program model=real16 key=0x10 guest=20
b0:
  clock.check 4 @0x100/0
  mov eax, 0x12345678
  add.8.f eax.h, eax.h, 0x10
  sub.16.f ebx.w, ebx.w, 1
  mov ecx.b, eax.h
  exit stop @0x110/0
",
    );
    let (r, _) = run_both(
        &p,
        &regs(&[(EBX, 0xAAAA_0000), (ECX, 0xCCCC_CCCC)]),
        LazyFlags::default(),
        0,
        100,
    );
    assert_eq!(
        r.exit,
        Exit {
            reason: ExitReason::Stop,
            ip: 0x110
        }
    );
    assert_eq!(r.vregs[EAX], 0x1234_6678);
    assert_eq!(r.vregs[EBX], 0xAAAA_FFFF);
    assert_eq!(r.vregs[ECX], 0xCCCC_CC66);
    assert_eq!(r.flags & CF, CF, "0 - 1 borrows");
    assert_eq!(r.clock, 4);
}

#[test]
fn a_word_at_offset_ffff_faults_before_any_effect_of_its_instruction() {
    let text = "program model=real16 key=0x10 guest=20
b0:
  clock.check 3 @0x100/0
  mov eax, 1
  ld.16 ecx.w, [ds_base: ebx] a16 lim=0xffff fast @0x102/2
  mov edx, 2
  exit stop @0x110/0
";
    let p = parse(text);
    let (r, _) = run_both(
        &p,
        &regs(&[(EBX, 0xFFFF), (DS_BASE, 0x1000)]),
        LazyFlags::default(),
        10,
        100,
    );
    assert_eq!(
        r.exit,
        Exit {
            reason: ExitReason::Fallback,
            ip: 0x102
        }
    );
    assert_eq!(
        r.clock, 11,
        "one instruction retired, the faulting one given back"
    );
    assert_eq!(r.vregs[EAX], 1);
    assert_eq!(r.vregs[ECX], 0);
    assert_eq!(r.vregs[EDX], 0);

    // 0xFFFE is the last word that fits.
    let (r, m) = run_both(
        &p,
        &regs(&[(EBX, 0xFFFE), (DS_BASE, 0x1000)]),
        LazyFlags::default(),
        10,
        100,
    );
    assert_eq!(r.exit.reason, ExitReason::Stop);
    let lin = 0x1000 + 0xFFFE;
    assert_eq!(
        r.vregs[ECX],
        u16::from_le_bytes([m.ram[lin], m.ram[lin + 1]]) as u32
    );
    assert_eq!(r.clock, 13);
}

#[test]
fn sixteen_bit_offsets_wrap_at_64k() {
    let p = parse(
        "program model=real16 key=0x10 guest=20
b0:
  clock.check 1 @0x100/0
  ld.8 eax.b, [ds_base: ebx + 0x20] a16 fast @0x100/1
  exit stop @0x110/0
",
    );
    let (r, m) = run_both(
        &p,
        &regs(&[(EBX, 0xFFF0), (DS_BASE, 0x2000), (EAX, 0xFFFF_FFFF)]),
        LazyFlags::default(),
        0,
        100,
    );
    assert_eq!(r.vregs[EAX], 0xFFFF_FF00 | m.ram[0x2010] as u32);
}

#[test]
fn a_store_into_code_stops_at_the_next_instruction_boundary() {
    // The store is its instruction's last effect: exit at once after it.
    let p = parse(
        "program model=real16 key=0x10 guest=20
b0:
  clock.check 3 @0x100/0
  st.16 [ds_base: ebx] a16 fast, eax.w @0x100/3 after @0x103/2
  mov ecx, 7
  exit stop @0x110/0
",
    );
    let (r, m) = run_both(
        &p,
        &regs(&[(EBX, 0x10), (DS_BASE, 0x7000), (EAX, 0xBEEF)]),
        LazyFlags::default(),
        0,
        100,
    );
    assert_eq!(
        r.exit,
        Exit {
            reason: ExitReason::Smc,
            ip: 0x103
        }
    );
    assert_eq!(r.clock, 1);
    assert_eq!(r.vregs[ECX], 0);
    assert_eq!(&m.ram[0x7010..0x7012], &[0xEF, 0xBE]);

    // Not the last effect (a push: store, then SP): finish, then stop.
    let p = parse(
        "program model=real16 key=0x10 guest=20
b0:
  clock.check 3 @0x100/0
  st.16 [ds_base: ebx - 2] a16 fast, eax.w @0x100/3
  sub.16 ebx.w, ebx.w, 2
  exit.pending @0x101/2
  mov ecx, 7
  exit stop @0x110/0
",
    );
    let (r, _) = run_both(
        &p,
        &regs(&[(EBX, 0x12), (DS_BASE, 0x7000)]),
        LazyFlags::default(),
        0,
        100,
    );
    assert_eq!(
        r.exit,
        Exit {
            reason: ExitReason::Smc,
            ip: 0x101
        }
    );
    assert_eq!(r.vregs[EBX], 0x10);
    assert_eq!(r.vregs[ECX], 0);
    assert_eq!(r.clock, 1);
}

#[test]
fn a_block_that_does_not_fit_the_budget_does_not_start() {
    let p = parse(
        "program model=real16 key=0x10 guest=20
b0:
  clock.check 3 @0x100/0
  mov eax, 5
  exit stop @0x110/0
",
    );
    for (limit, reason, clock, eax) in [
        (102, ExitReason::Budget, 100, 0),
        (103, ExitReason::Stop, 103, 5),
    ] {
        let (r, _) = run_both(&p, &regs(&[]), LazyFlags::default(), 100, limit);
        assert_eq!(r.exit.reason, reason);
        assert_eq!(
            r.exit.ip,
            if reason == ExitReason::Budget {
                0x100
            } else {
                0x110
            }
        );
        assert_eq!(r.clock, clock);
        assert_eq!(r.vregs[EAX], eax);
    }
}

#[test]
fn shifts_by_zero_keep_flags_and_counts_past_the_width_clear() {
    let p = parse(
        "program model=real16 key=0x10 guest=20
b0:
  clock.check 1 @0x100/0
  shl.16.f eax.w, eax.w, ecx.b
  exit stop @0x110/0
",
    );
    let mut f = LazyFlags::default();
    f.set_bits(ZF | CF);
    // Count 0 (and 32, which masks to 0): nothing changes.
    for cl in [0u32, 32] {
        let (r, _) = run_both(&p, &regs(&[(EAX, 0xFFFF_8001), (ECX, cl)]), f, 0, 10);
        assert_eq!(r.vregs[EAX], 0xFFFF_8001);
        assert_eq!(r.flags & (ZF | CF), ZF | CF);
    }
    // Count 16: everything out, CF = bit 0.
    let (r, _) = run_both(&p, &regs(&[(EAX, 0xFFFF_8001), (ECX, 16)]), f, 0, 10);
    assert_eq!(r.vregs[EAX], 0xFFFF_0000);
    assert_eq!(r.flags & (ZF | CF), ZF | CF);
    // Count 17: CF from below bit 0 is 0.
    let (r, _) = run_both(&p, &regs(&[(EAX, 0xFFFF_8001), (ECX, 17)]), f, 0, 10);
    assert_eq!(r.vregs[EAX], 0xFFFF_0000);
    assert_eq!(r.flags & (ZF | CF), ZF);
}

#[test]
fn adc_chains_carry_between_halves() {
    let p = parse(
        "program model=real16 key=0x10 guest=20
b0:
  clock.check 2 @0x100/0
  add.16.f eax.w, eax.w, ebx.w
  adc.16.f edx.w, edx.w, ecx.w
  sbb.8.f edi.h, edi.h, 0
  exit stop @0x110/0
",
    );
    let (r, _) = run_both(
        &p,
        &regs(&[
            (EAX, 0xFFFF),
            (EBX, 1),
            (EDX, 0x1234),
            (ECX, 0),
            (EDI, 0x0000),
        ]),
        LazyFlags::default(),
        0,
        10,
    );
    assert_eq!(r.vregs[EAX], 0);
    assert_eq!(r.vregs[EDX], 0x1235);
    assert_eq!(r.vregs[EDI], 0, "no borrow after adc without carry-out");
}

/// A REP STOSB shape: each element one dispatch; a zero count costs one.
const REP_STOSB: &str = "program model=real16 key=0x10 guest=20
b0:
  clock.check 1 @0x100/0
  brcmp.eq.16 ecx.w, 0, b3, b1
b1:
  st.8 [es_base: edi] a16 fast, eax.b @0x100/1
  add.16 edi.w, edi.w, 1
  sub.16 ecx.w, ecx.w, 1
  brcmp.eq.16 ecx.w, 0, b3, b2
b2:
  clock.check 1 @0x100/0
  jmp b1
b3:
  exit stop @0x102/0
";

#[test]
fn a_rep_loop_stops_at_an_exact_dispatch_and_resumes() {
    let p = parse(REP_STOSB);
    let init = regs(&[(ECX, 10), (EDI, 0x20), (ES_BASE, 0x3000), (EAX, 0xAB)]);
    for limit in 0..=12u64 {
        let (r, m) = run_both(&p, &init, LazyFlags::default(), 0, limit);
        let done = limit.min(10) as u32;
        assert_eq!(r.clock, done as u64, "limit {limit}");
        assert_eq!(r.vregs[ECX], 10 - done);
        assert_eq!(r.vregs[EDI], 0x20 + done);
        assert!(m.ram[0x3020..0x3020 + done as usize]
            .iter()
            .all(|b| *b == 0xAB));
        if done < 10 {
            assert_eq!(
                r.exit,
                Exit {
                    reason: ExitReason::Budget,
                    ip: 0x100
                }
            );
        } else {
            assert_eq!(
                r.exit,
                Exit {
                    reason: ExitReason::Stop,
                    ip: 0x102
                }
            );
        }
    }
    // A zero count costs one dispatch.
    let (r, _) = run_both(&p, &regs(&[(ECX, 0)]), LazyFlags::default(), 0, 5);
    assert_eq!((r.clock, r.exit.ip), (1, 0x102));
}

#[test]
fn the_verifier_names_what_is_wrong() {
    let cases = [
        (
            "program model=real16 key=0 guest=20\nb0:\n  mov eax, 1\n  link 0x10 @0x0/0\n",
            "reaches this link without a `clock.check`",
        ),
        (
            "program model=real16 key=0 guest=20\nb0:\n  clock.check 1 @0x0/0\n  mov eax, v30\n  exit stop @0x0/0\n",
            "temporary v30 may be read",
        ),
        (
            "program model=real16 key=0 guest=20\nb0:\n  clock.check 1 @0x0/0\n  add.32 eax.w, eax, eax\n  exit stop @0x0/0\n",
            "does not fit a 32-bit result",
        ),
        (
            "program model=real16 key=0 guest=20\nb0:\n  clock.check 1 @0x0/0\n  add.16 eax.w, eax.b, eax\n  exit stop @0x0/0\n",
            "narrower than the 16-bit op",
        ),
        (
            "program model=real16 key=0 guest=20\nb0:\n  clock.check 1 @0x0/0\n  jmp b1\nb1:\n  jmp b2\nb2:\n  jmp b1\n",
            "has no `clock.check`",
        ),
        (
            "program model=real16 key=0 guest=20\nb0:\n  clock.check 1 @0x0/0\n  jmp b5\n",
            "branch to b5",
        ),
        (
            "program model=real16 key=0 guest=20\nb0:\n  clock.check 1 @0x0/0\n  mov v255, 1\n  exit stop @0x0/0\n",
            "out of range",
        ),
        (
            "program model=real16 key=0 guest=20\nb0:\n  clock.check 1 @0x0/0\n  x87 eax, df.e0 nomem sel cs.w, 0x0 @0x0/0\n  exit stop @0x0/0\n",
            "merges into a .w lane",
        ),
        (
            "program model=real16 key=0 guest=20\nb0:\n  clock.check 1 @0x0/0\n  x87 _, d9.c0 nomem sel cs.w, ds.w @0x0/0\n  exit stop @0x0/0\n",
            "has ds 0",
        ),
    ];
    for (text, want) in cases {
        let p = parse_program(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let e = verify(&p).expect_err(text);
        assert!(e.to_string().contains(want), "{e} should mention {want:?}");
    }
}

#[test]
fn the_parser_reports_lines() {
    let e = parse_program("program model=real16 key=0 guest=20\nb0:\n  frob eax\n").unwrap_err();
    assert_eq!(e.line, 3);
    assert!(e.msg.contains("unknown op"));
    let e = parse_program("program model=real16 key=0 guest=20\nb0:\n  mov eax, 1\n").unwrap_err();
    assert!(e.msg.contains("no terminator"));
}

#[test]
fn text_round_trips() {
    let p = parse(REP_STOSB);
    let text = print_program(&p);
    assert_eq!(parse(&text), p);
    assert!(text.contains("st.8 [es_base: edi] a16 lim=0xffff fast, eax.b @0x100/1"));
}

#[test]
fn conditions_and_whole_flag_words() {
    let p = parse(
        "program model=real16 key=0x10 guest=20
b0:
  clock.check 1 @0x100/0
  sub.16.f _, eax.w, ebx.w
  cond.b ecx.b
  cond.l ecx.h
  flags.get edx.w
  flags.set 0, 0x1
  cond.b ebx
  exit stop @0x110/0
",
    );
    let (r, _) = run_both(
        &p,
        &regs(&[(EAX, 3), (EBX, 5)]),
        LazyFlags::default(),
        0,
        10,
    );
    assert_eq!(r.vregs[ECX] & 0xFFFF, 0x0101, "3 < 5 unsigned and signed");
    assert_eq!(r.vregs[EDX] & CF, CF);
    assert_eq!(r.vregs[EBX], 0, "CF cleared by flags.set");
    assert_eq!(r.vregs[EAX], 3, "cmp writes nothing");
}

/// The x87 op hands the machine the encoding, the IP of its site, the
/// selectors and the memory operand's offset computed as a load's (no limit
/// test of its own: the machine checks the bytes it touches); its result
/// merges into AX; a store into code owes a stop at `after`; a refusal exits
/// at the site with nothing done. (The fake machine's toy FPU: see
/// `testkit::FakeMachine::x87`.)
#[test]
fn x87_ops_reach_the_machine_with_their_operand() {
    use shared_ir::machine::X87Mem;
    use shared_ir::testkit::Event;
    let p = parse(
        "program model=real16 key=0x10 guest=20
b0:
  clock.check 3 @0x100/0
  x87 _, dd.1e.34.12 [ds_base: ebx + 0x1234] a16 lim=0xffff sel cs.w, ds.w @0x100/3 after @0x104/2
  x87 eax.w, df.e0 nomem sel cs.w, 0x0 @0x104/2 after @0x106/1
  x87 _, d9.06.ff.ff [ds_base: 0xfffe] a16 lim=0xffff sel cs.w, ds.w @0x106/1
  exit stop @0x10a/0
",
    );
    let (r, m) = run_both(
        &p,
        &regs(&[
            (EAX, 0xABCD_0000),
            (EBX, 0xF000),
            (9, 0x1234),
            (11, 0x0200),
            (DS_BASE, 0x2000),
        ]),
        LazyFlags::default(),
        10,
        100,
    );
    // The third op's 8 bytes at FFFEh leave the segment: refused there.
    assert_eq!(
        r.exit,
        Exit {
            reason: ExitReason::Fallback,
            ip: 0x106
        }
    );
    assert_eq!(r.clock, 12, "two instructions done, the third given back");
    let x87: Vec<&Event> = m
        .log
        .iter()
        .filter(|e| matches!(e, Event::X87 { .. }))
        .collect();
    assert_eq!(x87.len(), 2);
    let Event::X87 {
        ip, cs, mem, now, ..
    } = x87[0]
    else {
        unreachable!()
    };
    assert_eq!((*ip, *cs, *now), (0x100, 0x1234, 10));
    assert_eq!(
        *mem,
        Some(X87Mem {
            base: 0x2000,
            off: 0x0234, // (F000h + 1234h) & FFFFh
            limit: 0xFFFF,
            sel: 0x0200,
        })
    );
    let Event::X87 {
        state, now, mem, ..
    } = x87[1]
    else {
        unreachable!()
    };
    assert_eq!((*now, *mem), (11, None));
    assert_eq!(r.vregs[EAX], 0xABCD_0000 | (*state as u16 as u32));
    assert_eq!(m.fpu, *state);
}

const ESI: usize = 6;

/// A REP block's text: `rep.OP.COND.W SRC, DST, COUNT @site, bT, bF`.
fn rep_prog(body: &str) -> shared_ir::ir::Program {
    let p = parse(body);
    let again = parse(&print_program(&p));
    assert_eq!(again, p, "text round trip");
    p
}

#[test]
fn rep_stos_a16_wraps_di_at_64k_keeps_the_upper_bits_and_bills_one_per_element() {
    let p = rep_prog(
        "program model=real16 key=0x10 guest=20
b0:
  clock.check 1 @0x100/0
  jmp b1
b1:
  rep.stos.rep.16 [ds_base: esi] a16 lim=0xffff, [es_base: edi] a16 lim=0xffff, ecx.w @0x101/0, b1, b2
b2:
  exit stop @0x103/0
",
    );
    let (r, m) = run_both(
        &p,
        &regs(&[
            (EAX, 0x5566_BEEF),
            (ECX, 0xAAAA_0003),
            (EDI, 0x1234_FFFE),
            (ES_BASE, 0x2_0000),
        ]),
        LazyFlags::default(),
        0,
        100,
    );
    assert_eq!(
        r.exit,
        Exit {
            reason: ExitReason::Stop,
            ip: 0x103
        }
    );
    assert_eq!(r.clock, 4, "the MOV's dispatch and one per element");
    assert_eq!(r.vregs[ECX], 0xAAAA_0000);
    assert_eq!(
        r.vregs[EDI], 0x1234_0004,
        "DI wrapped at 64 KiB, bits 16..31 kept"
    );
    for off in [0x2_FFFEusize, 0x2_0000, 0x2_0002] {
        assert_eq!(&m.ram[off..off + 2], &[0xEF, 0xBE], "word at {off:#x}");
    }
    // A budget in the middle stops between elements, at the REP's IP.
    let (r, _) = run_both(
        &p,
        &regs(&[(ECX, 3), (EDI, 0xFFFE), (ES_BASE, 0x2_0000)]),
        LazyFlags::default(),
        0,
        2,
    );
    assert_eq!(
        r.exit,
        Exit {
            reason: ExitReason::Budget,
            ip: 0x101
        }
    );
    assert_eq!((r.clock, r.vregs[ECX], r.vregs[EDI]), (2, 2, 0));
}

#[test]
fn rep_a32_counts_ecx_steps_32_bits_and_a_zero_count_costs_one() {
    let text = |cnt: &str| {
        format!(
            "program model=real16 key=0x10 guest=20
b0:
  clock.check 1 @0x100/0
  jmp b1
b1:
  rep.movs.rep.8 [ds_base: esi] a32 lim=0xffffffff, [es_base: edi] a32 lim=0xffffffff, {cnt} @0x101/0, b1, b2
b2:
  exit stop @0x104/0
"
        )
    };
    let p = rep_prog(&text("ecx"));
    let start = regs(&[
        (ECX, 0x0001_0002),
        (ESI, 0x0000_FFFF),
        (EDI, 0x0001_FFFF),
        (DS_BASE, 0x1000),
        (ES_BASE, 0x1000),
    ]);
    // 65,538 elements: the budget stops it after 5, with no 64 KiB wrap.
    let (r, _) = run_both(&p, &start, LazyFlags::default(), 0, 6);
    assert_eq!(
        r.exit,
        Exit {
            reason: ExitReason::Budget,
            ip: 0x101
        }
    );
    assert_eq!(r.clock, 6);
    assert_eq!(r.vregs[ECX], 0x0001_0002 - 5);
    assert_eq!(r.vregs[ESI], 0x0001_0004);
    assert_eq!(r.vregs[EDI], 0x0002_0004);
    // DF set: steps down.
    let (r, _) = run_both(&p, &start, LazyFlags::from_bits(shared_ir::flags::DF), 0, 3);
    assert_eq!(r.vregs[ESI], 0x0000_FFFD);
    // The same REP counting CX: CX is 2, two elements, ECX's upper half kept.
    let p = rep_prog(&text("ecx.w"));
    let (r, _) = run_both(&p, &start, LazyFlags::default(), 0, 100);
    assert_eq!(
        r.exit,
        Exit {
            reason: ExitReason::Stop,
            ip: 0x104
        }
    );
    assert_eq!((r.clock, r.vregs[ECX]), (3, 0x0001_0000));
    // CX zero: one dispatch, nothing else.
    let (r, _) = run_both(
        &p,
        &regs(&[(ECX, 0x0007_0000)]),
        LazyFlags::default(),
        0,
        100,
    );
    assert_eq!((r.clock, r.vregs[ECX], r.vregs[EDI]), (2, 0x0007_0000, 0));
    // Past the limit: the element exits to a finer tier, nothing billed.
    let lim = text("ecx").replace("lim=0xffffffff, [es", "lim=0xfffe, [es");
    let (r, _) = run_both(&parse(&lim), &start, LazyFlags::default(), 0, 100);
    assert_eq!(
        r.exit,
        Exit {
            reason: ExitReason::Fallback,
            ip: 0x101
        }
    );
    assert_eq!((r.clock, r.vregs[ECX]), (1, 0x0001_0002));
}

#[test]
fn repne_scas_stops_on_the_match_after_rep_stos_cleared_the_buffer() {
    let p = rep_prog(
        "program model=real16 key=0x10 guest=20
b0:
  clock.check 1 @0x100/0
  mov ecx.w, 0x8
  jmp b1
b1:
  rep.stos.rep.8 [ds_base: esi] a16 lim=0xffff, [es_base: edi] a16 lim=0xffff, ecx.w @0x101/0, b1, b2
b2:
  clock.check 1 @0x102/0
  st.8 [es_base: 0x5] a16 lim=0xffff fast, 0x55 @0x102/1
  mov ecx.w, 0x8
  mov edi, 0x0
  mov eax.b, 0x55
  jmp b3
b3:
  rep.scas.repne.8 [ds_base: esi] a16 lim=0xffff, [es_base: edi] a16 lim=0xffff, ecx.w @0x103/0, b3, b4
b4:
  exit stop @0x104/0
",
    );
    let (r, m) = run_both(
        &p,
        &regs(&[(ES_BASE, 0x3_0000)]),
        LazyFlags::default(),
        0,
        100,
    );
    assert_eq!(&m.ram[0x3_0000..0x3_0008], &[0, 0, 0, 0, 0, 0x55, 0, 0]);
    assert_eq!(
        r.exit,
        Exit {
            reason: ExitReason::Stop,
            ip: 0x104
        }
    );
    assert_eq!((r.vregs[EDI], r.vregs[ECX]), (6, 2));
    assert_eq!(r.flags & ZF, ZF);
    assert_eq!(r.clock, 1 + 8 + 1 + 6);
}
