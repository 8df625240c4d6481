; @desc: fixed-point Mandelbrot, 32-bit 8.24 arithmetic (IMUL r32 to EDX:EAX, SHRD 24), 20 iterations, mode 13h
; @tags: kernel.fixmandel video.mode13h arith.real32_sib
; @budget: 14000000
%define PREC 2
%define MAXIT 20
%include "fmbody.inc"
