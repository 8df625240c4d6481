//! What a tier that caches decoded instructions in straight-line blocks needs
//! to know about one instruction besides its [`Op`](crate::op::Op): whether
//! it ends a block, and how many of the fetched bytes its decoding depends
//! on (the bytes a store must touch to make a cached copy stale).
//!
//! Owns that classification, decided from the same bytes and mode the CPU
//! decoder reads (iced-x86's control-flow facts), engine-independent: any
//! threaded tier over [`crate::decode`] can use it (mainemu's L1 does; toyvm's
//! L1 has its richer `classify`, which could build on this). It must not
//! execute anything or hold instruction semantics.

use crate::decode::{Mode, MAX_LEN};
use iced_x86::{Decoder, DecoderOptions, FlowControl};

/// Block-formation facts of one instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Facts {
    /// Control may continue somewhere other than the next instruction (any
    /// branch, call, return, interrupt, or an undecodable encoding, which
    /// raises an exception), or the instruction repeats in place (a string
    /// instruction with a REP prefix, one dispatch per element).
    pub ends_block: bool,
    /// How many bytes from the instruction's first one the decoded Op
    /// depends on: its length, or the whole fetch window for an undecodable
    /// encoding (whether it is #UD or #GP can depend on every byte).
    pub span: u8,
}

/// The facts of the instruction whose (up to) 15 bytes start at `ip`.
pub fn facts(bytes: &[u8; MAX_LEN], ip: u32, mode: Mode) -> Facts {
    let bits = if mode.code32 { 32 } else { 16 };
    let mut dec = Decoder::with_ip(bits, bytes, ip as u64, DecoderOptions::LOADALL386);
    let ins = dec.decode();
    if ins.is_invalid() {
        return Facts {
            ends_block: true,
            span: MAX_LEN as u8,
        };
    }
    let repeats = ins.is_string_instruction()
        && (ins.has_rep_prefix() || ins.has_repe_prefix() || ins.has_repne_prefix());
    Facts {
        ends_block: ins.flow_control() != FlowControl::Next || repeats,
        span: ins.len() as u8,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(code: &[u8]) -> Facts {
        let mut b = [0u8; MAX_LEN];
        b[..code.len()].copy_from_slice(code);
        facts(&b, 0x1000, Mode::FLAT32)
    }

    #[test]
    fn branches_and_rep_strings_end_blocks() {
        // add eax, ebx / mov [eax], ecx: straight-line.
        assert_eq!(
            f(&[0x01, 0xD8]),
            Facts {
                ends_block: false,
                span: 2
            }
        );
        assert_eq!(
            f(&[0x89, 0x08]),
            Facts {
                ends_block: false,
                span: 2
            }
        );
        // jne rel8, jmp rel32, call, ret, int 3, jmp [eax]
        for code in [
            &[0x75, 0x00][..],
            &[0xE9, 0, 0, 0, 0],
            &[0xE8, 0, 0, 0, 0],
            &[0xC3],
            &[0xCC],
            &[0xFF, 0x20],
        ] {
            assert!(f(code).ends_block, "{code:02x?}");
            assert_eq!(f(code).span as usize, code.len());
        }
        // rep movsd ends a block, a plain movsd does not.
        assert!(f(&[0xF3, 0xA5]).ends_block);
        assert!(!f(&[0xA5]).ends_block);
        // An undefined opcode depends on the whole window.
        assert_eq!(f(&[0x0F, 0x0B]).span, 2); // UD2 is a valid instruction
        assert_eq!(
            f(&[0x0F, 0xFF]),
            Facts {
                ends_block: true,
                span: 15
            }
        );
    }
}
