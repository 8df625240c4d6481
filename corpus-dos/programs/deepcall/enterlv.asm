; @desc: ENTER with nesting levels 1..5 (display copies of outer frame pointers) and LEAVE, PUSHA/POPA around calls, RET imm16 popping 0..8 bytes
; @tags: cf.deep_calls
; @budget: 19000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov cx, 100
.l:
    mov bp, 1234h
    push cx
    call lvl
    pop cx
    call crc_word
    loop .l
    jmp print_crc_exit
lvl:
    enter 8, 1
    pusha
    mov ax, [bp - 2]
    enter 4, 2
    mov ax, [bp - 2]
    mov bx, [bp - 4]
    enter 2, 3
    mov ax, [bp - 2]
    mov dx, [bp - 4]
    sub ax, dx
    mov si, [bp - 6]
    sub si, dx
    enter 0, 5
    mov di, [bp - 10]
    sub di, [bp - 2]
    leave
    add ax, si
    add ax, di
    leave
    leave
    mov [bp - 8], ax
    popa
    mov ax, [bp - 8]
    push ax
    push ax
    call r4
    leave
    ret
r4: ret 4
