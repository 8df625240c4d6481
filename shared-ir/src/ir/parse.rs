//! Parser for the textual IR written by [`super::print`]: one op per line,
//! `;` or `#` start a comment. Parsing does not verify; call
//! [`super::verify::verify`] on the result. It owns reading text only.

use super::print::*;
use super::*;
use crate::machine::model_reg_names;
use std::fmt;

/// A parse error with its 1-based line number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub msg: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.msg)
    }
}

impl std::error::Error for ParseError {}

fn tokenize(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
            cur.push(c);
            continue;
        }
        if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        match c {
            ';' | '#' => break,
            '<' if chars.peek() == Some(&'-') => {
                chars.next();
                out.push("<-".into());
            }
            c if c.is_whitespace() => {}
            c => out.push(c.to_string()),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

struct Cur<'a> {
    toks: &'a [String],
    i: usize,
    names: &'static [&'static str],
}

type R<T> = Result<T, String>;

fn parse_num(s: &str) -> R<u64> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s),
    };
    let v = if let Some(h) = body.strip_prefix("0x") {
        u64::from_str_radix(h, 16)
    } else {
        body.parse::<u64>()
    }
    .map_err(|_| format!("bad number `{s}`"))?;
    Ok(if neg {
        (v as i64).wrapping_neg() as u64
    } else {
        v
    })
}

impl<'a> Cur<'a> {
    fn peek(&self) -> Option<&str> {
        self.toks.get(self.i).map(|s| s.as_str())
    }
    fn next(&mut self) -> R<&'a str> {
        let t = self.toks.get(self.i).ok_or("unexpected end of line")?;
        self.i += 1;
        Ok(t.as_str())
    }
    fn eat(&mut self, t: &str) -> bool {
        if self.peek() == Some(t) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, t: &str) -> R<()> {
        let got = self.next()?;
        if got != t {
            return Err(format!("expected `{t}`, found `{got}`"));
        }
        Ok(())
    }
    fn done(&self) -> R<()> {
        match self.peek() {
            None => Ok(()),
            Some(t) => Err(format!("unexpected `{t}` at end of line")),
        }
    }
    fn num(&mut self) -> R<u64> {
        if self.eat("-") {
            let v = parse_num(self.next()?)?;
            return Ok((v as i64).wrapping_neg() as u64);
        }
        parse_num(self.next()?)
    }
    fn vreg_name(&self, s: &str) -> R<VReg> {
        if let Some(i) = self.names.iter().position(|n| *n == s) {
            return Ok(VReg(i as u16));
        }
        if let Some(d) = s.strip_prefix('v') {
            if let Ok(n) = d.parse::<u16>() {
                return Ok(VReg(n));
            }
        }
        Err(format!("unknown register `{s}`"))
    }
    fn reg(&mut self) -> R<Reg> {
        let t = self.next()?;
        let (name, lane) = match t.rsplit_once('.') {
            Some((n, "w")) => (n, Lane::W),
            Some((n, "b")) => (n, Lane::B),
            Some((n, "h")) => (n, Lane::H),
            Some((n, "d")) => (n, Lane::D),
            _ => (t, Lane::D),
        };
        Ok(Reg {
            v: self.vreg_name(name)?,
            lane,
        })
    }
    fn opt_reg(&mut self) -> R<Option<Reg>> {
        if self.eat("_") {
            return Ok(None);
        }
        self.reg().map(Some)
    }
    fn src(&mut self) -> R<Src> {
        match self.peek() {
            Some(t) if t == "-" || t.starts_with(|c: char| c.is_ascii_digit()) => {
                Ok(Src::Imm(self.num()? as u32))
            }
            _ => self.reg().map(Src::Reg),
        }
    }
    fn comma(&mut self) -> R<()> {
        self.expect(",")
    }
    fn site(&mut self) -> R<Site> {
        self.expect("@")?;
        let ip = self.num()? as u32;
        self.expect("/")?;
        let unbill = self.num()? as u32;
        Ok(Site { ip, unbill })
    }
    fn after(&mut self) -> R<Option<Site>> {
        if self.eat("after") {
            return self.site().map(Some);
        }
        Ok(None)
    }
    fn block(&mut self) -> R<BlockId> {
        let t = self.next()?;
        t.strip_prefix('b')
            .and_then(|d| d.parse::<u32>().ok())
            .map(BlockId)
            .ok_or_else(|| format!("expected a block `bN`, found `{t}`"))
    }
    fn addr(&mut self) -> R<Addr> {
        self.expect("[")?;
        let mut a = Addr {
            seg: None,
            base: None,
            index: None,
            scale: 0,
            disp: 0,
            asize: AddrSize::A32,
            limit: 0xFFFF_FFFF,
        };
        // Optional `seg:` prefix.
        if self.toks.get(self.i + 1).map(|s| s.as_str()) == Some(":") {
            let t = self.next()?;
            a.seg = Some(self.vreg_name(t)?);
            self.expect(":")?;
        }
        let mut first = true;
        loop {
            let neg = if first {
                self.eat("-")
            } else if self.eat("+") {
                false
            } else if self.eat("-") {
                true
            } else {
                break;
            };
            first = false;
            let t = self.peek().ok_or("unterminated address")?;
            if t.starts_with(|c: char| c.is_ascii_digit()) {
                let v = parse_num(self.next()?)? as u32;
                a.disp = a.disp.wrapping_add(if neg { v.wrapping_neg() } else { v });
            } else {
                let t = self.next()?;
                let r = self.vreg_name(t)?;
                if self.eat("*") {
                    let s = self.num()?;
                    a.scale = match s {
                        1 => 0,
                        2 => 1,
                        4 => 2,
                        8 => 3,
                        _ => return Err(format!("bad scale {s}")),
                    };
                    a.index = Some(r);
                } else if a.base.is_none() {
                    a.base = Some(r);
                } else if a.index.is_none() {
                    a.index = Some(r);
                } else {
                    return Err("too many registers in address".into());
                }
            }
        }
        self.expect("]")?;
        match self.next()? {
            "a16" => {
                a.asize = AddrSize::A16;
                a.limit = 0xFFFF;
            }
            "a32" => {}
            t => return Err(format!("expected a16 or a32, found `{t}`")),
        }
        if self.eat("lim") {
            self.expect("=")?;
            a.limit = self.num()? as u32;
        }
        Ok(a)
    }
    fn path(&mut self) -> R<MemPath> {
        match self.next()? {
            "fast" => Ok(MemPath::Fast),
            "checked" => Ok(MemPath::Checked),
            t => Err(format!("expected fast or checked, found `{t}`")),
        }
    }
}

fn width(s: &str) -> R<Width> {
    match s {
        "8" => Ok(Width::W8),
        "16" => Ok(Width::W16),
        "32" => Ok(Width::W32),
        _ => Err(format!("bad width `{s}`")),
    }
}

fn cc(s: &str) -> R<u8> {
    CC_NAMES
        .iter()
        .position(|n| *n == s)
        .map(|i| i as u8)
        .ok_or_else(|| format!("unknown condition `{s}`"))
}

fn find<T: Copy>(all: &[T], name: impl Fn(T) -> &'static str, s: &str) -> Option<T> {
    all.iter().copied().find(|x| name(*x) == s)
}

const ALU: [AluOp; 9] = [
    AluOp::Add,
    AluOp::Sub,
    AluOp::And,
    AluOp::Or,
    AluOp::Xor,
    AluOp::Shl,
    AluOp::Shr,
    AluOp::Sar,
    AluOp::Mul,
];
const ARITH: [ArithOp; 10] = [
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
const SHIFT: [ShiftOp; 7] = [
    ShiftOp::Rol,
    ShiftOp::Ror,
    ShiftOp::Rcl,
    ShiftOp::Rcr,
    ShiftOp::Shl,
    ShiftOp::Shr,
    ShiftOp::Sar,
];
const CMP: [CmpOp; 10] = [
    CmpOp::Eq,
    CmpOp::Ne,
    CmpOp::Ltu,
    CmpOp::Leu,
    CmpOp::Gtu,
    CmpOp::Geu,
    CmpOp::Lts,
    CmpOp::Les,
    CmpOp::Gts,
    CmpOp::Ges,
];

fn flag_kind(s: &str) -> R<FlagKind> {
    (0..19u8)
        .filter_map(FlagKind::from_u8)
        .find(|k| kind_name(*k) == s)
        .ok_or_else(|| format!("unknown flag kind `{s}`"))
}

enum Line {
    Op(Op),
    Term(Term),
}

fn parse_line(c: &mut Cur) -> R<Line> {
    let m = c.next()?;
    let parts: Vec<&str> = m.split('.').collect();
    let line = match parts.as_slice() {
        ["mov"] => {
            let dst = c.reg()?;
            c.comma()?;
            Line::Op(Op::Mov { dst, src: c.src()? })
        }
        ["sext", w] => {
            let dst = c.reg()?;
            c.comma()?;
            Line::Op(Op::Sext {
                dst,
                src: c.reg()?,
                from: width(w)?,
            })
        }
        [name, w, "f"] if find(&SHIFT, shift_name, name).is_some() => {
            let op = find(&SHIFT, shift_name, name).unwrap_or(ShiftOp::Shl);
            let dst = c.reg()?;
            c.comma()?;
            let a = c.src()?;
            c.comma()?;
            Line::Op(Op::Shift {
                op,
                w: width(w)?,
                dst,
                a,
                count: c.src()?,
            })
        }
        [name, w, "f"] => {
            let op = find(&ARITH, arith_name, name)
                .ok_or_else(|| format!("unknown flag-writing op `{name}`"))?;
            let dst = c.opt_reg()?;
            c.comma()?;
            let a = c.src()?;
            let b = if matches!(op, ArithOp::Inc | ArithOp::Dec | ArithOp::Neg) {
                Src::Imm(0)
            } else {
                c.comma()?;
                c.src()?
            };
            Line::Op(Op::Arith {
                op,
                w: width(w)?,
                dst,
                a,
                b,
            })
        }
        ["flags", "rec"] => {
            let kind = flag_kind(c.next()?)?;
            let a = c.src()?;
            c.comma()?;
            let b = c.src()?;
            c.comma()?;
            Line::Op(Op::FlagsRec {
                kind,
                a,
                b,
                r: c.src()?,
            })
        }
        ["flags", "get"] => Line::Op(Op::FlagsGet { dst: c.reg()? }),
        ["flags", "set"] => {
            let src = c.src()?;
            c.comma()?;
            Line::Op(Op::FlagsSet {
                src,
                mask: c.num()? as u32,
            })
        }
        ["strstep"] => {
            let dst = c.reg()?;
            c.comma()?;
            Line::Op(Op::StrStep {
                dst,
                n: c.num()? as u32,
            })
        }
        ["cond", k] => Line::Op(Op::GetCond {
            cc: cc(k)?,
            dst: c.reg()?,
        }),
        ["ld", w] => {
            let dst = c.reg()?;
            c.comma()?;
            let addr = c.addr()?;
            let path = c.path()?;
            Line::Op(Op::Load {
                w: width(w)?,
                dst,
                addr,
                path,
                site: c.site()?,
            })
        }
        ["st", w] => {
            let addr = c.addr()?;
            let path = c.path()?;
            c.comma()?;
            let src = c.src()?;
            let site = c.site()?;
            Line::Op(Op::Store {
                w: width(w)?,
                src,
                addr,
                path,
                site,
                after: c.after()?,
            })
        }
        ["in", w] => {
            let dst = c.reg()?;
            c.comma()?;
            let port = c.src()?;
            Line::Op(Op::In {
                w: width(w)?,
                dst,
                port,
                site: c.site()?,
            })
        }
        ["out", w] => {
            let port = c.src()?;
            c.comma()?;
            let val = c.src()?;
            let site = c.site()?;
            Line::Op(Op::Out {
                w: width(w)?,
                port,
                val,
                site,
                after: c.after()?,
            })
        }
        ["service"] => {
            let id = c.num()? as u16;
            let site = c.site()?;
            Line::Op(Op::Service {
                id,
                site,
                after: c.after()?,
            })
        }
        ["call"] => {
            let name = c.next()?;
            let helper = find(&Helper::ALL, helper_name, name)
                .ok_or_else(|| format!("unknown helper `{name}`"))?;
            let (na, no) = helper.arity();
            let mut outs = [None; 2];
            for (i, o) in outs.iter_mut().enumerate().take(no) {
                if i > 0 {
                    c.comma()?;
                }
                *o = c.opt_reg()?;
            }
            c.expect("<-")?;
            let mut args = [Src::Imm(0); 3];
            for (i, a) in args.iter_mut().enumerate().take(na) {
                if i > 0 {
                    c.comma()?;
                }
                *a = c.src()?;
            }
            Line::Op(Op::Call {
                helper,
                outs,
                args,
                site: c.site()?,
            })
        }
        ["clock"] => Line::Op(Op::Clock { n: c.num()? as u32 }),
        ["clock", "check"] => {
            let n = c.num()? as u32;
            Line::Op(Op::ClockCheck { n, site: c.site()? })
        }
        ["count"] => Line::Op(Op::Count),
        ["stop", "if"] => Line::Op(Op::StopIf { src: c.src()? }),
        ["exit", "pending"] => Line::Op(Op::ExitIfPending { site: c.site()? }),
        ["x87"] => {
            let dst = c.opt_reg()?;
            c.comma()?;
            let t = c.next()?;
            let bytes = t
                .split('.')
                .map(|b| u8::from_str_radix(b, 16).map_err(|_| format!("bad x87 byte `{b}`")))
                .collect::<R<Vec<u8>>>()?;
            let insn = X87Insn::new(&bytes).ok_or("an x87 instruction has 1 to 15 bytes")?;
            let mem = if c.eat("nomem") {
                None
            } else {
                Some(c.addr()?)
            };
            c.expect("sel")?;
            let cs = c.src()?;
            c.comma()?;
            let ds = c.src()?;
            let site = c.site()?;
            Line::Op(Op::X87 {
                insn,
                mem,
                cs,
                ds,
                dst,
                site,
                after: c.after()?,
            })
        }
        ["chk", w] => {
            let addr = c.addr()?;
            Line::Op(Op::Check {
                w: width(w)?,
                addr,
                site: c.site()?,
            })
        }
        [name, w] if find(&ALU, alu_name, name).is_some() => {
            let op = find(&ALU, alu_name, name).unwrap_or(AluOp::Add);
            let dst = c.reg()?;
            c.comma()?;
            let a = c.src()?;
            c.comma()?;
            Line::Op(Op::Alu {
                op,
                w: width(w)?,
                dst,
                a,
                b: c.src()?,
            })
        }
        ["jmp"] => Line::Term(Term::Jmp(c.block()?)),
        ["brcc", k] => {
            let t = c.block()?;
            c.comma()?;
            Line::Term(Term::BrCc {
                cc: cc(k)?,
                t,
                f: c.block()?,
            })
        }
        ["brf", k, name, w] => {
            let op = find(&ARITH, arith_name, name)
                .ok_or_else(|| format!("unknown flag-writing op `{name}`"))?;
            let dst = c.opt_reg()?;
            c.comma()?;
            let a = c.src()?;
            c.comma()?;
            let b = c.src()?;
            c.comma()?;
            let t = c.block()?;
            c.comma()?;
            Line::Term(Term::BrArith {
                op,
                w: width(w)?,
                dst,
                a,
                b,
                cc: cc(k)?,
                t,
                f: c.block()?,
            })
        }
        ["brcmp", k, w] => {
            let op = find(&CMP, cmp_name, k).ok_or_else(|| format!("unknown comparison `{k}`"))?;
            let a = c.src()?;
            c.comma()?;
            let b = c.src()?;
            c.comma()?;
            let t = c.block()?;
            c.comma()?;
            Line::Term(Term::BrCmp {
                op,
                w: width(w)?,
                a,
                b,
                t,
                f: c.block()?,
            })
        }
        ["exit"] => {
            let kind = match c.next()? {
                "fallback" => ExitKind::Fallback,
                "stop" => ExitKind::Stop,
                "shadow" => ExitKind::Shadow,
                t => return Err(format!("unknown exit kind `{t}`")),
            };
            Line::Term(Term::Exit {
                kind,
                site: c.site()?,
            })
        }
        ["rep", o, k, w] => {
            let op = find(&StrOp::ALL, StrOp::name, o)
                .ok_or_else(|| format!("unknown string op `{o}`"))?;
            let cond = find(&RepCond::ALL, RepCond::name, k)
                .ok_or_else(|| format!("unknown repeat condition `{k}`"))?;
            let src = c.addr()?;
            c.comma()?;
            let dst = c.addr()?;
            c.comma()?;
            let count = c.reg()?;
            let site = c.site()?;
            c.comma()?;
            let t = c.block()?;
            c.comma()?;
            Line::Term(Term::Rep {
                op,
                w: width(w)?,
                cond,
                src,
                dst,
                count,
                site,
                t,
                f: c.block()?,
            })
        }
        ["link"] => {
            let key = c.num()?;
            Line::Term(Term::Link {
                key,
                site: c.site()?,
            })
        }
        ["indirect"] => {
            let ip = c.src()?;
            c.comma()?;
            let base = c.src()?;
            Line::Term(Term::Indirect {
                ip,
                base,
                site: c.site()?,
            })
        }
        _ => return Err(format!("unknown op `{m}`")),
    };
    c.done()?;
    Ok(line)
}

/// Parses a whole program.
pub fn parse_program(text: &str) -> Result<Program, ParseError> {
    let mut prog = Program {
        model: "generic".into(),
        key: 0,
        guest: 0,
        code: Vec::new(),
        blocks: Vec::new(),
    };
    let mut names: &'static [&'static str] = &[];
    let mut ops: Vec<Op> = Vec::new();
    let mut in_block: Option<u32> = None;
    let mut saw_header = false;
    for (ln, raw) in text.lines().enumerate() {
        let line = ln + 1;
        let e = |msg: String| ParseError { line, msg };
        let toks = tokenize(raw);
        if toks.is_empty() {
            continue;
        }
        if toks[0] == "program" {
            saw_header = true;
            let mut i = 1;
            while i < toks.len() {
                let k = toks[i].as_str();
                if toks.get(i + 1).map(|s| s.as_str()) != Some("=") || i + 2 >= toks.len() {
                    return Err(e(format!("expected key=value after `{k}`")));
                }
                let v = toks[i + 2].as_str();
                match k {
                    "model" => {
                        prog.model = v.to_string();
                        names = model_reg_names(v);
                    }
                    "key" => prog.key = parse_num(v).map_err(e)?,
                    "guest" => prog.guest = parse_num(v).map_err(e)? as u16,
                    _ => return Err(e(format!("unknown header field `{k}`"))),
                }
                i += 3;
            }
            continue;
        }
        if !saw_header {
            return Err(e("expected a `program` header first".into()));
        }
        if toks[0] == "code" {
            let (lo, hi) = toks
                .get(1)
                .and_then(|t| t.split_once(".."))
                .ok_or_else(|| e("expected `code LO..HI`".into()))?;
            prog.code.push((
                parse_num(lo).map_err(e)? as u32,
                parse_num(hi).map_err(e)? as u32,
            ));
            continue;
        }
        if toks.len() == 2 && toks[1] == ":" {
            let id = toks[0]
                .strip_prefix('b')
                .and_then(|d| d.parse::<u32>().ok())
                .ok_or_else(|| e(format!("bad block label `{}`", toks[0])))?;
            if in_block.is_some() {
                return Err(e("previous block has no terminator".into()));
            }
            if id as usize != prog.blocks.len() {
                return Err(e(format!(
                    "block b{id} out of order (expected b{})",
                    prog.blocks.len()
                )));
            }
            in_block = Some(id);
            continue;
        }
        if in_block.is_none() {
            return Err(e("op outside a block".into()));
        }
        let mut c = Cur {
            toks: &toks,
            i: 0,
            names,
        };
        match parse_line(&mut c).map_err(e)? {
            Line::Op(op) => ops.push(op),
            Line::Term(term) => {
                prog.blocks.push(Block {
                    ops: std::mem::take(&mut ops),
                    term,
                });
                in_block = None;
            }
        }
    }
    if in_block.is_some() {
        return Err(ParseError {
            line: text.lines().count(),
            msg: "last block has no terminator".into(),
        });
    }
    Ok(prog)
}
