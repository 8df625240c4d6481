//! The code range a lowered line reports is exactly the bytes of the
//! instructions it lowered, also when the last one ends at the 64 KiB end of
//! CS (IP wraps to 0 there). The driver marks these bytes as code, so a
//! range too short lets a store into the line go unnoticed and the program
//! run stale code.
//!
//! Regression: `oracle fuzz --seed 3` programs #294 and #2337 (random bytes
//! reaching offset FFFFh that rewrote themselves): the range was one byte, and
//! only-naive diverged from l1.

use iced_x86::{Decoder, DecoderOptions};
use proptest::prelude::*;
use shared_ir::lower::lower_line;
use shared_ir::machine::RealMode16;

const BASE: u32 = 0x7000 << 4;

/// (ip, code bytes, expected range relative to BASE)
const CASES: &[(u32, &[u8], (u32, u32))] = &[
    // inc ax; inc bx: ordinary
    (0x0100, &[0x40, 0x43, 0xCC], (0x0100, 0x0102)),
    // nop ending exactly at FFFFh + 1
    (0xFFFF, &[0x90], (0xFFFF, 0x1_0000)),
    // mov ax,1234h (3 bytes) ending at the wrap
    (0xFFFD, &[0xB8, 0x34, 0x12], (0xFFFD, 0x1_0000)),
    // two instructions, the second ending at the wrap
    (0xFFFC, &[0x40, 0xB8, 0x34, 0x12], (0xFFFC, 0x1_0000)),
    // add [bx+si],al; inc cx ending at the wrap
    (0xFFFD, &[0x00, 0x00, 0x41], (0xFFFD, 0x1_0000)),
];

#[test]
fn code_range_table() {
    for &(ip, bytes, (lo, hi)) in CASES {
        let line = lower_line(&RealMode16, BASE, ip, bytes, 16);
        let p = line
            .program
            .unwrap_or_else(|| panic!("ip {ip:04X}: nothing lowered"));
        assert_eq!(
            p.code,
            vec![(BASE + lo, BASE + hi)],
            "ip {ip:04X} bytes {bytes:02X?}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Near the end of CS, the range is the sum of the lowered instructions'
    /// lengths as iced-x86 decodes them.
    #[test]
    fn range_is_the_lowered_bytes(
        bytes in proptest::collection::vec(any::<u8>(), 1..64),
        back in 1u32..64,
    ) {
        let ip = 0x1_0000 - back;
        let code = &bytes[..bytes.len().min(back as usize)];
        let line = lower_line(&RealMode16, BASE, ip, code, 16);
        if let Some(p) = line.program {
            let mut d = Decoder::with_ip(16, code, ip as u64, DecoderOptions::NONE);
            let len: u32 = (0..line.instructions).map(|_| d.decode().len() as u32).sum();
            prop_assert_eq!(p.code, vec![(BASE + ip, BASE + ip + len)]);
        }
    }
}
