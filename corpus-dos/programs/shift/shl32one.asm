; @desc: SHL r32,1 repeated
; @tags: arith.shift_cl
; @budget: 200000
%define OPC shl
%define W 32
%define FORM 3
%define KIND 1
%include "shiftbody.inc"
