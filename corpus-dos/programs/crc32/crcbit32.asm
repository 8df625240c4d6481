; @desc: bitwise CRC-32 with 32-bit registers over 16 KiB, cross-checked against the library table CRC
; @tags: kernel.crc32
; @budget: 1100000
%define KERNEL 2
%include "crcbody.inc"
