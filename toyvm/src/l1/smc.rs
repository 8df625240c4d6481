//! Self-modifying code: which physical bytes compiled code came from, which
//! blocks came from each byte, and which bytes are volatile.
//!
//! Policy (docs/l1.md, "Self-modifying code"):
//! - Code bits are kept per byte, so data stored next to code (a .COM's
//!   variables share its pages) never retires anything.
//! - A store into a code byte retires exactly the blocks built from that byte,
//!   before the next instruction runs (the running block included).
//! - A byte that guest stores have hit [`VOLATILE_HITS`] times, each time
//!   retiring a block compiled less than [`YOUNG`] dispatches earlier, is
//!   volatile:
//!   an instruction overlapping it is not compiled any more; it runs through
//!   the uncached path (fetch and decode every time, like L0) and blocks are
//!   cut around it. A cut costs no dispatch: the guest clock only counts
//!   instructions. A self-patching loop therefore settles after a few
//!   recompiles instead of recompiling on every store, while code that is
//!   reloaded after long use (a loader copying the next program over the
//!   last) stays compiled.
//! - Host writes (loaders, DOS reads into memory) retire blocks the same way
//!   but do not count towards volatility.
//! - When more than [`MAX_LIVE_BLOCKS`] blocks are live, everything is flushed
//!   (volatility counters included).
//!
//! This module owns the bitmap, the per-chunk block lists and the hit
//! counters; it must not decide what a block is or run anything.

/// Physical addresses below this can hold real-mode code (FFFF:FFFF is
/// 10FFEFh): the extent of [`CodeBits::new`] and [`Smc::new`].
pub const CODE_LIMIT: u32 = 0x11_0000;
/// Physical addresses below this can hold cached protected-mode or V86
/// code (`l1::pm`): the DOS machine's 16 MiB of RAM. L1 keeps its bits and
/// index this far ([`CodeBits::with_limit`], [`Smc::with_limit`]).
pub const PHYS_LIMIT: u32 = 16 << 20;
/// Block lists are kept per chunk of 2^CHUNK_SHIFT physical bytes.
pub const CHUNK_SHIFT: u32 = 8;
/// Guest stores into one code byte, each retiring a young block, before the
/// byte is treated as volatile.
pub const VOLATILE_HITS: u8 = 3;
/// A block younger than this many dispatches when a store retires it was
/// patched while running (a volatile pattern); an older one was used for a
/// while and then reloaded or rewritten (an overlay, a new program, the next
/// demo part), which never makes its bytes volatile.
pub const YOUNG: u64 = 2048;
/// Live blocks above which the whole cache is flushed.
pub const MAX_LIVE_BLOCKS: usize = 16_384;

/// One bit per physical byte below a limit ([`CODE_LIMIT`] or [`PHYS_LIMIT`]): set when a live block was
/// compiled from that byte.
#[derive(Clone, Debug, Default)]
pub struct CodeBits {
    words: Vec<u64>,
    /// Per 4 KiB page (64 words): whether a bit in it may be set since the
    /// last `clear_all`, and the list of such pages. A flush then clears only
    /// what blocks used: zeroing the whole 16 MiB map (2 MiB of words) on
    /// every flush made DOS/4GW, which flushes on each A20 toggle, 6x slower.
    page_dirty: Vec<bool>,
    dirty_pages: Vec<u32>,
}

/// Words of [`CodeBits`] per dirty-tracking page (4 KiB of guest bytes).
const WORDS_PER_PAGE: usize = 64;

impl CodeBits {
    pub fn new() -> CodeBits {
        CodeBits::with_limit(CODE_LIMIT)
    }

    /// Bits for the physical bytes below `limit`.
    pub fn with_limit(limit: u32) -> CodeBits {
        let words = (limit / 64) as usize;
        CodeBits {
            words: vec![0; words],
            page_dirty: vec![false; words.div_ceil(WORDS_PER_PAGE)],
            dirty_pages: Vec::new(),
        }
    }

    /// Whether physical byte `p` backs compiled code.
    #[inline(always)]
    pub fn test(&self, p: u32) -> bool {
        match self.words.get((p >> 6) as usize) {
            Some(w) => (w >> (p & 63)) & 1 != 0,
            None => false,
        }
    }

    /// Whether any of the `n` (at most 32) bytes from `p` backs compiled
    /// code. Conservative (true) when the span leaves the bitmap.
    #[inline(always)]
    pub fn any(&self, p: u32, n: u32) -> bool {
        let sh = p & 63;
        let mask = (1u64 << n) - 1;
        match self.words.get((p >> 6) as usize) {
            Some(w) if sh + n <= 64 => (w >> sh) & mask != 0,
            Some(_) => (0..n).any(|i| self.test(p.wrapping_add(i))),
            None => (0..n).any(|i| self.test(p.wrapping_add(i))),
        }
    }

    #[inline]
    pub fn set(&mut self, p: u32) {
        let wi = (p >> 6) as usize;
        if let Some(w) = self.words.get_mut(wi) {
            *w |= 1 << (p & 63);
            let page = wi / WORDS_PER_PAGE;
            if !self.page_dirty[page] {
                self.page_dirty[page] = true;
                self.dirty_pages.push(page as u32);
            }
        }
    }

    #[inline]
    pub fn clear(&mut self, p: u32) {
        if let Some(w) = self.words.get_mut((p >> 6) as usize) {
            *w &= !(1 << (p & 63));
        }
    }

    /// Clears every bit (only the pages a `set` touched since the last call).
    pub fn clear_all(&mut self) {
        for page in self.dirty_pages.drain(..) {
            let s = page as usize * WORDS_PER_PAGE;
            let e = (s + WORDS_PER_PAGE).min(self.words.len());
            self.words[s..e].fill(0);
            self.page_dirty[page as usize] = false;
        }
    }

    /// Number of bits set (for reports).
    pub fn count(&self) -> u64 {
        self.words.iter().map(|w| w.count_ones() as u64).sum()
    }
}

/// The reverse index from bytes to blocks, and the volatility counters.
#[derive(Clone, Debug)]
pub struct Smc {
    /// Per chunk: the live blocks with at least one byte in it.
    chunks: Vec<Vec<u32>>,
    /// Chunks that may hold blocks since the last `clear` (listed once each,
    /// flagged in `chunk_listed`), so a flush visits only those.
    used_chunks: Vec<u32>,
    chunk_listed: Vec<bool>,
    /// Guest stores into code, per physical byte (saturating).
    hits: Vec<u8>,
    /// Chunks whose hit counters are nonzero (to reset them cheaply).
    hit_chunks: Vec<u32>,
    pub volatile_hits: u8,
}

impl Default for Smc {
    fn default() -> Self {
        Smc::new()
    }
}

impl Smc {
    pub fn new() -> Smc {
        Smc::with_limit(CODE_LIMIT)
    }

    /// The index for the physical bytes below `limit`.
    pub fn with_limit(limit: u32) -> Smc {
        let chunks = (limit >> CHUNK_SHIFT) as usize;
        Smc {
            chunks: vec![Vec::new(); chunks],
            used_chunks: Vec::new(),
            chunk_listed: vec![false; chunks],
            hits: vec![0; limit as usize],
            hit_chunks: Vec::new(),
            volatile_hits: VOLATILE_HITS,
        }
    }

    /// Whether byte `p` is volatile (never compiled).
    #[inline]
    pub fn is_volatile(&self, p: u32) -> bool {
        self.volatile_hits != 0
            && self
                .hits
                .get(p as usize)
                .is_some_and(|&h| h >= self.volatile_hits)
    }

    /// Counts a guest store into code byte `p`.
    pub fn count_hit(&mut self, p: u32) {
        if let Some(h) = self.hits.get_mut(p as usize) {
            if *h == 0 {
                self.hit_chunks.push(p >> CHUNK_SHIFT);
            }
            *h = h.saturating_add(1);
        }
    }

    /// The live blocks with bytes in the chunk of `p`.
    #[inline]
    pub fn blocks_near(&self, p: u32) -> &[u32] {
        match self.chunks.get((p >> CHUNK_SHIFT) as usize) {
            Some(v) => v,
            None => &[],
        }
    }

    /// Records block `id` built from `ranges` (physical, half-open).
    pub fn add(&mut self, code: &mut CodeBits, id: u32, ranges: &[(u32, u32)]) {
        for &(s, e) in ranges {
            for p in s..e {
                code.set(p);
            }
            let (c0, c1) = (s >> CHUNK_SHIFT, (e - 1) >> CHUNK_SHIFT);
            for c in c0..=c1 {
                let v = &mut self.chunks[c as usize];
                if v.last() != Some(&id) {
                    v.push(id);
                }
                if !self.chunk_listed[c as usize] {
                    self.chunk_listed[c as usize] = true;
                    self.used_chunks.push(c);
                }
            }
        }
    }

    /// Forgets block `id` (built from `ranges`); clears the code bits no other
    /// live block still needs. `ranges_of` gives the ranges of another block.
    pub fn remove<'a>(
        &mut self,
        code: &mut CodeBits,
        id: u32,
        ranges: &[(u32, u32)],
        ranges_of: impl Fn(u32) -> &'a [(u32, u32)],
    ) {
        for &(s, e) in ranges {
            let (c0, c1) = (s >> CHUNK_SHIFT, (e - 1) >> CHUNK_SHIFT);
            for c in c0..=c1 {
                let v = &mut self.chunks[c as usize];
                v.retain(|&b| b != id);
            }
            for p in s..e {
                code.clear(p);
            }
            for c in c0..=c1 {
                for &other in &self.chunks[c as usize] {
                    for &(os, oe) in ranges_of(other) {
                        let lo = os.max(s);
                        let hi = oe.min(e);
                        for p in lo..hi {
                            code.set(p);
                        }
                    }
                }
            }
        }
    }

    /// Forgets every block and every hit counter.
    pub fn clear(&mut self) {
        for c in self.used_chunks.drain(..) {
            self.chunks[c as usize].clear();
            self.chunk_listed[c as usize] = false;
        }
        for &c in &self.hit_chunks {
            let s = (c << CHUNK_SHIFT) as usize;
            self.hits[s..s + (1 << CHUNK_SHIFT)].fill(0);
        }
        self.hit_chunks.clear();
    }
}
