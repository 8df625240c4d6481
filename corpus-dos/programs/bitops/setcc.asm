; @desc: CMP of value pairs then every SETcc (16 conditions), 8/16/32-bit compares
; @tags: arith.bitops
; @budget: 130000
%define VA dd 0, 1, 7Fh, 80h, 0FFh, 7FFFh, 8000h, 0FFFFh, 7FFFFFFFh, 80000000h, 0FFFFFFFFh, 12345678h, 0EDCBA987h, 00FF00FFh, 0F0F0F0Fh, 80000001h
%define VB dd 0, 1, 7Fh, 80h, 0FFh, 7FFFh, 8000h, 0FFFFh, 7FFFFFFFh, 80000000h, 0FFFFFFFFh, 12345678h, 0EDCBA987h, 00FF00FFh, 0F0F0F0Fh, 80000001h
%macro TESTOP 0
    cmp eax, ebx
    seto dl
    mov al, dl
    call crc_byte
    mov eax, [va + si]
    setno dl
    mov al, dl
    call crc_byte
    mov eax, [va + si]
    setb dl
    mov al, dl
    call crc_byte
    mov eax, [va + si]
    setae dl
    mov al, dl
    call crc_byte
    mov eax, [va + si]
    sete dl
    mov al, dl
    call crc_byte
    mov eax, [va + si]
    setne dl
    mov al, dl
    call crc_byte
    mov eax, [va + si]
    cmp eax, ebx
    setbe dl
    mov al, dl
    call crc_byte
    mov eax, [va + si]
    seta dl
    mov al, dl
    call crc_byte
    mov eax, [va + si]
    sets dl
    mov al, dl
    call crc_byte
    mov eax, [va + si]
    setns dl
    mov al, dl
    call crc_byte
    mov eax, [va + si]
    setp dl
    mov al, dl
    call crc_byte
    mov eax, [va + si]
    setnp dl
    mov al, dl
    call crc_byte
    mov eax, [va + si]
    setl dl
    mov al, dl
    call crc_byte
    mov eax, [va + si]
    setge dl
    mov al, dl
    call crc_byte
    mov eax, [va + si]
    setle dl
    mov al, dl
    call crc_byte
    mov eax, [va + si]
    setg dl
    mov al, dl
    call crc_byte
    mov eax, [va + si]
    cmp ax, bx
    setl dl
    setbe dh
    mov ax, dx
    call crc_word
    mov eax, [va + si]
    cmp al, bl
    setg dl
    seta dh
    mov ax, dx
    call crc_word
    mov eax, [va + si]
    sub eax, ebx
    sets byte [cs:%%m]
    setpo byte [cs:%%m+1]
    mov ax, [cs:%%m]
    call crc_word
    jmp %%o
%%m: dw 0
%%o:
%endmacro
%include "grid.inc"
