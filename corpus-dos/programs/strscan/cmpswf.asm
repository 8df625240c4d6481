; @desc: REPE CMPSW forward
; @tags: mem.rep_string
; @budget: 130000
%define OP cmps
%define SZ 2
%define DIR 0
%define PFX repe
%include "strbody.inc"
