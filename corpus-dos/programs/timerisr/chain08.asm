; @desc: IRQ0 (INT 08h) hook counting ticks and chaining to the old vector with JMP FAR; the main loop computes until 8 ticks pass, then checks the BIOS tick count advanced by the same amount
; @tags: irq.timer_chain
; @timing: dependent
; @budget: 2200000
org 100h
%include "lib.inc"
start:
    mov ax, 40h
    mov es, ax
    mov si, [es:6Ch]
    call timer_hook
    xor ebx, ebx
.l: inc ebx
    cmp word [ticks], 8
    jb .l
    call timer_unhook
    mov ax, [es:6Ch]
    sub ax, si
    cmp ax, 8
    jb .bad
    PRINT 'TICKS 8 CHAINED'
    EXIT 0
.bad:
    PRINT 'BIOS TICK MISSED'
    EXIT 1
%include "timer.inc"
