; @desc: RCL byte [mem],CL
; @tags: arith.rcl_rcr
; @budget: 190000
%define OPC rcl
%define W 8
%define FORM 2
%define KIND 2
%include "shiftbody.inc"
