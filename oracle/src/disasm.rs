//! Disassembly of one guest instruction for divergence reports (iced-x86,
//! 16-bit real-mode code, Intel syntax). Owns formatting only; it must not
//! decode for execution.

use iced_x86::{Decoder, DecoderOptions, Formatter, IntelFormatter};

/// The instruction at the start of `bytes` (fetched at `ip`): its length
/// and text, e.g. `add ax,1`. Invalid bytes give `(invalid)`.
pub fn one(bytes: &[u8], ip: u32) -> (usize, String) {
    let mut d = Decoder::with_ip(16, bytes, ip as u64, DecoderOptions::NONE);
    let i = d.decode();
    if i.is_invalid() {
        return (
            bytes.len().min(1),
            "(invalid or incomplete instruction)".into(),
        );
    }
    let mut f = IntelFormatter::new();
    f.options_mut().set_hex_prefix("");
    f.options_mut().set_hex_suffix("h");
    f.options_mut().set_uppercase_hex(true);
    let mut s = String::new();
    f.format(&i, &mut s);
    (i.len(), s)
}

/// Bytes as spaced hex, e.g. "83 C0 01".
pub fn hex_bytes(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02X}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn formats() {
        let (n, t) = super::one(&[0x83, 0xC0, 0x01, 0x90], 0x100);
        assert_eq!((n, t.as_str()), (3, "add ax,1"));
        let (n, t) = super::one(&[0xCD, 0x21], 0x100);
        assert_eq!((n, t.as_str()), (2, "int 21h"));
    }
}
