//! The MSVC name demangler behind msvcrt's `__unDName` and
//! `type_info::name`: decorated C++ names (functions with access, storage,
//! calling convention, return and argument types; data; vftables and
//! vbtables; operators, constructors, destructors; templates with type and
//! integer arguments; name and argument back-references) to the text
//! `undname` prints, and a bare data type when `UNDNAME_NO_ARGUMENTS` asks.
//!
//! Owns only string work: it must not touch guest memory (the export at the
//! bottom reads its input and hands the result to the guest's allocator).
//! What it does not decode (managed types, anonymous namespaces' numbering,
//! some template forms) makes it answer `None`, and the export NULL.

use crate::dll::{Env, Ret};

/// UNDNAME_* flags honoured.
const NO_MS_KEYWORDS: u32 = 0x2;
const NO_FUNCTION_RETURNS: u32 = 0x4;
const NO_THISTYPE: u32 = 0x60;
const NO_ACCESS_SPECIFIERS: u32 = 0x80;
const NO_MEMBER_TYPE: u32 = 0x200;
const NAME_ONLY: u32 = 0x1000;
const NO_ARGUMENTS: u32 = 0x2000;

/// A type as a declarator's two halves: `left` before the name, `right`
/// after it (function pointers and arrays need both).
#[derive(Clone, Default)]
struct Ty {
    left: String,
    right: String,
}

impl Ty {
    fn plain(s: impl Into<String>) -> Ty {
        Ty {
            left: s.into(),
            right: String::new(),
        }
    }
    fn text(&self) -> String {
        format!("{}{}", self.left, self.right)
    }
}

struct P<'a> {
    s: &'a [u8],
    i: usize,
    names: Vec<String>,
    args: Vec<String>,
    flags: u32,
    /// The type being read is an argument's or a return type's outermost
    /// one: only there does a `Q`/`R`/`S` pointer print its own `const`/
    /// `volatile` (inside, the enclosing pointer's qualifiers say it).
    top: bool,
}

impl P<'_> {
    /// A Microsoft keyword, without its underscores under
    /// UNDNAME_NO_LEADING_UNDERSCORES.
    fn kw(&self, s: &str) -> String {
        if self.flags & 1 != 0 {
            s.trim_start_matches("__").to_string()
        } else {
            s.to_string()
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    /// An encoded number: `0`-`9` are 1-10, else hex digits `A`-`P` up to
    /// `@`; a leading `?` negates.
    fn number(&mut self) -> Option<i64> {
        let neg = self.eat(b'?');
        let c = self.next()?;
        let v = if c.is_ascii_digit() {
            (c - b'0') as i64 + 1
        } else {
            let mut v: i64 = 0;
            let mut c = c;
            while c != b'@' {
                if !(b'A'..=b'P').contains(&c) {
                    return None;
                }
                v = v.checked_mul(16)? + (c - b'A') as i64;
                c = self.next()?;
            }
            v
        };
        Some(if neg { -v } else { v })
    }

    /// Characters up to `@` (consumed).
    fn literal(&mut self) -> Option<String> {
        let start = self.i;
        while self.peek()? != b'@' {
            self.i += 1;
        }
        let s = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
        self.i += 1;
        if s.is_empty() {
            None
        } else {
            Some(s)
        }
    }

    fn remember(&mut self, n: &str) {
        if self.names.len() < 10 && !self.names.iter().any(|x| x == n) {
            self.names.push(n.to_string());
        }
    }

    /// `?$name@args@`: a template name, its arguments read with their own
    /// back-reference tables.
    fn template(&mut self) -> Option<String> {
        let saved = (
            std::mem::take(&mut self.names),
            std::mem::take(&mut self.args),
        );
        let r = (|| {
            let name = self.literal()?;
            self.remember(&name);
            let mut a = Vec::new();
            // A bare template name may end with its last argument.
            while !self.eat(b'@') && self.peek().is_some() {
                a.push(self.template_arg()?);
            }
            let list = a.join(",");
            let close = if list.ends_with('>') { " >" } else { ">" };
            Some(format!("{name}<{list}{close}"))
        })();
        (self.names, self.args) = saved;
        r
    }

    fn template_arg(&mut self) -> Option<String> {
        if self.eat(b'$') {
            match self.next()? {
                b'0' => return Some(self.number()?.to_string()),
                b'$' => {
                    self.i -= 2;
                }
                _ => return None,
            }
        }
        Some(self.arg_type()?.text())
    }

    /// One name fragment (remembered for back-references).
    fn fragment(&mut self) -> Option<String> {
        let c = self.peek()?;
        if c.is_ascii_digit() {
            self.i += 1;
            return self.names.get((c - b'0') as usize).cloned();
        }
        if c == b'?' {
            self.i += 1;
            if self.eat(b'$') {
                let t = self.template()?;
                self.remember(&t);
                return Some(t);
            }
            if self.eat(b'A') {
                // `?A0x1234abcd@`: an anonymous namespace.
                self.literal()?;
                let n = "`anonymous namespace'".to_string();
                self.remember(&n);
                return Some(n);
            }
            return None;
        }
        let n = self.literal()?;
        self.remember(&n);
        Some(n)
    }

    /// Scope fragments up to `@`, outermost first.
    fn scope(&mut self) -> Option<Vec<String>> {
        let mut v = Vec::new();
        while !self.eat(b'@') {
            v.push(self.fragment()?);
        }
        v.reverse();
        Some(v)
    }

    fn qualified(&mut self) -> Option<String> {
        Some(self.scope()?.join("::"))
    }

    fn cv(c: u8) -> Option<&'static str> {
        Some(match c {
            b'A' => "",
            b'B' => "const",
            b'C' => "volatile",
            b'D' => "const volatile",
            _ => return None,
        })
    }

    fn call_conv(c: u8) -> Option<&'static str> {
        Some(match c {
            b'A' | b'B' => "__cdecl",
            b'C' | b'D' => "__pascal",
            b'E' | b'F' => "__thiscall",
            b'G' | b'H' => "__stdcall",
            b'I' | b'J' => "__fastcall",
            b'K' | b'L' => "",
            b'M' | b'N' => "__clrcall",
            b'Q' => "__vectorcall",
            _ => return None,
        })
    }

    /// An argument list: `X` (void), or types up to `@`, or ending in `Z`
    /// (`...`).
    fn arg_list(&mut self) -> Option<String> {
        if self.eat(b'X') {
            return Some("(void)".into());
        }
        let mut a = Vec::new();
        loop {
            if self.eat(b'@') {
                break;
            }
            if self.eat(b'Z') {
                a.push("...".to_string());
                break;
            }
            a.push(self.arg_type()?.text());
        }
        Some(format!("({})", a.join(",")))
    }

    /// A type in an argument list: back-references by digit; any type
    /// longer than one character is remembered.
    fn arg_type(&mut self) -> Option<Ty> {
        let c = self.peek()?;
        if c.is_ascii_digit() {
            self.i += 1;
            return self.args.get((c - b'0') as usize).cloned().map(Ty::plain);
        }
        let start = self.i;
        self.top = true;
        let t = self.ty()?;
        if self.i - start > 1 && self.args.len() < 10 {
            self.args.push(t.text());
        }
        Some(t)
    }

    /// The function type after `6` in a pointer: convention, return type,
    /// arguments, throw specification.
    fn function_type(&mut self) -> Option<(String, Ty, String)> {
        let c = self.next()?;
        let cc = self.kw(Self::call_conv(c)?);
        let ret = self.return_type()?;
        let args = self.arg_list()?;
        self.eat(b'Z');
        Some((cc, ret, args))
    }

    fn return_type(&mut self) -> Option<Ty> {
        if self.eat(b'@') {
            return Some(Ty::default());
        }
        self.top = true;
        self.ty()
    }

    fn pointer(&mut self, sym: &str, top: bool) -> Option<Ty> {
        let sym = if top {
            sym.to_string()
        } else {
            sym.split(' ').next().unwrap_or(sym).to_string()
        };
        let sym = if self.peek() == Some(b'E') && self.s.get(self.i + 1) != Some(&b'@') {
            self.i += 1;
            format!("{sym} {}", self.kw("__ptr64"))
        } else {
            sym
        };
        let sym = sym.as_str();
        if self.eat(b'6') {
            let (cc, ret, args) = self.function_type()?;
            // `(__cdecl*const)`: no blank after the star here.
            let star = sym.replacen("* ", "*", 1);
            return Some(Ty {
                left: format!("{} ({cc}{star}", ret.left),
                right: format!("){args}{}", ret.right),
            });
        }
        if self.eat(b'8') {
            let class = self.qualified()?;
            let this = Self::cv(self.next()?)?;
            let (cc, ret, args) = self.function_type()?;
            let this = if this.is_empty() {
                String::new()
            } else {
                format!("{this} ")
            };
            return Some(Ty {
                left: format!("{} ({cc} {class}::{sym}", ret.left),
                right: format!("){args}{this}{}", ret.right),
            });
        }
        let cv = Self::cv(self.next()?)?;
        let inner = self.ty()?;
        let cv = if cv.is_empty() {
            String::new()
        } else {
            format!(" {cv}")
        };
        if !inner.right.is_empty() {
            // A pointer to an array or function type: parenthesised.
            return Some(Ty {
                left: format!("{}{cv} ({sym}", inner.left),
                right: format!("){}", inner.right),
            });
        }
        Some(Ty::plain(format!("{}{cv} {sym}", inner.left)))
    }

    fn ty(&mut self) -> Option<Ty> {
        let top = std::mem::replace(&mut self.top, false);
        let c = self.next()?;
        let basic = |s: &str| Some(Ty::plain(s));
        match c {
            b'C' => basic("signed char"),
            b'D' => basic("char"),
            b'E' => basic("unsigned char"),
            b'F' => basic("short"),
            b'G' => basic("unsigned short"),
            b'H' => basic("int"),
            b'I' => basic("unsigned int"),
            b'J' => basic("long"),
            b'K' => basic("unsigned long"),
            b'M' => basic("float"),
            b'N' => basic("double"),
            b'O' => basic("long double"),
            b'X' => basic("void"),
            b'_' => Some(Ty::plain(match self.next()? {
                b'D' => "__int8",
                b'E' => "unsigned __int8",
                b'F' => "__int16",
                b'G' => "unsigned __int16",
                b'H' => "__int32",
                b'I' => "unsigned __int32",
                b'J' => "__int64",
                b'K' => "unsigned __int64",
                b'L' => "__int128",
                b'M' => "unsigned __int128",
                b'N' => "bool",
                b'S' => "char16_t",
                b'U' => "char32_t",
                b'W' => "wchar_t",
                _ => return None,
            })),
            b'T' => Some(Ty::plain(format!("union {}", self.qualified()?))),
            b'U' => Some(Ty::plain(format!("struct {}", self.qualified()?))),
            b'V' => Some(Ty::plain(format!("class {}", self.qualified()?))),
            b'W' => {
                self.next()?; // the enum's underlying size
                Some(Ty::plain(format!("enum {}", self.qualified()?)))
            }
            b'P' => self.pointer("*", top),
            b'Q' => self.pointer("* const", top),
            b'R' => self.pointer("* volatile", top),
            b'S' => self.pointer("* const volatile", top),
            b'A' => self.pointer("&", top),
            b'B' => self.pointer("& volatile", top),
            b'?' => {
                // A by-value type with its qualifiers (return types, template
                // arguments, UNDNAME_NO_ARGUMENTS data types).
                let cv = Self::cv(self.next()?)?;
                let t = self.ty()?;
                Some(if cv.is_empty() {
                    t
                } else {
                    Ty {
                        left: format!("{} {cv}", t.left),
                        right: t.right,
                    }
                })
            }
            b'$' => {
                if !self.eat(b'$') {
                    return None;
                }
                match self.next()? {
                    b'Q' => self.pointer("&&", top),
                    b'R' => self.pointer("&& volatile", top),
                    b'T' => basic("std::nullptr_t"),
                    b'B' => {
                        // A template argument of array type: `char [256]`.
                        let t = self.ty()?;
                        Some(Ty::plain(if t.right.is_empty() {
                            t.left
                        } else {
                            format!("{} {}", t.left, t.right)
                        }))
                    }
                    b'C' => {
                        let cv = Self::cv(self.next()?)?;
                        let t = self.ty()?;
                        Some(Ty::plain(if cv.is_empty() {
                            t.text()
                        } else {
                            format!("{} {cv}", t.text())
                        }))
                    }
                    _ => None,
                }
            }
            b'Y' => {
                let n = self.number()?;
                let mut dims = String::new();
                for _ in 0..n.clamp(0, 16) {
                    dims += &format!("[{}]", self.number()?);
                }
                let t = self.ty()?;
                Some(Ty {
                    left: t.left,
                    right: format!("{dims}{}", t.right),
                })
            }
            _ => None,
        }
    }

    /// The name after `??`: an operator, constructor, destructor or one of
    /// the compiler's special names.
    fn special(&mut self) -> Option<(String, Special)> {
        let c = self.next()?;
        let op = |s: &str| Some((format!("operator{s}"), Special::Op));
        match c {
            b'0' => Some((String::new(), Special::Ctor)),
            b'1' => Some((String::new(), Special::Dtor)),
            b'2' => op(" new"),
            b'3' => op(" delete"),
            b'4' => op("="),
            b'5' => op(">>"),
            b'6' => op("<<"),
            b'7' => op("!"),
            b'8' => op("=="),
            b'9' => op("!="),
            b'A' => op("[]"),
            b'B' => Some(("operator ".into(), Special::Conv)),
            b'C' => op("->"),
            b'D' => op("*"),
            b'E' => op("++"),
            b'F' => op("--"),
            b'G' => op("-"),
            b'H' => op("+"),
            b'I' => op("&"),
            b'J' => op("->*"),
            b'K' => op("/"),
            b'L' => op("%"),
            b'M' => op("<"),
            b'N' => op("<="),
            b'O' => op(">"),
            b'P' => op(">="),
            b'Q' => op(","),
            b'R' => op("()"),
            b'S' => op("~"),
            b'T' => op("^"),
            b'U' => op("|"),
            b'V' => op("&&"),
            b'W' => op("||"),
            b'X' => op("*="),
            b'Y' => op("+="),
            b'Z' => op("-="),
            b'_' => {
                let d = self.next()?;
                let s = match d {
                    b'0' => "operator/=",
                    b'1' => "operator%=",
                    b'2' => "operator>>=",
                    b'3' => "operator<<=",
                    b'4' => "operator&=",
                    b'5' => "operator|=",
                    b'6' => "operator^=",
                    b'7' => "`vftable'",
                    b'8' => "`vbtable'",
                    b'9' => "`vcall'",
                    b'A' => "`typeof'",
                    b'B' => "`local static guard'",
                    b'D' => "`vbase destructor'",
                    b'E' => "`vector deleting destructor'",
                    b'F' => "`default constructor closure'",
                    b'G' => "`scalar deleting destructor'",
                    b'H' => "`vector constructor iterator'",
                    b'I' => "`vector destructor iterator'",
                    b'J' => "`vector vbase constructor iterator'",
                    b'K' => "`virtual displacement map'",
                    b'L' => "`eh vector constructor iterator'",
                    b'M' => "`eh vector destructor iterator'",
                    b'N' => "`eh vector vbase constructor iterator'",
                    b'O' => "`copy constructor closure'",
                    b'S' => "`local vftable'",
                    b'T' => "`local vftable constructor closure'",
                    b'U' => "operator new[]",
                    b'V' => "operator delete[]",
                    b'X' => "`placement delete closure'",
                    b'Y' => "`placement delete[] closure'",
                    b'R' if self.peek() == Some(b'0') => {
                        // `??_R0` + a type: that type's RTTI Type Descriptor.
                        self.i += 1;
                        let t = self.ty()?;
                        return Some((format!("{} `RTTI Type Descriptor'", t.text()), Special::Op));
                    }
                    _ => return None,
                };
                Some((s.to_string(), Special::Op))
            }
            _ => None,
        }
    }

    /// A whole decorated symbol.
    fn symbol(&mut self) -> Option<String> {
        if !self.eat(b'?') {
            return None;
        }
        if self.peek() == Some(b'$') {
            // `?$name@args@`: a template name on its own.
            self.i += 1;
            let t = self.template()?;
            return (self.i == self.s.len()).then_some(t);
        }
        let (first, special) = if self.eat(b'?') {
            if self.peek() == Some(b'$') {
                self.i += 1;
                let t = self.template()?;
                self.remember(&t);
                (t, Special::None)
            } else {
                self.special()?
            }
        } else {
            (self.fragment()?, Special::None)
        };
        let scope = self.scope()?;
        let class = scope.last().cloned().unwrap_or_default();
        let own = match special {
            Special::Ctor => class.clone(),
            Special::Dtor => format!("~{class}"),
            _ => first,
        };
        let mut full = scope.clone();
        full.push(own);
        let name = full.join("::");
        if self.flags & NAME_ONLY != 0 {
            return Some(name);
        }
        let kind = self.next()?;
        match kind {
            b'0'..=b'4' => {
                let access = match kind {
                    b'0' => "private: static ",
                    b'1' => "protected: static ",
                    b'2' => "public: static ",
                    _ => "",
                };
                let t = self.ty()?;
                let cv = Self::cv(self.next()?)?;
                let cv = if cv.is_empty() {
                    String::new()
                } else {
                    format!(" {cv}")
                };
                let access = if self.flags & NO_ACCESS_SPECIFIERS != 0 {
                    ""
                } else {
                    access
                };
                Some(format!("{access}{}{cv} {name}{}", t.left, t.right))
            }
            b'6' | b'7' => {
                let cv = Self::cv(self.next()?)?;
                let mut s = format!("{cv} {name}").trim_start().to_string();
                if !self.eat(b'@') {
                    let mut fors = Vec::new();
                    while !self.eat(b'@') {
                        fors.push(self.qualified()?);
                    }
                    for f in fors {
                        s += &format!("{{for `{f}'}}");
                    }
                }
                Some(s)
            }
            b'8' => Some(name),
            b'A'..=b'Z' => self.function(kind, &name, special),
            _ => None,
        }
    }

    fn function(&mut self, kind: u8, name: &str, special: Special) -> Option<String> {
        let i = kind - b'A';
        let (access, member, global) = if kind >= b'Y' {
            ("", "", true)
        } else {
            let access = ["private: ", "protected: ", "public: "][(i / 8) as usize];
            let member = match (i % 8) / 2 {
                1 => "static ",
                2 | 3 => "virtual ",
                _ => "",
            };
            (access, member, false)
        };
        let thunk = !global && (i % 8) / 2 == 3;
        let adjust = if thunk { Some(self.number()?) } else { None };
        let (this, ptr64) = if !global && member != "static " {
            let p = self.eat(b'E');
            (Self::cv(self.next()?)?, p)
        } else {
            ("", false)
        };
        let this = match (this, ptr64) {
            (t, false) => t.to_string(),
            ("", true) => self.kw("__ptr64"),
            (t, true) => format!("{t} {}", self.kw("__ptr64")),
        };
        let this = this.as_str();
        let c = self.next()?;
        let cc = self.kw(Self::call_conv(c)?);
        let cc = cc.as_str();
        let ret = self.return_type()?;
        let ret = if special == Special::Conv {
            // A conversion operator's name is its return type.
            // A qualified type is followed by a blank: `operator int const (void)`.
            let t = ret.text();
            let sep = if t.ends_with("const") || t.ends_with("volatile") {
                " "
            } else {
                ""
            };
            let n = format!("{name}{t}{sep}");
            return self.finish(access, member, cc, &Ty::default(), &n, this, adjust);
        } else {
            ret
        };
        self.finish(access, member, cc, &ret, name, this, adjust)
    }

    #[allow(clippy::too_many_arguments)]
    fn finish(
        &mut self,
        access: &str,
        member: &str,
        cc: &str,
        ret: &Ty,
        name: &str,
        this: &str,
        adjust: Option<i64>,
    ) -> Option<String> {
        let args = self.arg_list()?;
        self.eat(b'Z');
        let f = self.flags;
        let access = if f & NO_ACCESS_SPECIFIERS != 0 {
            ""
        } else {
            access
        };
        let member = if f & NO_MEMBER_TYPE != 0 { "" } else { member };
        let cc = if f & NO_MS_KEYWORDS != 0 { "" } else { cc };
        // "const " after the arguments, but "const __ptr64" with no blank.
        let this = if this.is_empty() || f & NO_THISTYPE != 0 {
            String::new()
        } else if this.ends_with("ptr64") {
            this.to_string()
        } else {
            format!("{this} ")
        };
        let mut s = String::new();
        if adjust.is_some() {
            s += "[thunk]:";
        }
        s += access;
        s += member;
        if !ret.left.is_empty() && f & NO_FUNCTION_RETURNS == 0 {
            s += &ret.left;
            // A returned function pointer's `(__cdecl*` meets the convention.
            if ret.right.is_empty() {
                s.push(' ');
            }
        }
        if !cc.is_empty() {
            s += cc;
            s.push(' ');
        }
        s += name;
        if let Some(a) = adjust {
            s += &format!("`adjustor{{{a}}}' ");
        }
        s += &args;
        s += &this;
        if f & NO_FUNCTION_RETURNS == 0 {
            s += &ret.right;
        }
        Some(s)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Special {
    None,
    Op,
    Ctor,
    Dtor,
    Conv,
}

/// Demangles `s` with UNDNAME flags `flags`; `None` when it is not a name
/// this decoder reads.
pub fn demangle(s: &str, flags: u32) -> Option<String> {
    let mut p = P {
        s: s.as_bytes(),
        i: 0,
        names: Vec::new(),
        args: Vec::new(),
        flags,
        top: false,
    };
    if flags & NO_ARGUMENTS != 0 {
        let t = p.ty()?;
        return Some(t.text());
    }
    p.symbol()
}

/// A type_info's decorated name after its '.' (`?AVexception@@`) as text.
pub fn demangle_type(s: &str) -> Option<String> {
    demangle(s, 0x2800)
}

/// `__unDName(buffer, mangled, size, alloc, free, flags)`: into `buffer`
/// (cut to `size - 1` characters), or a block from the caller's `alloc`.
fn und_name(env: &mut Env, buf: u32, mangled: u32, size: u32, alloc: u32, flags: u32) -> Ret {
    let input = env.mem.peek_cstr(mangled, 4096).unwrap_or_default();
    let Some(text) = demangle(&String::from_utf8_lossy(&input), flags) else {
        return Ret::Value(0);
    };
    let mut b = text.into_bytes();
    if buf != 0 {
        b.truncate(size.saturating_sub(1) as usize);
        b.push(0);
        env.mem.poke(buf, &b);
        return Ret::Value(buf);
    }
    if alloc == 0 {
        return Ret::Value(0);
    }
    b.push(0);
    Ret::call(alloc, vec![b.len() as u32], move |env, p| {
        if p != 0 {
            env.mem.poke(p, &b);
        }
        Ret::Value(p)
    })
}

crate::dll! { "(msvcrt undname)";
    cdecl fn __unDName(env, buf: u32, mangled: u32, size: u32, alloc: u32, free: u32, flags: u32) -> Ret { und_name(env, buf, mangled, size, alloc, flags) }
    cdecl fn __unDNameEx(env, buf: u32, mangled: u32, size: u32, alloc: u32, free: u32, get_param: u32, flags: u32) -> Ret { und_name(env, buf, mangled, size, alloc, flags) }
}

#[cfg(test)]
mod tests {
    use super::demangle;

    /// Windows' `undname` answers for decorated names of msvcrt's own
    /// exports and of its C++ library.
    #[test]
    fn undname_table() {
        let t = [
            ("??0bad_cast@@AAE@PBQBD@Z", 0, "private: __thiscall bad_cast::bad_cast(char const * const *)"),
            ("??0bad_cast@@QAE@ABQBD@Z", 0, "public: __thiscall bad_cast::bad_cast(char const * const &)"),
            ("??1__non_rtti_object@@UAE@XZ", 0, "public: virtual __thiscall __non_rtti_object::~__non_rtti_object(void)"),
            ("??0strstreambuf@@QAE@Q6APAXJ@ZS6AXPAX@Z@Z", 0, "public: __thiscall strstreambuf::strstreambuf(void * (__cdecl*const)(long),void (__cdecl*const volatile)(void *))"),
            ("??0strstreambuf@@QAE@PADH0@Z", 0, "public: __thiscall strstreambuf::strstreambuf(char *,int,char *)"),
            ("??4istream_withassign@@QAEAAV0@ABV0@@Z", 0, "public: class istream_withassign & __thiscall istream_withassign::operator=(class istream_withassign const &)"),
            ("??A?$basic_string@DU?$char_traits@D@std@@V?$allocator@D@2@@std@@QBEABDI@Z", 0, "public: char const & __thiscall std::basic_string<char,struct std::char_traits<char>,class std::allocator<char> >::operator[](unsigned int)const "),
            ("?cin@std@@3V?$basic_istream@DU?$char_traits@D@std@@@1@A", 0, "class std::basic_istream<char,struct std::char_traits<char> > std::cin"),
            ("??_8?$basic_fstream@DU?$char_traits@D@std@@@std@@7B?$basic_ostream@DU?$char_traits@D@std@@@1@@", 0, "const std::basic_fstream<char,struct std::char_traits<char> >::`vbtable'{for `std::basic_ostream<char,struct std::char_traits<char> >'}"),
            ("?AVtest1@@", 0x2800, "class test1"),
            ("ABVVec4@ref2@dice@@", 0x2800, "class dice::ref2::Vec4 const &"),
            ("?AV?$CDB_GEN_BIG_ENUM_FLAG@W4CDB_WYSIWYG_BITS_ENUM@@$0HO@@@", 0x2800, "class CDB_GEN_BIG_ENUM_FLAG<enum CDB_WYSIWYG_BITS_ENUM,126>"),
            ("P8test@@BACXZ", 0x2800, "signed char (__cdecl test::*)(void)const "),
            ("?$aaa@Vbbb@ccc@@Vddd@2@", 0, "aaa<class ccc::bbb,class ccc::ddd>"),
            ("??_R0?AVCC@DD@@@8", 0, "class DD::CC `RTTI Type Descriptor'"),
            ("??_E?$TStrArray@$$BY0BAA@D$0BA@@@UAEPAXI@Z", 0, "public: virtual void * __thiscall TStrArray<char [256],16>::`vector deleting destructor'(unsigned int)"),
            ("??Bcastop@@QAE?BHXZ", 0, "public: __thiscall castop::operator int const (void)"),
        ];
        for (m, f, want) in t {
            assert_eq!(demangle(m, f).as_deref(), Some(want), "{m}");
        }
        assert_eq!(demangle("", 0), None);
        assert_eq!(demangle("?", 0), None);
        assert_eq!(demangle("??_", 0x2800), None);
    }
}
