//! Machine models: how a guest machine meets the µop IR, in two halves.
//!
//! * [`MachineModel`] is the **lowering-time** side: which vregs hold which
//!   guest registers (the resident register model: EAX..EDI are v0..v7, then
//!   whatever the model needs, e.g. segment selectors and bases), segment
//!   limits, address and stack sizes, and whether the code runs in user
//!   mode (privileged forms then decline). [`RealMode16`] (toyvm) and
//!   [`Flat32`] (mainemu: 32-bit flat user mode) implement it.
//! * [`MachineRuntime`] is the **run-time** side the engines call: a page
//!   attribute view of plain RAM for the fast path ([`FastMem`]), fully
//!   checked reads and writes (device memory, stores into code), port I/O,
//!   services and the x87 FPU. Every call that can refuse refuses *before*
//!   any effect, so the engine can exit and let a finer tier run the whole
//!   instruction.
//!
//! This module owns only these contracts and the two lowering models. It must
//! not know about DOS, Windows, devices or any engine's encoding.

#![forbid(unsafe_code)]

use crate::flags::{LazyFlags, Width};
use crate::ir::{code_key, AddrSize, VReg};

/// A segment register, in x86 encoding order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Seg {
    Es = 0,
    Cs = 1,
    Ss = 2,
    Ds = 3,
    Fs = 4,
    Gs = 5,
}

/// How the lowering reaches memory through one segment register
/// ([`MachineModel::seg_data`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegData {
    /// Vreg holding the base, `None` when the base is always 0.
    pub base: Option<VReg>,
    /// Highest valid offset.
    pub limit: u32,
    /// Stores through it are allowed (a flat code segment is read-only).
    pub writable: bool,
}

/// Lowering-time machine model.
pub trait MachineModel {
    /// Name used in program headers and repro files (`real16`, `flat32`).
    fn name(&self) -> &'static str;
    /// Number of guest vregs; temporaries start here.
    fn guest_vregs(&self) -> u16;
    /// General register `i` (0..8 = EAX..EDI) is vreg `i` in every model.
    fn gpr(&self, i: u8) -> VReg {
        VReg(i as u16)
    }
    /// Vreg holding a segment's base, `None` when the base is always 0.
    fn seg_base(&self, s: Seg) -> Option<VReg>;
    /// Vreg holding a segment's selector, `None` when the model does not keep it.
    fn seg_selector(&self, s: Seg) -> Option<VReg>;
    /// Highest valid offset in a segment.
    fn seg_limit(&self, s: Seg) -> u32;
    /// Address size without a 67h prefix.
    fn default_asize(&self) -> AddrSize;
    /// Width of the stack pointer (SP or ESP).
    fn stack_width(&self) -> Width;
    /// Key of the program for code at `ip` with code-segment base `cs_base`.
    fn key(&self, cs_base: u32, ip: u32) -> u64 {
        code_key(cs_base, ip)
    }
    /// FLAGS bits POPF (and IRET) load from the stack (`o32`: POPFD), or
    /// `None` when the model leaves POPF/IRET to a finer tier.
    fn popf_mask(&self, _o32: bool) -> Option<u32> {
        None
    }
    /// Memory access through segment `s`: its base vreg, limit and whether
    /// stores are allowed, or `None` when every access through it must
    /// decline (a null selector: the finer tier raises the fault). The
    /// default is [`MachineModel::seg_base`] and [`MachineModel::seg_limit`],
    /// writable.
    fn seg_data(&self, s: Seg) -> Option<SegData> {
        Some(SegData {
            base: self.seg_base(s),
            limit: self.seg_limit(s),
            writable: true,
        })
    }
    /// Code runs at CPL 3 with IOPL 0: CLI, STI, IN, OUT, INT and IRET
    /// fault or trap to the engine there, so they decline (a finer tier
    /// raises what the architecture raises).
    fn user_mode(&self) -> bool {
        false
    }
    /// Memory can be readable and not writable (page protections), so a
    /// store can be refused after a load of the same bytes succeeded: a
    /// read-modify-write then probes its store (writes the loaded value
    /// back) before its first effect, so a refusal leaves nothing done.
    fn write_protect(&self) -> bool {
        false
    }
}

/// 16-bit segmented real mode (toyvm): v0..v7 general registers, v8..v13 the
/// selectors ES CS SS DS FS GS, v14..v19 their bases. Limits are 0xFFFF.
#[derive(Clone, Copy, Debug, Default)]
pub struct RealMode16;

/// 32-bit flat user mode (mainemu): v0..v7 general registers, v8/v9 the FS
/// and GS bases. CS, DS, ES and SS are flat (base 0, limit 4 GiB - 1; CS is
/// read-only), FS is the TEB with `fs_limit`, GS is the null selector (every
/// access through it declines), CPL 3 with IOPL 0, 32-bit operand and
/// address size by default.
#[derive(Clone, Copy, Debug)]
pub struct Flat32 {
    /// Highest valid FS offset (Windows NT: 0xFFF, one page of TEB).
    pub fs_limit: u32,
}

impl Default for Flat32 {
    /// Windows NT's user mode: FS limit 0xFFF.
    fn default() -> Self {
        Flat32 { fs_limit: 0xFFF }
    }
}

const REAL16_NAMES: [&str; 20] = [
    "eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi", "es", "cs", "ss", "ds", "fs", "gs",
    "es_base", "cs_base", "ss_base", "ds_base", "fs_base", "gs_base",
];
const FLAT32_NAMES: [&str; 10] = [
    "eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi", "fs_base", "gs_base",
];

/// Register names of a model by name (empty for an unknown model: `vN` only).
pub fn model_reg_names(model: &str) -> &'static [&'static str] {
    match model {
        "real16" => &REAL16_NAMES,
        "flat32" => &FLAT32_NAMES,
        _ => &[],
    }
}

impl RealMode16 {
    /// First selector vreg.
    pub const SEL: u16 = 8;
    /// First base vreg.
    pub const BASE: u16 = 14;
}

impl MachineModel for RealMode16 {
    fn name(&self) -> &'static str {
        "real16"
    }
    fn guest_vregs(&self) -> u16 {
        20
    }
    fn seg_base(&self, s: Seg) -> Option<VReg> {
        Some(VReg(Self::BASE + s as u16))
    }
    fn seg_selector(&self, s: Seg) -> Option<VReg> {
        Some(VReg(Self::SEL + s as u16))
    }
    fn seg_limit(&self, _s: Seg) -> u32 {
        0xFFFF
    }
    fn default_asize(&self) -> AddrSize {
        AddrSize::A16
    }
    fn stack_width(&self) -> Width {
        Width::W16
    }
    /// A 486 in real mode: every writable flag, IOPL and NT included
    /// (toyvm's `EFLAGS_WRITABLE`: 0x247FD5; 16 bits for POPF).
    fn popf_mask(&self, o32: bool) -> Option<u32> {
        Some(if o32 { 0x0024_7FD5 } else { 0x7FD5 })
    }
}

impl MachineModel for Flat32 {
    fn name(&self) -> &'static str {
        "flat32"
    }
    fn guest_vregs(&self) -> u16 {
        10
    }
    fn seg_base(&self, s: Seg) -> Option<VReg> {
        match s {
            Seg::Fs => Some(VReg(8)),
            Seg::Gs => Some(VReg(9)),
            _ => None,
        }
    }
    fn seg_selector(&self, _s: Seg) -> Option<VReg> {
        None
    }
    fn seg_limit(&self, s: Seg) -> u32 {
        match s {
            Seg::Fs => self.fs_limit,
            _ => 0xFFFF_FFFF,
        }
    }
    fn seg_data(&self, s: Seg) -> Option<SegData> {
        (s != Seg::Gs).then(|| SegData {
            base: self.seg_base(s),
            limit: self.seg_limit(s),
            writable: s != Seg::Cs,
        })
    }
    fn default_asize(&self) -> AddrSize {
        AddrSize::A32
    }
    fn stack_width(&self) -> Width {
        Width::W32
    }
    fn user_mode(&self) -> bool {
        true
    }
    fn write_protect(&self) -> bool {
        true
    }
}

/// Page entry bit: the page is plain RAM and may be read directly.
pub const PAGE_READ: u32 = 1;
/// Page entry bit: the page is plain RAM holding no code and may be written
/// directly (a store cannot hit code or a device).
pub const PAGE_WRITE: u32 = 2;

/// The fast-path view of guest memory: `pages[lin >> PAGE_SHIFT]` is the byte
/// offset in `ram` where that page starts, with [`PAGE_READ`]/[`PAGE_WRITE`]
/// in its low bits (toyvm maps linear = offset; mainemu can map sparsely).
/// An access the view cannot serve (no bit, page crossing, out of range) goes
/// to the checked path; that is always correct, only slower.
pub struct FastMem<'a> {
    pub ram: &'a mut [u8],
    pub pages: &'a [u32],
}

impl FastMem<'_> {
    /// Host offset for an access of `n` bytes at `lin` needing permission `bit`.
    #[inline(always)]
    fn host(&self, lin: u32, n: u32, bit: u32, shift: u32) -> Option<usize> {
        let e = *self.pages.get((lin >> shift) as usize)?;
        let pmask = (1u32 << shift) - 1;
        let off = lin & pmask;
        if e & bit == 0 || off + n > pmask + 1 {
            return None;
        }
        Some((e & !pmask) as usize + off as usize)
    }

    /// Direct read of plain RAM, or `None` to take the checked path.
    #[inline(always)]
    pub fn read(&self, lin: u32, w: Width, shift: u32) -> Option<u32> {
        let h = self.host(lin, w.bytes(), PAGE_READ, shift)?;
        Some(match w {
            Width::W8 => *self.ram.get(h)? as u32,
            Width::W16 => u16::from_le_bytes(self.ram.get(h..h + 2)?.try_into().ok()?) as u32,
            Width::W32 => u32::from_le_bytes(self.ram.get(h..h + 4)?.try_into().ok()?),
        })
    }

    /// Direct write of plain RAM; `false` to take the checked path.
    #[inline(always)]
    pub fn write(&mut self, lin: u32, w: Width, v: u32, shift: u32) -> bool {
        let Some(h) = self.host(lin, w.bytes(), PAGE_WRITE, shift) else {
            return false;
        };
        match w {
            Width::W8 => match self.ram.get_mut(h) {
                Some(b) => *b = v as u8,
                None => return false,
            },
            Width::W16 => match self.ram.get_mut(h..h + 2) {
                Some(b) => b.copy_from_slice(&(v as u16).to_le_bytes()),
                None => return false,
            },
            Width::W32 => match self.ram.get_mut(h..h + 4) {
                Some(b) => b.copy_from_slice(&v.to_le_bytes()),
                None => return false,
            },
        }
        true
    }
}

/// The checked path refused: nothing happened, and a finer tier must run the
/// instruction (it will raise the architectural fault or do the odd access).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refused;

/// Outcome of a checked store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreOutcome {
    /// Stored.
    Done,
    /// Stored, and the bytes belong to code: the engine stops at the next
    /// instruction boundary so the driver can invalidate.
    HitCode,
    /// Nothing stored; run the instruction in a finer tier.
    Refused,
}

/// Outcome of a port write or a service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServiceOutcome {
    /// Done; carry on.
    Continue,
    /// Done; stop at the next instruction boundary (e.g. a device cut the slice).
    StopAfter,
    /// Nothing happened; run the instruction in a finer tier.
    Refused,
}

/// What a service may touch: the guest vregs and the flags.
pub struct ServiceCtx<'a> {
    pub vregs: &'a mut [u32],
    pub flags: &'a mut LazyFlags,
}

/// The memory operand of an x87 instruction ([`crate::ir::Op::X87`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct X87Mem {
    /// Segment base (linear address of offset 0).
    pub base: u32,
    /// Effective offset (already wrapped by the address size).
    pub off: u32,
    /// Highest valid offset: every byte the instruction touches must be at
    /// or below it, or the machine refuses.
    pub limit: u32,
    /// Selector of the operand's segment (the FPU's data pointer).
    pub sel: u16,
}

/// One x87 instruction for the machine's FPU.
#[derive(Clone, Copy, Debug)]
pub struct X87Call<'a> {
    /// Its encoding (escape opcode D8-DF, prefixes included).
    pub insn: &'a [u8],
    /// Its IP and code-segment selector (the FPU's instruction pointer).
    pub ip: u32,
    pub cs: u16,
    pub mem: Option<X87Mem>,
}

/// What an x87 instruction did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct X87Done {
    /// A 16-bit register result (FNSTSW AX), for the op's `dst`.
    pub result: Option<u16>,
    /// It stored into code: the engine owes a stop at the next boundary.
    pub hit_code: bool,
}

/// Run-time machine interface. `now` is always the guest clock (dispatches)
/// at the start of the instruction making the call, so devices answer for
/// exactly that moment.
///
/// Contract for [`MachineRuntime::fast_mem`]: a page marked [`PAGE_READ`]
/// reads the same bytes `read` would, with no side effect; a page marked
/// [`PAGE_WRITE`] is plain RAM with no code, where a store has no effect but
/// its bytes. Engines may take either path for any access.
pub trait MachineRuntime {
    /// Granule of the page view, in address bits (at least 2).
    const PAGE_SHIFT: u32;
    fn fast_mem(&mut self) -> FastMem<'_>;
    /// Checked read at a linear address.
    fn read(&mut self, lin: u32, w: Width, now: u64) -> Result<u32, Refused>;
    /// Checked write at a linear address.
    fn write(&mut self, lin: u32, w: Width, v: u32, now: u64) -> StoreOutcome;
    /// A port read; the default (a machine without ports, user mode)
    /// refuses.
    fn port_in(&mut self, _port: u16, _w: Width, _now: u64) -> Result<u32, Refused> {
        Err(Refused)
    }
    /// A port read that may also ask the engine to stop right after its
    /// instruction (`true`): the read changed what the driver must decide
    /// between instructions (toyvm: an interrupt request is pending, as L1
    /// returns after such a read). Engines call this one; the default is
    /// [`MachineRuntime::port_in`] with no stop. The lowering follows every
    /// `in` with an `exit.pending` at the next boundary, so the stop lands
    /// exactly after the instruction.
    fn port_read(&mut self, port: u16, w: Width, now: u64) -> Result<(u32, bool), Refused> {
        self.port_in(port, w, now).map(|v| (v, false))
    }
    /// A port write; the default refuses.
    fn port_out(&mut self, _port: u16, _w: Width, _v: u32, _now: u64) -> ServiceOutcome {
        ServiceOutcome::Refused
    }
    /// `stop.if` met a nonzero value `s`: whether the stop it owes is
    /// needed now. The default says yes (a stop is always exact: the driver
    /// looks and resumes). A machine that knows what the driver would look
    /// for may say no; toyvm: `s` is the flags that rose (IF, TF), and with
    /// only IF risen and no interrupt requested the session would find
    /// nothing to do before the slice's end, as L1 goes on after an IRET or
    /// POPF that sets IF. The answer must depend only on machine state the
    /// driver also sees at that boundary.
    fn stop_if_needed(&mut self, _s: u32) -> bool {
        true
    }
    /// A machine service; the default (none) refuses.
    fn service(&mut self, _id: u16, _ctx: ServiceCtx<'_>, _now: u64) -> ServiceOutcome {
        ServiceOutcome::Refused
    }
    /// Runs one x87 instruction (see [`crate::ir::Op::X87`]), or refuses
    /// before any effect. The default has no FPU: it always refuses.
    fn x87(&mut self, _c: X87Call<'_>, _now: u64) -> Result<X87Done, Refused> {
        Err(Refused)
    }
}
