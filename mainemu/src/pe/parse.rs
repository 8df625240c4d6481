//! PE32 i386 parsing: headers, sections, the laid-out image, and the data
//! directories read from it (imports, delay-load imports, exports with
//! forwarders, base relocations, TLS).
//!
//! Owns: every read of PE bytes, each bounds-checked, so hostile or truncated
//! input gives a [`PeError`] naming what was out of range, never a panic.
//! The image is laid out once into a host vector (headers and sections at
//! their RVAs) and every directory is read from that vector by RVA.
//! It must not: touch guest memory (that is `pe::load`), resolve imports to
//! addresses (the DLL layer does) or know which DLLs exist.

/// A PE file could not be used, in words (what, where, why).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeError(pub String);

impl std::fmt::Display for PeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for PeError {}

macro_rules! bail {
    ($($t:tt)*) => { return Err(PeError(format!($($t)*))) };
}

/// Images larger than this are refused (a hostile SizeOfImage would otherwise
/// make us allocate gigabytes before reading a byte).
pub const MAX_IMAGE: u32 = 256 << 20;

/// Bounds-checked little-endian reads over a byte slice.
pub(crate) fn rd<const N: usize>(b: &[u8], off: u64, what: &str) -> Result<[u8; N], PeError> {
    let end = off.checked_add(N as u64);
    match end.and_then(|e| b.get(off as usize..e as usize)) {
        Some(s) if off <= usize::MAX as u64 => Ok(s.try_into().expect("length checked")),
        _ => bail!(
            "truncated: {what} at offset {off:#x} (+{N}) is beyond the end ({:#x} bytes)",
            b.len()
        ),
    }
}
pub(crate) fn u16_at(b: &[u8], off: u64, what: &str) -> Result<u16, PeError> {
    rd::<2>(b, off, what).map(u16::from_le_bytes)
}
pub(crate) fn u32_at(b: &[u8], off: u64, what: &str) -> Result<u32, PeError> {
    rd::<4>(b, off, what).map(u32::from_le_bytes)
}
/// A NUL-terminated ASCII string (at most 4096 bytes).
pub(crate) fn cstr_at(b: &[u8], off: u64, what: &str) -> Result<String, PeError> {
    let Some(rest) = b.get(off as usize..).filter(|_| off <= b.len() as u64) else {
        bail!(
            "{what}: offset {off:#x} is beyond the end ({:#x} bytes)",
            b.len()
        );
    };
    let n = rest.iter().take(4096).position(|&c| c == 0);
    match n {
        Some(n) => Ok(String::from_utf8_lossy(&rest[..n]).into_owned()),
        None => bail!("{what}: string at {off:#x} has no terminating NUL within 4096 bytes"),
    }
}

/// Data directory indices.
pub mod dir {
    pub const EXPORT: usize = 0;
    pub const IMPORT: usize = 1;
    pub const RESOURCE: usize = 2;
    pub const BASERELOC: usize = 5;
    pub const TLS: usize = 9;
    pub const IAT: usize = 12;
    pub const DELAY_IMPORT: usize = 13;
}

/// File characteristics bits.
pub const FILE_RELOCS_STRIPPED: u16 = 0x0001;
pub const FILE_DLL: u16 = 0x2000;

/// Section characteristics bits.
pub const SCN_MEM_EXECUTE: u32 = 0x2000_0000;
pub const SCN_MEM_READ: u32 = 0x4000_0000;
pub const SCN_MEM_WRITE: u32 = 0x8000_0000;

/// One section header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    pub virtual_address: u32,
    pub virtual_size: u32,
    pub raw_offset: u32,
    pub raw_size: u32,
    pub characteristics: u32,
}

/// A parsed PE32 i386 file, laid out as an image.
#[derive(Clone, Debug)]
pub struct PeFile {
    pub characteristics: u16,
    pub timestamp: u32,
    pub image_base: u32,
    pub entry_rva: u32,
    pub section_alignment: u32,
    pub file_alignment: u32,
    pub size_of_image: u32,
    pub size_of_headers: u32,
    pub subsystem: u16,
    pub dll_characteristics: u16,
    pub stack_reserve: u32,
    pub stack_commit: u32,
    pub heap_reserve: u32,
    pub heap_commit: u32,
    /// (RVA, size) of each data directory present (missing ones are (0, 0)).
    pub dirs: [(u32, u32); 16],
    pub sections: Vec<Section>,
    /// The image as the loader maps it: `size_of_image` bytes, headers and
    /// section data at their RVAs, the rest zero.
    pub image: Vec<u8>,
}

/// How an import names its target.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ImportName {
    Name { hint: u16, name: String },
    Ordinal(u16),
}

impl std::fmt::Display for ImportName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ImportName::Name { name, .. } => f.write_str(name),
            ImportName::Ordinal(n) => write!(f, "#{n}"),
        }
    }
}

/// One imported function and the IAT slot the loader fills.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Import {
    pub name: ImportName,
    /// RVA of the IAT slot (a dword) that receives the address.
    pub iat_rva: u32,
}

/// The imports from one DLL (normal or delay-loaded).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportDll {
    pub dll: String,
    pub imports: Vec<Import>,
    /// Delay-load descriptor fields (RVA of the module handle slot), if delay-loaded.
    pub delay_handle_rva: Option<u32>,
}

/// What an export points at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExportTarget {
    Rva(u32),
    /// `"DLL.Function"` or `"DLL.#ordinal"`.
    Forward(String),
}

/// One export.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Export {
    pub ordinal: u16,
    pub name: Option<String>,
    pub target: ExportTarget,
}

/// The TLS directory, as virtual addresses of the preferred base.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tls {
    pub start_va: u32,
    pub end_va: u32,
    pub index_va: u32,
    pub callbacks_va: u32,
    pub zero_fill: u32,
    /// Callback addresses read from the (NULL-terminated) array.
    pub callbacks: Vec<u32>,
}

fn align_up(v: u64, a: u64) -> u64 {
    if a <= 1 {
        v
    } else {
        v.div_ceil(a) * a
    }
}

impl PeFile {
    /// Parses and lays out a PE32 i386 file.
    pub fn parse(data: &[u8]) -> Result<PeFile, PeError> {
        if u16_at(data, 0, "DOS header")? != 0x5A4D {
            bail!("not a PE file: no MZ signature");
        }
        let pe = u32_at(data, 0x3C, "e_lfanew")? as u64;
        if rd::<4>(data, pe, "PE signature")? != *b"PE\0\0" {
            bail!("not a PE file: no PE signature at {pe:#x} (a DOS program?)");
        }
        let coff = pe + 4;
        let machine = u16_at(data, coff, "COFF machine")?;
        if machine != 0x14C {
            bail!("not an i386 image: machine {machine:#06x}");
        }
        let nsec = u16_at(data, coff + 2, "section count")?;
        let timestamp = u32_at(data, coff + 4, "timestamp")?;
        let opt_size = u16_at(data, coff + 16, "optional header size")? as u64;
        let characteristics = u16_at(data, coff + 18, "characteristics")?;
        let opt = coff + 20;
        let magic = u16_at(data, opt, "optional header magic")?;
        if magic != 0x10B {
            bail!("not a PE32 image: optional header magic {magic:#06x} (PE32+ is 64-bit)");
        }
        if opt_size < 96 {
            bail!("optional header too small: {opt_size} bytes");
        }
        let f = |o: u64, w: &str| u32_at(data, opt + o, w);
        let entry_rva = f(16, "AddressOfEntryPoint")?;
        let image_base = f(28, "ImageBase")?;
        let section_alignment = f(32, "SectionAlignment")?;
        let file_alignment = f(36, "FileAlignment")?;
        let size_of_image = f(56, "SizeOfImage")?;
        let size_of_headers = f(60, "SizeOfHeaders")?;
        let subsystem = u16_at(data, opt + 68, "Subsystem")?;
        let dll_characteristics = u16_at(data, opt + 70, "DllCharacteristics")?;
        let stack_reserve = f(72, "SizeOfStackReserve")?;
        let stack_commit = f(76, "SizeOfStackCommit")?;
        let heap_reserve = f(80, "SizeOfHeapReserve")?;
        let heap_commit = f(84, "SizeOfHeapCommit")?;
        let ndirs = f(92, "NumberOfRvaAndSizes")?.min(16) as u64;
        if 96 + 8 * ndirs > opt_size {
            bail!("optional header ({opt_size} bytes) too small for {ndirs} data directories");
        }
        let mut dirs = [(0, 0); 16];
        for (i, d) in dirs.iter_mut().enumerate().take(ndirs as usize) {
            *d = (
                f(96 + 8 * i as u64, "data directory")?,
                f(100 + 8 * i as u64, "data directory")?,
            );
        }
        if image_base % 0x1_0000 != 0 {
            bail!("ImageBase {image_base:#x} is not 64K-aligned");
        }
        if section_alignment == 0 || !section_alignment.is_power_of_two() {
            bail!("SectionAlignment {section_alignment:#x} is not a power of two");
        }
        if size_of_image == 0 || size_of_image > MAX_IMAGE {
            bail!("SizeOfImage {size_of_image:#x} is out of range (1..={MAX_IMAGE:#x})");
        }
        if image_base as u64 + size_of_image as u64 > 1 << 32 {
            bail!("image {image_base:#x}+{size_of_image:#x} does not fit below 4 GiB");
        }
        let sec_table = opt + opt_size;
        let mut sections = Vec::with_capacity(nsec as usize);
        for i in 0..nsec as u64 {
            let s = sec_table + 40 * i;
            let name = rd::<8>(data, s, "section header")?;
            let end = name.iter().position(|&c| c == 0).unwrap_or(8);
            sections.push(Section {
                name: String::from_utf8_lossy(&name[..end]).into_owned(),
                virtual_size: u32_at(data, s + 8, "section header")?,
                virtual_address: u32_at(data, s + 12, "section header")?,
                raw_size: u32_at(data, s + 16, "section header")?,
                raw_offset: u32_at(data, s + 20, "section header")?,
                characteristics: u32_at(data, s + 36, "section header")?,
            });
        }
        // Lay out the image.
        let mut image = vec![0u8; size_of_image as usize];
        let hdr = (size_of_headers as usize).min(data.len()).min(image.len());
        image[..hdr].copy_from_slice(&data[..hdr]);
        for s in &sections {
            let vsize = if s.virtual_size == 0 {
                s.raw_size
            } else {
                s.virtual_size
            };
            let span = align_up(vsize as u64, section_alignment as u64);
            if s.virtual_address as u64 + span > size_of_image as u64 {
                bail!(
                    "section {:?} at RVA {:#x}+{:#x} extends past SizeOfImage {:#x}",
                    s.name,
                    s.virtual_address,
                    span,
                    size_of_image
                );
            }
            let n = (s.raw_size as u64).min(span);
            if n == 0 {
                continue;
            }
            // The loader reads raw data from the file-alignment-rounded offset.
            let off = if file_alignment >= 0x200 {
                s.raw_offset as u64 & !0x1FF
            } else {
                s.raw_offset as u64
            };
            let avail = (data.len() as u64).saturating_sub(off);
            if n > avail {
                bail!(
                    "truncated: section {:?} raw data {:#x}+{:#x} is beyond the end of the file ({:#x} bytes)",
                    s.name,
                    off,
                    n,
                    data.len()
                );
            }
            let va = s.virtual_address as usize;
            image[va..va + n as usize].copy_from_slice(&data[off as usize..(off + n) as usize]);
        }
        if entry_rva >= size_of_image {
            bail!("entry point RVA {entry_rva:#x} is outside the image ({size_of_image:#x})");
        }
        Ok(PeFile {
            characteristics,
            timestamp,
            image_base,
            entry_rva,
            section_alignment,
            file_alignment,
            size_of_image,
            size_of_headers,
            subsystem,
            dll_characteristics,
            stack_reserve,
            stack_commit,
            heap_reserve,
            heap_commit,
            dirs,
            sections,
            image,
        })
    }

    /// Whether the file is a DLL.
    pub fn is_dll(&self) -> bool {
        self.characteristics & FILE_DLL != 0
    }

    fn dir(&self, i: usize) -> Option<(u32, u32)> {
        let d = self.dirs[i];
        (d.0 != 0 && d.1 != 0).then_some(d)
    }

    /// The import thunk list at `ilt` (names) whose slots are at `iat`.
    fn thunks(&self, ilt: u32, iat: u32, what: &str) -> Result<Vec<Import>, PeError> {
        let img = &self.image;
        let mut out = Vec::new();
        for k in 0u64.. {
            if k > 65536 {
                bail!("{what}: more than 65536 imports (no terminating entry)");
            }
            let t = u32_at(img, ilt as u64 + 4 * k, what)?;
            if t == 0 {
                break;
            }
            let name = if t & 0x8000_0000 != 0 {
                ImportName::Ordinal(t as u16)
            } else {
                ImportName::Name {
                    hint: u16_at(img, t as u64, "import hint")?,
                    name: cstr_at(img, t as u64 + 2, "import name")?,
                }
            };
            let iat_rva = (iat as u64 + 4 * k) as u32;
            u32_at(img, iat_rva as u64, "IAT slot")?;
            out.push(Import { name, iat_rva });
        }
        Ok(out)
    }

    /// The import directory: one entry per DLL, in file order.
    pub fn imports(&self) -> Result<Vec<ImportDll>, PeError> {
        let Some((rva, _)) = self.dir(dir::IMPORT) else {
            return Ok(Vec::new());
        };
        let img = &self.image;
        let mut out = Vec::new();
        for i in 0u64.. {
            if i > 4096 {
                bail!("import directory: more than 4096 descriptors");
            }
            let d = rva as u64 + 20 * i;
            let ilt = u32_at(img, d, "import descriptor")?;
            let name = u32_at(img, d + 12, "import descriptor")?;
            let iat = u32_at(img, d + 16, "import descriptor")?;
            if ilt == 0 && name == 0 && iat == 0 {
                break;
            }
            let dll = cstr_at(img, name as u64, "import DLL name")?;
            // Old binders leave the name table out: the IAT then holds the names.
            let imports = self.thunks(if ilt != 0 { ilt } else { iat }, iat, "import thunks")?;
            out.push(ImportDll {
                dll,
                imports,
                delay_handle_rva: None,
            });
        }
        Ok(out)
    }

    /// The delay-load import directory (version 1 descriptors hold RVAs; old
    /// version 0 ones hold VAs of the preferred base).
    pub fn delay_imports(&self) -> Result<Vec<ImportDll>, PeError> {
        let Some((rva, _)) = self.dir(dir::DELAY_IMPORT) else {
            return Ok(Vec::new());
        };
        let img = &self.image;
        let mut out = Vec::new();
        for i in 0u64.. {
            if i > 4096 {
                bail!("delay-import directory: more than 4096 descriptors");
            }
            let d = rva as u64 + 32 * i;
            let attrs = u32_at(img, d, "delay descriptor")?;
            let name = u32_at(img, d + 4, "delay descriptor")?;
            let hmod = u32_at(img, d + 8, "delay descriptor")?;
            let iat = u32_at(img, d + 12, "delay descriptor")?;
            let int = u32_at(img, d + 16, "delay descriptor")?;
            if name == 0 {
                break;
            }
            let fix = |v: u32| {
                if attrs & 1 != 0 {
                    v
                } else {
                    v.wrapping_sub(self.image_base)
                }
            };
            let dll = cstr_at(img, fix(name) as u64, "delay DLL name")?;
            let imports = self.thunks(fix(int), fix(iat), "delay thunks")?;
            out.push(ImportDll {
                dll,
                imports,
                delay_handle_rva: Some(fix(hmod)),
            });
        }
        Ok(out)
    }

    /// The export directory: the DLL's own name and its exports by ordinal.
    pub fn exports(&self) -> Result<(String, Vec<Export>), PeError> {
        let Some((rva, size)) = self.dir(dir::EXPORT) else {
            return Ok((String::new(), Vec::new()));
        };
        let img = &self.image;
        let d = rva as u64;
        let name = cstr_at(
            img,
            u32_at(img, d + 12, "export directory")? as u64,
            "export name",
        )?;
        let base = u32_at(img, d + 16, "export directory")?;
        let nfun = u32_at(img, d + 20, "export directory")?;
        let nnames = u32_at(img, d + 24, "export directory")?;
        let funs = u32_at(img, d + 28, "export directory")? as u64;
        let names = u32_at(img, d + 32, "export directory")? as u64;
        let ords = u32_at(img, d + 36, "export directory")? as u64;
        if nfun > 65536 || nnames > 65536 {
            bail!("export directory: {nfun} functions, {nnames} names (more than 65536)");
        }
        let mut by_index: Vec<Option<String>> = vec![None; nfun as usize];
        for k in 0..nnames as u64 {
            let n = u32_at(img, names + 4 * k, "export name table")?;
            let idx = u16_at(img, ords + 2 * k, "export ordinal table")? as usize;
            let s = cstr_at(img, n as u64, "export name")?;
            match by_index.get_mut(idx) {
                Some(slot) => *slot = Some(s),
                None => bail!("export {s:?} names function index {idx} of {nfun}"),
            }
        }
        let mut out = Vec::new();
        for (k, name) in by_index.into_iter().enumerate() {
            let t = u32_at(img, funs + 4 * k as u64, "export address table")?;
            if t == 0 {
                continue;
            }
            let target = if t >= rva && (t as u64) < rva as u64 + size as u64 {
                ExportTarget::Forward(cstr_at(img, t as u64, "export forwarder")?)
            } else {
                ExportTarget::Rva(t)
            };
            out.push(Export {
                ordinal: (base as u64 + k as u64) as u16,
                name,
                target,
            });
        }
        Ok((name, out))
    }

    /// The base relocations that apply on i386: RVAs of HIGHLOW (dword)
    /// fixups. ABSOLUTE padding entries are skipped; other types are refused.
    pub fn relocations(&self) -> Result<Vec<u32>, PeError> {
        let Some((rva, size)) = self.dir(dir::BASERELOC) else {
            return Ok(Vec::new());
        };
        let img = &self.image;
        let mut out = Vec::new();
        let mut b = rva as u64;
        let end = rva as u64 + size as u64;
        while b + 8 <= end {
            let page = u32_at(img, b, "relocation block")?;
            let bsize = u32_at(img, b + 4, "relocation block")? as u64;
            if bsize < 8 || b + bsize > end {
                bail!("relocation block at RVA {b:#x} has size {bsize:#x} (directory ends at {end:#x})");
            }
            for e in (b + 8..b + bsize).step_by(2) {
                let v = u16_at(img, e, "relocation entry")?;
                match v >> 12 {
                    0 => {}
                    3 => out.push(page.wrapping_add((v & 0xFFF) as u32)),
                    t => bail!("relocation type {t} at RVA {e:#x} is not an i386 fixup"),
                }
            }
            b += bsize;
        }
        Ok(out)
    }

    /// Moves the image from `image_base` to `new_base`: adds the delta to every
    /// HIGHLOW fixup in the laid-out image.
    pub fn relocate(&mut self, new_base: u32) -> Result<usize, PeError> {
        let relocs = self.relocations()?;
        let delta = new_base.wrapping_sub(self.image_base);
        for &r in &relocs {
            let v = u32_at(&self.image, r as u64, "relocation target")?;
            self.image[r as usize..r as usize + 4]
                .copy_from_slice(&v.wrapping_add(delta).to_le_bytes());
        }
        self.image_base = new_base;
        Ok(relocs.len())
    }

    /// The TLS directory, if any.
    pub fn tls(&self) -> Result<Option<Tls>, PeError> {
        let Some((rva, _)) = self.dir(dir::TLS) else {
            return Ok(None);
        };
        let img = &self.image;
        let d = rva as u64;
        let va = |o: u64| u32_at(img, d + o, "TLS directory");
        let mut tls = Tls {
            start_va: va(0)?,
            end_va: va(4)?,
            index_va: va(8)?,
            callbacks_va: va(12)?,
            zero_fill: va(16)?,
            callbacks: Vec::new(),
        };
        if tls.end_va < tls.start_va || tls.end_va - tls.start_va > MAX_IMAGE {
            bail!(
                "TLS template {:#x}..{:#x} is not a valid range",
                tls.start_va,
                tls.end_va
            );
        }
        if tls.callbacks_va != 0 {
            let base = tls.callbacks_va.wrapping_sub(self.image_base) as u64;
            for k in 0..1024u64 {
                let cb = u32_at(img, base + 4 * k, "TLS callback array")?;
                if cb == 0 {
                    break;
                }
                tls.callbacks.push(cb);
            }
        }
        Ok(Some(tls))
    }
}
