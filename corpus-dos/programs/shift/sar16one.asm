; @desc: SAR r16,1 repeated
; @tags: arith.shift_cl
; @budget: 200000
%define OPC sar
%define W 16
%define FORM 3
%define KIND 1
%include "shiftbody.inc"
