//! Shared helpers for the integration tests: run one program (given as IR
//! text or built) on the reference interpreter and on E1, from the same state.
#![allow(dead_code)]

use shared_ir::e1::{self, E1Arena, E1State};
use shared_ir::exit::Exit;
use shared_ir::flags::LazyFlags;
use shared_ir::ir::{parse::parse_program, verify::verify, Program};
use shared_ir::refinterp::{run_program, RefState};
use shared_ir::testkit::FakeMachine;

/// What a run leaves behind.
#[derive(Debug, PartialEq, Eq)]
pub struct Run {
    pub exit: Exit,
    pub vregs: Vec<u32>,
    pub flags: u32,
    pub clock: u64,
}

pub fn parse(text: &str) -> Program {
    let p = parse_program(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify(&p).unwrap_or_else(|e| panic!("{e}\n{text}"));
    p
}

/// Runs `p` on both engines from `regs` (guest vregs), `flags`, `clock` with
/// `limit`; asserts they agree (state, memory, events) and returns the run
/// and the machine.
pub fn run_both(
    p: &Program,
    regs: &[u32],
    flags: LazyFlags,
    clock: u64,
    limit: u64,
) -> (Run, FakeMachine) {
    let mut vregs = vec![0u32; 256];
    vregs[..regs.len()].copy_from_slice(regs);
    let guest = p.guest as usize;

    let mut rm = FakeMachine::new();
    let mut rs = RefState {
        vregs: vregs.clone(),
        flags,
        clock,
        ..Default::default()
    };
    let rexit = run_program(p, &mut rs, &mut rm, limit);
    let want = Run {
        exit: rexit,
        vregs: rs.vregs[..guest].to_vec(),
        flags: rs.flags.bits(),
        clock: rs.clock,
    };

    let mut arena = E1Arena::new(1 << 12);
    let id = arena.install(p).unwrap();
    arena.vregs_mut().copy_from_slice(&vregs);
    let mut em = FakeMachine::new();
    let mut es = E1State { flags, clock };
    let ex = e1::run(&mut arena, &mut em, &mut es, id, limit).unwrap();
    let got = Run {
        exit: ex.exit,
        vregs: arena.vregs()[..guest].to_vec(),
        flags: es.flags.bits(),
        clock: es.clock,
    };
    assert_eq!(got, want, "E1 vs reference\n{p}");
    assert_eq!(em.log, rm.log);
    assert!(em.ram == rm.ram, "RAM differs");
    (want, rm)
}
