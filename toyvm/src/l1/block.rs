//! Compiling a block: guest code decoded once into threaded form.
//!
//! A block starts at (CS base, IP) and runs straight until an instruction
//! that ends it (control transfer, REP string, HLT, host call, IF/shadow
//! changes, an x87 op is fine), the size cap, or a byte it may not cache
//! (device window, volatile byte). Each instruction keeps the CPU decoder's
//! `Op` (same handler, same operands: semantics are shared by construction)
//! plus its IP, the next IP and its class bits. A block also records the
//! physical bytes it came from and what spin shape it has.
//!
//! This module owns block formation and the block record; it must not run
//! guest code or decide retirement.

use super::classify::{self, IN, INVALID, JREL, PURE, TERM};
use super::kinds::{self, Kinds};
use super::smc::{Smc, PHYS_LIMIT};
use super::tracked::Tracked;
use crate::bus::{EngineBus, Width};
use crate::cpu::decode::{self, MAX_LEN};
use crate::cpu::op::{Op, Opnd};
use iced_x86::{Mnemonic as M, OpKind, Register};

/// Most instructions in one block.
pub const MAX_OPS: usize = 64;
/// "No block" in links and caches.
pub const NONE: u32 = u32::MAX;

/// One threaded op: the CPU's decoded Op and what L1 needs around it.
pub struct TOp<B> {
    pub op: Op<Tracked<B>>,
    /// IP of this instruction.
    pub ip: u32,
    /// IP of the next one (wrapping at 64 KiB).
    pub next_ip: u32,
    /// `classify` bits.
    pub class: u16,
    /// `kinds` kind of the handler (GENERIC: call through the pointer).
    pub kind: u8,
    /// With class `DEVFETCH`: the linear address of the last device byte of
    /// its 15-byte fetch window, whose read the dispatch loop replays before
    /// each dispatch (what L0's fetch leaves in the device). `NONE`
    /// otherwise.
    pub fetch_dev: u32,
    /// How many ops from this one on (this one included, up to the block's
    /// end) the hot loop may run without the general path: 0 when this op
    /// needs it (`run::needs_general`, which depends on the block's spin
    /// shape). Set by [`compile`].
    pub hot_run: u8,
}

/// The spin shape of a block that branches back to its own head.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spin {
    None,
    /// Every op is `PURE`: with memory unchanged, an iteration that ends in
    /// the state it began with repeats forever (checked at run time).
    Mem,
    /// `IN acc, port` at `in_idx`, then ops on the accumulator only, then
    /// the branch back: the branch depends on the port value under `mask`.
    Port {
        in_idx: u8,
        mask: u32,
        w: Width,
    },
    /// `LOOP $`: a delay loop of CX (ECX with a 32-bit address size)
    /// dispatches whose end state is known in advance.
    Count,
}

/// A compiled block.
pub struct Block<B> {
    /// `key(cs_base, ip)` of its first instruction.
    pub key: u64,
    pub cs_base: u32,
    pub valid: bool,
    pub ops: Vec<TOp<B>>,
    /// Physical bytes the ops were decoded from (half-open, merged), plain
    /// memory only: they carry code bits.
    pub ranges: Vec<(u32, u32)>,
    /// Device-window bytes the ops were decoded from (no code bits: any
    /// store into a device window retires every device block).
    pub dev_ranges: Vec<(u32, u32)>,
    /// Successor cache: [fall-through, taken/indirect].
    pub link: [u32; 2],
    pub spin: Spin,
    /// Guest clock when it was compiled.
    pub born: u64,
    /// The bytes of `ranges` then `dev_ranges`, as compiled.
    pub src: Vec<u8>,
    /// `L1::epoch` when its bytes were last known to match memory.
    pub epoch: u32,
    /// [`A20_ANY`], or the gate state it was compiled under ([`A20_OFF`],
    /// [`A20_ON`]) when some fetch window of its ops reaches a CPU address
    /// with bit 20 set (the HMA, in real mode): what such an address names
    /// depends on the gate. The gate only clears bit 20 (`EngineBus::phys`),
    /// so a CPU address with bit 20 clear names the same byte under both
    /// states: a block none of whose fetched addresses has it set decodes
    /// the same bytes, with the same cacheability and the same physical
    /// ranges (code bits), whichever way the gate stands. A block tagged
    /// with one state is kept while the gate stands the other way but
    /// never entered then (links, caches and maps check the tag).
    pub a20: u8,
}

/// Bit 20 of a CPU (pre-gate) physical address: the only bit the A20 gate
/// masks (`EngineBus::phys`).
pub const A20_BIT: u32 = 1 << 20;
/// `Block::a20` tags: runs under either gate state, only with the gate
/// closed, only with it open.
pub const A20_ANY: u8 = 0;
pub const A20_OFF: u8 = 1;
pub const A20_ON: u8 = 2;

/// The tag of code compiled now: [`A20_ANY`] unless some fetched CPU
/// address had bit 20 set (`hi`), else the gate's state.
#[inline]
pub fn a20_tag<B: EngineBus>(bus: &B, hi: bool) -> u8 {
    if !hi {
        A20_ANY
    } else if bus.phys(A20_BIT) & A20_BIT != 0 {
        A20_ON
    } else {
        A20_OFF
    }
}

/// The cache key of code at `cs_base:ip` (real mode: the code size is always
/// 16 bits, so base and IP name the code completely).
#[inline(always)]
pub fn key(cs_base: u32, ip: u32) -> u64 {
    (cs_base as u64) << 32 | ip as u64
}

/// Physical addresses of the 15-byte fetch window at `cs_base:ip` (the fetch
/// wraps at the end of the segment, as `l0::fetch` does).
fn window<B: EngineBus>(bus: &Tracked<B>, cs_base: u32, ip: u32) -> [u32; MAX_LEN] {
    let mut p = [0u32; MAX_LEN];
    for (i, x) in p.iter_mut().enumerate() {
        *x = bus.phys(cs_base.wrapping_add(ip.wrapping_add(i as u32) & 0xFFFF));
    }
    p
}

/// How a fetch window can be cached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fetch {
    /// Every byte can be read without side effects.
    Plain,
    /// Every byte is plain or in a device window (`EngineBus::code_device`);
    /// the index is the last device byte's.
    Device(usize),
    /// Some byte can be neither.
    No,
}

/// Whether every byte of the window can be read without side effects and
/// cached, or (with `device`) cached with its fetch effect replayed.
pub(crate) fn cacheable<B: EngineBus>(bus: &Tracked<B>, p: &[u32; MAX_LEN], device: bool) -> Fetch {
    let mut i = 0;
    let mut last_dev = None;
    while i < MAX_LEN {
        let s = p[i];
        let mut j = i + 1;
        while j < MAX_LEN && p[j] == p[j - 1].wrapping_add(1) {
            j += 1;
        }
        let e = p[j - 1].wrapping_add(1);
        if e > PHYS_LIMIT || s >= e {
            return Fetch::No;
        }
        if !bus.code_cacheable(s, e) {
            // Byte by byte: a run may straddle the window's edge.
            for k in i..j {
                if bus.code_cacheable(p[k], p[k] + 1) {
                    continue;
                }
                if !(device && bus.code_device(p[k], p[k] + 1)) {
                    return Fetch::No;
                }
                last_dev = Some(k);
            }
        }
        i = j;
    }
    match last_dev {
        Some(k) => Fetch::Device(k),
        None => Fetch::Plain,
    }
}

pub(crate) fn push_range(ranges: &mut Vec<(u32, u32)>, p: u32) {
    if let Some(last) = ranges.last_mut() {
        if last.1 == p {
            last.1 = p + 1;
            return;
        }
        if last.0 <= p && p < last.1 {
            return;
        }
    }
    ranges.push((p, p + 1));
}

/// The bytes of physical `ranges` as a read would return them, without a
/// read's side effects (`EngineBus::peek8`).
pub fn read_ranges<B: EngineBus>(bus: &mut Tracked<B>, ranges: &[(u32, u32)]) -> Vec<u8> {
    let mut v = Vec::new();
    for &(s, e) in ranges {
        for p in s..e {
            v.push(bus.peek8(p));
        }
    }
    v
}

/// The result of compiling at one address.
pub struct Compiled<B> {
    pub ops: Vec<TOp<B>>,
    pub ranges: Vec<(u32, u32)>,
    /// Device-window bytes (empty unless compiled with `device`).
    pub dev_ranges: Vec<(u32, u32)>,
    /// The bytes of `ranges`, in order, as compiled.
    pub src: Vec<u8>,
    pub spin: Spin,
    /// See [`Block::a20`].
    pub a20: u8,
}

/// Decodes a block at `cs_base:ip`. Returns `None` when the first
/// instruction cannot be cached (the caller runs it uncached). Device
/// windows are not cached (see [`compile_with`]).
pub fn compile<B: EngineBus>(
    bus: &mut Tracked<B>,
    smc: &Smc,
    kinds: &Kinds,
    cs_base: u32,
    ip0: u32,
    max_ops: usize,
) -> Option<Compiled<B>> {
    compile_with(bus, smc, kinds, cs_base, ip0, max_ops, false)
}

/// [`compile`], and with `device` also code whose fetch windows reach into
/// a device window (`EngineBus::code_device`): such ops get class
/// `DEVFETCH` and the address whose read replays their fetch. A block never
/// mixes: it is cut where its code moves between plain and device fetches.
pub fn compile_with<B: EngineBus>(
    bus: &mut Tracked<B>,
    smc: &Smc,
    kinds: &Kinds,
    cs_base: u32,
    ip0: u32,
    max_ops: usize,
    device: bool,
) -> Option<Compiled<B>> {
    let mut ops: Vec<TOp<B>> = Vec::new();
    let mut ranges = Vec::new();
    let mut dev_ranges = Vec::new();
    let mut ip = ip0;
    let mut block_dev = None;
    let mut a20 = false;
    while ops.len() < max_ops {
        let p = window(bus, cs_base, ip);
        let fetch = cacheable(bus, &p, device);
        let is_dev = match fetch {
            Fetch::No => break,
            Fetch::Plain => false,
            Fetch::Device(_) => true,
        };
        if *block_dev.get_or_insert(is_dev) != is_dev {
            break;
        }
        let mut bytes = [0u8; MAX_LEN];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = bus.peek8(cs_base.wrapping_add(ip.wrapping_add(i as u32) & 0xFFFF));
        }
        // Mirrors l0::is_hostcall: the host-service bytes inside the ROM window.
        let lin = cs_base.wrapping_add(ip);
        let hostcall = bytes[0] == 0xFE && bytes[1] == 0x38 && (0xF_0000..0x10_0000).contains(&lin);
        let (op, mut class) = if hostcall {
            (
                decode::hostcall::<Tracked<B>>(&bytes),
                classify::HOSTCALL_CLASS,
            )
        } else {
            let op = decode_op::<B>(&bytes, ip);
            let ins = classify::iced(&bytes, ip);
            let c = classify::classify(&ins, &op, false);
            (op, c)
        };
        let fetch_dev = match fetch {
            Fetch::Device(k) => {
                class |= classify::DEVFETCH;
                cs_base.wrapping_add(ip.wrapping_add(k as u32) & 0xFFFF)
            }
            _ => NONE,
        };
        let dep = if class & INVALID != 0 {
            MAX_LEN
        } else {
            op.len as usize
        };
        if p[..dep].iter().any(|&x| smc.is_volatile(x)) {
            break;
        }
        // The whole window, not just the op: L0's fetch reads all of it,
        // and under the other gate state its tail might name a device.
        a20 |= (0..MAX_LEN as u32)
            .any(|i| cs_base.wrapping_add(ip.wrapping_add(i) & 0xFFFF) & A20_BIT != 0);
        for &x in &p[..dep] {
            if is_dev && bus.code_device(x, x + 1) {
                push_range(&mut dev_ranges, x);
            } else {
                push_range(&mut ranges, x);
            }
        }
        let next_ip = ip.wrapping_add(op.len as u32) & 0xFFFF;
        let kind = if class & classify::SAFE != 0 {
            kinds.of(&op)
        } else {
            kinds::GENERIC
        };
        ops.push(TOp {
            op,
            ip,
            next_ip,
            class,
            kind,
            fetch_dev,
            hot_run: 0,
        });
        if class & TERM != 0 {
            break;
        }
        ip = next_ip;
    }
    if ops.is_empty() {
        return None;
    }
    let spin = spin_shape(&ops, ip0);
    let mut run = 0u8;
    for t in ops.iter_mut().rev() {
        run = if super::run::needs_general(t.class, spin) {
            0
        } else {
            run.saturating_add(1)
        };
        t.hot_run = run;
    }
    let mut src = read_ranges(bus, &ranges);
    src.extend(read_ranges(bus, &dev_ranges));
    Some(Compiled {
        ops,
        ranges,
        dev_ranges,
        src,
        spin,
        a20: a20_tag(bus, a20),
    })
}

/// The CPU decoder, as L1 calls it (one call site, so the handler pointers
/// `kinds` records are the ones blocks get).
pub fn decode_op<B: EngineBus>(bytes: &[u8; MAX_LEN], ip: u32) -> Op<Tracked<B>> {
    decode::decode::<Tracked<B>>(bytes, ip)
}

/// The static target of a `JREL` op (None if it would be #GP).
pub fn rel_target<B>(t: &TOp<B>) -> Option<u32> {
    let target = t.next_ip.wrapping_add(t.op.imm);
    if t.op.o32 {
        (target <= 0xFFFF).then_some(target)
    } else {
        Some(target & 0xFFFF)
    }
}

/// Recognises the spin shapes of `spin::` folds.
fn spin_shape<B>(ops: &[TOp<B>], head: u32) -> Spin {
    let last = ops.last().unwrap();
    if last.class & JREL == 0 || rel_target(last) != Some(head) {
        return Spin::None;
    }
    // LOOP $ counts down; other LOOP/JCXZ shapes are not spins.
    if is_loop_op(last) {
        let i = last
            .op
            .bytes
            .iter()
            .position(|&x| x == 0xE2 || x == 0xE0 || x == 0xE1 || x == 0xE3);
        let plain_loop = i.is_some_and(|i| last.op.bytes[i] == 0xE2);
        return if ops.len() == 1 && plain_loop {
            Spin::Count
        } else {
            Spin::None
        };
    }
    let body = &ops[..ops.len() - 1];
    if body.iter().all(|t| t.class & PURE != 0) {
        return Spin::Mem;
    }
    port_shape(body)
}

fn is_loop_op<B>(t: &TOp<B>) -> bool {
    let b = &t.op.bytes;
    let i = b
        .iter()
        .position(|&x| {
            !matches!(
                x,
                0x66 | 0x67 | 0x26 | 0x2E | 0x36 | 0x3E | 0x64 | 0x65 | 0xF2 | 0xF3
            )
        })
        .unwrap_or(0);
    matches!(b[i], 0xE0..=0xE3)
}

/// `[IN acc, port]` followed by TEST/AND/CMP/OR on the accumulator with an
/// immediate, the accumulator itself, or a register the body never writes
/// (nothing but the accumulator and the flags is written). The branch then
/// depends only on the value read under `mask`: the AND immediate when the
/// first op masks the accumulator, the TEST immediate when it is the only op,
/// else every bit.
fn port_shape<B>(body: &[TOp<B>]) -> Spin {
    if body.is_empty() || body[0].class & IN == 0 {
        return Spin::None;
    }
    let inop = &body[0];
    let w = inop.op.w;
    let acc = match inop.op.dst {
        Opnd::R8(0) | Opnd::R16(0) | Opnd::R32(0) => inop.op.dst,
        _ => return Spin::None,
    };
    let mut mask = w.mask();
    for (k, t) in body[1..].iter().enumerate() {
        let ins = classify::iced(&t.op.bytes, t.ip);
        let m = ins.mnemonic();
        if !matches!(m, M::Test | M::And | M::Cmp | M::Or) || ins.op_count() != 2 || t.op.dst != acc
        {
            return Spin::None;
        }
        match ins.op1_kind() {
            OpKind::Immediate8
            | OpKind::Immediate16
            | OpKind::Immediate32
            | OpKind::Immediate8to16
            | OpKind::Immediate8to32 => {
                let first_and = k == 0 && m == M::And;
                let only_test = k == 0 && m == M::Test && body.len() == 2;
                if first_and || only_test {
                    mask = t.op.imm & w.mask();
                }
            }
            OpKind::Register => {
                let r = ins.op1_register();
                if t.op.src != acc && overlaps_acc(r, w) {
                    return Spin::None;
                }
            }
            _ => return Spin::None,
        }
    }
    if mask == 0 {
        return Spin::None;
    }
    Spin::Port { in_idx: 0, mask, w }
}

/// Whether register `r` shares bits with the accumulator of width `w`.
fn overlaps_acc(r: Register, w: Width) -> bool {
    match w {
        Width::W8 => matches!(r, Register::AL | Register::AX | Register::EAX),
        _ => matches!(
            r,
            Register::AL | Register::AH | Register::AX | Register::EAX
        ),
    }
}
