; @desc: MUL word [mem] over edge values: DX:AX and CF/OF
; @tags: arith.muldiv
; @budget: 31000
%define VA dd 0, 1, 2, 7FFFh, 8000h, 8001h, 0FFFEh, 0FFFFh, 1234h, 0FEDCh, 00FFh, 0100h
%define VB dd 0, 1, 2, 7FFFh, 8000h, 8001h, 0FFFEh, 0FFFFh, 1234h, 0FEDCh, 00FFh, 0100h
%macro TESTOP 0
    mov [%%tmp16], bx
    xor dx, dx
    mul word [%%tmp16]
    FEEDF 0801h
    call crc_word
    mov ax, dx
    call crc_word
    jmp %%o
%%tmp16: dw 0
%%o:
%endmacro
%include "grid.inc"
