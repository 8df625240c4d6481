; @desc: hot loop: CMP r16,imm16 + Jcc with the immediate rewritten every iteration (branch direction follows the patch)
; @tags: smc.imm_patch
; @budget: 54000
%define W 16
%define FORM 2
%include "immbody.inc"
