//! The Win32 API as the guest sees it: one module per system DLL, each export
//! declared once with [`dll!`] (name, optional ordinal, calling convention,
//! argument list, body). The macro generates the marshalling wrapper (dword
//! arguments off the guest stack into typed Rust values, the return value
//! into EAX or EDX:EAX) and the DLL's export table; [`resolve`] looks an
//! import up in those tables after API set redirection.
//!
//! An import no table declares resolves to [`Resolution::Missing`]: the
//! process gives it a stub that stops the run with
//! `unimplemented KERNEL32!Foo (ordinal N) called from 0x...`, never address
//! 0 and never a panic.
//!
//! Owns: the declaration machinery, [`Env`] (the state API bodies work on)
//! and the lookup. It must not: execute guest instructions, parse PE files,
//! or read host time or randomness (time is the guest clock, invariant 7).

use crate::memory::Memory;

/// Declares the exports of one DLL. Each entry:
/// `stdcall fn Name @ordinal? (env, arg: Type, ...) -> Ret? { body }`, after
/// the data exports `@data name [size] = [initial bytes];`.
/// `env` is the [`Env`]; argument types implement [`FromArg`]; the return
/// type implements [`IntoRet`].
#[macro_export]
macro_rules! dll {
    ($dll:literal; $( @also $also:path; )* $( @data $dname:ident [$dsize:literal] = $dinit:expr; )* $( $conv:ident fn $name:ident $(@ $ord:literal)? ( $env:ident $(, $arg:ident : $ty:ty)* $(,)? ) $(-> $ret:ty)? $body:block )* ) => {
        $(
            #[allow(non_snake_case, unused_variables, unused_mut, clippy::unused_unit)]
            pub fn $name($env: &mut $crate::dll::Env, args: &[u32]) -> $crate::dll::Ret {
                #[allow(clippy::too_many_arguments)]
                fn body($env: &mut $crate::dll::Env $(, $arg: $ty)*) $(-> $ret)? $body
                let mut _i = 0usize;
                $( let $arg: $ty = $crate::dll::FromArg::from_arg(args.get({ _i += 1; _i - 1 }).copied().unwrap_or(0)); )*
                $crate::dll::IntoRet::into_ret(body($env $(, $arg)*))
            }
        )*
        /// This DLL's export table, generated from the declarations above.
        pub static DLL: $crate::dll::DllDecl = $crate::dll::DllDecl {
            name: $dll,
            also: &[ $( &$also ),* ],
            data: &[ $( $crate::dll::DataDecl { name: stringify!($dname), size: $dsize, init: &$dinit } ),* ],
            exports: &[ $( $crate::dll::ExportDecl {
                name: stringify!($name),
                ordinal: $crate::dll!(@ord $($ord)?),
                conv: $crate::dll::Conv::$conv,
                args: &[ $( stringify!($arg) ),* ],
                imp: $name,
            } ),* ],
        };
    };
    (@ord) => { None };
    (@ord $o:literal) => { Some($o) };
}

pub mod crt;
pub mod gdi32;
pub mod gui_structs;
pub mod kernel32;
pub mod msvcrt;
pub mod ntdll;
pub mod printf;
pub mod ucrtbase;

/// How arguments are cleaned up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum Conv {
    /// Callee pops `4 * args` bytes (WINAPI).
    stdcall,
    /// Caller pops (the C runtime).
    cdecl,
}

/// What an API body hands back to the engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ret {
    /// EAX.
    Value(u32),
    /// EDX:EAX.
    Value64(u64),
    /// The process ends with this exit code (ExitProcess, exit).
    Exit(u32),
    /// Call these guest functions (no arguments, cdecl) in order, then
    /// return to the caller (`_initterm`): the process chains them on the
    /// guest stack so each one's `ret` enters the next.
    Chain(Vec<u32>),
}

/// A dword stack argument as a Rust value.
pub trait FromArg {
    fn from_arg(v: u32) -> Self;
}
impl FromArg for u32 {
    fn from_arg(v: u32) -> Self {
        v
    }
}
impl FromArg for i32 {
    fn from_arg(v: u32) -> Self {
        v as i32
    }
}
impl FromArg for bool {
    fn from_arg(v: u32) -> Self {
        v != 0
    }
}

/// A Rust return value as EAX / EDX:EAX.
pub trait IntoRet {
    fn into_ret(self) -> Ret;
}
impl IntoRet for u32 {
    fn into_ret(self) -> Ret {
        Ret::Value(self)
    }
}
impl IntoRet for i32 {
    fn into_ret(self) -> Ret {
        Ret::Value(self as u32)
    }
}
impl IntoRet for bool {
    fn into_ret(self) -> Ret {
        Ret::Value(self as u32)
    }
}
impl IntoRet for () {
    fn into_ret(self) -> Ret {
        Ret::Value(0)
    }
}
impl IntoRet for u64 {
    fn into_ret(self) -> Ret {
        Ret::Value64(self)
    }
}
impl IntoRet for Ret {
    fn into_ret(self) -> Ret {
        self
    }
}

/// One declared export.
pub struct ExportDecl {
    pub name: &'static str,
    pub ordinal: Option<u16>,
    pub conv: Conv,
    /// Argument names, in order (their count is what stdcall pops).
    pub args: &'static [&'static str],
    pub imp: fn(&mut Env, &[u32]) -> Ret,
}

impl ExportDecl {
    /// Bytes the callee pops on return.
    pub fn pop_bytes(&self) -> u32 {
        match self.conv {
            Conv::stdcall => 4 * self.args.len() as u32,
            Conv::cdecl => 0,
        }
    }
}

/// A data export (a variable the importer reads through its IAT slot, such
/// as msvcrt's `_iob`): the process allocates `size` bytes starting with `init`.
pub struct DataDecl {
    pub name: &'static str,
    pub size: u32,
    pub init: &'static [u8],
}

/// One DLL's declarations.
pub struct DllDecl {
    pub name: &'static str,
    /// Export tables this DLL also exports, looked up after its own (the C
    /// standard functions msvcrt and ucrtbase share, declared once in
    /// [`crt::common`]).
    pub also: &'static [&'static DllDecl],
    pub data: &'static [DataDecl],
    pub exports: &'static [ExportDecl],
}

/// Every DLL the engine implements, by canonical (lowercase) name.
pub static DLLS: &[&DllDecl] = &[
    &kernel32::DLL,
    &msvcrt::DLL,
    &ntdll::DLL,
    &ucrtbase::DLL,
    &gdi32::DLL,
];

/// What an import resolves to.
pub enum Resolution {
    Implemented(&'static DllDecl, &'static ExportDecl),
    /// A data export: the IAT slot gets the variable's address, not a thunk.
    Data(&'static DllDecl, &'static DataDecl),
    /// No declaration: the stub that stops the run. `dll` is the canonical name.
    Missing {
        dll: String,
        what: String,
    },
}

/// Whether the engine models this DLL (after API set redirection).
pub fn is_system_dll(dll: &str) -> bool {
    let c = crate::pe::apiset::canonical(dll);
    DLLS.iter().any(|d| d.name == c)
}

/// Looks up an import by DLL and name or ordinal.
pub fn resolve(dll: &str, name: &crate::pe::ImportName) -> Resolution {
    use crate::pe::ImportName;
    let c = crate::pe::apiset::canonical(dll);
    let decl = DLLS.iter().find(|d| d.name == c);
    let found = decl.and_then(|d| {
        std::iter::once(*d)
            .chain(d.also.iter().copied())
            .flat_map(|t| t.exports.iter())
            .find(|e| match name {
                ImportName::Name { name, .. } => e.name == name,
                ImportName::Ordinal(o) => e.ordinal == Some(*o),
            })
            .map(|e| (*d, e))
    });
    if let (Some(d), ImportName::Name { name, .. }) = (decl, name) {
        if let Some(v) = d.data.iter().find(|v| v.name == name) {
            return Resolution::Data(d, v);
        }
    }
    match found {
        Some((d, e)) => Resolution::Implemented(d, e),
        None => Resolution::Missing {
            dll: c,
            what: match name {
                ImportName::Name { name, .. } => name.clone(),
                ImportName::Ordinal(o) => format!("(ordinal {o})"),
            },
        },
    }
}

/// The guest clock rate the time APIs assume: 100 M dispatches per second.
pub const DISPATCHES_PER_SECOND: u64 = 100_000_000;
/// The fixed epoch guest time starts at: 2020-01-01 00:00:00 UTC as a FILETIME
/// (100 ns units since 1601).
pub const EPOCH_FILETIME: u64 = 132_223_104_000_000_000;

/// First heap handle [`Env::new_heap`] gives out.
pub const HEAP_HANDLE_BASE: u32 = 0x0050_0000;

/// The state API bodies work on: guest memory and the per-process values the
/// implemented calls read and write. The process module owns its setup.
pub struct Env {
    pub mem: Memory,
    /// The guest clock (dispatches) at the call, set by the engine.
    pub clock: u64,
    pub last_error: u32,
    /// Console output in the order the program wrote it (fd 1 and 2 tagged).
    pub console: Vec<(u8, Vec<u8>)>,
    /// TLS slots (TlsAlloc index → value); `None` = free.
    pub tls: Vec<Option<u32>>,
    /// The process heap handle GetProcessHeap returns.
    pub process_heap: u32,
    /// Guest addresses of the command line (ANSI and UTF-16), set by the process.
    pub cmdline_a: u32,
    pub cmdline_w: u32,
    /// Heaps by handle (HeapCreate; the process heap is one of them).
    pub heaps: std::collections::BTreeMap<u32, crate::heap::Heap>,
    /// The program's argv (for the C runtime's __getmainargs).
    pub argv: Vec<String>,
    /// Guest address of the first stack argument of the call being serviced
    /// (variadic bodies such as printf find their va_list after the fixed ones).
    pub arg_base: u32,
    /// The main image's base (GetModuleHandle(NULL)).
    pub image_base: u32,
    /// Functions registered with _onexit/atexit (not run yet at exit: see docs).
    pub atexit: Vec<u32>,
    /// Addresses of data exports the process allocated, by `dll!name`.
    pub data: std::collections::BTreeMap<String, u32>,
    /// The GUI: screen, GDI objects, windows (user32 and gdi32 work on it).
    pub desktop: Box<crate::desktop::Desktop>,
}

impl Env {
    pub fn new(mem: Memory) -> Env {
        Env {
            mem,
            clock: 0,
            last_error: 0,
            console: Vec::new(),
            tls: Vec::new(),
            process_heap: 0,
            cmdline_a: 0,
            cmdline_w: 0,
            heaps: Default::default(),
            argv: Vec::new(),
            arg_base: 0,
            atexit: Vec::new(),
            image_base: 0,
            data: Default::default(),
            desktop: Default::default(),
        }
    }

    /// Creates a heap and returns its handle (handles are small fixed
    /// values, not addresses: deterministic and never dereferenced by guests).
    pub fn new_heap(&mut self) -> u32 {
        let h = HEAP_HANDLE_BASE + 0x10 * self.heaps.len() as u32;
        let h = (h..)
            .step_by(0x10)
            .find(|h| !self.heaps.contains_key(h))
            .expect("handle space");
        self.heaps.insert(h, crate::heap::Heap::new());
        h
    }

    /// Runs `f` on heap `h`; `None` (and ERROR_INVALID_HANDLE) if no such heap.
    pub fn with_heap<T>(
        &mut self,
        h: u32,
        f: impl FnOnce(&mut crate::heap::Heap, &mut Memory) -> T,
    ) -> Option<T> {
        match self.heaps.get_mut(&h) {
            Some(heap) => Some(f(heap, &mut self.mem)),
            None => {
                self.last_error = 6;
                None
            }
        }
    }

    /// Milliseconds of guest time since the process started.
    pub fn guest_ms(&self) -> u64 {
        self.clock / (DISPATCHES_PER_SECOND / 1000)
    }

    /// Guest time as a FILETIME.
    pub fn guest_filetime(&self) -> u64 {
        EPOCH_FILETIME + self.clock / (DISPATCHES_PER_SECOND / 10_000_000)
    }

    /// Appends console output to stream 1 (stdout) or 2 (stderr).
    pub fn write_console(&mut self, stream: u8, bytes: &[u8]) {
        match self.console.last_mut() {
            Some((s, b)) if *s == stream => b.extend_from_slice(bytes),
            _ => self.console.push((stream, bytes.to_vec())),
        }
    }

    /// Everything written to stdout, concatenated.
    pub fn stdout(&self) -> Vec<u8> {
        self.console
            .iter()
            .filter(|(s, _)| *s == 1)
            .flat_map(|(_, b)| b.iter().copied())
            .collect()
    }
}

/// The report of a call to an unimplemented import's stub:
/// `unimplemented KERNEL32!CreateFileW called from 0x00401234`, or with
/// `(ordinal N)` for an import by ordinal.
pub fn unimplemented_message(dll: &str, name: &crate::pe::ImportName, caller: u32) -> String {
    let module = dll
        .rsplit_once('.')
        .map_or(dll, |(stem, ext)| {
            if ext.eq_ignore_ascii_case("dll") {
                stem
            } else {
                dll
            }
        })
        .to_ascii_uppercase();
    match name {
        crate::pe::ImportName::Name { name, .. } => {
            format!("unimplemented {module}!{name} called from {caller:#010x}")
        }
        crate::pe::ImportName::Ordinal(o) => {
            format!("unimplemented {module}!#{o} (ordinal {o}) called from {caller:#010x}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pe::ImportName;

    #[test]
    fn resolution_and_stub_messages() {
        let by_name = |s: &str| ImportName::Name {
            hint: 0,
            name: s.into(),
        };
        let cases = [
            (
                "KERNEL32.dll",
                by_name("GetLastError"),
                Some("kernel32.dll"),
            ),
            (
                "api-ms-win-crt-string-l1-1-0.dll",
                by_name("strlen"),
                Some("ucrtbase.dll"),
            ),
            ("msvcrt.dll", by_name("qsort"), None),
            ("msvcrt.dll", by_name("_iob"), Some("msvcrt.dll")),
            ("OLEAUT32.dll", ImportName::Ordinal(2), None),
        ];
        for (dll, name, want) in cases {
            let got = match resolve(dll, &name) {
                Resolution::Implemented(d, _) | Resolution::Data(d, _) => Some(d.name),
                Resolution::Missing { .. } => None,
            };
            assert_eq!(got, want, "{dll}!{name}");
        }
        assert_eq!(
            unimplemented_message("KERNEL32.dll", &by_name("CreateFileW"), 0x401234),
            "unimplemented KERNEL32!CreateFileW called from 0x00401234"
        );
        assert_eq!(
            unimplemented_message("OLEAUT32.dll", &ImportName::Ordinal(9), 0x10),
            "unimplemented OLEAUT32!#9 (ordinal 9) called from 0x00000010"
        );
    }
}
