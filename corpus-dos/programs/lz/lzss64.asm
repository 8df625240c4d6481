; @desc: LZSS compressor (greedy, 64-byte window) and decompressor over 8 KiB with a round-trip check, three segments through FS/ES/GS
; @tags: kernel.lz mem.fs_gs
; @budget: 5900000
%define WIN 64
%include "lzbody.inc"
