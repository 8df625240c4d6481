//! kernel32's threads and synchronization: CreateThread and friends, waits
//! on events, mutexes, semaphores and threads, critical sections, SRW locks,
//! condition variables, one-time initialization, Sleep, interlocked calls.
//!
//! Owns what "signaled" means for each object and what a successful wait
//! takes (an auto-reset event, a semaphore count, a mutex ownership). A
//! wait that cannot be met returns [`Ret::Block`]: the scheduler runs other
//! threads and retries the call when something is signaled or its deadline
//! (kept in the thread across retries) comes. One guest thread runs at a
//! time and an API call is atomic, so the interlocked calls and critical
//! sections need no host atomics. It must not schedule (threads does).

use crate::dll::{Env, Ret, DISPATCHES_PER_SECOND};
use crate::files::err;
use crate::handles::{Object, CURRENT_PROCESS, CURRENT_THREAD};
use crate::threads::State;

pub const WAIT_OBJECT_0: u32 = 0;
pub const WAIT_ABANDONED: u32 = 0x80;
pub const WAIT_TIMEOUT: u32 = 258;
pub const WAIT_FAILED: u32 = 0xFFFF_FFFF;
pub const INFINITE: u32 = 0xFFFF_FFFF;

/// The deadline of the current wait: set on the first try, kept across retries.
pub(super) fn deadline(env: &mut Env, ms: u32) -> Option<u64> {
    let clock = env.clock;
    let t = env.threads.cur_mut();
    let d = *t.wait_deadline.get_or_insert(if ms == INFINITE {
        u64::MAX
    } else {
        clock + ms as u64 * (DISPATCHES_PER_SECOND / 1000)
    });
    (d != u64::MAX).then_some(d)
}

/// Whether `h` is signaled for the current thread (no side effect).
fn signaled(env: &Env, h: u32) -> Result<bool, u32> {
    let me = env.thread_id();
    match env.handles.get(h) {
        Some(Object::Event { signaled, .. }) => Ok(*signaled),
        Some(Object::Mutex { owner, .. }) => Ok(owner.is_none_or(|(t, _)| t == me)),
        Some(Object::Semaphore { count, .. }) => Ok(*count > 0),
        Some(Object::Thread(id)) => Ok(env
            .threads
            .by_id(*id)
            .is_none_or(|t| t.state == State::Exited)),
        Some(Object::Console(crate::handles::ConsoleKind::Input)) => {
            Ok(super::console_buffer::input_signaled(env))
        }
        Some(Object::File(_)) | Some(Object::Console(_)) | Some(Object::Null) => Ok(true),
        Some(Object::Process(code)) => Ok(*code != crate::threads::STILL_ACTIVE),
        Some(_) => Err(err::INVALID_HANDLE),
        None if h == CURRENT_PROCESS => Ok(false),
        None if h == CURRENT_THREAD => Ok(false),
        None => Err(err::INVALID_HANDLE),
    }
}

/// Takes what a satisfied wait on `h` consumes; true when the mutex was abandoned.
fn acquire(env: &mut Env, h: u32) -> bool {
    let me = env.thread_id();
    match env.handles.get_mut(h) {
        Some(Object::Event {
            manual: false,
            signaled,
        }) => *signaled = false,
        Some(Object::Mutex { owner, abandoned }) => {
            *owner = Some(match *owner {
                Some((t, n)) if t == me => (t, n + 1),
                _ => (me, 1),
            });
            return std::mem::replace(abandoned, false);
        }
        Some(Object::Semaphore { count, .. }) => *count -= 1,
        _ => {}
    }
    false
}

/// WaitForMultipleObjects (and the single-object form with n = 1).
pub fn wait(env: &mut Env, handles: &[u32], all: bool, ms: u32) -> Ret {
    let mut ready = Vec::with_capacity(handles.len());
    for &h in handles {
        match signaled(env, h) {
            Ok(s) => ready.push(s),
            Err(e) => return Ret::Value(env.fail(e, WAIT_FAILED)),
        }
    }
    let hit = if all {
        ready.iter().all(|&r| r).then_some(0)
    } else {
        ready.iter().position(|&r| r)
    };
    if let Some(i) = hit {
        let mut abandoned = false;
        if all {
            for &h in handles {
                abandoned |= acquire(env, h);
            }
        } else {
            abandoned = acquire(env, handles[i]);
        }
        return Ret::Value(
            if abandoned {
                WAIT_ABANDONED
            } else {
                WAIT_OBJECT_0
            } + i as u32,
        );
    }
    match deadline(env, ms) {
        Some(d) if env.clock >= d => Ret::Value(WAIT_TIMEOUT),
        d => Ret::Block { deadline: d },
    }
}

/// One RegisterWaitForSingleObject registration: a thread of its own
/// waits on `object` and calls `callback(context, timed_out)`, once or
/// each time, until UnregisterWait(Ex) cancels it.
#[derive(Clone, Debug)]
pub struct RegisteredWait {
    pub object: u32,
    pub callback: u32,
    pub context: u32,
    pub ms: u32,
    pub once: bool,
    pub cancelled: bool,
}

/// WT_EXECUTEONLYONCE.
const WT_EXECUTEONLYONCE: u32 = 8;

fn register_wait(
    env: &mut Env,
    out: u32,
    object: u32,
    callback: u32,
    context: u32,
    ms: u32,
    flags: u32,
) -> bool {
    if out == 0 || callback == 0 {
        return env.fail(err::INVALID_PARAMETER, false);
    }
    if signaled(env, object).is_err() {
        return env.fail(err::INVALID_HANDLE, false);
    }
    // The wait handle is an event nobody signals: a handle value of its own.
    let h = env.handles.add(Object::Event {
        manual: true,
        signaled: false,
    });
    env.k32.waits.insert(
        h,
        RegisteredWait {
            object,
            callback,
            context,
            ms,
            once: flags & WT_EXECUTEONLYONCE != 0,
            cancelled: false,
        },
    );
    let n = crate::pe::ImportName::Name {
        hint: 0,
        name: "(mainemu registered wait)".into(),
    };
    let start = crate::modules::bind_import(env, "kernel32.dll", &n).unwrap_or(0);
    if create_thread(env, 0x1_0000, start, h, 0, 0) == 0 {
        env.k32.waits.remove(&h);
        return false;
    }
    env.mem.poke_u32(out, h);
    true
}

/// The registered wait's thread: waits (blocking like WaitForSingleObject),
/// calls the callback as a guest call, and goes round again unless the
/// registration was for one call or was cancelled.
fn wait_thread(env: &mut Env, h: u32) -> Ret {
    let Some(w) = env.k32.waits.get(&h).cloned() else {
        return Ret::Value(0);
    };
    if w.cancelled {
        return Ret::Value(0);
    }
    let r = match wait(env, &[w.object], false, w.ms) {
        Ret::Value(r) => r,
        other => return other,
    };
    if r == WAIT_FAILED {
        return Ret::Value(0);
    }
    env.threads.cur_mut().wait_deadline = None;
    let timed_out = (r == WAIT_TIMEOUT) as u32;
    Ret::call(w.callback, vec![w.context, timed_out], move |env, _| {
        if w.once {
            // Done; the registration stays until UnregisterWait.
            if let Some(w) = env.k32.waits.get_mut(&h) {
                w.cancelled = true;
            }
            return Ret::Value(0);
        }
        wait_thread(env, h)
    })
}

fn unregister_wait(env: &mut Env, h: u32) -> bool {
    match env.k32.waits.remove(&h) {
        Some(_) => {
            // Its thread, if still waiting, retries, finds no registration and ends.
            env.threads.epoch += 1;
            crate::io::close(env, h).ok();
            true
        }
        None => env.fail(err::INVALID_HANDLE, false),
    }
}

fn read_handles(env: &mut Env, n: u32, p: u32) -> Option<Vec<u32>> {
    if n == 0 || n > 64 {
        return None;
    }
    (0..n).map(|k| env.mem.peek_u32(p + 4 * k)).collect()
}

/// Creates or opens a named object: an existing one of that name gets a new
/// handle and ERROR_ALREADY_EXISTS.
fn create_named(env: &mut Env, name: u32, wide: bool, obj: Object) -> u32 {
    let name = env.read_str(name, wide).filter(|s| !s.is_empty());
    if let Some(n) = &name {
        if let Some(id) = env.handles.find_named(n) {
            if env.handles.by_id(id).map(std::mem::discriminant)
                != Some(std::mem::discriminant(&obj))
            {
                return env.fail(6, 0); // ERROR_INVALID_HANDLE: the name is another kind
            }
            env.last_error = err::ALREADY_EXISTS;
            return env.handles.open_id(id);
        }
    }
    env.last_error = 0;
    env.handles.add_named(obj, name)
}

fn open_named(env: &mut Env, name: u32, wide: bool) -> u32 {
    let Some(n) = env.read_str(name, wide) else {
        return env.fail(err::INVALID_PARAMETER, 0);
    };
    match env.handles.find_named(&n) {
        Some(id) => env.handles.open_id(id),
        None => env.fail(err::FILE_NOT_FOUND, 0),
    }
}

fn set_event(env: &mut Env, h: u32, to: bool) -> bool {
    match env.handles.get_mut(h) {
        Some(Object::Event { signaled, .. }) => {
            *signaled = to;
            if to {
                env.threads.epoch += 1;
            }
            true
        }
        _ => env.fail(err::INVALID_HANDLE, false),
    }
}

/// WAIT_IO_COMPLETION: an alertable wait ended by user APCs.
pub const WAIT_IO_COMPLETION: u32 = 0xC0;

/// An alertable wait with user APCs queued for the caller: they run, oldest
/// first (each `func(data)`), and the wait answers WAIT_IO_COMPLETION.
/// `None` when none is queued. (An APC queued while the thread waits wakes
/// it: QueueUserAPC bumps the epoch, and the re-made call runs it.)
pub fn run_apcs(env: &mut Env) -> Option<Ret> {
    let (func, data) = env.threads.cur_mut().apcs.pop_front()?;
    env.threads.cur_mut().wait_deadline = None;
    Some(Ret::call(func, vec![data], |env, _| {
        run_apcs(env).unwrap_or(Ret::Value(WAIT_IO_COMPLETION))
    }))
}

/// The thread id a thread handle (or the pseudo handle) names.
pub fn thread_of(env: &Env, h: u32) -> Option<u32> {
    if h == CURRENT_THREAD {
        return Some(env.thread_id());
    }
    match env.handles.get(h) {
        Some(Object::Thread(id)) => Some(*id),
        _ => None,
    }
}

/// CRITICAL_SECTION fields.
mod cs {
    pub const LOCK_COUNT: u32 = 4;
    pub const RECURSION: u32 = 8;
    pub const OWNER: u32 = 12;
}

fn cs_init(env: &mut Env, p: u32, spin: u32) -> bool {
    let mut b = [0u8; 24];
    b[4..8].copy_from_slice(&(-1i32).to_le_bytes());
    b[20..24].copy_from_slice(&spin.to_le_bytes());
    env.mem.poke(p, &b).is_some()
}

fn cs_try(env: &mut Env, p: u32) -> bool {
    let me = env.thread_id();
    let owner = env.mem.peek_u32(p + cs::OWNER).unwrap_or(0);
    let rec = env.mem.peek_u32(p + cs::RECURSION).unwrap_or(0);
    if owner == 0 || rec == 0 || owner == me {
        let lc = env.mem.peek_u32(p + cs::LOCK_COUNT).unwrap_or(u32::MAX);
        env.mem.poke_u32(p + cs::OWNER, me);
        env.mem
            .poke_u32(p + cs::RECURSION, if owner == me { rec + 1 } else { 1 });
        env.mem.poke_u32(p + cs::LOCK_COUNT, lc.wrapping_add(1));
        true
    } else {
        false
    }
}

fn cs_leave(env: &mut Env, p: u32) {
    let rec = env.mem.peek_u32(p + cs::RECURSION).unwrap_or(0);
    let lc = env.mem.peek_u32(p + cs::LOCK_COUNT).unwrap_or(0);
    env.mem.poke_u32(p + cs::LOCK_COUNT, lc.wrapping_sub(1));
    if rec <= 1 {
        env.mem.poke_u32(p + cs::RECURSION, 0);
        env.mem.poke_u32(p + cs::OWNER, 0);
        env.threads.epoch += 1;
    } else {
        env.mem.poke_u32(p + cs::RECURSION, rec - 1);
    }
}

/// SRW lock word: bit 0 exclusive, the rest twice the shared count.
fn srw_acquire(env: &mut Env, p: u32, exclusive: bool, block: bool) -> Ret {
    let v = env.mem.peek_u32(p).unwrap_or(0);
    let ok = if exclusive { v == 0 } else { v & 1 == 0 };
    if ok {
        env.mem.poke_u32(p, if exclusive { 1 } else { v + 2 });
        return Ret::Value(1);
    }
    if block {
        Ret::Block { deadline: None }
    } else {
        Ret::Value(0)
    }
}

fn srw_release(env: &mut Env, p: u32, exclusive: bool) {
    let v = env.mem.peek_u32(p).unwrap_or(0);
    let nv = if exclusive { 0 } else { v.saturating_sub(2) };
    env.mem.poke_u32(p, nv);
    env.threads.epoch += 1;
}

/// SleepConditionVariable{CS,SRW}: release the lock, wait for a wake (or the
/// timeout), take the lock back. Wakes are generations per variable.
fn cv_sleep(env: &mut Env, cv: u32, lock: u32, ms: u32, srw: Option<bool>) -> Ret {
    let gen = env.cv_generation(cv);
    let t = env.threads.cur_mut();
    let first = t.cv_wait.is_none();
    if first {
        t.cv_wait = Some((cv, gen, false));
        match srw {
            None => cs_leave(env, lock),
            Some(excl) => srw_release(env, lock, excl),
        }
    }
    let (_, g0, woken) = env.threads.cur().cv_wait.expect("set above");
    let d = deadline(env, ms);
    let timed_out = d.is_some_and(|d| env.clock >= d);
    if woken || gen != g0 || timed_out {
        env.threads.cur_mut().cv_wait = Some((cv, g0, true));
        let got = match srw {
            None => cs_try(env, lock),
            Some(excl) => srw_acquire(env, lock, excl, false) == Ret::Value(1),
        };
        if !got {
            return Ret::Block { deadline: None };
        }
        env.threads.cur_mut().cv_wait = None;
        if timed_out && gen == g0 && !woken {
            return Ret::Value(env.fail(1460, 0)); // ERROR_TIMEOUT
        }
        return Ret::Value(1);
    }
    Ret::Block { deadline: d }
}

pub fn create_thread(
    env: &mut Env,
    stack: u32,
    start: u32,
    param: u32,
    flags: u32,
    tid: u32,
) -> u32 {
    let id = match crate::process::new_thread(
        env,
        start,
        param,
        if stack == 0 { 0x10_0000 } else { stack },
    ) {
        Ok(id) => id,
        Err(_) => return env.fail(8, 0),
    };
    if flags & 4 != 0 {
        let t = env.threads.by_id_mut(id).expect("just made");
        t.state = State::Suspended;
        t.suspend_count = 1;
    }
    if tid != 0 {
        env.mem.poke_u32(tid, id);
    }
    env.handles.add(Object::Thread(id))
}

/// Pushes `entry` on an SLIST; returns the previous first entry.
fn slist_push(env: &mut Env, head: u32, entry: u32) -> u32 {
    let first = env.mem.peek_u32(head).unwrap_or(0);
    let ds = env.mem.peek_u32(head + 4).unwrap_or(0);
    env.mem.poke_u32(entry, first);
    env.mem.poke_u32(head, entry);
    let depth = (ds & 0xFFFF).wrapping_add(1) & 0xFFFF;
    let seq = (ds >> 16).wrapping_add(1) & 0xFFFF;
    env.mem.poke_u32(head + 4, seq << 16 | depth);
    first
}

/// Pops the first entry of an SLIST (0 when empty).
fn slist_pop(env: &mut Env, head: u32) -> u32 {
    let first = env.mem.peek_u32(head).unwrap_or(0);
    if first == 0 {
        return 0;
    }
    let ds = env.mem.peek_u32(head + 4).unwrap_or(0);
    let next = env.mem.peek_u32(first).unwrap_or(0);
    env.mem.poke_u32(head, next);
    let depth = (ds & 0xFFFF).wrapping_sub(1) & 0xFFFF;
    let seq = (ds >> 16).wrapping_add(1) & 0xFFFF;
    env.mem.poke_u32(head + 4, seq << 16 | depth);
    first
}

crate::dll! { "(kernel32 sync)";
    stdcall fn CreateEventA(env, sa: u32, manual: bool, initial: bool, name: u32) -> u32 {
        create_named(env, name, false, Object::Event { manual, signaled: initial })
    }
    stdcall fn CreateEventW(env, sa: u32, manual: bool, initial: bool, name: u32) -> u32 {
        create_named(env, name, true, Object::Event { manual, signaled: initial })
    }
    stdcall fn CreateEventExW(env, sa: u32, name: u32, flags: u32, access: u32) -> u32 {
        create_named(env, name, true, Object::Event { manual: flags & 1 != 0, signaled: flags & 2 != 0 })
    }
    stdcall fn OpenEventA(env, access: u32, inherit: bool, name: u32) -> u32 { open_named(env, name, false) }
    stdcall fn OpenEventW(env, access: u32, inherit: bool, name: u32) -> u32 { open_named(env, name, true) }
    stdcall fn SetEvent(env, h: u32) -> bool { set_event(env, h, true) }
    stdcall fn ResetEvent(env, h: u32) -> bool { set_event(env, h, false) }
    stdcall fn PulseEvent(env, h: u32) -> bool { set_event(env, h, false) }
    stdcall fn CreateMutexA(env, sa: u32, owned: bool, name: u32) -> u32 {
        let me = env.thread_id();
        create_named(env, name, false, Object::Mutex { owner: owned.then_some((me, 1)), abandoned: false })
    }
    stdcall fn CreateMutexW(env, sa: u32, owned: bool, name: u32) -> u32 {
        let me = env.thread_id();
        create_named(env, name, true, Object::Mutex { owner: owned.then_some((me, 1)), abandoned: false })
    }
    stdcall fn OpenMutexA(env, access: u32, inherit: bool, name: u32) -> u32 { open_named(env, name, false) }
    stdcall fn OpenMutexW(env, access: u32, inherit: bool, name: u32) -> u32 { open_named(env, name, true) }
    stdcall fn ReleaseMutex(env, h: u32) -> bool {
        let me = env.thread_id();
        match env.handles.get_mut(h) {
            Some(Object::Mutex { owner, .. }) => match *owner {
                Some((t, n)) if t == me => {
                    *owner = if n > 1 { Some((t, n - 1)) } else { None };
                    env.threads.epoch += 1;
                    true
                }
                _ => env.fail(288, false), // ERROR_NOT_OWNER
            },
            _ => env.fail(err::INVALID_HANDLE, false),
        }
    }
    stdcall fn CreateSemaphoreA(env, sa: u32, initial: i32, max: i32, name: u32) -> u32 {
        if max <= 0 || initial < 0 || initial > max { return env.fail(err::INVALID_PARAMETER, 0); }
        create_named(env, name, false, Object::Semaphore { count: initial as u32, max: max as u32 })
    }
    stdcall fn CreateSemaphoreW(env, sa: u32, initial: i32, max: i32, name: u32) -> u32 {
        if max <= 0 || initial < 0 || initial > max { return env.fail(err::INVALID_PARAMETER, 0); }
        create_named(env, name, true, Object::Semaphore { count: initial as u32, max: max as u32 })
    }
    stdcall fn OpenSemaphoreA(env, access: u32, inherit: bool, name: u32) -> u32 { open_named(env, name, false) }
    stdcall fn OpenSemaphoreW(env, access: u32, inherit: bool, name: u32) -> u32 { open_named(env, name, true) }
    stdcall fn ReleaseSemaphore(env, h: u32, n: i32, prev: u32) -> bool {
        match env.handles.get_mut(h) {
            Some(Object::Semaphore { count, max }) => {
                if n <= 0 || *count as u64 + n as u64 > *max as u64 { return env.fail(298, false); } // ERROR_TOO_MANY_POSTS
                let old = *count;
                *count += n as u32;
                if prev != 0 { env.mem.poke_u32(prev, old); }
                env.threads.epoch += 1;
                true
            }
            _ => env.fail(err::INVALID_HANDLE, false),
        }
    }
    stdcall fn WaitForSingleObject(env, h: u32, ms: u32) -> Ret { wait(env, &[h], false, ms) }
    stdcall fn WaitForSingleObjectEx(env, h: u32, ms: u32, alertable: bool) -> Ret {
        if alertable { if let Some(r) = run_apcs(env) { return r; } }
        wait(env, &[h], false, ms)
    }
    stdcall fn QueueUserAPC(env, func: u32, h: u32, data: u32) -> bool {
        let Some(tid) = thread_of(env, h) else { return env.fail(err::INVALID_HANDLE, false) };
        match env.threads.by_id_mut(tid) {
            Some(t) if t.state != State::Exited => { t.apcs.push_back((func, data)); env.threads.epoch += 1; true }
            _ => env.fail(err::INVALID_HANDLE, false),
        }
    }
    stdcall fn WaitForMultipleObjects(env, n: u32, p: u32, all: bool, ms: u32) -> Ret {
        match read_handles(env, n, p) { Some(v) => wait(env, &v, all, ms), None => Ret::Value(env.fail(err::INVALID_PARAMETER, WAIT_FAILED)) }
    }
    stdcall fn WaitForMultipleObjectsEx(env, n: u32, p: u32, all: bool, ms: u32, alertable: bool) -> Ret {
        if alertable { if let Some(r) = run_apcs(env) { return r; } }
        match read_handles(env, n, p) { Some(v) => wait(env, &v, all, ms), None => Ret::Value(env.fail(err::INVALID_PARAMETER, WAIT_FAILED)) }
    }
    stdcall fn SignalObjectAndWait(env, sig: u32, h: u32, ms: u32, alertable: bool) -> Ret {
        // The signal happens once, on the first try (a retry only waits).
        if env.threads.cur().wait_deadline.is_none() {
            let me = env.thread_id();
            match env.handles.get_mut(sig) {
                Some(Object::Event { signaled, .. }) => *signaled = true,
                Some(Object::Semaphore { count, .. }) => *count += 1,
                Some(Object::Mutex { owner: o @ Some(_), .. }) if o.is_some_and(|(t, _)| t == me) => *o = None,
                _ => return Ret::Value(env.fail(err::INVALID_HANDLE, WAIT_FAILED)),
            }
            env.threads.epoch += 1;
        }
        wait(env, &[h], false, ms)
    }
    stdcall fn Sleep(env, ms: u32) -> Ret { sleep(env, ms) }
    stdcall fn SleepEx(env, ms: u32, alertable: bool) -> Ret {
        if alertable { if let Some(r) = run_apcs(env) { return r; } }
        sleep(env, ms)
    }
    stdcall fn SwitchToThread(env) -> bool { env.threads.slice_end = 0; false }
    stdcall fn RegisterWaitForSingleObject(env, out: u32, object: u32, callback: u32, context: u32, ms: u32, flags: u32) -> bool {
        register_wait(env, out, object, callback, context, ms, flags)
    }
    stdcall fn UnregisterWait(env, h: u32) -> bool { unregister_wait(env, h) }
    stdcall fn UnregisterWaitEx(env, h: u32, event: u32) -> bool { unregister_wait(env, h) }
    stdcall fn registered_wait_thread as "(mainemu registered wait)" (env, h: u32) -> Ret { wait_thread(env, h) }
    stdcall fn CreateThread(env, sa: u32, stack: u32, start: u32, param: u32, flags: u32, tid: u32) -> u32 {
        create_thread(env, stack, start, param, flags, tid)
    }
    stdcall fn ExitThread(env, code: u32) -> Ret { Ret::ExitThread(code) }
    stdcall fn TerminateThread(env, h: u32, code: u32) -> Ret {
        let Some(id) = thread_of(env, h) else { return Ret::Value(env.fail(err::INVALID_HANDLE, 0)) };
        if id == env.thread_id() { return Ret::ExitThread(code); }
        if let Some(t) = env.threads.by_id_mut(id) {
            if t.state != State::Exited { t.state = State::Exited; t.exit_code = code; t.frames.clear(); }
        }
        env.threads.epoch += 1;
        Ret::Value(1)
    }
    stdcall fn GetExitCodeThread(env, h: u32, out: u32) -> bool {
        let Some(id) = thread_of(env, h) else { return env.fail(err::INVALID_HANDLE, false) };
        let code = env.threads.by_id(id).map_or(0, |t| t.exit_code);
        env.mem.poke_u32(out, code).is_some()
    }
    stdcall fn ResumeThread(env, h: u32) -> u32 {
        let Some(id) = thread_of(env, h) else { return env.fail(err::INVALID_HANDLE, 0xFFFF_FFFF) };
        let Some(t) = env.threads.by_id_mut(id) else { return env.fail(err::INVALID_HANDLE, 0xFFFF_FFFF) };
        let prev = t.suspend_count;
        if prev > 0 {
            t.suspend_count -= 1;
            if t.suspend_count == 0 && t.state == State::Suspended { t.state = State::Runnable; }
        }
        prev
    }
    stdcall fn SuspendThread(env, h: u32) -> u32 {
        let Some(id) = thread_of(env, h) else { return env.fail(err::INVALID_HANDLE, 0xFFFF_FFFF) };
        let me = env.thread_id();
        let Some(t) = env.threads.by_id_mut(id) else { return env.fail(err::INVALID_HANDLE, 0xFFFF_FFFF) };
        let prev = t.suspend_count;
        t.suspend_count += 1;
        if t.state == State::Runnable && id != me { t.state = State::Suspended; }
        prev
    }
    stdcall fn GetThreadId(env, h: u32) -> u32 { thread_of(env, h).unwrap_or(0) }
    stdcall fn GetCurrentThreadId(env) -> u32 { env.thread_id() }
    stdcall fn GetThreadPriority(env, h: u32) -> i32 { 0 }
    stdcall fn SetThreadPriority(env, h: u32, p: i32) -> bool { true }
    stdcall fn SetThreadPriorityBoost(env, h: u32, off: bool) -> bool { true }
    stdcall fn SetThreadAffinityMask(env, h: u32, mask: u32) -> u32 { 1 }
    stdcall fn SetThreadIdealProcessor(env, h: u32, p: u32) -> u32 { 0 }
    stdcall fn InitializeCriticalSection(env, p: u32) { cs_init(env, p, 0); }
    // Interlocked singly linked lists: an API call is atomic on the guest
    // clock, so the header (next, depth, sequence) is updated plainly.
    stdcall fn InitializeSListHead(env, head: u32) { env.mem.poke(head, &[0; 8]); }
    stdcall fn QueryDepthSList(env, head: u32) -> u32 { env.mem.peek_u32(head + 4).unwrap_or(0) & 0xFFFF }
    stdcall fn InterlockedFlushSList(env, head: u32) -> u32 {
        let first = env.mem.peek_u32(head).unwrap_or(0);
        let seq = env.mem.peek_u32(head + 4).unwrap_or(0) & 0xFFFF_0000;
        env.mem.poke_u32(head, 0);
        env.mem.poke_u32(head + 4, seq);
        first
    }
    stdcall fn InterlockedPushEntrySList(env, head: u32, entry: u32) -> u32 { slist_push(env, head, entry) }
    stdcall fn InterlockedPopEntrySList(env, head: u32) -> u32 { slist_pop(env, head) }
    stdcall fn InitializeCriticalSectionAndSpinCount(env, p: u32, spin: u32) -> bool { cs_init(env, p, spin) }
    stdcall fn InitializeCriticalSectionEx(env, p: u32, spin: u32, flags: u32) -> bool { cs_init(env, p, spin) }
    stdcall fn SetCriticalSectionSpinCount(env, p: u32, spin: u32) -> u32 {
        let old = env.mem.peek_u32(p + 20).unwrap_or(0); env.mem.poke_u32(p + 20, spin); old
    }
    stdcall fn EnterCriticalSection(env, p: u32) -> Ret {
        if cs_try(env, p) { Ret::Value(0) } else { Ret::Block { deadline: None } }
    }
    stdcall fn TryEnterCriticalSection(env, p: u32) -> bool { cs_try(env, p) }
    stdcall fn LeaveCriticalSection(env, p: u32) { cs_leave(env, p) }
    stdcall fn DeleteCriticalSection(env, p: u32) {}
    stdcall fn InitializeSRWLock(env, p: u32) { env.mem.poke_u32(p, 0); }
    stdcall fn AcquireSRWLockExclusive(env, p: u32) -> Ret { srw_acquire(env, p, true, true) }
    stdcall fn AcquireSRWLockShared(env, p: u32) -> Ret { srw_acquire(env, p, false, true) }
    stdcall fn TryAcquireSRWLockExclusive(env, p: u32) -> Ret { srw_acquire(env, p, true, false) }
    stdcall fn TryAcquireSRWLockShared(env, p: u32) -> Ret { srw_acquire(env, p, false, false) }
    stdcall fn ReleaseSRWLockExclusive(env, p: u32) { srw_release(env, p, true) }
    stdcall fn ReleaseSRWLockShared(env, p: u32) { srw_release(env, p, false) }
    stdcall fn InitializeConditionVariable(env, p: u32) { env.mem.poke_u32(p, 0); }
    stdcall fn WakeConditionVariable(env, p: u32) { env.cv_wake(p) }
    stdcall fn WakeAllConditionVariable(env, p: u32) { env.cv_wake(p) }
    stdcall fn SleepConditionVariableCS(env, cv: u32, cs: u32, ms: u32) -> Ret { cv_sleep(env, cv, cs, ms, None) }
    stdcall fn SleepConditionVariableSRW(env, cv: u32, l: u32, ms: u32, flags: u32) -> Ret { cv_sleep(env, cv, l, ms, Some(flags & 1 == 0)) }
    stdcall fn InitOnceInitialize(env, p: u32) { env.mem.poke_u32(p, 0); }
    stdcall fn InitOnceExecuteOnce(env, once: u32, f: u32, param: u32, ctx: u32) -> Ret {
        match env.mem.peek_u32(once).unwrap_or(0) {
            2 => Ret::Value(1),
            _ => {
                env.mem.poke_u32(once, 1);
                Ret::call(f, vec![once, param, ctx], move |env, ok| {
                    env.mem.poke_u32(once, if ok != 0 { 2 } else { 0 });
                    Ret::Value(ok)
                })
            }
        }
    }
    stdcall fn InterlockedIncrement(env, p: u32) -> u32 { let v = env.mem.peek_u32(p).unwrap_or(0).wrapping_add(1); env.mem.poke_u32(p, v); v }
    stdcall fn InterlockedDecrement(env, p: u32) -> u32 { let v = env.mem.peek_u32(p).unwrap_or(0).wrapping_sub(1); env.mem.poke_u32(p, v); v }
    stdcall fn InterlockedExchange(env, p: u32, v: u32) -> u32 { let o = env.mem.peek_u32(p).unwrap_or(0); env.mem.poke_u32(p, v); o }
    stdcall fn InterlockedExchangeAdd(env, p: u32, v: u32) -> u32 { let o = env.mem.peek_u32(p).unwrap_or(0); env.mem.poke_u32(p, o.wrapping_add(v)); o }
    stdcall fn InterlockedCompareExchange(env, p: u32, v: u32, cmp: u32) -> u32 {
        let o = env.mem.peek_u32(p).unwrap_or(0); if o == cmp { env.mem.poke_u32(p, v); } o
    }
}

fn sleep(env: &mut Env, ms: u32) -> Ret {
    if ms == 0 {
        // Give the rest of the quantum to the others.
        env.threads.slice_end = 0;
        return Ret::Value(0);
    }
    match deadline(env, ms) {
        Some(d) if env.clock >= d => Ret::Value(0),
        d => Ret::Block { deadline: d },
    }
}
