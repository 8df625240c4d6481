; @desc: the next instruction's opcode is rewritten in the same block: alternately INC AX (40h) / DEC AX (48h) / NOP (90h) chosen by the loop counter
; @tags: smc.same_block
; @budget: 18000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov cx, 600
    xor ax, ax
    xor dx, dx
.l:
    mov bx, cx
    and bx, 3
    mov bl, [ops + bx]
    mov [.site], bl
.site:
    nop
    add dx, ax
    rol dx, 1
    loop .l
    call crc_word
    mov ax, dx
    call crc_word
    jmp print_crc_exit
ops: db 40h, 48h, 90h, 40h
