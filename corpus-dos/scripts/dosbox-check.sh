#!/usr/bin/env bash
# Peer check of the built-in corpus against DOSBox 0.74 (headless, batched sessions) and toyvm:
# 1. re-assembles every source with nasm and compares with the committed binary;
# 2. runs every program DOSBox can run unattended, compares its last line and exact exit
#    code with corpus.toml (expected_checksum / expected_exit, or the recorded
#    dosbox_output for known DOSBox bugs);
# 3. TOYVM HOOK: runs every program in toyvm's l1 arm at its budget (target/release/toyvm,
#    or $TOYVM; built with `cargo build --release -p toyvm` when missing) and compares its
#    last console line and exit code with the manifest and with DOSBox's line; the summary
#    line ends with `toyvm: N/185 agree (... print DOSBox's line)`. --no-toyvm skips it.
# Skips the DOSBox part with a message when nasm or dosbox is missing (the toyvm part
# still runs). Exit 1 on any unexpected disagreement of a timing-independent program.
set -euo pipefail
cd "$(dirname "$0")/.."
if command -v nasm >/dev/null; then bash scripts/build.sh --check; else echo "dosbox-check: nasm missing, binaries not re-assembled"; fi
if ! command -v dosbox >/dev/null; then
  echo "dosbox-check: dosbox missing, skipping the DOSBox peer check"
  exec python3 scripts/corpus.py check --no-dosbox "$@"
fi
exec python3 scripts/corpus.py check "$@"
