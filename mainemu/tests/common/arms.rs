//! Running one program under two arms and comparing what they leave: the
//! summary less the fields that name the arm, stdout, stderr, every
//! thread's registers, EIP, EFLAGS and clock, and the address-space hash.
//! Shared by the L1 and µop arm tests.

#![allow(dead_code)]

use super::process_with_c;
use mainemu::process::Process;
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
