//! The guest side of the `@wasm` arms: toyvm's session API exported from the
//! wasm32-wasip1 module, so a wasmtime host can run a whole session (machine,
//! BIOS, DOS, the arm's engine) compiled to WebAssembly and the oracle can
//! compare it with a native session at every sample point.
//!
//! Owns the export ABI (below) and nothing else: every value it hands out
//! comes from `toyvm` (`Session`, `Sample`, `Frame`), so the native and the
//! wasm session are the same code. It must not implement guest semantics.
//!
//! ABI (all exports `extern "C"`, one session per instance):
//! - `tw_alloc(len) -> ptr`: a buffer the host fills with an input.
//! - `tw_open(ptr, len) -> status`: input is a `toyvm::session::Config` as
//!   JSON (host paths must be reachable through WASI preopens).
//! - `tw_run_until(target) -> status`, `tw_clock() -> u64`,
//!   `tw_next_frame_edge(from) -> u64`.
//! - `tw_sample`, `tw_frame`, `tw_counters`, `tw_describe_site`,
//!   `tw_console`, `tw_read_lin(lin, n)` put their answer in the output
//!   buffer (`tw_out_ptr`, `tw_out_len`) and return a status.
//! - `tw_ram_ptr`, `tw_ram_len`: where guest RAM lives in linear memory
//!   (the host reads it in place to compare RAM between arms).
//!
//! Status: 0 ok (answer in the output buffer), 1 error (message in the
//! output buffer), 2 no session open. A panic aborts the instance (a trap
//! the host reports as the arm failing).

use std::cell::RefCell;
use toyvm::session::{Config, Session};

thread_local! {
    static SESSION: RefCell<Option<Session>> = const { RefCell::new(None) };
    static OUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

const OK: i32 = 0;
const ERROR: i32 = 1;
const NO_SESSION: i32 = 2;

fn answer(bytes: Vec<u8>) {
    OUT.with(|o| *o.borrow_mut() = bytes);
}

fn with_session(f: impl FnOnce(&mut Session) -> Vec<u8>) -> i32 {
    SESSION.with(|s| match s.borrow_mut().as_mut() {
        Some(s) => {
            answer(f(s));
            OK
        }
        None => {
            answer(b"no session open".to_vec());
            NO_SESSION
        }
    })
}

fn json<T: serde::Serialize>(v: &T) -> Vec<u8> {
    serde_json::to_vec(v).expect("toyvm values serialise")
}

/// A buffer of `len` bytes for the host to fill (leaked: inputs are few and small).
#[no_mangle]
pub extern "C" fn tw_alloc(len: u32) -> *mut u8 {
    let v = vec![0u8; len as usize].into_boxed_slice();
    Box::leak(v).as_mut_ptr()
}

#[no_mangle]
pub extern "C" fn tw_out_ptr() -> *const u8 {
    OUT.with(|o| o.borrow().as_ptr())
}

#[no_mangle]
pub extern "C" fn tw_out_len() -> u32 {
    OUT.with(|o| o.borrow().len() as u32)
}

/// Opens the session of the `Config` (JSON) at `ptr..ptr+len`.
///
/// # Safety
/// `ptr..ptr+len` must be a buffer from [`tw_alloc`] the host filled.
#[no_mangle]
pub unsafe extern "C" fn tw_open(ptr: *const u8, len: u32) -> i32 {
    // SAFETY: the host passes a buffer it got from tw_alloc, of that length.
    let bytes = unsafe { std::slice::from_raw_parts(ptr, len as usize) };
    let cfg: Config = match serde_json::from_slice(bytes) {
        Ok(c) => c,
        Err(e) => {
            answer(format!("bad session config: {e}").into_bytes());
            return ERROR;
        }
    };
    match Session::new(&cfg) {
        Ok(s) => {
            SESSION.with(|x| *x.borrow_mut() = Some(s));
            answer(Vec::new());
            OK
        }
        Err(e) => {
            answer(e.into_bytes());
            ERROR
        }
    }
}

/// Runs the session until its clock reaches `target` (see `Session::run_until`).
#[no_mangle]
pub extern "C" fn tw_run_until(target: u64) -> i32 {
    with_session(|s| {
        s.run_until(target);
        Vec::new()
    })
}

/// The guest clock (dispatches); 0 without a session.
#[no_mangle]
pub extern "C" fn tw_clock() -> u64 {
    SESSION.with(|s| s.borrow().as_ref().map_or(0, |s| s.clock()))
}

/// Whether the run has ended (1) or can go on (0).
#[no_mangle]
pub extern "C" fn tw_ended() -> i32 {
    SESSION.with(|s| s.borrow().as_ref().is_none_or(|s| s.end.is_some()) as i32)
}

/// The first frame edge at or after `from`.
#[no_mangle]
pub extern "C" fn tw_next_frame_edge(from: u64) -> u64 {
    SESSION.with(|s| {
        s.borrow()
            .as_ref()
            .map_or(u64::MAX, |s| s.next_frame_edge(from))
    })
}

/// The sample where the session stands (`toyvm::sample::Sample`, JSON).
#[no_mangle]
pub extern "C" fn tw_sample() -> i32 {
    with_session(|s| json(&s.sample()))
}

/// The frame: width and height (u32, little-endian), then the RGB bytes.
#[no_mangle]
pub extern "C" fn tw_frame() -> i32 {
    with_session(|s| {
        let f = s.frame();
        let mut v = Vec::with_capacity(8 + f.rgb.len());
        v.extend_from_slice(&f.width.to_le_bytes());
        v.extend_from_slice(&f.height.to_le_bytes());
        v.extend_from_slice(&f.rgb);
        v
    })
}

/// The engine's counters (JSON, `null` when it keeps none).
#[no_mangle]
pub extern "C" fn tw_counters() -> i32 {
    with_session(|s| json(&s.counters()))
}

/// What the engine says about the current site (JSON string or `null`).
#[no_mangle]
pub extern "C" fn tw_describe_site() -> i32 {
    with_session(|s| json(&s.describe_site()))
}

/// The console (`toyvm::sample::console_dump`), UTF-8.
#[no_mangle]
pub extern "C" fn tw_console() -> i32 {
    with_session(|s| toyvm::sample::console_dump(s).into_bytes())
}

/// `n` bytes of guest memory from linear address `lin` (as the CPU sees it).
#[no_mangle]
pub extern "C" fn tw_read_lin(lin: u32, n: u32) -> i32 {
    with_session(|s| s.machine.read_lin(lin, n as usize))
}

/// Where guest RAM starts in linear memory (0 without a session).
#[no_mangle]
pub extern "C" fn tw_ram_ptr() -> *const u8 {
    SESSION.with(|s| {
        s.borrow()
            .as_ref()
            .map_or(std::ptr::null(), |s| s.machine.mem.ram().as_ptr())
    })
}

/// Guest RAM's length in bytes.
#[no_mangle]
pub extern "C" fn tw_ram_len() -> u32 {
    SESSION.with(|s| {
        s.borrow()
            .as_ref()
            .map_or(0, |s| s.machine.mem.ram().len() as u32)
    })
}
