; @desc: MOVSB without REP (one element, CX untouched), DF=1
; @tags: mem.rep_string mem.rep_df1
; @budget: 130000
%define OP movs
%define SZ 1
%define DIR 1
%define PFX 
%include "strbody.inc"
