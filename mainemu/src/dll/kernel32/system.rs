//! kernel32's process, environment, module and system-information calls:
//! the environment block, LoadLibrary/GetProcAddress over the module list,
//! version and processor information (fixed values: a one-processor
//! Pentium-class machine running Windows 7 SP1), startup info, error mode,
//! pointer encoding, fiber-local storage, the global/local heap wrappers,
//! the IsBad*Ptr probes, exceptions (RaiseException, RtlUnwind,
//! UnhandledExceptionFilter).
//!
//! Owns these calls' conventions. It must not load images itself (modules
//! does) or walk exception chains (seh does).

use crate::dll::{Env, Ret};
use crate::files::err;
use crate::modules;
use crate::pe::ImportName;

/// GetEnvironmentVariable: the value's length, or the size needed with the NUL.
fn get_var(env: &mut Env, name: u32, buf: u32, cap: u32, wide: bool) -> u32 {
    let Some(n) = env.read_str(name, wide) else {
        return env.fail(203, 0);
    };
    match env.var(&n).map(str::to_string) {
        Some(v) => {
            env.last_error = 0;
            env.put_str_buf(&v, buf, cap, wide)
        }
        None => env.fail(203, 0), // ERROR_ENVVAR_NOT_FOUND
    }
}

fn set_var(env: &mut Env, name: u32, value: u32, wide: bool) -> bool {
    let Some(n) = env
        .read_str(name, wide)
        .filter(|n| !n.is_empty() && !n.contains('='))
    else {
        return env.fail(err::INVALID_PARAMETER, false);
    };
    let v = env.read_str(value, wide);
    if v.is_none() && env.var(&n).is_none() {
        return env.fail(203, false);
    }
    env.set_var(&n, v.as_deref());
    true
}

/// The environment block: NAME=VALUE strings, each NUL-terminated, a final NUL.
pub fn block(env: &Env) -> String {
    let mut s = String::new();
    for (k, v) in &env.vars {
        s.push_str(k);
        s.push('=');
        s.push_str(v);
        s.push('\0');
    }
    s.push('\0');
    s
}

fn env_strings(env: &mut Env, wide: bool) -> u32 {
    let b = block(env);
    if wide {
        let w: Vec<u16> = b.encode_utf16().collect();
        let a = env.alloc(2 * w.len() as u32);
        env.mem.poke(a, &crate::dll::wbytes(&w));
        a
    } else {
        let bytes: Vec<u8> = b
            .chars()
            .map(|c| if (c as u32) < 256 { c as u8 } else { b'?' })
            .collect();
        let a = env.alloc(bytes.len() as u32);
        env.mem.poke(a, &bytes);
        a
    }
}

/// ExpandEnvironmentStrings: `%NAME%` replaced when NAME is set.
pub fn expand(env: &Env, s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        match after.find('%') {
            Some(j) => {
                let name = &after[..j];
                match env.var(name).filter(|_| !name.is_empty()) {
                    Some(v) => {
                        out.push_str(v);
                        rest = &after[j + 1..];
                    }
                    None => {
                        out.push('%');
                        out.push_str(name);
                        rest = &after[j..];
                    }
                }
            }
            None => {
                out.push('%');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn expand_strings(env: &mut Env, src: u32, dst: u32, cap: u32, wide: bool) -> u32 {
    let Some(s) = env.read_str(src, wide) else {
        return env.fail(err::INVALID_PARAMETER, 0);
    };
    let e = expand(env, &s);
    let n = if wide {
        e.encode_utf16().count()
    } else {
        e.len()
    } as u32
        + 1;
    if n <= cap && dst != 0 {
        env.put_str(dst, &e, wide);
    }
    n
}

/// GetModuleHandle: NULL is the program; a name is looked up in the module list.
fn module_handle(env: &mut Env, name: u32, wide: bool) -> u32 {
    if name == 0 {
        return env.image_base;
    }
    let Some(n) = env.read_str(name, wide) else {
        return env.fail(err::INVALID_PARAMETER, 0);
    };
    if let Some(m) = env.modules.by_name(&n) {
        return m.base;
    }
    // A system DLL mainemu implements is always "loaded".
    let c = crate::pe::apiset::canonical(&modules::with_ext(
        n.rsplit(['\\', '/']).next().unwrap_or(&n),
    ));
    if let Some(d) = crate::dll::DLLS.iter().find(|d| d.name == c) {
        return modules::system_module(env, d);
    }
    env.fail(126, 0) // ERROR_MOD_NOT_FOUND
}

/// GetModuleHandleEx: by name, or (FROM_ADDRESS) the module holding an address.
fn module_handle_ex(env: &mut Env, flags: u32, name: u32, out: u32, wide: bool) -> bool {
    let h = if flags & 4 != 0 {
        env.modules.containing(name).map_or(0, |m| m.base)
    } else {
        module_handle(env, name, wide)
    };
    if out != 0 {
        env.mem.poke_u32(out, h);
    }
    h != 0 || env.fail(126, false)
}

fn module_file_name(env: &mut Env, h: u32, buf: u32, cap: u32, wide: bool) -> u32 {
    let path = if h == 0 || h == env.image_base {
        env.exe_path.clone()
    } else {
        match env.modules.by_base(h) {
            Some(m) => m.path.clone(),
            None => return env.fail(126, 0),
        }
    };
    if cap == 0 {
        return env.fail(err::INSUFFICIENT_BUFFER, 0);
    }
    let units = if wide {
        path.encode_utf16().count()
    } else {
        path.len()
    } as u32;
    if units < cap {
        env.put_str(buf, &path, wide);
        env.last_error = 0;
        units
    } else {
        let cut: String = path.chars().take(cap as usize - 1).collect();
        env.put_str(buf, &cut, wide);
        env.fail(err::INSUFFICIENT_BUFFER, cap)
    }
}

/// LoadLibrary: load (or find) the module, run new DllMains, return its base.
pub fn load_library(env: &mut Env, name: u32, wide: bool) -> Ret {
    let Some(n) = env.read_str(name, wide) else {
        return Ret::Value(env.fail(err::INVALID_PARAMETER, 0));
    };
    match modules::load_dll(env, &n) {
        Ok(Some((base, inits))) => {
            if let Some(m) = env.modules.list.iter_mut().find(|m| m.base == base) {
                m.refs += 1;
            }
            let calls = init_calls(env, inits);
            env.last_error = 0;
            crate::process::init_chain(env, calls, 1, Box::new(move |_| Ret::Value(base)))
        }
        Ok(None) => Ret::Value(env.fail(126, 0)),
        Err(_) => Ret::Value(env.fail(193, 0)), // ERROR_BAD_EXE_FORMAT
    }
}

/// The TLS callbacks and DllMains of newly loaded modules (dependencies
/// first), each with its module base; marks the modules initialized.
fn init_calls(env: &mut Env, inits: Vec<u32>) -> std::collections::VecDeque<(u32, u32)> {
    let mut calls = std::collections::VecDeque::new();
    for b in inits {
        if let Some(m) = env.modules.list.iter_mut().find(|m| m.base == b) {
            m.initialized = true;
            if let Some(pe) = &m.pe {
                if let Ok(Some(tls)) = pe.tls() {
                    let delta = b.wrapping_sub(pe.image_base);
                    calls.extend(tls.callbacks.iter().map(|&c| (c.wrapping_add(delta), b)));
                }
            }
            if m.entry != 0 {
                calls.push_back((m.entry, b));
            }
        }
    }
    calls
}

/// ResolveDelayLoadedAPI: binds the delay-import slot `thunk` described by
/// the IMAGE_DELAYLOAD_DESCRIPTOR at `desc` of the image at `base` (loading
/// the DLL, running its DllMain if it is a guest DLL), stores the address in
/// the slot and the module handle in the descriptor's handle slot, and
/// returns it. A function nothing implements binds to a stub that names it
/// when called (as static imports do).
fn resolve_delay(env: &mut Env, base: u32, desc: u32, thunk: u32) -> Ret {
    let rd = |env: &Env, o: u32| env.mem.peek_u32(desc + o).unwrap_or(0);
    // Attribute bit 0: the fields are RVAs (otherwise old-style VAs).
    let rva = rd(env, 0) & 1 != 0;
    let va = |x: u32| if rva { base.wrapping_add(x) } else { x };
    let (name_at, hmod, iat, int) = (
        va(rd(env, 4)),
        va(rd(env, 8)),
        va(rd(env, 12)),
        va(rd(env, 16)),
    );
    let Some(dll_name) = env.read_a(name_at) else {
        return Ret::Value(env.fail(err::INVALID_PARAMETER, 0));
    };
    let Some(entry) = env.mem.peek_u32(int + (thunk.wrapping_sub(iat) & !3)) else {
        return Ret::Value(env.fail(err::INVALID_PARAMETER, 0));
    };
    let what = if entry & 0x8000_0000 != 0 {
        ImportName::Ordinal(entry as u16)
    } else {
        let at = va(entry);
        let hint = env
            .read_bytes(at, 2)
            .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]));
        match env.read_a(at + 2) {
            Some(name) => ImportName::Name { hint, name },
            None => return Ret::Value(env.fail(err::INVALID_PARAMETER, 0)),
        }
    };
    let (module, calls) = match modules::load_dll(env, &dll_name) {
        Ok(Some((b, inits))) => (Some(b), init_calls(env, inits)),
        Ok(None) => (None, Default::default()),
        Err(e) => return Ret::Stop(format!("ResolveDelayLoadedAPI: {dll_name}: {e}")),
    };
    crate::process::init_chain(
        env,
        calls,
        1,
        Box::new(move |env| {
            let dll = module
                .and_then(|b| env.modules.by_base(b).map(|m| m.name.clone()))
                .unwrap_or(dll_name);
            match modules::bind_import(env, &dll, &what) {
                Ok(a) => {
                    env.mem.poke_u32(thunk, a);
                    if let (Some(b), true) = (module, hmod != 0 && hmod != base) {
                        env.mem.poke_u32(hmod, b);
                    }
                    Ret::Value(a)
                }
                Err(e) => Ret::Stop(format!("ResolveDelayLoadedAPI: {dll}!{what}: {e}")),
            }
        }),
    )
}

pub fn get_proc_address(env: &mut Env, h: u32, name: u32) -> u32 {
    let h = if h == 0 { env.image_base } else { h };
    let Some(m) = env.modules.by_base(h).cloned() else {
        return env.fail(err::INVALID_HANDLE, 0);
    };
    let what = if name < 0x1_0000 {
        ImportName::Ordinal(name as u16)
    } else {
        match env.read_a(name) {
            Some(n) => ImportName::Name { hint: 0, name: n },
            None => return env.fail(err::INVALID_PARAMETER, 0),
        }
    };
    match modules::export_address(env, &m, &what) {
        Ok(Some(a)) => a,
        _ => {
            env.proc_misses.insert(format!("{}!{what}", m.name));
            env.fail(127, 0) // ERROR_PROC_NOT_FOUND
        }
    }
}

/// OSVERSIONINFO(EX)A/W: Windows 7 SP1 (6.1.7601), NT platform.
fn version_ex(env: &mut Env, p: u32, wide: bool) -> bool {
    let Some(size) = env.mem.peek_u32(p) else {
        return env.fail(998, false);
    };
    let (base, ex) = if wide { (276, 284) } else { (148, 156) };
    if size != base && size != ex {
        return env.fail(122, false);
    }
    let mut b = vec![0u8; size as usize];
    let put = |b: &mut Vec<u8>, o: usize, v: u32| b[o..o + 4].copy_from_slice(&v.to_le_bytes());
    put(&mut b, 0, size);
    put(&mut b, 4, 6);
    put(&mut b, 8, 1);
    put(&mut b, 12, 7601);
    put(&mut b, 16, 2);
    let sp = "Service Pack 1";
    if wide {
        for (k, u) in sp.encode_utf16().enumerate() {
            b[20 + 2 * k..22 + 2 * k].copy_from_slice(&u.to_le_bytes());
        }
    } else {
        b[20..20 + sp.len()].copy_from_slice(sp.as_bytes());
    }
    if size == ex {
        let o = base as usize;
        b[o..o + 2].copy_from_slice(&1u16.to_le_bytes()); // wServicePackMajor
        b[o + 6] = 1; // wProductType = VER_NT_WORKSTATION
    }
    env.mem.poke(p, &b).is_some()
}

/// SYSTEM_INFO for a one-processor x86 machine.
fn system_info(env: &mut Env, p: u32) {
    let mut b = vec![0u8; 36];
    let put = |b: &mut Vec<u8>, o: usize, v: u32| b[o..o + 4].copy_from_slice(&v.to_le_bytes());
    put(&mut b, 4, 0x1000);
    put(&mut b, 8, 0x1_0000);
    put(&mut b, 12, 0x7FFE_FFFF);
    put(&mut b, 16, 1);
    put(&mut b, 20, 1);
    put(&mut b, 24, 586);
    put(&mut b, 28, 0x1_0000);
    b[32..34].copy_from_slice(&5u16.to_le_bytes());
    b[34..36].copy_from_slice(&0x0202u16.to_le_bytes());
    env.mem.poke(p, &b);
}

/// PROCESSOR_FEATURE: what the shared CPU models (CMPXCHG8B, RDTSC; no MMX or SSE).
fn feature(f: u32) -> bool {
    matches!(f, 2 | 8)
}

fn startup_info(env: &mut Env, out: u32) {
    let mut b = vec![0u8; 68];
    b[0] = 68;
    let put = |b: &mut Vec<u8>, o: usize, v: u32| b[o..o + 4].copy_from_slice(&v.to_le_bytes());
    put(&mut b, 56, env.std_handles[0]);
    put(&mut b, 60, env.std_handles[1]);
    put(&mut b, 64, env.std_handles[2]);
    env.mem.poke(out, &b);
}

/// IsBadReadPtr / IsBadWritePtr: whether any page of the range refuses the access.
fn bad_ptr(env: &Env, p: u32, n: u32, write: bool) -> bool {
    if n == 0 {
        return false;
    }
    if p == 0 {
        return true;
    }
    let mut a = p & !0xFFF;
    let end = p as u64 + n as u64;
    while (a as u64) < end {
        let q = env.mem.query(a);
        let ok = q.state == crate::memory::mem::COMMIT
            && match q.protect & 0xFF {
                crate::memory::prot::READONLY
                | crate::memory::prot::EXECUTE_READ
                | crate::memory::prot::EXECUTE => !write,
                crate::memory::prot::READWRITE
                | crate::memory::prot::EXECUTE_READWRITE
                | crate::memory::prot::WRITECOPY
                | crate::memory::prot::EXECUTE_WRITECOPY => true,
                _ => false,
            }
            && q.protect & crate::memory::prot::GUARD == 0;
        if !ok {
            return true;
        }
        match a.checked_add(0x1000) {
            Some(n) => a = n,
            None => break,
        }
    }
    false
}

fn bad_string(env: &Env, p: u32, max: u32, wide: bool) -> bool {
    if p == 0 {
        return true;
    }
    let unit = if wide { 2 } else { 1 };
    let mut b = [0u8; 2];
    for k in 0..max {
        let a = p.wrapping_add(k * unit);
        if bad_ptr(env, a, unit, false) {
            return true;
        }
        env.mem.peek(a, &mut b[..unit as usize]);
        if b[..unit as usize].iter().all(|&x| x == 0) {
            return false;
        }
    }
    false
}

/// GlobalAlloc/LocalAlloc: fixed blocks on the process heap (a handle is
/// the pointer, so Lock returns it).
pub(crate) fn gl_alloc(env: &mut Env, flags: u32, n: u32) -> u32 {
    let h = env.process_heap;
    let zero = flags & 0x40 != 0;
    match env
        .with_heap(h, |heap, m| heap.alloc(m, n.max(1), zero))
        .flatten()
    {
        Some(a) => a,
        None => env.fail(8, 0),
    }
}

fn gl_free(env: &mut Env, p: u32) -> u32 {
    if p == 0 {
        return 0;
    }
    let h = env.process_heap;
    if env.with_heap(h, |heap, _| heap.free(p)).unwrap_or(false) {
        0
    } else {
        env.fail(err::INVALID_HANDLE, p)
    }
}

fn gl_realloc(env: &mut Env, p: u32, n: u32, flags: u32) -> u32 {
    let h = env.process_heap;
    match env
        .with_heap(h, |heap, m| heap.realloc(m, p, n.max(1), flags & 0x40 != 0))
        .flatten()
    {
        Some(a) => a,
        None => env.fail(8, 0),
    }
}

fn gl_size(env: &mut Env, p: u32) -> u32 {
    let h = env.process_heap;
    env.with_heap(h, |heap, _| heap.size(p))
        .flatten()
        .unwrap_or(0)
}

fn fls_alloc(env: &mut Env, cb: u32) -> u32 {
    let i = match env.fls_callbacks.iter().position(Option::is_none) {
        Some(i) => i,
        None => {
            env.fls_callbacks.push(None);
            env.fls_callbacks.len() - 1
        }
    };
    env.fls_callbacks[i] = Some(cb);
    for t in &mut env.threads.list {
        if t.fls.len() <= i {
            t.fls.resize(i + 1, 0);
        }
        t.fls[i] = 0;
    }
    i as u32
}

/// Stores `out` at `buf` whose size in bytes is the dword at `len` (which
/// gets the size needed): ERROR_INSUFFICIENT_BUFFER when it is too small.
fn put_sized(env: &mut Env, out: &[u8], buf: u32, len: u32) -> bool {
    let Some(cap) = env.mem.peek_u32(len) else {
        return env.fail(998, false);
    };
    env.mem.poke_u32(len, out.len() as u32);
    if (cap as usize) < out.len() || buf == 0 {
        return env.fail(err::INSUFFICIENT_BUFFER, false);
    }
    env.mem.poke(buf, out).is_some() || env.fail(998, false)
}

/// GetLogicalProcessorInformationEx for the one-core, one-package machine:
/// a PROCESSOR_RELATIONSHIP record (44 bytes: Relationship, Size, Flags,
/// EfficiencyClass, 20 reserved, GroupCount 1, GROUP_AFFINITY {mask 1, group
/// 0}) for RelationProcessorCore (0) and RelationProcessorPackage (3), both
/// for RelationAll (0xFFFF); other relations give no record.
fn processor_info_ex(env: &mut Env, relation: u32, buf: u32, len: u32) -> bool {
    let record = |kind: u32| {
        let mut r = vec![0u8; 44];
        r[0..4].copy_from_slice(&kind.to_le_bytes());
        r[4..8].copy_from_slice(&44u32.to_le_bytes());
        r[30] = 1; // GroupCount
        r[32] = 1; // GroupMask[0].Mask
        r
    };
    let out: Vec<u8> = match relation {
        0 | 3 => record(relation),
        0xFFFF => [record(0), record(3)].concat(),
        _ => Vec::new(),
    };
    put_sized(env, &out, buf, len)
}

/// GetLogicalProcessorInformation: a core record and a package record (24
/// bytes each: ProcessorMask 1, Relationship, 16 bytes of union).
fn processor_info(env: &mut Env, buf: u32, len: u32) -> bool {
    let mut out = vec![0u8; 48];
    for (k, rel) in [0u32, 3].iter().enumerate() {
        out[24 * k..24 * k + 4].copy_from_slice(&1u32.to_le_bytes());
        out[24 * k + 4..24 * k + 8].copy_from_slice(&rel.to_le_bytes());
    }
    put_sized(env, &out, buf, len)
}

crate::dll! { "(kernel32 system)";
    // a * b / c in 64 bits, rounded half away from zero; -1 for c = 0 or overflow.
    stdcall fn MulDiv(env, a: i32, b: i32, c: i32) -> i32 {
        if c == 0 { return -1; }
        let (p, c) = (a as i64 * b as i64, c as i64);
        let q = (p.abs() + c.abs() / 2) / c.abs() * if (p < 0) != (c < 0) { -1 } else { 1 };
        i32::try_from(q).unwrap_or(-1)
    }
    stdcall fn GetEnvironmentVariableA(env, name: u32, buf: u32, cap: u32) -> u32 { get_var(env, name, buf, cap, false) }
    stdcall fn GetEnvironmentVariableW(env, name: u32, buf: u32, cap: u32) -> u32 { get_var(env, name, buf, cap, true) }
    stdcall fn SetEnvironmentVariableA(env, name: u32, value: u32) -> bool { set_var(env, name, value, false) }
    stdcall fn SetEnvironmentVariableW(env, name: u32, value: u32) -> bool { set_var(env, name, value, true) }
    stdcall fn GetEnvironmentStrings(env) -> u32 { env_strings(env, false) }
    stdcall fn GetEnvironmentStringsA(env) -> u32 { env_strings(env, false) }
    stdcall fn GetEnvironmentStringsW(env) -> u32 { env_strings(env, true) }
    stdcall fn FreeEnvironmentStringsA(env, p: u32) -> bool { gl_free(env, p) == 0 }
    stdcall fn FreeEnvironmentStringsW(env, p: u32) -> bool { gl_free(env, p) == 0 }
    stdcall fn ExpandEnvironmentStringsA(env, src: u32, dst: u32, cap: u32) -> u32 { expand_strings(env, src, dst, cap, false) }
    stdcall fn ExpandEnvironmentStringsW(env, src: u32, dst: u32, cap: u32) -> u32 { expand_strings(env, src, dst, cap, true) }
    stdcall fn GetModuleHandleA(env, name: u32) -> u32 { module_handle(env, name, false) }
    stdcall fn GetModuleHandleW(env, name: u32) -> u32 { module_handle(env, name, true) }
    stdcall fn GetModuleHandleExA(env, flags: u32, name: u32, out: u32) -> bool { module_handle_ex(env, flags, name, out, false) }
    stdcall fn GetModuleHandleExW(env, flags: u32, name: u32, out: u32) -> bool { module_handle_ex(env, flags, name, out, true) }
    stdcall fn GetModuleFileNameA(env, h: u32, buf: u32, cap: u32) -> u32 { module_file_name(env, h, buf, cap, false) }
    stdcall fn GetModuleFileNameW(env, h: u32, buf: u32, cap: u32) -> u32 { module_file_name(env, h, buf, cap, true) }
    stdcall fn LoadLibraryA(env, name: u32) -> Ret { load_library(env, name, false) }
    stdcall fn LoadLibraryW(env, name: u32) -> Ret { load_library(env, name, true) }
    stdcall fn LoadLibraryExA(env, name: u32, file: u32, flags: u32) -> Ret { load_library(env, name, false) }
    stdcall fn LoadLibraryExW(env, name: u32, file: u32, flags: u32) -> Ret { load_library(env, name, true) }
    stdcall fn FreeLibrary(env, h: u32) -> bool {
        match env.modules.list.iter_mut().find(|m| m.base == h) {
            Some(m) => { m.refs = m.refs.saturating_sub(1).max(1); true }
            None => env.fail(err::INVALID_HANDLE, false),
        }
    }
    stdcall fn GetProcAddress(env, h: u32, name: u32) -> u32 { get_proc_address(env, h, name) }
    stdcall fn ResolveDelayLoadedAPI(env, base: u32, desc: u32, fail_dll: u32, fail_sys: u32, thunk: u32, flags: u32) -> Ret {
        resolve_delay(env, base, desc, thunk)
    }
    stdcall fn DisableThreadLibraryCalls(env, h: u32) -> bool { true }
    stdcall fn GetVersion(env) -> u32 { 0x1DB1_0106 } // 6.1 build 7601
    stdcall fn GetVersionExA(env, p: u32) -> bool { version_ex(env, p, false) }
    stdcall fn GetVersionExW(env, p: u32) -> bool { version_ex(env, p, true) }
    stdcall fn VerSetConditionMask(env, lo: u32, hi: u32, type_mask: u32, cond: u32) -> u64 {
        let mut m = (hi as u64) << 32 | lo as u64;
        for bit in 0..8 {
            if type_mask & (1 << bit) != 0 { m |= ((cond & 7) as u64) << (bit * 3); }
        }
        m
    }
    stdcall fn VerifyVersionInfoA(env, info: u32, type_mask: u32, lo: u32, hi: u32) -> bool { true }
    stdcall fn VerifyVersionInfoW(env, info: u32, type_mask: u32, lo: u32, hi: u32) -> bool { true }
    stdcall fn GetSystemInfo(env, p: u32) { system_info(env, p) }
    stdcall fn GetNativeSystemInfo(env, p: u32) { system_info(env, p) }
    stdcall fn IsProcessorFeaturePresent(env, f: u32) -> bool { feature(f) }
    stdcall fn IsWow64Process(env, h: u32, out: u32) -> bool { env.mem.poke_u32(out, 0).is_some() }
    stdcall fn GetActiveProcessorCount(env, group: u32) -> u32 { 1 }
    stdcall fn GetLogicalProcessorInformationEx(env, relation: u32, buf: u32, len: u32) -> bool {
        processor_info_ex(env, relation, buf, len)
    }
    stdcall fn GetLogicalProcessorInformation(env, buf: u32, len: u32) -> bool { processor_info(env, buf, len) }
    // The process is in no job.
    stdcall fn QueryInformationJobObject(env, job: u32, class: u32, info: u32, len: u32, ret: u32) -> bool {
        env.fail(err::INVALID_HANDLE, false)
    }
    stdcall fn IsProcessInJob(env, process: u32, job: u32, out: u32) -> bool { env.mem.poke_u32(out, 0).is_some() }
    stdcall fn GetProcessAffinityMask(env, h: u32, pm: u32, sm: u32) -> bool {
        env.mem.poke_u32(pm, 1); env.mem.poke_u32(sm, 1); true
    }
    stdcall fn SetProcessAffinityMask(env, h: u32, m: u32) -> bool { m & 1 != 0 || env.fail(err::INVALID_PARAMETER, false) }
    stdcall fn GetComputerNameA(env, buf: u32, size: u32) -> bool { computer_name(env, buf, size, false) }
    stdcall fn GetComputerNameW(env, buf: u32, size: u32) -> bool { computer_name(env, buf, size, true) }
    stdcall fn GetComputerNameExA(env, kind: u32, buf: u32, size: u32) -> bool { computer_name(env, buf, size, false) }
    stdcall fn GetComputerNameExW(env, kind: u32, buf: u32, size: u32) -> bool { computer_name(env, buf, size, true) }
    stdcall fn GlobalMemoryStatus(env, p: u32) {
        let w = [32u32, 50, 0x4000_0000, 0x2000_0000, 0x8000_0000, 0x4000_0000, 0x7FFE_0000, 0x7000_0000];
        let b: Vec<u8> = w.iter().flat_map(|v| v.to_le_bytes()).collect();
        env.mem.poke(p, &b);
    }
    stdcall fn GlobalMemoryStatusEx(env, p: u32) -> bool {
        // dwLength must be sizeof(MEMORYSTATUSEX).
        if env.mem.peek_u32(p) != Some(64) { return env.fail(87, false); }
        let mut b = vec![0u8; 64];
        b[0..4].copy_from_slice(&64u32.to_le_bytes());
        b[4..8].copy_from_slice(&50u32.to_le_bytes());
        for (k, v) in [1u64 << 30, 1 << 29, 2 << 30, 1 << 30, 0x7FFE_0000, 0x7000_0000, 0].iter().enumerate() {
            b[8 + 8 * k..16 + 8 * k].copy_from_slice(&v.to_le_bytes());
        }
        env.mem.poke(p, &b).is_some()
    }
    stdcall fn SetErrorMode(env, m: u32) -> u32 { std::mem::replace(&mut env.error_mode, m) }
    stdcall fn GetErrorMode(env) -> u32 { env.error_mode }
    stdcall fn SetThreadErrorMode(env, m: u32, old: u32) -> bool {
        let o = std::mem::replace(&mut env.error_mode, m);
        if old != 0 { env.mem.poke_u32(old, o); }
        true
    }
    stdcall fn EncodePointer(env, p: u32) -> u32 { p }
    stdcall fn DecodePointer(env, p: u32) -> u32 { p }
    stdcall fn EncodeSystemPointer(env, p: u32) -> u32 { p }
    stdcall fn DecodeSystemPointer(env, p: u32) -> u32 { p }
    stdcall fn GetStartupInfoA(env, out: u32) { startup_info(env, out) }
    stdcall fn GetStartupInfoW(env, out: u32) { startup_info(env, out) }
    stdcall fn GetCurrentProcessId(env) -> u32 { crate::process::PROCESS_ID }
    stdcall fn GetProcessId(env, h: u32) -> u32 {
        if h == crate::handles::CURRENT_PROCESS { crate::process::PROCESS_ID } else { env.fail(err::INVALID_HANDLE, 0) }
    }
    stdcall fn GetCurrentProcess(env) -> u32 { crate::handles::CURRENT_PROCESS }
    stdcall fn GetCurrentThread(env) -> u32 { crate::handles::CURRENT_THREAD }
    stdcall fn GetExitCodeProcess(env, h: u32, out: u32) -> bool {
        if h == crate::handles::CURRENT_PROCESS { return env.mem.poke_u32(out, crate::threads::STILL_ACTIVE).is_some(); }
        if let Some(crate::handles::Object::Process(code)) = env.handles.get(h) { let c = *code; return env.mem.poke_u32(out, c).is_some(); }
        env.fail(err::INVALID_HANDLE, false)
    }
    // A child still blocked takes the exit code and ends; an ended one cannot be terminated.
    stdcall fn TerminateProcess(env, h: u32, code: u32) -> Ret {
        if h == crate::handles::CURRENT_PROCESS { return Ret::Exit(code); }
        match env.handles.get_mut(h) {
            Some(crate::handles::Object::Process(c)) if *c == crate::threads::STILL_ACTIVE => { *c = code; env.threads.epoch += 1; Ret::Value(1) }
            Some(crate::handles::Object::Process(_)) => Ret::Value(env.fail(5, 0)),
            _ => Ret::Value(env.fail(err::INVALID_HANDLE, 0)),
        }
    }
    stdcall fn ExitProcess(env, code: u32) -> Ret { Ret::Exit(code) }
    stdcall fn IsDebuggerPresent(env) -> bool { false }
    stdcall fn OutputDebugStringA(env, s: u32) {}
    stdcall fn OutputDebugStringW(env, s: u32) {}
    stdcall fn DebugBreak(env) -> Ret { crate::seh::raise(env, crate::seh::code::BREAKPOINT, 0, 0, 0) }
    stdcall fn RaiseException(env, code: u32, flags: u32, n: u32, args: u32) -> Ret { crate::seh::raise(env, code, flags, n, args) }
    stdcall fn RtlUnwind(env, frame: u32, ip: u32, rec: u32, value: u32) -> Ret { crate::seh::unwind(env, frame, rec, value) }
    stdcall fn SetUnhandledExceptionFilter(env, f: u32) -> u32 { std::mem::replace(&mut env.unhandled_filter, f) }
    stdcall fn UnhandledExceptionFilter(env, ptrs: u32) -> Ret {
        let rec = env.mem.peek_u32(ptrs).unwrap_or(0);
        let ctx = env.mem.peek_u32(ptrs + 4).unwrap_or(0);
        let r = crate::seh::read_record(&env.mem, rec).unwrap_or(crate::seh::Record { code: 0, flags: 0, address: 0, params: vec![] });
        let mut at = env.cpu().clone();
        crate::seh::read_context(&env.mem, ctx, &mut at);
        Ret::Stop(crate::seh::report(&r, &at, "not handled (UnhandledExceptionFilter)"))
    }
    stdcall fn FlsAlloc(env, cb: u32) -> u32 { fls_alloc(env, cb) }
    stdcall fn FlsFree(env, i: u32) -> bool {
        match env.fls_callbacks.get_mut(i as usize) { Some(s @ Some(_)) => { *s = None; true } _ => env.fail(err::INVALID_PARAMETER, false) }
    }
    stdcall fn FlsGetValue(env, i: u32) -> u32 {
        if env.fls_callbacks.get(i as usize).is_none_or(Option::is_none) { return env.fail(err::INVALID_PARAMETER, 0); }
        env.last_error = 0;
        env.threads.cur().fls.get(i as usize).copied().unwrap_or(0)
    }
    stdcall fn FlsSetValue(env, i: u32, v: u32) -> bool {
        if env.fls_callbacks.get(i as usize).is_none_or(Option::is_none) { return env.fail(err::INVALID_PARAMETER, false); }
        let t = env.threads.cur_mut();
        if t.fls.len() <= i as usize { t.fls.resize(i as usize + 1, 0); }
        t.fls[i as usize] = v;
        true
    }
    stdcall fn IsBadReadPtr(env, p: u32, n: u32) -> bool { bad_ptr(env, p, n, false) }
    stdcall fn IsBadWritePtr(env, p: u32, n: u32) -> bool { bad_ptr(env, p, n, true) }
    stdcall fn IsBadCodePtr(env, p: u32) -> bool { bad_ptr(env, p, 1, false) }
    stdcall fn IsBadStringPtrA(env, p: u32, max: u32) -> bool { bad_string(env, p, max, false) }
    stdcall fn IsBadStringPtrW(env, p: u32, max: u32) -> bool { bad_string(env, p, max, true) }
    stdcall fn GlobalAlloc(env, flags: u32, n: u32) -> u32 { gl_alloc(env, flags, n) }
    stdcall fn GlobalFree(env, p: u32) -> u32 { gl_free(env, p) }
    stdcall fn GlobalReAlloc(env, p: u32, n: u32, flags: u32) -> u32 { gl_realloc(env, p, n, flags) }
    stdcall fn GlobalSize(env, p: u32) -> u32 { gl_size(env, p) }
    stdcall fn GlobalLock(env, p: u32) -> u32 { p }
    stdcall fn GlobalUnlock(env, p: u32) -> bool { env.last_error = 0; false }
    stdcall fn GlobalHandle(env, p: u32) -> u32 { p }
    stdcall fn GlobalFlags(env, p: u32) -> u32 { 0 }
    stdcall fn LocalAlloc(env, flags: u32, n: u32) -> u32 { gl_alloc(env, flags, n) }
    stdcall fn LocalFree(env, p: u32) -> u32 { gl_free(env, p) }
    stdcall fn LocalReAlloc(env, p: u32, n: u32, flags: u32) -> u32 { gl_realloc(env, p, n, flags) }
    stdcall fn LocalSize(env, p: u32) -> u32 { gl_size(env, p) }
    stdcall fn LocalLock(env, p: u32) -> u32 { p }
    stdcall fn LocalUnlock(env, p: u32) -> bool { env.last_error = 0; false }
    stdcall fn LocalHandle(env, p: u32) -> u32 { p }
    stdcall fn LocalFlags(env, p: u32) -> u32 { 0 }
}

fn computer_name(env: &mut Env, buf: u32, size: u32, wide: bool) -> bool {
    let Some(cap) = env.mem.peek_u32(size) else {
        return env.fail(998, false);
    };
    let name = "MAINEMU";
    if (name.len() as u32) < cap {
        env.put_str(buf, name, wide);
        env.mem.poke_u32(size, name.len() as u32);
        true
    } else {
        env.mem.poke_u32(size, name.len() as u32 + 1);
        env.fail(111, false) // ERROR_BUFFER_OVERFLOW
    }
}
