; @desc: ROL r8,1 repeated
; @tags: arith.rotate_cl
; @budget: 200000
%define OPC rol
%define W 8
%define FORM 3
%define KIND 2
%include "shiftbody.inc"
