#!/usr/bin/env bash
# L1 against DOSBox 0.74 (normal and dynamic cores, cycles=max) on the
# long-running compute benchmarks (benches/programs/*N.COM: the corpus
# benches repeated N times).
#
# For each program and each engine, REPS runs are interleaved; each run is a
# whole process timed by /usr/bin/time (wall, user+sys). An empty program
# (EMPTY.COM: INT 20h) is timed the same way for each engine and its median
# is subtracted, so start-up does not count. Guest instructions come from
# toyvm's dispatch count (the same program runs in both). Reported:
# millions of guest instructions per host second, by CPU time (robust on a
# shared box) and by wall time, medians over REPS, plus whether the
# checksum lines agree.
#
# usage: benches/scripts/dosbox-speed.sh [REPS]    (from the workspace root)
# env:   PROGRAMS="BMANDN.COM:4 BLZN.COM:28 BMATN.COM:8"  CORES="normal dynamic"
set -eu
REPS=${1:-5}
PROGRAMS=${PROGRAMS:-"BMANDN.COM:4 BLZN.COM:28 BMATN.COM:8"}
CORES=${CORES:-"normal dynamic"}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PROGDIR=$ROOT/benches/programs
TOYVM=$ROOT/target/release/toyvm
command -v dosbox >/dev/null || { echo "dosbox not installed" >&2; exit 1; }
[ -x "$TOYVM" ] || (cd "$ROOT" && cargo build --release -p toyvm >&2)
WORK=$(mktemp -d /tmp/dosbox-speed.XXXX)
trap 'rm -rf "$WORK"' EXIT
cp "$PROGDIR"/*.COM "$WORK"/
for core in $CORES; do
  printf '[sdl]\noutput=surface\n[dosbox]\nmachine=svga_s3\nmemsize=16\n[cpu]\ncore=%s\ncycles=max\n[mixer]\nnosound=true\n[dos]\nxms=true\nems=true\n' "$core" > "$WORK/$core.conf"
done
LOG=$WORK/times.tsv
: > "$LOG"

timeit() { # label prog args -- command...
  local label=$1 prog=$2 args=$3; shift 3
  /usr/bin/time -o "$WORK/t.txt" -f "%e %U %S" "$@" >/dev/null 2>&1 || true
  echo -e "$label\t$prog\t$args\t$(tail -1 "$WORK/t.txt")" >> "$LOG"
}

run_dosbox() { # core prog args
  local core=$1 prog=$2 args=$3
  rm -f "$WORK/OUT.TXT"
  timeit "dosbox-$core" "$prog" "$args" env SDL_VIDEODRIVER=dummy SDL_AUDIODRIVER=dummy \
    timeout 600 dosbox -conf "$WORK/$core.conf" -c "mount c $WORK" -c 'c:' -c "$prog $args > OUT.TXT" -c 'exit'
  tr -d '\r' < "$WORK/OUT.TXT" > "$WORK/out-dosbox-$core-$prog.txt" 2>/dev/null || true
}

run_toyvm() { # prog args
  local prog=$1 args=$2
  timeit "toyvm-l1" "$prog" "$args" "$TOYVM" run "$WORK/$prog" $args --arm l1 --dispatches 4000000000 --json "$WORK/toyvm-$prog.json"
}

for rep in $(seq 1 "$REPS"); do
  echo "rep $rep/$REPS" >&2
  for spec in EMPTY.COM: $PROGRAMS; do
    prog=${spec%%:*}; args=${spec#*:}
    run_toyvm "$prog" "$args"
    for core in $CORES; do run_dosbox "$core" "$prog" "$args"; done
  done
done

python3 - "$LOG" "$WORK" "$REPS" $CORES <<'PY'
import json, sys, statistics as st, os
log, work, reps, cores = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
rows = {}
for line in open(log):
    label, prog, args, t = line.rstrip("\n").split("\t")
    wall, user, sys_ = map(float, t.split())
    rows.setdefault((label, prog), []).append((wall, user + sys_))
engines = ["toyvm-l1"] + [f"dosbox-{c}" for c in cores]
def med(label, prog, k):
    return st.median(x[k] for x in rows[(label, prog)])
progs = sorted({p for (_, p) in rows if p != "EMPTY.COM"})
print(f"Guest instructions per host second (millions), medians of {reps} interleaved runs,")
print("empty-program start-up subtracted; CPU = user+sys of the process.\n")
print("| program | guest instructions | " + " | ".join(f"{e} CPU | {e} wall" for e in engines) + " | checksums |")
print("|---|---:|" + "---:|---:|" * len(engines) + "---|")
for p in progs:
    j = json.load(open(os.path.join(work, f"toyvm-{p}.json")))
    n = j["dispatches"]
    cells = []
    for e in engines:
        for k in (1, 0):
            dt = med(e, p, k) - med(e, "EMPTY.COM", k)
            cells.append(f"{n / dt / 1e6:.1f}" if dt > 0 else "n/a")
    toy = [l.strip() for l in j["console"].splitlines() if l.strip()]
    agree = []
    for c in cores:
        f = os.path.join(work, f"out-dosbox-{c}-{p}.txt")
        d = [l.strip() for l in open(f).read().splitlines() if l.strip()] if os.path.exists(f) else []
        agree.append(f"{c}: {'same' if d == toy else 'DIFFERENT'}")
    print(f"| {p} {j['args']} | {n} | " + " | ".join(cells) + f" | {', '.join(agree)} ({toy[-1] if toy else ''}) |")
print("\nRaw medians (seconds, wall / CPU):")
for (label, prog), v in sorted(rows.items()):
    print(f"  {label:16} {prog:12} wall {st.median(x[0] for x in v):7.3f}  cpu {st.median(x[1] for x in v):7.3f}  (n={len(v)})")
PY
