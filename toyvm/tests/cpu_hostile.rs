//! Hostile bytes: random code and random machine states for many steps on a
//! flat bus. Every step must execute, deliver an architectural exception, or
//! stop with a clear report; nothing may panic or hang, and the guest clock
//! must follow its rules (one per dispatch, nothing for a stop other than a
//! triple fault).

use proptest::prelude::*;
use toyvm::bus::{Bus, Width};
use toyvm::cpu::{l0, Cpu, StepOutcome};

/// 2 MiB of RAM (addresses wrap), every byte random.
struct Noise(Vec<u8>);

impl Bus for Noise {
    fn read8(&mut self, a: u32) -> u8 {
        self.0[(a & 0x1F_FFFF) as usize]
    }
    fn write8(&mut self, a: u32, v: u8) {
        self.0[(a & 0x1F_FFFF) as usize] = v;
    }
    fn io_read(&mut self, port: u16, w: Width, now: u64) -> u32 {
        (port as u32 ^ now as u32).wrapping_mul(0x9E37_79B9) & w.mask()
    }
    fn io_write(&mut self, _p: u16, _w: Width, _v: u32, _n: u64) {}
}

fn noise(seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..0x20_0000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

const STEPS: usize = 400;

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_code_never_panics_or_hangs(
        seed in any::<u64>(),
        code in prop::collection::vec(any::<u8>(), 1..64),
        regs in any::<[u32; 8]>(),
        sregs in any::<[u16; 6]>(),
        ip in any::<u16>(),
        flags in any::<u32>(),
        cr0_em in any::<bool>(),
    ) {
        let mut bus = Noise(noise(seed));
        let mut cpu = Cpu::new();
        cpu.regs = regs;
        for (i, s) in sregs.iter().enumerate() {
            cpu.load_seg_real(i, *s);
        }
        cpu.eip = ip as u32;
        cpu.set_eflags(flags & !0x100);
        if cr0_em {
            cpu.cr0 |= 4;
        }
        let start = cpu.linear(1, ip as u32);
        for (i, b) in code.iter().enumerate() {
            bus.write8(start.wrapping_add(i as u32), *b);
        }
        let mut halts = 0;
        for _ in 0..STEPS {
            let before = cpu.clock;
            match l0::step(&mut cpu, &mut bus) {
                StepOutcome::Ok | StepOutcome::HostCall(_) => {
                    prop_assert_eq!(cpu.clock, before + 1);
                }
                StepOutcome::Halt => {
                    prop_assert!(cpu.halted);
                    prop_assert!(cpu.clock <= before + 1);
                    // Wake it as the machine would, so the run goes on.
                    halts += 1;
                    if cpu.interrupt(&mut bus, (halts * 7) as u8).is_err() {
                        break;
                    }
                }
                StepOutcome::Stop(s) => {
                    // A stop retires nothing, except a triple fault: the
                    // faulting instruction's dispatch was spent.
                    let spent = if s.what.starts_with("triple fault") { 1 } else { 0 };
                    prop_assert_eq!(cpu.clock, before + spent, "{}", s.what);
                    prop_assert!(!s.what.is_empty());
                    prop_assert!(!s.bytes.is_empty() || s.what.starts_with("triple fault"));
                    prop_assert!(s.ip <= 0xFFFF);
                    break;
                }
            }
            prop_assert!(cpu.eip <= 0xFFFF, "real-mode IP stays 16-bit");
            prop_assert_eq!(cpu.sbase[1], (cpu.sregs[1] as u32) << 4);
            prop_assert_eq!(cpu.flags.bits() & 0x2, 0x2);
        }
    }
}
