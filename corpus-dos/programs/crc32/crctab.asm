; @desc: table-driven CRC-32 with a SIB-indexed table over 16 KiB, cross-checked against the library table CRC
; @tags: kernel.crc32
; @budget: 410000
%define KERNEL 3
%include "crcbody.inc"
