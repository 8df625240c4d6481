; @desc: RCL r16,CL (mod 17)
; @tags: arith.rcl_rcr
; @budget: 190000
%define OPC rcl
%define W 16
%define FORM 1
%define KIND 2
%include "shiftbody.inc"
