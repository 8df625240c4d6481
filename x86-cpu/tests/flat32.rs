//! Flat 32-bit user mode on a flat RAM bus with page protections: the
//! harness a user-mode engine's own bus follows, and a case table of 32-bit
//! forms with exact expected registers, flags and memory, plus the fault
//! contract (a refused access leaves no architectural effect and names the
//! linear address and the access kind).

mod common;

use common::flatram::{FlatRam, Prot};
use iced_x86::code_asm::*;
use x86_cpu::bus::{Access, MemFault};
use x86_cpu::user::{self, EventKind, FlatSetup, UserOutcome};
use x86_cpu::{reg, Cpu, Event};

use common::flatram::PAGE;
const MEM: u32 = 0x40_0000;
const CODE: u32 = 0x1000;
const DATA: u32 = 0x10_0000;
const STACK_TOP: u32 = 0x20_0000;
const TEB: u32 = 0x30_0000;

fn setup() -> (Cpu, FlatRam) {
    let cpu = Cpu::new_flat32(&FlatSetup {
        eip: CODE,
        esp: STACK_TOP,
        fs_base: TEB,
        fs_limit: 0xFFF,
    });
    (cpu, FlatRam::new(MEM))
}

fn assemble(f: &dyn Fn(&mut CodeAssembler) -> Result<(), IcedError>) -> Vec<u8> {
    let mut a = CodeAssembler::new(32).unwrap();
    f(&mut a).unwrap();
    a.assemble(CODE as u64).unwrap()
}

/// Runs `code` at CODE until EIP reaches its end or an event; at most
/// 200,000 steps.
fn run(cpu: &mut Cpu, bus: &mut FlatRam, code: &[u8]) -> Option<Event> {
    bus.load(CODE, code);
    let end = CODE + code.len() as u32;
    for _ in 0..200_000 {
        if cpu.eip == end {
            return None;
        }
        match user::step(cpu, bus) {
            UserOutcome::Ok => {}
            UserOutcome::Exception(e) => return Some(e),
            UserOutcome::Stop(r) => panic!("stopped: {r}"),
        }
    }
    panic!("no end after 200,000 steps, EIP {:08X}", cpu.eip);
}

type Asm = fn(&mut CodeAssembler) -> Result<(), IcedError>;

/// One case: initial registers (EAX..EDI, ESP left at the stack top when 0),
/// the code, expected registers and EFLAGS & `flag_mask`, and dwords of DATA
/// memory expected afterwards.
struct Case {
    name: &'static str,
    regs: [u32; 8],
    code: Asm,
    want: [u32; 8],
    flags: (u32, u32),
    mem: &'static [(u32, u32)],
}

const S: u32 = STACK_TOP;
const CF: u32 = 1;
const ZF: u32 = 0x40;
const SF: u32 = 0x80;
const OF: u32 = 0x800;

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "mov r32, [base+index*4+disp32] (SIB)",
            regs: [0, 3, 0, DATA, 0, 0, 0, 0],
            code: |a| {
                a.mov(dword_ptr(ebx + ecx * 4 + 0x1000), 0x1122_3344u32)?;
                a.mov(eax, dword_ptr(ebx + ecx * 4 + 0x1000))
            },
            want: [0x1122_3344, 3, 0, DATA, S, 0, 0, 0],
            flags: (0, 0),
            mem: &[(DATA + 0x100C, 0x1122_3344)],
        },
        Case {
            name: "66h: 16-bit operand in 32-bit code keeps the upper half",
            regs: [0xAAAA_5555, 0, 0, 0, 0, 0, 0, 0],
            code: |a| a.mov(ax, 0x1234u32),
            want: [0xAAAA_1234, 0, 0, 0, S, 0, 0, 0],
            flags: (0, 0),
            mem: &[],
        },
        Case {
            name: "67h: 16-bit addressing [bx+si] in 32-bit code",
            regs: [0, 0, 0, 0x1_2000, 0, 0, 0x20, 0],
            code: |a| {
                a.db(&[0x67, 0xC7, 0x00])?; // mov dword [bx+si], imm32
                a.dd(&[0xDEAD_BEEF])
            },
            want: [0, 0, 0, 0x1_2000, S, 0, 0x20, 0],
            flags: (0, 0),
            mem: &[(0x2020, 0xDEAD_BEEF)],
        },
        Case {
            name: "push/pop/call/ret on ESP",
            regs: [0x1234_5678, 0, 0, 0, 0, 0, 0, 0],
            code: |a| {
                let mut f = a.create_label();
                let mut end = a.create_label();
                a.push(eax)?;
                a.call(f)?;
                a.jmp(end)?;
                a.set_label(&mut f)?;
                a.pop(ecx)?; // return address
                a.push(ecx)?;
                a.mov(edx, dword_ptr(esp + 4))?;
                a.ret_1(4)?;
                a.set_label(&mut end)?;
                a.nop()
            },
            want: [0x1234_5678, CODE + 6, 0x1234_5678, 0, S, 0, 0, 0],
            flags: (0, 0),
            mem: &[],
        },
        Case {
            name: "rep movsd / rep stosb with ECX ESI EDI",
            regs: [0x41, 4, 0, 0, 0, 0, DATA, DATA + 0x100],
            code: |a| {
                a.mov(dword_ptr(DATA), 0x0403_0201u32)?;
                a.mov(dword_ptr(DATA + 4), 0x0807_0605u32)?;
                a.mov(dword_ptr(DATA + 8), 0x0C0B_0A09u32)?;
                a.mov(dword_ptr(DATA + 12), 0x100F_0E0Du32)?;
                a.rep().movsd()?;
                a.mov(ecx, 3u32)?;
                a.rep().stosb()
            },
            want: [0x41, 0, 0, 0, S, 0, DATA + 16, DATA + 0x113],
            flags: (0, 0),
            mem: &[
                (DATA + 0x100, 0x0403_0201),
                (DATA + 0x10C, 0x100F_0E0D),
                (DATA + 0x110, 0x0041_4141),
            ],
        },
        Case {
            name: "loop and jecxz count ECX",
            regs: [0, 0x1_0003, 0, 0, 0, 0, 0, 0],
            code: |a| {
                let mut top = a.create_label();
                let mut out = a.create_label();
                a.set_label(&mut top)?;
                a.inc(eax)?;
                a.loop_(top)?;
                a.jecxz(out)?;
                a.mov(ebx, 1u32)?;
                a.set_label(&mut out)?;
                a.nop()
            },
            want: [0x1_0003, 0, 0, 0, S, 0, 0, 0],
            flags: (0, 0),
            mem: &[],
        },
        Case {
            name: "enter 8,1 / leave on a 32-bit stack",
            regs: [0, 0, 0, 0, 0, 0x1234, 0, 0],
            code: |a| {
                a.enter(8u32, 1u32)?;
                a.mov(eax, ebp)?;
                a.mov(ebx, esp)?;
                a.mov(ecx, dword_ptr(ebp - 4))?;
                a.leave()
            },
            want: [S - 4, S - 4, 0, S - 16, S, 0x1234, 0, 0],
            flags: (0, 0),
            mem: &[],
        },
        Case {
            name: "fs:[18h] reads the TEB",
            regs: [0; 8],
            code: |a| {
                a.mov(dword_ptr(TEB + 0x18), TEB)?;
                a.mov(eax, dword_ptr(0x18).fs())
            },
            want: [TEB, 0, 0, 0, S, 0, 0, 0],
            flags: (0, 0),
            mem: &[],
        },
        Case {
            name: "bswap, movzx, movsx, cwde, cdq",
            regs: [0x1122_3344, 0xFF80, 0, 0, 0, 0, 0, 0],
            code: |a| {
                a.bswap(eax)?;
                a.movzx(ebx, cl)?;
                a.movsx(edx, cx)?;
                a.mov(esi, edx)?;
                a.mov(eax, 0x8000u32)?;
                a.cwde()?;
                a.cdq()
            },
            want: [0xFFFF_8000, 0xFF80, 0xFFFF_FFFF, 0x80, S, 0, 0xFFFF_FF80, 0],
            flags: (0, 0),
            mem: &[],
        },
        Case {
            name: "cmpxchg equal and not, xadd",
            regs: [5, 7, 5, 9, 0, 0, 0, 0],
            code: |a| {
                a.cmpxchg(edx, ecx)?; // eax == edx: edx = 7, ZF
                a.cmpxchg(ebx, ecx)?; // 5 != 9: eax = 9
                a.xadd(ebx, ecx) // ebx = 16, ecx = 9
            },
            want: [9, 9, 7, 16, S, 0, 0, 0],
            flags: (ZF | CF | SF | OF, 0),
            mem: &[],
        },
        Case {
            name: "cmpxchg8b equal then unequal",
            regs: [1, 0x33, 2, 0x44, 0, 0, 0, 0],
            code: |a| {
                a.mov(dword_ptr(DATA), 1u32)?;
                a.mov(dword_ptr(DATA + 4), 2u32)?;
                a.cmpxchg8b(qword_ptr(DATA))?; // equal: [DATA] = ECX:EBX
                a.setz(al)?;
                a.movzx(esi, al)?;
                a.mov(eax, 0u32)?;
                a.cmpxchg8b(qword_ptr(DATA))?; // unequal: EDX:EAX = m64
                a.setz(cl)
            },
            want: [0x44, 0x00, 0x33, 0x44, S, 0, 1, 0],
            flags: (ZF, 0),
            mem: &[(DATA, 0x44), (DATA + 4, 0x33)],
        },
        Case {
            name: "setcc, cmovcc (taken, not taken, memory source)",
            regs: [1, 2, 0, 0, 0, 0, 0, DATA],
            code: |a| {
                a.cmp(eax, ecx)?; // 1 < 2: CF SF
                a.setb(bl)?;
                a.cmovb(edx, ecx)?;
                a.cmova(esi, ecx)?;
                a.mov(dword_ptr(DATA), 0x77u32)?;
                a.cmovl(eax, dword_ptr(edi))
            },
            want: [0x77, 2, 2, 1, S, 0, 0, DATA],
            flags: (CF | SF, CF | SF),
            mem: &[],
        },
        Case {
            name: "bt/bts on a bit string, shld/shrd, imul forms",
            regs: [0x8000_0001, 35, 0xF000_0000, 0, 0, 0, 0, 0],
            code: |a| {
                a.bts(dword_ptr(DATA), ecx)?; // bit 3 of DATA+4
                a.shld(eax, edx, 4)?; // 0x0000_001F
                a.shrd(edx, eax, 8)?; // 0x1FF0_0000
                a.imul_3(ebx, eax, 3)?; // 0x5D
                a.imul_2(ebx, ebx)?; // 0x21C9
                a.mov(esi, dword_ptr(DATA + 4))
            },
            want: [0x1F, 35, 0x1FF0_0000, 0x21C9, S, 0, 8, 0],
            flags: (CF | OF, 0),
            mem: &[(DATA + 4, 8)],
        },
        Case {
            name: "one-operand mul/div on EDX:EAX",
            regs: [0x1_0000, 0x1_0000, 0, 7, 0, 0, 0, 0],
            code: |a| {
                a.mul(ecx)?; // EDX:EAX = 1_0000_0000
                a.add(eax, 5u32)?;
                a.div(ebx) // 0x1_0000_0005 / 7
            },
            want: [0x2492_4925, 0x1_0000, 2, 7, S, 0, 0, 0],
            flags: (0, 0),
            mem: &[],
        },
        Case {
            name: "cpuid: family 5, FPU TSC CX8 CMOV FXSR SSE SSE2 (no MMX)",
            regs: [1, 0, 0, 0, 0, 0, 0, 0],
            code: |a| a.cpuid(),
            want: [0x520, 0, 0x0700_8111, 0, S, 0, 0, 0],
            flags: (0, 0),
            mem: &[],
        },
        Case {
            name: "rdtsc reads the guest clock (dispatches before it)",
            regs: [0; 8],
            code: |a| {
                a.nop()?;
                a.nop()?;
                a.rdtsc()
            },
            want: [2, 0, 0, 0, S, 0, 0, 0],
            flags: (0, 0),
            mem: &[],
        },
        Case {
            name: "fcomip: 2 > 1 clears ZF CF, pops; fucomi equal sets ZF",
            regs: [0; 8],
            code: |a| {
                a.fld1()?;
                a.fld1()?;
                a.fadd_2(st0, st0)?; // ST0 = 2, ST1 = 1
                a.fcomip(st0, st1)?; // 2 > 1: ZF PF CF = 0, pop
                a.setb(al)?;
                a.fld1()?;
                a.fucomi(st0, st1)?; // 1 == 1: ZF
                a.setz(bl)?;
                a.fistp(dword_ptr(DATA))?;
                a.fistp(dword_ptr(DATA + 4))
            },
            want: [0, 0, 0, 1, S, 0, 0, 0],
            flags: (ZF | CF | 4, ZF),
            mem: &[(DATA, 1), (DATA + 4, 1)],
        },
        Case {
            name: "fcmovb / fcmovnbe pick by CF and ZF",
            regs: [0; 8],
            code: |a| {
                a.fldz()?;
                a.fld1()?; // ST0 = 1, ST1 = 0
                a.stc()?;
                a.fcmovb(st0, st1)?; // CF = 1: ST0 = 0
                a.fistp(dword_ptr(DATA))?;
                a.fld1()?; // ST0 = 1, ST1 = 0
                a.fcmovnbe(st0, st1)?; // CF = 1: no move
                a.fistp(dword_ptr(DATA + 4))?;
                a.fstp(st0)
            },
            want: [0, 0, 0, 0, S, 0, 0, 0],
            flags: (0, 0),
            mem: &[(DATA, 0), (DATA + 4, 1)],
        },
        Case {
            name: "push ds / pop es / mov gs, flat selector",
            regs: [0; 8],
            code: |a| {
                a.push(ds)?;
                a.pop(es)?;
                a.mov(ax, fs)?;
                a.mov(gs, ax)?;
                a.mov(ebx, dword_ptr(0).gs())
            },
            want: [0x3B, 0, 0, 0, S, 0, 0, 0],
            flags: (0, 0),
            mem: &[],
        },
    ]
}

#[test]
fn flat32_case_table() {
    let mut failures = Vec::new();
    for c in cases() {
        let (mut cpu, mut bus) = setup();
        for (i, v) in c.regs.iter().enumerate() {
            if i != reg::ESP {
                cpu.regs[i] = *v;
            }
        }
        let code = assemble(&c.code);
        let ev = run(&mut cpu, &mut bus, &code);
        let mut bad = Vec::new();
        if let Some(e) = ev {
            bad.push(format!("event {e:?}"));
        }
        if cpu.regs != c.want {
            bad.push(format!("regs {:08X?} want {:08X?}", cpu.regs, c.want));
        }
        let (mask, want) = c.flags;
        if cpu.eflags() & mask != want {
            bad.push(format!(
                "flags {:08X} & {mask:X} want {want:X}",
                cpu.eflags()
            ));
        }
        for &(a, v) in c.mem {
            if bus.rd32(a) != v {
                bad.push(format!("[{a:08X}] = {:08X} want {v:08X}", bus.rd32(a)));
            }
        }
        if !bad.is_empty() {
            failures.push(format!("{}: {}", c.name, bad.join("; ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// One fault case: the code, the page to protect, the event expected.
struct FaultCase {
    name: &'static str,
    code: Asm,
    /// (page address, protection) set before running.
    protect: &'static [(u32, Prot)],
    vector: u8,
    kind: EventKind,
    mem: Option<(u32, Access)>,
    /// Index of the instruction expected to raise (0-based).
    at: usize,
}

fn fault_cases() -> Vec<FaultCase> {
    vec![
        FaultCase {
            name: "read of an unmapped page",
            code: |a| {
                a.mov(eax, 1u32)?;
                a.add(eax, dword_ptr(DATA + 0x2FFE))
            },
            protect: &[(DATA + 0x3000, Prot::None)],
            vector: 14,
            kind: EventKind::Fault,
            mem: Some((DATA + 0x3000, Access::Read)),
            at: 1,
        },
        FaultCase {
            name: "write to a read-only page",
            code: |a| a.mov(dword_ptr(DATA), eax),
            protect: &[(DATA, Prot::Read)],
            vector: 14,
            kind: EventKind::Fault,
            mem: Some((DATA, Access::Write)),
            at: 0,
        },
        FaultCase {
            name: "mov [rw], [unmapped] through a string move writes nothing",
            code: |a| {
                a.mov(esi, DATA + 0x5000)?;
                a.mov(edi, DATA)?;
                a.movsd()
            },
            protect: &[(DATA + 0x5000, Prot::None)],
            vector: 14,
            kind: EventKind::Fault,
            mem: Some((DATA + 0x5000, Access::Read)),
            at: 2,
        },
        FaultCase {
            name: "pusha into a guard page writes no slot",
            code: |a| {
                a.mov(esp, STACK_TOP - 0x1000 + 8)?;
                a.pushad()
            },
            protect: &[(STACK_TOP - 0x2000, Prot::None)],
            vector: 14,
            kind: EventKind::Fault,
            mem: Some((STACK_TOP - 0x1000 - 24, Access::Write)),
            at: 1,
        },
        FaultCase {
            name: "fld from an unmapped page leaves the x87 stack alone",
            code: |a| a.fld(dword_ptr(DATA + 0x7000)),
            protect: &[(DATA + 0x7000, Prot::None)],
            vector: 14,
            kind: EventKind::Fault,
            mem: Some((DATA + 0x7000, Access::Read)),
            at: 0,
        },
        FaultCase {
            name: "div by zero",
            code: |a| {
                a.xor(ecx, ecx)?;
                a.div(ecx)
            },
            protect: &[],
            vector: 0,
            kind: EventKind::Fault,
            mem: None,
            at: 1,
        },
        FaultCase {
            name: "int3 is a trap",
            code: |a| a.int3(),
            protect: &[],
            vector: 3,
            kind: EventKind::Trap,
            mem: None,
            at: 0,
        },
        FaultCase {
            name: "int 2Eh is a trap",
            code: |a| a.int(0x2E),
            protect: &[],
            vector: 0x2E,
            kind: EventKind::Trap,
            mem: None,
            at: 0,
        },
        FaultCase {
            name: "hlt at CPL 3 is #GP",
            code: |a| a.hlt(),
            protect: &[],
            vector: 13,
            kind: EventKind::Fault,
            mem: None,
            at: 0,
        },
        FaultCase {
            name: "cli at CPL 3 is #GP",
            code: |a| a.cli(),
            protect: &[],
            vector: 13,
            kind: EventKind::Fault,
            mem: None,
            at: 0,
        },
        FaultCase {
            name: "in al, dx at CPL 3 is #GP",
            code: |a| a.in_(al, dx),
            protect: &[],
            vector: 13,
            kind: EventKind::Fault,
            mem: None,
            at: 0,
        },
        FaultCase {
            name: "access through null GS is #GP",
            code: |a| a.mov(eax, dword_ptr(0).gs()),
            protect: &[],
            vector: 13,
            kind: EventKind::Fault,
            mem: None,
            at: 0,
        },
        FaultCase {
            name: "fs past its 0xFFF limit is #GP",
            code: |a| a.mov(eax, dword_ptr(0xFFE).fs()),
            protect: &[],
            vector: 13,
            kind: EventKind::Fault,
            mem: None,
            at: 0,
        },
    ]
}

#[test]
fn flat32_faults_have_no_effect() {
    let mut failures = Vec::new();
    for c in fault_cases() {
        let (mut cpu, mut bus) = setup();
        let code = assemble(&c.code);
        for &(page, p) in c.protect {
            bus.prot[(page / PAGE) as usize] = p;
        }
        // Where each instruction starts.
        let mut starts = Vec::new();
        let mut dec = iced_x86::Decoder::with_ip(32, &code, CODE as u64, 0);
        while dec.can_decode() {
            starts.push(dec.ip() as u32);
            let _ = dec.decode();
        }
        // Run the instructions before the faulting one, then snapshot.
        bus.load(CODE, &code);
        while cpu.eip != starts[c.at] {
            assert_eq!(
                user::step(&mut cpu, &mut bus),
                UserOutcome::Ok,
                "{}",
                c.name
            );
        }
        let before = (cpu.regs, cpu.eflags(), cpu.sregs, cpu.fpu.clone());
        let mem_before = bus.mem.clone();
        let clock = cpu.clock;
        let out = user::step(&mut cpu, &mut bus);
        let UserOutcome::Exception(e) = out else {
            failures.push(format!("{}: {out:?}", c.name));
            continue;
        };
        let mut bad = Vec::new();
        if e.vector != c.vector || e.kind != c.kind || e.eip != starts[c.at] {
            bad.push(format!("event {e:?}"));
        }
        let want_mem = c.mem;
        if e.mem.map(|m| (m.addr, m.access)) != want_mem {
            bad.push(format!("mem {:?} want {want_mem:?}", e.mem));
        }
        if cpu.clock != clock + 1 {
            bad.push(format!("clock {} want {}", cpu.clock, clock + 1));
        }
        let next = if c.kind == EventKind::Trap {
            e.next_eip
        } else {
            e.eip
        };
        if cpu.eip != next {
            bad.push(format!("eip {:08X} want {next:08X}", cpu.eip));
        }
        if (cpu.regs, cpu.eflags(), cpu.sregs) != (before.0, before.1, before.2) {
            bad.push("registers changed".into());
        }
        if format!("{:?}", cpu.fpu) != format!("{:?}", before.3) {
            bad.push("x87 state changed".into());
        }
        if bus.mem != mem_before {
            bad.push("memory changed".into());
        }
        if !bad.is_empty() {
            failures.push(format!("{}: {}", c.name, bad.join("; ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn flat32_single_step_and_clock() {
    let (mut cpu, mut bus) = setup();
    let code = assemble(&|a| {
        a.mov(eax, 1u32)?;
        a.mov(ebx, 2u32)
    });
    bus.load(CODE, &code);
    cpu.set_eflags(cpu.eflags() | 0x100);
    let UserOutcome::Exception(e) = user::step(&mut cpu, &mut bus) else {
        panic!("no trap");
    };
    assert_eq!(
        (e.vector, e.kind, e.eip, e.next_eip),
        (1, EventKind::Trap, CODE, CODE + 5)
    );
    assert_eq!((cpu.regs[reg::EAX], cpu.eip, cpu.clock), (1, CODE + 5, 1));
    bus.wr32(DATA, 0);
}

/// An instruction fetch faults only when the instruction needs a byte of the
/// refused page: `mov eax, imm32` ending exactly at the page end runs, the
/// same instruction one byte later faults at the page start (Execute).
#[test]
fn flat32_fetch_faults_only_on_needed_bytes() {
    for (start, want) in [(0x1FFB, None), (0x1FFC, Some(0x2000))] {
        let (mut cpu, mut bus) = setup();
        bus.prot[2] = Prot::None;
        bus.load(start, &[0xB8, 1, 2, 3, 4]);
        cpu.eip = start;
        let out = user::step(&mut cpu, &mut bus);
        match want {
            None => assert_eq!((out, cpu.regs[reg::EAX]), (UserOutcome::Ok, 0x0403_0201)),
            Some(a) => {
                let UserOutcome::Exception(e) = out else {
                    panic!("{out:?}");
                };
                assert_eq!(
                    e.mem,
                    Some(MemFault {
                        addr: a,
                        access: Access::Execute
                    })
                );
                assert_eq!((e.vector, cpu.eip, cpu.regs[reg::EAX]), (14, start, 0));
            }
        }
    }
}
