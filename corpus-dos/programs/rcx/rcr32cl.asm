; @desc: RCR r32,CL
; @tags: arith.rcl_rcr
; @budget: 190000
%define OPC rcr
%define W 32
%define FORM 1
%define KIND 2
%include "shiftbody.inc"
