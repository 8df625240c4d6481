; @desc: SHLD r16,r16,CL for CL 0..63 (count>16 undefined: skipped)
; @tags: arith.shld_shrd
; @budget: 120000
; @expect: CHECKSUM 5534B015
; @dosbox-bug: DOSBox 0.74 computes OF of 1-bit SHLD r16 wrongly (OF set for 0->0001, clear for 5678->ACF1); unicorn (QEMU) and the SDM sign-change rule agree on the expected value
%define OPC shld
%define W 16
%define FORM 1
%define KIND 3
%include "shiftbody.inc"
