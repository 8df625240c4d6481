//! Whole mingw programs run on the shared CPU (arm l0), one case table:
//! exact stdout, exit code and dispatch count, each run twice with the same
//! result (invariant 7). Each program runs with C: mapped to a fresh empty
//! directory (the file programs create and delete their files there) and
//! its own directory readable as D:.
mod common;

use mainemu::run::{run, Ending, Summary};

struct Case {
    program: &'static str,
    args: &'static [&'static str],
    stdout: &'static str,
    code: u32,
    dispatches: u64,
}

/// Runs a test program with C: on a fresh directory; (summary, stdout, stderr).
fn go(name: &str, args: &[&str]) -> Option<(Summary, String, String)> {
    let (mut p, c) = common::process_with_c(name, args, "run")?;
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let s = run(&mut p, 50_000_000, &mut |stream, b| {
        if stream == 2 { &mut err } else { &mut out }.extend_from_slice(b)
    });
    let left: Vec<_> = std::fs::read_dir(&c)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "{name} left files behind: {left:?}");
    std::fs::remove_dir_all(&c).ok();
    Some((
        s,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    ))
}

const FILES_OUT: &str = r"mkdir=1 again=0 err=183
size=6 hi=7
seek=2
read n=4 [pha!]
truncated size=3 type=1
find .      attr=10 size=0
find ..     attr=10 size=0
find a.txt  attr=20 size=3
find b.txt  attr=20 size=5
find C.dat  attr=20 size=12
find sub    attr=10 size=0
end err=18
txt=2 missing=1 err=2
attr dir=10 file=20 none=ffffffff err=2
move=1 copy=1 copyfail=0 err=80
full=C:\work\a.txt n=13 part=a.txt
cwd=C:\work\sub
open b2.txt -> ok err=0
cwd=C:\
open ..\outside.txt -> fail err=5
open C:\..\..\etc\passwd -> fail err=5
open \\server\share\x -> fail err=5
open \\?\C:\work\a.txt -> fail err=5
open work\a.txt:stream -> fail err=123
open work\com1.txt -> fail err=5
open Q:\x -> fail err=3
nul write=1 n=3
del=1 deldir=0 err=145
rmdir=1 1
drives=c type=3
";

const CRTIO_OUT: &str = "binary size=26 crlf=1
scanf lines=3 total=356 eof=1
first=o line=[Xne 1] pos=7
tail=[333]
lseek=3 tell=3
read=[3456] len=10
close twice=-1 errno=9
stat=0 size=10 dir=0
stat .=0 dir=1
stat missing=-1 errno=2
findfirst=d.bin size=10
rename=0 remove=0 again=-1 errno=2
sscanf=3 a=42 b=ff word=hello
sscanf=1 d=32.500
";

const THREADS_OUT: &str = "wait early=258
slept>=50: 1
waitall=0
thread 0 exit=101
thread 1 exit=202
thread 2 exit=303
counter=3000 shared=3000 tls=1
sems=3 timeout=258
crt thread x=77 exit=5
named mutex same=1 err=183 release=1
";

const SEH_OUT: &str = "av: v=1234 code=c0000005 read=0 addr=0
raise: v=5 code=e0001234 args=11,22
longjmp: v=7 code=c0000005 write=1 addr=10
overflow: v=9 code=c00000fd write=1 deep=yes
filter code=c0000005
";

fn cases() -> Vec<Case> {
    vec![
        Case { program: "hello.exe", args: &[], stdout: "hello, world\nsecond line\n", code: 3, dispatches: 959 },
        Case {
            program: "heap.exe",
            args: &[],
            // VirtualQuery(v + 5000): from page v+4096 to the end of the 64K allocation.
            stdout: "region=61440 state=1000 protect=4\nsum=901a2dda\n",
            code: 0,
            dispatches: 605022,
        },
        Case {
            program: "cmdline.exe",
            args: &["x", "y z"],
            stdout: "argc=3\nargv[0]=[cmdline.exe]\nargv[1]=[x]\nargv[2]=[y z]\ncmdline=[cmdline.exe x \"y z\"]\nPATH=C:\\windows\\system32;C:\\windows\n",
            code: 3,
            dispatches: 5240,
        },
        Case {
            program: "fileio.exe",
            args: &[],
            stdout: "lines=100 bytes=790\nsize=790 first=[line 0] got=7\ndelete=1\nagain=1 err=0\n",
            code: 0,
            dispatches: 55993,
        },
        Case { program: "files.exe", args: &[], stdout: FILES_OUT, code: 0, dispatches: 34415 },
        Case { program: "crtio.exe", args: &[], stdout: CRTIO_OUT, code: 0, dispatches: 32928 },
        Case { program: "threads.exe", args: &[], stdout: THREADS_OUT, code: 0, dispatches: 6010930 },
        // The unhandled-exception filter answers EXECUTE_HANDLER: exit code = the exception code.
        Case { program: "seh.exe", args: &[], stdout: SEH_OUT, code: 0xC000_0005, dispatches: 70872 },
        Case { program: "usedll.exe", args: &[], stdout: "5 5ec2e7\n", code: 0, dispatches: 1731 },
    ]
}

#[test]
fn programs_run_exactly_and_twice_the_same() {
    let mut failures = Vec::new();
    for c in cases() {
        let Some((s, out, _)) = go(c.program, c.args) else {
            return;
        };
        let (s2, out2, _) = go(c.program, c.args).unwrap();
        let mut bad = Vec::new();
        if out != c.stdout {
            bad.push(format!("stdout:\n{out}--- want:\n{}", c.stdout));
        }
        if s.ending != (Ending::Exit { code: c.code }) {
            bad.push(format!("ending {:?}, want exit {}", s.ending, c.code));
        }
        if s.dispatches != c.dispatches {
            bad.push(format!("dispatches {} want {}", s.dispatches, c.dispatches));
        }
        if (s2.dispatches, &s2.api_calls, &out2) != (s.dispatches, &s.api_calls, &out) {
            bad.push("second run differs".into());
        }
        if !bad.is_empty() {
            failures.push(format!("{}: {}", c.program, bad.join("; ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn stderr_is_its_own_stream() {
    let Some((_, out, err)) = go("crtio.exe", &[]) else {
        return;
    };
    assert_eq!(err, "to stderr\n");
    assert!(!out.contains("to stderr"));
}
