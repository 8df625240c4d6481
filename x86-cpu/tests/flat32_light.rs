//! `flow::Facts::light` and `no_undo` audited against `user::run_op`: random
//! flat 32-bit encodings the facts call light (or no-undo) run once through
//! `run_op` (full snapshot) and once through `run_op_light`
//! (`run_op_no_undo`), from the same state with registers biased to refused
//! and read-only pages, page ends and the stack; outcome, CPU state and
//! memory must be equal. A threaded tier (mainemu's L1) relies on this.

mod common;

use common::flatram::{FlatRam, Prot, PAGE};
use x86_cpu::decode::{self, Mode, MAX_LEN};
use x86_cpu::user::{self, FlatSetup};
use x86_cpu::{flow, Cpu};

const MEM: u32 = 0x1_0000;
const CODE: u32 = 0x1000;
const RO: u32 = 0x8000;
const NONE: u32 = 0x9000;
const STACK_TOP: u32 = 0xE000;
const TEB: u32 = 0xF000;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 16) as u32
    }
    fn below(&mut self, n: u32) -> u32 {
        self.next() % n
    }
}

/// A register value: small numbers, pointers into data, next to the refused
/// and read-only pages, the stack, page 0, the top of the address space.
fn value(r: &mut Rng) -> u32 {
    let near = |r: &mut Rng, base: u32| base.wrapping_add(r.below(16)).wrapping_sub(8);
    match r.below(10) {
        0 => r.below(4),
        1 => r.next(),
        2 => 0x2000 + r.below(0x5000),
        3 => near(r, RO),
        4 => near(r, NONE),
        5 => near(r, RO + PAGE),
        6 => near(r, STACK_TOP),
        7 => r.below(0x1000),
        8 => 0u32.wrapping_sub(r.below(16)),
        _ => 0x2000 + r.below(16) * 4,
    }
}

fn encoding(r: &mut Rng) -> [u8; MAX_LEN] {
    let mut b = [0u8; MAX_LEN];
    for x in b.iter_mut() {
        *x = r.next() as u8;
    }
    // Bias to two-byte opcodes, operand size and segment prefixes, x87.
    match r.below(8) {
        0 => b[0] = 0x0F,
        1 => b[0] = [0x66, 0x64, 0xF3, 0xF2, 0xF0][r.below(5) as usize],
        2 => b[0] = 0xD8 + r.below(8) as u8,
        _ => {}
    }
    b
}

#[test]
fn light_and_no_undo_ops_equal_run_op() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut ram = FlatRam::new(MEM);
    ram.prot[(RO / PAGE) as usize] = Prot::Read;
    ram.prot[(NONE / PAGE) as usize] = Prot::None;
    let (mut light, mut no_undo, mut full) = (0, 0, 0);
    for case in 0..60_000 {
        let bytes = encoding(&mut rng);
        let f = flow::facts(&bytes, CODE, Mode::FLAT32);
        if !f.light {
            full += 1;
            continue;
        }
        let op = decode::decode_in::<FlatRam>(&bytes, CODE, Mode::FLAT32);
        let mut cpu = Cpu::new_flat32(&FlatSetup {
            eip: CODE,
            esp: STACK_TOP,
            fs_base: TEB,
            fs_limit: 0xFFF,
        });
        for k in 0..8 {
            if k != 4 || rng.below(3) == 0 {
                cpu.regs[k] = value(&mut rng);
            }
        }
        // Arithmetic flags, DF, sometimes TF.
        let mut fl = 0x202 | (rng.next() & 0x8D5);
        if rng.below(8) == 0 {
            fl |= 0x100;
        }
        cpu.set_eflags(fl);
        for k in 0..16 {
            ram.mem[(0x2000 + 4 * k) as usize] = rng.next() as u8;
        }
        let mut ca = cpu.clone();
        let mut ba = FlatRam {
            mem: ram.mem.clone(),
            prot: ram.prot.clone(),
            fault: None,
        };
        let oa = user::run_op(&mut ca, &mut ba, &op);
        let mut cb = cpu.clone();
        let mut bb = FlatRam {
            mem: ram.mem.clone(),
            prot: ram.prot.clone(),
            fault: None,
        };
        let ob = if f.no_undo {
            no_undo += 1;
            user::run_op_no_undo(&mut cb, &mut bb, &op)
        } else {
            light += 1;
            user::run_op_light(&mut cb, &mut bb, &op)
        };
        let what = || {
            format!(
                "case {case}: {:02x?} no_undo {}",
                &bytes[..op.len as usize],
                f.no_undo
            )
        };
        assert_eq!(oa, ob, "{}", what());
        assert_eq!(format!("{ca:?}"), format!("{cb:?}"), "{}", what());
        assert!(ba.mem == bb.mem, "{}: memory", what());
        assert_eq!(ba.fault, bb.fault, "{}", what());
    }
    println!("light {light}, no_undo {no_undo}, neither {full}");
    assert!(light > 10_000 && no_undo > 5_000, "{light} {no_undo}");
}
