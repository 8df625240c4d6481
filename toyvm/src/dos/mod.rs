//! DOS: the kernel services a program sees through INT 20h/21h/27h/2Fh, its
//! data structures in guest memory, processes (EXEC, terminate, TSR), files
//! on the overlay drive C:, and memory.
//!
//! This module owns the DOS state that lives on the host side (open files,
//! current directory, search state, the process stack) and boots the kernel
//! data and the top-level shell into guest memory. Submodules own one
//! mechanism each; the INT 21h dispatcher is [`int21`]. It must not know
//! about engines or the session's budget.

pub mod console;
pub mod exec;
pub mod fcb;
pub mod files;
pub mod find;
pub mod handles;
pub mod int21;
pub mod layout;
pub mod memory;
pub mod path;
pub mod psp;

use crate::bios::rom::{RomMap, BIOS_SEG};
use crate::machine::memory::Memory;
use std::collections::BTreeMap;

/// The shell's PSP (the parent of the top-level program).
pub const SHELL_PSP: u16 = layout::FIRST_MCB + 1;
/// Paragraphs of the shell's block (PSP + its stack).
const SHELL_PARAS: u16 = 0x20;
/// Shell stack top (offset in the shell PSP segment).
const SHELL_SP: u16 = SHELL_PARAS * 16;

/// A program's saved context while its child runs (EXEC AL=00h).
#[derive(Clone, Debug)]
pub struct ExecFrame {
    pub child: u16,
    pub parent: u16,
    pub regs: [u32; 8],
    pub sregs: [u16; 6],
}

/// DOS state kept on the host side.
pub struct Dos {
    pub fs: files::GuestFs,
    pub cwd: Vec<String>,
    /// What AH=30h reports (major, minor).
    pub version: (u8, u8),
    pub current_psp: u16,
    pub dta: (u16, u16),
    pub strategy: memory::Strategy,
    pub handles: handles::Handles,
    /// AX of the last child's termination (AH type, AL code) for 4Dh.
    pub return_code: u16,
    pub exec_stack: Vec<ExecFrame>,
    pub searches: find::Searches,
    pub console: console::LineInput,
    /// The environment variables every top-level program gets.
    pub env: Vec<(String, String)>,
    /// (code, class, action, locus) of the last error, for 59h.
    pub last_error: (u16, u8, u8, u8),
    pub verify: bool,
    pub ctrl_break: bool,
    /// INT 21h functions asked for that DOS answered "invalid function".
    pub declined: BTreeMap<String, u64>,
    /// The ROM's entry points (shell return, XMS entry).
    pub rom: RomMap,
    /// Host-side copy of the ROM vectors, to restore on termination.
    pub boot_vectors: Vec<(u8, u16, u16)>,
}

impl Dos {
    /// DOS with drive C: on `fs`, reporting `version`.
    pub fn new(fs: files::GuestFs, version: (u8, u8), rom: RomMap) -> Dos {
        Dos {
            fs,
            cwd: Vec::new(),
            version,
            current_psp: SHELL_PSP,
            dta: (SHELL_PSP, 0x80),
            strategy: memory::Strategy::FIRST,
            handles: handles::Handles::new(),
            return_code: 0,
            exec_stack: Vec::new(),
            searches: find::Searches::default(),
            console: console::LineInput::default(),
            env: vec![
                ("COMSPEC".into(), "C:\\COMMAND.COM".into()),
                ("PATH".into(), "C:\\".into()),
                ("PROMPT".into(), "$P$G".into()),
                // The devices model a Sound Blaster Pro 2 (DSP 3.02): type 4.
                (
                    "BLASTER".into(),
                    crate::machine::devices::sb::BLASTER.into(),
                ),
            ],
            last_error: (0, 0, 0, 0),
            verify: false,
            ctrl_break: false,
            declined: BTreeMap::new(),
            boot_vectors: rom.vectors.clone(),
            rom,
        }
    }

    pub fn decline(&mut self, what: String) {
        *self.declined.entry(what).or_insert(0) += 1;
    }

    /// Writes the kernel data, the memory arena and the shell (a PSP whose
    /// stack holds an interrupt frame returning to the ROM's shell-return
    /// stub) into guest memory.
    pub fn boot(&mut self, mem: &mut Memory) {
        layout::install(mem);
        memory::init(mem, layout::FIRST_MCB, layout::MEM_TOP);
        memory::init_upper(mem, layout::MEM_TOP, layout::UMB_START, layout::UMB_END);
        let shell = memory::alloc(
            mem,
            layout::FIRST_MCB,
            SHELL_PARAS,
            SHELL_PSP,
            memory::Strategy::FIRST,
        )
        .expect("fresh arena");
        debug_assert_eq!(shell, SHELL_PSP);
        memory::set_name(mem, layout::FIRST_MCB, b"COMMAND");
        let env = psp::env_block(&self.env, "C:\\COMMAND.COM");
        let env_paras = (env.len() as u16).div_ceil(16) + 1;
        let env_seg = memory::alloc(
            mem,
            layout::FIRST_MCB,
            env_paras,
            SHELL_PSP,
            memory::Strategy::FIRST,
        )
        .expect("fresh arena");
        mem.load((env_seg as u32) << 4, &env);
        psp::build(
            mem,
            &psp::PspInit {
                seg: SHELL_PSP,
                mem_top: layout::MEM_TOP,
                parent: SHELL_PSP,
                env: env_seg,
                jft: handles::DEFAULT_JFT,
                terminate: (BIOS_SEG, self.rom.shell_return),
                ctrl_break: (BIOS_SEG, self.rom.shell_return),
                crit_error: (BIOS_SEG, self.rom.shell_return),
                tail: b"",
                version: self.version,
            },
        );
        // The shell's stack: an interrupt frame that returns to the ROM.
        let sp = SHELL_SP - 6;
        psp::wr16(mem, SHELL_PSP, sp, self.rom.shell_return);
        psp::wr16(mem, SHELL_PSP, sp + 2, BIOS_SEG);
        psp::wr16(mem, SHELL_PSP, sp + 4, 0x0202);
        psp::wr16(mem, SHELL_PSP, psp::off::SAVED_SSSP, sp);
        psp::wr16(mem, SHELL_PSP, psp::off::SAVED_SSSP + 2, SHELL_PSP);
        self.current_psp = SHELL_PSP;
        self.dta = (SHELL_PSP, 0x80);
        layout::set_cds_path(mem, &self.cwd);
    }

    /// The stack the shell runs on (SS, SP) when it EXECs a top-level program.
    pub fn shell_stack(&self) -> (u16, u16) {
        (SHELL_PSP, SHELL_SP - 6)
    }
}
