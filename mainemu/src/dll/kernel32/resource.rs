//! kernel32's resource calls: FindResource(A/W), FindResourceEx(A/W),
//! LoadResource, LockResource, SizeofResource, FreeResource.
//!
//! Windows' handles are used: an HRSRC is the guest address of the
//! resource's IMAGE_RESOURCE_DATA_ENTRY in the mapped image, the HGLOBAL of
//! LoadResource the guest address of the data itself (LockResource hands it
//! back). Types and names are MAKEINTRESOURCE integers, `"#n"` or strings
//! compared case-insensitively. Language: FindResource takes the one
//! `pe::resources::find` ranks first for an en-US thread (en-US, neutral,
//! the default neutral forms, any English, then directory order);
//! FindResourceEx with a language tries that language, its primary language
//! with SUBLANG_NEUTRAL, then LANG_NEUTRAL (Wine's order, without Wine's
//! fall back to the first entry), and a neutral primary language ranks as
//! FindResource does.
//!
//! Owns these calls' error codes (ERROR_RESOURCE_DATA_NOT_FOUND 1812 for a
//! module without a readable resource directory, TYPE 1813 / NAME 1814 /
//! LANG 1815 not found, ERROR_INVALID_HANDLE for an HRSRC that is no
//! resource's data entry). Must not: parse the directory itself (that is
//! `pe::resources`, read through the desktop's per-module image cache as
//! user32 does), copy resource data, or panic on a bad directory.

use crate::dll::{u16_at, u32_at, user32, Env};
use crate::files::err;
use crate::pe::resources::{self as res, ResId, Resource};

const ERROR_RESOURCE_DATA_NOT_FOUND: u32 = 1812;
const ERROR_RESOURCE_TYPE_NOT_FOUND: u32 = 1813;
const ERROR_RESOURCE_NAME_NOT_FOUND: u32 = 1814;
const ERROR_RESOURCE_LANG_NOT_FOUND: u32 = 1815;

/// The module base a handle means (0: the program).
fn base_of(env: &Env, module: u32) -> u32 {
    if module == 0 {
        env.image_base
    } else {
        module
    }
}

/// Every resource of the module at `base`; Err is the error code.
fn list(env: &mut Env, base: u32) -> Result<Vec<Resource>, u32> {
    env.desktop
        .resources(&env.mem, base)
        .filter(|l| !l.is_empty())
        .ok_or(ERROR_RESOURCE_DATA_NOT_FOUND)
}

/// The resource of `kind`/`name` (language `lang`, None: FindResource's
/// choice) in `list`; Err is the error code.
fn pick<'a>(
    list: &'a [Resource],
    kind: &ResId,
    name: &ResId,
    lang: Option<u16>,
) -> Result<&'a Resource, u32> {
    if !list.iter().any(|r| res::same(&r.kind, kind)) {
        return Err(ERROR_RESOURCE_TYPE_NOT_FOUND);
    }
    let Some(first) = res::find(list, kind, name) else {
        return Err(ERROR_RESOURCE_NAME_NOT_FOUND);
    };
    let Some(lang) = lang else {
        return Ok(first);
    };
    let langs = [lang, lang & 0x3FF, 0];
    for l in langs {
        if let Some(r) = list
            .iter()
            .find(|r| r.lang == l && res::same(&r.kind, kind) && res::same(&r.name, name))
        {
            return Ok(r);
        }
    }
    if lang & 0x3FF == 0 {
        return Ok(first); // LANG_NEUTRAL with any sublanguage: the default choice
    }
    Err(ERROR_RESOURCE_LANG_NOT_FOUND)
}

fn find_resource(
    env: &mut Env,
    module: u32,
    name: u32,
    kind: u32,
    lang: Option<u16>,
    wide: bool,
) -> u32 {
    let base = base_of(env, module);
    let kind = user32::res_name(env, kind, wide);
    let name = user32::res_name(env, name, wide);
    let found = list(env, base).and_then(|l| pick(&l, &kind, &name, lang).map(|r| r.entry_rva));
    match found {
        Ok(rva) => base.wrapping_add(rva),
        Err(e) => {
            env.last_error = e;
            0
        }
    }
}

/// The resource whose data entry is at guest address `hrsrc` of `module`
/// (0: the module containing it, else the program).
fn by_handle(env: &mut Env, module: u32, hrsrc: u32) -> Result<(u32, Resource), u32> {
    if hrsrc == 0 {
        return Err(err::INVALID_HANDLE);
    }
    let base = if module == 0 {
        env.modules
            .containing(hrsrc)
            .map(|m| m.base)
            .unwrap_or(env.image_base)
    } else {
        module
    };
    let l = list(env, base)?;
    l.into_iter()
        .find(|r| base.wrapping_add(r.entry_rva) == hrsrc)
        .map(|r| (base, r))
        .ok_or(err::INVALID_HANDLE)
}

/// RT_MESSAGETABLE.
const RT_MESSAGETABLE: u16 = 11;
/// ERROR_MR_MID_NOT_FOUND (also FormatMessage's answer for an id no table holds).
pub const ERROR_MR_MID_NOT_FOUND: u32 = 317;

/// Message `id` of `module`'s message table (FormatMessage's
/// FROM_HMODULE): MESSAGE_RESOURCE_DATA {block count, blocks {low id, high
/// id, offset of entries}}, each entry {length, flags (1: UTF-16), text}.
/// Err is the error code (1812-1815 for the table, 317 for the id).
pub fn message(env: &mut Env, module: u32, id: u32, lang: u32) -> Result<String, u32> {
    let base = base_of(env, module);
    let l = list(env, base)?;
    let kind = ResId::Id(RT_MESSAGETABLE);
    let name = l
        .iter()
        .find(|r| res::same(&r.kind, &kind))
        .map(|r| r.name.clone())
        .ok_or(ERROR_RESOURCE_TYPE_NOT_FOUND)?;
    let lang = (lang != 0).then_some(lang as u16);
    let r = pick(&l, &kind, &name, lang)?;
    let data = env
        .read_bytes(base.wrapping_add(r.data_rva), r.size)
        .ok_or(ERROR_RESOURCE_DATA_NOT_FOUND)?;
    let rd32 = |o: usize| u32_at(&data, o);
    let rd16 = |o: usize| u16_at(&data, o);
    let blocks = rd32(0).unwrap_or(0).min(4096) as usize;
    for b in 0..blocks {
        let (Some(low), Some(high), Some(off)) =
            (rd32(4 + 12 * b), rd32(8 + 12 * b), rd32(12 + 12 * b))
        else {
            break;
        };
        if !(low..=high).contains(&id) {
            continue;
        }
        let mut at = off as usize;
        for _ in low..id {
            at += rd16(at).ok_or(ERROR_MR_MID_NOT_FOUND)? as usize;
        }
        let len = rd16(at).ok_or(ERROR_MR_MID_NOT_FOUND)? as usize;
        let flags = rd16(at + 2).ok_or(ERROR_MR_MID_NOT_FOUND)?;
        let text = data
            .get(at + 4..at + len.max(4))
            .ok_or(ERROR_MR_MID_NOT_FOUND)?;
        let s = if flags & 1 != 0 {
            let w: Vec<u16> = text
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect();
            String::from_utf16_lossy(&w)
        } else {
            text.iter().map(|&c| c as char).collect()
        };
        return Ok(s.trim_end_matches('\0').to_string());
    }
    Err(ERROR_MR_MID_NOT_FOUND)
}

fn load_resource(env: &mut Env, module: u32, hrsrc: u32) -> u32 {
    match by_handle(env, module, hrsrc) {
        Ok((base, r)) => base.wrapping_add(r.data_rva),
        Err(e) => {
            env.last_error = e;
            0
        }
    }
}

fn sizeof_resource(env: &mut Env, module: u32, hrsrc: u32) -> u32 {
    match by_handle(env, module, hrsrc) {
        Ok((_, r)) => r.size,
        Err(e) => {
            env.last_error = e;
            0
        }
    }
}

crate::dll! { "(kernel32 resource)";
    stdcall fn FindResourceA(env, module: u32, name: u32, kind: u32) -> u32 {
        find_resource(env, module, name, kind, None, false)
    }
    stdcall fn FindResourceW(env, module: u32, name: u32, kind: u32) -> u32 {
        find_resource(env, module, name, kind, None, true)
    }
    stdcall fn FindResourceExA(env, module: u32, kind: u32, name: u32, lang: u32) -> u32 {
        find_resource(env, module, name, kind, Some(lang as u16), false)
    }
    stdcall fn FindResourceExW(env, module: u32, kind: u32, name: u32, lang: u32) -> u32 {
        find_resource(env, module, name, kind, Some(lang as u16), true)
    }
    stdcall fn LoadResource(env, module: u32, hrsrc: u32) -> u32 { load_resource(env, module, hrsrc) }
    stdcall fn LockResource(env, h: u32) -> u32 { h }
    stdcall fn SizeofResource(env, module: u32, hrsrc: u32) -> u32 { sizeof_resource(env, module, hrsrc) }
    // Win32's FreeResource does nothing and returns FALSE.
    stdcall fn FreeResource(env, h: u32) -> bool { false }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(kind: ResId, name: ResId, lang: u16, entry_rva: u32) -> Resource {
        Resource {
            kind,
            name,
            lang,
            data_rva: 0,
            size: 0,
            entry_rva,
        }
    }

    #[test]
    fn pick_errors_and_languages() {
        let l = vec![
            r(ResId::Id(10), ResId::Id(1), 0x407, 1),
            r(ResId::Id(10), ResId::Id(1), 0x409, 2),
            r(
                ResId::Name("MYTYPE".into()),
                ResId::Name("BLOB".into()),
                0x407,
                3,
            ),
        ];
        let id = |v| ResId::Id(v);
        assert_eq!(
            pick(&l, &id(11), &id(1), None),
            Err(ERROR_RESOURCE_TYPE_NOT_FOUND)
        );
        assert_eq!(
            pick(&l, &id(10), &id(2), None),
            Err(ERROR_RESOURCE_NAME_NOT_FOUND)
        );
        assert_eq!(pick(&l, &id(10), &id(1), None).map(|r| r.entry_rva), Ok(2));
        assert_eq!(
            pick(&l, &id(10), &id(1), Some(0x407)).map(|r| r.entry_rva),
            Ok(1)
        );
        assert_eq!(
            pick(&l, &id(10), &id(1), Some(0x40C)),
            Err(ERROR_RESOURCE_LANG_NOT_FOUND)
        );
        assert_eq!(
            pick(&l, &id(10), &id(1), Some(0)).map(|r| r.entry_rva),
            Ok(2)
        );
        let t = ResId::Name("mytype".into());
        let n = ResId::Name("Blob".into());
        assert_eq!(pick(&l, &t, &n, None).map(|r| r.entry_rva), Ok(3));
    }
}
