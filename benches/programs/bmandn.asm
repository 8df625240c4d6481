; BMAND (corpus bench: 32-bit fixed-point Mandelbrot, mode 13h, 52M
; instructions per round) repeated N times (default 4).
%define IMAGE "../../corpus-dos/programs/bench/BMAND.COM"
%define DEFAULT_N 4
%include "repeat.inc"
