; @desc: STI; HLT loop waiting for 5 BIOS timer ticks (0040:006Ch) - HLT advances guest time to the next interrupt
; @tags: wait.hlt
; @timing: dependent
; @budget: 1400000
org 100h
%include "lib.inc"
start:
    mov ax, 40h
    mov es, ax
    mov bx, [es:6Ch]
    xor cx, cx
.l: sti
    hlt
    inc cx
    mov ax, [es:6Ch]
    sub ax, bx
    cmp ax, 5
    jb .l
    PRINT 'HLT 5 TICKS'
    EXIT 0
