//! PE loader tests over mingw-built programs (tests/programs) and the real
//! programs in ../shared/win32-real, plus hostile-input property tests.
mod common;

use mainemu::memory::{prot, Memory};
use mainemu::pe::{load, resources, ExportTarget, ImportName, PeFile};
use proptest::prelude::*;

fn read(name: &str) -> Option<Vec<u8>> {
    Some(std::fs::read(common::programs()?.join(name)).unwrap())
}

#[test]
fn hello_imports_by_name() {
    let Some(bytes) = read("hello.exe") else {
        return;
    };
    let pe = PeFile::parse(&bytes).unwrap();
    assert!(!pe.is_dll());
    assert_eq!(pe.image_base, 0x40_0000);
    let imps = pe.imports().unwrap();
    let dlls: Vec<_> = imps
        .iter()
        .map(|d| (d.dll.as_str(), d.imports.len()))
        .collect();
    assert_eq!(dlls[0].0, "KERNEL32.dll");
    assert_eq!(dlls[1].0, "msvcrt.dll");
    let names: Vec<String> = imps[1].imports.iter().map(|i| i.name.to_string()).collect();
    for want in ["__getmainargs", "_initterm", "puts", "exit"] {
        assert!(
            names.iter().any(|n| n == want),
            "msvcrt!{want} imported: {names:?}"
        );
    }
    // IAT slots are consecutive dwords per DLL.
    let iat: Vec<u32> = imps[0].imports.iter().map(|i| i.iat_rva).collect();
    assert!(iat.windows(2).all(|w| w[1] == w[0] + 4));
}

#[test]
fn dll_exports_forwarders_resources_tls() {
    let Some(bytes) = read("testdll.dll") else {
        return;
    };
    let pe = PeFile::parse(&bytes).unwrap();
    assert!(pe.is_dll());
    let (name, exports) = pe.exports().unwrap();
    assert_eq!(name, "testdll.dll");
    let summary: Vec<(u16, Option<&str>, bool)> = exports
        .iter()
        .map(|e| {
            (
                e.ordinal,
                e.name.as_deref(),
                matches!(e.target, ExportTarget::Rva(_)),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (1, Some("td_add@8"), true),
            (3, Some("td_ticks"), false),
            (7, None, true)
        ]
    );
    assert_eq!(
        exports[1].target,
        ExportTarget::Forward("KERNEL32.GetTickCount".into())
    );
    assert_eq!(
        resources::string_table(&pe).unwrap(),
        vec![
            (1, "first string".to_string()),
            (17, "seventeen".to_string())
        ]
    );
    // find_string: the RVA LoadString hands out, and the length in units.
    let text_at = |(rva, len): (u32, u32)| -> String {
        let units: Vec<u16> = (0..len as usize)
            .map(|k| {
                let o = rva as usize + 2 * k;
                u16::from_le_bytes([pe.image[o], pe.image[o + 1]])
            })
            .collect();
        String::from_utf16_lossy(&units)
    };
    assert_eq!(
        resources::find_string(&pe, 17).unwrap().map(text_at),
        Some("seventeen".to_string())
    );
    assert_eq!(
        resources::find_string(&pe, 1).unwrap().map(text_at),
        Some("first string".to_string())
    );
    assert_eq!(resources::find_string(&pe, 2).unwrap(), None);
    assert_eq!(resources::find_string(&pe, 0xFFFF_FFF0).unwrap(), None);
    let vi = resources::version_info(&pe).unwrap().unwrap();
    assert_eq!(
        (vi.file_version, vi.product_version),
        ((1, 2, 3, 4), (5, 6, 7, 8))
    );
    assert_eq!(
        vi.strings,
        vec![
            ("CompanyName".to_string(), "mainemu tests".to_string()),
            ("FileVersion".to_string(), "1.2.3.4".to_string())
        ]
    );
    let tls = pe.tls().unwrap().unwrap();
    // Ours plus the two the mingw CRT registers.
    assert_eq!(tls.callbacks.len(), 3, "{tls:?}");
    assert!(
        tls.callbacks[0] >= pe.image_base && tls.callbacks[0] < pe.image_base + pe.size_of_image
    );
}

#[test]
fn usedll_imports_by_ordinal() {
    let Some(bytes) = read("usedll.exe") else {
        return;
    };
    let pe = PeFile::parse(&bytes).unwrap();
    let imps = pe.imports().unwrap();
    let td = imps
        .iter()
        .find(|d| d.dll == "testdll.dll")
        .expect("imports testdll.dll");
    let names: Vec<_> = td.imports.iter().map(|i| i.name.clone()).collect();
    assert!(names.contains(&ImportName::Ordinal(7)), "{names:?}");
    assert!(names
        .iter()
        .any(|n| matches!(n, ImportName::Name { name, .. } if name == "td_add@8")));
}

#[test]
fn second_copy_is_relocated() {
    let Some(bytes) = read("testdll.dll") else {
        return;
    };
    let mut m = Memory::new();
    let mut a = PeFile::parse(&bytes).unwrap();
    let mut b = PeFile::parse(&bytes).unwrap();
    let pristine = PeFile::parse(&bytes).unwrap();
    let ma = load::map(&mut m, &mut a).unwrap();
    let mb = load::map(&mut m, &mut b).unwrap();
    assert_eq!(
        (ma.base, ma.relocated, ma.fixups),
        (pristine.image_base, false, 0)
    );
    assert!(mb.relocated && mb.base != ma.base);
    let relocs = pristine.relocations().unwrap();
    assert_eq!(mb.fixups, relocs.len());
    assert!(!relocs.is_empty());
    let delta = mb.base.wrapping_sub(ma.base);
    for &r in &relocs {
        let va = m.peek_u32(ma.base + r).unwrap();
        let vb = m.peek_u32(mb.base + r).unwrap();
        assert_eq!(vb, va.wrapping_add(delta), "fixup at RVA {r:#x}");
    }
    // Headers read-only, .text execute-read.
    assert_eq!(m.query(mb.base).protect, prot::READONLY);
    let text = pristine
        .sections
        .iter()
        .find(|s| s.name == ".text")
        .unwrap();
    assert_eq!(
        m.query(mb.base + text.virtual_address).protect,
        prot::EXECUTE_READ
    );
}

#[test]
fn hostile_headers_have_clear_errors() {
    let cases: &[(&[u8], &str)] = &[
        (b"", "truncated: DOS header"),
        (b"MZ", "truncated: e_lfanew"),
        (b"ZM\0\0", "not a PE file: no MZ signature"),
    ];
    for (bytes, want) in cases {
        let e = PeFile::parse(bytes).unwrap_err().0;
        assert!(e.starts_with(want), "{e}");
    }
    let Some(hello) = read("hello.exe") else {
        return;
    };
    let pe_off = u32::from_le_bytes(hello[0x3C..0x40].try_into().unwrap()) as usize;
    let mut b = hello.clone();
    b[pe_off + 4] = 0x64; // machine 0x8664
    b[pe_off + 5] = 0x86;
    assert_eq!(
        PeFile::parse(&b).unwrap_err().0,
        "not an i386 image: machine 0x8664"
    );
    let e = PeFile::parse(&hello[..hello.len() / 2]).unwrap_err().0;
    assert!(e.starts_with("truncated: section"), "{e}");
}

fn exercise(bytes: &[u8]) {
    if let Ok(mut pe) = PeFile::parse(bytes) {
        let _ = pe.imports();
        let _ = pe.delay_imports();
        let _ = pe.exports();
        let _ = pe.tls();
        let _ = resources::walk(&pe);
        let _ = resources::string_table(&pe);
        let _ = resources::find_string(&pe, 17);
        let _ = resources::version_info(&pe);
        let mut m = Memory::new();
        let _ = load::map(&mut m, &mut pe);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    /// Mutated header and directory bytes never panic.
    #[test]
    fn mutated_headers_never_panic(edits in proptest::collection::vec((0usize..0x600, any::<u8>()), 1..12),
                                   name in prop::sample::select(vec!["hello.exe", "testdll.dll"])) {
        if let Some(mut b) = read(name) {
            for (at, v) in edits { let n = b.len(); b[at % n] = v; }
            exercise(&b);
        }
    }
    /// Truncations never panic.
    #[test]
    fn truncated_files_never_panic(cut in 0usize..14000) {
        if let Some(b) = read("testdll.dll") {
            exercise(&b[..cut.min(b.len())]);
        }
    }
}

#[test]
fn real_programs_parse() {
    let Some(dir) = common::win32_real() else {
        return;
    };
    let manifest = std::fs::read_to_string(dir.join("MANIFEST.tsv")).unwrap();
    let mut n = 0;
    for line in manifest.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let path = dir.join(cols[0]);
        let bytes = std::fs::read(&path).unwrap();
        let pe = PeFile::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", cols[0]));
        let got: Vec<String> = pe
            .imports()
            .unwrap()
            .iter()
            .map(|d| d.dll.to_ascii_lowercase())
            .collect();
        let mut want: Vec<String> = cols[6]
            .split_whitespace()
            .map(|s| s.to_ascii_lowercase())
            .collect();
        let mut got_sorted = got.clone();
        got_sorted.sort();
        got_sorted.dedup();
        want.sort();
        assert_eq!(got_sorted, want, "{}", cols[0]);
        let _ = pe.exports().unwrap();
        let _ = pe.tls().unwrap();
        let _ = resources::walk(&pe).unwrap();
        let mut m = Memory::new();
        let mut pe = pe;
        load::map(&mut m, &mut pe).unwrap();
        n += 1;
    }
    assert!(n >= 16, "{n} programs");
}
