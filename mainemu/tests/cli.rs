//! `mainemu imports` over the mingw test programs and the real programs.
mod common;

use mainemu::cli::{import_report, totals};

#[test]
fn hello_import_totals() {
    let Some(dir) = common::programs() else {
        return;
    };
    let lines = import_report(&dir.join("hello.exe")).unwrap();
    // 56 imports of KERNEL32 and msvcrt, every one implemented.
    let (n, ok, stub) = totals(&lines);
    assert_eq!((n, ok, stub), (56, 56, 0));
    assert!(lines
        .iter()
        .any(|l| l.name.to_string() == "GetLastError" && l.implemented == Some(true)));
}

#[test]
fn shipped_dll_is_followed() {
    let Some(dir) = common::programs() else {
        return;
    };
    let lines = import_report(&dir.join("usedll.exe")).unwrap();
    let guest: Vec<String> = lines
        .iter()
        .filter(|l| l.implemented.is_none())
        .map(|l| l.name.to_string())
        .collect();
    assert_eq!(guest, vec!["td_add@8".to_string(), "#7".to_string()]);
    assert!(
        lines.iter().any(|l| l.from == "testdll.dll"),
        "testdll.dll's own imports listed"
    );
}

#[test]
fn every_real_program_lists() {
    let Some(dir) = common::win32_real() else {
        return;
    };
    let manifest = std::fs::read_to_string(dir.join("MANIFEST.tsv")).unwrap();
    for line in manifest.lines().skip(1) {
        let path = dir.join(line.split('\t').next().unwrap());
        let lines = import_report(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(totals(&lines).0 > 0, "{}", path.display());
    }
}
