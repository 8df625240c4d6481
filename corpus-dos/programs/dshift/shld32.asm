; @desc: SHLD r32,r32,CL for CL 0..63
; @tags: arith.shld_shrd arith.real32_sib
; @budget: 190000
%define OPC shld
%define W 32
%define FORM 1
%define KIND 3
%include "shiftbody.inc"
