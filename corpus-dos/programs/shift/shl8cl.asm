; @desc: SHL r8,CL for CL 0..63 over 10 values; result and defined flags
; @tags: arith.shift_cl
; @budget: 190000
%define OPC shl
%define W 8
%define FORM 1
%define KIND 1
%include "shiftbody.inc"
