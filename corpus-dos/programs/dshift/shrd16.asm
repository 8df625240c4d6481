; @desc: SHRD r16,r16,CL for CL 0..63
; @tags: arith.shld_shrd
; @budget: 120000
%define OPC shrd
%define W 16
%define FORM 1
%define KIND 3
%include "shiftbody.inc"
