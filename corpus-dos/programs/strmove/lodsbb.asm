; @desc: REP LODSB with DF=1 (the last element wins)
; @tags: mem.rep_string mem.rep_df1
; @budget: 130000
%define OP lods
%define SZ 1
%define DIR 1
%define PFX rep
%include "strbody.inc"
