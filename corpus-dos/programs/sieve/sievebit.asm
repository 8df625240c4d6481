; @desc: bit-array sieve to 500000 with BTS/BT on memory and 32-bit bit offsets (67h addressing into a 64 KiB segment)
; @tags: kernel.sieve arith.bitops arith.real32_sib
; @budget: 9500000
org 100h
%include "lib.inc"
N equ 500000
start:
    call crc_init
    mov ax, cs
    add ax, 1000h
    mov es, ax
    xor di, di
    mov cx, 8000h
    xor ax, ax
    cld
    rep stosw               ; bit set = composite
    mov ebx, 2
.p: mov eax, ebx
    mul ebx
    cmp eax, N
    jae .done
    bt [es:0], ebx
    jc .n
.m: bts [es:0], eax
    add eax, ebx
    cmp eax, N
    jb .m
.n: inc ebx
    jmp .p
.done:
    xor ecx, ecx
    mov ebx, 2
.c: bt [es:0], ebx
    cmc
    adc ecx, 0
    inc ebx
    cmp ebx, N
    jb .c
    mov eax, ecx
    call crc_dword          ; 41538 primes below 500000
    push ds
    push es
    pop ds
    xor si, si
    mov cx, N / 8
    call crc_buf
    pop ds
    jmp print_crc_exit
