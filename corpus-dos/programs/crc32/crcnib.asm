; @desc: nibble-table CRC-32 (16 entries, two lookups per byte) over 16 KiB, cross-checked against the library table CRC
; @tags: kernel.crc32
; @budget: 510000
%define KERNEL 4
%include "crcbody.inc"
