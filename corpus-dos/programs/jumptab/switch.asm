; @desc: compiler-style switch: range check + JMP CS:[BX+table] with a 32-entry table, dense and sparse cases, plus a jump table in a different segment through a far pointer
; @tags: cf.jump_table mem.seg_override
; @budget: 53000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov cx, 3000
    xor dx, dx
    mov di, 1
s_loop:
    mov ax, di
    imul di, di, 13
    add di, 7
    mov bx, ax
    and bx, 3Fh
    cmp bx, 31
    ja s_default
    shl bx, 1
    jmp [cs:bx + cases]
s_default:
    add dx, 1
    jmp s_end
c_a: add dx, ax
    jmp s_end
c_b: sub dx, ax
    jmp s_end
c_c: xor dx, ax
    jmp s_end
c_d: rol dx, 1
    jmp s_end
s_end:
    loop s_loop
    mov ax, dx
    call crc_word
    jmp print_crc_exit
cases:
%assign i 0
%rep 32
 %if i % 4 == 0
    dw c_a
 %elif i % 4 == 1
    dw c_b
 %elif i % 7 == 2
    dw c_c
 %else
    dw c_d
 %endif
%assign i i+1
%endrep
