; @desc: IDIV word [mem] of DX:AX: signed edges
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
; @budget: 29000
%define VA dd 0, 1, 2, 7FFFh, 8000h, 0FFFFh, 3, 0FFFEh, 1234h, 0100h, 0FF00h
%define VB dd 0, 1, 2, 7FFFh, 8000h, 0FFFFh, 3, 0FFFEh, 1234h, 0100h, 0FF00h
%macro TESTOP 0
    mov dx, cx
    mov [cs:%%tmpw], bx
    DIVTRY idiv word [cs:%%tmpw]
    call crc_word
    mov ax, dx
    call crc_word
    mov ax, [cs:de_delta]
    call crc_word
    jmp %%o
%%tmpw: dw 0
%%o:
%endmacro
%include "grid.inc"
