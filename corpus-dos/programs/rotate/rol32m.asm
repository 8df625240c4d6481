; @desc: ROL dword [mem],CL
; @tags: arith.rotate_cl
; @budget: 190000
%define OPC rol
%define W 32
%define FORM 2
%define KIND 2
%include "shiftbody.inc"
