//! Loader for SingleStepTests vectors: the MOO binary format (optionally
//! gzipped) and, as a cross-check, the JSON form of the 8086 suite.
//!
//! Owns parsing only: chunk framing (unknown chunks skipped), the register
//! layouts (REGS 16-bit, RG32 32-bit) normalised to one [`RegFile`], RAM lists,
//! EXCP, and the per-test SHA-1 check of FORMAT.md §2.3. It must not run tests
//! or know about CPUs: `conformance::runner` does that.

use sha1::{Digest, Sha1};
use std::io::Read;
use std::path::Path;

/// Canonical register slots shared by the 16- and 32-bit layouts.
pub mod slot {
    pub const EAX: usize = 0;
    pub const ECX: usize = 1;
    pub const EDX: usize = 2;
    pub const EBX: usize = 3;
    pub const ESP: usize = 4;
    pub const EBP: usize = 5;
    pub const ESI: usize = 6;
    pub const EDI: usize = 7;
    pub const ES: usize = 8;
    pub const CS: usize = 9;
    pub const SS: usize = 10;
    pub const DS: usize = 11;
    pub const FS: usize = 12;
    pub const GS: usize = 13;
    pub const EIP: usize = 14;
    pub const EFLAGS: usize = 15;
    pub const CR0: usize = 16;
    pub const CR3: usize = 17;
    pub const DR6: usize = 18;
    pub const DR7: usize = 19;
    pub const COUNT: usize = 20;
    /// Display names, by slot.
    pub const NAMES: [&str; COUNT] = [
        "eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi", "es", "cs", "ss", "ds", "fs", "gs",
        "eip", "eflags", "cr0", "cr3", "dr6", "dr7",
    ];
}

/// REGS bit order (FORMAT.md §2.4) mapped to slots.
const REGS16: [usize; 14] = [
    slot::EAX,
    slot::EBX,
    slot::ECX,
    slot::EDX,
    slot::CS,
    slot::SS,
    slot::DS,
    slot::ES,
    slot::ESP,
    slot::EBP,
    slot::ESI,
    slot::EDI,
    slot::EIP,
    slot::EFLAGS,
];

/// RG32 bit order mapped to slots.
const REGS32: [usize; 20] = [
    slot::CR0,
    slot::CR3,
    slot::EAX,
    slot::EBX,
    slot::ECX,
    slot::EDX,
    slot::ESI,
    slot::EDI,
    slot::EBP,
    slot::ESP,
    slot::CS,
    slot::DS,
    slot::ES,
    slot::FS,
    slot::GS,
    slot::SS,
    slot::EIP,
    slot::EFLAGS,
    slot::DR6,
    slot::DR7,
];

/// A sparse register file: `Some` for every register the chunk lists.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegFile {
    pub r: [Option<u32>; slot::COUNT],
    /// True for RG32 data.
    pub wide: bool,
}

/// One side (initial or final) of a test.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct State {
    pub regs: RegFile,
    /// Per-test register AND masks (RMSK/RM32), if any.
    pub masks: Option<RegFile>,
    pub ram: Vec<(u32, u8)>,
}

/// One test.
#[derive(Clone, Debug, Default)]
pub struct Test {
    pub index: u32,
    pub name: String,
    /// Instruction bytes (in the 286/386 sets, followed by the HLT byte).
    pub bytes: Vec<u8>,
    pub init: State,
    pub fina: State,
    /// (vector, linear address of the pushed FLAGS) when the CPU vectored.
    pub excp: Option<(u8, u32)>,
    /// The stored SHA-1, if any (lowercase hex).
    pub hash: Option<String>,
}

/// A whole file.
#[derive(Clone, Debug, Default)]
pub struct MooFile {
    pub version: (u8, u8),
    /// Header CPU id, e.g. "C286", "386E".
    pub cpu: String,
    /// File-level register masks, if any.
    pub masks: Option<RegFile>,
    pub tests: Vec<Test>,
}

/// A chunk: tag, payload, and the whole chunk (header included).
type Chunk<'a> = ([u8; 4], &'a [u8], &'a [u8]);

struct Reader<'a> {
    d: &'a [u8],
    pos: usize,
    what: &'a str,
}

impl<'a> Reader<'a> {
    fn new(d: &'a [u8], what: &'a str) -> Self {
        Reader { d, pos: 0, what }
    }
    fn done(&self) -> bool {
        self.pos >= self.d.len()
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.d.len() - self.pos < n {
            return Err(format!(
                "{}: truncated at byte {} (need {n} more)",
                self.what, self.pos
            ));
        }
        let s = &self.d[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, String> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().unwrap()))
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    /// Next chunk: (tag, payload, whole chunk bytes).
    fn chunk(&mut self) -> Result<Chunk<'a>, String> {
        let start = self.pos;
        let tag: [u8; 4] = self.take(4)?.try_into().unwrap();
        let len = self.u32()? as usize;
        let body = self.take(len)?;
        Ok((tag, body, &self.d[start..self.pos]))
    }
}

fn parse_regs(body: &[u8], wide: bool) -> Result<RegFile, String> {
    let mut r = Reader::new(body, "register chunk");
    let mut f = RegFile {
        wide,
        ..RegFile::default()
    };
    if wide {
        let mask = r.u32()?;
        for (bit, &s) in REGS32.iter().enumerate() {
            if mask >> bit & 1 != 0 {
                f.r[s] = Some(r.u32()?);
            }
        }
    } else {
        let mask = r.u16()?;
        for (bit, &s) in REGS16.iter().enumerate() {
            if mask >> bit & 1 != 0 {
                f.r[s] = Some(r.u16()? as u32);
            }
        }
    }
    Ok(f)
}

fn parse_state(body: &[u8]) -> Result<State, String> {
    let mut st = State::default();
    let mut r = Reader::new(body, "INIT/FINA");
    while !r.done() {
        let (tag, b, _) = r.chunk()?;
        match &tag {
            b"REGS" => st.regs = parse_regs(b, false)?,
            b"RG32" => st.regs = parse_regs(b, true)?,
            b"RMSK" => st.masks = Some(parse_regs(b, false)?),
            b"RM32" => st.masks = Some(parse_regs(b, true)?),
            b"RAM " => {
                let mut rr = Reader::new(b, "RAM");
                let n = rr.u32()?;
                for _ in 0..n {
                    let a = rr.u32()?;
                    let v = rr.u8()?;
                    st.ram.push((a, v));
                }
            }
            _ => {}
        }
    }
    Ok(st)
}

fn counted(b: &[u8], what: &str) -> Result<Vec<u8>, String> {
    let mut r = Reader::new(b, what);
    let n = r.u32()? as usize;
    Ok(r.take(n)?.to_vec())
}

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// Parses one TEST payload and verifies its HASH (FORMAT.md §2.3).
fn parse_test(body: &[u8]) -> Result<Test, String> {
    let mut r = Reader::new(body, "TEST");
    let mut t = Test {
        index: r.u32()?,
        ..Test::default()
    };
    let mut h = Sha1::new();
    h.update(&body[..4]);
    while !r.done() {
        let (tag, b, whole) = r.chunk()?;
        if &tag != b"HASH" {
            h.update(whole);
        }
        match &tag {
            b"NAME" => t.name = String::from_utf8_lossy(&counted(b, "NAME")?).into_owned(),
            b"BYTS" => t.bytes = counted(b, "BYTS")?,
            b"INIT" => t.init = parse_state(b)?,
            b"FINA" => t.fina = parse_state(b)?,
            b"EXCP" => {
                let mut e = Reader::new(b, "EXCP");
                t.excp = Some((e.u8()?, e.u32()?));
            }
            b"HASH" => t.hash = Some(hex(b)),
            _ => {}
        }
    }
    if let Some(stored) = &t.hash {
        let got = hex(&h.finalize());
        if &got != stored {
            return Err(format!(
                "test {} ({}): SHA-1 mismatch: stored {stored}, computed {got}",
                t.index, t.name
            ));
        }
    }
    Ok(t)
}

/// Parses MOO bytes (already decompressed).
pub fn parse(data: &[u8]) -> Result<MooFile, String> {
    let mut r = Reader::new(data, "MOO file");
    let (tag, hdr, _) = r.chunk()?;
    if &tag != b"MOO " {
        return Err(format!(
            "not a MOO file: first chunk is {:?}",
            String::from_utf8_lossy(&tag)
        ));
    }
    let mut h = Reader::new(hdr, "MOO header");
    let mut f = MooFile {
        version: (h.u8()?, h.u8()?),
        ..MooFile::default()
    };
    h.take(2)?;
    let count = h.u32()? as usize;
    f.cpu = String::from_utf8_lossy(h.take(4)?).into_owned();
    f.tests.reserve(count);
    while !r.done() {
        let (tag, b, _) = r.chunk()?;
        match &tag {
            b"TEST" => f.tests.push(parse_test(b)?),
            b"RMSK" => f.masks = Some(parse_regs(b, false)?),
            b"RM32" => f.masks = Some(parse_regs(b, true)?),
            _ => {}
        }
    }
    if f.tests.len() != count {
        return Err(format!(
            "header says {count} tests, file holds {}",
            f.tests.len()
        ));
    }
    Ok(f)
}

/// Reads a file, gunzipping when its name ends in `.gz`.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, String> {
    let raw = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if path.extension().is_some_and(|e| e == "gz") {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .map_err(|e| format!("{}: gzip: {e}", path.display()))?;
        Ok(out)
    } else {
        Ok(raw)
    }
}

/// Loads a `.MOO` or `.MOO.gz` file.
pub fn load(path: &Path) -> Result<MooFile, String> {
    parse(&read_bytes(path)?).map_err(|e| format!("{}: {e}", path.display()))
}

fn json_regs(v: &serde_json::Value) -> Result<RegFile, String> {
    const NAMES: [(&str, usize); 14] = [
        ("ax", slot::EAX),
        ("bx", slot::EBX),
        ("cx", slot::ECX),
        ("dx", slot::EDX),
        ("cs", slot::CS),
        ("ss", slot::SS),
        ("ds", slot::DS),
        ("es", slot::ES),
        ("sp", slot::ESP),
        ("bp", slot::EBP),
        ("si", slot::ESI),
        ("di", slot::EDI),
        ("ip", slot::EIP),
        ("flags", slot::EFLAGS),
    ];
    let obj = v.as_object().ok_or("regs is not an object")?;
    let mut f = RegFile::default();
    for (k, x) in obj {
        let s = NAMES
            .iter()
            .find(|(n, _)| n == k)
            .ok_or_else(|| format!("unknown register {k:?}"))?
            .1;
        f.r[s] = Some(
            x.as_u64()
                .ok_or_else(|| format!("register {k} is not a number"))? as u32,
        );
    }
    Ok(f)
}

fn json_state(v: &serde_json::Value) -> Result<State, String> {
    let mut st = State {
        regs: json_regs(&v["regs"])?,
        ..State::default()
    };
    for e in v["ram"].as_array().ok_or("ram is not an array")? {
        let a = e[0].as_u64().ok_or("bad ram address")? as u32;
        let b = e[1].as_u64().ok_or("bad ram value")? as u8;
        st.ram.push((a, b));
    }
    Ok(st)
}

/// Parses the JSON test format (FORMAT.md §3); hashes are not checked (the
/// JSON hash rule differs from MOO's).
pub fn parse_json(data: &[u8]) -> Result<Vec<Test>, String> {
    let v: serde_json::Value = serde_json::from_slice(data).map_err(|e| format!("json: {e}"))?;
    let arr = v.as_array().ok_or("top level is not an array")?;
    let mut out = Vec::with_capacity(arr.len());
    for (i, t) in arr.iter().enumerate() {
        let bytes = t["bytes"]
            .as_array()
            .ok_or_else(|| format!("test {i}: no bytes"))?
            .iter()
            .map(|b| b.as_u64().unwrap_or(0) as u8)
            .collect();
        let idx = t.get("idx").or_else(|| t.get("test_num"));
        let hash = t.get("hash").or_else(|| t.get("test_hash"));
        let excp = t.get("exception").map(|e| {
            (
                e["number"].as_u64().unwrap_or(0) as u8,
                e["flag_address"].as_u64().unwrap_or(0) as u32,
            )
        });
        out.push(Test {
            index: idx.and_then(|x| x.as_u64()).unwrap_or(i as u64) as u32,
            name: t["name"].as_str().unwrap_or("").to_string(),
            bytes,
            init: json_state(&t["initial"]).map_err(|e| format!("test {i}: {e}"))?,
            fina: json_state(&t["final"]).map_err(|e| format!("test {i}: {e}"))?,
            excp,
            hash: hash.and_then(|h| h.as_str()).map(str::to_string),
        });
    }
    Ok(out)
}
