; @desc: SAR dword [mem],CL
; @tags: arith.shift_cl
; @budget: 190000
%define OPC sar
%define W 32
%define FORM 2
%define KIND 1
%include "shiftbody.inc"
