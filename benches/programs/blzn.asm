; BLZ (corpus bench: LZSS over 8 KiB, 7.4M instructions per round) repeated
; N times (default 28).
%define IMAGE "../../corpus-dos/programs/bench/BLZ.COM"
%define DEFAULT_N 28
%include "repeat.inc"
