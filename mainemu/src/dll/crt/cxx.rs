//! MSVC C++ exceptions on x86: `_CxxThrowException` (raises 0xE06D7363
//! with the object and its ThrowInfo) and `__CxxFrameHandler(3)` (the
//! language handler of functions with try/catch or objects to destroy,
//! entered with EAX = the function's FuncInfo).
//!
//! The frame handler finds a catch block whose type matches one of the
//! thrown object's catchable types (by type name; `catch(...)` matches
//! everything C++), builds the catch object (reference, bitwise copy or the
//! copy constructor), unwinds the frames above (RtlUnwind), runs the
//! function's unwind actions down to the try block's state, calls the catch
//! funclet, destroys the exception object and continues at the address the
//! funclet returns with the function's ESP and EBP. In the unwind pass it
//! runs the frame's unwind actions. `throw;` rethrows the exception whose
//! catch block is running.
//!
//! Owns the FuncInfo / ThrowInfo layouts and the matching. It must not
//! dispatch exceptions (seh does) nor handle SEH scope tables (except does).
//! Not modelled: exception specifications, virtual-base catch adjustments,
//! catching non-C++ exceptions with `catch(...)` (/EHa).

use crate::dll::{Env, Ret};
use crate::seh::{self, code, Record};
use x86_cpu::reg;

/// The magic numbers a FuncInfo or an exception's first parameter starts with.
const MAGIC_MIN: u32 = 0x1993_0520;
const MAGIC_MAX: u32 = 0x1993_0522;
/// HandlerType adjectives and CatchableType properties.
const HT_IS_REFERENCE: u32 = 8;
const CT_IS_SIMPLE_TYPE: u32 = 1;
/// ExceptionContinueSearch.
const CONTINUE_SEARCH: u32 = 1;

/// The registration's fields: [frame+8] the state, EBP = frame + 12, and
/// the function's saved ESP just below the registration.
const STATE: u32 = 8;
const EBP: u32 = 12;

fn rd(env: &Env, a: u32) -> u32 {
    env.mem.peek_u32(a).unwrap_or(0)
}

/// A TypeDescriptor's decorated name (after its vftable and spare words).
fn type_name(env: &Env, td: u32) -> Option<Vec<u8>> {
    if td == 0 {
        return None;
    }
    env.mem.peek_cstr(td + 8, 4096)
}

/// `_CxxThrowException(obj, throw_info)`; (0, 0) rethrows the exception
/// being handled.
pub fn throw(env: &mut Env, obj: u32, info: u32) -> Ret {
    let (obj, info) = if info == 0 {
        match env.crt.cxx_caught.pop() {
            Some(x) => x,
            None => {
                return Ret::Stop("C++ `throw;` with no exception being handled (terminate)".into())
            }
        }
    } else {
        (obj, info)
    };
    raise(env, obj, info, 8)
}

/// Raises C++ exception `obj` of ThrowInfo `info` from an API call that
/// pops `pop` bytes of arguments (the runtime's own throws: bad_cast,
/// bad_typeid).
pub fn raise(env: &mut Env, obj: u32, info: u32, pop: u32) -> Ret {
    let at = seh::caller_context(env, pop);
    let r = Record {
        code: code::CPP_EH,
        flags: seh::NONCONTINUABLE,
        address: at.eip,
        params: vec![MAGIC_MIN, obj, info],
    };
    seh::dispatch(env, r, &at)
}

/// Runs the unwind actions from the frame's current state down to `target`,
/// then `last`.
fn unwind_to(
    env: &mut Env,
    frame: u32,
    func: u32,
    target: i32,
    last: Box<dyn FnOnce(&mut Env) -> Ret>,
) -> Ret {
    let max = rd(env, func + 4) as i32;
    let map = rd(env, func + 8);
    let cur = rd(env, frame + STATE) as i32;
    if cur == target || cur < 0 || cur >= max {
        return last(env);
    }
    let to = rd(env, map + 8 * cur as u32);
    let action = rd(env, map + 8 * cur as u32 + 4);
    env.mem.poke_u32(frame + STATE, to);
    if action == 0 {
        return unwind_to(env, frame, func, target, last);
    }
    Ret::call_funclet(action, frame + EBP, move |env, _| {
        unwind_to(env, frame, func, target, last)
    })
}

/// The catchable type of the thrown object a handler type matches.
fn matching_type(env: &Env, info: u32, handler_type: u32) -> Option<u32> {
    let want = type_name(env, handler_type)?;
    let arr = rd(env, info + 12);
    let n = rd(env, arr).min(64);
    (0..n)
        .map(|k| rd(env, arr + 4 + 4 * k))
        .find(|&ct| type_name(env, rd(env, ct + 4)).as_ref() == Some(&want))
}

/// `__CxxFrameHandler(rec, frame, ctx, dispatcher)` with the FuncInfo in EAX.
pub fn frame_handler(env: &mut Env, rec: u32, frame: u32) -> Ret {
    let func = env.cpu().regs[reg::EAX];
    if !(MAGIC_MIN..=MAGIC_MAX).contains(&rd(env, func)) {
        return Ret::Value(CONTINUE_SEARCH);
    }
    let flags = rd(env, rec + 4);
    if flags & (seh::UNWINDING | seh::EXIT_UNWIND) != 0 {
        return unwind_to(
            env,
            frame,
            func,
            -1,
            Box::new(|_| Ret::Value(CONTINUE_SEARCH)),
        );
    }
    let (rcode, nparams) = (rd(env, rec), rd(env, rec + 16));
    let (magic, obj, info) = (rd(env, rec + 20), rd(env, rec + 24), rd(env, rec + 28));
    if rcode != code::CPP_EH || nparams < 3 || !(MAGIC_MIN..=MAGIC_MAX).contains(&magic) {
        return Ret::Value(CONTINUE_SEARCH);
    }
    let state = rd(env, frame + STATE) as i32;
    let (ntry, tries) = (rd(env, func + 12).min(1024), rd(env, func + 16));
    for t in 0..ntry {
        let e = tries + 20 * t;
        // TryBlockMapEntry: tryLow, tryHigh, catchHigh (unused here), nCatches, pHandlerArray.
        let (low, high) = (rd(env, e) as i32, rd(env, e + 4) as i32);
        if state < low || state > high {
            continue;
        }
        let (ncatch, handlers) = (rd(env, e + 12).min(1024), rd(env, e + 16));
        for h in 0..ncatch {
            let ht = handlers + 16 * h;
            let (adj, ty, disp, funclet) = (
                rd(env, ht),
                rd(env, ht + 4),
                rd(env, ht + 8),
                rd(env, ht + 12),
            );
            let ct = if ty == 0 || type_name(env, ty).is_some_and(|n| n.is_empty()) {
                None // catch(...)
            } else {
                match matching_type(env, info, ty) {
                    Some(ct) => Some(ct),
                    None => continue,
                }
            };
            return catch(
                env,
                rec,
                frame,
                func,
                low,
                high,
                obj,
                info,
                (adj, disp, funclet),
                ct,
            );
        }
    }
    Ret::Value(CONTINUE_SEARCH)
}

/// Builds the catch object, unwinds, runs the catch funclet and continues.
#[allow(clippy::too_many_arguments)]
fn catch(
    env: &mut Env,
    rec: u32,
    frame: u32,
    func: u32,
    low: i32,
    high: i32,
    obj: u32,
    info: u32,
    (adj, disp, funclet): (u32, u32, u32),
    ct: Option<u32>,
) -> Ret {
    let ebp = frame + EBP;
    let after_copy = move |env: &mut Env| -> Ret {
        let at = env.cpu().clone();
        seh::unwind_from(
            env,
            frame,
            rec,
            &at,
            Box::new(move |env| {
                unwind_to(
                    env,
                    frame,
                    func,
                    low,
                    Box::new(move |env| {
                        env.mem.poke_u32(frame + STATE, (high + 1) as u32);
                        env.crt.cxx_caught.push((obj, info));
                        Ret::call_funclet(funclet, ebp, move |env, cont| {
                            // The catch block ended without rethrowing: the
                            // object is destroyed, then the function goes on.
                            if env.crt.cxx_caught.last() == Some(&(obj, info)) {
                                env.crt.cxx_caught.pop();
                            }
                            let resume = move |env: &mut Env| {
                                let esp = rd(env, frame.wrapping_sub(4));
                                let cpu = env.cpu();
                                cpu.regs[reg::EBP] = ebp;
                                cpu.regs[reg::ESP] = esp;
                                cpu.eip = cont;
                                Ret::Jumped
                            };
                            let dtor = rd(env, info + 4);
                            if dtor == 0 || obj == 0 {
                                return resume(env);
                            }
                            env.cpu().regs[reg::ECX] = obj;
                            Ret::call(dtor, vec![], move |env, _| resume(env))
                        })
                    }),
                )
            }),
        )
    };
    let (Some(ct), true) = (ct, disp != 0) else {
        return after_copy(env);
    };
    let dest = ebp.wrapping_add(disp);
    let src = obj.wrapping_add(rd(env, ct + 8)); // thisDisplacement.mdisp
    if adj & HT_IS_REFERENCE != 0 {
        env.mem.poke_u32(dest, src);
        return after_copy(env);
    }
    let (props, size, copy) = (rd(env, ct), rd(env, ct + 20), rd(env, ct + 24));
    if props & CT_IS_SIMPLE_TYPE != 0 || copy == 0 {
        if let Some(b) = env.read_bytes(src, size.min(1 << 16)) {
            env.mem.poke(dest, &b);
        }
        return after_copy(env);
    }
    // The copy constructor is thiscall: ECX = the catch object.
    env.cpu().regs[reg::ECX] = dest;
    Ret::call(copy, vec![src], move |env, _| after_copy(env))
}
