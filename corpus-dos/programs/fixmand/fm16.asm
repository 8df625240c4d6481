; @desc: fixed-point Mandelbrot, 16-bit 4.12 arithmetic (IMUL r16, SHRD), 24 iterations, drawn in mode 13h; CRC of the frame
; @tags: kernel.fixmandel video.mode13h arith.shld_shrd
; @budget: 17000000
%define PREC 1
%define MAXIT 24
%include "fmbody.inc"
