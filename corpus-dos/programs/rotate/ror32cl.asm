; @desc: ROR r32,CL
; @tags: arith.rotate_cl
; @budget: 190000
%define OPC ror
%define W 32
%define FORM 1
%define KIND 2
%include "shiftbody.inc"
