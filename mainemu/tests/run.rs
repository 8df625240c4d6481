//! Whole mingw programs run on the shared CPU (arm l0): exact output, exit
//! code and dispatch count, and the same twice (invariant 7).
mod common;

use mainemu::process::Process;
use mainemu::run::{run, Ending, Summary};

fn go(name: &str, args: &[&str]) -> Option<(Summary, Vec<u8>)> {
    let bytes = std::fs::read(common::programs()?.join(name)).unwrap();
    let mut argv = vec![name.to_string()];
    argv.extend(args.iter().map(|s| s.to_string()));
    let mut p = Process::new(&bytes, &argv).unwrap();
    let mut out = Vec::new();
    let s = run(&mut p, 50_000_000, &mut |_, b| out.extend_from_slice(b));
    Some((s, out))
}

#[test]
fn hello_runs_exactly_and_twice_the_same() {
    let Some((s, out)) = go("hello.exe", &[]) else {
        return;
    };
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "hello, world\nsecond line\n"
    );
    assert_eq!(s.ending, Ending::Exit { code: 3 });
    let (s2, _) = go("hello.exe", &[]).unwrap();
    assert_eq!(s.dispatches, s2.dispatches);
    assert_eq!(s.api_calls, s2.api_calls);
    assert!(s.dispatches > 100, "{}", s.dispatches);
}

#[test]
fn heap_program_runs() {
    let Some((s, out)) = go("heap.exe", &[]) else {
        return;
    };
    assert_eq!(s.ending, Ending::Exit { code: 0 });
    // VirtualQuery(v + 5000): from page v+4096 to the end of the 64K allocation.
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "region=61440 state=1000 protect=4\nsum=901a2dda\n"
    );
    let (s2, _) = go("heap.exe", &[]).unwrap();
    assert_eq!(s.dispatches, s2.dispatches);
}

#[test]
fn cmdline_program_runs() {
    let Some((s, out)) = go("cmdline.exe", &["x", "y z"]) else {
        return;
    };
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "argc=3\nargv[0]=[cmdline.exe]\nargv[1]=[x]\nargv[2]=[y z]\ncmdline=[cmdline.exe x \"y z\"]\nPATH=(none)\n"
    );
    assert_eq!(s.ending, Ending::Exit { code: 3 });
}

#[test]
fn fileio_stops_at_the_first_unimplemented_call() {
    let Some((s, out)) = go("fileio.exe", &[]) else {
        return;
    };
    assert!(out.is_empty());
    match s.ending {
        Ending::Unimplemented { report } => assert!(
            report.starts_with("unimplemented MSVCRT!fopen called from 0x"),
            "{report}"
        ),
        e => panic!("{e:?}"),
    }
}
