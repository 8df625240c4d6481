; @desc: SHLD dword [mem],r32,CL
; @tags: arith.shld_shrd
; @budget: 200000
%define OPC shld
%define W 32
%define FORM 2
%define KIND 3
%include "shiftbody.inc"
