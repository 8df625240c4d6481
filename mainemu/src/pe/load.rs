//! Placing a parsed PE image in the guest address space: reservation at the
//! preferred base (or elsewhere with base relocations applied), section
//! protections, and filling import address tables through a resolver.
//!
//! Owns the image's memory layout. It must not decide what an import resolves
//! to (the caller's resolver does), run entry points or TLS callbacks, or
//! parse bytes itself (everything comes from [`super::parse::PeFile`]).

use super::parse::{
    ImportDll, ImportName, PeError, PeFile, SCN_MEM_EXECUTE, SCN_MEM_READ, SCN_MEM_WRITE,
};
use crate::memory::{mem, prot, Memory};

/// Where an image landed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapped {
    pub base: u32,
    /// The preferred base was taken and the image was moved.
    pub relocated: bool,
    /// How many fixups were applied (0 when not moved).
    pub fixups: usize,
}

/// The `PAGE_*` protection for a section's characteristics.
pub fn section_protect(ch: u32) -> u32 {
    match (
        ch & SCN_MEM_EXECUTE != 0,
        ch & SCN_MEM_READ != 0,
        ch & SCN_MEM_WRITE != 0,
    ) {
        (true, _, true) => prot::EXECUTE_READWRITE,
        (true, true, false) => prot::EXECUTE_READ,
        (true, false, false) => prot::EXECUTE,
        (false, _, true) => prot::READWRITE,
        (false, true, false) => prot::READONLY,
        (false, false, false) => prot::NOACCESS,
    }
}

/// Maps `pe` into `mem`: at its preferred base if free, else at the lowest
/// free range with relocations applied (refused when the file has none).
/// On success `pe.image_base` is where it landed.
pub fn map(memory: &mut Memory, pe: &mut PeFile) -> Result<Mapped, PeError> {
    let size = pe.size_of_image;
    let mut mapped = Mapped {
        base: pe.image_base,
        relocated: false,
        fixups: 0,
    };
    if memory
        .reserve(
            Some(pe.image_base),
            size,
            prot::EXECUTE_WRITECOPY,
            mem::IMAGE,
        )
        .is_err()
    {
        if pe.characteristics & super::parse::FILE_RELOCS_STRIPPED != 0 {
            return Err(PeError(format!(
                "preferred base {:#x} is taken and the image has no relocations",
                pe.image_base
            )));
        }
        let base = memory
            .reserve(None, size, prot::EXECUTE_WRITECOPY, mem::IMAGE)
            .map_err(|e| PeError(format!("no room for a {size:#x}-byte image: {e}")))?;
        mapped.fixups = match pe.relocate(base) {
            Ok(n) => n,
            Err(e) => {
                memory.release(base, 0).ok();
                return Err(e);
            }
        };
        mapped.base = base;
        mapped.relocated = true;
    }
    let base = mapped.base;
    memory
        .commit(base, size, prot::READWRITE)
        .map_err(|e| PeError(format!("committing the image failed: {e}")))?;
    memory.poke(base, &pe.image).expect("committed above");
    // Headers read-only, each section as its characteristics say.
    let hdr = pe.size_of_headers.clamp(1, size);
    memory
        .protect(base, hdr, prot::READONLY)
        .expect("committed");
    for s in &pe.sections {
        let vsize = if s.virtual_size == 0 {
            s.raw_size
        } else {
            s.virtual_size
        };
        if vsize == 0 {
            continue;
        }
        memory
            .protect(
                base + s.virtual_address,
                vsize,
                section_protect(s.characteristics),
            )
            .expect("section inside the image (checked by parse)");
    }
    Ok(mapped)
}

/// Fills the IAT slots of `dlls` (imports of the image mapped at `base`) with
/// what `resolve(dll, import)` answers. The resolver never fails: an import
/// it cannot satisfy gets the address of a stub that reports it when called.
pub fn bind(
    memory: &mut Memory,
    base: u32,
    dlls: &[ImportDll],
    resolve: &mut dyn FnMut(&str, &ImportName) -> u32,
) {
    for d in dlls {
        for i in &d.imports {
            let addr = resolve(&d.dll, &i.name);
            memory
                .poke_u32(base + i.iat_rva, addr)
                .expect("IAT slot inside the mapped image (checked by parse)");
        }
    }
}
