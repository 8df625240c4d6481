; @desc: REPE CMPSB forward: runs while equal
; @tags: mem.rep_string
; @budget: 130000
%define OP cmps
%define SZ 1
%define DIR 0
%define PFX repe
%include "strbody.inc"
