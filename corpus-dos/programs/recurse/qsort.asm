; @desc: recursive quicksort (Lomuto partition, near calls, register arguments) of 2000 words from an LCG, verified sorted
; @tags: cf.recursion kernel.sort
; @budget: 360000
org 100h
%include "lib.inc"
N equ 2000
start:
    call crc_init
    mov cx, N
    mov di, arr
    mov ax, 4321
.f: imul ax, ax, 25173
    add ax, 13849
    stosw
    loop .f
    mov si, arr
    mov di, arr + (N-1)*2
    call qs
    ; verify
    mov si, arr
    mov cx, N - 1
    xor dx, dx
.v: mov ax, [si]
    cmp ax, [si + 2]
    jbe .ok
    inc dx
.ok: add si, 2
    loop .v
    mov ax, dx
    call crc_word
    mov si, arr
    mov cx, N*2
    call crc_buf
    jmp print_crc_exit
qs:                     ; sort words [si..di] unsigned
    cmp si, di
    jae .ret
    mov ax, [di]        ; pivot
    mov bx, si          ; store index
    mov bp, si
.p: cmp bp, di
    jae .pe
    cmp [bp], ax        ; SS = DS in a COM
    jae .nx
    mov dx, [bp]
    xchg dx, [bx]
    mov [bp], dx
    add bx, 2
.nx: add bp, 2
    jmp .p
.pe: mov dx, [di]
    xchg dx, [bx]
    mov [di], dx
    push di
    push bx
    mov di, bx
    sub di, 2
    cmp di, si          ; guard underflow when bx == si
    jb .skipl
    call qs
.skipl:
    pop bx
    pop di
    mov si, bx
    add si, 2
    call qs
.ret: ret
arr: times N dw 0
