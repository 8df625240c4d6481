; @desc: ROR word [mem],1 repeated
; @tags: arith.rotate_cl
; @budget: 200000
%define OPC ror
%define W 16
%define FORM 4
%define KIND 2
%include "shiftbody.inc"
