; @desc: AAA/AAS for every AL, AH=0/5/FF, AF in/out: AX and AF CF
; @tags: arith.bcd
; @budget: 210000
%macro VAM 0
%assign i 0
%rep 256
    dd i
%assign i i+1
%endrep
%endmacro
%define VB dd 0202h, 0203h, 0212h, 0213h
%macro TESTOP 0
    mov ah, cl
    push eax
    push bx
    popf
    aaa
    FEEDF 0011h
    call crc_word
    pop eax
    push bx
    popf
    aas
    FEEDF 0011h
    call crc_word
%endmacro
%include "grid.inc"
