//! The `.COM` format: a flat image loaded at PSP:0100h.
//!
//! Owns only the size rules of a COM image. Placing it (PSP, stack, registers)
//! is `dos::exec`'s job.

use super::LoadError;

/// Largest COM image: a 64 KiB segment minus the PSP and a two-byte stack.
pub const MAX_COM: usize = 0x10000 - 0x100 - 2;

/// A COM program's bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComImage {
    pub bytes: Vec<u8>,
}

/// Checks a COM image's size.
pub fn parse(bytes: &[u8]) -> Result<ComImage, LoadError> {
    if bytes.len() > MAX_COM {
        return Err(LoadError::TooBig(format!(
            "COM image of {} bytes exceeds {} bytes",
            bytes.len(),
            MAX_COM
        )));
    }
    Ok(ComImage {
        bytes: bytes.to_vec(),
    })
}
