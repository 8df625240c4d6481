; @desc: SHR word [mem],CL
; @tags: arith.shift_cl
; @budget: 200000
%define OPC shr
%define W 16
%define FORM 2
%define KIND 1
%include "shiftbody.inc"
