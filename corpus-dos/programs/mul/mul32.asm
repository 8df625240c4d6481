; @desc: MUL r32 over 32-bit edge values: EDX:EAX and CF/OF
; @tags: arith.muldiv arith.real32_sib
; @budget: 42000
%define VA dd 0, 1, 2, 7FFFFFFFh, 80000000h, 80000001h, 0FFFFFFFEh, 0FFFFFFFFh, 12345678h, 0FEDCBA98h, 0000FFFFh, 00010000h
%define VB dd 0, 1, 2, 7FFFFFFFh, 80000000h, 80000001h, 0FFFFFFFEh, 0FFFFFFFFh, 12345678h, 0FEDCBA98h, 0000FFFFh, 00010000h
%macro TESTOP 0
    mul ebx
    FEEDF 0801h
    call crc_dword
    mov eax, edx
    call crc_dword
%endmacro
%include "grid.inc"
