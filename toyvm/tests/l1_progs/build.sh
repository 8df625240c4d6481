#!/bin/sh
# Rebuilds the L1 test programs (NASM, flat binaries loaded at 1000:0100).
cd "$(dirname "$0")" && for f in *.asm; do nasm -f bin -o "${f%.asm}.bin" "$f" || exit 1; done
