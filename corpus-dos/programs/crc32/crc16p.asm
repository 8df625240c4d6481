; @desc: bitwise CRC-32 with 16-bit register pairs (SHR DX / RCR AX) over 16 KiB, cross-checked against the library table CRC
; @tags: kernel.crc32
; @budget: 1400000
%define KERNEL 1
%include "crcbody.inc"
