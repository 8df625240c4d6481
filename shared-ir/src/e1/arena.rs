//! `E1Arena`: many encoded programs resident in E1's word memory at once, and
//! the links between them.
//!
//! Protocol (the driver's side):
//! * `install` verifies, encodes and places a program; `set_head` makes it
//!   the program for its key (re-pointing every link that pointed at the old
//!   head); `drop_head` removes the head for a key and unlinks its inbound
//!   links.
//! * A static exit is a LINK op with a patchable target word, 0 while
//!   unlinked. The engine takes a filled link without leaving when nothing is
//!   owed (the target's own `clock.check` guards the budget). An unfilled one
//!   exits with its [`LinkSlot`]; the driver builds the target if needed and
//!   calls `fill_link` (lazy link fill).
//! * Unlinking uses **back-edge lists**: each program records the link words
//!   that point at it (inbound) and the link words it owns (outbound). The
//!   alternative, an epoch word checked by every chained exit, costs a load
//!   and a compare on every link the engine takes, forever; back-edge lists
//!   cost only at patch/unpatch time, which is rare (install, SMC, eviction).
//! * Every program has an entry counter in its header, bumped by `count`
//!   ops, for tier-up.
//! * Space is a ring: when full, the oldest programs in the way are evicted
//!   (FIFO). Eviction goes through the same removal as invalidation, which
//!   unpatches inbound links and forgets outbound ones, so no link word ever
//!   points at freed space ([`E1Arena::check_links`] proves it in tests).
//!   Freed words are filled with an invalid op, so a bug exits `Invalid`.
//! * `invalidate_range` removes every program built from a guest byte range
//!   (a store into code); `heads_in` lists the heads in a key range (a
//!   driver ends a new line where a program already starts).
//!
//! Nothing here iterates a hash map: every structure is ordered, so eviction
//! order and reports are deterministic. It must not run programs.

use super::encode::{encode_program, HEADER_COUNTER, HEADER_ID, HEADER_WORDS};
use super::engine::key_hash;
use super::{op, ARENA_BASE, MEM_ALLOC, MEM_MASK, MEM_WORDS, VREG_WORDS};
use crate::ir::verify::{verify, VerifyError};
use crate::ir::Program;
use std::collections::{BTreeMap, BTreeSet};

/// A program resident in an arena. Ids are never reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProgId(pub u32);

/// The word index of a link's patchable target word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LinkSlot(pub u32);

/// Why a program could not be installed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum E1Error {
    Verify(VerifyError),
    Encode(String),
    /// The program needs more words than the whole arena has.
    TooLarge {
        words: usize,
        capacity: usize,
    },
}

impl std::fmt::Display for E1Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            E1Error::Verify(e) => write!(f, "verify: {e}"),
            E1Error::Encode(e) => write!(f, "encode: {e}"),
            E1Error::TooLarge { words, capacity } => {
                write!(
                    f,
                    "program of {words} words does not fit an arena of {capacity}"
                )
            }
        }
    }
}

impl std::error::Error for E1Error {}

/// A word no op has: freed space is filled with it.
const INVALID_WORD: u32 = u32::MAX;
/// Code-range index granule (bytes = 1 << shift).
const CODE_GRANULE_SHIFT: u32 = 8;
/// Entries of the indirect-exit lookup table (a power of two).
pub(crate) const LOOKUP_ENTRIES: usize = 4096;

#[derive(Clone, Debug)]
struct ProgRec {
    start: u32,
    len: u32,
    code_end: u32,
    key: u64,
    code: Vec<(u32, u32)>,
    /// Link words (in other programs or this one) that point at this program.
    inbound: Vec<u32>,
    /// Link words this program owns.
    outbound: Vec<u32>,
    ops: usize,
    /// The entry op word `divert` replaced (the program runs elsewhere).
    diverted: Option<u32>,
}

#[derive(Clone, Copy, Debug)]
struct LinkRec {
    owner: ProgId,
    key: u64,
    target: Option<ProgId>,
}

/// Counters for reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ArenaStats {
    pub installs: u64,
    pub evictions: u64,
    pub invalidations: u64,
    pub links_filled: u64,
    pub links_unpatched: u64,
}

/// Many programs in E1's memory, with links, heads and counters.
pub struct E1Arena {
    mem: Box<[u32; MEM_ALLOC]>,
    lo: u32,
    hi: u32,
    cursor: u32,
    progs: BTreeMap<ProgId, ProgRec>,
    /// Entry word of each resident program by id (0: not resident). Ids are
    /// handed out in order and never reused, so this is a plain vector; it
    /// answers [`E1Arena::entry`], which every engine call asks, without
    /// the tree walk of `progs`.
    entries: Vec<u32>,
    by_start: BTreeMap<u32, ProgId>,
    heads: BTreeMap<u64, ProgId>,
    links: BTreeMap<u32, LinkRec>,
    lookup: Box<[(u64, u32); LOOKUP_ENTRIES]>,
    pages: BTreeMap<u32, BTreeSet<ProgId>>,
    next_id: u32,
    /// Programs evicted to make room since the driver last asked
    /// ([`E1Arena::take_evicted`]).
    evicted: Vec<ProgId>,
    /// When on, `remove` records each program's final entry counter here
    /// ([`E1Arena::log_counts`], [`E1Arena::take_removed_counts`]).
    count_log: Option<Vec<(ProgId, u32)>>,
    pub stats: ArenaStats,
}

impl E1Arena {
    /// An arena with room for `capacity_words` words of programs (clipped to
    /// what the memory holds).
    pub fn new(capacity_words: usize) -> E1Arena {
        let mem: Box<[u32; MEM_ALLOC]> = vec![0u32; MEM_ALLOC]
            .into_boxed_slice()
            .try_into()
            .unwrap_or_else(|_| unreachable!("vec has MEM_ALLOC words"));
        let lo = ARENA_BASE;
        let hi = (lo as usize + capacity_words).min(MEM_WORDS) as u32;
        let mut a = E1Arena {
            mem,
            lo,
            hi,
            cursor: lo,
            progs: BTreeMap::new(),
            entries: Vec::new(),
            by_start: BTreeMap::new(),
            heads: BTreeMap::new(),
            links: BTreeMap::new(),
            lookup: vec![(0, 0); LOOKUP_ENTRIES]
                .into_boxed_slice()
                .try_into()
                .unwrap_or_else(|_| unreachable!("vec has LOOKUP_ENTRIES entries")),
            pages: BTreeMap::new(),
            next_id: 1,
            evicted: Vec::new(),
            count_log: None,
            stats: ArenaStats::default(),
        };
        a.mem[lo as usize..hi as usize].fill(INVALID_WORD);
        a
    }

    /// Words available to programs.
    pub fn capacity(&self) -> usize {
        (self.hi - self.lo) as usize
    }

    /// The vreg file (guest registers first). Copy guest state in before
    /// [`super::run`] and out after it.
    pub fn vregs(&self) -> &[u32] {
        &self.mem[..VREG_WORDS]
    }
    pub fn vregs_mut(&mut self) -> &mut [u32] {
        &mut self.mem[..VREG_WORDS]
    }

    pub(crate) fn engine_parts(
        &mut self,
    ) -> (&mut [u32; MEM_ALLOC], &[(u64, u32); LOOKUP_ENTRIES]) {
        (&mut self.mem, &self.lookup)
    }

    /// Verifies, encodes and places a program, evicting the oldest programs
    /// in the way if the arena is full. Its links start unlinked; it is not a
    /// head until [`E1Arena::set_head`].
    pub fn install(&mut self, p: &Program) -> Result<ProgId, E1Error> {
        verify(p).map_err(E1Error::Verify)?;
        let enc = encode_program(p).map_err(|e| E1Error::Encode(e.0))?;
        let len = enc.words.len() as u32;
        let start = self.alloc(len)?;
        let id = ProgId(self.next_id);
        self.next_id += 1;
        let s = start as usize;
        self.mem[s..s + enc.words.len()].copy_from_slice(&enc.words);
        for &r in &enc.relocs {
            let w = &mut self.mem[s + r as usize];
            *w = w.wrapping_add(start);
        }
        self.mem[s + HEADER_ID as usize] = id.0;
        let mut outbound = Vec::with_capacity(enc.links.len());
        for &(off, key) in &enc.links {
            let slot = start + off;
            self.links.insert(
                slot,
                LinkRec {
                    owner: id,
                    key,
                    target: None,
                },
            );
            outbound.push(slot);
        }
        let code_end = start + enc.pool;
        for &(lo, hi) in &p.code {
            for g in granules(lo, hi) {
                self.pages.entry(g).or_default().insert(id);
            }
        }
        self.by_start.insert(start, id);
        let i = id.0 as usize;
        if self.entries.len() <= i {
            self.entries.resize(i + 1, 0);
        }
        self.entries[i] = start + HEADER_WORDS;
        self.progs.insert(
            id,
            ProgRec {
                start,
                len,
                code_end,
                key: p.key,
                code: p.code.clone(),
                inbound: Vec::new(),
                outbound,
                ops: enc.ops,
                diverted: None,
            },
        );
        self.stats.installs += 1;
        Ok(id)
    }

    fn alloc(&mut self, len: u32) -> Result<u32, E1Error> {
        if len > self.hi - self.lo {
            return Err(E1Error::TooLarge {
                words: len as usize,
                capacity: self.capacity(),
            });
        }
        if self.cursor + len > self.hi {
            self.cursor = self.lo;
        }
        let (from, to) = (self.cursor, self.cursor + len);
        let victims: Vec<ProgId> = self
            .by_start
            .range(..to)
            .rev()
            .take_while(|(s, id)| **s + self.progs[id].len > from)
            .map(|(_, id)| *id)
            .collect();
        for v in victims {
            self.remove(v);
            self.stats.evictions += 1;
            self.evicted.push(v);
        }
        self.cursor = to;
        Ok(from)
    }

    /// Entry word of a program.
    pub fn entry(&self, id: ProgId) -> Option<u32> {
        let e = self.entries.get(id.0 as usize).copied().unwrap_or(0);
        (e != 0).then_some(e)
    }

    /// Is the program resident?
    pub fn contains(&self, id: ProgId) -> bool {
        self.progs.contains_key(&id)
    }

    /// Resident programs, oldest id first.
    pub fn programs(&self) -> Vec<ProgId> {
        self.progs.keys().copied().collect()
    }

    /// Key of a resident program.
    pub fn key(&self, id: ProgId) -> Option<u64> {
        self.progs.get(&id).map(|r| r.key)
    }

    /// Engine ops in a resident program.
    pub fn ops(&self, id: ProgId) -> Option<usize> {
        self.progs.get(&id).map(|r| r.ops)
    }

    /// The head program for a key.
    pub fn head(&self, key: u64) -> Option<ProgId> {
        self.heads.get(&key).copied()
    }

    /// Keys in `[lo, hi]` that have a head, ascending (a driver ends a new
    /// line where an existing program starts).
    pub fn heads_in(&self, lo: u64, hi: u64) -> impl Iterator<Item = u64> + '_ {
        self.heads.range(lo..=hi.max(lo)).map(|(k, _)| *k)
    }

    /// Entry counter (tier-up).
    pub fn count(&self, id: ProgId) -> Option<u32> {
        self.progs
            .get(&id)
            .map(|r| self.mem[(r.start + HEADER_COUNTER) as usize])
    }

    pub fn reset_count(&mut self, id: ProgId) {
        if let Some(r) = self.progs.get(&id) {
            self.mem[(r.start + HEADER_COUNTER) as usize] = 0;
        }
    }

    /// Makes `id` the head for its key. Links that pointed at the previous
    /// head now point at `id`, and the previous head is removed.
    pub fn set_head(&mut self, id: ProgId) {
        let Some(rec) = self.progs.get(&id) else {
            return;
        };
        let key = rec.key;
        let entry = rec.start + HEADER_WORDS;
        let old = self.heads.insert(key, id);
        if let Some(old) = old.filter(|o| *o != id) {
            let moved = self
                .progs
                .get_mut(&old)
                .map(|r| std::mem::take(&mut r.inbound))
                .unwrap_or_default();
            for &slot in &moved {
                self.mem[slot as usize] = entry;
                if let Some(l) = self.links.get_mut(&slot) {
                    l.target = Some(id);
                }
            }
            // A self-link of the old head dies with it; keep only the others.
            let moved: Vec<u32> = moved
                .into_iter()
                .filter(|s| self.links.get(s).map(|l| l.owner) != Some(old))
                .collect();
            if let Some(r) = self.progs.get_mut(&id) {
                r.inbound.extend(moved);
            }
            self.remove(old);
        }
        self.lookup[key_hash(key) & (LOOKUP_ENTRIES - 1)] = (key, entry);
    }

    /// Makes E1 leave with [`crate::exit::ExitReason::Divert`] (the
    /// program's id in the exit's `ip`) whenever it enters program `id`,
    /// through the driver, a link or the lookup table: the program runs
    /// elsewhere from now on (the `jit` arm's native code). Its links,
    /// head, counter and code ranges stay as they are, so the link protocol
    /// (lazy fill, re-pointing, unpatching) is unchanged. `false` if `id` is
    /// not resident.
    pub fn divert(&mut self, id: ProgId) -> bool {
        let Some(r) = self.progs.get_mut(&id) else {
            return false;
        };
        let e = (r.start + HEADER_WORDS) as usize;
        if r.diverted.is_none() {
            r.diverted = Some(self.mem[e]);
        }
        self.mem[e] = op::DIVERT;
        true
    }

    /// Whether [`E1Arena::divert`] was applied to a resident program.
    pub fn is_diverted(&self, id: ProgId) -> bool {
        self.progs.get(&id).is_some_and(|r| r.diverted.is_some())
    }

    /// The program a link word is patched to, read as E1 reads it (the word,
    /// then the target's header id): no map lookup.
    #[inline]
    pub fn linked(&self, slot: LinkSlot) -> Option<ProgId> {
        let t = self.mem[slot.0 as usize & MEM_MASK];
        (t != 0).then(|| ProgId(self.mem[(t as usize).wrapping_sub(1) & MEM_MASK]))
    }

    /// The link word of program `id`'s static exit to `key` (the first if it
    /// has several: all of them lead to the same head once filled).
    pub fn link_slot(&self, id: ProgId, key: u64) -> Option<LinkSlot> {
        let r = self.progs.get(&id)?;
        r.outbound
            .iter()
            .copied()
            .find(|s| self.links.get(s).is_some_and(|l| l.key == key))
            .map(LinkSlot)
    }

    /// The head E1's indirect lookup finds for `key` without leaving, if any.
    #[inline]
    pub fn lookup(&self, key: u64) -> Option<ProgId> {
        let (k, e) = self.lookup[key_hash(key) & (LOOKUP_ENTRIES - 1)];
        (e != 0 && k == key).then(|| ProgId(self.mem[(e as usize).wrapping_sub(1) & MEM_MASK]))
    }

    /// Address of word 0 of E1's memory, for code that reads link words
    /// in place (the `jit` arm's compiled programs). Valid while the arena
    /// lives; the memory never moves.
    pub fn words_ptr(&mut self) -> *mut u32 {
        self.mem.as_mut_ptr()
    }

    /// Removes the head for `key` (unlinking every link into it).
    pub fn drop_head(&mut self, key: u64) -> Option<ProgId> {
        let id = self.heads.get(&key).copied()?;
        self.remove(id);
        Some(id)
    }

    /// Patches an unlinked link to the current head of its key. Returns the
    /// target, or `None` if the key has no head (build it, `set_head`, retry).
    pub fn fill_link(&mut self, slot: LinkSlot) -> Option<ProgId> {
        let l = *self.links.get(&slot.0)?;
        if let Some(t) = l.target {
            return Some(t);
        }
        let t = self.head(l.key)?;
        let entry = self.entry(t)?;
        self.mem[slot.0 as usize] = entry;
        if let Some(l) = self.links.get_mut(&slot.0) {
            l.target = Some(t);
        }
        if let Some(r) = self.progs.get_mut(&t) {
            r.inbound.push(slot.0);
        }
        self.stats.links_filled += 1;
        Some(t)
    }

    /// The key a link slot leads to.
    pub fn link_key(&self, slot: LinkSlot) -> Option<u64> {
        self.links.get(&slot.0).map(|l| l.key)
    }

    /// Fills every unlinked link whose key has a head (eager linking).
    pub fn link_all(&mut self) -> usize {
        let open: Vec<u32> = self
            .links
            .iter()
            .filter(|(_, l)| l.target.is_none())
            .map(|(s, _)| *s)
            .collect();
        open.into_iter()
            .filter(|s| self.fill_link(LinkSlot(*s)).is_some())
            .count()
    }

    /// Removes a program: unpatches every link into it, forgets the links it
    /// owns, drops it as a head, frees its words.
    pub fn remove(&mut self, id: ProgId) -> bool {
        let Some(rec) = self.progs.remove(&id) else {
            return false;
        };
        self.entries[id.0 as usize] = 0;
        if let Some(log) = self.count_log.as_mut() {
            log.push((id, self.mem[(rec.start + HEADER_COUNTER) as usize]));
        }
        for &slot in &rec.inbound {
            self.mem[slot as usize] = 0;
            if let Some(l) = self.links.get_mut(&slot) {
                l.target = None;
            }
            self.stats.links_unpatched += 1;
        }
        for &slot in &rec.outbound {
            if let Some(l) = self.links.remove(&slot) {
                if let Some(t) = l.target.filter(|t| *t != id) {
                    if let Some(tr) = self.progs.get_mut(&t) {
                        tr.inbound.retain(|s| *s != slot);
                    }
                }
            }
        }
        if self.heads.get(&rec.key) == Some(&id) {
            self.heads.remove(&rec.key);
            let h = key_hash(rec.key) & (LOOKUP_ENTRIES - 1);
            if self.lookup[h].0 == rec.key {
                self.lookup[h] = (0, 0);
            }
        }
        for &(lo, hi) in &rec.code {
            for g in granules(lo, hi) {
                if let Some(set) = self.pages.get_mut(&g) {
                    set.remove(&id);
                    if set.is_empty() {
                        self.pages.remove(&g);
                    }
                }
            }
        }
        self.by_start.remove(&rec.start);
        let s = rec.start as usize;
        self.mem[s..s + rec.len as usize].fill(INVALID_WORD);
        true
    }

    /// Removes every program built from bytes in `[lo, hi)`; returns them.
    pub fn invalidate_range(&mut self, lo: u32, hi: u32) -> Vec<ProgId> {
        if hi <= lo {
            return Vec::new();
        }
        let mut hit = BTreeSet::new();
        for (_, set) in self
            .pages
            .range(lo >> CODE_GRANULE_SHIFT..=(hi - 1) >> CODE_GRANULE_SHIFT)
        {
            hit.extend(set.iter().copied());
        }
        let hit: Vec<ProgId> = hit
            .into_iter()
            .filter(|id| self.progs[id].code.iter().any(|&(a, b)| a < hi && lo < b))
            .collect();
        for &id in &hit {
            self.remove(id);
            self.stats.invalidations += 1;
        }
        hit
    }

    /// Programs evicted by `install` since the last call (a driver that keeps
    /// its own per-program records drops them here).
    pub fn take_evicted(&mut self) -> Vec<ProgId> {
        std::mem::take(&mut self.evicted)
    }

    /// Unpatches every filled link and empties the indirect lookup table, so
    /// the next transition into any program exits to the driver (which can
    /// then check the program against guest memory, e.g. after host code
    /// wrote memory it could not log). Heads stay heads. Returns how many
    /// links were unpatched.
    pub fn unlink_all(&mut self) -> usize {
        let mut n = 0;
        for (slot, l) in self.links.iter_mut() {
            if l.target.take().is_some() {
                self.mem[*slot as usize] = 0;
                n += 1;
            }
        }
        for r in self.progs.values_mut() {
            r.inbound.clear();
        }
        self.lookup.iter_mut().for_each(|e| *e = (0, 0));
        self.stats.links_unpatched += n as u64;
        n
    }

    /// Puts the head of `key` into the indirect lookup table again (its slot
    /// is direct-mapped, so a colliding key may have taken it). No-op when
    /// `key` has no head.
    pub fn note_lookup(&mut self, key: u64) {
        if let Some(e) = self.head(key).and_then(|id| self.entry(id)) {
            self.lookup[key_hash(key) & (LOOKUP_ENTRIES - 1)] = (key, e);
        }
    }

    /// Keeps (or stops keeping) the final entry counter of every program
    /// removed from now on, for a census that outlives the programs.
    pub fn log_counts(&mut self, on: bool) {
        self.count_log = on.then(Vec::new);
    }

    /// Final entry counters of the programs removed since the last call.
    pub fn take_removed_counts(&mut self) -> Vec<(ProgId, u32)> {
        self.count_log
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Removes every program (ids are still never reused).
    pub fn clear(&mut self) {
        let ids: Vec<ProgId> = self.progs.keys().copied().collect();
        for id in ids {
            self.remove(id);
        }
        self.cursor = self.lo;
        self.evicted.clear();
    }

    /// Checks the link invariants: every nonzero LINK target word in every
    /// resident program is the entry of a resident program and is recorded in
    /// that program's inbound list; every inbound entry is such a word. Scans
    /// the code itself, so a dangling link anywhere is found.
    pub fn check_links(&self) -> Result<(), String> {
        for (id, r) in &self.progs {
            if self.entry(*id) != Some(r.start + HEADER_WORDS) {
                return Err(format!("entry table: program {} not at its entry", id.0));
            }
        }
        let listed = self.entries.iter().filter(|&&e| e != 0).count();
        if listed != self.progs.len() {
            return Err(format!(
                "entry table: {listed} entries for {} programs",
                self.progs.len()
            ));
        }
        let entries: BTreeMap<u32, ProgId> = self
            .progs
            .iter()
            .map(|(id, r)| (r.start + HEADER_WORDS, *id))
            .collect();
        let mut seen = 0usize;
        for (id, r) in &self.progs {
            let mut pc = r.start + HEADER_WORDS;
            while pc < r.code_end {
                let mut o = self.mem[pc as usize & MEM_MASK];
                if pc == r.start + HEADER_WORDS {
                    o = r.diverted.unwrap_or(o);
                }
                let Some(n) = op::len(o) else {
                    return Err(format!("{id:?}: word {pc} is not an op ({o:#x})"));
                };
                if o == op::LINK {
                    let slot = pc + 1;
                    let t = self.mem[slot as usize];
                    let rec = self
                        .links
                        .get(&slot)
                        .ok_or(format!("{id:?}: link word {slot} has no record"))?;
                    if t == 0 {
                        if rec.target.is_some() {
                            return Err(format!("link {slot} is 0 but recorded as linked"));
                        }
                    } else {
                        let tid = entries.get(&t).ok_or(format!(
                            "{id:?}: link {slot} points at {t}, no program entry"
                        ))?;
                        if rec.target != Some(*tid) {
                            return Err(format!("link {slot} target record disagrees"));
                        }
                        if !self.progs[tid].inbound.contains(&slot) {
                            return Err(format!("link {slot} missing from {tid:?}'s inbound list"));
                        }
                        seen += 1;
                    }
                }
                pc += n as u32;
            }
        }
        let inbound: usize = self.progs.values().map(|r| r.inbound.len()).sum();
        if inbound != seen {
            return Err(format!(
                "{inbound} inbound records but {seen} patched link words"
            ));
        }
        for (slot, l) in &self.links {
            if !self.progs.contains_key(&l.owner) {
                return Err(format!("link {slot} owned by a removed program"));
            }
        }
        Ok(())
    }
}

fn granules(lo: u32, hi: u32) -> impl Iterator<Item = u32> {
    let (a, b) = if hi > lo {
        (lo >> CODE_GRANULE_SHIFT, (hi - 1) >> CODE_GRANULE_SHIFT)
    } else {
        (1, 0)
    };
    a..=b
}
