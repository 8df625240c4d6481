#!/usr/bin/env bash
# Assemble every corpus source with nasm: programs/<family>/<name>.asm ->
# programs/<family>/<NAME>.COM (or .EXE when the header says `; @format: exe`,
# or the file named by `; @output: FILE` for data files).
# usage: build.sh [--check]   (--check: compare with the committed binaries, write nothing)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v nasm >/dev/null || { echo "build.sh: nasm not found, skipping"; exit 0; }
check=0; [ "${1:-}" = --check ] && check=1
bad=0; n=0
for src in programs/*/*.asm; do
  dir=$(dirname "$src"); base=$(basename "$src" .asm)
  out=$(sed -n 's/^; @output: *\([^ ]*\).*/\1/p' "$src" | head -1)
  if [ -z "$out" ]; then
    fmt=$(sed -n 's/^; @format: *\([a-z]*\).*/\1/p' "$src" | head -1)
    ext=COM; [ "$fmt" = exe ] && ext=EXE
    out=$(echo "$base" | tr a-z A-Z).$ext
  fi
  n=$((n+1))
  if [ $check = 1 ]; then
    tmp=$(mktemp); nasm -f bin -I programs/include/ -I "$dir/" -o "$tmp" "$src"
    if ! cmp -s "$tmp" "$dir/$out"; then echo "DIFFERS: $src -> $dir/$out"; bad=$((bad+1)); fi
    rm -f "$tmp"
  else
    nasm -f bin -I programs/include/ -I "$dir/" -o "$dir/$out" "$src" || { echo "FAILED: $src"; bad=$((bad+1)); }
  fi
done
echo "build: $n sources, $bad problems"
[ $bad = 0 ]
