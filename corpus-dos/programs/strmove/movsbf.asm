; @desc: REP MOVSB forward over counts 0..100 between two segments
; @tags: mem.rep_string
; @budget: 130000
%define OP movs
%define SZ 1
%define DIR 0
%define PFX rep
%include "strbody.inc"
