; @desc: SHRD word [mem],r16,CL
; @tags: arith.shld_shrd
; @budget: 130000
%define OPC shrd
%define W 16
%define FORM 2
%define KIND 3
%include "shiftbody.inc"
