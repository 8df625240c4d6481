; @desc: BENCH: LZSS with a 256-byte window over 8 KiB: compress/decompress/verify (search-heavy)
; @tags: bench kernel.lz mem.fs_gs
; @budget: 9300000
%define WIN 256
%include "../lz/lzbody.inc"
