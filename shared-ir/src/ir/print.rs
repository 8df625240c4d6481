//! The textual form of the IR (printer). [`super::parse`] reads the same text
//! back, so tests and repro files can be written as IR text.
//!
//! Grammar by example:
//!
//! ```text
//! program model=real16 key=0x100000100 guest=20
//! code 0x1100..0x1108
//! b0:
//!   clock.check 2 @0x100/0
//!   count
//!   ld.16 eax.w, [ds_base: ebx + esi*1 + 0x4] a16 lim=0xffff fast @0x100/2
//!   add.16.f eax.w, eax.w, 0x5
//!   brcc.ne b1, b2
//!   x87 _, dd.1e.34.12 [ds_base: 0x1234] a16 lim=0xffff sel cs.w, ds.w @0x104/0 after @0x108/1
//! ```
//!
//! Registers print with the model's names (`eax`, `ds_base`, ...), other vregs
//! as `vN`; a lane suffix `.w` `.b` `.h` follows (none for the whole register).
//! Sites are `@ip/unbill`. It owns formatting only.

use super::*;
use crate::machine::model_reg_names;
use std::fmt::Write;

pub(crate) const CC_NAMES: [&str; 16] = [
    "o", "no", "b", "ae", "e", "ne", "be", "a", "s", "ns", "p", "np", "l", "ge", "le", "g",
];

pub(crate) fn width_suffix(w: Width) -> u32 {
    w.bits()
}

pub(crate) fn alu_name(op: AluOp) -> &'static str {
    match op {
        AluOp::Add => "add",
        AluOp::Sub => "sub",
        AluOp::And => "and",
        AluOp::Or => "or",
        AluOp::Xor => "xor",
        AluOp::Shl => "shl",
        AluOp::Shr => "shr",
        AluOp::Sar => "sar",
        AluOp::Mul => "mul",
    }
}

pub(crate) fn arith_name(op: ArithOp) -> &'static str {
    match op {
        ArithOp::Add => "add",
        ArithOp::Adc => "adc",
        ArithOp::Sub => "sub",
        ArithOp::Sbb => "sbb",
        ArithOp::And => "and",
        ArithOp::Or => "or",
        ArithOp::Xor => "xor",
        ArithOp::Inc => "inc",
        ArithOp::Dec => "dec",
        ArithOp::Neg => "neg",
    }
}

pub(crate) fn shift_name(op: ShiftOp) -> &'static str {
    match op {
        ShiftOp::Rol => "rol",
        ShiftOp::Ror => "ror",
        ShiftOp::Rcl => "rcl",
        ShiftOp::Rcr => "rcr",
        ShiftOp::Shl => "shl",
        ShiftOp::Shr => "shr",
        ShiftOp::Sar => "sar",
    }
}

pub(crate) fn cmp_name(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Eq => "eq",
        CmpOp::Ne => "ne",
        CmpOp::Ltu => "ltu",
        CmpOp::Leu => "leu",
        CmpOp::Gtu => "gtu",
        CmpOp::Geu => "geu",
        CmpOp::Lts => "lts",
        CmpOp::Les => "les",
        CmpOp::Gts => "gts",
        CmpOp::Ges => "ges",
    }
}

pub(crate) fn helper_name(h: Helper) -> &'static str {
    match h {
        Helper::Mul8 => "mul8",
        Helper::Mul16 => "mul16",
        Helper::Mul32 => "mul32",
        Helper::Imul8 => "imul8",
        Helper::Imul16 => "imul16",
        Helper::Imul32 => "imul32",
        Helper::ImulTrunc16 => "imul_trunc16",
        Helper::ImulTrunc32 => "imul_trunc32",
        Helper::Div8 => "div8",
        Helper::Div16 => "div16",
        Helper::Div32 => "div32",
        Helper::Idiv8 => "idiv8",
        Helper::Idiv16 => "idiv16",
        Helper::Idiv32 => "idiv32",
        Helper::Shld16 => "shld16",
        Helper::Shld32 => "shld32",
        Helper::Shrd16 => "shrd16",
        Helper::Shrd32 => "shrd32",
        Helper::Bt16 => "bt16",
        Helper::Bt32 => "bt32",
        Helper::Daa => "daa",
        Helper::Das => "das",
        Helper::Aaa => "aaa",
        Helper::Aas => "aas",
        Helper::Aam => "aam",
        Helper::Aad => "aad",
    }
}

pub(crate) fn kind_name(k: FlagKind) -> String {
    let op = match k.op() {
        crate::flags::FlagOp::Eager => return "eager".into(),
        crate::flags::FlagOp::Add => "add",
        crate::flags::FlagOp::Sub => "sub",
        crate::flags::FlagOp::Logic => "logic",
        crate::flags::FlagOp::Inc => "inc",
        crate::flags::FlagOp::Dec => "dec",
        crate::flags::FlagOp::Szp => "szp",
    };
    format!("{}{}", op, k.width().bits())
}

/// Prints vregs with a model's names.
pub struct Namer {
    names: &'static [&'static str],
}

impl Namer {
    pub fn for_model(model: &str) -> Namer {
        Namer {
            names: model_reg_names(model),
        }
    }

    pub fn vreg(&self, v: VReg) -> String {
        match self.names.get(v.0 as usize) {
            Some(n) => (*n).to_string(),
            None => format!("v{}", v.0),
        }
    }

    pub fn reg(&self, r: Reg) -> String {
        let suffix = match r.lane {
            Lane::D => "",
            Lane::W => ".w",
            Lane::B => ".b",
            Lane::H => ".h",
        };
        format!("{}{}", self.vreg(r.v), suffix)
    }

    pub fn src(&self, s: Src) -> String {
        match s {
            Src::Reg(r) => self.reg(r),
            Src::Imm(i) => format!("{:#x}", i),
        }
    }

    fn opt_reg(&self, r: Option<Reg>) -> String {
        r.map_or("_".into(), |r| self.reg(r))
    }

    fn addr(&self, a: &Addr) -> String {
        let mut s = String::from("[");
        if let Some(g) = a.seg {
            let _ = write!(s, "{}: ", self.vreg(g));
        }
        let mut parts = Vec::new();
        if let Some(b) = a.base {
            parts.push(self.vreg(b));
        }
        if let Some(i) = a.index {
            parts.push(format!("{}*{}", self.vreg(i), 1u32 << a.scale));
        }
        if a.disp != 0 || parts.is_empty() {
            parts.push(format!("{:#x}", a.disp));
        }
        s.push_str(&parts.join(" + "));
        let _ = write!(
            s,
            "] {} lim={:#x}",
            match a.asize {
                AddrSize::A16 => "a16",
                AddrSize::A32 => "a32",
            },
            a.limit
        );
        s
    }
}

fn site(s: Site) -> String {
    format!("@{:#x}/{}", s.ip, s.unbill)
}

fn after(s: Option<Site>) -> String {
    s.map_or(String::new(), |s| format!(" after {}", site(s)))
}

fn path(p: MemPath) -> &'static str {
    match p {
        MemPath::Fast => "fast",
        MemPath::Checked => "checked",
    }
}

/// One op as text.
pub fn op_text(n: &Namer, op: &Op) -> String {
    match *op {
        Op::Mov { dst, src } => format!("mov {}, {}", n.reg(dst), n.src(src)),
        Op::Sext { dst, src, from } => {
            format!("sext.{} {}, {}", from.bits(), n.reg(dst), n.reg(src))
        }
        Op::Alu { op, w, dst, a, b } => format!(
            "{}.{} {}, {}, {}",
            alu_name(op),
            width_suffix(w),
            n.reg(dst),
            n.src(a),
            n.src(b)
        ),
        Op::Arith { op, w, dst, a, b } => match op {
            ArithOp::Inc | ArithOp::Dec | ArithOp::Neg => format!(
                "{}.{}.f {}, {}",
                arith_name(op),
                w.bits(),
                n.opt_reg(dst),
                n.src(a)
            ),
            _ => format!(
                "{}.{}.f {}, {}, {}",
                arith_name(op),
                w.bits(),
                n.opt_reg(dst),
                n.src(a),
                n.src(b)
            ),
        },
        Op::Shift {
            op,
            w,
            dst,
            a,
            count,
        } => format!(
            "{}.{}.f {}, {}, {}",
            shift_name(op),
            w.bits(),
            n.reg(dst),
            n.src(a),
            n.src(count)
        ),
        Op::FlagsRec { kind, a, b, r } => format!(
            "flags.rec {} {}, {}, {}",
            kind_name(kind),
            n.src(a),
            n.src(b),
            n.src(r)
        ),
        Op::FlagsGet { dst } => format!("flags.get {}", n.reg(dst)),
        Op::FlagsSet { src, mask } => format!("flags.set {}, {:#x}", n.src(src), mask),
        Op::GetCond { dst, cc } => format!("cond.{} {}", CC_NAMES[cc as usize & 15], n.reg(dst)),
        Op::StrStep { dst, n: k } => format!("strstep {}, {:#x}", n.reg(dst), k),
        Op::Load {
            w,
            dst,
            addr,
            path: p,
            site: s,
        } => format!(
            "ld.{} {}, {} {} {}",
            w.bits(),
            n.reg(dst),
            n.addr(&addr),
            path(p),
            site(s)
        ),
        Op::Store {
            w,
            src,
            addr,
            path: p,
            site: s,
            after: a,
        } => format!(
            "st.{} {} {}, {} {}{}",
            w.bits(),
            n.addr(&addr),
            path(p),
            n.src(src),
            site(s),
            after(a)
        ),
        Op::In {
            w,
            dst,
            port,
            site: s,
        } => {
            format!(
                "in.{} {}, {} {}",
                w.bits(),
                n.reg(dst),
                n.src(port),
                site(s)
            )
        }
        Op::Out {
            w,
            port,
            val,
            site: s,
            after: a,
        } => format!(
            "out.{} {}, {} {}{}",
            w.bits(),
            n.src(port),
            n.src(val),
            site(s),
            after(a)
        ),
        Op::Service {
            id,
            site: s,
            after: a,
        } => {
            format!("service {:#x} {}{}", id, site(s), after(a))
        }
        Op::Call {
            helper,
            outs,
            args,
            site: s,
        } => {
            let (na, no) = helper.arity();
            let o: Vec<String> = outs[..no].iter().map(|r| n.opt_reg(*r)).collect();
            let a: Vec<String> = args[..na].iter().map(|x| n.src(*x)).collect();
            format!(
                "call {} {} <- {} {}",
                helper_name(helper),
                o.join(", "),
                a.join(", "),
                site(s)
            )
        }
        Op::Clock { n: k } => format!("clock {}", k),
        Op::ClockCheck { n: k, site: s } => format!("clock.check {} {}", k, site(s)),
        Op::Count => "count".into(),
        Op::StopIf { src } => format!("stop.if {}", n.src(src)),
        Op::ExitIfPending { site: s } => format!("exit.pending {}", site(s)),
        Op::Check { w, addr, site: s } => format!("chk.{} {} {}", w.bits(), n.addr(&addr), site(s)),
        Op::X87 {
            insn,
            mem,
            cs,
            ds,
            dst,
            site: s,
            after: a,
        } => {
            let bytes: Vec<String> = insn.bytes().iter().map(|b| format!("{b:02x}")).collect();
            format!(
                "x87 {}, {} {} sel {}, {} {}{}",
                n.opt_reg(dst),
                bytes.join("."),
                mem.map_or("nomem".into(), |m| n.addr(&m)),
                n.src(cs),
                n.src(ds),
                site(s),
                after(a)
            )
        }
    }
}

/// A terminator as text.
pub fn term_text(n: &Namer, t: &Term) -> String {
    match *t {
        Term::Jmp(b) => format!("jmp b{}", b.0),
        Term::BrCc { cc, t, f } => {
            format!("brcc.{} b{}, b{}", CC_NAMES[cc as usize & 15], t.0, f.0)
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
        } => format!(
            "brf.{}.{}.{} {}, {}, {}, b{}, b{}",
            CC_NAMES[cc as usize & 15],
            arith_name(op),
            w.bits(),
            n.opt_reg(dst),
            n.src(a),
            n.src(b),
            t.0,
            f.0
        ),
        Term::BrCmp { op, w, a, b, t, f } => format!(
            "brcmp.{}.{} {}, {}, b{}, b{}",
            cmp_name(op),
            w.bits(),
            n.src(a),
            n.src(b),
            t.0,
            f.0
        ),
        Term::Exit { kind, site: s } => format!(
            "exit {} {}",
            match kind {
                ExitKind::Fallback => "fallback",
                ExitKind::Stop => "stop",
                ExitKind::Shadow => "shadow",
            },
            site(s)
        ),
        Term::Rep {
            op,
            w,
            cond,
            src,
            dst,
            count,
            site: s,
            t,
            f,
        } => format!(
            "rep.{}.{}.{} {}, {}, {} {}, b{}, b{}",
            op.name(),
            cond.name(),
            w.bits(),
            n.addr(&src),
            n.addr(&dst),
            n.reg(count),
            site(s),
            t.0,
            f.0
        ),
        Term::Link { key, site: s } => format!("link {:#x} {}", key, site(s)),
        Term::Indirect { ip, base, site: s } => {
            format!("indirect {}, {} {}", n.src(ip), n.src(base), site(s))
        }
    }
}

/// The whole program as text (parseable by [`super::parse::parse_program`]).
pub fn print_program(p: &Program) -> String {
    let n = Namer::for_model(&p.model);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "program model={} key={:#x} guest={}",
        p.model, p.key, p.guest
    );
    for (lo, hi) in &p.code {
        let _ = writeln!(s, "code {:#x}..{:#x}", lo, hi);
    }
    for (i, b) in p.blocks.iter().enumerate() {
        let _ = writeln!(s, "b{}:", i);
        for op in &b.ops {
            let _ = writeln!(s, "  {}", op_text(&n, op));
        }
        let _ = writeln!(s, "  {}", term_text(&n, &b.term));
    }
    s
}

impl std::fmt::Display for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&print_program(self))
    }
}
