//! The C runtime's start-up data: argc/argv (narrow and wide) and the
//! environment arrays built on the process heap once, then handed out by
//! msvcrt's `__getmainargs`/`__wgetmainargs`/`__p___argv`... and ucrtbase's
//! `_configure_narrow_argv`/`__p___argc`/`_get_initial_narrow_environment`.
//!
//! Owns the layout of those arrays; it must not parse the command line
//! differently from how the process built argv.

use crate::dll::Env;

/// A heap copy of `s` (UTF-16 or bytes).
fn alloc_str(env: &mut Env, s: &str, wide: bool) -> u32 {
    if wide {
        let w: Vec<u16> = s.encode_utf16().collect();
        env.alloc_wstr(&w)
    } else {
        env.alloc_cstr(s.as_bytes())
    }
}

/// (argc, argv array address) of the narrow or wide argv, built on first use.
pub fn argv(env: &mut Env, wide: bool) -> (u32, u32) {
    let key = if wide { "crt!(wargv)" } else { "crt!(argv)" };
    let args = env.argv.clone();
    if let Some(&a) = env.data.get(key) {
        return (args.len() as u32, a);
    }
    let table = env.alloc(4 * (args.len() as u32 + 1));
    for (k, a) in args.iter().enumerate() {
        let s = alloc_str(env, a, wide);
        env.mem.poke_u32(table + 4 * k as u32, s);
    }
    env.data.insert(key.into(), table);
    (args.len() as u32, table)
}

/// The environment as a NULL-terminated array of "NAME=VALUE" strings.
pub fn environ(env: &mut Env, wide: bool) -> u32 {
    let key = if wide {
        "crt!(wenviron)"
    } else {
        "crt!(environ)"
    };
    if let Some(&a) = env.data.get(key) {
        return a;
    }
    let vars = env.vars.clone();
    let table = env.alloc(4 * (vars.len() as u32 + 1));
    for (k, (n, v)) in vars.iter().enumerate() {
        let s = alloc_str(env, &format!("{n}={v}"), wide);
        env.mem.poke_u32(table + 4 * k as u32, s);
    }
    env.data.insert(key.into(), table);
    table
}

/// A pointer-sized variable holding `v` (for the `__p__*` accessors).
pub fn var_of(env: &mut Env, name: &str, v: u32) -> u32 {
    let key = format!("crt!(var {name})");
    if let Some(&a) = env.data.get(&key) {
        return a;
    }
    let a = env.alloc(4);
    env.mem.poke_u32(a, v);
    env.data.insert(key, a);
    a
}

/// `__getmainargs(&argc, &argv, &envp, wildcard, &startinfo)` and the wide form.
pub fn mainargs(env: &mut Env, argc_p: u32, argv_p: u32, envp_p: u32, wide: bool) -> i32 {
    let (n, a) = argv(env, wide);
    let e = environ(env, wide);
    env.mem.poke_u32(argc_p, n);
    env.mem.poke_u32(argv_p, a);
    env.mem.poke_u32(envp_p, e);
    0
}
