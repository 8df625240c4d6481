//! Program loaders: recognise an executable's format and turn its bytes into a
//! load image (bytes, relocations, entry point, memory needs).
//!
//! This module owns file-format knowledge only. It must not touch guest memory,
//! MCBs or PSPs: placing an image in memory is `dos::exec`'s job. Every input is
//! untrusted; malformed headers give a [`LoadError`], never a panic.

pub mod com;
pub mod mz;

use std::fmt;

/// What kind of executable a file is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Format {
    /// A flat `.COM` image loaded at PSP:0100h.
    Com,
    /// A real-mode MZ executable.
    Mz,
    /// An MZ stub in front of a bound OS/2 family-API (FAPI) NE program: DOS
    /// runs the stub, which is the real-mode program.
    MzNeFamily,
    /// An MZ program that brings up a protected-mode image appended to it:
    /// a DJGPP go32 stub in front of its COFF image (it asks a DPMI host
    /// such as CWSDPMI for protected mode), a DOS/4G stub in front of an LE
    /// image (it runs DOS4GW.EXE). DOS runs the stub, which is real mode;
    /// the string names the image ("COFF (DJGPP)", "LE (DOS/4G)").
    MzStub(String),
    /// An MZ stub in front of an image for another system (Win32 PE, OS/2
    /// LX, Windows or OS/2 NE). The string names it.
    Foreign(String),
}

impl Format {
    /// True when DOS runs the file (in real mode, whatever it does next).
    pub fn is_real_mode(&self) -> bool {
        !matches!(self, Format::Foreign(_))
    }
}

/// Why a program cannot be loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoadError {
    /// The file is shorter than its header says.
    Truncated(String),
    /// A header field makes no sense.
    BadHeader(String),
    /// The image does not fit in conventional memory.
    TooBig(String),
    /// The program needs something this machine does not model.
    Unsupported(String),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Truncated(s) => write!(f, "truncated executable: {s}"),
            LoadError::BadHeader(s) => write!(f, "bad executable header: {s}"),
            LoadError::TooBig(s) => write!(f, "program too big: {s}"),
            LoadError::Unsupported(s) => write!(f, "unsupported program: {s}"),
        }
    }
}

impl std::error::Error for LoadError {}

/// A program ready to be placed in memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Image {
    Com(com::ComImage),
    Exe(mz::ExeImage),
}

impl Image {
    /// Paragraphs the image itself occupies (without PSP or extra allocation).
    pub fn image_paragraphs(&self) -> u32 {
        match self {
            Image::Com(c) => (c.bytes.len() as u32).div_ceil(16),
            Image::Exe(e) => e.module_paragraphs(),
        }
    }
}

/// True when the bytes start like an MZ executable (DOS accepts both orders).
pub fn has_mz_signature(bytes: &[u8]) -> bool {
    bytes.len() >= 2 && (&bytes[..2] == b"MZ" || &bytes[..2] == b"ZM")
}

/// Recognises the format of an executable. `.COM` vs `.EXE` is decided by the
/// signature, as DOS does, not by the file name.
pub fn detect(bytes: &[u8]) -> Format {
    if !has_mz_signature(bytes) {
        return Format::Com;
    }
    mz::detect_extended(bytes).unwrap_or(Format::Mz)
}

/// Parses a program into a load image, or explains why it cannot run.
pub fn parse(bytes: &[u8]) -> Result<Image, LoadError> {
    match detect(bytes) {
        Format::Com => com::parse(bytes).map(Image::Com),
        Format::Mz | Format::MzNeFamily | Format::MzStub(_) => mz::parse(bytes).map(Image::Exe),
        Format::Foreign(what) => Err(LoadError::Unsupported(format!(
            "{what} executable: a program for another system, not DOS (Win32 PE programs are mainemu's)"
        ))),
    }
}
