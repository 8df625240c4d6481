; @desc: hot loop: ADD r8,imm8 whose immediate is rewritten every iteration
; @tags: smc.imm_patch
; @budget: 46000
%define W 8
%define FORM 1
%include "immbody.inc"
