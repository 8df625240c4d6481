; @desc: RCL word [mem],1 repeated (memory, by-one form)
; @tags: arith.rcl_rcr
; @budget: 200000
%define OPC rcl
%define W 16
%define FORM 4
%define KIND 2
%include "shiftbody.inc"
