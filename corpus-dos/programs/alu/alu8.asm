; @desc: ADD ADC SUB SBB AND OR XOR CMP TEST INC DEC NEG NOT on r8 pairs: results and all six status flags (AF included)
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
    add al, cl
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    push word [cs:flz]
    popf
    adc al, cl
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    push word [cs:flz]
    popf
    sub al, cl
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    push word [cs:flz]
    popf
    sbb al, cl
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    push word [cs:flz]
    popf
    and al, cl
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    push word [cs:flz]
    popf
    or al, cl
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    push word [cs:flz]
    popf
    xor al, cl
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    push word [cs:flz]
    popf
    cmp al, cl
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    push word [cs:flz]
    popf
    test al, cl
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    stc
    inc al
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    stc
    dec al
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    stc
    neg al
    FEEDF 08D5h
    call crc_dword
    pop eax
    push eax
    stc
    not al
    FEEDF 08D5h
    call crc_dword
    pop eax
    clc
    adc al, cl
    sbb al, cl
    FEEDF 08D5h
    call crc_dword
    stc
    sbb al, cl
    adc al, cl
    FEEDF 08D5h
    call crc_dword
%endmacro
%include "grid.inc"
