//! Process setup over a mingw-built program: layout, IAT binding to thunks,
//! and API calls serviced at the thunks (the CPU's CALL simulated by pushing
//! the return address).
mod common;

use mainemu::pe::{ImportName, PeFile};
use mainemu::process::{peb, teb, Process, Service, THUNK_BASE};
use x86_cpu::reg;

fn hello() -> Option<(Vec<u8>, Process)> {
    let bytes = std::fs::read(common::programs()?.join("hello.exe")).unwrap();
    let argv = vec!["hello.exe".to_string(), "a b".to_string()];
    let p = Process::new(&bytes, &argv).unwrap();
    Some((bytes, p))
}

/// Simulates `call [slot]` from 0x401000: pushes args (last first) and the return address.
fn call(p: &mut Process, thunk: u32, args: &[u32]) -> Service {
    let mut esp = p.env.cpu().regs[reg::ESP];
    for &a in args.iter().rev() {
        esp -= 4;
        p.env.mem.poke_u32(esp, a).unwrap();
    }
    esp -= 4;
    p.env.mem.poke_u32(esp, 0x40_1006).unwrap();
    p.env.cpu().regs[reg::ESP] = esp;
    p.env.cpu().eip = thunk;
    assert!(p.is_thunk(thunk));
    p.service()
}

fn thunk_of(p: &mut Process, dll: &str, name: &str) -> u32 {
    p.thunk_for(
        dll,
        &ImportName::Name {
            hint: 0,
            name: name.into(),
        },
    )
    .unwrap()
}

#[test]
fn layout_and_binding() {
    let Some((bytes, mut p)) = hello() else {
        return;
    };
    let pe = PeFile::parse(&bytes).unwrap();
    assert_eq!(p.image_base, 0x40_0000);
    assert_eq!(p.entry, 0x40_0000 + pe.entry_rva);
    let m = &p.env.mem;
    assert_eq!(m.peek_u32(p.teb + teb::SELF), Some(p.teb));
    assert_eq!(m.peek_u32(p.teb + teb::PEB), Some(p.peb));
    assert_eq!(m.peek_u32(p.teb + teb::STACK_BASE), Some(p.stack_top));
    assert_eq!(m.peek_u32(p.peb + peb::IMAGE_BASE), Some(0x40_0000));
    assert_eq!(
        m.peek_cstr(p.env.cmdline_a, 100).unwrap(),
        b"hello.exe \"a b\""
    );
    // Every IAT slot but the three data imports points into the thunk area,
    // one slot per distinct export.
    let mut seen = std::collections::BTreeSet::new();
    let mut data = Vec::new();
    for d in pe.imports().unwrap() {
        for i in d.imports {
            let t = m.peek_u32(0x40_0000 + i.iat_rva).unwrap();
            if p.is_thunk(t) {
                seen.insert(t);
            } else {
                data.push(i.name.to_string());
            }
        }
    }
    assert_eq!(data, vec!["__initenv", "__mb_cur_max", "_iob"]);
    assert_eq!(seen.len(), 53);
    assert_eq!(seen.first(), Some(&THUNK_BASE));
    // The same export from another importer shares the thunk.
    let t = thunk_of(&mut p, "kernel32", "GetLastError");
    assert!(seen.contains(&t));
}

#[test]
fn api_calls_at_thunks() {
    let Some((_, mut p)) = hello() else { return };
    let esp0 = p.env.cpu().regs[reg::ESP];
    // stdcall with one argument pops 8 bytes.
    let t = thunk_of(&mut p, "KERNEL32.dll", "SetLastError");
    assert_eq!(call(&mut p, t, &[1234]), Service::Continue);
    assert_eq!(
        (p.env.cpu().regs[reg::ESP], p.env.cpu().eip),
        (esp0, 0x40_1006)
    );
    let t = thunk_of(&mut p, "KERNEL32.dll", "GetLastError");
    assert_eq!(call(&mut p, t, &[]), Service::Continue);
    assert_eq!(p.env.cpu().regs[reg::EAX], 1234);
    // cdecl pops only the return address; the caller cleans the argument.
    let t = thunk_of(&mut p, "msvcrt.dll", "strlen");
    let cmd = p.env.cmdline_a;
    assert_eq!(call(&mut p, t, &[cmd]), Service::Continue);
    assert_eq!(
        (p.env.cpu().regs[reg::EAX], p.env.cpu().regs[reg::ESP]),
        (15, esp0 - 4)
    );
    p.env.cpu().regs[reg::ESP] = esp0;
    // GetTickCount reads the guest clock.
    p.env.cpu().clock = 300_000_000;
    let t = thunk_of(&mut p, "kernel32.dll", "GetTickCount");
    call(&mut p, t, &[]);
    assert_eq!(p.env.cpu().regs[reg::EAX], 3000);
    // An unimplemented import stops with its name and the return address.
    let t = thunk_of(&mut p, "msvcrt.dll", "_no_such_export");
    assert_eq!(
        call(&mut p, t, &[0, 0, 0]),
        Service::Stop("unimplemented MSVCRT!_no_such_export called from 0x00401006".into())
    );
    // Returning from the entry point exits with EAX.
    p.env.cpu().regs[reg::ESP] = esp0;
    p.env.cpu().regs[reg::EAX] = 3;
    p.env.cpu().eip = p.env.mem.peek_u32(esp0).unwrap();
    assert_eq!(p.service(), Service::Exit(3));
    assert_eq!(p.calls.get("kernel32.dll!GetLastError"), Some(&1));
}

#[test]
fn heap_calls_on_the_process_heap() {
    let Some((_, mut p)) = hello() else { return };
    let esp0 = p.env.cpu().regs[reg::ESP];
    let heap = p.env.process_heap;
    assert_eq!(p.env.mem.peek_u32(p.peb + peb::PROCESS_HEAP), Some(heap));
    let t = thunk_of(&mut p, "msvcrt.dll", "malloc");
    call(&mut p, t, &[100]);
    let a = p.env.cpu().regs[reg::EAX];
    p.env.cpu().regs[reg::ESP] = esp0;
    let t = thunk_of(&mut p, "kernel32.dll", "HeapAlloc");
    call(&mut p, t, &[heap, 8, 16]);
    let b = p.env.cpu().regs[reg::EAX];
    assert_eq!(b, a + 104, "first fit after the 100-byte block");
    assert_eq!(p.env.cpu().regs[reg::ESP], esp0, "stdcall popped 3 args");
    let t = thunk_of(&mut p, "kernel32.dll", "HeapSize");
    call(&mut p, t, &[heap, 0, a]);
    assert_eq!(p.env.cpu().regs[reg::EAX], 100);
    let t = thunk_of(&mut p, "kernel32.dll", "HeapFree");
    call(&mut p, t, &[0x1234, 0, a]);
    assert_eq!(p.env.cpu().regs[reg::EAX], 0, "bad heap handle");
    let t = thunk_of(&mut p, "kernel32.dll", "GetLastError");
    call(&mut p, t, &[]);
    assert_eq!(p.env.cpu().regs[reg::EAX], 6);
}

#[test]
fn crt_startup_data_and_mainargs() {
    let Some((bytes, mut p)) = hello() else {
        return;
    };
    // Data imports are bound to variables, not thunks.
    let pe = PeFile::parse(&bytes).unwrap();
    let msvcrt = pe
        .imports()
        .unwrap()
        .into_iter()
        .find(|d| d.dll == "msvcrt.dll")
        .unwrap();
    let slot = |n: &str| {
        msvcrt
            .imports
            .iter()
            .find(|i| i.name.to_string() == n)
            .unwrap()
            .iat_rva
    };
    let mb = p
        .env
        .mem
        .peek_u32(0x40_0000 + slot("__mb_cur_max"))
        .unwrap();
    assert!(!p.is_thunk(mb));
    assert_eq!(p.env.mem.peek_u32(mb), Some(1));
    let iob = p.env.mem.peek_u32(0x40_0000 + slot("_iob")).unwrap();
    assert!(!p.is_thunk(iob) && iob != mb);
    let esp0 = p.env.cpu().regs[reg::ESP];
    let out = p.env.process_heap; // any heap block will do for the three out-pointers
    let t = thunk_of(&mut p, "kernel32.dll", "HeapAlloc");
    call(&mut p, t, &[out, 8, 12]);
    let outs = p.env.cpu().regs[reg::EAX];
    let t = thunk_of(&mut p, "msvcrt.dll", "__getmainargs");
    call(&mut p, t, &[outs, outs + 4, outs + 8, 0, 0]);
    p.env.cpu().regs[reg::ESP] = esp0;
    let m = &p.env.mem;
    assert_eq!(m.peek_u32(outs), Some(2));
    let argv = m.peek_u32(outs + 4).unwrap();
    let arg = |k: u32| m.peek_cstr(m.peek_u32(argv + 4 * k).unwrap(), 64).unwrap();
    assert_eq!((arg(0), arg(1)), (b"hello.exe".to_vec(), b"a b".to_vec()));
    assert_eq!(m.peek_u32(argv + 8), Some(0));
    let t = thunk_of(&mut p, "kernel32.dll", "GetModuleHandleA");
    call(&mut p, t, &[0]);
    assert_eq!(p.env.cpu().regs[reg::EAX], 0x40_0000);
}

#[test]
fn printf_family_through_thunks() {
    let Some((_, mut p)) = hello() else { return };
    let esp0 = p.env.cpu().regs[reg::ESP];
    let t = thunk_of(&mut p, "msvcrt.dll", "malloc");
    call(&mut p, t, &[64]);
    let buf = p.env.cpu().regs[reg::EAX];
    p.env.mem.poke(buf, b"n=%d s=%s\n\0").unwrap();
    let cmd = p.env.cmdline_a;
    p.env.cpu().regs[reg::ESP] = esp0;
    let t = thunk_of(&mut p, "msvcrt.dll", "printf");
    assert_eq!(call(&mut p, t, &[buf, 42, cmd]), Service::Continue);
    assert_eq!(p.env.cpu().regs[reg::EAX], 23);
    p.env.cpu().regs[reg::ESP] = esp0;
    // fprintf(stderr) goes to stream 2; the stdout bytes stay separate.
    let iob = p.env.data["msvcrt.dll!_iob"];
    let t = thunk_of(&mut p, "msvcrt.dll", "fprintf");
    call(&mut p, t, &[iob + 64, buf, -1i32 as u32, cmd]);
    p.env.cpu().regs[reg::ESP] = esp0;
    assert_eq!(
        String::from_utf8(p.env.stdout()).unwrap(),
        "n=42 s=hello.exe \"a b\"\n"
    );
    assert_eq!(p.env.console.len(), 2);
    assert_eq!(
        p.env.console[1],
        (2, b"n=-1 s=hello.exe \"a b\"\n".to_vec())
    );
    // _snprintf (msvcrt's rule) fills the buffer without a NUL and reports -1.
    let t = thunk_of(&mut p, "msvcrt.dll", "_snprintf");
    call(&mut p, t, &[buf + 32, 5, buf, 7, cmd]);
    assert_eq!(p.env.cpu().regs[reg::EAX] as i32, -1);
    assert_eq!(p.env.mem.peek_cstr(buf + 32, 16).unwrap(), b"n=7 s");
}

#[test]
fn crt_helpers_through_thunks() {
    let Some((_, mut p)) = hello() else { return };
    let esp0 = p.env.cpu().regs[reg::ESP];
    let c = |p: &mut Process, dll: &str, f: &str, args: &[u32]| {
        let t = thunk_of(p, dll, f);
        p.env.cpu().regs[reg::ESP] = esp0;
        assert_eq!(call(p, t, args), Service::Continue, "{f}");
        p.env.cpu().regs[reg::EAX]
    };
    let buf = c(&mut p, "msvcrt.dll", "malloc", &[64]);
    p.env.mem.poke(buf, b"  -123x\0abc\0").unwrap();
    assert_eq!(c(&mut p, "msvcrt.dll", "atoi", &[buf]) as i32, -123);
    assert_eq!(
        c(&mut p, "msvcrt.dll", "strchr", &[buf, b'x' as u32]),
        buf + 6
    );
    assert_eq!(c(&mut p, "msvcrt.dll", "strchr", &[buf, b'q' as u32]), 0);
    assert_eq!(c(&mut p, "msvcrt.dll", "strncmp", &[buf + 8, buf, 0]), 0);
    // "abc" -> UTF-16 and back; -1 includes the NUL.
    let w = buf + 32;
    assert_eq!(
        c(
            &mut p,
            "kernel32.dll",
            "MultiByteToWideChar",
            &[0, 0, buf + 8, -1i32 as u32, w, 8]
        ),
        4
    );
    assert_eq!(c(&mut p, "msvcrt.dll", "wcslen", &[w]), 3);
    assert_eq!(
        c(
            &mut p,
            "kernel32.dll",
            "WideCharToMultiByte",
            &[0, 0, w, 3, buf + 48, 8, 0, 0]
        ),
        3
    );
    assert_eq!(p.env.mem.peek_cstr(buf + 48, 3).unwrap(), b"abc");
    let l = c(&mut p, "msvcrt.dll", "localeconv", &[]);
    let dp = p.env.mem.peek_u32(l).unwrap();
    assert_eq!(p.env.mem.peek_cstr(dp, 4).unwrap(), b".");
    let loc = c(&mut p, "msvcrt.dll", "setlocale", &[0, 0]);
    assert_eq!(p.env.mem.peek_cstr(loc, 4).unwrap(), b"C");
    let e = c(&mut p, "msvcrt.dll", "_errno", &[]);
    assert_eq!(p.env.mem.peek_u32(e), Some(0));
}

/// Runs `exe` with `args` and C: on `c` under `arm`: (summary, stdout, stderr).
fn run_in(
    exe: &std::path::Path,
    args: &[&str],
    c: &std::path::Path,
    arm: mainemu::run::Arm,
) -> (mainemu::run::Summary, Vec<u8>, Vec<u8>) {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let mut setup =
        mainemu::process::Setup::for_program(exe, &args, &[('C', c.to_path_buf())], &[]).unwrap();
    setup.stdin = Box::new(std::io::empty());
    let mut p = Process::with_setup(&std::fs::read(exe).unwrap(), setup).unwrap();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let s = mainemu::run::run_arm(&mut p, arm, 50_000_000, &mut |k, b| {
        if k == 2 { &mut err } else { &mut out }.extend_from_slice(b)
    });
    (s, out, err)
}

/// The built-in cmd.exe (`kernel32::cmd`) through CreateProcess with the
/// child's stdout and stderr in a pipe (tests/programs/shell.c prints the
/// bytes it read, escaped, and the exit code), then system() and _popen();
/// l0 and l1 the same.
#[test]
fn builtin_cmd_through_create_process() {
    use mainemu::run::{Arm, Ending};
    let Some(dir) = common::programs() else {
        return;
    };
    let exe = dir.join("shell.exe");
    let lines = [
        "cmd /c echo hi > out.txt && type out.txt",
        "cmd /c nosuch arg",
        "cmd /c echo hi >",
        "cmd /c type missing.txt || echo fallback",
        "C:\\Windows\\System32\\CMD.EXE /s /c \"mkdir d\\e && copy out.txt d\\e && type d\\e\\out.txt & exit /b 7\"",
    ];
    let want = concat!(
        "[cmd /c echo hi > out.txt && type out.txt] exit 0: \"hi  \\r\\n\"\n",
        "[cmd /c nosuch arg] exit 9009: \"'nosuch' is not recognized as an internal or external command,\\r\\noperable program or batch file.\\r\\n\"\n",
        "[cmd /c echo hi >] exit 255: \"The syntax of the command is incorrect.\\r\\n\"\n",
        "[cmd /c type missing.txt || echo fallback] exit 0: \"The system cannot find the file specified.\\r\\nfallback\\r\\n\"\n",
        "[C:\\Windows\\System32\\CMD.EXE /s /c \"mkdir d\\e && copy out.txt d\\e && type d\\e\\out.txt & exit /b 7\"] exit 7: \"        1 file(s) copied.\\r\\nhi  \\r\\n\"\n",
    );
    let mut sums = Vec::new();
    for arm in [Arm::L0, Arm::L1] {
        let c = tempfile::tempdir().unwrap();
        let (s, out, err) = run_in(&exe, &lines, c.path(), arm);
        assert_eq!(s.ending, Ending::Exit { code: 0 }, "{arm:?}");
        assert_eq!(String::from_utf8_lossy(&out), want, "{arm:?}");
        assert!(err.is_empty());
        assert_eq!(
            std::fs::read(c.path().join("out.txt")).unwrap(),
            b"hi  \r\n"
        );
        assert_eq!(
            std::fs::read(c.path().join("d/e/out.txt")).unwrap(),
            b"hi  \r\n"
        );
        // system() and _popen() go through cmd too; the unknown program's
        // message goes to the console's stderr.
        let c2 = tempfile::tempdir().unwrap();
        let (s2, out2, err2) = run_in(&exe, &[], c2.path(), arm);
        assert_eq!(s2.ending, Ending::Exit { code: 0 });
        assert_eq!(
            String::from_utf8_lossy(&out2),
            "sys \r\nsystem: 0\nsystem missing: 9009\npopen read 5: sys \npclose: 0\n"
        );
        assert_eq!(
            String::from_utf8_lossy(&err2),
            "'nosuch' is not recognized as an internal or external command,\r\noperable program or batch file.\r\n"
        );
        sums.push((s.dispatches, s2.dispatches));
    }
    assert_eq!(sums[0], sums[1], "l0 and l1 dispatches");
}

/// ninja builds an edge whose rule is `cmd /c ...` (the built-in cmd
/// writes the output and prints through ninja's pipe) under l0 and l1 with
/// the same dispatch count.
#[test]
fn ninja_builds_a_cmd_rule() {
    use mainemu::run::{Arm, Ending};
    let Some(real) = common::win32_real() else {
        return;
    };
    let ninja = real.join("ninja-1.13.2/ninja.exe");
    let mut runs = Vec::new();
    for arm in [Arm::L0, Arm::L1] {
        let c = tempfile::tempdir().unwrap();
        std::fs::write(
            c.path().join("build.ninja"),
            "rule cp\n  command = cmd /c copy $in $out && echo made $out >> $out\n  description = CP $out\nbuild out.txt: cp in.txt\n",
        )
        .unwrap();
        std::fs::write(c.path().join("in.txt"), "hi\n").unwrap();
        let (s, out, err) = run_in(&ninja, &[], c.path(), arm);
        assert_eq!(
            s.ending,
            Ending::Exit { code: 0 },
            "{arm:?}: {}",
            String::from_utf8_lossy(&out)
        );
        assert_eq!(
            std::fs::read(c.path().join("out.txt")).unwrap(),
            b"hi\nmade out.txt \r\n"
        );
        runs.push((s.dispatches, out, err));
    }
    eprintln!(
        "ninja cmd rule: {} dispatches, stdout {:?}",
        runs[0].0,
        String::from_utf8_lossy(&runs[0].1)
    );
    assert_eq!(runs[0], runs[1], "l0 and l1 differ");
}
