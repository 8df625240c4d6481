//! The reference interpreter: runs IR directly against [`MachineRuntime`],
//! slowly and obviously. It is the definition of what each µop means; every
//! engine (E1 first) must agree with it on every program.
//!
//! It always takes the machine's checked access path (never the page view),
//! never chains by itself ([`run_program`] returns at every link), and keeps
//! no state beyond [`RefState`]. [`run_chain`] follows links and computed
//! exits through a map of programs, which is what a chaining engine does.
//! It must not optimize anything.

#![forbid(unsafe_code)]

use crate::exit::{Exit, ExitReason, Pending};
use crate::flags::LazyFlags;
use crate::ir::strsem::{self, ElemMem, ElemOpnd};
use crate::ir::{code_key, sem, Addr, Op, Program, Reg, Site, Src, Term, Width};
use crate::machine::{MachineRuntime, ServiceCtx, ServiceOutcome, StoreOutcome, X87Call, X87Mem};
use std::collections::BTreeMap;

/// Number of vreg slots (names v0..v254 plus the engines' sink).
pub const VREG_FILE: usize = 256;

/// Guest-visible state of a µop run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefState {
    /// Vreg file; guest registers first.
    pub vregs: Vec<u32>,
    pub flags: LazyFlags,
    /// The guest clock in dispatches.
    pub clock: u64,
    /// Entry counts (`count` ops) per program key.
    pub counts: BTreeMap<u64, u64>,
    /// µops executed (ops and terminators), for the density census.
    pub uops: u64,
}

impl Default for RefState {
    fn default() -> Self {
        RefState {
            vregs: vec![0; VREG_FILE],
            flags: LazyFlags::default(),
            clock: 0,
            counts: BTreeMap::new(),
            uops: 0,
        }
    }
}

impl RefState {
    #[inline]
    fn rd(&self, r: Reg) -> u32 {
        r.lane.read(self.vregs[r.v.0 as usize])
    }
    #[inline]
    fn src(&self, s: Src) -> u32 {
        match s {
            Src::Reg(r) => self.rd(r),
            Src::Imm(i) => i,
        }
    }
    #[inline]
    fn wr(&mut self, r: Reg, v: u32) {
        let slot = &mut self.vregs[r.v.0 as usize];
        *slot = r.lane.merge(*slot, v);
    }
    fn opt(&self, v: Option<crate::ir::VReg>) -> u32 {
        v.map_or(0, |v| self.vregs[v.0 as usize])
    }
    /// Effective offset, or `None` when the access passes the segment limit.
    fn offset(&self, a: &Addr, w: Width) -> Option<u32> {
        let ea = self
            .opt(a.base)
            .wrapping_add(self.opt(a.index) << a.scale)
            .wrapping_add(a.disp)
            & a.asize.mask();
        if ea as u64 + (w.bytes() as u64 - 1) > a.limit as u64 {
            return None;
        }
        Some(ea)
    }
}

/// Runs one program from its entry until it exits. `limit` is the clock value
/// the run may reach and not pass.
pub fn run_program<M: MachineRuntime>(
    p: &Program,
    st: &mut RefState,
    m: &mut M,
    limit: u64,
) -> Exit {
    let mut pending = Pending::None;
    let mut b = 0usize;
    let exit = |st: &mut RefState, reason: ExitReason, site: Site| {
        st.clock = st.clock.wrapping_sub(site.unbill as u64);
        Exit {
            reason,
            ip: site.ip,
        }
    };
    loop {
        let block = &p.blocks[b];
        for op in &block.ops {
            st.uops += 1;
            let now = |st: &RefState, s: Site| st.clock.wrapping_sub(s.unbill as u64);
            match *op {
                Op::Mov { dst, src } => {
                    let v = st.src(src);
                    st.wr(dst, v);
                }
                Op::Sext { dst, src, from } => {
                    let v = sem::sext(st.rd(src) & from.mask(), from);
                    st.wr(dst, v);
                }
                Op::Alu { op, w, dst, a, b } => {
                    let r = sem::alu(op, w, st.src(a), st.src(b));
                    st.wr(dst, r);
                }
                Op::Arith { op, w, dst, a, b } => {
                    let (a, b) = (st.src(a), st.src(b));
                    let r = sem::arith(op, w, a, b, &mut st.flags);
                    if let Some(d) = dst {
                        st.wr(d, r);
                    }
                }
                Op::Shift {
                    op,
                    w,
                    dst,
                    a,
                    count,
                } => {
                    let (a, c) = (st.src(a), st.src(count));
                    let r = sem::shift(op, w, a, c, &mut st.flags);
                    st.wr(dst, r);
                }
                Op::FlagsRec { kind, a, b, r } => {
                    let (a, b, r) = (st.src(a), st.src(b), st.src(r));
                    st.flags.record(kind, a, b, r);
                }
                Op::FlagsGet { dst } => {
                    let v = st.flags.bits();
                    st.wr(dst, v);
                }
                Op::FlagsSet { src, mask } => {
                    let v = (st.flags.bits() & !mask) | (st.src(src) & mask);
                    st.flags.set_bits(v);
                }
                Op::GetCond { dst, cc } => {
                    let v = st.flags.cond(cc) as u32;
                    st.wr(dst, v);
                }
                Op::StrStep { dst, n } => {
                    let v = if st.flags.df() { n.wrapping_neg() } else { n };
                    st.wr(dst, v);
                }
                Op::Load {
                    w, dst, addr, site, ..
                } => {
                    let Some(ea) = st.offset(&addr, w) else {
                        return exit(st, ExitReason::Fallback, site);
                    };
                    let lin = st.opt(addr.seg).wrapping_add(ea);
                    match m.read(lin, w, now(st, site)) {
                        Ok(v) => st.wr(dst, v & w.mask()),
                        Err(_) => return exit(st, ExitReason::Fallback, site),
                    }
                }
                Op::Store {
                    w,
                    src,
                    addr,
                    site,
                    after,
                    ..
                } => {
                    let Some(ea) = st.offset(&addr, w) else {
                        return exit(st, ExitReason::Fallback, site);
                    };
                    let lin = st.opt(addr.seg).wrapping_add(ea);
                    let v = st.src(src) & w.mask();
                    match m.write(lin, w, v, now(st, site)) {
                        StoreOutcome::Done => {}
                        StoreOutcome::HitCode => {
                            if pending == Pending::None {
                                pending = Pending::Smc;
                            }
                            if let Some(a) = after {
                                // The first stop owed names the exit.
                                return exit(st, pending.reason().unwrap_or(ExitReason::Smc), a);
                            }
                        }
                        StoreOutcome::Refused => return exit(st, ExitReason::Fallback, site),
                    }
                }
                Op::In { w, dst, port, site } => {
                    let port = st.src(port) as u16;
                    match m.port_read(port, w, now(st, site)) {
                        Ok((v, stop)) => {
                            st.wr(dst, v & w.mask());
                            if stop && pending == Pending::None {
                                pending = Pending::Service;
                            }
                        }
                        Err(_) => return exit(st, ExitReason::Fallback, site),
                    }
                }
                Op::Out {
                    w,
                    port,
                    val,
                    site,
                    after,
                } => {
                    let port = st.src(port) as u16;
                    let v = st.src(val) & w.mask();
                    match m.port_out(port, w, v, now(st, site)) {
                        ServiceOutcome::Continue => {}
                        ServiceOutcome::StopAfter => {
                            if pending == Pending::None {
                                pending = Pending::Service;
                            }
                            if let Some(a) = after {
                                return exit(
                                    st,
                                    pending.reason().unwrap_or(ExitReason::Service),
                                    a,
                                );
                            }
                        }
                        ServiceOutcome::Refused => return exit(st, ExitReason::Fallback, site),
                    }
                }
                Op::Service { id, site, after } => {
                    let t = now(st, site);
                    let guest = p.guest as usize;
                    let ctx = ServiceCtx {
                        vregs: &mut st.vregs[..guest],
                        flags: &mut st.flags,
                    };
                    match m.service(id, ctx, t) {
                        ServiceOutcome::Continue => {}
                        ServiceOutcome::StopAfter => {
                            if pending == Pending::None {
                                pending = Pending::Service;
                            }
                            if let Some(a) = after {
                                return exit(
                                    st,
                                    pending.reason().unwrap_or(ExitReason::Service),
                                    a,
                                );
                            }
                        }
                        ServiceOutcome::Refused => return exit(st, ExitReason::Fallback, site),
                    }
                }
                Op::Call {
                    helper,
                    outs,
                    args,
                    site,
                } => {
                    let a = [st.src(args[0]), st.src(args[1]), st.src(args[2])];
                    match sem::helper(helper, a, &mut st.flags) {
                        Ok(r) => {
                            let no = helper.arity().1;
                            for (o, v) in outs[..no].iter().zip(r) {
                                if let Some(o) = o {
                                    st.wr(*o, v);
                                }
                            }
                        }
                        Err(_) => return exit(st, ExitReason::Fallback, site),
                    }
                }
                // Signed: a negative count gives dispatches back (opt::clock's edges).
                Op::Clock { n } => st.clock = st.clock.wrapping_add(n as i32 as i64 as u64),
                Op::ClockCheck { n, site } => {
                    if let Some(r) = pending.reason() {
                        return exit(st, r, site);
                    }
                    if st.clock.saturating_add(n as u64) > limit {
                        return exit(st, ExitReason::Budget, site);
                    }
                    st.clock += n as u64;
                }
                Op::Count => *st.counts.entry(p.key).or_insert(0) += 1,
                Op::StopIf { src } => {
                    let s = st.src(src);
                    if s != 0 && pending == Pending::None && m.stop_if_needed(s) {
                        pending = Pending::Service;
                    }
                }
                Op::X87 {
                    insn,
                    mem,
                    cs,
                    ds,
                    dst,
                    site,
                    after,
                } => {
                    let mem = mem.map(|a| {
                        let off = st
                            .opt(a.base)
                            .wrapping_add(st.opt(a.index) << a.scale)
                            .wrapping_add(a.disp)
                            & a.asize.mask();
                        X87Mem {
                            base: st.opt(a.seg),
                            off,
                            limit: a.limit,
                            sel: st.src(ds) as u16,
                        }
                    });
                    let call = X87Call {
                        insn: insn.bytes(),
                        ip: site.ip,
                        cs: st.src(cs) as u16,
                        mem,
                    };
                    match m.x87(call, now(st, site)) {
                        Ok(done) => {
                            if let (Some(d), Some(v)) = (dst, done.result) {
                                st.wr(d, v as u32);
                            }
                            if done.hit_code {
                                if pending == Pending::None {
                                    pending = Pending::Smc;
                                }
                                if let Some(a) = after {
                                    return exit(
                                        st,
                                        pending.reason().unwrap_or(ExitReason::Smc),
                                        a,
                                    );
                                }
                            }
                        }
                        Err(_) => return exit(st, ExitReason::Fallback, site),
                    }
                }
                Op::Check { w, addr, site } => {
                    if st.offset(&addr, w).is_none() {
                        return exit(st, ExitReason::Fallback, site);
                    }
                }
                Op::ExitIfPending { site } => {
                    if let Some(r) = pending.reason() {
                        return exit(st, r, site);
                    }
                }
            }
        }
        st.uops += 1;
        match block.term {
            Term::Jmp(t) => b = t.0 as usize,
            Term::BrCc { cc, t, f } => {
                b = if st.flags.cond(cc) { t.0 } else { f.0 } as usize;
            }
            Term::BrArith {
                op,
                w,
                dst,
                a,
                b: bb,
                cc,
                t,
                f,
            } => {
                let (x, y) = (st.src(a), st.src(bb));
                let r = sem::arith(op, w, x, y, &mut st.flags);
                if let Some(d) = dst {
                    st.wr(d, r);
                }
                b = if st.flags.cond(cc) { t.0 } else { f.0 } as usize;
            }
            Term::BrCmp {
                op,
                w,
                a,
                b: bb,
                t,
                f,
            } => {
                let c = sem::compare(op, w, st.src(a), st.src(bb));
                b = if c { t.0 } else { f.0 } as usize;
            }
            Term::Rep {
                op,
                w,
                cond,
                src,
                dst,
                count,
                site,
                t,
                f,
            } => {
                if let Some(r) = pending.reason() {
                    return exit(st, r, site);
                }
                if st.clock.saturating_add(1) > limit {
                    return exit(st, ExitReason::Budget, site);
                }
                let n = st.rd(count);
                if n == 0 {
                    st.clock += 1;
                    b = f.0 as usize;
                    continue;
                }
                let opnd = |st: &RefState, a: &Addr| ElemOpnd {
                    base: st.opt(a.seg),
                    off: st.opt(a.base) & a.asize.mask(),
                    limit: a.limit,
                };
                let (s, d) = (opnd(st, &src), opnd(st, &dst));
                let acc = Term::rep_acc(w);
                let mut mem = CheckedMem {
                    m: &mut *m,
                    now: st.clock,
                };
                let Ok(done) = strsem::element(op, w, s, d, st.rd(acc), &mut st.flags, &mut mem)
                else {
                    return exit(st, ExitReason::Fallback, site);
                };
                if let Some(v) = done.acc {
                    st.wr(acc, v);
                }
                if done.hit_code && pending == Pending::None {
                    pending = Pending::Smc;
                }
                let df = st.flags.df();
                for (a, on) in [(src, op.reads_src()), (dst, op.uses_dst())] {
                    if let (Some(v), true) = (a.base, on) {
                        let x = &mut st.vregs[v.0 as usize];
                        *x = strsem::step_index(*x, w, df, a.asize);
                    }
                }
                st.wr(count, n.wrapping_sub(1));
                st.clock += 1;
                let go = strsem::again(cond, st.rd(count), &st.flags);
                b = if go { t.0 } else { f.0 } as usize;
            }
            Term::Exit { kind, site } => {
                let r = pending.reason().unwrap_or(match kind {
                    crate::ir::ExitKind::Fallback => ExitReason::Fallback,
                    crate::ir::ExitKind::Stop => ExitReason::Stop,
                    crate::ir::ExitKind::Shadow => ExitReason::Shadow,
                });
                return exit(st, r, site);
            }
            Term::Link { key, site } => {
                let r = pending.reason().unwrap_or(ExitReason::Link { key });
                return exit(st, r, site);
            }
            Term::Indirect { ip, base, site } => {
                let ipv = st.src(ip);
                let key = code_key(st.src(base), ipv);
                let r = pending.reason().unwrap_or(ExitReason::Indirect { key });
                let e = exit(st, r, site);
                return Exit { ip: ipv, ..e };
            }
        }
    }
}

/// The machine's checked path as a REP element sees it, at dispatch `now`.
struct CheckedMem<'a, M> {
    m: &'a mut M,
    now: u64,
}

impl<M: MachineRuntime> ElemMem for CheckedMem<'_, M> {
    fn read(&mut self, lin: u32, w: Width) -> Option<u32> {
        self.m.read(lin, w, self.now).ok()
    }
    fn write(&mut self, lin: u32, w: Width, v: u32) -> Option<bool> {
        match self.m.write(lin, w, v, self.now) {
            StoreOutcome::Done => Some(false),
            StoreOutcome::HitCode => Some(true),
            StoreOutcome::Refused => None,
        }
    }
}

/// Runs programs from the one keyed `entry`, following every link and
/// computed exit whose target is in `progs`, until an exit leads elsewhere.
pub fn run_chain<M: MachineRuntime>(
    progs: &BTreeMap<u64, Program>,
    entry: u64,
    st: &mut RefState,
    m: &mut M,
    limit: u64,
) -> Exit {
    let mut key = entry;
    loop {
        let Some(p) = progs.get(&key) else {
            return Exit {
                reason: ExitReason::Link { key },
                ip: key as u32,
            };
        };
        let e = run_program(p, st, m, limit);
        match e.reason {
            ExitReason::Link { key: k } | ExitReason::Indirect { key: k }
                if progs.contains_key(&k) =>
            {
                key = k;
            }
            _ => return e,
        }
    }
}
