//! Minimized programs of divergences fixed in the µop arms, one case table
//! run by every arm in lockstep: each must end exactly as `l1` does, with the
//! exit code the program computes.

use oracle::compare::{lockstep, Options};
use oracle::spec::RunSpec;

/// Every arm these programs must agree on, reference first.
const ARMS: &str = "l1,l0,only-naive,only-baseline,only-all,only-t2,jit";

/// A line at FFF0h whose last instruction (`mov al, 11h`) ends exactly at
/// the 64 KiB end of CS (copied there by the program), called twice; between the calls the program patches
/// that instruction's immediate to 22h. PSP:0000 is made a `ret`, so the IP
/// wrap to 0 returns to the caller. Found by `oracle fuzz` (random bytes
/// reaching FFFFh): the lowering gave such a line a one-byte code range, the
/// patch did not retire the program, and only-naive exited 11h, not 22h.
fn line_ending_at_ffff() -> Vec<u8> {
    let mut v: Vec<u8> = vec![
        0xBC, 0x00, 0x80, // mov sp, 8000h (the stack away from the line)
        0xBE, 0x00, 0x00, // mov si, LINE (patched below)
        0xBF, 0xF0, 0xFF, // mov di, FFF0h
        0xB9, 0x10, 0x00, // mov cx, 16
        0xFC, 0xF3, 0xA4, // cld; rep movsb: the line to CS:FFF0h
        0xC6, 0x06, 0x00, 0x00, 0xC3, // mov byte [0000h], C3h (ret)
        0xE8, 0x00, 0x00, // call FFF0h (rel16 patched below)
        0xC6, 0x06, 0xFF, 0xFF, 0x22, // mov byte [FFFFh], 22h
        0xE8, 0x00, 0x00, // call FFF0h
        0xB4, 0x4C, 0xCD, 0x21, // mov ah, 4Ch; int 21h (exit code AL)
    ];
    for at in [20usize, 28] {
        let rel = 0xFFF0u16.wrapping_sub(0x100 + at as u16 + 3);
        v[at + 1..at + 3].copy_from_slice(&rel.to_le_bytes());
    }
    let line = 0x100 + v.len() as u16;
    v[4..6].copy_from_slice(&line.to_le_bytes());
    v.extend_from_slice(&[0x90; 14]); // nop x 14: FFF0h..FFFDh
    v.extend_from_slice(&[0xB0, 0x11]); // mov al, 11h at FFFEh, ending at FFFFh
    v
}

/// (name, program, the end every arm must reach)
fn cases() -> Vec<(&'static str, Vec<u8>, &'static str)> {
    vec![("line_ending_at_ffff", line_ending_at_ffff(), "exited 34")]
}

#[test]
fn fixed_divergences_stay_fixed_under_every_arm() {
    let dir = std::env::temp_dir().join(format!("oracle-arm-regressions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let arms = oracle::arms::parse_list(ARMS).unwrap();
    for (name, prog, end) in cases() {
        let path = dir.join(format!("{name}.com"));
        std::fs::write(&path, &prog).unwrap();
        let ls = lockstep(
            &RunSpec::new(&path, 100_000),
            &arms,
            &Options::default(),
            &mut |_| {},
        )
        .unwrap();
        for a in &ls.arms {
            assert!(a.diff.is_none(), "{name}: {} diverged from l1", a.arm);
            assert_eq!(a.last.end, end, "{name} under {}", a.arm);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
