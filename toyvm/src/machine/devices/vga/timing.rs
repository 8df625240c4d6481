//! VGA raster timing as a pure function of the dispatch clock and the CRTC.
//!
//! Owns input status 1 (3DAh: bit 0 "display disabled", bit 3 vertical
//! retrace) and the frame edges (the dispatch each vertical retrace starts).
//! Everything derives from the dot clock selected by misc output bits 3:2
//! (25.175 or 28.322 MHz), the sequencer's 8/9-dot and ÷2 settings and the
//! CRTC totals, counted in dots since dispatch 0:
//! `dots(now) = floor(now * clock / DISPATCHES_PER_SECOND)`. A line is
//! `(htotal + 5) * char_width * (2 if ÷2)` dots, a frame `vtotal + 2` lines,
//! so mode 13h/03h get 449 lines at 31.469 kHz (70.09 Hz) and the 480-line
//! modes 525 lines (59.94 Hz). Reprogramming the timing moves the raster
//! phase at once (no glitch model). It must not keep any state: the answer
//! at dispatch `now` never depends on when it was last asked.

use super::Vga;

/// Most edges one `frame_edges_in` call returns (about 4 hours at 70 Hz).
pub const MAX_EDGES: usize = 1 << 20;
use crate::machine::scheduler::{dispatch_of_tick, ticks_since, VGA_CLOCK_25_HZ, VGA_CLOCK_28_HZ};

/// The raster geometry the CRTC programs, sanitised so hostile values
/// still give a frame of at least 64 lines of 200 dots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// Dot clock, Hz.
    pub clock_hz: u64,
    /// Dots per scanline (including blanking).
    pub line_dots: u64,
    /// Displayed dots per scanline.
    pub display_dots: u64,
    /// Scanlines per frame.
    pub total_lines: u64,
    /// Displayed scanlines.
    pub display_lines: u64,
    /// First scanline of vertical retrace.
    pub vretrace_start: u64,
    /// Scanlines of vertical retrace.
    pub vretrace_lines: u64,
}

impl Timing {
    /// Dots per frame.
    pub fn frame_dots(&self) -> u64 {
        self.line_dots * self.total_lines
    }

    /// Frame rate as an exact fraction (frames per second = num / den).
    pub fn frame_rate(&self) -> (u64, u64) {
        (self.clock_hz, self.frame_dots())
    }
}

impl Vga {
    /// The current raster timing.
    pub fn timing(&self) -> Timing {
        let clock_hz = match (self.misc >> 2) & 3 {
            1 => VGA_CLOCK_28_HZ,
            _ => VGA_CLOCK_25_HZ,
        };
        let char_w: u64 = if self.seq[1] & 0x01 != 0 { 8 } else { 9 };
        let div: u64 = if self.seq[1] & 0x08 != 0 { 2 } else { 1 };
        let c = &self.crtc;
        let htotal = c[0] as u64 + 5;
        let hde = (c[1] as u64 + 1).min(htotal);
        let line_dots = (htotal * char_w * div).max(200);
        let display_dots = (hde * char_w * div).min(line_dots);
        let o = c[7] as u64;
        let vt = (c[6] as u64 | (o & 1) << 8 | ((o >> 5) & 1) << 9) + 2;
        let total_lines = vt.max(64);
        let vde = self.display_lines() as u64;
        let vrs = c[0x10] as u64 | ((o >> 2) & 1) << 8 | ((o >> 7) & 1) << 9;
        let vrs = vrs.min(total_lines - 1);
        // The retrace ends when the line counter's low 4 bits match 11h.
        let mut vr_len = (c[0x11] as u64).wrapping_sub(vrs) & 0x0F;
        if vr_len == 0 {
            vr_len = 16;
        }
        Timing {
            clock_hz,
            line_dots,
            display_dots,
            total_lines,
            display_lines: vde.min(total_lines),
            vretrace_start: vrs,
            vretrace_lines: vr_len,
        }
    }

    /// Raster position at dispatch `now`: (scanline in frame, dot in line).
    pub fn raster_position(&self, now: u64) -> (u64, u64) {
        let t = self.timing();
        let dots = ticks_since(0, now, t.clock_hz);
        let line = dots / t.line_dots;
        (line % t.total_lines, dots % t.line_dots)
    }

    /// Input status 1 (3DAh/3BAh) at dispatch `now`: bit 3 = vertical
    /// retrace, bit 0 = display disabled (horizontal or vertical blanking).
    /// Bits 4-5 (diagnostic) read 0.
    pub fn input_status1(&self, now: u64) -> u8 {
        let t = self.timing();
        let (line, dot) = self.raster_position(now);
        let end = t.vretrace_start + t.vretrace_lines;
        let in_vr = if end <= t.total_lines {
            line >= t.vretrace_start && line < end
        } else {
            line >= t.vretrace_start || line < end - t.total_lines
        };
        let blank = line >= t.display_lines || dot >= t.display_dots;
        (in_vr as u8) << 3 | blank as u8
    }

    /// Dispatch of frame edge `k` (start of the k-th vertical retrace since
    /// dispatch 0 under the current timing).
    fn edge_dispatch(t: &Timing, k: u64) -> u64 {
        let dots =
            (k as u128 * t.total_lines as u128 + t.vretrace_start as u128) * t.line_dots as u128;
        if dots > u64::MAX as u128 {
            return u64::MAX;
        }
        dispatch_of_tick(0, dots as u64, t.clock_hz)
    }

    /// Index of the first frame edge at or after dispatch `from`.
    fn first_edge_index(t: &Timing, from: u64) -> u64 {
        // Edge k is at or after `from` iff its dot count exceeds the dots
        // counted by `from - 1`.
        let frame = t.frame_dots();
        let offset = t.vretrace_start * t.line_dots;
        if from == 0 {
            return 0;
        }
        let before = ticks_since(0, from - 1, t.clock_hz);
        // Smallest k with k*frame + offset > before.
        if before < offset {
            0
        } else {
            (before - offset) / frame + 1
        }
    }

    /// The first frame edge at or after dispatch `from`.
    pub fn next_frame_edge(&self, from: u64) -> u64 {
        let t = self.timing();
        Self::edge_dispatch(&t, Self::first_edge_index(&t, from))
    }

    /// Every frame edge `e` with `from <= e < to`, in order (at most
    /// [`MAX_EDGES`] of them: ask again from the last one for more).
    pub fn frame_edges_in(&self, from: u64, to: u64) -> Vec<u64> {
        let t = self.timing();
        let mut k = Self::first_edge_index(&t, from);
        let mut out = Vec::new();
        while out.len() < MAX_EDGES {
            let e = Self::edge_dispatch(&t, k);
            if e >= to {
                break;
            }
            out.push(e);
            k += 1;
        }
        out
    }
}
