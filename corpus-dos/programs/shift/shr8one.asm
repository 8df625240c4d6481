; @desc: SHR r8,1 repeated (CL&7) times: the D0 /5 by-one form
; @tags: arith.shift_cl
; @budget: 200000
%define OPC shr
%define W 8
%define FORM 3
%define KIND 1
%include "shiftbody.inc"
