; @desc: REP MOVSD with DF=1
; @tags: mem.rep_string mem.rep_df1
; @budget: 130000
%define OP movs
%define SZ 4
%define DIR 1
%define PFX rep
%include "strbody.inc"
