; @desc: SHRD r32,r32,CL
; @tags: arith.shld_shrd
; @budget: 190000
%define OPC shrd
%define W 32
%define FORM 1
%define KIND 3
%include "shiftbody.inc"
