; @desc: MOVZX/MOVSX r16<-r8, r32<-r8, r32<-r16, from registers and memory, incl. AH/BH sources
; @tags: arith.bitops
; @budget: 19000
%define VA dd 0, 1, 7Fh, 80h, 0FFh, 7FFFh, 8000h, 0FFFFh, 7FFFFFFFh, 80000000h, 0FFFFFFFFh, 12345678h, 0EDCBA987h, 00FF00FFh, 0F0F0F0Fh, 80000001h
%define VB dd 0
%macro TESTOP 0
    mov [cs:%%m], eax
    movzx edx, al
    xchg eax, edx
    call crc_dword
    xchg eax, edx
    movsx edx, ah
    xchg eax, edx
    call crc_dword
    xchg eax, edx
    movsx dx, al
    xchg ax, dx
    call crc_word
    xchg ax, dx
    movzx edx, word [cs:%%m+1]
    xchg eax, edx
    call crc_dword
    xchg eax, edx
    movsx edx, word [cs:%%m+2]
    xchg eax, edx
    call crc_dword
    xchg eax, edx
    movsx edx, byte [cs:%%m+3]
    movzx bx, byte [cs:%%m+1]
    mov eax, edx
    call crc_dword
    mov ax, bx
    call crc_word
    jmp %%o
%%m: dd 0
%%o:
%endmacro
%include "grid.inc"
