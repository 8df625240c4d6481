//! Wine's GUI programs (../shared/win32-real/wine-8.0) under scripted
//! input, seen through their frames: the desktop's pixels hashed at fixed
//! dispatch edges (the same XXH3 frame hash `mainemu run --frames-every`
//! writes). Each program runs under l0 and l1, and the two arms must show
//! identical frames at every edge (invariant 4); the hashes are pinned, so
//! a change in what the program shows is seen here.
//!
//! Skipped (with a line) when ../shared/win32-real is absent.
mod common;

use mainemu::frame::Frame;
use mainemu::process::{Process, Setup};
use mainemu::run::{run_arm_with, Arm, Edges, Ending};

/// Runs `exe` (under win32-real) on `arm` with `script`, C: a fresh empty
/// directory; returns the ending and (edge, frame hash) every `every`
/// dispatches up to `budget`, and the last frame.
fn frames(
    exe: &str,
    script: &str,
    budget: u64,
    every: u64,
    arm: Arm,
) -> Option<(Ending, Vec<(u64, u64)>, Frame)> {
    let root = common::win32_real()?;
    let exe = root.join(exe);
    let c = std::env::temp_dir().join(format!(
        "mainemu-guireal-{}-{}-{}",
        std::process::id(),
        arm.name(),
        exe.file_name().unwrap().to_string_lossy()
    ));
    std::fs::remove_dir_all(&c).ok();
    std::fs::create_dir_all(&c).unwrap();
    let mut setup = Setup::for_program(&exe, &[], &[('C', c.clone())], &[]).unwrap();
    setup.stdin = Box::new(std::io::empty());
    let mut p = Process::with_setup(&std::fs::read(&exe).unwrap(), setup).unwrap();
    mainemu::cli::gui_setup(&mut p, None, Some(script)).unwrap();
    let mut seen = Vec::new();
    let mut at = |p: &Process, clock: u64| seen.push((clock, Frame::of(&p.env.desktop).hash()));
    let s = run_arm_with(
        &mut p,
        arm,
        budget,
        &mut |_, _| {},
        Some(Edges { every, at: &mut at }),
    );
    std::fs::remove_dir_all(&c).ok();
    Some((s.ending, seen, Frame::of(&p.env.desktop)))
}

/// The run under l0 and l1: equal frames at every edge; returns l0's.
fn both_arms(
    exe: &str,
    script: &str,
    budget: u64,
    every: u64,
) -> Option<(Ending, Vec<(u64, u64)>, Frame)> {
    let a = frames(exe, script, budget, every, Arm::L0)?;
    let b = frames(exe, script, budget, every, Arm::L1)?;
    assert_eq!(a.0, b.0, "{exe}: endings under l0 and l1");
    assert_eq!(a.1, b.1, "{exe}: frames under l0 and l1");
    Some(a)
}

/// The distinct hashes in order (runs of equal frames collapsed).
fn changes(seen: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for &(t, h) in seen {
        if out.last().map(|l| l.1) != Some(h) {
            out.push((t, h));
        }
    }
    out
}

/// winemine shows its board (frame A); a click at (24,200), on the cell
/// in column 1, row 8, opens a region of empty cells (frame B); F2 (its
/// accelerator for Game/New) starts a new game, which looks like frame A
/// again.
#[test]
fn winemine_board_click_and_new_game() {
    let Some((ending, seen, _)) = both_arms(
        "wine-8.0/winemine.exe",
        "click 24,200 @ 3000000; key F2 @ 8000000",
        10_000_000,
        1_000_000,
    ) else {
        return;
    };
    // winemine keeps a one-second timer: it never idles.
    assert_eq!(ending, Ending::Budget);
    const BOARD: u64 = 0x35bb_e84d_4d14_2190;
    const OPENED: u64 = 0xb83a_2fba_857b_4a66;
    assert_eq!(
        changes(&seen),
        vec![(1_000_000, BOARD), (4_000_000, OPENED), (9_000_000, BOARD)],
        "{seen:x?}"
    );
}

/// notepad opens with its menu bar and an empty edit control (frame A);
/// typed text appears in the EDIT control, Backspace takes the '!' back,
/// Enter starts a second line (frames B..E; the status bar follows the
/// caret: "Ln 2, Col 9"); with no input left it waits in GetMessage and the
/// run ends idle, not deadlocked.
#[test]
fn notepad_types_into_its_edit_control() {
    let Some((ending, seen, last)) = both_arms(
        "wine-8.0/notepad.exe",
        "text Hello, mainemu! @ 1000000; key Back @ 2000000; key enter @ 2100000; text line two @ 2200000",
        5_000_000,
        250_000,
    ) else {
        return;
    };
    assert_eq!(ending, Ending::Idle);
    const EMPTY: u64 = 0x0c8f_ac70_9d95_77c3;
    const HELLO: u64 = 0x18e2_cea0_d71f_b91b;
    assert_eq!(
        changes(&seen),
        vec![(250_000, EMPTY), (1_250_000, HELLO)],
        "{seen:x?}"
    );
    // "Hello, mainemu" / "line two", caret after it, "Ln 2, Col 9".
    assert_eq!(last.hash(), 0xb8db_9f57_c329_717c, "the last frame");
}
