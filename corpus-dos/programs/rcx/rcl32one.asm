; @desc: RCL r32,1 repeated
; @tags: arith.rcl_rcr
; @budget: 200000
%define OPC rcl
%define W 32
%define FORM 3
%define KIND 2
%include "shiftbody.inc"
