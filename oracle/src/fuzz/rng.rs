//! The fuzzer's only source of randomness: SplitMix64, seeded from
//! `(seed, index)` or from one word of a program plan.
//!
//! Owns nothing else. It must never read host randomness or the clock
//! (invariant 7): program `i` of seed `S` is the same on every host.

/// SplitMix64: small, seedable, the same on every host.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `w` as is (one plan word drives one item).
    pub fn new(w: u64) -> Rng {
        Rng(w)
    }

    /// The generator of program `index` of run `seed`.
    pub fn for_program(seed: u64, index: u64) -> Rng {
        let mut r = Rng(seed ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03));
        r.next_u64();
        r
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    pub fn u8(&mut self) -> u8 {
        self.next_u64() as u8
    }

    pub fn u16(&mut self) -> u16 {
        self.next_u64() as u16
    }

    pub fn u32(&mut self) -> u32 {
        self.next_u64() as u32
    }

    /// One element of a non-empty slice.
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }

    /// One element of a weighted table (weights > 0 somewhere).
    pub fn weighted<T: Copy>(&mut self, xs: &[(T, u32)]) -> T {
        let total: u64 = xs.iter().map(|x| x.1 as u64).sum();
        let mut k = self.below(total);
        for &(x, w) in xs {
            if k < w as u64 {
                return x;
            }
            k -= w as u64;
        }
        xs[xs.len() - 1].0
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn same_seed_same_stream_and_weights_respected() {
        let (mut a, mut b) = (Rng::for_program(3, 9), Rng::for_program(3, 9));
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        let mut r = Rng::new(1);
        let mut n = [0u32; 3];
        for _ in 0..3000 {
            n[r.weighted(&[(0usize, 1), (1, 0), (2, 2)])] += 1;
        }
        assert_eq!(n[1], 0);
        assert!(n[2] > n[0], "{n:?}");
    }
}
