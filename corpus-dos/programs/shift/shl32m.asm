; @desc: SHL dword [mem],CL (memory destination) for CL 0..63
; @tags: arith.shift_cl
; @budget: 190000
%define OPC shl
%define W 32
%define FORM 2
%define KIND 1
%include "shiftbody.inc"
