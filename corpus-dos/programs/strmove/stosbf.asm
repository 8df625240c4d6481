; @desc: REP STOSB forward
; @tags: mem.rep_string
; @budget: 130000
%define OP stos
%define SZ 1
%define DIR 0
%define PFX rep
%include "strbody.inc"
