; @desc: RCL r8,CL for CL 0..63 (count mod 9 through CF)
; @tags: arith.rcl_rcr
; @budget: 190000
%define OPC rcl
%define W 8
%define FORM 1
%define KIND 2
%include "shiftbody.inc"
