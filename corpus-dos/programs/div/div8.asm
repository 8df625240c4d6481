; @desc: DIV r8 of AX by edge divisors incl. 0 and quotient overflow; #DE handler resumes
%macro INIT 0
    call de_install
%endmacro
%macro FINI 0
    call de_restore
    mov ax, [cs:de_count]
    call crc_word
%endmacro
%define WITH_DE
; @tags: arith.muldiv int.divide_error
; @budget: 28000
%define VA dd 0, 1, 2, 7Fh, 80h, 0FFh, 0FFFFh, 7FFFh, 8000h, 0100h, 1234h, 0FF80h, 0FE00h
%define VB dd 0, 1, 2, 7Fh, 80h, 0FFh, 0FFFFh, 7FFFh, 8000h, 0100h, 1234h, 0FF80h, 0FE00h
%macro TESTOP 0
    DIVTRY div bl
    call crc_word
    mov ax, [cs:de_delta]
    call crc_word
%endmacro
%include "grid.inc"
