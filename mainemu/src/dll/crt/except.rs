//! MSVC's SEH language handlers as the C runtime exports them:
//! `_except_handler3` (VC6-era scope tables) and `_except_handler4_common`
//! (scope tables XOR-encoded with the security cookie), with their local
//! unwind (`__finally` blocks) and global unwind (RtlUnwind).
//!
//! Owns the scope-table walk: filters and finally blocks are funclets run on
//! their function's frame (EBP = registration + 16) as guest calls; an
//! accepting filter unwinds, then execution jumps to the `__except` block
//! with the function's saved ESP. It must not dispatch exceptions (seh does).

use crate::dll::{Env, Ret};
use x86_cpu::reg;

/// Where a registration keeps its scope table, try level and the frame's values.
mod eh {
    pub const SCOPETABLE: u32 = 8;
    pub const TRYLEVEL: u32 = 12;
    /// EBP of the function that registered the frame.
    pub const EBP: u32 = 16;
}

/// The scope table's first entry and entry size (EH4 tables start with a
/// 16-byte cookie header).
fn table(env: &Env, frame: u32, cookie: Option<u32>) -> u32 {
    let t = env.mem.peek_u32(frame + eh::SCOPETABLE).unwrap_or(0);
    match cookie {
        Some(c) => (t ^ env.mem.peek_u32(c).unwrap_or(0)).wrapping_add(16),
        None => t,
    }
}

fn entry(env: &Env, t: u32, level: u32) -> (u32, u32, u32) {
    let e = t.wrapping_add(12 * level);
    let g = |o| env.mem.peek_u32(e.wrapping_add(o)).unwrap_or(0);
    (g(0), g(4), g(8))
}

/// `_local_unwind2(frame, stop)`: runs the `__finally` blocks of the try
/// levels above `stop`, innermost first, then `last`.
pub fn local_unwind(
    env: &mut Env,
    frame: u32,
    stop: i32,
    cookie: Option<u32>,
    last: Box<dyn FnOnce(&mut Env) -> Ret>,
) -> Ret {
    let level = env.mem.peek_u32(frame + eh::TRYLEVEL).unwrap_or(u32::MAX);
    // No try level: -1 in EH3 frames, -2 in EH4 frames.
    if (level as i32) < 0 || level as i32 == stop {
        return last(env);
    }
    let t = table(env, frame, cookie);
    let (prev, filter, handler) = entry(env, t, level);
    env.mem.poke_u32(frame + eh::TRYLEVEL, prev);
    if filter == 0 && handler != 0 {
        Ret::call_funclet(handler, frame + eh::EBP, move |env, _| {
            local_unwind(env, frame, stop, cookie, last)
        })
    } else {
        local_unwind(env, frame, stop, cookie, last)
    }
}

/// `_global_unwind2(frame)`: RtlUnwind to `frame`, then `last`.
pub fn global_unwind(env: &mut Env, frame: u32, last: Box<dyn FnOnce(&mut Env) -> Ret>) -> Ret {
    let at = env.cpu().clone();
    crate::seh::unwind_from(env, frame, 0, &at, last)
}

/// `_except_handler3` / `_except_handler4_common` (rec, frame, ctx).
pub fn handler(env: &mut Env, rec: u32, frame: u32, ctx: u32, cookie: Option<u32>) -> Ret {
    let flags = env.mem.peek_u32(rec + 4).unwrap_or(0);
    if flags & (crate::seh::UNWINDING | crate::seh::EXIT_UNWIND) != 0 {
        // Unwinding through this frame: its __finally blocks run.
        return local_unwind(env, frame, -1, cookie, Box::new(|_| Ret::Value(1)));
    }
    // The function's [ebp-14h] holds the exception pointers for
    // GetExceptionInformation(); they live in our own stack area.
    let esp = env.cpu().regs[reg::ESP];
    let ptrs = (esp - 0x40) & !3;
    env.mem.poke_u32(ptrs, rec);
    env.mem.poke_u32(ptrs + 4, ctx);
    env.mem.poke_u32(frame.wrapping_sub(4), ptrs);
    env.cpu().regs[reg::ESP] = ptrs - 16;
    let level = env.mem.peek_u32(frame + eh::TRYLEVEL).unwrap_or(u32::MAX);
    scan(env, frame, level, cookie)
}

fn scan(env: &mut Env, frame: u32, level: u32, cookie: Option<u32>) -> Ret {
    if (level as i32) < 0 {
        return Ret::Value(1); // ExceptionContinueSearch (-1 or EH4's -2: no try level)
    }
    let t = table(env, frame, cookie);
    let (prev, filter, handler) = entry(env, t, level);
    if filter == 0 {
        return scan(env, frame, prev, cookie);
    }
    Ret::call_funclet(filter, frame + eh::EBP, move |env, r| match r as i32 {
        r if r < 0 => Ret::Value(0), // EXCEPTION_CONTINUE_EXECUTION
        0 => scan(env, frame, prev, cookie),
        _ => {
            // EXCEPTION_EXECUTE_HANDLER: unwind the frames above, then this
            // function's inner levels, then enter the __except block.
            global_unwind(
                env,
                frame,
                Box::new(move |env| {
                    local_unwind(
                        env,
                        frame,
                        level as i32,
                        cookie,
                        Box::new(move |env| {
                            env.mem.poke_u32(frame + eh::TRYLEVEL, prev);
                            let esp = env.mem.peek_u32(frame.wrapping_sub(8)).unwrap_or(0);
                            let cpu = env.cpu();
                            cpu.regs[reg::EBP] = frame + eh::EBP;
                            cpu.regs[reg::ESP] = esp;
                            cpu.eip = handler;
                            Ret::Jumped
                        }),
                    )
                }),
            )
        }
    })
}
