//! The line under construction: [`LineBuilder`]'s state (blocks, the open
//! block's ops, the instruction count billed in it, temporaries), the
//! sites an op reports (before / after the current instruction), and
//! closing and opening blocks, where marker sites get their final unbill.
//!
//! It owns the program's shape only; it must not know any instruction.

use super::{no, LowerOpts, L};
use crate::ir::*;
use crate::machine::MachineModel;

/// Builds one program from a straight line of instructions.
pub struct LineBuilder<'m, M: MachineModel> {
    pub(super) model: &'m M,
    pub(super) opts: LowerOpts,
    pub(super) cs_base: u32,
    pub(super) blocks: Vec<Block>,
    /// Ops of the open block (its `clock.check` is added when it closes).
    pub(super) ops: Vec<Op>,
    /// Index of the open block.
    pub(super) cur: usize,
    /// Instructions billed in the open block so far.
    pub(super) count: u32,
    pub(super) first_ip: u32,
    /// IP of the open block's first instruction (its budget-exit site).
    pub(super) block_ip: u32,
    pub(super) ip: u32,
    pub(super) next_ip: u32,
    pub(super) next_temp: u16,
    pub(super) code_lo: u32,
    pub(super) code_hi: u32,
    /// Lowered instructions and the reason the line stopped.
    pub lowered: usize,
    pub stop: Option<&'static str>,
    /// String step per element size (1, 2, 4 bytes) already computed in the
    /// open block from DF; cleared when DF may change or the block changes.
    pub(super) delta_cache: [Option<Reg>; 3],
    /// The bytes of the instruction being lowered.
    pub(super) insn: &'m [u8],
    /// The line ended with a CALL (its static link is the callee): region
    /// formation decides whether a trace follows calls.
    pub(super) ended_by_call: bool,
}

/// A site marker: unbill holds "instructions retired before this point in
/// the open block" until the block closes.
pub(super) fn marker(ip: u32, done: u32) -> Site {
    Site { ip, unbill: done }
}

impl<'m, M: MachineModel> LineBuilder<'m, M> {
    pub fn new(model: &'m M, cs_base: u32, ip: u32) -> Self {
        LineBuilder {
            model,
            opts: LowerOpts::default(),
            cs_base,
            blocks: vec![Block {
                ops: vec![],
                term: Term::Exit {
                    kind: ExitKind::Stop,
                    site: Site::new(ip, 0),
                },
            }],
            ops: Vec::new(),
            cur: 0,
            count: 0,
            first_ip: ip,
            block_ip: ip,
            ip,
            next_ip: ip,
            next_temp: model.guest_vregs(),
            code_lo: cs_base.wrapping_add(ip),
            code_hi: cs_base.wrapping_add(ip),
            lowered: 0,
            stop: None,
            delta_cache: [None; 3],
            insn: &[],
            ended_by_call: false,
        }
    }

    pub(super) fn temp(&mut self) -> L<Reg> {
        if self.next_temp >= VREG_NAMES {
            return no("out of temporaries");
        }
        self.next_temp += 1;
        Ok(Reg::d(self.next_temp - 1))
    }

    /// Site before the current instruction.
    pub(super) fn before(&self) -> Site {
        marker(self.ip, self.count)
    }
    /// Site after the current instruction (the next boundary).
    pub(super) fn after(&self) -> Site {
        marker(self.next_ip, self.count + 1)
    }

    pub(super) fn emit(&mut self, op: Op) {
        self.ops.push(op);
    }

    /// Closes the open block with `term`; sites get their final unbill.
    pub(super) fn close(&mut self, term: Term) {
        self.delta_cache = [None; 3];
        let n = self.count;
        let mut ops = Vec::with_capacity(self.ops.len() + 2);
        if n > 0 {
            ops.push(Op::ClockCheck {
                n,
                site: Site::new(self.block_ip, 0),
            });
        }
        if self.cur == 0 {
            ops.push(Op::Count);
        }
        for mut op in std::mem::take(&mut self.ops) {
            fix_sites(&mut op, n);
            ops.push(op);
        }
        let mut term = term;
        fix_term(&mut term, n);
        self.blocks[self.cur] = Block { ops, term };
    }

    pub(super) fn new_block(&mut self) -> BlockId {
        self.blocks.push(Block {
            ops: vec![],
            term: Term::Exit {
                kind: ExitKind::Stop,
                site: Site::new(0, 0),
            },
        });
        BlockId(self.blocks.len() as u32 - 1)
    }

    /// Ends the program with the current instruction, billed in the open
    /// block, and a lookup exit to `base + ip` (a computed target).
    pub(super) fn end_indirect(&mut self, ip: Src, base: Src) {
        let site = marker(0, self.count + 1);
        self.count += 1;
        self.close(Term::Indirect { ip, base, site });
    }

    /// A block that only links to `ip` (nothing billed in it).
    pub(super) fn link_block(&mut self, ip: u32) -> BlockId {
        let b = self.new_block();
        self.blocks[b.0 as usize].term = Term::Link {
            key: self.model.key(self.cs_base, ip),
            site: Site::new(ip, 0),
        };
        b
    }

    pub(super) fn open(&mut self, b: BlockId, ip: u32) {
        self.delta_cache = [None; 3];
        self.cur = b.0 as usize;
        self.count = 0;
        self.block_ip = ip;
    }

    pub(super) fn owed_check(&mut self) {
        let site = self.after();
        self.emit(Op::ExitIfPending { site });
    }

    /// `dst <- helper(args)` with one result, at the instruction's site.
    pub(super) fn call1(&mut self, helper: Helper, dst: Reg, args: [Src; 3]) {
        let site = self.before();
        self.emit(Op::Call {
            helper,
            outs: [Some(dst), None],
            args,
            site,
        });
    }

    /// IP of the first instruction not in the line.
    pub(super) fn next_ip_after_line(&self) -> u32 {
        if self.stop.is_some() {
            self.ip
        } else {
            self.next_ip
        }
    }
}

/// Rewrites marker sites (instructions done) into unbill (billed ahead).
fn fix_sites(op: &mut Op, n: u32) {
    let f = |s: &mut Site| s.unbill = n.saturating_sub(s.unbill);
    match op {
        Op::Load { site, .. }
        | Op::In { site, .. }
        | Op::Call { site, .. }
        | Op::Check { site, .. } => f(site),
        Op::Store { site, after, .. }
        | Op::Out { site, after, .. }
        | Op::Service { site, after, .. }
        | Op::X87 { site, after, .. } => {
            f(site);
            if let Some(a) = after {
                f(a)
            }
        }
        Op::ExitIfPending { site } => f(site),
        _ => {}
    }
}

fn fix_term(t: &mut Term, n: u32) {
    match t {
        Term::Exit { site, .. } | Term::Link { site, .. } | Term::Indirect { site, .. } => {
            site.unbill = n.saturating_sub(site.unbill)
        }
        _ => {}
    }
}
