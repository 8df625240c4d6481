; @desc: 24x24 integer matrix multiply with 32-bit IMUL r32,m32 and SIB addressing
; @tags: kernel.matmul arith.real32_sib
; @budget: 250000
n equ 24
%define KIND 2
%include "mmbody.inc"
