//! The GUI test programs (mainemu/tests/programs/gdi_*.c): each draws with
//! GDI into DIB sections and prints what it drew (ASCII art, raw DIB
//! bytes, pixel values); the output must equal the expected file, whose
//! every case is derived from the Windows GDI documentation's rules
//! (docs/mainemu-gui.md says which rule each case checks). Twice the same
//! (invariant 7).
mod common;

use mainemu::process::Process;
use mainemu::run::{run, Ending};

/// (program, expected output file under tests/programs/expected).
const CASES: &[(&str, &str)] = &[
    ("gdi_shapes.exe", "gdi_shapes.txt"),
    ("gdi_bits.exe", "gdi_bits.txt"),
];

fn go(name: &str) -> Option<(u64, String)> {
    let bytes = std::fs::read(common::programs()?.join(name)).unwrap();
    let mut p = Process::new(&bytes, &[name.to_string()]).unwrap();
    let mut out = Vec::new();
    let s = run(&mut p, 50_000_000, &mut |_, b| out.extend_from_slice(b));
    assert_eq!(s.ending, Ending::Exit { code: 0 }, "{name}");
    Some((s.dispatches, String::from_utf8(out).unwrap()))
}

#[test]
fn gdi_programs_draw_what_the_rules_say() {
    for (prog, expected) in CASES {
        let Some((d, out)) = go(prog) else { return };
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/programs/expected")
            .join(expected);
        let want = std::fs::read_to_string(&path).unwrap();
        assert_eq!(out, want, "{prog} against {}", path.display());
        let (d2, out2) = go(prog).unwrap();
        assert_eq!((d, &out), (d2, &out2), "{prog} twice");
    }
}
