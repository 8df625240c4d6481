//! Per-thread message queues: what each guest thread that owns windows (or
//! posts to itself) has waiting for it, as Windows keeps it per thread.
//!
//! Owns, per thread: the posted and input messages in arrival order, the
//! inbox of messages other threads sent (SendMessage and its forms from
//! another thread, received before any posted message), the callbacks of
//! SendMessageCallback whose replies came back, WM_QUIT's code, the QS_*
//! bits that arrived since the thread last looked (GetQueueStatus' low
//! word, what MsgWaitForMultipleObjects waits for), the stack of sent
//! messages it is processing (InSendMessage, ReplyMessage) and the stack of
//! its own sends waiting for a reply; and the replies by send id.
//!
//! It must not run guest code or block (user32's `dll::msgqueue` does,
//! through the engine's scheduler), nor read the clock.

use super::Msg;
use std::collections::{BTreeMap, VecDeque};

/// QS_* bits (GetQueueStatus, MsgWaitForMultipleObjects).
pub mod qs {
    pub const KEY: u32 = 0x01;
    pub const MOUSEMOVE: u32 = 0x02;
    pub const MOUSEBUTTON: u32 = 0x04;
    pub const POSTMESSAGE: u32 = 0x08;
    pub const TIMER: u32 = 0x10;
    pub const PAINT: u32 = 0x20;
    pub const SENDMESSAGE: u32 = 0x40;
    pub const HOTKEY: u32 = 0x80;
    /// The bits that are states rather than arrivals (due timers, windows to paint).
    pub const STATES: u32 = TIMER | PAINT;
}

/// The QS_* bit a queued message counts under.
pub fn qs_of(message: u32) -> u32 {
    match message {
        0x100..=0x109 => qs::KEY,
        0x200 => qs::MOUSEMOVE,
        0x201..=0x20E => qs::MOUSEBUTTON,
        0x0113 => qs::TIMER,
        0x0312 => qs::HOTKEY,
        _ => qs::POSTMESSAGE,
    }
}

/// How a message was sent from another thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendKind {
    /// SendMessage(Timeout): the sender waits for the reply.
    Send,
    /// SendNotifyMessage: nobody waits.
    Notify,
    /// SendMessageCallback: the reply goes back to the sender's queue as a
    /// call of `cb(hwnd, msg, data, result)`.
    Callback { cb: u32, data: u32 },
}

/// A message sent by another thread, not yet received.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sent {
    pub id: u64,
    pub from: u32,
    pub hwnd: u32,
    pub message: u32,
    pub wparam: u32,
    pub lparam: u32,
    pub kind: SendKind,
}

/// A sent message a thread's window procedure is processing now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Receiving {
    pub sent: Sent,
    /// ReplyMessage answered it already (the procedure's own result is dropped).
    pub replied: bool,
}

/// A SendMessageCallback reply waiting for its sender to call the callback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Callback {
    pub cb: u32,
    pub hwnd: u32,
    pub message: u32,
    pub data: u32,
    pub result: u32,
}

/// One thread's queue.
#[derive(Clone, Debug, Default)]
pub struct ThreadQueue {
    /// Posted and input messages, in arrival order.
    pub posted: VecDeque<Msg>,
    /// Messages other threads sent, in arrival order.
    pub sent: VecDeque<Sent>,
    /// Replies to this thread's SendMessageCallback calls.
    pub callbacks: VecDeque<Callback>,
    /// PostQuitMessage's exit code, delivered when nothing is posted.
    pub quit: Option<u32>,
    /// Arrival bits (QS_KEY ... QS_SENDMESSAGE) not yet looked at.
    pub changed: u32,
    /// Of the state bits (QS_TIMER, QS_PAINT), those already reported.
    pub reported: u32,
    /// Sent messages being processed, innermost last.
    pub receiving: Vec<Receiving>,
    /// This thread's own sends waiting for their reply, innermost last.
    pub waiting: Vec<u64>,
    /// When the blocked MsgWaitForMultipleObjects call began (guest clock).
    pub wait_start: Option<u64>,
}

impl ThreadQueue {
    /// The arrival bits plus the state bits that became true since they
    /// were last reported, given the state bits now.
    pub fn changed_bits(&self, states: u32) -> u32 {
        self.changed | (states & qs::STATES & !self.reported)
    }

    /// The thread looked at the bits of `mask` (GetQueueStatus,
    /// GetMessage, PeekMessage): they are no longer new.
    pub fn clear_changed(&mut self, mask: u32, states: u32) {
        self.changed &= !mask;
        self.reported = (self.reported & !mask) | (states & mask & qs::STATES);
    }

    /// The QS_* bits of what the queue holds (states excluded).
    pub fn wake_bits(&self) -> u32 {
        let mut b = self.posted.iter().fold(0, |b, m| b | qs_of(m.message));
        if !self.sent.is_empty() {
            b |= qs::SENDMESSAGE;
        }
        if self.quit.is_some() {
            b |= qs::POSTMESSAGE;
        }
        b
    }
}

/// Every thread's queue, and the replies to sends in flight.
#[derive(Clone, Debug, Default)]
pub struct Queues {
    pub by_thread: BTreeMap<u32, ThreadQueue>,
    /// Replies by send id: `None` while the receiver has not answered.
    pub replies: BTreeMap<u64, Option<u32>>,
    /// SendMessageTimeout's deadlines (guest clock) by send id.
    pub deadlines: BTreeMap<u64, u64>,
    next_id: u64,
}

impl Queues {
    /// Thread `tid`'s queue (made empty on first use).
    pub fn of(&mut self, tid: u32) -> &mut ThreadQueue {
        self.by_thread.entry(tid).or_default()
    }

    /// Appends a posted or input message to `tid`'s queue.
    pub fn post(&mut self, tid: u32, m: Msg) {
        let q = self.of(tid);
        q.changed |= qs_of(m.message);
        q.posted.push_back(m);
    }

    /// Queues a message sent from thread `from` to `tid`; its id (a
    /// [`SendKind::Send`] waits for `replies[id]`).
    pub fn send(
        &mut self,
        from: u32,
        tid: u32,
        (hwnd, message, wparam, lparam): (u32, u32, u32, u32),
        kind: SendKind,
    ) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        if kind == SendKind::Send {
            self.replies.insert(id, None);
        }
        let q = self.of(tid);
        q.changed |= qs::SENDMESSAGE;
        q.sent.push_back(Sent {
            id,
            from,
            hwnd,
            message,
            wparam,
            lparam,
            kind,
        });
        id
    }

    /// Answers a received message (once): a waiting sender's reply, or a
    /// callback queued for the sender. Whether anything changed.
    pub fn reply(&mut self, s: &Sent, result: u32) -> bool {
        match s.kind {
            SendKind::Send => match self.replies.get_mut(&s.id) {
                Some(r @ None) => {
                    *r = Some(result);
                    true
                }
                _ => false,
            },
            SendKind::Notify => false,
            SendKind::Callback { cb, data } => {
                if cb == 0 {
                    return false;
                }
                let q = self.of(s.from);
                q.callbacks.push_back(Callback {
                    cb,
                    hwnd: s.hwnd,
                    message: s.message,
                    data,
                    result,
                });
                q.changed |= qs::SENDMESSAGE;
                true
            }
        }
    }

    /// Thread `tid` ended: messages sent to it are answered 0, replies it
    /// waited for are dropped, its queue goes.
    pub fn thread_ended(&mut self, tid: u32) {
        if let Some(q) = self.by_thread.remove(&tid) {
            for s in q.sent.iter().chain(q.receiving.iter().map(|r| &r.sent)) {
                if s.kind == SendKind::Send {
                    if let Some(r @ None) = self.replies.get_mut(&s.id) {
                        *r = Some(0);
                    }
                }
            }
            for id in q.waiting {
                self.replies.remove(&id);
                self.deadlines.remove(&id);
            }
        }
    }

    /// Drops queued messages for windows that are gone.
    pub fn forget_windows(&mut self, gone: &[u32]) {
        for q in self.by_thread.values_mut() {
            q.posted.retain(|m| !gone.contains(&m.hwnd));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(message: u32) -> Msg {
        Msg {
            hwnd: 0x10020,
            message,
            wparam: 0,
            lparam: 0,
            time: 0,
            pt: (0, 0),
        }
    }

    #[test]
    fn changed_bits_clear_only_what_was_asked() {
        let mut qs_ = Queues::default();
        qs_.post(0x104, msg(0x400));
        qs_.send(0x108, 0x104, (0x10020, 0x402, 0, 0), SendKind::Send);
        let q = qs_.of(0x104);
        assert_eq!(q.wake_bits(), qs::POSTMESSAGE | qs::SENDMESSAGE);
        q.clear_changed(qs::SENDMESSAGE, 0);
        assert_eq!(q.changed_bits(0), qs::POSTMESSAGE);
        // A state bit is new until reported, then not until it goes and comes back.
        assert_eq!(q.changed_bits(qs::PAINT), qs::POSTMESSAGE | qs::PAINT);
        q.clear_changed(qs::PAINT, qs::PAINT);
        assert_eq!(q.changed_bits(qs::PAINT), qs::POSTMESSAGE);
        q.clear_changed(qs::PAINT, 0);
        assert_eq!(q.changed_bits(qs::PAINT), qs::POSTMESSAGE | qs::PAINT);
    }

    #[test]
    fn replies_once_and_ended_receivers_answer_zero() {
        let mut qs_ = Queues::default();
        let a = qs_.send(0x108, 0x104, (1, 0x400, 0, 0), SendKind::Send);
        let b = qs_.send(0x108, 0x104, (1, 0x401, 0, 0), SendKind::Send);
        let s = qs_.of(0x104).sent.pop_front().unwrap();
        assert!(qs_.reply(&s, 7));
        assert!(!qs_.reply(&s, 8));
        assert_eq!(qs_.replies[&a], Some(7));
        qs_.thread_ended(0x104);
        assert_eq!(qs_.replies[&b], Some(0));
        let n = qs_.send(0x104, 0x108, (1, 0x402, 0, 0), SendKind::Notify);
        assert!(!qs_.replies.contains_key(&n));
    }
}
