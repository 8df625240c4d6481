; @desc: ROR byte [mem],CL (memory destination)
; @tags: arith.rotate_cl
; @budget: 190000
; @expect: CHECKSUM CF5C34D9
; @dosbox-bug: DOSBox 0.74 sets CF wrongly for ROR m8,CL when CL is a non-zero multiple of 8 (e.g. CF=1 rotating 0); unicorn (QEMU) and the Intel SDM (CF = MSB of the result) agree on the expected value
%define OPC ror
%define W 8
%define FORM 2
%define KIND 2
%include "shiftbody.inc"
