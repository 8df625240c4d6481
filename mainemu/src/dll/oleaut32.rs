//! OLEAUT32.dll: the BSTR and VARIANT helpers console programs import by
//! ordinal (7-Zip's PROPVARIANT code): SysAllocString(Len/ByteLen),
//! SysReAllocString(Len), SysFreeString, SysStringLen/ByteLen, VariantInit,
//! VariantClear, VariantCopy.
//!
//! A BSTR is a heap block on the process heap: a dword byte length, the
//! characters, a UTF-16 NUL; the BSTR points past the length. A VARIANT is 16
//! bytes with its type in the first word and the value at offset 8.
//!
//! Owns these layouts and their ownership rules (VariantClear frees a BSTR,
//! releases an interface through its vtable). It must not: implement
//! automation (IDispatch, type libraries, SAFEARRAY): those types answer
//! DISP_E_BADVARTYPE rather than being guessed at.

use super::{Env, Ret};

/// VARTYPE values whose ownership VariantClear/VariantCopy handle.
const VT_EMPTY: u16 = 0;
const VT_BSTR: u16 = 8;
const VT_DISPATCH: u16 = 9;
const VT_UNKNOWN: u16 = 13;
const VT_ARRAY: u16 = 0x2000;
const VT_BYREF: u16 = 0x4000;

const S_OK: u32 = 0;
const E_INVALIDARG: u32 = 0x8007_0057;
const E_OUTOFMEMORY: u32 = 0x8007_000E;
const DISP_E_BADVARTYPE: u32 = 0x8002_0008;

/// Allocates a BSTR of `bytes` bytes, copying them from `src` when non-zero
/// (the rest zeroed); 0 when out of memory.
fn alloc_bstr(env: &mut Env, src: u32, bytes: u32) -> u32 {
    let Some(total) = bytes.checked_add(4 + 2) else {
        return 0;
    };
    let block = env.alloc(total);
    if block == 0 {
        return 0;
    }
    env.mem.poke_u32(block, bytes);
    if src != 0 && bytes != 0 {
        match env.read_bytes(src, bytes) {
            Some(b) => {
                env.mem.poke(block + 4, &b);
            }
            None => {
                free_bstr(env, block + 4);
                return 0;
            }
        }
    }
    env.mem.poke(block + 4 + bytes, &[0, 0]);
    block + 4
}

/// Frees a BSTR (0 is allowed and ignored).
fn free_bstr(env: &mut Env, bstr: u32) {
    if bstr != 0 {
        let h = env.process_heap;
        env.with_heap(h, |heap, _| heap.free(bstr - 4));
    }
}

/// The byte length stored before a BSTR (0 for a null BSTR).
fn byte_len(env: &Env, bstr: u32) -> u32 {
    if bstr == 0 {
        0
    } else {
        env.mem.peek_u32(bstr - 4).unwrap_or(0)
    }
}

/// Length in UTF-16 units of a NUL-terminated string (0 for NULL).
fn wcs_len(env: &Env, s: u32) -> u32 {
    env.mem.peek_wstr(s, 1 << 28).map_or(0, |w| w.len() as u32)
}

/// Replaces `*pbstr` with a new BSTR of `bytes` bytes from `src`.
fn realloc_bstr(env: &mut Env, pbstr: u32, src: u32, bytes: u32) -> bool {
    let new = alloc_bstr(env, src, bytes);
    if new == 0 {
        return false;
    }
    let old = env.mem.peek_u32(pbstr).unwrap_or(0);
    free_bstr(env, old);
    env.mem.poke_u32(pbstr, new).is_some()
}

/// The interface method `slot` of the object `punk` (0 when unreadable).
fn method(env: &Env, punk: u32, slot: u32) -> u32 {
    env.mem
        .peek_u32(punk)
        .and_then(|vt| env.mem.peek_u32(vt + 4 * slot))
        .unwrap_or(0)
}

/// Clears a VARIANT (frees what it owns, sets VT_EMPTY), then continues
/// with `then`. Releasing an interface is a guest call to its Release.
fn clear(env: &mut Env, v: u32, then: impl FnOnce(&mut Env) -> Ret + 'static) -> Ret {
    let Some(vt) = env
        .read_bytes(v, 2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
    else {
        return Ret::Value(E_INVALIDARG);
    };
    let val = env.mem.peek_u32(v + 8).unwrap_or(0);
    if vt & VT_BYREF == 0 && vt & VT_ARRAY != 0 {
        return Ret::Value(DISP_E_BADVARTYPE);
    }
    env.mem.poke(v, &VT_EMPTY.to_le_bytes());
    match vt {
        VT_BSTR => {
            free_bstr(env, val);
            then(env)
        }
        VT_UNKNOWN | VT_DISPATCH if val != 0 => {
            let release = method(env, val, 2);
            Ret::call(release, vec![val], move |env, _| then(env))
        }
        _ => then(env),
    }
}

/// VariantCopy: clears `dst`, then copies `src`, duplicating a BSTR and
/// AddRef-ing an interface.
fn copy(env: &mut Env, dst: u32, src: u32) -> Ret {
    let Some(bytes) = env.read_bytes(src, 16) else {
        return Ret::Value(E_INVALIDARG);
    };
    let vt = u16::from_le_bytes([bytes[0], bytes[1]]);
    if vt & VT_BYREF == 0 && vt & VT_ARRAY != 0 {
        return Ret::Value(DISP_E_BADVARTYPE);
    }
    if dst == src {
        return Ret::Value(S_OK);
    }
    clear(env, dst, move |env| {
        env.mem.poke(dst, &bytes);
        let val = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
        match vt {
            VT_BSTR if val != 0 => {
                let n = byte_len(env, val);
                let dup = alloc_bstr(env, val, n);
                if dup == 0 {
                    env.mem.poke(dst, &VT_EMPTY.to_le_bytes());
                    return Ret::Value(E_OUTOFMEMORY);
                }
                env.mem.poke_u32(dst + 8, dup);
                Ret::Value(S_OK)
            }
            VT_UNKNOWN | VT_DISPATCH if val != 0 => {
                let add_ref = method(env, val, 1);
                Ret::call(add_ref, vec![val], |_, _| Ret::Value(S_OK))
            }
            _ => Ret::Value(S_OK),
        }
    })
}

crate::dll! { "oleaut32.dll";
    stdcall fn SysAllocString @2 (env, s: u32) -> u32 {
        if s == 0 { return 0; }
        let n = wcs_len(env, s);
        alloc_bstr(env, s, 2 * n)
    }
    stdcall fn SysReAllocString @3 (env, pbstr: u32, s: u32) -> bool {
        let n = wcs_len(env, s);
        realloc_bstr(env, pbstr, s, 2 * n)
    }
    stdcall fn SysAllocStringLen @4 (env, s: u32, len: u32) -> u32 {
        match len.checked_mul(2) { Some(b) => alloc_bstr(env, s, b), None => 0 }
    }
    stdcall fn SysReAllocStringLen @5 (env, pbstr: u32, s: u32, len: u32) -> bool {
        match len.checked_mul(2) { Some(b) => realloc_bstr(env, pbstr, s, b), None => false }
    }
    stdcall fn SysFreeString @6 (env, bstr: u32) { free_bstr(env, bstr) }
    stdcall fn SysStringLen @7 (env, bstr: u32) -> u32 { byte_len(env, bstr) / 2 }
    stdcall fn VariantInit @8 (env, v: u32) { env.mem.poke(v, &VT_EMPTY.to_le_bytes()); }
    stdcall fn VariantClear @9 (env, v: u32) -> Ret { clear(env, v, |_| Ret::Value(S_OK)) }
    stdcall fn VariantCopy @10 (env, dst: u32, src: u32) -> Ret { copy(env, dst, src) }
    stdcall fn SysStringByteLen @149 (env, bstr: u32) -> u32 { byte_len(env, bstr) }
    stdcall fn SysAllocStringByteLen @150 (env, s: u32, len: u32) -> u32 { alloc_bstr(env, s, len) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Env {
        let mut e = Env::new(crate::memory::Memory::new());
        e.process_heap = e.new_heap();
        e
    }

    fn call(env: &mut Env, name: &str, args: &[u32]) -> Ret {
        DLL.call(name, env, args)
    }

    #[test]
    fn bstr_layout_and_lengths() {
        let mut e = env();
        let src = e.alloc_wstr(&"héllo".encode_utf16().collect::<Vec<_>>());
        let Ret::Value(b) = call(&mut e, "SysAllocString", &[src]) else {
            panic!()
        };
        assert_ne!(b, 0);
        assert_eq!(e.mem.peek_u32(b - 4), Some(10));
        assert_eq!(e.read_w(b).as_deref(), Some("héllo"));
        assert_eq!(call(&mut e, "SysStringLen", &[b]), Ret::Value(5));
        assert_eq!(call(&mut e, "SysStringByteLen", &[b]), Ret::Value(10));
        // Len with a null source: zeroed characters, still NUL-terminated.
        let Ret::Value(z) = call(&mut e, "SysAllocStringLen", &[0, 3]) else {
            panic!()
        };
        assert_eq!(
            e.read_bytes(z - 4, 12),
            Some(vec![6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        );
        assert_eq!(call(&mut e, "SysAllocString", &[0]), Ret::Value(0));
        assert_eq!(call(&mut e, "SysStringLen", &[0]), Ret::Value(0));
        // Byte length: odd counts are kept exactly.
        let Ret::Value(o) = call(&mut e, "SysAllocStringByteLen", &[src, 3]) else {
            panic!()
        };
        assert_eq!(call(&mut e, "SysStringByteLen", &[o]), Ret::Value(3));
        assert_eq!(call(&mut e, "SysStringLen", &[o]), Ret::Value(1));
        let before = e.heaps[&e.process_heap].stats();
        call(&mut e, "SysFreeString", &[o]);
        assert_eq!(e.heaps[&e.process_heap].stats().0, before.0 - 1);
        call(&mut e, "SysFreeString", &[0]);
    }

    #[test]
    fn variant_copy_duplicates_a_bstr_and_clear_frees_it() {
        let mut e = env();
        let src = e.alloc_wstr(&"ab".encode_utf16().collect::<Vec<_>>());
        let Ret::Value(b) = call(&mut e, "SysAllocString", &[src]) else {
            panic!()
        };
        let v1 = e.alloc(16);
        let v2 = e.alloc(16);
        e.mem.poke(v1, &VT_BSTR.to_le_bytes());
        e.mem.poke_u32(v1 + 8, b);
        e.mem.poke(v2, &3u16.to_le_bytes()); // VT_I4: nothing owned
        assert_eq!(call(&mut e, "VariantCopy", &[v2, v1]), Ret::Value(0));
        let dup = e.mem.peek_u32(v2 + 8).unwrap();
        assert_ne!(dup, b);
        assert_eq!(e.read_w(dup).as_deref(), Some("ab"));
        let live = e.heaps[&e.process_heap].stats().0;
        assert_eq!(call(&mut e, "VariantClear", &[v2]), Ret::Value(0));
        assert_eq!(e.heaps[&e.process_heap].stats().0, live - 1);
        assert_eq!(e.read_bytes(v2, 2), Some(vec![0, 0]));
        // SAFEARRAYs are not modelled: a clear error code, nothing touched.
        e.mem.poke(v1, &(VT_ARRAY | 3).to_le_bytes());
        assert_eq!(
            call(&mut e, "VariantClear", &[v1]),
            Ret::Value(DISP_E_BADVARTYPE)
        );
    }
}
