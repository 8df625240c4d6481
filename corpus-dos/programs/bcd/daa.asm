; @desc: DAA for every AL and every CF/AF input: AL and CF AF SF ZF PF
; @tags: arith.bcd
; @budget: 90000
%macro VAM 0
%assign i 0
%rep 256
    dd i
%assign i i+1
%endrep
%endmacro
%define VB dd 0202h, 0203h, 0212h, 0213h
%macro TESTOP 0
    push bx
    popf
    daa
    FEEDF 00D5h
    call crc_byte
%endmacro
%include "grid.inc"
