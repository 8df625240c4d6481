; @desc: LZSS with a 16-byte window (more literals, shorter searches), round-trip checked
; @tags: kernel.lz mem.fs_gs
; @budget: 2600000
%define WIN 16
%include "lzbody.inc"
