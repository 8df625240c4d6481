; @desc: CMPSW without REP, DF=1
; @tags: mem.rep_string mem.rep_df1
; @budget: 130000
%define OP cmps
%define SZ 2
%define DIR 1
%define PFX 
%include "strbody.inc"
