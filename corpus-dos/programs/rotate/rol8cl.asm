; @desc: ROL r8,CL for CL 0..63 (count mod 8, CF from bit 0)
; @tags: arith.rotate_cl
; @budget: 190000
%define OPC rol
%define W 8
%define FORM 1
%define KIND 2
%include "shiftbody.inc"
