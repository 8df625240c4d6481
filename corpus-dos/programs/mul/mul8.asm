; @desc: MUL r8 over a grid of edge values: AX and CF/OF
; @tags: arith.muldiv
; @budget: 25000
%define VA dd 0, 1, 2, 3, 7Fh, 80h, 81h, 0FEh, 0FFh, 55h, 0AAh, 10h
%define VB dd 0, 1, 2, 3, 7Fh, 80h, 81h, 0FEh, 0FFh, 55h, 0AAh, 10h
%macro TESTOP 0
    push word 0AD7h
    popf
    mul bl
    FEEDF 0801h
    call crc_word
%endmacro
%include "grid.inc"
