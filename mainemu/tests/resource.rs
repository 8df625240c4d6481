//! kernel32::resource through a mingw program (programs/resources.c and
//! resources.rc): FindResource(A/W/ExA/ExW) by number, "#n", name (any case)
//! and custom string type, language choice, LoadResource/LockResource/
//! SizeofResource on the data, the 1813/1814/1815 error codes, a bad HRSRC,
//! and a DLL's resource; the same output and state under arms l0 and l1.
mod common;

use common::arms::{diff, go};
use mainemu::run::{Arm, Ending};

const OUT: &str = "rcdata 101: size=10 lock=1 bytes=4142434445464748
rcdata #101: size=10 lock=1 bytes=4142434445464748
named: size=7 lock=1 bytes=656e676c697368
named W: size=7 lock=1 bytes=656e676c697368
named de: size=9 lock=1 bytes=6465757473636821
named neutral: size=7 lock=1 bytes=656e676c697368
custom: size=6 lock=1 bytes=010203040506
no type: not found err=1813
no name: not found err=1814
no lang: not found err=1815
hrsrc in image=1 free=0
bad handle load=00000000 size=0 err=6
dll version size=328
";

#[test]
fn resources_found_loaded_and_sized_under_l0_and_l1() {
    let Some(a) = go("resources.exe", &[], Arm::L0, 50_000_000) else {
        return;
    };
    let b = go("resources.exe", &[], Arm::L1, 50_000_000).unwrap();
    for e in [&a, &b] {
        assert_eq!(e.s.ending, Ending::Exit { code: 0 }, "{}", e.s.arm);
        assert_eq!(e.out, OUT, "{}", e.s.arm);
    }
    let d = diff(&a, &b);
    assert!(d.is_empty(), "{}", d.join("\n"));
}
