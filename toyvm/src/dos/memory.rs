//! DOS memory management: the chain of memory control blocks (MCBs) in
//! guest memory that programs walk themselves.
//!
//! Each block is preceded by a 16-byte MCB: signature 'M' (more follow) or
//! 'Z' (last), owner PSP (0 = free, 8 = DOS), size in paragraphs, and from
//! DOS 4 on the owner's name at offset 8. This module owns allocation,
//! release, resizing and strategy (INT 21h 48h/49h/4Ah/58h semantics). It
//! reads and writes the chain through `Memory` only and must not know about
//! PSPs beyond the owner word.

use super::path::{DosError, ERR_BAD_BLOCK, ERR_MCB_DESTROYED, ERR_NO_MEMORY};
use crate::machine::memory::Memory;

/// Owner word of blocks that belong to DOS itself.
pub const OWNER_DOS: u16 = 8;

/// One memory control block as read from guest memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mcb {
    /// Segment of the MCB itself (the block starts one paragraph later).
    pub seg: u16,
    pub last: bool,
    pub owner: u16,
    pub size: u16,
}

impl Mcb {
    /// Segment of the block's first paragraph (what 48h returns).
    pub fn block(&self) -> u16 {
        self.seg + 1
    }
    /// Segment just past the block.
    pub fn end(&self) -> u32 {
        self.seg as u32 + 1 + self.size as u32
    }
}

/// Allocation strategy (58h): the fit in bits 0-1 (first, best, last) and
/// the area in bits 6-7 (00h conventional only, 40h upper only, 80h upper
/// first then conventional). Upper memory is only searched while it is
/// linked into the chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strategy(pub u16);

/// Where a block is searched for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Area {
    Low,
    High,
}

impl Strategy {
    pub const FIRST: Strategy = Strategy(0);
    pub const BEST: Strategy = Strategy(1);
    pub const LAST: Strategy = Strategy(2);

    pub fn from_code(c: u16) -> Option<Strategy> {
        let c = c & 0xFF;
        (c & 3 != 3 && c & 0x3C == 0 && c & 0xC0 != 0xC0).then_some(Strategy(c))
    }
    pub fn code(self) -> u16 {
        self.0
    }
    fn areas(self) -> &'static [Area] {
        match self.0 & 0xC0 {
            0x40 => &[Area::High],
            0x80 => &[Area::High, Area::Low],
            _ => &[Area::Low],
        }
    }
}

/// First segment of upper memory: blocks at or above it are UMBs.
pub const UPPER: u16 = 0xA000;

fn base(seg: u16) -> u32 {
    (seg as u32) << 4
}

/// Reads the MCB at `seg`, or None when its signature is not 'M'/'Z'.
pub fn read(mem: &Memory, seg: u16) -> Option<Mcb> {
    let a = base(seg);
    let sig = mem.read8(a);
    if sig != b'M' && sig != b'Z' {
        return None;
    }
    Some(Mcb {
        seg,
        last: sig == b'Z',
        owner: mem.read8(a + 1) as u16 | (mem.read8(a + 2) as u16) << 8,
        size: mem.read8(a + 3) as u16 | (mem.read8(a + 4) as u16) << 8,
    })
}

/// Writes an MCB header, keeping its name bytes.
pub fn write(mem: &mut Memory, m: &Mcb) {
    let a = base(m.seg);
    mem.write8(a, if m.last { b'Z' } else { b'M' });
    mem.write8(a + 1, m.owner as u8);
    mem.write8(a + 2, (m.owner >> 8) as u8);
    mem.write8(a + 3, m.size as u8);
    mem.write8(a + 4, (m.size >> 8) as u8);
}

/// Sets the 8-byte name field (DOS 4+ shows program names there).
pub fn set_name(mem: &mut Memory, seg: u16, name: &[u8]) {
    for i in 0..8 {
        mem.write8(base(seg) + 8 + i as u32, name.get(i).copied().unwrap_or(0));
    }
}

/// Creates a chain with one free block from `first` to `end` (segment).
pub fn init(mem: &mut Memory, first: u16, end: u16) {
    for i in 0..16 {
        mem.write8(base(first) + i, 0);
    }
    write(
        mem,
        &Mcb {
            seg: first,
            last: true,
            owner: 0,
            size: end - first - 1,
        },
    );
}

/// Every MCB of the chain, or "MCBs destroyed" when it is broken.
pub fn walk(mem: &Memory, first: u16) -> Result<Vec<Mcb>, DosError> {
    let mut out = Vec::new();
    let mut seg = first;
    loop {
        let m = read(mem, seg).ok_or(ERR_MCB_DESTROYED)?;
        out.push(m);
        if m.last {
            return Ok(out);
        }
        let next = m.end();
        if next > 0xFFFF || out.len() > 0x10000 {
            return Err(ERR_MCB_DESTROYED);
        }
        seg = next as u16;
    }
}

/// Joins every run of adjacent free blocks (DOS does this while allocating).
fn coalesce(mem: &mut Memory, first: u16) -> Result<(), DosError> {
    let mut seg = first;
    loop {
        let mut m = read(mem, seg).ok_or(ERR_MCB_DESTROYED)?;
        if m.owner == 0 {
            while !m.last {
                let next = read(mem, m.end() as u16).ok_or(ERR_MCB_DESTROYED)?;
                if next.owner != 0 {
                    break;
                }
                m.size = (m.size as u32 + 1 + next.size as u32) as u16;
                m.last = next.last;
                write(mem, &m);
            }
        }
        if m.last {
            return Ok(());
        }
        seg = m.end() as u16;
    }
}

/// Cuts block `m` to `size` paragraphs, making the rest a free block.
fn split(mem: &mut Memory, m: &mut Mcb, size: u16) {
    if m.size <= size {
        return;
    }
    let rest = Mcb {
        seg: m.seg + 1 + size,
        last: m.last,
        owner: 0,
        size: m.size - size - 1,
    };
    write(mem, &rest);
    set_name(mem, rest.seg, b"");
    m.size = size;
    m.last = false;
    write(mem, m);
}

/// Allocates `paras` paragraphs for `owner`: the block segment, or the error
/// and the largest block available in the areas searched.
pub fn alloc(
    mem: &mut Memory,
    first: u16,
    paras: u16,
    owner: u16,
    strategy: Strategy,
) -> Result<u16, (DosError, u16)> {
    coalesce(mem, first).map_err(|e| (e, 0))?;
    let chain = walk(mem, first).map_err(|e| (e, 0))?;
    let mut largest = 0;
    for &area in strategy.areas() {
        let free = chain
            .iter()
            .filter(|m| m.owner == 0 && ((m.seg >= UPPER) == (area == Area::High)));
        largest = largest.max(free.clone().map(|m| m.size).max().unwrap_or(0));
        let fits = free.filter(|m| m.size >= paras);
        let pick = match strategy.0 & 3 {
            0 => fits.min_by_key(|m| m.seg),
            1 => fits.min_by_key(|m| (m.size, m.seg)),
            _ => fits.max_by_key(|m| m.seg),
        };
        let Some(&found) = pick else { continue };
        let mut m = found;
        if strategy.0 & 3 == 2 && m.size > paras {
            // Take the top of the block; the bottom stays free.
            let low = m.size - paras - 1;
            let mut lowm = m;
            split(mem, &mut lowm, low);
            let mut hi = read(mem, lowm.end() as u16).unwrap();
            hi.owner = owner;
            write(mem, &hi);
            return Ok(hi.block());
        }
        split(mem, &mut m, paras);
        m.owner = owner;
        write(mem, &m);
        return Ok(m.block());
    }
    Err((ERR_NO_MEMORY, largest))
}

/// Finds the MCB of a block segment, checking that it is in the chain.
fn find(mem: &Memory, first: u16, block: u16) -> Result<Mcb, DosError> {
    let chain = walk(mem, first)?;
    chain
        .into_iter()
        .find(|m| m.block() == block)
        .ok_or(ERR_BAD_BLOCK)
}

/// Frees a block (49h).
pub fn free(mem: &mut Memory, first: u16, block: u16) -> Result<(), DosError> {
    let mut m = find(mem, first, block)?;
    m.owner = 0;
    write(mem, &m);
    Ok(())
}

/// Resizes a block (4Ah). On failure returns the error and the largest size
/// the block could have.
pub fn resize(mem: &mut Memory, first: u16, block: u16, paras: u16) -> Result<(), (DosError, u16)> {
    let mut m = find(mem, first, block).map_err(|e| (e, 0))?;
    if paras <= m.size {
        split(mem, &mut m, paras);
        coalesce(mem, first).map_err(|e| (e, 0))?;
        return Ok(());
    }
    // Grow into the free blocks that follow.
    let mut avail = m.size as u32;
    let mut last = m.last;
    let mut next_seg = m.end();
    while !last {
        let Some(n) = read(mem, next_seg as u16) else {
            return Err((ERR_MCB_DESTROYED, 0));
        };
        if n.owner != 0 {
            break;
        }
        avail += 1 + n.size as u32;
        last = n.last;
        next_seg = n.end();
    }
    if avail < paras as u32 {
        return Err((ERR_NO_MEMORY, avail.min(0xFFFF) as u16));
    }
    m.size = avail as u16;
    m.last = last;
    write(mem, &m);
    split(mem, &mut m, paras);
    Ok(())
}

/// Frees every block owned by `owner` (program termination).
pub fn free_owned(mem: &mut Memory, first: u16, owner: u16) {
    if let Ok(chain) = walk(mem, first) {
        for mut m in chain {
            if m.owner == owner {
                m.owner = 0;
                write(mem, &m);
            }
        }
    }
    let _ = coalesce(mem, first);
}

/// The largest free block in paragraphs.
pub fn largest_free(mem: &mut Memory, first: u16) -> u16 {
    let _ = coalesce(mem, first);
    walk(mem, first)
        .map(|c| {
            c.iter()
                .filter(|m| m.owner == 0 && m.seg < UPPER)
                .map(|m| m.size)
                .max()
                .unwrap_or(0)
        })
        .unwrap_or(0)
}

/// Sets up upper memory from `start` to `end` (segments) behind the
/// conventional arena ending at `conv_end`: a DOS-owned "SC" block spanning
/// the hole at `conv_end`, then one free UMB. Starts unlinked.
pub fn init_upper(mem: &mut Memory, conv_end: u16, start: u16, end: u16) {
    write(
        mem,
        &Mcb {
            seg: conv_end,
            last: false,
            owner: OWNER_DOS,
            size: start - conv_end - 1,
        },
    );
    set_name(mem, conv_end, b"SC");
    init(mem, start, end);
}

/// Links (or unlinks) upper memory: the block that ends where the
/// conventional arena ends becomes 'M' (or 'Z').
pub fn link_upper(mem: &mut Memory, first: u16, conv_end: u16, on: bool) -> Result<(), DosError> {
    let mut seg = first;
    loop {
        let mut m = read(mem, seg).ok_or(ERR_MCB_DESTROYED)?;
        if m.end() == conv_end as u32 {
            m.last = !on;
            write(mem, &m);
            return Ok(());
        }
        if m.last || m.end() > conv_end as u32 {
            return Err(ERR_MCB_DESTROYED);
        }
        seg = m.end() as u16;
    }
}

/// Whether upper memory is linked into the chain.
pub fn upper_linked(mem: &Memory, first: u16) -> bool {
    walk(mem, first).is_ok_and(|c| c.iter().any(|m| m.seg >= UPPER))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(mem: &Memory) -> Vec<(u16, bool, u16, u16)> {
        walk(mem, 0x100)
            .unwrap()
            .iter()
            .map(|m| (m.seg, m.last, m.owner, m.size))
            .collect()
    }

    #[test]
    fn alloc_split_free_merge() {
        let mut mem = Memory::new();
        init(&mut mem, 0x100, 0xA000);
        assert_eq!(chain(&mem), vec![(0x100, true, 0, 0x9EFF)]);
        let a = alloc(&mut mem, 0x100, 0x10, 0x50, Strategy::FIRST).unwrap();
        assert_eq!(a, 0x101);
        let b = alloc(&mut mem, 0x100, 0x20, 0x50, Strategy::FIRST).unwrap();
        assert_eq!(b, 0x112);
        assert_eq!(
            chain(&mem),
            vec![
                (0x100, false, 0x50, 0x10),
                (0x111, false, 0x50, 0x20),
                (0x132, true, 0, 0x9ECD)
            ]
        );
        free(&mut mem, 0x100, a).unwrap();
        assert_eq!(free(&mut mem, 0x100, 0x105), Err(ERR_BAD_BLOCK));
        let c = alloc(&mut mem, 0x100, 0x8, 0x60, Strategy::BEST).unwrap();
        assert_eq!(c, 0x101);
        let d = alloc(&mut mem, 0x100, 0x8, 0x60, Strategy::LAST).unwrap();
        assert_eq!(d, 0xA000 - 8);
        assert_eq!(
            alloc(&mut mem, 0x100, 0xF000, 1, Strategy::FIRST),
            Err((ERR_NO_MEMORY, 0x9ECD - 9))
        );
    }

    #[test]
    fn resize_grows_into_free_space_and_reports_the_maximum() {
        let mut mem = Memory::new();
        init(&mut mem, 0x100, 0x1000);
        let a = alloc(&mut mem, 0x100, 0x10, 0x50, Strategy::FIRST).unwrap();
        resize(&mut mem, 0x100, a, 0x100).unwrap();
        assert_eq!(read(&mem, 0x100).unwrap().size, 0x100);
        assert_eq!(
            resize(&mut mem, 0x100, a, 0x2000),
            Err((ERR_NO_MEMORY, 0xEFF))
        );
        resize(&mut mem, 0x100, a, 0x8).unwrap();
        assert_eq!(largest_free(&mut mem, 0x100), 0xEFF - 9);
        free_owned(&mut mem, 0x100, 0x50);
        assert_eq!(chain(&mem), vec![(0x100, true, 0, 0xEFF)]);
    }

    #[test]
    fn upper_memory_links_and_allocates() {
        let mut mem = Memory::new();
        init(&mut mem, 0x100, 0x9FFF);
        init_upper(&mut mem, 0x9FFF, 0xD000, 0xE000);
        assert!(!upper_linked(&mem, 0x100));
        let high_first = Strategy::from_code(0x80).unwrap();
        // Unlinked: upper memory is not searched.
        assert_eq!(
            alloc(&mut mem, 0x100, 0x10, 0x50, Strategy(0x40)),
            Err((ERR_NO_MEMORY, 0))
        );
        link_upper(&mut mem, 0x100, 0x9FFF, true).unwrap();
        assert!(upper_linked(&mem, 0x100));
        assert_eq!(alloc(&mut mem, 0x100, 0x10, 0x50, high_first), Ok(0xD001));
        assert_eq!(
            alloc(&mut mem, 0x100, 0x10, 0x50, Strategy::FIRST),
            Ok(0x101)
        );
        assert_eq!(largest_free(&mut mem, 0x100), 0x9FFF - 0x112);
        link_upper(&mut mem, 0x100, 0x9FFF, false).unwrap();
        assert_eq!(walk(&mem, 0x100).unwrap().last().unwrap().seg, 0x111);
        assert_eq!(Strategy::from_code(0xC0), None);
    }

    #[test]
    fn broken_chain_is_reported() {
        let mut mem = Memory::new();
        init(&mut mem, 0x100, 0x1000);
        let a = alloc(&mut mem, 0x100, 0x10, 0x50, Strategy::FIRST).unwrap();
        mem.write8(0x1110, b'X');
        assert_eq!(walk(&mem, 0x100), Err(ERR_MCB_DESTROYED));
        assert_eq!(free(&mut mem, 0x100, a), Err(ERR_MCB_DESTROYED));
    }
}
