//! msvcrt's C++ runtime classes and RTTI: `exception`, `bad_typeid`,
//! `bad_cast`, `__non_rtti_object` (constructors, destructors, `operator=`,
//! `what`, the scalar and vector deleting destructors, their vtables as
//! data exports), `type_info`'s members, `__RTtypeid`, `__RTCastToVoid`,
//! `__RTDynamicCast`, and `operator new[]`/`delete[]`.
//!
//! Owns one guest block, built on first use, holding for each class its
//! TypeDescriptor, base-class descriptors and array, hierarchy descriptor,
//! complete object locator and vtable (the locator in the dword before the
//! vtable, as MSVC lays it out), and the ThrowInfo the runtime throws its
//! own exceptions with. The objects are MSVC's 32-bit layouts: an
//! exception is {vtable, name, do_free}, a type_info {vtable, demangled
//! name cache, decorated name}. Members are thiscall (`this` in ECX,
//! arguments popped by the callee), declared stdcall here. It must not
//! know the C++ exception machinery beyond handing a ThrowInfo to
//! [`super::cxx::raise`], and must not demangle ([`super::undname`] does).

use crate::dll::{Env, Ret};
use crate::pe::ImportName;
use x86_cpu::reg;

/// sizeof(exception) and its subclasses: vtable, name, do_free.
const EXC_SIZE: u32 = 12;

/// The classes with RTTI here: index, decorated name, the classes it
/// derives from (itself first, then its bases, nearest first), and its
/// exports: vector deleting destructor, copy constructor, destructor.
struct Class {
    name: &'static str,
    mangled: &'static str,
    bases: &'static [usize],
    vdtor: &'static str,
    copy: &'static str,
    dtor: &'static str,
}

const EXCEPTION: usize = 0;
const BAD_TYPEID: usize = 1;
const BAD_CAST: usize = 2;
const NON_RTTI: usize = 3;
const TYPE_INFO: usize = 4;

const CLASSES: [Class; 5] = [
    Class {
        name: "exception",
        mangled: ".?AVexception@@",
        bases: &[EXCEPTION],
        vdtor: "??_Eexception@@UAEPAXI@Z",
        copy: "??0exception@@QAE@ABV0@@Z",
        dtor: "??1exception@@UAE@XZ",
    },
    Class {
        name: "bad_typeid",
        mangled: ".?AVbad_typeid@@",
        bases: &[BAD_TYPEID, EXCEPTION],
        vdtor: "??_Ebad_typeid@@UAEPAXI@Z",
        copy: "??0bad_typeid@@QAE@ABV0@@Z",
        dtor: "??1bad_typeid@@UAE@XZ",
    },
    Class {
        name: "bad_cast",
        mangled: ".?AVbad_cast@@",
        bases: &[BAD_CAST, EXCEPTION],
        vdtor: "??_Ebad_cast@@UAEPAXI@Z",
        copy: "??0bad_cast@@QAE@ABV0@@Z",
        dtor: "??1bad_cast@@UAE@XZ",
    },
    Class {
        name: "__non_rtti_object",
        mangled: ".?AV__non_rtti_object@@",
        bases: &[NON_RTTI, BAD_TYPEID, EXCEPTION],
        vdtor: "??_E__non_rtti_object@@UAEPAXI@Z",
        copy: "??0__non_rtti_object@@QAE@ABV0@@Z",
        dtor: "??1__non_rtti_object@@UAE@XZ",
    },
    Class {
        name: "type_info",
        mangled: ".?AVtype_info@@",
        bases: &[TYPE_INFO],
        vdtor: "??_Gtype_info@@UAEPAXI@Z",
        copy: "",
        dtor: "??1type_info@@UAE@XZ",
    },
];

fn thunk(env: &mut Env, name: &str) -> u32 {
    let n = ImportName::Name {
        hint: 0,
        name: name.into(),
    };
    crate::modules::bind_import(env, "msvcrt.dll", &n).unwrap_or(0)
}

fn key(what: &str, class: usize) -> String {
    format!("crt!(rtti {what} {})", CLASSES[class].name)
}

/// The vtable data export's key (the `??_7class@@6B@` variable).
fn vtable_key(class: usize) -> String {
    format!("msvcrt.dll!??_7{}@@6B@", CLASSES[class].name)
}

/// Builds the RTTI block once; returns nothing (addresses go to `env.data`).
fn build(env: &mut Env) {
    if env.data.contains_key("crt!(rtti built)") {
        return;
    }
    env.data.insert("crt!(rtti built)".into(), 1);
    let base = env.alloc(0x800);
    let mut at = base;
    let mut put = |env: &mut Env, words: &[u32]| -> u32 {
        let a = at;
        for (i, w) in words.iter().enumerate() {
            env.mem.poke_u32(a + 4 * i as u32, *w);
        }
        at += 4 * words.len() as u32;
        a
    };
    // TypeDescriptors first: the vtables of type_info objects point at
    // type_info's vtable, patched in below once it exists.
    let mut td = [0u32; 5];
    for (i, c) in CLASSES.iter().enumerate() {
        let mut w = vec![0u32, 0];
        let mut name = c.mangled.as_bytes().to_vec();
        name.resize(name.len().div_ceil(4) * 4 + 4, 0);
        w.extend(
            name.chunks(4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        );
        td[i] = put(env, &w);
    }
    // One base-class descriptor per class: {type, contained bases, this
    // displacement {mdisp 0, pdisp -1, vdisp 0}, attributes}.
    let mut bcd = [0u32; 5];
    for (i, c) in CLASSES.iter().enumerate() {
        bcd[i] = put(env, &[td[i], c.bases.len() as u32 - 1, 0, u32::MAX, 0, 0]);
    }
    let mut vt = [0u32; 5];
    for (i, c) in CLASSES.iter().enumerate() {
        let arr: Vec<u32> = c.bases.iter().map(|&b| bcd[b]).collect();
        let bca = put(env, &arr);
        let chd = put(env, &[0, 0, c.bases.len() as u32, bca]);
        let col = put(env, &[0, 0, 0, td[i], chd]);
        let vdtor = thunk(env, c.vdtor);
        let slots: Vec<u32> = if i == TYPE_INFO {
            vec![col, vdtor]
        } else {
            let what = thunk(env, "?what@exception@@UBEPBDXZ");
            vec![col, vdtor, what]
        };
        vt[i] = put(env, &slots) + 4;
        env.data.insert(vtable_key(i), vt[i]);
        env.data.insert(key("td", i), td[i]);
    }
    for &t in &td {
        env.mem.poke_u32(t, vt[TYPE_INFO]);
    }
    // ThrowInfo per exception class: CatchableTypes {properties, type,
    // displacement, size, copy constructor}, their array, {attributes,
    // destructor, forward compat, array}.
    for (i, c) in CLASSES.iter().enumerate().take(TYPE_INFO) {
        let mut cts = vec![c.bases.len() as u32];
        for &b in c.bases {
            let copy = thunk(env, CLASSES[b].copy);
            cts.push(put(env, &[0, td[b], 0, u32::MAX, 0, EXC_SIZE, copy]));
        }
        let cta = put(env, &cts);
        let dtor = thunk(env, c.dtor);
        let ti = put(env, &[0, dtor, 0, cta]);
        env.data.insert(key("throw", i), ti);
    }
}

fn vtable(env: &mut Env, class: usize) -> u32 {
    build(env);
    env.data[&vtable_key(class)]
}

/// A `??_7class@@6B@` data export's fill (msvcrt's table declares the
/// variables, since data exports are not shared through `@also`): the
/// variable is the vtable in the RTTI block (the allocation made for it
/// stays unused).
pub fn fill_vtable(env: &mut Env, a: u32) {
    build(env);
    let _ = a;
}

fn this(env: &mut Env) -> u32 {
    env.cpu().regs[reg::ECX]
}

fn strdup(env: &mut Env, s: u32) -> u32 {
    let b = env.mem.peek_cstr(s, 1 << 16).unwrap_or_default();
    let p = super::malloc(env, b.len() as u32 + 1);
    if p != 0 {
        let mut z = b;
        z.push(0);
        env.mem.poke(p, &z);
    }
    p
}

/// exception(const char *const &) and the `const char *` forms: the name
/// is copied and owned.
fn ctor(env: &mut Env, t: u32, name: u32, class: usize) -> u32 {
    let vt = vtable(env, class);
    let copy = if name == 0 { 0 } else { strdup(env, name) };
    env.mem.poke_u32(t, vt);
    env.mem.poke_u32(t + 4, copy);
    env.mem.poke_u32(t + 8, (copy != 0) as u32);
    t
}

/// The copy constructor: an owned name is copied, a borrowed one shared.
fn copy_ctor(env: &mut Env, t: u32, rhs: u32, class: usize) -> u32 {
    let vt = vtable(env, class);
    let name = env.mem.peek_u32(rhs + 4).unwrap_or(0);
    let owned = env.mem.peek_u32(rhs + 8).unwrap_or(0) != 0;
    let (n, f) = if owned && name != 0 {
        (strdup(env, name), 1)
    } else {
        (name, 0)
    };
    env.mem.poke_u32(t, vt);
    env.mem.poke_u32(t + 4, n);
    env.mem.poke_u32(t + 8, f);
    t
}

fn dtor(env: &mut Env, t: u32) {
    let vt = vtable(env, EXCEPTION);
    env.mem.poke_u32(t, vt);
    if env.mem.peek_u32(t + 8).unwrap_or(0) != 0 {
        let name = env.mem.peek_u32(t + 4).unwrap_or(0);
        super::free(env, name);
    }
}

/// operator=: the exception copy of `rhs` (the vtable becomes
/// exception's, as in msvcrt).
fn assign(env: &mut Env, t: u32, rhs: u32) -> u32 {
    if t != rhs {
        dtor(env, t);
        copy_ctor(env, t, rhs, EXCEPTION);
    }
    t
}

/// The vector deleting destructor: flags bit 1 = an array whose count is
/// the dword before it, bit 0 = free the memory.
fn vector_dtor(env: &mut Env, t: u32, flags: u32) -> u32 {
    if flags & 2 != 0 {
        let n = env.mem.peek_u32(t.wrapping_sub(4)).unwrap_or(0);
        for i in 0..n {
            dtor(env, t + i * EXC_SIZE);
        }
        if flags & 1 != 0 {
            super::free(env, t - 4);
        }
    } else {
        dtor(env, t);
        if flags & 1 != 0 {
            super::free(env, t);
        }
    }
    t
}

fn scalar_dtor(env: &mut Env, t: u32, flags: u32) -> u32 {
    dtor(env, t);
    if flags & 1 != 0 {
        super::free(env, t);
    }
    t
}

/// Throws a new runtime exception of `class` with message `msg` from a
/// cdecl call of `args` dwords.
fn throw(env: &mut Env, class: usize, msg: &[u8]) -> Ret {
    let obj = super::malloc(env, EXC_SIZE);
    let text = env.alloc_cstr(msg);
    ctor(env, obj, text, class);
    build(env);
    let info = env.data[&key("throw", class)];
    super::cxx::raise(env, obj, info, 0)
}

/// The complete object locator of a polymorphic object (vtable[-1]).
fn locator(env: &Env, obj: u32) -> Option<u32> {
    let vt = env.mem.peek_u32(obj)?;
    env.mem.peek_u32(vt.wrapping_sub(4))
}

/// `__RTtypeid`: the object's TypeDescriptor; NULL throws bad_typeid, an
/// object without a readable locator __non_rtti_object.
fn rt_typeid(env: &mut Env, obj: u32) -> Ret {
    if obj == 0 {
        return throw(env, BAD_TYPEID, b"Attempted a typeid of NULL pointer!");
    }
    match locator(env, obj).and_then(|l| env.mem.peek_u32(l + 12)) {
        Some(td) => Ret::Value(td),
        None => throw(env, NON_RTTI, b"Bad read pointer - no RTTI data!"),
    }
}

fn rt_cast_to_void(env: &mut Env, obj: u32) -> Ret {
    if obj == 0 {
        return Ret::Value(0);
    }
    match locator(env, obj).and_then(|l| env.mem.peek_u32(l + 4)) {
        Some(off) => Ret::Value(obj.wrapping_sub(off)),
        None => throw(env, NON_RTTI, b"Bad read pointer - no RTTI data!"),
    }
}

/// `this` adjusted by a PMD {mdisp, pdisp, vdisp}: through the virtual
/// base table when pdisp >= 0.
fn adjust(env: &Env, obj: u32, pmd: u32) -> u32 {
    let g = |o: u32| env.mem.peek_u32(pmd + o).unwrap_or(0);
    let (mdisp, pdisp, vdisp) = (g(0), g(4) as i32, g(8));
    let mut o = obj;
    if pdisp >= 0 {
        o = o.wrapping_add(pdisp as u32);
        let vbt = env.mem.peek_u32(o).unwrap_or(0);
        o = o.wrapping_add(env.mem.peek_u32(vbt.wrapping_add(vdisp)).unwrap_or(0));
    }
    o.wrapping_add(mdisp)
}

/// `__RTDynamicCast(obj, vfdelta, src, dst, is_reference)`: the first
/// base class of the object's hierarchy whose decorated name is `dst`'s,
/// with `this` adjusted; none gives NULL, or bad_cast for a reference.
fn rt_dynamic_cast(env: &mut Env, obj: u32, dst: u32, is_ref: u32) -> Ret {
    if obj == 0 {
        return Ret::Value(0);
    }
    let Some(col) = locator(env, obj) else {
        return throw(env, NON_RTTI, b"Access violation - no RTTI data!");
    };
    let want = env.mem.peek_cstr(dst + 8, 4096).unwrap_or_default();
    let g = |a: u32| env.mem.peek_u32(a).unwrap_or(0);
    let (offset, chd) = (g(col + 4), g(col + 16));
    let (n, bca) = (g(chd + 8), g(chd + 12));
    let top = obj.wrapping_sub(offset);
    for i in 0..n.min(4096) {
        let bcd = g(bca + 4 * i);
        let td = g(bcd);
        if env.mem.peek_cstr(td + 8, 4096).unwrap_or_default() == want {
            return Ret::Value(adjust(env, top, bcd + 8));
        }
    }
    if is_ref != 0 {
        return throw(env, BAD_CAST, b"Bad dynamic_cast!");
    }
    Ret::Value(0)
}

/// type_info's destructor: frees the demangled name `name()` cached.
fn type_info_free(env: &mut Env, t: u32) {
    let n = env.mem.peek_u32(t + 4).unwrap_or(0);
    if n != 0 {
        super::free(env, n);
        env.mem.poke_u32(t + 4, 0);
    }
}

/// The decorated name after its leading '.'.
fn raw(env: &Env, ti: u32) -> Vec<u8> {
    env.mem.peek_cstr(ti + 9, 4096).unwrap_or_default()
}

/// `type_info::name`: the demangled type name, cached (malloc'd) in the
/// object on first use.
fn type_name(env: &mut Env, t: u32) -> u32 {
    let cached = env.mem.peek_u32(t + 4).unwrap_or(0);
    if cached != 0 {
        return cached;
    }
    let m = raw(env, t);
    let text = super::undname::demangle_type(&String::from_utf8_lossy(&m))
        .unwrap_or_else(|| String::from_utf8_lossy(&m).into_owned());
    let mut b = text.trim_end().as_bytes().to_vec();
    b.push(0);
    let p = super::malloc(env, b.len() as u32);
    env.mem.poke(p, &b);
    env.mem.poke_u32(t + 4, p);
    p
}

crate::dll! { "(msvcrt C++ classes)";
    stdcall fn exception_ctor as "??0exception@@QAE@ABQBD@Z" (env, name: u32) -> u32 { let t = this(env); let n = env.mem.peek_u32(name).unwrap_or(0); ctor(env, t, n, EXCEPTION) }
    stdcall fn exception_copy as "??0exception@@QAE@ABV0@@Z" (env, rhs: u32) -> u32 { let t = this(env); copy_ctor(env, t, rhs, EXCEPTION) }
    stdcall fn exception_default as "??0exception@@QAE@XZ" (env) -> u32 { let t = this(env); ctor(env, t, 0, EXCEPTION) }
    stdcall fn exception_dtor as "??1exception@@UAE@XZ" (env) { let t = this(env); dtor(env, t) }
    stdcall fn exception_assign as "??4exception@@QAEAAV0@ABV0@@Z" (env, rhs: u32) -> u32 { let t = this(env); assign(env, t, rhs) }
    stdcall fn exception_what as "?what@exception@@UBEPBDXZ" (env) -> u32 {
        let t = this(env);
        match env.mem.peek_u32(t + 4).unwrap_or(0) {
            0 => {
                if let Some(&p) = env.data.get("crt!(unknown exception)") { return p; }
                let p = env.alloc_cstr(b"Unknown exception");
                env.data.insert("crt!(unknown exception)".into(), p);
                p
            }
            n => n,
        }
    }
    stdcall fn exception_vdtor as "??_Eexception@@UAEPAXI@Z" (env, flags: u32) -> u32 { let t = this(env); vector_dtor(env, t, flags) }
    stdcall fn exception_sdtor as "??_Gexception@@UAEPAXI@Z" (env, flags: u32) -> u32 { let t = this(env); scalar_dtor(env, t, flags) }
    stdcall fn bad_typeid_ctor as "??0bad_typeid@@QAE@PBD@Z" (env, name: u32) -> u32 { let t = this(env); ctor(env, t, name, BAD_TYPEID) }
    stdcall fn bad_typeid_default as "??_Fbad_typeid@@QAEXXZ" (env) -> u32 { let t = this(env); let n = env.alloc_cstr(b"bad typeid"); ctor(env, t, n, BAD_TYPEID) }
    stdcall fn bad_typeid_copy as "??0bad_typeid@@QAE@ABV0@@Z" (env, rhs: u32) -> u32 { let t = this(env); copy_ctor(env, t, rhs, BAD_TYPEID) }
    stdcall fn bad_typeid_dtor as "??1bad_typeid@@UAE@XZ" (env) { let t = this(env); dtor(env, t) }
    stdcall fn bad_typeid_assign as "??4bad_typeid@@QAEAAV0@ABV0@@Z" (env, rhs: u32) -> u32 { let t = this(env); assign(env, t, rhs) }
    stdcall fn bad_typeid_vdtor as "??_Ebad_typeid@@UAEPAXI@Z" (env, flags: u32) -> u32 { let t = this(env); vector_dtor(env, t, flags) }
    stdcall fn bad_typeid_sdtor as "??_Gbad_typeid@@UAEPAXI@Z" (env, flags: u32) -> u32 { let t = this(env); scalar_dtor(env, t, flags) }
    stdcall fn bad_cast_ctor_ptr as "??0bad_cast@@AAE@PBQBD@Z" (env, name: u32) -> u32 { let t = this(env); let n = env.mem.peek_u32(name).unwrap_or(0); ctor(env, t, n, BAD_CAST) }
    stdcall fn bad_cast_ctor_ref as "??0bad_cast@@QAE@ABQBD@Z" (env, name: u32) -> u32 { let t = this(env); let n = env.mem.peek_u32(name).unwrap_or(0); ctor(env, t, n, BAD_CAST) }
    stdcall fn bad_cast_ctor as "??0bad_cast@@QAE@PBD@Z" (env, name: u32) -> u32 { let t = this(env); ctor(env, t, name, BAD_CAST) }
    stdcall fn bad_cast_default as "??_Fbad_cast@@QAEXXZ" (env) -> u32 { let t = this(env); let n = env.alloc_cstr(b"bad cast"); ctor(env, t, n, BAD_CAST) }
    stdcall fn bad_cast_copy as "??0bad_cast@@QAE@ABV0@@Z" (env, rhs: u32) -> u32 { let t = this(env); copy_ctor(env, t, rhs, BAD_CAST) }
    stdcall fn bad_cast_dtor as "??1bad_cast@@UAE@XZ" (env) { let t = this(env); dtor(env, t) }
    stdcall fn bad_cast_assign as "??4bad_cast@@QAEAAV0@ABV0@@Z" (env, rhs: u32) -> u32 { let t = this(env); assign(env, t, rhs) }
    stdcall fn bad_cast_vdtor as "??_Ebad_cast@@UAEPAXI@Z" (env, flags: u32) -> u32 { let t = this(env); vector_dtor(env, t, flags) }
    stdcall fn bad_cast_sdtor as "??_Gbad_cast@@UAEPAXI@Z" (env, flags: u32) -> u32 { let t = this(env); scalar_dtor(env, t, flags) }
    stdcall fn non_rtti_ctor as "??0__non_rtti_object@@QAE@PBD@Z" (env, name: u32) -> u32 { let t = this(env); ctor(env, t, name, NON_RTTI) }
    stdcall fn non_rtti_copy as "??0__non_rtti_object@@QAE@ABV0@@Z" (env, rhs: u32) -> u32 { let t = this(env); copy_ctor(env, t, rhs, NON_RTTI) }
    stdcall fn non_rtti_dtor as "??1__non_rtti_object@@UAE@XZ" (env) { let t = this(env); dtor(env, t) }
    stdcall fn non_rtti_assign as "??4__non_rtti_object@@QAEAAV0@ABV0@@Z" (env, rhs: u32) -> u32 { let t = this(env); assign(env, t, rhs) }
    stdcall fn non_rtti_vdtor as "??_E__non_rtti_object@@UAEPAXI@Z" (env, flags: u32) -> u32 { let t = this(env); vector_dtor(env, t, flags) }
    stdcall fn non_rtti_sdtor as "??_G__non_rtti_object@@UAEPAXI@Z" (env, flags: u32) -> u32 { let t = this(env); scalar_dtor(env, t, flags) }
    stdcall fn type_info_dtor as "??1type_info@@UAE@XZ" (env) { let t = this(env); type_info_free(env, t) }
    stdcall fn type_info_sdtor as "??_Gtype_info@@UAEPAXI@Z" (env, flags: u32) -> u32 {
        let t = this(env);
        type_info_free(env, t);
        if flags & 1 != 0 { super::free(env, t); }
        t
    }
    stdcall fn type_info_raw_name as "?raw_name@type_info@@QBEPBDXZ" (env) -> u32 { this(env) + 8 }
    stdcall fn type_info_name as "?name@type_info@@QBEPBDXZ" (env) -> u32 { let t = this(env); type_name(env, t) }
    // before/==/!= compare the decorated names after their first character.
    stdcall fn type_info_before as "?before@type_info@@QBEHABV1@@Z" (env, rhs: u32) -> i32 { let t = this(env); (raw(env, t) < raw(env, rhs)) as i32 }
    stdcall fn type_info_eq as "??8type_info@@QBEHABV0@@Z" (env, rhs: u32) -> i32 { let t = this(env); (raw(env, t) == raw(env, rhs)) as i32 }
    stdcall fn type_info_ne as "??9type_info@@QBEHABV0@@Z" (env, rhs: u32) -> i32 { let t = this(env); (raw(env, t) != raw(env, rhs)) as i32 }
    cdecl fn __RTtypeid(env, obj: u32) -> Ret { rt_typeid(env, obj) }
    cdecl fn __RTCastToVoid(env, obj: u32) -> Ret { rt_cast_to_void(env, obj) }
    cdecl fn __RTDynamicCast(env, obj: u32, vfdelta: u32, src: u32, dst: u32, is_ref: u32) -> Ret { rt_dynamic_cast(env, obj, dst, is_ref) }
    cdecl fn operator_new_array as "??_U@YAPAXI@Z" (env, n: u32) -> u32 { super::malloc(env, n) }
    cdecl fn operator_delete_array as "??_V@YAXPAX@Z" (env, p: u32) { super::free(env, p) }
}
