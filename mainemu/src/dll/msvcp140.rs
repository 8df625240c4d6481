//! MSVCP140.dll: the parts of MSVC's C++ standard library a /MD program
//! imports for its iostreams: `std::basic_streambuf<char>` (constructor,
//! destructor, `_Pninc`, `sputc`, `sputn`, its base virtuals), `std::basic_ios<char>`
//! (constructor, destructor, `widen`, `setstate`), `std::basic_ostream<char>`
//! (constructor, destructor, `write`, `put`, `flush`, `_Osfx`, the inserters
//! of `int`, `unsigned`, `__int64`, `unsigned __int64` and manipulators),
//! `std::uncaught_exception` and the `_X...` throw helpers.
//!
//! The objects are MSVC 2015+'s 32-bit layouts, which the program's inline
//! code (its own `basic_stringbuf`, `basic_ostringstream`, `std::string`)
//! reads and writes directly:
//! - `basic_streambuf`: {vtable, _Gfirst, _Pfirst, _IGfirst, _IPfirst,
//!   _Gnext, _Pnext, _IGnext, _IPnext, _Gcount, _Pcount, _IGcount, _IPcount,
//!   _Plocale} (0x38 bytes); the `_I...` fields point at the six before
//!   them and every access goes through them (pptr = *_IPnext, epptr =
//!   *_IPnext + *_IPcount). Its vtable has 15 slots: the deleting
//!   destructor, `_Lock`, `_Unlock`, `overflow`, `pbackfail`, `showmanyc`,
//!   `underflow`, `uflow`, `xsgetn`, `xsputn`, `seekoff`, `seekpos`,
//!   `setbuf`, `sync`, `imbue`.
//! - `ios_base`: {vtable, pad, _Stdstr (8-aligned), _Mystate, _Except,
//!   _Fmtfl, _Prec (i64), _Wide (i64), _Arr, _Calls, _Ploc} (0x38);
//!   `basic_ios` adds {_Mystrbuf, _Tiestr, _Fillch} (0x48).
//! - `basic_ostream`: {vbptr} with `basic_ios` as a virtual base, at
//!   offset 8 in a standalone ostream (its vbtable is {0, 8}); a derived
//!   class constructs the virtual base itself and passes the hidden
//!   "construct virtual bases" argument 0.
//!
//! Members are thiscall (`this` in ECX, arguments popped by the callee),
//! declared stdcall here. Virtual calls (overflow, underflow, uflow,
//! xsputn, sync) go through the object's own vtable into guest code, as
//! MSVC's bodies do. Numbers are formatted as the "C" locale's `num_put`
//! does (no grouping; `showpos`, `showbase`, `uppercase`, `oct`/`hex`,
//! width, fill and `left`/`internal`/`right` adjustment), then written
//! character by character semantics (`sputc`, `overflow` when full).
//!
//! Not modelled (each named where it matters): locales beyond an opaque
//! object (a `locale` is a 4-byte block pointing at one shared, zeroed
//! implementation block; facets are never looked up: `widen` is the
//! identity of the "C" locale), the stream lock (`_Lock`/`_Unlock` do
//! nothing, as in the base class; the sentry does not call them),
//! `ios_base::failure` exceptions (a state change the exception mask
//! selects stops the run with a report), the standard streams' `_Addstd`
//! bookkeeping, `std::uncaught_exception` (always false), and the
//! `_Xlength_error`/`_Xout_of_range`/`_Xbad_alloc` throws (they stop the
//! run naming the exception and its message).
//!
//! Owns this DLL's table and the base vtables it builds in guest memory on
//! first use. It must not hold C runtime state (crt does).

use super::crt;
use super::{Env, Ret};
use x86_cpu::reg;

/// basic_streambuf fields.
mod sb {
    pub const GFIRST: u32 = 0x04;
    pub const IGFIRST: u32 = 0x0c;
    pub const IGNEXT: u32 = 0x1c;
    pub const IPNEXT: u32 = 0x20;
    pub const IGCOUNT: u32 = 0x2c;
    pub const IPCOUNT: u32 = 0x30;
    pub const PLOCALE: u32 = 0x34;
    /// Vtable slots.
    pub const OVERFLOW: u32 = 3;
    pub const UNDERFLOW: u32 = 6;
    pub const UFLOW: u32 = 7;
    pub const XSPUTN: u32 = 9;
    pub const SYNC: u32 = 13;
}

/// ios_base / basic_ios fields.
mod ios {
    pub const STDSTR: u32 = 0x08;
    pub const STATE: u32 = 0x0c;
    pub const EXCEPT: u32 = 0x10;
    pub const FMTFL: u32 = 0x14;
    pub const PREC: u32 = 0x18;
    pub const WIDE: u32 = 0x20;
    pub const ARR: u32 = 0x28;
    pub const CALLS: u32 = 0x2c;
    pub const PLOC: u32 = 0x30;
    pub const STRBUF: u32 = 0x38;
    pub const TIE: u32 = 0x3c;
    pub const FILL: u32 = 0x40;
}

/// iostate bits and the mask `clear` keeps.
const BADBIT: u32 = 4;
const STATMASK: u32 = 0x17;
/// fmtflags.
mod fl {
    pub const SKIPWS: u32 = 0x1;
    pub const UNITBUF: u32 = 0x2;
    pub const UPPERCASE: u32 = 0x4;
    pub const SHOWBASE: u32 = 0x8;
    pub const SHOWPOS: u32 = 0x20;
    pub const LEFT: u32 = 0x40;
    pub const INTERNAL: u32 = 0x100;
    pub const ADJUSTFIELD: u32 = 0x1c0;
    pub const DEC: u32 = 0x200;
    pub const OCT: u32 = 0x400;
    pub const HEX: u32 = 0x800;
    pub const BASEFIELD: u32 = 0xe00;
}
/// `char_traits<char>::eof()`.
const EOF: u32 = u32::MAX;

fn rd(env: &Env, a: u32) -> u32 {
    env.mem.peek_u32(a).unwrap_or(0)
}

fn wr(env: &mut Env, a: u32, v: u32) {
    env.mem.poke_u32(a, v);
}

fn rd64(env: &Env, a: u32) -> i64 {
    (rd(env, a) as u64 | (rd(env, a + 4) as u64) << 32) as i64
}

fn wr64(env: &mut Env, a: u32, v: i64) {
    wr(env, a, v as u32);
    wr(env, a + 4, (v as u64 >> 32) as u32);
}

fn this(env: &mut Env) -> u32 {
    env.cpu().regs[reg::ECX]
}

/// Calls virtual function `slot` of `obj` (thiscall) with `args`.
fn vcall(
    env: &mut Env,
    obj: u32,
    slot: u32,
    args: Vec<u32>,
    then: impl FnOnce(&mut Env, u32) -> Ret + 'static,
) -> Ret {
    let f = rd(env, rd(env, obj) + 4 * slot);
    env.cpu().regs[reg::ECX] = obj;
    Ret::call(f, args, then)
}

/// The process's shared locale implementation block (opaque to guests
/// that never look up a facet) and a new `locale` object pointing at it.
fn new_locale(env: &mut Env) -> u32 {
    let imp = match env.data.get("msvcp140.dll!(locale impl)") {
        Some(&a) => a,
        None => {
            let a = env.alloc(0x40);
            env.data.insert("msvcp140.dll!(locale impl)".into(), a);
            a
        }
    };
    let p = crt::malloc(env, 4);
    if p != 0 {
        wr(env, p, imp);
    }
    p
}

// ---- vtables ----------------------------------------------------------

/// Guest address of export `name` of this DLL's table (or the private one).
fn export_addr(env: &mut Env, name: &str) -> u32 {
    if let Some(i) = DLL.exports.iter().position(|e| e.name == name) {
        return DLL.guest_addr(env, i);
    }
    let i = internal::DLL
        .exports
        .iter()
        .position(|e| e.name == name)
        .unwrap_or_else(|| panic!("msvcp140: no export {name}"));
    internal::DLL.guest_addr(env, i)
}

const STREAMBUF_SLOTS: [&str; 15] = [
    "??_G?$basic_streambuf@DU?$char_traits@D@std@@@std@@MAEPAXI@Z",
    "?_Lock@?$basic_streambuf@DU?$char_traits@D@std@@@std@@UAEXXZ",
    "?_Unlock@?$basic_streambuf@DU?$char_traits@D@std@@@std@@UAEXXZ",
    "?overflow@?$basic_streambuf@DU?$char_traits@D@std@@@std@@MAEHH@Z",
    "?pbackfail@?$basic_streambuf@DU?$char_traits@D@std@@@std@@MAEHH@Z",
    "?showmanyc@?$basic_streambuf@DU?$char_traits@D@std@@@std@@MAE_JXZ",
    "?underflow@?$basic_streambuf@DU?$char_traits@D@std@@@std@@MAEHXZ",
    "?uflow@?$basic_streambuf@DU?$char_traits@D@std@@@std@@MAEHXZ",
    "?xsgetn@?$basic_streambuf@DU?$char_traits@D@std@@@std@@MAE_JPAD_J@Z",
    "?xsputn@?$basic_streambuf@DU?$char_traits@D@std@@@std@@MAE_JPBD_J@Z",
    "?seekoff@?$basic_streambuf@DU?$char_traits@D@std@@@std@@MAE?AV?$fpos@U_Mbstatet@@@2@_JHH@Z",
    "?seekpos@?$basic_streambuf@DU?$char_traits@D@std@@@std@@MAE?AV?$fpos@U_Mbstatet@@@2@V32@H@Z",
    "?setbuf@?$basic_streambuf@DU?$char_traits@D@std@@@std@@MAEPAV12@PAD_J@Z",
    "?sync@?$basic_streambuf@DU?$char_traits@D@std@@@std@@MAEHXZ",
    "?imbue@?$basic_streambuf@DU?$char_traits@D@std@@@std@@MAEXABVlocale@2@@Z",
];

/// The three base vtables (streambuf, basic_ios, ostream) and the
/// standalone ostream's vbtable, built once: each vtable is preceded by
/// its (null) complete-object-locator slot.
fn tables(env: &mut Env) -> [u32; 4] {
    const KEY: &str = "msvcp140.dll!(vtables)";
    let base = match env.data.get(KEY) {
        Some(&a) => a,
        None => {
            let base = env.alloc(4 * 24);
            let mut slots: Vec<u32> = vec![0];
            for n in STREAMBUF_SLOTS {
                slots.push(export_addr(env, n));
            }
            slots.push(0);
            slots.push(export_addr(
                env,
                "??_G?$basic_ios@DU?$char_traits@D@std@@@std@@UAEPAXI@Z",
            ));
            slots.push(0);
            slots.push(export_addr(
                env,
                "??_G?$basic_ostream@DU?$char_traits@D@std@@@std@@UAEPAXI@Z",
            ));
            slots.extend([0, 8]);
            for (i, s) in slots.iter().enumerate() {
                wr(env, base + 4 * i as u32, *s);
            }
            env.data.insert(KEY.into(), base);
            base
        }
    };
    [base + 4, base + 4 * 17, base + 4 * 19, base + 4 * 20]
}

// ---- basic_streambuf ----------------------------------------------------

/// The get and put areas' (next, count) indirection fields.
const GET: (u32, u32) = (sb::IGNEXT, sb::IGCOUNT);
const PUT: (u32, u32) = (sb::IPNEXT, sb::IPCOUNT);

/// gptr() or pptr() of the area (GET or PUT), and what `_Gnavail`/`_Pnavail` counts (0
/// without a buffer).
fn navail(env: &Env, b: u32, (next, count): (u32, u32)) -> (u32, u32) {
    let p = rd(env, rd(env, b + next));
    let n = rd(env, rd(env, b + count)) as i32;
    (p, if p != 0 && n > 0 { n as u32 } else { 0 })
}

/// gbump(n) or pbump(n) of the area (GET or PUT).
fn bump(env: &mut Env, b: u32, (next, count): (u32, u32), n: u32) {
    let (pn, pc) = (rd(env, b + next), rd(env, b + count));
    let v = rd(env, pn).wrapping_add(n);
    wr(env, pn, v);
    let c = rd(env, pc).wrapping_sub(n);
    wr(env, pc, c);
}

type Done<T> = Box<dyn FnOnce(&mut Env, T) -> Ret>;

/// The base `xsputn` loop: copies what fits after pptr, calls `overflow`
/// for a character that does not; `then` gets the count written.
fn put_chars(
    env: &mut Env,
    b: u32,
    bytes: std::rc::Rc<Vec<u8>>,
    at: usize,
    then: Done<u64>,
) -> Ret {
    let mut at = at;
    while at < bytes.len() {
        let (p, avail) = navail(env, b, PUT);
        if avail > 0 {
            let n = (avail as usize).min(bytes.len() - at);
            env.mem.poke(p, &bytes[at..at + n]);
            bump(env, b, PUT, n as u32);
            at += n;
        } else {
            let c = bytes[at] as u32;
            return vcall(env, b, sb::OVERFLOW, vec![c], move |env, r| {
                if r == EOF {
                    then(env, at as u64)
                } else {
                    put_chars(env, b, bytes, at + 1, then)
                }
            });
        }
    }
    then(env, at as u64)
}

/// The base `xsgetn` loop: copies what is between gptr and egptr, calls
/// `uflow` for a character when the buffer is empty.
fn get_chars(env: &mut Env, b: u32, dst: u32, count: u64, done: u64, then: Done<u64>) -> Ret {
    let mut done = done;
    while done < count {
        let (g, avail) = navail(env, b, GET);
        if avail > 0 {
            let n = (avail as u64).min(count - done) as u32;
            let bytes = env.read_bytes(g, n).unwrap_or_default();
            env.mem.poke(dst + done as u32, &bytes);
            bump(env, b, GET, n);
            done += n as u64;
        } else {
            return vcall(env, b, sb::UFLOW, vec![], move |env, r| {
                if r == EOF {
                    then(env, done)
                } else {
                    env.mem.poke(dst + done as u32, &[r as u8]);
                    get_chars(env, b, dst, count, done + 1, then)
                }
            });
        }
    }
    then(env, done)
}

/// `sputc(c)`: stores after pptr or calls `overflow`.
fn sputc(env: &mut Env, b: u32, c: u8, then: impl FnOnce(&mut Env, u32) -> Ret + 'static) -> Ret {
    let (p, avail) = navail(env, b, PUT);
    if avail > 0 {
        env.mem.poke(p, &[c]);
        bump(env, b, PUT, 1);
        then(env, c as u32)
    } else {
        vcall(env, b, sb::OVERFLOW, vec![c as u32], then)
    }
}

fn streambuf_ctor(env: &mut Env, b: u32) -> u32 {
    let [vt, ..] = tables(env);
    wr(env, b, vt);
    let loc = new_locale(env);
    wr(env, b + sb::PLOCALE, loc);
    // _Init: the six indirections point at the fields before them, then
    // setp(0, 0) and setg(0, 0, 0).
    for k in 0..2 {
        wr(env, b + sb::IGFIRST + 4 * k, b + sb::GFIRST + 4 * k);
        wr(env, b + sb::IGNEXT + 4 * k, b + sb::GFIRST + 0x10 + 4 * k);
        wr(env, b + sb::IGCOUNT + 4 * k, b + sb::GFIRST + 0x20 + 4 * k);
    }
    for k in 0..2 {
        wr(env, b + sb::GFIRST + 4 * k, 0);
        wr(env, b + sb::GFIRST + 0x10 + 4 * k, 0);
        wr(env, b + sb::GFIRST + 0x20 + 4 * k, 0);
    }
    b
}

fn streambuf_dtor(env: &mut Env, b: u32) {
    let [vt, ..] = tables(env);
    wr(env, b, vt);
    let loc = rd(env, b + sb::PLOCALE);
    crt::free(env, loc);
}

// ---- ios_base / basic_ios ----------------------------------------------

fn ios_of(env: &Env, os: u32) -> u32 {
    os.wrapping_add(rd(env, rd(env, os) + 4))
}

/// `basic_ios::clear(state)`: keeps the state bits, adds badbit without a
/// buffer; a bit the exception mask selects would throw `ios_base::failure`.
fn clear(env: &mut Env, i: u32, state: u32) -> Result<(), Ret> {
    let mut s = state & STATMASK;
    if rd(env, i + ios::STRBUF) == 0 {
        s |= BADBIT;
    }
    wr(env, i + ios::STATE, s);
    let hit = s & rd(env, i + ios::EXCEPT);
    if hit != 0 {
        return Err(Ret::Stop(format!(
            "MSVCP140: ios_base::failure would be thrown (state {s:#x}, exception mask selects {hit:#x}): C++ iostream exceptions are not modelled"
        )));
    }
    Ok(())
}

fn setstate(env: &mut Env, i: u32, add: u32) -> Result<(), Ret> {
    let s = rd(env, i + ios::STATE);
    clear(env, i, s | add)
}

/// `basic_ios::init(strbuf, isstd)` after `ios_base::_Init`.
fn ios_init(env: &mut Env, i: u32, strbuf: u32) -> Result<(), Ret> {
    wr(env, i + ios::PLOC, 0);
    wr(env, i + ios::STDSTR, 0);
    wr(env, i + ios::EXCEPT, 0);
    wr(env, i + ios::FMTFL, fl::SKIPWS | fl::DEC);
    wr64(env, i + ios::PREC, 6);
    wr64(env, i + ios::WIDE, 0);
    wr(env, i + ios::ARR, 0);
    wr(env, i + ios::CALLS, 0);
    wr(env, i + ios::STATE, 0);
    let loc = new_locale(env);
    wr(env, i + ios::PLOC, loc);
    wr(env, i + ios::STRBUF, strbuf);
    wr(env, i + ios::TIE, 0);
    env.mem.poke(i + ios::FILL, b" ");
    if strbuf == 0 {
        setstate(env, i, BADBIT)?;
    }
    Ok(())
}

/// `ios_base`'s destructor part: the locale (no callbacks or arrays are
/// ever registered: the calls that would are not exported here).
fn ios_dtor(env: &mut Env, i: u32) {
    let [_, vt, ..] = tables(env);
    wr(env, i, vt);
    let loc = rd(env, i + ios::PLOC);
    crt::free(env, loc);
    wr(env, i + ios::PLOC, 0);
}

// ---- basic_ostream --------------------------------------------------------

type Then = Box<dyn FnOnce(&mut Env) -> Ret>;

/// The sentry's constructor: flushes a tied stream, then `then(good())`.
fn sentry(env: &mut Env, os: u32, then: Done<bool>) -> Ret {
    let i = ios_of(env, os);
    let tie = rd(env, i + ios::TIE);
    if rd(env, i + ios::STATE) == 0 && tie != 0 && tie != os {
        flush(
            env,
            tie,
            Box::new(move |env| {
                let ok = rd(env, i + ios::STATE) == 0;
                then(env, ok)
            }),
        )
    } else {
        let ok = rd(env, i + ios::STATE) == 0;
        then(env, ok)
    }
}

/// `_Osfx`: a `unitbuf` stream syncs its buffer after each output.
fn osfx(env: &mut Env, os: u32, then: Then) -> Ret {
    let i = ios_of(env, os);
    let b = rd(env, i + ios::STRBUF);
    if rd(env, i + ios::STATE) == 0 && rd(env, i + ios::FMTFL) & fl::UNITBUF != 0 && b != 0 {
        vcall(env, b, sb::SYNC, vec![], move |env, r| {
            if r == EOF {
                if let Err(stop) = setstate(env, i, BADBIT) {
                    return stop;
                }
            }
            then(env)
        })
    } else {
        then(env)
    }
}

/// `flush()`: under a sentry, `pubsync` (the buffer's `sync`).
fn flush(env: &mut Env, os: u32, then: Then) -> Ret {
    let i = ios_of(env, os);
    let b = rd(env, i + ios::STRBUF);
    if b == 0 {
        return then(env);
    }
    sentry(
        env,
        os,
        Box::new(move |env, ok| {
            let end: Then = Box::new(move |env| osfx(env, os, then));
            if !ok {
                return end(env);
            }
            vcall(env, b, sb::SYNC, vec![], move |env, r| {
                if r == EOF {
                    if let Err(stop) = setstate(env, i, BADBIT) {
                        return stop;
                    }
                }
                end(env)
            })
        }),
    )
}

/// The end of every inserter: adds `state`, then the sentry's destructor
/// (`_Osfx`), then returns the stream.
fn finish(env: &mut Env, os: u32, state: u32) -> Ret {
    let i = ios_of(env, os);
    if let Err(stop) = setstate(env, i, state) {
        return stop;
    }
    osfx(env, os, Box::new(move |_| Ret::Value(os)))
}

/// The text `num_put` makes of an integer in the "C" locale: printf's
/// `%d`/`%u`/`%o`/`%x`/`%X` with `+` (showpos, signed only) and `#`
/// (showbase). `signed` values in oct or hex print their unsigned bits.
fn int_text(flags: u32, v: i128, signed: bool, bits: u32) -> Vec<u8> {
    let base = flags & fl::BASEFIELD;
    let v = if (base == fl::OCT || base == fl::HEX) && v < 0 {
        v + (1i128 << bits)
    } else {
        v
    };
    let (radix, up) = match base {
        fl::OCT => (8, false),
        fl::HEX => (16, flags & fl::UPPERCASE != 0),
        _ => (10, false),
    };
    let neg = radix == 10 && signed && v < 0;
    let mag = v.unsigned_abs();
    let mut digits = Vec::new();
    let mut m = mag;
    loop {
        let d = (m % radix) as u8;
        digits.push(match d {
            0..=9 => b'0' + d,
            _ if up => b'A' + d - 10,
            _ => b'a' + d - 10,
        });
        m /= radix;
        if m == 0 {
            break;
        }
    }
    digits.reverse();
    let mut out = Vec::new();
    if neg {
        out.push(b'-');
    } else if radix == 10 && signed && flags & fl::SHOWPOS != 0 {
        out.push(b'+');
    }
    if flags & fl::SHOWBASE != 0 && mag != 0 {
        match radix {
            8 => out.push(b'0'),
            16 => out.extend_from_slice(if up { b"0X" } else { b"0x" }),
            _ => {}
        }
    }
    out.extend(digits);
    out
}

/// `_Iput`'s padding: the fill goes before (right, the default), after
/// (left) or after a sign or `0x` (internal) up to the width.
fn pad(flags: u32, width: i64, fill: u8, text: &[u8]) -> Vec<u8> {
    let n = if width <= 0 || width as u64 <= text.len() as u64 {
        0
    } else {
        width as usize - text.len()
    };
    let adj = flags & fl::ADJUSTFIELD;
    let mut out = Vec::new();
    let mut body = text;
    if adj == fl::LEFT {
        out.extend_from_slice(body);
        out.extend(std::iter::repeat_n(fill, n));
        return out;
    }
    if adj == fl::INTERNAL {
        if matches!(body.first(), Some(b'+' | b'-')) {
            out.push(body[0]);
            body = &body[1..];
        } else if body.len() >= 2 && body[0] == b'0' && matches!(body[1], b'x' | b'X') {
            out.extend_from_slice(&body[..2]);
            body = &body[2..];
        }
    }
    out.extend(std::iter::repeat_n(fill, n));
    out.extend_from_slice(body);
    out
}

/// An output call's frame on the `this` stream: the sentry, then `body`
/// (which ends in `finish`) when the stream is good, else `finish` adding
/// nothing.
fn under_sentry(env: &mut Env, body: impl FnOnce(&mut Env, u32) -> Ret + 'static) -> Ret {
    let os = this(env);
    sentry(
        env,
        os,
        Box::new(move |env, ok| {
            if ok {
                body(env, os)
            } else {
                finish(env, os, 0)
            }
        }),
    )
}

/// `operator<<` of a `bits`-wide integer: sentry, `num_put`, width(0), the state.
fn insert_int(env: &mut Env, v: i128, signed: bool, bits: u32) -> Ret {
    under_sentry(env, move |env, os| {
        let i = ios_of(env, os);
        let flags = rd(env, i + ios::FMTFL);
        let width = rd64(env, i + ios::WIDE);
        let fill = env.read_bytes(i + ios::FILL, 1).map_or(b' ', |b| b[0]);
        let text = pad(flags, width, fill, &int_text(flags, v, signed, bits));
        wr64(env, i + ios::WIDE, 0);
        let b = rd(env, i + ios::STRBUF);
        let n = text.len() as u64;
        put_chars(
            env,
            b,
            std::rc::Rc::new(text),
            0,
            Box::new(move |env, put| finish(env, os, if put == n { 0 } else { BADBIT })),
        )
    })
}

fn ostream_write(env: &mut Env, s: u32, lo: u32, hi: u32) -> Ret {
    under_sentry(env, move |env, os| {
        let i = ios_of(env, os);
        let b = rd(env, i + ios::STRBUF);
        let n = lo as u64 | (hi as u64) << 32;
        vcall(env, b, sb::XSPUTN, vec![s, lo, hi], move |env, r| {
            let edx = env.cpu().regs[reg::EDX];
            let put = r as u64 | (edx as u64) << 32;
            finish(env, os, if put == n { 0 } else { BADBIT })
        })
    })
}

fn ostream_put(env: &mut Env, c: u32) -> Ret {
    under_sentry(env, move |env, os| {
        let b = rd(env, ios_of(env, os) + ios::STRBUF);
        sputc(env, b, c as u8, move |env, r| {
            finish(env, os, if r == EOF { BADBIT } else { 0 })
        })
    })
}

/// `basic_ostream(strbuf, isstd)` with MSVC's hidden last argument: nonzero
/// when this ostream is the most-derived object and constructs its
/// virtual base (vbptr, then `basic_ios` at offset 8).
fn ostream_ctor(env: &mut Env, strbuf: u32, _isstd: u32, virt: u32) -> Ret {
    let os = this(env);
    let [_, ios_vt, os_vt, vbt] = tables(env);
    if virt != 0 {
        wr(env, os, vbt);
        wr(env, os + 4, 0);
        wr(env, os + 8, ios_vt);
    }
    let i = ios_of(env, os);
    wr(env, i, os_vt);
    match ios_init(env, i, strbuf) {
        Ok(()) => Ret::Value(os),
        Err(stop) => stop,
    }
}

/// The base `seekoff`/`seekpos` result, fpos(-1): {_Myoff -1, _Fpos 0,
/// _Mystate {0}} in the caller's return slot.
fn bad_pos(env: &mut Env, ret: u32) -> u32 {
    wr64(env, ret, -1);
    env.mem.poke(ret + 8, &[0; 16]);
    ret
}

fn x_throw(what: &str, msg: Option<String>) -> Ret {
    Ret::Stop(match msg {
        Some(m) => format!("MSVCP140: std::{what} thrown (\"{m}\"): the library's own C++ exceptions are not modelled"),
        None => format!("MSVCP140: std::{what} thrown: the library's own C++ exceptions are not modelled"),
    })
}

crate::dll! { "msvcp140.dll";
    // basic_streambuf<char>
    stdcall fn streambuf_ctor_ as "??0?$basic_streambuf@DU?$char_traits@D@std@@@std@@IAE@XZ"(env) -> u32 {
        let b = this(env);
        streambuf_ctor(env, b)
    }
    stdcall fn streambuf_dtor_ as "??1?$basic_streambuf@DU?$char_traits@D@std@@@std@@UAE@XZ"(env) {
        let b = this(env);
        streambuf_dtor(env, b)
    }
    stdcall fn streambuf_lock as "?_Lock@?$basic_streambuf@DU?$char_traits@D@std@@@std@@UAEXXZ"(env) {}
    stdcall fn streambuf_unlock as "?_Unlock@?$basic_streambuf@DU?$char_traits@D@std@@@std@@UAEXXZ"(env) {}
    stdcall fn streambuf_pninc as "?_Pninc@?$basic_streambuf@DU?$char_traits@D@std@@@std@@IAEPADXZ"(env) -> u32 {
        let b = this(env);
        let p = rd(env, rd(env, b + sb::IPNEXT));
        bump(env, b, PUT, 1);
        p
    }
    stdcall fn streambuf_sputc as "?sputc@?$basic_streambuf@DU?$char_traits@D@std@@@std@@QAEHD@Z"(env, c: u32) -> Ret {
        let b = this(env);
        sputc(env, b, c as u8, |_, r| Ret::Value(r))
    }
    stdcall fn streambuf_sputn as "?sputn@?$basic_streambuf@DU?$char_traits@D@std@@@std@@QAE_JPBD_J@Z"(env, s: u32, lo: u32, hi: u32) -> Ret {
        let b = this(env);
        vcall(env, b, sb::XSPUTN, vec![s, lo, hi], |env, r| {
            let edx = env.cpu().regs[reg::EDX];
            Ret::Value64(r as u64 | (edx as u64) << 32)
        })
    }
    stdcall fn streambuf_overflow as "?overflow@?$basic_streambuf@DU?$char_traits@D@std@@@std@@MAEHH@Z"(env, c: u32) -> u32 { EOF }
    stdcall fn streambuf_pbackfail as "?pbackfail@?$basic_streambuf@DU?$char_traits@D@std@@@std@@MAEHH@Z"(env, c: u32) -> u32 { EOF }
    stdcall fn streambuf_showmanyc as "?showmanyc@?$basic_streambuf@DU?$char_traits@D@std@@@std@@MAE_JXZ"(env) -> u64 { 0 }
    stdcall fn streambuf_underflow as "?underflow@?$basic_streambuf@DU?$char_traits@D@std@@@std@@MAEHXZ"(env) -> u32 { EOF }
    stdcall fn streambuf_uflow as "?uflow@?$basic_streambuf@DU?$char_traits@D@std@@@std@@MAEHXZ"(env) -> Ret {
        let b = this(env);
        vcall(env, b, sb::UNDERFLOW, vec![], move |env, r| {
            if r == EOF {
                return Ret::Value(EOF);
            }
            let (g, _) = navail(env, b, GET);
            let c = env.read_bytes(g, 1).map_or(0, |v| v[0]);
            bump(env, b, GET, 1);
            Ret::Value(c as u32)
        })
    }
    stdcall fn streambuf_xsgetn as "?xsgetn@?$basic_streambuf@DU?$char_traits@D@std@@@std@@MAE_JPAD_J@Z"(env, p: u32, lo: u32, hi: u32) -> Ret {
        let b = this(env);
        let n = (lo as u64 | (hi as u64) << 32) as i64;
        get_chars(env, b, p, n.max(0) as u64, 0, Box::new(|_, got| Ret::Value64(got)))
    }
    stdcall fn streambuf_xsputn as "?xsputn@?$basic_streambuf@DU?$char_traits@D@std@@@std@@MAE_JPBD_J@Z"(env, p: u32, lo: u32, hi: u32) -> Ret {
        let b = this(env);
        let n = (lo as u64 | (hi as u64) << 32) as i64;
        let bytes = env.read_bytes(p, n.clamp(0, u32::MAX as i64) as u32).unwrap_or_default();
        put_chars(env, b, std::rc::Rc::new(bytes), 0, Box::new(|_, put| Ret::Value64(put)))
    }
    stdcall fn streambuf_seekoff as "?seekoff@?$basic_streambuf@DU?$char_traits@D@std@@@std@@MAE?AV?$fpos@U_Mbstatet@@@2@_JHH@Z"(env, ret: u32, lo: u32, hi: u32, way: u32, mode: u32) -> u32 {
        bad_pos(env, ret)
    }
    stdcall fn streambuf_seekpos as "?seekpos@?$basic_streambuf@DU?$char_traits@D@std@@@std@@MAE?AV?$fpos@U_Mbstatet@@@2@V32@H@Z"(env, ret: u32, p0: u32, p1: u32, p2: u32, p3: u32, p4: u32, p5: u32, mode: u32) -> u32 {
        bad_pos(env, ret)
    }
    stdcall fn streambuf_setbuf as "?setbuf@?$basic_streambuf@DU?$char_traits@D@std@@@std@@MAEPAV12@PAD_J@Z"(env, p: u32, lo: u32, hi: u32) -> u32 { this(env) }
    stdcall fn streambuf_sync as "?sync@?$basic_streambuf@DU?$char_traits@D@std@@@std@@MAEHXZ"(env) -> u32 { 0 }
    stdcall fn streambuf_imbue as "?imbue@?$basic_streambuf@DU?$char_traits@D@std@@@std@@MAEXABVlocale@2@@Z"(env, loc: u32) {}

    // basic_ios<char>
    stdcall fn ios_ctor as "??0?$basic_ios@DU?$char_traits@D@std@@@std@@IAE@XZ"(env) -> u32 {
        let i = this(env);
        let [_, vt, ..] = tables(env);
        wr(env, i, vt);
        i
    }
    stdcall fn ios_dtor_ as "??1?$basic_ios@DU?$char_traits@D@std@@@std@@UAE@XZ"(env) {
        let i = this(env);
        ios_dtor(env, i)
    }
    stdcall fn ios_widen as "?widen@?$basic_ios@DU?$char_traits@D@std@@@std@@QBEDD@Z"(env, c: u32) -> u32 { c & 0xff }
    stdcall fn ios_setstate as "?setstate@?$basic_ios@DU?$char_traits@D@std@@@std@@QAEXH_N@Z"(env, state: u32, reraise: u32) -> Ret {
        let i = this(env);
        match setstate(env, i, state) {
            Ok(()) => Ret::Value(0),
            Err(stop) => stop,
        }
    }

    // basic_ostream<char>
    stdcall fn ostream_ctor_ as "??0?$basic_ostream@DU?$char_traits@D@std@@@std@@QAE@PAV?$basic_streambuf@DU?$char_traits@D@std@@@1@_N@Z"(env, strbuf: u32, isstd: u32, virt: u32) -> Ret {
        ostream_ctor(env, strbuf, isstd, virt)
    }
    // `this` is where the virtual base sits in a standalone ostream; the
    // destructor itself has nothing to do (basic_ios's runs after it).
    stdcall fn ostream_dtor as "??1?$basic_ostream@DU?$char_traits@D@std@@@std@@UAE@XZ"(env) {}
    stdcall fn ostream_write_ as "?write@?$basic_ostream@DU?$char_traits@D@std@@@std@@QAEAAV12@PBD_J@Z"(env, s: u32, lo: u32, hi: u32) -> Ret {
        ostream_write(env, s, lo, hi)
    }
    stdcall fn ostream_put_ as "?put@?$basic_ostream@DU?$char_traits@D@std@@@std@@QAEAAV12@D@Z"(env, c: u32) -> Ret {
        ostream_put(env, c)
    }
    stdcall fn ostream_flush as "?flush@?$basic_ostream@DU?$char_traits@D@std@@@std@@QAEAAV12@XZ"(env) -> Ret {
        let os = this(env);
        flush(env, os, Box::new(move |_| Ret::Value(os)))
    }
    stdcall fn ostream_osfx as "?_Osfx@?$basic_ostream@DU?$char_traits@D@std@@@std@@QAEXXZ"(env) -> Ret {
        let os = this(env);
        osfx(env, os, Box::new(|_| Ret::Value(0)))
    }
    stdcall fn ostream_manip as "??6?$basic_ostream@DU?$char_traits@D@std@@@std@@QAEAAV01@P6AAAV01@AAV01@@Z@Z"(env, f: u32) -> Ret {
        let os = this(env);
        Ret::call(f, vec![os], |_, r| Ret::Value(r))
    }
    stdcall fn ostream_int as "??6?$basic_ostream@DU?$char_traits@D@std@@@std@@QAEAAV01@H@Z"(env, v: u32) -> Ret {
        insert_int(env, v as i32 as i128, true, 32)
    }
    stdcall fn ostream_uint as "??6?$basic_ostream@DU?$char_traits@D@std@@@std@@QAEAAV01@I@Z"(env, v: u32) -> Ret {
        insert_int(env, v as i128, false, 32)
    }
    stdcall fn ostream_i64 as "??6?$basic_ostream@DU?$char_traits@D@std@@@std@@QAEAAV01@_J@Z"(env, lo: u32, hi: u32) -> Ret {
        let v = (lo as u64 | (hi as u64) << 32) as i64;
        insert_int(env, v as i128, true, 64)
    }
    stdcall fn ostream_u64 as "??6?$basic_ostream@DU?$char_traits@D@std@@@std@@QAEAAV01@_K@Z"(env, lo: u32, hi: u32) -> Ret {
        insert_int(env, (lo as u64 | (hi as u64) << 32) as i128, false, 64)
    }

    cdecl fn uncaught_exception as "?uncaught_exception@std@@YA_NXZ"(env) -> u32 { 0 }
    cdecl fn x_out_of_range as "?_Xout_of_range@std@@YAXPBD@Z"(env, msg: u32) -> Ret {
        x_throw("out_of_range", env.read_a(msg))
    }
    cdecl fn x_length_error as "?_Xlength_error@std@@YAXPBD@Z"(env, msg: u32) -> Ret {
        x_throw("length_error", env.read_a(msg))
    }
    cdecl fn x_bad_alloc as "?_Xbad_alloc@std@@YAXXZ"(env) -> Ret { x_throw("bad_alloc", None) }
}

/// The deleting destructors the base vtables hold (compiler-generated in
/// MSVC, not exports of msvcp140): `flags & 1` frees the object.
mod internal {
    use super::*;

    crate::dll! { "msvcp140.dll";
        stdcall fn streambuf_vdtor as "??_G?$basic_streambuf@DU?$char_traits@D@std@@@std@@MAEPAXI@Z"(env, flags: u32) -> u32 {
            let b = this(env);
            streambuf_dtor(env, b);
            if flags & 1 != 0 {
                crt::free(env, b);
            }
            b
        }
        stdcall fn ios_vdtor as "??_G?$basic_ios@DU?$char_traits@D@std@@@std@@UAEPAXI@Z"(env, flags: u32) -> u32 {
            let i = this(env);
            ios_dtor(env, i);
            if flags & 1 != 0 {
                crt::free(env, i);
            }
            i
        }
        // `this` is the basic_ios of a standalone ostream (offset 8).
        stdcall fn ostream_vdtor as "??_G?$basic_ostream@DU?$char_traits@D@std@@@std@@UAEPAXI@Z"(env, flags: u32) -> u32 {
            let i = this(env);
            ios_dtor(env, i);
            let os = i.wrapping_sub(8);
            if flags & 1 != 0 {
                crt::free(env, os);
            }
            os
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_as_num_put_formats_them() {
        let t = |flags, v, s| String::from_utf8(int_text(flags, v, s, 32)).unwrap();
        assert_eq!(t(fl::DEC, -42, true), "-42");
        assert_eq!(t(fl::DEC | fl::SHOWPOS, 42, true), "+42");
        assert_eq!(t(fl::DEC | fl::SHOWPOS, 42, false), "42");
        assert_eq!(t(fl::HEX, 255, true), "ff");
        assert_eq!(
            t(fl::HEX | fl::UPPERCASE | fl::SHOWBASE, 255, false),
            "0XFF"
        );
        assert_eq!(t(fl::HEX | fl::SHOWBASE, 0, false), "0");
        assert_eq!(t(fl::OCT | fl::SHOWBASE, 8, false), "010");
        assert_eq!(t(fl::HEX, -1, true), "ffffffff");
        assert_eq!(t(fl::OCT | fl::HEX, -1, true), "-1");
        let p = |flags, w, s: &str| String::from_utf8(pad(flags, w, b'*', s.as_bytes())).unwrap();
        assert_eq!(p(fl::DEC, 5, "-42"), "**-42");
        assert_eq!(p(fl::DEC | fl::LEFT, 5, "-42"), "-42**");
        assert_eq!(p(fl::DEC | fl::INTERNAL, 5, "-42"), "-**42");
        assert_eq!(p(fl::HEX | fl::INTERNAL, 6, "0xff"), "0x**ff");
        assert_eq!(p(fl::DEC, 2, "-42"), "-42");
    }
}
