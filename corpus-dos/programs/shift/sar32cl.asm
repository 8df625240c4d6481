; @desc: SAR r32,CL for CL 0..63; result and defined flags
; @tags: arith.shift_cl arith.real32_sib
; @budget: 190000
%define OPC sar
%define W 32
%define FORM 1
%define KIND 1
%include "shiftbody.inc"
