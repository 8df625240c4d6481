; @desc: BENCH: fixed-point Mandelbrot 32-bit with 200 iterations per pixel (tens of millions of instructions), mode 13h
; @tags: bench kernel.fixmandel video.mode13h
; @budget: 65000000
%define PREC 2
%define MAXIT 200
%include "../fixmand/fmbody.inc"
