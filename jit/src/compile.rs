//! The compiler: one IR [`Program`] (after the arm's pass set) to one native
//! function through Cranelift, with exactly E1's meaning.
//!
//! Shape of the generated function `fn(*mut Ctx) -> u32`:
//!
//! * every vreg the program names is a Cranelift variable, loaded from E1's
//!   vreg file at entry and stored back at the one shared exit (and around a
//!   service, which sees the guest registers in memory), so registers live
//!   in host registers across the whole program;
//! * the flag record is five variables (eager, kind, a, b, r); the compiler
//!   tracks the record's kind statically inside a block, so a condition after
//!   its flag producer (`cmp; jl`, `dec; jnz`) is a few inline instructions,
//!   and an unknown kind asks a helper;
//! * the budget left, the pending stop and the exit fields are variables;
//!   every exit jumps to one exit block that writes them to the [`Ctx`];
//! * memory goes through the runtime's page view inline (the same test as
//!   `FastMem`), everything else through the helpers in [`crate::ctx`];
//! * a static exit to the program's own key is a jump back to its entry
//!   when its link word is filled (a loop stays in native code); every
//!   other link and computed exit returns to the dispatcher.
//!
//! What it cannot compile it declines ([`Decline`]): the program then stays
//! on E1 (fail soft). It must not change what a program means, and must not
//! know about drivers or machines beyond `MachineRuntime`'s page shift.

use crate::ctx::{self, code, Ctx};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I64};
use cranelift_codegen::ir::{
    AbiParam, Block as CBlock, InstBuilder, MemFlagsData, Signature, Value,
};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};
use shared_ir::e1::LinkSlot;
use shared_ir::flags::{FlagKind, FlagOp, Width};
use shared_ir::ir::{
    Addr, AluOp, ArithOp, CmpOp, ExitKind, Lane, MemPath, Op, Program, Reg, Site, Src, Term,
};
use shared_ir::machine::{MachineRuntime, PAGE_READ, PAGE_WRITE};
use std::mem::offset_of;

/// A compiled program's entry point.
pub type Entry = unsafe extern "C" fn(*mut Ctx) -> u32;

/// Why a program was not compiled (it stays on E1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decline {
    /// An op the compiler does not translate (named as the printer names it).
    Op(&'static str),
    /// Cranelift refused the function (a compiler bug, reported, never hidden).
    Codegen(String),
}

impl Decline {
    /// Short name for counters.
    pub fn name(&self) -> &'static str {
        match self {
            Decline::Op(n) => n,
            Decline::Codegen(_) => "codegen",
        }
    }
}

/// Native code for one program; its memory is freed on drop.
pub struct Native {
    module: Option<JITModule>,
    pub entry: Entry,
    /// Bytes of machine code.
    pub code_bytes: usize,
}

impl Drop for Native {
    fn drop(&mut self) {
        if let Some(m) = self.module.take() {
            // SAFETY: `entry` is dropped with this value and the dispatcher
            // never calls code of a program it has forgotten.
            unsafe { m.free_memory() };
        }
    }
}

/// The host ISA, built once (Cranelift at `opt_level=speed`).
pub fn host_isa() -> Result<OwnedTargetIsa, String> {
    let mut fb = settings::builder();
    for (k, v) in [
        ("opt_level", "speed"),
        ("use_colocated_libcalls", "false"),
        ("is_pic", "false"),
    ] {
        fb.set(k, v).map_err(|e| e.to_string())?;
    }
    let ib = cranelift_native::builder().map_err(|e| e.to_string())?;
    ib.finish(settings::Flags::new(fb))
        .map_err(|e| e.to_string())
}

/// Link words of the program's static exits, by key (resolved by the caller
/// from the arena: the program is installed before it is compiled).
pub type SlotOf<'a> = &'a dyn Fn(u64) -> Option<LinkSlot>;

/// Whether the compiler translates every op of `p` (the first one it does
/// not, otherwise).
pub fn check(p: &Program) -> Result<(), Decline> {
    for b in &p.blocks {
        for op in &b.ops {
            if let Op::X87 { .. } = op {
                return Err(Decline::Op("x87"));
            }
        }
        // One REP string element per execution: E1 runs these programs.
        if let Term::Rep { .. } = b.term {
            return Err(Decline::Op("rep"));
        }
    }
    Ok(())
}

/// Compiles `p` for runtime `M`.
pub fn compile<M: MachineRuntime>(
    isa: &OwnedTargetIsa,
    p: &Program,
    slot_of: SlotOf<'_>,
) -> Result<Native, Decline> {
    check(p)?;
    let cg = |e: String| Decline::Codegen(e);
    let mut module = JITModule::new(JITBuilder::with_isa(isa.clone(), default_libcall_names()));
    let ptr = module.target_config().pointer_type();
    let mut sig = module.make_signature();
    sig.params.push(AbiParam::new(ptr));
    sig.returns.push(AbiParam::new(I32));
    let fid = module
        .declare_function("prog", Linkage::Local, &sig)
        .map_err(|e| cg(e.to_string()))?;
    let mut uctx = module.make_context();
    uctx.func.signature = sig;
    let mut fctx = FunctionBuilderContext::new();
    {
        let b = FunctionBuilder::new(&mut uctx.func, &mut fctx);
        Gen::<M>::new(b, p, slot_of, module.target_config()).emit();
    }
    module
        .define_function(fid, &mut uctx)
        .map_err(|e| cg(format!("{e:?}")))?;
    let code_bytes = uctx
        .compiled_code()
        .map(|c| c.code_buffer().len())
        .unwrap_or(0);
    module.clear_context(&mut uctx);
    module
        .finalize_definitions()
        .map_err(|e| cg(e.to_string()))?;
    let f = module.get_finalized_function(fid);
    // SAFETY: the function was declared with exactly this signature.
    let entry: Entry = unsafe { std::mem::transmute::<*const u8, Entry>(f) };
    Ok(Native {
        module: Some(module),
        entry,
        code_bytes,
    })
}

const TRUSTED: MemFlagsData = MemFlagsData::trusted();

/// Code generation state for one program.
struct Gen<'a, M> {
    b: FunctionBuilder<'a>,
    p: &'a Program,
    slot_of: SlotOf<'a>,
    call_conv: cranelift_codegen::isa::CallConv,
    tcfg: cranelift_codegen::isa::TargetFrontendConfig,
    ctx: Value,
    vregs: Value,
    base: Value,
    vars: Vec<Option<Variable>>,
    written: Vec<bool>,
    /// eager, kind, a, b, r.
    fl: [Variable; 5],
    left: Variable,
    pending: Variable,
    ex_code: Variable,
    ex_ip: Variable,
    ex_unbill: Variable,
    ex_slot: Variable,
    ex_key: Variable,
    blocks: Vec<CBlock>,
    exit: CBlock,
    /// The flag record's kind where the compiler knows it.
    known: Option<FlagKind>,
    _m: std::marker::PhantomData<M>,
}

fn lane_of(r: Reg) -> Lane {
    r.lane
}

impl<'a, M: MachineRuntime> Gen<'a, M> {
    fn new(
        mut b: FunctionBuilder<'a>,
        p: &'a Program,
        slot_of: SlotOf<'a>,
        tcfg: cranelift_codegen::isa::TargetFrontendConfig,
    ) -> Self {
        let call_conv = tcfg.default_call_conv;
        let fl = [
            b.declare_var(I32),
            b.declare_var(I32),
            b.declare_var(I32),
            b.declare_var(I32),
            b.declare_var(I32),
        ];
        let left = b.declare_var(I64);
        let pending = b.declare_var(I32);
        let ex_code = b.declare_var(I32);
        let ex_ip = b.declare_var(I32);
        let ex_unbill = b.declare_var(I32);
        let ex_slot = b.declare_var(I32);
        let ex_key = b.declare_var(I64);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let ctx = b.block_params(entry)[0];
        let vregs = b
            .ins()
            .load(I64, TRUSTED, ctx, offset_of!(Ctx, vregs) as i32);
        let base = b
            .ins()
            .load(I64, TRUSTED, ctx, offset_of!(Ctx, base) as i32);
        let blocks: Vec<CBlock> = p.blocks.iter().map(|_| b.create_block()).collect();
        let exit = b.create_block();
        Gen {
            b,
            p,
            slot_of,
            call_conv,
            tcfg,
            ctx,
            vregs,
            base,
            vars: vec![None; 256],
            written: vec![false; 256],
            fl,
            left,
            pending,
            ex_code,
            ex_ip,
            ex_unbill,
            ex_slot,
            ex_key,
            blocks,
            exit,
            known: None,
            _m: std::marker::PhantomData,
        }
    }

    // ----- small builders ---------------------------------------------------

    fn c32(&mut self, v: u32) -> Value {
        self.b.ins().iconst(I32, v as i32 as i64)
    }
    fn c64(&mut self, v: u64) -> Value {
        self.b.ins().iconst(I64, v as i64)
    }
    fn ctx_load(&mut self, ty: cranelift_codegen::ir::Type, off: usize) -> Value {
        self.b.ins().load(ty, TRUSTED, self.ctx, off as i32)
    }
    fn ctx_store(&mut self, v: Value, off: usize) {
        self.b.ins().store(TRUSTED, v, self.ctx, off as i32);
    }
    fn var(&self, v: u16) -> Variable {
        self.vars[v as usize].expect("every vreg named is declared at entry")
    }
    fn get(&mut self, v: u16) -> Value {
        let x = self.var(v);
        self.b.use_var(x)
    }
    fn rd(&mut self, r: Reg) -> Value {
        let v = self.get(r.v.0);
        match lane_of(r) {
            Lane::D => v,
            Lane::W => self.b.ins().band_imm_s(v, 0xFFFF),
            Lane::B => self.b.ins().band_imm_s(v, 0xFF),
            Lane::H => {
                let s = self.b.ins().ushr_imm_s(v, 8);
                self.b.ins().band_imm_s(s, 0xFF)
            }
        }
    }
    fn src(&mut self, s: Src) -> Value {
        match s {
            Src::Reg(r) => self.rd(r),
            Src::Imm(i) => self.c32(i),
        }
    }
    fn wr(&mut self, r: Reg, x: Value) {
        let var = self.var(r.v.0);
        let v = match r.lane {
            Lane::D => x,
            lane => {
                let old = self.b.use_var(var);
                let m = lane.mask() << lane.shift();
                let keep = self.b.ins().band_imm_s(old, (!m) as i32 as i64);
                let xs = if lane.shift() != 0 {
                    self.b.ins().ishl_imm_s(x, lane.shift() as i64)
                } else {
                    x
                };
                let put = self.b.ins().band_imm_s(xs, m as i32 as i64);
                self.b.ins().bor(keep, put)
            }
        };
        self.b.def_var(var, v);
    }
    fn mask(&mut self, v: Value, w: Width) -> Value {
        match w {
            Width::W32 => v,
            _ => self.b.ins().band_imm_s(v, w.mask() as i64),
        }
    }
    fn sext(&mut self, v: Value, w: Width) -> Value {
        let s = 32 - w.bits() as i64;
        if s == 0 {
            return v;
        }
        let l = self.b.ins().ishl_imm_s(v, s);
        self.b.ins().sshr_imm_s(l, s)
    }
    /// 1 if bit `s` of `v` is set, else 0.
    fn bit(&mut self, v: Value, s: u32) -> Value {
        let x = self.b.ins().ushr_imm_s(v, s as i64);
        self.b.ins().band_imm_s(x, 1)
    }
    fn bool32(&mut self, c: Value) -> Value {
        self.b.ins().uextend(I32, c)
    }

    fn sig(
        &mut self,
        params: &[cranelift_codegen::ir::Type],
        ret: Option<cranelift_codegen::ir::Type>,
    ) -> cranelift_codegen::ir::SigRef {
        let mut s = Signature::new(self.call_conv);
        for &t in params {
            s.params.push(AbiParam::new(t));
        }
        if let Some(r) = ret {
            s.returns.push(AbiParam::new(r));
        }
        self.b.import_signature(s)
    }
    /// Calls a helper at `addr`; its one result if it has one.
    fn call(
        &mut self,
        addr: usize,
        params: &[cranelift_codegen::ir::Type],
        ret: Option<cranelift_codegen::ir::Type>,
        args: &[Value],
    ) -> Option<Value> {
        let sr = self.sig(params, ret);
        let f = self.c64(addr as u64);
        let inst = self.b.ins().call_indirect(sr, f, args);
        self.b.inst_results(inst).first().copied()
    }

    /// `now` of a site: `base - left - unbill`.
    fn now(&mut self, site: Site) -> Value {
        let left = self.b.use_var(self.left);
        let x = self.b.ins().isub(self.base, left);
        self.b.ins().iadd_imm_s(x, -(site.unbill as i64))
    }

    fn spill_flags(&mut self) {
        for i in 0..5 {
            let v = self.b.use_var(self.fl[i]);
            self.ctx_store(v, offset_of!(Ctx, fl) + 4 * i);
        }
    }
    fn reload_flags(&mut self) {
        for i in 0..5 {
            let v = self.ctx_load(I32, offset_of!(Ctx, fl) + 4 * i);
            self.b.def_var(self.fl[i], v);
        }
    }
    fn flag_vals(&mut self) -> [Value; 5] {
        let f = self.fl;
        f.map(|v| self.b.use_var(v))
    }
    fn record(&mut self, kind: FlagKind, a: Value, bv: Value, r: Value) {
        let k = self.c32(kind as u32);
        self.b.def_var(self.fl[1], k);
        self.b.def_var(self.fl[2], a);
        self.b.def_var(self.fl[3], bv);
        self.b.def_var(self.fl[4], r);
        self.known = Some(kind);
    }
    /// Stores every vreg the program wrote (the exit, a service).
    fn store_written(&mut self) {
        for i in 0..256 {
            if self.written[i] {
                if let Some(v) = self.vars[i] {
                    let x = self.b.use_var(v);
                    self.b.ins().store(TRUSTED, x, self.vregs, (4 * i) as i32);
                }
            }
        }
    }

    // ----- exits ------------------------------------------------------------

    /// Jumps to the exit with a reason code and a site.
    fn leave(&mut self, reason: Value, ip: Value, unbill: u32) {
        self.b.def_var(self.ex_code, reason);
        self.b.def_var(self.ex_ip, ip);
        let u = self.c32(unbill);
        self.b.def_var(self.ex_unbill, u);
        self.b.ins().jump(self.exit, &[]);
    }
    fn leave_site(&mut self, reason: u32, site: Site) {
        let r = self.c32(reason);
        let ip = self.c32(site.ip);
        self.leave(r, ip, site.unbill);
    }
    /// The reason of the stop owed (pending is nonzero).
    fn owed_code(&mut self) -> Value {
        let p = self.b.use_var(self.pending);
        let is_smc = self.b.ins().icmp_imm_s(IntCC::Equal, p, 1);
        let smc = self.c32(code::SMC);
        let svc = self.c32(code::SERVICE);
        self.b.ins().select(is_smc, smc, svc)
    }
    /// `if cond { leave(reason at site) }`, continuing in a fresh block.
    fn exit_if(&mut self, cond: Value, reason: u32, site: Site) {
        let out = self.b.create_block();
        let cont = self.b.create_block();
        self.b.ins().brif(cond, out, &[], cont, &[]);
        self.b.switch_to_block(out);
        self.b.seal_block(out);
        self.leave_site(reason, site);
        self.b.switch_to_block(cont);
        self.b.seal_block(cont);
    }
    /// `if pending != 0 { leave(owed at site, ip) }`.
    fn exit_if_owed_ip(&mut self, site: Site, ip: Value) {
        let p = self.b.use_var(self.pending);
        let out = self.b.create_block();
        let cont = self.b.create_block();
        self.b.ins().brif(p, out, &[], cont, &[]);
        self.b.switch_to_block(out);
        self.b.seal_block(out);
        let r = self.owed_code();
        self.leave(r, ip, site.unbill);
        self.b.switch_to_block(cont);
        self.b.seal_block(cont);
    }
    fn exit_if_owed(&mut self, site: Site) {
        let ip = self.c32(site.ip);
        self.exit_if_owed_ip(site, ip);
    }
    /// Owes a stop (device or service) unless one is owed already.
    fn owe_service(&mut self, when: Value) {
        let p = self.b.use_var(self.pending);
        let none = self.b.ins().icmp_imm_s(IntCC::Equal, p, 0);
        let c = self.b.ins().band(when, none);
        let two = self.c32(2);
        let v = self.b.ins().select(c, two, p);
        self.b.def_var(self.pending, v);
    }
    fn owe_smc(&mut self) {
        let p = self.b.use_var(self.pending);
        let none = self.b.ins().icmp_imm_s(IntCC::Equal, p, 0);
        let one = self.c32(1);
        let v = self.b.ins().select(none, one, p);
        self.b.def_var(self.pending, v);
    }

    // ----- flags ------------------------------------------------------------

    /// The carry flag as 0/1, inline when the kind is known.
    fn cf(&mut self) -> Value {
        let [e, k, a, b, r] = self.flag_vals();
        let Some(kind) = self.known else {
            return self
                .call(
                    ctx::h_cf as *const () as usize,
                    &[I32, I32, I32, I32, I32],
                    Some(I32),
                    &[e, k, a, b, r],
                )
                .expect("h_cf returns");
        };
        let s = kind.width().sign_shift();
        match kind.op() {
            FlagOp::Add => {
                let ab = self.b.ins().band(a, b);
                let o = self.b.ins().bor(a, b);
                let nr = self.b.ins().bnot(r);
                let x = self.b.ins().band(o, nr);
                let y = self.b.ins().bor(ab, x);
                self.bit(y, s)
            }
            FlagOp::Sub => {
                let na = self.b.ins().bnot(a);
                let x1 = self.b.ins().band(na, b);
                let ax = self.b.ins().bxor(a, b);
                let nx = self.b.ins().bnot(ax);
                let x2 = self.b.ins().band(nx, r);
                let y = self.b.ins().bor(x1, x2);
                self.bit(y, s)
            }
            FlagOp::Logic => self.c32(0),
            _ => self.b.ins().band_imm_s(e, 1),
        }
    }
    /// One of the six flags (by its bit) as 0/1 for a known kind.
    fn flag_known(&mut self, kind: FlagKind, bit: u32) -> Value {
        let [e, _k, a, b, r] = self.flag_vals();
        let s = kind.width().sign_shift();
        if kind == FlagKind::Eager {
            return self.bit(e, bit.trailing_zeros());
        }
        match bit {
            shared_ir::flags::CF => self.cf(),
            shared_ir::flags::ZF => {
                let z = self.b.ins().icmp_imm_s(IntCC::Equal, r, 0);
                self.bool32(z)
            }
            shared_ir::flags::SF => self.bit(r, s),
            shared_ir::flags::PF => {
                let lo = self.b.ins().band_imm_s(r, 0xFF);
                let n = self.b.ins().popcnt(lo);
                let odd = self.b.ins().band_imm_s(n, 1);
                self.b.ins().bxor_imm_s(odd, 1)
            }
            _ => match kind.op() {
                // OF
                FlagOp::Add | FlagOp::Inc => {
                    let x = self.b.ins().bxor(a, r);
                    let y = self.b.ins().bxor(b, r);
                    let z = self.b.ins().band(x, y);
                    self.bit(z, s)
                }
                FlagOp::Sub | FlagOp::Dec => {
                    let x = self.b.ins().bxor(a, b);
                    let y = self.b.ins().bxor(a, r);
                    let z = self.b.ins().band(x, y);
                    self.bit(z, s)
                }
                FlagOp::Logic => self.c32(0),
                _ => self.bit(e, 11),
            },
        }
    }
    /// x86 condition `cc` as an I32 0/1.
    fn cond(&mut self, cc: u8) -> Value {
        use shared_ir::flags::{CF, OF, PF, SF, ZF};
        let Some(kind) = self.known else {
            let [e, k, a, b, r] = self.flag_vals();
            let c = self.c32(cc as u32);
            return self
                .call(
                    ctx::h_cond as *const () as usize,
                    &[I32, I32, I32, I32, I32, I32],
                    Some(I32),
                    &[e, k, a, b, r, c],
                )
                .expect("h_cond returns");
        };
        // Common shapes straight from the record: ZF of a result.
        let v = match cc >> 1 {
            0 => self.flag_known(kind, OF),
            1 => self.flag_known(kind, CF),
            2 => self.flag_known(kind, ZF),
            3 => {
                let c = self.flag_known(kind, CF);
                let z = self.flag_known(kind, ZF);
                self.b.ins().bor(c, z)
            }
            4 => self.flag_known(kind, SF),
            5 => self.flag_known(kind, PF),
            6 => {
                let s = self.flag_known(kind, SF);
                let o = self.flag_known(kind, OF);
                self.b.ins().bxor(s, o)
            }
            _ => {
                let z = self.flag_known(kind, ZF);
                let s = self.flag_known(kind, SF);
                let o = self.flag_known(kind, OF);
                let so = self.b.ins().bxor(s, o);
                self.b.ins().bor(z, so)
            }
        };
        if cc & 1 != 0 {
            self.b.ins().bxor_imm_s(v, 1)
        } else {
            v
        }
    }

    // ----- memory -----------------------------------------------------------

    fn opt_reg(&mut self, v: Option<shared_ir::ir::VReg>) -> Value {
        match v {
            Some(v) => self.get(v.0),
            None => self.c32(0),
        }
    }
    /// Effective offset, and exit (fallback at `site`) when the access of
    /// `w` passes the limit.
    fn offset(&mut self, a: &Addr, w: Width, site: Site) -> Value {
        let ea = self.ea(a);
        let last = self.b.ins().uextend(I64, ea);
        let last = self.b.ins().iadd_imm_s(last, (w.bytes() - 1) as i64);
        let past = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedGreaterThan, last, a.limit as i64);
        self.exit_if(past, code::FALLBACK, site);
        ea
    }
    fn ea(&mut self, a: &Addr) -> Value {
        let base = self.opt_reg(a.base);
        let idx = self.opt_reg(a.index);
        let sh = self.b.ins().ishl_imm_s(idx, a.scale as i64);
        let s = self.b.ins().iadd(base, sh);
        let s = self.b.ins().iadd_imm_s(s, a.disp as i32 as i64);
        self.mask_asize(s, a)
    }
    fn mask_asize(&mut self, v: Value, a: &Addr) -> Value {
        match a.asize.mask() {
            0xFFFF_FFFF => v,
            m => self.b.ins().band_imm_s(v, m as i64),
        }
    }
    /// Host address of an access the page view serves, branching to `slow`
    /// otherwise (the same test as `FastMem::host`).
    fn fast_addr(&mut self, lin: Value, w: Width, bit: u32, slow: CBlock) -> Value {
        let shift = M::PAGE_SHIFT;
        let pmask = (1u32 << shift) - 1;
        let n = w.bytes();
        let page = self.b.ins().ushr_imm_s(lin, shift as i64);
        let page = self.b.ins().uextend(I64, page);
        let plen = self.ctx_load(I64, offset_of!(Ctx, pages_len));
        let oob = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, page, plen);
        self.branch_to(oob, slow);
        let pages = self.ctx_load(I64, offset_of!(Ctx, pages));
        let po = self.b.ins().ishl_imm_s(page, 2);
        let pa = self.b.ins().iadd(pages, po);
        let e = self.b.ins().load(I32, TRUSTED, pa, 0);
        let has = self.b.ins().band_imm_s(e, bit as i64);
        let no = self.b.ins().icmp_imm_s(IntCC::Equal, has, 0);
        let off = self.b.ins().band_imm_s(lin, pmask as i64);
        if n > 1 {
            let end = self.b.ins().iadd_imm_s(off, n as i64);
            let cross =
                self.b
                    .ins()
                    .icmp_imm_s(IntCC::UnsignedGreaterThan, end, (pmask + 1) as i64);
            let bad = self.b.ins().bor(no, cross);
            self.branch_to(bad, slow);
        } else {
            self.branch_to(no, slow);
        }
        let pstart = self.b.ins().band_imm_s(e, !pmask as i32 as i64);
        let h = self.b.ins().iadd(pstart, off);
        let h = self.b.ins().uextend(I64, h);
        let rlen = self.ctx_load(I64, offset_of!(Ctx, ram_len));
        let hend = self.b.ins().iadd_imm_s(h, n as i64);
        let over = self.b.ins().icmp(IntCC::UnsignedGreaterThan, hend, rlen);
        self.branch_to(over, slow);
        let ram = self.ctx_load(I64, offset_of!(Ctx, ram));
        self.b.ins().iadd(ram, h)
    }
    /// `if cond { goto target }`, continuing in a fresh block.
    fn branch_to(&mut self, cond: Value, target: CBlock) {
        let cont = self.b.create_block();
        self.b.ins().brif(cond, target, &[], cont, &[]);
        self.b.switch_to_block(cont);
        self.b.seal_block(cont);
    }

    fn load(&mut self, w: Width, dst: Reg, addr: &Addr, path: MemPath, site: Site) {
        let ea = self.offset(addr, w, site);
        let seg = self.opt_reg(addr.seg);
        let lin = self.b.ins().iadd(seg, ea);
        let val = self.b.declare_var(I32);
        let slow = self.b.create_block();
        let join = self.b.create_block();
        if path == MemPath::Fast {
            let h = self.fast_addr(lin, w, PAGE_READ, slow);
            let v = match w {
                Width::W8 => self.b.ins().uload8(I32, TRUSTED, h, 0),
                Width::W16 => self.b.ins().uload16(I32, TRUSTED, h, 0),
                Width::W32 => self.b.ins().load(I32, TRUSTED, h, 0),
            };
            self.b.def_var(val, v);
            self.b.ins().jump(join, &[]);
        } else {
            self.b.ins().jump(slow, &[]);
        }
        self.b.switch_to_block(slow);
        self.b.seal_block(slow);
        let now = self.now(site);
        let wi = self.c32(w as u32);
        let r = self
            .call(
                ctx::h_read::<M> as *const () as usize,
                &[I64, I32, I32, I64],
                Some(I64),
                &[self.ctx, lin, wi, now],
            )
            .expect("h_read returns");
        let hi = self.b.ins().ushr_imm_s(r, 32);
        let refused = self.b.ins().icmp_imm_s(IntCC::NotEqual, hi, 0);
        self.exit_if(refused, code::FALLBACK, site);
        let v = self.b.ins().ireduce(I32, r);
        self.b.def_var(val, v);
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(join);
        self.b.seal_block(join);
        let v = self.b.use_var(val);
        let v = self.mask(v, w);
        self.wr(dst, v);
    }

    fn store(
        &mut self,
        w: Width,
        src: Src,
        addr: &Addr,
        path: MemPath,
        site: Site,
        after: Option<Site>,
    ) {
        let ea = self.offset(addr, w, site);
        let seg = self.opt_reg(addr.seg);
        let lin = self.b.ins().iadd(seg, ea);
        let v = self.src(src);
        let v = self.mask(v, w);
        let slow = self.b.create_block();
        let join = self.b.create_block();
        if path == MemPath::Fast {
            let h = self.fast_addr(lin, w, PAGE_WRITE, slow);
            match w {
                Width::W8 => {
                    self.b.ins().istore8(TRUSTED, v, h, 0);
                }
                Width::W16 => {
                    self.b.ins().istore16(TRUSTED, v, h, 0);
                }
                Width::W32 => {
                    self.b.ins().store(TRUSTED, v, h, 0);
                }
            }
            self.b.ins().jump(join, &[]);
        } else {
            self.b.ins().jump(slow, &[]);
        }
        self.b.switch_to_block(slow);
        self.b.seal_block(slow);
        let now = self.now(site);
        let wi = self.c32(w as u32);
        let r = self
            .call(
                ctx::h_write::<M> as *const () as usize,
                &[I64, I32, I32, I32, I64],
                Some(I32),
                &[self.ctx, lin, wi, v, now],
            )
            .expect("h_write returns");
        let refused = self.b.ins().icmp_imm_s(IntCC::Equal, r, 2);
        self.exit_if(refused, code::FALLBACK, site);
        let hit = self.b.ins().icmp_imm_s(IntCC::Equal, r, 1);
        let on_hit = self.b.create_block();
        self.b.ins().brif(hit, on_hit, &[], join, &[]);
        self.b.switch_to_block(on_hit);
        self.b.seal_block(on_hit);
        self.owe_smc();
        match after {
            Some(a) => {
                let r = self.owed_code();
                let ip = self.c32(a.ip);
                self.leave(r, ip, a.unbill);
            }
            None => {
                self.b.ins().jump(join, &[]);
            }
        }
        self.b.switch_to_block(join);
        self.b.seal_block(join);
    }

    /// After a device or service call: 0 continue, 1 stop after, 2 refused.
    fn service_outcome(&mut self, r: Value, site: Site, after: Option<Site>) {
        let refused = self.b.ins().icmp_imm_s(IntCC::Equal, r, 2);
        self.exit_if(refused, code::FALLBACK, site);
        let stop = self.b.ins().icmp_imm_s(IntCC::Equal, r, 1);
        self.owe_service(stop);
        if let Some(a) = after {
            let out = self.b.create_block();
            let cont = self.b.create_block();
            self.b.ins().brif(stop, out, &[], cont, &[]);
            self.b.switch_to_block(out);
            self.b.seal_block(out);
            let code = self.owed_code();
            let ip = self.c32(a.ip);
            self.leave(code, ip, a.unbill);
            self.b.switch_to_block(cont);
            self.b.seal_block(cont);
        }
    }

    // ----- ops --------------------------------------------------------------

    fn op(&mut self, op: &Op) {
        match *op {
            Op::Mov { dst, src } => {
                let v = self.src(src);
                self.wr(dst, v);
            }
            Op::Sext { dst, src, from } => {
                let v = self.rd(src);
                let v = self.mask(v, from);
                let v = self.sext(v, from);
                self.wr(dst, v);
            }
            Op::Alu { op, w, dst, a, b } => {
                let av = self.src(a);
                let bv = self.src(b);
                let am = self.mask(av, w);
                let bm = self.mask(bv, w);
                let r = match op {
                    AluOp::Add => self.b.ins().iadd(am, bm),
                    AluOp::Sub => self.b.ins().isub(am, bm),
                    AluOp::And => self.b.ins().band(am, bm),
                    AluOp::Or => self.b.ins().bor(am, bm),
                    AluOp::Xor => self.b.ins().bxor(am, bm),
                    AluOp::Shl => {
                        let c = self.b.ins().band_imm_s(bv, 31);
                        self.b.ins().ishl(am, c)
                    }
                    AluOp::Shr => {
                        let c = self.b.ins().band_imm_s(bv, 31);
                        self.b.ins().ushr(am, c)
                    }
                    AluOp::Sar => {
                        let c = self.b.ins().band_imm_s(bv, 31);
                        let s = self.sext(am, w);
                        self.b.ins().sshr(s, c)
                    }
                    AluOp::Mul => self.b.ins().imul(am, bm),
                };
                let r = self.mask(r, w);
                self.wr(dst, r);
            }
            Op::Arith { op, w, dst, a, b } => self.arith_into(op, w, dst, a, b),
            Op::Shift {
                op,
                w,
                dst,
                a,
                count,
            } => {
                let av = self.src(a);
                let cv = self.src(count);
                self.spill_flags();
                let o = self.c32(ctx::shift_index(op));
                let wi = self.c32(w as u32);
                let r = self
                    .call(
                        ctx::h_shift as *const () as usize,
                        &[I64, I32, I32, I32, I32],
                        Some(I32),
                        &[self.ctx, o, wi, av, cv],
                    )
                    .expect("h_shift returns");
                self.reload_flags();
                self.known = None;
                self.wr(dst, r);
            }
            Op::FlagsRec { kind, a, b, r } => {
                let (av, bv, rv) = (self.src(a), self.src(b), self.src(r));
                self.record(kind, av, bv, rv);
            }
            Op::FlagsGet { dst } => {
                let [e, k, a, b, r] = self.flag_vals();
                let v = self
                    .call(
                        ctx::h_bits as *const () as usize,
                        &[I32, I32, I32, I32, I32],
                        Some(I32),
                        &[e, k, a, b, r],
                    )
                    .expect("h_bits returns");
                self.wr(dst, v);
            }
            Op::FlagsSet { src, mask } => {
                let v = self.src(src);
                self.spill_flags();
                let m = self.c32(mask);
                self.call(
                    ctx::h_flagsset as *const () as usize,
                    &[I64, I32, I32],
                    None,
                    &[self.ctx, v, m],
                );
                self.reload_flags();
                self.known = Some(FlagKind::Eager);
            }
            Op::GetCond { dst, cc } => {
                let v = self.cond(cc);
                self.wr(dst, v);
            }
            Op::StrStep { dst, n } => {
                // DF lives in the eager word whatever the record's kind.
                let [e, _k, _a, _b, _r] = self.flag_vals();
                let df = self.b.ins().band_imm_s(e, shared_ir::flags::DF as i64);
                let up = self.c32(n);
                let down = self.c32(n.wrapping_neg());
                let v = self.b.ins().select(df, down, up);
                self.wr(dst, v);
            }
            Op::Load {
                w,
                dst,
                addr,
                path,
                site,
            } => self.load(w, dst, &addr, path, site),
            Op::Store {
                w,
                src,
                addr,
                path,
                site,
                after,
            } => self.store(w, src, &addr, path, site, after),
            Op::In { w, dst, port, site } => {
                let pv = self.src(port);
                let pv = self.b.ins().band_imm_s(pv, 0xFFFF);
                let now = self.now(site);
                let wi = self.c32(w as u32);
                let r = self
                    .call(
                        ctx::h_in::<M> as *const () as usize,
                        &[I64, I32, I32, I64],
                        Some(I64),
                        &[self.ctx, pv, wi, now],
                    )
                    .expect("h_in returns");
                let refused = self.b.ins().ushr_imm_s(r, 33);
                let refused = self.b.ins().icmp_imm_s(IntCC::NotEqual, refused, 0);
                self.exit_if(refused, code::FALLBACK, site);
                let v = self.b.ins().ireduce(I32, r);
                let v = self.mask(v, w);
                self.wr(dst, v);
                let stop = self.b.ins().ushr_imm_s(r, 32);
                let stop = self.b.ins().ireduce(I32, stop);
                let stop = self.b.ins().icmp_imm_s(IntCC::NotEqual, stop, 0);
                self.owe_service(stop);
            }
            Op::Out {
                w,
                port,
                val,
                site,
                after,
            } => {
                let pv = self.src(port);
                let pv = self.b.ins().band_imm_s(pv, 0xFFFF);
                let v = self.src(val);
                let v = self.mask(v, w);
                let now = self.now(site);
                let wi = self.c32(w as u32);
                let r = self
                    .call(
                        ctx::h_out::<M> as *const () as usize,
                        &[I64, I32, I32, I32, I64],
                        Some(I32),
                        &[self.ctx, pv, wi, v, now],
                    )
                    .expect("h_out returns");
                self.service_outcome(r, site, after);
            }
            Op::Service { id, site, after } => {
                let guest = self.p.guest as usize;
                self.store_written();
                self.spill_flags();
                let now = self.now(site);
                let idv = self.c32(id as u32);
                let g = self.c32(guest as u32);
                let r = self
                    .call(
                        ctx::h_service::<M> as *const () as usize,
                        &[I64, I32, I32, I64],
                        Some(I32),
                        &[self.ctx, idv, g, now],
                    )
                    .expect("h_service returns");
                self.reload_flags();
                self.known = None;
                // The service may have changed any guest register.
                for i in 0..guest.min(255) {
                    if let Some(var) = self.vars[i] {
                        let x = self.b.ins().load(I32, TRUSTED, self.vregs, (4 * i) as i32);
                        self.b.def_var(var, x);
                    }
                }
                self.service_outcome(r, site, after);
            }
            Op::Call {
                helper,
                outs,
                args,
                site,
            } => {
                let a: Vec<Value> = args.iter().map(|s| self.src(*s)).collect();
                self.spill_flags();
                let h = self.c32(
                    shared_ir::ir::Helper::ALL
                        .iter()
                        .position(|x| *x == helper)
                        .unwrap_or(usize::MAX) as u32,
                );
                let st = self
                    .call(
                        ctx::h_call as *const () as usize,
                        &[I64, I32, I32, I32, I32],
                        Some(I32),
                        &[self.ctx, h, a[0], a[1], a[2]],
                    )
                    .expect("h_call returns");
                self.exit_if(st, code::FALLBACK, site);
                self.reload_flags();
                self.known = None;
                let n = helper.arity().1;
                for (i, o) in outs[..n].iter().enumerate() {
                    if let Some(o) = o {
                        let v = self.ctx_load(I32, offset_of!(Ctx, res) + 4 * i);
                        self.wr(*o, v);
                    }
                }
            }
            Op::Clock { n } => {
                // `n` is a signed count: `opt::clock` gives dispatches back
                // on the edges of paths shorter than the one billed ahead.
                let l = self.b.use_var(self.left);
                let l = self.b.ins().iadd_imm_s(l, -(n as i32 as i64));
                self.b.def_var(self.left, l);
            }
            Op::ClockCheck { n, site } => {
                self.exit_if_owed(site);
                let l = self.b.use_var(self.left);
                let short = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, l, n as i64);
                self.exit_if(short, code::BUDGET, site);
                let l = self.b.use_var(self.left);
                let l = self.b.ins().iadd_imm_s(l, -(n as i64));
                self.b.def_var(self.left, l);
            }
            // Entry counts are E1's tier-up signal; native entries are
            // counted by the dispatcher.
            Op::Count => {}
            Op::ExitIfPending { site } => self.exit_if_owed(site),
            // Owed without asking `stop_if_needed` (no call out of native
            // code for it): a stop is always exact, and the driver resumes
            // one that finds nothing to do.
            Op::StopIf { src } => {
                let v = self.src(src);
                let nz = self.b.ins().icmp_imm_s(IntCC::NotEqual, v, 0);
                self.owe_service(nz);
            }
            Op::Check { w, addr, site } => {
                self.offset(&addr, w, site);
            }
            Op::X87 { .. } => unreachable!("declined by check()"),
        }
    }

    /// [`Op::Arith`]'s meaning (flag record written, `dst` when given); the
    /// `BrArith` terminator runs it before its branch.
    fn arith_into(&mut self, op: ArithOp, w: Width, dst: Option<Reg>, a: Src, b: Src) {
        let av = self.src(a);
        let bv = self.src(b);
        let r = self.arith(op, w, av, bv);
        if let Some(d) = dst {
            self.wr(d, r);
        }
    }

    fn arith(&mut self, op: ArithOp, w: Width, a: Value, b: Value) -> Value {
        let a = self.mask(a, w);
        let b = self.mask(b, w);
        let kind_of = |o: FlagOp| FlagKind::new(o, w);
        match op {
            ArithOp::Add | ArithOp::Sub | ArithOp::Neg => {
                let (x, y, fo) = match op {
                    ArithOp::Add => (a, b, FlagOp::Add),
                    ArithOp::Sub => (a, b, FlagOp::Sub),
                    _ => (self.c32(0), a, FlagOp::Sub),
                };
                let r = if fo == FlagOp::Add {
                    self.b.ins().iadd(x, y)
                } else {
                    self.b.ins().isub(x, y)
                };
                let r = self.mask(r, w);
                self.record(kind_of(fo), x, y, r);
                r
            }
            ArithOp::And | ArithOp::Or | ArithOp::Xor => {
                let r = match op {
                    ArithOp::And => self.b.ins().band(a, b),
                    ArithOp::Or => self.b.ins().bor(a, b),
                    _ => self.b.ins().bxor(a, b),
                };
                let z = self.c32(0);
                self.record(kind_of(FlagOp::Logic), z, z, r);
                r
            }
            ArithOp::Adc | ArithOp::Sbb if self.known.is_some() => {
                let c = self.cf();
                let (r, fo) = if op == ArithOp::Adc {
                    let s = self.b.ins().iadd(a, b);
                    (self.b.ins().iadd(s, c), FlagOp::Add)
                } else {
                    let s = self.b.ins().isub(a, b);
                    (self.b.ins().isub(s, c), FlagOp::Sub)
                };
                let r = self.mask(r, w);
                self.record(kind_of(fo), a, b, r);
                r
            }
            ArithOp::Inc | ArithOp::Dec if self.known.is_some() => {
                let kind = self.known.unwrap_or(FlagKind::Eager);
                if kind.eager_part() & shared_ir::flags::CF == 0 {
                    // pin_cf: CF moves into the eager word.
                    let c = self.cf();
                    let e = self.b.use_var(self.fl[0]);
                    let e = self.b.ins().band_imm_s(e, !1i64);
                    let e = self.b.ins().bor(e, c);
                    self.b.def_var(self.fl[0], e);
                }
                let (r, fo) = if op == ArithOp::Inc {
                    (self.b.ins().iadd_imm_s(a, 1), FlagOp::Inc)
                } else {
                    (self.b.ins().iadd_imm_s(a, -1), FlagOp::Dec)
                };
                let r = self.mask(r, w);
                let one = self.c32(1);
                self.record(kind_of(fo), a, one, r);
                r
            }
            _ => {
                // The record's kind is unknown here: the helper reads CF.
                self.spill_flags();
                let o = self.c32(ctx::arith_index(op));
                let wi = self.c32(w as u32);
                let r = self
                    .call(
                        ctx::h_arith as *const () as usize,
                        &[I64, I32, I32, I32, I32],
                        Some(I32),
                        &[self.ctx, o, wi, a, b],
                    )
                    .expect("h_arith returns");
                self.reload_flags();
                self.known = Some(match op {
                    ArithOp::Adc => kind_of(FlagOp::Add),
                    ArithOp::Sbb => kind_of(FlagOp::Sub),
                    ArithOp::Inc => kind_of(FlagOp::Inc),
                    _ => kind_of(FlagOp::Dec),
                });
                r
            }
        }
    }

    fn compare(&mut self, op: CmpOp, w: Width, a: Value, b: Value) -> Value {
        let a = self.mask(a, w);
        let b = self.mask(b, w);
        let (cc, signed) = match op {
            CmpOp::Eq => (IntCC::Equal, false),
            CmpOp::Ne => (IntCC::NotEqual, false),
            CmpOp::Ltu => (IntCC::UnsignedLessThan, false),
            CmpOp::Leu => (IntCC::UnsignedLessThanOrEqual, false),
            CmpOp::Gtu => (IntCC::UnsignedGreaterThan, false),
            CmpOp::Geu => (IntCC::UnsignedGreaterThanOrEqual, false),
            CmpOp::Lts => (IntCC::SignedLessThan, true),
            CmpOp::Les => (IntCC::SignedLessThanOrEqual, true),
            CmpOp::Gts => (IntCC::SignedGreaterThan, true),
            CmpOp::Ges => (IntCC::SignedGreaterThanOrEqual, true),
        };
        let (a, b) = if signed {
            (self.sext(a, w), self.sext(b, w))
        } else {
            (a, b)
        };
        self.b.ins().icmp(cc, a, b)
    }

    fn term(&mut self, t: &Term) {
        match *t {
            Term::Jmp(t) => {
                self.b.ins().jump(self.blocks[t.0 as usize], &[]);
            }
            Term::BrCc { cc, t, f } => {
                let c = self.cond(cc);
                let (tb, fb) = (self.blocks[t.0 as usize], self.blocks[f.0 as usize]);
                self.b.ins().brif(c, tb, &[], fb, &[]);
            }
            Term::BrArith {
                op,
                w,
                dst,
                a,
                b,
                cc,
                t,
                f,
            } => {
                // Exactly Op::Arith then Term::BrCc (flag forwarding).
                self.arith_into(op, w, dst, a, b);
                let c = self.cond(cc);
                let (tb, fb) = (self.blocks[t.0 as usize], self.blocks[f.0 as usize]);
                self.b.ins().brif(c, tb, &[], fb, &[]);
            }
            Term::BrCmp { op, w, a, b, t, f } => {
                let (av, bv) = (self.src(a), self.src(b));
                let c = self.compare(op, w, av, bv);
                let (tb, fb) = (self.blocks[t.0 as usize], self.blocks[f.0 as usize]);
                self.b.ins().brif(c, tb, &[], fb, &[]);
            }
            Term::Exit { kind, site } => {
                self.exit_if_owed(site);
                let c = match kind {
                    ExitKind::Fallback => code::FALLBACK,
                    ExitKind::Stop => code::STOP,
                    ExitKind::Shadow => code::SHADOW,
                };
                self.leave_site(c, site);
            }
            Term::Link { key, site } => {
                self.exit_if_owed(site);
                let slot = (self.slot_of)(key).map_or(0, |s| s.0);
                if key == self.p.key && slot != 0 {
                    // A loop: stay in native code while the link word says
                    // the program is linked to itself (E1 follows it there).
                    let words = self.ctx_load(I64, offset_of!(Ctx, words));
                    let w = self.b.ins().load(I32, TRUSTED, words, (4 * slot) as i32);
                    let out = self.b.create_block();
                    self.b.ins().brif(w, self.blocks[0], &[], out, &[]);
                    self.b.switch_to_block(out);
                    self.b.seal_block(out);
                }
                let k = self.c64(key);
                self.b.def_var(self.ex_key, k);
                let s = self.c32(slot);
                self.b.def_var(self.ex_slot, s);
                self.leave_site(code::LINK, site);
            }
            Term::Indirect { ip, base, site } => {
                let ipv = self.src(ip);
                let bv = self.src(base);
                self.exit_if_owed_ip(site, ipv);
                let hi = self.b.ins().uextend(I64, bv);
                let hi = self.b.ins().ishl_imm_s(hi, 32);
                let lo = self.b.ins().uextend(I64, ipv);
                let k = self.b.ins().bor(hi, lo);
                self.b.def_var(self.ex_key, k);
                let r = self.c32(code::INDIRECT);
                self.leave(r, ipv, site.unbill);
            }
            Term::Rep { .. } => unreachable!("declined by check()"),
        }
    }

    fn emit(mut self) {
        // Entry: every named vreg into a variable, the flags, the budget.
        let mut named = [false; 256];
        let mut note = |r: shared_ir::ir::VReg| named[r.0 as usize & 255] = true;
        for blk in &self.p.blocks {
            for op in &blk.ops {
                op.for_each_src(|s| {
                    if let Src::Reg(r) = s {
                        note(r.v)
                    }
                });
                op.for_each_dst(|r| {
                    note(r.v);
                    self.written[r.v.0 as usize & 255] = true;
                });
                match op {
                    Op::Load { addr, .. } | Op::Store { addr, .. } | Op::Check { addr, .. } => {
                        for v in [addr.seg, addr.base, addr.index].into_iter().flatten() {
                            note(v)
                        }
                    }
                    _ => {}
                }
            }
            blk.term.for_each_src(|s| {
                if let Src::Reg(r) = s {
                    note(r.v)
                }
            });
            // The one terminator that writes a register (flag forwarding).
            if let Term::BrArith { dst: Some(r), .. } = blk.term {
                note(r.v);
                self.written[r.v.0 as usize & 255] = true;
            }
        }
        for (i, n) in named.iter().enumerate() {
            if *n {
                let var = self.b.declare_var(I32);
                let x = self.b.ins().load(I32, TRUSTED, self.vregs, (4 * i) as i32);
                self.b.def_var(var, x);
                self.vars[i] = Some(var);
            }
        }
        for i in 0..5 {
            let v = self.ctx_load(I32, offset_of!(Ctx, fl) + 4 * i);
            self.b.def_var(self.fl[i], v);
        }
        let l = self.ctx_load(I64, offset_of!(Ctx, left));
        self.b.def_var(self.left, l);
        let z = self.c32(0);
        self.b.def_var(self.pending, z);
        for v in [self.ex_code, self.ex_ip, self.ex_unbill, self.ex_slot] {
            self.b.def_var(v, z);
        }
        let z64 = self.c64(0);
        self.b.def_var(self.ex_key, z64);
        self.b.ins().jump(self.blocks[0], &[]);
        let entry = self.b.current_block().expect("in the entry block");
        self.b.seal_block(entry);

        for (i, blk) in self.p.blocks.iter().enumerate() {
            self.b.switch_to_block(self.blocks[i]);
            self.known = None;
            for op in &blk.ops {
                self.op(op);
            }
            self.term(&blk.term);
        }

        // The one exit: registers, flags, budget and the exit fields to the context.
        self.b.switch_to_block(self.exit);
        self.store_written();
        for i in 0..5 {
            let v = self.b.use_var(self.fl[i]);
            self.ctx_store(v, offset_of!(Ctx, fl) + 4 * i);
        }
        let l = self.b.use_var(self.left);
        self.ctx_store(l, offset_of!(Ctx, left));
        let p = self.b.use_var(self.pending);
        self.ctx_store(p, offset_of!(Ctx, pending));
        let ip = self.b.use_var(self.ex_ip);
        self.ctx_store(ip, offset_of!(Ctx, exit_ip));
        let u = self.b.use_var(self.ex_unbill);
        self.ctx_store(u, offset_of!(Ctx, exit_unbill));
        let s = self.b.use_var(self.ex_slot);
        self.ctx_store(s, offset_of!(Ctx, exit_slot));
        let k = self.b.use_var(self.ex_key);
        self.ctx_store(k, offset_of!(Ctx, exit_key));
        let c = self.b.use_var(self.ex_code);
        self.b.ins().return_(&[c]);
        self.b.seal_all_blocks();
        let tcfg = self.tcfg;
        self.b.finalize(tcfg);
    }
}
