//! The C runtime's process calls: the `_spawn` family (v/l, p, e forms),
//! `_popen`/`_pclose` and `_pipe`.
//!
//! Owns the C conventions: the command line is the arguments joined by
//! spaces (the runtime adds no quotes), the modes (_P_WAIT gives the exit
//! code, _P_NOWAIT/_P_NOWAITO the process handle, _P_OVERLAY ends the
//! caller with the child's code, _P_DETACH 0), errno and -1 on failure.
//! Children run through kernel32's CreateProcess (inside the call, to their
//! end). `_popen` and `system` hand their command to `cmd.exe /c` as the
//! runtime does (kernel32's built-in cmd, `kernel32::cmd`), `_popen` with
//! its standard output captured in a pipe the returned stream reads. It
//! must not start host processes; an environment block given to the `e`
//! forms is not passed (children get the parent's).

use super::fd::{self, errno, oflag};
use crate::dll::kernel32::pipe::{anon_pipe, create_process_str};
use crate::dll::{Env, Ret};

const P_WAIT: u32 = 0;
const P_NOWAIT: u32 = 1;
const P_OVERLAY: u32 = 2;
const P_NOWAITO: u32 = 3;
const P_DETACH: u32 = 4;

/// The strings of a NULL-terminated array of `char*` (at most 1024).
fn string_array(env: &Env, mut p: u32, wide: bool) -> Vec<String> {
    let mut v = Vec::new();
    while let Some(a) = env.mem.peek_u32(p) {
        if a == 0 || v.len() >= 1024 {
            break;
        }
        v.push(env.read_str(a, wide).unwrap_or_default());
        p += 4;
    }
    v
}

/// Frees a scratch block of the process heap.
fn free(env: &mut Env, p: u32) {
    let h = env.process_heap;
    env.with_heap(h, |heap, _| heap.free(p));
}

/// Runs `path` with `args` as the C runtime's spawn does.
fn spawn(env: &mut Env, mode: u32, path: Option<String>, args: Vec<String>, search: bool) -> Ret {
    let Some(path) = path.filter(|p| !p.is_empty()) else {
        fd::set_errno(env, errno::EINVAL);
        return Ret::Value(u32::MAX);
    };
    if mode > P_DETACH {
        fd::set_errno(env, errno::EINVAL);
        return Ret::Value(u32::MAX);
    }
    let cmdline = args.join(" ");
    // A bare name is searched (the p forms) with ".exe" added, as
    // CreateProcess does for a command line without an application name.
    let bare = !path.contains(['\\', '/', ':']);
    let (app, cmd) = if search && bare {
        let rest: Vec<&String> = args.iter().skip(1).collect();
        let rest: Vec<&str> = rest.iter().map(|s| s.as_str()).collect();
        (None, format!("\"{path}\" {}", rest.join(" ")))
    } else {
        (Some(path.clone()), cmdline)
    };
    let pi = env.alloc(16);
    let r = create_process_str(env, app, Some(cmd), 0, pi);
    let hp = env.mem.peek_u32(pi).unwrap_or(0);
    let ht = env.mem.peek_u32(pi + 4).unwrap_or(0);
    free(env, pi);
    match r {
        Ret::Value(0) => {
            let e = if env.last_error == 2 || env.last_error == 3 {
                errno::ENOENT
            } else {
                errno::EINVAL
            };
            fd::set_errno(env, e);
            Ret::Value(u32::MAX)
        }
        Ret::Value(_) => {
            crate::io::close(env, ht).ok();
            let code = env.children.last().map_or(0, |c| c.2);
            match mode {
                P_WAIT => {
                    crate::io::close(env, hp).ok();
                    Ret::Value(code)
                }
                P_NOWAIT | P_NOWAITO => Ret::Value(hp),
                P_OVERLAY => Ret::Exit(code),
                _ => {
                    crate::io::close(env, hp).ok();
                    Ret::Value(0)
                }
            }
        }
        other => other,
    }
}

/// The variadic arguments after `first` (the l forms): up to the NULL.
fn list_args(env: &Env, first: u32, wide: bool) -> (Vec<String>, u32) {
    let mut v = Vec::new();
    let mut p = first;
    while let Some(a) = env.mem.peek_u32(p) {
        p += 4;
        if a == 0 || v.len() >= 1024 {
            break;
        }
        v.push(env.read_str(a, wide).unwrap_or_default());
    }
    (v, p)
}

/// _popen: runs the command with its standard output in a pipe; the stream
/// reads what it wrote. Only "r" is modelled (a child's standard input is
/// not connected): "w" is EINVAL.
fn popen(env: &mut Env, cmd: u32, mode: u32, wide: bool) -> Ret {
    let (Some(c), Some(m)) = (env.read_str(cmd, wide), env.read_str(mode, wide)) else {
        fd::set_errno(env, errno::EINVAL);
        return Ret::Value(0);
    };
    if !m.contains('r') || m.contains('w') {
        fd::set_errno(env, errno::EINVAL);
        return Ret::Value(0);
    }
    let (r, w) = anon_pipe(env);
    let si = env.alloc(68);
    let mut b = [0u8; 68];
    b[0..4].copy_from_slice(&68u32.to_le_bytes());
    b[44..48].copy_from_slice(&0x100u32.to_le_bytes()); // STARTF_USESTDHANDLES
    b[60..64].copy_from_slice(&w.to_le_bytes());
    b[64..68].copy_from_slice(&env.std_handles[2].to_le_bytes());
    env.mem.poke(si, &b);
    let pi = env.alloc(16);
    let res = create_process_str(env, None, Some(format!("cmd.exe /c {c}")), si, pi);
    let (hp, ht) = (
        env.mem.peek_u32(pi).unwrap_or(0),
        env.mem.peek_u32(pi + 4).unwrap_or(0),
    );
    free(env, si);
    free(env, pi);
    crate::io::close(env, w).ok();
    match res {
        Ret::Value(0) => {
            crate::io::close(env, r).ok();
            fd::set_errno(env, errno::ENOENT);
            Ret::Value(0)
        }
        Ret::Value(_) => {
            crate::io::close(env, hp).ok();
            crate::io::close(env, ht).ok();
            let code = env.children.last().map_or(0, |c| c.2);
            let text = if m.contains('b') {
                oflag::BINARY
            } else {
                oflag::TEXT
            };
            let Ok(fdn) = fd::alloc(env, r, oflag::RDONLY | text) else {
                crate::io::close(env, r).ok();
                fd::set_errno(env, errno::EMFILE);
                return Ret::Value(0);
            };
            let file = super::stdio::attach(env, fdn, true, false, None);
            env.crt.popen.insert(file, code);
            Ret::Value(file)
        }
        other => other,
    }
}

/// system: `cmd.exe /c COMMAND`, its exit code; NULL asks whether a shell
/// exists (it does).
pub fn system(env: &mut Env, cmd: u32, wide: bool) -> Ret {
    if cmd == 0 {
        return Ret::Value(1);
    }
    let Some(c) = env.read_str(cmd, wide) else {
        fd::set_errno(env, errno::EINVAL);
        return Ret::Value(u32::MAX);
    };
    let pi = env.alloc(16);
    let r = create_process_str(env, None, Some(format!("cmd.exe /c {c}")), 0, pi);
    let (hp, ht) = (
        env.mem.peek_u32(pi).unwrap_or(0),
        env.mem.peek_u32(pi + 4).unwrap_or(0),
    );
    free(env, pi);
    match r {
        Ret::Value(0) => {
            fd::set_errno(env, errno::ENOENT);
            Ret::Value(u32::MAX)
        }
        Ret::Value(_) => {
            crate::io::close(env, hp).ok();
            crate::io::close(env, ht).ok();
            Ret::Value(env.children.last().map_or(0, |c| c.2))
        }
        other => other,
    }
}

fn pclose(env: &mut Env, file: u32) -> i32 {
    let Some(code) = env.crt.popen.remove(&file) else {
        fd::set_errno(env, errno::EBADF);
        return -1;
    };
    super::stdio::fclose(env, file);
    code as i32
}

/// _pipe(fds, size, mode): an anonymous pipe as two descriptors.
fn pipe(env: &mut Env, fds: u32, mode: u32) -> i32 {
    if fds == 0 {
        fd::set_errno(env, errno::EINVAL);
        return -1;
    }
    let (r, w) = anon_pipe(env);
    let text = mode & (oflag::BINARY | oflag::TEXT);
    match (
        fd::alloc(env, r, oflag::RDONLY | text),
        fd::alloc(env, w, oflag::WRONLY | text),
    ) {
        (Ok(a), Ok(b)) => {
            env.mem.poke_u32(fds, a as u32);
            env.mem.poke_u32(fds + 4, b as u32);
            0
        }
        _ => {
            fd::set_errno(env, errno::EMFILE);
            -1
        }
    }
}

crate::dll! { "(crt spawn)";
    cdecl fn _spawnv(env, mode: u32, path: u32, argv: u32) -> Ret { let (p, a) = (env.read_str(path, false), string_array(env, argv, false)); spawn(env, mode, p, a, false) }
    cdecl fn _spawnvp(env, mode: u32, path: u32, argv: u32) -> Ret { let (p, a) = (env.read_str(path, false), string_array(env, argv, false)); spawn(env, mode, p, a, true) }
    cdecl fn _spawnve(env, mode: u32, path: u32, argv: u32, envp: u32) -> Ret { let (p, a) = (env.read_str(path, false), string_array(env, argv, false)); spawn(env, mode, p, a, false) }
    cdecl fn _spawnvpe(env, mode: u32, path: u32, argv: u32, envp: u32) -> Ret { let (p, a) = (env.read_str(path, false), string_array(env, argv, false)); spawn(env, mode, p, a, true) }
    cdecl fn _wspawnv(env, mode: u32, path: u32, argv: u32) -> Ret { let (p, a) = (env.read_str(path, true), string_array(env, argv, true)); spawn(env, mode, p, a, false) }
    cdecl fn _wspawnvp(env, mode: u32, path: u32, argv: u32) -> Ret { let (p, a) = (env.read_str(path, true), string_array(env, argv, true)); spawn(env, mode, p, a, true) }
    cdecl fn _spawnl(env, mode: u32, path: u32) -> Ret { let p = env.read_str(path, false); let (a, _) = list_args(env, env.arg_base + 8, false); spawn(env, mode, p, a, false) }
    cdecl fn _spawnlp(env, mode: u32, path: u32) -> Ret { let p = env.read_str(path, false); let (a, _) = list_args(env, env.arg_base + 8, false); spawn(env, mode, p, a, true) }
    cdecl fn _spawnle(env, mode: u32, path: u32) -> Ret { let p = env.read_str(path, false); let (a, _) = list_args(env, env.arg_base + 8, false); spawn(env, mode, p, a, false) }
    cdecl fn _spawnlpe(env, mode: u32, path: u32) -> Ret { let p = env.read_str(path, false); let (a, _) = list_args(env, env.arg_base + 8, false); spawn(env, mode, p, a, true) }
    cdecl fn _popen(env, cmd: u32, mode: u32) -> Ret { popen(env, cmd, mode, false) }
    cdecl fn _wpopen(env, cmd: u32, mode: u32) -> Ret { popen(env, cmd, mode, true) }
    cdecl fn _pclose(env, file: u32) -> i32 { pclose(env, file) }
    cdecl fn _pipe(env, fds: u32, size: u32, mode: u32) -> i32 { pipe(env, fds, mode) }
}
