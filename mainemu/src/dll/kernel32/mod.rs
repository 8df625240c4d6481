//! KERNEL32.dll: the exports mainemu implements, each declared once.
//!
//! Owns the bodies of kernel32's calls over [`super::Env`]. It must not touch
//! host files or clocks directly (drives and the guest clock come through Env).

use super::Env;
use crate::memory::MemError;

pub mod actctx;
pub mod atom;
pub mod cmd;
pub mod codepage;
pub mod console;
pub mod console_buffer;
pub mod ctype;
pub mod file;
pub mod lzexpand;
pub mod mapping;
pub mod nls;
pub mod pipe;
pub mod profile;
pub mod resource;
pub mod sync;
pub mod system;
pub mod time;
pub mod volume;

const HEAP_ZERO_MEMORY: u32 = 8;

/// Per-process state of the smaller call families.
#[derive(Default)]
pub struct State {
    /// ActivateActCtx's stack of context handles (0: the process default).
    pub actctx_stack: Vec<u32>,
    /// HeapSetInformation(HeapCompatibilityInformation) per heap handle.
    pub heap_compat: std::collections::BTreeMap<u32, u32>,
    /// RtlSetUserValueHeap/RtlSetUserFlagsHeap per block address: (value, flags).
    pub heap_user: std::collections::BTreeMap<u32, (u32, u32)>,
    /// FindFirstVolume handles: the index of the next volume to report.
    pub volume_finds: std::collections::BTreeMap<u32, usize>,
    /// RegisterWaitForSingleObject's registrations by wait handle.
    pub waits: std::collections::BTreeMap<u32, sync::RegisteredWait>,
    /// Paging-file mappings' blocks of guest memory, by mapping object id.
    pub mapping_blocks: std::collections::BTreeMap<u32, u32>,
    /// Mapped views by base address.
    pub views: std::collections::BTreeMap<u32, mapping::View>,
    /// Open LZ handles (LZOpenFile of a compressed file).
    pub lz: std::collections::BTreeMap<u32, lzexpand::LzFile>,
}

/// TlsAlloc: the lowest free index (64 in the TEB, 1024 more in the expansion array).
fn tls_alloc(env: &mut Env) -> u32 {
    let i = match env.tls_used.iter().position(|u| !u) {
        Some(i) => i,
        None if env.tls_used.len() < 64 + 1024 => {
            env.tls_used.push(false);
            env.tls_used.len() - 1
        }
        None => return env.fail(8, 0xFFFF_FFFF), // TLS_OUT_OF_INDEXES
    };
    env.tls_used[i] = true;
    // A new index reads 0 in every thread.
    let tebs: Vec<u32> = env.threads.list.iter().map(|t| t.teb).collect();
    for teb in tebs {
        if let Some(a) = tls_slot_in(env, teb, i as u32) {
            env.mem.poke_u32(a, 0);
        }
    }
    i as u32
}

/// The address of TLS slot `i` of the TEB at `teb` (allocating the expansion array).
fn tls_slot_in(env: &mut Env, teb: u32, i: u32) -> Option<u32> {
    use crate::process::teb as t;
    if i < 64 {
        return Some(teb + t::TLS_SLOTS + 4 * i);
    }
    let mut exp = env.mem.peek_u32(teb + t::TLS_EXPANSION)?;
    if exp == 0 {
        exp = env.alloc(4 * 1024);
        env.mem.poke_u32(teb + t::TLS_EXPANSION, exp)?;
    }
    Some(exp + 4 * (i - 64))
}

/// The current thread's slot `i`, if the index is allocated.
fn tls_slot(env: &mut Env, i: u32) -> Option<u32> {
    if !env.tls_used.get(i as usize).copied().unwrap_or(false) {
        return None;
    }
    let teb = env.teb();
    tls_slot_in(env, teb, i)
}

/// HeapWalk/RtlWalkHeap: fills the PROCESS_HEAP_ENTRY at `entry` (lpData,
/// cbData, cbOverhead 0, iRegionIndex 0, wFlags PROCESS_HEAP_ENTRY_BUSY for a
/// live block, 16 zero bytes) with the block after its lpData (0: the
/// first); false at the end. Regions are not reported as entries. Err:
/// ERROR_INVALID_HANDLE or ERROR_NOACCESS.
pub fn heap_walk(env: &mut Env, h: u32, entry: u32) -> Result<bool, u32> {
    let after = env.mem.peek_u32(entry).ok_or(998u32)?;
    let next = env
        .with_heap(h, |heap, _| heap.next_block(after))
        .ok_or(6u32)?;
    let Some((addr, size, busy)) = next else {
        return Ok(false);
    };
    let mut b = vec![0u8; 28];
    b[0..4].copy_from_slice(&addr.to_le_bytes());
    b[4..8].copy_from_slice(&size.to_le_bytes());
    if busy {
        b[10] = 4; // PROCESS_HEAP_ENTRY_BUSY
    }
    env.mem.poke(entry, &b).ok_or(998u32)?;
    Ok(true)
}

fn mem_result(env: &mut Env, r: Result<u32, MemError>) -> u32 {
    match r {
        Ok(v) => v,
        Err(e) => {
            env.last_error = e.win32_code();
            0
        }
    }
}

crate::dll! { "kernel32.dll";
    @also file::DLL;
    @also console::DLL;
    @also console_buffer::DLL;
    @also mapping::DLL;
    @also time::DLL;
    @also sync::DLL;
    @also system::DLL;
    @also nls::DLL;
    @also ctype::DLL;
    @also atom::DLL;
    @also actctx::DLL;
    @also volume::DLL;
    @also profile::DLL;
    @also lzexpand::DLL;
    @also pipe::DLL;
    @also resource::DLL;
    stdcall fn GetLastError(env) -> u32 { env.last_error }
    stdcall fn GetCommandLineA(env) -> u32 { env.cmdline_a }
    stdcall fn GetCommandLineW(env) -> u32 { env.cmdline_w }
    stdcall fn SetLastError(env, code: u32) { env.last_error = code; }
    stdcall fn VirtualAlloc(env, addr: u32, size: u32, kind: u32, protect: u32) -> u32 {
        let r = env.mem.virtual_alloc(addr, size, kind, protect);
        mem_result(env, r)
    }
    stdcall fn VirtualFree(env, addr: u32, size: u32, kind: u32) -> bool {
        let r = env.mem.virtual_free(addr, size, kind).map(|_| 1);
        mem_result(env, r) != 0
    }
    stdcall fn VirtualProtect(env, addr: u32, size: u32, protect: u32, old: u32) -> bool {
        let r = env.mem.protect(addr, size, protect);
        match r {
            Ok(o) => { env.mem.poke_u32(old, o); true }
            Err(e) => { env.last_error = e.win32_code(); false }
        }
    }
    stdcall fn VirtualQuery(env, addr: u32, out: u32, len: u32) -> u32 {
        if len < 28 { env.last_error = 24; return 0; } // ERROR_BAD_LENGTH
        let q = env.mem.query(addr);
        let words = [q.base_address, q.allocation_base, q.allocation_protect, q.region_size, q.state, q.protect, q.kind];
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        if env.mem.poke(out, &bytes).is_none() { env.last_error = 998; return 0; }
        28
    }
    stdcall fn TlsAlloc(env) -> u32 { tls_alloc(env) }
    stdcall fn TlsFree(env, i: u32) -> bool {
        match env.tls_used.get_mut(i as usize) { Some(s @ true) => { *s = false; true } _ => env.fail(87, false) }
    }
    stdcall fn TlsGetValue(env, i: u32) -> u32 {
        match tls_slot(env, i) { Some(a) => { env.last_error = 0; env.mem.peek_u32(a).unwrap_or(0) } None => env.fail(87, 0) }
    }
    stdcall fn TlsSetValue(env, i: u32, v: u32) -> bool {
        match tls_slot(env, i) { Some(a) => env.mem.poke_u32(a, v).is_some(), None => env.fail(87, false) }
    }
    stdcall fn GetProcessHeap(env) -> u32 { env.process_heap }
    stdcall fn GetProcessHeaps(env, n: u32, out: u32) -> u32 {
        let hs: Vec<u32> = env.heaps.keys().copied().collect();
        if n as usize >= hs.len() {
            let b: Vec<u8> = hs.iter().flat_map(|h| h.to_le_bytes()).collect();
            env.mem.poke(out, &b);
        }
        hs.len() as u32
    }
    // Code pages are single-byte here (1252/ANSI): no lead bytes.
    stdcall fn IsDBCSLeadByteEx(env, cp: u32, b: u32) -> bool { false }
    stdcall fn IsDBCSLeadByte(env, b: u32) -> bool { false }
    stdcall fn MultiByteToWideChar(env, cp: u32, flags: u32, src: u32, n: i32, dst: u32, cap: i32) -> i32 {
        codepage::mb_to_wide(env, cp, flags, src, n, dst, cap)
    }
    stdcall fn WideCharToMultiByte(env, cp: u32, flags: u32, src: u32, n: i32, dst: u32, cap: i32, def: u32, used: u32) -> i32 {
        codepage::wide_to_mb(env, cp, flags, src, n, dst, cap, def, used)
    }
    stdcall fn HeapCreate(env, options: u32, initial: u32, maximum: u32) -> u32 { env.new_heap() }
    stdcall fn HeapDestroy(env, h: u32) -> bool {
        match env.heaps.remove(&h) { Some(heap) => { heap.destroy(&mut env.mem); true } None => { env.last_error = 6; false } }
    }
    stdcall fn HeapAlloc(env, h: u32, flags: u32, n: u32) -> u32 {
        env.with_heap(h, |heap, m| heap.alloc(m, n, flags & HEAP_ZERO_MEMORY != 0)).flatten().unwrap_or(0)
    }
    stdcall fn HeapFree(env, h: u32, flags: u32, p: u32) -> bool {
        if p == 0 { return true; }
        env.k32.heap_user.remove(&p);
        env.with_heap(h, |heap, _| heap.free(p)).unwrap_or(false)
    }
    stdcall fn HeapReAlloc(env, h: u32, flags: u32, p: u32, n: u32) -> u32 {
        env.with_heap(h, |heap, m| heap.realloc(m, p, n, flags & HEAP_ZERO_MEMORY != 0)).flatten().unwrap_or(0)
    }
    stdcall fn HeapWalk(env, h: u32, entry: u32) -> bool {
        match heap_walk(env, h, entry) {
            Ok(true) => true,
            Ok(false) => env.fail(259, false), // ERROR_NO_MORE_ITEMS
            Err(e) => env.fail(e, false),
        }
    }
    stdcall fn HeapValidate(env, h: u32, flags: u32, p: u32) -> bool {
        env.with_heap(h, |heap, _| p == 0 || heap.size(p).is_some()).unwrap_or(false)
    }
    // Free blocks coalesce as they are freed: nothing to compact; the answer is the region size.
    stdcall fn HeapCompact(env, h: u32, flags: u32) -> u32 {
        env.with_heap(h, |_, _| 0x10_0000).unwrap_or(0)
    }
    // One thread runs at a time between calls: a heap lock is always free.
    stdcall fn HeapLock(env, h: u32) -> bool { env.with_heap(h, |_, _| true).unwrap_or(false) }
    stdcall fn HeapUnlock(env, h: u32) -> bool { env.with_heap(h, |_, _| true).unwrap_or(false) }
    // HeapCompatibilityInformation (class 0) is kept as set (0 standard, 2
    // low-fragmentation); HeapEnableTerminationOnCorruption (1) is accepted.
    stdcall fn HeapSetInformation(env, h: u32, class: u32, info: u32, len: u32) -> bool {
        match class {
            0 => {
                if len < 4 { return env.fail(24, false); } // ERROR_BAD_LENGTH
                let Some(v) = env.mem.peek_u32(info) else { return env.fail(998, false) };
                if env.with_heap(h, |_, _| ()).is_none() { return false; }
                if v != 0 && v != 2 { return env.fail(31, false); } // ERROR_GEN_FAILURE
                env.k32.heap_compat.insert(h, v);
                true
            }
            1 => true,
            _ => env.fail(87, false),
        }
    }
    stdcall fn HeapQueryInformation(env, h: u32, class: u32, info: u32, len: u32, ret: u32) -> bool {
        if class != 0 { return env.fail(87, false); }
        if env.with_heap(h, |_, _| ()).is_none() { return false; }
        if ret != 0 { env.mem.poke_u32(ret, 4); }
        if len < 4 { return env.fail(24, false); }
        let v = env.k32.heap_compat.get(&h).copied().unwrap_or(0);
        env.mem.poke_u32(info, v).is_some() || env.fail(998, false)
    }
    // The modelled machine's RAM (GlobalMemoryStatusEx's 1 GiB), in KiB.
    stdcall fn GetPhysicallyInstalledSystemMemory(env, out: u32) -> bool {
        if out == 0 { return env.fail(87, false); }
        env.mem.poke(out, &(1u64 << 20).to_le_bytes()).is_some()
    }
    stdcall fn HeapSize(env, h: u32, flags: u32, p: u32) -> u32 {
        env.with_heap(h, |heap, _| heap.size(p)).flatten().unwrap_or(u32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dll::Ret;
    use crate::memory::{mem, prot, Memory};
    use crate::process::STD_OUTPUT as STDOUT;

    fn call(env: &mut Env, name: &str, args: &[u32]) -> Ret {
        let e = DLL
            .all_exports()
            .into_iter()
            .find(|e| e.name == name)
            .unwrap();
        (e.imp)(env, args)
    }

    #[test]
    fn declarations_make_the_table() {
        let e = file::DLL
            .exports
            .iter()
            .find(|e| e.name == "WriteFile")
            .unwrap();
        assert_eq!((e.args.len(), e.pop_bytes()), (5, 20));
        assert_eq!(e.args, &["h", "buf", "n", "put", "ov"]);
    }

    #[test]
    fn memory_and_console_calls() {
        let mut env = Env::new(Memory::new());
        env.handles.add_at(
            STDOUT,
            crate::handles::Object::Console(crate::handles::ConsoleKind::Output),
        );
        let a = call(
            &mut env,
            "VirtualAlloc",
            &[0, 0x2000, mem::RESERVE | mem::COMMIT, prot::READWRITE],
        );
        assert_eq!(a, Ret::Value(0x1_0000));
        env.mem.poke(0x1_0000, b"hi\n").unwrap();
        assert_eq!(
            call(&mut env, "WriteFile", &[STDOUT, 0x1_0000, 3, 0x1_0100, 0]),
            Ret::Value(1)
        );
        assert_eq!(env.mem.peek_u32(0x1_0100), Some(3));
        assert_eq!(env.stdout(), b"hi\n");
        assert_eq!(
            call(&mut env, "VirtualQuery", &[0x1_1000, 0x1_0200, 28]),
            Ret::Value(28)
        );
        let mut q = [0u8; 28];
        env.mem.peek(0x1_0200, &mut q).unwrap();
        let w: Vec<u32> = q
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(
            w,
            vec![
                0x1_1000,
                0x1_0000,
                prot::READWRITE,
                0x1000,
                mem::COMMIT,
                prot::READWRITE,
                mem::PRIVATE
            ]
        );
        assert_eq!(
            call(&mut env, "VirtualFree", &[0x1_0000, 5, mem::RELEASE]),
            Ret::Value(0)
        );
        assert_eq!(call(&mut env, "GetLastError", &[]), Ret::Value(87));
        env.clock = 250_000_000;
        assert_eq!(call(&mut env, "GetTickCount", &[]), Ret::Value(2500));
        assert_eq!(call(&mut env, "ExitProcess", &[5]), Ret::Exit(5));
    }
}
