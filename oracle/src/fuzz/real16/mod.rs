//! Random but valid real-mode `.COM` programs, assembled with iced-x86.
//!
//! Owns the program layout (a prologue that sets a random initial state, a
//! body of random items, the exit, then subroutines, interrupt handlers and
//! data words), the two-pass assembly that lets code name its own addresses
//! (self-modifying stores, far pointers, IVT entries), and the invariants
//! every item keeps so a random program stays a valid one. The item table
//! itself is [`items`]. It must not run programs or decide what "exact"
//! means.
//!
//! Invariants an item keeps (so any sequence of items is a valid program):
//! * the stack is balanced across the item (what it pushes it pops);
//! * SI and DI point into the data area (`DATA`..`DATA + 0x700`, high
//!   halves zero), so `[si+d]` / `[di+d]` with `d < 0x80` stay in it;
//! * DS, ES, FS, GS and SS hold one of `CS + SAFE_SEGS`, all inside the
//!   memory DOS gave the program and away from its code and the IVT;
//! * TF is clear and the x87 exception masks are set outside the items
//!   that deliberately set them for a few instructions.
//!
//! Memory map of the program segment (CS = the PSP): 0000-00FF PSP, 0100-
//! code, `DATA` 8000-87FF the data area (filled from the seed), E000-EFFF
//! the stack. `CS + 800h` and `CS + 1000h` are scratch segments that string
//! instructions may run across the 64 KiB wrap in. A "wrap line" item copies
//! code to CS:FFxx so that it runs across the end of CS into CS:0000 (the
//! PSP bytes it overwrites are saved and restored around it).

pub mod items;

use super::rng::Rng;
use iced_x86::code_asm::*;
use iced_x86::BlockEncoderOptions;
use serde::{Deserialize, Serialize};

/// Where a .COM image starts in its segment.
pub const ORG: u16 = 0x100;
/// The data area (filled from the seed by the prologue).
pub const DATA: u16 = 0x8000;
/// Its size in 16-bit words.
pub const DATA_WORDS: u16 = 0x400;
/// SI/DI are kept in `DATA..DATA + PTR_SPAN`.
pub const PTR_SPAN: u16 = 0x600;
/// Paragraph offsets from CS that data segment registers may hold.
pub const SAFE_SEGS: [u16; 4] = [0, 0x100, 0x800, 0x1000];
/// Those a string instruction may wrap around 64 KiB in (no code, no PSP).
pub const WRAP_SEGS: [u16; 2] = [0x800, 0x1000];
/// Interrupt vectors the program installs handlers for itself.
pub const USER_VECTORS: [u8; 4] = [0x60, 0x61, 0x62, 0x63];
/// Items in a program body.
pub const MIN_ITEMS: u64 = 8;
pub const MAX_ITEMS: u64 = 63;

/// What the prologue randomizes; the shrinker clears bits one at a time to
/// find the smallest setting that still diverges.
pub mod feature {
    /// Fill the data area from the seed (else it stays zero).
    pub const FILL: u8 = 1;
    /// Random general registers and flags.
    pub const REGS: u8 = 2;
    /// Random DS/ES/FS/GS and SS:SP from the safe set.
    pub const SEGS: u8 = 4;
    /// Reprogram PIT channel 0 to a faster rate and enable interrupts.
    pub const TIMER: u8 = 8;
    /// Subroutines and handlers have random bodies (else just a return).
    pub const BODIES: u8 = 16;
    /// A random x87 control word (rounding and precision; masks stay set).
    pub const FPU: u8 = 32;
    pub const ALL: u8 = 63;
    pub const NAMES: [(u8, &str); 6] = [
        (FILL, "fill"),
        (REGS, "regs"),
        (SEGS, "segs"),
        (TIMER, "timer"),
        (BODIES, "bodies"),
        (FPU, "fpu"),
    ];
}

/// A program before assembly: one word of randomness for the prologue and
/// the bodies of subroutines and handlers, one per body item.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan16 {
    pub state: u64,
    pub features: u8,
    pub items: Vec<u64>,
}

impl Plan16 {
    /// A fresh random plan.
    pub fn random(r: &mut Rng) -> Plan16 {
        let n = r.range(MIN_ITEMS, MAX_ITEMS);
        Plan16 {
            state: r.next_u64(),
            features: feature::ALL,
            items: (0..n).map(|_| r.next_u64()).collect(),
        }
    }

    /// The .COM image.
    pub fn assemble(&self) -> Result<Vec<u8>, String> {
        assemble(|em| {
            prologue(em, self.state, self.features)?;
            for &w in &self.items {
                items::top(em, &mut Rng::new(w))?;
            }
            epilogue(em, self.state, self.features)
        })
    }
}

/// The random initial state alone, in front of random bytes (the `bytes`
/// shape with a prologue).
pub fn prologue_only(state: u64, features: u8) -> Result<Vec<u8>, String> {
    assemble(|em| {
        prologue(em, state, features)?;
        // The bytes follow; the handlers and subroutines are not reachable
        // from them except through the IVT, so they go first, jumped over.
        let mut over = em.a.create_label();
        em.a.jmp(over)?;
        bodies(em, state, features)?;
        em.a.set_label(&mut over)?;
        em.a.nop()?;
        Ok(())
    })
}

type R = Result<(), IcedError>;

/// Labels whose addresses code needs, created in the same order in both
/// passes, and the targets of self-modifying stores.
#[derive(Default, Clone, Debug)]
pub struct Layout {
    /// Address of every named label, by id.
    pub addrs: Vec<u16>,
    /// Label ids of patchable immediates (the byte after the label).
    pub imm_targets: Vec<usize>,
    /// Label ids of patchable one-byte opcodes.
    pub op_targets: Vec<usize>,
}

/// Fixed label ids (created first, in this order).
pub mod fixed {
    pub const NEAR_SUBS: usize = 0; // 2
    pub const FAR_SUBS: usize = 2; // 2
    pub const H_DIV: usize = 4;
    pub const H_TRAP: usize = 5;
    pub const H_BRK: usize = 6;
    pub const H_OVF: usize = 7;
    pub const H_USER: usize = 8; // 4
    pub const TRAP_COUNT: usize = 12;
    /// A data byte self-modifying stores hit when the program has no
    /// target of their kind.
    pub const SINK: usize = 13;
    pub const COUNT: usize = 14;
}

/// The emitter: an assembler plus what the items need to know about the
/// program being built.
pub struct Em<'k> {
    pub a: CodeAssembler,
    labels: Vec<CodeLabel>,
    /// Pass-1 layout (None during pass 1).
    known: Option<&'k Layout>,
    /// This pass's targets (label ids).
    imm_targets: Vec<usize>,
    op_targets: Vec<usize>,
    /// Inside an aliased-CS block, a subroutine or a handler: no item may
    /// use absolute CS addresses or nest calls.
    pub depth: u32,
    pub alias: bool,
    /// Inside a protected-mode round trip (`items::pm`): no segment
    /// register may be loaded.
    pub pm: bool,
    /// Stores aimed at targets so far (cycles through them).
    pub patches: usize,
}

impl Em<'_> {
    /// A new named label (its address becomes known after pass 1).
    pub fn label(&mut self) -> usize {
        self.labels.push(self.a.create_label());
        self.labels.len() - 1
    }

    /// Places label `id` at the next instruction.
    pub fn here(&mut self, id: usize) -> R {
        let mut l = self.labels[id];
        self.a.set_label(&mut l)?;
        self.labels[id] = l;
        Ok(())
    }

    pub fn lab(&self, id: usize) -> CodeLabel {
        self.labels[id]
    }

    /// The address of label `id` (pass 1: a placeholder that encodes with
    /// the same length: every address is >= 100h).
    pub fn addr(&self, id: usize) -> u16 {
        self.known
            .and_then(|k| k.addrs.get(id).copied())
            .unwrap_or(ORG)
    }

    /// Records label `id` as a patchable immediate / opcode.
    pub fn imm_target(&mut self, id: usize) {
        self.imm_targets.push(id);
    }
    pub fn op_target(&mut self, id: usize) {
        self.op_targets.push(id);
    }

    /// The address of the next self-modifying store's target: a patchable
    /// immediate byte (`op == false`) or opcode, cycling through those pass
    /// 1 found; the sink byte when there is none (pass 1: a placeholder).
    pub fn patch_target(&mut self, op: bool) -> u16 {
        self.patches += 1;
        let Some(k) = self.known else {
            return ORG;
        };
        let ids = if op { &k.op_targets } else { &k.imm_targets };
        if ids.is_empty() {
            return k.addrs[fixed::SINK];
        }
        let id = ids[self.patches % ids.len()];
        k.addrs[id] + u16::from(!op)
    }

    /// Raw bytes (exact encodings the items need to control).
    pub fn db(&mut self, b: &[u8]) -> R {
        self.a.db(b)
    }
}

/// Runs `body` twice: pass 1 learns every named label's address, pass 2
/// emits code that uses them. The two passes must lay out identically.
fn assemble(body: impl Fn(&mut Em) -> R) -> Result<Vec<u8>, String> {
    let run = |known: Option<&Layout>| -> Result<(Vec<u8>, Layout), IcedError> {
        let mut em = Em {
            a: CodeAssembler::new(16)?,
            labels: Vec::new(),
            known,
            imm_targets: Vec::new(),
            op_targets: Vec::new(),
            depth: 0,
            alias: false,
            pm: false,
            patches: 0,
        };
        for _ in 0..fixed::COUNT {
            em.label();
        }
        body(&mut em)?;
        let res = em.a.assemble_options(
            ORG as u64,
            BlockEncoderOptions::RETURN_NEW_INSTRUCTION_OFFSETS,
        )?;
        let mut addrs = Vec::with_capacity(em.labels.len());
        for l in &em.labels {
            // A label never placed (e.g. an unused fixed one) reads as ORG.
            addrs.push(res.label_ip(l).map(|a| a as u16).unwrap_or(ORG));
        }
        Ok((
            res.inner.code_buffer,
            Layout {
                addrs,
                imm_targets: em.imm_targets,
                op_targets: em.op_targets,
            },
        ))
    };
    let (first, layout) = run(None).map_err(|e| format!("assembling (pass 1): {e}"))?;
    let (second, again) = run(Some(&layout)).map_err(|e| format!("assembling (pass 2): {e}"))?;
    if second.len() != first.len() || again.addrs != layout.addrs {
        let at = layout
            .addrs
            .iter()
            .zip(&again.addrs)
            .position(|(a, b)| a != b);
        return Err(format!(
            "assembling: the layout moved between the two passes (a generator bug): \
             {} bytes then {}, first moved label {at:?} ({:?})",
            first.len(),
            second.len(),
            at.map(|i| (layout.addrs[i], again.addrs[i]))
        ));
    }
    if second.len() + ORG as usize >= DATA as usize {
        return Err(format!(
            "assembling: {} bytes of code reach the data area",
            second.len()
        ));
    }
    Ok(second)
}

/// `mov sreg, CS + k` through AX.
pub fn load_seg(em: &mut Em, s: AsmRegisterSegment, k: u16) -> R {
    em.a.mov(ax, cs)?;
    if k != 0 {
        em.a.add(ax, k as u32)?;
    }
    em.a.mov(s, ax)
}

/// The random initial state, the data area and the handlers' IVT entries.
fn prologue(em: &mut Em, state: u64, f: u8) -> R {
    let mut r = Rng::new(state ^ 0x05EE_D0F5_7A7E);
    em.a.cld()?;
    if f & feature::FILL != 0 {
        // An LCG over the data area: compact, and every seed fills it
        // differently.
        em.a.mov(di, DATA as u32)?;
        em.a.mov(cx, DATA_WORDS as u32)?;
        em.a.mov(ax, r.u16() as u32)?;
        em.a.mov(bx, (r.u16() | 1) as u32)?;
        let mut top = em.a.create_label();
        em.a.set_label(&mut top)?;
        em.a.imul_3(ax, ax, 25173)?;
        em.a.add(ax, bx)?;
        em.a.stosw()?;
        em.a.loop_(top)?;
    }
    // Handlers: half through the IVT directly, half through INT 21h AH=25h.
    let vectors: [(u8, usize); 8] = [
        (0x00, fixed::H_DIV),
        (0x01, fixed::H_TRAP),
        (0x03, fixed::H_BRK),
        (0x04, fixed::H_OVF),
        (USER_VECTORS[0], fixed::H_USER),
        (USER_VECTORS[1], fixed::H_USER + 1),
        (USER_VECTORS[2], fixed::H_USER + 2),
        (USER_VECTORS[3], fixed::H_USER + 3),
    ];
    if r.chance(1, 2) {
        em.a.xor(ax, ax)?;
        em.a.mov(es, ax)?;
        for (v, id) in vectors {
            let at = v as u32 * 4;
            let a = em.addr(id);
            // mov word [es:at], imm16 (fixed length in both passes)
            em.db(&[
                0x26,
                0xC7,
                0x06,
                at as u8,
                (at >> 8) as u8,
                a as u8,
                (a >> 8) as u8,
            ])?;
            em.a.mov(word_ptr(at + 2).es(), cs)?;
        }
        em.a.push(cs)?;
        em.a.pop(es)?;
    } else {
        for (v, id) in vectors {
            let a = em.addr(id);
            em.db(&[0xBA, a as u8, (a >> 8) as u8])?; // mov dx, imm16
            em.a.mov(ax, 0x2500 | v as u32)?;
            em.a.int(0x21)?;
        }
    }
    if f & feature::TIMER != 0 {
        // PIT channel 0, mode 2 or 3, a divisor of 200h..3FFFh: IRQ 0
        // every ~1.7K..55K dispatches instead of every ~220K.
        let d = r.range(0x200, 0x3FFF) as u32;
        em.a.mov(al, if r.chance(1, 2) { 0x34u32 } else { 0x36 })?;
        em.a.out(0x43u32, al)?;
        em.a.mov(al, d & 0xFF)?;
        em.a.out(0x40u32, al)?;
        em.a.mov(al, d >> 8)?;
        em.a.out(0x40u32, al)?;
        em.a.sti()?;
    }
    em.a.fninit()?;
    if f & feature::FPU != 0 {
        let cw = 0x037F | (r.below(4) as u32) << 10 | [0u32, 2, 3][r.below(3) as usize] << 8;
        em.a.mov(word_ptr(DATA as u32 + 0x7F0), cw)?;
        em.a.fldcw(word_ptr(DATA as u32 + 0x7F0))?;
    }
    if f & feature::SEGS != 0 {
        for s in [ds, es, fs, gs] {
            let k = r.pick(&SAFE_SEGS);
            load_seg(em, s, k)?;
        }
        // SS:SP: the program's stack, or one in the scratch segment (MOV SS
        // shadows interrupts for the next instruction, the MOV SP).
        let k = r.pick(&[0u16, 0x1000]);
        let sp_ = 0xE000 + (r.below(0x7FF) as u32) * 2;
        em.a.mov(ax, cs)?;
        if k != 0 {
            em.a.add(ax, k as u32)?;
        }
        em.a.mov(ss, ax)?;
        em.a.mov(sp, sp_)?;
    }
    if f & feature::REGS != 0 {
        for reg in [eax, ebx, ecx, edx, ebp] {
            em.a.mov(reg, r.u32())?;
        }
        // Flags: CF PF AF ZF SF DF OF, IOPL and NT at random; TF clear; IF
        // as the timer feature left it.
        let bits = (r.u32() & 0x7CD5) | 0x0002;
        em.a.pushf()?;
        em.a.pop(ax)?;
        em.a.and(ax, 0x0200u32)?;
        em.a.or(ax, bits)?;
        em.a.push(ax)?;
        em.a.popf()?;
        em.a.mov(ax, r.u16() as u32)?;
    }
    em.a.mov(esi, DATA as u32 + r.below(PTR_SPAN as u64) as u32)?;
    em.a.mov(edi, DATA as u32 + r.below(PTR_SPAN as u64) as u32)?;
    Ok(())
}

/// The exit, then subroutines, handlers and data words.
fn epilogue(em: &mut Em, state: u64, f: u8) -> R {
    let mut r = Rng::new(state ^ 0xE817);
    if r.chance(1, 4) {
        em.a.int(0x20)?;
    } else {
        // Exit with AL as the program left it: the exit code is a checksum.
        em.a.mov(ah, 0x4Cu32)?;
        em.a.int(0x21)?;
    }
    bodies(em, state, f)
}

/// Subroutine and handler bodies (each a few items that neither nest nor
/// use absolute CS addresses) and the data words they use.
fn bodies(em: &mut Em, state: u64, f: u8) -> R {
    let mut r = Rng::new(state ^ 0xB0D1E5);
    let body = |em: &mut Em, r: &mut Rng| -> R {
        if f & feature::BODIES == 0 {
            return Ok(());
        }
        em.depth += 1;
        for _ in 0..r.range(0, 4) {
            items::simple(em, &mut Rng::new(r.next_u64()))?;
        }
        em.depth -= 1;
        Ok(())
    };
    for k in 0..2 {
        em.here(fixed::NEAR_SUBS + k)?;
        em.a.nop()?;
        body(em, &mut r)?;
        em.a.ret()?;
    }
    for k in 0..2 {
        em.here(fixed::FAR_SUBS + k)?;
        em.a.nop()?;
        body(em, &mut r)?;
        em.a.retf()?;
    }
    // Divide error: the faulting instruction is always a 2-byte DIV/IDIV/
    // AAM; return past it (on a 286+ the saved IP is the faulting one).
    em.here(fixed::H_DIV)?;
    em.a.push(bp)?;
    em.a.mov(bp, sp)?;
    em.a.add(word_ptr(bp + 2), 2u32)?;
    em.a.pop(bp)?;
    em.a.iret()?;
    // Single step: count the traps.
    em.here(fixed::H_TRAP)?;
    let c = em.addr(fixed::TRAP_COUNT);
    em.db(&[0x2E, 0xFF, 0x06, c as u8, (c >> 8) as u8])?; // inc word [cs:count]
    em.a.iret()?;
    for id in [fixed::H_BRK, fixed::H_OVF] {
        em.here(id)?;
        em.a.nop()?;
        body(em, &mut r)?;
        em.a.iret()?;
    }
    for k in 0..4 {
        em.here(fixed::H_USER + k)?;
        em.a.nop()?;
        body(em, &mut r)?;
        if r.chance(1, 4) {
            // Return with the flags the handler left (as DOS services do).
            em.a.retf_1(2u32)?;
        } else {
            em.a.iret()?;
        }
    }
    em.here(fixed::TRAP_COUNT)?;
    em.db(&[0, 0])?;
    em.here(fixed::SINK)?;
    em.db(&[0x90])
}

#[cfg(test)]
mod tests {
    use super::*;
    use iced_x86::{Decoder, DecoderOptions};

    #[test]
    fn plans_assemble_and_lay_out_the_same_twice() {
        for s in 0..300u64 {
            let p = Plan16::random(&mut Rng::for_program(11, s));
            let a = p.assemble().unwrap_or_else(|e| panic!("plan {s}: {e}"));
            assert_eq!(a, p.assemble().unwrap());
            assert!(a.len() > 20);
            let mut d = Decoder::with_ip(16, &a, ORG as u64, DecoderOptions::NONE);
            let first = d.decode();
            assert!(!first.is_invalid());
        }
    }
}
