//! Every program of the built-in corpus under the `l1` arm at its manifest
//! budget reaches the results recorded in `corpus-dos/corpus.toml`: the end
//! (`l1_end`: `exited N` with N = `expected_exit`, or `budget`), the dispatch
//! count (`l1_dispatches`), the final frame hash (`l1_frame_hash`) and the
//! console (`l1_console`, in the form of `corpus_dos::console_record`); a
//! timing-independent program's last console line is its `expected_checksum`.
//!
//! The sessions are built from the manifest as the oracle builds them
//! (`oracle::spec::RunSpec::from_corpus` then `config`): the binary with its
//! args, the companions' binaries with their own args, the DOS version, the
//! budget and the key script. Programs run on `CORPUS_TEST_THREADS` threads
//! (default 2). On failure the test prints one row per mismatching program.
//! After a deliberate change, refresh the record with
//! `python3 corpus-dos/scripts/corpus.py record` (see docs/corpus.md).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;
use toyvm::session::{Config, Program, Session};

/// "X.Y" (or "X") into (major, minor), as the oracle and `toyvm run` parse it.
fn dos_version(s: &str) -> Result<(u8, u8), String> {
    let (a, b) = s.split_once('.').unwrap_or((s, "0"));
    match (a.trim().parse::<u8>(), b.trim().parse::<u8>()) {
        (Ok(x), Ok(y)) if (1..=9).contains(&x) && y < 100 => Ok((x, y)),
        _ => Err(format!("bad DOS version `{s}`")),
    }
}

fn config(c: &corpus_dos::Corpus, p: &corpus_dos::Program) -> Result<Config, String> {
    let mut cfg = Config::new(c.binary_path(p));
    cfg.program = Program {
        path: c.binary_path(p),
        args: p.args.clone(),
    };
    cfg.companions = c
        .companion_runs(p)?
        .into_iter()
        .map(|(path, args)| Program { path, args })
        .collect();
    cfg.budget = p.budget;
    cfg.arm = "l1".into();
    cfg.dos_version = dos_version(&p.dos_version)?;
    cfg.keys = (!p.keys.trim().is_empty()).then(|| p.keys.clone());
    Ok(cfg)
}

/// What one run gave, in the manifest's forms.
struct Got {
    end: String,
    dispatches: u64,
    frame_hash: String,
    console: String,
    last_line: String,
}

fn run(c: &corpus_dos::Corpus, p: &corpus_dos::Program) -> Result<Got, String> {
    let cfg = config(c, p)?;
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut s = Session::new(&cfg)?;
        s.run();
        Ok::<_, String>(s.report(&cfg))
    }))
    .map_err(|e| {
        let m = e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        format!("toyvm panicked: {m}")
    })??;
    let mut end = corpus_dos::end_record(&r.end, r.exit_code);
    if let Some(st) = &r.stop {
        end = format!("stopped at {}:{}: {}", st.cs, st.ip, st.what);
    }
    Ok(Got {
        end,
        dispatches: r.dispatches,
        frame_hash: r.frame.hash.clone(),
        console: corpus_dos::console_record(&r.console),
        last_line: corpus_dos::last_line(&r.console).to_string(),
    })
}

/// The mismatches of one program: (field, recorded, got).
fn compare(p: &corpus_dos::Program, g: &Got) -> Vec<(&'static str, String, String)> {
    let mut v = Vec::new();
    if p.l1_end.is_empty() {
        v.push(("l1_*", "(not recorded)".into(), g.end.clone()));
        return v;
    }
    if g.end != p.l1_end {
        v.push(("end", p.l1_end.clone(), g.end.clone()));
    }
    if g.dispatches != p.l1_dispatches {
        v.push((
            "dispatches",
            p.l1_dispatches.to_string(),
            g.dispatches.to_string(),
        ));
    }
    if g.frame_hash != p.l1_frame_hash {
        v.push(("frame", p.l1_frame_hash.clone(), g.frame_hash.clone()));
    }
    if g.console != p.l1_console {
        v.push(("console", p.l1_console.clone(), g.console.clone()));
    }
    if g.end.starts_with("exited") && g.end != p.expected_end() {
        v.push(("exit", p.expected_end(), g.end.clone()));
    }
    if p.timing_independent && g.last_line != p.expected_checksum {
        v.push(("checksum", p.expected_checksum.clone(), g.last_line.clone()));
    }
    v
}

fn short(s: &str) -> String {
    let s = s.replace('\n', "\\n");
    if s.chars().count() > 48 {
        format!("{}...", s.chars().take(45).collect::<String>())
    } else {
        s
    }
}

#[test]
fn corpus_programs_reach_recorded_results_under_l1() {
    let c = corpus_dos::builtin().expect("corpus.toml");
    assert_eq!(c.programs.len(), 199, "program count");
    let threads: usize = std::env::var("CORPUS_TEST_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2)
        .max(1);
    // Longest first, so the big benches do not end up last on one thread.
    let mut order: Vec<usize> = (0..c.programs.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(c.programs[i].budget));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<Got, String>>>> =
        Mutex::new((0..c.programs.len()).map(|_| None).collect());
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&i) = order.get(k) else { break };
                let r = run(&c, &c.programs[i]);
                results.lock().unwrap()[i] = Some(r);
            });
        }
    });
    let results = results.into_inner().unwrap();
    let mut rows = Vec::new();
    let mut total = 0u64;
    for (p, r) in c.programs.iter().zip(results) {
        match r.expect("every program ran") {
            Err(e) => rows.push((p.name.clone(), "run", String::new(), e)),
            Ok(g) => {
                total += g.dispatches;
                for (f, want, got) in compare(p, &g) {
                    rows.push((p.name.clone(), f, want, got));
                }
            }
        }
    }
    eprintln!(
        "corpus_expected: {} programs, {} dispatches under l1 on {} threads in {:.1} s",
        c.programs.len(),
        total,
        threads,
        t0.elapsed().as_secs_f64()
    );
    if !rows.is_empty() {
        let mut names: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
        names.dedup();
        let mut t = format!(
            "{} of {} programs differ from the recorded l1 results \
             (refresh after a deliberate change: python3 corpus-dos/scripts/corpus.py record)\n\
             {:10} {:10} {:50} got\n",
            names.len(),
            c.programs.len(),
            "program",
            "field",
            "recorded"
        );
        for (n, f, want, got) in &rows {
            t += &format!("{:10} {:10} {:50} {}\n", n, f, short(want), short(got));
        }
        panic!("{t}");
    }
}
