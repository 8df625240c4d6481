; @desc: BENCH: 64x64 32-bit (8 chained products) integer matrix multiply with SIB addressing
; @tags: bench kernel.matmul arith.real32_sib
; @budget: 33000000
n equ 64
%define REPS 8
%define KIND 2
%include "../matmul/mmbody.inc"
