; @desc: a bytecode interpreter dispatching with JMP [BX+table] (16-bit near indirect) over 8 handlers; 4000 dispatches
; @tags: cf.jump_table
; @budget: 62000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov cx, 4000
    xor ax, ax
    mov dx, 1
    mov si, 0
next:
    dec cx
    jz done
    mov bl, [code + si]
    inc si
    and si, 63
    and bx, 7
    shl bx, 1
    jmp [bx + table]
h0: add ax, dx
    jmp next
h1: xor ax, 1234h
    jmp next
h2: rol ax, 3
    jmp next
h3: inc dx
    jmp next
h4: sub ax, dx
    jmp next
h5: imul dx, dx, 3
    jmp next
h6: xchg ax, dx
    jmp next
h7: not ax
    jmp next
done:
    call crc_word
    mov ax, dx
    call crc_word
    jmp print_crc_exit
table: dw h0, h1, h2, h3, h4, h5, h6, h7
code:
%assign i 0
%rep 64
    db (i * 29 + i / 3) & 7
%assign i i+1
%endrep
