; @desc: nested far calls with stack arguments: CALL FAR / RETF n, ENTER/LEAVE with nesting levels 0-3, RET n; 12 levels of recursion mixing near and far frames
; @tags: cf.deep_calls cf.far_call cf.recursion
; @budget: 21000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov cx, 40
.l:
    push cx
    push word 12
    push cs
    call farf                 ; farf(depth) far, pops its argument with RETF 2
    call crc_word
    pop cx
    loop .l
    jmp print_crc_exit
farf:                          ; [bp+6] = depth ; returns ax
    enter 4, 0
    mov ax, [bp + 6]
    test ax, ax
    jz .leaf
    dec ax
    mov [bp - 2], ax
    push ax
    call nearf                ; nearf(depth-1) returns ax
    add ax, [bp + 6]
    jmp .out
.leaf:
    mov ax, 1
.out:
    leave
    retf 2
nearf:
    enter 2, 1
    mov ax, [bp + 4]
    test ax, ax
    jz .z
    dec ax
    push ax
    push cs
    call farf
    imul ax, ax, 3
    jmp .o
.z: mov ax, 7
.o: leave
    ret 2
