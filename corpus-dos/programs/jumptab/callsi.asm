; @desc: CALL [table+ESI*2] (67h, scaled index) and CALL [SI+table], CALL reg and CALL [mem] mixed: 3000 indirect calls
; @tags: cf.jump_table arith.real32_sib
; @budget: 45000
org 100h
%include "lib.inc"
start:
    call crc_init
    xor esi, esi
    mov cx, 1500
    mov ax, 1
.l:
    mov si, cx
    and si, 7
    call [table + esi*2]
    mov bx, cx
    and bx, 6
    call [bx + table]
    mov di, [table + 2]
    call di
    call word [fp]
    loop .l
    call crc_word
    jmp print_crc_exit
f0: add ax, 3
    ret
f1: rol ax, 1
    ret
f2: xor ax, cx
    ret
f3: sub ax, 7
    ret
f4: imul ax, ax, 5
    ret
f5: not ax
    ret
f6: neg ax
    ret
f7: add al, ah
    ret
table: dw f0, f1, f2, f3, f4, f5, f6, f7
fp: dw f5
