; @desc: REPNE SCASB forward: stops at the first match, flags from the last compare
; @tags: mem.rep_string
; @budget: 130000
%define OP scas
%define SZ 1
%define DIR 0
%define PFX repne
%include "strbody.inc"
