; @desc: ROL r16,1 repeated (CL&7) times
; @tags: arith.rotate_cl
; @budget: 200000
%define OPC rol
%define W 16
%define FORM 3
%define KIND 2
%include "shiftbody.inc"
