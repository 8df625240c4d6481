; @desc: sieve of Eratosthenes over 0..59999 with one byte per number (REP STOSB init, strided stores)
; @tags: kernel.sieve mem.rep_string
; @budget: 1600000
org 100h
%include "lib.inc"
N equ 60000
start:
    call crc_init
    mov ax, cs
    add ax, 1000h
    mov es, ax
    xor di, di
    mov cx, N
    mov al, 1
    cld
    rep stosb
    mov byte [es:0], 0
    mov byte [es:1], 0
    mov bx, 2
.p: mov ax, bx
    mul bx
    jc .done
    cmp ax, N
    jae .done
    cmp byte [es:bx], 0
    je .n
    mov di, ax
.m: mov byte [es:di], 0
    add di, bx
    jc .n
    cmp di, N
    jb .m
.n: inc bx
    jmp .p
.done:
    xor di, di
    xor dx, dx
    mov cx, N
.c: add dl, [es:di]
    adc dh, 0
    inc di
    loop .c
    mov ax, dx
    call crc_word           ; 6057 primes below 60000
    push ds
    push es
    pop ds
    xor si, si
    mov cx, N
    call crc_buf
    pop ds
    jmp print_crc_exit
