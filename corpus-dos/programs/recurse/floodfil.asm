; @desc: recursive 4-way flood fill on a 64x40 byte grid with walls (depth up to ~1000 frames), counting filled cells
; @tags: cf.recursion
; @budget: 180000
org 100h
%include "lib.inc"
W equ 64
H equ 40
start:
    call crc_init
    ; walls: cell = 1 where (x*x + 3*y) % 11 == 0 or border
    xor di, di
    xor dx, dx                  ; y
.y: xor cx, cx                  ; x
.x: mov al, 0
    cmp cx, 0
    je .w
    cmp cx, W-1
    je .w
    cmp dx, 0
    je .w
    cmp dx, H-1
    je .w
    mov ax, cx
    imul ax, cx
    add ax, dx
    add ax, dx
    add ax, dx
    push dx
    xor dx, dx
    mov bx, 11
    div bx
    mov ax, dx
    pop dx
    test ax, ax
    mov al, 0
    jnz .s
.w: mov al, 1
.s: mov [grid + di], al
    inc di
    inc cx
    cmp cx, W
    jb .x
    inc dx
    cmp dx, H
    jb .y
    mov bx, W*20 + 32
    mov byte [grid + bx], 0
    call fill
    mov ax, [filled]
    call crc_word
    mov si, grid
    mov cx, W*H
    call crc_buf
    jmp print_crc_exit
fill:                           ; bx = cell index
    cmp byte [grid + bx], 0
    jne .r
    mov byte [grid + bx], 2
    inc word [filled]
    inc bx
    call fill
    sub bx, 2
    call fill
    add bx, W + 1
    call fill
    sub bx, 2*W
    call fill
    add bx, W
.r: ret
filled: dw 0
grid: times W*H db 0
