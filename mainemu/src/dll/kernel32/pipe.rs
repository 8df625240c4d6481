//! kernel32's named pipes, overlapped pipe reads, I/O completion ports,
//! DuplicateHandle and CreateProcess (which finds the program in the guest's
//! drives and runs it as a child process inside the call; `cmd`/`cmd.exe`
//! is the built-in shell of `kernel32::cmd`).
//!
//! Owns: the server ends of named pipes (`\\.\pipe\NAME`, inbound byte
//! pipes, one instance each), their pending ConnectNamedPipe and overlapped
//! ReadFile, completion ports and their packet queues. Everything completes
//! on the guest's own calls (a client opening the pipe, a write, a close):
//! no host threads, no host time; GetQueuedCompletionStatus on an empty
//! port waits on the guest clock like the other waits.
//!
//! A child runs to its end inside CreateProcess (a second `Process`, arm
//! l0, nesting at most 8); a program found nowhere gives
//! ERROR_FILE_NOT_FOUND as on Windows.

use super::sync::{deadline, WAIT_TIMEOUT};
use crate::dll::{Env, Ret};
use crate::files::err;
use crate::handles::{Object, Packet, PipeBuf, INVALID};
use std::collections::BTreeMap;

const STATUS_PENDING: u32 = 0x103;
const STATUS_PIPE_BROKEN: u32 = 0xC000_014B;
const ERROR_IO_PENDING: u32 = 997;
const ERROR_IO_INCOMPLETE: u32 = 996;
const ERROR_PIPE_BUSY: u32 = 231;
const ERROR_PIPE_CONNECTED: u32 = 535;
const ERROR_PIPE_LISTENING: u32 = 536;
const ERROR_INVALID_NAME: u32 = 123;
const PIPE_ACCESS_INBOUND: u32 = 1;
const PIPE_TYPE_MESSAGE: u32 = 4;

/// One named pipe's server side.
#[derive(Clone, Debug, Default)]
pub struct NamedPipe {
    /// `\\.\pipe\name`, lowercase.
    pub name: String,
    /// A client has opened it.
    pub connected: bool,
    /// A ConnectNamedPipe waiting for a client (its OVERLAPPED).
    pub connect_ov: Option<u32>,
    /// An overlapped ReadFile waiting for data: (buffer, size, OVERLAPPED).
    pub read: Option<(u32, u32, u32)>,
}

/// Named pipes by the id of their buffer object, and completion-port
/// associations by the id of the file object (port object id, key).
#[derive(Default)]
pub struct Pipes {
    pub named: BTreeMap<u32, NamedPipe>,
    pub ports: BTreeMap<u32, (u32, u32)>,
}

/// Win32 error code of an NTSTATUS an overlapped operation ended with.
fn status_error(s: u32) -> u32 {
    match s {
        STATUS_PIPE_BROKEN => err::BROKEN_PIPE,
        0xC000_0011 => err::HANDLE_EOF,
        _ => 31, // ERROR_GEN_FAILURE
    }
}

/// The named pipe behind a server handle: its buffer object id.
fn server_of(env: &Env, h: u32) -> Option<u32> {
    match env.handles.get(h) {
        Some(Object::PipeEnd { buf, write: false }) if env.pipes.named.contains_key(buf) => {
            Some(*buf)
        }
        _ => None,
    }
}

/// Ends an overlapped operation: OVERLAPPED.Internal/InternalHigh, its
/// event, and a packet on the port the server end is associated with.
fn complete(env: &mut Env, buf: u32, ov: u32, bytes: u32, status: u32) {
    env.mem.poke_u32(ov, status);
    env.mem.poke_u32(ov + 4, bytes);
    if let Some(ev) = env.mem.peek_u32(ov + 16) {
        if let Some(Object::Event { signaled, .. }) = env.handles.get_mut(ev & !1) {
            *signaled = true;
        }
    }
    let server = env.pipes.named.get(&buf).map(|_| ()).and_then(|_| {
        // The server end is the PipeEnd object reading `buf`; its association
        // was recorded under that object's id.
        env.pipes
            .ports
            .iter()
            .find(|(id, _)| {
                matches!(env.handles.by_id(**id), Some(Object::PipeEnd { buf: b, write: false }) if *b == buf)
            })
            .map(|(_, &pk)| pk)
    });
    if let Some((port, key)) = server {
        if let Some(Object::Port(q)) = env.handles.by_id_mut(port) {
            q.push_back(Packet {
                bytes,
                key,
                ov,
                status,
            });
        }
    }
    env.threads.epoch += 1;
}

/// Completes what a named pipe's state now allows: a waiting connect once a
/// client is there, a waiting read once data arrived or every writer left.
pub fn poll(env: &mut Env, buf: u32) {
    let Some(np) = env.pipes.named.get(&buf).cloned() else {
        return;
    };
    if np.connected {
        if let Some(ov) = np.connect_ov {
            env.pipes.named.get_mut(&buf).expect("present").connect_ov = None;
            complete(env, buf, ov, 0, 0);
        }
    }
    if let Some((dst, n, ov)) = np.read {
        let (data, writers) = match env.handles.by_id_mut(buf) {
            Some(Object::PipeBuf(p)) => {
                let k = (n as usize).min(p.data.len());
                (p.data.drain(..k).collect::<Vec<u8>>(), p.writers)
            }
            _ => (Vec::new(), 0),
        };
        if !data.is_empty() {
            env.pipes.named.get_mut(&buf).expect("present").read = None;
            env.mem.poke(dst, &data);
            complete(env, buf, ov, data.len() as u32, 0);
        } else if writers == 0 && np.connected {
            env.pipes.named.get_mut(&buf).expect("present").read = None;
            complete(env, buf, ov, 0, STATUS_PIPE_BROKEN);
        }
    }
}

/// After a write to or the close of a pipe end: completes what it allows.
pub fn after_io(env: &mut Env, buf: u32) {
    if env.pipes.named.contains_key(&buf) {
        if env.handles.by_id(buf).is_none() {
            env.pipes.named.remove(&buf);
        } else {
            poll(env, buf);
        }
    }
}

/// Forgets the port association of a file object that was closed.
pub fn forget(env: &mut Env, id: u32) {
    env.pipes.ports.remove(&id);
}

fn create_named_pipe(env: &mut Env, name: u32, wide: bool, open_mode: u32, pipe_mode: u32) -> Ret {
    let Some(n) = env.read_str(name, wide) else {
        return Ret::Value(env.fail(998, INVALID));
    };
    let low = n.to_ascii_lowercase();
    let Some(rest) = low.strip_prefix("\\\\.\\pipe\\") else {
        return Ret::Value(env.fail(ERROR_INVALID_NAME, INVALID));
    };
    if rest.is_empty() {
        return Ret::Value(env.fail(ERROR_INVALID_NAME, INVALID));
    }
    if open_mode & 3 != PIPE_ACCESS_INBOUND || pipe_mode & PIPE_TYPE_MESSAGE != 0 {
        return Ret::Stop(format!(
            "CreateNamedPipe {n:?}: only inbound byte pipes are modelled (open mode {open_mode:#x}, pipe mode {pipe_mode:#x})"
        ));
    }
    if env.pipes.named.values().any(|p| p.name == low) {
        return Ret::Value(env.fail(ERROR_PIPE_BUSY, INVALID));
    }
    let buf = env.handles.add_object(
        Object::PipeBuf(PipeBuf {
            readers: 1,
            ..Default::default()
        }),
        None,
    );
    env.pipes.named.insert(
        buf,
        NamedPipe {
            name: low,
            ..Default::default()
        },
    );
    env.last_error = 0;
    Ret::Value(env.handles.add(Object::PipeEnd { buf, write: false }))
}

/// CreateFile of `\\.\pipe\NAME`: a client (write) end of a named pipe.
pub fn open_client(env: &mut Env, path: &str, desired: u32) -> u32 {
    let low = path.to_ascii_lowercase();
    let Some((&buf, np)) = env.pipes.named.iter().find(|(_, p)| p.name == low) else {
        return env.fail(err::FILE_NOT_FOUND, INVALID);
    };
    if np.connected {
        return env.fail(ERROR_PIPE_BUSY, INVALID);
    }
    // GENERIC_READ, FILE_READ_DATA: the pipe is inbound only.
    if desired & (0x8000_0000 | 1) != 0 {
        return env.fail(err::ACCESS_DENIED, INVALID);
    }
    if let Some(Object::PipeBuf(p)) = env.handles.by_id_mut(buf) {
        p.writers += 1;
    }
    env.pipes.named.get_mut(&buf).expect("present").connected = true;
    let h = env.handles.add(Object::PipeEnd { buf, write: true });
    poll(env, buf);
    env.last_error = 0;
    h
}

/// An overlapped ReadFile on a named pipe's server end.
pub fn read_overlapped(env: &mut Env, h: u32, dst: u32, n: u32, got: u32, ov: u32) -> Option<Ret> {
    let buf = server_of(env, h)?;
    let np = env.pipes.named.get(&buf).cloned()?;
    if np.read.is_some() {
        return Some(Ret::Stop(
            "ReadFile: a second overlapped read on a named pipe is not modelled".into(),
        ));
    }
    if got != 0 {
        env.mem.poke_u32(got, 0);
    }
    let (empty, writers) = match env.handles.by_id(buf) {
        Some(Object::PipeBuf(p)) => (p.data.is_empty(), p.writers),
        _ => (true, 0),
    };
    if empty && writers == 0 {
        let e = if np.connected {
            err::BROKEN_PIPE
        } else {
            ERROR_PIPE_LISTENING
        };
        return Some(Ret::Value(env.fail(e, 0)));
    }
    env.mem.poke_u32(ov, STATUS_PENDING);
    env.mem.poke_u32(ov + 4, 0);
    env.pipes.named.get_mut(&buf).expect("present").read = Some((dst, n, ov));
    poll(env, buf);
    if env.mem.peek_u32(ov) == Some(0) {
        // Done at once (a packet is queued all the same, as on Windows).
        let k = env.mem.peek_u32(ov + 4).unwrap_or(0);
        if got != 0 {
            env.mem.poke_u32(got, k);
        }
        env.last_error = 0;
        return Some(Ret::Value(1));
    }
    Some(Ret::Value(env.fail(ERROR_IO_PENDING, 0)))
}

fn connect(env: &mut Env, h: u32, ov: u32) -> Ret {
    let Some(buf) = server_of(env, h) else {
        return Ret::Value(env.fail(err::INVALID_HANDLE, 0));
    };
    let np = env.pipes.named.get(&buf).cloned().unwrap_or_default();
    if np.connected {
        return Ret::Value(env.fail(ERROR_PIPE_CONNECTED, 0));
    }
    if ov == 0 {
        // Synchronous: waits for a client (another thread of this process).
        return Ret::Block { deadline: None };
    }
    if np.connect_ov.is_some() {
        return Ret::Value(env.fail(err::INVALID_PARAMETER, 0));
    }
    env.mem.poke_u32(ov, STATUS_PENDING);
    env.mem.poke_u32(ov + 4, 0);
    env.pipes.named.get_mut(&buf).expect("present").connect_ov = Some(ov);
    Ret::Value(env.fail(ERROR_IO_PENDING, 0))
}

fn create_port(env: &mut Env, file: u32, existing: u32, key: u32) -> u32 {
    let port = if existing == 0 {
        None
    } else {
        match env.handles.get(existing) {
            Some(Object::Port(_)) => env.handles.id_of(existing),
            _ => return env.fail(err::INVALID_PARAMETER, 0),
        }
    };
    if file == INVALID {
        if port.is_some() {
            return env.fail(err::INVALID_PARAMETER, 0);
        }
        env.last_error = 0;
        return env.handles.add(Object::Port(Default::default()));
    }
    let Some(fid) = env.handles.id_of(file) else {
        return env.fail(err::INVALID_HANDLE, 0);
    };
    if env.pipes.ports.contains_key(&fid) {
        return env.fail(err::INVALID_PARAMETER, 0);
    }
    let (h, pid) = match port {
        Some(pid) => (existing, pid),
        None => {
            let h = env.handles.add(Object::Port(Default::default()));
            (h, env.handles.id_of(h).expect("just added"))
        }
    };
    env.pipes.ports.insert(fid, (pid, key));
    env.last_error = 0;
    h
}

/// Ends the current thread's wait (none when no thread runs: unit tests).
fn clear_wait(env: &mut Env) {
    if !env.threads.list.is_empty() {
        env.threads.cur_mut().wait_deadline = None;
    }
}

fn dequeue(env: &mut Env, port: u32, bytes: u32, key: u32, ov: u32, ms: u32) -> Ret {
    let q = match env.handles.get_mut(port) {
        Some(Object::Port(q)) => q,
        _ => return Ret::Value(env.fail(err::INVALID_HANDLE, 0)),
    };
    match q.pop_front() {
        Some(p) => {
            clear_wait(env);
            env.mem.poke_u32(bytes, p.bytes);
            env.mem.poke_u32(key, p.key);
            env.mem.poke_u32(ov, p.ov);
            if p.status != 0 {
                return Ret::Value(env.fail(status_error(p.status), 0));
            }
            env.last_error = 0;
            Ret::Value(1)
        }
        None => {
            let d = if ms == 0 {
                Some(env.clock)
            } else {
                deadline(env, ms)
            };
            match d {
                Some(d) if d <= env.clock => {
                    clear_wait(env);
                    env.mem.poke_u32(ov, 0);
                    Ret::Value(env.fail(WAIT_TIMEOUT, 0))
                }
                d => Ret::Block { deadline: d },
            }
        }
    }
}

fn overlapped_result(env: &mut Env, ov: u32, bytes: u32, wait: bool) -> Ret {
    let Some(status) = env.mem.peek_u32(ov) else {
        return Ret::Value(env.fail(998, 0));
    };
    if status == STATUS_PENDING {
        if wait {
            return Ret::Block { deadline: None };
        }
        return Ret::Value(env.fail(ERROR_IO_INCOMPLETE, 0));
    }
    let n = env.mem.peek_u32(ov + 4).unwrap_or(0);
    env.mem.poke_u32(bytes, n);
    if status != 0 {
        return Ret::Value(env.fail(status_error(status), 0));
    }
    Ret::Value(1)
}

fn duplicate(env: &mut Env, sp: u32, src: u32, dp: u32, dst: u32, options: u32) -> bool {
    use crate::handles::CURRENT_PROCESS;
    if sp != CURRENT_PROCESS || dp != CURRENT_PROCESS {
        return env.fail(err::INVALID_HANDLE, false);
    }
    let Some(h) = env.handles.duplicate(src) else {
        return env.fail(err::INVALID_HANDLE, false);
    };
    if dst != 0 && env.mem.poke_u32(dst, h).is_none() {
        crate::io::close(env, h).ok();
        return env.fail(998, false);
    }
    if options & 1 != 0 {
        // DUPLICATE_CLOSE_SOURCE
        crate::io::close(env, src).ok();
    }
    env.last_error = 0;
    true
}

/// The program a command line names: its first token, quoted or not.
fn program_of(cmd: &str) -> String {
    let c = cmd.trim_start_matches([' ', '\t']);
    if let Some(r) = c.strip_prefix('"') {
        r.split('"').next().unwrap_or("").to_string()
    } else {
        c.split([' ', '\t']).next().unwrap_or("").to_string()
    }
}

/// Dispatches a child process may run (inside the parent's CreateProcess).
pub const CHILD_BUDGET: u64 = 1_000_000_000;

/// How deep child processes may nest (each runs on the host stack).
const MAX_DEPTH: u32 = 8;

thread_local! {
    /// Children being run on this host thread (inside CreateProcess calls).
    static DEPTH: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Splits a command line into argv as the C runtime does (quotes group,
/// `\"` is a quote; backslashes otherwise literal).
fn split_args(cmd: &str) -> Vec<String> {
    let mut v = Vec::new();
    let mut cur = String::new();
    let (mut inq, mut any) = (false, false);
    let mut it = cmd.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\\' if it.peek() == Some(&'"') => {
                cur.push('"');
                it.next();
                any = true;
            }
            '"' => {
                inq = !inq;
                any = true;
            }
            ' ' | '\t' if !inq => {
                if any {
                    v.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        v.push(cur);
    }
    v
}

/// Runs the program at `host` (guest path `full`) as a child process to its
/// end, inside this call: a second `Process` on the same drives and
/// environment, its own address space and guest clock (its dispatches are
/// not the parent's), run on the plain interpreter for at most
/// [`CHILD_BUDGET`] dispatches, `stdin` as its console input. Its console
/// output goes to `outs` (standard output, standard error: a pipe end, a
/// file, the parent's console). Returns its exit code; a child that does
/// not exit or cannot load stops the run, except one that ends idle (every
/// thread waiting for input that cannot come): STILL_ACTIVE, a process that
/// stays blocked until TerminateProcess.
pub fn run_program(
    env: &mut Env,
    host: &std::path::Path,
    full: &str,
    cmdline: &str,
    outs: [u32; 2],
    stdin: Vec<u8>,
) -> Result<u32, Ret> {
    if DEPTH.with(|d| d.get()) >= MAX_DEPTH {
        return Err(Ret::Stop(format!(
            "child process {full}: processes nested deeper than {MAX_DEPTH}"
        )));
    }
    let bytes = match std::fs::read(host) {
        Ok(b) => b,
        Err(e) => return Err(Ret::Value(env.fail(crate::files::io_error(&e), 0))),
    };
    let mut argv = split_args(cmdline);
    if argv.is_empty() {
        argv.push(full.to_string());
    }
    let setup = crate::process::Setup {
        argv,
        drives: env.drives.clone(),
        exe_path: full.to_string(),
        vars: env.vars.clone(),
        stdin: Box::new(std::io::Cursor::new(stdin)),
    };
    let mut p = match crate::process::Process::with_setup(&bytes, setup) {
        Ok(p) => p,
        Err(e) => {
            return Err(Ret::Stop(format!(
                "child process {full} (command line {cmdline:?}) cannot start: {e}"
            )))
        }
    };
    let mut out: Vec<(u8, Vec<u8>)> = Vec::new();
    DEPTH.with(|d| d.set(d.get() + 1));
    let s = crate::run::run_arm(&mut p, crate::run::Arm::L0, CHILD_BUDGET, &mut |k, b| {
        out.push((k, b.to_vec()))
    });
    DEPTH.with(|d| d.set(d.get() - 1));
    let code = match s.ending {
        crate::run::Ending::Exit { code } => code,
        // Every thread waits for input nothing can send it (the parent
        // cannot reach its queues or objects): it stays blocked.
        crate::run::Ending::Idle => crate::threads::STILL_ACTIVE,
        e => {
            return Err(Ret::Stop(format!(
                "child process {full} (command line {cmdline:?}) did not exit: {e:?} after {} dispatches",
                s.dispatches
            )))
        }
    };
    env.children.push((full.to_string(), s.dispatches, code));
    for (k, b) in out {
        let to = outs[if k == 2 { 1 } else { 0 }];
        crate::io::write(env, to, &b).ok();
        if let Some(Object::PipeEnd { buf, .. }) = env.handles.get(to) {
            let b = *buf;
            after_io(env, b);
        }
    }
    Ok(code)
}

/// The standard output and error a child gets: the STARTUPINFO's
/// hStdOutput/hStdError with STARTF_USESTDHANDLES, else the parent's.
fn child_outs(env: &Env, si: u32) -> [u32; 2] {
    let flags = if si == 0 {
        0
    } else {
        env.mem.peek_u32(si + 44).unwrap_or(0)
    };
    if flags & 0x100 != 0 {
        [
            env.mem.peek_u32(si + 60).unwrap_or(0),
            env.mem.peek_u32(si + 64).unwrap_or(0),
        ]
    } else {
        [env.std_handles[1], env.std_handles[2]]
    }
}

/// A child that ended with `code`: its process and thread handles, and
/// PROCESS_INFORMATION at `pi`.
fn child_ended(env: &mut Env, code: u32, pi: u32) -> Ret {
    let hp = env.handles.add(Object::Process(code));
    let ht = env.handles.add(Object::Other("child thread"));
    if pi != 0 {
        let n = env.children.len() as u32;
        let mut b = Vec::new();
        for w in [hp, ht, 0x1000 + 8 * n, 0x1004 + 8 * n] {
            b.extend_from_slice(&w.to_le_bytes());
        }
        env.mem.poke(pi, &b);
    }
    env.last_error = 0;
    Ret::Value(1)
}

/// Runs a found program as a child process (see [`run_program`]).
fn run_child(
    env: &mut Env,
    host: &std::path::Path,
    full: &str,
    cmdline: &str,
    si: u32,
    pi: u32,
) -> Ret {
    let outs = child_outs(env, si);
    match run_program(env, host, full, cmdline, outs, Vec::new()) {
        Ok(code) => child_ended(env, code, pi),
        Err(r) => r,
    }
}

/// Whether a program name is cmd (`cmd`, `CMD.EXE`, any folder): the
/// built-in shell runs it.
pub fn is_cmd(name: &str) -> bool {
    let last = name.rsplit(['\\', '/']).next().unwrap_or("");
    last.eq_ignore_ascii_case("cmd") || last.eq_ignore_ascii_case("cmd.exe")
}

/// Finds a program as CreateProcess does: `.exe` added to a name without
/// an extension when no application name is given (`app`), then the search
/// folders for a bare name. Returns its host path and full guest path.
pub fn find_program(
    env: &Env,
    app: Option<&str>,
    name: &str,
) -> Option<(std::path::PathBuf, String)> {
    if name.is_empty() {
        return None;
    }
    let last = name.rsplit(['\\', '/']).next().unwrap_or("");
    let name = if app.is_none() && !last.contains('.') {
        format!("{name}.exe")
    } else {
        name.to_string()
    };
    let dirs: Vec<String> = if name.contains(['\\', '/', ':']) {
        vec![String::new()]
    } else {
        // Empty PATH entries are skipped here (the folders before them
        // are never empty).
        super::file::default_search_dirs(env)
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect()
    };
    for d in dirs {
        let cand = if d.is_empty() {
            name.clone()
        } else {
            format!("{}\\{}", d.trim_end_matches('\\'), name)
        };
        if let Ok(h) = super::file::resolve(env, &cand) {
            if h.is_file() {
                return Some((h, env.drives.lexical_full(&cand)));
            }
        }
    }
    None
}

/// CreateProcess: finds the program as Windows does (the exe's directory,
/// the current one, C:\windows\system32, C:\windows, PATH; `.exe` added to
/// a name without one) in the guest's drives and runs it to its end; `cmd`
/// is the built-in shell; not found: ERROR_FILE_NOT_FOUND.
fn create_process(env: &mut Env, app: u32, cmd: u32, wide: bool, si: u32, pi: u32) -> Ret {
    let app_s = if app == 0 {
        None
    } else {
        env.read_str(app, wide)
    };
    let cmd_s = if cmd == 0 {
        None
    } else {
        env.read_str(cmd, wide)
    };
    create_process_str(env, app_s, cmd_s, si, pi)
}

/// An anonymous pipe: (read end, write end) over one buffer.
pub fn anon_pipe(env: &mut Env) -> (u32, u32) {
    let buf = env.handles.add_object(
        Object::PipeBuf(PipeBuf {
            readers: 1,
            writers: 1,
            ..Default::default()
        }),
        None,
    );
    let r = env.handles.add(Object::PipeEnd { buf, write: false });
    let w = env.handles.add(Object::PipeEnd { buf, write: true });
    (r, w)
}

/// CreateProcess of command-line strings (the C runtime's spawn family
/// comes here too); `si`/`pi` are guest STARTUPINFO/PROCESS_INFORMATION
/// addresses or 0.
pub fn create_process_str(
    env: &mut Env,
    app_s: Option<String>,
    cmd_s: Option<String>,
    si: u32,
    pi: u32,
) -> Ret {
    let name = match (&app_s, &cmd_s) {
        (Some(a), _) => a.clone(),
        (None, Some(c)) => program_of(c),
        (None, None) => return Ret::Value(env.fail(err::INVALID_PARAMETER, 0)),
    };
    if name.is_empty() {
        return Ret::Value(env.fail(err::INVALID_PARAMETER, 0));
    }
    if is_cmd(&name) {
        // The built-in cmd.exe (`kernel32::cmd`).
        let line = cmd_s.clone().unwrap_or_else(|| name.clone());
        let [out, err] = child_outs(env, si);
        return match super::cmd::run(env, &line, out, err, &[]) {
            Ok(code) => {
                env.children
                    .push(("C:\\windows\\system32\\cmd.exe".into(), 0, code));
                child_ended(env, code, pi)
            }
            Err(r) => r,
        };
    }
    match find_program(env, app_s.as_deref(), &name) {
        Some((h, full)) => {
            let cmdline = cmd_s.clone().unwrap_or_else(|| full.clone());
            run_child(env, &h, &full, &cmdline, si, pi)
        }
        None => Ret::Value(env.fail(err::FILE_NOT_FOUND, 0)),
    }
}

crate::dll! { "(kernel32 pipes)";
    stdcall fn CreateNamedPipeA(env, name: u32, open_mode: u32, pipe_mode: u32, max: u32, out_size: u32, in_size: u32, timeout: u32, sa: u32) -> Ret {
        create_named_pipe(env, name, false, open_mode, pipe_mode)
    }
    stdcall fn CreateNamedPipeW(env, name: u32, open_mode: u32, pipe_mode: u32, max: u32, out_size: u32, in_size: u32, timeout: u32, sa: u32) -> Ret {
        create_named_pipe(env, name, true, open_mode, pipe_mode)
    }
    stdcall fn ConnectNamedPipe(env, h: u32, ov: u32) -> Ret { connect(env, h, ov) }
    stdcall fn CreateIoCompletionPort(env, file: u32, existing: u32, key: u32, threads: u32) -> u32 {
        create_port(env, file, existing, key)
    }
    stdcall fn GetQueuedCompletionStatus(env, port: u32, bytes: u32, key: u32, ov: u32, ms: u32) -> Ret {
        dequeue(env, port, bytes, key, ov, ms)
    }
    stdcall fn PostQueuedCompletionStatus(env, port: u32, bytes: u32, key: u32, ov: u32) -> bool {
        match env.handles.get_mut(port) {
            Some(Object::Port(q)) => {
                q.push_back(Packet { bytes, key, ov, status: 0 });
                env.threads.epoch += 1;
                true
            }
            _ => env.fail(err::INVALID_HANDLE, false),
        }
    }
    stdcall fn GetOverlappedResult(env, h: u32, ov: u32, bytes: u32, wait: bool) -> Ret {
        overlapped_result(env, ov, bytes, wait)
    }
    stdcall fn DuplicateHandle(env, sp: u32, src: u32, dp: u32, dst: u32, access: u32, inherit: bool, options: u32) -> bool {
        duplicate(env, sp, src, dp, dst, options)
    }
    // The flags are kept per handle and reported back; children are
    // started without inheriting handles, so HANDLE_FLAG_INHERIT changes
    // nothing else.
    stdcall fn SetHandleInformation(env, h: u32, mask: u32, flags: u32) -> bool {
        env.handles.set_info(h, mask, flags) || env.fail(err::INVALID_HANDLE, false)
    }
    stdcall fn GetHandleInformation(env, h: u32, out: u32) -> bool {
        match env.handles.info(h) {
            Some(f) => env.mem.poke_u32(out, f).is_some() || env.fail(998, false),
            None => env.fail(err::INVALID_HANDLE, false),
        }
    }
    stdcall fn CreatePipe(env, rd: u32, wr: u32, sa: u32, size: u32) -> bool {
        if rd == 0 || wr == 0 { return env.fail(err::INVALID_PARAMETER, false); }
        let (r, w) = anon_pipe(env);
        env.mem.poke_u32(rd, r);
        env.mem.poke_u32(wr, w);
        true
    }
    stdcall fn CreateProcessA(env, app: u32, cmd: u32, psa: u32, tsa: u32, inherit: bool, flags: u32, envp: u32, dir: u32, si: u32, pi: u32) -> Ret {
        create_process(env, app, cmd, false, si, pi)
    }
    stdcall fn CreateProcessW(env, app: u32, cmd: u32, psa: u32, tsa: u32, inherit: bool, flags: u32, envp: u32, dir: u32, si: u32, pi: u32) -> Ret {
        create_process(env, app, cmd, true, si, pi)
    }
}

#[cfg(test)]
mod tests {
    use super::super::sync::INFINITE;
    use super::*;
    use crate::memory::{mem, prot, Memory};

    fn call(env: &mut Env, name: &str, args: &[u32]) -> Ret {
        let e = DLL.exports.iter().find(|e| e.name == name).unwrap();
        (e.imp)(env, args)
    }

    #[test]
    fn port_pipe_connect_read_and_broken_pipe() {
        let mut env = Env::new(Memory::new());
        let m = env
            .mem
            .virtual_alloc(0, 0x1000, mem::RESERVE | mem::COMMIT, prot::READWRITE)
            .unwrap();
        env.mem.poke(m, b"\\\\.\\pipe\\t\0").unwrap();
        let (ov, out, data) = (m + 0x100, m + 0x200, m + 0x300);
        let Ret::Value(port) = call(&mut env, "CreateIoCompletionPort", &[INVALID, 0, 0, 1]) else {
            panic!()
        };
        let Ret::Value(srv) = call(
            &mut env,
            "CreateNamedPipeA",
            &[m, 0x4000_0001, 0, 255, 0, 0, INFINITE, 0],
        ) else {
            panic!()
        };
        assert_eq!(
            call(&mut env, "CreateIoCompletionPort", &[srv, port, 7, 0]),
            Ret::Value(port)
        );
        assert_eq!(
            call(&mut env, "ConnectNamedPipe", &[srv, ov]),
            Ret::Value(0)
        );
        assert_eq!(env.last_error, ERROR_IO_PENDING);
        // Nothing queued yet: a zero timeout answers WAIT_TIMEOUT.
        let q = [port, out, out + 4, out + 8, 0];
        assert_eq!(
            call(&mut env, "GetQueuedCompletionStatus", &q),
            Ret::Value(0)
        );
        assert_eq!(env.last_error, WAIT_TIMEOUT);
        let cli = open_client(&mut env, "\\\\.\\pipe\\T", 0x4000_0000);
        assert_ne!(cli, INVALID);
        assert_eq!(
            call(&mut env, "GetQueuedCompletionStatus", &q),
            Ret::Value(1)
        );
        assert_eq!(env.mem.peek_u32(out + 4), Some(7));
        assert_eq!(env.mem.peek_u32(out + 8), Some(ov));
        // A read waits, a write completes it with the bytes.
        assert_eq!(
            call(&mut env, "GetOverlappedResult", &[srv, ov, out, 0]),
            Ret::Value(1)
        );
        env.mem.poke(ov, &[0; 20]).unwrap();
        assert_eq!(
            crate::dll::kernel32::file::read_file(&mut env, srv, data, 64, 0, ov),
            Ret::Value(0)
        );
        assert_eq!(env.last_error, ERROR_IO_PENDING);
        crate::io::write(&mut env, cli, b"ok").unwrap();
        let b = match env.handles.get(cli) {
            Some(Object::PipeEnd { buf, .. }) => *buf,
            _ => panic!("not a pipe end"),
        };
        after_io(&mut env, b);
        assert_eq!(
            call(&mut env, "GetQueuedCompletionStatus", &q),
            Ret::Value(1)
        );
        assert_eq!(env.mem.peek_u32(out), Some(2));
        let mut b = [0u8; 2];
        env.mem.peek(data, &mut b).unwrap();
        assert_eq!(&b, b"ok");
        // The last writer goes: the next read fails at once with ERROR_BROKEN_PIPE.
        crate::io::close(&mut env, cli).unwrap();
        assert_eq!(
            crate::dll::kernel32::file::read_file(&mut env, srv, data, 64, 0, ov),
            Ret::Value(0)
        );
        assert_eq!(env.last_error, err::BROKEN_PIPE);
        assert_eq!(
            call(&mut env, "PostQueuedCompletionStatus", &[port, 0, 0, 0]),
            Ret::Value(1)
        );
        assert_eq!(
            call(&mut env, "GetQueuedCompletionStatus", &q),
            Ret::Value(1)
        );
        assert_eq!(env.mem.peek_u32(out + 4), Some(0));
    }

    #[test]
    fn program_names() {
        assert_eq!(program_of("cmd /c copy a b"), "cmd");
        assert_eq!(program_of("  \"C:\\a b\\t.exe\" x"), "C:\\a b\\t.exe");
        assert_eq!(
            split_args("t.exe  \"a b\" c\\\"d \"\""),
            ["t.exe", "a b", "c\"d", ""]
        );
    }
}
