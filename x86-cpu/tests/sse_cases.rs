//! SSE/SSE2 in flat 32-bit user mode (`Isa::PentiumSse2`): a case table of
//! concrete results per instruction family with exact XMM bits, general
//! registers, EFLAGS and MXCSR (the sticky flags included, which the unicorn
//! differential cannot check: QEMU 5 never sets them), the #XM, #GP and #PF
//! contracts (nothing written on a fault), FTZ/DAZ and rounding control,
//! FXSAVE/FXRSTOR, CPUID, and that the models without SSE raise #UD.

use iced_x86::code_asm::*;
use x86_cpu::bus::{Bus, MemFault, Width};
use x86_cpu::user::{self, FlatSetup, UserOutcome};
use x86_cpu::{Access, Cpu, Event, Isa};

const CODE: u32 = 0x1000;
const DATA: u32 = 0x8000;
const MEM: usize = 0x2_0000;

/// RAM at 0..128 KiB; page 0 is not accessible (for the #PF cases).
struct Ram {
    mem: Vec<u8>,
    fault: Option<MemFault>,
}

impl Ram {
    fn ok(&mut self, a: u32, acc: Access) -> bool {
        if self.fault.is_some() {
            return false;
        }
        if a < 0x1000 || a as usize >= MEM {
            self.fault = Some(MemFault {
                addr: a,
                access: acc,
            });
            return false;
        }
        true
    }
    fn put128(&mut self, a: u32, v: u128) {
        self.mem[a as usize..a as usize + 16].copy_from_slice(&v.to_le_bytes());
    }
    fn get32(&self, a: u32) -> u32 {
        u32::from_le_bytes(self.mem[a as usize..a as usize + 4].try_into().unwrap())
    }
}

impl Bus for Ram {
    fn read8(&mut self, a: u32) -> u8 {
        if self.ok(a, Access::Read) {
            self.mem[a as usize]
        } else {
            0
        }
    }
    fn write8(&mut self, a: u32, v: u8) {
        if self.ok(a, Access::Write) {
            self.mem[a as usize] = v;
        }
    }
    fn take_fault(&mut self) -> Option<MemFault> {
        self.fault.take()
    }
    fn fault_pending(&self) -> bool {
        self.fault.is_some()
    }
    fn probe_write(&mut self, a: u32, n: u32) {
        for i in 0..n {
            if !self.ok(a.wrapping_add(i), Access::Write) {
                return;
            }
        }
    }
    fn io_read(&mut self, _p: u16, w: Width, _n: u64) -> u32 {
        w.mask()
    }
    fn io_write(&mut self, _p: u16, _w: Width, _v: u32, _n: u64) {}
}

type Asm = fn(&mut CodeAssembler) -> Result<(), IcedError>;

/// Runs `code` from a fresh flat CPU (EBX = DATA) after `init`; returns the
/// CPU, the RAM and the event that stopped it, if any.
fn run(code: Asm, init: &dyn Fn(&mut Cpu, &mut Ram)) -> (Cpu, Ram, Option<Event>) {
    let mut a = CodeAssembler::new(32).unwrap();
    code(&mut a).unwrap();
    let bytes = a.assemble(CODE as u64).unwrap();
    let mut cpu = Cpu::new_flat32(&FlatSetup {
        eip: CODE,
        esp: 0x1_F000,
        fs_base: 0x1_E000,
        fs_limit: 0xFFF,
    });
    cpu.regs[3] = DATA;
    let mut ram = Ram {
        mem: vec![0; MEM],
        fault: None,
    };
    ram.mem[CODE as usize..CODE as usize + bytes.len()].copy_from_slice(&bytes);
    init(&mut cpu, &mut ram);
    let end = CODE + bytes.len() as u32;
    while cpu.eip != end {
        match user::step(&mut cpu, &mut ram) {
            UserOutcome::Ok => {}
            UserOutcome::Exception(e) => return (cpu, ram, Some(e)),
            UserOutcome::Stop(s) => panic!("stopped: {s}"),
        }
    }
    (cpu, ram, None)
}

/// A case: name, code, XMM0/XMM1 and MXCSR before; XMM0 and MXCSR after.
struct Case {
    name: &'static str,
    code: Asm,
    x0: u128,
    x1: u128,
    mxcsr: u32,
    want0: u128,
    want_mxcsr: u32,
}

const M: u32 = 0x1F80;
const IE: u32 = 1;
const DE: u32 = 2;
const ZE: u32 = 4;
const OE: u32 = 8;
const UE: u32 = 0x10;
const PE: u32 = 0x20;
const RC_DOWN: u32 = 1 << 13;
const RC_UP: u32 = 2 << 13;
const RC_ZERO: u32 = 3 << 13;
const DAZ: u32 = 0x40;
const FTZ: u32 = 0x8000;
/// Upper 64 bits every scalar double case keeps.
const HI: u128 = 0xDEAD_BEEF_0000_1111 << 64;
const THIRD: u128 = 0x3FD5_5555_5555_5555;

fn c(
    name: &'static str,
    code: Asm,
    x0: u128,
    x1: u128,
    mxcsr: u32,
    want0: u128,
    want_mxcsr: u32,
) -> Case {
    Case {
        name,
        code,
        x0,
        x1,
        mxcsr,
        want0,
        want_mxcsr,
    }
}

fn cases() -> Vec<Case> {
    vec![
        // Logic and moves.
        c("xorps self", |a| a.xorps(xmm0, xmm0), !0, 0, M, 0, M),
        c(
            "andnpd",
            |a| a.andnpd(xmm0, xmm1),
            0xF0F0,
            0xFFFF,
            M,
            0x0F0F,
            M,
        ),
        c(
            "por",
            |a| a.por(xmm0, xmm1),
            0xF0 << 100,
            0x0F,
            M,
            0xF0 << 100 | 0x0F,
            M,
        ),
        c(
            "movss reg keeps upper",
            |a| a.movss(xmm0, xmm1),
            !0,
            0x1234_5678 | 0xAB << 64,
            M,
            !0u128 << 32 | 0x1234_5678,
            M,
        ),
        c(
            "movsd reg keeps upper",
            |a| a.movsd_2(xmm0, xmm1),
            HI | 7,
            0x1122_3344_5566_7788,
            M,
            HI | 0x1122_3344_5566_7788,
            M,
        ),
        c(
            "movhlps",
            |a| a.movhlps(xmm0, xmm1),
            HI | 1,
            0xAAAA << 64 | 5,
            M,
            HI | 0xAAAA,
            M,
        ),
        c(
            "movlhps",
            |a| a.movlhps(xmm0, xmm1),
            HI | 1,
            0xAAAA << 64 | 5,
            M,
            5 << 64 | 1,
            M,
        ),
        c(
            "shufps 0x1B",
            |a| a.shufps(xmm0, xmm1, 0x1B),
            0x4444_4444_3333_3333_2222_2222_1111_1111,
            0x8888_8888_7777_7777_6666_6666_5555_5555,
            M,
            0x5555_5555_6666_6666_3333_3333_4444_4444,
            M,
        ),
        c(
            "unpcklps",
            |a| a.unpcklps(xmm0, xmm1),
            0x4444_4444_3333_3333_2222_2222_1111_1111,
            0x8888_8888_7777_7777_6666_6666_5555_5555,
            M,
            0x6666_6666_2222_2222_5555_5555_1111_1111,
            M,
        ),
        // Packed integer.
        c(
            "paddb wraps",
            |a| a.paddb(xmm0, xmm1),
            0x0102030405060708090A0B0C0D0E0FFF,
            0x0101_0101_0101_0101_0101_0101_0101_0101,
            M,
            0x02030405060708090A0B0C0D0E0F1000,
            M,
        ),
        c(
            "paddusb saturates",
            |a| a.paddusb(xmm0, xmm1),
            0x0102030405060708090A0B0C0D0E0FFF,
            0x0101_0101_0101_0101_0101_0101_0101_0101,
            M,
            0x02030405060708090A0B0C0D0E0F10FF,
            M,
        ),
        c(
            "psubsw saturates",
            |a| a.psubsw(xmm0, xmm1),
            0x0001_0001_0001_0001_0001_0001_0001_8000,
            0x0001_0001_0001_0001_0001_0001_0001_0001,
            M,
            0x8000,
            M,
        ),
        c(
            "pcmpeqb",
            |a| a.pcmpeqb(xmm0, xmm1),
            0x0102030405060708090A0B0C0D0E0F10,
            0x0102030400000000090A0B0C00000000,
            M,
            0xFFFFFFFF00000000FFFFFFFF00000000,
            M,
        ),
        c(
            "psrldq 3",
            |a| a.psrldq(xmm0, 3),
            0x0102030405060708090A0B0C0D0E0F10,
            0,
            M,
            0x0000000102030405060708090A0B0C0D,
            M,
        ),
        c(
            "pslldq 3",
            |a| a.pslldq(xmm0, 3),
            0x0102030405060708090A0B0C0D0E0F10,
            0,
            M,
            0x0405060708090A0B0C0D0E0F10000000,
            M,
        ),
        c(
            "psraw 20 fills with the sign",
            |a| a.psraw(xmm0, 20),
            0x8000_7FFF_0001_FFFF_0000_1234_F000_0F00,
            0,
            M,
            0xFFFF_0000_0000_FFFF_0000_0000_FFFF_0000,
            M,
        ),
        c(
            "psllq by xmm (upper half ignored)",
            |a| a.psllq(xmm0, xmm1),
            1 << 64 | 1,
            0xFFFF << 64 | 4,
            M,
            16 << 64 | 16,
            M,
        ),
        c(
            "pshufd 0x1B",
            |a| a.pshufd(xmm0, xmm1, 0x1B),
            0,
            0x0102030405060708090A0B0C0D0E0F10,
            M,
            0x0D0E0F10_090A0B0C_05060708_01020304,
            M,
        ),
        c(
            "punpcklbw",
            |a| a.punpcklbw(xmm0, xmm1),
            0x1122334455667788,
            0xAABBCCDDEEFF0011,
            M,
            0xAA11BB22CC33DD44EE55FF6600771188,
            M,
        ),
        c(
            "packuswb",
            |a| a.packuswb(xmm0, xmm1),
            0x007F_FFFF_00FF_0100,
            0,
            M,
            0x7F00FFFF,
            M,
        ),
        c(
            "pmuludq",
            |a| a.pmuludq(xmm0, xmm1),
            2 << 64 | 0xFFFF_FFFF,
            3 << 64 | 0xFFFF_FFFF,
            M,
            6 << 64 | 0xFFFF_FFFE_0000_0001,
            M,
        ),
        c(
            "pmaddwd -32768² twice wraps",
            |a| a.pmaddwd(xmm0, xmm1),
            0x8000_8000_8000_8000_8000_8000_8000_8000,
            0x8000_8000_8000_8000_8000_8000_8000_8000,
            M,
            0x8000_0000_8000_0000_8000_0000_8000_0000,
            M,
        ),
        c(
            "psadbw",
            |a| a.psadbw(xmm0, xmm1),
            0,
            0x0101_0101_0101_0101_FFFF_FFFF_FFFF_FFFF,
            M,
            8 << 64 | 0x7F8,
            M,
        ),
        // Scalar double arithmetic, rounding control, flags.
        c(
            "addsd 1+2",
            |a| a.addsd(xmm0, xmm1),
            HI | 0x3FF0_0000_0000_0000,
            0x4000_0000_0000_0000,
            M,
            HI | 0x4008_0000_0000_0000,
            M,
        ),
        c(
            "divsd 1/3 nearest",
            |a| a.divsd(xmm0, xmm1),
            HI | 0x3FF0_0000_0000_0000,
            0x4008_0000_0000_0000,
            M,
            HI | THIRD,
            M | PE,
        ),
        c(
            "divsd 1/3 up",
            |a| a.divsd(xmm0, xmm1),
            HI | 0x3FF0_0000_0000_0000,
            0x4008_0000_0000_0000,
            M | RC_UP,
            HI | (THIRD + 1),
            M | RC_UP | PE,
        ),
        c(
            "divsd -1/3 down",
            |a| a.divsd(xmm0, xmm1),
            HI | 0xBFF0_0000_0000_0000,
            0x4008_0000_0000_0000,
            M | RC_DOWN,
            HI | 0xBFD5_5555_5555_5556,
            M | RC_DOWN | PE,
        ),
        c(
            "divss 1/3 nearest",
            |a| a.divss(xmm0, xmm1),
            0x3F80_0000,
            0x4040_0000,
            M,
            0x3EAA_AAAB,
            M | PE,
        ),
        c(
            "divss 1/3 toward zero",
            |a| a.divss(xmm0, xmm1),
            0x3F80_0000,
            0x4040_0000,
            M | RC_ZERO,
            0x3EAA_AAAA,
            M | RC_ZERO | PE,
        ),
        c(
            "divss 1/0",
            |a| a.divss(xmm0, xmm1),
            0x3F80_0000,
            0,
            M,
            0x7F80_0000,
            M | ZE,
        ),
        c(
            "divss 0/0 indefinite",
            |a| a.divss(xmm0, xmm1),
            0,
            0,
            M,
            0xFFC0_0000,
            M | IE,
        ),
        c(
            "sqrtsd 2",
            |a| a.sqrtsd(xmm0, xmm1),
            HI,
            0x4000_0000_0000_0000,
            M,
            HI | 0x3FF6_A09E_667F_3BCD,
            M | PE,
        ),
        c(
            "sqrtsd -1",
            |a| a.sqrtsd(xmm0, xmm1),
            HI,
            0xBFF0_0000_0000_0000,
            M,
            HI | 0xFFF8_0000_0000_0000,
            M | IE,
        ),
        c(
            "mulsd overflow",
            |a| a.mulsd(xmm0, xmm1),
            0x7FE1_CCF3_85EB_C8A0,
            0x4024_0000_0000_0000,
            M,
            0x7FF0_0000_0000_0000,
            M | OE | PE,
        ),
        c(
            "mulsd overflow toward zero",
            |a| a.mulsd(xmm0, xmm1),
            0x7FE1_CCF3_85EB_C8A0,
            0x4024_0000_0000_0000,
            M | RC_ZERO,
            0x7FEF_FFFF_FFFF_FFFF,
            M | RC_ZERO | OE | PE,
        ),
        c(
            "mulsd exact denormal: no UE",
            |a| a.mulsd(xmm0, xmm1),
            0x0010_0000_0000_0000,
            0x3FE0_0000_0000_0000,
            M,
            0x0008_0000_0000_0000,
            M,
        ),
        c(
            "mulsd tiny inexact: UE PE",
            |a| a.mulsd(xmm0, xmm1),
            0x0010_0000_0000_0001,
            0x3FE0_0000_0000_0000,
            M,
            0x0008_0000_0000_0000,
            M | UE | PE,
        ),
        c(
            "mulsd tiny under FTZ: +0",
            |a| a.mulsd(xmm0, xmm1),
            0x0010_0000_0000_0001,
            0x3FE0_0000_0000_0000,
            M | FTZ,
            0,
            M | FTZ | UE | PE,
        ),
        c(
            "addsd denormal: DE",
            |a| a.addsd(xmm0, xmm1),
            1,
            0,
            M,
            1,
            M | DE,
        ),
        c(
            "addsd denormal under DAZ: 0, no DE",
            |a| a.addsd(xmm0, xmm1),
            1,
            0,
            M | DAZ,
            0,
            M | DAZ,
        ),
        c(
            "addsd SNaN + 1: quiet, IE",
            |a| a.addsd(xmm0, xmm1),
            0x7FF0_0000_0000_0001,
            0x3FF0_0000_0000_0000,
            M,
            0x7FF8_0000_0000_0001,
            M | IE,
        ),
        c(
            "addsd 1 + QNaN: the NaN, no IE",
            |a| a.addsd(xmm0, xmm1),
            0x3FF0_0000_0000_0000,
            0xFFF8_0000_0000_0042,
            M,
            0xFFF8_0000_0000_0042,
            M,
        ),
        c(
            "addsd two NaNs: the first",
            |a| a.addsd(xmm0, xmm1),
            0x7FF8_0000_0000_0001,
            0x7FF8_0000_0000_0002,
            M,
            0x7FF8_0000_0000_0001,
            M,
        ),
        c(
            "minsd NaN first: the second, IE",
            |a| a.minsd(xmm0, xmm1),
            0x7FF8_0000_0000_0000,
            0x4000_0000_0000_0000,
            M,
            0x4000_0000_0000_0000,
            M | IE,
        ),
        c(
            "maxsd +0, -0: the second",
            |a| a.maxsd(xmm0, xmm1),
            0,
            0x8000_0000_0000_0000,
            M,
            0x8000_0000_0000_0000,
            M,
        ),
        c(
            "subpd x - x = +0, -0 rounding down",
            |a| a.subpd(xmm0, xmm1),
            0x3FF0_0000_0000_0000 << 64 | 0x3FF0_0000_0000_0000,
            0x3FF0_0000_0000_0000 << 64 | 0x3FF0_0000_0000_0000,
            M | RC_DOWN,
            0x8000_0000_0000_0000 << 64 | 0x8000_0000_0000_0000,
            M | RC_DOWN,
        ),
        c(
            "mulps lanes",
            |a| a.mulps(xmm0, xmm1),
            0x4000_0000_4040_0000_3F80_0000_BF80_0000,
            0x4000_0000_4000_0000_4000_0000_4000_0000,
            M,
            0x4080_0000_40C0_0000_4000_0000_C000_0000,
            M,
        ),
        c(
            "cmpltpd",
            |a| a.cmppd(xmm0, xmm1, 1),
            0x3FF0_0000_0000_0000 << 64 | 0x4000_0000_0000_0000,
            0x4000_0000_0000_0000 << 64 | 0x3FF0_0000_0000_0000,
            M,
            (u64::MAX as u128) << 64,
            M,
        ),
        c(
            "cmpunordss QNaN: no IE",
            |a| a.cmpss(xmm0, xmm1, 3),
            HI | 0x7FC0_0000,
            0,
            M,
            HI | 0xFFFF_FFFF,
            M,
        ),
        c(
            "cmpltss QNaN: IE",
            |a| a.cmpss(xmm0, xmm1, 1),
            HI | 0x7FC0_0000,
            0,
            M,
            HI,
            M | IE,
        ),
        // Conversions.
        c(
            "cvtsd2ss 1/3",
            |a| a.cvtsd2ss(xmm0, xmm1),
            HI,
            THIRD,
            M,
            HI | 0x3EAA_AAAB,
            M | PE,
        ),
        c(
            "cvtss2sd SNaN",
            |a| a.cvtss2sd(xmm0, xmm1),
            HI,
            0x7F80_0001,
            M,
            HI | 0x7FF8_0000_2000_0000,
            M | IE,
        ),
        c(
            "cvtps2pd",
            |a| a.cvtps2pd(xmm0, xmm1),
            0,
            0xBF80_0000_3FC0_0000,
            M,
            0xBFF0_0000_0000_0000 << 64 | 0x3FF8_0000_0000_0000,
            M,
        ),
        c(
            "cvtdq2pd",
            |a| a.cvtdq2pd(xmm0, xmm1),
            !0,
            0xFFFF_FFFB_0000_0003,
            M,
            0xC014_0000_0000_0000 << 64 | 0x4008_0000_0000_0000,
            M,
        ),
        c(
            "cvttps2dq out of range",
            |a| a.cvttps2dq(xmm0, xmm1),
            0,
            0x7FC0_0000_4F00_0000_C02C_CCCD_402C_CCCD,
            M,
            0x8000_0000_8000_0000_FFFF_FFFE_0000_0002,
            M | IE | PE,
        ),
        c(
            "cvtpd2ps zeroes the upper half",
            |a| a.cvtpd2ps(xmm0, xmm1),
            !0,
            0x4000_0000_0000_0000 << 64 | 0x3FF0_0000_0000_0000,
            M,
            0x4000_0000_3F80_0000,
            M,
        ),
    ]
}

#[test]
fn sse_case_table() {
    let mut bad = Vec::new();
    for k in cases() {
        let (cpu, _, ev) = run(k.code, &|cpu, _| {
            cpu.sse.xmm[0] = k.x0;
            cpu.sse.xmm[1] = k.x1;
            cpu.sse.mxcsr = k.mxcsr;
        });
        if ev.is_some()
            || cpu.sse.xmm[0] != k.want0
            || cpu.sse.mxcsr != k.want_mxcsr
            || cpu.sse.xmm[1] != k.x1
        {
            bad.push(format!(
                "{}: event {ev:?} xmm0 {:032x} (want {:032x}) mxcsr {:04x} (want {:04x})",
                k.name, cpu.sse.xmm[0], k.want0, cpu.sse.mxcsr, k.want_mxcsr
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "{} cases differ:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// Results in general registers and EFLAGS.
#[test]
fn sse_to_gpr_and_eflags() {
    let cf = 1;
    let pf = 4;
    let zf = 0x40;
    let arith = 0x8D5;
    // (name, code, xmm0, xmm1, mxcsr, EAX after, EFLAGS & arith after, MXCSR after)
    type Row = (&'static str, Asm, u128, u128, u32, u32, u32, u32);
    let table: Vec<Row> = vec![
        (
            "comisd 1 < 2",
            |a| a.comisd(xmm0, xmm1),
            0x3FF0_0000_0000_0000,
            0x4000_0000_0000_0000,
            M,
            0,
            cf,
            M,
        ),
        (
            "comisd 2 = 2",
            |a| a.comisd(xmm0, xmm1),
            0x4000_0000_0000_0000,
            0x4000_0000_0000_0000,
            M,
            0,
            zf,
            M,
        ),
        (
            "comisd QNaN: unordered, IE",
            |a| a.comisd(xmm0, xmm1),
            0x7FF8_0000_0000_0000,
            0,
            M,
            0,
            zf | pf | cf,
            M | IE,
        ),
        (
            "ucomiss QNaN: unordered, no IE",
            |a| a.ucomiss(xmm0, xmm1),
            0x7FC0_0000,
            0,
            M,
            0,
            zf | pf | cf,
            M,
        ),
        (
            "cvttsd2si 2.7",
            |a| a.cvttsd2si(eax, xmm1),
            0,
            0x4005_9999_9999_999A,
            M,
            2,
            0,
            M | PE,
        ),
        (
            "cvtsd2si -2.5 nearest even",
            |a| a.cvtsd2si(eax, xmm1),
            0,
            0xC004_0000_0000_0000,
            M,
            0xFFFF_FFFE,
            0,
            M | PE,
        ),
        (
            "cvtsd2si 3e9 indefinite",
            |a| a.cvtsd2si(eax, xmm1),
            0,
            0x41E6_5A0B_C000_0000,
            M,
            0x8000_0000,
            0,
            M | IE,
        ),
        (
            "cvtss2si 2.5 up",
            |a| a.cvtss2si(eax, xmm1),
            0,
            0x4020_0000,
            M | RC_UP,
            3,
            0,
            M | RC_UP | PE,
        ),
        (
            "movmskps",
            |a| a.movmskps(eax, xmm1),
            0,
            0x8000_0000_0000_0000_8000_0000_7FFF_FFFF,
            M,
            0b1010,
            0,
            M,
        ),
        (
            "pmovmskb",
            |a| a.pmovmskb(eax, xmm1),
            0,
            0xFFFFFFFF00000000FFFFFFFF00000000,
            M,
            0xF0F0,
            0,
            M,
        ),
        (
            "movd eax, xmm",
            |a| a.movd(eax, xmm1),
            0,
            0x1234_5678_9ABC_DEF0,
            M,
            0x9ABC_DEF0,
            0,
            M,
        ),
        (
            "pextrw 5",
            |a| a.pextrw(eax, xmm1, 5),
            0,
            0x1111_2222_3333_4444_5555_6666_7777_8888,
            M,
            0x3333,
            0,
            M,
        ),
    ];
    for (name, code, x0, x1, mx, want_eax, fl, want_mx) in table {
        let (cpu, _, ev) = run(code, &|cpu, _| {
            cpu.sse.xmm[0] = x0;
            cpu.sse.xmm[1] = x1;
            cpu.sse.mxcsr = mx;
            cpu.regs[0] = 0xCCCC_CCCC;
            cpu.set_eflags(0x202 | arith);
        });
        assert_eq!(ev, None, "{name}");
        if name.contains("com") {
            assert_eq!(cpu.eflags() & arith, fl, "{name}: EFLAGS");
        } else {
            assert_eq!(cpu.regs[0], want_eax, "{name}: EAX");
        }
        assert_eq!(cpu.sse.mxcsr, want_mx, "{name}: MXCSR");
    }
    let (cpu, _, _) = run(|a| a.cvtsi2sd(xmm0, eax), &|cpu, _| {
        cpu.regs[0] = (-5i32) as u32;
        cpu.sse.xmm[0] = HI;
    });
    assert_eq!(cpu.sse.xmm[0], HI | 0xC014_0000_0000_0000);
    // 2^24 + 1 rounds to 2^24 (even), inexact.
    let (cpu, _, _) = run(|a| a.cvtsi2ss(xmm0, eax), &|cpu, _| {
        cpu.regs[0] = 16_777_217
    });
    assert_eq!((cpu.sse.xmm[0], cpu.sse.mxcsr), (0x4B80_0000, M | PE));
}

/// Memory forms: loads, stores, alignment, and the fault contract.
#[test]
fn sse_memory_and_faults() {
    let v: u128 = 0x0011_2233_4455_6677_8899_AABB_CCDD_EEFF;
    // Aligned load and store, unaligned load and store.
    let (cpu, ram, ev) = run(
        |a| {
            a.movaps(xmm0, xmmword_ptr(ebx))?;
            a.movups(xmmword_ptr(ebx + 0x23), xmm0)?;
            a.movdqu(xmm1, xmmword_ptr(ebx + 0x21))?;
            a.movss(xmm2, dword_ptr(ebx + 4))?;
            a.movhps(xmm3, qword_ptr(ebx))?;
            a.movq(qword_ptr(ebx + 0x40), xmm0)
        },
        &|cpu, ram| {
            ram.put128(DATA, v);
            cpu.sse.xmm[2] = !0;
            cpu.sse.xmm[3] = 0x5555;
        },
    );
    assert_eq!(ev, None);
    assert_eq!(cpu.sse.xmm[0], v);
    // Two zero bytes, then the first 14 bytes of the copy at +23h.
    assert_eq!(cpu.sse.xmm[1], v << 16);
    assert_eq!(cpu.sse.xmm[2], 0x8899_AABB, "movss load zero-extends");
    assert_eq!(cpu.sse.xmm[3], (0x8899_AABB_CCDD_EEFFu128) << 64 | 0x5555);
    assert_eq!(ram.get32(DATA + 0x23), 0xCCDD_EEFF);
    assert_eq!(ram.get32(DATA + 0x40), 0xCCDD_EEFF);
    assert_eq!(ram.get32(DATA + 0x44), 0x8899_AABB);

    // Misaligned MOVAPS / ADDPS memory: #GP, nothing changes.
    for code in [
        (|a| a.movaps(xmm0, xmmword_ptr(ebx + 8))) as Asm,
        |a| a.addps(xmm0, xmmword_ptr(ebx + 4)),
        |a| a.movdqa(xmmword_ptr(ebx + 1), xmm0),
    ] {
        let (cpu, ram, ev) = run(code, &|cpu, _| cpu.sse.xmm[0] = 7);
        assert_eq!(ev.map(|e| e.vector), Some(13));
        assert_eq!(ev.unwrap().eip, CODE);
        assert_eq!(cpu.sse.xmm[0], 7);
        assert!(ram.mem[DATA as usize..DATA as usize + 0x20]
            .iter()
            .all(|&b| b == 0));
    }
    // A refused read: #PF, XMM untouched; a refused store writes nothing.
    let (cpu, _, ev) = run(|a| a.movups(xmm0, xmmword_ptr(0xFF8)), &|cpu, _| {
        cpu.sse.xmm[0] = 7
    });
    let ev = ev.unwrap();
    assert_eq!((ev.vector, ev.mem.map(|m| m.addr)), (14, Some(0xFF8)));
    assert_eq!(cpu.sse.xmm[0], 7);
    let (_, ram, ev) = run(
        |a| a.movups(xmmword_ptr((MEM - 8) as u32), xmm0),
        &|cpu, _| cpu.sse.xmm[0] = !0,
    );
    assert_eq!(ev.map(|e| e.vector), Some(14));
    assert!(ram.mem[MEM - 8..].iter().all(|&b| b == 0));
}

/// Unmasked exceptions raise #XM (vector 19) without writing the result;
/// MXCSR records the flag.
#[test]
fn sse_unmasked_exception_is_xm() {
    let unmask_ze = M & !(ZE << 7);
    let (cpu, _, ev) = run(|a| a.divsd(xmm0, xmm1), &|cpu, _| {
        cpu.sse.xmm[0] = 0x3FF0_0000_0000_0000;
        cpu.sse.xmm[1] = 0;
        cpu.sse.mxcsr = unmask_ze;
    });
    let ev = ev.expect("#XM");
    assert_eq!((ev.vector, ev.eip), (19, CODE));
    assert_eq!(cpu.sse.xmm[0], 0x3FF0_0000_0000_0000);
    assert_eq!(cpu.sse.mxcsr, unmask_ze | ZE);
    // Precision unmasked: PE recorded, #XM.
    let unmask_pe = M & !(PE << 7);
    let (cpu, _, ev) = run(|a| a.divss(xmm0, xmm1), &|cpu, _| {
        cpu.sse.xmm[0] = 0x3F80_0000;
        cpu.sse.xmm[1] = 0x4040_0000;
        cpu.sse.mxcsr = unmask_pe;
    });
    assert_eq!(ev.map(|e| e.vector), Some(19));
    assert_eq!(
        (cpu.sse.xmm[0], cpu.sse.mxcsr),
        (0x3F80_0000, unmask_pe | PE)
    );
}

#[test]
fn sse_state_instructions() {
    // LDMXCSR with a reserved bit: #GP; STMXCSR stores.
    let (cpu, _, ev) = run(|a| a.ldmxcsr(dword_ptr(ebx)), &|_, ram| {
        ram.mem[DATA as usize + 2] = 1
    });
    assert_eq!(ev.map(|e| e.vector), Some(13));
    assert_eq!(cpu.sse.mxcsr, M);
    let (cpu, ram, ev) = run(
        |a| {
            a.ldmxcsr(dword_ptr(ebx))?;
            a.stmxcsr(dword_ptr(ebx + 4))
        },
        &|_, ram| {
            ram.mem[DATA as usize..DATA as usize + 4].copy_from_slice(&0x7FA1u32.to_le_bytes())
        },
    );
    assert_eq!(ev, None);
    assert_eq!((cpu.sse.mxcsr, ram.get32(DATA + 4)), (0x7FA1, 0x7FA1));

    // FXSAVE image, then FXRSTOR brings the state back.
    let (cpu, ram, ev) = run(
        |a| {
            a.fld1()?;
            a.fxsave(ptr(ebx))?;
            a.xorps(xmm3, xmm3)?;
            a.fninit()?;
            a.ldmxcsr(dword_ptr(ebx + 24 + 0x1000))?;
            a.fxrstor(ptr(ebx))
        },
        &|cpu, ram| {
            cpu.sse.xmm[3] = v3();
            cpu.sse.mxcsr = 0x3F80;
            ram.mem[DATA as usize + 0x1018..DATA as usize + 0x101C]
                .copy_from_slice(&M.to_le_bytes());
        },
    );
    fn v3() -> u128 {
        0x0102_0304_0506_0708_090A_0B0C_0D0E_0F10
    }
    assert_eq!(ev, None);
    assert_eq!(ram.get32(DATA) & 0xFFFF, 0x037F, "FCW");
    assert_eq!(ram.get32(DATA) >> 16, 0x3800, "FSW: TOP = 7");
    assert_eq!(
        ram.mem[DATA as usize + 4],
        0x80,
        "abridged tag: physical register 7 valid"
    );
    assert_eq!(ram.get32(DATA + 24), 0x3F80, "MXCSR");
    assert_eq!(ram.get32(DATA + 28), 0xFFFF, "MXCSR_MASK");
    assert_eq!(
        ram.get32(DATA + 32 + 4),
        0x8000_0000,
        "ST0 = 1.0 significand high"
    );
    assert_eq!(ram.get32(DATA + 32 + 8) & 0xFFFF, 0x3FFF, "ST0 exponent");
    assert_eq!(ram.get32(DATA + 160 + 48), 0x0D0E_0F10, "XMM3");
    assert_eq!(cpu.sse.xmm[3], v3());
    assert_eq!(cpu.sse.mxcsr, 0x3F80);
    assert_eq!(cpu.fpu.st(0), x86_cpu::fpu::softfloat::F80::ONE);
    // FXSAVE to a misaligned address: #GP.
    let (_, _, ev) = run(|a| a.fxsave(ptr(ebx + 8)), &|_, _| {});
    assert_eq!(ev.map(|e| e.vector), Some(13));
}

#[test]
fn sse_cpuid_and_models_without_sse() {
    let (cpu, _, ev) = run(|a| a.cpuid(), &|cpu, _| cpu.regs[0] = 1);
    assert_eq!(ev, None);
    let features = cpu.regs[2];
    assert_eq!(features >> 24 & 7, 7, "FXSR SSE SSE2");
    assert_eq!(features >> 23 & 1, 0, "no MMX");
    // The Pentium model (and toyvm's 486) have no SSE: #UD.
    let (cpu, _, ev) = run(|a| a.xorps(xmm0, xmm1), &|cpu, _| {
        cpu.isa = Isa::Pentium;
        cpu.sse.xmm[0] = 5;
    });
    assert_eq!(ev.map(|e| e.vector), Some(6));
    assert_eq!(cpu.sse.xmm[0], 5);
    // PAUSE and the fences are no-ops; SSE3 (MOVDDUP) is #UD.
    let (_, _, ev) = run(
        |a| {
            a.pause()?;
            a.lfence()?;
            a.sfence()?;
            a.mfence()
        },
        &|_, _| {},
    );
    assert_eq!(ev, None);
    let (_, _, ev) = run(|a| a.movddup(xmm0, xmm1), &|_, _| {});
    assert_eq!(ev.map(|e| e.vector), Some(6));
    // PEXTRW's SSE4.1 encoding (66 0F 3A 15) is #UD; the SSE2 one runs.
    let (_, _, ev) = run(|a| a.db(&[0x66, 0x0F, 0x3A, 0x15, 0xC8, 0x01]), &|_, _| {});
    assert_eq!(ev.map(|e| e.vector), Some(6));
    let (cpu, _, ev) = run(|a| a.db(&[0x66, 0x0F, 0xC5, 0xC1, 0x01]), &|cpu, _| {
        cpu.sse.xmm[1] = 0xBEEF_0000
    });
    assert_eq!((ev, cpu.regs[0]), (None, 0xBEEF));
}
