//! The `SAFE` audit of `l1::classify`, checked: for random encodings and
//! random register states biased towards segment-limit overruns, stack
//! wraps and zero divisors, a handler of an op classified SAFE that faults
//! must have left every register, segment, IP and flag as it found them
//! (so L1 may skip `run_op`'s snapshot), and must never answer `Stop`.

use toyvm::bus::Bus;
use toyvm::cpu::decode::{self, MAX_LEN};
use toyvm::cpu::op::Flow;
use toyvm::cpu::Cpu;
use toyvm::l1::classify::{self, SAFE};
use toyvm::l1::FlatBus;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[(self.next() % xs.len() as u64) as usize]
    }
}

const PREFIXES: [u8; 10] = [0x66, 0x67, 0x26, 0x2E, 0x36, 0x3E, 0x64, 0x65, 0xF2, 0xF3];

fn random_bytes(r: &mut Rng) -> [u8; MAX_LEN] {
    let mut b = [0u8; MAX_LEN];
    for x in b.iter_mut() {
        *x = r.next() as u8;
    }
    let mut i = 0;
    while i < 3 && r.next().is_multiple_of(3) {
        b[i] = r.pick(&PREFIXES);
        i += 1;
    }
    if r.next().is_multiple_of(4) {
        b[i] = 0x0F;
    }
    b
}

fn random_state(r: &mut Rng) -> Cpu {
    let mut cpu = Cpu::new();
    let near = [
        0u32, 1, 2, 3, 0xFFFC, 0xFFFD, 0xFFFE, 0xFFFF, 0x8000, 0x7FFF,
    ];
    for reg in 0..8 {
        cpu.regs[reg] = match r.next() % 3 {
            0 => r.pick(&near),
            1 => r.next() as u32,
            _ => r.next() as u16 as u32,
        };
    }
    for s in 0..6 {
        let sel = (r.next() % 0x9000) as u16;
        cpu.load_seg_real(s, sel);
    }
    cpu.eip = (r.next() % 0xFF00) as u32;
    cpu.flags.set_bits((r.next() as u32 & 0x0CD5) | 2);
    cpu
}

#[test]
fn safe_handlers_leave_registers_alone_when_they_fault() {
    let mut r = Rng(0x5AFE_5AFE_1234_5678);
    let mut bus = FlatBus::new();
    for a in 0..bus.mem.len() {
        bus.mem[a] = (a as u32).wrapping_mul(2_654_435_761).rotate_left(7) as u8;
    }
    let (mut safe_faults, mut safe_ops, mut unsafe_dirty) = (0u64, 0u64, 0u64);
    for _ in 0..400_000 {
        let bytes = random_bytes(&mut r);
        let cpu0 = random_state(&mut r);
        let op = decode::decode::<FlatBus>(&bytes, cpu0.eip);
        let ins = classify::iced(&bytes, cpu0.eip);
        let class = classify::classify(&ins, &op, false);
        if class & SAFE == 0 {
            // The exclusions are real: some of them do fault after a
            // register effect (this is what the snapshot is for).
            if class & classify::X87 == 0 {
                let mut cpu = cpu0.clone();
                if (op.handler)(&mut cpu, &mut bus, &op).is_err() && cpu.regs != cpu0.regs {
                    unsafe_dirty += 1;
                }
            }
            continue;
        }
        safe_ops += 1;
        let mut cpu = cpu0.clone();
        let res = (op.handler)(&mut cpu, &mut bus, &op);
        if let Ok(Flow::Stop(w)) = &res {
            panic!(
                "SAFE op {:02X?} answered Stop({w})",
                &bytes[..op.len as usize]
            );
        }
        if res.is_err() {
            safe_faults += 1;
            let same = cpu.regs == cpu0.regs
                && cpu.sregs == cpu0.sregs
                && cpu.sbase == cpu0.sbase
                && cpu.eip == cpu0.eip
                && cpu.flags.bits() == cpu0.flags.bits();
            assert!(
                same,
                "SAFE op {:02X?} ({}) faulted with {:?} after changing registers",
                &bytes[..op.len as usize],
                ins,
                res
            );
        }
        // Keep the bus's memory varied but bounded.
        let _ = bus.read8(0);
    }
    assert!(safe_ops > 100_000, "{safe_ops}");
    assert!(safe_faults > 5_000, "{safe_faults}");
    assert!(
        unsafe_dirty > 0,
        "the test never saw an excluded op dirty a register"
    );
}
