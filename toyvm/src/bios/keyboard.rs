//! The keyboard BIOS: INT 09h's translation of scan codes (set 1) into the
//! type-ahead buffer and shift flags of the BIOS data area, and INT 16h.
//!
//! Owns the translation tables and the buffer discipline. It must not read
//! the keyboard controller itself: the INT 09h stub does `IN AL,60h` in guest
//! code so the device sees the read at the exact dispatch.

use super::bda::{self, KB_END, KB_FLAGS1, KB_FLAGS2, KB_FLAGS3, KB_HEAD, KB_START, KB_TAIL};
use super::hostcall::{self, Outcome, Regs};
use super::Bios;
use crate::cpu::Cpu;
use crate::machine::Machine;

/// (normal, shift) ASCII for scan codes 00h-39h; 0 = no ASCII.
const ASCII: [(u8, u8); 0x3A] = [
    (0, 0),
    (0x1B, 0x1B),
    (b'1', b'!'),
    (b'2', b'@'),
    (b'3', b'#'),
    (b'4', b'$'),
    (b'5', b'%'),
    (b'6', b'^'),
    (b'7', b'&'),
    (b'8', b'*'),
    (b'9', b'('),
    (b'0', b')'),
    (b'-', b'_'),
    (b'=', b'+'),
    (0x08, 0x08),
    (0x09, 0),
    (b'q', b'Q'),
    (b'w', b'W'),
    (b'e', b'E'),
    (b'r', b'R'),
    (b't', b'T'),
    (b'y', b'Y'),
    (b'u', b'U'),
    (b'i', b'I'),
    (b'o', b'O'),
    (b'p', b'P'),
    (b'[', b'{'),
    (b']', b'}'),
    (0x0D, 0x0D),
    (0, 0), // ctrl
    (b'a', b'A'),
    (b's', b'S'),
    (b'd', b'D'),
    (b'f', b'F'),
    (b'g', b'G'),
    (b'h', b'H'),
    (b'j', b'J'),
    (b'k', b'K'),
    (b'l', b'L'),
    (b';', b':'),
    (b'\'', b'"'),
    (b'`', b'~'),
    (0, 0), // left shift
    (b'\\', b'|'),
    (b'z', b'Z'),
    (b'x', b'X'),
    (b'c', b'C'),
    (b'v', b'V'),
    (b'b', b'B'),
    (b'n', b'N'),
    (b'm', b'M'),
    (b',', b'<'),
    (b'.', b'>'),
    (b'/', b'?'),
    (0, 0), // right shift
    (b'*', b'*'),
    (0, 0), // alt
    (b' ', b' '),
];

/// Keypad digits with num lock on (47h-53h).
const KEYPAD: &[u8; 13] = b"789-456+1230.";

const RSHIFT: u8 = 0x01;
const LSHIFT: u8 = 0x02;
const CTRL: u8 = 0x04;
const ALT: u8 = 0x08;
const NUMLOCK: u8 = 0x20;
const CAPSLOCK: u8 = 0x40;

/// Puts a key (scan << 8 | ascii) into the type-ahead buffer; false when full.
pub fn push_key(m: &mut Machine, key: u16) -> bool {
    let start = bda::rd16(&m.mem, KB_START);
    let end = bda::rd16(&m.mem, KB_END);
    let tail = bda::rd16(&m.mem, KB_TAIL);
    let mut next = tail + 2;
    if next >= end {
        next = start;
    }
    if next == bda::rd16(&m.mem, KB_HEAD) {
        return false;
    }
    bda::wr16(&mut m.mem, 0x400 + tail as u32, key);
    bda::wr16(&mut m.mem, KB_TAIL, next);
    true
}

/// The next key without removing it.
pub fn peek_key(m: &Machine) -> Option<u16> {
    let head = bda::rd16(&m.mem, KB_HEAD);
    (head != bda::rd16(&m.mem, KB_TAIL)).then(|| bda::rd16(&m.mem, 0x400 + head as u32))
}

/// Removes and returns the next key.
pub fn pop_key(m: &mut Machine) -> Option<u16> {
    let k = peek_key(m)?;
    let head = bda::rd16(&m.mem, KB_HEAD);
    let mut next = head + 2;
    if next >= bda::rd16(&m.mem, KB_END) {
        next = bda::rd16(&m.mem, KB_START);
    }
    bda::wr16(&mut m.mem, KB_HEAD, next);
    Some(k)
}

/// INT 09h: one byte from the controller (AL).
pub fn scancode(m: &mut Machine, bios: &mut Bios, byte: u8) {
    if byte == 0xE0 || byte == 0xE1 {
        bios.kbd_e0 = byte == 0xE0;
        return;
    }
    let e0 = std::mem::take(&mut bios.kbd_e0);
    let make = byte & 0x80 == 0;
    let sc = byte & 0x7F;
    let mut f1 = bda::rd8(&m.mem, KB_FLAGS1);
    let mut f2 = bda::rd8(&m.mem, KB_FLAGS2);
    let modifier = match sc {
        0x2A if !e0 => Some(LSHIFT),
        0x36 if !e0 => Some(RSHIFT),
        0x1D => Some(CTRL),
        0x38 => Some(ALT),
        _ => None,
    };
    if let Some(bit) = modifier {
        if make {
            f1 |= bit;
        } else {
            f1 &= !bit;
        }
        if !e0 && bit == CTRL {
            f2 = if make { f2 | 0x01 } else { f2 & !0x01 };
        }
        if !e0 && bit == ALT {
            f2 = if make { f2 | 0x02 } else { f2 & !0x02 };
        }
        bda::wr8(&mut m.mem, KB_FLAGS1, f1);
        bda::wr8(&mut m.mem, KB_FLAGS2, f2);
        return;
    }
    let toggle = match sc {
        0x3A => Some((CAPSLOCK, 0x40)),
        0x45 if !e0 => Some((NUMLOCK, 0x20)),
        0x46 => Some((0x10, 0x10)),
        _ => None,
    };
    if let Some((bit, held)) = toggle {
        if make && f2 & held == 0 {
            f1 ^= bit;
        }
        f2 = if make { f2 | held } else { f2 & !held };
        bda::wr8(&mut m.mem, KB_FLAGS1, f1);
        bda::wr8(&mut m.mem, KB_FLAGS2, f2);
        return;
    }
    if !make {
        return;
    }
    if let Some(key) = translate(sc, e0, f1) {
        push_key(m, key);
    }
    let f3 = bda::rd8(&m.mem, KB_FLAGS3);
    bda::wr8(&mut m.mem, KB_FLAGS3, f3 & !0x03);
}

/// The buffer word of a make code under the given shift state.
fn translate(sc: u8, e0: bool, f1: u8) -> Option<u16> {
    let shift = f1 & (LSHIFT | RSHIFT) != 0;
    let ctrl = f1 & CTRL != 0;
    let alt = f1 & ALT != 0;
    let w = |scan: u8, ascii: u8| Some((scan as u16) << 8 | ascii as u16);
    if e0 {
        return match sc {
            0x1C => w(0xE0, if ctrl { 0x0A } else { 0x0D }),
            0x35 => w(0xE0, b'/'),
            0x47..=0x53 => {
                if alt {
                    w(sc + 0x50, 0)
                } else if ctrl {
                    w(ctrl_ext(sc), 0xE0)
                } else {
                    w(sc, 0xE0)
                }
            }
            _ => None,
        };
    }
    match sc {
        0x3B..=0x44 => {
            let n = sc - 0x3B;
            w(
                if alt {
                    0x68 + n
                } else if ctrl {
                    0x5E + n
                } else if shift {
                    0x54 + n
                } else {
                    sc
                },
                0,
            )
        }
        0x57 | 0x58 => {
            let n = sc - 0x57;
            w(
                if alt {
                    0x8B + n
                } else if ctrl {
                    0x89 + n
                } else if shift {
                    0x87 + n
                } else {
                    0x85 + n
                },
                0,
            )
        }
        0x47..=0x53 => {
            let digit = KEYPAD[(sc - 0x47) as usize];
            if matches!(sc, 0x4A | 0x4E) {
                return w(sc, digit);
            }
            let num = (f1 & NUMLOCK != 0) != shift;
            if alt {
                None
            } else if ctrl {
                w(ctrl_ext(sc), 0)
            } else if num {
                w(sc, digit)
            } else {
                w(sc, 0)
            }
        }
        0x01..=0x39 => {
            let (lo, hi) = ASCII[sc as usize];
            if lo == 0 && hi == 0 {
                return None;
            }
            if alt {
                return w(alt_scan(sc), 0);
            }
            if ctrl {
                return match lo {
                    b'a'..=b'z' => w(sc, lo & 0x1F),
                    0x0D => w(sc, 0x0A),
                    0x08 => w(sc, 0x7F),
                    0x1B => w(sc, 0x1B),
                    b'[' => w(sc, 0x1B),
                    b'\\' => w(sc, 0x1C),
                    b']' => w(sc, 0x1D),
                    b'-' => w(sc, 0x1F),
                    b'2' => w(0x03, 0),
                    b'6' => w(sc, 0x1E),
                    b' ' => w(sc, b' '),
                    _ => None,
                };
            }
            let letter = lo.is_ascii_lowercase();
            let upper = if letter {
                shift != (f1 & CAPSLOCK != 0)
            } else {
                shift
            };
            if sc == 0x0F && shift {
                return w(0x0F, 0);
            }
            w(sc, if upper { hi } else { lo })
        }
        _ => None,
    }
}

fn ctrl_ext(sc: u8) -> u8 {
    match sc {
        0x47 => 0x77,
        0x48 => 0x8D,
        0x49 => 0x84,
        0x4B => 0x73,
        0x4D => 0x74,
        0x4F => 0x75,
        0x50 => 0x91,
        0x51 => 0x76,
        0x52 => 0x92,
        0x53 => 0x93,
        _ => sc,
    }
}

fn alt_scan(sc: u8) -> u8 {
    match sc {
        0x02..=0x0D => sc + 0x76,
        _ => sc,
    }
}

/// Converts an enhanced key for the non-enhanced functions (AH=00h/01h):
/// E0h ASCII becomes 0, keys only an enhanced keyboard has are dropped.
fn classic(key: u16) -> Option<u16> {
    let (scan, ascii) = ((key >> 8) as u8, key as u8);
    if scan == 0xE0 {
        return Some((if ascii == b'/' { 0x35 } else { 0x1C }) << 8 | ascii as u16);
    }
    if scan > 0x84 {
        return None;
    }
    Some(if ascii == 0xE0 { key & 0xFF00 } else { key })
}

/// INT 16h. `None` when the function is unknown.
pub fn int16(cpu: &mut Cpu, m: &mut Machine, bios: &mut Bios) -> Option<Outcome> {
    let _ = bios;
    match cpu.ah() {
        0x00 | 0x10 => loop {
            match pop_key(m) {
                Some(k) if cpu.ah() == 0x00 => {
                    if let Some(k) = classic(k) {
                        cpu.set_ax(k);
                        return Some(Outcome::Continue);
                    }
                }
                Some(k) => {
                    cpu.set_ax(k);
                    return Some(Outcome::Continue);
                }
                None => {
                    hostcall::retry(cpu);
                    return Some(Outcome::Wait { until: None });
                }
            }
        },
        0x01 | 0x11 => {
            let mut k = peek_key(m);
            if cpu.ah() == 0x01 {
                // Drop keys the classic interface cannot report.
                while let Some(key) = k {
                    if classic(key).is_some() {
                        break;
                    }
                    pop_key(m);
                    k = peek_key(m);
                }
                k = k.and_then(classic);
            }
            match k {
                Some(key) => {
                    cpu.set_ax(key);
                    hostcall::set_zf(cpu, m, false);
                }
                None => hostcall::set_zf(cpu, m, true),
            }
            Some(Outcome::Continue)
        }
        0x02 => {
            cpu.set_al(bda::rd8(&m.mem, KB_FLAGS1));
            Some(Outcome::Continue)
        }
        0x12 => {
            let f1 = bda::rd8(&m.mem, KB_FLAGS1);
            let f2 = bda::rd8(&m.mem, KB_FLAGS2);
            cpu.set_al(f1);
            cpu.set_ah(
                (f2 & 0x73)
                    | if f1 & CTRL != 0 { 0x04 } else { 0 }
                    | if f1 & ALT != 0 { 0x08 } else { 0 },
            );
            Some(Outcome::Continue)
        }
        0x03 | 0x04 => Some(Outcome::Continue),
        0x05 => {
            let ok = push_key(m, cpu.cx());
            cpu.set_al(!ok as u8);
            Some(Outcome::Continue)
        }
        0x09 => {
            cpu.set_al(0x20);
            Some(Outcome::Continue)
        }
        0x0A => {
            cpu.set_bx(0x41AB);
            Some(Outcome::Continue)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn translation() {
        assert_eq!(translate(0x1E, false, 0), Some(0x1E61));
        assert_eq!(translate(0x1E, false, LSHIFT), Some(0x1E41));
        assert_eq!(translate(0x1E, false, CAPSLOCK), Some(0x1E41));
        assert_eq!(translate(0x1E, false, CTRL), Some(0x1E01));
        assert_eq!(translate(0x1E, false, ALT), Some(0x1E00));
        assert_eq!(translate(0x1C, false, 0), Some(0x1C0D));
        assert_eq!(translate(0x01, false, 0), Some(0x011B));
        assert_eq!(translate(0x48, false, 0), Some(0x4800));
        assert_eq!(translate(0x48, true, 0), Some(0x48E0));
        assert_eq!(translate(0x3B, false, 0), Some(0x3B00));
        assert_eq!(translate(0x39, false, 0), Some(0x3920));
        assert_eq!(classic(0x48E0), Some(0x4800));
        assert_eq!(classic(0x8500), None);
    }
}
