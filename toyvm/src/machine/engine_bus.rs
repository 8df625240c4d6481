//! The DOS machine as an [`EngineBus`]: what a caching engine (L1) needs
//! beyond [`crate::bus::Bus`].
//!
//! Owns the glue only, computed from the machine's public state: the A20
//! mapping, which physical ranges may hold cached code (everything but the
//! VGA window, whose reads load the latches), the 4 KiB code-page write log
//! of `Memory`, port predictions for spin folds, and the attention rule that
//! keeps an engine's exits in step with the session's L0 engine. It must not
//! change what any device or memory access does.
//!
//! Port predictions (`port_stable_until`), each bounded by the devices' next
//! event so no obligation is ever skipped:
//! - 3DAh/3BAh (input status 1, when the VGA decodes it): the next dispatch
//!   where the bits under the mask (0: display disabled, 3: vertical
//!   retrace) change, from the raster timing. Reading resets the attribute
//!   flip-flop, which is idempotent.
//! - 61h: bit 4 (DRAM refresh toggle) flips every 18 PIT ticks; bits 3:0 are
//!   latched; bit 5 (channel 2 OUT) is not predicted (no promise when the
//!   mask includes it).
//! - 64h (8042 status): constant until the next device event.
//! - 201h (game port, no joystick): constant.
//! Every other port: no promise.
//!
//! Attention: a port write returns the engine to the session unless it is a
//! VGA register (no interrupt, no event date can follow from it); a pending
//! interrupt request does too.

use super::devices::pit::Pit;
use super::devices::vga::Vga;
use super::memory::{VGA_END, VGA_START};
use super::scheduler::{dispatch_of_tick, ticks_since, PIT_HZ};
use super::Machine;
use crate::bus::{EngineBus, Width};

impl EngineBus for Machine {
    #[inline(always)]
    fn phys(&self, addr: u32) -> u32 {
        self.mem.mask(addr)
    }

    fn code_cacheable(&self, start: u32, end: u32) -> bool {
        end <= VGA_START || start >= VGA_END
    }

    /// The VGA window: a read returns what `Vga::peek_mem` computes and
    /// loads the latches from the address read (nothing else), so a fetch's
    /// effect is the last in-window byte's read; what reads return depends
    /// on plane memory (CPU stores into the window) and the VGA registers
    /// (ports 3B0h-3DFh).
    #[inline(always)]
    fn code_device(&self, start: u32, end: u32) -> bool {
        start >= VGA_START && end <= VGA_END && start < end
    }

    fn peek8(&mut self, addr: u32) -> u8 {
        let a = self.mem.mask(addr);
        if (VGA_START..VGA_END).contains(&a) {
            self.dev.vga.peek_mem(a)
        } else {
            crate::bus::Bus::read8(self, addr)
        }
    }

    fn port_changes_device_code(&self, port: u16) -> bool {
        (0x3B0..=0x3DF).contains(&port)
    }

    fn mark_code(&mut self, start: u32, end: u32) {
        for page in (start >> 12)..=((end.max(start + 1) - 1) >> 12) {
            self.mem.set_code_page(page, true);
        }
    }

    fn interrupt_requested(&mut self) -> bool {
        self.dev.irq_pending()
    }

    fn unlogged_generation(&self) -> Option<u64> {
        Some(self.mem.raw_gen())
    }

    fn monitor_stores(&mut self, on: bool) {
        self.mem.set_code_log(!on);
    }

    fn clear_code_marks(&mut self) {
        for page in 0..(super::memory::RAM_SIZE as u32 >> 12) {
            self.mem.set_code_page(page, false);
        }
    }

    fn take_code_writes(&mut self, out: &mut Vec<u32>) {
        out.extend(self.mem.take_code_writes());
    }

    fn port_stable_until(&mut self, port: u16, w: Width, mask: u32, now: u64) -> Option<u64> {
        if w != Width::W8 {
            return None;
        }
        let mask = mask as u8;
        let t = match port {
            0x3DA | 0x3BA if self.dev.vga.claims(port) => {
                vga_status_stable_until(&self.dev.vga, mask, now)
            }
            0x61 if mask & 0x20 == 0 => {
                if mask & 0x10 == 0 {
                    u64::MAX
                } else {
                    let k = ticks_since(0, now, PIT_HZ) / 18;
                    dispatch_of_tick(0, (k + 1) * 18, PIT_HZ)
                }
            }
            0x64 => u64::MAX,
            0x201 => u64::MAX,
            _ => return None,
        };
        Some(t.min(self.dev.next_event()))
    }

    fn take_io_attention(&mut self) -> bool {
        // The session's L0 returns after every port write, and whenever an
        // interrupt is pending with IF=1. Writes are judged port by port in
        // `port_write_attention` (the store monitor asks); here: a pending
        // request (the engine checks IF itself; with IF=0 it only costs an
        // extra return).
        self.attention = false;
        self.dev.irq_pending()
    }

    /// VGA register writes cannot change interrupt state or event dates
    /// (the VGA raises no interrupt and is no event source here), so the
    /// session would decide nothing new after them. Nor can a PIT control
    /// word that only latches ([`Pit::latches_only`]), which programs that
    /// time themselves on the PIT write in a polling loop (the built-in
    /// PITLATCH: OUT 43h,0 then two IN 40h per poll). Every other write
    /// may.
    fn port_write_attention(&self, port: u16, byte: u8) -> bool {
        match port {
            0x3B4 | 0x3B5 | 0x3BA | 0x3C0..=0x3CF | 0x3D4 | 0x3D5 | 0x3D8 | 0x3D9 | 0x3DA => false,
            0x43 => !Pit::latches_only(byte),
            _ => true,
        }
    }
}

/// The first dispatch after `now` at which input status 1 under `mask`
/// (bits 0 and 3) reads differently, or `u64::MAX` if it never does under
/// the current timing. The status depends only on the raster line and on
/// whether the dot is past the displayed width, so it can change only at a
/// line start or at the end of a line's display: those are the candidates,
/// each checked with the VGA's own `input_status1`.
pub fn vga_status_stable_until(vga: &Vga, mask: u8, now: u64) -> u64 {
    let mask = mask & 0x09;
    if mask == 0 {
        return u64::MAX;
    }
    let v0 = vga.input_status1(now) & mask;
    let t = vga.timing();
    let ld = t.line_dots;
    let dots = ticks_since(0, now, t.clock_hz);
    let line = dots / ld;
    let mut cands: Vec<u64> = Vec::new();
    if mask & 0x01 != 0 {
        for l in line..=line + t.total_lines + 1 {
            cands.push(l * ld);
            cands.push(l * ld + t.display_dots);
        }
    } else {
        let frame = line / t.total_lines;
        for f in frame..=frame + 2 {
            let base = f * t.total_lines;
            cands.push((base + t.vretrace_start) * ld);
            cands.push((base + t.vretrace_start + t.vretrace_lines) * ld);
        }
        cands.sort_unstable();
    }
    for d in cands {
        if d <= dots {
            continue;
        }
        let at = dispatch_of_tick(0, d, t.clock_hz);
        if at <= now {
            continue;
        }
        if vga.input_status1(at) & mask != v0 {
            return at;
        }
    }
    u64::MAX
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Port writes that need the session: everything but VGA registers and
    /// the PIT's latch and read-back commands (a mode set at 43h may move
    /// the next timer event; a PIC write may unmask an interrupt).
    #[test]
    fn write_attention_spares_vga_and_pit_latches() {
        let m = Machine::new();
        for (port, byte, want) in [
            (0x43, 0x00, false), // latch channel 0
            (0x43, 0x40, false), // latch channel 1
            (0x43, 0x80, false), // latch channel 2
            (0x43, 0xC2, false), // read-back, count and status of channel 0
            (0x43, 0xE2, false), // read-back, status only
            (0x43, 0x34, true),  // channel 0, lo/hi, mode 2
            (0x43, 0x36, true),  // channel 0, lo/hi, mode 3
            (0x40, 0x00, true),  // a count
            (0x20, 0x20, true),  // EOI
            (0x21, 0xFE, true),  // PIC mask
            (0x3D4, 0x0C, false),
            (0x3C9, 0x3F, false),
        ] {
            assert_eq!(
                m.port_write_attention(port, byte),
                want,
                "{port:#x} <- {byte:#x}"
            );
        }
    }

    /// The prediction is exact: the status under the mask is constant from
    /// `now` up to the predicted dispatch and differs there.
    #[test]
    fn vga_prediction_matches_the_status() {
        let mut vga = Vga::new();
        vga.set_mode(0x13);
        for mask in [0x08u8, 0x01, 0x09] {
            let mut now = 12_345;
            for _ in 0..40 {
                let t = vga_status_stable_until(&vga, mask, now);
                assert!(t > now && t != u64::MAX);
                let v0 = vga.input_status1(now) & mask;
                // Sample densely near the ends, sparsely in between.
                let mut x = now;
                while x < t {
                    assert_eq!(
                        vga.input_status1(x) & mask,
                        v0,
                        "mask {mask:#x} at {x} (now {now}, t {t})"
                    );
                    x += if t - x < 50 || x - now < 50 { 1 } else { 37 };
                }
                assert_ne!(vga.input_status1(t) & mask, v0);
                now = t + (now % 7);
            }
        }
    }
}
