; @desc: AAM/AAD with bases 10, 16, 7, 255, 1 for every AL: AX and SF ZF PF
; @tags: arith.bcd
; @budget: 190000
%macro VAM 0
%assign i 0
%rep 256
    dd i
%assign i i+1
%endrep
%endmacro
%define VB dd 1
%macro TESTOP 0
    mov ah, 37h
    push ax
    aam
    FEEDF 00C4h
    call crc_word
    aad
    FEEDF 00C4h
    call crc_word
    pop ax
    push ax
    db 0D4h, 16
    FEEDF 00C4h
    call crc_word
    db 0D5h, 16
    FEEDF 00C4h
    call crc_word
    pop ax
    push ax
    db 0D4h, 7
    FEEDF 00C4h
    call crc_word
    db 0D5h, 255
    FEEDF 00C4h
    call crc_word
    pop ax
    db 0D4h, 1
    FEEDF 00C4h
    call crc_word
    db 0D5h, 3
    FEEDF 00C4h
    call crc_word
%endmacro
%include "grid.inc"
