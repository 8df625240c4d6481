//! Proof of the naive lowering under `Flat32` (mainemu's machine model):
//! each form of a case table is assembled with iced-x86 and run from several
//! machine states twice — through the shared lowering (optionally a pass
//! set) on the reference interpreter and on E1, with x86-cpu's user-mode
//! step running exactly the instructions the programs hand back, and through
//! x86-cpu's interpreter alone — and the two end states must be equal:
//! registers, EIP, EFLAGS, the clock, every byte of memory and the event
//! that ended the run. A proptest does the same over random states, and the
//! forms that decline are asserted by name.
//!
//! It owns this proof only; the lowering is shared-ir's, the semantics
//! x86-cpu's.

mod common;

use common::flatram::{FlatRam, Prot, PAGE};
use iced_x86::code_asm::*;
use proptest::prelude::*;
use shared_ir::e1::{self, E1Arena, E1State};
use shared_ir::exit::ExitReason;
use shared_ir::flags::Width as W;
use shared_ir::ir::Program;
use shared_ir::lower::lower_line;
use shared_ir::machine::{
    FastMem, Flat32, MachineRuntime, Refused, StoreOutcome, PAGE_READ, PAGE_WRITE,
};
use shared_ir::opt::{optimize_checked, PassSet};
use shared_ir::refinterp::{run_program, RefState};
use x86_cpu::user::{self, FlatSetup, UserOutcome};
use x86_cpu::{seg, Cpu, Event};

const MEM: u32 = 0x20_0000;
const CODE: u32 = 0x1000;
const DATA: u32 = 0x10_0000;
const STACK_TOP: u32 = 0x18_0000;
const TEB: u32 = 0x1F_0000;
/// A read-only page and a page with no access, inside the data area.
const RO_PAGE: u32 = DATA + 0x8000;
const NA_PAGE: u32 = DATA + 0x9000;

/// The test machine as the µop engines see it: the same RAM, the page view
/// with the code page read-only (a store there takes the checked path and
/// reports `HitCode`), checked accesses refused where the protections
/// refuse them, no ports and no services (user mode has none).
struct Rt<'a> {
    ram: &'a mut FlatRam,
    pages: Vec<u32>,
}

fn readable(p: Prot) -> bool {
    p != Prot::None
}

impl<'a> Rt<'a> {
    fn new(ram: &'a mut FlatRam) -> Rt<'a> {
        let pages = (0..MEM / PAGE)
            .map(|i| {
                let a = i * PAGE;
                let p = ram.page(a);
                let mut e = a;
                if readable(p) {
                    e |= PAGE_READ;
                }
                if p == Prot::ReadWrite && a != CODE {
                    e |= PAGE_WRITE;
                }
                e
            })
            .collect();
        Rt { ram, pages }
    }
    fn all(&self, lin: u32, n: u32, ok: fn(Prot) -> bool) -> bool {
        (0..n).all(|i| {
            let a = lin.wrapping_add(i);
            a < MEM && ok(self.ram.page(a))
        })
    }
}

impl MachineRuntime for Rt<'_> {
    const PAGE_SHIFT: u32 = 12;
    fn fast_mem(&mut self) -> FastMem<'_> {
        FastMem {
            ram: &mut self.ram.mem,
            pages: &self.pages,
        }
    }
    fn read(&mut self, lin: u32, w: W, _now: u64) -> Result<u32, Refused> {
        if !self.all(lin, w.bytes(), readable) {
            return Err(Refused);
        }
        Ok((0..w.bytes()).fold(0, |v, i| {
            v | (self.ram.mem[lin.wrapping_add(i) as usize] as u32) << (8 * i)
        }))
    }
    fn write(&mut self, lin: u32, w: W, v: u32, _now: u64) -> StoreOutcome {
        if !self.all(lin, w.bytes(), |p| p == Prot::ReadWrite) {
            return StoreOutcome::Refused;
        }
        let mut code = false;
        for i in 0..w.bytes() {
            let a = lin.wrapping_add(i);
            self.ram.mem[a as usize] = (v >> (8 * i)) as u8;
            code |= a / PAGE == CODE / PAGE;
        }
        if code {
            StoreOutcome::HitCode
        } else {
            StoreOutcome::Done
        }
    }
}

/// How the end of a run looks.
#[derive(Clone, Debug, PartialEq, Eq)]
enum End {
    /// EIP reached the end of the code.
    Done,
    /// The clock reached the limit.
    Limit,
    Event(Event),
    Stop(String),
}

/// Which µop engine runs the programs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Engine {
    Ref,
    E1,
}

fn machine(state: &State) -> (Cpu, FlatRam) {
    let mut cpu = Cpu::new_flat32(&FlatSetup {
        eip: CODE,
        esp: state.regs[4],
        fs_base: TEB,
        fs_limit: 0xFFF,
    });
    cpu.regs = state.regs;
    cpu.set_eflags(0x202 | (state.flags & 0xCD5));
    let mut ram = FlatRam::new(MEM);
    ram.prot[(RO_PAGE / PAGE) as usize] = Prot::Read;
    ram.prot[(NA_PAGE / PAGE) as usize] = Prot::None;
    for (i, b) in ram.mem[DATA as usize..DATA as usize + 0x8000]
        .iter_mut()
        .enumerate()
    {
        *b = (i as u32).wrapping_mul(0x9E37_79B1).rotate_right(13) as u8 ^ state.seed;
    }
    for i in 0..0x1000u32 {
        ram.mem[(TEB + i) as usize] = (i * 7) as u8;
    }
    (cpu, ram)
}

/// x86-cpu alone: user-mode steps until the end of the code, an event, or
/// the clock limit.
fn run_cpu(cpu: &mut Cpu, ram: &mut FlatRam, end: u32, limit: u64) -> End {
    loop {
        if cpu.eip == end {
            return End::Done;
        }
        if cpu.clock >= limit {
            return End::Limit;
        }
        match user::step(cpu, ram) {
            UserOutcome::Ok => {}
            UserOutcome::Exception(e) => return End::Event(e),
            UserOutcome::Stop(r) => return End::Stop(r.to_string()),
        }
    }
}

/// What the µop side did, for the density and decline figures.
#[derive(Default, Debug)]
struct Tally {
    in_programs: u64,
    stepped: u64,
    declined: Vec<&'static str>,
}

/// The µop side: lower the line at EIP (fresh each time, so a store into
/// code needs no invalidation), run it, let x86-cpu step what it hands back.
fn run_uops(
    cpu: &mut Cpu,
    ram: &mut FlatRam,
    end: u32,
    limit: u64,
    engine: Engine,
    passes: PassSet,
    tally: &mut Tally,
) -> End {
    let model = Flat32::default();
    loop {
        if cpu.eip == end {
            return End::Done;
        }
        if cpu.clock >= limit {
            return End::Limit;
        }
        // Only the code's own bytes: a line must not run past its end.
        let bytes = ram.mem[cpu.eip as usize..end.max(cpu.eip) as usize].to_vec();
        let line = lower_line(&model, 0, cpu.eip, &bytes, 16);
        let step = |cpu: &mut Cpu, ram: &mut FlatRam, tally: &mut Tally| {
            tally.stepped += 1;
            match user::step(cpu, ram) {
                UserOutcome::Ok => None,
                UserOutcome::Exception(e) => Some(End::Event(e)),
                UserOutcome::Stop(r) => Some(End::Stop(r.to_string())),
            }
        };
        let Some(mut p) = line.program else {
            tally.declined.push(line.stop.unwrap_or("?"));
            if let Some(e) = step(cpu, ram, tally) {
                return e;
            }
            continue;
        };
        optimize_checked(&mut p, passes, true).unwrap_or_else(|e| panic!("{e}\n{p}"));
        let before = cpu.clock;
        let exit = run_one(&p, cpu, ram, limit, engine);
        tally.in_programs += cpu.clock - before;
        cpu.eip = exit.ip;
        match exit.reason {
            ExitReason::Fallback | ExitReason::Budget if cpu.clock < limit && cpu.eip != end => {
                if let Some(e) = step(cpu, ram, tally) {
                    return e;
                }
            }
            ExitReason::Invalid | ExitReason::Divert => panic!("E1 met an invalid word\n{p}"),
            _ => {}
        }
    }
}

/// One program on one engine, the CPU copied into the guest vregs
/// (EAX..EDI, FS base, GS base) and back.
fn run_one(
    p: &Program,
    cpu: &mut Cpu,
    ram: &mut FlatRam,
    limit: u64,
    engine: Engine,
) -> shared_ir::exit::Exit {
    let mut v = [0u32; 10];
    v[..8].copy_from_slice(&cpu.regs);
    v[8] = cpu.sbase[seg::FS];
    v[9] = cpu.sbase[seg::GS];
    let mut rt = Rt::new(ram);
    let exit = match engine {
        Engine::Ref => {
            let mut rs = RefState::default();
            rs.vregs[..10].copy_from_slice(&v);
            rs.flags = cpu.flags;
            rs.clock = cpu.clock;
            let e = run_program(p, &mut rs, &mut rt, limit);
            v.copy_from_slice(&rs.vregs[..10]);
            cpu.flags = rs.flags;
            cpu.clock = rs.clock;
            e
        }
        Engine::E1 => {
            let mut arena = E1Arena::new(1 << 14);
            let id = arena.install(p).unwrap_or_else(|e| panic!("{e}\n{p}"));
            arena.set_head(id);
            arena.vregs_mut()[..10].copy_from_slice(&v);
            let mut st = E1State {
                flags: cpu.flags,
                clock: cpu.clock,
            };
            let ex = e1::run(&mut arena, &mut rt, &mut st, id, limit).expect("resident");
            v.copy_from_slice(&arena.vregs()[..10]);
            cpu.flags = st.flags;
            cpu.clock = st.clock;
            ex.exit
        }
    };
    cpu.regs.copy_from_slice(&v[..8]);
    assert_eq!(v[8], cpu.sbase[seg::FS], "FS base is never written");
    exit
}

/// A machine state: registers (ESP is the stack pointer), EFLAGS' status
/// and direction bits, a seed for the data bytes.
#[derive(Clone, Debug)]
struct State {
    regs: [u32; 8],
    flags: u32,
    seed: u8,
}

/// Fixed states: pointers into the data area, zeros, all ones (pointers
/// that fault), a read-only target, DF set.
fn states() -> Vec<State> {
    let s = STACK_TOP;
    vec![
        State {
            regs: [
                0x1234_5678,
                3,
                0x8765_4321,
                DATA,
                s,
                DATA + 0x100,
                DATA + 0x10,
                DATA + 0x20,
            ],
            flags: 0,
            seed: 0,
        },
        State {
            regs: [
                0,
                0,
                0,
                DATA + 0x7F0,
                s,
                s - 0x40,
                DATA + 0x7FFE,
                DATA + 0x7FFC,
            ],
            flags: 0x8D5,
            seed: 0x5A,
        },
        State {
            regs: [
                0xFFFF_FFFF,
                0x1F,
                0x8000_0000,
                DATA + 4,
                s - 4,
                DATA,
                DATA + 1,
                DATA + 3,
            ],
            flags: 0x400 | 0x01,
            seed: 0xA5,
        },
        State {
            regs: [
                0x7FFF_FFFF,
                0x21,
                1,
                RO_PAGE,
                s,
                RO_PAGE + 8,
                RO_PAGE,
                RO_PAGE + 0x10,
            ],
            flags: 0x40,
            seed: 1,
        },
        State {
            regs: [
                0x80,
                0xFFFF_FFFF,
                0xFFFF_FFFF,
                NA_PAGE - 2,
                s,
                NA_PAGE,
                NA_PAGE - 1,
                NA_PAGE,
            ],
            flags: 0x801,
            seed: 2,
        },
    ]
}

type Asm = fn(&mut CodeAssembler) -> Result<(), IcedError>;

fn assemble(f: Asm) -> Vec<u8> {
    let mut a = CodeAssembler::new(32).unwrap();
    f(&mut a).unwrap();
    a.assemble(CODE as u64).unwrap()
}

/// Runs `code` from `state` both ways and compares; returns the µop side's
/// tally. `limit`: a clock at which both stop (budget stops inside lines).
fn check(
    name: &str,
    code: &[u8],
    state: &State,
    limit: u64,
    engine: Engine,
    passes: PassSet,
) -> Tally {
    let end = CODE + code.len() as u32;
    let (mut c1, mut m1) = machine(state);
    m1.load(CODE, code);
    let (mut c2, mut m2) = (
        c1.clone(),
        FlatRam {
            mem: m1.mem.clone(),
            prot: m1.prot.clone(),
            fault: None,
        },
    );
    let e1 = run_cpu(&mut c1, &mut m1, end, limit);
    let mut tally = Tally::default();
    let e2 = run_uops(&mut c2, &mut m2, end, limit, engine, passes, &mut tally);
    let ctx = || format!("{name} from {state:x?} at limit {limit} on {engine:?} ({passes:?})");
    assert_eq!(e2, e1, "end: {}", ctx());
    assert_eq!(c2.regs, c1.regs, "registers: {}", ctx());
    assert_eq!(c2.eip, c1.eip, "EIP: {}", ctx());
    assert_eq!(c2.eflags(), c1.eflags(), "EFLAGS: {}", ctx());
    assert_eq!(c2.clock, c1.clock, "clock: {}", ctx());
    if m2.mem != m1.mem {
        let at = (0..MEM as usize).find(|&i| m1.mem[i] != m2.mem[i]).unwrap();
        panic!(
            "memory differs first at {at:#x} (x86-cpu {:#x}, µops {:#x}): {}",
            m1.mem[at],
            m2.mem[at],
            ctx()
        );
    }
    tally
}

/// One form of the table: its name, its code, and whether its first
/// instruction lowers (`Ok`) or declines with this reason (`Err`).
struct Form {
    name: &'static str,
    code: Asm,
    first: Result<(), &'static str>,
}

const PRIV: &str = "privileged in user mode";
const NOT: &str = "not in the naive op set";

fn forms() -> Vec<Form> {
    let ok = |name, code: Asm| Form {
        name,
        code,
        first: Ok(()),
    };
    let no = |name, code: Asm, why| Form {
        name,
        code,
        first: Err(why),
    };
    vec![
        // ALU, registers and memory at A32.
        ok("add eax,ebx", |a| a.add(eax, ebx)),
        ok("add al,ah", |a| a.add(al, ah)),
        ok("add eax,[ebx+4]", |a| a.add(eax, dword_ptr(ebx + 4))),
        ok("add [ebx+ecx*4+8],eax", |a| {
            a.add(dword_ptr(ebx + ecx * 4 + 8), eax)
        }),
        ok("add eax,imm32", |a| a.add(eax, 0x1234_5678)),
        ok("add word [esi],ax", |a| a.add(word_ptr(esi), ax)),
        ok("adc edx,ecx", |a| a.adc(edx, ecx)),
        ok("sbb byte [edi],7", |a| a.sbb(byte_ptr(edi), 7)),
        ok("and/or/xor", |a| {
            a.and(eax, ecx)?;
            a.or(edx, dword_ptr(esi))?;
            a.xor(dword_ptr(edi), ebx)
        }),
        ok("sub/cmp/test", |a| {
            a.sub(eax, 5)?;
            a.cmp(dword_ptr(ebx), eax)?;
            a.test(cl, 1)
        }),
        ok("inc/dec/neg/not", |a| {
            a.inc(eax)?;
            a.dec(dword_ptr(ebx))?;
            a.neg(ecx)?;
            a.not(word_ptr(edi))
        }),
        ok("shifts", |a| {
            a.shl(eax, 1)?;
            a.shr(edx, 4)?;
            a.sar(ebx, cl)?;
            a.rol(byte_ptr(esi), cl)?;
            a.rcr(eax, 3)
        }),
        ok("mul/imul", |a| {
            a.mul(ecx)?;
            a.imul_3(ebx, dword_ptr(esi), 100)?;
            a.imul_2(eax, edx)
        }),
        ok("div ecx", |a| a.div(ecx)),
        ok("idiv byte [esi]", |a| a.idiv(byte_ptr(esi))),
        ok("shld/shrd", |a| {
            a.shld(eax, edx, 5)?;
            a.shrd(dword_ptr(edi), ecx, cl)
        }),
        ok("bt/bts", |a| {
            a.bt(eax, ecx)?;
            a.bts(dword_ptr(edi), 3)?;
            a.btr(dword_ptr(ebx), ecx)
        }),
        ok("setcc/movzx/movsx", |a| {
            a.setne(al)?;
            a.setl(byte_ptr(edi))?;
            a.movzx(ecx, byte_ptr(esi))?;
            a.movsx(edx, ax)
        }),
        ok("cbw/cwde/cwd/cdq", |a| {
            a.cbw()?;
            a.cwde()?;
            a.cwd()?;
            a.cdq()
        }),
        ok("lea", |a| {
            a.lea(eax, dword_ptr(ebx + ecx * 8 + 0x1234))?;
            a.lea(dx, dword_ptr(esi + edi))
        }),
        ok("67h: lea and mov at A16", |a| {
            a.db(&[0x67, 0x8D, 0x00])?; // lea eax,[bx+si]
            a.db(&[0x67, 0x8B, 0x4F, 0x02]) // mov ecx,[bx+2]
        }),
        ok("xchg", |a| {
            a.xchg(eax, ebx)?;
            a.xchg(dword_ptr(esi), ecx)
        }),
        ok("mov forms", |a| {
            a.mov(eax, dword_ptr(DATA + 0x40))?; // moffs32
            a.mov(dword_ptr(edi + 4), 0x55AA_1234u32)?;
            a.mov(byte_ptr(esi), ah)?;
            a.mov(cx, word_ptr(ebx + 2))
        }),
        ok("fs:[0x18] (TEB self)", |a| a.mov(eax, dword_ptr(0x18).fs())),
        ok("fs:[0xffe] crosses the TEB limit", |a| {
            a.mov(eax, dword_ptr(0xFFE).fs())
        }),
        no(
            "gs:[0] (null selector)",
            |a| a.mov(eax, dword_ptr(0).gs()),
            "memory through an unusable segment",
        ),
        no(
            "cs:[ebx] (read-only segment)",
            |a| a.mov(dword_ptr(ebx).cs(), eax),
            "memory through a read-only segment",
        ),
        ok("lahf/sahf/clc/stc/cmc/cld/std", |a| {
            a.lahf()?;
            a.stc()?;
            a.cmc()?;
            a.sahf()?;
            a.std()?;
            a.cld()?;
            a.clc()
        }),
        ok("xlat", |a| a.xlatb()),
        ok("bcd", |a| {
            a.daa()?;
            a.aam(10)
        }),
        ok("nop", |a| a.nop()),
        // Stack at ESP.
        ok("push/pop", |a| {
            a.push(eax)?;
            a.push(0x1234_5678)?;
            a.push(dword_ptr(esi))?;
            a.pop(ecx)?;
            a.pop(edx)?;
            a.pop(dword_ptr(edi))
        }),
        no("pop [edi]", |a| a.pop(dword_ptr(edi)), "pop to memory"),
        ok("push/pop esp", |a| {
            a.push(esp)?;
            a.pop(esp)
        }),
        ok("66h push/pop word", |a| {
            a.push(ax)?;
            a.pop(bx)
        }),
        ok("pushad/popad", |a| {
            a.pushad()?;
            a.popad()
        }),
        ok("pushfd", |a| a.pushfd()),
        no("popfd", |a| a.popfd(), "popf in this model"),
        ok("enter/leave", |a| {
            a.enter(16u32, 0u32)?;
            a.mov(dword_ptr(ebp - 4), eax)?;
            a.leave()
        }),
        ok("enter 8,1", |a| {
            a.enter(8u32, 1u32)?;
            a.leave()
        }),
        // Control at 32-bit EIP.
        ok("call/ret", |a| {
            let mut f = a.create_label();
            let mut end = a.create_label();
            a.call(f)?;
            a.jmp(end)?;
            a.set_label(&mut f)?;
            a.mov(edx, dword_ptr(esp))?;
            a.ret()?;
            a.set_label(&mut end)?;
            a.nop()
        }),
        ok("call/ret 8", |a| {
            let mut f = a.create_label();
            let mut end = a.create_label();
            a.push(eax)?;
            a.push(ebx)?;
            a.call(f)?;
            a.jmp(end)?;
            a.set_label(&mut f)?;
            a.ret_1(8)?;
            a.set_label(&mut end)?;
            a.nop()
        }),
        ok("jcc loop", |a| {
            let mut top = a.create_label();
            a.mov(ecx, 5u32)?;
            a.set_label(&mut top)?;
            a.add(eax, ecx)?;
            a.dec(ecx)?;
            a.jne(top)
        }),
        ok("loop/jecxz", |a| {
            let mut top = a.create_label();
            let mut out = a.create_label();
            a.and(ecx, 7)?;
            a.jecxz(out)?;
            a.set_label(&mut top)?;
            a.inc(edx)?;
            a.loop_(top)?;
            a.set_label(&mut out)?;
            a.nop()
        }),
        // Offsets fixed by the encodings: the RET at +16, the MOV at +17.
        ok("jmp/call reg and mem", |a| {
            a.mov(eax, CODE + 16)?; // 5 bytes
            a.call(eax)?; // 2
            a.mov(edx, CODE + 17)?; // 5
            a.mov(dword_ptr(edi), edx)?; // 2
            a.jmp(dword_ptr(edi))?; // 2
            a.ret()?; // +16
            a.mov(dword_ptr(edi + 4), eax)?; // +17, 3 bytes
            a.call(dword_ptr(edi + 4))?; // 3
            a.nop()
        }),
        // Strings at A32: single elements inline, REP forms as one
        // `Term::Rep` block (ECX count), bounded here by the clock limits.
        ok("stosd/lodsb/movsd/scasb/cmpsw", |a| {
            a.stosd()?;
            a.lodsb()?;
            a.movsd()?;
            a.scasb()?;
            a.cmpsw()
        }),
        ok("and ecx,15; rep movsd", |a| {
            a.and(ecx, 15)?;
            a.rep().movsd()
        }),
        ok("rep stosb", |a| a.rep().stosb()),
        ok("repe cmpsb", |a| a.repe().cmpsb()),
        // Self-modifying code: the store hits the code page and the next
        // instruction is the new one.
        ok("smc: patch the next instruction", |a| {
            a.mov(byte_ptr(CODE as u64 + 7), 0x41u32)?; // 7 bytes: C6 05 disp32 imm8
            a.inc(eax)?; // 40 -> 41 = inc ecx
            a.inc(eax)
        }),
        // Privileged in user mode, and other declines.
        no("cli", |a| a.cli(), PRIV),
        no("sti", |a| a.sti(), PRIV),
        no("in al,dx", |a| a.in_(al, dx), PRIV),
        no("out dx,al", |a| a.out(dx, al), PRIV),
        no("int3", |a| a.int3(), PRIV),
        no("int 2eh", |a| a.int(0x2E), PRIV),
        no("hlt", |a| a.hlt(), NOT),
        no("mov ax,ds", |a| a.mov(ax, ds), "selector"),
        no("mov ds,ax", |a| a.mov(ds, ax), "segment load in this model"),
        no("push fs", |a| a.push(fs), "selector"),
        no(
            "lock add",
            |a| a.lock().add(dword_ptr(edi), eax),
            "lock prefix",
        ),
        no("cmovne", |a| a.cmovne(eax, ebx), NOT),
        no("bswap", |a| a.bswap(eax), NOT),
        no("xadd", |a| a.xadd(dword_ptr(edi), eax), NOT),
        no("cmpxchg", |a| a.cmpxchg(dword_ptr(edi), ecx), NOT),
        no("cpuid", |a| a.cpuid(), NOT),
        no("rdtsc", |a| a.rdtsc(), NOT),
        no("jmp far", |a| a.jmp(fword_ptr(edi)), "operand size"),
        no(
            "66h jmp rel16",
            |a| a.db(&[0x66, 0xE9, 0x00, 0x00]),
            "16-bit branch in 32-bit code",
        ),
    ]
}

/// Every form from every fixed state, at three clock limits (the end, and
/// stops inside the line), on both engines, naive and with the `all` set:
/// the end states are x86-cpu's exactly.
#[test]
fn every_form_is_exact_from_every_state() {
    let sets = [PassSet::NAIVE, PassSet::named("all").unwrap()];
    let mut runs = 0;
    for f in forms() {
        let code = assemble(f.code);
        for st in states() {
            for limit in [1u64, 3, 1_000] {
                for engine in [Engine::Ref, Engine::E1] {
                    for set in sets {
                        check(f.name, &code, &st, limit, engine, set);
                        runs += 1;
                    }
                }
            }
        }
    }
    assert_eq!(runs, forms().len() * 5 * 3 * 2 * 2);
}

/// The first instruction of each form lowers or declines as the table says
/// (the census names the declines by these reasons).
#[test]
fn declined_forms_are_the_listed_ones() {
    let model = Flat32::default();
    let mut got = Vec::new();
    let mut want = Vec::new();
    for f in forms() {
        let code = assemble(f.code);
        let l = lower_line(&model, 0, CODE, &code, 16);
        let r = match l.program {
            Some(_) => Ok(()),
            None => Err(l.stop.unwrap_or("?")),
        };
        got.push((f.name, r));
        want.push((f.name, f.first));
    }
    assert_eq!(got, want);
    let declined: Vec<_> = want
        .iter()
        .filter(|(_, r)| r.is_err())
        .map(|(n, _)| *n)
        .collect();
    assert_eq!(
        declined,
        [
            "gs:[0] (null selector)",
            "cs:[ebx] (read-only segment)",
            "pop [edi]",
            "popfd",
            "cli",
            "sti",
            "in al,dx",
            "out dx,al",
            "int3",
            "int 2eh",
            "hlt",
            "mov ax,ds",
            "mov ds,ax",
            "push fs",
            "lock add",
            "cmovne",
            "bswap",
            "xadd",
            "cmpxchg",
            "cpuid",
            "rdtsc",
            "jmp far",
            "66h jmp rel16",
        ]
    );
}

/// A loop of lowered forms runs inside programs: density and share.
#[test]
fn a_compute_loop_runs_in_programs() {
    let code = assemble(|a| {
        let mut top = a.create_label();
        a.mov(ecx, 200u32)?;
        a.set_label(&mut top)?;
        a.mov(eax, dword_ptr(esi + ecx * 4))?;
        a.add(edx, eax)?;
        a.xor(edx, ecx)?;
        a.mov(dword_ptr(edi + ecx * 4), edx)?;
        a.dec(ecx)?;
        a.jne(top)
    });
    let st = &states()[0];
    let t = check(
        "compute loop",
        &code,
        st,
        100_000,
        Engine::E1,
        PassSet::NAIVE,
    );
    assert_eq!(t.stepped, 0, "{t:?}");
    assert_eq!(t.in_programs, 1 + 200 * 6);
}

fn arb_state() -> impl Strategy<Value = State> {
    let ptr = prop_oneof![
        (0u32..0x7FF0).prop_map(|o| DATA + o),
        (0u32..0x2000).prop_map(|o| RO_PAGE + o - 0x10),
        any::<u32>(),
    ];
    (
        proptest::array::uniform4(any::<u32>()),
        proptest::array::uniform4(ptr),
        0u32..0x40,
        any::<u32>(),
        any::<u8>(),
    )
        .prop_map(|(a, p, sd, flags, seed)| State {
            regs: [
                a[0],
                a[1] & 0x3F,
                a[2],
                p[0],
                STACK_TOP - 4 * sd,
                p[1],
                p[2],
                p[3],
            ],
            flags: flags ^ (a[3] & 0x400),
            seed,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    /// Random states (pointers in the data area, on the read-only page, or
    /// anywhere), random limits: every form exact on E1 under `baseline`
    /// and on the reference interpreter naive.
    #[test]
    fn random_states_are_exact(st in arb_state(), limit in 1u64..40, e1 in any::<bool>()) {
        let (engine, set) = if e1 {
            (Engine::E1, PassSet::named("baseline").unwrap())
        } else {
            (Engine::Ref, PassSet::NAIVE)
        };
        for f in forms() {
            check(f.name, &assemble(f.code), &st, limit, engine, set);
        }
    }
}
