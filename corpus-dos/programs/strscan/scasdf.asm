; @desc: REPE SCASD forward
; @tags: mem.rep_string
; @budget: 130000
%define OP scas
%define SZ 4
%define DIR 0
%define PFX repe
%include "strbody.inc"
