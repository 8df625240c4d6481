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
/// the data exports `@data name [size] = [initial bytes];`. An export whose
/// name is no Rust identifier (a C++ decorated name) is written
/// `fn rust_name as "?decorated@@name" (...)` (`@data rust_name as "..."`
/// for data).
/// `env` is the [`Env`]; argument types implement [`FromArg`]; the return
/// type implements [`IntoRet`].
#[macro_export]
macro_rules! dll {
    ($dll:literal; $( @also $also:path; )* $( @data $dname:ident $(as $dext:literal)? [$dsize:literal] = $dinit:expr $(, $dfill:expr)? ; )* $( $conv:ident fn $name:ident $(as $ext:literal)? $(@ $ord:literal)? ( $env:ident $(, $arg:ident : $ty:ty)* $(,)? ) $(-> $ret:ty)? $body:block )* ) => {
        /// This DLL's export table, generated from the declarations above.
        pub static DLL: $crate::dll::DllDecl = $crate::dll::DllDecl {
            name: $dll,
            also: &[ $( &$also ),* ],
            data: &[ $( $crate::dll::DataDecl { name: $crate::dll!(@name $dname $($dext)?), size: $dsize, init: &$dinit, fill: $crate::dll!(@fill $($dfill)?) } ),* ],
            exports: &[ $( $crate::dll::ExportDecl {
                name: $crate::dll!(@name $name $($ext)?),
                ordinal: $crate::dll!(@ord $($ord)?),
                conv: $crate::dll::Conv::$conv,
                args: &[ $( stringify!($arg) ),* ],
                // The wrapper lives inside the table entry, so a body may call a
                // module helper of the export's own name.
                imp: {
                    #[allow(non_snake_case, unused_variables, unused_mut, clippy::unused_unit, clippy::too_many_arguments)]
                    fn __export_body($env: &mut $crate::dll::Env $(, $arg: $ty)*) $(-> $ret)? $body
                    #[allow(unused_variables, unused_mut)]
                    fn __export_wrapper(env: &mut $crate::dll::Env, args: &[u32]) -> $crate::dll::Ret {
                        let mut _i = 0usize;
                        $( let $arg: $ty = $crate::dll::FromArg::from_arg(args.get({ _i += 1; _i - 1 }).copied().unwrap_or(0)); )*
                        $crate::dll::IntoRet::into_ret(__export_body(env $(, $arg)*))
                    }
                    __export_wrapper
                },
            } ),* ],
        };
    };
    (@fill) => { None };
    (@fill $f:expr) => { Some($f) };
    (@name $n:ident) => { stringify!($n) };
    (@name $n:ident $e:literal) => { $e };
    (@ord) => { None };
    (@ord $o:literal) => { Some($o) };
}

pub mod advapi32;
pub mod comctl32;
pub mod comdlg32;
pub mod controls;
pub mod crt;
pub mod dialog;
pub mod drawtext;
pub mod edit;
pub mod filedlg;
pub mod gdi32;
pub mod gui_structs;
pub mod imm32;
pub mod kernel32;
pub mod listbox;
pub mod menu;
pub mod msgconv;
pub mod msgqueue;
pub mod msvcp140;
pub mod msvcrt;
pub mod ntdll;
pub mod ntfile;
pub mod oleaut32;
pub mod printf;
pub mod registry;
pub mod secur32;
pub mod setupapi;
pub mod shell32;
pub mod shlwapi;
pub mod ucrtbase;
pub mod user32;
pub mod uxtheme;
pub mod vcruntime140;
pub mod wincrypt;

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
pub enum Ret {
    /// EAX.
    Value(u32),
    /// EDX:EAX.
    Value64(u64),
    /// A double in ST(0) (the C math functions).
    Float(f64),
    /// The process ends with this exit code (ExitProcess, exit).
    Exit(u32),
    /// Call a guest function, then continue with its EAX (see [`GuestCall`]).
    Call(GuestCall),
    /// The body set the CPU state itself (longjmp, NtContinue, a resumed
    /// exception): the call does not return normally.
    Jumped,
    /// The thread waits: the call is made again when an object is signaled
    /// or at `deadline` (guest clock), whichever comes first.
    Block { deadline: Option<u64> },
    /// The current thread ends with this exit code.
    ExitThread(u32),
    /// The run stops with this report.
    Stop(String),
    /// An exception ended a guarded guest call (`seh::guarded_call`): the
    /// thread's host frames above index `depth` are dropped and frame
    /// `depth` (the guarded call) completes with `value`.
    Unwind { depth: usize, value: u32 },
}

/// A call into guest code from an API body (a callback, an SEH handler, an
/// atexit function). The process pushes `args` (last first) and a return
/// address in the thunk area; when the function returns, ESP is restored
/// (stdcall or cdecl alike) and `then` gets EAX.
pub struct GuestCall {
    pub func: u32,
    pub args: Vec<u32>,
    /// EBP to enter with (SEH filter and finally funclets run on their
    /// function's frame); EBX, ESI, EDI and EBP are restored on return.
    pub ebp: Option<u32>,
    pub then: crate::threads::Then,
}

impl Ret {
    /// EAX of a body that answered at once (0 for any other outcome): a
    /// host-side caller of another export (`DLL.call`) that needs no more.
    pub fn value(self) -> u32 {
        match self {
            Ret::Value(v) => v,
            _ => 0,
        }
    }

    /// Calls `func(args)` and continues with `then`.
    pub fn call(
        func: u32,
        args: Vec<u32>,
        then: impl FnOnce(&mut Env, u32) -> Ret + 'static,
    ) -> Ret {
        Ret::Call(GuestCall {
            func,
            args,
            ebp: None,
            then: Box::new(then),
        })
    }

    /// Calls a funclet `func` on the frame `ebp` (no arguments).
    pub fn call_funclet(
        func: u32,
        ebp: u32,
        then: impl FnOnce(&mut Env, u32) -> Ret + 'static,
    ) -> Ret {
        Ret::Call(GuestCall {
            func,
            args: vec![],
            ebp: Some(ebp),
            then: Box::new(then),
        })
    }

    /// Calls each function of `fns` (no arguments, results ignored) in
    /// order, then continues with `last`.
    pub fn call_each(
        env: &mut Env,
        mut fns: std::collections::VecDeque<u32>,
        last: Box<dyn FnOnce(&mut Env) -> Ret>,
    ) -> Ret {
        match fns.pop_front() {
            None => last(env),
            Some(f) => Ret::call(f, vec![], move |env, _| Ret::call_each(env, fns, last)),
        }
    }
}

impl std::fmt::Debug for Ret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ret::Value(v) => write!(f, "Value({v:#x})"),
            Ret::Value64(v) => write!(f, "Value64({v:#x})"),
            Ret::Float(v) => write!(f, "Float({v})"),
            Ret::Exit(c) => write!(f, "Exit({c})"),
            Ret::Call(c) => write!(f, "Call({:#010x}, {:x?})", c.func, c.args),
            Ret::Jumped => write!(f, "Jumped"),
            Ret::Block { deadline } => write!(f, "Block({deadline:?})"),
            Ret::ExitThread(c) => write!(f, "ExitThread({c})"),
            Ret::Stop(s) => write!(f, "Stop({s:?})"),
            Ret::Unwind { depth, value } => write!(f, "Unwind({depth}, {value:#x})"),
        }
    }
}

impl PartialEq for Ret {
    /// Values compare by value; calls and continuations never compare equal.
    fn eq(&self, o: &Ret) -> bool {
        match (self, o) {
            (Ret::Value(a), Ret::Value(b)) => a == b,
            (Ret::Value64(a), Ret::Value64(b)) => a == b,
            (Ret::Float(a), Ret::Float(b)) => a.to_bits() == b.to_bits(),
            (Ret::Exit(a), Ret::Exit(b)) | (Ret::ExitThread(a), Ret::ExitThread(b)) => a == b,
            (Ret::Jumped, Ret::Jumped) => true,
            (Ret::Block { deadline: a }, Ret::Block { deadline: b }) => a == b,
            (Ret::Stop(a), Ret::Stop(b)) => a == b,
            _ => false,
        }
    }
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
    /// Fills the variable at process time (values known only then: argc, the environment).
    pub fill: Option<fn(&mut Env, u32)>,
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

impl DllDecl {
    /// Calls one of this table's exports by name (a body reusing another
    /// export's behaviour). Panics if the name is not declared: a typo here
    /// is a bug in mainemu, caught by the first test that reaches it.
    pub fn call(&'static self, name: &str, env: &mut Env, args: &[u32]) -> Ret {
        let e = self
            .all_exports()
            .into_iter()
            .find(|e| e.name == name)
            .unwrap_or_else(|| panic!("{}: no export {name}", self.name));
        (e.imp)(env, args)
    }

    /// The guest address of export `i`'s thunk: how a host-side window
    /// procedure (EDIT, the status bar, menus, the file dialog) declared in
    /// a module's private table becomes a guest-callable pointer. 0 when the
    /// thunk area is full.
    pub fn guest_addr(&'static self, env: &mut Env, i: usize) -> u32 {
        env.thunks
            .slot(
                &mut env.mem,
                crate::thunks::Thunk::Api(&self.exports[i], self),
            )
            .unwrap_or(0)
    }

    /// Its own exports, then those of the tables it names with `@also`
    /// (recursively), in declaration order.
    pub fn all_exports(&'static self) -> Vec<&'static ExportDecl> {
        let mut v: Vec<&'static ExportDecl> = self.exports.iter().collect();
        for t in self.also {
            v.extend(t.all_exports());
        }
        v
    }
}

/// Every DLL the engine implements, by canonical (lowercase) name.
pub static DLLS: &[&DllDecl] = &[
    &kernel32::DLL,
    &msvcrt::DLL,
    &ntdll::DLL,
    &ucrtbase::DLL,
    &gdi32::DLL,
    &advapi32::DLL,
    &secur32::DLL,
    &user32::DLL,
    &oleaut32::DLL,
    &vcruntime140::DLL,
    &msvcp140::DLL,
    &setupapi::DLL,
    &comctl32::DLL,
    &comdlg32::DLL,
    &shell32::DLL,
    &shlwapi::DLL,
    &uxtheme::DLL,
    &imm32::DLL,
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
        d.all_exports()
            .into_iter()
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

/// The state API bodies work on: the process as the guest sees it (memory,
/// threads, handles, drives, environment, C runtime state). The process
/// module builds it; the run loop steps the current thread's CPU in it.
pub struct Env {
    pub mem: Memory,
    /// The guest clock (dispatches) at the call, set by the engine.
    pub clock: u64,
    /// The current thread's last error (saved in its [`crate::threads::Thread`] on a switch).
    pub last_error: u32,
    /// This call is being made again after it blocked (`Ret::Block`): a
    /// body that runs a modal loop continues it instead of starting anew.
    pub retrying: bool,
    /// Console output in the order the program wrote it (fd 1 and 2 tagged).
    pub console: Vec<(u8, Vec<u8>)>,
    /// The console's modes, code pages, title (kernel32's console calls).
    pub con: kernel32::console::Console,
    /// What GetStdHandle answers (input, output, error).
    pub std_handles: [u32; 3],
    /// Console input (host stdin, or what a test gives), read as the guest asks.
    pub stdin: Box<dyn std::io::Read>,
    /// TLS slot allocation (TlsAlloc index → in use); values live in each TEB.
    pub tls_used: Vec<bool>,
    /// kernel32/ntdll bookkeeping of smaller call families (activation
    /// contexts, heap information, INI files): see [`kernel32::State`].
    pub k32: kernel32::State,
    /// FLS slot allocation and callbacks (FlsAlloc); values in each thread.
    pub fls_callbacks: Vec<Option<u32>>,
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
    /// The PEB.
    pub peb: u32,
    /// The program's static TLS block template (copied into each new thread).
    pub tls_template: Option<Vec<u8>>,
    /// The thunk area's slots.
    pub thunks: crate::thunks::Thunks,
    /// Addresses of data exports the process allocated, by `dll!name`.
    pub data: std::collections::BTreeMap<String, u32>,
    /// Threads: CPUs, TEBs, waits, the scheduler's state.
    pub threads: crate::threads::Threads,
    /// Guest drives and the current directory.
    pub drives: crate::vfs::Drives,
    /// Kernel objects by handle.
    pub handles: crate::handles::Handles,
    /// The environment block, in the order Windows keeps it (sorted, case-insensitively).
    pub vars: Vec<(String, String)>,
    /// The C runtime's state (file descriptors, streams, atexit tables, ...).
    pub crt: crt::State,
    /// Loaded modules (the exe, guest DLLs, the system DLLs mainemu provides).
    pub modules: crate::modules::Modules,
    /// The program's guest path (GetModuleFileName(NULL)).
    pub exe_path: String,
    /// SetUnhandledExceptionFilter's filter (0: none).
    pub unhandled_filter: u32,
    /// SetErrorMode's mode.
    pub error_mode: u32,
    /// GetProcAddress lookups that found nothing (`dll!name`), for the summary.
    pub proc_misses: std::collections::BTreeSet<String>,
    /// Condition variables' wake generations, by address.
    pub cv_gens: std::collections::BTreeMap<u32, u64>,
    /// The run stops at the first exception no handler takes (report with
    /// registers); set by SEH dispatch, read by the run loop.
    pub fatal: Option<String>,
    /// The GUI: screen, GDI objects, windows (user32 and gdi32 work on it).
    pub desktop: Box<crate::desktop::Desktop>,
    /// kernel32's local and global atom tables.
    pub atoms: kernel32::atom::Atoms,
    /// Named pipes and completion-port associations (`kernel32::pipe`).
    pub pipes: kernel32::pipe::Pipes,
    /// Child processes CreateProcess ran: guest path, dispatches, exit code.
    pub children: Vec<(String, u64, u32)>,
    /// The process's registry (advapi32's Reg* calls).
    pub registry: registry::Registry,
}

impl Env {
    pub fn new(mem: Memory) -> Env {
        Env {
            mem,
            clock: 0,
            last_error: 0,
            retrying: false,
            console: Vec::new(),
            con: Default::default(),
            std_handles: [
                crate::process::STD_INPUT,
                crate::process::STD_OUTPUT,
                crate::process::STD_ERROR,
            ],
            stdin: Box::new(std::io::empty()),
            tls_used: Vec::new(),
            k32: Default::default(),
            fls_callbacks: Vec::new(),
            process_heap: 0,
            cmdline_a: 0,
            cmdline_w: 0,
            heaps: Default::default(),
            argv: Vec::new(),
            arg_base: 0,
            image_base: 0,
            peb: 0,
            tls_template: None,
            thunks: Default::default(),
            data: Default::default(),
            threads: crate::threads::Threads::new(),
            drives: crate::vfs::Drives::new(),
            handles: crate::handles::Handles::new(),
            vars: Vec::new(),
            crt: crt::State::default(),
            modules: Default::default(),
            exe_path: String::new(),
            unhandled_filter: 0,
            error_mode: 0,
            fatal: None,
            cv_gens: Default::default(),
            proc_misses: Default::default(),
            desktop: Default::default(),
            atoms: Default::default(),
            pipes: Default::default(),
            children: Vec::new(),
            registry: Default::default(),
        }
    }

    /// A condition variable's wake generation.
    pub fn cv_generation(&self, cv: u32) -> u64 {
        self.cv_gens.get(&cv).copied().unwrap_or(0)
    }

    /// Wakes the sleepers of a condition variable (all of them: a wake of
    /// one may wake more, as spurious wakeups are allowed).
    pub fn cv_wake(&mut self, cv: u32) {
        *self.cv_gens.entry(cv).or_default() += 1;
        self.threads.epoch += 1;
    }

    /// The current thread's CPU.
    pub fn cpu(&mut self) -> &mut x86_cpu::Cpu {
        &mut self.threads.cur_mut().cpu
    }

    /// The current thread's id (0x104 for the first thread).
    pub fn thread_id(&self) -> u32 {
        if self.threads.list.is_empty() {
            0x104
        } else {
            self.threads.cur().id
        }
    }

    /// The current thread's TEB.
    pub fn teb(&self) -> u32 {
        if self.threads.list.is_empty() {
            0
        } else {
            self.threads.cur().teb
        }
    }

    /// Sets the last error and returns `v` (for `return env.fail(code, 0)`).
    pub fn fail<T>(&mut self, code: u32, v: T) -> T {
        self.last_error = code;
        v
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

    /// Allocates `n` bytes on the process heap (0 when out of memory).
    pub fn alloc(&mut self, n: u32) -> u32 {
        let h = self.process_heap;
        self.with_heap(h, |heap, m| heap.alloc(m, n, true))
            .flatten()
            .unwrap_or(0)
    }

    /// Allocates and fills a NUL-terminated byte string on the process heap.
    pub fn alloc_cstr(&mut self, s: &[u8]) -> u32 {
        let a = self.alloc(s.len() as u32 + 1);
        self.mem.poke(a, s);
        a
    }

    /// Allocates and fills a NUL-terminated UTF-16 string on the process heap.
    pub fn alloc_wstr(&mut self, s: &[u16]) -> u32 {
        let a = self.alloc(2 * s.len() as u32 + 2);
        self.mem.poke(a, &wbytes(s));
        a
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

    /// A guest ANSI string as Rust text (bytes as Latin-1, the code page
    /// mainemu models); `None` when not readable.
    pub fn read_a(&self, addr: u32) -> Option<String> {
        if addr == 0 {
            return None;
        }
        self.mem
            .peek_cstr(addr, 1 << 20)
            .map(|b| b.iter().map(|&c| c as char).collect())
    }

    /// A guest UTF-16 string as Rust text; `None` when not readable.
    pub fn read_w(&self, addr: u32) -> Option<String> {
        if addr == 0 {
            return None;
        }
        self.mem
            .peek_wstr(addr, 1 << 20)
            .map(|w| String::from_utf16_lossy(&w))
    }

    /// Reads a guest string of either width.
    pub fn read_str(&self, addr: u32, wide: bool) -> Option<String> {
        if wide {
            self.read_w(addr)
        } else {
            self.read_a(addr)
        }
    }

    /// Guest bytes (None when not all readable).
    pub fn read_bytes(&self, addr: u32, n: u32) -> Option<Vec<u8>> {
        let mut b = vec![0; n as usize];
        self.mem.peek(addr, &mut b)?;
        Some(b)
    }

    /// Writes a string into a guest buffer of `cap` characters the way most
    /// Win32 calls do: with room (len < cap), the string and a NUL, returning
    /// the length; without, nothing written, returning the length plus the NUL.
    pub fn put_str_buf(&mut self, s: &str, buf: u32, cap: u32, wide: bool) -> u32 {
        let units = if wide {
            s.encode_utf16().count()
        } else {
            s.chars().count()
        } as u32;
        if units < cap && buf != 0 {
            self.put_str(buf, s, wide);
            units
        } else {
            units + 1
        }
    }

    /// Writes a NUL-terminated string (ANSI as Latin-1, or UTF-16) at `addr`.
    pub fn put_str(&mut self, addr: u32, s: &str, wide: bool) -> Option<()> {
        if wide {
            let w: Vec<u16> = s.encode_utf16().chain([0]).collect();
            self.mem.poke(addr, &wbytes(&w))
        } else {
            let b: Vec<u8> = s
                .chars()
                .map(|c| if (c as u32) < 256 { c as u8 } else { b'?' })
                .chain([0])
                .collect();
            self.mem.poke(addr, &b)
        }
    }

    /// The value of an environment variable (case-insensitive name).
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Sets (Some) or removes (None) an environment variable, keeping the
    /// block sorted case-insensitively as Windows does.
    pub fn set_var(&mut self, name: &str, value: Option<&str>) {
        set_var(&mut self.vars, name, value)
    }
}

/// Sets (Some) or removes (None) a variable of an environment block kept
/// sorted case-insensitively, as Windows keeps it.
pub fn set_var(vars: &mut Vec<(String, String)>, name: &str, value: Option<&str>) {
    vars.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
    if let Some(v) = value {
        let pos = vars
            .iter()
            .position(|(k, _)| k.to_uppercase() > name.to_uppercase())
            .unwrap_or(vars.len());
        vars.insert(pos, (name.to_string(), v.to_string()));
    }
}

/// The little-endian u16 at offset `o` of `b` (None past its end).
pub fn u16_at(b: &[u8], o: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(o..o + 2)?.try_into().ok()?))
}

/// The little-endian u32 at offset `o` of `b` (None past its end).
pub fn u32_at(b: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?))
}

/// UTF-16 units as little-endian bytes.
pub fn wbytes(w: &[u16]) -> Vec<u8> {
    w.iter().flat_map(|u| u.to_le_bytes()).collect()
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
    fn each_export_is_declared_once_per_dll() {
        for d in DLLS {
            let mut names: Vec<&str> = d.all_exports().iter().map(|e| e.name).collect();
            names.sort();
            let dups: Vec<&str> = names
                .windows(2)
                .filter(|w| w[0] == w[1])
                .map(|w| w[0])
                .collect();
            assert!(dups.is_empty(), "{}: declared twice: {dups:?}", d.name);
        }
    }

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
            ("msvcrt.dll", by_name("_no_such_export"), None),
            ("msvcrt.dll", by_name("_iob"), Some("msvcrt.dll")),
            // A C++ decorated name declared with `as`.
            (
                "MSVCRT.dll",
                by_name("??1type_info@@UAE@XZ"),
                Some("msvcrt.dll"),
            ),
            ("OLEAUT32.dll", ImportName::Ordinal(2), Some("oleaut32.dll")),
            ("OLEAUT32.dll", ImportName::Ordinal(500), None),
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
