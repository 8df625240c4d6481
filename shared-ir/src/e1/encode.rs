//! The encoder from IR to E1 words.
//!
//! Output is position-independent up to a relocation list: words that hold a
//! word index inside the program (pool constants, sites, block targets, the
//! counter) are listed in [`Encoded::relocs`] and get the program's base added
//! when the arena installs it. Layout: `[counter, id]` header, then the code
//! (reachable blocks, greedily along fall-through edges, so a `jmp` to the next
//! block disappears and a conditional branch needs one op), then the pool
//! (constants and `(ip, unbill)` site pairs, deduplicated).
//!
//! It expects a verified program (see [`crate::ir::verify`]) and must not
//! know where the program will live or what it links to.

use super::op;
use super::SINK;
use crate::ir::{
    Addr, BlockId, CmpOp, ExitKind, Lane, MemPath, Op, Program, Reg, Site, Src, Term, Width,
};

/// An encoded program, relative to its own first word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Encoded {
    pub words: Vec<u32>,
    /// Offsets of words whose low 24 bits are program-relative indices.
    pub relocs: Vec<u32>,
    /// Offset of the first op.
    pub entry: u32,
    /// `(offset of the link's target word, target key)` for every static exit.
    pub links: Vec<(u32, u64)>,
    /// Number of engine ops emitted.
    pub ops: usize,
    /// Offset of the pool (code is `entry..pool`).
    pub pool: u32,
}

/// Offset of the entry counter in a program's header.
pub const HEADER_COUNTER: u32 = 0;
/// Offset of the program id in a program's header.
pub const HEADER_ID: u32 = 1;
/// Header length.
pub const HEADER_WORDS: u32 = 2;

const fn lane_bits(l: Lane) -> u32 {
    match l {
        Lane::D => 0,
        Lane::W => 1 << 24,
        Lane::B => 2 << 24,
        Lane::H => (3 | 8) << 24,
    }
}

const fn wi(w: Width) -> u32 {
    w as u32
}

/// Pool slots by key, for sharing pool words: a direct-mapped table of
/// the entries, checked first, then a scan of every entry only when the
/// table's way holds another key (a collision). An empty way means the key
/// is new. Hashing every lookup in a hash map, or scanning every entry, was
/// a measurable share of a build (the build-cost gate, docs/optimizer.md).
struct SlotIndex<K> {
    entries: Vec<(K, u32)>,
    /// Entry index + 1 per way; 0 = empty.
    ways: [u16; SLOT_WAYS],
}

impl<K> Default for SlotIndex<K> {
    fn default() -> Self {
        SlotIndex {
            entries: Vec::new(),
            ways: [0; SLOT_WAYS],
        }
    }
}

const SLOT_WAYS: usize = 64;

/// The way of a key in a [`SlotIndex`] (Fibonacci hashing; a pair's two
/// words folded first).
trait SlotKey: Copy + Eq {
    fn way(self) -> usize;
}

impl SlotKey for u32 {
    fn way(self) -> usize {
        (self.wrapping_mul(0x9E37_79B9) >> 26) as usize
    }
}

impl SlotKey for (u32, u32) {
    fn way(self) -> usize {
        (self.0 ^ self.1.rotate_left(16)).way()
    }
}

impl<K: SlotKey> SlotIndex<K> {
    fn get(&self, k: K) -> Option<u32> {
        match self.ways[k.way()] {
            0 => None,
            i => {
                let e = self.entries[i as usize - 1];
                if e.0 == k {
                    Some(e.1)
                } else {
                    self.entries.iter().find(|e| e.0 == k).map(|e| e.1)
                }
            }
        }
    }
    fn insert(&mut self, k: K, slot: u32) {
        self.entries.push((k, slot));
        // Past u16 entries a way is not updated: a later key may then get a
        // second pool copy, never a wrong slot.
        if let Ok(i) = u16::try_from(self.entries.len()) {
            self.ways[k.way()] = i;
        }
    }
}

#[derive(Default)]
struct Enc {
    words: Vec<u32>,
    relocs: Vec<u32>,
    pool: Vec<u32>,
    /// Pool slots of shared constants by value.
    consts: SlotIndex<u32>,
    /// Pool slots of sites by `(ip, unbill)`.
    sites: SlotIndex<(u32, u32)>,
    /// (word offset, pool slot, high bits)
    pool_fix: Vec<(usize, u32, u32)>,
    block_fix: Vec<(usize, BlockId)>,
    links: Vec<(u32, u64)>,
    ops: usize,
}

impl Enc {
    fn raw(&mut self, w: u32) {
        self.words.push(w);
    }
    fn opcode(&mut self, o: u32) {
        self.ops += 1;
        self.words.push(o);
    }
    fn pool_ref(&mut self, slot: u32, hi: u32) {
        self.pool_fix.push((self.words.len(), slot, hi));
        self.words.push(0);
    }
    /// The pool slot of the shared constant `v` (added on first use).
    fn const_slot(&mut self, v: u32) -> u32 {
        match self.consts.get(v) {
            Some(s) => s,
            None => {
                let s = self.pool.len() as u32;
                self.pool.push(v);
                self.consts.insert(v, s);
                s
            }
        }
    }
    fn konst(&mut self, v: u32) {
        let slot = self.const_slot(v);
        self.pool_ref(slot, 0);
    }
    /// Consecutive pool words (not shared), named by one word.
    fn blob(&mut self, ws: &[u32]) {
        let slot = self.pool.len() as u32;
        self.pool.extend_from_slice(ws);
        self.pool_ref(slot, 0);
    }
    fn src(&mut self, s: Src) {
        match s {
            Src::Reg(r) => self.raw(r.v.0 as u32 | lane_bits(r.lane)),
            Src::Imm(v) => self.konst(v),
        }
    }
    fn dst(&mut self, r: Reg) {
        self.raw(r.v.0 as u32 | lane_bits(r.lane));
    }
    fn opt_vreg(&mut self, v: Option<crate::ir::VReg>, hi: u32) {
        match v {
            Some(v) => self.raw(v.0 as u32 | hi),
            None => {
                // 0 from the pool; keep the high bits (scale) for the engine.
                let slot = self.const_slot(0);
                self.pool_ref(slot, hi);
            }
        }
    }
    fn site(&mut self, s: Site) {
        let k = (s.ip, s.unbill);
        let slot = match self.sites.get(k) {
            Some(x) => x,
            None => {
                let x = self.pool.len() as u32;
                self.pool.push(s.ip);
                self.pool.push(s.unbill);
                self.sites.insert(k, x);
                x
            }
        };
        self.pool_ref(slot, 0);
    }
    fn target(&mut self, b: BlockId) {
        self.block_fix.push((self.words.len(), b));
        self.words.push(0);
    }
    /// Emits the address operands; returns false when no access of this width
    /// can ever pass the limit (the op then becomes a fallback exit).
    fn addr(&mut self, a: &Addr, w: Width) -> bool {
        let span = w.bytes() - 1;
        if a.limit < span {
            return false;
        }
        self.opt_vreg(a.seg, 0);
        self.opt_vreg(a.base, 0);
        self.opt_vreg(a.index, (a.scale as u32 & 3) << 24);
        self.raw(a.disp);
        self.raw(a.asize.mask());
        self.raw(a.limit - span);
        true
    }

    fn op(&mut self, o: &Op, guest: u16) {
        match *o {
            Op::Mov { dst, src } => {
                let whole = dst.lane == Lane::D
                    && match src {
                        Src::Imm(_) => true,
                        Src::Reg(r) => r.lane == Lane::D,
                    };
                self.opcode(if whole { op::MOV32 } else { op::MOVL });
                self.dst(dst);
                self.src(src);
            }
            Op::Sext { dst, src, from } => {
                self.opcode(if from == Width::W8 {
                    op::SEXT8
                } else {
                    op::SEXT16
                });
                self.dst(dst);
                self.src(Src::Reg(src));
            }
            Op::Alu {
                op: k,
                w,
                dst,
                a,
                b,
            } => {
                self.opcode(op::ALU_BASE + 3 * k as u32 + wi(w));
                self.dst(dst);
                self.src(a);
                self.src(b);
            }
            Op::Arith {
                op: k,
                w,
                dst,
                a,
                b,
            } => {
                self.opcode(op::ARITH_BASE + 3 * k as u32 + wi(w));
                match dst {
                    Some(d) => self.dst(d),
                    None => self.raw(SINK),
                }
                self.src(a);
                self.src(b);
            }
            Op::Shift {
                op: k,
                w,
                dst,
                a,
                count,
            } => {
                self.opcode(op::SHIFT);
                self.raw(3 * k as u32 + wi(w));
                self.dst(dst);
                self.src(a);
                self.src(count);
            }
            Op::FlagsRec { kind, a, b, r } => {
                self.opcode(op::FLAGSREC);
                self.raw(kind as u32);
                self.src(a);
                self.src(b);
                self.src(r);
            }
            Op::FlagsGet { dst } => {
                self.opcode(op::FLAGSGET);
                self.dst(dst);
            }
            Op::FlagsSet { src, mask } => {
                self.opcode(op::FLAGSSET);
                self.src(src);
                self.raw(mask);
            }
            Op::GetCond { dst, cc } => {
                self.opcode(op::GETCC);
                self.dst(dst);
                self.raw(cc as u32 & 15);
            }
            Op::StrStep { dst, n } => {
                self.opcode(op::STRSTEP);
                self.dst(dst);
                self.raw(n);
            }
            Op::Load {
                w,
                dst,
                addr,
                path,
                site,
            } => {
                let at = self.words.len();
                self.opcode(
                    match path {
                        MemPath::Fast => op::LD,
                        MemPath::Checked => op::LDC,
                    } + wi(w),
                );
                self.dst(dst);
                if !self.addr(&addr, w) {
                    self.words.truncate(at);
                    self.exit_now(0, site);
                    return;
                }
                self.site(site);
            }
            Op::Store {
                w,
                src,
                addr,
                path,
                site,
                after,
            } => {
                let at = self.words.len();
                self.opcode(
                    match path {
                        MemPath::Fast => op::ST,
                        MemPath::Checked => op::STC,
                    } + wi(w),
                );
                self.src(src);
                if !self.addr(&addr, w) {
                    self.words.truncate(at);
                    self.exit_now(0, site);
                    return;
                }
                self.site(site);
                self.after(after);
            }
            Op::In { w, dst, port, site } => {
                self.opcode(op::IN);
                self.raw(wi(w));
                self.dst(dst);
                self.src(port);
                self.site(site);
            }
            Op::Out {
                w,
                port,
                val,
                site,
                after,
            } => {
                self.opcode(op::OUT);
                self.raw(wi(w));
                self.src(port);
                self.src(val);
                self.site(site);
                self.after(after);
            }
            Op::Service { id, site, after } => {
                self.opcode(op::SERVICE);
                self.raw(id as u32);
                self.raw(guest as u32);
                self.site(site);
                self.after(after);
            }
            Op::Call {
                helper,
                outs,
                args,
                site,
            } => {
                let (na, no) = helper.arity();
                self.opcode(op::CALL);
                let idx = crate::ir::Helper::ALL
                    .iter()
                    .position(|h| *h == helper)
                    .unwrap_or(0);
                self.raw(idx as u32);
                for (i, o) in outs.iter().enumerate() {
                    match o {
                        Some(r) if i < no => self.dst(*r),
                        _ => self.raw(SINK),
                    }
                }
                for (i, a) in args.iter().enumerate() {
                    if i < na {
                        self.src(*a)
                    } else {
                        self.konst(0)
                    }
                }
                self.site(site);
            }
            Op::Clock { n } => {
                self.opcode(op::CLOCK);
                self.raw(n);
            }
            Op::ClockCheck { n, site } => {
                self.opcode(op::CLOCKCHECK);
                self.raw(n);
                self.site(site);
            }
            Op::Count => {
                self.opcode(op::COUNT);
                self.relocs.push(self.words.len() as u32);
                self.raw(super::encode::HEADER_COUNTER);
            }
            Op::Check { w, addr, site } => {
                let at = self.words.len();
                self.opcode(op::CHK);
                self.raw(SINK);
                if !self.addr(&addr, w) {
                    self.words.truncate(at);
                    self.exit_now(0, site);
                    return;
                }
                self.site(site);
            }
            Op::ExitIfPending { site } => {
                self.opcode(op::EXITPEND);
                self.site(site);
            }
            Op::StopIf { src } => {
                self.opcode(op::STOPIF);
                self.src(src);
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
                self.opcode(op::X87);
                match dst {
                    Some(d) => self.dst(d),
                    None => self.raw(SINK),
                }
                let a = mem.unwrap_or(Addr {
                    seg: None,
                    base: None,
                    index: None,
                    scale: 0,
                    disp: 0,
                    asize: crate::ir::AddrSize::A16,
                    limit: 0,
                });
                self.opt_vreg(a.seg, 0);
                self.opt_vreg(a.base, 0);
                self.opt_vreg(a.index, (a.scale as u32 & 3) << 24);
                self.raw(a.disp);
                self.raw(a.asize.mask());
                self.raw(a.limit);
                self.site(site);
                self.after(after);
                self.src(cs);
                self.src(ds);
                let b = insn.bytes();
                let mut blob = [0u32; 5];
                blob[0] = b.len() as u32 | (mem.is_some() as u32) << 8;
                for (i, x) in b.iter().enumerate() {
                    blob[1 + i / 4] |= (*x as u32) << (8 * (i % 4));
                }
                self.blob(&blob);
            }
        }
    }

    fn after(&mut self, a: Option<Site>) {
        match a {
            Some(s) => self.site(s),
            None => self.raw(0),
        }
    }

    fn exit_now(&mut self, kind: u32, site: Site) {
        self.opcode(op::EXIT);
        self.raw(kind);
        self.site(site);
    }

    fn cmp_branch(&mut self, c: CmpOp, w: Width, a: Src, b: Src, t: BlockId) {
        let sb = 1u32 << (w.bits() - 1);
        let (opc, swap, signed) = match c {
            CmpOp::Eq => (op::BREQ, false, false),
            CmpOp::Ne => (op::BRNE, false, false),
            CmpOp::Ltu => (op::BRLT, false, false),
            CmpOp::Leu => (op::BRLE, false, false),
            CmpOp::Gtu => (op::BRLT, true, false),
            CmpOp::Geu => (op::BRLE, true, false),
            CmpOp::Lts => (op::BRLT, false, true),
            CmpOp::Les => (op::BRLE, false, true),
            CmpOp::Gts => (op::BRLT, true, true),
            CmpOp::Ges => (op::BRLE, true, true),
        };
        let (a, b) = if swap { (b, a) } else { (a, b) };
        self.opcode(opc);
        self.src(a);
        self.src(b);
        self.raw(w.mask());
        self.raw(if signed { sb } else { 0 });
        self.target(t);
    }
}

/// A comparison as BRCMPA encodes it: (kind 0..3 = EQ NE LT LE, a, b,
/// mask, sign bit to flip), operands swapped for GT/GE.
fn cmp_parts(c: CmpOp, w: Width, a: Src, b: Src) -> (u32, Src, Src, u32, u32) {
    let sb = 1u32 << (w.bits() - 1);
    let (kind, swap, signed) = match c {
        CmpOp::Eq => (0, false, false),
        CmpOp::Ne => (1, false, false),
        CmpOp::Ltu => (2, false, false),
        CmpOp::Leu => (3, false, false),
        CmpOp::Gtu => (2, true, false),
        CmpOp::Geu => (3, true, false),
        CmpOp::Lts => (2, false, true),
        CmpOp::Les => (3, false, true),
        CmpOp::Gts => (2, true, true),
        CmpOp::Ges => (3, true, true),
    };
    let (a, b) = if swap { (b, a) } else { (a, b) };
    (kind, a, b, w.mask(), if signed { sb } else { 0 })
}

/// The negation of a comparison.
pub fn negate(c: CmpOp) -> CmpOp {
    match c {
        CmpOp::Eq => CmpOp::Ne,
        CmpOp::Ne => CmpOp::Eq,
        CmpOp::Ltu => CmpOp::Geu,
        CmpOp::Geu => CmpOp::Ltu,
        CmpOp::Leu => CmpOp::Gtu,
        CmpOp::Gtu => CmpOp::Leu,
        CmpOp::Lts => CmpOp::Ges,
        CmpOp::Ges => CmpOp::Lts,
        CmpOp::Les => CmpOp::Gts,
        CmpOp::Gts => CmpOp::Les,
    }
}

/// Block order: reachable blocks from the entry, each followed by its
/// fall-through successor (the false edge of a branch, a jump's target) when
/// that one is not placed yet.
fn layout(p: &Program) -> Vec<BlockId> {
    let n = p.blocks.len();
    let mut reach = vec![false; n];
    let mut stack = vec![0usize];
    reach[0] = true;
    while let Some(b) = stack.pop() {
        for s in p.blocks[b].term.succs() {
            let s = s.0 as usize;
            if !reach[s] {
                reach[s] = true;
                stack.push(s);
            }
        }
    }
    let mut placed = vec![false; n];
    let mut order = Vec::new();
    for start in 0..n {
        let mut b = start;
        while reach[b] && !placed[b] {
            placed[b] = true;
            order.push(BlockId(b as u32));
            let next = match p.blocks[b].term {
                Term::Jmp(t) => Some(t),
                Term::BrCc { f, .. }
                | Term::BrCmp { f, .. }
                | Term::BrArith { f, .. }
                | Term::Rep { f, .. } => Some(f),
                _ => None,
            };
            match next {
                Some(t) => b = t.0 as usize,
                None => break,
            }
        }
    }
    order
}

/// Error from the encoder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodeError(pub String);

/// Encodes a verified program.
pub fn encode_program(p: &Program) -> Result<Encoded, EncodeError> {
    let order = layout(p);
    // Sized from the op count up front: growing these vectors op by op was a
    // tenth of a build's host time (the build-cost gate, docs/optimizer.md).
    let ops: usize = p.blocks.iter().map(|b| b.ops.len() + 2).sum();
    let mut e = Enc {
        words: Vec::with_capacity(8 * ops + 4),
        relocs: Vec::with_capacity(2 * ops),
        pool: Vec::with_capacity(ops),
        pool_fix: Vec::with_capacity(ops),
        block_fix: Vec::with_capacity(2 * p.blocks.len()),
        ..Enc::default()
    };
    e.raw(0); // counter
    e.raw(0); // id, filled by the arena
    let entry = e.words.len() as u32;
    let mut starts = vec![u32::MAX; p.blocks.len()];
    for (i, &b) in order.iter().enumerate() {
        starts[b.0 as usize] = e.words.len() as u32;
        let next = order.get(i + 1).copied();
        let block = &p.blocks[b.0 as usize];
        for o in &block.ops {
            e.op(o, p.guest);
        }
        // A successor that is an edge block (`clock k; jmp T`, from
        // opt::clock) folds into the branch: target T, adjust k.
        let edge = |b: BlockId| -> (BlockId, u32) {
            let blk = &p.blocks[b.0 as usize];
            match (blk.ops.as_slice(), blk.term) {
                ([Op::Clock { n }], Term::Jmp(t)) => (t, *n),
                _ => (b, 0),
            }
        };
        let adjusted = block.term.succs().any(|s| edge(s).1 != 0);
        if adjusted && matches!(block.term, Term::Rep { .. }) {
            return Err(EncodeError("a rep with clock-adjusted edges".into()));
        }
        if adjusted {
            match block.term {
                Term::Jmp(t) => {
                    let (t, at) = edge(t);
                    e.opcode(op::JMPA);
                    e.target(t);
                    e.raw(at);
                }
                Term::BrCc { cc, t, f } => {
                    let ((t, at), (f, af)) = (edge(t), edge(f));
                    e.opcode(op::BRCCA);
                    e.raw(cc as u32 & 15);
                    e.target(t);
                    e.raw(at);
                    e.target(f);
                    e.raw(af);
                }
                Term::BrArith {
                    op: k,
                    w,
                    dst,
                    a,
                    b: bb,
                    cc,
                    t,
                    f,
                } => {
                    let ((t, at), (f, af)) = (edge(t), edge(f));
                    e.opcode(op::ARITHBRA);
                    e.raw(3 * k as u32 + wi(w));
                    match dst {
                        Some(d) => e.dst(d),
                        None => e.raw(SINK),
                    }
                    e.src(a);
                    e.src(bb);
                    e.raw(cc as u32 & 15);
                    e.target(t);
                    e.raw(at);
                    e.target(f);
                    e.raw(af);
                }
                Term::BrCmp {
                    op: c,
                    w,
                    a,
                    b: bb,
                    t,
                    f,
                } => {
                    let ((t, at), (f, af)) = (edge(t), edge(f));
                    let (kind, a, bb, mask, x) = cmp_parts(c, w, a, bb);
                    e.opcode(op::BRCMPA);
                    e.raw(kind);
                    e.src(a);
                    e.src(bb);
                    e.raw(mask);
                    e.raw(x);
                    e.target(t);
                    e.raw(at);
                    e.target(f);
                    e.raw(af);
                }
                _ => {}
            }
            continue;
        }
        match block.term {
            Term::Jmp(t) => {
                if Some(t) != next {
                    e.opcode(op::JMP);
                    e.target(t);
                }
            }
            Term::BrCc { cc, t, f } => {
                if Some(f) == next {
                    e.opcode(op::BRCC);
                    e.raw(cc as u32 & 15);
                    e.target(t);
                } else if Some(t) == next {
                    e.opcode(op::BRCC);
                    e.raw((cc as u32 & 15) ^ 1);
                    e.target(f);
                } else {
                    e.opcode(op::BRCC);
                    e.raw(cc as u32 & 15);
                    e.target(t);
                    e.opcode(op::JMP);
                    e.target(f);
                }
            }
            Term::BrArith {
                op: k,
                w,
                dst,
                a,
                b: bb,
                cc,
                t,
                f,
            } => {
                let (cc, t, f) = if Some(t) == next && Some(f) != next {
                    (cc ^ 1, f, t)
                } else {
                    (cc, t, f)
                };
                e.opcode(op::ARITHBR);
                e.raw(3 * k as u32 + wi(w));
                match dst {
                    Some(d) => e.dst(d),
                    None => e.raw(SINK),
                }
                e.src(a);
                e.src(bb);
                e.raw(cc as u32 & 15);
                e.target(t);
                if Some(f) != next {
                    e.opcode(op::JMP);
                    e.target(f);
                }
            }
            Term::BrCmp {
                op: c,
                w,
                a,
                b: bb,
                t,
                f,
            } => {
                if Some(f) == next {
                    e.cmp_branch(c, w, a, bb, t);
                } else if Some(t) == next {
                    e.cmp_branch(negate(c), w, a, bb, f);
                } else {
                    e.cmp_branch(c, w, a, bb, t);
                    e.opcode(op::JMP);
                    e.target(f);
                }
            }
            Term::Exit { kind, site } => {
                e.exit_now(
                    match kind {
                        ExitKind::Fallback => 0,
                        ExitKind::Stop => 1,
                        ExitKind::Shadow => 2,
                    },
                    site,
                );
            }
            Term::Rep {
                op: so,
                w,
                cond,
                src,
                dst,
                count,
                site,
                t,
                f,
            } => {
                e.opcode(op::REP);
                let a32 = (src.asize == crate::ir::AddrSize::A32) as u32;
                e.raw((3 * so as u32 + wi(w)) | (cond as u32) << 4 | a32 << 6);
                e.dst(Term::rep_acc(w));
                for a in [src, dst] {
                    e.opt_vreg(a.seg, 0);
                    e.opt_vreg(a.base, 0);
                    e.raw(a.limit);
                }
                e.dst(count);
                e.site(site);
                e.target(t);
                e.target(f);
            }
            Term::Link { key, site } => {
                e.opcode(op::LINK);
                e.links.push((e.words.len() as u32, key));
                e.raw(0);
                e.site(site);
                e.raw(key as u32);
                e.raw((key >> 32) as u32);
            }
            Term::Indirect { ip, base, site } => {
                e.opcode(op::INDIRECT);
                e.src(ip);
                e.src(base);
                e.site(site);
            }
        }
    }
    let pool_start = e.words.len() as u32;
    let pool = std::mem::take(&mut e.pool);
    e.words.extend_from_slice(&pool);
    for (at, slot, hi) in std::mem::take(&mut e.pool_fix) {
        e.words[at] = (pool_start + slot) | hi;
        e.relocs.push(at as u32);
    }
    for (at, b) in std::mem::take(&mut e.block_fix) {
        let s = starts[b.0 as usize];
        if s == u32::MAX {
            return Err(EncodeError(format!("branch to unplaced block b{}", b.0)));
        }
        e.words[at] = s;
        e.relocs.push(at as u32);
    }
    e.relocs.sort_unstable();
    Ok(Encoded {
        words: e.words,
        relocs: e.relocs,
        entry,
        links: e.links,
        ops: e.ops,
        pool: pool_start,
    })
}
