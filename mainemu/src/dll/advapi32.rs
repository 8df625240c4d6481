//! ADVAPI32.dll: the security calls console programs make on start-up, over
//! a fixed identity: the user `mainemu` (the USERNAME of the default
//! environment) on the machine MAINEMU, a standard user who holds none of
//! the privileges programs ask to enable (AdjustTokenPrivileges succeeds
//! with ERROR_NOT_ALL_ASSIGNED, as it does on Windows for such a user).
//! Tokens are handles that can only be closed.
//!
//! The registry calls work on the process's tree ([`super::registry`]):
//! a fixed set of keys every run starts from, HKEY_CURRENT_USER writable,
//! the machine's keys read-only (ERROR_ACCESS_DENIED to a standard user);
//! nothing persists past the process.
//!
//! Owns these calls' conventions; must not touch host state.

use super::registry::{self, Registry};
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
const ERROR_MORE_DATA: u32 = 234;
const ERROR_NO_MORE_ITEMS: u32 = 259;
const ERROR_KEY_DELETED: u32 = 1018;
const ERROR_NOACCESS: u32 = 998;
/// Access bits that ask to change a key (KEY_SET_VALUE, KEY_CREATE_SUB_KEY, DELETE).
const WRITE_ACCESS: u32 = 0x2 | 0x4 | 0x1_0000;
/// RegCreateKeyEx dispositions.
const CREATED_NEW_KEY: u32 = 1;
const OPENED_EXISTING_KEY: u32 = 2;

fn root_name(key: u32) -> Option<&'static str> {
    registry::ROOTS
        .iter()
        .find(|(h, _, _)| *h == key)
        .map(|(_, n, _)| *n)
}

/// The full path an open key names; Err(code) for a bad handle.
fn key_path(env: &Env, key: u32) -> Result<Vec<String>, u32> {
    if let Some(n) = root_name(key) {
        return Ok(vec![n.to_string()]);
    }
    match env.handles.get(key) {
        Some(Object::Key(p)) => Ok(registry::split(p)),
        _ => Err(err::INVALID_HANDLE),
    }
}

/// The full path of `sub` under `key` (a NULL `sub` is the key itself).
fn sub_path(env: &Env, key: u32, sub: u32, wide: bool) -> Result<(Vec<String>, bool), u32> {
    let mut p = key_path(env, key)?;
    let s = if sub == 0 {
        String::new()
    } else {
        env.read_str(sub, wide).ok_or(err::INVALID_PARAMETER)?
    };
    let comps = registry::split(&s);
    let same = comps.is_empty();
    p.extend(comps);
    Ok((p, same))
}

/// A new handle to an existing key (the root's own value for a root).
fn open_handle(env: &mut Env, key: u32, canon: Vec<String>, same: bool, out: u32) -> u32 {
    let h = if same && root_name(key).is_some() {
        key
    } else {
        env.handles.add(Object::Key(canon.join("\\")))
    };
    if env.mem.poke_u32(out, h).is_none() {
        return err::INVALID_PARAMETER;
    }
    ERROR_SUCCESS
}

macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(code) => return code,
        }
    };
}

/// RegOpenKeyEx: an existing key; asking to change a read-only root's key
/// is ERROR_ACCESS_DENIED.
fn reg_open(env: &mut Env, key: u32, sub: u32, access: u32, out: u32, wide: bool) -> u32 {
    let (path, same) = tri!(sub_path(env, key, sub, wide));
    let Some(canon) = env.registry.canonical(&path) else {
        return err::FILE_NOT_FOUND;
    };
    if access & WRITE_ACCESS != 0 && !Registry::writable(&canon) {
        return err::ACCESS_DENIED;
    }
    open_handle(env, key, canon, same, out)
}

/// RegCreateKeyEx: opens or creates (with the missing keys between).
fn reg_create(
    env: &mut Env,
    key: u32,
    sub: u32,
    access: u32,
    out: u32,
    disposition: u32,
    wide: bool,
) -> u32 {
    let (path, same) = tri!(sub_path(env, key, sub, wide));
    let (canon, how) = match env.registry.canonical(&path) {
        Some(c) => {
            if access & WRITE_ACCESS != 0 && !Registry::writable(&c) {
                return err::ACCESS_DENIED;
            }
            (c, OPENED_EXISTING_KEY)
        }
        None => {
            if !Registry::writable(&path) {
                return err::ACCESS_DENIED;
            }
            let t = env.guest_filetime();
            match env.registry.create(&path, t) {
                Some((c, _)) => (c, CREATED_NEW_KEY),
                None => return err::FILE_NOT_FOUND,
            }
        }
    };
    if disposition != 0 {
        env.mem.poke_u32(disposition, how);
    }
    open_handle(env, key, canon, same, out)
}

fn reg_close(env: &mut Env, key: u32) -> u32 {
    if root_name(key).is_some() {
        return ERROR_SUCCESS;
    }
    if !matches!(env.handles.get(key), Some(Object::Key(_))) {
        return err::INVALID_HANDLE;
    }
    env.handles.close(key);
    ERROR_SUCCESS
}

/// Whether a value of this type holds text (UTF-16 inside, ANSI to the A calls).
fn is_text(kind: u32) -> bool {
    matches!(
        kind,
        registry::REG_SZ | registry::REG_EXPAND_SZ | registry::REG_MULTI_SZ
    )
}

/// A value's bytes as an ANSI caller sees them (string types converted).
fn to_ansi(kind: u32, data: &[u8]) -> Vec<u8> {
    if !is_text(kind) {
        return data.to_vec();
    }
    let w: Vec<u16> = data
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    String::from_utf16_lossy(&w)
        .chars()
        .map(|c| if (c as u32) < 0x100 { c as u8 } else { b'?' })
        .collect()
}

fn from_ansi(kind: u32, data: &[u8]) -> Vec<u8> {
    if !is_text(kind) {
        return data.to_vec();
    }
    data.iter()
        .flat_map(|&b| (b as u16).to_le_bytes())
        .collect()
}

fn value_name(env: &Env, name: u32, wide: bool) -> Result<String, u32> {
    if name == 0 {
        Ok(String::new())
    } else {
        env.read_str(name, wide).ok_or(err::INVALID_PARAMETER)
    }
}

fn reg_set_value(
    env: &mut Env,
    key: u32,
    name: u32,
    kind: u32,
    data: u32,
    len: u32,
    wide: bool,
) -> u32 {
    let path = tri!(key_path(env, key));
    let name = tri!(value_name(env, name, wide));
    if !Registry::writable(&path) {
        return err::ACCESS_DENIED;
    }
    let Some(bytes) = env.read_bytes(data, len) else {
        return ERROR_NOACCESS;
    };
    let bytes = if wide { bytes } else { from_ansi(kind, &bytes) };
    let t = env.guest_filetime();
    match env.registry.get_mut(&path) {
        Some(k) => {
            k.set(&name, kind, bytes, t);
            ERROR_SUCCESS
        }
        None => ERROR_KEY_DELETED,
    }
}

/// Hands out `bytes` by the registry's buffer rules: a NULL buffer asks
/// for the size; a short one gets ERROR_MORE_DATA and the size.
fn give(env: &mut Env, bytes: &[u8], data: u32, len: u32) -> u32 {
    let n = bytes.len() as u32;
    if data == 0 {
        if len != 0 {
            env.mem.poke_u32(len, n);
        }
        return ERROR_SUCCESS;
    }
    if len == 0 {
        return err::INVALID_PARAMETER;
    }
    let cap = env.mem.peek_u32(len).unwrap_or(0);
    env.mem.poke_u32(len, n);
    if cap < n {
        return ERROR_MORE_DATA;
    }
    if env.mem.poke(data, bytes).is_none() {
        return ERROR_NOACCESS;
    }
    ERROR_SUCCESS
}

fn reg_query_value(
    env: &mut Env,
    key: u32,
    name: u32,
    kind: u32,
    data: u32,
    len: u32,
    wide: bool,
) -> u32 {
    let path = tri!(key_path(env, key));
    let name = tri!(value_name(env, name, wide));
    let Some(k) = env.registry.get(&path) else {
        return ERROR_KEY_DELETED;
    };
    let Some(v) = k.value(&name) else {
        return err::FILE_NOT_FOUND;
    };
    let (t, bytes) = (
        v.kind,
        if wide {
            v.data.clone()
        } else {
            to_ansi(v.kind, &v.data)
        },
    );
    if kind != 0 {
        env.mem.poke_u32(kind, t);
    }
    give(env, &bytes, data, len)
}

fn reg_delete_value(env: &mut Env, key: u32, name: u32, wide: bool) -> u32 {
    let path = tri!(key_path(env, key));
    let name = tri!(value_name(env, name, wide));
    if !Registry::writable(&path) {
        return err::ACCESS_DENIED;
    }
    match env.registry.get_mut(&path).map(|k| k.delete_value(&name)) {
        Some(true) => ERROR_SUCCESS,
        Some(false) => err::FILE_NOT_FOUND,
        None => ERROR_KEY_DELETED,
    }
}

/// RegDeleteKey: a key without subkeys (never a root).
fn reg_delete_key(env: &mut Env, key: u32, sub: u32, wide: bool) -> u32 {
    let (path, _) = tri!(sub_path(env, key, sub, wide));
    let Some(k) = env.registry.get(&path) else {
        return err::FILE_NOT_FOUND;
    };
    if path.len() < 2 || !k.subkeys.is_empty() || !Registry::writable(&path) {
        return err::ACCESS_DENIED;
    }
    env.registry.remove(&path);
    ERROR_SUCCESS
}

/// RegDeleteTree: the subkey and everything below it; with a NULL subkey,
/// the key's own subkeys and values.
fn reg_delete_tree(env: &mut Env, key: u32, sub: u32, wide: bool) -> u32 {
    let (path, _) = tri!(sub_path(env, key, sub, wide));
    if env.registry.get(&path).is_none() {
        return err::FILE_NOT_FOUND;
    }
    if !Registry::writable(&path) {
        return err::ACCESS_DENIED;
    }
    if sub == 0 {
        let t = env.guest_filetime();
        if let Some(k) = env.registry.get_mut(&path) {
            k.subkeys.clear();
            k.values.clear();
            k.time = t;
        }
    } else if path.len() < 2 {
        return err::ACCESS_DENIED;
    } else {
        env.registry.remove(&path);
    }
    ERROR_SUCCESS
}

/// Writes a name (UTF-16: only the W enumerations exist) by the enumeration
/// rules: `cap` (in characters, with the NUL) must hold it, else
/// ERROR_MORE_DATA; the length written excludes the NUL.
fn give_name(env: &mut Env, s: &str, buf: u32, len: u32) -> u32 {
    let cap = env.mem.peek_u32(len).unwrap_or(0);
    let n = s.encode_utf16().count() as u32;
    if n + 1 > cap {
        return ERROR_MORE_DATA;
    }
    env.put_str(buf, s, true);
    env.mem.poke_u32(len, n);
    ERROR_SUCCESS
}

fn put_time(env: &mut Env, at: u32, t: u64) {
    if at != 0 {
        env.mem.poke(at, &t.to_le_bytes());
    }
}

#[allow(clippy::too_many_arguments)]
fn reg_enum_key(
    env: &mut Env,
    key: u32,
    index: u32,
    name: u32,
    name_len: u32,
    class: u32,
    class_len: u32,
    time: u32,
) -> u32 {
    let path = tri!(key_path(env, key));
    let Some(k) = env.registry.get(&path) else {
        return ERROR_KEY_DELETED;
    };
    let Some(s) = k.subkeys.get(index as usize) else {
        return ERROR_NO_MORE_ITEMS;
    };
    let (n, t) = (s.name.clone(), s.time);
    let r = give_name(env, &n, name, name_len);
    if r != ERROR_SUCCESS {
        return r;
    }
    if class != 0 && class_len != 0 {
        env.mem.poke(class, &[0, 0]);
        env.mem.poke_u32(class_len, 0);
    }
    put_time(env, time, t);
    ERROR_SUCCESS
}

#[allow(clippy::too_many_arguments)]
fn reg_enum_value(
    env: &mut Env,
    key: u32,
    index: u32,
    name: u32,
    name_len: u32,
    kind: u32,
    data: u32,
    data_len: u32,
) -> u32 {
    let path = tri!(key_path(env, key));
    let Some(k) = env.registry.get(&path) else {
        return ERROR_KEY_DELETED;
    };
    let Some(v) = k.values.get(index as usize).cloned() else {
        return ERROR_NO_MORE_ITEMS;
    };
    let r = give_name(env, &v.name, name, name_len);
    if r != ERROR_SUCCESS {
        return r;
    }
    if kind != 0 {
        env.mem.poke_u32(kind, v.kind);
    }
    give(env, &v.data, data, data_len)
}

/// RegQueryInfoKey: counts and the longest names (characters, no NUL) and data.
fn reg_query_info(
    env: &mut Env,
    key: u32,
    class: u32,
    class_len: u32,
    outs: [u32; 7],
    time: u32,
) -> u32 {
    let path = tri!(key_path(env, key));
    let Some(k) = env.registry.get(&path) else {
        return ERROR_KEY_DELETED;
    };
    let wlen = |s: &str| s.encode_utf16().count() as u32;
    let vals = [
        k.subkeys.len() as u32,
        k.subkeys.iter().map(|s| wlen(&s.name)).max().unwrap_or(0),
        0,
        k.values.len() as u32,
        k.values.iter().map(|v| wlen(&v.name)).max().unwrap_or(0),
        k.values
            .iter()
            .map(|v| v.data.len() as u32)
            .max()
            .unwrap_or(0),
        0,
    ];
    let t = k.time;
    for (p, v) in outs.into_iter().zip(vals) {
        if p != 0 {
            env.mem.poke_u32(p, v);
        }
    }
    if class != 0 && class_len != 0 {
        env.mem.poke(class, &[0, 0]);
    }
    if class_len != 0 {
        env.mem.poke_u32(class_len, 0);
    }
    put_time(env, time, t);
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
    stdcall fn RegOpenKeyExA(env, key: u32, sub: u32, options: u32, access: u32, out: u32) -> u32 { reg_open(env, key, sub, access, out, false) }
    stdcall fn RegOpenKeyExW(env, key: u32, sub: u32, options: u32, access: u32, out: u32) -> u32 { reg_open(env, key, sub, access, out, true) }
    stdcall fn RegOpenKeyA(env, key: u32, sub: u32, out: u32) -> u32 { reg_open(env, key, sub, 0, out, false) }
    stdcall fn RegOpenKeyW(env, key: u32, sub: u32, out: u32) -> u32 { reg_open(env, key, sub, 0, out, true) }
    // No statistical guessing: only a UTF-16 byte-order mark says Unicode.
    stdcall fn IsTextUnicode(env, buf: u32, len: i32, result: u32) -> bool {
        let bom = len >= 2 && env.mem.peek_u32(buf).map(|v| v & 0xFFFF) == Some(0xFEFF);
        if result != 0 { env.mem.poke_u32(result, if bom { 8 } else { 0 }); }
        bom
    }
    stdcall fn RegCloseKey(env, key: u32) -> u32 { reg_close(env, key) }
    stdcall fn RegCreateKeyExW(env, key: u32, sub: u32, reserved: u32, class: u32, options: u32, access: u32, sa: u32, out: u32, disposition: u32) -> u32 { reg_create(env, key, sub, access, out, disposition, true) }
    // The current user's key is the predefined HKEY_CURRENT_USER root.
    stdcall fn RegOpenCurrentUser(env, access: u32, out: u32) -> u32 {
        if env.mem.poke_u32(out, 0x8000_0001).is_some() { ERROR_SUCCESS } else { err::INVALID_PARAMETER }
    }
    stdcall fn RegCreateKeyExA(env, key: u32, sub: u32, reserved: u32, class: u32, options: u32, access: u32, sa: u32, out: u32, disposition: u32) -> u32 { reg_create(env, key, sub, access, out, disposition, false) }
    stdcall fn RegCreateKeyA(env, key: u32, sub: u32, out: u32) -> u32 { reg_create(env, key, sub, WRITE_ACCESS, out, 0, false) }
    stdcall fn RegCreateKeyW(env, key: u32, sub: u32, out: u32) -> u32 { reg_create(env, key, sub, WRITE_ACCESS, out, 0, true) }
    stdcall fn RegSetValueExA(env, key: u32, name: u32, reserved: u32, kind: u32, data: u32, len: u32) -> u32 { reg_set_value(env, key, name, kind, data, len, false) }
    stdcall fn RegDeleteKeyA(env, key: u32, sub: u32) -> u32 { reg_delete_key(env, key, sub, false) }
    stdcall fn RegDeleteValueA(env, key: u32, name: u32) -> u32 { reg_delete_value(env, key, name, false) }
    stdcall fn RegSetValueExW(env, key: u32, name: u32, reserved: u32, kind: u32, data: u32, len: u32) -> u32 { reg_set_value(env, key, name, kind, data, len, true) }
    stdcall fn RegDeleteKeyW(env, key: u32, sub: u32) -> u32 { reg_delete_key(env, key, sub, true) }
    stdcall fn RegDeleteTreeW(env, key: u32, sub: u32) -> u32 { reg_delete_tree(env, key, sub, true) }
    stdcall fn RegDeleteValueW(env, key: u32, name: u32) -> u32 { reg_delete_value(env, key, name, true) }
    stdcall fn RegQueryValueExA(env, key: u32, name: u32, reserved: u32, kind: u32, data: u32, len: u32) -> u32 { reg_query_value(env, key, name, kind, data, len, false) }
    stdcall fn RegQueryValueExW(env, key: u32, name: u32, reserved: u32, kind: u32, data: u32, len: u32) -> u32 { reg_query_value(env, key, name, kind, data, len, true) }
    stdcall fn RegEnumKeyExW(env, key: u32, index: u32, name: u32, name_len: u32, reserved: u32, class: u32, class_len: u32, time: u32) -> u32 { reg_enum_key(env, key, index, name, name_len, class, class_len, time) }
    stdcall fn RegEnumValueW(env, key: u32, index: u32, name: u32, name_len: u32, reserved: u32, kind: u32, data: u32, data_len: u32) -> u32 { reg_enum_value(env, key, index, name, name_len, kind, data, data_len) }
    stdcall fn RegQueryInfoKeyW(env, key: u32, class: u32, class_len: u32, reserved: u32, subkeys: u32, max_subkey: u32, max_class: u32, values: u32, max_value_name: u32, max_value: u32, sd_len: u32, time: u32) -> u32 {
        reg_query_info(env, key, class, class_len, [subkeys, max_subkey, max_class, values, max_value_name, max_value, sd_len], time)
    }
}
