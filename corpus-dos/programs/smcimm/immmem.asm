; @desc: hot loop: ADD dword [mem],imm32 - a memory-destination instruction whose immediate is patched
; @tags: smc.imm_patch
; @budget: 50000
%define W 32
%define FORM 3
%include "immbody.inc"
