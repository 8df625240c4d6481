; @desc: REPNE CMPSB with DF=1
; @tags: mem.rep_string mem.rep_df1
; @budget: 130000
%define OP cmps
%define SZ 1
%define DIR 1
%define PFX repne
%include "strbody.inc"
