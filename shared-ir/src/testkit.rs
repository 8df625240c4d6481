//! Test kit: a fake machine with every kind of memory the engines must handle,
//! and a generator of random well-formed IR programs. Used by the differential
//! tests (E1 against the reference interpreter) and the benches.
//!
//! [`FakeMachine`] has plain RAM (fast path), a device window whose reads have
//! side effects and depend on the clock (like planar VGA latches and 3DAh), a
//! code region (stores hit code), a refusing region (stands for accesses only
//! a finer tier does), clock-dependent ports, a port that asks for a stop,
//! services, and a toy x87 FPU. Every effect is logged with its exact dispatch so two runs can be
//! compared event by event. It must stay deterministic.

use crate::flags::{LazyFlags, Width, CF};
use crate::ir::*;
use crate::machine::*;

/// Linear size of the fake RAM (1 MiB + 64 KiB, the real-mode reach).
pub const RAM_BYTES: usize = 0x11_0000;
/// Device window `[DEVICE_LO, DEVICE_HI)`.
pub const DEVICE_LO: u32 = 0xA_0000;
pub const DEVICE_HI: u32 = 0xA_1000;
/// Code region: stores report `HitCode`.
pub const CODE_LO: u32 = 0x7000;
pub const CODE_HI: u32 = 0x7400;
/// Refusing region.
pub const REFUSE_LO: u32 = 0xF_0000;
pub const REFUSE_HI: u32 = 0xF_0100;
/// Port whose write asks for a stop after the instruction.
pub const PORT_STOP: u16 = 0x99;
/// Port whose accesses are refused.
pub const PORT_REFUSE: u16 = 0x9A;

/// One observable effect, stamped with the exact dispatch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    DevRead {
        lin: u32,
        w: u8,
        now: u64,
    },
    DevWrite {
        lin: u32,
        w: u8,
        v: u32,
        now: u64,
    },
    CodeWrite {
        lin: u32,
        w: u8,
        v: u32,
        now: u64,
    },
    PortIn {
        port: u16,
        now: u64,
    },
    PortOut {
        port: u16,
        v: u32,
        now: u64,
    },
    Service {
        id: u16,
        now: u64,
    },
    /// An x87 instruction: where it ran, its operand, and the FPU state after.
    X87 {
        ip: u32,
        cs: u16,
        mem: Option<X87Mem>,
        state: u64,
        now: u64,
    },
}

/// The fake machine.
#[derive(Clone)]
pub struct FakeMachine {
    pub ram: Vec<u8>,
    pub pages: Vec<u32>,
    pub latch: u32,
    pub log: Vec<Event>,
    /// The toy FPU's state ([`MachineRuntime::x87`]).
    pub fpu: u64,
}

impl Default for FakeMachine {
    fn default() -> Self {
        Self::new()
    }
}

fn in_range(lin: u32, n: u32, lo: u32, hi: u32) -> bool {
    lin < hi && lin.wrapping_add(n) > lo
}

impl FakeMachine {
    /// Page granule of the fast view (256 bytes).
    pub const SHIFT: u32 = 8;

    /// A fresh machine (a clone of one built once per process).
    pub fn new() -> FakeMachine {
        static TEMPLATE: std::sync::OnceLock<FakeMachine> = std::sync::OnceLock::new();
        TEMPLATE.get_or_init(Self::build).clone()
    }

    fn build() -> FakeMachine {
        let mut ram = vec![0u8; RAM_BYTES];
        // Deterministic non-zero contents.
        let mut x = 0x1234_5678u32;
        for b in ram.iter_mut() {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            *b = x as u8;
        }
        let n = RAM_BYTES >> Self::SHIFT;
        let pages = (0..n as u32)
            .map(|p| {
                let lin = p << Self::SHIFT;
                let mut e = lin;
                let end = lin + (1 << Self::SHIFT);
                let special = |lo, hi| lin < hi && end > lo;
                if !special(DEVICE_LO, DEVICE_HI) && !special(REFUSE_LO, REFUSE_HI) {
                    e |= PAGE_READ;
                    if !special(CODE_LO, CODE_HI) {
                        e |= PAGE_WRITE;
                    }
                }
                e
            })
            .collect();
        FakeMachine {
            ram,
            pages,
            latch: 0,
            log: Vec::new(),
            fpu: 0,
        }
    }

    /// Marks every page slow, so each access takes the checked path.
    pub fn all_slow(&mut self) {
        for p in &mut self.pages {
            *p &= !(PAGE_READ | PAGE_WRITE);
        }
    }

    fn plain_read(&self, lin: u32, n: u32) -> u32 {
        let mut v = 0u32;
        for i in 0..n {
            v |= (self.ram[(lin + i) as usize] as u32) << (8 * i);
        }
        v
    }

    fn plain_write(&mut self, lin: u32, n: u32, v: u32) {
        for i in 0..n {
            self.ram[(lin + i) as usize] = (v >> (8 * i)) as u8;
        }
    }
}

impl MachineRuntime for FakeMachine {
    const PAGE_SHIFT: u32 = Self::SHIFT;

    fn fast_mem(&mut self) -> FastMem<'_> {
        FastMem {
            ram: &mut self.ram,
            pages: &self.pages,
        }
    }

    fn read(&mut self, lin: u32, w: Width, now: u64) -> Result<u32, Refused> {
        let n = w.bytes();
        if lin as u64 + n as u64 > RAM_BYTES as u64 || in_range(lin, n, REFUSE_LO, REFUSE_HI) {
            return Err(Refused);
        }
        if in_range(lin, n, DEVICE_LO, DEVICE_HI) {
            // A read with a side effect that depends on the exact dispatch.
            self.latch = self.latch.rotate_left(5) ^ lin ^ (now as u32);
            self.log.push(Event::DevRead {
                lin,
                w: n as u8,
                now,
            });
            return Ok(self.latch & w.mask());
        }
        Ok(self.plain_read(lin, n))
    }

    fn write(&mut self, lin: u32, w: Width, v: u32, now: u64) -> StoreOutcome {
        let n = w.bytes();
        if lin as u64 + n as u64 > RAM_BYTES as u64 || in_range(lin, n, REFUSE_LO, REFUSE_HI) {
            return StoreOutcome::Refused;
        }
        if in_range(lin, n, DEVICE_LO, DEVICE_HI) {
            self.latch ^= v.wrapping_mul(31) ^ now as u32;
            self.log.push(Event::DevWrite {
                lin,
                w: n as u8,
                v,
                now,
            });
            return StoreOutcome::Done;
        }
        self.plain_write(lin, n, v);
        if in_range(lin, n, CODE_LO, CODE_HI) {
            self.log.push(Event::CodeWrite {
                lin,
                w: n as u8,
                v,
                now,
            });
            return StoreOutcome::HitCode;
        }
        StoreOutcome::Done
    }

    fn port_in(&mut self, port: u16, w: Width, now: u64) -> Result<u32, Refused> {
        if port == PORT_REFUSE {
            return Err(Refused);
        }
        self.log.push(Event::PortIn { port, now });
        Ok((port as u32 ^ (now as u32).wrapping_mul(2654435761) ^ self.latch) & w.mask())
    }

    fn port_out(&mut self, port: u16, _w: Width, v: u32, now: u64) -> ServiceOutcome {
        if port == PORT_REFUSE {
            return ServiceOutcome::Refused;
        }
        self.log.push(Event::PortOut { port, v, now });
        self.latch = self.latch.wrapping_add(v);
        if port == PORT_STOP {
            ServiceOutcome::StopAfter
        } else {
            ServiceOutcome::Continue
        }
    }

    /// A toy FPU (one 64-bit state word): refuses an encoding ending in
    /// FFh, and a memory operand whose 8 bytes leave the segment or touch
    /// anything but RAM; mixes the operand, the pointers and the bytes into
    /// the state; stores 4 bytes of it back when the first byte is odd (a
    /// store may hit code); gives a result when the encoding ends in E0h
    /// (as FNSTSW AX does).
    fn x87(&mut self, c: X87Call<'_>, now: u64) -> Result<X87Done, Refused> {
        if c.insn.last() == Some(&0xFF) {
            return Err(Refused);
        }
        let mut v = 0u64;
        let mut lin = 0;
        if let Some(m) = c.mem {
            lin = m.base.wrapping_add(m.off);
            let plain = lin as u64 + 8 <= RAM_BYTES as u64
                && !in_range(lin, 8, DEVICE_LO, DEVICE_HI)
                && !in_range(lin, 8, REFUSE_LO, REFUSE_HI);
            if m.off as u64 + 7 > m.limit as u64 || !plain {
                return Err(Refused);
            }
            v = self.plain_read(lin, 4) as u64 | (self.plain_read(lin + 4, 4) as u64) << 32;
        }
        let mut h = 0u64;
        for b in c.insn {
            h = h.wrapping_mul(0x100_0000_01B3) ^ *b as u64;
        }
        self.fpu = self.fpu.rotate_left(7)
            ^ v
            ^ h
            ^ c.ip as u64
            ^ (c.cs as u64) << 16
            ^ c.mem.map_or(0, |m| (m.sel as u64) << 32);
        self.log.push(Event::X87 {
            ip: c.ip,
            cs: c.cs,
            mem: c.mem,
            state: self.fpu,
            now,
        });
        let mut done = X87Done::default();
        if c.mem.is_some() && c.insn[0] & 1 == 1 {
            self.plain_write(lin, 4, self.fpu as u32);
            done.hit_code = in_range(lin, 4, CODE_LO, CODE_HI);
        }
        if c.insn.last() == Some(&0xE0) {
            done.result = Some(self.fpu as u16);
        }
        Ok(done)
    }

    fn service(&mut self, id: u16, ctx: ServiceCtx<'_>, now: u64) -> ServiceOutcome {
        if id == 3 {
            return ServiceOutcome::Refused;
        }
        self.log.push(Event::Service { id, now });
        if let Some(r) = ctx.vregs.first_mut() {
            *r = r.wrapping_add(now as u32).wrapping_add(id as u32);
        }
        let f: &mut LazyFlags = ctx.flags;
        f.set_cf(now & 1 != 0);
        let _ = CF;
        if id == 2 {
            ServiceOutcome::StopAfter
        } else {
            ServiceOutcome::Continue
        }
    }
}

/// A small deterministic RNG (xorshift64*), so generated programs are
/// reproducible from a seed.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
}

/// Guest vregs of generated programs (the real16 model's 20).
pub const GEN_GUEST: u16 = 20;
/// Temporaries the generator defines at entry and may use.
pub const GEN_TEMPS: std::ops::Range<u16> = 20..28;
/// Loop counter temporary of generated loops (never a destination otherwise).
pub const GEN_COUNTER: u16 = 29;

/// Interesting initial guest states: registers near the 64 KiB edge, segment
/// bases that put accesses into RAM, the code region, the device window, the
/// refusing region and past the end of memory.
pub fn gen_state(r: &mut Rng) -> (Vec<u32>, LazyFlags) {
    let mut v = vec![0u32; 256];
    for x in v.iter_mut().take(8) {
        *x = match r.below(6) {
            0 => 0xFFFF,
            1 => 0xFFFE,
            2 => r.below(0x100) as u32,
            3 => 0x8000_0000 | r.below(0x10000) as u32,
            _ => r.next_u64() as u32,
        };
    }
    // Selectors and bases (real16: sel v8..v13, base v14..v19).
    let bases = [
        0x0u32, 0x6F00, 0x7000, DEVICE_LO, 0xEFF00, 0x10_0000, 0x2_0000,
    ];
    for s in 0..6 {
        let b = r.pick(&bases);
        v[8 + s] = b >> 4;
        v[14 + s] = b;
    }
    let flags = LazyFlags::from_bits(r.next_u64() as u32 & 0x0FD5);
    (v, flags)
}

fn gen_width(r: &mut Rng) -> Width {
    r.pick(&[Width::W8, Width::W16, Width::W16, Width::W32])
}

fn gen_vreg(r: &mut Rng) -> u16 {
    if r.chance(1, 3) {
        r.below(GEN_TEMPS.end as u64 - GEN_TEMPS.start as u64) as u16 + GEN_TEMPS.start
    } else {
        r.below(8) as u16
    }
}

/// A destination lane legal for width `w`.
fn gen_dst(r: &mut Rng, w: Width) -> Reg {
    let v = VReg(gen_vreg(r));
    let lane = match w {
        Width::W32 => Lane::D,
        Width::W16 => r.pick(&[Lane::D, Lane::W, Lane::W]),
        Width::W8 => r.pick(&[Lane::D, Lane::B, Lane::H]),
    };
    Reg { v, lane }
}

/// A source legal for width `w` (lane at least as wide, or any for 8 bits).
fn gen_src(r: &mut Rng, w: Width) -> Src {
    if r.chance(1, 4) {
        return Src::Imm(match r.below(4) {
            0 => r.below(4) as u32,
            1 => 0xFFFF_FFFF,
            2 => 0x8000,
            _ => r.next_u64() as u32,
        });
    }
    let v = VReg(if r.chance(1, 8) {
        8 + r.below(12) as u16
    } else {
        gen_vreg(r)
    });
    let lane = match w {
        Width::W32 => Lane::D,
        Width::W16 => r.pick(&[Lane::D, Lane::W]),
        Width::W8 => r.pick(&[Lane::D, Lane::W, Lane::B, Lane::H]),
    };
    Src::Reg(Reg { v, lane })
}

fn gen_any_lane(r: &mut Rng) -> Lane {
    r.pick(&[Lane::D, Lane::W, Lane::B, Lane::H])
}

fn gen_addr(r: &mut Rng) -> Addr {
    let seg = Some(VReg(14 + r.below(6) as u16));
    let base = if r.chance(3, 4) {
        Some(VReg(r.below(8) as u16))
    } else {
        None
    };
    let index = if r.chance(1, 3) {
        Some(VReg(r.below(8) as u16))
    } else {
        None
    };
    let a32 = r.chance(1, 6);
    Addr {
        seg,
        base,
        index,
        scale: if a32 && index.is_some() {
            r.below(4) as u8
        } else {
            0
        },
        disp: match r.below(3) {
            0 => 0,
            1 => r.below(16) as u32,
            _ => r.next_u64() as u32 & 0xFFFF,
        },
        asize: if a32 { AddrSize::A32 } else { AddrSize::A16 },
        limit: 0xFFFF,
    }
}

/// Options for [`gen_program`].
#[derive(Clone, Copy, Debug)]
pub struct GenOptions {
    /// Ops in the body.
    pub max_ops: u64,
    /// Wrap the body in a counted loop.
    pub looping: bool,
    /// Keys the terminators may link to.
    pub link_keys: &'static [u64],
}

fn site(r: &mut Rng, billed: u32) -> Site {
    Site::new(
        0x100 + r.below(64) as u32,
        r.below(billed as u64 + 1) as u32,
    )
}

/// One random op. `billed` is what the enclosing block's `clock.check`
/// billed (bounds the `unbill` of sites).
pub fn gen_op(r: &mut Rng, billed: u32) -> Op {
    let w = gen_width(r);
    match r.below(20) {
        0 | 1 => {
            let dst = Reg {
                v: VReg(gen_vreg(r)),
                lane: gen_any_lane(r),
            };
            let src = if r.chance(1, 3) {
                Src::Imm(r.next_u64() as u32)
            } else {
                Src::Reg(Reg {
                    v: VReg(gen_vreg(r)),
                    lane: gen_any_lane(r),
                })
            };
            Op::Mov { dst, src }
        }
        2 => {
            let from = r.pick(&[Width::W8, Width::W16]);
            let src = match gen_src(r, from) {
                Src::Reg(x) => x,
                Src::Imm(_) => Reg::d(0),
            };
            Op::Sext {
                dst: Reg {
                    v: VReg(gen_vreg(r)),
                    lane: gen_any_lane(r),
                },
                src,
                from,
            }
        }
        3 | 4 => Op::Alu {
            op: r.pick(&[
                AluOp::Add,
                AluOp::Sub,
                AluOp::And,
                AluOp::Or,
                AluOp::Xor,
                AluOp::Shl,
                AluOp::Shr,
                AluOp::Sar,
                AluOp::Mul,
            ]),
            w,
            dst: gen_dst(r, w),
            a: gen_src(r, w),
            b: gen_src(r, w),
        },
        5..=7 => {
            let op = r.pick(&[
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
            ]);
            let unary = matches!(op, ArithOp::Inc | ArithOp::Dec | ArithOp::Neg);
            Op::Arith {
                op,
                w,
                dst: if r.chance(1, 5) {
                    None
                } else {
                    Some(gen_dst(r, w))
                },
                a: gen_src(r, w),
                b: if unary { Src::Imm(0) } else { gen_src(r, w) },
            }
        }
        8 => Op::Shift {
            op: r.pick(&[
                ShiftOp::Rol,
                ShiftOp::Ror,
                ShiftOp::Rcl,
                ShiftOp::Rcr,
                ShiftOp::Shl,
                ShiftOp::Shr,
                ShiftOp::Sar,
            ]),
            w,
            dst: gen_dst(r, w),
            a: gen_src(r, w),
            count: if r.chance(1, 2) {
                Src::Imm(r.below(40) as u32)
            } else {
                gen_src(r, Width::W8)
            },
        },
        9 => match r.below(4) {
            0 => Op::FlagsRec {
                kind: FlagKind::from_u8(r.below(19) as u8).unwrap_or(FlagKind::Add8),
                a: gen_src(r, Width::W32),
                b: gen_src(r, Width::W32),
                r: gen_src(r, Width::W32),
            },
            1 => Op::FlagsGet {
                dst: gen_dst(r, Width::W16),
            },
            2 => Op::FlagsSet {
                src: gen_src(r, Width::W32),
                mask: r.next_u64() as u32 & 0x0FD5,
            },
            3 if r.chance(1, 3) => Op::StrStep {
                dst: gen_dst(r, Width::W32),
                n: r.pick(&[1u32, 2, 4]),
            },
            _ => Op::GetCond {
                dst: gen_dst(r, Width::W8),
                cc: r.below(16) as u8,
            },
        },
        10..=12 => Op::Load {
            w,
            dst: gen_dst(r, w),
            addr: gen_addr(r),
            path: if r.chance(1, 5) {
                MemPath::Checked
            } else {
                MemPath::Fast
            },
            site: site(r, billed),
        },
        13..=15 => Op::Store {
            w,
            src: gen_src(r, w),
            addr: gen_addr(r),
            path: if r.chance(1, 5) {
                MemPath::Checked
            } else {
                MemPath::Fast
            },
            site: site(r, billed),
            after: if r.chance(1, 2) {
                Some(site(r, billed))
            } else {
                None
            },
        },
        16 => {
            let port = Src::Imm(r.pick(&[0x40u32, 0x3DA, PORT_STOP as u32, PORT_REFUSE as u32]));
            if r.chance(1, 2) {
                Op::In {
                    w,
                    dst: gen_dst(r, w),
                    port,
                    site: site(r, billed),
                }
            } else {
                Op::Out {
                    w,
                    port,
                    val: gen_src(r, w),
                    site: site(r, billed),
                    after: if r.chance(1, 2) {
                        Some(site(r, billed))
                    } else {
                        None
                    },
                }
            }
        }
        17 => Op::Service {
            id: r.below(4) as u16,
            site: site(r, billed),
            after: if r.chance(1, 2) {
                Some(site(r, billed))
            } else {
                None
            },
        },
        18 => {
            let helper = r.pick(&Helper::ALL);
            let (na, no) = helper.arity();
            let mut outs = [None; 2];
            for o in outs.iter_mut().take(no) {
                if r.chance(4, 5) {
                    *o = Some(Reg {
                        v: VReg(gen_vreg(r)),
                        lane: gen_any_lane(r),
                    });
                }
            }
            let mut args = [Src::Imm(0); 3];
            for a in args.iter_mut().take(na) {
                *a = gen_src(r, Width::W8);
            }
            Op::Call {
                helper,
                outs,
                args,
                site: site(r, billed),
            }
        }
        _ => match r.below(5) {
            0 => Op::Clock {
                n: r.below(3) as u32,
            },
            3 => Op::StopIf {
                src: gen_src(r, Width::W8),
            },
            4 if r.chance(1, 2) => {
                let n = 1 + r.below(4) as usize;
                let mut b = [0u8; 4];
                b[0] = 0xD8 + r.below(8) as u8;
                for x in b.iter_mut().take(n).skip(1) {
                    let any = r.next_u64() as u8;
                    *x = r.pick(&[0xE0, 0xFF, any]);
                }
                let mem = r.chance(2, 3).then(|| gen_addr(r));
                let sel = |r: &mut Rng| {
                    if r.chance(1, 4) {
                        Src::Imm(r.next_u64() as u32 & 0xFFFF)
                    } else {
                        Src::Reg(Reg::w(8 + r.below(6) as u16))
                    }
                };
                let cs = sel(r);
                let ds = if mem.is_some() { sel(r) } else { Src::Imm(0) };
                Op::X87 {
                    insn: X87Insn::new(&b[..n]).unwrap_or_else(|| unreachable!()),
                    mem,
                    cs,
                    ds,
                    dst: r.chance(1, 2).then(|| Reg::w(gen_vreg(r).min(19))),
                    site: site(r, billed),
                    after: if r.chance(1, 2) {
                        Some(site(r, billed))
                    } else {
                        None
                    },
                }
            }
            1 => Op::Check {
                w,
                addr: gen_addr(r),
                site: site(r, billed),
            },
            _ => Op::ExitIfPending {
                site: site(r, billed),
            },
        },
    }
}

fn gen_leave(r: &mut Rng, opts: &GenOptions) -> Term {
    let s = Site::new(0x200 + r.below(16) as u32, 0);
    match r.below(5) {
        0 => Term::Exit {
            kind: ExitKind::Fallback,
            site: s,
        },
        1 => Term::Exit {
            kind: if r.chance(1, 4) {
                ExitKind::Shadow
            } else {
                ExitKind::Stop
            },
            site: s,
        },
        2 => Term::Indirect {
            ip: gen_src(r, Width::W16),
            base: Src::Reg(Reg::d(15)),
            site: s,
        },
        _ if !opts.link_keys.is_empty() => Term::Link {
            key: r.pick(opts.link_keys),
            site: s,
        },
        _ => Term::Exit {
            kind: ExitKind::Stop,
            site: s,
        },
    }
}

/// A random [`Term::Rep`] at block `t` (looping on itself) that ends at
/// `f`, with ops that set its count and index registers to interesting
/// values (small counts, 16- and 32-bit wraps): every string op and
/// condition, both address sizes, CX or ECX, limits that pass and fail.
pub fn gen_rep(r: &mut Rng, t: BlockId, f: BlockId) -> (Vec<Op>, Term) {
    let op = r.pick(&StrOp::ALL);
    let cond = if op.compares() {
        r.pick(&RepCond::ALL)
    } else {
        RepCond::Rep
    };
    let asize = r.pick(&[AddrSize::A16, AddrSize::A32]);
    let count = r.pick(&[Reg::w(1), Reg::d(1)]);
    let limit = r.pick(&[0xFFFF, 0xFFFF, 0xFFFF_FFFF, 0x10_0000, 0x20]);
    let addr = |seg: u16, base: u16| Addr {
        seg: Some(VReg(seg)),
        base: Some(VReg(base)),
        index: None,
        scale: 0,
        disp: 0,
        asize,
        limit,
    };
    let mut setup = Vec::new();
    if r.chance(3, 4) {
        let n = r.pick(&[0, 1, 2, 5, 17, 0x1_0003]);
        setup.push(Op::Mov {
            dst: Reg::d(1),
            src: Src::Imm(n | r.pick(&[0, 0x7_0000, 0xFFFF_0000])),
        });
    }
    for v in [6, 7] {
        if r.chance(1, 2) {
            let x = r.pick(&[0xFFFE, 0xFFFF, 0x1_FFFE, 0x10, 0xFFFF_FFFE, 0x100]);
            setup.push(Op::Mov {
                dst: Reg::d(v),
                src: Src::Imm(x),
            });
        }
    }
    let term = Term::Rep {
        op,
        w: gen_width(r),
        cond,
        src: addr(14 + r.pick(&[3, 0, 2]), 6),
        dst: addr(14, 7),
        count,
        site: Site::new(0x140, 0),
        t,
        f,
    };
    (setup, term)
}

/// A random well-formed program (it passes the verifier).
pub fn gen_program(r: &mut Rng, key: u64, opts: &GenOptions) -> Program {
    let billed = 1 + r.below(4) as u32;
    let entry_site = Site::new(0x100, 0);
    let mut entry = vec![Op::ClockCheck {
        n: billed,
        site: entry_site,
    }];
    entry.push(Op::Count);
    for t in GEN_TEMPS {
        entry.push(Op::Mov {
            dst: Reg::d(t),
            src: Src::Imm(r.next_u64() as u32),
        });
    }
    let nbody = 1 + r.below(opts.max_ops);
    let mut blocks = Vec::new();
    if opts.looping {
        entry.push(Op::Mov {
            dst: Reg::d(GEN_COUNTER),
            src: Src::Imm(1 + r.below(12) as u32),
        });
        blocks.push(Block {
            ops: entry,
            term: Term::Jmp(BlockId(1)),
        });
        let lb = 1 + r.below(3) as u32;
        let mut body = vec![Op::ClockCheck {
            n: lb,
            site: Site::new(0x180, 0),
        }];
        for _ in 0..nbody {
            body.push(gen_op(r, lb));
        }
        body.push(Op::Alu {
            op: AluOp::Sub,
            w: Width::W32,
            dst: Reg::d(GEN_COUNTER),
            a: Src::Reg(Reg::d(GEN_COUNTER)),
            b: Src::Imm(1),
        });
        let cmp = r.pick(&[CmpOp::Ne, CmpOp::Gtu, CmpOp::Gts]);
        blocks.push(Block {
            ops: body,
            term: Term::BrCmp {
                op: cmp,
                w: Width::W32,
                a: Src::Reg(Reg::d(GEN_COUNTER)),
                b: Src::Imm(0),
                t: BlockId(1),
                f: BlockId(2),
            },
        });
        let t = gen_leave(r, opts);
        blocks.push(Block {
            ops: vec![],
            term: t,
        });
    } else {
        for _ in 0..nbody {
            entry.push(gen_op(r, billed));
        }
        if r.chance(1, 4) {
            // A REP string element looping on itself, then a leave.
            let (setup, rep) = gen_rep(r, BlockId(1), BlockId(2));
            entry.extend(setup);
            blocks.push(Block {
                ops: entry,
                term: Term::Jmp(BlockId(1)),
            });
            blocks.push(Block {
                ops: vec![],
                term: rep,
            });
            let t = gen_leave(r, opts);
            blocks.push(Block {
                ops: vec![],
                term: t,
            });
        } else if r.chance(1, 2) {
            let cc = r.below(16) as u8;
            let term = if r.chance(1, 3) {
                // A compare-and-branch (flag forwarding's fused form).
                let w = r.pick(&[Width::W8, Width::W16, Width::W32]);
                Term::BrArith {
                    op: r.pick(&[
                        ArithOp::Sub,
                        ArithOp::And,
                        ArithOp::Dec,
                        ArithOp::Inc,
                        ArithOp::Add,
                    ]),
                    w,
                    dst: if r.chance(1, 2) {
                        Some(gen_dst(r, w)).filter(|d| d.v.0 < GEN_GUEST)
                    } else {
                        None
                    },
                    a: gen_src(r, w),
                    b: gen_src(r, w),
                    cc,
                    t: BlockId(1),
                    f: BlockId(2),
                }
            } else {
                Term::BrCc {
                    cc,
                    t: BlockId(1),
                    f: BlockId(2),
                }
            };
            blocks.push(Block { ops: entry, term });
            for _ in 0..2 {
                let mut ops = Vec::new();
                for _ in 0..r.below(4) {
                    ops.push(gen_op(r, 0));
                }
                let t = gen_leave(r, opts);
                blocks.push(Block { ops, term: t });
            }
        } else {
            let t = gen_leave(r, opts);
            blocks.push(Block {
                ops: entry,
                term: t,
            });
        }
    }
    Program {
        model: "real16".into(),
        key,
        guest: GEN_GUEST,
        code: vec![(0x7100, 0x7110)],
        blocks,
    }
}
