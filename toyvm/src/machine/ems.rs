//! The EMS 4.0 driver (what EMM386 provides): logical 16 KiB pages owned by
//! handles, mapped into a 64 KiB page frame at E000h.
//!
//! Owns page storage, handles and the mapping. Mapping copies: the frame is
//! ordinary RAM, and (re)mapping a physical page writes the frame's bytes
//! back to the page that was there and copies the new page in, so the memory
//! hot path knows nothing of EMS. Not modelled: the same logical page mapped
//! into two physical pages at once does not alias (each copy diverges), and
//! there are no mappable pages outside the frame (no conventional-memory
//! backfill). It must not touch memory outside the frame, except for the
//! move/exchange function's conventional-memory side.

use crate::bios::hostcall::Regs;
use crate::bus::Bus;
use crate::cpu::{seg, Cpu};
use crate::machine::{lin, Machine};

/// Segment of the page frame.
pub const FRAME_SEG: u16 = 0xE000;
/// Bytes per page.
pub const PAGE: usize = 0x4000;
/// Logical pages the driver offers (8 MiB).
pub const TOTAL_PAGES: u16 = 512;
const MAX_HANDLES: usize = 255;

#[derive(Clone, Debug, Default)]
struct Handle {
    pages: Vec<Vec<u8>>,
    name: [u8; 8],
    saved_map: Option<[Option<(u16, u16)>; 4]>,
}

/// EMS driver state.
#[derive(Clone, Debug)]
pub struct Ems {
    /// Handle 0 is the system handle (always allocated, zero pages).
    handles: Vec<Option<Handle>>,
    /// What each of the 4 physical pages shows: (handle, logical page).
    map: [Option<(u16, u16)>; 4],
}

impl Default for Ems {
    fn default() -> Self {
        Self::new()
    }
}

fn frame_addr(p: usize) -> usize {
    lin(FRAME_SEG, 0) as usize + p * PAGE
}

impl Ems {
    pub fn new() -> Ems {
        let mut handles = vec![None; MAX_HANDLES];
        handles[0] = Some(Handle::default());
        Ems {
            handles,
            map: [None; 4],
        }
    }

    fn allocated_pages(&self) -> u16 {
        self.handles
            .iter()
            .flatten()
            .map(|h| h.pages.len() as u16)
            .sum()
    }

    pub fn free_pages(&self) -> u16 {
        TOTAL_PAGES - self.allocated_pages()
    }

    fn handle_mut(&mut self, h: u16) -> Result<&mut Handle, u8> {
        self.handles
            .get_mut(h as usize)
            .and_then(Option::as_mut)
            .ok_or(0x83)
    }

    /// Writes every mapped frame page back to its storage.
    pub fn sync_out(&mut self, ram: &[u8]) {
        for p in 0..4 {
            if let Some((h, l)) = self.map[p] {
                if let Some(Some(hd)) = self.handles.get_mut(h as usize) {
                    if let Some(pg) = hd.pages.get_mut(l as usize) {
                        pg.copy_from_slice(&ram[frame_addr(p)..frame_addr(p) + PAGE]);
                    }
                }
            }
        }
    }

    /// Maps a logical page (or `None` to unmap) into physical page `p`.
    pub fn map_page(&mut self, ram: &mut [u8], p: usize, to: Option<(u16, u16)>) -> Result<(), u8> {
        if p >= 4 {
            return Err(0x8B);
        }
        if let Some((h, l)) = to {
            let hd = self.handle_mut(h)?;
            if l as usize >= hd.pages.len() {
                return Err(0x8A);
            }
        }
        self.sync_out(ram);
        self.map[p] = to;
        if let Some((h, l)) = to {
            let pg = &self.handles[h as usize].as_ref().unwrap().pages[l as usize];
            ram[frame_addr(p)..frame_addr(p) + PAGE].copy_from_slice(pg);
        }
        Ok(())
    }

    pub fn allocate(&mut self, pages: u16, allow_zero: bool) -> Result<u16, u8> {
        if pages == 0 && !allow_zero {
            return Err(0x89);
        }
        if pages > TOTAL_PAGES {
            return Err(0x87);
        }
        if pages > self.free_pages() {
            return Err(0x88);
        }
        let slot = self
            .handles
            .iter()
            .position(Option::is_none)
            .ok_or(0x85u8)?;
        self.handles[slot] = Some(Handle {
            pages: vec![vec![0; PAGE]; pages as usize],
            ..Handle::default()
        });
        Ok(slot as u16)
    }

    pub fn deallocate(&mut self, ram: &[u8], h: u16) -> Result<(), u8> {
        self.handle_mut(h)?;
        if self.handles[h as usize]
            .as_ref()
            .unwrap()
            .saved_map
            .is_some()
        {
            return Err(0x86);
        }
        self.sync_out(ram);
        for m in self.map.iter_mut() {
            if matches!(m, Some((mh, _)) if *mh == h) {
                *m = None;
            }
        }
        if h == 0 {
            self.handles[0].as_mut().unwrap().pages.clear();
        } else {
            self.handles[h as usize] = None;
        }
        Ok(())
    }

    pub fn reallocate(&mut self, ram: &[u8], h: u16, pages: u16) -> Result<(), u8> {
        self.sync_out(ram);
        let cur = self.handle_mut(h)?.pages.len() as u16;
        if pages > cur && pages - cur > self.free_pages() {
            return Err(0x88);
        }
        self.handle_mut(h)?
            .pages
            .resize(pages as usize, vec![0; PAGE]);
        for m in self.map.iter_mut() {
            if matches!(m, Some((mh, l)) if *mh == h && *l >= pages) {
                *m = None;
            }
        }
        Ok(())
    }

    fn open_handles(&self) -> u16 {
        self.handles.iter().flatten().count() as u16
    }
}

/// Encodes a mapping for the save/restore-map structures (4 bytes per page).
fn encode_map(map: &[Option<(u16, u16)>; 4]) -> Vec<u8> {
    let mut v = Vec::with_capacity(16);
    for m in map {
        let (h, l) = m.unwrap_or((0xFFFF, 0xFFFF));
        v.extend_from_slice(&h.to_le_bytes());
        v.extend_from_slice(&l.to_le_bytes());
    }
    v
}

fn decode_map(b: &[u8]) -> [Option<(u16, u16)>; 4] {
    let mut out = [None; 4];
    for (p, o) in out.iter_mut().enumerate() {
        let h = u16::from_le_bytes([b[p * 4], b[p * 4 + 1]]);
        let l = u16::from_le_bytes([b[p * 4 + 2], b[p * 4 + 3]]);
        *o = (h != 0xFFFF).then_some((h, l));
    }
    out
}

fn restore_map(m: &mut Machine, map: [Option<(u16, u16)>; 4]) -> Result<(), u8> {
    for (p, to) in map.iter().enumerate() {
        let (ems, ram) = (&mut m.ems, m.mem.ram_mut());
        ems.map_page(ram, p, *to)?;
    }
    Ok(())
}

/// INT 67h: function in AH; status in AH (0 = success). Returns `false` for
/// a function this driver does not implement (AH = 84h is returned too).
pub fn service(cpu: &mut Cpu, m: &mut Machine) -> bool {
    let r: Result<(), u8> = (|| {
        match cpu.ah() {
            0x40 => {}
            0x41 => cpu.set_bx(FRAME_SEG),
            0x42 => {
                cpu.set_bx(m.ems.free_pages());
                cpu.set_dx(TOTAL_PAGES);
            }
            0x43 => {
                let h = m.ems.allocate(cpu.bx(), false)?;
                cpu.set_dx(h);
            }
            0x44 => {
                let l = cpu.bx();
                let to = (l != 0xFFFF).then_some((cpu.dx(), l));
                let (ems, ram) = (&mut m.ems, m.mem.ram_mut());
                ems.map_page(ram, cpu.al() as usize, to)?;
            }
            0x45 => {
                let (ems, ram) = (&mut m.ems, m.mem.ram());
                ems.deallocate(ram, cpu.dx())?;
            }
            0x46 => cpu.set_al(0x40),
            0x47 => {
                let map = m.ems.map;
                let hd = m.ems.handle_mut(cpu.dx())?;
                if hd.saved_map.is_some() {
                    return Err(0x8D);
                }
                hd.saved_map = Some(map);
            }
            0x48 => {
                let hd = m.ems.handle_mut(cpu.dx())?;
                let map = hd.saved_map.take().ok_or(0x8Eu8)?;
                restore_map(m, map)?;
            }
            0x4B => cpu.set_bx(m.ems.open_handles()),
            0x4C => {
                let n = m.ems.handle_mut(cpu.dx())?.pages.len() as u16;
                cpu.set_bx(n);
            }
            0x4D => {
                let (es, di) = (cpu.es(), cpu.di());
                let mut i = 0u16;
                for (h, hd) in m.ems.handles.clone().iter().enumerate() {
                    if let Some(hd) = hd {
                        m.wr16(es, di.wrapping_add(i * 4), h as u16);
                        m.wr16(es, di.wrapping_add(i * 4 + 2), hd.pages.len() as u16);
                        i += 1;
                    }
                }
                cpu.set_bx(i);
            }
            0x4E => match cpu.al() {
                0x00 | 0x02 => {
                    if cpu.al() == 0x02 {
                        let (ds, si) = (cpu.ds(), cpu.si());
                        let b: Vec<u8> = (0..16).map(|i| m.rd8(ds, si.wrapping_add(i))).collect();
                        let map = decode_map(&b);
                        let (es, di) = (cpu.es(), cpu.di());
                        let cur = encode_map(&m.ems.map);
                        for (i, &v) in cur.iter().enumerate() {
                            m.wr8(es, di.wrapping_add(i as u16), v);
                        }
                        restore_map(m, map)?;
                    } else {
                        let (es, di) = (cpu.es(), cpu.di());
                        for (i, v) in encode_map(&m.ems.map).into_iter().enumerate() {
                            m.wr8(es, di.wrapping_add(i as u16), v);
                        }
                    }
                }
                0x01 => {
                    let (ds, si) = (cpu.ds(), cpu.si());
                    let b: Vec<u8> = (0..16).map(|i| m.rd8(ds, si.wrapping_add(i))).collect();
                    restore_map(m, decode_map(&b))?;
                }
                0x03 => cpu.set_al(16),
                _ => return Err(0x8F),
            },
            0x50 => {
                let (ds, si) = (cpu.ds(), cpu.si());
                for i in 0..cpu.cx() {
                    let l = m.rd16(ds, si.wrapping_add(i * 4));
                    let p = m.rd16(ds, si.wrapping_add(i * 4 + 2));
                    let p = if cpu.al() == 1 {
                        (p.wrapping_sub(FRAME_SEG) / 0x400) as usize
                    } else {
                        p as usize
                    };
                    let to = (l != 0xFFFF).then_some((cpu.dx(), l));
                    let (ems, ram) = (&mut m.ems, m.mem.ram_mut());
                    ems.map_page(ram, p, to)?;
                }
            }
            0x51 => {
                let (ems, ram) = (&mut m.ems, m.mem.ram());
                ems.reallocate(ram, cpu.dx(), cpu.bx())?;
            }
            0x53 => {
                let (es, di, ds, si) = (cpu.es(), cpu.di(), cpu.ds(), cpu.si());
                match cpu.al() {
                    0 => {
                        let name = m.ems.handle_mut(cpu.dx())?.name;
                        for (i, &c) in name.iter().enumerate() {
                            m.wr8(es, di.wrapping_add(i as u16), c);
                        }
                    }
                    1 => {
                        let mut name = [0u8; 8];
                        for (i, c) in name.iter_mut().enumerate() {
                            *c = m.rd8(ds, si.wrapping_add(i as u16));
                        }
                        m.ems.handle_mut(cpu.dx())?.name = name;
                    }
                    _ => return Err(0x8F),
                }
            }
            0x57 => move_region(cpu, m)?,
            0x58 => match cpu.al() {
                0 => {
                    let (es, di) = (cpu.es(), cpu.di());
                    for p in 0..4u16 {
                        m.wr16(es, di.wrapping_add(p * 4), FRAME_SEG + p * 0x400);
                        m.wr16(es, di.wrapping_add(p * 4 + 2), p);
                    }
                    cpu.set_cx(4);
                }
                1 => cpu.set_cx(4),
                _ => return Err(0x8F),
            },
            0x59 if cpu.al() == 1 => {
                cpu.set_bx(m.ems.free_pages());
                cpu.set_dx(TOTAL_PAGES);
            }
            0x5A => {
                let h = m.ems.allocate(cpu.bx(), true)?;
                cpu.set_dx(h);
            }
            _ => return Err(0x84),
        }
        Ok(())
    })();
    match r {
        Ok(()) => {
            cpu.set_ah(0);
            true
        }
        Err(code) => {
            cpu.set_ah(code);
            code != 0x84
        }
    }
}

/// Function 57h (AL=0 move, AL=1 exchange): DS:SI -> {len u32, src type u8,
/// src handle u16, src off u16, src seg/page u16, dst type u8, dst handle,
/// dst off, dst seg/page}.
fn move_region(cpu: &Cpu, m: &mut Machine) -> Result<(), u8> {
    let (ds, si) = (cpu.sregs[seg::DS], cpu.si());
    let len = m.rd16(ds, si) as u32 | (m.rd16(ds, si.wrapping_add(2)) as u32) << 16;
    if len > 0x100000 {
        return Err(0x96);
    }
    let side = |m: &mut Machine, o: u16| {
        (
            m.rd8(ds, si.wrapping_add(o)),
            m.rd16(ds, si.wrapping_add(o + 1)),
            m.rd16(ds, si.wrapping_add(o + 3)),
            m.rd16(ds, si.wrapping_add(o + 5)),
        )
    };
    let src = side(m, 4);
    let dst = side(m, 11);
    {
        let (ems, ram) = (&mut m.ems, m.mem.ram());
        ems.sync_out(ram);
    }
    // Read every source byte first (exchange needs both sides).
    let get = |m: &mut Machine, (t, h, off, sp): (u8, u16, u16, u16), i: u32| -> Result<u8, u8> {
        if t == 0 {
            Ok(m.read8(lin(sp, 0) + off as u32 + i))
        } else {
            let pos = off as usize + i as usize;
            let hd = m.ems.handle_mut(h)?;
            let page = sp as usize + pos / PAGE;
            hd.pages.get(page).map(|p| p[pos % PAGE]).ok_or(0x93)
        }
    };
    let put =
        |m: &mut Machine, (t, h, off, sp): (u8, u16, u16, u16), i: u32, v: u8| -> Result<(), u8> {
            if t == 0 {
                m.write8(lin(sp, 0) + off as u32 + i, v);
                Ok(())
            } else {
                let pos = off as usize + i as usize;
                let hd = m.ems.handle_mut(h)?;
                let page = sp as usize + pos / PAGE;
                let p = hd.pages.get_mut(page).ok_or(0x93u8)?;
                p[pos % PAGE] = v;
                Ok(())
            }
        };
    let a: Vec<u8> = (0..len).map(|i| get(m, src, i)).collect::<Result<_, _>>()?;
    let b: Vec<u8> = if cpu.al() == 1 {
        (0..len).map(|i| get(m, dst, i)).collect::<Result<_, _>>()?
    } else {
        Vec::new()
    };
    for (i, &v) in a.iter().enumerate() {
        put(m, dst, i as u32, v)?;
    }
    for (i, &v) in b.iter().enumerate() {
        put(m, src, i as u32, v)?;
    }
    // Refresh the frame from storage (expanded-side writes may be mapped).
    let map = m.ems.map;
    m.ems.map = [None; 4];
    restore_map(m, map)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapping_copies_pages_in_and_out() {
        let mut ram = vec![0u8; 0x100000];
        let mut e = Ems::new();
        let h = e.allocate(2, false).unwrap();
        e.map_page(&mut ram, 0, Some((h, 0))).unwrap();
        ram[frame_addr(0)] = 0xAA;
        e.map_page(&mut ram, 0, Some((h, 1))).unwrap();
        assert_eq!(ram[frame_addr(0)], 0);
        e.map_page(&mut ram, 1, Some((h, 0))).unwrap();
        assert_eq!(ram[frame_addr(1)], 0xAA);
        assert_eq!(e.map_page(&mut ram, 0, Some((h, 2))), Err(0x8A));
        assert_eq!(e.map_page(&mut ram, 4, Some((h, 0))), Err(0x8B));
        assert_eq!(e.free_pages(), TOTAL_PAGES - 2);
        e.deallocate(&ram, h).unwrap();
        assert_eq!(e.free_pages(), TOTAL_PAGES);
        assert_eq!(e.allocate(TOTAL_PAGES + 1, false), Err(0x87));
    }
}
