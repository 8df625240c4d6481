//! The contract between compiled programs and the Rust around them: the
//! [`Ctx`] block a compiled function receives (layout fixed, `repr(C)`,
//! offsets read by the code generator through `offset_of!`), the exit codes
//! it returns, and the out-of-line helpers it calls for everything that is
//! not plain arithmetic on registers (checked memory, ports, services, x86
//! helpers, flag evaluation it cannot do inline).
//!
//! Every helper computes exactly what the reference interpreter and E1
//! compute, through the same functions (`shared_ir::ir::sem`, the lazy-flag
//! record, the `MachineRuntime` calls), so the compiled code only decides
//! *when* to call them. This module must not generate code and must not
//! know about the arena or the driver.

use shared_ir::flags::{FlagKind, LazyFlags, Width};
use shared_ir::ir::{sem, ArithOp, Helper, ShiftOp};
use shared_ir::machine::{MachineRuntime, ServiceCtx, ServiceOutcome, StoreOutcome};
use std::ffi::c_void;

/// Exit codes a compiled program returns (the reason; the site's IP and
/// unbill, and for links and lookups the key and link word, are in [`Ctx`]).
pub mod code {
    pub const BUDGET: u32 = 0;
    pub const FALLBACK: u32 = 1;
    pub const STOP: u32 = 2;
    pub const SMC: u32 = 3;
    pub const SERVICE: u32 = 4;
    pub const SHADOW: u32 = 5;
    /// A static exit: `exit_key`, and `exit_slot` its link word in the arena
    /// (0 when the program has none for the key).
    pub const LINK: u32 = 6;
    /// A computed exit: `exit_key`; `exit_ip` is the computed IP.
    pub const INDIRECT: u32 = 7;
}

/// What a compiled program reads and writes besides its own registers.
///
/// `now(site) = base - left - site.unbill`: `base` is the clock at entry plus
/// the budget then left, so the exact dispatch of an instruction is one
/// subtraction, as in E1.
#[repr(C)]
pub struct Ctx {
    /// E1's vreg file (guest registers first, then the shared temporaries).
    pub vregs: *mut u32,
    /// E1's word memory (link words are read in place).
    pub words: *const u32,
    /// The `MachineRuntime` (type fixed when the program was compiled).
    pub rt: *mut c_void,
    /// The runtime's page view (refreshed after every runtime call).
    pub ram: *mut u8,
    pub ram_len: u64,
    pub pages: *const u32,
    pub pages_len: u64,
    pub base: i64,
    /// Dispatches the budget still covers (may go negative after `clock`).
    pub left: i64,
    /// The flag record: eager, kind, a, b, r (spilled here around helpers).
    pub fl: [u32; 5],
    /// 0 nothing owed, 1 a store hit code, 2 a device or service asked.
    pub pending: u32,
    pub exit_ip: u32,
    pub exit_unbill: u32,
    pub exit_slot: u32,
    pub exit_key: u64,
    /// Results of [`h_call`].
    pub res: [u32; 2],
}

impl Ctx {
    /// The flag record as the lab's type.
    pub fn flags(&self) -> LazyFlags {
        unpack(self.fl)
    }
}

/// The record as five words (eager, kind, a, b, r).
pub fn pack(f: LazyFlags) -> [u32; 5] {
    [f.eager, f.kind as u32, f.a, f.b, f.r]
}

/// The five words back as a record (an out-of-range kind reads as eager,
/// as E1's `FLAGSREC` does).
pub fn unpack(w: [u32; 5]) -> LazyFlags {
    LazyFlags {
        eager: w[0],
        kind: FlagKind::from_u8(w[1] as u8).unwrap_or(FlagKind::Eager),
        a: w[2],
        b: w[3],
        r: w[4],
    }
}

/// Width numbering shared with the code generator (0: 8, 1: 16, 2: 32).
pub fn width(i: u32) -> Width {
    match i {
        0 => Width::W8,
        1 => Width::W16,
        _ => Width::W32,
    }
}

/// Points the context's page view at what the runtime serves now.
pub fn refresh_view<M: MachineRuntime>(c: &mut Ctx, m: &mut M) {
    let f = m.fast_mem();
    c.ram = f.ram.as_mut_ptr();
    c.ram_len = f.ram.len() as u64;
    c.pages = f.pages.as_ptr();
    c.pages_len = f.pages.len() as u64;
}

/// # Safety (for every helper below)
/// `c` is the live context of the running compiled program, whose `rt`
/// points at the `M` it was compiled for, borrowed mutably for the call.
unsafe fn parts<'a, M>(c: *mut Ctx) -> (&'a mut Ctx, &'a mut M) {
    let c = &mut *c;
    let m = &mut *(c.rt as *mut M);
    (c, m)
}

/// Checked read: the value, or bit 32 set when refused.
pub extern "C" fn h_read<M: MachineRuntime>(c: *mut Ctx, lin: u32, w: u32, now: u64) -> u64 {
    let (c, m) = unsafe { parts::<M>(c) };
    let w = width(w);
    let r = match m.read(lin, w, now) {
        Ok(v) => (v & w.mask()) as u64,
        Err(_) => 1 << 32,
    };
    refresh_view(c, m);
    r
}

/// Checked write: 0 done, 1 hit code, 2 refused.
pub extern "C" fn h_write<M: MachineRuntime>(
    c: *mut Ctx,
    lin: u32,
    w: u32,
    v: u32,
    now: u64,
) -> u32 {
    let (c, m) = unsafe { parts::<M>(c) };
    let r = match m.write(lin, width(w), v, now) {
        StoreOutcome::Done => 0,
        StoreOutcome::HitCode => 1,
        StoreOutcome::Refused => 2,
    };
    refresh_view(c, m);
    r
}

/// Port read: the value, bit 32 a stop asked for, bit 33 refused.
pub extern "C" fn h_in<M: MachineRuntime>(c: *mut Ctx, port: u32, w: u32, now: u64) -> u64 {
    let (c, m) = unsafe { parts::<M>(c) };
    let w = width(w);
    let r = match m.port_read(port as u16, w, now) {
        Ok((v, stop)) => (v & w.mask()) as u64 | (stop as u64) << 32,
        Err(_) => 1 << 33,
    };
    refresh_view(c, m);
    r
}

fn outcome(o: ServiceOutcome) -> u32 {
    match o {
        ServiceOutcome::Continue => 0,
        ServiceOutcome::StopAfter => 1,
        ServiceOutcome::Refused => 2,
    }
}

/// Port write: 0 continue, 1 stop after, 2 refused.
pub extern "C" fn h_out<M: MachineRuntime>(
    c: *mut Ctx,
    port: u32,
    w: u32,
    v: u32,
    now: u64,
) -> u32 {
    let (c, m) = unsafe { parts::<M>(c) };
    let r = outcome(m.port_out(port as u16, width(w), v, now));
    refresh_view(c, m);
    r
}

/// A machine service over the guest vregs (in memory) and the flags (in
/// `fl`): 0 continue, 1 stop after, 2 refused.
pub extern "C" fn h_service<M: MachineRuntime>(c: *mut Ctx, id: u32, guest: u32, now: u64) -> u32 {
    let (c, m) = unsafe { parts::<M>(c) };
    let mut fl = unpack(c.fl);
    let n = (guest as usize).min(255);
    let vregs = unsafe { std::slice::from_raw_parts_mut(c.vregs, n) };
    let r = outcome(m.service(
        id as u16,
        ServiceCtx {
            vregs,
            flags: &mut fl,
        },
        now,
    ));
    c.fl = pack(fl);
    refresh_view(c, m);
    r
}

/// An x86 helper (MUL, DIV, ...): 0 with the results in `res`, 1 refused.
pub extern "C" fn h_call(c: *mut Ctx, helper: u32, a0: u32, a1: u32, a2: u32) -> u32 {
    let c = unsafe { &mut *c };
    let Some(&h) = Helper::ALL.get(helper as usize) else {
        return 1;
    };
    let mut fl = unpack(c.fl);
    match sem::helper(h, [a0, a1, a2], &mut fl) {
        Ok(r) => {
            c.res = r;
            c.fl = pack(fl);
            0
        }
        Err(_) => 1,
    }
}

const ARITH_OPS: [ArithOp; 10] = [
    ArithOp::Add,
    ArithOp::Adc,
    ArithOp::Sub,
    ArithOp::Sbb,
    ArithOp::And,
    ArithOp::Or,
    ArithOp::Xor,
    ArithOp::Inc,
    ArithOp::Dec,
    ArithOp::Neg,
];

/// Index of an arith op for [`h_arith`].
pub fn arith_index(op: ArithOp) -> u32 {
    ARITH_OPS.iter().position(|o| *o == op).unwrap_or(0) as u32
}

/// x86 arithmetic with its flag record (flags in `fl`).
pub extern "C" fn h_arith(c: *mut Ctx, op: u32, w: u32, a: u32, b: u32) -> u32 {
    let c = unsafe { &mut *c };
    let mut fl = unpack(c.fl);
    let r = sem::arith(ARITH_OPS[op as usize % 10], width(w), a, b, &mut fl);
    c.fl = pack(fl);
    r
}

const SHIFT_OPS: [ShiftOp; 7] = [
    ShiftOp::Rol,
    ShiftOp::Ror,
    ShiftOp::Rcl,
    ShiftOp::Rcr,
    ShiftOp::Shl,
    ShiftOp::Shr,
    ShiftOp::Sar,
];

/// Index of a shift op for [`h_shift`].
pub fn shift_index(op: ShiftOp) -> u32 {
    SHIFT_OPS.iter().position(|o| *o == op).unwrap_or(0) as u32
}

/// x86 shift or rotate (flags in `fl`).
pub extern "C" fn h_shift(c: *mut Ctx, op: u32, w: u32, a: u32, count: u32) -> u32 {
    let c = unsafe { &mut *c };
    let mut fl = unpack(c.fl);
    let r = sem::shift(SHIFT_OPS[op as usize % 7], width(w), a, count, &mut fl);
    c.fl = pack(fl);
    r
}

/// FLAGS bits in `mask` from `v` (flags in `fl`).
pub extern "C" fn h_flagsset(c: *mut Ctx, v: u32, mask: u32) {
    let c = unsafe { &mut *c };
    let mut fl = unpack(c.fl);
    let bits = (fl.bits() & !mask) | (v & mask);
    fl.set_bits(bits);
    c.fl = pack(fl);
}

/// x86 condition `cc` of a record passed by value.
pub extern "C" fn h_cond(eager: u32, kind: u32, a: u32, b: u32, r: u32, cc: u32) -> u32 {
    unpack([eager, kind, a, b, r]).cond(cc as u8) as u32
}

/// The whole FLAGS value of a record passed by value.
pub extern "C" fn h_bits(eager: u32, kind: u32, a: u32, b: u32, r: u32) -> u32 {
    unpack([eager, kind, a, b, r]).bits()
}

/// Carry flag of a record passed by value (INC/DEC keep it, ADC/SBB read it).
pub extern "C" fn h_cf(eager: u32, kind: u32, a: u32, b: u32, r: u32) -> u32 {
    unpack([eager, kind, a, b, r]).cf() as u32
}
