//! ADVAPI32.dll: the security calls console programs make on start-up, over
//! a fixed identity: the user `mainemu` (the USERNAME of the default
//! environment) on the machine MAINEMU, a standard user who holds none of
//! the privileges programs ask to enable (AdjustTokenPrivileges succeeds
//! with ERROR_NOT_ALL_ASSIGNED, as it does on Windows for such a user).
//! Tokens are handles that can only be closed.
//!
//! The registry is empty and read-only: the predefined root keys open (and
//! enumerate as empty), any subkey is ERROR_FILE_NOT_FOUND, creating or
//! writing is ERROR_ACCESS_DENIED. Programs take their "not configured"
//! paths, deterministically and without host state.
//!
//! Owns these calls' conventions; must not touch host state.

use super::Env;
use crate::files::err;
use crate::handles::Object;

/// The user name every process runs as.
pub const USER: &str = "mainemu";

/// Well-known privilege names and their LUIDs (low part; the high part is 0).
const PRIVILEGES: &[(&str, u32)] = &[
    ("SeCreateTokenPrivilege", 2),
    ("SeAssignPrimaryTokenPrivilege", 3),
    ("SeLockMemoryPrivilege", 4),
    ("SeIncreaseQuotaPrivilege", 5),
    ("SeMachineAccountPrivilege", 6),
    ("SeTcbPrivilege", 7),
    ("SeSecurityPrivilege", 8),
    ("SeTakeOwnershipPrivilege", 9),
    ("SeLoadDriverPrivilege", 10),
    ("SeSystemProfilePrivilege", 11),
    ("SeSystemtimePrivilege", 12),
    ("SeProfileSingleProcessPrivilege", 13),
    ("SeIncreaseBasePriorityPrivilege", 14),
    ("SeCreatePagefilePrivilege", 15),
    ("SeCreatePermanentPrivilege", 16),
    ("SeBackupPrivilege", 17),
    ("SeRestorePrivilege", 18),
    ("SeShutdownPrivilege", 19),
    ("SeDebugPrivilege", 20),
    ("SeAuditPrivilege", 21),
    ("SeSystemEnvironmentPrivilege", 22),
    ("SeChangeNotifyPrivilege", 23),
    ("SeRemoteShutdownPrivilege", 24),
    ("SeUndockPrivilege", 25),
    ("SeSyncAgentPrivilege", 26),
    ("SeEnableDelegationPrivilege", 27),
    ("SeManageVolumePrivilege", 28),
    ("SeImpersonatePrivilege", 29),
    ("SeCreateGlobalPrivilege", 30),
];

fn lookup_privilege(env: &mut Env, name: u32, luid: u32, wide: bool) -> bool {
    let Some(n) = env.read_str(name, wide) else {
        return env.fail(err::INVALID_PARAMETER, false);
    };
    match PRIVILEGES.iter().find(|(p, _)| p.eq_ignore_ascii_case(&n)) {
        Some(&(_, v)) => {
            let mut b = [0u8; 8];
            b[..4].copy_from_slice(&v.to_le_bytes());
            env.mem.poke(luid, &b).is_some() || env.fail(998, false)
        }
        None => env.fail(1313, false), // ERROR_NO_SUCH_PRIVILEGE
    }
}

fn open_token(env: &mut Env, out: u32) -> bool {
    let h = env.handles.add(Object::Other("token"));
    env.mem.poke_u32(out, h).is_some() || env.fail(998, false)
}

/// GetUserName: the size in/out is in characters, with the NUL.
pub fn user_name(env: &mut Env, name: &str, buf: u32, size: u32, wide: bool) -> bool {
    let cap = env.mem.peek_u32(size).unwrap_or(0);
    let n = env.put_str_buf(name, buf, cap, wide);
    if n >= cap || buf == 0 {
        env.mem.poke_u32(size, n);
        return env.fail(err::INSUFFICIENT_BUFFER, false);
    }
    env.mem.poke_u32(size, n + 1);
    true
}

/// Registry status codes (returned, not set as the last error).
const ERROR_SUCCESS: u32 = 0;
const ERROR_NO_MORE_ITEMS: u32 = 259;

/// HKEY_CLASSES_ROOT .. HKEY_CURRENT_CONFIG (and HKEY_PERFORMANCE_DATA).
fn is_root(key: u32) -> bool {
    (0x8000_0000..=0x8000_0006).contains(&key)
}

/// RegOpenKeyEx: a root with an empty or NULL subkey opens to itself;
/// anything else is absent.
fn reg_open(env: &mut Env, key: u32, sub: u32, out: u32, wide: bool) -> u32 {
    if !is_root(key) {
        return err::INVALID_HANDLE;
    }
    if env.read_str(sub, wide).is_some_and(|s| !s.is_empty()) {
        return err::FILE_NOT_FOUND;
    }
    if env.mem.poke_u32(out, key).is_none() {
        return err::INVALID_PARAMETER;
    }
    ERROR_SUCCESS
}

/// RegQueryInfoKey of an (empty) root key: no subkeys, no values.
fn reg_query_info(env: &mut Env, key: u32, outs: &[u32]) -> u32 {
    if !is_root(key) {
        return err::INVALID_HANDLE;
    }
    for &p in outs {
        if p != 0 {
            env.mem.poke_u32(p, 0);
        }
    }
    ERROR_SUCCESS
}

/// ConvertStringSecurityDescriptorToSecurityDescriptor: files carry no
/// security here, so the SDDL string is checked only for presence and
/// revision (SDDL_REVISION_1) and the answer is an empty self-relative
/// descriptor (no owner, group or DACL: access for everyone, as the file
/// model grants it) in a LocalAlloc block.
fn string_to_sd(env: &mut super::Env, s: u32, rev: u32, out: u32, size: u32, wide: bool) -> bool {
    if env.read_str(s, wide).is_none() || out == 0 {
        return env.fail(87, false); // ERROR_INVALID_PARAMETER
    }
    if rev != 1 {
        return env.fail(1305, false); // ERROR_UNKNOWN_REVISION
    }
    let p = env.alloc(20);
    let mut b = [0u8; 20];
    b[0] = 1; // Revision
    b[2..4].copy_from_slice(&0x8000u16.to_le_bytes()); // SE_SELF_RELATIVE
    env.mem.poke(p, &b);
    env.mem.poke_u32(out, p);
    if size != 0 {
        env.mem.poke_u32(size, 20);
    }
    true
}

crate::dll! { "advapi32.dll";
    @also super::wincrypt::DLL;
    stdcall fn ConvertStringSecurityDescriptorToSecurityDescriptorA(env, s: u32, rev: u32, out: u32, size: u32) -> bool { string_to_sd(env, s, rev, out, size, false) }
    stdcall fn ConvertStringSecurityDescriptorToSecurityDescriptorW(env, s: u32, rev: u32, out: u32, size: u32) -> bool { string_to_sd(env, s, rev, out, size, true) }
    // One user, no impersonation levels to switch between.
    stdcall fn ImpersonateSelf(env, level: u32) -> bool { true }
    stdcall fn RevertToSelf(env) -> bool { true }
    stdcall fn OpenProcessToken(env, process: u32, access: u32, out: u32) -> bool { open_token(env, out) }
    // No thread impersonates: ERROR_NO_TOKEN.
    stdcall fn OpenThreadToken(env, thread: u32, access: u32, as_self: u32, out: u32) -> bool { env.fail(1008, false) }
    stdcall fn LookupPrivilegeValueA(env, system: u32, name: u32, luid: u32) -> bool { lookup_privilege(env, name, luid, false) }
    stdcall fn LookupPrivilegeValueW(env, system: u32, name: u32, luid: u32) -> bool { lookup_privilege(env, name, luid, true) }
    stdcall fn AdjustTokenPrivileges(env, token: u32, disable_all: u32, new: u32, len: u32, prev: u32, ret_len: u32) -> bool {
        if !matches!(env.handles.get(token), Some(Object::Other("token"))) {
            return env.fail(err::INVALID_HANDLE, false);
        }
        if prev != 0 && len >= 4 {
            env.mem.poke_u32(prev, 0); // PrivilegeCount: nothing was changed
        }
        if ret_len != 0 {
            env.mem.poke_u32(ret_len, 4);
        }
        // A standard user holds none of them: success, but none assigned.
        env.last_error = if disable_all != 0 { 0 } else { 1300 }; // ERROR_NOT_ALL_ASSIGNED
        true
    }
    stdcall fn GetUserNameA(env, buf: u32, size: u32) -> bool { user_name(env, USER, buf, size, false) }
    stdcall fn GetUserNameW(env, buf: u32, size: u32) -> bool { user_name(env, USER, buf, size, true) }
    stdcall fn RegOpenKeyExA(env, key: u32, sub: u32, options: u32, access: u32, out: u32) -> u32 { reg_open(env, key, sub, out, false) }
    stdcall fn RegOpenKeyExW(env, key: u32, sub: u32, options: u32, access: u32, out: u32) -> u32 { reg_open(env, key, sub, out, true) }
    stdcall fn RegOpenKeyA(env, key: u32, sub: u32, out: u32) -> u32 { reg_open(env, key, sub, out, false) }
    stdcall fn RegOpenKeyW(env, key: u32, sub: u32, out: u32) -> u32 { reg_open(env, key, sub, out, true) }
    // No statistical guessing: only a UTF-16 byte-order mark says Unicode.
    stdcall fn IsTextUnicode(env, buf: u32, len: i32, result: u32) -> bool {
        let bom = len >= 2 && env.mem.peek_u32(buf).map(|v| v & 0xFFFF) == Some(0xFEFF);
        if result != 0 { env.mem.poke_u32(result, if bom { 8 } else { 0 }); }
        bom
    }
    stdcall fn RegCloseKey(env, key: u32) -> u32 { if is_root(key) { ERROR_SUCCESS } else { err::INVALID_HANDLE } }
    stdcall fn RegCreateKeyExW(env, key: u32, sub: u32, reserved: u32, class: u32, options: u32, access: u32, sa: u32, out: u32, disposition: u32) -> u32 { err::ACCESS_DENIED }
    // The current user's key is the predefined HKEY_CURRENT_USER root.
    stdcall fn RegOpenCurrentUser(env, access: u32, out: u32) -> u32 {
        if env.mem.poke_u32(out, 0x8000_0001).is_some() { ERROR_SUCCESS } else { err::INVALID_PARAMETER }
    }
    stdcall fn RegCreateKeyExA(env, key: u32, sub: u32, reserved: u32, class: u32, options: u32, access: u32, sa: u32, out: u32, disposition: u32) -> u32 { err::ACCESS_DENIED }
    stdcall fn RegCreateKeyA(env, key: u32, sub: u32, out: u32) -> u32 { err::ACCESS_DENIED }
    stdcall fn RegCreateKeyW(env, key: u32, sub: u32, out: u32) -> u32 { err::ACCESS_DENIED }
    stdcall fn RegSetValueExA(env, key: u32, name: u32, reserved: u32, kind: u32, data: u32, len: u32) -> u32 { err::ACCESS_DENIED }
    stdcall fn RegDeleteKeyA(env, key: u32, sub: u32) -> u32 { err::FILE_NOT_FOUND }
    stdcall fn RegDeleteValueA(env, key: u32, name: u32) -> u32 { err::FILE_NOT_FOUND }
    stdcall fn RegSetValueExW(env, key: u32, name: u32, reserved: u32, kind: u32, data: u32, len: u32) -> u32 { err::ACCESS_DENIED }
    stdcall fn RegDeleteKeyW(env, key: u32, sub: u32) -> u32 { err::FILE_NOT_FOUND }
    stdcall fn RegDeleteTreeW(env, key: u32, sub: u32) -> u32 { err::FILE_NOT_FOUND }
    stdcall fn RegDeleteValueW(env, key: u32, name: u32) -> u32 { err::FILE_NOT_FOUND }
    stdcall fn RegQueryValueExA(env, key: u32, name: u32, reserved: u32, kind: u32, data: u32, len: u32) -> u32 { err::FILE_NOT_FOUND }
    stdcall fn RegQueryValueExW(env, key: u32, name: u32, reserved: u32, kind: u32, data: u32, len: u32) -> u32 { err::FILE_NOT_FOUND }
    stdcall fn RegEnumKeyExW(env, key: u32, index: u32, name: u32, name_len: u32, reserved: u32, class: u32, class_len: u32, time: u32) -> u32 { ERROR_NO_MORE_ITEMS }
    stdcall fn RegEnumValueW(env, key: u32, index: u32, name: u32, name_len: u32, reserved: u32, kind: u32, data: u32, data_len: u32) -> u32 { ERROR_NO_MORE_ITEMS }
    stdcall fn RegQueryInfoKeyW(env, key: u32, class: u32, class_len: u32, reserved: u32, subkeys: u32, max_subkey: u32, max_class: u32, values: u32, max_value_name: u32, max_value: u32, sd_len: u32, time: u32) -> u32 {
        // The class length is in/out; everything else counts nothing.
        reg_query_info(env, key, &[class_len, subkeys, max_subkey, max_class, values, max_value_name, max_value, sd_len])
    }
}
