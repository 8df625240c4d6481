; @desc: 24x24 integer matrix multiply with 16-bit IMUL and 16-bit wrapping sums
; @tags: kernel.matmul
; @budget: 250000
n equ 24
%define KIND 1
%include "mmbody.inc"
