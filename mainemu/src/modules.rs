//! The module list: the program, the guest DLLs it loads (real PE code run
//! by the CPU), and the system DLLs mainemu provides in Rust.
//!
//! Owns: loading a guest PE DLL (found next to the program or in the current
//! directory, through `vfs`), mapping and relocating it, binding its imports
//! (recursively loading the guest DLLs it needs; system DLL imports bind to
//! thunks), the order DllMain/TLS callbacks must run in, export lookup
//! (`GetProcAddress`, forwarders), reference counts, and the small header
//! page each system DLL gets so `GetModuleHandle("kernel32")` is a real
//! address. It must not run guest code (callers chain the init calls).

use crate::dll::{self, Env, Resolution};
use crate::memory::{mem, prot};
use crate::pe::{load, ExportTarget, ImportName, PeFile};
use crate::thunks::Thunk;

/// Where the system DLLs' header pages go (one 64K slot each).
pub const SYSTEM_BASE: u32 = 0x7E00_0000;

/// What a module is.
#[derive(Clone)]
pub enum Kind {
    /// The program.
    Exe,
    /// A guest PE DLL.
    Dll,
    /// A DLL mainemu implements.
    System(&'static dll::DllDecl),
}

/// One loaded module.
#[derive(Clone)]
pub struct Module {
    /// The file name, as the DLL names itself (lowercase for system DLLs).
    pub name: String,
    /// Its guest path.
    pub path: String,
    pub base: u32,
    pub size: u32,
    /// Entry point (DllMain or the program's start), 0 when none.
    pub entry: u32,
    pub kind: Kind,
    /// LoadLibrary count (static imports count once).
    pub refs: u32,
    /// The parsed file (exports, resources, TLS) for PE modules.
    pub pe: Option<std::rc::Rc<PeFile>>,
    /// DllMain(PROCESS_ATTACH) has been called.
    pub initialized: bool,
}

/// The module list, in load order.
#[derive(Default, Clone)]
pub struct Modules {
    pub list: Vec<Module>,
}

impl Modules {
    /// A module by base address.
    pub fn by_base(&self, base: u32) -> Option<&Module> {
        self.list.iter().find(|m| m.base == base)
    }

    /// A module by name: case-insensitive, with or without `.dll`, through
    /// API set names; a path is matched on its file name.
    pub fn by_name(&self, name: &str) -> Option<&Module> {
        let file = name.rsplit(['\\', '/']).next().unwrap_or(name);
        let want = crate::pe::apiset::canonical(&with_ext(file));
        self.list
            .iter()
            .find(|m| m.name.eq_ignore_ascii_case(&want))
    }

    /// The module containing `addr`.
    pub fn containing(&self, addr: u32) -> Option<&Module> {
        self.list
            .iter()
            .find(|m| addr.wrapping_sub(m.base) < m.size.max(1))
    }
}

/// `name` with `.dll` added when it has no extension.
pub fn with_ext(name: &str) -> String {
    if name.contains('.') {
        name.to_string()
    } else {
        format!("{name}.dll")
    }
}

/// The address a data export's variable lives at (allocated on first use).
pub fn data_export(env: &mut Env, dll_name: &str, v: &dll::DataDecl) -> u32 {
    let key = format!("{dll_name}!{}", v.name);
    if let Some(&a) = env.data.get(&key) {
        return a;
    }
    let a = env
        .mem
        .virtual_alloc(
            0,
            v.size.max(4),
            mem::RESERVE | mem::COMMIT,
            prot::READWRITE,
        )
        .expect("room for a data export");
    env.mem.poke(a, v.init).expect("fresh allocation");
    env.data.insert(key.clone(), a);
    if let Some(f) = v.fill {
        f(env, a);
    }
    // A fill may place the variable elsewhere (msvcrt's vtables live in one
    // block with the RTTI that precedes each of them).
    env.data.get(&key).copied().unwrap_or(a)
}

/// The system DLL module for `decl`, created (with its header page) on first use.
pub fn system_module(env: &mut Env, decl: &'static dll::DllDecl) -> u32 {
    if let Some(m) = env.modules.list.iter().find(|m| m.name == decl.name) {
        return m.base;
    }
    let k = env
        .modules
        .list
        .iter()
        .filter(|m| matches!(m.kind, Kind::System(_)))
        .count() as u32;
    let base = SYSTEM_BASE + 0x1_0000 * k;
    if env
        .mem
        .virtual_alloc(base, 0x1000, mem::RESERVE | mem::COMMIT, prot::READWRITE)
        .is_ok()
    {
        // A minimal PE header: MZ, e_lfanew = 0x40, "PE\0\0", i386, a DLL, PE32.
        let mut h = vec![0u8; 0x200];
        h[0..2].copy_from_slice(b"MZ");
        h[0x3C..0x40].copy_from_slice(&0x40u32.to_le_bytes());
        h[0x40..0x44].copy_from_slice(b"PE\0\0");
        h[0x44..0x46].copy_from_slice(&0x14Cu16.to_le_bytes());
        h[0x54..0x56].copy_from_slice(&0xE0u16.to_le_bytes());
        h[0x56..0x58].copy_from_slice(&0x2102u16.to_le_bytes());
        h[0x58..0x5A].copy_from_slice(&0x10Bu16.to_le_bytes());
        h[0x74..0x78].copy_from_slice(&base.to_le_bytes()); // ImageBase
        h[0x90..0x94].copy_from_slice(&0x1000u32.to_le_bytes()); // SizeOfImage
        env.mem.poke(base, &h);
        env.mem.protect(base, 0x1000, prot::READONLY).ok();
    }
    env.modules.list.push(Module {
        name: decl.name.to_string(),
        path: format!("C:\\windows\\system32\\{}", decl.name),
        base,
        size: 0x1000,
        entry: 0,
        kind: Kind::System(decl),
        refs: 1,
        pe: None,
        initialized: true,
    });
    base
}

/// The address an import of `dll_name` binds to: a thunk or data variable
/// for a system DLL, the export of a loaded guest DLL, or a stub.
pub fn bind_import(env: &mut Env, dll_name: &str, name: &ImportName) -> Result<u32, String> {
    if !dll::is_system_dll(dll_name) {
        if let Some(m) = env.modules.by_name(dll_name).cloned() {
            if let Some(a) = export_address(env, &m, name)? {
                return Ok(a);
            }
        }
        return env.thunks.slot(
            &mut env.mem,
            Thunk::Stub {
                dll: dll_name.to_string(),
                name: name.clone(),
            },
        );
    }
    match dll::resolve(dll_name, name) {
        Resolution::Data(d, v) => Ok(data_export(env, d.name, v)),
        _ => Ok(env
            .thunks
            .for_import(&mut env.mem, dll_name, name)?
            .expect("not data")),
    }
}

/// An export's address in a loaded module (`None` when it has no such export).
/// System DLLs answer for what they implement; forwarders are followed.
pub fn export_address(env: &mut Env, m: &Module, name: &ImportName) -> Result<Option<u32>, String> {
    match &m.kind {
        Kind::System(decl) => match dll::resolve(decl.name, name) {
            Resolution::Implemented(d, e) => {
                env.thunks.slot(&mut env.mem, Thunk::Api(e, d)).map(Some)
            }
            Resolution::Data(d, v) => Ok(Some(data_export(env, d.name, v))),
            Resolution::Missing { .. } => Ok(None),
        },
        _ => {
            let Some(pe) = m.pe.clone() else {
                return Ok(None);
            };
            let Ok((_, exports)) = pe.exports() else {
                return Ok(None);
            };
            let found = exports.iter().find(|e| match name {
                ImportName::Name { name, .. } => e.name.as_deref() == Some(name.as_str()),
                ImportName::Ordinal(o) => e.ordinal == *o,
            });
            match found.map(|e| e.target.clone()) {
                None => Ok(None),
                Some(ExportTarget::Rva(r)) => Ok(Some(m.base.wrapping_add(r))),
                Some(ExportTarget::Forward(f)) => {
                    let Some((dll_part, what)) = f.split_once('.') else {
                        return Ok(None);
                    };
                    let target = match what.strip_prefix('#') {
                        Some(o) => ImportName::Ordinal(o.parse().unwrap_or(0)),
                        None => ImportName::Name {
                            hint: 0,
                            name: what.to_string(),
                        },
                    };
                    let dll_name = with_ext(dll_part);
                    if dll::is_system_dll(&dll_name) {
                        let decl = dll::DLLS
                            .iter()
                            .find(|d| d.name == crate::pe::apiset::canonical(&dll_name))
                            .expect("system");
                        let base = system_module(env, decl);
                        let sm = env.modules.by_base(base).cloned().expect("just made");
                        return export_address(env, &sm, &target);
                    }
                    match env.modules.by_name(&dll_name).cloned() {
                        Some(fm) if fm.base != m.base => export_address(env, &fm, &target),
                        _ => Ok(None),
                    }
                }
            }
        }
    }
}

/// Finds a guest DLL's file: next to the program, then in the current
/// directory. Returns (host path, guest path).
fn find_dll(env: &Env, name: &str) -> Option<(std::path::PathBuf, String)> {
    let name = with_ext(name);
    if name.contains(['\\', '/']) {
        let host = env.drives.resolve(&name).ok()?;
        return host
            .is_file()
            .then(|| (host, env.drives.full_path(&name).unwrap_or(name.clone())));
    }
    let exe_dir = env
        .exe_path
        .rsplit_once('\\')
        .map(|(d, _)| d.to_string())
        .unwrap_or_default();
    for dir in [exe_dir, env.drives.cwd()] {
        let guest = format!("{}\\{}", dir.trim_end_matches('\\'), name);
        if let Ok(host) = env.drives.resolve(&guest) {
            if host.is_file() {
                return Some((host, guest));
            }
        }
    }
    None
}

/// Loads a guest PE DLL and what it imports (system DLLs bind to thunks,
/// guest ones load recursively). Returns its base and, dependencies first,
/// the modules whose DllMain must now run. `Ok(None)` when the file is not
/// found.
pub fn load_dll(env: &mut Env, name: &str) -> Result<Option<(u32, Vec<u32>)>, String> {
    if let Some(m) = env.modules.by_name(name) {
        let base = m.base;
        return Ok(Some((base, Vec::new())));
    }
    if dll::is_system_dll(&with_ext(name)) {
        let c = crate::pe::apiset::canonical(&with_ext(name));
        let decl = dll::DLLS.iter().find(|d| d.name == c).expect("system");
        return Ok(Some((system_module(env, decl), Vec::new())));
    }
    let Some((host, guest)) = find_dll(env, name) else {
        return Ok(None);
    };
    let bytes = std::fs::read(&host).map_err(|e| format!("{guest}: {e}"))?;
    let mut pe = PeFile::parse(&bytes).map_err(|e| format!("{guest}: {e}"))?;
    let mapped = load::map(&mut env.mem, &mut pe).map_err(|e| format!("{guest}: {e}"))?;
    let file_name = guest.rsplit('\\').next().unwrap_or(&guest).to_string();
    let pe = std::rc::Rc::new(pe);
    env.modules.list.push(Module {
        name: file_name,
        path: guest.clone(),
        base: mapped.base,
        size: pe.size_of_image,
        entry: if pe.entry_rva != 0 {
            mapped.base + pe.entry_rva
        } else {
            0
        },
        kind: Kind::Dll,
        refs: 1,
        pe: Some(pe.clone()),
        initialized: false,
    });
    let inits = bind_imports(env, &pe, mapped.base)?;
    let mut order = inits;
    order.push(mapped.base);
    Ok(Some((mapped.base, order)))
}

/// Binds every import (and delay import) of an image mapped at `base`;
/// returns the guest DLLs loaded on the way (dependencies first).
pub fn bind_imports(env: &mut Env, pe: &PeFile, base: u32) -> Result<Vec<u32>, String> {
    let mut dlls = pe.imports().map_err(|e| e.to_string())?;
    // Delay-loaded imports are bound now, like normal ones: deterministic,
    // and the program's delay helper is never reached.
    dlls.extend(pe.delay_imports().map_err(|e| e.to_string())?);
    let mut inits = Vec::new();
    for d in &dlls {
        if dll::is_system_dll(&d.dll) {
            let c = crate::pe::apiset::canonical(&d.dll);
            if let Some(decl) = dll::DLLS.iter().find(|x| x.name == c) {
                system_module(env, decl);
            }
        } else if env.modules.by_name(&d.dll).is_none() {
            if let Some((_, more)) = load_dll(env, &d.dll)? {
                inits.extend(more);
            }
        }
        for i in &d.imports {
            let a = bind_import(env, &d.dll, &i.name)?;
            env.mem
                .poke_u32(base + i.iat_rva, a)
                .ok_or("IAT slot not mapped")?;
        }
        if let Some(h) = d.delay_handle_rva {
            if let Some(m) = env.modules.by_name(&d.dll) {
                let mb = m.base;
                env.mem.poke_u32(base + h, mb);
            }
        }
    }
    Ok(inits)
}
