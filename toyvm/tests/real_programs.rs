//! A representative subset of the dos-real corpus (programs nobody here
//! wrote), each with the outcome, dispatch count, frame hash and console
//! text recorded from this machine. Skips with a message when the corpus is
//! absent. The corpus is found from `DOS_REAL` or as `shared/dos-real` in an
//! ancestor of this crate.

use toyvm::session::{Config, End, Program, Session};

struct Case {
    path: &'static str,
    budget: u64,
    version: (u8, u8),
    companion: Option<&'static str>,
    /// Host files given to the guest in C:\ (e.g. the DOS/4G extender).
    files: &'static [&'static str],
    /// "exited N", "budget" or "stopped".
    end: &'static str,
    dispatches: u64,
    frame: &'static str,
    /// Text the console output ends with (or the stop reason starts with).
    text: &'static str,
}

const CASES: &[Case] = &[
    Case {
        path: "w84death-x86-assembly/p1x.com",
        budget: 1_000_000,
        version: (5, 0),
        companion: None,
        files: &[],
        end: "exited 0",
        dispatches: 11,
        frame: "e4c75d3f0d7ea993",
        text: "P1X",
    },
    Case {
        path: "efliks-demoscene-legacy/asm/plasma/PLASMA.COM",
        budget: 3_000_000,
        version: (5, 0),
        companion: None,
        files: &[],
        end: "budget",
        dispatches: 3_000_000,
        frame: "b5a4197cbec7be5f",
        text: "",
    },
    Case {
        path: "grz0zrg-codegolfing/DOS/Halite/halite.com",
        budget: 2_000_000,
        version: (5, 0),
        companion: None,
        files: &[],
        end: "budget",
        dispatches: 2_000_000,
        frame: "cbece880f0d8dfc8",
        text: "",
    },
    Case {
        path: "microsoft-msdos/v2.0/bin/EDLIN.COM",
        budget: 2_000_000,
        version: (2, 0),
        companion: None,
        files: &[],
        end: "exited 0",
        dispatches: 44,
        frame: "84f6e87daa6764be",
        text: "File name must be specified",
    },
    Case {
        path: "microsoft-msdos/v2.0/bin/PRINT.COM",
        budget: 2_000_000,
        version: (5, 0),
        companion: None,
        files: &[],
        end: "exited 0",
        dispatches: 24,
        frame: "e03a9de0e5da85ef",
        text: "Incorrect DOS version\n",
    },
    Case {
        path: "microsoft-msdos/v1.25/bin/SETCLOCK.COM",
        budget: 2_000_000,
        version: (5, 0),
        companion: None,
        files: &[],
        end: "exited 0",
        dispatches: 1248,
        frame: "c72c8641fa9a1543",
        text: "Current date is 99/99/80\nCurrent time is 99:99:99.99 \n",
    },
    Case {
        path: "microsoft-msdos/v4.0/src/TOOLS/EXE2BIN.EXE",
        budget: 2_000_000,
        version: (5, 0),
        companion: None,
        files: &[],
        end: "exited 0",
        dispatches: 352,
        frame: "0f4748eb7d70d7d2",
        text: "File not found\n",
    },
    Case {
        path: "microsoft-msdos/v4.0/src/TOOLS/CL.EXE",
        budget: 2_000_000,
        version: (5, 0),
        companion: None,
        files: &[],
        end: "exited 1",
        dispatches: 51170,
        frame: "dfd373254c25a3cf",
        text: "usage: cl [ option... ] filename... [ -link linkoption... ]\n",
    },
    Case {
        path: "efliks-demoscene-legacy/c/br/_MKMAP.EXE",
        budget: 2_000_000,
        version: (5, 0),
        companion: None,
        files: &[],
        end: "exited 255",
        dispatches: 4443,
        frame: "1f07daed9efce8bb",
        text: "syntax: mkmap size_x size_y n_units n_players tex_str\n",
    },
    Case {
        path: "efliks-demoscene-legacy/c/matrixc/MATRIX.EXE",
        budget: 3_000_000,
        version: (5, 0),
        companion: None,
        files: &[],
        end: "budget",
        dispatches: 3_000_000,
        frame: "2f1294f564168507",
        text: "",
    },
    Case {
        path: "nanochess-cubicdoom/doom.com",
        budget: 3_000_000,
        version: (5, 0),
        companion: None,
        files: &[],
        end: "budget",
        dispatches: 3_000_000,
        frame: "71319162de0ed469",
        text: "",
    },
    Case {
        path: "w84death-x86-assembly/dos/game10/game10.com",
        budget: 3_000_000,
        version: (5, 0),
        companion: None,
        files: &[],
        end: "budget",
        dispatches: 3_000_000,
        frame: "d4995ac40c9ad79f",
        text: "",
    },
    Case {
        path: "mtuomi-secondreality/MAIN/DATA/TUNNELI.EXE",
        budget: 6_000_000,
        version: (5, 0),
        companion: Some("mtuomi-secondreality/DIS/DIS.EXE"),
        files: &[],
        end: "budget",
        dispatches: 6_000_000,
        frame: "824dad4974f980dd",
        text: "NOTE: This DIS server doesn't support copper or music syncronization!\n",
    },
    Case {
        path: "efliks-demoscene-legacy/asm32/3dfontz/3DFONTZ.EXE",
        budget: 2_000_000,
        version: (5, 0),
        companion: Some("_support/CWSDPMI.EXE -p"),
        files: &[],
        end: "budget",
        dispatches: 2_000_000,
        frame: "d479a36f999c5225",
        text: "CWSDPMI V0.90+ (r4) Copyright (C) 1997 CW Sandmann  ABSOLUTELY NO WARRANTY\n",
    },
    Case {
        path: "efliks-demoscene-legacy/c/fontz/fontz.exe",
        budget: 1_000_000,
        version: (5, 0),
        companion: None,
        files: &[],
        end: "stopped",
        dispatches: 0,
        frame: "20d35b82cdc8274f",
        text: "C:\\FONTZ.EXE: PE (Win32) executable",
    },
    Case {
        path: "w84death-p1x-dos-demoscene/intro-01/DJGPP/DEMO.EXE",
        budget: 5_000_000,
        version: (5, 0),
        companion: Some("_support/CWSDPMI.EXE -p"),
        files: &[],
        end: "budget",
        dispatches: 5_000_000,
        frame: "1c786d378679a3c5",
        text: "CWSDPMI V0.90+ (r4) Copyright (C) 1997 CW Sandmann  ABSOLUTELY NO WARRANTY\n",
    },
    Case {
        path: "w84death-p1x-dos-demoscene/intro-01/FIRE.EXE",
        budget: 8_000_000,
        version: (5, 0),
        companion: None,
        files: &["_support/DOS4GW.EXE"],
        end: "budget",
        dispatches: 8_000_000,
        frame: "4bcf8e90f62aab19",
        text: "DOS/4GW Protected Mode Run-time   Version 1.8\nCopyright (c) Rational Systems, Inc. 1990-1992\n",
    },
    Case {
        // DOSBox 0.74 crashed on this one; DOS/4GW reports the program's #GP.
        path: "w84death-p1x-dos-demoscene/experiments/FIRE.EXE",
        budget: 5_000_000,
        version: (5, 0),
        companion: None,
        files: &["_support/DOS4GW.EXE"],
        end: "exited 13",
        dispatches: 2_085_494,
        frame: "64f3c4f5ef66bb3d",
        text: "CR0: PG:0 ET:1 TS:0 EM:0 MP:0 PE:1   CR2: 00000000  CR3: 00000000\n",
    },
];

#[test]
fn representative_real_programs() {
    let Some(dir) = corpus_dos::shared_data_or_skip("DOS_REAL", "dos-real", "MANIFEST.tsv") else {
        return;
    };
    let mut failures = Vec::new();
    for c in CASES {
        let mut cfg = Config::new(dir.join(c.path));
        cfg.budget = c.budget;
        cfg.dos_version = c.version;
        if let Some(comp) = c.companion {
            let (p, a) = comp.split_once(' ').unwrap_or((comp, ""));
            cfg.companions.push(Program {
                path: dir.join(p),
                args: a.into(),
            });
        }
        cfg.files = c.files.iter().map(|f| dir.join(f)).collect();
        let mut s = Session::new(&cfg).unwrap();
        s.run();
        let end = match s.end.clone().unwrap() {
            End::Exited { code } => format!("exited {code}"),
            End::Budget => "budget".into(),
            End::Stopped(_) => "stopped".into(),
        };
        let frame = format!("{:016x}", s.frame().hash());
        let text_ok = match &s.end {
            Some(End::Stopped(st)) => st.what.starts_with(c.text),
            _ => s.console_text().0.ends_with(c.text),
        };
        let got = (end.as_str(), s.clock(), frame.as_str(), text_ok);
        let want = (c.end, c.dispatches, c.frame, true);
        if got != want {
            failures.push(format!(
                "{}: got {got:?}, want {want:?} (console {:?})",
                c.path,
                s.console_text().0
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
