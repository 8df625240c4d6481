//! `mainemu`: the main engine, a 32-bit Windows user-mode emulator.
//!
//! Will own: the 32-bit flat CPU and its threaded tier, the page-granular code
//! cache with a code-page bitmap, the PE loader, the Win32 API subset, the µop
//! tier ported through `shared-ir`, and the `mainemu` CLI. Designs reach it only
//! after they pass their gates on toyvm. Nothing is implemented yet.
