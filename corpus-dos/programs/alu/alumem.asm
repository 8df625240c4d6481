; @desc: ALU ops with memory destinations of 8/16/32 bits at unaligned offsets (CS: override)
%macro INIT 0
    jmp %%ov
mw: dd 0, 0
%%ov:
%endmacro
; @tags: arith.alu mem.seg_override
; @budget: 420000
%define VA dd 0, 1, 7Fh, 80h, 0FFh, 7FFFh, 8000h, 0FFFFh, 7FFFFFFFh, 80000000h, 0FFFFFFFFh, 12345678h, 0EDCBA987h, 00FF00FFh, 0F0F0F0Fh, 80000001h
%define VB dd 0, 1, 7Fh, 80h, 0FFh, 7FFFh, 8000h, 0FFFFh, 7FFFFFFFh, 80000000h, 0FFFFFFFFh, 12345678h, 0EDCBA987h, 00FF00FFh, 0F0F0F0Fh, 80000001h
%macro TESTOP 0
    mov [cs:mw], eax
    stc
    add dword [cs:mw], ebx
    FEEDF 08D5h
    add word [cs:mw+1], cx
    FEEDF 08D5h
    add byte [cs:mw+3], bl
    FEEDF 08D5h
    push eax
    mov eax, [cs:mw]
    call crc_dword
    pop eax
    mov [cs:mw], eax
    stc
    adc dword [cs:mw], ebx
    FEEDF 08D5h
    adc word [cs:mw+1], cx
    FEEDF 08D5h
    adc byte [cs:mw+3], bl
    FEEDF 08D5h
    push eax
    mov eax, [cs:mw]
    call crc_dword
    pop eax
    mov [cs:mw], eax
    stc
    sub dword [cs:mw], ebx
    FEEDF 08D5h
    sub word [cs:mw+1], cx
    FEEDF 08D5h
    sub byte [cs:mw+3], bl
    FEEDF 08D5h
    push eax
    mov eax, [cs:mw]
    call crc_dword
    pop eax
    mov [cs:mw], eax
    stc
    sbb dword [cs:mw], ebx
    FEEDF 08D5h
    sbb word [cs:mw+1], cx
    FEEDF 08D5h
    sbb byte [cs:mw+3], bl
    FEEDF 08D5h
    push eax
    mov eax, [cs:mw]
    call crc_dword
    pop eax
    mov [cs:mw], eax
    stc
    and dword [cs:mw], ebx
    FEEDF 08D5h
    and word [cs:mw+1], cx
    FEEDF 08D5h
    and byte [cs:mw+3], bl
    FEEDF 08D5h
    push eax
    mov eax, [cs:mw]
    call crc_dword
    pop eax
    mov [cs:mw], eax
    stc
    or dword [cs:mw], ebx
    FEEDF 08D5h
    or word [cs:mw+1], cx
    FEEDF 08D5h
    or byte [cs:mw+3], bl
    FEEDF 08D5h
    push eax
    mov eax, [cs:mw]
    call crc_dword
    pop eax
    mov [cs:mw], eax
    stc
    xor dword [cs:mw], ebx
    FEEDF 08D5h
    xor word [cs:mw+1], cx
    FEEDF 08D5h
    xor byte [cs:mw+3], bl
    FEEDF 08D5h
    push eax
    mov eax, [cs:mw]
    call crc_dword
    pop eax
%endmacro
%include "grid.inc"
