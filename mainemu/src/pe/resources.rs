//! The resource directory of a PE image: the three-level walk (type, name,
//! language) and the two decoders console programs need, string tables and
//! version info.
//!
//! Owns: reading `.rsrc` from a laid-out image, bounds-checked, with a depth
//! and entry limit so a cyclic or hostile directory ends with an error. It must
//! not: map memory, decode bitmaps or dialogs (the GUI issue), or know which
//! API asked.

use super::parse::{u16_at, u32_at, PeError, PeFile};

/// A resource type or name: numeric ID or string.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ResId {
    Id(u16),
    Name(String),
}

/// Resource types.
pub const RT_CURSOR: u16 = 1;
pub const RT_BITMAP: u16 = 2;
pub const RT_ICON: u16 = 3;
pub const RT_MENU: u16 = 4;
pub const RT_DIALOG: u16 = 5;
pub const RT_STRING: u16 = 6;
pub const RT_ACCELERATOR: u16 = 9;
pub const RT_GROUP_CURSOR: u16 = 12;
pub const RT_GROUP_ICON: u16 = 14;
pub const RT_VERSION: u16 = 16;

/// One leaf of the resource tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resource {
    pub kind: ResId,
    pub name: ResId,
    pub lang: u16,
    /// RVA and size of the data.
    pub data_rva: u32,
    pub size: u32,
    /// RVA of its IMAGE_RESOURCE_DATA_ENTRY (what FindResource's HRSRC
    /// points at).
    pub entry_rva: u32,
}

/// Every resource, in directory order.
pub fn walk(pe: &PeFile) -> Result<Vec<Resource>, PeError> {
    let (rva, _) = pe.dirs[super::parse::dir::RESOURCE];
    walk_image(&pe.image, rva)
}

/// Every resource of a laid-out image (`img[rva]` = byte at that RVA)
/// whose resource directory is at `rva` (0: none).
pub fn walk_image(img: &[u8], rva: u32) -> Result<Vec<Resource>, PeError> {
    if rva == 0 {
        return Ok(Vec::new());
    }
    let root = rva as u64;
    let entries = |dir: u64| -> Result<Vec<(ResId, u32)>, PeError> {
        let named = u16_at(img, dir + 12, "resource directory")? as u64;
        let ids = u16_at(img, dir + 14, "resource directory")? as u64;
        let mut out = Vec::new();
        for k in 0..named + ids {
            let e = dir + 16 + 8 * k;
            let n = u32_at(img, e, "resource entry")?;
            let off = u32_at(img, e + 4, "resource entry")?;
            let id = if n & 0x8000_0000 != 0 {
                let s = root + (n & 0x7FFF_FFFF) as u64;
                let len = u16_at(img, s, "resource name")? as u64;
                let mut units = Vec::with_capacity(len as usize);
                for i in 0..len {
                    units.push(u16_at(img, s + 2 + 2 * i, "resource name")?);
                }
                ResId::Name(String::from_utf16_lossy(&units))
            } else {
                ResId::Id(n as u16)
            };
            out.push((id, off));
        }
        Ok(out)
    };
    let sub = |off: u32, what: &str| -> Result<u64, PeError> {
        if off & 0x8000_0000 == 0 {
            return Err(PeError(format!(
                "resource {what} entry is a leaf, expected a directory"
            )));
        }
        Ok(root + (off & 0x7FFF_FFFF) as u64)
    };
    let mut out = Vec::new();
    for (kind, off) in entries(root)? {
        for (name, off2) in entries(sub(off, "type")?)? {
            for (lang, off3) in entries(sub(off2, "name")?)? {
                if off3 & 0x8000_0000 != 0 {
                    return Err(PeError("resource tree deeper than three levels".into()));
                }
                let leaf = root + off3 as u64;
                let lang = match lang {
                    ResId::Id(l) => l,
                    ResId::Name(_) => 0,
                };
                let data_rva = u32_at(img, leaf, "resource data entry")?;
                let size = u32_at(img, leaf + 4, "resource data entry")?;
                if data_rva as u64 + size as u64 > img.len() as u64 {
                    return Err(PeError(format!(
                        "resource data {data_rva:#x}+{size:#x} is outside the image"
                    )));
                }
                out.push(Resource {
                    kind: kind.clone(),
                    name: name.clone(),
                    lang,
                    data_rva,
                    size,
                    entry_rva: leaf as u32,
                });
                if out.len() > 100_000 {
                    return Err(PeError("more than 100000 resources".into()));
                }
            }
        }
    }
    Ok(out)
}

/// The strings of every RT_STRING block, as (string ID, text), sorted by ID;
/// where several languages have an ID, the one [`lang_rank`] prefers.
/// Block N holds IDs (N-1)*16 .. (N-1)*16+15, each a counted UTF-16 string.
pub fn string_table(pe: &PeFile) -> Result<Vec<(u32, String)>, PeError> {
    let mut out = Vec::new();
    for r in walk(pe)? {
        let (ResId::Id(RT_STRING), ResId::Id(block)) = (&r.kind, &r.name) else {
            continue;
        };
        let mut p = r.data_rva as u64;
        let end = p + r.size as u64;
        for i in 0..16u32 {
            if p + 2 > end {
                break;
            }
            let len = u16_at(&pe.image, p, "string table")? as u64;
            let mut units = Vec::with_capacity(len as usize);
            for k in 0..len {
                units.push(u16_at(&pe.image, p + 2 + 2 * k, "string table")?);
            }
            p += 2 + 2 * len;
            if len > 0 {
                let id = (*block as u32).wrapping_sub(1) * 16 + i;
                out.push((id, lang_rank(r.lang), String::from_utf16_lossy(&units)));
            }
        }
    }
    // Stable: among equal ranks the directory order stands.
    out.sort_by_key(|e| (e.0, e.1));
    out.dedup_by_key(|e| e.0);
    Ok(out.into_iter().map(|(id, _, t)| (id, t)).collect())
}

/// The order FindResource picks a language in for an en-US thread: en-US,
/// neutral, the process/system default neutral forms (0400h, 0800h), any
/// English, then the first the directory lists (lower ranks first). Wine's
/// tools carry a dozen translations of every table; without the ranking the
/// first one listed, Arabic, wins.
fn lang_rank(lang: u16) -> u8 {
    match lang {
        0x409 => 0,
        0 => 1,
        0x400 | 0x800 => 2,
        l if l & 0x3FF == 0x09 => 3,
        _ => 4,
    }
}

/// Where string `id` lies in the image: the RVA of its first UTF-16 unit
/// and its length in units (LoadString hands out a pointer to it), from the
/// RT_STRING block in the language [`lang_rank`] prefers; `None` when absent
/// or empty. (Wine's tools carry a block per translation.)
pub fn find_string(pe: &PeFile, id: u32) -> Result<Option<(u32, u32)>, PeError> {
    if id / 16 + 1 > u16::MAX as u32 {
        return Ok(None);
    }
    let block = (id / 16 + 1) as u16;
    let mut blocks: Vec<Resource> = walk(pe)?
        .into_iter()
        .filter(|r| (&r.kind, &r.name) == (&ResId::Id(RT_STRING), &ResId::Id(block)))
        .collect();
    // Stable: among equal ranks the directory order stands.
    blocks.sort_by_key(|r| lang_rank(r.lang));
    if let Some(r) = blocks.into_iter().next() {
        let mut p = r.data_rva as u64;
        let end = p + r.size as u64;
        for i in 0..16u32 {
            if p + 2 > end {
                break;
            }
            let len = u16_at(&pe.image, p, "string table")? as u64;
            if i == id % 16 {
                if len == 0 || p + 2 + 2 * len > end {
                    break;
                }
                return Ok(Some((p as u32 + 2, len as u32)));
            }
            p += 2 + 2 * len;
        }
    }
    Ok(None)
}

/// What a VS_VERSIONINFO resource says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VersionInfo {
    /// VS_FIXEDFILEINFO file version (major, minor, build, revision).
    pub file_version: (u16, u16, u16, u16),
    pub product_version: (u16, u16, u16, u16),
    /// StringFileInfo key/value pairs (CompanyName, FileVersion, ...), in order.
    pub strings: Vec<(String, String)>,
}

/// A VS_VERSIONINFO-style node: (length, value length, type, key, value
/// offset, children offset, end).
struct Node {
    val_len: u64,
    key: String,
    value: u64,
    children: u64,
    end: u64,
}

fn node(img: &[u8], at: u64, limit: u64) -> Result<Node, PeError> {
    let len = u16_at(img, at, "version node")? as u64;
    let val_len = u16_at(img, at + 2, "version node")? as u64;
    let end = at + len;
    if len < 6 || end > limit {
        return Err(PeError(format!(
            "version node at {at:#x} has length {len} (limit {limit:#x})"
        )));
    }
    let mut p = at + 6;
    let mut units = Vec::new();
    loop {
        if p + 2 > end {
            return Err(PeError("version node key is not terminated".into()));
        }
        let u = u16_at(img, p, "version key")?;
        p += 2;
        if u == 0 {
            break;
        }
        units.push(u);
    }
    let value = p.div_ceil(4) * 4;
    Ok(Node {
        val_len,
        key: String::from_utf16_lossy(&units),
        value,
        children: 0,
        end,
    })
}

fn wstr(img: &[u8], at: u64, max_units: u64) -> Result<String, PeError> {
    let mut units = Vec::new();
    for k in 0..max_units {
        let u = u16_at(img, at + 2 * k, "version string")?;
        if u == 0 {
            break;
        }
        units.push(u);
    }
    Ok(String::from_utf16_lossy(&units))
}

fn children(img: &[u8], n: &Node) -> Result<Vec<Node>, PeError> {
    let mut out = Vec::new();
    let mut p = n.children;
    while p + 6 <= n.end {
        let c = node(img, p, n.end)?;
        if c.end <= p {
            break;
        }
        p = c.end.div_ceil(4) * 4;
        out.push(c);
        if out.len() > 4096 {
            return Err(PeError("version info: more than 4096 entries".into()));
        }
    }
    Ok(out)
}

/// Decodes the first RT_VERSION resource, if any.
pub fn version_info(pe: &PeFile) -> Result<Option<VersionInfo>, PeError> {
    let Some(r) = walk(pe)?
        .into_iter()
        .find(|r| r.kind == ResId::Id(RT_VERSION))
    else {
        return Ok(None);
    };
    let img = &pe.image;
    let limit = r.data_rva as u64 + r.size as u64;
    let mut root = node(img, r.data_rva as u64, limit)?;
    if root.key != "VS_VERSION_INFO" {
        return Err(PeError(format!("version resource key is {:?}", root.key)));
    }
    let mut vi = VersionInfo::default();
    if root.val_len >= 52 {
        let f = root.value;
        if u32_at(img, f, "VS_FIXEDFILEINFO")? != 0xFEEF_04BD {
            return Err(PeError("VS_FIXEDFILEINFO signature missing".into()));
        }
        let ms = u32_at(img, f + 8, "VS_FIXEDFILEINFO")?;
        let ls = u32_at(img, f + 12, "VS_FIXEDFILEINFO")?;
        vi.file_version = ((ms >> 16) as u16, ms as u16, (ls >> 16) as u16, ls as u16);
        let ms = u32_at(img, f + 16, "VS_FIXEDFILEINFO")?;
        let ls = u32_at(img, f + 20, "VS_FIXEDFILEINFO")?;
        vi.product_version = ((ms >> 16) as u16, ms as u16, (ls >> 16) as u16, ls as u16);
    }
    root.children = (root.value + root.val_len).div_ceil(4) * 4;
    for mut sfi in children(img, &root)? {
        if sfi.key != "StringFileInfo" {
            continue;
        }
        sfi.children = sfi.value;
        for mut table in children(img, &sfi)? {
            table.children = table.value;
            for s in children(img, &table)? {
                // wValueLength counts UTF-16 units for text values.
                let v = if s.val_len == 0 {
                    String::new()
                } else {
                    wstr(img, s.value, s.val_len.min((s.end - s.value) / 2))?
                };
                vi.strings.push((s.key, v));
            }
        }
    }
    Ok(Some(vi))
}

/// One item of a menu template (MF_POPUP items carry their submenu).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MenuItem {
    /// MF_* flags of the template (MF_GRAYED 1, MF_CHECKED 8, MF_POPUP 0x10, ...; MF_END cleared).
    pub flags: u16,
    pub id: u16,
    pub text: Vec<u16>,
    pub popup: Option<Vec<MenuItem>>,
}

fn wstr_at(d: &[u8], o: &mut usize) -> Result<Vec<u16>, PeError> {
    let mut v = Vec::new();
    loop {
        let u = u16_at(d, *o as u64, "resource string")?;
        *o += 2;
        if u == 0 {
            return Ok(v);
        }
        v.push(u);
        if v.len() > 0x10000 {
            return Err(PeError("resource string unterminated".into()));
        }
    }
}

/// Parses a standard (version 0) RT_MENU template.
pub fn menu(d: &[u8]) -> Result<Vec<MenuItem>, PeError> {
    let ver = u16_at(d, 0, "menu header")?;
    let skip = u16_at(d, 2, "menu header")? as usize;
    if ver != 0 {
        return Err(PeError(format!(
            "menu template version {ver} not supported"
        )));
    }
    let mut o = 4 + skip;
    fn level(d: &[u8], o: &mut usize, depth: u32) -> Result<Vec<MenuItem>, PeError> {
        if depth > 16 {
            return Err(PeError("menu nested too deeply".into()));
        }
        let mut items = Vec::new();
        loop {
            let flags = u16_at(d, *o as u64, "menu item")?;
            *o += 2;
            let popup = flags & 0x10 != 0;
            let id = if popup {
                0
            } else {
                let id = u16_at(d, *o as u64, "menu item")?;
                *o += 2;
                id
            };
            let text = wstr_at(d, o)?;
            let sub = if popup {
                Some(level(d, o, depth + 1)?)
            } else {
                None
            };
            items.push(MenuItem {
                flags: flags & !0x80,
                id,
                text,
                popup: sub,
            });
            if flags & 0x80 != 0 || items.len() > 4096 {
                return Ok(items);
            }
        }
    }
    level(d, &mut o, 0)
}

/// One accelerator: FVIRTKEY 1, FNOINVERT 2, FSHIFT 4, FCONTROL 8, FALT 0x10 flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Accel {
    pub flags: u16,
    pub key: u16,
    pub cmd: u16,
}

/// Parses an RT_ACCELERATOR table (8-byte entries, the last flagged 0x80).
pub fn accelerators(d: &[u8]) -> Result<Vec<Accel>, PeError> {
    let mut out = Vec::new();
    for k in 0..d.len() / 8 {
        let o = (8 * k) as u64;
        let flags = u16_at(d, o, "accelerator")?;
        out.push(Accel {
            flags: flags & 0x7F,
            key: u16_at(d, o + 2, "accelerator")?,
            cmd: u16_at(d, o + 4, "accelerator")?,
        });
        if flags & 0x80 != 0 {
            break;
        }
    }
    Ok(out)
}

/// Finds a resource by type and name, in the language [`lang_rank`] prefers.
pub fn find<'a>(list: &'a [Resource], kind: &ResId, name: &ResId) -> Option<&'a Resource> {
    list.iter()
        .filter(|r| same(&r.kind, kind) && same(&r.name, name))
        .min_by_key(|r| lang_rank(r.lang))
}

/// Resource type or name equality as Windows has it: string forms
/// case-insensitive (ASCII).
pub fn same(a: &ResId, b: &ResId) -> bool {
    match (a, b) {
        (ResId::Name(a), ResId::Name(b)) => a.eq_ignore_ascii_case(b),
        (a, b) => a == b,
    }
}
