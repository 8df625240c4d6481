//! The naive lowering: x86 instructions (iced-x86's decoded `Instruction`) to
//! µop IR, one linear pass per instruction, parametrized by a machine model.
//!
//! Valid in any machine state: every guest register is its resident vreg,
//! every flag producer writes the lazy record through the same
//! [`crate::alu`] helpers toyvm's L0 uses, every memory access carries its
//! segment limit check and its exact site. A straight line of instructions
//! becomes one block billed once (`clock.check n`); an exit in the middle gives
//! back what was billed ahead (`unbill`). A control transfer ends the program
//! with links; a REP string instruction becomes a loop billed per element; an
//! STI that opens the interrupt shadow ends it with a shadow exit; an x87
//! escape is one machine op (when the driver allows it); an instruction the
//! op set cannot express (or that needs something this pass does not model:
//! MOV/POP SS shadows, faults by design) ends the program with a fallback
//! exit so a finer tier runs exactly that instruction. A line may also end,
//! with a link, where the driver says a program already starts
//! ([`lower_line_until`]).
//!
//! Fused forms from the start: ALU ops read and merge-write narrow lanes of
//! the guest registers directly and write the whole flag record in the same
//! µop; memory operands fold base + index + displacement into the access.
//!
//! It owns instruction → µop translation only; it must not run anything or
//! know any machine's devices.
//!
//! Layout: `builder` (the line's blocks and sites), `operands` (operand
//! access), `stack`, `data`, `alu`, `flags`, `strings`, `control` and `x87`
//! (the instruction families); this module holds the public entry points
//! and the per-mnemonic dispatch.

#![forbid(unsafe_code)]

mod alu;
mod builder;
mod control;
pub mod coverage;
mod data;
mod flags;
mod operands;
mod stack;
mod strings;
mod x87;

pub use builder::LineBuilder;

use crate::ir::*;
use crate::machine::MachineModel;
use builder::marker;
use iced_x86::{Code, Decoder, DecoderOptions, Instruction, Mnemonic, OpKind};
use x87::is_x87_escape;

/// Why an instruction was not lowered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported(pub &'static str);

type L<T> = Result<T, Unsupported>;

fn no<T>(why: &'static str) -> L<T> {
    Err(Unsupported(why))
}

/// What an instruction did to the line.
enum Flow {
    /// Straight on to the next instruction.
    Next,
    /// The program ends here (its blocks are already emitted).
    End,
}

/// Facts about the machine state a driver can guarantee for as long as a
/// program lives, which let more instructions lower. The default promises
/// nothing (every program is valid in any machine state).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LowerOpts {
    /// The interrupt table is at linear 0 with limit 3FFh (real mode's
    /// reset IDTR): INT n / INT3 read their vector there. The driver must
    /// drop the programs if IDTR changes (LIDT always falls back).
    pub ivt_at_zero: bool,
    /// FWAIT cannot fault (not CR0.MP and CR0.TS both set): it is a NOP. The
    /// driver must drop the programs if that changes (writes to CR0 always
    /// fall back).
    pub wait_is_nop: bool,
    /// The machine runs x87 instructions in the engine
    /// (`MachineRuntime::x87`) and the escape cannot raise #NM (CR0.EM and
    /// CR0.TS clear): D8-DF lower to [`Op::X87`]. The driver must drop the
    /// programs if that changes; the machine still refuses anything it
    /// cannot run exactly.
    pub x87: bool,
}

impl<M: MachineModel> LineBuilder<'_, M> {
    /// Lowers one instruction into the open block: the family modules
    /// lower the arms (the match order and its guards decide which).
    fn instruction(&mut self, ins: &Instruction) -> L<Flow> {
        use Mnemonic as X;
        if ins.has_lock_prefix() {
            return no("lock prefix");
        }
        let m = ins.mnemonic();
        if self.model.user_mode()
            && matches!(
                m,
                X::Cli | X::Sti | X::In | X::Out | X::Int | X::Int3 | X::Into | X::Iret | X::Iretd
            )
        {
            // CPL 3, IOPL 0: #GP or a trap the engine turns into an exception.
            return no("privileged in user mode");
        }
        match m {
            // Only 90h (and 66 90h): the 0F 1F multi-byte NOP is #UD on the
            // 486 toyvm models, so L1 must raise it.
            X::Nop if matches!(ins.code(), Code::Nopw | Code::Nopd) => {}
            X::Mov => self.mov(ins)?,
            X::Add | X::Or | X::Adc | X::Sbb | X::And | X::Sub | X::Xor => self.arith(ins)?,
            X::Cmp | X::Test => self.cmp_test(ins)?,
            X::Inc | X::Dec | X::Neg => self.inc_dec_neg(ins)?,
            X::Not => self.not(ins)?,
            X::Rol | X::Ror | X::Rcl | X::Rcr | X::Shl | X::Sal | X::Shr | X::Sar => self.shift(ins)?,
            X::Lea => self.lea(ins)?,
            X::Xchg => self.xchg(ins)?,
            X::Movzx | X::Movsx => self.movx(ins)?,
            X::Cbw | X::Cwde | X::Cwd | X::Cdq => self.widen_acc(m),
            X::Clc | X::Stc | X::Cld | X::Std | X::Cli => self.flag_op(ins)?,
            X::Sti => self.sti()?,
            X::Cmc => self.cmc()?,
            X::Push => self.push_insn(ins)?,
            X::Pop => self.pop_insn(ins)?,
            X::Pushf | X::Pushfd => self.pushf(ins)?,
            X::Lahf => self.lahf(),
            X::Xlatb => self.xlat(ins)?,
            X::Sahf => self.sahf(),
            X::Leave => self.leave(ins)?,
            X::Seto
            | X::Setno
            | X::Setb
            | X::Setae
            | X::Sete
            | X::Setne
            | X::Setbe
            | X::Seta
            | X::Sets
            | X::Setns
            | X::Setp
            | X::Setnp
            | X::Setl
            | X::Setge
            | X::Setle
            | X::Setg => self.setcc(ins)?,
            X::Imul if ins.op_count() >= 2 => self.imul_trunc(ins)?,
            X::Mul | X::Imul | X::Div | X::Idiv => self.mul_div(ins)?,
            X::In | X::Out => self.in_out(ins)?,
            X::Stosb
            | X::Stosw
            | X::Stosd
            | X::Lodsb
            | X::Lodsw
            | X::Lodsd
            | X::Movsb
            | X::Movsw
            | X::Movsd
            | X::Scasb
            | X::Scasw
            | X::Scasd
            | X::Cmpsb
            | X::Cmpsw
            | X::Cmpsd
                // MOVSD/CMPSD also name SSE ops (register operands).
                if !(matches!(m, X::Movsd | X::Cmpsd) && ins.op_kind(0) == OpKind::Register) =>
            {
                return self.string(ins);
            }
            X::Jmp
            | X::Call
            | X::Ret
            | X::Retf
            | X::Jo
            | X::Jno
            | X::Jb
            | X::Jae
            | X::Je
            | X::Jne
            | X::Jbe
            | X::Ja
            | X::Js
            | X::Jns
            | X::Jp
            | X::Jnp
            | X::Jl
            | X::Jge
            | X::Jle
            | X::Jg
            | X::Loop
            | X::Loope
            | X::Loopne
            | X::Jcxz
            | X::Jecxz => return self.branch(ins),

            X::Shld | X::Shrd => self.shld_shrd(ins)?,
            X::Bt | X::Bts | X::Btr | X::Btc => self.bt(ins)?,
            X::Pusha | X::Pushad => self.pusha(ins)?,
            X::Popa | X::Popad => self.popa(ins)?,
            X::Les | X::Lds | X::Lss | X::Lfs | X::Lgs => self.lxs(ins)?,
            X::Enter => self.enter(ins)?,
            X::Daa | X::Das | X::Aaa | X::Aas | X::Aam | X::Aad => self.bcd(ins),
            X::Wait if self.opts.wait_is_nop => {}
            _ if self.opts.x87 && is_x87_escape(self.insn) => self.x87(ins)?,
            X::Popf | X::Popfd => self.popf(ins)?,
            X::Int | X::Int3 if self.opts.ivt_at_zero => return self.int(ins),
            X::Iret => return self.iret(ins),
            _ => return no("not in the naive op set"),
        }
        Ok(Flow::Next)
    }
}

/// A program lowered from the bytes at `ip`, and what stopped it.
pub struct LoweredLine {
    /// `None` when the very first instruction is not expressible.
    pub program: Option<Program>,
    /// Instructions lowered.
    pub instructions: usize,
    /// Why the line ended where it did (an unsupported form or a control
    /// transfer), for the coverage report.
    pub stop: Option<&'static str>,
    /// The line ended with a direct CALL (its link goes to the callee).
    pub ends_in_call: bool,
    /// IP of the first instruction not in the line.
    pub end_ip: u32,
}

/// Lowers a straight line of at most `max` instructions from `code`, the
/// bytes at `cs_base + ip` (16-bit code), into one program keyed
/// `model.key(cs_base, ip)`. `code` may hold more bytes than needed.
pub fn lower_line<M: MachineModel>(
    model: &M,
    cs_base: u32,
    ip: u32,
    code: &[u8],
    max: usize,
) -> LoweredLine {
    lower_line_opts(model, LowerOpts::default(), cs_base, ip, code, max)
}

/// [`lower_line`] with facts the driver guarantees ([`LowerOpts`]).
pub fn lower_line_opts<M: MachineModel>(
    model: &M,
    opts: LowerOpts,
    cs_base: u32,
    ip: u32,
    code: &[u8],
    max: usize,
) -> LoweredLine {
    lower_line_until(model, opts, cs_base, ip, code, max, &[])
}

/// [`lower_line_opts`] that also ends the line (with a link) before any
/// instruction after the first whose IP is in `stops` (sorted ascending):
/// a driver passes the IPs where programs already start, so a line entered
/// in the middle of code that has programs joins them instead of lowering
/// the same instructions again.
pub fn lower_line_until<M: MachineModel>(
    model: &M,
    opts: LowerOpts,
    cs_base: u32,
    ip: u32,
    code: &[u8],
    max: usize,
    stops: &[u32],
) -> LoweredLine {
    let bitness = if model.default_asize() == AddrSize::A16 {
        16
    } else {
        32
    };
    let mut dec = Decoder::with_ip(bitness, code, ip as u64, DecoderOptions::NONE);
    let mut b = LineBuilder::new(model, cs_base, ip);
    b.opts = opts;
    let mut ended = false;
    let mut ins = Instruction::default();
    while b.lowered < max && dec.can_decode() {
        dec.decode_out(&mut ins);
        if b.lowered > 0 && stops.binary_search(&(ins.ip() as u32)).is_ok() {
            // A program starts here: link to it.
            break;
        }
        b.ip = ins.ip() as u32;
        // Real-mode IP wraps at 64 KiB: an instruction ending at FFFFh
        // continues at 0 (L0's next_ip).
        b.next_ip = if bitness == 16 {
            ins.next_ip() as u32 & 0xFFFF
        } else {
            ins.next_ip() as u32
        };
        if ins.is_invalid() {
            b.stop = Some("invalid encoding");
            break;
        }
        // 16-bit IP wraps: a line never runs past offset 0xFFFF.
        if bitness == 16 && ins.ip() as u32 + ins.len() as u32 > 0x1_0000 {
            b.stop = Some("line crosses the 64 KiB end of CS");
            break;
        }
        // The end of the line's bytes is the instruction's unmasked end: an
        // instruction ending exactly at FFFFh has next_ip 0, and a range
        // ending at `cs_base + next_ip` would cover one byte only, so stores
        // to the rest of the line would not retire the program (fuzz: only-
        // naive ran stale self-modified code; tests/lower_code_range.rs).
        let code_end = cs_base.wrapping_add(ins.ip() as u32 + ins.len() as u32);
        let at = (ins.ip() as u32).wrapping_sub(ip) as usize;
        b.insn = code.get(at..at + ins.len()).unwrap_or(&[]);
        let saved_ops = b.ops.len();
        let saved_temp = b.next_temp;
        let saved_blocks = b.blocks.len();
        match b.instruction(&ins) {
            Ok(Flow::Next) => {
                b.count += 1;
                b.lowered += 1;
                b.code_hi = code_end;
            }
            Ok(Flow::End) => {
                b.lowered += 1;
                b.code_hi = code_end;
                b.stop = Some("control transfer");
                ended = true;
                break;
            }
            Err(Unsupported(why)) => {
                b.ops.truncate(saved_ops);
                b.next_temp = saved_temp;
                b.blocks.truncate(saved_blocks);
                b.stop = Some(why);
                break;
            }
        }
    }
    if b.lowered == 0 {
        return LoweredLine {
            program: None,
            instructions: 0,
            stop: b.stop,
            ends_in_call: false,
            end_ip: ip,
        };
    }
    if !ended {
        // Fall back at (or continue to) the next instruction.
        let site = marker(b.next_ip_after_line(), b.count);
        if b.stop.is_some() {
            b.close(Term::Exit {
                kind: ExitKind::Fallback,
                site,
            });
        } else {
            let l = b.link_block(site.ip);
            b.close(Term::Jmp(l));
        }
    }
    let _ = b.first_ip;
    let end_ip = if ended {
        b.next_ip
    } else {
        b.next_ip_after_line()
    };
    LoweredLine {
        program: Some(Program {
            model: model.name().to_string(),
            key: model.key(cs_base, ip),
            guest: model.guest_vregs(),
            code: vec![(b.code_lo, b.code_hi.max(b.code_lo + 1))],
            blocks: b.blocks,
        }),
        instructions: b.lowered,
        stop: b.stop,
        ends_in_call: b.ended_by_call,
        end_ip,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::RealMode16;

    fn lower(bytes: &[u8]) -> Program {
        let p = lower_line(&RealMode16, 0x1000, 0x100, bytes, 16)
            .program
            .expect("lowers");
        crate::ir::verify::verify(&p).unwrap_or_else(|e| panic!("{e}\n{p}"));
        p
    }

    #[test]
    fn a_straight_line_is_one_block_billed_once_with_fused_alu_ops() {
        // add ax,bx; adc dx,cx; mov [di],ax; hlt
        let p = lower(&[0x01, 0xD8, 0x11, 0xCA, 0x89, 0x05, 0xF4]);
        let text = p.to_string();
        assert!(text.contains("clock.check 3 @0x100/0"), "{text}");
        assert!(text.contains("add.16.f eax.w, eax.w, ebx.w"), "{text}");
        assert!(text.contains("adc.16.f edx.w, edx.w, ecx.w"), "{text}");
        assert!(
            text.contains(
                "st.16 [ds_base: edi] a16 lim=0xffff fast, eax.w @0x104/1 after @0x106/0"
            ),
            "{text}"
        );
        assert!(
            text.contains("exit fallback @0x106/0"),
            "HLT falls back: {text}"
        );
        // 3 instructions: clock.check + count + 3 + exit = 6 µops.
        assert_eq!(p.uop_count(), 6, "{text}");
    }

    #[test]
    fn a_conditional_branch_ends_the_program_with_two_links() {
        let p = lower(&[0x48, 0x75, 0xFD]); // dec ax; jnz -3
        let text = p.to_string();
        assert!(text.contains("brcc.ne b1, b2"), "{text}");
        assert!(text.contains("link 0x100000000100 @0x100/0"), "{text}");
        assert!(text.contains("link 0x100000000103 @0x103/0"), "{text}");
    }

    #[test]
    fn an_unsupported_first_instruction_gives_no_program() {
        let l = lower_line(&RealMode16, 0x1000, 0x100, &[0xCD, 0x21], 16);
        assert!(l.program.is_none());
        assert_eq!(l.stop, Some("not in the naive op set"));
    }
}
