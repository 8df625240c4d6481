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
    ("gdi_text.exe", "gdi_text.txt"),
    ("gdi_styles.exe", "gdi_styles.txt"),
];

/// The self-checking programs (gdi_text, gdi_styles) compute each rule's
/// expectation themselves: every `A of B` count must be full, no box or
/// comparison may say DIFFERENT, every `(rule N)` must equal the value
/// printed before it.
fn rule_failures(out: &str) -> Vec<String> {
    let mut bad = Vec::new();
    for line in out.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let full = words
            .windows(3)
            .filter(|w| w[1] == "of")
            .all(|w| w[0] == w[2].trim_end_matches(';'));
        let rule_ok = match line.find("(rule ") {
            Some(at) => {
                let want = line[at + 6..].split([')', ':']).next().unwrap_or("");
                let got = line[..at].split_whitespace().last().unwrap_or("");
                got == want
            }
            None => true,
        };
        if !full || !rule_ok || line.contains("DIFFERENT") || words.contains(&"no") {
            bad.push(line.to_string());
        }
    }
    bad
}

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
        assert_eq!(rule_failures(&out), Vec::<String>::new(), "{prog}");
        assert_eq!(out, want, "{prog} against {}", path.display());
        let (d2, out2) = go(prog).unwrap();
        assert_eq!((d, &out), (d2, &out2), "{prog} twice");
    }
}

/// gui_window.exe (user32: class, window, menu and accelerators from
/// resources, WM_PAINT, WM_TIMER on the guest clock) driven by scripted
/// input: a click in the client area, typed text, F2 (accelerator → menu
/// command 100) and Ctrl+Q (command 101: DestroyWindow → WM_DESTROY →
/// PostQuitMessage(7)). Messages, their order and their guest times are
/// exact; the desktop frame is the same twice.
#[test]
fn gui_window_answers_scripted_input() {
    let Some(dir) = common::programs() else {
        return;
    };
    let bytes = std::fs::read(dir.join("gui_window.exe")).unwrap();
    let go = || {
        let mut p = Process::new(&bytes, &["gui_window.exe".to_string()]).unwrap();
        p.env.desktop.input = mainemu::desktop::input::parse(
            "click 100,100 @ 3000000; text hi @ 4000000; key F2 @ 5000000; key ctrl+Q @ 25000000",
        )
        .unwrap();
        let mut out = Vec::new();
        let s = run(&mut p, 100_000_000, &mut |_, b| out.extend_from_slice(b));
        let frame = p.env.desktop.frame();
        (
            s.ending,
            s.dispatches,
            String::from_utf8(out).unwrap(),
            frame,
        )
    };
    let a = go();
    // The click lands at client (76,38): screen (100,100) less the window
    // origin (20,20), the sizing border (4) and caption plus menu bar (38).
    let want = "WM_CREATE mainemu window\nWM_SIZE 292 x 104\nwindow created\n\
                WM_PAINT 0,0-292,104 of 292 x 104\nWM_LBUTTONDOWN 76,38 keys 1\n\
                WM_PAINT 0,0-292,104 of 292 x 104\nWM_CHAR h\nWM_CHAR i\n\
                WM_PAINT 0,0-292,104 of 292 x 104\nWM_COMMAND 100\n\
                WM_PAINT 0,0-292,104 of 292 x 104\nWM_TIMER 1 at 100 ms\n\
                WM_PAINT 0,0-292,104 of 292 x 104\nWM_TIMER 1 at 200 ms\n\
                WM_PAINT 0,0-292,104 of 292 x 104\nWM_COMMAND 101\nWM_DESTROY\nquit 7\n";
    assert_eq!(a.2, want);
    assert_eq!(a.0, Ending::Exit { code: 7 });
    let b = go();
    assert_eq!(a, b, "twice the same");
}

/// dialog.exe (tests/programs/dialog.c): a dialog from an in-memory
/// DLGTEMPLATE with DS_SETFONT. Its own checks (every `(rule V)`: control
/// positions from dialog units by MapDialogRect and by the documented
/// computation from the font's average character width) must hold; then a
/// modal DialogBoxIndirectParam driven by scripted keys: typing replaces
/// the selected edit text, Tab and Shift+Tab move between the WS_TABSTOP
/// controls, Space clicks the check box, Down moves into the radio group
/// (checking the auto radio button), Enter is the default button (IDOK)
/// and EndDialog's value comes back from DialogBoxIndirectParam. Under l0
/// and l1 the output, dispatch count and the frame at every million
/// dispatches are identical.
#[test]
fn dialog_answers_keys_under_l0_and_l1() {
    use mainemu::frame::Frame;
    use mainemu::run::{run_arm_with, Arm, Edges};
    let Some(dir) = common::programs() else {
        return;
    };
    let bytes = std::fs::read(dir.join("dialog.exe")).unwrap();
    let script = "text 42 @ 2000000; key tab @ 4000000; key space @ 6000000; key tab @ 8000000; \
                  key down @ 10000000; key shift+tab @ 12000000; key shift+tab @ 14000000; \
                  key enter @ 16000000";
    let go = |arm: Arm| {
        let mut p = Process::new(&bytes, &["dialog.exe".to_string()]).unwrap();
        p.env.desktop.input = mainemu::desktop::input::parse(script).unwrap();
        let mut out = Vec::new();
        let mut seen = Vec::new();
        let mut at = |p: &Process, clock: u64| seen.push((clock, Frame::of(&p.env.desktop).hash()));
        let s = run_arm_with(
            &mut p,
            arm,
            20_000_000,
            &mut |_, b| out.extend_from_slice(b),
            Some(Edges {
                every: 1_000_000,
                at: &mut at,
            }),
        );
        (
            s.ending,
            s.dispatches,
            String::from_utf8(out).unwrap(),
            seen,
        )
    };
    let a = go(Arm::L0);
    assert_eq!(rule_failures(&a.2), Vec::<String>::new());
    let want = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/expected/dialog.txt"),
    )
    .unwrap();
    assert_eq!(a.2, want);
    // The lines the keys produced, in order.
    let tail: Vec<&str> =
        a.2.lines()
            .skip_while(|l| !l.starts_with("focus"))
            .collect();
    assert_eq!(
        tail,
        [
            "focus 100",
            "focus 101",
            "BN_CLICKED 101, checked 1",
            "focus 102",
            "BN_CLICKED 103, checked 1",
            "focus 103",
            "focus 101",
            "focus 100",
            "WM_COMMAND 1: edit \"42\" = 42 (translated 1), check 1, two 1",
            "DialogBoxIndirectParam returned 421",
        ]
    );
    assert_eq!(a.0, Ending::Exit { code: 0 });
    // The dialog is on screen and changes with each key.
    let distinct: std::collections::BTreeSet<u64> = a.3.iter().map(|x| x.1).collect();
    assert!(distinct.len() >= 8, "{:x?}", a.3);
    // Before Enter: "42" selected (Shift+Tab into the edit), Check checked, Two checked.
    assert!(
        a.3.contains(&(15_000_000, 0xaa6194f505eb31b9)),
        "{:x?}",
        a.3
    );
    let b = go(Arm::L1);
    assert_eq!(a, b, "l0 and l1: output, dispatches and every frame");
}
