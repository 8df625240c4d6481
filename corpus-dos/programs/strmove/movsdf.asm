; @desc: REP MOVSD forward (32-bit elements)
; @tags: mem.rep_string arith.real32_sib
; @budget: 130000
%define OP movs
%define SZ 4
%define DIR 0
%define PFX rep
%include "strbody.inc"
