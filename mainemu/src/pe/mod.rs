//! The PE32 i386 loader: parsing ([`parse`]), resources ([`resources`]),
//! API set names ([`apiset`]) and mapping into the guest address space
//! ([`load`]).
//!
//! Owns the file format and its placement in memory. It must not decide what
//! an import resolves to (the DLL layer answers through a callback) nor run
//! guest code (entry points and TLS callbacks are reported, the process runs them).

pub mod apiset;
pub mod load;
pub mod parse;
pub mod resources;

pub use parse::{
    Export, ExportTarget, Import, ImportDll, ImportName, PeError, PeFile, Section, Tls,
};
