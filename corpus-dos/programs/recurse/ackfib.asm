; @desc: recursion: Ackermann A(2,n) for n<=9 and A(3,3), recursive Fibonacci fib(18) with near calls and stack arguments
; @tags: cf.recursion cf.deep_calls
; @budget: 170000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov bx, 0
.a: mov ax, 2
    call ack
    call crc_word
    inc bx
    cmp bx, 10
    jb .a
    mov ax, 3
    mov bx, 3
    call ack
    call crc_word
    push word 18
    call fib
    call crc_word
    jmp print_crc_exit
ack:                ; ax = m, bx = n -> ax
    test ax, ax
    jnz .m
    mov ax, bx
    inc ax
    ret
.m: test bx, bx
    jnz .n
    dec ax
    mov bx, 1
    jmp ack
.n: push ax
    dec bx
    call ack          ; A(m, n-1)
    mov bx, ax
    pop ax
    dec ax
    jmp ack
fib:
    push bp
    mov bp, sp
    mov ax, [bp + 4]
    cmp ax, 2
    jb .r
    dec ax
    push ax
    call fib
    push ax
    mov ax, [bp + 4]
    sub ax, 2
    push ax
    call fib
    pop dx
    add ax, dx
.r: pop bp
    ret 2
