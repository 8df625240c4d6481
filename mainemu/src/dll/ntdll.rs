//! NTDLL.dll: the exports mainemu implements, each declared once.
//!
//! Owns the bodies of ntdll's calls; must not touch host state directly.
//! ntdll's C runtime subset (`_vsnprintf`, ...) runs over the same printf
//! engine as msvcrt ([`super::crt::stdio`]).

use super::crt::stdio::{fmt_a, fmt_w, store, Bound};
use crate::dll::{Env, Ret};

/// RtlInit(Unicode|Ansi)String: {Length, MaximumLength (with the NUL), Buffer} over `src`.
fn init_string(env: &mut super::Env, dst: u32, src: u32, wide: bool) {
    let size = if wide { 2 } else { 1 };
    let n = match src {
        0 => 0,
        _ if wide => env.mem.peek_wstr(src, 0x7FFF).map_or(0, |w| w.len()),
        _ => env.mem.peek_cstr(src, 0xFFFE).map_or(0, |b| b.len()),
    } as u32
        * size;
    let max = if src == 0 { 0 } else { n + size };
    env.mem.poke_u32(dst, n | max << 16);
    env.mem.poke_u32(dst + 4, src);
}

/// HEAP_SETTABLE_USER_FLAGS: the block flags RtlSetUserFlagsHeap may change.
const HEAP_SETTABLE_USER_FLAGS: u32 = 0xE00;

/// Whether `p` is a live block of heap `h` (sets ERROR_INVALID_HANDLE for a bad heap).
fn heap_block(env: &mut super::Env, h: u32, p: u32) -> bool {
    env.with_heap(h, |heap, _| heap.size(p).is_some())
        .unwrap_or(false)
}

const STATUS_INFO_LENGTH_MISMATCH: u32 = 0xC000_0004;
const STATUS_INVALID_INFO_CLASS: u32 = 0xC000_0003;
const STATUS_ACCESS_VIOLATION: u32 = 0xC000_0005;

/// NtQuerySystemInformation(SystemBasicInformation): the machine GetSystemInfo
/// and GlobalMemoryStatusEx describe (4K pages, 1 GiB of RAM, 64K
/// granularity, user space 0x10000..0x7FFEFFFF, one processor). Other
/// classes are STATUS_INVALID_INFO_CLASS.
fn query_system(env: &mut super::Env, class: u32, buf: u32, len: u32, ret: u32) -> u32 {
    if class != 0 {
        return STATUS_INVALID_INFO_CLASS;
    }
    if ret != 0 {
        env.mem.poke_u32(ret, 44);
    }
    if len != 44 {
        return STATUS_INFO_LENGTH_MISMATCH;
    }
    let words = [
        0u32,
        156_250,
        0x1000,
        0x4_0000,
        1,
        0x4_0000,
        0x1_0000,
        0x1_0000,
        0x7FFE_FFFF,
        1,
        1,
    ];
    let b: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    match env.mem.poke(buf, &b) {
        Some(()) => 0,
        None => STATUS_ACCESS_VIOLATION,
    }
}

/// NtQueryInformationProcess of the current process: ProcessBasicInformation
/// (still running, the PEB, affinity 1, priority 8, the ids) and
/// ProcessVmCounters (VM_COUNTERS or _EX, all zero: no working-set model).
/// Other classes are STATUS_INVALID_INFO_CLASS.
fn query_process(env: &mut super::Env, h: u32, class: u32, buf: u32, len: u32, ret: u32) -> u32 {
    if h != crate::handles::CURRENT_PROCESS {
        return 0xC000_0008; // STATUS_INVALID_HANDLE
    }
    let b: Vec<u8> = match class {
        0 => [0x103, env.peb, 1, 8, crate::process::PROCESS_ID, 0]
            .iter()
            .flat_map(|w: &u32| w.to_le_bytes())
            .collect(),
        3 if len == 48 => vec![0; 48],
        3 => vec![0; 44],
        _ => return STATUS_INVALID_INFO_CLASS,
    };
    if ret != 0 {
        env.mem.poke_u32(ret, b.len() as u32);
    }
    if len != b.len() as u32 {
        return STATUS_INFO_LENGTH_MISMATCH;
    }
    match env.mem.poke(buf, &b) {
        Some(()) => 0,
        None => STATUS_ACCESS_VIOLATION,
    }
}

/// The access a handle was granted, as OBJECT_BASIC_INFORMATION reports it.
/// Handles do not record the access asked for; a file's comes from how it
/// was opened (FILE_GENERIC_READ/WRITE, a directory handle traverse and
/// synchronize), the others are their type's ALL_ACCESS.
fn granted_access(obj: &crate::handles::Object) -> u32 {
    use crate::handles::Object;
    match obj {
        Object::File(f) => {
            let mut a = 0;
            if f.read {
                a |= 0x12_0089;
            }
            if f.write || f.append {
                a |= 0x12_0116;
            }
            if a == 0 {
                a = 0x10_0020; // SYNCHRONIZE | FILE_TRAVERSE
            }
            a
        }
        Object::Event { .. } | Object::Semaphore { .. } => 0x1F_0003,
        Object::Mutex { .. } => 0x1F_0001,
        Object::Thread(_) | Object::Process(_) => 0x1F_FFFF,
        _ => 0x1F_0000, // STANDARD_RIGHTS_ALL
    }
}

/// NtQueryObject(ObjectBasicInformation): attributes 0, the granted access,
/// one handle and one reference; other classes STATUS_INVALID_INFO_CLASS.
fn query_object(env: &mut super::Env, h: u32, class: u32, buf: u32, len: u32, ret: u32) -> u32 {
    if class != 0 {
        return STATUS_INVALID_INFO_CLASS;
    }
    let Some(access) = env.handles.get(h).map(granted_access) else {
        return 0xC000_0008; // STATUS_INVALID_HANDLE
    };
    if ret != 0 {
        env.mem.poke_u32(ret, 56);
    }
    if len < 56 {
        return STATUS_INFO_LENGTH_MISMATCH;
    }
    let mut b = vec![0u8; 56];
    b[4..8].copy_from_slice(&access.to_le_bytes());
    b[8..12].copy_from_slice(&1u32.to_le_bytes());
    b[12..16].copy_from_slice(&1u32.to_le_bytes());
    match env.mem.poke(buf, &b) {
        Some(()) => 0,
        None => STATUS_ACCESS_VIOLATION,
    }
}

/// RtlImageNtHeader: the IMAGE_NT_HEADERS of a mapped image (NULL when
/// `base` holds no MZ/PE image).
fn image_nt_header(env: &Env, base: u32) -> u32 {
    if base == 0 || env.read_bytes(base, 2).as_deref() != Some(b"MZ") {
        return 0;
    }
    let nt = base.wrapping_add(env.mem.peek_u32(base + 0x3C).unwrap_or(0));
    if env.read_bytes(nt, 4).as_deref() == Some(b"PE\0\0") {
        nt
    } else {
        0
    }
}

/// NtWaitForSingleObject: WaitForSingleObject with an NT timeout (NULL:
/// none; negative: relative, in 100 ns units); STATUS_TIMEOUT is 0x102.
fn nt_wait(env: &mut Env, h: u32, timeout: u32) -> Ret {
    let ms = if timeout == 0 {
        super::kernel32::sync::INFINITE
    } else {
        let lo = env.mem.peek_u32(timeout).unwrap_or(0) as u64;
        let hi = env.mem.peek_u32(timeout + 4).unwrap_or(0) as u64;
        let v = (hi << 32 | lo) as i64;
        // An absolute time is taken as already due.
        if v < 0 {
            ((-v) / 10_000).min(u32::MAX as i64 - 1) as u32
        } else {
            0
        }
    };
    match super::kernel32::sync::wait(env, &[h], false, ms) {
        Ret::Value(super::kernel32::sync::WAIT_FAILED) => Ret::Value(0xC000_0008),
        other => other,
    }
}

crate::dll! { "ntdll.dll";
    @also super::ntfile::DLL;
    stdcall fn RtlGetCurrentPeb(env) -> u32 { env.peb }
    stdcall fn RtlImageNtHeader(env, base: u32) -> u32 { image_nt_header(env, base) }
    stdcall fn NtWaitForSingleObject(env, h: u32, alertable: bool, timeout: u32) -> Ret { nt_wait(env, h, timeout) }
    stdcall fn NtQueryObject(env, h: u32, class: u32, buf: u32, len: u32, ret: u32) -> u32 { query_object(env, h, class, buf, len, ret) }
    stdcall fn NtQueryInformationProcess(env, h: u32, class: u32, buf: u32, len: u32, ret: u32) -> u32 { query_process(env, h, class, buf, len, ret) }
    stdcall fn NtQuerySystemInformation(env, class: u32, buf: u32, len: u32, ret: u32) -> u32 { query_system(env, class, buf, len, ret) }
    // The user value and flags of a heap block (HeapAlloc gives 0 and 0).
    stdcall fn RtlGetUserInfoHeap(env, h: u32, flags: u32, p: u32, value: u32, uflags: u32) -> bool {
        if !heap_block(env, h, p) { return false; }
        let (v, f) = env.k32.heap_user.get(&p).copied().unwrap_or((0, 0));
        if value != 0 { env.mem.poke_u32(value, v); }
        if uflags != 0 { env.mem.poke_u32(uflags, f); }
        true
    }
    stdcall fn RtlSetUserValueHeap(env, h: u32, flags: u32, p: u32, value: u32) -> bool {
        if !heap_block(env, h, p) { return false; }
        env.k32.heap_user.entry(p).or_default().0 = value;
        true
    }
    stdcall fn RtlSetUserFlagsHeap(env, h: u32, flags: u32, p: u32, clear: u32, set: u32) -> bool {
        if (clear | set) & !HEAP_SETTABLE_USER_FLAGS != 0 || !heap_block(env, h, p) { return false; }
        let e = env.k32.heap_user.entry(p).or_default();
        e.1 = (e.1 & !clear) | set;
        true
    }
    // No NtGlobalFlag is set (no heap checking, no loader snaps).
    stdcall fn RtlGetNtGlobalFlags(env) -> u32 { 0 }
    stdcall fn RtlGetLastWin32Error(env) -> u32 { env.last_error }
    stdcall fn RtlSetLastWin32Error(env, code: u32) { env.last_error = code; }
    stdcall fn NtCurrentTeb(env) -> u32 { env.teb() }
    stdcall fn RtlWalkHeap(env, h: u32, entry: u32) -> u32 {
        match super::kernel32::heap_walk(env, h, entry) {
            Ok(true) => 0,
            Ok(false) => 0x8000_001A, // STATUS_NO_MORE_ENTRIES
            Err(_) => 0xC000_000D,    // STATUS_INVALID_PARAMETER
        }
    }
    stdcall fn RtlInitUnicodeString(env, dst: u32, src: u32) { init_string(env, dst, src, true) }
    stdcall fn RtlInitAnsiString(env, dst: u32, src: u32) { init_string(env, dst, src, false) }
    stdcall fn RtlInitString(env, dst: u32, src: u32) { init_string(env, dst, src, false) }
    // ntdll's _vsnprintf has msvcrt's legacy bound: a full buffer gets no NUL and -1.
    cdecl fn _vsnprintf(env, buf: u32, n: u32, f: u32, va: u32) -> i32 { let out = fmt_a(env, f, va); store(env, buf, &out, Bound::Legacy(n)) }
    cdecl fn _vsnwprintf(env, buf: u32, n: u32, f: u32, va: u32) -> i32 { let out = fmt_w(env, f, va); store(env, buf, &out, Bound::Legacy(n)) }
    cdecl fn _snprintf(env, buf: u32, n: u32, f: u32) -> i32 { let out = fmt_a(env, f, env.arg_base + 12); store(env, buf, &out, Bound::Legacy(n)) }
    cdecl fn _snwprintf(env, buf: u32, n: u32, f: u32) -> i32 { let out = fmt_w(env, f, env.arg_base + 12); store(env, buf, &out, Bound::Legacy(n)) }
    cdecl fn sprintf(env, buf: u32, f: u32) -> i32 { let out = fmt_a(env, f, env.arg_base + 8); store(env, buf, &out, Bound::None) }
    cdecl fn swprintf(env, buf: u32, f: u32) -> i32 { let out = fmt_w(env, f, env.arg_base + 8); store(env, buf, &out, Bound::None) }
}
