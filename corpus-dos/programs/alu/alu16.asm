; @desc: ADD ADC SUB SBB AND OR XOR CMP TEST INC DEC NEG NOT on r16 pairs: results and all six status flags (AF included)
%macro INIT 0
    jmp %%ov
flz: dw 0203h
%%ov:
%endmacro
; @tags: arith.alu
; @budget: 510000
%define VA dd 0, 1, 7Fh, 80h, 0FFh, 7FFFh, 8000h, 0FFFFh, 7FFFFFFFh, 80000000h, 0FFFFFFFFh, 12345678h, 0EDCBA987h, 00FF00FFh, 0F0F0F0Fh, 80000001h
%define VB dd 0, 1, 7Fh, 80h, 0FFh, 7FFFh, 8000h, 0FFFFh, 7FFFFFFFh, 80000000h, 0FFFFFFFFh, 12345678h, 0EDCBA987h, 00FF00FFh, 0F0F0F0Fh, 80000001h
%macro TESTOP 0
    push eax
    push word [cs:flz]
    popf
    add ax, cx
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    push word [cs:flz]
    popf
    adc ax, cx
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    push word [cs:flz]
    popf
    sub ax, cx
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    push word [cs:flz]
    popf
    sbb ax, cx
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    push word [cs:flz]
    popf
    and ax, cx
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    push word [cs:flz]
    popf
    or ax, cx
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    push word [cs:flz]
    popf
    xor ax, cx
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    push word [cs:flz]
    popf
    cmp ax, cx
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    push word [cs:flz]
    popf
    test ax, cx
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    stc
    inc ax
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    stc
    dec ax
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    stc
    neg ax
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    stc
    not ax
    FEEDF 08D5h
    call crc_dword
    pop eax
    clc
    adc ax, cx
    sbb ax, cx
    FEEDF 08D5h
    call crc_dword
    stc
    sbb ax, cx
    adc ax, cx
    FEEDF 08D5h
    call crc_dword
%endmacro
%include "grid.inc"
