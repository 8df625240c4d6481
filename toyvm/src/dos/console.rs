//! The DOS console: character input with and without echo, line input (0Ah
//! and cooked reads of CON), output to the screen through the BIOS
//! teletype, and the capture of what the program printed.
//!
//! Owns the line being typed and the pending second byte of an extended
//! key. Input never spins the host: when no key is ready the caller gets
//! `None` and makes the service wait for the next event.

use crate::bios::{bda, keyboard, video, Bios};
use crate::machine::Machine;
use std::collections::VecDeque;

/// Console input state.
#[derive(Clone, Debug, Default)]
pub struct LineInput {
    /// The line being edited.
    pub line: Vec<u8>,
    /// Cooked bytes (a finished line plus CR LF) not yet read by the program.
    pub pending: VecDeque<u8>,
    /// Scan code to return after a 0 byte for an extended key.
    pub ext: Option<u8>,
}

/// Writes one byte to the screen (and the console capture).
pub fn out(m: &mut Machine, bios: &mut Bios, ch: u8) {
    bios.console.push(ch);
    let page = bda::rd8(&m.mem, bda::ACTIVE_PAGE);
    if ch == 0x09 {
        // DOS expands tabs to the next multiple of 8.
        let (_, col) = video::cursor(m, page);
        for _ in 0..(8 - col % 8) {
            video::teletype(m, page, b' ', 7);
        }
        return;
    }
    video::teletype(m, page, ch, 7);
}

/// Writes bytes to the screen.
pub fn out_bytes(m: &mut Machine, bios: &mut Bios, b: &[u8]) {
    for &c in b {
        out(m, bios, c);
    }
}

/// The next character of the keyboard, DOS style (an extended key yields 0
/// then its scan code); None when no key is waiting.
pub fn read_char(m: &mut Machine, st: &mut LineInput) -> Option<u8> {
    if let Some(s) = st.ext.take() {
        return Some(s);
    }
    let k = keyboard::pop_key(m)?;
    let (ascii, scan) = (k as u8, (k >> 8) as u8);
    if ascii == 0 || (ascii == 0xE0 && scan != 0) {
        st.ext = Some(scan);
        return Some(0);
    }
    Some(ascii)
}

/// True when a character is ready.
pub fn char_ready(m: &Machine, st: &LineInput) -> bool {
    st.ext.is_some() || keyboard::peek_key(m).is_some()
}

/// Edits a line from the keyboard (echoing) until Enter. Returns the line
/// (without CR) once complete, None while keys are still needed. `max` is
/// the most characters the line may hold.
pub fn edit_line(
    m: &mut Machine,
    bios: &mut Bios,
    st: &mut LineInput,
    max: usize,
) -> Option<Vec<u8>> {
    loop {
        let c = read_char(m, st)?;
        match c {
            0 => {
                st.ext = None; // extended keys are not editing keys here
            }
            0x0D => {
                out(m, bios, 0x0D);
                return Some(std::mem::take(&mut st.line));
            }
            0x08 => {
                if st.line.pop().is_some() {
                    out_bytes(m, bios, b"\x08 \x08");
                }
            }
            _ => {
                if st.line.len() < max {
                    st.line.push(c);
                    out(m, bios, c);
                }
            }
        }
    }
}

/// A cooked read of CON (handle read): up to `n` bytes of a finished line
/// including its CR LF; None while the line is still being typed.
pub fn read_cooked(
    m: &mut Machine,
    bios: &mut Bios,
    st: &mut LineInput,
    n: usize,
) -> Option<Vec<u8>> {
    if st.pending.is_empty() {
        let line = edit_line(m, bios, st, 126)?;
        out(m, bios, 0x0A);
        st.pending.extend(line);
        st.pending.extend([0x0D, 0x0A]);
    }
    let k = n.min(st.pending.len());
    Some(st.pending.drain(..k).collect())
}
