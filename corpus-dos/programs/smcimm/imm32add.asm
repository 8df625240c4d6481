; @desc: hot loop: ADD r32,imm32 (66h) with the 4-byte immediate rewritten every iteration
; @tags: smc.imm_patch
; @budget: 46000
%define W 32
%define FORM 1
%include "immbody.inc"
