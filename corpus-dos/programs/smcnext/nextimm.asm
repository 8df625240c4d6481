; @desc: a store into the immediate of the very next instruction (same block): MOV byte [cs:next+1] then next: MOV AL,imm must see the new byte, in a loop
; @tags: smc.same_block
; @budget: 16000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov cx, 500
    xor bx, bx
.l:
    mov al, cl
    xor al, 5Ah
    mov [cs:.next + 1], al
.next:
    mov dl, 0
    add bl, dl
    adc bh, 0
    loop .l
    mov ax, bx
    call crc_word
    jmp print_crc_exit
