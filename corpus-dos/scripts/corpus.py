#!/usr/bin/env python3
"""corpus.py -- maintenance tool for the corpus-dos manifest and the peer checks.

  corpus.py scan   [--run] [--only NAME,...]   read the `; @key: value` headers of every
                   programs/<family>/<name>.asm, (optionally) run the programs in DOSBox,
                   and write corpus.toml (expected output taken from DOSBox unless the
                   source says `@expect`). Keeps the recorded l1_* fields.
  corpus.py check  [--only NAME,...] [--reverse] [--no-toyvm] [--no-dosbox]
                   run every program of corpus.toml that DOSBox can run unattended, compare
                   its last line and exact exit code with expected_checksum/expected_exit,
                   then (unless --no-toyvm) run every program in toyvm's l1 arm and compare
                   the same with the manifest and with DOSBox; print a table and a summary
                   line; exit 1 on any unexpected disagreement of a timing-independent
                   program.  --reverse runs the DOSBox batches in reverse order, so every
                   program sees other programs' leftovers in memory (a program that reads
                   memory it never wrote then changes).
  corpus.py record [--only NAME,...] [--budgets]
                   run every program in toyvm (`toyvm run --arm l1 --json`) at its budget and
                   write the l1_* fields (l1_end, l1_dispatches, l1_frame_hash, l1_console)
                   into corpus.toml.  --budgets first measures each program at 10x its
                   budget and rewrites the `@budget` header of every program that exits to
                   1.25x its dispatch count rounded up to two significant digits (programs
                   that run to the generous budget keep theirs).
  corpus.py run NAME...                       run programs in DOSBox, print their output.

toyvm is `$TOYVM` if set, else <target>/release/toyvm of this workspace (`$CARGO_TARGET_DIR`
honoured); when it is missing and cargo is installed, `cargo build --release -p toyvm`
builds it first.

Headers understood in a source (all optional except @desc/@tags):
  ; @desc: one line    ; @tags: t1 t2    ; @budget: N    ; @timing: independent|dependent
  ; @format: com|exe   ; @companions: A B ; @args: ...   ; @keys: 1E@2000000,...
  ; @dos: 5.0          ; @solo            ; @dosbox: skip (reason)
  ; @exit: N (the exact exit code, default 0)
  ; @expect: LINE      ; @dosbox-bug: note (the expected line when DOSBox 0.74 prints
                         another one, and why DOSBox is wrong)
  ; @output: FILE (a data file, not a program)
"""
import os, re, sys, json, math, shutil, subprocess, tempfile, glob, zlib
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PROG = os.path.join(ROOT, "programs")
MANIFEST = os.path.join(ROOT, "corpus.toml")
WORKSPACE = os.path.dirname(ROOT)

CONF = """[sdl]
output=surface
[dosbox]
machine=svga_s3
memsize=16
[cpu]
core=normal
cycles=max
[mixer]
nosound=true
[dos]
xms=true
ems=true
"""


def parse_headers(path):
    h = {}
    for line in open(path, encoding="latin-1"):
        m = re.match(r"^; @([\w-]+)(?::\s*(.*))?$", line.rstrip())
        if m:
            h[m.group(1)] = (m.group(2) or "").strip()
    return h


def scan_sources():
    progs, datas = [], []
    for src in sorted(glob.glob(os.path.join(PROG, "*", "*.asm"))):
        h = parse_headers(src)
        fam = os.path.basename(os.path.dirname(src))
        base = os.path.splitext(os.path.basename(src))[0]
        rel = os.path.relpath(src, ROOT)
        if "output" in h:
            datas.append(os.path.join(os.path.dirname(rel), h["output"]))
            continue
        fmt = h.get("format", "com")
        binname = base.upper() + (".EXE" if fmt == "exe" else ".COM")
        assert len(base) <= 8, f"{src}: name longer than 8 characters"
        p = dict(
            name=base, family=fam, source=rel,
            binary=os.path.join(os.path.dirname(rel), binname), format=fmt,
            description=h.get("desc", ""), tags=h.get("tags", "").split(),
            budget=int(h.get("budget", "20000000")),
            keys=h.get("keys", ""), dos_version=h.get("dos", "5.0"),
            companions=h.get("companions", "").split(), args=h.get("args", ""),
            timing_independent=h.get("timing", "independent") == "independent",
            solo="solo" in h or bool(h.get("companions")),
            dosbox=h.get("dosbox", "run"),
            expect=h.get("expect", ""), dosbox_bug=h.get("dosbox-bug", ""),
            expected_exit=int(h.get("exit", "0")),
        )
        progs.append(p)
    names = [p["name"] for p in progs]
    dup = {n for n in names if names.count(n) > 1}
    assert not dup, f"duplicate program names: {sorted(dup)}"
    return progs, datas


# ---------------------------------------------------------------- DOSBox runner
def run_dosbox(progs, all_binaries, timeout_each=4, verbose=False):
    """Run programs in DOSBox headless, in batches; return {name: (stdout, exit, status)}
    where exit is 0, the program's expected_exit, or -1 for another code."""
    if not shutil.which("dosbox"):
        return None
    results = {}
    groups, cur = [], []
    for p in progs:
        if p["solo"]:
            groups.append([p])
        else:
            cur.append(p)
            if len(cur) >= 20:
                groups.append(cur)
                cur = []
    if cur:
        groups.append(cur)
    for g in groups:
        with tempfile.TemporaryDirectory(prefix="corpusdos") as d:
            for b in all_binaries:
                shutil.copy(os.path.join(ROOT, b), os.path.join(d, os.path.basename(b)))
            os.mkdir(os.path.join(d, "O"))
            lines = ["@echo off"]
            for p in g:
                for c in p["companions"]:
                    lines.append(f"{c.upper()} > O\\{c.upper()[:8]}.CMP")
                n = p["name"].upper()
                lines.append(f"{n} {p['args']} > O\\{n}.TXT".replace("  ", " "))
                lines.append(f"IF ERRORLEVEL 1 ECHO X > O\\{n}.ERR")
                e = p.get("expected_exit", 0)
                if 0 < e < 255:
                    lines.append(f"IF ERRORLEVEL {e} IF NOT ERRORLEVEL {e + 1} ECHO X > O\\{n}.EXI")
                elif e == 255:
                    lines.append(f"IF ERRORLEVEL 255 ECHO X > O\\{n}.EXI")
                lines.append(f"ECHO X > O\\{n}.END")
            lines.append("exit")
            open(os.path.join(d, "RUN.BAT"), "w").write("\r\n".join(lines) + "\r\n")
            conf = os.path.join(d, "run.conf")
            open(conf, "w").write(CONF)
            env = dict(os.environ, SDL_VIDEODRIVER="dummy", SDL_AUDIODRIVER="dummy")
            t = 10 + timeout_each * len(g)
            try:
                subprocess.run(["dosbox", "-conf", conf, "-c", f"mount c {d}", "-c", "c:",
                                "-c", "RUN.BAT", "-c", "exit"], env=env, timeout=t,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                status = "ok"
            except subprocess.TimeoutExpired:
                status = "timeout"
            for p in g:
                n = p["name"].upper()
                o = os.path.join(d, "O", n + ".TXT")
                out = open(o, "rb").read().decode("latin-1") if os.path.exists(o) else None
                ended = os.path.exists(os.path.join(d, "O", n + ".END"))
                ef = os.path.join(d, "O", n + ".ERR")
                err = os.path.exists(ef) and b"X" in open(ef, "rb").read()
                xf = os.path.join(d, "O", n + ".EXI")
                exact = os.path.exists(xf) and b"X" in open(xf, "rb").read()
                # the exit code as far as ERRORLEVEL tells: 0, expected_exit, or -1 (another)
                code = (p.get("expected_exit", 0) if exact else -1) if err else 0
                results[p["name"]] = (out, code, "ok" if ended else ("timeout" if status == "timeout" else "no-end"))
                if verbose:
                    print(p["name"], results[p["name"]], file=sys.stderr)
    return results


def first_line(out):
    if out is None:
        return ""
    lines = [l.strip() for l in out.replace("\r", "").split("\n") if l.strip()]
    return lines[-1] if lines else ""


# ---------------------------------------------------------------- toyvm runner
def toyvm_path():
    """toyvm's binary: $TOYVM, else <target>/release/toyvm (built with cargo if missing)."""
    if os.environ.get("TOYVM"):
        return os.environ["TOYVM"]
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(WORKSPACE, "target"))
    exe = os.path.join(target, "release", "toyvm")
    if not os.path.exists(exe) and shutil.which("cargo"):
        print("corpus.py: building toyvm (cargo build --release -p toyvm)", file=sys.stderr)
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "toyvm"], cwd=WORKSPACE)
    return exe if os.path.exists(exe) else None


def console_lines(text):
    v = text.split("\n")
    if v and v[-1] == "":
        v.pop()
    return v


def last_line(text):
    lines = [l.strip() for l in (text or "").split("\n") if l.strip()]
    return lines[-1] if lines else ""


def console_record(text):
    """What l1_console stores (the same as corpus_dos::console_record in Rust)."""
    n = len(console_lines(text))
    if len(text) <= 100 and n <= 4:
        return text
    return f"~{n} lines crc32={zlib.crc32(text.encode('utf-8')):08X} last={last_line(text)}"


def end_record(rep):
    return f"exited {rep['exit_code']}" if rep["end"] == "exited" else rep["end"]


def run_toyvm(exe, man, progs, budget_of, jobs=2):
    """Run programs (manifest dicts) under toyvm's l1 arm; return {name: report}."""
    by = {p["name"]: p for p in man}

    def one(p):
        with tempfile.TemporaryDirectory(prefix="corpustv") as d:
            j = os.path.join(d, "r.json")
            cmd = [exe, "run", os.path.join(ROOT, p["binary"]), "--arm", "l1", "--json", j,
                   "--dispatches", str(budget_of(p)), "--dos-version", p["dos_version"]]
            if p["keys"]:
                cmd += ["--keys", p["keys"]]
            for c in p["companions"]:
                cp = by[c]
                cmd += ["--companion", (os.path.join(ROOT, cp["binary"]) + " " + cp["args"]).strip()]
            if p["args"]:
                cmd += ["--"] + p["args"].split()
            r = subprocess.run(cmd, capture_output=True, text=True)
            if not os.path.exists(j):
                return p["name"], {"end": "error", "exit_code": None, "dispatches": 0,
                                   "console": (r.stdout + r.stderr).strip(), "frame": {"hash": ""}}
            return p["name"], json.load(open(j))

    with ThreadPoolExecutor(jobs) as ex:
        return dict(ex.map(one, progs))


def round_budget(d):
    """1.25 x d rounded up to two significant digits (at least 1000)."""
    x = max(1000, math.ceil(d * 1.25))
    unit = 10 ** max(0, len(str(x)) - 2)
    return -(-x // unit) * unit


def set_budget_header(src, budget):
    path = os.path.join(ROOT, src)
    text = open(path, encoding="latin-1").read()
    new, n = re.subn(r"(?m)^; @budget: *\d+ *$", f"; @budget: {budget}", text, count=1)
    if n == 0:
        new = re.sub(r"(?m)^(; @tags:.*)$", lambda m: m.group(1) + f"\n; @budget: {budget}", text, count=1)
    if new != text:
        open(path, "w", encoding="latin-1").write(new)


# ---------------------------------------------------------------- manifest writer
def q(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r") \
        .replace("\t", "\\t") + '"'


def write_manifest(progs, datas, old):
    out = ["# corpus-dos manifest: generated by scripts/corpus.py scan from the `; @` headers",
           "# of programs/*/*.asm and a DOSBox 0.74 run; the l1_* fields are toyvm's l1 arm at",
           "# the program's budget, written by `scripts/corpus.py record` (docs/corpus.md).",
           "", "schema = 1", "data_files = [" + ", ".join(q(d) for d in datas) + "]", ""]
    for p in progs:
        o = old.get(p["name"], {})
        out.append("[[program]]")
        for k in ("name", "family", "source", "binary", "format", "description"):
            out.append(f"{k} = {q(p[k])}")
        out.append("tags = [" + ", ".join(q(t) for t in p["tags"]) + "]")
        out.append(f"budget = {p['budget']}")
        out.append(f"keys = {q(p['keys'])}")
        out.append(f"dos_version = {q(p['dos_version'])}")
        out.append("companions = [" + ", ".join(q(c) for c in p["companions"]) + "]")
        out.append(f"args = {q(p['args'])}")
        out.append(f"timing_independent = {'true' if p['timing_independent'] else 'false'}")
        out.append(f"expected_checksum = {q(p.get('expected', ''))}")
        out.append(f"expected_exit = {p.get('expected_exit', 0)}")
        out.append(f"dosbox_agrees = {q(p.get('agrees', 'unknown'))}")
        out.append(f"dosbox_output = {q(p.get('dosbox_output', ''))}")
        out.append(f"dosbox_note = {q(p.get('note', ''))}")
        out.append(f"l1_end = {q(o.get('l1_end', ''))}")
        out.append(f"l1_dispatches = {o.get('l1_dispatches', 0)}")
        out.append(f"l1_frame_hash = {q(o.get('l1_frame_hash', ''))}")
        out.append(f"l1_console = {q(o.get('l1_console', ''))}")
        out.append("")
    open(MANIFEST, "w").write("\n".join(out))


def load_manifest():
    import tomllib
    with open(MANIFEST, "rb") as f:
        return tomllib.load(f)


def old_entries():
    if os.path.exists(MANIFEST):
        try:
            return {p["name"]: p for p in load_manifest().get("program", [])}
        except Exception:
            pass
    return {}


def merge(progs, old, res):
    """Fill the expected/DOSBox fields of scanned programs from a DOSBox run (res) or,
    for programs not run, from the old manifest."""
    for p in progs:
        o = old.get(p["name"], {})
        if p["name"] in (res or {}):
            out, code, st = res[p["name"]]
            got = first_line(out)
            p["expected"] = p["expect"] or got
            p["dosbox_output"] = got
            if st != "ok":
                p["agrees"], p["note"] = "no", f"dosbox: {st}"
            elif p["expect"] and got != p["expect"]:
                p["agrees"], p["note"] = "no", p["dosbox_bug"] or "DOSBox output differs"
            elif code != p["expected_exit"]:
                p["agrees"], p["note"] = "no", f"DOSBox exit code differs from @exit {p['expected_exit']}"
            elif p["timing_independent"] and not p["expected"]:
                p["agrees"], p["note"] = "no", "dosbox printed no checksum"
            else:
                p["agrees"], p["note"] = "yes", ""
        else:
            p["expected"] = o.get("expected_checksum", "")
            p["agrees"] = o.get("dosbox_agrees", "unknown")
            p["note"] = o.get("dosbox_note", "")
            p["dosbox_output"] = o.get("dosbox_output", "")
            if p["dosbox"] != "run":
                p["agrees"], p["note"] = "unknown", "not run in DOSBox: " + p["dosbox"]


def toyvm_check(man, sel, dres):
    """The toyvm side of the peer check: every selected program under l1 at its budget."""
    exe = toyvm_path()
    if exe is None:
        print("dosbox-check: toyvm not built and cargo missing, toyvm check skipped")
        return None, 0
    res = run_toyvm(exe, man, sel, lambda p: p["budget"])
    ti_ok = ti_n = with_db = db_n = td_ok = td_n = 0
    bad = []
    for p in sel:
        r = res[p["name"]]
        got = last_line(r["console"])
        ok = got == p["expected_checksum"] and r["end"] == "exited" and r["exit_code"] == p["expected_exit"]
        if p["timing_independent"]:
            ti_n += 1
            ti_ok += ok
            if dres is not None and p["name"] in dres:
                db_n += 1
                with_db += got == first_line(dres[p["name"]][0])
        else:
            td_n += 1
            td_ok += ok
        if not ok:
            bad.append(p)
            print(f"toyvm {p['name']:10} {end_record(r) if r['end'] != 'error' else 'error'} "
                  f"{got!r} expected {p['expected_checksum']!r} exit {p['expected_exit']}")
    dbtxt = f" ({with_db}/{db_n} print DOSBox's line)" if dres is not None else ""
    line = (f"toyvm: {ti_ok}/{ti_n} agree{dbtxt}, timing-dependent {td_ok}/{td_n} same output")
    return line, sum(1 for p in bad if p["timing_independent"])


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        return 2
    cmd = args[0]
    only = None
    if "--only" in args:
        only = set(args[args.index("--only") + 1].split(","))
    progs, datas = scan_sources()
    bins = [p["binary"] for p in progs] + datas
    if cmd == "run":
        sel = [p for p in progs if p["name"] in args[1:]]
        res = run_dosbox(sel, bins)
        for p in sel:
            print(p["name"], res[p["name"]])
        return 0
    if cmd == "scan":
        old = old_entries()
        runnable = [p for p in progs if p["dosbox"] == "run" and (only is None or p["name"] in only)]
        res = run_dosbox(runnable, bins, verbose=True) if "--run" in args else {}
        merge(progs, old, res)
        write_manifest(progs, datas, old)
        print(f"wrote {MANIFEST}: {len(progs)} programs")
        return 0
    if cmd == "record":
        exe = toyvm_path()
        if exe is None:
            print("corpus.py record: no toyvm binary (cargo build --release -p toyvm)")
            return 1
        old = old_entries()
        merge(progs, old, {})
        man = [dict(p, expected_checksum=p["expected"]) for p in progs]
        sel = [p for p in man if only is None or p["name"] in only]
        if "--budgets" in args:
            big = run_toyvm(exe, man, sel, lambda p: p["budget"] * 10)
            for p in sel:
                r = big[p["name"]]
                if r["end"] == "exited":
                    nb = round_budget(r["dispatches"])
                    if nb != p["budget"]:
                        print(f"{p['name']:10} budget {p['budget']} -> {nb} ({r['dispatches']} dispatches)")
                    set_budget_header(p["source"], nb)
                    p["budget"] = nb
                else:
                    print(f"{p['name']:10} keeps budget {p['budget']}: {r['end']} at {r['dispatches']}"
                          + ("" if not p["timing_independent"] else "  <-- a timing-independent program must exit"))
            progs, _ = scan_sources()
            merge(progs, old, {})
            man = [dict(p, expected_checksum=p["expected"]) for p in progs]
            sel = [p for p in man if only is None or p["name"] in only]
        res = run_toyvm(exe, man, sel, lambda p: p["budget"])
        bad = 0
        for p in sel:
            r = res[p["name"]]
            o = old.setdefault(p["name"], {})
            o["l1_end"] = end_record(r)
            o["l1_dispatches"] = r["dispatches"]
            o["l1_frame_hash"] = r["frame"]["hash"]
            o["l1_console"] = console_record(r["console"])
            got = last_line(r["console"])
            if r["end"] not in ("exited", "budget") or (p["timing_independent"] and (
                    got != p["expected"] or o["l1_end"] != f"exited {p['expected_exit']}")):
                bad += 1
                print(f"{p['name']:10} {o['l1_end']} {got!r}: expected {p['expected']!r} exit {p['expected_exit']}")
        write_manifest(progs, datas, old)
        print(f"recorded toyvm l1 results of {len(sel)} programs in {MANIFEST}; "
              f"{bad} disagree with the expected line or exit code")
        return 1 if bad else 0
    if cmd == "check":
        man = load_manifest()["program"]
        for p in man:
            p["solo"] = bool(p["companions"]) or "dos.tsr" in p["tags"]
        sel = [p for p in man if not p["dosbox_note"].startswith("not run in DOSBox")
               and (only is None or p["name"] in only)]
        if "--reverse" in args:
            sel = sel[::-1]
        res = run_dosbox(sel, [p["binary"] for p in man] + load_manifest().get("data_files", [])) \
            if "--no-dosbox" not in args else None
        dis = 0
        summary = []
        if res is None:
            print("dosbox-check: DOSBox part skipped (--no-dosbox or dosbox not installed)")
        else:
            agree = tdep_ok = tdep_diff = kn = 0
            print(f"{'program':10} {'family':14} {'ti':3} {'result':7} output")
            for p in sel:
                out, code, st = res[p["name"]]
                got = first_line(out)
                ok = got == p["expected_checksum"] and st == "ok" and code == p["expected_exit"]
                known = (not ok and p["dosbox_agrees"] == "no" and got == p["dosbox_output"] and got != "")
                ti = p["timing_independent"]
                if ti and known:
                    kn += 1
                elif ti:
                    agree += ok
                    dis += not ok
                else:
                    tdep_ok += ok
                    tdep_diff += not ok
                tag = "agree" if ok else ("known" if known else ("DIFFER" if ti else "differ"))
                print(f"{p['name']:10} {p['family']:14} {'yes' if ti else 'no':3} {tag:7} {got} [{st}]"
                      + ("" if ok else f" expected {p['expected_checksum']!r}")
                      + ("" if code == p["expected_exit"] else f" exit {'another' if code < 0 else code}"
                         f", expected {p['expected_exit']}"))
            summary.append(
                f"dosbox-check: {agree}/{agree + dis + kn} timing-independent programs agree with DOSBox 0.74, "
                f"{kn} differ as recorded (known DOSBox bugs), {dis} disagree unexpectedly; "
                f"timing-dependent: {tdep_ok} same output, {tdep_diff} different")
        if "--no-toyvm" not in args:
            tsel = [p for p in man if only is None or p["name"] in only]
            line, tdis = toyvm_check(man, tsel, res)
            if line:
                summary.append(line)
            dis += tdis
        print("; ".join(summary))
        return 1 if dis else 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
