; @desc: ADD ADC SUB SBB AND OR XOR CMP TEST INC DEC NEG NOT on r32 pairs: results and all six status flags (AF included)
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
    add eax, ecx
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    push word [cs:flz]
    popf
    adc eax, ecx
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    push word [cs:flz]
    popf
    sub eax, ecx
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    push word [cs:flz]
    popf
    sbb eax, ecx
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    push word [cs:flz]
    popf
    and eax, ecx
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    push word [cs:flz]
    popf
    or eax, ecx
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    push word [cs:flz]
    popf
    xor eax, ecx
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    push word [cs:flz]
    popf
    cmp eax, ecx
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    push word [cs:flz]
    popf
    test eax, ecx
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    stc
    inc eax
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    stc
    dec eax
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    stc
    neg eax
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    stc
    not eax
    FEEDF 08D5h
    call crc_dword
    pop eax
    clc
    adc eax, ecx
    sbb eax, ecx
    FEEDF 08D5h
    call crc_dword
    stc
    sbb eax, ecx
    adc eax, ecx
    FEEDF 08D5h
    call crc_dword
%endmacro
%include "grid.inc"
