//! Engine inspection: the machine code each compiler made of E1's engine
//! function and of L1's hot dispatch loop, disassembled with iced-x86 and
//! summarised (docs/wasm.md, "Engine inspection").
//!
//! Owns finding the functions (native: the symbols of this very binary,
//! which links toyvm's session path; Cranelift and Winch: wasmtime's
//! compiled text of the toyvm module and its function names), recovering
//! the dispatch jump table, walking the straight-line path of one µop arm,
//! counting, and the listings. It must not run guest code.
//!
//! What is counted (x86-64, all compilers alike):
//! - the dispatch *head*: from the address the arms jump back to most often
//!   to the indirect jump of the widest jump table (the `match` over µop
//!   opcodes); instructions and memory operands on it. A compiler that
//!   duplicates part of the head into every arm (LLVM does) shows a short
//!   head and longer arms: the per-µop figures below are the comparable ones;
//! - a µop's transition: from its jump-table target, following
//!   unconditional jumps and the fall-through of conditional ones, through
//!   the head to the next indirect jump;
//! - L1's handler call: the basic block ending in the function's first
//!   indirect call (argument set-up, spills and reloads, the call);
//! - stack traffic on those paths: memory operands based on RSP or RBP,
//!   loads (reloads) and stores (spills) apart;
//! - arms: distinct targets of the table; code size: the function's bytes.

use iced_x86::{
    Decoder, DecoderOptions, FlowControl, Formatter, Instruction, InstructionInfoFactory,
    IntelFormatter, Mnemonic, OpAccess, OpKind, Register,
};
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// A function's machine code at its address.
#[derive(Clone, Debug)]
pub struct Func {
    pub name: String,
    pub addr: u64,
    pub code: Vec<u8>,
}

/// Memory the code can refer to (for jump tables outside the function).
pub struct Image {
    pub sections: Vec<(u64, Vec<u8>)>,
}

impl Image {
    fn read(&self, va: u64, n: usize) -> Option<&[u8]> {
        self.sections.iter().find_map(|(a, d)| {
            let off = va.checked_sub(*a)? as usize;
            d.get(off..off + n)
        })
    }
}

/// Counts for one instruction path.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct PathCount {
    pub instructions: usize,
    pub memory_ops: usize,
    pub stack_loads: usize,
    pub stack_stores: usize,
    /// Conditional branches passed (fall-through taken).
    pub branches: usize,
}

/// The summary of one function under one compiler.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Summary {
    pub compiler: String,
    pub function: String,
    pub code_bytes: usize,
    pub instructions: usize,
    /// Stack loads / stores in the whole function.
    pub stack_loads: usize,
    pub stack_stores: usize,
    pub indirect_jumps: usize,
    pub indirect_calls: usize,
    /// The dispatch head (None when no jump table was found).
    pub head: Option<PathCount>,
    /// Distinct targets of the dispatch table.
    pub arms: usize,
    /// Named µop paths, head included: (name, counts).
    pub paths: Vec<(String, PathCount)>,
    /// The basic block ending in the first indirect call (L1's handler
    /// call), the call included.
    pub call_block: Option<PathCount>,
    /// The head and the named paths instruction by instruction (appended
    /// to the listing).
    #[serde(skip)]
    pub traces: String,
}

fn decode_skipping(f: &Func, skip: &[(u64, u64)]) -> Vec<Instruction> {
    let mut v = Vec::new();
    let mut at = f.addr;
    let end = f.addr + f.code.len() as u64;
    while at < end {
        if let Some(&(_, e)) = skip.iter().find(|(s, e)| *s <= at && at < *e) {
            at = e;
            continue;
        }
        // Decode up to the next skipped range.
        let stop = skip
            .iter()
            .filter(|(s, _)| *s > at)
            .map(|(s, _)| *s)
            .min()
            .unwrap_or(end)
            .min(end);
        let bytes = &f.code[(at - f.addr) as usize..(stop - f.addr) as usize];
        let mut d = Decoder::with_ip(64, bytes, at, DecoderOptions::NONE);
        while d.can_decode() {
            v.push(d.decode());
        }
        at = stop;
    }
    v
}

/// The function's instructions, with jump tables placed inside the code
/// (Cranelift and Winch put them right after the indirect jump) skipped.
fn decode(f: &Func, img: &Image) -> (Vec<Instruction>, Vec<Table>) {
    let first = decode_skipping(f, &[]);
    let tabs = tables(&first, f, img);
    let end = f.addr + f.code.len() as u64;
    let skip: Vec<(u64, u64)> = tabs
        .iter()
        .filter(|t| t.base >= f.addr && t.base < end)
        .map(|t| (t.base, t.base + 4 * t.targets.len() as u64))
        .collect();
    if skip.is_empty() {
        return (first, tabs);
    }
    let insns = decode_skipping(f, &skip);
    let tabs = tables(&insns, f, img);
    (insns, tabs)
}

fn is_mem(i: &Instruction) -> bool {
    i.mnemonic() != Mnemonic::Lea
        && i.mnemonic() != Mnemonic::Nop
        && (0..i.op_count()).any(|k| i.op_kind(k) == OpKind::Memory)
}

fn count_one(i: &Instruction, info: &mut InstructionInfoFactory, c: &mut PathCount) {
    c.instructions += 1;
    if is_mem(i) {
        c.memory_ops += 1;
    }
    let stackish = matches!(i.memory_base(), Register::RSP | Register::RBP)
        && is_mem(i)
        && !matches!(i.mnemonic(), Mnemonic::Push | Mnemonic::Pop);
    if stackish {
        for m in info.info(i).used_memory() {
            match m.access() {
                OpAccess::Read | OpAccess::CondRead => c.stack_loads += 1,
                OpAccess::Write | OpAccess::CondWrite => c.stack_stores += 1,
                OpAccess::ReadWrite | OpAccess::ReadCondWrite => {
                    c.stack_loads += 1;
                    c.stack_stores += 1;
                }
                _ => {}
            }
        }
    }
}

/// A recovered jump table: the indirect jump, the table's targets by index.
struct Table {
    jmp: usize,
    base: u64,
    targets: Vec<u64>,
}

/// Finds `lea rT,[rip+T] ... movsxd rY,[rT+rI*4] ... jmp r` before each
/// indirect jump, bounded by a preceding `cmp rI, imm` (N = imm + 1).
fn tables(insns: &[Instruction], f: &Func, img: &Image) -> Vec<Table> {
    let end = f.addr + f.code.len() as u64;
    let mut out = Vec::new();
    for (k, j) in insns.iter().enumerate() {
        if j.flow_control() != FlowControl::IndirectBranch {
            continue;
        }
        let lo = k.saturating_sub(12);
        let Some(base) = insns[lo..k]
            .iter()
            .rev()
            .find(|i| i.mnemonic() == Mnemonic::Lea && i.is_ip_rel_memory_operand())
            .map(|i| i.ip_rel_memory_address())
        else {
            continue;
        };
        let bound = insns[k.saturating_sub(24)..k]
            .iter()
            .rev()
            .find(|i| i.mnemonic() == Mnemonic::Cmp && i.op_count() == 2 && is_imm(i.op1_kind()))
            .map(|i| i.immediate(1) as usize + 1);
        let n = bound.unwrap_or(4096).min(4096);
        let mut targets = Vec::new();
        for e in 0..n {
            let Some(b) = img.read(base + 4 * e as u64, 4) else {
                break;
            };
            let rel = i32::from_le_bytes(b.try_into().unwrap()) as i64;
            let t = (base as i64 + rel) as u64;
            if t < f.addr || t >= end {
                break;
            }
            targets.push(t);
        }
        if !targets.is_empty() {
            out.push(Table {
                jmp: k,
                base,
                targets,
            });
        }
    }
    out
}

fn is_imm(k: OpKind) -> bool {
    matches!(
        k,
        OpKind::Immediate8
            | OpKind::Immediate16
            | OpKind::Immediate32
            | OpKind::Immediate8to32
            | OpKind::Immediate8to64
            | OpKind::Immediate32to64
    )
}

/// Every address some branch of the function can land on.
fn branch_targets(insns: &[Instruction], tabs: &[Table]) -> BTreeSet<u64> {
    let mut t: BTreeSet<u64> = insns
        .iter()
        .filter(|i| {
            matches!(
                i.flow_control(),
                FlowControl::UnconditionalBranch | FlowControl::ConditionalBranch
            ) && i.op0_kind() == OpKind::NearBranch64
        })
        .map(|i| i.near_branch_target())
        .collect();
    for tb in tabs {
        t.extend(tb.targets.iter().copied());
    }
    t
}

fn index_of(insns: &[Instruction], ip: u64) -> Option<usize> {
    insns.binary_search_by_key(&ip, |i| i.ip()).ok()
}

/// The straight-line path from `start` to `stop_ip` (exclusive) or to the
/// next indirect jump (inclusive), following direct jumps and falling
/// through conditional branches: each instruction to `visit`, in order
/// (at most 400).
fn path<'a>(
    insns: &'a [Instruction],
    start: u64,
    stop_ip: u64,
    mut visit: impl FnMut(&'a Instruction),
) {
    let Some(mut k) = index_of(insns, start) else {
        return;
    };
    for _ in 0..400 {
        let Some(i) = insns.get(k) else { break };
        if i.ip() == stop_ip {
            break;
        }
        visit(i);
        match i.flow_control() {
            FlowControl::IndirectBranch | FlowControl::Return => break,
            FlowControl::UnconditionalBranch if i.op0_kind() == OpKind::NearBranch64 => {
                let t = i.near_branch_target();
                if t == stop_ip {
                    break;
                }
                match index_of(insns, t) {
                    Some(n) => k = n,
                    None => break,
                }
            }
            _ => k += 1,
        }
    }
}

/// Counts [`path`]'s instructions.
fn walk(insns: &[Instruction], start: u64, stop_ip: u64) -> PathCount {
    let mut info = InstructionInfoFactory::new();
    let mut c = PathCount::default();
    path(insns, start, stop_ip, |i| {
        count_one(i, &mut info, &mut c);
        if i.flow_control() == FlowControl::ConditionalBranch {
            c.branches += 1;
        }
    });
    c
}

/// The instructions [`walk`] counts, formatted one per line.
fn trace(insns: &[Instruction], start: u64, stop_ip: u64, base: u64) -> String {
    let mut fmt = IntelFormatter::new();
    let mut out = String::new();
    path(insns, start, stop_ip, |i| {
        let mut t = String::new();
        fmt.format(i, &mut t);
        let _ = writeln!(out, "  {:08x}  {t}", i.ip() - base);
    });
    out
}

/// The address unconditional jumps land on most often among those whose
/// straight-line path reaches instruction `jmp` (the loop head the arms
/// jump back to), or the block start before `jmp`; with how many jumps
/// land there.
fn loop_head(
    insns: &[Instruction],
    jmp: u64,
    targets: &BTreeSet<u64>,
    fallback: u64,
) -> (u64, usize) {
    let mut freq: std::collections::BTreeMap<u64, usize> = Default::default();
    for i in insns {
        if i.flow_control() == FlowControl::UnconditionalBranch
            && i.op0_kind() == OpKind::NearBranch64
        {
            *freq.entry(i.near_branch_target()).or_default() += 1;
        }
    }
    let mut cands: Vec<(usize, u64)> = freq.into_iter().map(|(t, n)| (n, t)).collect();
    cands.sort_by(|a, b| b.cmp(a));
    for (n, t) in cands.into_iter().take(8) {
        if t <= jmp && walk_to(insns, t, jmp).is_some() {
            return (t, n);
        }
    }
    let t = targets
        .range(..=jmp)
        .next_back()
        .copied()
        .unwrap_or(fallback);
    (t, 0)
}

/// Counts the straight-line path from `start` through instruction `to`
/// (inclusive); None if the path leaves (indirect jump, return) first.
fn walk_to(insns: &[Instruction], start: u64, to: u64) -> Option<PathCount> {
    let mut info = InstructionInfoFactory::new();
    let mut c = PathCount::default();
    let mut k = index_of(insns, start)?;
    for _ in 0..400 {
        let i = insns.get(k)?;
        count_one(i, &mut info, &mut c);
        if i.ip() == to {
            return Some(c);
        }
        match i.flow_control() {
            FlowControl::IndirectBranch | FlowControl::Return => return None,
            FlowControl::UnconditionalBranch if i.op0_kind() == OpKind::NearBranch64 => {
                k = index_of(insns, i.near_branch_target())?;
            }
            FlowControl::ConditionalBranch => {
                c.branches += 1;
                k += 1;
            }
            _ => k += 1,
        }
    }
    None
}

/// Summarises `f`; `ops` names µops by their dispatch index.
pub fn summarize(compiler: &str, f: &Func, img: &Image, ops: &[(&str, u32)]) -> Summary {
    let (insns, tabs) = decode(f, img);
    let mut info = InstructionInfoFactory::new();
    let mut all = PathCount::default();
    for i in &insns {
        count_one(i, &mut info, &mut all);
    }
    let targets = branch_targets(&insns, &tabs);
    let mut s = Summary {
        compiler: compiler.into(),
        function: f.name.clone(),
        code_bytes: f.code.len(),
        instructions: insns.len(),
        stack_loads: all.stack_loads,
        stack_stores: all.stack_stores,
        indirect_jumps: insns
            .iter()
            .filter(|i| i.flow_control() == FlowControl::IndirectBranch)
            .count(),
        indirect_calls: insns
            .iter()
            .filter(|i| i.flow_control() == FlowControl::IndirectCall)
            .count(),
        ..Summary::default()
    };
    // The dispatch: of the widest tables, the one whose loop head most
    // arms jump back to (a compiler may peel a first copy of the dispatch).
    let widest = tabs.iter().map(|t| t.targets.len()).max().unwrap_or(0);
    let dispatch = tabs
        .iter()
        .filter(|t| t.targets.len() * 2 > widest)
        .max_by_key(|t| loop_head(&insns, insns[t.jmp].ip(), &targets, f.addr).1);
    if let Some(t) = dispatch {
        let jmp = insns[t.jmp].ip();
        let (start, _) = loop_head(&insns, jmp, &targets, f.addr);
        s.head = walk_to(&insns, start, jmp);
        let _ = writeln!(s.traces, "\n; dispatch head");
        s.traces += &trace(&insns, start, jmp.wrapping_add(1), f.addr);
        s.arms = t.targets.iter().collect::<BTreeSet<_>>().len();
        for &(name, idx) in ops {
            if let Some(&target) = t.targets.get(idx as usize) {
                // The arm, then back through the head to the dispatch (or
                // to the arm's own copy of it).
                let p = walk(&insns, target, u64::MAX);
                s.paths.push((name.to_string(), p));
                let _ = writeln!(s.traces, "\n; {name} incl. head");
                s.traces += &trace(&insns, target, u64::MAX, f.addr);
            }
        }
    }
    if let Some(k) = insns
        .iter()
        .position(|i| i.flow_control() == FlowControl::IndirectCall)
    {
        // The basic block of the handler call: argument set-up, spills
        // and reloads around it, the call.
        let call = insns[k].ip();
        let after_jump = insns[..k]
            .iter()
            .rposition(|i| {
                matches!(
                    i.flow_control(),
                    FlowControl::UnconditionalBranch
                        | FlowControl::IndirectBranch
                        | FlowControl::Return
                )
            })
            .map_or(0, |j| j + 1);
        let target = targets
            .range(..=call)
            .next_back()
            .and_then(|&t| index_of(&insns, t))
            .unwrap_or(0);
        let mut c = PathCount::default();
        let mut info = InstructionInfoFactory::new();
        for i in &insns[after_jump.max(target)..=k] {
            count_one(i, &mut info, &mut c);
            if i.flow_control() == FlowControl::ConditionalBranch {
                c.branches += 1;
            }
        }
        s.call_block = Some(c);
    }
    s
}

/// The Intel-syntax listing of `f`, branch targets marked.
pub fn listing(f: &Func, img: &Image) -> String {
    let (insns, tabs) = decode(f, img);
    let targets = branch_targets(&insns, &tabs);
    let mut fmt = IntelFormatter::new();
    let mut out = format!("; {} ({} bytes)\n", f.name, f.code.len());
    for i in &insns {
        let mut t = String::new();
        fmt.format(i, &mut t);
        let mark = if targets.contains(&i.ip()) { ">" } else { " " };
        let _ = writeln!(out, "{mark}{:08x}  {t}", i.ip() - f.addr);
    }
    out
}

/// A symbol's name demangled, without the legacy `::h<hash>` suffix.
pub fn clean_name(raw: &str) -> String {
    let dm = format!("{:#}", rustc_demangle::demangle(raw));
    match dm.rsplit_once("::h") {
        Some((p, h)) if h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()) => p.to_string(),
        _ => dm,
    }
}

/// Functions of this process's own binary whose demangled name (hash
/// stripped) equals `name`.
pub fn native_functions(name: &str) -> Result<(Vec<Func>, Image), String> {
    use object::{Object, ObjectSection, ObjectSymbol};
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let bytes = std::fs::read(&exe).map_err(|e| format!("{}: {e}", exe.display()))?;
    let file = object::File::parse(&*bytes).map_err(|e| format!("{}: {e}", exe.display()))?;
    let mut img = Image {
        sections: Vec::new(),
    };
    for s in file.sections() {
        if let Ok(d) = s.data() {
            if !d.is_empty() && s.address() != 0 {
                img.sections.push((s.address(), d.to_vec()));
            }
        }
    }
    let mut out = Vec::new();
    for sym in file.symbols() {
        let Ok(raw) = sym.name() else { continue };
        let dm = clean_name(raw);
        if dm != name || sym.size() == 0 {
            continue;
        }
        if let Some(code) = img.read(sym.address(), sym.size() as usize) {
            out.push(Func {
                name: format!("{dm} ({raw})"),
                addr: sym.address(),
                code: code.to_vec(),
            });
        }
    }
    out.sort_by_key(|f| std::cmp::Reverse(f.code.len()));
    Ok((out, img))
}

/// Functions of the toyvm module as `compiler` compiled them whose
/// demangled name (hash stripped) equals `name`.
pub fn wasm_functions(
    compiler: wasm_host::Compiler,
    name: &str,
) -> Result<(Vec<Func>, Image), String> {
    let c = wasm_host::compiler::compiled(compiler)?;
    let text = c.module.text();
    let img = Image {
        sections: vec![(0, text.to_vec())],
    };
    let mut out = Vec::new();
    for f in c.module.functions() {
        let Some(raw) = f.name.as_deref() else {
            continue;
        };
        let dm = clean_name(raw);
        if dm != name {
            continue;
        }
        out.push(Func {
            name: format!("{dm} (wasm function {})", f.index.as_u32()),
            addr: f.offset as u64,
            code: text[f.offset..f.offset + f.len].to_vec(),
        });
    }
    out.sort_by_key(|f| std::cmp::Reverse(f.code.len()));
    Ok((out, img))
}
