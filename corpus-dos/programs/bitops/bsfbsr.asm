; @desc: BSF/BSR r16/r32 and memory sources; zero source only ZF is checked (destination undefined)
; @tags: arith.bitops
; @budget: 20000
%define VA dd 0, 1, 7Fh, 80h, 0FFh, 7FFFh, 8000h, 0FFFFh, 7FFFFFFFh, 80000000h, 0FFFFFFFFh, 12345678h, 0EDCBA987h, 00FF00FFh, 0F0F0F0Fh, 80000001h, 40000000h, 00010000h, 00008000h, 00000100h
%define VB dd 1
%macro TESTOP 0
    mov edx, 0DEADBEEFh
    bsf edx, eax
    FEEDF 0040h
    jz %%z1
    xchg eax, edx
    call crc_dword
    xchg eax, edx
%%z1:
    bsr edx, eax
    FEEDF 0040h
    jz %%z2
    xchg eax, edx
    call crc_dword
    xchg eax, edx
%%z2:
    mov [cs:%%m], ax
    bsf dx, [cs:%%m]
    FEEDF 0040h
    jz %%z3
    xchg ax, dx
    call crc_word
    xchg ax, dx
%%z3:
    bsr dx, ax
    FEEDF 0040h
    jz %%z4
    xchg ax, dx
    call crc_word
%%z4:
    jmp %%o
%%m: dw 0
%%o:
%endmacro
%include "grid.inc"
