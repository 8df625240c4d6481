; @desc: RCR dword [mem],CL (memory destination)
; @tags: arith.rcl_rcr
; @budget: 190000
%define OPC rcr
%define W 32
%define FORM 2
%define KIND 2
%include "shiftbody.inc"
