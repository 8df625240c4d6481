; @desc: ROL r16,CL
; @tags: arith.rotate_cl
; @budget: 190000
%define OPC rol
%define W 16
%define FORM 1
%define KIND 2
%include "shiftbody.inc"
