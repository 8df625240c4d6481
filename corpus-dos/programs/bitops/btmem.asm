; @desc: BT/BTS/BTR/BTC on memory with register bit offsets -128..+127 (the bit string extends outside the addressed dword/word)
%macro INIT 0
    jmp %%ov
bitbuf: times 40 db 5Ah
%%ov:
%endmacro
; @tags: arith.bitops
; @budget: 30000
%define VA dd 1
%define VB dd 0, 1, 31, 32, 63, 64, 100, 127, -1, -2, -31, -32, -33, -64, -100, -128, 17, 47, 79, 111
%macro TESTOP 0
    push eax
    push word 0AD7h
    popf
    bt dword [cs:bitbuf + 16], ebx
    FEEDF 0041h
    bt word [cs:bitbuf + 16], bx
    FEEDF 0041h
    bt dword [cs:bitbuf + 16], 29
    FEEDF 0041h
    pop eax
    push eax
    push word 0AD7h
    popf
    bts dword [cs:bitbuf + 16], ebx
    FEEDF 0041h
    bts word [cs:bitbuf + 16], bx
    FEEDF 0041h
    bts dword [cs:bitbuf + 16], 29
    FEEDF 0041h
    pop eax
    push eax
    push word 0AD7h
    popf
    btr dword [cs:bitbuf + 16], ebx
    FEEDF 0041h
    btr word [cs:bitbuf + 16], bx
    FEEDF 0041h
    btr dword [cs:bitbuf + 16], 29
    FEEDF 0041h
    pop eax
    push eax
    push word 0AD7h
    popf
    btc dword [cs:bitbuf + 16], ebx
    FEEDF 0041h
    btc word [cs:bitbuf + 16], bx
    FEEDF 0041h
    btc dword [cs:bitbuf + 16], 29
    FEEDF 0041h
    pop eax
    push ds
    push si
    push cx
    push cs
    pop ds
    mov si, bitbuf
    mov cx, 40
    call crc_buf
    pop cx
    pop si
    pop ds
%endmacro
%include "grid.inc"
