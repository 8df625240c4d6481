; @desc: SAR byte [mem],CL (memory destination) for CL 0..63
; @tags: arith.shift_cl
; @budget: 200000
%define OPC sar
%define W 8
%define FORM 2
%define KIND 1
%include "shiftbody.inc"
