; @desc: two- and three-operand IMUL (r16,r/m16; r32,r/m32,imm8/imm32): truncated product, CF/OF
; @tags: arith.muldiv
; @budget: 91000
; @expect: CHECKSUM 395C71F9
; @dosbox-bug: DOSBox 0.74 IMUL r,r/m,imm sets CF/OF when the product is exactly 7FFFh/7FFFFFFFh or -8000h/-80000000h (strict < in its range test); unicorn (QEMU) agrees on the expected value
%define VA dd 0, 1, 2, 7FFFFFFFh, 80000000h, 80000001h, 0FFFFFFFEh, 0FFFFFFFFh, 12345678h, 0FEDCBA98h, 0000FFFFh, 00010000h
%define VB dd 0, 1, 2, 7FFFFFFFh, 80000000h, 80000001h, 0FFFFFFFEh, 0FFFFFFFFh, 12345678h, 0FEDCBA98h, 0000FFFFh, 00010000h
%macro TESTOP 0
    push eax
    imul ax, bx
    FEEDF 0801h
    call crc_word
    pop eax
    push eax
    imul eax, ebx
    FEEDF 0801h
    call crc_dword
    pop eax
    push eax
    imul eax, ebx, -3
    FEEDF 0801h
    call crc_dword
    pop eax
    imul ax, bx, 7FFFh
    FEEDF 0801h
    call crc_word
    imul edx, ecx, 12345678h
    FEEDF 0801h
    mov eax, edx
    call crc_dword
%endmacro
%include "grid.inc"
