; @desc: SHL byte [mem],1 repeated
; @tags: arith.shift_cl
; @budget: 200000
%define OPC shl
%define W 8
%define FORM 4
%define KIND 1
%include "shiftbody.inc"
