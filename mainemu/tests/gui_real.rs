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

/// What a run showed: how it ended, after how many dispatches, the
/// (edge, frame hash) pairs, the last frame, and the titles of the visible
/// top-level windows at the end (topmost first).
#[derive(Debug)]
struct Shown {
    ending: Ending,
    dispatches: u64,
    seen: Vec<(u64, u64)>,
    last: Frame,
    titles: Vec<String>,
    /// C:'s files at the end (name, contents), sorted by name.
    c_files: Vec<(String, Vec<u8>)>,
}

/// Runs `exe` (under win32-real) on `arm` with `script`, C: a fresh
/// directory holding `files` (name, contents); the frame hash every
/// `every` dispatches up to `budget`.
fn frames(
    exe: &str,
    files: &[(&str, &str)],
    script: &str,
    budget: u64,
    every: u64,
    arm: Arm,
) -> Option<Shown> {
    let root = common::win32_real()?;
    let exe = root.join(exe);
    // One directory per run: tests run in parallel in this process.
    static RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let c = std::env::temp_dir().join(format!(
        "mainemu-guireal-{}-{}-{}-{}",
        std::process::id(),
        RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        arm.name(),
        exe.file_name().unwrap().to_string_lossy()
    ));
    std::fs::remove_dir_all(&c).ok();
    std::fs::create_dir_all(&c).unwrap();
    for (name, text) in files {
        std::fs::write(c.join(name), text).unwrap();
    }
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
    let mut c_files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&c)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).unwrap())
        })
        .collect();
    c_files.sort();
    std::fs::remove_dir_all(&c).ok();
    let d = &p.env.desktop;
    let titles = d
        .top
        .iter()
        .filter_map(|&h| d.win(h))
        .filter(|w| w.visible())
        .map(|w| String::from_utf16_lossy(&w.title))
        .collect();
    Some(Shown {
        ending: s.ending,
        dispatches: s.dispatches,
        seen,
        last: Frame::of(d),
        titles,
        c_files,
    })
}

/// The run under l0 and l1: the same ending, dispatch count, frames at
/// every edge and last frame; returns l0's.
fn both_arms(
    exe: &str,
    files: &[(&str, &str)],
    script: &str,
    budget: u64,
    every: u64,
) -> Option<Shown> {
    let a = frames(exe, files, script, budget, every, Arm::L0)?;
    let b = frames(exe, files, script, budget, every, Arm::L1)?;
    assert_eq!(a.ending, b.ending, "{exe}: endings under l0 and l1");
    assert_eq!(
        a.dispatches, b.dispatches,
        "{exe}: dispatches under l0 and l1"
    );
    assert_eq!(a.seen, b.seen, "{exe}: frames under l0 and l1");
    assert_eq!(
        a.last.hash(),
        b.last.hash(),
        "{exe}: last frames under l0 and l1"
    );
    assert_eq!(a.titles, b.titles, "{exe}: windows under l0 and l1");
    assert_eq!(a.c_files, b.c_files, "{exe}: C: under l0 and l1");
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
    let Some(Shown { ending, seen, .. }) = both_arms(
        "wine-8.0/winemine.exe",
        &[],
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
    let Some(Shown {
        ending, seen, last, ..
    }) = both_arms(
        "wine-8.0/notepad.exe",
        &[],
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

/// notepad's empty window (the frame the typing test starts from).
const NOTEPAD_EMPTY: u64 = 0x0c8f_ac70_9d95_77c3;
/// The Open dialog over notepad with C: holding hello.txt and notes.log:
/// caption "Open", an empty "File name:" edit with the caret, the list
/// showing hello.txt only (the *.txt filter), OK (default) and Cancel,
/// "C:\"; notepad's caption inactive.
const OPEN_DIALOG: u64 = 0xabe6_6fd6_b0b1_63e3;
const C_FILES: &[(&str, &str)] = &[("hello.txt", "hello from a file\r\n"), ("notes.log", "x")];

/// The dialog manager with a real program: notepad opens lines.txt (three
/// lines) through Ctrl+O, then Ctrl+G opens its Go To Line dialog
/// (DialogBoxParamW on notepad's RT_DIALOG template: a static, an EDIT
/// holding the current line "1" selected, Go To as the default button and
/// Cancel), "3" replaces the selection, Enter is the default button
/// (IsDialogMessage), notepad reads the number with GetDlgItemInt and moves
/// the caret: the status bar says "Ln 3, Col 1".
#[test]
fn notepad_go_to_line_dialog() {
    let Some(r) = both_arms(
        "wine-8.0/notepad.exe",
        &[("lines.txt", "line one\r\nline two\r\nline three\r\n")],
        "key ctrl+o @ 1000000; text lines.txt @ 2000000; key enter @ 3000000; \
         key ctrl+g @ 4000000; text 3 @ 5000000; key enter @ 6000000",
        8_000_000,
        250_000,
    ) else {
        return;
    };
    assert_eq!(r.ending, Ending::Idle);
    assert_eq!(r.dispatches, 6_000_684, "dispatches at the idle ending");
    assert_eq!(
        changes(&r.seen),
        vec![
            (250_000, NOTEPAD_EMPTY),
            (1_250_000, 0x6450_f212_f9d2_66e2),
            (2_250_000, 0x904e_2cc2_588f_8642),
            (3_250_000, 0xb097_b331_ec4f_560f), // lines.txt shown
            (4_250_000, 0x241c_9591_df37_cba3), // Go To Line, "1" selected
            (5_250_000, 0x6efc_17bc_c7a2_42aa), // "3" typed
        ],
        "{:x?}",
        r.seen
    );
    assert_eq!(r.last.hash(), 0xb924_cddb_ca2f_f02a, "caret on line 3");
    assert_eq!(r.titles, vec!["lines.txt - Notepad".to_string()]);
}

/// winemine's Game menu, Custom... (DialogBoxParamW on its template: three
/// edits, OK, Cancel): the rows are typed over the selected "9", Tab moves
/// to the columns and then the mines edit, Enter is OK; winemine reads the
/// three numbers with GetDlgItemInt and starts a 12 x 20 game with 30
/// mines (its window grows, the mine counter reads 030).
#[test]
fn winemine_custom_game_dialog() {
    let Some(r) = both_arms(
        "wine-8.0/winemine.exe",
        &[],
        "click 18,32 @ 1000000; click 45,156 @ 2000000; text 12 @ 3000000; key tab @ 3500000; \
         text 20 @ 4000000; key tab @ 4500000; text 30 @ 5000000; key enter @ 6000000",
        7_000_000,
        500_000,
    ) else {
        return;
    };
    assert_eq!(r.ending, Ending::Budget);
    assert_eq!(
        changes(&r.seen),
        vec![
            (500_000, 0x35bb_e84d_4d14_2190),   // the board
            (1_500_000, 0xfc30_5200_05ea_4ec3), // the Game menu
            (2_500_000, 0x3751_b366_fbf0_7952), // Custom Game, "9" selected
            (3_500_000, 0x8869_8a7e_4c62_5c18),
            (4_000_000, 0x3349_f4a7_4778_7a7f),
            (4_500_000, 0xeccb_eb0e_c461_005b),
            (5_000_000, 0x33ea_1c43_8059_e1d4),
            (5_500_000, 0xda5c_7497_8af6_5e7b), // rows 12, columns 20, mines 30
            (6_500_000, 0x75c0_57a1_0a91_6735), // the 12 x 20 board
        ],
        "{:x?}",
        r.seen
    );
}

/// Ctrl+O (notepad's accelerator for File/Open) opens the Open dialog
/// (comdlg32 GetOpenFileNameW, our host-side dialog); "hello.txt" typed into
/// its edit and Enter: the dialog goes, notepad reads the file (its text in
/// the edit control, the caption "hello.txt - Notepad").
#[test]
fn notepad_file_open_dialog_opens_a_file() {
    let Some(r) = both_arms(
        "wine-8.0/notepad.exe",
        C_FILES,
        "key ctrl+o @ 1000000; text hello.txt @ 2000000; key enter @ 3000000",
        5_000_000,
        250_000,
    ) else {
        return;
    };
    assert_eq!(r.ending, Ending::Idle);
    assert_eq!(r.dispatches, 3_001_378, "dispatches at the idle ending");
    const TYPED: u64 = 0x0567_9ffc_4d0a_e22e;
    assert_eq!(
        changes(&r.seen),
        vec![
            (250_000, NOTEPAD_EMPTY),
            (1_250_000, OPEN_DIALOG),
            (2_250_000, TYPED)
        ],
        "{:x?}",
        r.seen
    );
    assert_ne!(OPEN_DIALOG, NOTEPAD_EMPTY, "the dialog changes the frame");
    // "hello from a file" in notepad's edit control.
    assert_eq!(r.last.hash(), 0x2fd9_c0e4_fb98_883e, "the last frame");
    assert_eq!(r.titles, vec!["hello.txt - Notepad".to_string()]);
}

/// The same dialog, a click on hello.txt in its list (the name goes into
/// the edit) and a click on OK: the same file opens, the same last frame.
#[test]
fn notepad_file_open_dialog_by_clicks() {
    let Some(r) = both_arms(
        "wine-8.0/notepad.exe",
        C_FILES,
        "key ctrl+o @ 1000000; click 120,155 @ 2000000; click 330,112 @ 3000000",
        5_000_000,
        250_000,
    ) else {
        return;
    };
    assert_eq!(r.ending, Ending::Idle);
    assert_eq!(r.dispatches, 3_001_378, "dispatches at the idle ending");
    assert_eq!(
        changes(&r.seen)[..2],
        [(250_000, NOTEPAD_EMPTY), (1_250_000, OPEN_DIALOG)]
    );
    assert_eq!(r.last.hash(), 0x2fd9_c0e4_fb98_883e, "the last frame");
    assert_eq!(r.titles, vec!["hello.txt - Notepad".to_string()]);
}

/// Escape cancels the dialog (GetOpenFileNameW returns FALSE): the dialog
/// goes and notepad shows exactly its empty window again, still
/// "Untitled"; a click on Cancel does the same.
#[test]
fn notepad_file_open_dialog_cancel() {
    for script in [
        "key ctrl+o @ 1000000; key escape @ 2000000",
        "key ctrl+o @ 1000000; click 330,142 @ 2000000",
    ] {
        let Some(r) = both_arms("wine-8.0/notepad.exe", C_FILES, script, 5_000_000, 250_000) else {
            return;
        };
        assert_eq!(r.ending, Ending::Idle, "{script}");
        assert_eq!(
            r.dispatches, 2_000_281,
            "{script}: dispatches at the idle ending"
        );
        assert_eq!(
            changes(&r.seen),
            vec![(250_000, NOTEPAD_EMPTY), (1_250_000, OPEN_DIALOG)],
            "{script}: {:x?}",
            r.seen
        );
        assert_eq!(r.last.hash(), NOTEPAD_EMPTY, "{script}: the last frame");
        assert_eq!(r.titles, vec!["Untitled - Notepad".to_string()], "{script}");
    }
}

/// Ctrl+S on an untitled notepad asks for a name (GetSaveFileNameW: the
/// same dialog, caption "Save As"); "mynote" and Enter: notepad writes
/// C:\\mynote.txt (the default extension "txt" appended) with the typed
/// text and takes the name as its title.
#[test]
fn notepad_save_as_writes_the_file() {
    let Some(r) = both_arms(
        "wine-8.0/notepad.exe",
        &[],
        "text saved text @ 500000; key ctrl+s @ 1000000; text mynote @ 2000000; key enter @ 3000000",
        5_000_000,
        250_000,
    ) else {
        return;
    };
    assert_eq!(r.ending, Ending::Idle);
    assert_eq!(r.dispatches, 3_000_923, "dispatches at the idle ending");
    assert_eq!(
        r.c_files,
        vec![("mynote.txt".to_string(), b"saved text".to_vec())]
    );
    assert_eq!(r.titles, vec!["mynote.txt - Notepad".to_string()]);
    // Empty, "saved text" typed, the Save As dialog, "mynote" in its edit.
    assert_eq!(
        changes(&r.seen),
        vec![
            (250_000, NOTEPAD_EMPTY),
            (750_000, 0x5bf9_7e57_19a4_54a6),
            (1_250_000, 0xbf73_17d1_6d2c_c70f),
            (2_250_000, 0x8009_a858_9fa2_4f7d)
        ],
        "{:x?}",
        r.seen
    );
    assert_eq!(r.last.hash(), 0xa1fc_62c2_c499_d49d, "the last frame");
}

/// notepad's File menu on a click (the popup under "File": New, Open...,
/// Save, Save as..., Print..., Page Setup..., Printer Setup..., Exit with
/// their shortcuts); a click on "Open..." closes it and notepad gets the
/// command: the same Open dialog as Ctrl+O shows (the popup's pixels stay
/// where notepad paints nothing: its client area's one-pixel strip and the
/// edit's unpainted scroll bar area). Typing the name and Enter opens the
/// file.
#[test]
fn notepad_file_menu_open() {
    let Some(r) = both_arms(
        "wine-8.0/notepad.exe",
        C_FILES,
        "click 20,32 @ 1000000; click 40,71 @ 2000000; text hello.txt @ 3000000; key enter @ 4000000",
        6_000_000,
        250_000,
    ) else {
        return;
    };
    assert_eq!(r.ending, Ending::Idle);
    assert_eq!(r.dispatches, 4_001_377, "dispatches at the idle ending");
    const FILE_MENU: u64 = 0x25e2_eec4_1723_1f5d;
    const DIALOG_AFTER_MENU: u64 = 0x8f50_0fe6_983a_6192;
    assert_eq!(
        changes(&r.seen),
        vec![
            (250_000, NOTEPAD_EMPTY),
            (1_250_000, FILE_MENU),
            (2_250_000, DIALOG_AFTER_MENU),
            (3_250_000, 0x90ed_35e2_cd88_4a56)
        ],
        "{:x?}",
        r.seen
    );
    assert_ne!(DIALOG_AFTER_MENU, FILE_MENU);
    assert_eq!(r.last.hash(), 0x5fa5_7c88_299d_585a, "the last frame");
    assert_eq!(r.titles, vec!["hello.txt - Notepad".to_string()]);
}

/// The Edit menu (disabled items embossed, "Wrap long lines" checked)
/// closes on Escape and on a click elsewhere (that click is used up):
/// notepad is left as it was but for the popup's pixels in the areas it
/// does not paint.
#[test]
fn notepad_menu_closes() {
    for (script, dispatches) in [
        ("click 60,32 @ 1000000; key escape @ 2000000", 2_000_370),
        ("click 60,32 @ 1000000; click 300,250 @ 2000000", 2_000_368),
    ] {
        let Some(r) = both_arms("wine-8.0/notepad.exe", C_FILES, script, 5_000_000, 250_000) else {
            return;
        };
        assert_eq!(r.ending, Ending::Idle, "{script}");
        assert_eq!(
            r.dispatches, dispatches,
            "{script}: dispatches at the idle ending"
        );
        assert_eq!(
            changes(&r.seen),
            vec![(250_000, NOTEPAD_EMPTY), (1_250_000, 0xdb8c_dd3e_dece_f49e)],
            "{script}: {:x?}",
            r.seen
        );
        assert_eq!(
            r.last.hash(),
            0x0841_1f58_b755_5d20,
            "{script}: the last frame"
        );
        assert_eq!(r.titles, vec!["Untitled - Notepad".to_string()], "{script}");
    }
}

/// The rows of Wine's user32/gdi32 table (`survey/wine-gui-tests.toml`)
/// that take at most 1M dispatches, under l0 and l1: the exact summary
/// counts (gdi32_brush 689 tests / 7 failures, gdi32_gdiobj 49 / 1,
/// gdi32_pen 907 / 0, user32_class 1123 / 328, user32_listbox 1123 / 41,
/// user32_text 885 / 1, user32_wsprintf 58 / 0)
/// or the current ending (gdi32_dib: the binary's own sincos calls itself
/// until the stack reaches its guard page; exit 0xC00000FD). 8 rows: all but bitmap, dialog, edit, msg
/// and sysparams (each over 1M dispatches). The full table:
/// docs/mainemu-gui.md.
#[test]
fn wine_gui_tests_sample_under_l0_and_l1() {
    let Some((sampled, failures)) = common::wine_sample("wine-gui-tests.toml", 1_000_000) else {
        return;
    };
    assert_eq!(sampled, 8, "the sample changed");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
