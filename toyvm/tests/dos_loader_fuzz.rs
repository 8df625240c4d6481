//! Hostile executables: mutated MZ headers and truncated files never panic
//! the loader or the machine; they load, fail with a clear error, or run
//! and stop cleanly.

use proptest::prelude::*;
use toyvm::loader;
use toyvm::session::{Config, End, Session};

/// A small valid MZ program: header (2 paragraphs), one relocation, code
/// that exits with code 3.
fn valid_mz() -> Vec<u8> {
    let mut b = vec![0u8; 0x20];
    b[0] = b'M';
    b[1] = b'Z';
    let code = [0xB8, 0x03, 0x4C, 0xCD, 0x21, 0x00, 0x00, 0x00]; // mov ax,4C03h; int 21h
    let total = 0x20 + code.len();
    b[2..4].copy_from_slice(&((total % 512) as u16).to_le_bytes());
    b[4..6].copy_from_slice(&(total.div_ceil(512) as u16).to_le_bytes());
    b[6..8].copy_from_slice(&1u16.to_le_bytes()); // relocations
    b[8..10].copy_from_slice(&2u16.to_le_bytes()); // header paragraphs
    b[0x0A..0x0C].copy_from_slice(&0x10u16.to_le_bytes()); // min alloc
    b[0x0C..0x0E].copy_from_slice(&0xFFFFu16.to_le_bytes()); // max alloc
    b[0x0E..0x10].copy_from_slice(&1u16.to_le_bytes()); // SS
    b[0x10..0x12].copy_from_slice(&0x100u16.to_le_bytes()); // SP
    b[0x18..0x1A].copy_from_slice(&0x1Cu16.to_le_bytes()); // relocation table
    b[0x1C..0x20].copy_from_slice(&[6, 0, 0, 0]); // patch word at 0000:0006
    b.extend_from_slice(&code);
    b
}

#[test]
fn the_valid_program_runs() {
    assert!(loader::parse(&valid_mz()).is_ok());
    let d = std::env::temp_dir().join(format!("toyvm-fuzz-{}-valid", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("V.EXE"), valid_mz()).unwrap();
    let mut s = Session::new(&Config::new(d.join("V.EXE"))).unwrap();
    s.run();
    assert_eq!(s.end, Some(End::Exited { code: 3 }));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]

    #[test]
    fn mutated_headers_never_panic_the_loader(
        edits in prop::collection::vec((0usize..0x28, any::<u8>()), 1..12),
        cut in 0usize..0x30,
    ) {
        let mut b = valid_mz();
        for (i, v) in edits {
            if i < b.len() {
                b[i] = v;
            }
        }
        let _ = loader::detect(&b);
        let _ = loader::parse(&b);
        b.truncate(b.len().saturating_sub(cut));
        let _ = loader::parse(&b);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, .. ProptestConfig::default() })]

    #[test]
    fn mutated_programs_never_panic_the_machine(
        edits in prop::collection::vec((0usize..0x28, any::<u8>()), 1..8),
    ) {
        let mut b = valid_mz();
        for (i, v) in edits {
            if i < b.len() {
                b[i] = v;
            }
        }
        let d = std::env::temp_dir().join(format!("toyvm-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("F.EXE"), &b).unwrap();
        let mut cfg = Config::new(d.join("F.EXE"));
        cfg.budget = 20_000;
        let mut s = Session::new(&cfg).unwrap();
        s.run();
        prop_assert!(s.end.is_some());
        prop_assert!(s.clock() <= 20_000);
    }
}
