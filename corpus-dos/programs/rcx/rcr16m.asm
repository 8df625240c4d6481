; @desc: RCR word [mem],CL
; @tags: arith.rcl_rcr
; @budget: 190000
%define OPC rcr
%define W 16
%define FORM 2
%define KIND 2
%include "shiftbody.inc"
