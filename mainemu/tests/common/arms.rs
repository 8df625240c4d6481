//! Running one program under two arms and comparing what they leave: the
//! summary less the fields that name the arm, stdout, stderr, every
//! thread's registers, EIP, EFLAGS and clock, and the address-space hash.
//! Shared by the L1 and µop arm tests.

#![allow(dead_code)]

use super::process_with_c;
use mainemu::process::{Process, Setup};
use mainemu::run::{run_arm, Arm, Summary};

/// What one run leaves: the summary, stdout, stderr, and per thread
/// (registers, EIP, EFLAGS, clock), plus the memory hash.
pub struct End {
    pub s: Summary,
    pub out: String,
    pub err: String,
    pub cpus: Vec<([u32; 8], u32, u32, u64)>,
    pub mem: u64,
}

pub fn go(name: &str, args: &[&str], arm: Arm, budget: u64) -> Option<End> {
    let (p, c) = process_with_c(name, args, &format!("arms-{}-{budget}", arm.name()))?;
    let end = finish(p, arm, budget);
    std::fs::remove_dir_all(&c).ok();
    Some(end)
}

/// Runs `p` on `arm` for `budget` dispatches and collects what it leaves.
pub fn finish(mut p: Process, arm: Arm, budget: u64) -> End {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let s = run_arm(&mut p, arm, budget, &mut |stream, b| {
        if stream == 2 { &mut err } else { &mut out }.extend_from_slice(b)
    });
    let cpus = p
        .env
        .threads
        .list
        .iter()
        .map(|t| (t.cpu.regs, t.cpu.eip, t.cpu.eflags(), t.cpu.clock))
        .collect();
    End {
        s,
        out: String::from_utf8_lossy(&out).into_owned(),
        err: String::from_utf8_lossy(&err).into_owned(),
        cpus,
        mem: p.env.mem.content_hash(),
    }
}

/// The summary as JSON without the fields that name the arm.
fn arm_free(s: &Summary) -> serde_json::Value {
    let mut v = serde_json::to_value(s).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("arm");
    o.remove("l1");
    o.remove("uop");
    v
}

/// Differences between two arms' runs (`a` the reference), empty when equal.
pub fn diff(a: &End, b: &End) -> Vec<String> {
    let mut bad = Vec::new();
    if arm_free(&a.s) != arm_free(&b.s) {
        bad.push(format!(
            "summary {} {} / {} {}",
            a.s.arm,
            serde_json::to_string(&arm_free(&a.s)).unwrap(),
            b.s.arm,
            serde_json::to_string(&arm_free(&b.s)).unwrap()
        ));
    }
    if (&a.out, &a.err) != (&b.out, &b.err) {
        bad.push(format!(
            "output {} {:?} / {} {:?}",
            a.s.arm, a.out, b.s.arm, b.out
        ));
    }
    if a.cpus != b.cpus {
        bad.push(format!(
            "threads {} {:x?} / {} {:x?}",
            a.s.arm, a.cpus, b.s.arm, b.cpus
        ));
    }
    if a.mem != b.mem {
        bad.push("memory differs".into());
    }
    bad
}

/// Every test program (tests/run.rs, gui.rs, smc and compute) and its
/// arguments.
pub const PROGRAMS: &[(&str, &[&str])] = &[
    ("hello.exe", &[]),
    ("heap.exe", &[]),
    ("cmdline.exe", &["x", "y z"]),
    ("fileio.exe", &[]),
    ("files.exe", &[]),
    ("crtio.exe", &[]),
    ("threads.exe", &[]),
    ("seh.exe", &[]),
    ("usedll.exe", &[]),
    ("gdi_shapes.exe", &[]),
    ("gdi_bits.exe", &[]),
    ("smc.exe", &[]),
    ("compute.exe", &["2"]),
];

/// Budget stops every arm must land on exactly: threads.exe switches
/// threads on the guest clock (quantum 50 000) and sleeps; seh.exe faults in
/// the middle of blocks; smc.exe rewrites code.
pub const BUDGETS: &[(&str, &[u64])] = &[
    (
        "threads.exe",
        &[1, 7, 4_321, 50_000, 50_001, 123_457, 999_999, 3_000_017],
    ),
    ("seh.exe", &[1, 100, 2_000, 5_555, 7_000, 7_439]),
    ("smc.exe", &[10, 3_001, 9_999, 20_000, 27_182, 34_063]),
    ("heap.exe", &[77, 60_001, 300_000, 605_021]),
];

/// Runs `7za.exe b -mmt1 -md16` from `../shared/win32-real` on `arm` for
/// `budget` dispatches in a scratch C: (`None` when the folder is absent).
pub fn run_7za_b(arm: Arm, budget: u64) -> Option<End> {
    let exe = super::win32_real()?.join("7zip-18.01/7za.exe");
    let args: Vec<String> = ["b", "-mmt1", "-md16"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let c = std::env::temp_dir().join(format!(
        "mainemu-7za-{}-{}-{budget}",
        std::process::id(),
        arm.name()
    ));
    std::fs::create_dir_all(&c).unwrap();
    let mut setup = Setup::for_program(&exe, &args, &[('C', c.clone())], &[]).unwrap();
    setup.stdin = Box::new(std::io::empty());
    let p = Process::with_setup(&std::fs::read(&exe).unwrap(), setup).unwrap();
    let end = finish(p, arm, budget);
    std::fs::remove_dir_all(&c).ok();
    Some(end)
}
