//! Guest file access cannot leave the directories it was given: `..` past
//! the root, absolute host paths, other drive letters and symlinks are
//! refused with DOS errors, and writes go to memory (or, when asked, only
//! inside the output directory). A program tries each escape through
//! INT 21h; the test then checks the host side.

use iced_x86::code_asm::*;
use std::path::PathBuf;
use toyvm::session::{Config, End, Session};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("toyvm-paths-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// One INT 21h call: AX, and DX/DI pointing at strings (by index).
struct Op {
    ax: u16,
    dx: usize,
    di: Option<usize>,
    cx: u16,
}

/// Builds a COM program that performs `ops` and exits with the number of
/// calls that succeeded (CF clear).
fn program(strings: &[String], ops: &[Op]) -> Vec<u8> {
    let mut data = Vec::new();
    let mut offs = Vec::new();
    for s in strings {
        offs.push(data.len());
        data.extend_from_slice(s.as_bytes());
        data.push(0);
    }
    let build = |base: u16| {
        let mut a = CodeAssembler::new(16).unwrap();
        a.xor(bl, bl).unwrap();
        for op in ops {
            a.mov(ax, op.ax as u32).unwrap();
            a.mov(cx, op.cx as u32).unwrap();
            a.mov(dx, (base as usize + offs[op.dx]) as u32).unwrap();
            a.mov(di, (base as usize + offs[op.di.unwrap_or(op.dx)]) as u32)
                .unwrap();
            a.push(bx).unwrap();
            a.int(0x21).unwrap();
            a.pop(bx).unwrap();
            a.cmc().unwrap();
            a.adc(bl, 0).unwrap();
        }
        a.mov(al, bl).unwrap();
        a.mov(ah, 0x4C).unwrap();
        a.int(0x21).unwrap();
        a.assemble(0x100).unwrap()
    };
    let len = build(0).len() as u16;
    let mut v = build(0x100 + len);
    assert_eq!(v.len() as u16, len);
    v.extend_from_slice(&data);
    v
}

fn run(cfg: &Config) -> Session {
    let mut s = Session::new(cfg).unwrap();
    s.run();
    s
}

fn listing(d: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = walk(d)
        .into_iter()
        .map(|p| p.strip_prefix(d).unwrap().display().to_string())
        .collect();
    v.sort();
    v
}

fn walk(d: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(d).unwrap().flatten() {
        let p = e.path();
        out.push(p.clone());
        if p.is_dir() && !p.is_symlink() {
            out.extend(walk(&p));
        }
    }
    out
}

#[test]
fn escapes_are_refused_and_nothing_outside_is_touched() {
    let top = tmp("escape");
    let root = top.join("prog");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(top.join("SECRET.TXT"), b"secret").unwrap();
    std::fs::write(root.join("OK.TXT"), b"ok").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(top.join("SECRET.TXT"), root.join("LINK.TXT")).unwrap();
    let abs = top.join("SECRET.TXT").display().to_string();
    let strings: Vec<String> = vec![
        "..\\SECRET.TXT".into(),        // 0
        "C:\\..\\SECRET.TXT".into(),    // 1
        abs,                            // 2 absolute host path
        "D:\\SECRET.TXT".into(),        // 3
        "..\\EVIL.TXT".into(),          // 4
        "..\\EVILDIR".into(),           // 5
        "OK.TXT".into(),                // 6
        "..\\MOVED.TXT".into(),         // 7
        "..".into(),                    // 8
        "C:\\..\\..\\EVIL2.TXT".into(), // 9
        "..\\*.*".into(),               // 10
        "LINK.TXT".into(),              // 11
        "A:SECRET.TXT".into(),          // 12
        "\\\\server\\share\\x".into(),  // 13
    ];
    let ops = vec![
        Op {
            ax: 0x3D00,
            dx: 0,
            di: None,
            cx: 0,
        }, // open ..\SECRET.TXT
        Op {
            ax: 0x3D00,
            dx: 1,
            di: None,
            cx: 0,
        }, // open C:\..\SECRET.TXT
        Op {
            ax: 0x3D00,
            dx: 2,
            di: None,
            cx: 0,
        }, // open /tmp/.../SECRET.TXT
        Op {
            ax: 0x3D00,
            dx: 3,
            di: None,
            cx: 0,
        }, // open D:\SECRET.TXT
        Op {
            ax: 0x3C00,
            dx: 4,
            di: None,
            cx: 0,
        }, // create ..\EVIL.TXT
        Op {
            ax: 0x3900,
            dx: 5,
            di: None,
            cx: 0,
        }, // mkdir ..\EVILDIR
        Op {
            ax: 0x5600,
            dx: 6,
            di: Some(7),
            cx: 0,
        }, // rename OK.TXT -> ..\MOVED.TXT
        Op {
            ax: 0x3B00,
            dx: 8,
            di: None,
            cx: 0,
        }, // chdir ..
        Op {
            ax: 0x3C00,
            dx: 9,
            di: None,
            cx: 0,
        }, // create C:\..\..\EVIL2.TXT
        Op {
            ax: 0x4E00,
            dx: 10,
            di: None,
            cx: 0x37,
        }, // find first ..\*.*
        Op {
            ax: 0x3D00,
            dx: 11,
            di: None,
            cx: 0,
        }, // open a symlink pointing outside
        Op {
            ax: 0x3D00,
            dx: 12,
            di: None,
            cx: 0,
        }, // open A:SECRET.TXT
        Op {
            ax: 0x3D00,
            dx: 13,
            di: None,
            cx: 0,
        }, // open a UNC name
        Op {
            ax: 0x4100,
            dx: 0,
            di: None,
            cx: 0,
        }, // delete ..\SECRET.TXT
        Op {
            ax: 0x4301,
            dx: 1,
            di: None,
            cx: 1,
        }, // set attributes outside
    ];
    std::fs::write(root.join("ESC.COM"), program(&strings, &ops)).unwrap();
    let before = listing(&top);
    let before_root = listing(&root);
    let s = run(&Config::new(root.join("ESC.COM")));
    assert_eq!(
        s.end,
        Some(End::Exited { code: 0 }),
        "every escape must fail"
    );
    assert_eq!(listing(&top), before);
    assert_eq!(listing(&root), before_root);
    assert_eq!(std::fs::read(top.join("SECRET.TXT")).unwrap(), b"secret");
    std::fs::remove_dir_all(&top).unwrap();
}

#[test]
fn allowed_writes_stay_in_memory_or_inside_the_output_directory() {
    let top = tmp("outdir");
    let root = top.join("prog");
    let out = top.join("out");
    std::fs::create_dir_all(&root).unwrap();
    let strings: Vec<String> = vec!["SUB".into(), "SUB\\A.TXT".into(), "..\\B.TXT".into()];
    let ops = vec![
        Op {
            ax: 0x3900,
            dx: 0,
            di: None,
            cx: 0,
        }, // mkdir SUB
        Op {
            ax: 0x3C00,
            dx: 1,
            di: None,
            cx: 0,
        }, // create SUB\A.TXT
        Op {
            ax: 0x3C00,
            dx: 2,
            di: None,
            cx: 0,
        }, // create ..\B.TXT (refused)
    ];
    std::fs::write(root.join("W.COM"), program(&strings, &ops)).unwrap();
    // Without an output directory nothing reaches the host.
    let s = run(&Config::new(root.join("W.COM")));
    assert_eq!(s.end, Some(End::Exited { code: 2 }));
    assert_eq!(listing(&root), vec!["W.COM".to_string()]);
    // With one, only files inside it appear.
    let mut cfg = Config::new(root.join("W.COM"));
    cfg.out_dir = Some(out.clone());
    let mut s = run(&cfg);
    s.flush_files().unwrap();
    assert_eq!(s.end, Some(End::Exited { code: 2 }));
    assert_eq!(
        listing(&out),
        vec!["SUB".to_string(), "SUB/A.TXT".to_string()]
    );
    assert_eq!(listing(&root), vec!["W.COM".to_string()]);
    assert_eq!(
        listing(&top),
        vec!["out", "out/SUB", "out/SUB/A.TXT", "prog", "prog/W.COM"]
    );
    std::fs::remove_dir_all(&top).unwrap();
}
