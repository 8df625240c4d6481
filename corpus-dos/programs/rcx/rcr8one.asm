; @desc: RCR r8,1 repeated (CL&7) times with CF carried in
; @tags: arith.rcl_rcr
; @budget: 200000
%define OPC rcr
%define W 8
%define FORM 3
%define KIND 2
%include "shiftbody.inc"
