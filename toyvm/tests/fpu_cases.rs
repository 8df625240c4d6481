//! Data-driven x87 cases: each runs one real iced-decoded instruction on a
//! prepared FPU and checks the exact 80-bit results, status-word bits and
//! memory bytes against values computed independently by
//! `tests/fpu_gen/gen_cases.py` (exact rationals and mpmath, with its own
//! model of x87 rounding). The table is committed; no Python is needed here.

use iced_x86::{Code, Decoder, DecoderOptions, OpKind};
use toyvm::cpu::fpu::{Fpu, FpuContext, FpuMemory, F80};
use toyvm::cpu::Exception;

pub struct Case {
    pub name: &'static str,
    /// Instruction bytes (16-bit code).
    pub code: &'static [u8],
    pub cw: u16,
    /// Initial stack, ST(0) first.
    pub stack: &'static [u128],
    /// Initial bytes at the memory operand.
    pub mem: &'static [u8],
    /// Expected stack afterwards, ST(0) first; its length is the depth.
    pub st: &'static [u128],
    pub sw: u16,
    pub sw_mask: u16,
    pub mem_out: Option<&'static [u8]>,
}

include!("fpu_data/cases.rs");

/// A memory operand window backed by a byte array.
pub struct TestMem(pub [u8; 128]);

impl FpuMemory for TestMem {
    fn read(&mut self, disp: u32, buf: &mut [u8]) -> Result<(), Exception> {
        let d = disp as usize;
        let src = self.0.get(d..d + buf.len()).ok_or(Exception::GP)?;
        buf.copy_from_slice(src);
        Ok(())
    }
    fn write(&mut self, disp: u32, buf: &[u8]) -> Result<(), Exception> {
        let d = disp as usize;
        self.0
            .get_mut(d..d + buf.len())
            .ok_or(Exception::GP)?
            .copy_from_slice(buf);
        Ok(())
    }
}

fn run(c: &Case) -> Result<(), String> {
    let mut f = Fpu::new();
    f.set_control(c.cw);
    for &v in c.stack.iter().rev() {
        f.push(F80::from_bits(v));
    }
    let mut mem = TestMem([0; 128]);
    mem.0[..c.mem.len()].copy_from_slice(c.mem);
    let mut dec = Decoder::with_ip(16, c.code, 0x100, DecoderOptions::NONE);
    let ins = dec.decode();
    if ins.code() == Code::INVALID || ins.len() != c.code.len() {
        return Err(format!(
            "bytes {:02X?} do not decode to one instruction",
            c.code
        ));
    }
    let has_mem = (0..ins.op_count()).any(|i| ins.op_kind(i) == OpKind::Memory);
    let mut eax = 0u32;
    let cx = FpuContext {
        mem: if has_mem { Some(&mut mem) } else { None },
        eax: &mut eax,
        op32: false,
        cs: 0x1234,
        ip: 0x100,
        data_seg: 0x2000,
        data_off: 0x10,
    };
    f.execute(&ins, cx)
        .map_err(|e| format!("exception {e:?}"))?;
    let mut errs = Vec::new();
    let depth = (0..8).filter(|&i| !f.is_empty(i)).count();
    if depth != c.st.len() {
        errs.push(format!("depth {} expected {}", depth, c.st.len()));
    }
    for (i, &want) in c.st.iter().enumerate() {
        let got = f.st(i).to_bits();
        if f.is_empty(i) || got != want {
            errs.push(format!(
                "ST({i}) = {got:020X}{} expected {want:020X}",
                if f.is_empty(i) { " (empty)" } else { "" }
            ));
        }
    }
    let sw = f.status_word();
    if sw & c.sw_mask != c.sw {
        errs.push(format!(
            "status {:04X} & {:04X} = {:04X} expected {:04X}",
            sw,
            c.sw_mask,
            sw & c.sw_mask,
            c.sw
        ));
    }
    if let Some(want) = c.mem_out {
        if &mem.0[..want.len()] != want {
            errs.push(format!(
                "memory {:02X?} expected {:02X?}",
                &mem.0[..want.len()],
                want
            ));
        }
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(errs.join("; "))
    }
}

#[test]
fn fpu_cases_table() {
    let mut failures = Vec::new();
    for c in CASES {
        if let Err(e) = run(c) {
            failures.push(format!("{}: {}", c.name, e));
        }
    }
    for f in &failures {
        eprintln!("{f}");
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed",
        failures.len(),
        CASES.len()
    );
    eprintln!("{} x87 cases passed", CASES.len());
}
