; @desc: BT/BTS/BTR/BTC on registers with register and immediate bit offsets (offset mod width): CF, ZF preserved
; @tags: arith.bitops
; @budget: 330000
%define VA dd 0, 1, 7Fh, 80h, 0FFh, 7FFFh, 8000h, 0FFFFh, 7FFFFFFFh, 80000000h, 0FFFFFFFFh, 12345678h, 0EDCBA987h, 00FF00FFh, 0F0F0F0Fh, 80000001h
%define VB dd 0, 1, 7, 8, 15, 16, 31, 32, 33, 63, 64, 100, 0FFFFFFFFh
%macro TESTOP 0
    push eax
    push word 0AD7h
    popf
    bt eax, ecx
    FEEDF 0041h
    call crc_dword
    bt ax, bx
    FEEDF 0041h
    call crc_dword
    bt eax, 13
    FEEDF 0041h
    call crc_dword
    pop eax
    push eax
    push word 0AD7h
    popf
    bts eax, ecx
    FEEDF 0041h
    call crc_dword
    bts ax, bx
    FEEDF 0041h
    call crc_dword
    bts eax, 13
    FEEDF 0041h
    call crc_dword
    pop eax
    push eax
    push word 0AD7h
    popf
    btr eax, ecx
    FEEDF 0041h
    call crc_dword
    btr ax, bx
    FEEDF 0041h
    call crc_dword
    btr eax, 13
    FEEDF 0041h
    call crc_dword
    pop eax
    push eax
    push word 0AD7h
    popf
    btc eax, ecx
    FEEDF 0041h
    call crc_dword
    btc ax, bx
    FEEDF 0041h
    call crc_dword
    btc eax, 13
    FEEDF 0041h
    call crc_dword
    pop eax
%endmacro
%include "grid.inc"
