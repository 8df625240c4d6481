; @desc: REP LODSW forward
; @tags: mem.rep_string
; @budget: 130000
%define OP lods
%define SZ 2
%define DIR 0
%define PFX rep
%include "strbody.inc"
