//! Structured exception handling: CPU exceptions and RaiseException
//! delivered through the thread's FS:[0] chain as Windows does on x86.
//!
//! Owns: the exception codes of CPU events, the EXCEPTION_RECORD and CONTEXT
//! layouts (written below the faulting ESP, read back by NtContinue), the
//! dispatch walk (each registration's handler called as a guest function
//! with the record, its frame, the context; ContinueExecution resumes the
//! context, ContinueSearch goes on), the unhandled-exception filter, the
//! report of an exception nobody handled (code, address, registers), and
//! RtlUnwind's walk; the stack guard page (a fault on it is
//! STATUS_STACK_OVERFLOW). It must not execute guest instructions (handlers run as
//! guest calls through [`Ret::call`]) nor decide what a CPU event is (x86-cpu
//! reports it).

use crate::dll::{Env, Ret};
use crate::memory::{prot, Memory, PAGE_SIZE};
use x86_cpu::user::{Event, EventKind};
use x86_cpu::{reg, Access, Cpu};

/// NTSTATUS codes of exceptions.
pub mod code {
    pub const ACCESS_VIOLATION: u32 = 0xC000_0005;
    pub const ILLEGAL_INSTRUCTION: u32 = 0xC000_001D;
    pub const NONCONTINUABLE: u32 = 0xC000_0025;
    pub const UNWIND: u32 = 0xC000_0027;
    pub const ARRAY_BOUNDS_EXCEEDED: u32 = 0xC000_008C;
    pub const FLT_DENORMAL_OPERAND: u32 = 0xC000_008D;
    pub const FLT_DIVIDE_BY_ZERO: u32 = 0xC000_008E;
    pub const FLT_INEXACT_RESULT: u32 = 0xC000_008F;
    pub const FLT_INVALID_OPERATION: u32 = 0xC000_0090;
    pub const FLT_OVERFLOW: u32 = 0xC000_0091;
    pub const FLT_STACK_CHECK: u32 = 0xC000_0092;
    pub const FLT_UNDERFLOW: u32 = 0xC000_0093;
    pub const INT_DIVIDE_BY_ZERO: u32 = 0xC000_0094;
    pub const INT_OVERFLOW: u32 = 0xC000_0095;
    pub const PRIVILEGED_INSTRUCTION: u32 = 0xC000_0096;
    pub const STACK_OVERFLOW: u32 = 0xC000_00FD;
    pub const INVALID_UNWIND_TARGET: u32 = 0xC000_0029;
    pub const BREAKPOINT: u32 = 0x8000_0003;
    pub const SINGLE_STEP: u32 = 0x8000_0004;
    pub const CPP_EH: u32 = 0xE06D_7363;
}

/// EXCEPTION_RECORD flags.
pub const NONCONTINUABLE: u32 = 1;
pub const UNWINDING: u32 = 2;
pub const EXIT_UNWIND: u32 = 4;

pub const RECORD_SIZE: u32 = 0x50;
pub const CONTEXT_SIZE: u32 = 0x2CC;

/// CONTEXT_i386 | CONTROL | INTEGER | SEGMENTS | FLOATING_POINT.
pub const CONTEXT_FULL_FLOAT: u32 = 0x1_000F;
/// CONTEXT_EXTENDED_REGISTERS: the FXSAVE image at ExtendedRegisters (0xCC),
/// which carries XMM0-7 and MXCSR.
pub const CONTEXT_EXTENDED: u32 = 0x1_0020;
/// Offset of ExtendedRegisters (512 bytes, the FXSAVE format).
const EXTENDED_REGISTERS: usize = 0xCC;

/// An exception as EXCEPTION_RECORD holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub code: u32,
    pub flags: u32,
    pub address: u32,
    pub params: Vec<u32>,
}

/// A short name for an exception code (reports).
pub fn name(c: u32) -> &'static str {
    match c {
        code::ACCESS_VIOLATION => "access violation",
        code::ILLEGAL_INSTRUCTION => "illegal instruction",
        code::INT_DIVIDE_BY_ZERO => "integer divide by zero",
        code::INT_OVERFLOW => "integer overflow",
        code::PRIVILEGED_INSTRUCTION => "privileged instruction",
        code::BREAKPOINT => "breakpoint",
        code::SINGLE_STEP => "single step",
        code::ARRAY_BOUNDS_EXCEEDED => "array bounds exceeded",
        code::STACK_OVERFLOW => "stack overflow",
        code::CPP_EH => "C++ exception",
        code::FLT_DIVIDE_BY_ZERO => "float divide by zero",
        code::FLT_INVALID_OPERATION => "float invalid operation",
        code::FLT_OVERFLOW => "float overflow",
        code::FLT_UNDERFLOW => "float underflow",
        code::FLT_INEXACT_RESULT => "float inexact result",
        code::FLT_STACK_CHECK => "float stack check",
        code::FLT_DENORMAL_OPERAND => "float denormal operand",
        _ => "exception",
    }
}

/// The exception a CPU event is, and the EIP the context reports (the
/// instruction for faults and INT3, the next one for other traps).
pub fn record_of_event(ev: &Event, cpu: &Cpu) -> (Record, u32) {
    let at = |c: u32, params: Vec<u32>| Record {
        code: c,
        flags: 0,
        address: ev.eip,
        params,
    };
    match (ev.vector, ev.kind) {
        (14, _) => {
            let m = ev.mem.expect("#PF has an address");
            let kind = match m.access {
                Access::Read => 0,
                Access::Write => 1,
                Access::Execute => 8,
            };
            (at(code::ACCESS_VIOLATION, vec![kind, m.addr]), ev.eip)
        }
        (0, _) => (at(code::INT_DIVIDE_BY_ZERO, vec![]), ev.eip),
        (6, _) => (at(code::ILLEGAL_INSTRUCTION, vec![]), ev.eip),
        (5, _) => (at(code::ARRAY_BOUNDS_EXCEEDED, vec![]), ev.eip),
        (16, _) | (7, _) => {
            let sw = cpu.fpu.status_word();
            let c = if sw & 0x40 != 0 {
                code::FLT_STACK_CHECK
            } else if sw & 1 != 0 {
                code::FLT_INVALID_OPERATION
            } else if sw & 4 != 0 {
                code::FLT_DIVIDE_BY_ZERO
            } else if sw & 8 != 0 {
                code::FLT_OVERFLOW
            } else if sw & 0x10 != 0 {
                code::FLT_UNDERFLOW
            } else if sw & 2 != 0 {
                code::FLT_DENORMAL_OPERAND
            } else {
                code::FLT_INEXACT_RESULT
            };
            (at(c, vec![0]), ev.eip)
        }
        (19, _) => {
            // #XM: the first unmasked MXCSR flag in the x87's order of
            // precedence names the exception, as Windows reports it.
            let mx = cpu.sse.mxcsr;
            let unmasked = mx & !(mx >> 7) & 0x3F;
            let c = [
                (1, code::FLT_INVALID_OPERATION),
                (4, code::FLT_DIVIDE_BY_ZERO),
                (8, code::FLT_OVERFLOW),
                (0x10, code::FLT_UNDERFLOW),
                (2, code::FLT_DENORMAL_OPERAND),
            ]
            .iter()
            .find(|(bit, _)| unmasked & bit != 0)
            .map_or(code::FLT_INEXACT_RESULT, |&(_, c)| c);
            (at(c, vec![0]), ev.eip)
        }
        (3, EventKind::Trap) => {
            // INT3 (CC): Windows reports the breakpoint's own address.
            (
                Record {
                    code: code::BREAKPOINT,
                    flags: 0,
                    address: ev.eip,
                    params: vec![0],
                },
                ev.eip,
            )
        }
        (1, EventKind::Trap) => (
            Record {
                code: code::SINGLE_STEP,
                flags: 0,
                address: ev.next_eip,
                params: vec![],
            },
            ev.next_eip,
        ),
        (4, EventKind::Trap) => (at(code::INT_OVERFLOW, vec![]), ev.next_eip),
        (13, EventKind::Fault) => {
            // Privileged instructions (HLT, CLI, IN, ...) vs other protection faults.
            (at(code::PRIVILEGED_INSTRUCTION, vec![]), ev.eip)
        }
        // INT n with a DPL-0 gate and everything else: an access violation.
        _ => (at(code::ACCESS_VIOLATION, vec![0, 0xFFFF_FFFF]), ev.eip),
    }
}

/// A fault on the current thread's guard page is how Windows finds a stack
/// overflow: the page is committed (the handlers run on it), the guard is
/// gone, TEB.StackLimit moves down to it, and the record becomes
/// STATUS_STACK_OVERFLOW with the access and address an access violation
/// carries. Any other record passes through.
pub fn stack_guard(env: &mut Env, rec: Record) -> Record {
    let t = env.threads.cur();
    let (Some(guard), &[_, addr]) = (t.stack_guard, rec.params.as_slice()) else {
        return rec;
    };
    let on_guard = addr.wrapping_sub(guard) < PAGE_SIZE;
    if rec.code != code::ACCESS_VIOLATION || !on_guard {
        return rec;
    }
    let teb = t.teb;
    if env.mem.commit(guard, PAGE_SIZE, prot::READWRITE).is_err() {
        return rec;
    }
    env.threads.cur_mut().stack_guard = None;
    let _ = env
        .mem
        .poke_u32(teb + crate::process::teb::STACK_LIMIT, guard);
    Record {
        code: code::STACK_OVERFLOW,
        ..rec
    }
}

/// Writes an EXCEPTION_RECORD.
pub fn write_record(mem: &mut Memory, addr: u32, r: &Record) -> Option<()> {
    let mut b = vec![0u8; RECORD_SIZE as usize];
    let put = |b: &mut Vec<u8>, o: usize, v: u32| b[o..o + 4].copy_from_slice(&v.to_le_bytes());
    put(&mut b, 0, r.code);
    put(&mut b, 4, r.flags);
    put(&mut b, 12, r.address);
    put(&mut b, 16, r.params.len().min(15) as u32);
    for (k, &p) in r.params.iter().take(15).enumerate() {
        put(&mut b, 20 + 4 * k, p);
    }
    mem.poke(addr, &b)
}

/// Reads an EXCEPTION_RECORD.
pub fn read_record(mem: &Memory, addr: u32) -> Option<Record> {
    let g = |o: u32| mem.peek_u32(addr.wrapping_add(o));
    let n = g(16)?.min(15);
    Some(Record {
        code: g(0)?,
        flags: g(4)?,
        address: g(12)?,
        params: (0..n).map(|k| g(20 + 4 * k).unwrap_or(0)).collect(),
    })
}

/// Writes a CONTEXT (control, integer, segment, x87 and, as
/// ExtendedRegisters, XMM/MXCSR state) of `cpu`.
pub fn write_context(mem: &mut Memory, addr: u32, cpu: &Cpu) -> Option<()> {
    let mut b = vec![0u8; CONTEXT_SIZE as usize];
    let put = |b: &mut Vec<u8>, o: usize, v: u32| b[o..o + 4].copy_from_slice(&v.to_le_bytes());
    put(&mut b, 0, CONTEXT_FULL_FLOAT | CONTEXT_EXTENDED);
    b[EXTENDED_REGISTERS..EXTENDED_REGISTERS + 512]
        .copy_from_slice(&x86_cpu::exec::sse::fxsave_image(cpu));
    let f = &cpu.fpu;
    put(&mut b, 0x1C, f.control as u32 | 0xFFFF_0000);
    put(&mut b, 0x20, f.status_word() as u32 | 0xFFFF_0000);
    put(&mut b, 0x24, f.tag_word() as u32 | 0xFFFF_0000);
    put(&mut b, 0x28, f.fip);
    put(&mut b, 0x2C, f.fcs as u32 | (f.fop as u32) << 16);
    put(&mut b, 0x30, f.fdp);
    put(&mut b, 0x34, f.fds as u32 | 0xFFFF_0000);
    for i in 0..8 {
        let o = 0x38 + 10 * i;
        b[o..o + 10].copy_from_slice(&f.st(i).to_le_bytes());
    }
    use x86_cpu::seg;
    put(&mut b, 0x8C, cpu.sregs[seg::GS] as u32);
    put(&mut b, 0x90, cpu.sregs[seg::FS] as u32);
    put(&mut b, 0x94, cpu.sregs[seg::ES] as u32);
    put(&mut b, 0x98, cpu.sregs[seg::DS] as u32);
    put(&mut b, 0x9C, cpu.regs[reg::EDI]);
    put(&mut b, 0xA0, cpu.regs[reg::ESI]);
    put(&mut b, 0xA4, cpu.regs[reg::EBX]);
    put(&mut b, 0xA8, cpu.regs[reg::EDX]);
    put(&mut b, 0xAC, cpu.regs[reg::ECX]);
    put(&mut b, 0xB0, cpu.regs[reg::EAX]);
    put(&mut b, 0xB4, cpu.regs[reg::EBP]);
    put(&mut b, 0xB8, cpu.eip);
    put(&mut b, 0xBC, cpu.sregs[seg::CS] as u32);
    put(&mut b, 0xC0, cpu.eflags());
    put(&mut b, 0xC4, cpu.regs[reg::ESP]);
    put(&mut b, 0xC8, cpu.sregs[seg::SS] as u32);
    mem.poke(addr, &b)
}

/// Loads a CONTEXT into `cpu` as NtContinue does (the parts its flags name;
/// segment registers stay flat).
pub fn read_context(mem: &Memory, addr: u32, cpu: &mut Cpu) -> Option<()> {
    let mut b = vec![0u8; CONTEXT_SIZE as usize];
    mem.peek(addr, &mut b)?;
    let g = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"));
    let flags = g(0);
    if flags & 2 != 0 {
        cpu.regs[reg::EDI] = g(0x9C);
        cpu.regs[reg::ESI] = g(0xA0);
        cpu.regs[reg::EBX] = g(0xA4);
        cpu.regs[reg::EDX] = g(0xA8);
        cpu.regs[reg::ECX] = g(0xAC);
        cpu.regs[reg::EAX] = g(0xB0);
    }
    if flags & 1 != 0 {
        cpu.regs[reg::EBP] = g(0xB4);
        cpu.eip = g(0xB8);
        // User mode keeps IOPL and IF; the writable arithmetic and control flags load.
        let keep = cpu.eflags() & 0x3200;
        cpu.set_eflags((g(0xC0) & 0x0025_0DD5) | keep | 2);
        cpu.regs[reg::ESP] = g(0xC4);
    }
    if flags & 8 != 0 {
        let f = &mut cpu.fpu;
        f.set_control(g(0x1C) as u16);
        f.status = g(0x20) as u16;
        f.tags = g(0x24) as u16;
        f.fip = g(0x28);
        f.fcs = g(0x2C) as u16;
        f.fop = (g(0x2C) >> 16) as u16 & 0x7FF;
        f.fdp = g(0x30);
        f.fds = g(0x34) as u16;
        for i in 0..8 {
            let o = 0x38 + 10 * i;
            let v = x86_cpu::fpu::F80::from_le_bytes(b[o..o + 10].try_into().expect("10 bytes"));
            let p = f.phys(i);
            f.regs[p] = v;
        }
    }
    if flags & 0x20 != 0 {
        // XMM0-7 and MXCSR from ExtendedRegisters (the x87 part came from
        // FloatSave above); reserved MXCSR bits are dropped.
        let x = &b[EXTENDED_REGISTERS..];
        let mx = u32::from_le_bytes(x[24..28].try_into().expect("4 bytes"));
        cpu.sse.mxcsr = mx & x86_cpu::sse::MXCSR_MASK;
        for i in 0..8 {
            let o = 160 + 16 * i;
            cpu.sse.xmm[i] = u128::from_le_bytes(x[o..o + 16].try_into().expect("16 bytes"));
        }
    }
    Some(())
}

/// Where a dispatch keeps its data below `esp`: (context, record, pointers, new esp).
fn frame_below(esp: u32) -> (u32, u32, u32, u32) {
    let ctx = (esp.wrapping_sub(CONTEXT_SIZE) & !0xF).wrapping_sub(0x10);
    let rec = ctx - RECORD_SIZE;
    let ptrs = rec - 8;
    (ctx, rec, ptrs, ptrs - 0x10)
}

/// Dispatches `rec` raised with the registers of `at` (the context the
/// handlers see and ContinueExecution resumes) on the current thread.
pub fn dispatch(env: &mut Env, rec: Record, at: &Cpu) -> Ret {
    let esp = env.cpu().regs[reg::ESP].min(at.regs[reg::ESP]);
    let (ctx, rec_a, ptrs, new_esp) = frame_below(esp);
    if write_context(&mut env.mem, ctx, at).is_none()
        || write_record(&mut env.mem, rec_a, &rec).is_none()
        || env.mem.poke_u32(ptrs, rec_a).is_none()
        || env.mem.poke_u32(ptrs + 4, ctx).is_none()
    {
        return Ret::Stop(report(&rec, at, "and no stack to deliver it on"));
    }
    env.cpu().regs[reg::ESP] = new_esp;
    let first = env.mem.peek_u32(env.teb()).unwrap_or(0xFFFF_FFFF);
    walk(env, rec_a, ctx, ptrs, first)
}

/// The registration frame is on the thread's stack and aligned.
fn frame_valid(env: &Env, frame: u32) -> bool {
    let t = env.threads.cur();
    frame & 3 == 0 && frame >= t.stack_bottom && frame.wrapping_add(8) <= t.stack_top
}

fn walk(env: &mut Env, rec: u32, ctx: u32, ptrs: u32, frame: u32) -> Ret {
    if frame == 0xFFFF_FFFF || frame == 0 || !frame_valid(env, frame) {
        return unhandled(env, rec, ctx, ptrs);
    }
    let handler = env.mem.peek_u32(frame + 4).unwrap_or(0);
    let next = env.mem.peek_u32(frame).unwrap_or(0xFFFF_FFFF);
    if matches!(
        env.thunks.at(handler),
        Some(crate::thunks::Thunk::HostGuard)
    ) {
        // The host's guard: the guarded call ends (its registration and
        // everything above it unwound), answering 0.
        let depth = env.mem.peek_u32(frame + 8).unwrap_or(u32::MAX) as usize;
        let teb = env.teb();
        env.mem.poke_u32(teb, next);
        return Ret::Unwind { depth, value: 0 };
    }
    Ret::call(
        handler,
        vec![rec, frame, ctx, 0],
        move |env, disposition| match disposition {
            0 => {
                let flags = env.mem.peek_u32(rec + 4).unwrap_or(0);
                if flags & NONCONTINUABLE != 0 {
                    let r = Record {
                        code: code::NONCONTINUABLE,
                        flags: NONCONTINUABLE,
                        address: 0,
                        params: vec![],
                    };
                    let mut at = env.cpu().clone();
                    read_context(&env.mem, ctx, &mut at);
                    return dispatch(env, r, &at);
                }
                resume(env, ctx)
            }
            _ => walk(env, rec, ctx, ptrs, next),
        },
    )
}

/// Calls `func(args)` with an exception registration of the host's around
/// it (as Windows' DispatchMessage guards timer callbacks): an exception
/// no handler inside the call takes ends the call, `then` getting 0; a
/// normal return takes the registration off and `then` gets EAX.
pub fn guarded_call(
    env: &mut Env,
    func: u32,
    args: Vec<u32>,
    then: impl FnOnce(&mut Env, u32) -> Ret + 'static,
) -> Ret {
    let guard = match env
        .thunks
        .slot(&mut env.mem, crate::thunks::Thunk::HostGuard)
    {
        Ok(a) => a,
        Err(e) => return Ret::Stop(e),
    };
    let teb = env.teb();
    let old = env.mem.peek_u32(teb).unwrap_or(0xFFFF_FFFF);
    let depth = env.threads.cur().frames.len() as u32;
    let esp = env.cpu().regs[reg::ESP];
    let reg_at = esp.wrapping_sub(12) & !3;
    let mut b = Vec::with_capacity(12);
    for v in [old, guard, depth] {
        b.extend(v.to_le_bytes());
    }
    if env.mem.poke(reg_at, &b).is_none() {
        return Ret::Stop(format!(
            "stack overflow guarding guest function {func:#010x} (esp {esp:#010x})"
        ));
    }
    env.cpu().regs[reg::ESP] = reg_at;
    env.mem.poke_u32(teb, reg_at);
    Ret::call(func, args, move |env, r| {
        let teb = env.teb();
        env.mem.poke_u32(teb, old);
        then(env, r)
    })
}

/// Resumes the thread from a CONTEXT in guest memory (NtContinue).
pub fn resume(env: &mut Env, ctx: u32) -> Ret {
    let mem = &env.mem;
    let cpu = &mut env.threads.cur_mut().cpu;
    match read_context(mem, ctx, cpu) {
        Some(()) => Ret::Jumped,
        None => Ret::Stop(format!(
            "NtContinue: CONTEXT at {ctx:#010x} is not readable"
        )),
    }
}

/// No frame handled it: the unhandled-exception filter, else the report.
fn unhandled(env: &mut Env, rec: u32, ctx: u32, ptrs: u32) -> Ret {
    let filter = env.unhandled_filter;
    let fatal = move |env: &mut Env| {
        let r = read_record(&env.mem, rec).unwrap_or(Record {
            code: 0,
            flags: 0,
            address: 0,
            params: vec![],
        });
        let mut at = env.cpu().clone();
        read_context(&env.mem, ctx, &mut at);
        Ret::Stop(report(&r, &at, "not handled"))
    };
    if filter == 0 {
        return fatal(env);
    }
    Ret::call(filter, vec![ptrs], move |env, r| match r {
        0xFFFF_FFFF => resume(env, ctx),
        1 => {
            // EXCEPTION_EXECUTE_HANDLER: the process ends with the exception code.
            let c = env.mem.peek_u32(rec).unwrap_or(0);
            Ret::Exit(c)
        }
        _ => fatal(env),
    })
}

/// `unhandled exception 0xc0000005 (access violation writing 0x00000000) at 0x00401234 ...; eax=...`
pub fn report(r: &Record, at: &Cpu, how: &str) -> String {
    let detail = if r.code == code::ACCESS_VIOLATION && r.params.len() >= 2 {
        let what = match r.params[0] {
            0 => "reading",
            1 => "writing",
            8 => "executing",
            _ => "at",
        };
        format!(" {what} {:#010x}", r.params[1])
    } else {
        String::new()
    };
    let g = |i| at.regs[i];
    format!(
        "exception {:#010x} ({}{detail}) at {:#010x} {how}; eax={:08x} ebx={:08x} ecx={:08x} edx={:08x} esi={:08x} edi={:08x} ebp={:08x} esp={:08x} eflags={:08x}",
        r.code,
        name(r.code),
        r.address,
        g(reg::EAX),
        g(reg::EBX),
        g(reg::ECX),
        g(reg::EDX),
        g(reg::ESI),
        g(reg::EDI),
        g(reg::EBP),
        g(reg::ESP),
        at.eflags()
    )
}

/// The registers an API call's caller has when the call returns: EIP at the
/// return address, ESP past it and `pop` bytes of arguments.
pub fn caller_context(env: &mut Env, pop: u32) -> Cpu {
    let esp = env.arg_base.wrapping_sub(4);
    let ret = env.mem.peek_u32(esp).unwrap_or(0);
    let mut at = env.cpu().clone();
    at.eip = ret;
    at.regs[reg::ESP] = esp.wrapping_add(4 + pop);
    at
}

/// RaiseException(code, flags, n, args) from an API call (stdcall, 4 args).
pub fn raise(env: &mut Env, c: u32, flags: u32, n: u32, args: u32) -> Ret {
    let at = caller_context(env, 16);
    let params = (0..n.min(15))
        .map(|k| env.mem.peek_u32(args.wrapping_add(4 * k)).unwrap_or(0))
        .collect();
    let r = Record {
        code: c,
        flags: flags & NONCONTINUABLE,
        address: at.eip,
        params,
    };
    dispatch(env, r, &at)
}

/// RtlUnwind(target, target_ip, record, value) (stdcall, 4 args): calls the
/// handlers of the frames above `target` with the unwinding flag, unlinking
/// each, then returns `value` to its caller.
pub fn unwind(env: &mut Env, target: u32, rec: u32, value: u32) -> Ret {
    let at = caller_context(env, 16);
    unwind_from(env, target, rec, &at, Box::new(move |_| Ret::Value(value)))
}

/// The unwind walk with the caller's registers `at`, then `last`.
pub fn unwind_from(
    env: &mut Env,
    target: u32,
    rec: u32,
    at: &Cpu,
    last: Box<dyn FnOnce(&mut Env) -> Ret>,
) -> Ret {
    let esp = env.cpu().regs[reg::ESP];
    let (ctx, own_rec, _, new_esp) = frame_below(esp);
    let rec = if rec == 0 {
        let r = Record {
            code: code::UNWIND,
            flags: 0,
            address: at.eip,
            params: vec![],
        };
        write_record(&mut env.mem, own_rec, &r);
        own_rec
    } else {
        rec
    };
    write_context(&mut env.mem, ctx, at);
    let flags = env.mem.peek_u32(rec + 4).unwrap_or(0)
        | UNWINDING
        | if target == 0 { EXIT_UNWIND } else { 0 };
    env.mem.poke_u32(rec + 4, flags);
    env.cpu().regs[reg::ESP] = new_esp;
    unwind_walk(env, target, rec, ctx, last)
}

fn unwind_walk(
    env: &mut Env,
    target: u32,
    rec: u32,
    ctx: u32,
    last: Box<dyn FnOnce(&mut Env) -> Ret>,
) -> Ret {
    let teb = env.teb();
    let frame = env.mem.peek_u32(teb).unwrap_or(0xFFFF_FFFF);
    if frame == target || frame == 0xFFFF_FFFF || frame == 0 {
        if frame != target && target != 0 {
            return Ret::Stop(format!(
                "RtlUnwind: target frame {target:#010x} is not on the exception chain"
            ));
        }
        return last(env);
    }
    if !frame_valid(env, frame) || (target != 0 && frame > target) {
        return Ret::Stop(format!(
            "RtlUnwind: frame {frame:#010x} is invalid or above the target {target:#010x}"
        ));
    }
    let handler = env.mem.peek_u32(frame + 4).unwrap_or(0);
    Ret::call(handler, vec![rec, frame, ctx, 0], move |env, _| {
        let next = env.mem.peek_u32(frame).unwrap_or(0xFFFF_FFFF);
        let teb = env.teb();
        env.mem.poke_u32(teb, next);
        unwind_walk(env, target, rec, ctx, last)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{mem, prot};
    use x86_cpu::user::FlatSetup;

    fn flat() -> Cpu {
        Cpu::new_flat32(&FlatSetup {
            eip: 0x40_1000,
            esp: 0x10_0000,
            fs_base: 0x7FFD_E000,
            fs_limit: 0xFFF,
        })
    }

    /// XMM0-7 and MXCSR travel through CONTEXT.ExtendedRegisters (FXSAVE
    /// layout) and come back on NtContinue.
    #[test]
    fn context_carries_xmm_and_mxcsr() {
        let mut m = Memory::new();
        let ctx = m
            .virtual_alloc(0, 0x1000, mem::RESERVE | mem::COMMIT, prot::READWRITE)
            .unwrap();
        let mut cpu = flat();
        for i in 0..8 {
            cpu.sse.xmm[i] = 0x1111_2222_3333_4444_5555_6666_7777_0000 | i as u128;
        }
        cpu.sse.mxcsr = 0x9FA1;
        write_context(&mut m, ctx, &cpu).unwrap();
        assert_eq!(m.peek_u32(ctx), Some(CONTEXT_FULL_FLOAT | CONTEXT_EXTENDED));
        assert_eq!(m.peek_u32(ctx + 0xCC + 24), Some(0x9FA1));
        assert_eq!(m.peek_u32(ctx + 0xCC + 160 + 16 * 5), Some(0x7777_0005));
        let mut back = flat();
        read_context(&m, ctx, &mut back).unwrap();
        assert_eq!((back.sse.xmm, back.sse.mxcsr), (cpu.sse.xmm, cpu.sse.mxcsr));
    }

    /// #XM names the first unmasked MXCSR flag.
    #[test]
    fn xm_maps_to_float_status() {
        let mut cpu = flat();
        let ev = Event {
            vector: 19,
            kind: EventKind::Fault,
            eip: 0x40_1000,
            next_eip: 0x40_1004,
            mem: None,
        };
        // ZE unmasked and raised (PE raised but masked).
        cpu.sse.mxcsr = (0x1F80 & !0x200) | 0x24;
        let (rec, eip) = record_of_event(&ev, &cpu);
        assert_eq!(
            (rec.code, rec.address, eip),
            (code::FLT_DIVIDE_BY_ZERO, 0x40_1000, 0x40_1000)
        );
        cpu.sse.mxcsr = (0x1F80 & !0x1000) | 0x20;
        assert_eq!(record_of_event(&ev, &cpu).0.code, code::FLT_INEXACT_RESULT);
    }
}
