//! The thunk area: the guest addresses that stand for host code.
//!
//! Owns the table of 16-byte slots at [`THUNK_BASE`] (INT3-filled,
//! execute-read; the engine services EIP in this area instead of fetching):
//! one slot per implemented export (shared by every importer of it), per
//! stub of an unimplemented import, and the engine's own return addresses
//! (a thread's start routine returning, a host-made guest call returning).
//! It must not run API bodies or calling conventions (the process does).

use crate::dll::{self, DllDecl, ExportDecl, Resolution};
use crate::memory::{prot, Memory};
use crate::pe::ImportName;

/// Where the thunk area starts.
pub const THUNK_BASE: u32 = 0x7F00_0000;
pub const THUNK_SIZE: u32 = 16;
pub const THUNK_AREA: u32 = 0x10_0000;

/// What a thunk slot stands for.
#[derive(Clone)]
pub enum Thunk {
    Api(&'static ExportDecl, &'static DllDecl),
    /// An import nothing implements: calling it stops the run.
    Stub {
        dll: String,
        name: ImportName,
    },
    /// Where a thread's start routine returns: the thread exits with EAX.
    ThreadReturn,
    /// Where a guest call made by the host returns.
    CallbackReturn,
    /// The handler of an exception registration the host pushes around a
    /// guest call it guards (`seh::guarded_call`): the dispatch walk
    /// recognizes it and ends the guarded call instead of calling it.
    HostGuard,
}

/// The slots handed out so far.
#[derive(Default)]
pub struct Thunks {
    list: Vec<Thunk>,
}

fn same(a: &Thunk, b: &Thunk) -> bool {
    match (a, b) {
        (Thunk::Api(x, _), Thunk::Api(y, _)) => std::ptr::eq(*x, *y),
        (Thunk::Stub { dll: d1, name: n1 }, Thunk::Stub { dll: d2, name: n2 }) => {
            d1.eq_ignore_ascii_case(d2) && n1 == n2
        }
        (Thunk::ThreadReturn, Thunk::ThreadReturn) => true,
        (Thunk::CallbackReturn, Thunk::CallbackReturn) => true,
        (Thunk::HostGuard, Thunk::HostGuard) => true,
        _ => false,
    }
}

impl Thunks {
    /// The slot for `t` (an existing one when the same thing already has one).
    pub fn slot(&mut self, mem: &mut Memory, t: Thunk) -> Result<u32, String> {
        if let Some(i) = self.list.iter().position(|x| same(x, &t)) {
            return Ok(THUNK_BASE + THUNK_SIZE * i as u32);
        }
        let i = self.list.len() as u32;
        if (i + 1) * THUNK_SIZE > THUNK_AREA {
            return Err("thunk area full".into());
        }
        let addr = THUNK_BASE + THUNK_SIZE * i;
        if addr.is_multiple_of(0x1000) {
            mem.commit(addr, 0x1000, prot::READWRITE)
                .map_err(|e| e.to_string())?;
            mem.poke(addr, &[0xCC; 0x1000]).expect("committed");
            mem.protect(addr, 0x1000, prot::EXECUTE_READ)
                .expect("committed");
        }
        self.list.push(t);
        Ok(addr)
    }

    /// The slot an import binds to, or `None` for a data export (whose
    /// variable address the caller gets from [`dll::resolve`]).
    pub fn for_import(
        &mut self,
        mem: &mut Memory,
        dll_name: &str,
        name: &ImportName,
    ) -> Result<Option<u32>, String> {
        let t = match dll::resolve(dll_name, name) {
            Resolution::Implemented(d, e) => Thunk::Api(e, d),
            Resolution::Data(..) => return Ok(None),
            Resolution::Missing { .. } => Thunk::Stub {
                dll: dll_name.to_string(),
                name: name.clone(),
            },
        };
        self.slot(mem, t).map(Some)
    }

    /// Whether `eip` is in a handed-out slot.
    #[inline]
    pub fn contains(&self, eip: u32) -> bool {
        eip.wrapping_sub(THUNK_BASE) < THUNK_SIZE * self.list.len() as u32
    }

    /// What the slot at `eip` stands for.
    pub fn at(&self, eip: u32) -> Option<&Thunk> {
        if !self.contains(eip) {
            return None;
        }
        self.list.get(((eip - THUNK_BASE) / THUNK_SIZE) as usize)
    }

    /// How many slots are in use.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}
