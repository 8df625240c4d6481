//! MSVCRT.dll: the exports mainemu implements, each declared once.
//!
//! Owns msvcrt's export table; the bodies are shared with ucrtbase in
//! [`super::crt`]. Must not touch host state directly.

use super::crt;

use super::Env;

/// __getmainargs(&argc, &argv, &envp, wildcard, &startinfo): builds argv
/// (and an empty environment) on the process heap.
fn getmainargs(env: &mut Env, argc_p: u32, argv_p: u32, envp_p: u32) -> i32 {
    let args = env.argv.clone();
    let table = crt::malloc(env, 4 * (args.len() as u32 + 1));
    for (k, a) in args.iter().enumerate() {
        let mut b = a.clone().into_bytes();
        b.push(0);
        let s = crt::malloc(env, b.len() as u32);
        env.mem.poke(s, &b);
        env.mem.poke_u32(table + 4 * k as u32, s);
    }
    env.mem.poke_u32(table + 4 * args.len() as u32, 0);
    let envp = crt::calloc(env, 1, 4);
    env.mem.poke_u32(argc_p, args.len() as u32);
    env.mem.poke_u32(argv_p, table);
    env.mem.poke_u32(envp_p, envp);
    0
}

/// The address of one of msvcrt's variables (allocated when imported or
/// first asked for; `_locale_c_str` starts as "C").
fn data(env: &mut Env, name: &str) -> u32 {
    let key = format!("msvcrt.dll!{name}");
    if let Some(&a) = env.data.get(&key) {
        return a;
    }
    let a = crt::calloc(env, 1, 4);
    if name == "_locale_c_str" {
        env.mem.poke(a, b"C\0");
    }
    env.data.insert(key, a);
    a
}

/// The stream a `FILE *` names: msvcrt's `_iob` holds stdin, stdout,
/// stderr as 32-byte FILEs. Only the console streams are modelled so far.
fn stream_of(env: &mut Env, file: u32) -> Option<u8> {
    let iob = data(env, "_iob");
    match file.wrapping_sub(iob) {
        32 => Some(1),
        64 => Some(2),
        _ => None,
    }
}

/// Writes formatted or raw bytes to a stream; the byte count or -1.
fn put(env: &mut Env, file: u32, bytes: &[u8]) -> i32 {
    match stream_of(env, file) {
        Some(s) => {
            env.write_console(s, bytes);
            bytes.len() as i32
        }
        None => -1,
    }
}

/// sprintf-style store of `bytes` plus NUL into `buf` (at most `cap` bytes
/// with the NUL when `cap` is given); returns the length or -1 when truncated.
fn store(env: &mut Env, buf: u32, cap: Option<u32>, bytes: &[u8]) -> i32 {
    let mut b = bytes.to_vec();
    let truncated = cap.is_some_and(|c| b.len() >= c as usize);
    if let Some(c) = cap {
        if c == 0 {
            return -1;
        }
        b.truncate(c as usize - 1);
    }
    b.push(0);
    env.mem.poke(buf, &b);
    if truncated {
        -1
    } else {
        bytes.len() as i32
    }
}

fn fmt(env: &Env, f: u32, va: u32) -> Vec<u8> {
    super::printf::format(&env.mem, f, va, false)
}

crate::dll! { "msvcrt.dll";
    @also crt::common::DLL;
    @data _iob [96] = [0u8; 0];
    @data __initenv [4] = [0u8; 0];
    @data __mb_cur_max [4] = [1u8, 0, 0, 0];
    @data _fmode [4] = [0u8; 0];
    @data _commode [4] = [0u8; 0];
    cdecl fn __getmainargs(env, argc_p: u32, argv_p: u32, envp_p: u32, wildcard: u32, startinfo: u32) -> i32 {
        getmainargs(env, argc_p, argv_p, envp_p)
    }
    cdecl fn printf(env, f: u32) -> i32 {
        let out = fmt(env, f, env.arg_base + 4);
        env.write_console(1, &out);
        out.len() as i32
    }
    cdecl fn fprintf(env, file: u32, f: u32) -> i32 { let out = fmt(env, f, env.arg_base + 8); put(env, file, &out) }
    cdecl fn vprintf(env, f: u32, va: u32) -> i32 { let out = fmt(env, f, va); env.write_console(1, &out); out.len() as i32 }
    cdecl fn vfprintf(env, file: u32, f: u32, va: u32) -> i32 { let out = fmt(env, f, va); put(env, file, &out) }
    cdecl fn sprintf(env, buf: u32, f: u32) -> i32 { let out = fmt(env, f, env.arg_base + 8); store(env, buf, None, &out) }
    cdecl fn vsprintf(env, buf: u32, f: u32, va: u32) -> i32 { let out = fmt(env, f, va); store(env, buf, None, &out) }
    cdecl fn _snprintf(env, buf: u32, n: u32, f: u32) -> i32 { let out = fmt(env, f, env.arg_base + 12); store(env, buf, Some(n), &out) }
    cdecl fn _vsnprintf(env, buf: u32, n: u32, f: u32, va: u32) -> i32 { let out = fmt(env, f, va); store(env, buf, Some(n), &out) }
    cdecl fn fputc(env, c: u32, file: u32) -> i32 { if put(env, file, &[c as u8]) < 0 { -1 } else { (c & 0xFF) as i32 } }
    cdecl fn putchar(env, c: u32) -> i32 { env.write_console(1, &[c as u8]); (c & 0xFF) as i32 }
    cdecl fn fputs(env, s: u32, file: u32) -> i32 {
        let b = env.mem.peek_cstr(s, 1 << 24).unwrap_or_default();
        if put(env, file, &b) < 0 { -1 } else { 0 }
    }
    cdecl fn fwrite(env, buf: u32, size: u32, n: u32, file: u32) -> u32 {
        let Some(total) = size.checked_mul(n) else { return 0 };
        let mut b = vec![0; total as usize];
        if env.mem.peek(buf, &mut b).is_none() { return 0; }
        if put(env, file, &b) < 0 { 0 } else { n }
    }
    cdecl fn fflush(env, file: u32) -> i32 { 0 }
    cdecl fn strchr(env, s: u32, c: u32) -> u32 { crt::strchr(env, s, c) }
    cdecl fn strncmp(env, a: u32, b: u32, n: u32) -> i32 { crt::strncmp(env, a, b, n) }
    cdecl fn wcslen(env, s: u32) -> u32 { crt::wcslen(env, s) }
    cdecl fn atoi(env, s: u32) -> i32 { crt::atoi(env, s) }
    cdecl fn _errno(env) -> u32 { data(env, "_errno_value") }
    // The guest environment is empty (deterministic; nothing of the host leaks in).
    cdecl fn getenv(env, name: u32) -> u32 { 0 }
    // One guest thread at a time: the CRT's locks never contend.
    cdecl fn _lock(env, n: u32) {}
    cdecl fn _unlock(env, n: u32) {}
    cdecl fn abort(env) -> super::Ret { super::Ret::Exit(3) }
    cdecl fn _amsg_exit(env, code: u32) -> super::Ret { super::Ret::Exit(255) }
    // Only the "C" locale exists: any query or change answers "C".
    cdecl fn setlocale(env, category: u32, locale: u32) -> u32 { data(env, "_locale_c_str") }
    // struct lconv of the C locale: decimal_point ".", every other string "".
    cdecl fn localeconv(env) -> u32 {
        if let Some(&l) = env.data.get("msvcrt.dll!_lconv") { return l; }
        let s = crt::calloc(env, 1, 4);
        env.mem.poke(s, b".\0\0");
        let mut b = Vec::new();
        for k in 0..14u32 { b.extend_from_slice(&(if k == 0 { s } else { s + 2 }).to_le_bytes()); }
        let l = crt::calloc(env, 1, 56);
        env.mem.poke(l, &b);
        env.data.insert("msvcrt.dll!_lconv".into(), l);
        l
    }
    cdecl fn _initterm(env, start: u32, end: u32) -> super::Ret {
        let mut fns = Vec::new();
        let mut a = start;
        while a < end && fns.len() < 65536 {
            match env.mem.peek_u32(a) { Some(0) => {} Some(f) => fns.push(f), None => break }
            a += 4;
        }
        super::Ret::call_each(env, fns.into(), Box::new(|_| super::Ret::Value(0)))
    }
    cdecl fn _onexit(env, f: u32) -> u32 { env.crt.atexit.push(f); f }
    cdecl fn atexit(env, f: u32) -> i32 { env.crt.atexit.push(f); 0 }
    cdecl fn __set_app_type(env, kind: u32) {}
    cdecl fn __setusermatherr(env, handler: u32) {}
    cdecl fn _cexit(env) {}
    cdecl fn __p__fmode(env) -> u32 { data(env, "_fmode") }
    cdecl fn __p__commode(env) -> u32 { data(env, "_commode") }
    cdecl fn __p__acmdln(env) -> u32 {
        let p = data(env, "_acmdln");
        let c = env.cmdline_a;
        env.mem.poke_u32(p, c);
        p
    }
}
