//! kernel32's console calls: standard handles, modes, code pages, reads
//! and writes (ANSI and UTF-16; output reaches the host as UTF-8), the
//! screen buffer's fixed geometry and the title.
//!
//! Owns the console as the guest sees it: an 80x25 buffer that is never
//! drawn (output streams to the host as written), input from the host's
//! stdin, modes kept per handle kind. It must not write to the host except
//! through `Env::write_console` (via `io`).

use crate::dll::{Env, Ret};
use crate::files::err;
use crate::handles::{ConsoleKind, Object};
use crate::io;

/// ENABLE_PROCESSED_INPUT | LINE_INPUT | ECHO_INPUT | MOUSE_INPUT | INSERT | QUICK_EDIT | EXTENDED.
pub const INPUT_MODE: u32 = 0x1F7;
/// ENABLE_PROCESSED_OUTPUT | ENABLE_WRAP_AT_EOL_OUTPUT.
pub const OUTPUT_MODE: u32 = 0x3;

/// The console state the guest can change.
#[derive(Clone, Debug)]
pub struct Console {
    pub input_mode: u32,
    pub output_mode: u32,
    pub input_cp: u32,
    pub output_cp: u32,
    pub title: String,
    /// Screen buffers and the input queue (`console_buffer`).
    pub buffers: super::console_buffer::Buffers,
    /// AllocConsole/FreeConsole/AttachConsole: whether the process has a console.
    pub detached: bool,
    /// SetConsoleCtrlHandler's handlers, called (last registered first) by
    /// GenerateConsoleCtrlEvent; no Ctrl+C comes from the host.
    pub ctrl_handlers: Vec<u32>,
    /// SetConsoleCtrlHandler(NULL, TRUE): Ctrl+C is ignored.
    pub ctrl_c_ignored: bool,
}

impl Default for Console {
    fn default() -> Self {
        Console {
            input_mode: INPUT_MODE,
            output_mode: OUTPUT_MODE,
            input_cp: 437,
            output_cp: 437,
            title: "mainemu".into(),
            buffers: Default::default(),
            detached: false,
            ctrl_handlers: Vec::new(),
            ctrl_c_ignored: false,
        }
    }
}

fn kind(env: &Env, h: u32) -> Option<ConsoleKind> {
    match env.handles.get(h) {
        Some(Object::Console(k)) => Some(*k),
        _ => None,
    }
}

/// GetStdHandle/SetStdHandle index: -10 → 0, -11 → 1, -12 → 2.
fn std_index(which: u32) -> Option<usize> {
    match which as i32 {
        -10 => Some(0),
        -11 => Some(1),
        -12 => Some(2),
        _ => None,
    }
}

/// Writes UTF-16 text to a console (as UTF-8) or any handle.
fn write_wide(env: &mut Env, h: u32, buf: u32, n: u32, put: u32) -> bool {
    let mut w = vec![0u8; 2 * n as usize];
    if env.mem.peek(buf, &mut w).is_none() {
        return env.fail(998, false);
    }
    let units: Vec<u16> = w
        .chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    let text = String::from_utf16_lossy(&units);
    if kind(env, h).is_none() {
        return env.fail(err::INVALID_HANDLE, false);
    }
    match io::write(env, h, text.as_bytes()) {
        Ok(_) => {
            if put != 0 {
                env.mem.poke_u32(put, n);
            }
            true
        }
        Err(e) => env.fail(e, false),
    }
}

fn write_ansi(env: &mut Env, h: u32, buf: u32, n: u32, put: u32) -> bool {
    if kind(env, h).is_none() {
        return env.fail(err::INVALID_HANDLE, false);
    }
    crate::dll::kernel32::file::write_file(env, h, buf, n, put, 0)
}

/// ReadConsole: up to `n` characters of input (a line at most).
fn read_console(env: &mut Env, h: u32, buf: u32, n: u32, got: u32, wide: bool) -> bool {
    if kind(env, h) != Some(ConsoleKind::Input) {
        return env.fail(err::INVALID_HANDLE, false);
    }
    let mut line = Vec::new();
    while (line.len() as u32) < n {
        match io::read(env, h, 1) {
            Ok(b) if !b.is_empty() => {
                line.push(b[0]);
                if b[0] == b'\n' {
                    break;
                }
            }
            _ => break,
        }
    }
    let ok = if wide {
        let w: Vec<u16> = String::from_utf8_lossy(&line).encode_utf16().collect();
        if got != 0 {
            env.mem.poke_u32(got, w.len() as u32);
        }
        env.mem.poke(buf, &crate::dll::wbytes(&w)).is_some()
    } else {
        if got != 0 {
            env.mem.poke_u32(got, line.len() as u32);
        }
        env.mem.poke(buf, &line).is_some()
    };
    ok || env.fail(998, false)
}

fn title(env: &mut Env, buf: u32, cap: u32, wide: bool) -> u32 {
    let t = env.con.title.clone();
    let n = if wide {
        t.encode_utf16().count()
    } else {
        t.len()
    } as u32;
    if cap == 0 {
        return n;
    }
    let cut: String = t.chars().take(cap as usize - 1).collect();
    env.put_str(buf, &cut, wide);
    n
}

crate::dll! { "(kernel32 console)";
    stdcall fn GetStdHandle(env, which: u32) -> u32 {
        match std_index(which) { Some(i) => env.std_handles[i], None => env.fail(err::INVALID_HANDLE, 0xFFFF_FFFF) }
    }
    stdcall fn SetStdHandle(env, which: u32, h: u32) -> bool {
        match std_index(which) { Some(i) => { env.std_handles[i] = h; true } None => env.fail(err::INVALID_HANDLE, false) }
    }
    stdcall fn GetConsoleMode(env, h: u32, out: u32) -> bool {
        let m = match kind(env, h) {
            Some(ConsoleKind::Input) => env.con.input_mode,
            // Each screen buffer has its own output mode.
            Some(_) => match super::console_buffer::buffer_of(env, h).and_then(|id| env.con.buffers.screens.get(&id)) {
                Some(s) => s.mode,
                None => env.con.output_mode,
            },
            None => return env.fail(err::INVALID_HANDLE, false),
        };
        env.mem.poke_u32(out, m).is_some()
    }
    stdcall fn SetConsoleMode(env, h: u32, mode: u32) -> bool {
        match kind(env, h) {
            Some(ConsoleKind::Input) => { env.con.input_mode = mode; true }
            Some(_) => {
                env.con.output_mode = mode;
                if let Some(s) = super::console_buffer::buffer_of(env, h).and_then(|id| env.con.buffers.screens.get_mut(&id)) {
                    s.mode = mode;
                }
                true
            }
            None => env.fail(err::INVALID_HANDLE, false),
        }
    }
    // Without a console (after FreeConsole) the code-page calls fail.
    stdcall fn GetConsoleCP(env) -> u32 { if env.con.detached { env.fail(err::INVALID_HANDLE, 0) } else { env.con.input_cp } }
    stdcall fn GetConsoleOutputCP(env) -> u32 { if env.con.detached { env.fail(err::INVALID_HANDLE, 0) } else { env.con.output_cp } }
    stdcall fn SetConsoleCP(env, cp: u32) -> bool { if env.con.detached { return env.fail(err::INVALID_HANDLE, false); } env.con.input_cp = cp; true }
    stdcall fn SetConsoleOutputCP(env, cp: u32) -> bool { if env.con.detached { return env.fail(err::INVALID_HANDLE, false); } env.con.output_cp = cp; true }
    stdcall fn WriteConsoleA(env, h: u32, buf: u32, n: u32, put: u32, reserved: u32) -> bool { write_ansi(env, h, buf, n, put) }
    stdcall fn WriteConsoleW(env, h: u32, buf: u32, n: u32, put: u32, reserved: u32) -> bool { write_wide(env, h, buf, n, put) }
    stdcall fn ReadConsoleA(env, h: u32, buf: u32, n: u32, got: u32, ctl: u32) -> bool { read_console(env, h, buf, n, got, false) }
    stdcall fn ReadConsoleW(env, h: u32, buf: u32, n: u32, got: u32, ctl: u32) -> bool { read_console(env, h, buf, n, got, true) }
    stdcall fn SetConsoleCtrlHandler(env, f: u32, add: bool) -> bool {
        if f == 0 { env.con.ctrl_c_ignored = add; return true; }
        if add { env.con.ctrl_handlers.push(f); true }
        else if let Some(i) = env.con.ctrl_handlers.iter().rposition(|&x| x == f) { env.con.ctrl_handlers.remove(i); true }
        else { env.fail(err::INVALID_PARAMETER, false) }
    }
    stdcall fn GetConsoleTitleA(env, buf: u32, cap: u32) -> u32 { title(env, buf, cap, false) }
    stdcall fn GetConsoleTitleW(env, buf: u32, cap: u32) -> u32 { title(env, buf, cap, true) }
    stdcall fn SetConsoleTitleA(env, t: u32) -> bool { env.con.title = env.read_a(t).unwrap_or_default(); true }
    stdcall fn SetConsoleTitleW(env, t: u32) -> bool { env.con.title = env.read_w(t).unwrap_or_default(); true }
    stdcall fn GetConsoleWindow(env) -> u32 { 0 }
    // A process has one console: AllocConsole refuses while it is attached;
    // after FreeConsole it makes a fresh one (new buffers, empty input).
    stdcall fn AllocConsole(env) -> bool {
        if !env.con.detached { return env.fail(err::ACCESS_DENIED, false); }
        env.con.detached = false;
        env.con.buffers = Default::default();
        true
    }
    stdcall fn FreeConsole(env) -> bool { env.con.detached = true; true }
    // No other process has a console to attach to.
    stdcall fn AttachConsole(env, pid: u32) -> bool {
        if !env.con.detached { return env.fail(err::ACCESS_DENIED, false); }
        if pid == u32::MAX { env.fail(err::INVALID_HANDLE, false) } else { env.fail(err::INVALID_PARAMETER, false) }
    }
    stdcall fn GetConsoleProcessList(env, list: u32, n: u32) -> u32 {
        if list == 0 || n == 0 { return env.fail(err::INVALID_PARAMETER, 0); }
        let pid = crate::process::PROCESS_ID;
        env.mem.poke_u32(list, pid);
        1
    }
    stdcall fn VerifyConsoleIoHandle(env, h: u32) -> bool { kind(env, h).is_some() }
    stdcall fn CloseConsoleHandle(env, h: u32) -> bool {
        if kind(env, h).is_none() { return env.fail(err::INVALID_HANDLE, false); }
        crate::io::close(env, h).is_ok()
    }
    stdcall fn DuplicateConsoleHandle(env, h: u32, access: u32, inherit: bool, options: u32) -> u32 {
        if kind(env, h).is_none() { return env.fail(err::INVALID_HANDLE, u32::MAX); }
        env.handles.duplicate(h).unwrap_or(u32::MAX)
    }
    stdcall fn GetConsoleOriginalTitleA(env, buf: u32, cap: u32) -> u32 { title(env, buf, cap, false) }
    stdcall fn GetConsoleOriginalTitleW(env, buf: u32, cap: u32) -> u32 { title(env, buf, cap, true) }
    stdcall fn GenerateConsoleCtrlEvent(env, ev: u32, group: u32) -> bool { generate_ctrl(env, ev) }
    stdcall fn ctrl_dispatch as "(mainemu console control)" (env, ev: u32) -> Ret { ctrl_dispatch(env, ev, None) }
}

/// GenerateConsoleCtrlEvent: as on Windows, a new thread of the process
/// runs the handlers; a Ctrl+C the process ignores runs none.
fn generate_ctrl(env: &mut Env, ev: u32) -> bool {
    // CTRL_C_EVENT 0 and CTRL_BREAK_EVENT 1 are the ones a program may send.
    if ev > 1 {
        return env.fail(err::INVALID_PARAMETER, false);
    }
    if ev == 0 && env.con.ctrl_c_ignored {
        return true;
    }
    let n = crate::pe::ImportName::Name {
        hint: 0,
        name: "(mainemu console control)".into(),
    };
    let start = crate::modules::bind_import(env, "kernel32.dll", &n).unwrap_or(0);
    super::sync::create_thread(env, 0x1_0000, start, ev, 0, 0) != 0
}

/// The control thread: handlers from the last registered down until one
/// returns TRUE; none does: the default handler ends the process with
/// STATUS_CONTROL_C_EXIT.
fn ctrl_dispatch(env: &mut Env, ev: u32, below: Option<usize>) -> Ret {
    let i = below.unwrap_or(env.con.ctrl_handlers.len());
    if i == 0 {
        return Ret::Exit(0xC000_013A);
    }
    let f = env.con.ctrl_handlers[i - 1];
    Ret::call(f, vec![ev], move |env, r| {
        if r != 0 {
            Ret::Value(0)
        } else {
            ctrl_dispatch(env, ev, Some((i - 1).min(env.con.ctrl_handlers.len())))
        }
    })
}
