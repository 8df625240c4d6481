; BMAT (corpus bench: 64x64 32-bit matrix products, 26M instructions per
; round) repeated N times (default 8).
%define IMAGE "../../corpus-dos/programs/bench/BMAT.COM"
%define DEFAULT_N 8
%include "repeat.inc"
