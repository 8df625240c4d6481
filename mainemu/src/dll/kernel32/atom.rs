//! kernel32's atom tables: the process-local one (AddAtom, FindAtom,
//! DeleteAtom, GetAtomName) and the global one (the Global* calls), each a
//! case-insensitive, reference-counted table of names up to 255 characters
//! numbered from 0xC000, plus integer atoms (`MAKEINTATOM(n)` or `"#n"`,
//! 1..0xBFFF) that live in no table.
//!
//! Owns the tables (in [`Atoms`], kept by `Env`) and these calls' error
//! codes, as Windows gives them (ERROR_INVALID_PARAMETER, ERROR_INVALID_NAME,
//! ERROR_FILE_NOT_FOUND, ERROR_INVALID_HANDLE, ERROR_MORE_DATA,
//! ERROR_INSUFFICIENT_BUFFER). Must not touch host state.

use crate::dll::Env;
use crate::files::err;

const MAXINTATOM: u32 = 0xC000;
const MAX_ATOM_LEN: usize = 255;
const ERROR_MORE_DATA: u32 = 234;

/// One table: slot k holds atom 0xC000 + k (name, references).
#[derive(Default)]
pub struct Table(Vec<Option<(String, u32)>>);

/// The local and global tables.
#[derive(Default)]
pub struct Atoms {
    pub local: Table,
    pub global: Table,
}

/// What a name argument is.
enum Name {
    Int(u32),
    Str(String),
}

/// Reads an atom argument: an integer atom (MAKEINTATOM or "#digits") or a
/// name; Err is the error code.
fn parse(env: &Env, p: u32, wide: bool) -> Result<Name, u32> {
    let n = if p >> 16 == 0 {
        p
    } else {
        let s = env.read_str(p, wide).ok_or(998u32)?;
        if s.is_empty() {
            return Err(err::INVALID_NAME);
        }
        match s.strip_prefix('#') {
            Some(d) if !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()) => d
                .bytes()
                .fold(0u32, |a, b| (a * 10 + (b - b'0') as u32) & 0xFFFF),
            _ if s.chars().count() > MAX_ATOM_LEN => return Err(err::INVALID_PARAMETER),
            _ => return Ok(Name::Str(s)),
        }
    };
    if n == 0 || n >= MAXINTATOM {
        return Err(err::INVALID_PARAMETER);
    }
    Ok(Name::Int(n))
}

impl Table {
    fn find(&self, s: &str) -> Option<usize> {
        self.0
            .iter()
            .position(|e| e.as_ref().is_some_and(|(n, _)| n.eq_ignore_ascii_case(s)))
    }

    fn add(&mut self, s: String) -> u32 {
        if let Some(k) = self.find(&s) {
            self.0[k].as_mut().unwrap().1 += 1;
            return MAXINTATOM + k as u32;
        }
        let k = match self.0.iter().position(Option::is_none) {
            Some(k) => k,
            None => {
                self.0.push(None);
                self.0.len() - 1
            }
        };
        self.0[k] = Some((s, 1));
        MAXINTATOM + k as u32
    }

    fn name(&self, atom: u32) -> Option<String> {
        if (1..MAXINTATOM).contains(&atom) {
            return Some(format!("#{atom}"));
        }
        let k = atom.checked_sub(MAXINTATOM)? as usize;
        self.0.get(k)?.as_ref().map(|(n, _)| n.clone())
    }

    /// Drops one reference; false when there is no such atom.
    fn delete(&mut self, atom: u32) -> bool {
        if (1..MAXINTATOM).contains(&atom) {
            return true;
        }
        let Some(e) = atom
            .checked_sub(MAXINTATOM)
            .and_then(|k| self.0.get_mut(k as usize))
        else {
            return false;
        };
        match e {
            Some((_, refs)) if *refs > 1 => *refs -= 1,
            Some(_) => *e = None,
            None => return false,
        }
        true
    }
}

fn table(env: &mut Env, global: bool) -> &mut Table {
    if global {
        &mut env.atoms.global
    } else {
        &mut env.atoms.local
    }
}

fn add(env: &mut Env, p: u32, wide: bool, global: bool) -> u32 {
    match parse(env, p, wide) {
        Ok(Name::Int(n)) => n,
        Ok(Name::Str(s)) => table(env, global).add(s),
        Err(e) => env.fail(e, 0),
    }
}

fn find(env: &mut Env, p: u32, wide: bool, global: bool) -> u32 {
    match parse(env, p, wide) {
        Ok(Name::Int(n)) => n,
        Ok(Name::Str(s)) => match table(env, global).find(&s) {
            Some(k) => MAXINTATOM + k as u32,
            None => env.fail(err::FILE_NOT_FOUND, 0),
        },
        Err(e) => env.fail(e, 0),
    }
}

fn delete(env: &mut Env, atom: u32, global: bool) -> u32 {
    if table(env, global).delete(atom & 0xFFFF) {
        0
    } else {
        env.fail(err::INVALID_HANDLE, atom)
    }
}

/// The Get(Global)AtomName family (Windows' rules differ per call: see each arm).
fn get_name(env: &mut Env, atom: u32, buf: u32, count: i32, wide: bool, global: bool) -> u32 {
    if count <= 0 && (global || !wide) {
        return env.fail(ERROR_MORE_DATA, 0);
    }
    let Some(name) = table(env, global).name(atom & 0xFFFF) else {
        return env.fail(err::INVALID_HANDLE, 0);
    };
    let units: Vec<u16> = name.encode_utf16().collect();
    let count = count.max(0) as usize;
    if !wide {
        // The ANSI calls: count - 1 characters and a NUL; too small is ERROR_MORE_DATA and 0.
        let c = units.len().min(count - 1);
        let mut b: Vec<u8> = name.chars().take(c).map(|ch| ch as u32 as u8).collect();
        b.push(0);
        env.mem.poke(buf, &b);
        if units.len() >= count {
            return env.fail(ERROR_MORE_DATA, 0);
        }
        return units.len() as u32;
    }
    if global {
        // GlobalGetAtomNameW: up to count characters, NUL only when there is room.
        let n = units.len().min(count);
        let mut w = units[..n].to_vec();
        if n < count {
            w.push(0);
        }
        env.mem.poke(buf, &crate::dll::wbytes(&w));
        return n as u32;
    }
    // GetAtomNameW: count - 1 characters and a NUL; none fit: ERROR_INSUFFICIENT_BUFFER.
    let n = units.len().min(count.saturating_sub(1));
    let mut w = units[..n].to_vec();
    w.push(0);
    env.mem.poke(buf, &crate::dll::wbytes(&w));
    if n == 0 {
        env.last_error = err::INSUFFICIENT_BUFFER;
    }
    n as u32
}

crate::dll! { "(kernel32 atom)";
    stdcall fn InitAtomTable(env, n: u32) -> bool { true }
    stdcall fn AddAtomA(env, s: u32) -> u32 { add(env, s, false, false) }
    stdcall fn AddAtomW(env, s: u32) -> u32 { add(env, s, true, false) }
    stdcall fn GlobalAddAtomA(env, s: u32) -> u32 { add(env, s, false, true) }
    stdcall fn GlobalAddAtomW(env, s: u32) -> u32 { add(env, s, true, true) }
    stdcall fn FindAtomA(env, s: u32) -> u32 { find(env, s, false, false) }
    stdcall fn FindAtomW(env, s: u32) -> u32 { find(env, s, true, false) }
    stdcall fn GlobalFindAtomA(env, s: u32) -> u32 { find(env, s, false, true) }
    stdcall fn GlobalFindAtomW(env, s: u32) -> u32 { find(env, s, true, true) }
    stdcall fn DeleteAtom(env, a: u32) -> u32 { delete(env, a, false) }
    stdcall fn GlobalDeleteAtom(env, a: u32) -> u32 { delete(env, a, true) }
    stdcall fn GetAtomNameA(env, a: u32, buf: u32, n: i32) -> u32 { get_name(env, a, buf, n, false, false) }
    stdcall fn GetAtomNameW(env, a: u32, buf: u32, n: i32) -> u32 { get_name(env, a, buf, n, true, false) }
    stdcall fn GlobalGetAtomNameA(env, a: u32, buf: u32, n: i32) -> u32 { get_name(env, a, buf, n, false, true) }
    stdcall fn GlobalGetAtomNameW(env, a: u32, buf: u32, n: i32) -> u32 { get_name(env, a, buf, n, true, true) }
}
