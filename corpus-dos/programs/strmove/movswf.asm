; @desc: REP MOVSW forward
; @tags: mem.rep_string
; @budget: 130000
%define OP movs
%define SZ 2
%define DIR 0
%define PFX rep
%include "strbody.inc"
