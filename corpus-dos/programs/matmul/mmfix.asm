; @desc: 24x24 16.16 fixed-point matrix multiply (one-operand IMUL to EDX:EAX, SHRD 16)
; @tags: kernel.matmul arith.shld_shrd
; @budget: 270000
n equ 24
%define KIND 3
%include "mmbody.inc"
