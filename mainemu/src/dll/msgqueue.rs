//! user32's message queue calls over the per-thread queues
//! (`desktop::queue`): GetMessage, PeekMessage, WaitMessage, GetQueueStatus,
//! MsgWaitForMultipleObjects(Ex), PostMessage, PostThreadMessage,
//! PostQuitMessage, and SendMessage with its forms (Timeout, Notify,
//! Callback) between threads, with InSendMessage(Ex) and ReplyMessage.
//!
//! A window belongs to the thread that created it. A message sent to a
//! window of another live thread is queued in that thread's inbox; a
//! SendMessage(Timeout) caller then blocks (the engine's scheduler runs the
//! other threads) until the reply comes, receiving messages sent to itself
//! meanwhile. A thread receives its inbox, oldest first, before anything
//! else inside GetMessage, PeekMessage and its own SendMessage's wait, as
//! Windows does; GetQueueStatus and MsgWaitForMultipleObjects only report
//! it (QS_SENDMESSAGE). Host-made sends (WM_CREATE, WM_DESTROY, focus and
//! activation messages) still call the procedure on the calling thread.
//!
//! Blocking is the engine's: a body answers `Ret::Block`, the thread waits
//! until some thread bumps the scheduler's epoch (a post or send to another
//! thread, a reply, a thread's end) or a deadline on the guest clock, then
//! the call is made again; the thread's queue remembers which of its sends
//! the re-made call is waiting for. Nothing here reads host time.
//!
//! It must not hold the window manager (desktop) nor draw.

use super::user32::{desk, send, write_msg};
use super::{Env, Ret};
use crate::desktop::queue::{qs, Receiving, SendKind, Sent};
use crate::desktop::{wm, Desktop, Msg};

/// ERROR_INVALID_WINDOW_HANDLE.
const ERROR_INVALID_WINDOW_HANDLE: u32 = 1400;
/// ERROR_INVALID_THREAD_ID.
const ERROR_INVALID_THREAD_ID: u32 = 1444;
/// ERROR_TIMEOUT.
const ERROR_TIMEOUT: u32 = 1460;
/// WAIT_TIMEOUT.
const WAIT_TIMEOUT: u32 = 0x102;

/// Guest clock ticks in one millisecond.
const MS: u64 = crate::dll::DISPATCHES_PER_SECOND / 1000;

fn alive(env: &Env, tid: u32) -> bool {
    env.threads
        .by_id(tid)
        .is_some_and(|t| t.state != crate::threads::State::Exited)
}

/// The thread owning `h` when it is another live thread than the caller
/// (a send must cross to it).
pub(crate) fn other_owner(env: &Env, h: u32) -> Option<u32> {
    let owner = env.desktop.thread_of(h)?;
    (owner != env.thread_id() && alive(env, owner)).then_some(owner)
}

/// Lets blocked threads look at their queues again.
fn wake(env: &mut Env) {
    env.threads.epoch += 1;
}

fn matches_filter(m: &Msg, hwnd: u32, min: u32, max: u32) -> bool {
    (hwnd == 0 || m.hwnd == hwnd || hwnd == u32::MAX && m.hwnd == 0)
        && (min == 0 && max == 0 || (min..=max).contains(&m.message))
}

/// The next message for GetMessage/PeekMessage from the calling thread's
/// queue: posted and input messages, then the quit message, then WM_PAINT,
/// then WM_TIMER (sent messages are received before, by the callers).
pub(crate) fn next_message(
    env: &mut Env,
    hwnd: u32,
    min: u32,
    max: u32,
    remove: bool,
) -> Option<Msg> {
    let clock = env.clock;
    let me = env.thread_id();
    let d = desk(env);
    d.deliver_input(clock);
    let q = d.queues.of(me);
    if let Some(i) = q
        .posted
        .iter()
        .position(|m| matches_filter(m, hwnd, min, max))
    {
        let m = q.posted[i];
        if remove {
            q.posted.remove(i);
            crate::desktop::input::key_state_on_removal(d, &m);
        }
        return Some(m);
    }
    let t = Desktop::ms(clock);
    if let Some(code) = q.quit {
        if remove {
            q.quit = None;
        }
        return Some(Msg {
            hwnd: 0,
            message: wm::QUIT,
            wparam: code,
            lparam: 0,
            time: t,
            pt: d.cursor,
        });
    }
    if min <= wm::PAINT && (max == 0 || wm::PAINT <= max) {
        if let Some(h) = d.paint_due(me).filter(|&h| hwnd == 0 || h == hwnd) {
            return Some(Msg {
                hwnd: h,
                message: wm::PAINT,
                wparam: 0,
                lparam: 0,
                time: t,
                pt: d.cursor,
            });
        }
    }
    if min <= wm::TIMER && (max == 0 || wm::TIMER <= max) {
        let due = d
            .timers
            .iter()
            .enumerate()
            .filter(|(_, x)| x.thread == me && x.due <= clock && (hwnd == 0 || x.hwnd == hwnd))
            .min_by_key(|(_, x)| x.due)
            .map(|(i, _)| i);
        if let Some(i) = due {
            let tm = d.timers[i].clone();
            if remove {
                d.timers[i].due = clock + tm.period;
            }
            return Some(Msg {
                hwnd: tm.hwnd,
                message: wm::TIMER,
                wparam: tm.id,
                lparam: tm.proc_,
                time: t,
                pt: d.cursor,
            });
        }
    }
    None
}

/// Receives one message another thread sent the caller (or calls one
/// SendMessageCallback callback whose reply came back), then `then`.
/// `None` when there is nothing to receive.
pub(crate) fn receive_sent(env: &mut Env, then: Box<dyn FnOnce(&mut Env) -> Ret>) -> Option<Ret> {
    let me = env.thread_id();
    let q = desk(env).queues.of(me);
    if let Some(c) = q.callbacks.pop_front() {
        return Some(Ret::call(
            c.cb,
            vec![c.hwnd, c.message, c.data, c.result],
            move |env, _| then(env),
        ));
    }
    let s = q.sent.pop_front()?;
    q.receiving.push(Receiving {
        sent: s,
        replied: false,
    });
    Some(send(
        env,
        s.hwnd,
        s.message,
        s.wparam,
        s.lparam,
        move |env, r| {
            let q = desk(env).queues.of(me);
            let replied = q.receiving.pop().is_some_and(|x| x.replied);
            if !replied && desk(env).queues.reply(&s, r) {
                wake(env);
            }
            then(env)
        },
    ))
}

/// The caller looked at its queue: nothing in it is new any more.
fn clear_changed(env: &mut Env, mask: u32) {
    let (me, clock) = (env.thread_id(), env.clock);
    let d = desk(env);
    let states = d.state_bits(me, clock);
    d.queues.of(me).clear_changed(mask, states);
}

/// A GetMessage/PeekMessage window filter that names no window (0 is any,
/// -1 thread messages only): ERROR_INVALID_WINDOW_HANDLE.
fn bad_filter_window(env: &mut Env, hwnd: u32) -> bool {
    if hwnd == 0 || hwnd == u32::MAX || desk(env).win(hwnd).is_some() {
        return false;
    }
    env.last_error = ERROR_INVALID_WINDOW_HANDLE;
    true
}

/// GetMessage: messages sent from other threads first, then the next
/// message; blocks while there is none.
pub(crate) fn get_message(env: &mut Env, out: u32, hwnd: u32, min: u32, max: u32) -> Ret {
    if bad_filter_window(env, hwnd) {
        return Ret::Value(u32::MAX);
    }
    if let Some(r) = receive_sent(
        env,
        Box::new(move |env| get_message(env, out, hwnd, min, max)),
    ) {
        return r;
    }
    let m = next_message(env, hwnd, min, max, true);
    clear_changed(env, !0);
    match m {
        Some(m) => {
            desk(env).waiting_for_input = false;
            if !write_msg(env, out, &m) {
                return Ret::Value(-1i32 as u32);
            }
            Ret::Value((m.message != wm::QUIT) as u32)
        }
        None => {
            let deadline = desk(env).next_event();
            desk(env).waiting_for_input = deadline.is_none();
            Ret::Block { deadline }
        }
    }
}

/// PeekMessage: messages sent from other threads first (unless a PM_QS_*
/// filter leaves QS_SENDMESSAGE out), then the next message if any.
pub(crate) fn peek_message(
    env: &mut Env,
    out: u32,
    hwnd: u32,
    min: u32,
    max: u32,
    flags: u32,
) -> Ret {
    if bad_filter_window(env, hwnd) {
        return Ret::Value(0);
    }
    let kinds = flags >> 16;
    if kinds == 0 || kinds & qs::SENDMESSAGE != 0 {
        if let Some(r) = receive_sent(
            env,
            Box::new(move |env| peek_message(env, out, hwnd, min, max, flags)),
        ) {
            return r;
        }
    }
    let m = next_message(env, hwnd, min, max, flags & 1 != 0);
    clear_changed(env, !0);
    Ret::Value(match m {
        Some(m) => write_msg(env, out, &m) as u32,
        None => 0,
    })
}

/// WaitMessage: returns when something arrived since the caller last
/// looked at its queue.
pub(crate) fn wait_message(env: &mut Env) -> Ret {
    if new_bits(env) != 0 {
        return Ret::Value(1);
    }
    let deadline = desk(env).next_event();
    Ret::Block { deadline }
}

/// What arrived since the caller last looked (QS_* bits).
fn new_bits(env: &mut Env) -> u32 {
    let (me, clock) = (env.thread_id(), env.clock);
    let d = desk(env);
    d.deliver_input(clock);
    let states = d.state_bits(me, clock);
    d.queues.of(me).changed_bits(states)
}

/// GetQueueStatus: the high word what the queue holds, the low word what
/// arrived since the caller last looked, both masked by `flags`; the bits
/// asked for stop being new.
pub(crate) fn queue_status(env: &mut Env, flags: u32) -> u32 {
    let (me, clock) = (env.thread_id(), env.clock);
    // QS_ALLPOSTMESSAGE (0x100) asks for posted messages too.
    let mask = (flags & 0xFF)
        | if flags & 0x100 != 0 {
            qs::POSTMESSAGE
        } else {
            0
        };
    let d = desk(env);
    d.deliver_input(clock);
    let states = d.state_bits(me, clock);
    let now = d.queue_bits(me, clock);
    let q = d.queues.of(me);
    let new = q.changed_bits(states);
    q.clear_changed(mask, states);
    ((now & mask) << 16) | (new & mask)
}

/// MsgWaitForMultipleObjects(Ex): an object signaled (kernel32's wait
/// with no timeout), else input of `mask` that arrived since the caller
/// last looked (any queued with MWMO_INPUTAVAILABLE) answers `n`, else
/// WAIT_TIMEOUT once `timeout` ms of guest time passed since the call
/// began. Messages sent from other threads are reported, not received.
/// `flags`: MWMO_ALERTABLE 2, MWMO_INPUTAVAILABLE 4.
pub(crate) fn msg_wait(
    env: &mut Env,
    n: u32,
    handles: u32,
    all: bool,
    timeout: u32,
    mask: u32,
    flags: u32,
) -> Ret {
    let me = env.thread_id();
    // MWMO_ALERTABLE (2): queued user APCs run and end the wait.
    if flags & 2 != 0 {
        if let Some(r) = crate::dll::kernel32::sync::run_apcs(env) {
            return r;
        }
    }
    let available = flags & 4 != 0;
    if n > 0 {
        let r = crate::dll::kernel32::DLL.call(
            "WaitForMultipleObjects",
            env,
            &[n, handles, all as u32, 0],
        );
        if let Ret::Value(v) = r {
            if v != WAIT_TIMEOUT {
                desk(env).queues.of(me).wait_start = None;
                return Ret::Value(v);
            }
        }
    }
    let clock = env.clock;
    let mask = (mask & 0xFF)
        | if mask & 0x100 != 0 {
            qs::POSTMESSAGE
        } else {
            0
        };
    let bits = if available {
        desk(env).deliver_input(clock);
        desk(env).queue_bits(me, clock)
    } else {
        new_bits(env)
    };
    let retrying = env.retrying;
    let d = desk(env);
    if bits & mask != 0 {
        d.queues.of(me).wait_start = None;
        return Ret::Value(n);
    }
    if timeout == 0 {
        return Ret::Value(WAIT_TIMEOUT);
    }
    let next = d.next_event();
    let q = d.queues.of(me);
    let start = match q.wait_start {
        Some(s) if retrying => s,
        _ => clock,
    };
    q.wait_start = Some(start);
    let end = (timeout != u32::MAX).then(|| start + timeout as u64 * MS);
    if end.is_some_and(|e| clock >= e) {
        q.wait_start = None;
        return Ret::Value(WAIT_TIMEOUT);
    }
    // Objects are polled every guest millisecond (another thread may signal them).
    let poll = (n > 0).then(|| clock + MS);
    let deadline = [next, end, poll].into_iter().flatten().min();
    Ret::Block { deadline }
}

/// PostMessage: the message goes to the queue of the window's thread (the
/// caller's for no window).
pub(crate) fn post(env: &mut Env, h: u32, msg: u32, wp: u32, lp: u32) -> bool {
    let me = env.thread_id();
    let tid = if h == 0 {
        me
    } else {
        match desk(env).thread_of(h) {
            Some(t) => t,
            None => {
                env.last_error = ERROR_INVALID_WINDOW_HANDLE;
                return false;
            }
        }
    };
    post_to(env, tid, h, msg, wp, lp);
    true
}

fn post_to(env: &mut Env, tid: u32, h: u32, msg: u32, wp: u32, lp: u32) {
    let t = Desktop::ms(env.clock);
    let d = desk(env);
    let pt = d.cursor;
    d.queues.post(
        tid,
        Msg {
            hwnd: h,
            message: msg,
            wparam: wp,
            lparam: lp,
            time: t,
            pt,
        },
    );
    if tid != env.thread_id() {
        wake(env);
    }
}

/// PostThreadMessage: a message for no window in thread `tid`'s queue.
pub(crate) fn post_thread(env: &mut Env, tid: u32, msg: u32, wp: u32, lp: u32) -> bool {
    // (With no thread table yet, as in unit tests, the caller's id is valid.)
    let own = env.threads.list.is_empty() && tid == env.thread_id();
    if !own && !alive(env, tid) {
        env.last_error = ERROR_INVALID_THREAD_ID;
        return false;
    }
    post_to(env, tid, 0, msg, wp, lp);
    true
}

/// PostQuitMessage: WM_QUIT for the caller once nothing is posted.
pub(crate) fn post_quit(env: &mut Env, code: u32) {
    let me = env.thread_id();
    let q = desk(env).queues.of(me);
    q.quit = Some(code);
    q.changed |= qs::POSTMESSAGE;
}

/// TranslateMessage's character message, in front of the caller's queue.
pub(crate) fn push_front(env: &mut Env, m: Msg) {
    let me = env.thread_id();
    desk(env).queues.of(me).posted.push_front(m);
}

/// SendMessage(Timeout)'s wait: `id`'s reply answers `Some(result)`
/// through `done`; messages sent to the caller meanwhile are received; past
/// `deadline` the send is withdrawn and `done(None)`.
fn wait_reply(
    env: &mut Env,
    id: u64,
    deadline: Option<u64>,
    done: fn(&mut Env, Option<u32>, u32) -> Ret,
    arg: u32,
) -> Ret {
    match desk(env).queues.replies.get(&id).copied() {
        Some(Some(r)) => return finish_send(env, id, Some(r), done, arg),
        None => return finish_send(env, id, Some(0), done, arg),
        Some(None) => {}
    }
    if let Some(r) = receive_sent(
        env,
        Box::new(move |env| wait_reply(env, id, deadline, done, arg)),
    ) {
        return r;
    }
    if deadline.is_some_and(|t| env.clock >= t) {
        // Withdrawn: not yet received, it never will be; being received, its reply is dropped.
        for q in desk(env).queues.by_thread.values_mut() {
            q.sent.retain(|s| s.id != id);
        }
        return finish_send(env, id, None, done, arg);
    }
    Ret::Block { deadline }
}

fn finish_send(
    env: &mut Env,
    id: u64,
    r: Option<u32>,
    done: fn(&mut Env, Option<u32>, u32) -> Ret,
    arg: u32,
) -> Ret {
    let me = env.thread_id();
    let qs_ = &mut desk(env).queues;
    qs_.replies.remove(&id);
    qs_.deadlines.remove(&id);
    let q = qs_.of(me);
    if let Some(i) = q.waiting.iter().rposition(|&w| w == id) {
        q.waiting.remove(i);
    }
    done(env, r, arg)
}

/// SendMessage(A/W) and SendMessageTimeout: a window of the caller's
/// thread gets the message at once; another thread's window through its
/// inbox, the caller waiting for the reply (at most `timeout_ms`).
/// `done(env, result or None on timeout, arg)` makes the API's answer.
pub(crate) fn send_message(
    env: &mut Env,
    (h, msg, wp, lp): (u32, u32, u32, u32),
    timeout_ms: Option<u32>,
    done: fn(&mut Env, Option<u32>, u32) -> Ret,
    arg: u32,
) -> Ret {
    let me = env.thread_id();
    if env.retrying {
        // The re-made call of a send that blocked: its own send is the innermost.
        if let Some(&id) = desk(env).queues.of(me).waiting.last() {
            let deadline = desk(env).queues.deadlines.get(&id).copied();
            return wait_reply(env, id, deadline, done, arg);
        }
    }
    let Some(owner) = other_owner(env, h) else {
        return send(env, h, msg, wp, lp, move |env, r| done(env, Some(r), arg));
    };
    let deadline = timeout_ms.map(|t| env.clock + t as u64 * MS);
    let qs_ = &mut desk(env).queues;
    let id = qs_.send(me, owner, (h, msg, wp, lp), SendKind::Send);
    if let Some(t) = deadline {
        qs_.deadlines.insert(id, t);
    }
    qs_.of(me).waiting.push(id);
    wake(env);
    wait_reply(env, id, deadline, done, arg)
}

/// SendMessage's answer: the result.
pub(crate) fn done_value(_: &mut Env, r: Option<u32>, _: u32) -> Ret {
    Ret::Value(r.unwrap_or(0))
}

/// SendMessageTimeout's answer: TRUE and the result in `*out`, or FALSE
/// with ERROR_TIMEOUT.
pub(crate) fn done_timeout(env: &mut Env, r: Option<u32>, out: u32) -> Ret {
    match r {
        Some(v) => {
            if out != 0 {
                env.mem.poke_u32(out, v);
            }
            Ret::Value(1)
        }
        None => {
            env.last_error = ERROR_TIMEOUT;
            Ret::Value(0)
        }
    }
}

/// SendNotifyMessage (cb None) and SendMessageCallback: to another
/// thread's window the message is queued and the call returns TRUE at once
/// (the callback comes back through the caller's queue); to the caller's
/// own window the procedure runs now, then the callback.
pub(crate) fn send_notify(
    env: &mut Env,
    (h, msg, wp, lp): (u32, u32, u32, u32),
    cb: Option<(u32, u32)>,
) -> Ret {
    if desk(env).win(h).is_none() {
        env.last_error = ERROR_INVALID_WINDOW_HANDLE;
        return Ret::Value(0);
    }
    if let Some(owner) = other_owner(env, h) {
        let kind = match cb {
            None => SendKind::Notify,
            Some((cb, data)) => SendKind::Callback { cb, data },
        };
        let me = env.thread_id();
        desk(env).queues.send(me, owner, (h, msg, wp, lp), kind);
        wake(env);
        return Ret::Value(1);
    }
    send(env, h, msg, wp, lp, move |_, r| match cb {
        Some((cb, data)) if cb != 0 => Ret::call(cb, vec![h, msg, data, r], |_, _| Ret::Value(1)),
        _ => Ret::Value(1),
    })
}

/// The sent message the caller is processing now, if any.
fn receiving(env: &mut Env) -> Option<&mut Receiving> {
    let me = env.thread_id();
    desk(env).queues.of(me).receiving.last_mut()
}

/// InSendMessageEx: ISMEX_NOSEND 0, or ISMEX_SEND 1 / ISMEX_NOTIFY 2 /
/// ISMEX_CALLBACK 4, with ISMEX_REPLIED 8 once ReplyMessage answered.
pub(crate) fn in_send_ex(env: &mut Env) -> u32 {
    match receiving(env) {
        None => 0,
        Some(r) => {
            let kind = match r.sent.kind {
                SendKind::Send => 1,
                SendKind::Notify => 2,
                SendKind::Callback { .. } => 4,
            };
            kind | if r.replied { 8 } else { 0 }
        }
    }
}

/// ReplyMessage: answers the sent message being processed now (the
/// procedure's own result is then dropped); FALSE when none is, or it was
/// already answered. A notification has nobody to answer: TRUE, unchanged.
pub(crate) fn reply_message(env: &mut Env, result: u32) -> bool {
    let Some(r) = receiving(env) else {
        return false;
    };
    if r.replied {
        return false;
    }
    let s: Sent = r.sent;
    if s.kind == SendKind::Notify {
        return true;
    }
    r.replied = true;
    desk(env).queues.reply(&s, result);
    wake(env);
    true
}

/// A thread ended: the windows it made are destroyed (no messages: the
/// thread cannot run their procedures), its timers stop, messages sent to
/// it are answered 0 and its queue goes.
pub(crate) fn thread_ended(env: &mut Env, tid: u32) {
    let d = desk(env);
    let mine: Vec<u32> = d
        .windows
        .values()
        .filter(|w| !w.destroyed && w.thread == tid)
        .map(|w| w.hwnd)
        .collect();
    for h in mine {
        if d.win(h).is_some() {
            d.remove_window(h);
        }
    }
    d.timers.retain(|t| t.thread != tid);
    d.queues.thread_ended(tid);
}
