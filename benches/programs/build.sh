#!/bin/sh
# Builds the long-running benchmark wrappers (NASM) next to their sources.
cd "$(dirname "$0")" || exit 1
for f in bmandn blzn bmatn smcbench; do
  nasm -f bin -o "$(echo $f | tr a-z A-Z).COM" "$f.asm" || exit 1
done
