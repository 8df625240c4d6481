//! The BIOS: ROM contents, the BIOS data area and the services behind
//! INT 08h-1Ah and INT 33h (the mouse driver lives here too, as it is a
//! resident driver of the same kind).
//!
//! Owns BIOS-level state that has no home in guest memory (console capture,
//! mouse, the pending wait deadline). It must not know about DOS.

pub mod bda;
pub mod hostcall;
pub mod keyboard;
pub mod misc;
pub mod mouse;
pub mod rom;
pub mod timer;
pub mod vbe;
pub mod video;

use std::collections::BTreeMap;

/// Most bytes of console text kept (a program printing forever must not
/// exhaust the host).
pub const CONSOLE_LIMIT: usize = 1 << 16;

/// What the program printed through DOS and the BIOS teletype.
#[derive(Clone, Debug, Default)]
pub struct Console {
    pub bytes: Vec<u8>,
    pub truncated: bool,
}

impl Console {
    pub fn push(&mut self, b: u8) {
        if self.bytes.len() < CONSOLE_LIMIT {
            self.bytes.push(b);
        } else {
            self.truncated = true;
        }
    }
}

/// BIOS state kept on the host side.
#[derive(Clone, Debug, Default)]
pub struct Bios {
    pub console: Console,
    pub mouse: mouse::Mouse,
    /// Deadline of an INT 15h AH=86h wait in progress.
    pub wait_until: Option<u64>,
    /// An E0h prefix byte was seen by INT 09h.
    pub kbd_e0: bool,
    /// Scan lines for the next text mode set (INT 10h AH=12h BL=30h).
    pub scanlines: u8,
    /// Functions asked for that the BIOS answers "not supported" (by name,
    /// with counts): reported, not fatal.
    pub declined: BTreeMap<String, u64>,
    /// Time-of-day offset set by the guest (INT 1Ah AH=01h/03h/05h, DOS
    /// 2Bh/2Dh), in dispatches.
    pub clock_offset: i64,
}

impl Bios {
    pub fn decline(&mut self, what: String) {
        *self.declined.entry(what).or_insert(0) += 1;
    }
}
