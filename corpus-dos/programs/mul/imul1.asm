; @desc: one-operand IMUL r8/r16/r32 on the same edge grid: widened product and CF/OF
; @tags: arith.muldiv
; @budget: 72000
%define VA dd 0, 1, 2, 7FFFFFFFh, 80000000h, 80000001h, 0FFFFFFFEh, 0FFFFFFFFh, 12345678h, 0FEDCBA98h, 0000FFFFh, 00010000h
%define VB dd 0, 1, 2, 7FFFFFFFh, 80000000h, 80000001h, 0FFFFFFFEh, 0FFFFFFFFh, 12345678h, 0FEDCBA98h, 0000FFFFh, 00010000h
%macro TESTOP 0
    push eax
    push ebx
    imul bl
    FEEDF 0801h
    call crc_word
    pop ebx
    pop eax
    push eax
    push ebx
    imul bx
    FEEDF 0801h
    call crc_word
    mov ax, dx
    call crc_word
    pop ebx
    pop eax
    imul ebx
    FEEDF 0801h
    call crc_dword
    mov eax, edx
    call crc_dword
%endmacro
%include "grid.inc"
