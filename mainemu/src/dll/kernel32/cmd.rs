//! The built-in `cmd.exe`: what CreateProcess (and the C runtime's
//! `_popen`/`system`) run when the program named is `cmd`/`cmd.exe` (any
//! case, any folder).
//!
//! Owns cmd's command-line rules: the switches (`/c`, `/k` taken as `/c`,
//! `/s`, `/q`, `/d` and the other single-letter ones as no-ops), the
//! outer-quote stripping of `cmd /?`, `%VAR%` expansion, the operators
//! `&&`, `||`, `&`, `^` escapes, redirections (`>`, `>>`, `N>`, `N>>`,
//! `2>&1`, `<`), the built-ins (`echo`, `type`, `del`/`erase`, `copy`,
//! `mkdir`/`md`, `rmdir`/`rd`, `cd`/`chdir`, `exit`, `ver`, `rem`) and
//! cmd's messages and exit codes (9009 for an unknown program). Parsing
//! ([`parse`], [`invocation`]) is pure and unit-tested; running
//! ([`run`]) works on the caller's `Env`.
//!
//! It must not touch host paths except through the guest's drive mapping
//! (`vfs`, kernel32's file helpers), must not start host processes (other
//! programs run through `pipe`'s child path) and must not panic on any
//! input. Pipes (`|`), parentheses blocks, `if`/`for`/`set` and batch files
//! are not modelled: a `|` is refused with a message.

use crate::dll::Env;
use crate::dll::Ret;
use crate::files::{self, access, disp};
use crate::handles::{Object, INVALID};

/// One redirection of a simple command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Redir {
    /// `N> file` / `N>> file` (N 1 unless given).
    Out { fd: u8, path: String, append: bool },
    /// `N>&M`.
    Dup { fd: u8, to: u8 },
    /// `< file`.
    In(String),
}

/// How a command joins the one before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `&` (and the first command): always runs.
    Seq,
    /// `&&`: runs when the previous exit code is 0.
    And,
    /// `||`: runs when the previous exit code is not 0.
    Or,
}

/// A simple command: its text with the redirections taken out (leading
/// blanks and `@` removed, trailing blanks kept as cmd keeps them), and
/// its redirections in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Simple {
    pub text: String,
    pub redirs: Vec<Redir>,
}

/// A parse error: cmd's message (without the line end) and exit code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub message: String,
    pub code: u32,
}

const SYNTAX: &str = "The syntax of the command is incorrect.";

fn syntax() -> ParseError {
    ParseError {
        message: SYNTAX.into(),
        code: 255,
    }
}

fn unexpected(op: &str) -> ParseError {
    ParseError {
        message: format!("{op} was unexpected at this time."),
        code: 255,
    }
}

/// What follows `cmd`'s switches: the command to run (`/c`/`/k`) and
/// whether `/s` was given; `None` when there is no `/c` or `/k`.
pub fn invocation(cmdline: &str) -> Option<(String, bool)> {
    let c = cmdline.trim_start_matches([' ', '\t']);
    // The program token (quoted or not).
    let mut rest = if let Some(r) = c.strip_prefix('"') {
        r.split_once('"').map_or("", |(_, t)| t)
    } else {
        c.find([' ', '\t', '/']).map_or("", |i| &c[i..])
    };
    let mut s = false;
    loop {
        rest = rest.trim_start_matches([' ', '\t']);
        let Some(sw) = rest.strip_prefix('/') else {
            return None;
        };
        let mut ch = sw.chars();
        match ch.next().map(|c| c.to_ascii_lowercase()) {
            Some('c') | Some('k') => {
                return Some((ch.as_str().trim_start_matches([' ', '\t']).to_string(), s))
            }
            Some('s') => s = true,
            Some(_) => {}
            None => return None,
        }
        // The switch and any `:value` up to the next blank or switch.
        let after = ch.as_str();
        rest = &after[after.find([' ', '\t', '/']).unwrap_or(after.len())..];
    }
}

/// `cmd /?`'s quote rule for the text after `/c`: kept when there is no
/// `/s`, exactly two quotes, no special character `&<>()@^|` between them,
/// a blank between them, and the quoted string names a program
/// (`is_program`); otherwise a leading quote and the last quote go.
pub fn strip_quotes(text: &str, s: bool, is_program: &dyn Fn(&str) -> bool) -> String {
    let t = text.trim_start_matches([' ', '\t']);
    let quotes: Vec<usize> = t.match_indices('"').map(|(i, _)| i).collect();
    if !s && quotes.len() == 2 {
        let inner = &t[quotes[0] + 1..quotes[1]];
        if !inner.contains(['&', '<', '>', '(', ')', '@', '^', '|'])
            && inner.contains([' ', '\t'])
            && is_program(inner)
        {
            return t.to_string();
        }
    }
    if let Some(r) = t.strip_prefix('"') {
        match r.rfind('"') {
            Some(i) => format!("{}{}", &r[..i], &r[i + 1..]),
            None => r.to_string(),
        }
    } else {
        t.to_string()
    }
}

/// `%NAME%` replaced by the variable's value; an undefined name stays as
/// written (what `cmd /c` does).
pub fn expand(line: &str, var: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        match after.find('%') {
            Some(j) if j > 0 => match var(&after[..j]) {
                Some(v) => {
                    out.push_str(&v);
                    rest = &after[j + 1..];
                }
                None => {
                    out.push('%');
                    rest = after;
                }
            },
            _ => {
                out.push('%');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Splits a command line into simple commands and their operators.
pub fn parse(line: &str) -> Result<Vec<(Op, Simple)>, ParseError> {
    let chars: Vec<char> = line.chars().collect();
    let mut out: Vec<(Op, Simple)> = Vec::new();
    let mut op = Op::Seq;
    let mut text = String::new();
    let mut redirs = Vec::new();
    let mut inq = false;
    let mut i = 0;
    let finish = |op: Op,
                  text: &mut String,
                  redirs: &mut Vec<Redir>,
                  out: &mut Vec<(Op, Simple)>,
                  opname: &str|
     -> Result<(), ParseError> {
        let t = text.trim_start_matches([' ', '\t', '@']).to_string();
        if t.trim().is_empty() && redirs.is_empty() {
            return Err(unexpected(opname));
        }
        out.push((
            op,
            Simple {
                text: t,
                redirs: std::mem::take(redirs),
            },
        ));
        text.clear();
        Ok(())
    };
    while i < chars.len() {
        let c = chars[i];
        if inq {
            text.push(c);
            inq = c != '"';
            i += 1;
            continue;
        }
        match c {
            '"' => {
                inq = true;
                text.push(c);
                i += 1;
            }
            '^' => {
                if let Some(&n) = chars.get(i + 1) {
                    text.push(n);
                }
                i += 2;
            }
            '&' | '|' => {
                let double = chars.get(i + 1) == Some(&c);
                let (name, next) = match (c, double) {
                    ('&', true) => ("&&", Op::And),
                    ('&', false) => ("&", Op::Seq),
                    ('|', true) => ("||", Op::Or),
                    _ => {
                        return Err(ParseError {
                            message: "pipes (|) are not supported by mainemu's built-in cmd".into(),
                            code: 255,
                        })
                    }
                };
                finish(op, &mut text, &mut redirs, &mut out, name)?;
                op = next;
                i += if double { 2 } else { 1 };
            }
            '>' | '<' => {
                // A lone digit before the operator names the handle.
                let b: Vec<char> = text.chars().collect();
                let mut fd = if c == '>' { 1 } else { 0 };
                if let Some(&d) = b.last() {
                    if d.is_ascii_digit() && (b.len() == 1 || matches!(b[b.len() - 2], ' ' | '\t'))
                    {
                        fd = d as u8 - b'0';
                        text.pop();
                    }
                }
                i += 1;
                let append = c == '>' && chars.get(i) == Some(&'>');
                if append {
                    i += 1;
                }
                if c == '>' && chars.get(i) == Some(&'&') {
                    match chars.get(i + 1) {
                        Some(d) if d.is_ascii_digit() => {
                            redirs.push(Redir::Dup {
                                fd,
                                to: *d as u8 - b'0',
                            });
                            i += 2;
                            continue;
                        }
                        _ => return Err(syntax()),
                    }
                }
                while matches!(chars.get(i), Some(' ') | Some('\t')) {
                    i += 1;
                }
                let mut path = String::new();
                let mut q = false;
                while let Some(&ch) = chars.get(i) {
                    if !q && matches!(ch, ' ' | '\t' | '&' | '|' | '<' | '>') {
                        break;
                    }
                    if ch == '"' {
                        q = !q;
                    } else {
                        path.push(ch);
                    }
                    i += 1;
                }
                if path.is_empty() {
                    return Err(syntax());
                }
                redirs.push(if c == '<' {
                    Redir::In(path)
                } else {
                    Redir::Out { fd, path, append }
                });
            }
            _ => {
                text.push(c);
                i += 1;
            }
        }
    }
    if text.trim().is_empty() && redirs.is_empty() {
        if out.is_empty() {
            return Ok(out);
        }
        return Err(syntax());
    }
    finish(op, &mut text, &mut redirs, &mut out, "")?;
    Ok(out)
}

/// The command word and the rest (cmd's `echo.` / `echo/` forms split
/// after `echo`).
pub fn command_word(text: &str) -> (String, &str) {
    if let Some(r) = text.strip_prefix('"') {
        return match r.find('"') {
            Some(i) => (r[..i].to_string(), &r[i + 1..]),
            None => (r.to_string(), ""),
        };
    }
    let end = text.find([' ', '\t']).unwrap_or(text.len());
    let word = &text[..end];
    let low = word.to_ascii_lowercase();
    if low.len() > 4
        && low.starts_with("echo")
        && low[4..].starts_with(['.', '/', ':', '(', '[', '+', '=', ',', ';'])
    {
        return (word[..4].to_string(), &text[4..]);
    }
    (word.to_string(), &text[end..])
}

/// Arguments of a built-in: blank separated, quotes grouping and removed.
pub fn words(rest: &str) -> Vec<String> {
    let mut v = Vec::new();
    let mut cur = String::new();
    let (mut q, mut any) = (false, false);
    for c in rest.chars() {
        match c {
            '"' => {
                q = !q;
                any = true;
            }
            ' ' | '\t' if !q => {
                if any {
                    v.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        v.push(cur);
    }
    v
}

/// Where a running command writes.
#[derive(Clone, Copy)]
struct Io {
    out: u32,
    err: u32,
}

/// Writes to a guest handle (a pipe end also completes a waiting read).
fn put(env: &mut Env, h: u32, b: &[u8]) {
    crate::io::write(env, h, b).ok();
    if let Some(Object::PipeEnd { buf, .. }) = env.handles.get(h) {
        let b = *buf;
        super::pipe::after_io(env, b);
    }
}

fn say(env: &mut Env, h: u32, s: &str) {
    put(env, h, format!("{s}\r\n").as_bytes());
}

/// The Win32 message of an error code (cmd prints these).
fn message(code: u32) -> String {
    super::nls::system_message(code)
        .map(|s| s.trim_end().to_string())
        .unwrap_or_else(|| format!("Error {code}."))
}

/// Runs cmd for `cmdline` (cmd's own command line, program name first)
/// with standard output and error on `out`/`err` and `stdin` as the
/// standard input of the programs it runs. Returns cmd's exit code, or the
/// stop of a program that did not end. The guest's current directory is
/// cmd's own: a `cd` does not outlive it.
pub fn run(env: &mut Env, cmdline: &str, out: u32, err: u32, stdin: &[u8]) -> Result<u32, Ret> {
    let Some((text, s)) = invocation(cmdline) else {
        // Interactive cmd: its console input is empty, so it ends at once.
        return Ok(0);
    };
    let text = strip_quotes(&text, s, &|p| {
        super::pipe::find_program(env, None, p).is_some()
    });
    if NESTED.with(|n| n.get()) >= MAX_NESTED {
        say(env, err, "mainemu's built-in cmd: cmd nested too deeply");
        return Ok(1);
    }
    let saved = env.drives.cwd();
    NESTED.with(|n| n.set(n.get() + 1));
    let r = run_line(env, &text, Io { out, err }, stdin);
    NESTED.with(|n| n.set(n.get() - 1));
    env.drives.set_cwd(&saved).ok();
    r
}

/// How deep `cmd /c cmd /c ...` may nest (each level is a host call).
const MAX_NESTED: u32 = 16;

thread_local! {
    static NESTED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

fn run_line(env: &mut Env, text: &str, io: Io, stdin: &[u8]) -> Result<u32, Ret> {
    let vars = env.vars.clone();
    let line = expand(text, &|n| {
        vars.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(n))
            .map(|(_, v)| v.clone())
    });
    let cmds = match parse(&line) {
        Ok(c) => c,
        Err(e) => {
            say(env, io.err, &e.message);
            return Ok(e.code);
        }
    };
    let mut code = 0;
    for (op, c) in cmds {
        let go = match op {
            Op::Seq => true,
            Op::And => code == 0,
            Op::Or => code != 0,
        };
        if !go {
            continue;
        }
        match simple(env, &c, io, stdin)? {
            Flow::Next(k) => code = k,
            Flow::Exit(k) => return Ok(k),
        }
    }
    Ok(code)
}

enum Flow {
    Next(u32),
    Exit(u32),
}

/// Runs one simple command with its redirections.
fn simple(env: &mut Env, c: &Simple, mut io: Io, stdin: &[u8]) -> Result<Flow, Ret> {
    let mut opened = Vec::new();
    let mut input = stdin.to_vec();
    let mut failed = None;
    for r in &c.redirs {
        match r {
            Redir::Out { fd, path, append } => {
                let (desired, d) = if *append {
                    (access::FILE_APPEND_DATA, disp::OPEN_ALWAYS)
                } else {
                    (access::GENERIC_WRITE, disp::CREATE_ALWAYS)
                };
                let h = super::file::open_path(env, path.clone(), desired, d, 0);
                if h == INVALID {
                    failed = Some(env.last_error);
                    break;
                }
                opened.push(h);
                match fd {
                    2 => io.err = h,
                    _ => io.out = h,
                }
            }
            Redir::Dup { fd, to } => {
                let h = if *to == 2 { io.err } else { io.out };
                if *fd == 2 {
                    io.err = h;
                } else {
                    io.out = h;
                }
            }
            Redir::In(path) => match super::file::resolve(env, path)
                .and_then(|h| std::fs::read(h).map_err(|e| files::io_error(&e)))
            {
                Ok(b) => input = b,
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            },
        }
    }
    let r = match failed {
        Some(e) => {
            say(env, io.err, &message(e));
            Ok(Flow::Next(1))
        }
        None => command(env, &c.text, io, &input),
    };
    for h in opened {
        crate::io::close(env, h).ok();
    }
    r
}

/// A guest path resolved for reading or writing, or cmd's message.
fn host(env: &Env, p: &str, write: bool) -> Result<std::path::PathBuf, u32> {
    if write {
        super::file::resolve_write(env, p)
    } else {
        super::file::resolve(env, p)
    }
}

/// Runs a command without redirections: a built-in or a program.
fn command(env: &mut Env, text: &str, io: Io, stdin: &[u8]) -> Result<Flow, Ret> {
    let (word, rest) = command_word(text);
    let args = words(rest);
    let plain: Vec<&String> = args.iter().filter(|a| !a.starts_with('/')).collect();
    let next = Flow::Next;
    let now = env.guest_filetime();
    match word.to_ascii_lowercase().as_str() {
        "" | "rem" => Ok(next(0)),
        "echo" => {
            let t = rest.get(1..).unwrap_or("");
            if rest.is_empty() || (t.trim().is_empty() && rest.starts_with([' ', '\t'])) {
                say(env, io.out, "ECHO is on.");
            } else {
                say(env, io.out, t);
            }
            Ok(next(0))
        }
        "ver" => {
            put(env, io.out, b"\r\nMicrosoft Windows [Version 6.1.7601]\r\n");
            Ok(next(0))
        }
        "exit" => {
            let n = plain
                .first()
                .and_then(|a| a.parse::<i32>().ok())
                .unwrap_or(0);
            Ok(Flow::Exit(n as u32))
        }
        "cd" | "chdir" => {
            match plain.first() {
                None => {
                    let d = env.drives.cwd();
                    say(env, io.out, &d);
                }
                Some(d) => {
                    if env.drives.set_cwd(d).is_err() {
                        say(env, io.err, "The system cannot find the path specified.");
                        return Ok(next(1));
                    }
                }
            }
            Ok(next(0))
        }
        "type" => {
            if plain.is_empty() {
                say(env, io.err, SYNTAX);
                return Ok(next(1));
            }
            let mut code = 0;
            for p in plain {
                match host(env, p, false)
                    .and_then(|h| std::fs::read(h).map_err(|e| files::io_error(&e)))
                {
                    Ok(b) => put(env, io.out, &b),
                    Err(e) => {
                        say(env, io.err, &message(e));
                        code = 1;
                    }
                }
            }
            Ok(next(code))
        }
        "del" | "erase" => {
            if plain.is_empty() {
                say(env, io.err, SYNTAX);
                return Ok(next(1));
            }
            for p in plain {
                let full = env.drives.lexical_full(p);
                let (dir, pat) = full.rsplit_once('\\').unwrap_or(("", &full));
                let mut gone = 0;
                if pat.contains(['*', '?']) {
                    if let Ok(h) = host(env, &format!("{dir}\\"), true) {
                        let names = files::list(&h, pat, false).unwrap_or_default();
                        for e in names
                            .into_iter()
                            .filter(|e| e.attrs & files::attr::DIRECTORY == 0)
                        {
                            if std::fs::remove_file(h.join(&e.name)).is_ok() {
                                gone += 1;
                            }
                        }
                        if gone > 0 {
                            crate::io::touch_parent(&h.join("x"), now);
                        }
                    }
                } else if let Ok(h) = host(env, &full, true) {
                    if h.is_file() {
                        match std::fs::remove_file(&h) {
                            Ok(()) => {
                                crate::io::touch_parent(&h, now);
                                gone = 1;
                            }
                            Err(e) => {
                                say(
                                    env,
                                    io.err,
                                    &format!("{full}\r\n{}", message(files::io_error(&e))),
                                );
                                continue;
                            }
                        }
                    }
                }
                if gone == 0 {
                    // cmd's del leaves the exit code 0 here.
                    say(env, io.err, &format!("Could Not Find {full}"));
                }
            }
            Ok(next(0))
        }
        "copy" => {
            let (src, dst) = match plain.as_slice() {
                [s] => (s.to_string(), ".".to_string()),
                [s, d] => (s.to_string(), d.to_string()),
                _ => {
                    say(env, io.err, SYNTAX);
                    return Ok(next(1));
                }
            };
            let data = host(env, &src, false).and_then(|h| {
                if h.is_dir() {
                    Err(crate::files::err::FILE_NOT_FOUND)
                } else {
                    std::fs::read(h).map_err(|e| files::io_error(&e))
                }
            });
            let data = match data {
                Ok(b) => b,
                Err(e) => {
                    say(env, io.err, &message(e));
                    say(env, io.out, "        0 file(s) copied.");
                    return Ok(next(1));
                }
            };
            let name = env.drives.lexical_full(&src);
            let name = name.rsplit('\\').next().unwrap_or("").to_string();
            let target = match host(env, &dst, true) {
                Ok(h) if h.is_dir() => host(
                    env,
                    &format!("{}\\{name}", dst.trim_end_matches('\\')),
                    true,
                ),
                r => r,
            };
            let r = target.and_then(|h| {
                let existed = h.exists();
                std::fs::write(&h, &data).map_err(|e| files::io_error(&e))?;
                files::set_mtime(&h, now);
                if !existed {
                    crate::io::touch_parent(&h, now);
                }
                Ok(())
            });
            match r {
                Ok(()) => {
                    say(env, io.out, "        1 file(s) copied.");
                    Ok(next(0))
                }
                Err(e) => {
                    say(env, io.err, &message(e));
                    say(env, io.out, "        0 file(s) copied.");
                    Ok(next(1))
                }
            }
        }
        "mkdir" | "md" => {
            if plain.is_empty() {
                say(env, io.err, SYNTAX);
                return Ok(next(1));
            }
            let mut code = 0;
            for p in plain {
                match host(env, p, true) {
                    Ok(h) if h.exists() => {
                        say(
                            env,
                            io.err,
                            &format!("A subdirectory or file {p} already exists."),
                        );
                        code = 1;
                    }
                    Ok(h) => {
                        if let Err(e) = std::fs::create_dir_all(&h) {
                            say(env, io.err, &message(files::io_error(&e)));
                            code = 1;
                        } else {
                            crate::io::touch_parent(&h, now);
                        }
                    }
                    Err(e) => {
                        say(env, io.err, &message(e));
                        code = 1;
                    }
                }
            }
            Ok(next(code))
        }
        "rmdir" | "rd" => {
            let tree = args.iter().any(|a| a.eq_ignore_ascii_case("/s"));
            if plain.is_empty() {
                say(env, io.err, SYNTAX);
                return Ok(next(1));
            }
            let mut code = 0;
            for p in plain {
                let r = host(env, p, true).and_then(|h| {
                    if !h.is_dir() {
                        return Err(if h.exists() {
                            267
                        } else {
                            files::err::FILE_NOT_FOUND
                        });
                    }
                    if env.drives.is_root(p) {
                        return Err(files::err::ACCESS_DENIED);
                    }
                    let r = if tree {
                        std::fs::remove_dir_all(&h)
                    } else {
                        std::fs::remove_dir(&h)
                    };
                    r.map_err(|e| {
                        if h.read_dir().is_ok_and(|mut d| d.next().is_some()) {
                            files::err::DIR_NOT_EMPTY
                        } else {
                            files::io_error(&e)
                        }
                    })?;
                    crate::io::touch_parent(&h, now);
                    Ok(())
                });
                if let Err(e) = r {
                    say(env, io.err, &message(e));
                    code = 1;
                }
            }
            Ok(next(code))
        }
        _ => program(env, text, &word, io, stdin),
    }
}

/// Runs a program (or a nested cmd) with the command text as its command
/// line; an unknown one gives cmd's message and 9009.
fn program(env: &mut Env, text: &str, word: &str, io: Io, stdin: &[u8]) -> Result<Flow, Ret> {
    let cmdline = text.trim_end_matches([' ', '\t']);
    if super::pipe::is_cmd(word) {
        return run(env, cmdline, io.out, io.err, stdin).map(Flow::Next);
    }
    match super::pipe::find_program(env, None, word) {
        Some((h, full)) => {
            super::pipe::run_program(env, &h, &full, cmdline, [io.out, io.err], stdin.to_vec())
                .map(Flow::Next)
        }
        None => {
            say(
                env,
                io.err,
                &format!("'{word}' is not recognized as an internal or external command,\r\noperable program or batch file."),
            );
            Ok(Flow::Next(9009))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(fd: u8, path: &str, append: bool) -> Redir {
        Redir::Out {
            fd,
            path: path.into(),
            append,
        }
    }

    fn s(text: &str, redirs: Vec<Redir>) -> Simple {
        Simple {
            text: text.into(),
            redirs,
        }
    }

    #[test]
    fn parse_table() {
        use Op::*;
        let cases: Vec<(&str, Result<Vec<(Op, Simple)>, u32>)> = vec![
            ("echo hi", Ok(vec![(Seq, s("echo hi", vec![]))])),
            (
                "echo hi > out.txt && type out.txt",
                Ok(vec![
                    (Seq, s("echo hi  ", vec![out(1, "out.txt", false)])),
                    (And, s("type out.txt", vec![])),
                ]),
            ),
            (
                "a || b & c",
                Ok(vec![
                    (Seq, s("a ", vec![])),
                    (Or, s("b ", vec![])),
                    (Seq, s("c", vec![])),
                ]),
            ),
            (
                "prog 2>err.txt >>log.txt 2>&1",
                Ok(vec![(
                    Seq,
                    s(
                        "prog   ",
                        vec![
                            out(2, "err.txt", false),
                            out(1, "log.txt", true),
                            Redir::Dup { fd: 2, to: 1 },
                        ],
                    ),
                )]),
            ),
            (
                "sort < \"in put.txt\"",
                Ok(vec![(
                    Seq,
                    s("sort ", vec![Redir::In("in put.txt".into())]),
                )]),
            ),
            // A digit inside a word is text, not a handle.
            (
                "echo a2>f",
                Ok(vec![(Seq, s("echo a2", vec![out(1, "f", false)]))]),
            ),
            // Quotes and ^ protect operators.
            (
                "echo \"a & b\" ^& c",
                Ok(vec![(Seq, s("echo \"a & b\" & c", vec![]))]),
            ),
            // An unterminated quote runs to the end of the line (as in cmd).
            ("echo \"a && b", Ok(vec![(Seq, s("echo \"a && b", vec![]))])),
            ("  @echo x", Ok(vec![(Seq, s("echo x", vec![]))])),
            ("", Ok(vec![])),
            ("echo hi >", Err(255)),
            ("echo hi > && x", Err(255)),
            ("&& echo x", Err(255)),
            ("echo x &&", Err(255)),
            ("echo x | more", Err(255)),
            ("echo x >&", Err(255)),
        ];
        for (line, want) in cases {
            let got = parse(line).map_err(|e| e.code);
            assert_eq!(got, want, "{line:?}");
        }
        assert_eq!(parse("echo hi >").unwrap_err().message, SYNTAX);
        assert_eq!(
            parse("&& x").unwrap_err().message,
            "&& was unexpected at this time."
        );
    }

    /// Every parser entry on lines built from the characters that matter
    /// (and non-ASCII ones): no panic.
    #[test]
    fn parsers_never_panic() {
        let alphabet: Vec<char> = "ab /cks\"^&|<>12%@.\té€ ".chars().collect();
        let mut x: u32 = 1;
        for _ in 0..20_000 {
            let mut line = String::new();
            for _ in 0..(x % 13) {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                line.push(alphabet[(x >> 16) as usize % alphabet.len()]);
            }
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let _ = parse(&line);
            let _ = invocation(&line);
            let _ = strip_quotes(&line, x & 1 == 0, &|_| true);
            let _ = expand(&line, &|_| Some("v".into()));
            let (_, rest) = command_word(&line);
            let _ = words(rest);
        }
    }

    #[test]
    fn switches_quotes_and_words() {
        assert_eq!(
            invocation("cmd /c echo hi"),
            Some(("echo hi".into(), false))
        );
        assert_eq!(
            invocation("C:\\Windows\\System32\\CMD.EXE /d /s /c \"a b\""),
            Some(("\"a b\"".into(), true))
        );
        assert_eq!(invocation("\"cmd.exe\" /Q /K x"), Some(("x".into(), false)));
        assert_eq!(
            invocation("cmd /e:on /cecho x"),
            Some(("echo x".into(), false))
        );
        assert_eq!(invocation("cmd"), None);
        assert_eq!(invocation("cmd foo"), None);
        let yes = |_: &str| true;
        let no = |_: &str| false;
        assert_eq!(strip_quotes("\"echo hi\"", false, &no), "echo hi");
        assert_eq!(
            strip_quotes("\"C:\\a b\\t.exe\"", false, &yes),
            "\"C:\\a b\\t.exe\""
        );
        assert_eq!(
            strip_quotes("\"C:\\a b\\t.exe\"", true, &yes),
            "C:\\a b\\t.exe"
        );
        assert_eq!(strip_quotes("\"a\" \"b\" x", false, &yes), "a\" \"b x");
        assert_eq!(strip_quotes("\"unterminated", false, &yes), "unterminated");
        assert_eq!(command_word("echo.x"), ("echo".to_string(), ".x"));
        assert_eq!(command_word("\"my prog\" a"), ("my prog".to_string(), " a"));
        assert_eq!(words(" a \"b c\" /y"), ["a", "b c", "/y"]);
        let v = |n: &str| (n == "OUT").then(|| "o.txt".to_string());
        assert_eq!(expand("echo %OUT% %NO% 100%", &v), "echo o.txt %NO% 100%");
    }
}
