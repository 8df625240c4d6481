//! ADVAPI32.dll's CryptoAPI hashing, as far as Wine's gdi32 tests use it
//! (dib.c hashes the pixels it drew and compares SHA-1 digests): a
//! provider context that exists only as a handle, and SHA-1 hash objects
//! (CALG_SHA1). Other algorithms fail with NTE_BAD_ALGID; keys, random
//! numbers and the other calls stay named stubs.
//!
//! A hash object's state (SHA-1 registers, pending block, length) lives in
//! guest memory on the process heap, at the address the handle is, so it
//! needs no host-side table. Exported through `advapi32::DLL`'s `@also`.
//!
//! The compression function is the `sha1` crate's (`compress` feature);
//! this module keeps only the state, padding and guest-memory layout the
//! hasher type does not expose.
//!
//! Owns these calls and the hash objects' layout; must not touch host state.

use super::Env;

/// The one provider context CryptAcquireContext hands out.
const PROV: u32 = 0x00C0_FFEE;
/// ALG_ID of SHA-1.
const CALG_SHA1: u32 = 0x8004;
/// CryptGetHashParam parameters.
const HP_ALGID: u32 = 1;
const HP_HASHVAL: u32 = 2;
const HP_HASHSIZE: u32 = 4;
const NTE_BAD_ALGID: u32 = 0x8009_0008;
const NTE_BAD_HASH: u32 = 0x8009_0002;
const NTE_BAD_UID: u32 = 0x8009_0001;
const NTE_BAD_TYPE: u32 = 0x8009_000A;
const ERROR_MORE_DATA: u32 = 234;
const ERROR_INVALID_PARAMETER: u32 = 87;

/// Layout of a hash object in guest memory: magic, algorithm, byte count
/// (u64), five registers, then the 64-byte pending block.
const MAGIC: u32 = 0x4853_4831; // "1HSH"
const SIZE: u32 = 4 + 4 + 8 + 20 + 64;

/// SHA-1's state: registers, bytes seen, the block being filled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sha1 {
    h: [u32; 5],
    len: u64,
    block: [u8; 64],
}

impl Default for Sha1 {
    fn default() -> Self {
        Sha1 {
            h: [
                0x6745_2301,
                0xEFCD_AB89,
                0x98BA_DCFE,
                0x1032_5476,
                0xC3D2_E1F0,
            ],
            len: 0,
            block: [0; 64],
        }
    }
}

impl Sha1 {
    /// One block through the `sha1` crate's compression function.
    fn compress(&mut self) {
        sha1::compress(&mut self.h, &[self.block.into()]);
    }

    pub fn update(&mut self, data: &[u8]) {
        for &byte in data {
            self.block[(self.len % 64) as usize] = byte;
            self.len += 1;
            if self.len.is_multiple_of(64) {
                self.compress();
            }
        }
    }

    /// The digest (the state itself is left as it was).
    pub fn digest(&self) -> [u8; 20] {
        let mut s = self.clone();
        let bits = s.len.wrapping_mul(8);
        s.update(&[0x80]);
        while s.len % 64 != 56 {
            s.update(&[0]);
        }
        s.update(&bits.to_be_bytes());
        let mut out = [0u8; 20];
        for (o, h) in out.chunks_mut(4).zip(s.h) {
            o.copy_from_slice(&h.to_be_bytes());
        }
        out
    }

    fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(SIZE as usize);
        v.extend(MAGIC.to_le_bytes());
        v.extend(CALG_SHA1.to_le_bytes());
        v.extend(self.len.to_le_bytes());
        for h in self.h {
            v.extend(h.to_le_bytes());
        }
        v.extend(self.block);
        v
    }

    fn from_bytes(b: &[u8]) -> Option<Sha1> {
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        if b.len() != SIZE as usize || u32_at(0) != MAGIC {
            return None;
        }
        let mut h = [0u32; 5];
        for (i, x) in h.iter_mut().enumerate() {
            *x = u32_at(16 + 4 * i);
        }
        Some(Sha1 {
            h,
            len: u64::from_le_bytes(b[8..16].try_into().unwrap()),
            block: b[36..100].try_into().unwrap(),
        })
    }
}

fn load(env: &Env, h: u32) -> Option<Sha1> {
    let mut b = vec![0u8; SIZE as usize];
    env.mem.peek(h, &mut b)?;
    Sha1::from_bytes(&b)
}

fn acquire(env: &mut Env, out: u32) -> bool {
    if out == 0 {
        return env.fail(ERROR_INVALID_PARAMETER, false);
    }
    env.mem.poke_u32(out, PROV);
    true
}

fn get_param(env: &mut Env, h: u32, param: u32, data: u32, len: u32) -> bool {
    let Some(s) = load(env, h) else {
        return env.fail(NTE_BAD_HASH, false);
    };
    let v: Vec<u8> = match param {
        HP_ALGID => CALG_SHA1.to_le_bytes().to_vec(),
        HP_HASHSIZE => 20u32.to_le_bytes().to_vec(),
        HP_HASHVAL => s.digest().to_vec(),
        _ => return env.fail(NTE_BAD_TYPE, false),
    };
    let Some(cap) = env.mem.peek_u32(len) else {
        return env.fail(ERROR_INVALID_PARAMETER, false);
    };
    env.mem.poke_u32(len, v.len() as u32);
    if data == 0 {
        return true;
    }
    if (cap as usize) < v.len() {
        return env.fail(ERROR_MORE_DATA, false);
    }
    env.mem.poke(data, &v).is_some() || env.fail(ERROR_INVALID_PARAMETER, false)
}

crate::dll! { "advapi32.dll";
    stdcall fn CryptAcquireContextW(env, out: u32, container: u32, provider: u32, kind: u32, flags: u32) -> bool { acquire(env, out) }
    stdcall fn CryptAcquireContextA(env, out: u32, container: u32, provider: u32, kind: u32, flags: u32) -> bool { acquire(env, out) }
    stdcall fn CryptReleaseContext(env, prov: u32, flags: u32) -> bool {
        prov == PROV || env.fail(NTE_BAD_UID, false)
    }
    stdcall fn CryptCreateHash(env, prov: u32, alg: u32, key: u32, flags: u32, out: u32) -> bool {
        if prov != PROV { return env.fail(NTE_BAD_UID, false); }
        if alg != CALG_SHA1 || key != 0 { return env.fail(NTE_BAD_ALGID, false); }
        let a = env.alloc(SIZE);
        if a == 0 { return env.fail(8, false); }
        env.mem.poke(a, &Sha1::default().to_bytes());
        env.mem.poke_u32(out, a);
        true
    }
    stdcall fn CryptHashData(env, h: u32, data: u32, len: u32, flags: u32) -> bool {
        let Some(mut s) = load(env, h) else { return env.fail(NTE_BAD_HASH, false) };
        let mut buf = vec![0u8; len as usize];
        if env.mem.peek(data, &mut buf).is_none() { return env.fail(ERROR_INVALID_PARAMETER, false); }
        s.update(&buf);
        env.mem.poke(h, &s.to_bytes());
        true
    }
    stdcall fn CryptGetHashParam(env, h: u32, param: u32, data: u32, len: u32, flags: u32) -> bool {
        get_param(env, h, param, data, len)
    }
    stdcall fn CryptDestroyHash(env, h: u32) -> bool {
        if load(env, h).is_none() { return env.fail(NTE_BAD_HASH, false); }
        env.mem.poke(h, &[0u8; 4]);
        let ph = env.process_heap;
        env.with_heap(ph, |heap, _| heap.free(h));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(d: [u8; 20]) -> String {
        d.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn sha1_known_digests_and_state_round_trip() {
        assert_eq!(
            hex(Sha1::default().digest()),
            "da39a3ee5e6b4b0d3255bfef95601890afd80709"
        );
        let mut s = Sha1::default();
        s.update(b"abc");
        assert_eq!(hex(s.digest()), "a9993e364706816aba3e25717850c26c9cd0d89d");
        // Two blocks, fed in uneven pieces, through the guest-memory form.
        let msg = b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
        let mut s = Sha1::default();
        for part in msg.chunks(7) {
            s = Sha1::from_bytes(&s.to_bytes()).unwrap();
            s.update(part);
        }
        assert_eq!(hex(s.digest()), "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
        let mut s = Sha1::default();
        s.update(&vec![b'a'; 1_000_000]);
        assert_eq!(hex(s.digest()), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
    }
}
