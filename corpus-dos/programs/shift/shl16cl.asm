; @desc: SHL r16,CL for CL 0..63
; @tags: arith.shift_cl
; @budget: 190000
%define OPC shl
%define W 16
%define FORM 1
%define KIND 1
%include "shiftbody.inc"
