#!/usr/bin/env bash
# Dev helper: run one program in DOSBox headless, print its stdout.
# usage: run1.sh DIR PROG.COM [timeout]
set -eu
d=$(cd "$1" && pwd); p=$2; t=${3:-20}
conf=$(mktemp /tmp/dbconf.XXXX)
printf '[sdl]\noutput=surface\n[dosbox]\nmachine=svga_s3\nmemsize=16\n[cpu]\ncore=normal\ncycles=max\n[mixer]\nnosound=true\n[dos]\nxms=true\nems=true\n' > $conf
rm -f "$d/OUT.TXT"
SDL_VIDEODRIVER=dummy SDL_AUDIODRIVER=dummy timeout $t dosbox -conf $conf -c "mount c $d" -c 'c:' -c "$p > OUT.TXT" -c 'exit' >/dev/null 2>&1 || echo "rc=$?"
cat "$d/OUT.TXT" 2>/dev/null; rm -f "$d/OUT.TXT" $conf
