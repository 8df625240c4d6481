; @desc: DIV r32 of EDX:EAX by 32-bit edge divisors
%macro INIT 0
    call de_install
%endmacro
%macro FINI 0
    call de_restore
    mov ax, [cs:de_count]
    call crc_word
%endmacro
%define WITH_DE
; @tags: arith.muldiv int.divide_error arith.real32_sib
; @budget: 37000
%define VA dd 0, 1, 2, 7FFFFFFFh, 80000000h, 0FFFFFFFFh, 3, 0FFFFFFFEh, 12345678h, 10000h, 0FFFF0000h
%define VB dd 0, 1, 2, 7FFFFFFFh, 80000000h, 0FFFFFFFFh, 3, 0FFFFFFFEh, 12345678h, 10000h, 0FFFF0000h
%macro TESTOP 0
    mov edx, ecx
    shr edx, 1
    DIVTRY div ebx
    call crc_dword
    mov eax, edx
    call crc_dword
    mov ax, [cs:de_delta]
    call crc_word
%endmacro
%include "grid.inc"
