//! The state the oracle compares at a sample point, and what it shows about
//! a difference.
//!
//! Owns [`State`] (dispatch count, how the run stands, CS:IP, general and
//! segment registers, the defined flags, RAM / device / frame / console
//! hashes), capturing it from a session, naming the fields that differ, and
//! the side-by-side text rendering. It must not run sessions forward: the
//! caller brings them to the sample point.

use crate::arm_run::ArmRun;
use serde::{Deserialize, Serialize};
use toyvm::sample::Sample;

/// Whether two runs' RAM is byte-identical.
pub fn same_ram(a: &dyn ArmRun, b: &dyn ArmRun) -> bool {
    a.ram() == b.ram()
}

/// The architectural state at one sample point.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    pub dispatches: u64,
    /// "running", "budget", "exited N" or "stopped: WHAT".
    pub end: String,
    pub cs: u16,
    pub ip: u32,
    /// EAX ECX EDX EBX ESP EBP ESI EDI.
    pub regs: [u32; 8],
    /// ES CS SS DS FS GS.
    pub sregs: [u16; 6],
    /// FLAGS & `toyvm::session::DEFINED_FLAGS` (CF PF AF ZF SF TF IF DF OF).
    pub flags: u32,
    /// XXH3-64 of guest RAM, hex.
    pub ram_hash: String,
    /// Hash of every guest-visible device state, hex.
    pub device_hash: String,
    /// Hash of the frame the screen shows (palette-resolved RGB), hex.
    pub frame_hash: String,
    /// XXH3-64 of the text console (what was printed, then the text screen), hex.
    pub console_hash: String,
    /// XXH3-64 of the x87 state (`Fpu::state_bytes`), hex.
    #[serde(default)]
    pub fpu_hash: String,
    /// XXH3-64 of the CPU's system state (CR0/CR2/CR3, DR0-7, GDTR, IDTR,
    /// LDTR, TR, the descriptor caches, protected/V86 mode and CPL), hex.
    #[serde(default)]
    pub system_hash: String,
}

pub const REG_NAMES: [&str; 8] = ["EAX", "ECX", "EDX", "EBX", "ESP", "EBP", "ESI", "EDI"];
pub const SREG_NAMES: [&str; 6] = ["ES", "CS", "SS", "DS", "FS", "GS"];

fn hex64(v: u64) -> String {
    format!("{v:016x}")
}

impl State {
    /// Captures the full state of a run where it stands.
    pub fn capture(s: &mut dyn ArmRun) -> State {
        let mut st = State::capture_light(s);
        st.fill_ram_hash(s);
        st
    }

    /// Captures everything but the RAM hash (left empty): the lockstep
    /// compares RAM between arms directly (a memcmp is several times
    /// cheaper than hashing 16 MiB) and hashes only the states it keeps.
    /// The devices are brought to the clock first, so RAM is as of `now`.
    /// A run that cannot give a sample (a trapped wasm instance) shows as
    /// `end` "failed: WHY".
    pub fn capture_light(s: &mut dyn ArmRun) -> State {
        match s.sample() {
            Ok(x) => State::from_sample(&x),
            Err(e) => State {
                dispatches: s.clock(),
                end: format!("failed: {e}"),
                ..State::default()
            },
        }
    }

    /// The compared fields of a toyvm sample (RAM hash left empty).
    pub fn from_sample(x: &Sample) -> State {
        State {
            dispatches: x.dispatches,
            end: x.end.clone(),
            cs: x.cs,
            ip: x.ip,
            regs: x.regs,
            sregs: x.sregs,
            flags: x.flags,
            ram_hash: String::new(),
            device_hash: hex64(x.device_hash),
            frame_hash: hex64(x.frame_hash),
            console_hash: hex64(x.console_hash),
            fpu_hash: hex64(x.fpu_hash),
            system_hash: hex64(x.system_hash),
        }
    }

    /// Fills in the RAM hash of a light capture (same session, same clock).
    pub fn fill_ram_hash(&mut self, s: &dyn ArmRun) {
        self.ram_hash = hex64(xxhash_rust::xxh3::xxh3_64(s.ram()));
    }

    /// Names of the fields that differ (empty when equal).
    pub fn differences(&self, o: &State) -> Vec<String> {
        let mut d = Vec::new();
        if self.dispatches != o.dispatches {
            d.push("dispatches".into());
        }
        if self.end != o.end {
            d.push("end".into());
        }
        if self.cs != o.cs || self.ip != o.ip {
            d.push("CS:IP".into());
        }
        for ((a, b), n) in self.regs.iter().zip(&o.regs).zip(REG_NAMES) {
            if a != b {
                d.push(n.into());
            }
        }
        for ((a, b), n) in self.sregs.iter().zip(&o.sregs).zip(SREG_NAMES) {
            if a != b {
                d.push(n.into());
            }
        }
        if self.flags != o.flags {
            d.push("flags".into());
        }
        if self.ram_hash != o.ram_hash {
            d.push("ram".into());
        }
        if self.device_hash != o.device_hash {
            d.push("devices".into());
        }
        if self.frame_hash != o.frame_hash {
            d.push("frame".into());
        }
        if self.console_hash != o.console_hash {
            d.push("console".into());
        }
        if self.fpu_hash != o.fpu_hash {
            d.push("x87".into());
        }
        if self.system_hash != o.system_hash {
            d.push("system".into());
        }
        d
    }

    /// (label, value) rows for side-by-side display.
    pub fn rows(&self) -> Vec<(String, String)> {
        let mut r = vec![
            ("dispatches".to_string(), self.dispatches.to_string()),
            ("end".to_string(), self.end.clone()),
            (
                "CS:IP".to_string(),
                format!("{:04X}:{:04X}", self.cs, self.ip),
            ),
        ];
        for (v, n) in self.regs.iter().zip(REG_NAMES) {
            r.push((n.into(), format!("{v:08X}")));
        }
        for (v, n) in self.sregs.iter().zip(SREG_NAMES) {
            r.push((n.into(), format!("{v:04X}")));
        }
        r.push((
            "flags".into(),
            format!("{:04X} {}", self.flags, flag_names(self.flags)),
        ));
        r.push(("ram".into(), self.ram_hash.clone()));
        r.push(("devices".into(), self.device_hash.clone()));
        r.push(("frame".into(), self.frame_hash.clone()));
        r.push(("console".into(), self.console_hash.clone()));
        r.push(("x87".into(), self.fpu_hash.clone()));
        r.push(("system".into(), self.system_hash.clone()));
        r
    }
}

/// The set flags by name, e.g. "[CF ZF IF]".
pub fn flag_names(f: u32) -> String {
    const N: [(u32, &str); 9] = [
        (0x001, "CF"),
        (0x004, "PF"),
        (0x010, "AF"),
        (0x040, "ZF"),
        (0x080, "SF"),
        (0x100, "TF"),
        (0x200, "IF"),
        (0x400, "DF"),
        (0x800, "OF"),
    ];
    let v: Vec<&str> = N
        .iter()
        .filter(|(b, _)| f & b != 0)
        .map(|(_, n)| *n)
        .collect();
    format!("[{}]", v.join(" "))
}

/// Two (or more) states side by side, differing rows marked with `<>`.
pub fn side_by_side(names: &[&str], states: &[&State]) -> String {
    let rows: Vec<Vec<(String, String)>> = states.iter().map(|s| s.rows()).collect();
    let w = names
        .iter()
        .map(|n| n.len())
        .chain(rows.iter().flat_map(|r| r.iter().map(|(_, v)| v.len())))
        .max()
        .unwrap_or(8)
        .min(48);
    let mut out = format!("{:<12}", "");
    for n in names {
        out.push_str(&format!("  {:<w$}", n));
    }
    out.push('\n');
    for i in 0..rows[0].len() {
        let label = &rows[0][i].0;
        let vals: Vec<&String> = rows.iter().map(|r| &r[i].1).collect();
        let differs = vals.iter().any(|v| *v != vals[0]);
        out.push_str(&format!("{:<12}", label));
        for v in &vals {
            out.push_str(&format!("  {:<w$}", v));
        }
        if differs {
            out.push_str("  <>");
        }
        out.push('\n');
    }
    out
}
